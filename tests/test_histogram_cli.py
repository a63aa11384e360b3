"""`privtab histogram`: synthetic data from a projected histogram, from the shell."""

from __future__ import annotations

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
    rng = np.random.default_rng(1)
    n = 2000
    frame = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.choice(["S", "M", "L", "XL"], n),
            "shape": rng.choice(["round", "square"], n),
            "age": rng.uniform(20, 80, n).round(1),
        }
    )
    signal = (frame["colour"] == "red") ^ (frame["size"].isin(["L", "XL"]))
    frame["label"] = np.where(signal ^ (rng.random(n) < 0.1), "yes", "no")
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path, frame


def run(args):
    return CliRunner().invoke(main, ["histogram", *map(str, args)])


#: The public domains of the fixture's text columns and labels.
DECLARED = ["--domain", "colour=red,green,blue", "--domain", "size=S,M,L,XL"]
DECLARED += ["--domain", "shape=round,square", "--classes", "yes,no"]
ALLOW = "--allow-inferred-domains"


def test_huge_epsilon_reproduces_the_greedy_projection(table_csv, tmp_path):
    path, frame = table_csv
    out = tmp_path / "syn.csv"
    args = [path, "-o", out, "--target", "label", "-e", 1e7, "--n-features", 2]
    args += ["--gamma", 0.5, "--seed", 3, "--bounds", "age=20:80", "--bins", 4]
    result = run([*args, *DECLARED])
    assert result.exit_code == 0, result.output
    synthetic = pd.read_csv(out)
    predictors = ["colour", "size", "shape", "age"]
    encoder = TableEncoder(bounds={"age": (20, 80)}, bins=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        codes = encoder.fit_transform(frame[predictors])
    order = greedy_discernibility(codes, frame["label"].to_numpy(), 2)
    chosen = [predictors[j] for j in order]
    assert list(synthetic.columns) == [*chosen, "label"]
    # With noise ~0 the kept observed cells hold their true counts and the false
    # positives round to no record: the synthetic data is the projection itself.
    expected = frame[[*chosen, "label"]].copy()
    if "age" in chosen:
        bin_of = np.minimum(np.floor((frame["age"] - 20) / 15), 3)
        expected["age"] = 20 + (bin_of + 0.5) * 15
    key = [*chosen, "label"]
    pd.testing.assert_frame_equal(
        synthetic.sort_values(key).reset_index(drop=True),
        expected.sort_values(key).reset_index(drop=True),
        check_dtype=False,
    )
    assert "predictors projected on: 2, gamma = 0.5" in result.stderr
    assert f"selected: {', '.join(chosen)}" in result.stderr
    assert "PrivateKD 5e+06, thresholded_histogram 5e+06 (total 1e+07)" in (
        result.stderr
    )
    assert f"synthetic records: {len(frame)}" in result.stderr


def test_numeric_columns_decode_to_bin_midpoints(table_csv, tmp_path):
    path, _ = table_csv
    out = tmp_path / "syn.csv"
    args = [path, "-o", out, "--target", "label", "--n-features", 4, "-e", 5]
    result = run([*args, "--bounds", "age=0:100", "--bins", 5, "--seed", 1, ALLOW])
    assert result.exit_code == 0, result.output
    synthetic = pd.read_csv(out)
    assert "gamma = 1" in result.stderr  # k keeps every predictor: no projection
    assert set(synthetic["age"].dropna()) <= {10.0, 30.0, 50.0, 70.0, 90.0}
    assert set(synthetic["label"]) <= {"yes", "no"}
    # Declared bounds for age: the warning names only the inferred categories.
    warning = next(
        line
        for line in result.stderr.splitlines()
        if line.startswith("warning:") and "categories" in line
    )
    assert "categories of ['colour', 'size', 'shape']" in warning
    assert "bounds of" not in warning


def test_declared_classes_set_the_target_domain(table_csv, tmp_path):
    path, _ = table_csv
    args = [path, "--target", "label", "-e", 1e7, "--n-features", 2, "--gamma", 0.5]
    args += ["--seed", 3, "--bounds", "age=20:80", "--bins", 4, ALLOW]
    inferred, declared = tmp_path / "inferred.csv", tmp_path / "declared.csv"
    result = run([*args, "-o", inferred])
    assert result.exit_code == 0, result.output
    assert "label set of y was inferred" in result.stderr
    # A declared label no record holds: its cells are in the domain (and empty).
    result = run([*args, "-o", declared, "--classes", "yes,no,maybe"])
    assert result.exit_code == 0, result.output
    assert "label set" not in result.stderr
    synthetic = pd.read_csv(declared)
    assert set(synthetic["label"]) == {"yes", "no"}
    assert len(synthetic) == len(pd.read_csv(inferred))


def test_estimated_parameters_seed_and_parquet(table_csv, tmp_path):
    path, _ = table_csv
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    args = ["--target", "label", "-e", 1, "--seed", 7, "--noise", "discrete", ALLOW]
    assert run([path, "-o", first, *args]).exit_code == 0
    result = run([path, "-o", second, *args])
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(pd.read_parquet(first), pd.read_parquet(second))
    assert "bounds of ['age']" in result.stderr
    assert "privacy ledger:" in result.stderr
    assert "(total 1)" in result.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target", "nope"], "'nope' is not a column"),
        (
            ["--target", "label", "--n-features", 5],
            "at most the number of predictors (4)",
        ),
        (["--target", "label", "--n-features", 0], "0 is not in the range x>=1"),
        (["--target", "label", "--gamma", 0], "0 is not in the range 0<x<=1"),
        (["--target", "label", "--gamma", 1.5], "1.5 is not in the range 0<x<=1"),
        (["--target", "label", "-e", 0], "must be finite and > 0"),
        (["--target", "label", "--noise", "x"], "'x' is not one of"),
        (["--target", "label", "--bins", 0], "0 is not in the range x>=1"),
        (["--target", "label", "--bounds", "age"], "expected COLUMN=LOW:HIGH"),
        (["--target", "label", "--bounds", "age=1:x"], "expected COLUMN=LOW:HIGH"),
        (["--target", "label", "--bounds", "age=9:1"], "LOW must be < HIGH"),
        (["--target", "label", "--bounds", "w=0:1"], "'w' is not a predictor"),
        (["--target", "label", "--bounds", "age=30:40"], "outside"),
        (["-e", 1], "Missing option '--target'"),
        (["--target", "label", "--classes", "yes,maybe"], "label 'no' at row"),
        (["--target", "label", "--classes", "yes"], "at least 2 labels"),
        (["--target", "label", "--classes", "yes,"], "an empty label"),
    ],
)
def test_histogram_errors(table_csv, tmp_path, extra, message):
    path, _ = table_csv
    result = run([path, "-o", tmp_path / "o.csv", ALLOW, *extra])
    assert result.exit_code != 0
    assert message in result.output


