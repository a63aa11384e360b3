"""Regression tests of the bugs that tests/test_fuzz.py found, one test per finding.

Each was a crash, an unnamed or wrong exception, a silent repair of malformed input,
or an answer that depended on the memory layout; each test calls the public function
in process and checks the error (class and message) or the answer.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import privtab as pt
from privtab.exceptions import DomainError

X_FLOAT = np.random.default_rng(0).normal(size=(12, 3))
Y_BINARY = np.array([0, 1] * 6)
CODES = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])


# Column index lists -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("columns", "error", "match"),
    [
        ("x0", TypeError, "columns must be a sequence of column indices, got str"),
        ([0.5], TypeError, "columns must hold integer column indices"),
        ([2], ValueError, "columns has the column index 2, out of range for 2"),
        ([[0]], ValueError, "columns must be 1-dimensional"),
    ],
)
def test_count_columns_names_bad_columns(columns, error, match):
    # Was: int("x0") failing unnamed, and 0.5 silently truncated to column 0.
    with pytest.raises(error, match=match):
        pt.count_columns(CODES, [2, 2], columns)


def test_correlated_sensitivity_rejects_fractional_features():
    # Was: [0.5] silently truncated to feature 0.
    with pytest.raises(TypeError, match="features must hold integer column indices"):
        pt.correlated_sensitivity(X_FLOAT, [0.5])


# Result containers -----------------------------------------------------------------
def test_sparse_counts_checks_keys():
    # Was: a RuntimeWarning from the NaN -> uint64 cast, then garbage keys.
    with pytest.raises(ValueError, match="keys must contain only finite values"):
        pt.SparseCounts(np.array([1.0, math.nan]), [1, 1])
    with pytest.raises(DomainError, match="keys has the key 9, outside the 4 cells"):
        pt.SparseCounts([1, 9], [1, 1], [2, 2])
    with pytest.raises(ValueError, match="keys must be >= 0"):
        pt.SparseCounts(np.array([-1, 2]), [1, 1])


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"values": np.array([math.nan, 2.0])}, ValueError, "values must contain only"),
        (
            {"values": np.array([2.0, 0.1])},
            ValueError,
            "values must all be > threshold",
        ),
        (
            {"cardinalities": [math.nan, 2]},
            TypeError,
            "cardinalities must hold integers",
        ),
        ({"cardinalities": [2.5, 3]}, TypeError, "cardinalities must hold integers"),
        (
            {"keys": np.array([4, 1], dtype=np.uint64)},
            ValueError,
            "strictly increasing",
        ),
        (
            {"keys": np.array([1, 6], dtype=np.uint64)},
            DomainError,
            "outside the 6 cells",
        ),
        ({"noise": "gauss"}, ValueError, "noise must be one of"),
        ({"epsilon": 0.0}, ValueError, "epsilon must be finite and > 0"),
        ({"threshold": math.nan}, ValueError, "threshold must not be NaN"),
        ({"n_rows": -1}, ValueError, "n_rows must be >= 0"),
    ],
)
def test_sparse_histogram_checks_its_fields(change, error, match):
    fields = {
        "keys": np.array([1, 4], dtype=np.uint64),
        "values": np.array([2.4, 1.7]),
        "cardinalities": [2, 3],
        "threshold": 0.5,
        "epsilon": 1.0,
        "noise": "laplace",
        "n_rows": 5,
    } | change
    keys, values, cards = (
        fields.pop("keys"),
        fields.pop("values"),
        fields.pop("cardinalities"),
    )
    with pytest.raises(error, match=match):
        pt.SparseHistogram(keys, values, cards, **fields)


def test_to_records_names_max_records():
    hist = pt.thresholded_histogram(CODES, [2, 2], 1.0, threshold=-5.0, random_state=0)
    with pytest.raises(MemoryError, match=r"limit of 0 \(max_records\)"):
        hist.to_records(max_records=0)


def test_encoded_table_checks_columns_and_categories():
    with pytest.raises(TypeError, match="categories must be a sequence"):
        pt.EncodedTable(CODES, [2, 2], categories=5)
    with pytest.raises(TypeError, match=r"categories\[1\] must be a sequence"):
        pt.EncodedTable(CODES, [2, 2], categories=[["a", "b"], 7])
    with pytest.raises(TypeError, match="columns must be a sequence of names"):
        pt.EncodedTable(CODES, [2, 2], columns=3)
    table = pt.EncodedTable(CODES, [2, 2])
    # Was: a str taken as the names "x" and "0", failing with a KeyError on "x".
    with pytest.raises(TypeError, match="columns must be a sequence of names, got str"):
        table.select("x0")


def test_itemsets_checks_its_fields():
    with pytest.raises(TypeError, match="complete must be a bool, got str"):
        pt.Itemsets([np.array([0])], complete="yes", supports=[2])
    with pytest.raises(TypeError, match="sets must be an iterable"):
        pt.Itemsets(3, complete=True, supports=[])
    with pytest.raises(ValueError, match=r"supports must hold one value per set \(1\)"):
        pt.Itemsets([np.array([0])], complete=True, supports=[2, 3])


# Real-valued tables ------------------------------------------------------------------
@pytest.mark.parametrize(
    "function",
    [
        pt.pearson_matrix,
        pt.correlated_sensitivity,
        lambda X: pt.filter_correlated_features(X, 0.9),
        lambda X: pt.correlated_degree_matrix(X, 0.9),
        lambda X: pt.fscore(X, Y_BINARY),
    ],
)
def test_dpfsdr_statistics_name_x_and_reject_strings(function):
    with_nan = X_FLOAT.copy()
    with_nan[0, 0] = math.nan
    with pytest.raises(ValueError, match=r"X must contain only finite values.*NaN"):
        function(with_nan)
    # Was: numeric strings silently converted to floats.
    with pytest.raises(TypeError, match="X must be numeric"):
        function(X_FLOAT.astype(str))
    with pytest.raises(TypeError, match="X must be real"):
        function(X_FLOAT.astype(complex))


ESTIMATORS = [
    lambda: pt.DPLinearSVC(1.0, data_norm=5.0, random_state=0, classes=[0, 1]),
    lambda: pt.DPLogisticRegression(1.0, data_norm=5.0, random_state=0, classes=[0, 1]),
    lambda: pt.DPFSDR(1.0, 1.0, data_norm=5.0, random_state=0, classes=[0, 1]),
    lambda: pt.DPFS(1.0, 1.0, data_norm=5.0, random_state=0, classes=[0, 1]),
]


@pytest.mark.filterwarnings("ignore:.*the released model is noise")
@pytest.mark.parametrize("make", ESTIMATORS)
def test_float_estimators_name_x_and_y(make):
    # Was: strings converted silently by scikit-learn; complex data, 1-D X and a
    # length mismatch reported without naming the argument.
    with pytest.raises(TypeError, match="X must be numeric, got dtype <U"):
        make().fit(X_FLOAT.astype(str), Y_BINARY)
    objects = X_FLOAT.astype(object)
    objects[1, 1] = "1.5"
    with pytest.raises(TypeError, match=r"X must be numeric, got the string '1\.5'"):
        make().fit(objects, Y_BINARY)
    with pytest.raises(ValueError, match="Complex data not supported: X"):
        make().fit(X_FLOAT.astype(complex), Y_BINARY)
    with pytest.raises(ValueError, match="X must be 2-dimensional"):
        make().fit(X_FLOAT[:, 0], Y_BINARY)
    with pytest.raises(ValueError, match="y has 11 labels, expected 12"):
        make().fit(X_FLOAT, Y_BINARY[:-1])
    with pytest.raises(ValueError, match="Complex data not supported: y"):
        make().fit(X_FLOAT, Y_BINARY.astype(complex))
    # Object arrays of numbers stay accepted (scikit-learn's check_dtype_object).
    assert make().fit(X_FLOAT.astype(object), Y_BINARY) is not None


@pytest.mark.parametrize("make", ESTIMATORS[:2])
def test_linear_models_name_y_of_unknown_type(make):
    y = Y_BINARY.astype(object)
    y[-1] = None
    with pytest.raises(ValueError, match="y: Unknown label type"):
        make().fit(X_FLOAT, y)


@pytest.mark.parametrize("Selector", [pt.DPFSDR, pt.DPFS])
def test_dpfsdr_checks_parameters_that_nothing_spends(Selector):
    # Was: accepted without a look when epsilon_selection = epsilon_training = None.
    with pytest.raises(TypeError, match="accountant must be"):
        Selector(None, None, data_norm=5.0, accountant="acc").fit(X_FLOAT, Y_BINARY)
    with pytest.raises(ValueError, match="random_state must be a non-negative int"):
        Selector(None, None, data_norm=5.0, random_state=-1).fit(X_FLOAT, Y_BINARY)


@pytest.mark.filterwarnings("ignore:.*the released model is noise")
@pytest.mark.parametrize(("Selector", "most"), [(pt.DPFSDR, 4), (pt.DPFS, 3)])
def test_dpfsdr_bounds_max_refits(Selector, most):
    # Was: a list of max_refits budgets built first (MemoryError for 2**31).
    Selector(
        1.0, 1.0, data_norm=5.0, max_refits=most, random_state=0, classes=[0, 1]
    ).fit(X_FLOAT, Y_BINARY)
    with pytest.raises(ValueError, match=f"max_refits must be <= {most}, the most"):
        Selector(1.0, 1.0, data_norm=5.0, max_refits=2**31).fit(X_FLOAT, Y_BINARY)


# Microaggregation -------------------------------------------------------------------
def test_sse_names_x_masked_and_ignores_the_layout():
    masked = X_FLOAT + 0.25
    bad = masked.copy()
    bad[2, 1] = math.nan
    with pytest.raises(ValueError, match="X_masked must contain only finite values"):
        pt.sse(X_FLOAT, bad)
    # Was: a Fortran-ordered X summed in another order, so the last bits differed.
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 10, (101, 7))
    noisy = X + rng.normal(size=X.shape)
    for function in (pt.sse, pt.mean_sse):
        assert function(np.asfortranarray(X), noisy) == function(X, noisy)
        assert function(X, np.asfortranarray(noisy)) == function(X, noisy)


@pytest.mark.parametrize(
    "call",
    [
        lambda x, k: pt.individual_ranking_clusters(x, k),
        lambda x, k: pt.microaggregate(x, k, mechanism="dp", bounds=(0, 10)),
    ],
)
def test_microaggregation_names_empty_x_and_huge_k(call):
    with pytest.raises(ValueError, match=r"x must be non-empty, got shape \(0,\)"):
        call(np.zeros(0), 1)
    # Was: OverflowError converting k to a Rust integer.
    with pytest.raises(
        ValueError, match=r"k must be <= the number of values of x \(3\)"
    ):
        call(np.array([1.0, 2.0, 3.0]), 2**64)


def test_masker_names_bounds_that_are_not_pairs():
    masker = pt.MicroaggregationMasker(3, 1.0, bounds=5, random_state=0)
    with pytest.raises(TypeError, match="bounds must be a"):
        masker.fit_transform(np.abs(X_FLOAT))


# Categorical codes and labels ----------------------------------------------------------
def test_dilca_names_cardinalities_above_its_limit():
    with pytest.raises(ValueError, match=r"cardinalities\[0\] = 4294967295 is above"):
        pt.DILCA().fit(CODES, cardinalities=[2**32 - 1, 2])


def test_declared_classes_name_unhashable_labels():
    # Was: TypeError "unhashable type: 'dict'" from a dictionary lookup.
    y = np.array([{"a": 1}] * len(CODES), dtype=object)
    with pytest.raises(TypeError, match="y must hold integers or strings"):
        pt.PrivateKD(1, 1.0, classes=[0, 1], random_state=0).fit(
            CODES, y, cardinalities=[2, 2]
        )


def test_pandas_categorical_codes_are_refused_with_a_hint():
    frame = pd.DataFrame(CODES, columns=["a", "b"]).astype("category")
    with pytest.raises(
        TypeError, match=r"codes has pandas categorical columns \['a', "
    ):
        pt.mixed_radix_encode(frame, [2, 2])


def test_contingency_table_checks_sparse_and_names_a_huge_table():
    with pytest.raises(TypeError, match="sparse must be a bool, got str"):
        pt.contingency_table([0, 1], [1, 0], sparse="yes")
    with pytest.raises(MemoryError, match=r"kx × ky = 4294967295 × 4294967295"):
        pt.contingency_table([0, 1], [1, 0], 2**32 - 1, 2**32 - 1)


def test_exponential_mechanism_names_a_huge_size():
    with pytest.raises(MemoryError, match="size = 18446744073709551616 draws"):
        pt.exponential_mechanism(
            [1.0, 2.0], 1.0, 1.0, size=2**64, replace=True, random_state=0
        )


def test_mining_takes_limits_beyond_64_bits():
    # Was: OverflowError converting max_sets or k to a Rust integer.
    B = np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1]])
    everything = pt.maximal_itemsets(B, 1)
    unlimited = pt.maximal_itemsets(B, 1, max_sets=2**64)
    assert [s.tolist() for s in unlimited] == [s.tolist() for s in everything]
    assert unlimited.complete
    # No feature set, not even the empty one, is k-AC for k above the 3 rows.
    assert list(pt.maximal_kac_sets(B, 2**64)) == list(pt.maximal_kac_sets(B, 4)) == []


def test_accountant_names_a_str_delta():
    with pytest.raises(TypeError, match="delta must be a real number, got str"):
        pt.BudgetAccountant(1.0).check(0.1, delta="0")


def test_encoded_table_refuses_to_list_huge_default_categories():
    # Was: numpy's MemoryError for np.arange(2**32 - 1) (32 GiB), naming nothing.
    with pytest.raises(
        ValueError, match=r"cardinalities\[0\] = 4294967295 is too large"
    ):
        pt.EncodedTable(CODES, [2**32 - 1, 2])
    assert pt.EncodedTable(CODES, [2**20, 2]).categories[0].shape == (2**20,)
