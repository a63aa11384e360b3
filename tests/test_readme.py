"""The README's Python examples run as written."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from privtab import PrivacyLeakWarning

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


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
