"""Binary data: the 0/1 feature matrices and binary labels of the k-AC methods (Zhang et al. 2017).

Every method on binary data (maximal-set mining, containment anonymity, the k-AC
selectors and their baselines) reads its input through :func:`as_binary_matrix`, which
accepts dense numpy arrays, pandas and polars DataFrames and SciPy sparse matrices and
stores them once as a CSR structure: for each row (transaction) the sorted indices of its
features equal to 1. Sparse data therefore never becomes dense, and a dense 0/1 table
costs one pass.

Core kernels called: none; this module only lays the data out for the kernels of
:mod:`privtab.kac` (``privtab._core.containment_anonymity``, ``class_sizes``,
``maximal_sets``, ``randomization_flipping``).

Full references: :mod:`privtab.kac`.
"""

from __future__ import annotations

import numbers
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from privtab import _core
from privtab._validation import (
    MISSING_FIX,
    cell_at,
    check_not_empty,
    column_labels,
    show_value,
    to_numpy_2d,
)

__all__ = ["BinaryMatrix", "as_binary_matrix", "ham_scores"]


@dataclass(frozen=True, eq=False)
class BinaryMatrix:
    """A validated n×m 0/1 matrix stored row-wise as sorted feature indices (CSR).

    Attributes
    ----------
    indptr : ndarray of int64, shape (n_rows + 1,)
        Row ``u`` holds the features ``indices[indptr[u]:indptr[u + 1]]``.
    indices : ndarray of uint32
        Feature indices, strictly increasing within each row.
    n_features : int
        Number of columns m.
    feature_names : ndarray of str or None
        Column names of a DataFrame input.
    """

    indptr: np.ndarray
    indices: np.ndarray
    n_features: int
    feature_names: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        """Number of rows n."""
        return len(self.indptr) - 1

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_features)``."""
        return self.n_rows, self.n_features

    def row_ids(self) -> np.ndarray:
        """Return the row index of every stored 1, aligned with :attr:`indices`."""
        return np.repeat(np.arange(self.n_rows, dtype=np.int64), np.diff(self.indptr))

    def feature_counts(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Return, per feature, the number of rows equal to 1 (within ``rows`` if given).

        ``rows`` is a boolean mask over the rows.
        """
        indices = self.indices
        if rows is not None:
            indices = indices[np.repeat(rows, np.diff(self.indptr))]
        return np.bincount(indices, minlength=self.n_features).astype(np.int64)

    def dense(self, features: Any = None) -> np.ndarray:
        """Return the n × |features| matrix as ``uint8`` (all features by default)."""
        columns = (
            np.arange(self.n_features)
            if features is None
            else np.asarray(features, dtype=np.int64)
        )
        position = np.full(self.n_features, -1, dtype=np.int64)
        position[columns] = np.arange(len(columns))
        out = np.zeros((self.n_rows, len(columns)), dtype=np.uint8)
        target = position[self.indices]
        keep = target >= 0
        out[self.row_ids()[keep], target[keep]] = 1
        return out

    def column_codes(self, features: Any) -> np.ndarray:
        """Return the selected features as column-major ``uint32`` codes (``|S| × n``).

        This is the layout of the core's counting and partition kernels, with every
        feature a categorical attribute of cardinality 2.
        """
        return np.ascontiguousarray(self.dense(features).T, dtype=np.uint32)


def _not_finite(name: str, value: Any, where: str) -> str:
    """Return the message for a NaN or an infinity in a binary matrix."""
    fix = f"; {MISSING_FIX}" if np.isnan(value) else ""
    return (
        f"{name} contains NaN or infinity: {show_value(value)}{where}, which is not "
        f"binary (0/1){fix}"
    )


def _sparse_cell(csr: Any, at: int) -> str:
    """Where the stored entry ``at`` of a CSR matrix is, as :func:`cell_at` says it."""
    row = int(np.searchsorted(csr.indptr, at, side="right")) - 1
    return cell_at((row, int(csr.indices[at])))


def _from_sparse(B: Any, name: str) -> BinaryMatrix:
    # A CSR input in canonical form without explicit zeros is read as it is; anything
    # else is brought there on a copy (the caller's matrix is never changed).
    csr = B.tocsr()
    if csr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional, got {csr.ndim} dimension(s)")
    if not csr.has_canonical_format:
        csr = csr.copy() if csr is B else csr
        csr.sum_duplicates()
    data = np.asarray(csr.data)
    if data.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold 0/1 numbers, got dtype {data.dtype}")
    if data.dtype.kind == "f" and not np.isfinite(data).all():
        at = int(np.argmax(~np.isfinite(data)))
        raise ValueError(_not_finite(name, data[at], _sparse_cell(csr, at)))
    bad = (data != 0) & (data != 1)
    if bad.any():
        at = int(np.argmax(bad))
        raise ValueError(
            f"{name} must be binary (0/1), found the value {data[at].item()!r}"
            f"{_sparse_cell(csr, at)}: {BINARY_FIX.format(name=name)}"
        )
    if not data.all():
        csr = csr.copy() if csr is B else csr
        csr.eliminate_zeros()
    n_rows, n_features = csr.shape
    check_not_empty(n_rows, n_features, name)
    return BinaryMatrix(
        indptr=np.ascontiguousarray(csr.indptr, dtype=np.int64),
        indices=np.ascontiguousarray(csr.indices, dtype=np.uint32),
        n_features=int(n_features),
    )


