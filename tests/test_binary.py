"""Binary inputs of paper 004: dense, DataFrame and sparse forms agree."""

import numpy as np
import pandas as pd
import polars as pl
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from privtab._validation import as_binary_labels
from privtab.kac._binary import as_binary_matrix, ham_scores

binary_matrices = st.tuples(st.integers(1, 30), st.integers(1, 12)).flatmap(
    lambda shape: arrays(np.uint8, shape, elements=st.integers(0, 1))
)


@given(binary_matrices)
def test_every_input_form_gives_the_same_rows(dense):
    expected = [np.flatnonzero(row).tolist() for row in dense]
    forms = [
        dense,
        dense.astype(bool),
        dense.astype(np.float32),
        pd.DataFrame(dense),
        pl.DataFrame(dense),
        sp.csr_matrix(dense),
        sp.csc_array(dense.astype(np.int64)),
    ]
    for form in forms:
        matrix = as_binary_matrix(form)
        assert matrix.shape == dense.shape
        rows = [
            matrix.indices[matrix.indptr[u] : matrix.indptr[u + 1]].tolist()
            for u in range(matrix.n_rows)
        ]
        assert rows == expected
        np.testing.assert_array_equal(matrix.dense(), dense)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, bool])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_byte_matrices_over_many_row_blocks_equal_numpy(dtype, layout):
    # Bytes are converted by the core in blocks of 2^14 rows, in parallel.
    rng = np.random.default_rng(4)
    dense = (rng.random((40_000, 13)) < np.linspace(0.0, 1.0, 13)).astype(dtype)
    form = {
        "C": dense,
        "F": np.asfortranarray(dense),
        "strided": np.repeat(dense, 2, axis=1)[:, ::2],
    }[layout]
    matrix = as_binary_matrix(form)
    rows, columns = np.nonzero(dense)
    np.testing.assert_array_equal(matrix.indices, columns)
    np.testing.assert_array_equal(
        matrix.indptr, np.r_[0, np.cumsum(np.bincount(rows, minlength=len(dense)))]
    )
    assert matrix.indptr.dtype == np.int64
    assert matrix.indices.dtype == np.uint32


@given(binary_matrices, st.data())
def test_column_codes_select_features(dense, data):
    features = data.draw(
        st.lists(st.integers(0, dense.shape[1] - 1), min_size=1, unique=True)
    )
    codes = as_binary_matrix(dense).column_codes(features)
    assert codes.dtype == np.uint32
    assert codes.flags.c_contiguous
    np.testing.assert_array_equal(codes, dense[:, features].T)


@given(binary_matrices, st.data())
def test_ham_scores_match_pair_enumeration(dense, data):
    n = dense.shape[0]
    labels = data.draw(arrays(bool, n).filter(lambda y: 0 < y.sum() < len(y)))
    scores = ham_scores(as_binary_matrix(dense), labels)
    positive, negative = dense[labels], dense[~labels]
    differ = positive[:, None, :] != negative[None, :, :]
    np.testing.assert_allclose(scores, differ.mean(axis=(0, 1)))


def test_dataframe_names_are_kept():
    frame = pd.DataFrame({"a": [0, 1], "b": [True, False]})
    assert as_binary_matrix(frame).feature_names.tolist() == ["a", "b"]


def test_sparse_explicit_zeros_and_duplicates():
    matrix = sp.coo_matrix(([1, 0, 1], ([0, 0, 1], [2, 1, 0])), shape=(2, 3))
    binary = as_binary_matrix(matrix)
    np.testing.assert_array_equal(binary.dense(), [[0, 0, 1], [1, 0, 0]])
    doubled = sp.coo_matrix(([1, 1], ([0, 0], [1, 1])), shape=(1, 2))
    with pytest.raises(
        ValueError, match=r"B must be binary \(0/1\), found the value 2"
    ):
        as_binary_matrix(doubled)


@pytest.mark.parametrize(
    ("data", "indices"),
    [
        ([1, 1, 1], [2, 0, 1]),  # canonical: read in place
        ([1, 0, 1], [2, 0, 1]),  # an explicit zero
        ([1, 1, 1], [2, 1, 0]),  # unsorted row
    ],
)
def test_a_csr_input_is_never_changed(data, indices):
    indptr = [0, 1, 3]
    matrix = sp.csr_array((np.array(data), np.array(indices), np.array(indptr)), (2, 3))
    before = [a.copy() for a in (matrix.data, matrix.indices, matrix.indptr)]
    dense = matrix.toarray()
    binary = as_binary_matrix(matrix)
    np.testing.assert_array_equal(binary.dense(), dense)
    for array, copy in zip(
        (matrix.data, matrix.indices, matrix.indptr), before, strict=True
    ):
        np.testing.assert_array_equal(array, copy)


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (np.array([[0, 2]]), ValueError, r"B must be binary \(0/1\), found 2 at row 0"),
        (
            np.array([[0, 1], [1, 2]], dtype=np.uint8),
            ValueError,
            r"found 2 at row 1, column 1",
        ),
        (np.array([[1, -1]], dtype=np.int8), ValueError, r"found -1 at row 0"),
        (np.array([[0.0, np.nan]]), ValueError, "B contains NaN"),
        (np.array([[0.5, 1.0]]), ValueError, "found 0.5"),
        (np.array([["a", "b"]]), TypeError, "B must hold 0/1 numbers"),
        (np.array([[1 + 1j]]), TypeError, "dtype complex"),
        (np.zeros((0, 3)), ValueError, "B must be non-empty"),
        ([[0, 1], [1]], ValueError, "ragged"),
        (sp.csr_matrix(np.array([[np.inf]])), ValueError, "NaN or infinity"),
        (sp.csr_matrix((0, 4)), ValueError, r"non-empty, got shape \(0, 4\)"),
    ],
)
def test_invalid_matrices(value, error, match):
    with pytest.raises(error, match=match):
        as_binary_matrix(value)


def test_labels():
    np.testing.assert_array_equal(as_binary_labels([0, 1, 1], 3), [False, True, True])
    np.testing.assert_array_equal(
        as_binary_labels(pd.Series(["no", "yes"]), 2), [False, True]
    )
    with pytest.raises(ValueError, match="exactly two classes, got 1"):
        as_binary_labels([1, 1], 2)
    with pytest.raises(ValueError, match="y has 2 labels, expected 3"):
        as_binary_labels([0, 1], 3)
    with pytest.raises(ValueError, match="1-dimensional"):
        as_binary_labels([[0, 1]], 1)
    with pytest.raises(ValueError, match="NaN"):
        as_binary_labels([0.0, np.nan], 2)
