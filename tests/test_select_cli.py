"""`privtab select`: PrivateKD and the greedy order from the command line."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from rich.console import Console

from privtab import PrivacyLeakWarning, TableEncoder, greedy_discernibility
from privtab.cli import _demo as demo_module
from privtab.cli import main


@pytest.fixture
def table_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.integers(0, 4, n),
            "shape": rng.choice(["round", "square"], n),
            "noise": rng.integers(0, 2, n),
        }
    )
    frame["label"] = np.where(
        (frame["colour"] == "red") ^ (rng.random(n) < 0.1), "yes", "no"
    )
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path, frame


def run(args):
    return CliRunner().invoke(main, ["select", *map(str, args)])


def test_privatekd_writes_json_with_ledger(table_csv, tmp_path):
    path, _frame = table_csv
    out = tmp_path / "out.json"
    args = [
        path,
        "-o",
        out,
        "--target",
        "label",
        "--n-features",
        2,
        "-e",
        1e6,
        "--seed",
        3,
    ]
    result = run(args)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["method"] == "privatekd"
    assert len(report["selected"]) == 2
    assert report["selected"][0] == "colour"
    assert sum(eps for _, eps in report["privacy_ledger"]) == report["epsilon"] == 1e6
    # The warnings go to stderr only: OUT holds the release.
    assert "warnings" not in report
    assert (
        "inferred the categories of ['colour', 'size', 'shape', 'noise'] from the "
        "data" in result.stderr
    )
    assert "Declare them with --domain COL=a,b,c and --bounds COL=LO:HI" in (
        result.stderr
    )
    again = tmp_path / "again.json"
    assert run([*args[:2], again, *args[3:]]).exit_code == 0
    assert json.loads(again.read_text())["selected"] == report["selected"]


def test_declared_classes_silence_the_label_warning(table_csv, tmp_path):
    path, _ = table_csv
    base = [path, "--target", "label", "--n-features", 2, "-e", 1e6, "--seed", 3]
    inferred, declared = tmp_path / "inferred.json", tmp_path / "declared.json"
    result = run([*base, "-o", inferred])
    assert result.exit_code == 0, result.output
    label_notes = [line for line in result.stderr.splitlines() if "label set" in line]
    assert len(label_notes) == 1
    assert "with --classes" in label_notes[0]  # the shell's way to declare them
    result = run([*base, "-o", declared, "--classes", "yes,no"])
    assert result.exit_code == 0, result.output
    assert "label set" not in result.stderr
    report = json.loads(declared.read_text())
    assert report["selected"] == json.loads(inferred.read_text())["selected"]


def test_declared_domains_and_bounds_silence_the_encoder(table_csv, tmp_path):
    path, frame = table_csv
    out = tmp_path / "out.json"
    args = [
        path,
        "-o",
        out,
        "--target",
        "label",
        "--n-features",
        3,
        "--method",
        "greedy",
    ]
    args += ["--domain", "colour=red,green,blue", "--domain", "shape=round,square"]
    args += ["--bounds", "size=0:3", "--domain", "noise=0,1", "--classes", "yes,no"]
    result = run(args)
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr
    predictors = ["colour", "size", "shape", "noise"]
    codes = TableEncoder(
        domains={"colour": ["red", "green", "blue"], "shape": ["round", "square"],
                 "noise": [0, 1]},
        bounds={"size": (0, 3)},
        missing="category",
    ).fit_transform(frame[predictors])  # fmt: skip
    order = greedy_discernibility(codes, frame["label"].to_numpy(), 3)
    assert json.loads(out.read_text())["selected"] == [predictors[j] for j in order]
    result = run([*args[:2], tmp_path / "o.json", *args[3:], "--domain", "label=a"])
    assert result.exit_code == 2
    assert "'label' is not a predictor of IN" in result.output


@pytest.mark.parametrize("method", ["privatekd", "greedy"])
def test_a_label_outside_the_declared_classes_is_an_error(table_csv, tmp_path, method):
    path, _ = table_csv
    args = [path, "-o", tmp_path / "o.json", "--target", "label", "--n-features", 1]
    result = run([*args, "--method", method, "--classes", "yes,maybe"])
    assert result.exit_code != 0
    assert "y has the label 'no' at row" in result.output
    assert "not among the declared classes ['maybe', 'yes']" in result.output


def test_greedy_and_csv_projection(table_csv, tmp_path):
    path, frame = table_csv
    out = tmp_path / "projected.csv"
    args = [
        path,
        "-o",
        out,
        "--target",
        "label",
        "--n-features",
        3,
        "--method",
        "greedy",
    ]
    result = run([*args, "--write-projection"])
    assert result.exit_code == 0, result.output
    assert "OUT holds rows of IN with their original values" in result.stderr
    projected = pd.read_csv(out)
    predictors = ["colour", "size", "shape", "noise"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        # size and noise are integer codes: a category per value, no bins.
        encoder = TableEncoder(
            domains={"size": [0, 1, 2, 3], "noise": [0, 1]}, missing="category"
        )
        codes = encoder.fit_transform(frame[predictors])
    order = greedy_discernibility(codes, frame["label"].to_numpy(), 3)
    assert list(projected.columns) == [*(predictors[j] for j in order), "label"]
    pd.testing.assert_frame_equal(projected, frame[list(projected.columns)])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target", "nope", "--n-features", 1], "'nope' is not a column"),
        (
            ["--target", "label", "--n-features", 5],
            "between 1 and the number of predictors",
        ),
        (["--target", "label", "--n-features", 0], "0 is not in the range x>=1"),
        (["--target", "label", "--n-features", 1, "-e", 0], "must be finite and > 0"),
        (
            ["--target", "label", "--n-features", 1, "--method", "x"],
            "'x' is not one of",
        ),
        (["--n-features", 1], "Missing option '--target'"),
        (
            ["--target", "label", "--n-features", 1, "--classes", "yes,,no"],
            "an empty label",
        ),
        (
            ["--target", "label", "--n-features", 1, "--classes", "no,no"],
            "repeats the label",
        ),
    ],
)
def test_select_errors(table_csv, tmp_path, extra, message):
    path, _ = table_csv
    result = run([path, "-o", tmp_path / "o.json", *extra])
    assert result.exit_code != 0
    assert message in result.output


def test_select_unreadable_input(tmp_path):
    result = run(
        [
            tmp_path / "missing.csv",
            "-o",
            tmp_path / "o.json",
            "--target",
            "a",
            "--n-features",
            1,
        ]
    )
    assert result.exit_code != 0
    assert "cannot read" in result.output


def test_select_help_explains_the_options():
    result = CliRunner().invoke(main, ["select", "--help"])
    assert result.exit_code == 0
    for text in (
        "--target",
        "--n-features",
        "--classes",
        "--epsilon",
        "--seed",
        "privatekd",
    ):
        assert text in result.output


def test_demo_section_compares_privatekd_with_greedy():
    console = Console(record=True, width=120)
    acc = demo_module.run_demo(
        1.0, seed=2, progress=False, console=console, sections=["privatekd"]
    )
    text = console.export_text()
    assert "greedy (not private)" in text
    assert "PrivateKD" in text
    assert [tuple(e) for e in acc.ledger] == [
        ("PrivateKD: 4 exponential-mechanism rounds", 1.0)
    ]