def _feature_names(B: Any) -> np.ndarray | None:
    module = type(B).__module__.split(".")[0]
    if module in ("pandas", "polars"):
        return np.asarray([str(c) for c in B.columns], dtype=object)
    return None


#: How to make a table binary, for the errors about one that is not.
BINARY_FIX = (
    "one-hot encode a categorical column (pandas.get_dummies({name}, columns=[...], "
    "dtype=int)) and threshold a numeric one ({name}[column] > t)"
)


def _first_non_binary_object(array: np.ndarray) -> tuple[tuple[int, int], Any] | None:
    """Return the first cell of an object array that is not a real number, and its value."""
    for flat, value in enumerate(array.ravel().tolist()):
        if (
            value is None
            or isinstance(value, str | bytes)
            or not isinstance(value, numbers.Real)
        ):
            row, column = np.unravel_index(flat, array.shape)
            return (int(row), int(column)), value
    return None


def as_binary_matrix(B: Any, name: str = "B") -> BinaryMatrix:
    """Validate a 0/1 matrix and store it row-wise.

    Parameters
    ----------
    B : array-like, pandas or polars DataFrame, SciPy sparse matrix, or BinaryMatrix
        n × m matrix whose entries are 0/1 (booleans, integers or floats equal to 0 or
        1). Sparse inputs stay sparse; explicit zeros are dropped.
    name : str
        Argument name used in error messages.

    Returns
    -------
    BinaryMatrix

    Raises
    ------
    TypeError
        For non-numeric input (strings, objects, complex numbers).
    ValueError
        For ragged or empty input, NaN or infinity, or a value other than 0 and 1.
    """
    if isinstance(B, BinaryMatrix):
        return B
    sparse = sys.modules.get("scipy.sparse")
    if sparse is not None and sparse.issparse(B):
        return _from_sparse(B, name)
    names = _feature_names(B)
    labels = column_labels(B)
    array = to_numpy_2d(B, name)
    if array.dtype == object:
        found = _first_non_binary_object(array)
        if found is not None:
            (row, column), value = found
            raise TypeError(
                f"{name} must hold 0/1 numbers, got {value!r}"
                f"{cell_at((row, column), labels)}: {BINARY_FIX.format(name=name)}"
            )
        array = array.astype(np.float64)
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must hold 0/1 numbers, got dtype {array.dtype}: "
            f"{BINARY_FIX.format(name=name)}"
        )
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        row, column = np.argwhere(~np.isfinite(array))[0]
        raise ValueError(
            _not_finite(name, array[row, column], cell_at((row, column), labels))
        )
    n_rows, n_features = array.shape
    if array.dtype.itemsize == 1 and array.dtype.kind in "biu":
        # Bytes are converted in parallel by the core; a byte other than 0/1 is named
        # below.
        bytes_ = np.ascontiguousarray(array).view(np.uint8)
        csr = _core.binary_csr_from_dense(bytes_)
        if csr is not None:
            indptr, indices = csr
            return BinaryMatrix(
                indptr=indptr,
                indices=indices,
                n_features=int(n_features),
                feature_names=names,
            )
    ones = array == 1
    bad = ~ones & (array != 0)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} must be binary (0/1), found {array[row, column].item()!r}"
            f"{cell_at((row, column), labels)}: {BINARY_FIX.format(name=name)}"
        )
    rows, columns = np.nonzero(ones)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return BinaryMatrix(
        indptr=indptr,
        indices=columns.astype(np.uint32),
        n_features=int(n_features),
        feature_names=names,
    )


def ham_scores(B: BinaryMatrix, positive: np.ndarray) -> np.ndarray:
    """Return Ham({f}) for every feature f (Zhang et al. 2017, definition of Ham).

    Ham({f}) is the fraction of (positive, negative) row pairs that differ on f:
    p_f(1 − q_f) + (1 − p_f)q_f, with p_f and q_f the frequencies of f among positive
    and negative rows. Ham is modular, so Ham(S) is the sum of these over S.
    """
    n_positive = int(positive.sum())
    n_negative = B.n_rows - n_positive
    p = B.feature_counts(positive) / n_positive
    q = B.feature_counts(~positive) / n_negative
    return p * (1.0 - q) + (1.0 - p) * q