def test_histogram_io_errors(table_csv, tmp_path):
    path, _ = table_csv
    result = run([tmp_path / "missing.csv", "-o", tmp_path / "o.csv", "--target", "a"])
    assert result.exit_code != 0
    assert "cannot read" in result.output
    result = run([path, "-o", tmp_path / "o.txt", "--target", "label", ALLOW])
    assert result.exit_code != 0
    assert "'--output'" in result.output
    assert "must end in .csv, .tsv or .parquet" in result.output
    tiny = tmp_path / "tiny.csv"
    pd.DataFrame({"label": ["a", "b"]}).to_csv(tiny, index=False)
    result = run([tiny, "-o", tmp_path / "o.csv", "--target", "label"])
    assert result.exit_code != 0
    assert "one column besides the target" in result.output


def test_histogram_help_explains_the_options():
    result = CliRunner().invoke(main, ["histogram", "--help"])
    assert result.exit_code == 0
    for text in (
        "--target",
        "--n-features",
        "--gamma",
        "--epsilon",
        "--seed",
        "--noise",
    ):
        assert text in result.output
    for text in ("--bins", "--bounds", "--classes", "lei_bins", "stderr", "PrivateKD"):
        assert text in result.output


def test_demo_section_trains_on_synthetic_data():
    console = Console(record=True, width=140)
    acc = demo_module.run_demo(
        1.0, seed=4, progress=False, console=console, sections=["projected"]
    )
    text = console.export_text()
    assert "held-out AUC" in text
    assert "synthetic data (ε = 1)" in text
    assert "ledger: PrivateKD" in text
    assert [tuple(e) for e in acc.ledger] == [("ProjectedHistogram", 1.0)]
    aucs = [float(line.split()[-2]) for line in text.splitlines() if "│ 0." in line]
    assert len(aucs) == 3
    assert all(0.5 < auc <= 1 for auc in aucs)


