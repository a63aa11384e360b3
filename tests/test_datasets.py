"""The bundled Adult data set, checked against an independent parse of the UCI files."""

from __future__ import annotations

import re
from importlib import resources

import numpy as np
import pandas as pd
import pytest

from privtab import TableEncoder
from privtab.datasets import load_adult
from privtab.datasets._make_adult import convert

NAMES = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip


@pytest.fixture(scope="module")
def raw_adult(shared_data):
    """Parse adult.data and adult.test with plain string handling (no privtab code)."""
    rows = []
    for name in ("adult.data", "adult.test"):
        text = (shared_data / "adult" / name).read_text()
        for line in text.splitlines():
            if not line.strip() or line.startswith("|"):
                continue
            fields = [f.strip() for f in line.split(",")]
            fields[-1] = fields[-1].rstrip(".")
            rows.append([None if f == "?" else f for f in fields])
    return rows


@pytest.fixture(scope="module")
def adult():
    return load_adult()


def test_shape_and_class_counts(adult, raw_adult):
    assert len(raw_adult) == 48_842
    assert adult.frame.shape == (48_842, 15)
    assert list(adult.frame.columns) == NAMES
    assert adult.feature_names == NAMES[:-1]
    assert adult.target_name == "income"
    counts = adult.target.value_counts().to_dict()
    assert counts == {"<=50K": 37_155, ">50K": 11_687}
    raw_counts = pd.Series([r[-1] for r in raw_adult]).value_counts().to_dict()
    assert counts == raw_counts


def test_missing_cells_per_column(adult, raw_adult):
    raw_missing = {
        name: sum(r[j] is None for r in raw_adult) for j, name in enumerate(NAMES)
    }
    assert adult.frame.isna().sum().to_dict() == raw_missing
    assert sum(raw_missing.values()) == 4_262 + 2_203  # SOURCES.md: train + test cells
    assert {k for k, v in raw_missing.items() if v} == {
        "workclass",
        "occupation",
        "native-country",
    }


def test_every_cell_matches_the_raw_files(adult, raw_adult):
    frame = adult.frame
    for j, name in enumerate(NAMES):
        raw = [r[j] for r in raw_adult]
        if name in adult.bounds:
            np.testing.assert_array_equal(frame[name].to_numpy(), np.array(raw, int))
        else:
            got = frame[name].astype(object).where(frame[name].notna(), None).tolist()
            assert got == raw, name


def test_domains_are_the_lists_of_adult_names(adult, shared_data):
    text = (shared_data / "adult" / "adult.names").read_text()
    declared = {}
    for line in text.splitlines():
        match = re.match(r"^([a-z-]+): (.*)\.$", line)
        if match and match.group(2) != "continuous":
            declared[match.group(1)] = [v.strip() for v in match.group(2).split(",")]
    declared["income"] = ["<=50K", ">50K"]
    assert adult.domains == declared
    numeric = [n for n in NAMES if n not in declared]
    assert sorted(adult.bounds) == sorted(numeric)


def test_bounds_contain_the_data(adult):
    for name, (lo, hi) in adult.bounds.items():
        assert lo < hi
        assert adult.frame[name].min() >= lo
        assert adult.frame[name].max() <= hi


def test_encoding_with_declared_domains_warns_nothing(adult):
    # filterwarnings=error fails this test on any PrivacyLeakWarning.
    enc = TableEncoder(
        domains=adult.domains, bounds=adult.bounds, bins=10, missing="category"
    )
    table = enc.fit_transform(adult.frame)
    assert table.shape == (48_842, 15)
    income = table.column("income")
    assert np.bincount(income, minlength=3).tolist() == [37_155, 11_687, 0]
    edu = table.codes[:, table.column_index("education")]
    expected = pd.Categorical(
        adult.frame["education"], categories=adult.domains["education"]
    ).codes
    np.testing.assert_array_equal(edu, expected)


