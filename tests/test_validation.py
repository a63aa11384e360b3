"""Shared input checks: every branch names the argument and the offending value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from privtab import _validation as v


def test_check_positive_accepts_numbers():
    assert v.check_positive(2, "x") == 2.0
    assert v.check_epsilon(np.float32(0.5)) == 0.5


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (0, ValueError, "epsilon must be finite and > 0, got 0.0"),
        (-1e-9, ValueError, "epsilon must be finite and > 0"),
        (float("nan"), ValueError, "got nan"),
        (float("-inf"), ValueError, "got -inf"),
        (None, TypeError, "epsilon must be a real number, got NoneType"),
        (np.bool_(True), TypeError, "got bool"),
        (1 + 2j, TypeError, "got complex"),
    ],
)
def test_check_epsilon_rejects(value, error, match):
    with pytest.raises(error, match=match):
        v.check_epsilon(value)


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (0, ValueError, "k must be >= 1, got 0"),
        (2.0, TypeError, "k must be an int, got float"),
        (False, TypeError, "k must be an int, got bool"),
    ],
)
def test_check_positive_int_rejects(value, error, match):
    with pytest.raises(error, match=match):
        v.check_positive_int(value, "k")


def test_to_numpy_2d_accepts_frames():
    frame = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    np.testing.assert_array_equal(v.to_numpy_2d(frame), [[1, 3], [2, 4]])
    np.testing.assert_array_equal(
        v.to_numpy_2d(pl.from_pandas(frame)), [[1, 3], [2, 4]]
    )


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ([[1, 2], [3]], "X is ragged"),
        (
            [1, 2, 3],
            r"X must be 2-dimensional, got 1 dimension\(s\)\. Reshape your data with "
            r"X\.reshape\(-1, 1\) if it has a single feature or X\.reshape\(1, -1\) if "
            r"it holds a single sample",
        ),
        (np.zeros((2, 2, 2)), r"X must be 2-dimensional, got 3 dimension\(s\)$"),
        (
            np.zeros((0, 3)),
            r"X must be non-empty, got 0 sample\(s\) \(shape=\(0, 3\)\) while a "
            r"minimum of 1 is required\.",
        ),
        (
            np.zeros((3, 0)),
            r"X must be non-empty, got 0 feature\(s\) \(shape=\(3, 0\)\) while a "
            r"minimum of 1 is required\.",
        ),
    ],
)
def test_to_numpy_2d_rejects(data, match):
    with pytest.raises(ValueError, match=match):
        v.to_numpy_2d(data)


@pytest.mark.parametrize(
    "matrix", [sparse.csr_array, sparse.csc_matrix, sparse.coo_array, sparse.lil_matrix]
)
def test_to_numpy_2d_rejects_sparse(matrix):
    name = matrix.__name__
    with pytest.raises(
        TypeError,
        match=rf"data is a scipy sparse {name}: sparse input is not supported, pass a "
        r"dense array \(data\.toarray\(\)\)",
    ):
        v.to_numpy_2d(matrix(np.eye(3)), "data")


def test_as_float_array():
    out = v.as_float_array([1, 2, 3], "values")
    assert out.dtype == np.float64
    assert out.flags.c_contiguous
    with pytest.raises(
        ValueError,
        match=r"values must contain only finite values \(no NaN or infinity\), found "
        "NaN at row 1",
    ):
        v.as_float_array([1.0, np.nan], "values")
    with pytest.raises(TypeError, match="values must be numeric, got dtype <U1"):
        v.as_float_array(["a"], "values")
    with pytest.raises(TypeError, match="values must be real"):
        v.as_float_array([1j], "values")
    with pytest.raises(ValueError, match="values is ragged"):
        v.as_float_array([[1.0], [1.0, 2.0]], "values")


def test_as_int_array():
    np.testing.assert_array_equal(v.as_int_array([1.0, -2.0], "c"), [1, -2])
    assert v.as_int_array([True, False], "c").dtype == np.int64
    with pytest.raises(
        TypeError, match="c must hold integers, got non-integral floats"
    ):
        v.as_int_array([1.5], "c")
    with pytest.raises(ValueError, match="c must contain only finite values"):
        v.as_int_array([np.inf], "c")
    with pytest.raises(ValueError, match="c has values outside the int64 range"):
        v.as_int_array([2.0**70], "c")
    with pytest.raises(ValueError, match=r"c has values above 2\*\*63 - 1"):
        v.as_int_array(np.array([2**64 - 1], dtype=np.uint64), "c")
    with pytest.raises(TypeError, match="c must hold integers, got dtype <U1"):
        v.as_int_array(["x"], "c")
    with pytest.raises(ValueError, match="c is ragged"):
        v.as_int_array([[1], [1, 2]], "c")


def test_check_cardinalities():
    np.testing.assert_array_equal(v.check_cardinalities([2, 3], 2), [2, 3])
    with pytest.raises(
        ValueError, match=r"one entry per column \(3\), got shape \(2,\)"
    ):
        v.check_cardinalities([2, 3], 3)
    with pytest.raises(TypeError, match="cardinalities must hold integers"):
        v.check_cardinalities([2.0, 3.0], 2)
    with pytest.raises(ValueError, match=r"must be in \[1, 2\*\*32 - 1\], got min 0"):
        v.check_cardinalities([0, 3], 2)


def test_as_code_columns_transposes_to_column_major():
    X = np.array([[0, 1], [2, 0], [1, 1]])
    columns, cards = v.as_code_columns(X, cardinalities=[3, 2])
    np.testing.assert_array_equal(columns, X.T)
    assert columns.dtype == np.uint32
    assert columns.flags.c_contiguous
    np.testing.assert_array_equal(cards, [3, 2])


def test_as_code_columns_reads_encoded_tables():
    class Table:
        codes = np.array([[0, 1], [1, 0]], dtype=np.uint32)
        cardinalities = np.array([2, 2])

    columns, cards = v.as_code_columns(Table())
    np.testing.assert_array_equal(columns, Table.codes.T)
    np.testing.assert_array_equal(cards, [2, 2])


@pytest.mark.parametrize(
    ("X", "cards", "error", "match"),
    [
        (np.array([[0, 3]]), [2, 3], ValueError, r"X\[0, 1\] = 3 is >= cardinality 3"),
        (np.array([[0, -1]]), [2, 3], ValueError, "X must hold codes >= 0, got -1"),
        (np.array([[0.5, 1]]), [2, 3], TypeError, "non-integral floats"),
        (np.array([[np.nan, 1]]), [2, 3], ValueError, "finite codes"),
        (np.array([["a", "b"]]), [2, 3], TypeError, "integer codes, got dtype <U1"),
        (np.array([[0, 1]], dtype=object), [2, 3], TypeError, "got dtype object"),
        (np.array([[0, 2**33]]), [2, 3], ValueError, r"code above 2\*\*32 - 1"),
        (np.array([[0, 1]]), None, ValueError, "cardinalities must be given"),
    ],
)
def test_as_code_columns_rejects(X, cards, error, match):
    with pytest.raises(error, match=match):
        v.as_code_columns(X, cardinalities=cards)


def _unaligned(X):
    """``X`` copied into memory one byte off its dtype's alignment."""
    raw = np.zeros(X.nbytes + 1, dtype=np.uint8)
    out = np.frombuffer(raw.data, dtype=X.dtype, count=X.size, offset=1)
    out = out.reshape(X.shape, order="F" if X.flags.f_contiguous else "C")
    out[...] = X
    assert not out.flags.aligned
    return out


