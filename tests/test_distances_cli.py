"""`privtab distances`: DILCA / DP-DILCA from the command line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import privtab as pt
from privtab.cli import main


@pytest.fixture
def table_csv(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 400)
    frame = pd.DataFrame(
        {
            "a": np.array(["x", "y", "z"])[a],
            "b": np.array(["p", "q", "r"])[(a + rng.integers(0, 2, 400)) % 3],
            "c": np.array(["u", "v"])[rng.integers(0, 2, 400)],
            "d": rng.uniform(0, 10, 400),
        }
    )
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_non_private_distances_match_the_python_api(table_csv, tmp_path):
    path, _ = table_csv
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        main, ["distances", str(path), "-o", str(out), "--method", "dilca_m"]
    )
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    assert written["epsilon"] == 0.0
    assert written["privacy_ledger"] == []
    with pytest.warns(pt.PrivacyLeakWarning):
        table = pt.TableEncoder(missing="category", bins=5).fit_transform(
            pd.read_csv(path)
        )
    model = pt.DILCA().fit(table)
    for i, name in enumerate(table.columns):
        entry = written["columns"][str(name)]
        np.testing.assert_allclose(entry["distances"], model.distance_matrix(i))
        assert entry["context"] == [str(table.columns[j]) for j in model.contexts_[i]]
        assert len(entry["categories"]) == table.cardinalities[i]


def test_dp_distances_write_the_ledger(table_csv, tmp_path):
    path, _ = table_csv
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        main,
        [
            "distances",
            str(path),
            "-o",
            str(out),
            "-e",
            "2",
            "--seed",
            "3",
            "--method",
            "max_relevance",
            "--context-size",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    assert written["epsilon"] == 2.0
    assert sum(eps for _, eps in written["privacy_ledger"]) == 2.0
    for entry in written["columns"].values():
        matrix = np.array(entry["distances"])
        np.testing.assert_allclose(matrix, matrix.T)
        assert np.all(np.diag(matrix) == 0)
        assert matrix.min() >= 0
        assert matrix.max() <= 1
    assert "warning:" in result.output


def test_distances_cli_errors(table_csv, tmp_path):
    path, _ = table_csv
    runner = CliRunner()
    missing = runner.invoke(
        main, ["distances", str(tmp_path / "nope.csv"), "-o", "x.json"]
    )
    assert missing.exit_code == 1
    assert "cannot read" in missing.output
    bad_eps = runner.invoke(main, ["distances", str(path), "-o", "x.json", "-e", "-1"])
    assert bad_eps.exit_code == 2
    bad_method = runner.invoke(
        main, ["distances", str(path), "-o", "x.json", "--method", "nope"]
    )
    assert bad_method.exit_code == 2
    unwritable = runner.invoke(
        main,
        [
            "distances",
            str(path),
            "-o",
            str(tmp_path / "no" / "x.json"),
            "--method",
            "dilca_rr",
        ],
    )
    assert unwritable.exit_code == 1
    assert "cannot write" in unwritable.output


def test_demo_distances_section_spends_its_epsilon():
    from rich.console import Console

    from privtab.cli._demo import run_demo

    console = Console(record=True, width=120)
    acc = run_demo(0.5, seed=4, progress=False, sections=["distances"], console=console)
    text = console.export_text()
    assert "DILCA_RR context" in text
    assert "Pearson r" in text
    assert acc.spent == 0.5
    assert [label for label, _ in acc.ledger] == [
        "DPDILCA (max_relevance, 15 attributes)"
    ]
