"""The README's Python examples run as written."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from privtab import PrivacyLeakWarning

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)

#: A seed written into the README: ``random_state=0``, ``--seed 5``, ``SEED = 7``.
FIXED_SEED = re.compile(r"\b(?:random_state|\w*seed\w*)\s*=\s*\d|--seed[\s=]+\d", re.I)
#: What a line that fixes a seed says, right there.
REPRODUCIBILITY_ONLY = "reproducibility only"


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code, capsys):
    with warnings.catch_warnings():
        # Examples are about the API; they do not declare every bound.
        warnings.simplefilter("ignore", UserWarning)
        # But they show how to declare domains and label sets: nothing is inferred.
        warnings.simplefilter("error", PrivacyLeakWarning)
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.strip()


def test_every_fixed_seed_is_marked_reproducibility_only():
    """Recipes get copied into real releases, and anyone who knows a release's seed can
    remove its noise: a line of the README that fixes a seed says it is there for
    reproducibility only."""
    for written in ("random_state=0", "--seed 5", "--seed=5", "SEED = 7", "seed=3"):
        assert FIXED_SEED.search(written), written
    for free in (
        "random_state=seed",
        "random_state=None",
        "`--seed`",
        "default_rng(0)",
    ):
        assert not FIXED_SEED.search(free), free
    lines = README.read_text().splitlines()
    unmarked = [
        f"README.md:{number}: {line.strip()}"
        for number, line in enumerate(lines, start=1)
        if FIXED_SEED.search(line) and REPRODUCIBILITY_ONLY not in line
    ]
    assert unmarked == []
