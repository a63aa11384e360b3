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
            "--min-cluster-size",
            5,
            "--epsilon",
            1.0,
            "--seed",
            3,
            "--bounds",
            "income=0:100000",
            "--bounds",
            "tax=0:10000",
            "--drop-non-numeric",
        ]
    )
    assert result.exit_code == 0, result.output
    masked = pd.read_csv(out)
    assert list(masked.columns) == ["income", "tax"]
    assert masked["income"].between(0, 100_000).all()
    labels = individual_ranking_clusters(frame["income"].to_numpy(), 5)
    for c in np.unique(labels):
        assert masked["income"][labels == c].nunique() == 1
    assert "masked: income, tax\n" in result.stderr
    assert "dropped: region\n" in result.stderr
    assert "ε-iDP" in result.stderr
    assert "total 1" in result.stderr
    assert "warning" not in result.stderr


@pytest.fixture
def people_csv(tmp_path):
    frame = pd.DataFrame(
        {
            "name": [f"person {i}" for i in range(12)],
            "income": np.linspace(1000, 90_000, 12).round(2),
            "diagnosis": ["flu", "hiv", "asthma"] * 4,
            "born": pd.date_range("1950-01-01", periods=12, freq="373D"),
            "smoker": [True, False] * 6,
        }
    )
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path, frame


MASK_INCOME = ["--min-cluster-size", 3, "--seed", 3, "--bounds", "income=0:100000"]


def test_mask_refuses_non_numeric_columns_naming_them(people_csv, tmp_path):
    path, _ = people_csv
    out = tmp_path / "out.csv"
    result = run([path, "-o", out, *MASK_INCOME, "--keep", "diagnosis"])
    assert result.exit_code != 0
    assert "non-numeric columns (name, born, smoker)" in result.output
    assert "--keep COL" in result.output
    assert "--drop-non-numeric" in result.output
    assert not out.exists()


def test_mask_keeps_listed_columns_unmasked_with_a_warning(people_csv, tmp_path):
    path, frame = people_csv
    out = tmp_path / "out.csv"
    keep = ["--keep", "born,name", "--keep", "smoker", "--drop-non-numeric"]
    result = run([path, "-o", out, *MASK_INCOME, *keep])
    assert result.exit_code == 0, result.output
    masked = pd.read_csv(out)
    assert list(masked.columns) == ["name", "income", "born", "smoker"]
    assert list(masked["name"]) == list(frame["name"])
    assert "warning:" in result.stderr
    warning = next(line for line in result.stderr.splitlines() if "warning" in line)
    assert "['name', 'born', 'smoker']" in warning
    assert "unmasked" in warning
    assert "masked: income\n" in result.stderr
    assert "kept unmasked (not covered): name, born, smoker\n" in result.stderr
    assert "dropped: diagnosis\n" in result.stderr


def test_mask_warns_about_inferred_bounds_with_shell_advice(table_csv, tmp_path):
    path, _ = table_csv
    args = ["--mechanism", "dp", "--seed", 1, "--drop-non-numeric"]
    result = run([path, "-o", tmp_path / "o.csv", *args])
    assert result.exit_code == 0, result.output
    assert "inferred from the data" in result.stderr
    assert "--bounds COL=LO:HI" in result.stderr
    assert "(dp)" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bounds", "nope=0:1"], "'nope' is not a column of IN"),
        (["--bounds", "income=5:1"], "LOW must be < HIGH"),
        (
            ["--bounds", "income=0:10", "--bounds", "tax=0:10000"],
            "outside the declared",
        ),
        (["--min-cluster-size", 2], "must be >= 3 with --mechanism idp_cbls"),
        (["--epsilon", -1], "epsilon"),
        (["--keep", "nope"], "'nope' is not a column"),
        (["--keep", "income"], "numeric columns are always masked"),
    ],
)
def test_mask_reports_bad_input(table_csv, tmp_path, args, message):
    path, _ = table_csv
    result = run([path, "-o", tmp_path / "o.csv", "--drop-non-numeric", *args])
    assert result.exit_code != 0
    assert message in result.output


def test_mask_writes_neither_the_index_nor_the_attrs_of_in(tmp_path):
    # Parquet keeps a frame's index and its attrs (pandas metadata): neither may
    # reach OUT, where they would travel with the masked values.
    frame = pd.DataFrame(
        {"income": np.linspace(1000, 90_000, 12)},
        index=pd.Index([f"person {i}" for i in range(12)], name="patient"),
    )
    frame.attrs["source"] = "ward 3 admissions"
    path, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    frame.to_parquet(path)
    result = run([path, "-o", out, *MASK_INCOME])
    assert result.exit_code == 0, result.output
    masked = pd.read_parquet(out)
    assert list(masked.columns) == ["income"]
    pd.testing.assert_index_equal(masked.index, pd.RangeIndex(12))
    assert masked.attrs == {}
    assert b"ward 3" not in out.read_bytes()
    assert b"person 1" not in out.read_bytes()