@pytest.mark.parametrize("order", ["C", "F"])
def test_as_code_columns_reads_unaligned_codes(order):
    # Dask's workers deserialize partitions into unaligned buffers; the core reads
    # aligned values only, and a bad code must still be named, not refused as layout.
    X = np.asarray(np.arange(24).reshape(8, 3) % 5, order=order)
    columns, _ = v.as_code_columns(_unaligned(X), cardinalities=[5, 5, 5])
    np.testing.assert_array_equal(columns, X.T)
    X[6, 1] = 7
    with pytest.raises(ValueError, match=r"X\[6, 1\] = 7 is >= cardinality 5"):
        v.as_code_columns(_unaligned(X), cardinalities=[5, 5, 5])


def test_as_code_columns_reads_uint32_columns_in_place():
    columns_in = np.arange(12, dtype=np.uint32).reshape(3, 4) % 3
    columns, _ = v.as_code_columns(columns_in.T, cardinalities=[3, 3, 3])
    assert np.shares_memory(columns, columns_in)
    np.testing.assert_array_equal(columns, columns_in)
    columns_in[1, 2] = 3
    with pytest.raises(ValueError, match=r"X\[2, 1\] = 3 is >= cardinality 3"):
        v.as_code_columns(columns_in.T, cardinalities=[3, 3, 3])


@settings(max_examples=60, deadline=None)
@given(
    n_rows=st.integers(1, 40),
    n_cols=st.integers(1, 70),
    dtype=st.sampled_from([np.uint8, np.uint16, np.uint32, np.int64, np.int32]),
    order=st.sampled_from(["C", "F"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_code_columns_and_inferred_cardinalities_match_numpy(
    n_rows, n_cols, dtype, order, seed
):
    rng = np.random.default_rng(seed)
    X = np.asarray(rng.integers(0, 200, (n_rows, n_cols)), dtype=dtype, order=order)
    columns, cards = v.infer_code_columns(X, warn=False)
    np.testing.assert_array_equal(columns, X.T)
    np.testing.assert_array_equal(cards, X.max(axis=0).astype(np.int64) + 1)
    declared = X.max(axis=0).astype(np.int64) + 1
    columns, _ = v.as_code_columns(X, cardinalities=declared)
    np.testing.assert_array_equal(columns, X.T)
    if declared[-1] > 1:
        declared[-1] -= 1
        with pytest.raises(ValueError, match="is >= cardinality"):
            v.as_code_columns(X, cardinalities=declared)


def test_as_code_columns_accepts_bool_and_float_codes():
    columns, _ = v.as_code_columns(
        np.array([[True, 0.0]]).astype(float), cardinalities=[2, 2]
    )
    np.testing.assert_array_equal(columns, [[1], [0]])
    columns, _ = v.as_code_columns(np.array([[True, False]]), cardinalities=[2, 2])
    np.testing.assert_array_equal(columns, [[1], [0]])
