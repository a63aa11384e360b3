"""Declared label sets (``classes=``) of every DP estimator that takes a target y.

A label set read off the data is not private: a class held by one record shows up in
``classes_`` (and in the shape of the release) on one data set and not on its neighbour
without that record. Declared, the set is public knowledge and the same on both; left
out, it is inferred as before, with a PrivacyLeakWarning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privtab import (
    BudgetAccountant,
    DomainError,
    DPLinearSVC,
    DPLogisticRegression,
    ExponentialDPRelease,
    LaplaceDPRelease,
    PrivacyLeakWarning,
    PrivateKD,
    ProjectedHistogram,
)
from privtab._validation import check_labels

INFERRED = "the label set of y was inferred from the data"
N = 300


@dataclass
class Case:
    """An estimator, data whose rare class one record holds, and that record's swap."""

    name: str
    make: Any  # classes -> unfitted estimator
    X: Any
    y: np.ndarray  # the rare class is held by the record at RARE only
    neighbour: np.ndarray  # y with that record given a common class
    classes: list
    fit_kwargs: dict
    shapes: Any  # fitted estimator -> everything whose shape the label set could set

    def fit(self, y, classes=None):
        return self.make(classes).fit(self.X, y, **self.fit_kwargs)


RARE = 17


def _labels(common, rare):
    y = np.array([common[i % len(common)] for i in range(N)], dtype=object)
    y[RARE] = rare
    neighbour = y.copy()
    neighbour[RARE] = common[0]
    return y, neighbour


def _linear_case(cls):
    X = np.random.default_rng(0).normal(size=(N, 3))
    y, neighbour = _labels(["cat", "dog"], "emu")
    return Case(
        cls.__name__,
        lambda classes: cls(1.0, data_norm=5.0, random_state=0, classes=classes),
        X,
        y,
        neighbour,
        ["cat", "dog", "emu"],
        {},
        lambda m: (
            m.classes_.tolist(),
            m.coef_.shape,
            m.intercept_.shape,
            m.noise_scale_.shape,
            [eps for _, eps in m.privacy_ledger_],
        ),
    )


def _private_kd_case():
    X = np.random.default_rng(1).integers(0, 3, size=(N, 4))
    y, neighbour = _labels([0, 1], 2)
    return Case(
        "PrivateKD",
        lambda classes: PrivateKD(
            2, 1.0, random_state=0, accountant=BudgetAccountant(), classes=classes
        ),
        X,
        y.astype(np.int64),
        neighbour.astype(np.int64),
        [0, 1, 2],
        {"cardinalities": [3] * 4},
        lambda m: (m.classes_.tolist(), m.selection_order_.shape, m.support_.shape),
    )


def _projected_case():
    X = np.random.default_rng(2).integers(0, 3, size=(N, 4))
    y, neighbour = _labels(["no", "yes"], "maybe")
    return Case(
        "ProjectedHistogram",
        # k and gamma estimated: they depend on the number of classes too.
        lambda classes: ProjectedHistogram(
            1.0, random_state=0, accountant=BudgetAccountant(), classes=classes
        ),
        X,
        y,
        neighbour,
        ["no", "yes", "maybe"],
        {"cardinalities": [3] * 4},
        lambda m: (
            m.classes_.tolist(),
            m.histogram_.cardinalities,
            m.n_features_,
            m.gamma_,
        ),
    )


def _release_case(cls):
    # Binary releases: each class keeps at least the declared min_class_size = 1
    # records, so a class cannot vanish; here the rarer class loses one of its two
    # records.
    B = np.random.default_rng(3).integers(0, 2, size=(N, 5))
    y = np.zeros(N, dtype=np.int64)
    y[[RARE, RARE + 1]] = 1
    neighbour = y.copy()
    neighbour[RARE] = 0
    return Case(
        cls.__name__,
        lambda classes: cls(
            1.0,
            2,
            random_state=0,
            accountant=BudgetAccountant(),
            classes=classes,
            min_class_size=1,
        ),
        B,
        y,
        neighbour,
        [0, 1],
        {},
        lambda m: (
            m.classes_.tolist(),
            m.noisy_counts_.shape,
            m.synthetic_X_.shape[1],
            m.support_.shape,
        ),
    )