def test_n_features_and_its_deprecated_alias_k(table_csv, tmp_path):
    path, _ = table_csv
    args = [path, "--target", "label", "-e", 1e7, "--gamma", 0.5, "--seed", 3]
    args += ["--bounds", "age=20:80", "--bins", 4, *DECLARED]
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    result = run([*args, "-o", new, "--n-features", 2])
    assert result.exit_code == 0, result.output
    assert "deprecated" not in result.stderr
    result = run([*args, "-o", old, "--k", 2])
    assert result.exit_code == 0, result.output
    assert "--k is deprecated" in result.stderr
    assert "use --n-features" in result.stderr
    pd.testing.assert_frame_equal(pd.read_csv(old), pd.read_csv(new))
    result = run([*args, "-o", tmp_path / "both.csv", "--k", 2, "--n-features", 2])
    assert result.exit_code != 0
    assert "--n-features only" in result.output


@pytest.mark.parametrize(
    ("undeclared", "message"),
    [
        ("colour=red,green,blue", "the domains of 'colour'"),
        ("age=20:80", "the domains of 'age'"),
        ("yes,no", "the labels of 'label'"),
    ],
)
def test_undeclared_domains_are_refused(table_csv, tmp_path, undeclared, message):
    path, _ = table_csv
    declared = [*zip(DECLARED[::2], DECLARED[1::2], strict=True)]
    declared.append(("--bounds", "age=20:80"))
    # Everything declared but one domain: the release is refused before any ε.
    kept = [arg for pair in declared if pair[1] != undeclared for arg in pair]
    assert len(kept) == 2 * len(declared) - 2
    out = tmp_path / "syn.csv"
    args = [path, "-o", out, "--target", "label", "-e", 1, "--seed", 2, *kept]
    result = run(args)
    assert result.exit_code == 1, result.output
    assert f"{message} would be taken from the data" in result.output
    assert not out.exists()
    result = run([*args, ALLOW])
    assert result.exit_code == 0, result.output
    assert f"OUT shows {message}" in result.stderr


def test_a_name_held_by_one_record_is_refused_unless_allowed(tmp_path):
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame(
        {
            "name": [f"Person{i:03d}" for i in range(n)],
            "colour": rng.choice(["red", "blue"], n),
            "label": rng.choice(["yes", "no"], n),
        }
    )
    path, out = tmp_path / "in.csv", tmp_path / "syn.csv"
    frame.to_csv(path, index=False)
    args = [path, "-o", out, "--target", "label", "-e", 1, "--seed", 2]
    args += ["--domain", "colour=red,blue", "--classes", "yes,no"]
    result = run(args)
    assert result.exit_code == 1
    assert "the domains of 'name' would be taken from the data" in result.output
    assert not out.exists()
    result = run([*args, "--domain", "name=" + ",".join(frame["name"])])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr


@pytest.mark.parametrize("seed", range(4))
def test_a_table_without_missing_values_releases_none(table_csv, tmp_path, seed):
    # Noisy cells of a category no record holds can pass the threshold: had the
    # columns a category for missing values, some would come back as empty cells.
    path, frame = table_csv
    assert not frame.isna().any().any()
    out = tmp_path / "syn.csv"
    args = [path, "-o", out, "--target", "label", "-e", 0.5, "--n-features", 4]
    args += ["--gamma", 0.9, "--bounds", "age=20:80", "--seed", seed, *DECLARED]
    result = run(args)
    assert result.exit_code == 0, result.output
    synthetic = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert len(synthetic) > 0
    assert not synthetic.isna().any().any()


def test_missing_values_only_where_the_input_or_missing_allows_them(
    table_csv, tmp_path
):
    path, frame = table_csv
    holed = frame.copy()
    holed.loc[::10, "colour"] = np.nan
    holed_path = tmp_path / "holed.csv"
    holed.to_csv(holed_path, index=False)
    out = tmp_path / "syn.csv"
    args = [holed_path, "-o", out, "--target", "label", "-e", 1e7, "--n-features", 4]
    args += ["--gamma", 0.5, "--bounds", "age=20:80", "--bins", 4, "--seed", 2]
    # colour's domain is declared: a missing value in it is refused, naming the
    # option that declares it may be missing, before anything is released.
    result = run([*args, *DECLARED])
    assert result.exit_code == 2
    assert "the column 'colour' has a missing value at row 0" in result.output
    assert "--missing colour" in result.output
    assert not out.exists()
    # With --missing colour, only colour shows missing values: as many as IN holds
    # (ε is huge, so the synthetic records are the projection of IN).
    result = run([*args, *DECLARED, "--missing", "colour"])
    assert result.exit_code == 0, result.output
    synthetic = pd.read_csv(out)
    assert synthetic["colour"].isna().sum() == holed["colour"].isna().sum()
    assert not synthetic.drop(columns="colour").isna().any().any()
    # --missing on a column without missing values is an explicit declaration: the
    # category exists (empty), and the release still has no missing value.
    out.unlink()
    result = run([path, *args[1:], *DECLARED, "--missing", "size"])
    assert result.exit_code == 0, result.output
    assert not pd.read_csv(out).isna().any().any()