def test_numpy_and_x_y_forms(adult):
    X, y = load_adult(as_frame=False, return_X_y=True)
    assert X.shape == (48_842, 14)
    assert X.dtype == object
    assert y.shape == (48_842,)
    assert set(y) == {"<=50K", ">50K"}
    assert sum(v is None for v in X.ravel()) == 6_465
    assert X[0, 0] == 39
    assert X[0, 1] == "State-gov"
    bunch = load_adult(as_frame=False)
    assert bunch.frame is None
    assert bunch.data.shape == (48_842, 14)
    data, target = load_adult(return_X_y=True)
    assert isinstance(data, pd.DataFrame)
    assert isinstance(target, pd.Series)
    assert "CC BY 4.0" in adult.DESCR
    assert "10.24432/C5XW20" in adult.DESCR


def test_returned_domains_are_copies(adult):
    adult.domains["sex"].append("x")
    adult.bounds["age"] = (0, 1)
    fresh = load_adult()
    assert fresh.domains["sex"] == ["Female", "Male"]
    assert fresh.bounds["age"] == (17.0, 90.0)


@pytest.mark.parametrize("param", ["as_frame", "return_X_y"])
def test_parameter_types(param):
    with pytest.raises(TypeError, match=rf"{param} must be a bool, got int"):
        load_adult(**{param: 1})


def test_conversion_script_reproduces_the_bundled_file(shared_data, tmp_path):
    out = tmp_path / "adult.csv.gz"
    assert convert(shared_data / "adult", out) == 48_842
    bundled = resources.files("privtab.datasets").joinpath("data", "adult.csv.gz")
    assert out.read_bytes() == bundled.read_bytes()


def test_licence_file_is_bundled():
    text = (
        resources.files("privtab.datasets")
        .joinpath("data", "ADULT_LICENSE.txt")
        .read_text(encoding="utf-8")
    )
    assert "CC BY 4.0" in text
    assert "Becker" in text
    assert "Kohavi" in text
    assert "10.24432/C5XW20" in text


# --- Adult binarised for paper 004 -----------------------------------------------


def test_adult_binary_features_follow_their_rules(adult):
    from privtab.datasets import load_adult_binary

    binary = load_adult_binary()
    data, raw = binary.data, adult.frame
    assert data.shape == (48_842, 19)
    assert list(data.columns) == binary.feature_names
    assert set(binary.description) == set(binary.feature_names)
    assert all(dtype == np.uint8 for dtype in data.dtypes)
    assert set(np.unique(data.to_numpy())) == {0, 1}
    for group, features in binary.groups.items():
        if len(features) > 1:
            assert (data[features].sum(axis=1) == 1).all(), group
    assert sorted(f for fs in binary.groups.values() for f in fs) == sorted(
        binary.feature_names
    )
    age, hours, edu = raw["age"], raw["hours-per-week"], raw["education-num"]
    expected = {
        "age_17_25": age <= 25,
        "age_26_35": (age > 25) & (age <= 35),
        "age_36_45": (age > 35) & (age <= 45),
        "age_46_55": (age > 45) & (age <= 55),
        "age_56_90": age > 55,
        "sex_male": raw["sex"] == "Male",
        "never_married": raw["marital-status"] == "Never-married",
        "race_white": raw["race"] == "White",
        "education_below_hs": edu < 9,
        "education_hs_to_assoc": (edu >= 9) & (edu < 13),
        "education_bachelors_plus": edu >= 13,
        "hours_part_time": hours < 35,
        "hours_full_time": (hours >= 35) & (hours <= 45),
        "hours_overtime": hours > 45,
        "workclass_private": raw["workclass"] == "Private",
        "workclass_self_employed": raw["workclass"]
        .astype(str)
        .str.startswith("Self-emp"),
        "occupation_white_collar": raw["occupation"].isin(
            [
                "Exec-managerial",
                "Prof-specialty",
                "Tech-support",
                "Sales",
                "Adm-clerical",
            ]
        ),
    }
    for name, mask in expected.items():
        np.testing.assert_array_equal(data[name].to_numpy(), mask.to_numpy(), name)
    np.testing.assert_array_equal(
        binary.target.to_numpy(), (raw["income"] == ">50K").to_numpy()
    )
    assert int(binary.target.sum()) == 11_687
