"""``privtab report``: the page from the shell, its output checks and its options."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from privtab.cli._main import main
from privtab.report import BANNER, Report

pytest.importorskip("matplotlib")
pytest.importorskip("jinja2")


@pytest.fixture
def table_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    colour = rng.choice(["red", "green", "blue"], n)
    age = rng.integers(18, 80, n)
    frame = pd.DataFrame(
        {
            "colour": colour,
            "size": rng.choice(["S", "M", "L"], n),
            "age": age,
            "label": np.where((colour == "red") | (age > 60), "yes", "no"),
        }
    )
    path = tmp_path / "table.csv"
    frame.to_csv(path, index=False)
    return path


def _run(*args: str):
    return CliRunner().invoke(main, ["report", *args])


def test_writes_the_page(table_csv, tmp_path) -> None:
    out = tmp_path / "report.html"
    result = _run(
        str(table_csv),
        "--target",
        "label",
        "-o",
        str(out),
        "--quick",
        "--family",
        "privatekd",
        "--seed",
        "1",
    )
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert BANNER in page.replace("\n", " ")
    assert "http" not in page
    assert 'id="privatekd"' in page
    assert "report written to" in result.output


def test_writes_json_that_reads_back(table_csv, tmp_path) -> None:
    out = tmp_path / "report.json"
    result = _run(
        str(table_csv),
        "--target",
        "label",
        "-o",
        str(out),
        "--epsilons",
        "0.5,5",
        "--repetitions",
        "1",
        "--family",
        "privatekd",
        "--seed",
        "2",
    )
    assert result.exit_code == 0, result.output
    report = Report.from_json(out)
    assert report.about["epsilons"] == [0.5, 5.0]
    assert report.about["repetitions"] == 1
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["sections"][0]["key"] == "privatekd"


def test_refuses_an_image_name_before_reading(table_csv, tmp_path) -> None:
    out = tmp_path / "report.png"
    result = _run(str(table_csv), "--target", "label", "-o", str(out))
    assert result.exit_code == 2
    assert "HTML page" in result.output
    assert not out.exists()


def test_refuses_an_existing_output_without_force(table_csv, tmp_path) -> None:
    out = tmp_path / "report.html"
    out.write_text("keep")
    result = _run(str(table_csv), "--target", "label", "-o", str(out), "--quick")
    assert result.exit_code == 2
    assert "--force" in result.output
    assert out.read_text() == "keep"


def test_unknown_target_is_named(table_csv, tmp_path) -> None:
    result = _run(str(table_csv), "--target", "nope", "-o", str(tmp_path / "r.html"))
    assert result.exit_code == 2
    assert "'nope' is not a column" in result.output


@pytest.mark.parametrize("grid", ["0,1", "a,b", "1,inf"])
def test_bad_epsilons_are_refused(table_csv, tmp_path, grid) -> None:
    result = _run(
        str(table_csv),
        "--target",
        "label",
        "-o",
        str(tmp_path / "r.html"),
        "--epsilons",
        grid,
    )
    assert result.exit_code == 2
    assert "--epsilons" in result.output


def test_missing_budget_file_is_named(table_csv, tmp_path) -> None:
    result = _run(
        str(table_csv),
        "--target",
        "label",
        "-o",
        str(tmp_path / "r.html"),
        "--budget",
        str(tmp_path / "none.db"),
    )
    assert result.exit_code == 2
    assert "privtab budget init" in result.output


def test_help_lists_every_family() -> None:
    from privtab.report import FAMILIES

    result = CliRunner().invoke(main, ["report", "--help"])
    assert result.exit_code == 0
    for key in FAMILIES:
        assert key in result.output


def test_demo_report_is_the_report_page(tmp_path) -> None:
    out = tmp_path / "demo.html"
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
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert '<nav aria-label="contents">' in page
    assert 'href="#section-1"' in page
    assert 'href="#privacy-ledger"' in page
    assert "http" not in page
    assert "src=" not in page


def test_without_a_table_a_budget_or_plan_is_needed(tmp_path) -> None:
    result = _run("-o", str(tmp_path / "r.html"))
    assert result.exit_code == 2
    assert "give a table IN" in result.output


def test_a_table_needs_its_target(table_csv, tmp_path) -> None:
    result = _run(str(table_csv), "-o", str(tmp_path / "r.html"))
    assert result.exit_code == 2
    assert "--target" in result.output


def test_integer_codes_are_categories_as_in_every_command(table_csv, tmp_path) -> None:
    frame = pd.read_csv(table_csv)
    frame["grade"] = np.arange(len(frame)) % 4 + 1  # codes 1..4
    path = tmp_path / "codes.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "report.json"
    result = _run(
        str(path),
        "--target",
        "label",
        "-o",
        str(out),
        "--family",
        "microagg",
        "--epsilons",
        "1",
        "--repetitions",
        "1",
        "--seed",
        "0",
    )
    assert result.exit_code == 0, result.output
    (section,) = Report.from_json(out).sections
    assert "age" in section.summary
    assert "grade" not in section.summary


def _store_with_spends(path):
    from privtab import BudgetAccountant

    accountant = BudgetAccountant.open(path, 3.0)
    accountant.spend(0.5, label="counts")
    with accountant.parallel("regions") as regions:
        with regions.part("north"):
            accountant.spend(0.3)
        with regions.part("south"):
            accountant.spend(0.4)
    return accountant


def test_budget_and_plan_sections_from_the_shell(tmp_path) -> None:
    store = tmp_path / "budget.db"
    before = _store_with_spends(store).to_dict()
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[[release]]\nlabel = "selection"\nepsilon = 1.0\n'
        '[[release]]\nlabel = "svm"\nepsilon = 1.5\n',
        encoding="utf-8",
    )
    out = tmp_path / "budget.html"
    result = _run("--budget", str(store), "--plan", str(plan), "-o", str(out))
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    for shown in ('id="budget"', 'id="plan"', "counts", "regions"):
        assert shown in page
    # 0.5 + max(0.3, 0.4) = 0.9 spent; 1.0 fits (2.1 left), 1.5 does not (1.1 left).
    assert "does not fit: release &#39;svm&#39; needs ε = 1.5, 1.1 remains" in page
    from privtab import BudgetAccountant

    assert BudgetAccountant.open(store).to_dict() == before


def test_a_bad_plan_is_refused_naming_the_option_before_the_data(
    table_csv, tmp_path
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('[[release]]\nlabel = "x"\nepsilon = -1\n', encoding="utf-8")
    out = tmp_path / "r.html"
    result = _run(
        str(table_csv), "--target", "label", "--plan", str(plan), "-o", str(out)
    )
    assert result.exit_code == 2
    assert "'--plan'" in result.output
    assert "epsilon must be finite and > 0, got -1" in result.output
    assert not out.exists()
