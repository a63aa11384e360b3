"""`privtab kac`: k-AC feature selection from the command line."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from privtab import KACSelector, containment_anonymity
from privtab.cli import main


@pytest.fixture
def binary_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    B = (rng.random((n, 7)) < 0.35).astype(int)
    frame = pd.DataFrame(B, columns=[f"f{j}" for j in range(7)])
    frame["label"] = np.where(B[:, 0] + B[:, 3] + rng.random(n) > 1.2, "yes", "no")
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path, frame


def run(args):
    return CliRunner().invoke(main, ["kac", *map(str, args)])


@pytest.mark.parametrize(
    "method", ["greedy_distcnt", "greedy_ham", "maximal", "maximal_feasible"]
)
def test_kac_writes_selected_columns_and_target(binary_csv, tmp_path, method):
    path, frame = binary_csv
    out = tmp_path / "out.csv"
    args = ["--anonymity", 6, "--method", method, "--target", "label", path, "-o", out]
    result = run([*args, "--write-projection"])
    assert result.exit_code == 0, result.output
    features = frame.drop(columns="label")
    expected = KACSelector(6, method=method).fit(features, frame["label"].to_numpy())
    chosen = [f"f{j}" for j in expected.selection_order_]
    written = pd.read_csv(out)
    assert list(written.columns) == [*chosen, "label"]
    pd.testing.assert_frame_equal(written, frame[[*chosen, "label"]])
    assert containment_anonymity(written[chosen]).min() >= 6
    assert f"selected ({method}, --anonymity 6): {', '.join(chosen)}" in result.output
    assert f"anonymity by containment: {expected.anonymity_}" in result.output
    assert f"DistCnt utility: {expected.utility_:.4f}" in result.output


def test_kac_json_and_skip_infeasible(binary_csv, tmp_path):
    path, frame = binary_csv
    out = tmp_path / "out.json"
    args = [
        "--anonymity",
        40,
        "--skip-infeasible",
        "--target",
        "label",
        path,
        "-o",
        out,
    ]
    result = run(args)
    assert result.exit_code == 0, result.output
    summary = json.loads(out.read_text())
    expected = KACSelector(40, skip_infeasible=True).fit(
        frame.drop(columns="label"), frame["label"].to_numpy()
    )
    assert summary["selection_order"] == expected.selection_order_.tolist()
    assert summary["anonymity"] == expected.anonymity_ >= 40
    assert summary["selected"] == [f"f{j}" for j in expected.selection_order_]


@pytest.mark.parametrize("method", ["maximal", "maximal_feasible"])
def test_kac_maximal_top_t_and_limits(binary_csv, tmp_path, method):
    path, frame = binary_csv
    features, labels = frame.drop(columns="label"), frame["label"].to_numpy()
    out = tmp_path / "out.json"
    base = ["--anonymity", 4, "--method", method, "--target", "label", path, "-o", out]
    base += ["--force"]  # each run replaces the last one's OUT
    result = run([*base, "--top-t", 1])
    assert result.exit_code == 0, result.output
    summary = json.loads(out.read_text())
    expected = KACSelector(4, method=method, top_t=1).fit(features, labels)
    assert summary["selection_order"] == expected.selection_order_.tolist()
    assert summary["complete"] is True
    assert summary["anonymity"] >= 4
    assert "stopped" not in result.output
    result = run([*base, "--max-sets", 1])
    assert result.exit_code == 0, result.output
    summary = json.loads(out.read_text())
    expected = KACSelector(4, method=method, max_sets=1).fit(features, labels)
    assert summary["selection_order"] == expected.selection_order_.tolist()
    assert summary["complete"] is False
    assert "stopped at --max-sets or --time-limit" in result.output
    result = run([*base, "--time-limit", 30])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["complete"] is True


def test_kac_rejects_bad_maximal_options(binary_csv, tmp_path):
    path, _ = binary_csv
    base = ["--anonymity", 2, "--method", "maximal", "--target", "label", path]
    for option, value in (("--top-t", 0), ("--max-sets", 0), ("--time-limit", -1)):
        result = run([*base, option, value, "-o", tmp_path / "o.json"])
        assert result.exit_code != 0
        assert option in result.output
    result = run(
        ["--anonymity", 2, "--method", "exhaustive", "--target", "label", path]
    )
    assert result.exit_code != 0
    assert "--method" in result.output


def test_kac_rejects_non_binary_columns(tmp_path):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"a": [0, 1, 2, 1], "label": [0, 1, 0, 1]}).to_csv(path, index=False)
    result = run(
        ["--anonymity", 2, "--target", "label", path, "-o", tmp_path / "o.json"]
    )
    assert result.exit_code != 0
    assert "the column 'a' of" in result.output
    assert "(row 2: 2)" in result.output
    assert "Binarise it" in result.output


def test_kac_rejects_unknown_target_and_bad_k(binary_csv, tmp_path):
    path, _ = binary_csv
    result = run(
        ["--anonymity", 2, "--target", "nope", path, "-o", tmp_path / "o.json"]
    )
    assert result.exit_code != 0
    assert "'nope' is not a column" in result.output
    result = run(
        ["--anonymity", 0, "--target", "label", path, "-o", tmp_path / "o.json"]
    )
    assert result.exit_code != 0
    assert "--anonymity" in result.output
    result = run(
        ["--anonymity", 1000, "--target", "label", path, "-o", tmp_path / "o.json"]
    )
    assert result.exit_code != 0
    assert "exceeds the number of rows" in result.output


def test_kac_rejects_a_target_with_one_class(tmp_path):
    path = tmp_path / "one.csv"
    pd.DataFrame({"a": [0, 1, 1, 1], "label": [1, 1, 1, 1]}).to_csv(path, index=False)
    result = run(
        ["--anonymity", 2, "--target", "label", path, "-o", tmp_path / "o.json"]
    )
    assert result.exit_code != 0
    assert "exactly two classes" in result.output


def test_kac_help_explains_options():
    result = CliRunner().invoke(main, ["kac", "--help"])
    assert result.exit_code == 0
    for option in (
        "--anonymity",
        "--method",
        "--top-t",
        "--max-sets",
        "--time-limit",
        "--target",
        "--skip-infeasible",
        "--output",
    ):
        assert option in result.output
    assert "maximal_feasible" in result.output


def test_demo_kac_section_reports_selection_ac_and_auc():
    result = CliRunner().invoke(main, ["demo", "--only", "kac", "--no-progress"])
    assert result.exit_code == 0, result.output
    for text in ("greedy_distcnt", "greedy_ham", "maximal", "all features", "AUC"):
        assert text in result.output


@pytest.mark.parametrize("name", ["out.csv", "out.tsv", "out.parquet", "out.csv.gz"])
def test_a_table_out_needs_write_projection(binary_csv, tmp_path, name):
    path, _ = binary_csv
    out = tmp_path / name
    result = run(["--anonymity", 6, "--target", "label", path, "-o", out])
    assert result.exit_code == 2
    assert "would hold the rows of IN on the selected columns" in result.output
    assert "pass --write-projection" in result.output
    assert not out.exists()
    as_json = tmp_path / "out.json"
    result = run(["--anonymity", 6, "--target", "label", path, "-o", as_json])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    args = ["--anonymity", 6, "--target", "label", path, "-o", tmp_path / "x.json"]
    result = run([*args, "--write-projection"])
    assert result.exit_code == 2
    assert "--write-projection needs a .csv, .tsv or .parquet OUT" in result.output


def test_the_maximal_set_search_shows_its_progress_on_a_terminal():
    import io

    from rich.console import Console

    from privtab.cli._kac import _search_shown
    from privtab.cli._progress import working
    from privtab.kac import maximal_itemsets
    from privtab.kac._itemsets import observe_search

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    B = np.random.default_rng(5).random((2000, 120)) < 0.5
    doing = "selecting features (maximal, --anonymity 1)"
    with (
        working(doing, console) as describe,
        observe_search(_search_shown(describe, doing)),
    ):
        maximal_itemsets(B, 1, time_limit=1.5)
    assert re.search(
        rf"{re.escape(doing)}: [\d,]+ maximal sets found, \d+/120 branches",
        screen.getvalue(),
    )