CASES = [
    _linear_case(DPLogisticRegression),
    _linear_case(DPLinearSVC),
    _private_kd_case(),
    _projected_case(),
    _release_case(LaplaceDPRelease),
    _release_case(ExponentialDPRelease),
]
MULTICLASS = CASES[:4]
ids = [case.name for case in CASES]


# (a) Neighbours release the same label domain ---------------------------------------
@pytest.mark.parametrize("case", CASES, ids=ids)
def test_neighbours_release_the_same_label_domain(case):
    fitted = case.fit(case.y, case.classes)
    twin = case.fit(case.neighbour, case.classes)
    assert fitted.classes_.tolist() == sorted(case.classes)
    assert case.shapes(fitted) == case.shapes(twin)


@pytest.mark.parametrize("case", MULTICLASS, ids=ids[:4])
def test_inferred_label_sets_differ_on_neighbours(case):
    # What the declared set prevents: the record's class is visible in classes_.
    with pytest.warns(PrivacyLeakWarning, match=INFERRED):
        fitted = case.fit(case.y)
    with pytest.warns(PrivacyLeakWarning, match=INFERRED):
        twin = case.fit(case.neighbour)
    assert case.y[RARE] in fitted.classes_.tolist()
    assert case.y[RARE] not in twin.classes_.tolist()


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_declaring_the_labels_present_changes_nothing_but_the_warning(case):
    declared = case.fit(case.y, case.classes[::-1])
    with pytest.warns(PrivacyLeakWarning, match=INFERRED):
        inferred = case.fit(case.y)
    assert case.shapes(declared) == case.shapes(inferred)
    for name, value in vars(declared).items():
        if isinstance(value, np.ndarray) and name.endswith("_"):
            np.testing.assert_array_equal(value, getattr(inferred, name), err_msg=name)


def test_linear_models_fit_a_declared_class_that_no_record_holds():
    case = CASES[0]
    model = case.fit(case.neighbour, ["cat", "dog", "emu", "fox"])
    assert model.coef_.shape == (4, 3)
    assert len(model.privacy_ledger_) == 4
    assert sum(eps for _, eps in model.privacy_ledger_) == 1.0
    assert model.predict_proba(case.X).shape == (N, 4)
    # Two declared classes, one held by nobody: a binary model all of whose signs
    # are -1.
    binary = DPLinearSVC(1e9, data_norm=5.0, random_state=0, classes=["cat", "dog"])
    binary.fit(case.X, np.full(N, "cat"))
    assert binary.coef_.shape == (1, 3)
    assert set(binary.predict(case.X)) == {"cat"}


def test_projected_histogram_keeps_cells_for_a_declared_absent_class():
    case = CASES[3]
    classes = ["no", "yes", "maybe", "never"]
    model = ProjectedHistogram(
        1.0, n_features=2, gamma=0.5, random_state=0, classes=classes
    ).fit(case.X, case.neighbour, cardinalities=[3] * 4)
    assert model.histogram_.cardinalities[-1] == 4
    assert model.classes_.tolist() == ["maybe", "never", "no", "yes"]
    assert set(model.synthetic()[1]) <= set(classes)


# (b) Inference warns ------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=ids)
def test_inferred_label_set_warns(case):
    with pytest.warns(PrivacyLeakWarning, match=INFERRED) as record:
        model = case.fit(case.y)
    assert any(case.name in str(w.message) for w in record)
    assert any("classes=" in str(w.message) for w in record)
    # The warning points at the caller's fit, not inside privtab.
    assert {w.filename for w in record} == {__file__}
    assert model.classes_.tolist() == sorted(set(case.y.tolist()))


# (c) A label outside the declared set -------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=ids)
def test_label_outside_the_declared_set_raises(case):
    y = case.y.copy().astype(object)
    y[5] = "zebra"
    with pytest.raises(
        ValueError, match=r"y has the label 'zebra' at row 5, which is not among the"
    ):
        case.fit(y, case.classes)
    with pytest.raises(DomainError):
        case.fit(y, case.classes)


