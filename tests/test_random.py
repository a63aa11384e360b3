"""check_random_state and the seeds handed to the core."""

from __future__ import annotations

import numpy as np
import pytest

import privtab as pt
from privtab._random import core_seed


def test_none_gives_fresh_entropy():
    assert core_seed(None) is None
    a = pt.check_random_state(None).integers(2**63)
    b = pt.check_random_state(None).integers(2**63)
    assert a != b


def test_int_seed_is_reproducible():
    assert core_seed(5) == core_seed(5)
    assert core_seed(5) != core_seed(6)
    assert 0 <= core_seed(np.int64(5)) < 2**64


def test_generator_advances_between_calls():
    gen = np.random.default_rng(1)
    first, second = core_seed(gen), core_seed(gen)
    assert first != second
    assert pt.check_random_state(gen) is gen


def test_seed_sequence():
    seq = np.random.SeedSequence(9)
    assert core_seed(seq) == core_seed(np.random.SeedSequence(9))


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (-1, ValueError, "random_state must be a non-negative int, got -1"),
        (True, TypeError, "random_state must be None, an int.*got bool"),
        (1.5, TypeError, "random_state must be None, an int.*got float"),
        ("7", TypeError, "got str"),
    ],
)
def test_rejects_bad_random_state(value, error, match):
    with pytest.raises(error, match=match):
        pt.check_random_state(value)