@pytest.fixture
def codes_csv(tmp_path):
    """Integer codes (16 regions, 4 grades), a wide integer column and a label.

    The label is the region's half, so that the region is selected; ``zip`` holds
    three postcodes far apart, ``income`` a quantity.
    """
    rng = np.random.default_rng(16)
    n = 3000
    region = rng.integers(0, 16, n)
    frame = pd.DataFrame(
        {
            "region": region,
            "grade": rng.integers(0, 4, n),
            "zip": rng.choice([10115, 20095, 80331], n),
            "income": rng.integers(1000, 9000, n),
            "label": np.where(region < 8, "low", "high"),
        }
    )
    path = tmp_path / "codes.csv"
    frame.to_csv(path, index=False)
    return path, frame


def encoding_lines(stderr):
    """The lines of stderr that say how each column was encoded, by column."""
    prefix = "column '"
    return {
        line[len(prefix) :].split("'", 1)[0]: line.split(": ", 1)[1]
        for line in stderr.splitlines()
        if line.startswith(prefix)
    }


def test_integer_codes_are_categories_not_bins(codes_csv, tmp_path):
    path, frame = codes_csv
    out = tmp_path / "syn.csv"
    args = [path, "-o", out, "--target", "label", "-e", 1e7, "--n-features", 1]
    args += ["--gamma", 0.5, "--seed", 3, "--classes", "low,high", ALLOW]
    result = run(args)
    assert result.exit_code == 0, result.output
    synthetic = pd.read_csv(out)
    assert list(synthetic.columns) == ["region", "label"]
    # With noise ~0 the synthetic records are the projection: every region code,
    # as it is in IN, and no bin midpoint.
    assert sorted(synthetic["region"].unique()) == list(range(16))
    assert len(synthetic) == len(frame)
    how = encoding_lines(result.stderr)
    assert how == {
        "region": "categorical (integer codes), 16 categories taken from the data",
        "grade": "categorical (integer codes), 4 categories taken from the data",
        "zip": f"numeric, {how['zip'].split()[1]} equal-width bins over bounds "
        "taken from the data",
        "income": f"numeric, {how['income'].split()[1]} equal-width bins over "
        "bounds taken from the data",
    }
    assert "inferred the categories of ['region', 'grade']" in result.stderr


def test_categorical_option_makes_a_numeric_column_categories(codes_csv, tmp_path):
    path, _ = codes_csv
    out = tmp_path / "syn.csv"
    args = [path, "-o", out, "--target", "label", "-e", 1e7, "--n-features", 4]
    args += ["--gamma", 0.5, "--seed", 3, "--classes", "low,high"]
    args += ["--domain", f"region={','.join(map(str, range(16)))}"]
    args += ["--domain", "grade=0,1,2,3", "--bounds", "income=0:10000"]
    # Its categories come from the data: refused where OUT shows them...
    refused = run([*args, "--categorical", "zip"])
    assert refused.exit_code != 0
    assert "the domains of 'zip' would be taken from the data" in refused.output
    # ...allowed with the flag, and each postcode is a category of its own.
    result = run([*args, "--categorical", "zip", ALLOW])
    assert result.exit_code == 0, result.output
    synthetic = pd.read_csv(out)
    assert set(synthetic["zip"]) == {10115, 20095, 80331}
    how = encoding_lines(result.stderr)
    assert how["zip"] == "categorical (--categorical), 3 categories taken from the data"
    assert how["region"] == "categorical, 16 categories declared"
    assert how["income"].endswith("equal-width bins over bounds declared")
    # Declared with --domain, the postcodes are public: nothing is refused.
    declared = run(
        [*args, "--categorical", "zip", "--domain", "zip=10115,20095,80331", "--force"]
    )
    assert declared.exit_code == 0, declared.output
    assert encoding_lines(declared.stderr)["zip"] == (
        "categorical (--categorical), 3 categories declared"
    )


def test_categorical_and_bounds_of_one_column_are_refused(codes_csv, tmp_path):
    path, _ = codes_csv
    args = [path, "-o", tmp_path / "syn.csv", "--target", "label", ALLOW]
    result = run([*args, "--categorical", "income", "--bounds", "income=0:10000"])
    assert result.exit_code == 2
    assert "'income' is declared numeric by --bounds and categorical" in result.output
    unknown = run([*args, "--categorical", "postcode"])
    assert unknown.exit_code == 2
    assert "'postcode' is not a predictor of IN" in unknown.output