# (d) Invalid declared sets ------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=ids)
@pytest.mark.parametrize(
    ("classes", "error", "match"),
    [
        ([], ValueError, "classes must be non-empty"),
        (["a", "b", "a"], ValueError, r"classes must not repeat a label.*\['a'\]"),
        ("ab", TypeError, "classes must be an array-like of labels, got str"),
        (3, TypeError, "classes must be an array-like of labels, got int"),
        ([[0, 1]], ValueError, "classes must be 1-dimensional"),
        ([0, np.nan], ValueError, "classes must contain only finite labels"),
        (["a", None], ValueError, "classes must not contain missing labels"),
        (["a", 1], TypeError, "classes must hold labels of one sortable type"),
    ],
)
def test_invalid_declared_sets_raise(case, classes, error, match):
    with pytest.raises(error, match=match):
        case.fit(case.y, classes)


@pytest.mark.parametrize(
    ("case", "classes", "match"),
    [
        (CASES[0], ["cat"], "classes must hold at least 2 labels for DPLogistic"),
        (CASES[1], ["cat"], "classes must hold at least 2 labels for DPLinearSVC"),
        (CASES[3], ["no"], "classes must hold at least 2 labels for ProjectedHist"),
        (CASES[4], [0, 1, 2], "classes must hold exactly 2 labels for LaplaceDP"),
        (CASES[5], [1], "classes must hold exactly 2 labels for ExponentialDP"),
    ],
    ids=lambda v: getattr(v, "name", None),
)
def test_declared_sets_of_the_wrong_size_raise(case, classes, match):
    with pytest.raises(ValueError, match=match):
        case.fit(case.y, classes)


def test_private_kd_accepts_one_declared_class():
    case = CASES[2]
    model = case.fit(np.zeros(N, dtype=np.int64), [0])
    assert model.classes_.tolist() == [0]


@pytest.mark.parametrize("cls", [LaplaceDPRelease, ExponentialDPRelease])
def test_binary_releases_need_both_declared_classes_present(cls):
    B = np.random.default_rng(4).integers(0, 2, size=(50, 3))
    model = cls(1.0, 1, random_state=0, accountant=BudgetAccountant(), classes=[0, 1])
    with pytest.raises(ValueError, match="no record has the class 1"):
        model.fit(B, np.zeros(50, dtype=np.int64))


def test_budget_is_untouched_when_the_labels_are_rejected():
    acc = BudgetAccountant(1.0)
    model = DPLogisticRegression(
        0.5, data_norm=5.0, accountant=acc, classes=["cat", "dog"]
    )
    with pytest.raises(ValueError, match="'emu'"):
        model.fit(CASES[0].X, CASES[0].y)
    assert acc.spent == 0


def test_classes_is_a_parameter_and_never_overwritten():
    for case in CASES:
        model = case.make(tuple(case.classes))
        assert model.get_params()["classes"] == tuple(case.classes)
        model.fit(case.X, case.y, **case.fit_kwargs)
        assert model.classes == tuple(case.classes)


# The shared helper --------------------------------------------------------------------
@pytest.mark.parametrize(
    "y",
    [
        np.array([3, -2, 3, 7, -2], dtype=np.int8),
        np.array([3, 1, 3, 2**40, 1]),
        np.array([2**63 + 3, 2**63 + 1], dtype=np.uint64),
        np.array([True, False, True]),
        np.array([1.0, 3.0, 1.0]),
        np.array(["b", "a", "b"]),
        np.array(["b", "a", "b"], dtype=object),
    ],
)
def test_inferred_labels_are_numpy_unique(y):
    classes, codes = check_labels(y, None, n_rows=len(y), warn=False)
    expected, inverse = np.unique(y, return_inverse=True)
    np.testing.assert_array_equal(classes, expected)
    assert classes.dtype == expected.dtype
    np.testing.assert_array_equal(codes, inverse)
    assert codes.dtype == np.uint32


