"""`privtab mask`: microaggregation release of a numeric table, from the shell."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from privtab import individual_ranking_clusters
from privtab.cli import main


@pytest.fixture
def table_csv(tmp_path):
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(
        {
            "income": rng.uniform(1000, 90_000, 300).round(2),
            "region": rng.choice(["north", "south"], 300),
            "tax": rng.uniform(0, 9000, 300).round(2),
        }
    )
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path, frame


def run(args):
    return CliRunner().invoke(main, ["mask", *map(str, args)])


def test_mask_writes_the_release_and_the_ledger(table_csv, tmp_path):
    path, frame = table_csv
    out = tmp_path / "out.csv"
    result = run(
        [
            path,
            "-o",
            out,
            "--k",
            5,
            "--epsilon",
            1.0,
            "--seed",
            3,
            "--bounds",
            "income=0:100000",
            "--bounds",
            "tax=0:10000",
        ]
    )
    assert result.exit_code == 0, result.output
    masked = pd.read_csv(out)
    assert list(masked.columns) == ["income", "region", "tax"]
    assert list(masked["region"]) == list(frame["region"])
    assert masked["income"].between(0, 100_000).all()
    labels = individual_ranking_clusters(frame["income"].to_numpy(), 5)
    for c in np.unique(labels):
        assert masked["income"][labels == c].nunique() == 1
    assert "ε-iDP" in result.stderr
    assert "total 1" in result.stderr
    assert "warning" not in result.stderr


def test_mask_warns_about_inferred_bounds_with_shell_advice(table_csv, tmp_path):
    path, _ = table_csv
    result = run([path, "-o", tmp_path / "o.csv", "--mechanism", "dp", "--seed", 1])
    assert result.exit_code == 0, result.output
    assert "inferred from the data" in result.stderr
    assert "--bounds COL=LO:HI" in result.stderr
    assert "(dp)" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bounds", "nope=0:1"], "not a numeric column"),
        (["--bounds", "income=5:1"], "LOW must be < HIGH"),
        (
            ["--bounds", "income=0:10", "--bounds", "tax=0:10000"],
            "outside the declared",
        ),
        (["--k", 2], "k must be >= 3"),
        (["--epsilon", -1], "epsilon"),
    ],
)
def test_mask_reports_bad_input(table_csv, tmp_path, args, message):
    path, _ = table_csv
    result = run([path, "-o", tmp_path / "o.csv", *args])
    assert result.exit_code != 0
    assert message in result.output
