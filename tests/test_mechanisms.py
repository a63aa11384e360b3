"""Tests of privtab.mechanisms: distributions, validation, accounting, robustness."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

import privtab as pt
from privtab import _core
from privtab._random import core_seed
from privtab.exceptions import BudgetExceededError

from _stats import (
    WRONG_SCALES,
    assert_accepts,
    assert_rejects,
    chi2_discrete_pvalue,
    chi2_pvalue,
    ks_pvalue,
)

MECHANISMS = {
    "laplace_mechanism": lambda values, **kw: pt.laplace_mechanism(
        values, 1.0, 0.5, **kw
    ),
    "discrete_laplace_mechanism": lambda values, **kw: pt.discrete_laplace_mechanism(
        values, 1.0, 0.5, **kw
    ),
    "exponential_mechanism": lambda values, **kw: pt.exponential_mechanism(
        values, 1.0, 0.5, **kw
    ),
}


# Laplace mechanism --------------------------------------------------------------------
def test_laplace_mechanism_noise_distribution():
    values = np.linspace(-5, 5, 30_000).reshape(100, 300)
    noisy = pt.laplace_mechanism(values, 2.0, 0.8, random_state=1)
    assert noisy.shape == values.shape
    assert noisy.dtype == np.float64
    assert_accepts(ks_pvalue((noisy - values).ravel(), stats.laplace(scale=2.5)))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_laplace_mechanism_test_has_power(factor):
    values = np.zeros(30_000)
    noisy = pt.laplace_mechanism(values, 2.0 * factor, 0.8, random_state=2)
    assert_rejects(ks_pvalue(noisy, stats.laplace(scale=2.5)))


def test_laplace_mechanism_scalars_and_shapes():
    out = pt.laplace_mechanism(3, 1.0, 1.0, random_state=0)
    assert isinstance(out, float)
    assert isinstance(pt.laplace_mechanism(np.float32(3), 1.0, 1.0), float)
    assert pt.laplace_mechanism(np.zeros((0, 3)), 1.0, 1.0).shape == (0, 3)
    assert pt.laplace_mechanism([True, False], 1.0, 1.0).dtype == np.float64
    fortran = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    a = pt.laplace_mechanism(fortran, 1.0, 1.0, random_state=4)
    b = pt.laplace_mechanism(np.ascontiguousarray(fortran), 1.0, 1.0, random_state=4)
    np.testing.assert_array_equal(a, b)


# Discrete Laplace mechanism -----------------------------------------------------------
@pytest.mark.parametrize(
    ("sensitivity", "epsilon"), [(1.0, 0.5), (2.0, 1.5), (0.5, 0.1)]
)
def test_discrete_laplace_mechanism_exact_pmf(sensitivity, epsilon):
    values = np.arange(-20_000, 20_000, dtype=np.int32)
    noisy = pt.discrete_laplace_mechanism(values, sensitivity, epsilon, random_state=3)
    assert noisy.dtype == np.int64
    noise = noisy - values
    assert_accepts(chi2_discrete_pvalue(noise, stats.dlaplace(epsilon / sensitivity)))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_discrete_laplace_mechanism_test_has_power(factor):
    noise = pt.discrete_laplace_mechanism(
        np.zeros(40_000, int), factor, 0.5, random_state=5
    )
    assert_rejects(chi2_discrete_pvalue(noise, stats.dlaplace(0.5)))


def test_discrete_laplace_mechanism_scalars_and_dtypes():
    assert isinstance(pt.discrete_laplace_mechanism(7, 1.0, 1.0), int)
    for dtype in (np.int8, np.uint16, np.int64, np.uint64, np.float32, np.bool_):
        out = pt.discrete_laplace_mechanism(np.ones((2, 3), dtype=dtype), 1.0, 1.0)
        assert out.shape == (2, 3)
        assert out.dtype == np.int64
    assert pt.discrete_laplace_mechanism([], 1.0, 1.0).shape == (0,)


# Exponential mechanism ----------------------------------------------------------------
def selection_probs(scores, sensitivity, epsilon):
    logits = epsilon * np.asarray(scores, float) / (2 * sensitivity)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


SCORES = np.array([0.0, 1.0, 3.0, 2.5, -1.0])


def with_replacement_counts(epsilon, seed=6):
    chosen = pt.exponential_mechanism(
        SCORES, 1.0, epsilon, size=40_000, replace=True, random_state=seed
    )
    return np.bincount(chosen, minlength=len(SCORES))


def first_two_counts(epsilon, draws=12_000):
    pairs = {p: i for i, p in enumerate(itertools.permutations(range(len(SCORES)), 2))}
    counts = np.zeros(len(pairs))
    rng = np.random.default_rng(7)
    for _ in range(draws):
        chosen = pt.exponential_mechanism(
            SCORES, 1.0, epsilon, size=3, random_state=rng
        )
        counts[pairs[(int(chosen[0]), int(chosen[1]))]] += 1
    return counts, pairs


def successive_pair_probs(epsilon, pairs):
    w = selection_probs(SCORES, 1.0, epsilon)
    probs = np.zeros(len(pairs))
    for (i, j), k in pairs.items():
        probs[k] = w[i] * w[j] / (1 - w[i])
    return probs


def test_exponential_mechanism_with_replacement_frequencies():
    counts = with_replacement_counts(1.2)
    assert_accepts(chi2_pvalue(counts, selection_probs(SCORES, 1.0, 1.2)))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_exponential_mechanism_with_replacement_test_has_power(factor):
    counts = with_replacement_counts(1.2 * factor)
    assert_rejects(chi2_pvalue(counts, selection_probs(SCORES, 1.0, 1.2)))


def test_exponential_mechanism_without_replacement_is_successive_sampling():
    counts, pairs = first_two_counts(1.2)
    # First picks alone follow the weights ...
    first = np.zeros(len(SCORES))
    for (i, _), k in pairs.items():
        first[i] += counts[k]
    assert_accepts(chi2_pvalue(first, selection_probs(SCORES, 1.0, 1.2)))
    # ... and ordered first-two pairs follow successive sampling without replacement.
    assert_accepts(chi2_pvalue(counts, successive_pair_probs(1.2, pairs)))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_exponential_mechanism_without_replacement_test_has_power(factor):
    counts, pairs = first_two_counts(1.2 * factor)
    assert_rejects(chi2_pvalue(counts, successive_pair_probs(1.2, pairs)))


def test_exponential_mechanism_extreme_scores():
    chosen = pt.exponential_mechanism(
        [1e300, -1e300, 1e300], 1.0, 1.0, size=20_000, replace=True, random_state=8
    )
    assert not np.any(chosen == 1)
    assert_accepts(chi2_pvalue(np.bincount(chosen, minlength=3)[[0, 2]], [0.5, 0.5]))
    top = pt.exponential_mechanism([-1.7e308, 1.7e308, 0.0], 1e-300, 1e300, size=3)
    assert top[0] == 1
    # A tiny epsilon makes every candidate equally likely, even with huge scores.
    flat = pt.exponential_mechanism(
        [0.0, 1e-3], 1.0, 1e-300, size=20_000, replace=True, random_state=9
    )
    assert_accepts(chi2_pvalue(np.bincount(flat, minlength=2), [0.5, 0.5]))


def test_exponential_mechanism_output_shape():
    out = pt.exponential_mechanism(SCORES, 1.0, 1.0, size=5, random_state=0)
    assert out.dtype == np.int64
    assert sorted(out.tolist()) == list(range(5))
    assert pt.exponential_mechanism([4.0], 1.0, 1.0).tolist() == [0]


# Determinism and threads --------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_same_seed_same_output(name):
    values = np.arange(200)
    mechanism = MECHANISMS[name]
    a = mechanism(values, random_state=11)
    np.testing.assert_array_equal(a, mechanism(values, random_state=11))
    b = mechanism(values, random_state=np.random.SeedSequence(11))
    np.testing.assert_array_equal(
        b, mechanism(values, random_state=np.random.SeedSequence(11))
    )
    assert not np.array_equal(a, mechanism(values, random_state=12))


def test_vectorised_kernels_one_vs_two_threads():
    n = 3 * (1 << 16) + 7
    floats = np.linspace(0, 1, n)
    ints = np.arange(n, dtype=np.int64)
    np.testing.assert_array_equal(
        _core.add_laplace(floats, 1.0, 2.0, 3, 1),
        _core.add_laplace(floats, 1.0, 2.0, 3, 2),
    )
    np.testing.assert_array_equal(
        _core.add_discrete_laplace(ints, 1.0, 0.3, 3, 1),
        _core.add_discrete_laplace(ints, 1.0, 0.3, 3, 2),
    )
    scores = np.zeros(9)
    np.testing.assert_array_equal(
        _core.exponential_mechanism(scores, n, True, 3, 1),
        _core.exponential_mechanism(scores, n, True, 3, 2),
    )
    big = np.linspace(0, 1, n)
    np.testing.assert_array_equal(
        _core.exponential_mechanism(big, 50, False, 3, 1),
        _core.exponential_mechanism(big, 50, False, 3, 2),
    )


# Validation: one pytest.raises per branch ---------------------------------------------
@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize(
    ("argument", "value", "error", "match"),
    [
        ("epsilon", 0.0, ValueError, "epsilon must be finite and > 0"),
        ("epsilon", -1.0, ValueError, "epsilon must be finite and > 0"),
        ("epsilon", math.nan, ValueError, "epsilon must be finite and > 0"),
        ("epsilon", math.inf, ValueError, "epsilon must be finite and > 0"),
        ("epsilon", "1", TypeError, "epsilon must be a real number"),
        ("epsilon", True, TypeError, "epsilon must be a real number"),
        ("sensitivity", 0.0, ValueError, "sensitivity must be finite and > 0"),
        ("sensitivity", math.inf, ValueError, "sensitivity must be finite and > 0"),
        ("sensitivity", None, TypeError, "sensitivity must be a real number"),
    ],
)
def test_scalar_parameter_validation(name, argument, value, error, match):
    mechanism = getattr(pt, name)
    kwargs = {"sensitivity": 1.0, "epsilon": 1.0, argument: value}
    with pytest.raises(error, match=match):
        mechanism([1, 2, 3], kwargs["sensitivity"], kwargs["epsilon"])


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_random_state_and_accountant_validation(name):
    mechanism = MECHANISMS[name]
    with pytest.raises(TypeError, match="random_state must be None, an int"):
        mechanism([1, 2], random_state="seed")
    with pytest.raises(ValueError, match="random_state must be a non-negative int"):
        mechanism([1, 2], random_state=-1)
    with pytest.raises(
        TypeError, match=r"accountant must be a privtab\.BudgetAccountant"
    ):
        mechanism([1, 2], accountant=1.0)


def test_laplace_values_validation():
    with pytest.raises(ValueError, match="values must contain only finite values"):
        pt.laplace_mechanism([1.0, math.nan], 1.0, 1.0)
    with pytest.raises(ValueError, match="values must contain only finite values"):
        pt.laplace_mechanism([1.0, -math.inf], 1.0, 1.0)
    with pytest.raises(TypeError, match="values must be numeric"):
        pt.laplace_mechanism(["a", "b"], 1.0, 1.0)
    with pytest.raises(TypeError, match="values must be real"):
        pt.laplace_mechanism([1j], 1.0, 1.0)
    with pytest.raises(ValueError, match="values is ragged"):
        pt.laplace_mechanism([[1.0], [1.0, 2.0]], 1.0, 1.0)


def test_discrete_laplace_values_validation():
    with pytest.raises(TypeError, match="values must hold integers, got non-integral"):
        pt.discrete_laplace_mechanism([1.5], 1.0, 1.0)
    with pytest.raises(ValueError, match="values must contain only finite values"):
        pt.discrete_laplace_mechanism([math.nan], 1.0, 1.0)
    with pytest.raises(ValueError, match="values has values outside the int64 range"):
        pt.discrete_laplace_mechanism([1e19], 1.0, 1.0)
    with pytest.raises(ValueError, match="values has values above 2\\*\\*63 - 1"):
        pt.discrete_laplace_mechanism(np.array([2**64 - 1], dtype=np.uint64), 1.0, 1.0)
    with pytest.raises(TypeError, match="values must hold integers, got dtype"):
        pt.discrete_laplace_mechanism(["1"], 1.0, 1.0)
    with pytest.raises(ValueError, match="fits in 128-bit integers"):
        pt.discrete_laplace_mechanism([1], 1e300, 1e-300)


def test_exponential_mechanism_argument_validation():
    with pytest.raises(ValueError, match="size must be >= 1"):
        pt.exponential_mechanism(SCORES, 1.0, 1.0, size=0)
    with pytest.raises(TypeError, match="size must be an int"):
        pt.exponential_mechanism(SCORES, 1.0, 1.0, size=1.0)
    with pytest.raises(TypeError, match="replace must be a bool"):
        pt.exponential_mechanism(SCORES, 1.0, 1.0, replace=1)
    with pytest.raises(ValueError, match="scores must be 1-dimensional"):
        pt.exponential_mechanism(np.zeros((2, 2)), 1.0, 1.0)
    with pytest.raises(ValueError, match="scores must be non-empty"):
        pt.exponential_mechanism([], 1.0, 1.0)
    with pytest.raises(ValueError, match="scores must contain only finite values"):
        pt.exponential_mechanism([0.0, math.nan], 1.0, 1.0)
    with pytest.raises(TypeError, match="scores must be numeric"):
        pt.exponential_mechanism(["x"], 1.0, 1.0)
    with pytest.raises(
        ValueError, match=r"size must be <= the number of candidates \(5\)"
    ):
        pt.exponential_mechanism(SCORES, 1.0, 1.0, size=6)


def test_core_exponential_mechanism_validation():
    with pytest.raises(ValueError, match="log_weights must be finite or -inf"):
        _core.exponential_mechanism(np.array([0.0, np.inf]), 1, False)
    with pytest.raises(ValueError, match="only -inf"):
        _core.exponential_mechanism(np.array([-np.inf]), 1, True)
    with pytest.raises(ValueError, match="log_weights must be non-empty"):
        _core.exponential_mechanism(np.array([]), 1, True)
    with pytest.raises(ValueError, match="size must be <= the number of finite"):
        _core.exponential_mechanism(np.array([0.0, -np.inf]), 2, False)
    with pytest.raises(ValueError, match="log_weights must be a C-contiguous array"):
        _core.exponential_mechanism(np.zeros(6)[::2], 1, False)
    with pytest.raises(MemoryError, match="cannot allocate"):
        _core.exponential_mechanism(np.zeros(2), 2**62, True)


# Accounting ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_budget_checked_before_reading_data(name):
    acc = pt.BudgetAccountant(0.4)
    # The data are invalid: the budget error must come first, and nothing is spent.
    with pytest.raises(BudgetExceededError, match="privacy budget exceeded"):
        MECHANISMS[name]([math.nan, "x"], accountant=acc)
    assert acc.spent == 0.0
    assert acc.ledger == []


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_spend_after_success_with_label(name):
    acc = pt.BudgetAccountant(1.0)
    MECHANISMS[name]([1, 2, 3], accountant=acc)
    assert [tuple(entry) for entry in acc.ledger] == [(name, 0.5)]
    assert acc.remaining == 0.5
    with pytest.raises(ValueError, match="must"):
        MECHANISMS[name]([math.nan], accountant=acc)
    assert acc.spent == 0.5


def test_exponential_mechanism_charges_every_draw():
    acc = pt.BudgetAccountant(1.0)
    pt.exponential_mechanism(SCORES, 1.0, 0.25, size=3, accountant=acc)
    assert [tuple(e) for e in acc.ledger] == [
        ("exponential_mechanism (3 draws without replacement)", 0.75)
    ]
    with pytest.raises(BudgetExceededError):
        pt.exponential_mechanism(
            SCORES, 1.0, 0.25, size=2, replace=True, accountant=acc
        )
    pt.exponential_mechanism(SCORES, 1.0, 0.25, accountant=acc)
    assert acc.remaining == 0.0


def test_default_accountant_records_spends():
    before = len(pt.default_accountant().ledger)
    pt.laplace_mechanism(1.0, 1.0, 0.125)
    assert tuple(pt.default_accountant().ledger[-1]) == ("laplace_mechanism", 0.125)
    assert len(pt.default_accountant().ledger) == before + 1


# Robustness: no input makes the core panic --------------------------------------------
array_dtypes = st.one_of(
    hnp.floating_dtypes(),
    hnp.integer_dtypes(),
    hnp.unsigned_integer_dtypes(),
    hnp.boolean_dtypes(),
    hnp.complex_number_dtypes(),
    hnp.datetime64_dtypes(),
    st.just(np.dtype(object)),
    st.just(np.dtype("U3")),
)
any_arrays = hnp.arrays(
    dtype=array_dtypes, shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0)
)
EXPECTED_ERRORS = (ValueError, TypeError, OverflowError)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@given(values=any_arrays)
def test_no_input_panics(name, values):
    try:
        out = MECHANISMS[name](values, random_state=0)
    except EXPECTED_ERRORS:
        return
    if name == "exponential_mechanism":
        assert out.shape == (1,)
        assert 0 <= out[0] < values.size
    else:
        assert np.shape(out) == values.shape


@given(
    values=hnp.arrays(
        np.float64,
        hnp.array_shapes(max_dims=1, min_side=0, max_side=20),
        elements=st.floats(allow_nan=True, allow_infinity=True),
    ),
    sensitivity=st.floats(min_value=1e-300, max_value=1e300),
    epsilon=st.floats(min_value=1e-300, max_value=1e300),
    size=st.integers(1, 25),
    replace=st.booleans(),
)
def test_exponential_mechanism_any_scores(values, sensitivity, epsilon, size, replace):
    try:
        out = pt.exponential_mechanism(
            values, sensitivity, epsilon, size=size, replace=replace, random_state=1
        )
    except ValueError:
        assert (
            values.size == 0
            or not np.all(np.isfinite(values))
            or (not replace and size > values.size)
        )
        return
    assert out.shape == (size,)
    assert np.all((out >= 0) & (out < values.size))
    if not replace:
        assert len(set(out.tolist())) == size


class Unreadable:
    """Values whose reading fails the test."""

    def __array__(self, *args, **kwargs):
        raise AssertionError("values were read")


@given(
    values=hnp.arrays(
        np.int64,
        hnp.array_shapes(max_dims=1, min_side=0, max_side=20),
        elements=st.integers(-(2**63), 2**63 - 1),
    ),
    sensitivity=st.floats(min_value=1e-30, max_value=1e30),
    epsilon=st.floats(min_value=1e-30, max_value=1e30),
)
def test_discrete_laplace_refusals_are_public_or_charged(values, sensitivity, epsilon):
    # A refusal that costs nothing must come before the budget check and read no
    # values; any other refusal must have charged epsilon.
    acc = pt.BudgetAccountant()
    try:
        out = pt.discrete_laplace_mechanism(
            values, sensitivity, epsilon, random_state=2, accountant=acc
        )
    except ValueError as exc:
        message = str(exc)
    else:
        assert out.shape == values.shape
        assert acc.spent == epsilon
        return
    if acc.spent == epsilon:
        return
    assert acc.spent == 0
    with pytest.raises(ValueError, match=re.escape(message)):
        pt.discrete_laplace_mechanism(
            Unreadable(),
            sensitivity,
            epsilon,
            accountant=pt.BudgetAccountant(epsilon / 2),
        )


def test_discrete_laplace_saturates_at_the_int64_bounds():
    # Sums beyond int64 come back as its bounds, on a data set and on its neighbour
    # alike: no refusal reveals how close a value was to the bound.
    limits = np.iinfo(np.int64)
    data = np.full(64, limits.max)
    neighbour = data.copy()
    neighbour[0] = limits.max - 10**6
    for values in (data, neighbour, -data - 1):
        acc = pt.BudgetAccountant(1.0)
        out = pt.discrete_laplace_mechanism(
            values, 1e6, 1e-6, random_state=8, accountant=acc
        )
        assert acc.spent == 1e-6
        bound = limits.max if values[1] > 0 else limits.min
        saturated = out == bound
        # The noise (scale 1e12) is positive about half the time: pushed past the
        # bound for those values, strictly inside it for the others.
        assert 10 < saturated.sum() < 54
        moved_inward = (out < bound) if bound > 0 else (out > bound)
        assert np.all(saturated | moved_inward)


def test_discrete_laplace_saturation_matches_exact_integers():
    # The released values against Python's exact integer arithmetic, clipped.
    limits = np.iinfo(np.int64)
    values = np.array([limits.max - 5, limits.min + 5, 0, limits.max, limits.min])
    for seed in range(20):
        out = pt.discrete_laplace_mechanism(values, 10.0, 1.0, random_state=seed)
        noise = _core.discrete_laplace_samples(
            len(values), 10.0, 1.0, core_seed(np.random.default_rng(seed))
        )
        expected = [
            min(max(int(v) + int(z), int(limits.min)), int(limits.max))
            for v, z in zip(values, noise, strict=True)
        ]
        assert out.tolist() == expected


def test_laplace_overflow_after_the_draw_is_charged_and_quotes_no_value():
    # 1.79e308 plus noise of scale 1e307 passes the largest double for some values.
    acc = pt.BudgetAccountant(2.0)
    with pytest.raises(ValueError, match="overflows float64") as refusal:
        pt.laplace_mechanism(
            np.full(8, 1.79e308), 1e307, 1.0, random_state=0, accountant=acc
        )
    assert acc.spent == 1.0
    assert "1.79" not in str(refusal.value)


def test_laplace_values_off_the_grid_are_refused_before_the_draw():
    # Scale 1 has grid step 2**-40 and takes values below 2**80: the same bound
    # as the core's own check, refused here before any noise is drawn.
    exponent, _ = _core.laplace_grid(1.0, 1.0, 1)
    limit = 2.0 ** (exponent + 120)
    below = np.nextafter(limit, 0.0)
    _core.add_laplace(np.array([below]), 1.0, 1.0, 0)
    with pytest.raises(ValueError, match="2\\^120 grid steps"):
        _core.add_laplace(np.array([limit]), 1.0, 1.0, 0)
    generator = np.random.default_rng(0)
    state = generator.bit_generator.state
    acc = pt.BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="2\\^120 grid steps"):
        pt.laplace_mechanism(
            [0.0, -limit], 1.0, 1.0, random_state=generator, accountant=acc
        )
    assert generator.bit_generator.state == state
    assert acc.spent == 0
    pt.laplace_mechanism([below, -below], 1.0, 1.0, accountant=acc)
    assert acc.spent == 1.0