def test_declared_labels_are_sorted_and_coded():
    classes, codes = check_labels(["b", "c", "b"], ("c", "a", "b"), n_rows=3)
    assert classes.tolist() == ["a", "b", "c"]
    assert codes.tolist() == [1, 2, 1]
    classes, codes = check_labels([1.0, 0.0], {0, 1}, n_rows=2)
    assert classes.tolist() == [0, 1]
    assert codes.tolist() == [1, 0]


@settings(max_examples=200, deadline=None)
@given(
    dtype=st.sampled_from(
        ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
    ),
    low=st.integers(-300, 300),
    k=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_gap_free_integer_label_sets_code_labels_as_a_lookup_would(dtype, low, k, seed):
    info = np.iinfo(dtype)
    declared = np.arange(low, low + k)
    rng = np.random.default_rng(seed)
    values = [int(v) for v in rng.integers(low, low + k, 50)]
    for v in (low - 1, low + k, int(info.min), int(info.max)):
        if rng.random() < 0.1 and info.min <= v <= info.max:
            values.insert(int(rng.integers(0, len(values))), v)
    y = np.array([v for v in values if info.min <= v <= info.max], dtype=dtype)
    position = {int(v): i for i, v in enumerate(declared)}
    found = [int(v) in position for v in y]
    if all(found):
        classes, codes = check_labels(y, declared, n_rows=len(y))
        np.testing.assert_array_equal(classes, declared)
        assert codes.tolist() == [position[int(v)] for v in y]
        assert codes.dtype == np.uint32
    else:
        row = found.index(False)
        with pytest.raises(DomainError, match=f"at row {row},"):
            check_labels(y, declared, n_rows=len(y))


@pytest.mark.parametrize(
    "y", [pd.Series(["x", "y"]), pl.Series(["x", "y"]), pd.Categorical(["x", "y"])]
)
def test_series_labels(y):
    classes, codes = check_labels(y, ["y", "x", "z"], n_rows=2)
    assert classes.tolist() == ["x", "y", "z"]
    assert codes.tolist() == [0, 1]


def test_a_long_declared_set_is_cut_short_in_messages():
    with pytest.raises(
        DomainError,
        match=r"y has the label 99 at row 1, .* \[0, 1, .*, 9, \.\.\.\] \(50 labels\)",
    ):
        check_labels([0, 99], range(50), n_rows=2)


def test_labels_of_another_type_are_outside_the_declared_set():
    with pytest.raises(DomainError, match="y has the label 1 at row 0"):
        check_labels([1, 0], ["0", "1"], n_rows=2)
    with pytest.raises(DomainError, match="y has the label 'a' at row 0"):
        check_labels(np.array(["a", 1], dtype=object), [0, 1], n_rows=2)


@pytest.mark.parametrize(
    ("y", "kwargs", "error", "match"),
    [
        (None, {}, ValueError, "requires y to be passed"),
        ([0, 1, 2], {}, ValueError, r"y has 3 labels, expected 2 \(one per row\)"),
        ([[0, 1]], {}, ValueError, r"y must be 1-dimensional, got shape \(1, 2\)"),
        ([0.5, 1.0], {}, TypeError, r"non-integral floats \(e.g. 0.5\)"),
        ([np.inf, 1.0], {}, ValueError, "only finite labels"),
        ([1j, 2j], {}, TypeError, "y must hold integers or strings, got dtype"),
        (np.array([0, 1], dtype="M8[D]"), {}, TypeError, "got dtype datetime64"),
        ([0, 0], {"min_classes": 2}, ValueError, "at least 2 classes, got 1 class"),
        ([0, 1], {"n_classes": 3}, ValueError, "y must hold exactly 3 classes"),
        ([0, 0], {"n_classes": 2}, ValueError, "exactly two classes, got 1"),
        ([0, 1], {"name": "target"}, None, None),
    ],
)
def test_label_validation(y, kwargs, error, match):
    if error is None:
        check_labels(y, None, n_rows=2, warn=False, **kwargs)
        return
    with pytest.raises(error, match=match):
        check_labels(y, None, n_rows=2, warn=False, **kwargs)


def test_the_warning_names_the_owner_and_the_argument():
    with pytest.warns(PrivacyLeakWarning, match="Owner: the label set of target was"):
        check_labels([0, 1], None, n_rows=2, name="target", owner="Owner")
