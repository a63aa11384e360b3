"""The privtab command line and the demo registry."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from rich.console import Console

import privtab
from privtab.accountant import resolve_accountant
from privtab.cli import _demo as demo_module
from privtab.cli import main
from privtab.cli._io import read_table, write_table
from privtab.datasets import load_adult


class StandIns:
    """Small NumPy versions of the counting and noise functions the demo calls."""

    def __init__(self):
        self.tables = []
        self.mechanism_calls = []

    def contingency_table(self, x, y, kx, ky):
        table = np.zeros((kx, ky), dtype=np.int64)
        np.add.at(
            table, (np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)), 1
        )
        self.tables.append(table)
        return table

    def discrete_laplace_mechanism(
        self, values, sensitivity, epsilon, *, random_state=None, accountant=None
    ):
        acc = resolve_accountant(accountant)
        acc.check(epsilon)
        self.mechanism_calls.append((sensitivity, epsilon, random_state))
        rng = np.random.default_rng(random_state)
        p = 1 - np.exp(-epsilon / sensitivity)
        values = np.asarray(values)
        noisy = values + rng.geometric(p, values.shape) - rng.geometric(p, values.shape)
        acc.spend(epsilon, label="discrete Laplace mechanism")
        return noisy


@pytest.fixture
def stand_ins(monkeypatch):
    fakes = StandIns()
    monkeypatch.setattr(privtab, "contingency_table", fakes.contingency_table)
    monkeypatch.setattr(
        privtab, "discrete_laplace_mechanism", fakes.discrete_laplace_mechanism
    )
    return fakes


def test_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"privtab, version {privtab.__version__}"


def test_help_lists_commands_and_options():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    assert "demo" in result.output
    result = CliRunner().invoke(main, ["demo", "--help"])
    assert result.exit_code == 0
    for text in ("--epsilon", "--seed", "--no-progress", "--only", "contingency"):
        assert text in result.output


def test_demo_runs_and_prints_table_and_ledger(stand_ins):
    result = CliRunner().invoke(
        main,
        [
            "demo",
            "--epsilon",
            "0.5",
            "--seed",
            "7",
            "--no-progress",
            "--only",
            "contingency",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "education x income" in result.output
    assert "Bachelors" in result.output
    assert "<=50K" in result.output
    assert "privacy ledger" in result.output
    assert "discrete Laplace mechanism" in result.output
    assert "0.5 of 0.5" in result.output
    # The true table the demo counted equals an independent crosstab of the data.
    frame = load_adult().frame
    expected = pd.crosstab(frame["education"], frame["income"], dropna=False)
    expected = expected.reindex(
        index=frame["education"].cat.categories, columns=frame["income"].cat.categories
    )
    (table,) = stand_ins.tables
    assert table.shape == (17, 3)  # 16 + missing category, 2 + missing category
    np.testing.assert_array_equal(table[:16, :2], expected.to_numpy())
    assert table[16].sum() == 0
    assert table[:, 2].sum() == 0
    ((sensitivity, epsilon, random_state),) = stand_ins.mechanism_calls
    assert sensitivity == 2
    assert epsilon == 0.5
    assert isinstance(random_state, np.random.Generator)


def test_demo_is_reproducible_with_a_seed(stand_ins):
    runner = CliRunner()
    first = runner.invoke(main, ["demo", "--seed", "3", "--no-progress"])
    second = runner.invoke(main, ["demo", "--seed", "3", "--no-progress"])
    strip = [line for line in first.output.splitlines() if " s ─" not in line]
    assert strip == [line for line in second.output.splitlines() if " s ─" not in line]


def test_demo_without_seed_uses_os_entropy(stand_ins):
    result = CliRunner().invoke(main, ["demo", "--only", "contingency"])
    assert result.exit_code == 0, result.output
    assert stand_ins.mechanism_calls[0][2] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--epsilon", "0"], "must be finite and > 0"),
        (["--epsilon", "nan"], "must be finite and > 0"),
        (["--epsilon", "abc"], "is not a valid float"),
        (["--seed", "-1"], "is not in the range x>=0"),
        (["--only", "nope"], "unknown section(s) nope"),
    ],
)
def test_demo_rejects_bad_options(args, message, stand_ins):
    result = CliRunner().invoke(main, ["demo", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert not stand_ins.mechanism_calls


def test_run_demo_directly(stand_ins):
    console = Console(record=True, width=100)
    acc = demo_module.run_demo(
        0.25, seed=1, progress=False, console=console, sections=["contingency"]
    )
    assert acc.spent == 0.25
    assert acc.epsilon == 0.25
    assert [tuple(e) for e in acc.ledger] == [("discrete Laplace mechanism", 0.25)]
    assert "privacy ledger" in console.export_text()


def test_run_demo_validation():
    with pytest.raises(ValueError, match=r"epsilon must be finite and > 0, got -1.0"):
        demo_module.run_demo(-1.0)
    with pytest.raises(ValueError, match=r"seed must be >= 0, got -2"):
        demo_module.run_demo(1.0, seed=-2)
    with pytest.raises(ValueError, match=r"sections has unknown names \['x'\]"):
        demo_module.run_demo(1.0, sections=["x"])


def test_section_registry_rejects_duplicates():
    with pytest.raises(ValueError, match=r"'contingency' is already registered"):
        demo_module.section("contingency", "again")(lambda ctx: None)


def test_io_round_trip(tmp_path):
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", None]})
    for name in ("t.csv", "t.tsv", "t.csv.gz", "t.parquet"):
        write_table(frame, tmp_path / name)
        back = read_table(tmp_path / name)
        assert back["a"].tolist() == [1, 2]
        assert back["b"].tolist()[0] == "x"
        assert pd.isna(back["b"].tolist()[1])
    with pytest.raises(ValueError, match=r"cannot tell the format of"):
        read_table(tmp_path / "t.xlsx")
    with pytest.raises(ValueError, match=r"format must be 'csv', 'tsv' or 'parquet'"):
        read_table(tmp_path / "t.csv", fmt="json")


def test_demo_writes_an_html_report(tmp_path):
    from click.testing import CliRunner

    from privtab.cli import main

    report = tmp_path / "demo.html"
    result = CliRunner().invoke(
        main,
        [
            "demo",
            "--only",
            "contingency",
            "--seed",
            "1",
            "--no-progress",
            "--report",
            str(report),
        ],
    )
    assert result.exit_code == 0, result.output
    html = report.read_text()
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "education" in html
    assert "privacy ledger" in html


def test_demo_report_to_an_unwritable_path_fails_cleanly(tmp_path):
    from click.testing import CliRunner

    from privtab.cli import main

    target = tmp_path / "missing-dir" / "demo.html"
    result = CliRunner().invoke(
        main, ["demo", "--only", "contingency", "--seed", "1", "--report", str(target)]
    )
    assert result.exit_code == 1
    assert "cannot write --report" in result.output
