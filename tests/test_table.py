"""TableEncoder, EncodedTable and Lei's bandwidth."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import sparse
from sklearn.base import clone

import privtab as pt
from privtab import (
    DomainError,
    EncodedTable,
    PrivacyLeakWarning,
    TableEncoder,
    lei_bandwidth,
    lei_bins,
)


def reference_bins(x, lo, hi, bins):
    """Equal-width binning of declared bounds, written independently of privtab."""
    codes = np.floor((np.asarray(x, dtype=float) - lo) / (hi - lo) * bins)
    return np.minimum(codes, bins - 1).astype(np.int64)


# Lei's bandwidth ----------------------------------------------------------------------
@given(st.integers(2, 10**12), st.integers(1, 60))
def test_lei_functions_match_formula(n, d):
    bw = (np.log(n) / n) ** (1.0 / (d + 1))
    assert lei_bandwidth(n, d) == pytest.approx(bw, rel=1e-12)
    assert 0 < lei_bandwidth(n, d) < 1
    assert lei_bins(n, d) == max(1, math.ceil(1 / bw - 0.5))
    assert lei_bins(n, d) >= 1


def test_lei_known_values():
    # (ln 1000 / 1000)^(1/2) = 0.08311...; 1/0.0831 - 0.5 = 11.53 -> 12
    assert lei_bandwidth(1000, 1) == pytest.approx(math.sqrt(math.log(1000) / 1000))
    assert lei_bins(1000, 1) == 12


@pytest.mark.parametrize("func", [lei_bandwidth, lei_bins])
def test_lei_validation(func):
    with pytest.raises(ValueError, match=r"n must be >= 2, got 1"):
        func(1, 1)
    with pytest.raises(ValueError, match=r"d must be >= 1, got 0"):
        func(10, 0)
    with pytest.raises(TypeError, match=r"n must be an int, got float"):
        func(10.0, 1)
    with pytest.raises(TypeError, match=r"d must be an int, got bool"):
        func(10, True)


# Basic encoding -----------------------------------------------------------------------
def adult_like_frame():
    return pd.DataFrame(
        {
            "colour": ["red", "blue", "red", "green"],
            "age": [20.0, 64.0, 35.0, 100.0],
            "member": [True, False, True, True],
        }
    )


DOMAINS = {"colour": ["red", "green", "blue"]}
BOUNDS = {"age": (0, 100)}


def test_declared_domains_encode_without_warning():
    # filterwarnings=error turns any PrivacyLeakWarning into a failure here.
    enc = TableEncoder(domains=DOMAINS, bounds=BOUNDS, bins=4)
    table = enc.fit_transform(adult_like_frame())
    assert table.codes.dtype == np.uint32
    assert table.codes.flags.f_contiguous
    assert table.codes.tolist() == [[0, 0, 1], [2, 2, 0], [0, 1, 1], [1, 3, 1]]
    assert table.cardinalities.dtype == np.int64
    assert table.cardinalities.tolist() == [3, 4, 2]
    assert table.columns == ["colour", "age", "member"]
    assert table.n_rows == 4
    assert list(table.categories[0]) == ["red", "green", "blue"]
    assert list(table.categories[1]) == [12.5, 37.5, 62.5, 87.5]
    assert list(table.categories[2]) == [False, True]
    assert enc.kinds_ == ["categorical", "numeric", "categorical"]
    assert enc.bounds_ == {"age": (0.0, 100.0)}
    np.testing.assert_allclose(enc.bin_edges_["age"], [0, 25, 50, 75, 100])
    assert enc.inferred_ == []
    assert enc.get_feature_names_out().tolist() == ["colour", "age", "member"]


def test_inferred_categories_and_bounds_warn_once_naming_columns():
    X = adult_like_frame()
    with pytest.warns(PrivacyLeakWarning) as record:
        enc = TableEncoder(bins=3).fit(X)
    assert len(record) == 1
    message = str(record[0].message)
    assert "'colour'" in message
    assert "'age'" in message
    assert "'member'" not in message  # booleans have a public domain
    assert enc.inferred_ == ["colour", "age"]
    assert list(enc.categories_[0]) == ["blue", "green", "red"]
    assert enc.bounds_["age"] == (20.0, 100.0)


def test_inferred_bounds_only_warn():
    with pytest.warns(PrivacyLeakWarning, match=r"bounds of \['x0'\]"):
        TableEncoder(bins=2).fit(np.array([[1.0], [2.0]]))


def test_fit_does_not_modify_parameters_and_clones():
    domains = {"colour": ["red", "green", "blue"]}
    enc = TableEncoder(domains=domains, bounds=BOUNDS, bins=4)
    enc.fit(adult_like_frame())
    assert enc.domains is domains
    assert enc.bins == 4
    fresh = clone(enc)
    assert fresh.get_params()["bins"] == 4
    assert not hasattr(fresh, "categories_")
    restored = pickle.loads(pickle.dumps(enc))
    np.testing.assert_array_equal(
        restored.transform(adult_like_frame()).codes,
        enc.transform(adult_like_frame()).codes,
    )


@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 40), st.integers(1, 4)),
        elements=st.floats(-5, 7, allow_nan=False),
    ),
    st.integers(1, 50),
)
def test_numeric_binning_matches_numpy_reference(X, bins):
    lo, hi = -5.0, 7.0
    bounds = {j: (lo, hi) for j in range(X.shape[1])}
    table = TableEncoder(bounds=bounds, bins=bins).fit_transform(X)
    for j in range(X.shape[1]):
        np.testing.assert_array_equal(
            table.codes[:, j], reference_bins(X[:, j], lo, hi, bins)
        )
    assert table.cardinalities.tolist() == [bins] * X.shape[1]


def test_value_at_upper_bound_goes_to_last_bin():
    X = np.array([[0.0], [10.0], [9.999999], [5.0]])
    table = TableEncoder(bounds={0: (0, 10)}, bins=5).fit_transform(X)
    assert table.codes[:, 0].tolist() == [0, 4, 4, 2]


def test_default_bins_follow_lei():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(500, 3))
    enc = TableEncoder(bounds={j: (0, 1) for j in range(3)}).fit(X)
    assert enc.n_bins_ == {f"x{j}": lei_bins(500, 3) for j in range(3)}
    enc = TableEncoder(bounds={j: (0, 1) for j in range(3)}, bins={"x1": 7}).fit(X)
    assert enc.n_bins_["x1"] == 7
    assert enc.n_bins_["x0"] == lei_bins(500, 3)


def test_domain_keys_by_position_for_numpy():
    X = np.array([["a", 1.0], ["b", 2.0]], dtype=object)
    enc = TableEncoder(domains={0: ["b", "a"]}, bounds={"x1": (0, 4)}, bins=2)
    table = enc.fit_transform(X)
    assert table.columns == ["x0", "x1"]
    assert table.codes.tolist() == [[1, 0], [0, 1]]


def test_domains_make_numeric_columns_categorical():
    X = pd.DataFrame({"grade": [3, 1, 2, 3]})
    table = TableEncoder(domains={"grade": [1, 2, 3, 4]}).fit_transform(X)
    assert table.codes[:, 0].tolist() == [2, 0, 1, 2]
    assert table.cardinalities.tolist() == [4]


def test_bounds_make_object_columns_numeric():
    X = np.array([[1], [3], [4]], dtype=object)
    table = TableEncoder(bounds={0: (0, 4)}, bins=2).fit_transform(X)
    assert table.codes[:, 0].tolist() == [0, 1, 1]


# Inputs: numpy, pandas, polars --------------------------------------------------------
def test_polars_input_and_round_trip():
    X = pl.DataFrame(
        {
            "colour": ["red", "blue", None],
            "size": pl.Series(["S", "L", "M"], dtype=pl.Enum(["S", "M", "L"])),
            "w": [1.0, 2.5, 4.0],
        }
    )
    enc = TableEncoder(
        domains={"colour": ["red", "blue"]},
        bounds={"w": (0, 4)},
        bins=4,
        missing="category",
    )
    table = enc.fit_transform(X)  # the Enum's categories are declared: no warning
    assert table.codes.tolist() == [[0, 0, 1], [1, 2, 2], [2, 1, 3]]
    assert table.cardinalities.tolist() == [3, 4, 5]
    out = enc.inverse_transform(table)
    assert isinstance(out, pl.DataFrame)
    assert out.columns == ["colour", "size", "w"]
    assert out["colour"].to_list() == ["red", "blue", None]
    assert out["size"].to_list() == ["S", "L", "M"]
    assert out["w"].to_list() == [1.5, 2.5, 3.5]


def test_a_polars_lazy_frame_is_refused_with_how_to_collect_it():
    frame = pl.DataFrame({"a": [0, 1, 2, 1], "b": [1, 0, 1, 1]})
    y = pl.Series("y", [0, 1, 0, 1])
    accountant = pt.BudgetAccountant()

    def selector():
        return pt.PrivateKD(1, 1.0, classes=[0, 1], accountant=accountant)

    refused = {
        "X": [
            lambda: pt.TableEncoder(domains={"a": [0, 1, 2], "b": [0, 1]}).fit(
                frame.lazy()
            ),
            lambda: selector().fit(frame.lazy(), y, cardinalities=[3, 2]),
            lambda: pt.DILCA().fit(frame.lazy(), cardinalities=[3, 2]),
        ],
        "codes": [lambda: pt.count_columns(frame.lazy(), [3, 2])],
        "y": [lambda: selector().fit(frame, y.to_frame().lazy(), cardinalities=[3, 2])],
    }
    for name, calls in refused.items():
        for call in calls:
            with pytest.raises(
                TypeError,
                match=rf"{name} is a polars LazyFrame.*"
                rf"{name}\.collect\(\)",
            ):
                call()
    assert accountant.spent == 0
    assert selector().fit(frame, y, cardinalities=[3, 2]).selection_order_.shape == (1,)


def test_polars_null_and_nan_are_missing():
    X = pl.DataFrame({"w": [1.0, None, float("nan")]})
    with pytest.raises(ValueError, match=r"column 'w' has a missing value at row 1"):
        TableEncoder(bounds={"w": (0, 4)}, bins=2).fit_transform(X)
    table = TableEncoder(
        bounds={"w": (0, 4)}, bins=2, missing="category"
    ).fit_transform(X)
    assert table.codes[:, 0].tolist() == [0, 2, 2]
    enc = TableEncoder(bounds={"w": (0, 4)}, bins=2, missing="category").fit(X)
    assert enc.inverse_transform(table)["w"].to_list() == [1.0, None, None]


def test_inverse_of_numeric_numpy_is_object_midpoints():
    X = np.array([[0.0, 9.0], [10.0, 1.0]])
    enc = TableEncoder(bounds={0: (0, 10), 1: (0, 10)}, bins=2)
    back = enc.inverse_transform(enc.fit_transform(X))
    assert back.dtype == object
    assert back.tolist() == [[2.5, 7.5], [7.5, 2.5]]


def test_pandas_category_dtype_warns_unless_declared():
    X = pd.DataFrame({"c": pd.Categorical(["b", "a"], categories=["b", "a", "z"])})
    with pytest.warns(PrivacyLeakWarning, match=r"categories of \['c'\]"):
        table = TableEncoder().fit_transform(X)
    assert list(table.categories[0]) == ["b", "a", "z"]
    assert table.codes[:, 0].tolist() == [0, 1]
    table = TableEncoder(domains={"c": ["a", "b"]}).fit_transform(X)
    assert table.codes[:, 0].tolist() == [1, 0]


def test_pandas_nullable_dtypes():
    X = pd.DataFrame(
        {
            "i": pd.array([1, None, 3], dtype="Int64"),
            "b": pd.array([True, None, False], dtype="boolean"),
            "s": pd.array(["x", pd.NA, "y"], dtype="string"),
        }
    )
    enc = TableEncoder(
        domains={"s": ["x", "y"]}, bounds={"i": (0, 4)}, bins=2, missing="category"
    )
    table = enc.fit_transform(X)
    assert table.codes.tolist() == [[0, 1, 0], [2, 2, 2], [1, 0, 1]]


@st.composite
def categorical_frames(draw):
    n = draw(st.integers(1, 30))
    d = draw(st.integers(1, 4))
    alphabet = st.sampled_from(["a", "b", "c", "dd", "é", "1"])
    data = {f"c{j}": draw(st.lists(alphabet, min_size=n, max_size=n)) for j in range(d)}
    return pd.DataFrame(data)


@given(categorical_frames(), st.sampled_from(["numpy", "pandas", "polars"]))
def test_round_trip_of_categorical_columns(frame, kind):
    domains = {c: ["a", "b", "c", "dd", "é", "1"] for c in frame.columns}
    if kind == "numpy":
        X = frame.to_numpy(dtype=object)
        domains = {j: v for j, v in enumerate(domains.values())}
    elif kind == "polars":
        X = pl.from_pandas(frame)
    else:
        X = frame
    enc = TableEncoder(domains=domains)
    table = enc.fit_transform(X)
    # Independent reference: position in the declared list.
    expected = np.vectorize(["a", "b", "c", "dd", "é", "1"].index)(
        frame.to_numpy(dtype=object)
    )
    np.testing.assert_array_equal(table.codes, expected)
    back = enc.inverse_transform(table)
    if kind == "numpy":
        assert isinstance(back, np.ndarray)
        assert back.dtype == object
        np.testing.assert_array_equal(back, X)
    elif kind == "polars":
        assert back.equals(X)
    else:
        assert isinstance(back, pd.DataFrame)
        assert back.astype(object).equals(frame.astype(object))


@given(categorical_frames())
def test_inferred_categories_are_sorted_distinct_values(frame):
    with pytest.warns(PrivacyLeakWarning):
        enc = TableEncoder().fit(frame)
    for j, c in enumerate(frame.columns):
        assert list(enc.categories_[j]) == sorted(set(frame[c]))
    np.testing.assert_array_equal(
        enc.inverse_transform(enc.transform(frame)), frame.to_numpy(dtype=object)
    )


# Missing values -----------------------------------------------------------------------
@pytest.mark.parametrize("missing_value", [None, np.nan, pd.NA])
def test_missing_error_names_column_and_row(missing_value):
    X = pd.DataFrame(
        {"a": ["x", "y", "x"], "b": ["u", "v", missing_value]}, dtype=object
    )
    enc = TableEncoder(domains={"a": ["x", "y"], "b": ["u", "v"]})
    with pytest.raises(ValueError, match=r"column 'b' has a missing value at row 2"):
        enc.fit_transform(X)


def test_missing_numeric_error():
    with pytest.raises(ValueError, match=r"column 'x0' has a missing value at row 1"):
        TableEncoder(bounds={0: (0, 1)}, bins=2).fit_transform(
            np.array([[0.5], [np.nan]])
        )


@pytest.mark.parametrize("declared", [True, False])
def test_nan_and_inf_are_named_in_fit_and_transform(declared):
    kwargs = {"bounds": {0: (0, 1)}} if declared else {}
    enc = TableEncoder(bins=2, **kwargs)
    nan = np.array([[0.5], [np.nan]])
    inf = np.array([[0.5], [-np.inf]])
    nan_match = r"column 'x0' has a missing value at row 1 \(NaN\); pass missing="
    inf_match = r"column 'x0' has an infinite value at row 1 \(-inf\); numeric values"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        if declared:
            # fit learns nothing from a column with declared bounds; transform checks.
            enc.fit(nan)
            enc.fit(inf)
        else:
            with pytest.raises(ValueError, match=nan_match):
                enc.fit(nan)
            with pytest.raises(ValueError, match=inf_match):
                enc.fit(inf)
        enc.fit(np.array([[0.0], [1.0]]))
    with pytest.raises(ValueError, match=nan_match):
        enc.transform(nan)
    with pytest.raises(ValueError, match=inf_match):
        enc.transform(inf)


def test_missing_category_is_last_code_of_every_column():
    X = pd.DataFrame(
        {"a": ["x", None, "y"], "b": ["u", "v", "u"], "w": [0.1, np.nan, 1]}
    )
    enc = TableEncoder(
        domains={"a": ["x", "y"], "b": ["u", "v"]},
        bounds={"w": (0, 1)},
        bins=2,
        missing="category",
    )
    table = enc.fit_transform(X)
    # Every column gets the extra category, missing values or not (data-independent).
    assert table.cardinalities.tolist() == [3, 3, 3]
    assert table.codes.tolist() == [[0, 0, 0], [2, 1, 2], [1, 0, 1]]
    assert [c[-1] for c in table.categories] == [None, None, None]
    back = enc.inverse_transform(table)
    assert back["a"].isna().tolist() == [False, True, False]
    assert back["w"].isna().tolist() == [False, True, False]
    assert back["w"][0] == 0.25


def test_missing_category_with_inferred_categories():
    X = np.array([["b"], [None], ["a"]], dtype=object)
    with pytest.warns(PrivacyLeakWarning):
        enc = TableEncoder(missing="category").fit(X)
    assert list(enc.categories_[0]) == ["a", "b", None]
    assert enc.transform(X).codes[:, 0].tolist() == [1, 2, 0]


def test_infinity_is_always_an_error():
    X = np.array([[0.5], [np.inf]])
    for missing in ("raise", "category"):
        enc = TableEncoder(bounds={0: (0, 1)}, bins=2, missing=missing)
        with pytest.raises(
            ValueError, match=r"column 'x0' has an infinite value at row 1"
        ):
            enc.fit_transform(X)
    # inferring bounds fails before anything is inferred, so nothing warns
    with pytest.raises(ValueError, match=r"infinite value at row 1"):
        TableEncoder(bins=2).fit(X)


# Domain errors ------------------------------------------------------------------------
def test_category_outside_domain_is_domain_error():
    X = pd.DataFrame({"colour": ["red", "purple"]})
    with pytest.raises(
        DomainError, match=r"column 'colour' has the value 'purple' at row 1"
    ):
        TableEncoder(domains=DOMAINS).fit_transform(X)


def test_unseen_category_after_inferred_fit_is_domain_error():
    with pytest.warns(PrivacyLeakWarning):
        enc = TableEncoder().fit(np.array([["a"], ["b"]]))
    with pytest.raises(DomainError, match=r"column 'x0' has the value 'c' at row 0"):
        enc.transform(np.array([["c"]]))


def test_out_of_bounds_error_and_clip():
    X = np.array([[-1.0], [0.5], [3.0]])
    with pytest.raises(DomainError, match=r"column 'x0' has the value -1.0 at row 0"):
        TableEncoder(bounds={0: (0, 1)}, bins=4).fit_transform(X)
    table = TableEncoder(
        bounds={0: (0, 1)}, bins=4, out_of_bounds="clip"
    ).fit_transform(X)
    assert table.codes[:, 0].tolist() == [0, 2, 3]


# Validation of every parameter --------------------------------------------------------
X_SMALL = pd.DataFrame({"c": ["a", "b"], "w": [0.0, 1.0]})
D_SMALL = {"c": ["a", "b"]}
B_SMALL = {"w": (0, 1)}


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"missing": "drop"},
            ValueError,
            r"missing must be one of 'raise', 'category'",
        ),
        (
            {"out_of_bounds": "wrap"},
            ValueError,
            r"out_of_bounds must be one of 'raise', 'clip'",
        ),
        (
            {"domains": [["a", "b"]]},
            TypeError,
            r"domains must be a dict keyed by column",
        ),
        ({"domains": {"zz": ["a"]}}, ValueError, r"domains has a key 'zz' that is not"),
        ({"domains": {"c": "ab"}}, TypeError, r"domains\['c'\] must be a list"),
        ({"domains": {"c": []}}, ValueError, r"domains\['c'\] must not be empty"),
        ({"domains": {"c": ["a", "a"]}}, ValueError, r"lists the category 'a' twice"),
        ({"domains": {"c": ["a", None]}}, ValueError, r"contains a missing value"),
        ({"domains": {"c": [["a"], "b"]}}, TypeError, r"unhashable categories"),
        ({"bounds": {"w": 1}}, TypeError, r"bounds\['w'\] must be a pair"),
        ({"bounds": {"w": (0, 1, 2)}}, ValueError, r"bounds\['w'\] must be a pair"),
        ({"bounds": {"w": (0, "1")}}, TypeError, r"must hold real numbers, got str"),
        (
            {"bounds": {"w": (1, 1)}},
            ValueError,
            r"finite with lo < hi, got \(1.0, 1.0\)",
        ),
        ({"bounds": {"w": (0, np.inf)}}, ValueError, r"finite with lo < hi"),
        ({"bounds": {"w": (0, 1), "c": (0, 1)}}, ValueError, r"in both domains"),
        ({"bins": 0}, ValueError, r"bins must be >= 1, got 0"),
        ({"bins": 2.5}, TypeError, r"bins must be an int, got float"),
        ({"bins": True}, TypeError, r"bins must be an int, got bool"),
        ({"bins": 2**32}, ValueError, r"bins must be <= 2\*\*32 - 2"),
        ({"bins": {"w": 0}}, ValueError, r"bins\['w'\] must be >= 1, got 0"),
        (
            {"bins": {"c": 3}},
            ValueError,
            r"bins has a key for column 'c', which is categ",
        ),
        ({"bins": {"q": 3}}, ValueError, r"bins has a key 'q' that is not a column"),
    ],
)
def test_parameter_validation(kwargs, error, match):
    params = {"domains": D_SMALL, "bounds": B_SMALL, "bins": 2} | kwargs
    with pytest.raises(error, match=match):
        TableEncoder(**params).fit(X_SMALL)


def test_numpy_key_given_twice():
    X = np.array([["a"], ["b"]])
    with pytest.raises(ValueError, match=r"domains names column 'x0' twice"):
        TableEncoder(domains={0: ["a", "b"], "x0": ["a", "b"]}).fit(X)


def test_integer_positions_only_for_numpy():
    with pytest.raises(ValueError, match=r"domains has a key 0 that is not a column"):
        TableEncoder(domains={0: ["a", "b"]}, bounds=B_SMALL, bins=2).fit(X_SMALL)


@pytest.mark.parametrize(
    ("X", "error", "match"),
    [
        (
            np.empty((0, 2)),
            ValueError,
            r"X must be non-empty, got 0 sample\(s\) \(shape=\(0, 2\)\) while a "
            r"minimum of 1 is required\.",
        ),
        (
            np.empty((3, 0)),
            ValueError,
            r"X must be non-empty, got 0 feature\(s\) \(shape=\(3, 0\)\) while a "
            r"minimum of 1 is required\.",
        ),
        (
            pd.DataFrame({"a": [], "b": []}),
            ValueError,
            r"X must be non-empty, got 0 sample\(s\) \(shape=\(0, 2\)\)",
        ),
        (
            pd.DataFrame(index=range(3)),
            ValueError,
            r"X must be non-empty, got 0 feature\(s\) \(shape=\(3, 0\)\)",
        ),
        (
            pl.DataFrame({"a": []}),
            ValueError,
            r"X must be non-empty, got 0 sample\(s\) \(shape=\(0, 1\)\)",
        ),
        (
            np.array([1.0, 2.0]),
            ValueError,
            r"X must be 2-dimensional, got 1 dimension\(s\)\. Reshape your data with "
            r"X\.reshape\(-1, 1\) if it has a single feature",
        ),
        (np.zeros((1, 1, 1)), ValueError, r"X must be 2-dimensional, got 3 dim"),
        (
            np.array([[1 + 1j]]),
            ValueError,
            r"X has dtype complex128\. Complex data not supported: privtab needs real "
            r"values or categories",
        ),
        ([[1, 2], [3]], ValueError, r"X is ragged"),
        (pd.DataFrame([[1, 2]], columns=["a", "a"]), ValueError, r"duplicate column"),
        (
            pd.DataFrame({"z": [1j]}),
            ValueError,
            r"column 'z' of X has dtype complex128\. Complex data not supported",
        ),
        (
            sparse.csr_array(np.eye(2)),
            TypeError,
            r"X is a scipy sparse csr_array: sparse input is not supported, pass a "
            r"dense array \(X\.toarray\(\)\)",
        ),
        (
            np.array([[{"a": 1}, 1.0], [2.0, 3.0]], dtype=object),
            TypeError,
            r"column 'x0' has an unhashable dict at row 0 \(\{'a': 1\}\), which "
            r"cannot be a category: each cell of the X argument must be a string, a "
            r"number or another hashable value",
        ),
        (
            pd.DataFrame({"l": [(1,), [2]]}),
            TypeError,
            r"column 'l' has an unhashable list at row 1 \(\[2\]\)",
        ),
    ],
)
def test_invalid_tables(X, error, match):
    with pytest.raises(error, match=match):
        TableEncoder(bins=2).fit(X)


def test_data_dependent_failures():
    with pytest.raises(
        ValueError, match=r"column 'x0' has only missing values; declare its bounds"
    ):
        TableEncoder(bins=2, missing="category").fit(np.array([[np.nan], [np.nan]]))
    with pytest.raises(
        ValueError, match=r"only missing values; declare its categories"
    ):
        TableEncoder(missing="category").fit(np.array([[None], [None]], dtype=object))
    with pytest.raises(
        ValueError,
        match=r"bins must be given when X has fewer than 2 rows: the default "
        r"lei_bins\(n_rows, n_columns\) needs n_rows >= 2, got n_samples = 1",
    ):
        TableEncoder(bounds={0: (0, 1)}).fit(np.array([[0.5]]))
    with pytest.raises(
        TypeError, match=r"column 'x0' has bounds but holds non-numeric"
    ):
        TableEncoder(bounds={0: (0, 1)}, bins=2).fit(np.array([["a"]], dtype=object))


def test_transform_and_inverse_validation():
    enc = TableEncoder(domains=D_SMALL, bounds=B_SMALL, bins=2)
    with pytest.raises(ValueError, match=r"not fitted yet"):
        enc.transform(X_SMALL)
    with pytest.raises(ValueError, match=r"not fitted yet"):
        enc.inverse_transform([[0, 0]])
    enc.fit(X_SMALL)
    with pytest.raises(
        ValueError,
        match=r"X has 1 features, but TableEncoder is expecting 2 features as input "
        r"\(fitted on columns \['c', 'w'\]\)",
    ):
        enc.transform(X_SMALL[["c"]].to_numpy())
    with pytest.raises(
        ValueError,
        match=r"X has 1 columns \['c'\] but the encoder was fitted on 2 columns "
        r"\['c', 'w'\]\. The feature names should match those that were passed "
        r"during fit\.\nFeature names seen at fit time, yet now missing:\n- w\n$",
    ):
        enc.transform(X_SMALL[["c"]])
    with pytest.raises(
        ValueError,
        match=r"X has 2 columns \['w', 'c'\] but the encoder was fitted on 2 columns "
        r"\['c', 'w'\]\. The feature names should match those that were passed "
        r"during fit\.\nFeature names must be in the same order as they were in fit",
    ):
        enc.transform(X_SMALL[["w", "c"]])
    with pytest.raises(
        ValueError,
        match=r"Feature names unseen at fit time:\n- a\n- b\n- d\n- e\n- f\n- \.\.\.\n"
        r"Feature names seen at fit time, yet now missing:\n- c\n- w\n$",
    ):
        enc.transform(pd.DataFrame([list(range(6))], columns=list("gfedba")))
    with pytest.raises(ValueError, match=r"X must be 2-dimensional.*Reshape your data"):
        enc.transform(X_SMALL.to_numpy(dtype=object)[0])
    with pytest.raises(
        ValueError, match=r"codes must have shape \(n_rows, 2\), got \(3,\)"
    ):
        enc.inverse_transform([0, 1, 0])
    with pytest.raises(ValueError, match=r"codes\[0, 1\] = 2 is >= cardinality 2"):
        enc.inverse_transform([[0, 2]])
    with pytest.raises(ValueError, match=r"codes must hold codes >= 0"):
        enc.inverse_transform([[0, -1]])
    with pytest.raises(TypeError, match=r"codes must hold integer codes"):
        enc.inverse_transform([[0.5, 0]])
    other = EncodedTable([[0, 0]], [2, 2], columns=["p", "q"])
    with pytest.raises(ValueError, match=r"codes has columns \['p', 'q'\]"):
        enc.inverse_transform(other)
    # numpy input is matched by position
    assert enc.transform(X_SMALL.to_numpy(dtype=object)).codes.tolist() == [
        [0, 0],
        [1, 1],
    ]


# EncodedTable -------------------------------------------------------------------------
def test_encoded_table_api():
    table = EncodedTable(np.array([[0, 1], [2, 0], [1, 1]]), [3, 2], columns=["a", "b"])
    assert table.codes.flags.f_contiguous
    assert table.codes.dtype == np.uint32
    assert table.shape == (3, 2)
    assert len(table) == 3
    assert table.n_columns == 2
    assert table.column_index("b") == 1
    np.testing.assert_array_equal(table.column("a"), [0, 2, 1])
    assert table.column("a").flags.c_contiguous
    with pytest.raises(KeyError, match=r"no column named 'z'"):
        table.column_index("z")
    sub = table.select(["b"])
    assert sub.columns == ["b"]
    assert sub.cardinalities.tolist() == [2]
    frame = table.to_pandas()
    assert list(frame.columns) == ["a", "b"]
    assert frame["a"].tolist() == [0, 2, 1]
    assert table.to_pandas(decode=True)["a"].tolist() == [0, 2, 1]
    assert "EncodedTable(n_rows=3" in repr(table)


def test_encoded_table_validation():
    with pytest.raises(
        ValueError, match=r"columns must have one name per column \(2\)"
    ):
        EncodedTable([[0, 0]], [1, 1], columns=["a"])
    with pytest.raises(ValueError, match=r"columns must be unique"):
        EncodedTable([[0, 0]], [1, 1], columns=["a", "a"])
    with pytest.raises(ValueError, match=r"categories must have one entry per column"):
        EncodedTable([[0, 0]], [1, 1], categories=[["x"]])
    with pytest.raises(ValueError, match=r"categories\[1\] has 2 entries but column"):
        EncodedTable([[0, 0]], [1, 1], categories=[["x"], ["y", "z"]])
    with pytest.raises(ValueError, match=r"codes\[0, 0\] = 3 is >= cardinality 2"):
        EncodedTable([[3]], [2])


# No input makes the encoder fail in an unexpected way ---------------------------------
cell_values = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
    st.text(max_size=3),
    st.booleans(),
)


@given(
    st.lists(st.lists(cell_values, min_size=0, max_size=4), min_size=0, max_size=6),
    st.sampled_from(["numpy", "pandas", "polars"]),
    st.sampled_from(["raise", "category"]),
    st.sampled_from(["raise", "clip"]),
    st.one_of(st.none(), st.integers(1, 5)),
)
def test_arbitrary_tables_only_raise_documented_errors(
    rows, kind, missing, out_of_bounds, bins
):
    width = len(rows[0]) if rows else 0
    rows = [r[:width] + [None] * (width - len(r)) for r in rows]
    try:
        if kind == "numpy":
            X = np.array(rows, dtype=object).reshape(len(rows), width)
        elif kind == "pandas":
            X = pd.DataFrame(rows, columns=[f"c{j}" for j in range(width)])
        else:
            X = pl.DataFrame(
                {f"c{j}": [r[j] for r in rows] for j in range(width)}, strict=False
            )
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
        return  # the container itself rejects the data
    enc = TableEncoder(bins=bins, missing=missing, out_of_bounds=out_of_bounds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        try:
            table = enc.fit_transform(X)
        except (ValueError, TypeError):  # DomainError is a ValueError
            return
    assert table.codes.shape == (len(rows), width)
    assert np.all(table.codes < table.cardinalities[None, :])
    decoded = enc.inverse_transform(table)
    assert len(decoded) == len(rows)


# Checks against the fitted columns ----------------------------------------------------
def test_unhashable_cell_in_transform_is_named():
    enc = TableEncoder(domains={"c": ["a", "b"]}).fit(pd.DataFrame({"c": ["a", "b"]}))
    with pytest.raises(
        TypeError,
        match=r"column 'c' has an unhashable list at row 1 \(\['a'\]\), which cannot "
        r"be a category",
    ):
        enc.transform(pd.DataFrame({"c": ["a", ["a"]]}))


def test_feature_names_in_follows_the_fitted_frame():
    enc = TableEncoder(domains=D_SMALL, bounds=B_SMALL, bins=2).fit(X_SMALL)
    assert enc.feature_names_in_.dtype == object
    assert enc.feature_names_in_.tolist() == ["c", "w"]
    np.testing.assert_array_equal(enc.get_feature_names_out(), enc.feature_names_in_)
    enc.set_params(domains={0: ["a", "b"]}, bounds={1: (0, 1)})
    enc.fit(X_SMALL.to_numpy(dtype=object))
    assert not hasattr(enc, "feature_names_in_")
    assert enc.columns_ == ["x0", "x1"]
    polars_fit = TableEncoder(domains=D_SMALL, bounds=B_SMALL, bins=2).fit(
        pl.from_pandas(X_SMALL)
    )
    assert polars_fit.feature_names_in_.tolist() == ["c", "w"]
    int_names = TableEncoder(domains={0: ["a"]}).fit(pd.DataFrame({0: ["a"]}))
    assert not hasattr(int_names, "feature_names_in_")
    assert int_names.columns_ == [0]


@given(st.integers(1, 5), st.integers(1, 5))
def test_transform_checks_the_number_of_features(fitted, given_):
    rng = np.random.default_rng(fitted * 10 + given_)
    enc = TableEncoder(bins=2, bounds={j: (0, 1) for j in range(fitted)})
    enc.fit(rng.uniform(size=(4, fitted)))
    X = rng.uniform(size=(3, given_))
    if given_ == fitted:
        assert enc.transform(X).shape == (3, fitted)
        return
    with pytest.raises(
        ValueError,
        match=rf"X has {given_} features, but TableEncoder is expecting {fitted} "
        r"features as input \(fitted on columns \['x0'",
    ):
        enc.transform(X)


def test_tags_describe_the_encoder():
    tags = TableEncoder().__sklearn_tags__()
    assert tags.input_tags.categorical
    assert not tags.input_tags.allow_nan
    assert not tags.input_tags.sparse
    assert tags.transformer_tags.preserves_dtype == []
    assert TableEncoder(missing="category").__sklearn_tags__().input_tags.allow_nan


# EncodedTable as an array of codes ----------------------------------------------------
@given(
    hnp.arrays(
        np.uint32,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6),
        elements=st.integers(0, 4),
    ),
    st.data(),
)
def test_encoded_table_indexes_like_its_codes(codes, data):
    table = EncodedTable(codes, np.full(codes.shape[1], 5))
    assert table.ndim == 2
    assert table.dtype == np.uint32
    n = codes.shape[0]
    rows = data.draw(st.lists(st.integers(0, n - 1), max_size=8))
    mask = data.draw(hnp.arrays(np.bool_, n))
    start = data.draw(st.integers(-n, n))
    for key in (
        rows,
        np.array(rows, dtype=np.intp),
        mask,
        slice(start, None),
        (slice(None), 0),
        (rows, Ellipsis),
    ):
        np.testing.assert_array_equal(table[key], codes[key])
    np.testing.assert_array_equal(table[n - 1], codes[n - 1])
    np.testing.assert_array_equal(np.asarray(table), codes)


def test_encoded_table_rejects_names_as_index():
    table = EncodedTable([[0, 1]], [2, 2], columns=["a", "b"])
    match = r"EncodedTable is indexed like its array of codes, got 'a'; use "
    with pytest.raises(TypeError, match=match + r"table\.column\(name\)"):
        table["a"]
    with pytest.raises(TypeError, match=r"got \(0, 'b'\); use table\.column"):
        table[0, "b"]
    with pytest.raises(IndexError):
        table[1]
