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


DECLARED = ["--domain", "a=x,y,z", "--domain", "b=p,q,r", "--domain", "c=u,v"]
DECLARED += ["--bounds", "d=0:10"]


def test_non_private_distances_match_the_python_api(table_csv, tmp_path):
    path, _ = table_csv
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        main,
        ["distances", str(path), "-o", str(out), "--method", "dilca_m", *DECLARED],
    )
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    written = json.loads(out.read_text())
    assert written["epsilon"] == 0.0
    assert written["privacy_ledger"] == []
    domains = {"a": ["x", "y", "z"], "b": ["p", "q", "r"], "c": ["u", "v"]}
    # IN has no missing value: no column gets a category for them.
    table = pt.TableEncoder(
        domains=domains, bounds={"d": (0, 10)}, bins=5
    ).fit_transform(pd.read_csv(path))
    model = pt.DILCA().fit(table)
    for i, name in enumerate(table.columns):
        entry = written["columns"][str(name)]
        np.testing.assert_allclose(entry["distances"], model.distance_matrix(i))
        assert entry["context"] == [str(table.columns[j]) for j in model.contexts_[i]]
        assert len(entry["categories"]) == table.cardinalities[i]
    for name, categories in domains.items():
        assert written["columns"][name]["categories"] == categories
    assert written["columns"]["d"]["categories"] == [1.0, 3.0, 5.0, 7.0, 9.0]


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
            "--allow-inferred-domains",
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


@pytest.fixture
def names_csv(tmp_path):
    """A table whose ``name`` column holds 200 distinct names, one per record."""
    rng = np.random.default_rng(5)
    names = [f"Person{i:03d} Surname{i:03d}" for i in range(200)]
    frame = pd.DataFrame(
        {
            "name": names,
            "city": rng.choice(["Lyon", "Nice"], 200),
            "visits": rng.integers(0, 4, 200),
        }
    )
    path = tmp_path / "names.csv"
    frame.to_csv(path, index=False)
    return path, names


@pytest.mark.parametrize("method", ["max_relevance", "dilca_m"])
def test_inferred_names_never_reach_out_unless_allowed(names_csv, tmp_path, method):
    path, names = names_csv
    out = tmp_path / "out.json"
    args = ["distances", str(path), "-o", str(out), "--method", method, "--seed", "1"]
    args += ["--context-size", "2"]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 1
    assert "the domains of 'name', 'city', 'visits' would be taken from the data" in (
        refused.output
    )
    assert "--domain COL=a,b,c" in refused.output
    assert "--allow-inferred-domains" in refused.output
    assert not out.exists()
    assert not any(name in refused.output for name in names)

    # Declared domains for the other columns: only name is refused.
    declared = ["--domain", "city=Lyon,Nice,Paris", "--domain", "visits=0,1,2,3"]
    refused = CliRunner().invoke(main, [*args, *declared])
    assert refused.exit_code == 1
    assert "the domains of 'name' would be taken" in refused.output
    assert not out.exists()

    allowed = CliRunner().invoke(main, [*args, *declared, "--allow-inferred-domains"])
    assert allowed.exit_code == 0, allowed.output
    written = json.loads(out.read_text())
    assert written["columns"]["name"]["categories"] == sorted(names)
    assert written["columns"]["city"]["categories"] == ["Lyon", "Nice", "Paris"]
    assert written["columns"]["visits"]["categories"] == [0, 1, 2, 3]
    assert "OUT shows the domains of 'name'" in allowed.stderr


def test_declared_domains_are_checked(names_csv, tmp_path):
    path, _ = names_csv
    base = ["distances", str(path), "-o", str(tmp_path / "o.json")]
    base += ["--allow-inferred-domains"]
    cases = [
        (["--domain", "town=Lyon"], 2, "'town' is not a column of IN"),
        (["--domain", "city"], 2, "expected COLUMN=a,b,c, got 'city'"),
        (["--domain", "city=Lyon,,Nice"], 2, "an empty label"),
        (["--domain", "city=Lyon", "--domain", "city=Nice"], 2, "'city' twice"),
        (["--domain", "visits=0,one"], 2, "cannot read the categories '0,one'"),
        (["--domain", "city=Lyon"], 1, "'Nice'"),  # a value outside the domain
        (["--bounds", "visits=0:2"], 1, "visits"),
    ]
    for extra, code, message in cases:
        result = CliRunner().invoke(main, [*base, *extra])
        assert result.exit_code == code, (extra, result.output)
        assert message in result.output, (extra, result.output)
