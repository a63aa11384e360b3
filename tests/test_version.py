"""The version a user sees is the version pip installed (run against the wheel too)."""

from __future__ import annotations

import importlib.metadata

from click.testing import CliRunner

import privtab
from privtab.cli import main


def test_version_is_the_distribution_version():
    assert privtab.__version__ == importlib.metadata.version("privtab")


def test_cli_version_is_the_distribution_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0, result.output
    assert (
        result.output == f"privtab, version {importlib.metadata.version('privtab')}\n"
    )
