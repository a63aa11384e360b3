"""`privtab select --method dpfsdr|dpfs`: DP feature selection for correlated data."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from rich.console import Console

from privtab import DPFS, DPFSDR, BudgetAccountant, PrivacyLeakWarning
from privtab.cli import _demo as demo_module
from privtab.cli import main

ESTIMATORS = {"dpfsdr": DPFSDR, "dpfs": DPFS}


@pytest.fixture(scope="module")
def wdbc(shared_data, tmp_path_factory):
    """WDBC from the real file, with the names of columns.txt and without the id."""
    lines = (shared_data / "wdbc" / "columns.txt").read_text().splitlines()
    names = [line.split("\t")[1] for line in lines if line and line[0] != "#"]
    frame = pd.read_csv(shared_data / "wdbc" / "wdbc.data", header=None, names=names)
    frame = frame.drop(columns="id")
    path = tmp_path_factory.mktemp("wdbc") / "wdbc.csv"
    frame.to_csv(path, index=False)
    return path, frame


def run(args):
    return CliRunner().invoke(main, ["select", *map(str, args)])


def private_args(method, epsilon_selection=0.5, epsilon_training=2.0):
    return [
        "--method",
        method,
        "--target",
        "diagnosis",
        "--epsilon-selection",
        epsilon_selection,
        "--epsilon-training",
        epsilon_training,
    ]


DECLARED = ["--classes", "B,M", "--data-norm", 5000, "--C", 10, "--seed", 11]


@pytest.mark.filterwarnings("ignore:.*the released model is noise")
@pytest.mark.parametrize("budget", ["per_refit", "total"])
@pytest.mark.parametrize("method", ["dpfsdr", "dpfs"])
def test_json_matches_the_estimator_with_the_same_seed(wdbc, tmp_path, method, budget):
    path, frame = wdbc
    out = tmp_path / "out.json"
    args = [
        path,
        "-o",
        out,
        *private_args(method),
        *DECLARED,
        "--training-budget",
        budget,
    ]
    result = run([*args, "--max-refits", 12])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())

    predictors = [c for c in frame.columns if c != "diagnosis"]
    direct = ESTIMATORS[method](
        0.5,
        2.0,
        C=10.0,
        data_norm=5000.0,
        budget=budget,
        max_refits=12,
        classes=["B", "M"],
        random_state=11,
        accountant=BudgetAccountant(100.0),
    ).fit(frame[predictors], frame["diagnosis"].astype(str))

    assert report["method"] == method
    assert report["selected"] == [predictors[j] for j in direct.selection_order_]
    assert report["selection_order"] == direct.selection_order_.tolist()
    model = report["classifier"]
    assert model["features"] == [predictors[j] for j in np.flatnonzero(direct.support_)]
    np.testing.assert_array_equal(model["coef"], direct.classifier_.coef_)
    np.testing.assert_array_equal(model["intercept"], direct.classifier_.intercept_)
    assert model["data_norm"] == 5000.0
    assert model["delta_w"] == direct.delta_w_
    # Statistics computed without noise stay out of the released file.
    assert "accuracy" not in out.read_text()
    assert "correlated_sensitivity" not in out.read_text()
    assert f"correlation factor {direct.correlated_sensitivity_:.6g}" in result.stderr
    assert report["n_refits"] == direct.n_refits_ <= 12
    assert report["privacy_ledger"] == [list(e) for e in direct.privacy_ledger_]
    assert report["epsilon"] == direct.epsilon_spent_
    assert math.fsum(eps for _, eps in report["privacy_ledger"]) == report["epsilon"]
    if budget == "total":
        assert report["epsilon"] <= 0.5 + 2.0
    else:
        assert report["epsilon"] == 0.5 + 2.0 * report["n_refits"]
    warned = [line for line in result.stderr.splitlines() if "warning" in line]
    assert all("the released model is noise" in line for line in warned)
    assert f"selected ({method}): {', '.join(report['selected'])}" in result.stdout
    assert f"privacy ledger (total {report['epsilon']:g})" in result.stderr


def test_the_released_coefficients_are_the_fitted_model(wdbc, tmp_path):
    path, frame = wdbc
    out = tmp_path / "out.json"
    result = run([path, "-o", out, *private_args("dpfsdr", 1.0, 50.0), *DECLARED])
    assert result.exit_code == 0, result.output
    model = json.loads(out.read_text())["classifier"]
    reported = float(result.stderr.split("released SVM ")[1].split(",")[0])
    assert model["classes"] == ["B", "M"]
    X = frame[model["features"]].to_numpy()
    scores = X @ np.asarray(model["coef"]).T + np.asarray(model["intercept"])
    predicted = np.where(scores[:, 0] > 0, "M", "B")
    accuracy = float(np.mean(predicted == frame["diagnosis"].to_numpy()))
    assert accuracy == pytest.approx(reported, abs=5e-5)  # printed to 4 decimals


def test_undeclared_norm_and_labels_warn_in_shell_words(wdbc, tmp_path):
    path, _ = wdbc
    out = tmp_path / "out.json"
    args = [path, "-o", out, *private_args("dpfs"), "--seed", 1]
    result = run([*args, "--allow-inferred-domains"])
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert len(notes) == 4
    assert any("bounds were not declared" in n and "--bounds" in n for n in notes)
    assert any("the released model is noise" in n for n in notes)
    assert any("label set of y" in n and "--classes" in n for n in notes)
    assert any("OUT shows the labels of 'diagnosis'" in n for n in notes)


def test_table_output_projects_the_input_and_parquet_input(wdbc, tmp_path):
    path, frame = wdbc
    parquet = tmp_path / "wdbc.parquet"
    frame.to_parquet(parquet, index=False)
    as_json, as_csv = tmp_path / "out.json", tmp_path / "out.csv"
    assert (
        run([parquet, "-o", as_json, *private_args("dpfs"), *DECLARED]).exit_code == 0
    )
    args = [path, "-o", as_csv, *private_args("dpfs"), *DECLARED]
    result = run([*args, "--write-projection"])
    assert result.exit_code == 0, result.output
    selected = json.loads(as_json.read_text())["selected"]
    projected = pd.read_csv(as_csv)
    assert list(projected.columns) == [*selected, "diagnosis"]
    pd.testing.assert_frame_equal(projected, frame[list(projected.columns)])


@pytest.mark.parametrize(
    ("method", "extra", "code", "message"),
    [
        (
            "dpfsdr",
            ["--n-features", 3],
            2,
            "--n-features cannot be used with --method dpfsdr (only with privatekd or greedy)",
        ),
        ("dpfs", ["-e", 1], 2, "--epsilon cannot be used with --method dpfs"),
        ("dpfsdr", ["--epsilon-selection", 0], 2, "must be finite and > 0"),
        ("dpfsdr", ["--epsilon-training", "nan"], 2, "must be finite and > 0"),
        ("dpfsdr", ["--delta", 1.5], 2, "1.5 is not in the range 0<x<=1"),
        ("dpfsdr", ["--record-delta", 0], 2, "0.0 is not in the range 0<x<=1"),
        (
            "dpfs",
            ["--training-budget", "all"],
            2,
            "'all' is not one of 'total', 'per_refit'",
        ),
        ("dpfs", ["--max-refits", 0], 2, "0 is not in the range x>=1"),
        ("dpfs", ["--data-norm", -1], 2, "-1.0 is not in the range x>0"),
        ("dpfs", ["--C", 0], 2, "0.0 is not in the range x>0"),
        (
            "dpfsdr",
            ["--classes", "B,X"],
            1,
            "not among the declared classes ['B', 'X']",
        ),
    ],
)
def test_bad_options_of_dpfsdr_and_dpfs(wdbc, tmp_path, method, extra, code, message):
    path, _ = wdbc
    out = tmp_path / "out.json"
    result = run([path, "-o", out, *private_args(method), *extra])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--method", "dpfsdr", "--epsilon-training", 1],
            "Missing option '--epsilon-selection' (required with --method dpfsdr).",
        ),
        (
            ["--method", "dpfs", "--epsilon-selection", 1],
            "Missing option '--epsilon-training' (required with --method dpfs).",
        ),
        (
            ["--n-features", 2, "--epsilon-selection", 1],
            "--epsilon-selection cannot be used with --method privatekd",
        ),
        (
            ["--method", "greedy", "--n-features", 2, "--data-norm", 3, "--delta", 0.5],
            "--delta, --data-norm cannot be used with --method greedy (only with "
            "dpfsdr or dpfs)",
        ),
        (["--method", "privatekd"], "Missing option '--n-features'."),
        (
            ["--method", "dpfs", "--epsilon-selection", 1, "--epsilon-training", 1,
             "--domain", "radius1=1,2"],
            "--domain cannot be used with --method dpfs",
        ),
        (
            ["--n-features", 2, "--allow-inferred-domains"],
            "--allow-inferred-domains cannot be used with --method privatekd",
        ),
    ],
)  # fmt: skip
def test_options_of_the_other_family_are_errors(wdbc, tmp_path, args, message):
    path, _ = wdbc
    out = tmp_path / "out.json"
    result = run([path, "-o", out, "--target", "diagnosis", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert not out.exists()


def test_non_numeric_predictors_and_no_predictors_are_errors(wdbc, tmp_path):
    _, frame = wdbc
    labelled = frame.assign(site=np.where(frame.index % 2, "north", "south"))
    path = tmp_path / "mixed.csv"
    labelled.to_csv(path, index=False)
    args = [path, "-o", tmp_path / "o.json", *private_args("dpfsdr"), *DECLARED]
    result = run(args)
    assert result.exit_code == 1
    assert "needs numeric predictors; not numeric: 'site'" in result.output
    only_target = tmp_path / "target.csv"
    frame[["diagnosis"]].to_csv(only_target, index=False)
    args = [only_target, "-o", tmp_path / "o.json", *private_args("dpfs"), *DECLARED]
    result = run(args)
    assert result.exit_code == 1
    assert "no column besides 'diagnosis'" in result.output


def test_help_lists_the_options_of_both_families():
    result = CliRunner().invoke(main, ["select", "--help"])
    assert result.exit_code == 0
    for text in (
        "dpfsdr",
        "--epsilon-selection",
        "--epsilon-training",
        "--training-budget",
        "--max-refits",
        "--delta",
        "--record-delta",
        "--data-norm",
        "--n-features",
    ):
        assert text in result.output


@pytest.mark.filterwarnings("ignore:.*the released model is noise")
def test_demo_section_spends_its_epsilon_and_declares_its_norm(wdbc):
    _, frame = wdbc
    X = frame.drop(columns="diagnosis").to_numpy()
    scaled = X / np.asarray(demo_module._WDBC_UPPER_BOUNDS)
    # The declared norm covers every record: each column is within [0, 1].
    assert scaled.min() >= 0
    assert scaled.max() <= 1
    assert np.linalg.norm(scaled, axis=1).max() <= math.sqrt(X.shape[1])

    console = Console(record=True, width=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        acc = demo_module.run_demo(
            0.8, seed=5, progress=False, console=console, sections=["dpfsdr"]
        )
    assert [tuple(e) for e in acc.ledger] == [("DPFS", 0.4), ("DPFSDR", 0.4)]
    assert acc.spent == 0.8
    text = console.export_text()
    for name in ("DFS (not private)", "DPFS", "DPFSDR", "held-out accuracy"):
        assert name in text
    # The non-private row is DFS on the same split: its selection is public here.
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    wdbc_sklearn = load_breast_cancer()
    np.testing.assert_array_equal(wdbc_sklearn.data, X)  # the same records as UCI's
    X_train, _, y_train, _ = train_test_split(
        scaled, wdbc_sklearn.target, test_size=0.3, random_state=0,
        stratify=wdbc_sklearn.target,
    )  # fmt: skip
    with pytest.warns(PrivacyLeakWarning, match="not private"):
        dfs = DPFS(
            None, None, C=10.0, data_norm=math.sqrt(30), max_refits=10, classes=[0, 1]
        ).fit(X_train, y_train)
    names = [str(wdbc_sklearn.feature_names[j]) for j in dfs.selection_order_]
    dfs_line = next(line for line in text.splitlines() if "DFS (not private)" in line)
    assert f"{len(names)}: {names[0]}" in dfs_line


@pytest.mark.parametrize("method", ["dpfsdr", "dpfs"])
def test_inferred_bounds_go_to_stderr_only(wdbc, tmp_path, method):
    path, frame = wdbc
    out = tmp_path / "out.json"
    result = run([path, "-o", out, *private_args(method), "--classes", "B,M"])
    assert result.exit_code == 0, result.output
    predictors = frame.drop(columns="diagnosis").to_numpy()
    largest = float(predictors.max())
    text = out.read_text()
    report = json.loads(text)
    assert report["classifier"]["data_norm"] is None
    assert report["classifier"]["bounds"] == {}
    for shown in (repr(largest), f"{largest:.6g}", f"{largest:.4f}", str(largest)):
        assert shown not in text
    assert "warnings" not in report
    assert "bounds were not declared for the columns 'radius_mean'" in result.stderr


def test_undeclared_labels_are_refused_before_anything_is_spent(wdbc, tmp_path):
    path, _ = wdbc
    out = tmp_path / "out.json"
    result = run([path, "-o", out, *private_args("dpfsdr"), "--data-norm", 5000])
    assert result.exit_code == 1
    assert "the labels of 'diagnosis' would be taken from the data" in result.output
    assert "--classes" in result.output
    assert "--allow-inferred-domains" in result.output
    assert not out.exists()


def declared_bounds(frame):
    """Whole-number bounds around every predictor: public knowledge in these tests."""
    predictors = frame.drop(columns="diagnosis")
    low, high = np.floor(predictors.min()), np.ceil(predictors.max())
    return {c: (float(low[c]), float(max(high[c], low[c] + 1))) for c in low.index}


def bounds_args(bounds):
    return [a for c, (lo, hi) in bounds.items() for a in ("--bounds", f"{c}={lo}:{hi}")]


def fit_directly(method, frame, epsilon_training=2.0, **kwargs):
    predictors = [c for c in frame.columns if c != "diagnosis"]
    return ESTIMATORS[method](
        0.5,
        epsilon_training,
        classes=["B", "M"],
        random_state=11,
        accountant=BudgetAccountant(0.5 + epsilon_training),
        **kwargs,
    ).fit(frame[predictors], frame["diagnosis"].astype(str))


def assert_same_release(report, direct, frame):
    predictors = [c for c in frame.columns if c != "diagnosis"]
    assert report["selected"] == [predictors[j] for j in direct.selection_order_]
    model = report["classifier"]
    np.testing.assert_array_equal(model["coef"], direct.classifier_.coef_)
    np.testing.assert_array_equal(model["intercept"], direct.classifier_.intercept_)
    assert report["privacy_ledger"] == [list(e) for e in direct.privacy_ledger_]
    assert report["epsilon"] == direct.epsilon_spent_


@pytest.mark.filterwarnings("ignore:.*the released model is noise")
@pytest.mark.parametrize(
    ("method", "training", "correlation", "factor"),
    [
        ("dpfsdr", "objective", "none", 1),
        ("dpfs", "objective", 2, 2),
        ("dpfs", "output", 3, 3),
        ("dpfsdr", "output", "data", None),
    ],
)
def test_training_correlation_and_bounds_reach_the_estimator(
    wdbc, tmp_path, method, training, correlation, factor
):
    path, frame = wdbc
    bounds = declared_bounds(frame)
    out = tmp_path / "out.json"
    options = ["--training", training, "--correlation", correlation]
    args = [*private_args(method), "--classes", "B,M", "--seed", 11, *options]
    result = run([path, "-o", out, *args, *bounds_args(bounds)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())

    direct = fit_directly(
        method, frame, training=training, correlation=correlation, bounds=bounds
    )
    assert_same_release(report, direct, frame)
    assert report["training"] == training
    assert report["correlation"] == correlation
    assert report["classifier"]["bounds"] == {c: list(b) for c, b in bounds.items()}
    assert report["classifier"]["data_norm"] is None
    (refits_label, _) = report["privacy_ledger"][-1]
    assert f"({training} perturbation;" in refits_label
    if factor is not None:
        assert f"correlation factor {factor:g}\n" in result.stderr
    else:  # the paper's CS, at least 1, computed from the mapped columns
        assert direct.correlated_sensitivity_ >= 1
        assert f"correlation factor {direct.correlated_sensitivity_:.6g}\n" in (
            result.stderr
        )
    assert "bounds were not declared" not in result.stderr
    if (training, correlation) != ("output", "data"):
        # The options change what is released: the defaults give another model.
        default = fit_directly(method, frame, bounds=bounds)
        assert not np.array_equal(default.classifier_.coef_, direct.classifier_.coef_)


@pytest.mark.filterwarnings("ignore:.*the released model is noise")
def test_huber_h_reaches_the_estimator(wdbc, tmp_path):
    path, frame = wdbc
    bounds = declared_bounds(frame)
    out = tmp_path / "out.json"
    options = ["--training", "objective", "--correlation", "none", "--huber-h", 2]
    args = [*private_args("dpfs"), "--classes", "B,M", "--seed", 11, *options]
    result = run([path, "-o", out, *args, *bounds_args(bounds)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    direct = fit_directly(
        "dpfs",
        frame,
        training="objective",
        correlation="none",
        bounds=bounds,
        huber_h=2.0,
    )
    assert_same_release(report, direct, frame)
    assert report["classifier"]["huber_h"] == 2.0
    default = fit_directly(
        "dpfs", frame, training="objective", correlation="none", bounds=bounds
    )
    assert not np.array_equal(default.classifier_.coef_, direct.classifier_.coef_)


def test_huber_h_belongs_to_dpfsdr_and_dpfs(wdbc, tmp_path):
    path, _ = wdbc
    out = tmp_path / "out.json"
    result = run(
        [path, "-o", out, "--target", "diagnosis", "--n-features", 2, "--huber-h", 2]
    )
    assert result.exit_code == 2
    assert "--huber-h cannot be used with --method privatekd" in result.output
    result = run([path, "-o", out, *private_args("dpfs"), "--huber-h", 0])
    assert result.exit_code == 2
    assert "--huber-h" in result.output


@pytest.mark.filterwarnings("ignore:.*the released model is noise")
def test_bounds_of_some_columns_warn_for_the_others(wdbc, tmp_path):
    path, frame = wdbc
    declared = {"radius_mean": (6.0, 29.0), "texture_mean": (9.0, 40.0)}
    out = tmp_path / "out.json"
    args = [*private_args("dpfs"), "--classes", "B,M", "--seed", 11]
    result = run([path, "-o", out, *args, *bounds_args(declared)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    with pytest.warns(PrivacyLeakWarning, match="bounds were not declared") as caught:
        direct = fit_directly("dpfs", frame, bounds=declared)
    assert_same_release(report, direct, frame)
    assert report["classifier"]["bounds"] == {c: list(b) for c, b in declared.items()}
    (message,) = [
        str(w.message) for w in caught if "bounds were not declared" in str(w.message)
    ]
    named = message.split("for the columns ")[1].split(" and are taken")[0]
    assert "'radius_mean'" not in named
    assert "'texture_mean'" not in named
    assert named.startswith("'perimeter_mean', 'area_mean'")
    assert f"bounds were not declared for the columns {named}" in result.stderr


@pytest.mark.filterwarnings("ignore:.*the released model is noise")
def test_delta_and_record_delta_reach_the_estimator(wdbc, tmp_path):
    path, frame = wdbc
    bounds = declared_bounds(frame)
    out = tmp_path / "out.json"
    # ε₂ = 1000 with objective perturbation selects several columns, so the records'
    # correlations (and with them the factor CS) depend on --record-delta.
    options = ["--delta", 0.6, "--record-delta", 0.5, "--max-refits", 8]
    args = [
        *private_args("dpfsdr", 0.5, 1000.0),
        *["--training", "objective", "--classes", "B,M", "--seed", 11, *options],
    ]
    result = run([path, "-o", out, *args, *bounds_args(bounds)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    common = {"epsilon_training": 1000.0, "training": "objective", "bounds": bounds}
    direct = fit_directly(
        "dpfsdr", frame, delta=0.6, record_delta=0.5, max_refits=8, **common
    )
    assert_same_release(report, direct, frame)
    assert report["n_refits"] == direct.n_refits_ <= 8
    factor = direct.correlated_sensitivity_
    assert f"correlation factor {factor:.6g}\n" in result.stderr
    # Each option is observable on its own: another filter, another factor.
    other_delta = fit_directly("dpfsdr", frame, record_delta=0.5, **common)
    assert len(other_delta.kept_features_) > len(direct.kept_features_)
    other_record = fit_directly("dpfsdr", frame, delta=0.6, max_refits=8, **common)
    assert direct.support_.sum() >= 3
    assert other_record.correlated_sensitivity_ != factor


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (
            ["--training", "exact"],
            2,
            "Invalid value for '--training': 'exact' is not one of 'output', "
            "'objective'",
        ),
        (
            ["--correlation", "0"],
            2,
            "Invalid value for --correlation: must be data, none or a group size "
            "(an integer >= 1), got '0'",
        ),
        (["--correlation", "1.5"], 2, "a group size (an integer >= 1), got '1.5'"),
        (["--correlation", "all"], 2, "a group size (an integer >= 1), got 'all'"),
        (
            ["--bounds", "radius_mean=5:1"],
            2,
            "Invalid value for '--bounds': LOW must be < HIGH, got 'radius_mean=5:1'",
        ),
        (
            ["--bounds", "radius_mean=a:1"],
            2,
            "expected COLUMN=LOW:HIGH with finite numbers, got 'radius_mean=a:1'",
        ),
        (
            ["--bounds", "radius=0:30"],
            2,
            "Invalid value for --bounds: 'radius' is not a predictor of IN; "
            "predictors: radius_mean, texture_mean,",
        ),
        (
            ["--bounds", "radius_mean=0:30", "--data-norm", 5],
            1,
            "give --bounds COL=LO:HI (per column, mapped to [-1, 1]) or --data-norm "
            "NORM (one bound on the rows' L2 norms), not both; got --data-norm 5.0 "
            "and the bounds {'radius_mean': (0.0, 30.0)}",
        ),
    ],
)
def test_bad_training_correlation_and_bounds_are_refused(
    wdbc, tmp_path, extra, code, message
):
    path, _ = wdbc
    out = tmp_path / "out.json"
    args = [*private_args("dpfs"), "--classes", "B,M", *extra]
    result = run([path, "-o", out, *args])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert not out.exists()
