"""Input checks shared by every public function.

Each check names the argument and the offending value, and never repairs input silently:
NaN, infinities, ragged or empty data and wrong dtypes are errors.
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from typing import Any

import numpy as np

from privtab.exceptions import PrivacyLeakWarning

__all__ = [
    "CORE_CODE_DTYPES",
    "as_code_columns",
    "as_code_matrix",
    "as_code_vector",
    "as_float_array",
    "as_int_array",
    "check_cardinalities",
    "check_epsilon",
    "check_positive",
    "check_positive_int",
    "infer_code_columns",
    "to_numpy_2d",
]


#: Integer dtypes whose codes the core reads in place (native byte order).
CORE_CODE_DTYPES = frozenset(
    np.dtype(t)
    for t in (
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
    )
)


def _core_dtype(array: np.ndarray) -> np.ndarray:
    """Return an integer ``array`` in native byte order with a dtype the core reads."""
    dtype = array.dtype.newbyteorder("=")
    if dtype not in CORE_CODE_DTYPES:  # e.g. platform-specific aliases such as longlong
        dtype = np.dtype(np.int64 if dtype.kind == "i" else np.uint64)
    return array.astype(dtype, copy=False)


def check_positive(value: Any, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number > 0.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (``bool`` included).
    ValueError
        If it is NaN, infinite, zero or negative.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return value


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Validate a privacy parameter: a finite real number > 0."""
    return check_positive(epsilon, name)


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int if it is an integer >= ``minimum``."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def to_numpy_2d(X: Any, name: str = "X") -> np.ndarray:
    """Convert a numpy array, pandas or polars DataFrame to a 2-D numpy array.

    DataFrames keep their cell values (object dtype when columns are mixed).

    Raises
    ------
    TypeError
        For a scipy sparse matrix or array (privtab works on dense codes).
    ValueError
        For ragged, empty or non-2-D input; a 1-D input is told how to reshape.
    """
    if _is_sparse(X):
        raise TypeError(
            f"{name} is a scipy sparse {type(X).__name__}: sparse input is not "
            f"supported, pass a dense array ({name}.toarray())"
        )
    module = type(X).__module__.split(".")[0]
    if module == "pandas" or module == "polars":
        X = X.to_numpy()
    try:
        array = np.asarray(X)
    except ValueError as exc:
        raise ValueError(f"{name} is ragged or not array-like: {exc}") from exc
    if (
        array.dtype == object
        and array.ndim == 1
        and len(array)
        and _is_sequence(array[0])
    ):
        raise ValueError(f"{name} is ragged: its rows have different lengths")
    if array.ndim == 1:
        raise ValueError(
            f"{name} must be 2-dimensional, got 1 dimension(s). Reshape your data "
            f"with {name}.reshape(-1, 1) if it has a single feature or "
            f"{name}.reshape(1, -1) if it holds a single sample"
        )
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional, got {array.ndim} dimension(s)")
    # The wording follows scikit-learn's check_array, which callers may match on.
    n_rows, n_columns = array.shape
    if n_rows == 0:
        raise ValueError(
            f"{name} must be non-empty, got 0 sample(s) (shape={array.shape}) "
            "while a minimum of 1 is required."
        )
    if n_columns == 0:
        raise ValueError(
            f"{name} must be non-empty, got 0 feature(s) (shape={array.shape}) "
            "while a minimum of 1 is required."
        )
    return array


def _is_sparse(X: Any) -> bool:
    # Without scipy.sparse imported, X cannot be one of its matrices.
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(X))


def _is_sequence(value: Any) -> bool:
    return isinstance(value, list | tuple | np.ndarray)


def as_float_array(values: Any, name: str) -> np.ndarray:
    """Return ``values`` as a C-contiguous float64 array with only finite entries."""
    try:
        array = np.asarray(values)
    except ValueError as exc:
        raise ValueError(f"{name} is ragged or not array-like: {exc}") from exc
    if array.dtype == object or not (
        np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_
    ):
        raise TypeError(f"{name} must be numeric, got dtype {array.dtype}")
    if np.iscomplexobj(array):
        raise TypeError(f"{name} must be real, got dtype {array.dtype}")
    array = np.require(array, dtype=np.float64, requirements=["C", "A"])
    if not np.all(np.isfinite(array)):
        bad = array.ravel()[~np.isfinite(array.ravel())][0]
        raise ValueError(f"{name} must contain only finite values, found {bad}")
    return array


def as_int_array(values: Any, name: str) -> np.ndarray:
    """Return ``values`` as a C-contiguous int64 array; floats must be whole numbers."""
    try:
        array = np.asarray(values)
    except ValueError as exc:
        raise ValueError(f"{name} is ragged or not array-like: {exc}") from exc
    if array.dtype == np.bool_:
        array = array.astype(np.int64)
    if np.issubdtype(array.dtype, np.integer):
        if (
            array.dtype == np.uint64
            and array.size
            and array.max() > np.iinfo(np.int64).max
        ):
            raise ValueError(f"{name} has values above 2**63 - 1, got {array.max()}")
        return np.require(array, dtype=np.int64, requirements=["C", "A"])
    if np.issubdtype(array.dtype, np.floating):
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name} must contain only finite values")
        if not np.all(array == np.round(array)):
            raise TypeError(f"{name} must hold integers, got non-integral floats")
        if array.size and float(np.abs(array).max()) >= 2.0**63:
            raise ValueError(f"{name} has values outside the int64 range")
        return np.require(array, dtype=np.int64, requirements=["C", "A"])
    raise TypeError(f"{name} must hold integers, got dtype {array.dtype}")


def check_cardinalities(
    cardinalities: Any, n_columns: int, name: str = "cardinalities"
):
    """Return cardinalities as a uint32 array of length ``n_columns``, each in [1, 2**32)."""
    array = np.asarray(cardinalities)
    if array.ndim != 1 or array.shape[0] != n_columns:
        raise ValueError(
            f"{name} must have one entry per column ({n_columns}), got shape {array.shape}"
        )
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must hold integers, got dtype {array.dtype}")
    if array.size and (array.min() < 1 or array.max() > np.iinfo(np.uint32).max):
        raise ValueError(
            f"{name} must be in [1, 2**32 - 1], got min {array.min()}, max {array.max()}"
        )
    return np.require(array, dtype=np.uint32, requirements=["C"])


def as_code_columns(
    X: Any, name: str = "X", cardinalities: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a categorical code matrix and return it column-major for the core.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), pandas or polars DataFrame, or
        :class:`~privtab.EncodedTable`
        Integer codes ``0 .. cardinality - 1``.
    cardinalities : array-like of shape (n_features,), optional
        Public domain sizes. Taken from an ``EncodedTable``; otherwise required
        unless the caller infers them (and warns) itself.

    Returns
    -------
    columns : ndarray of shape (n_features, n_samples), uint32, C-contiguous
        Row ``j`` holds the codes of attribute ``j`` (the core's column-major layout).
    cardinalities : ndarray of shape (n_features,), uint32
    """
    if hasattr(X, "codes") and hasattr(X, "cardinalities"):
        if cardinalities is None:
            cardinalities = X.cardinalities
        X = X.codes
    array = to_numpy_2d(X, name)
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    if array.dtype == object:
        raise TypeError(f"{name} must hold integer codes, got dtype object")
    if np.issubdtype(array.dtype, np.floating):
        if not np.all(np.isfinite(array)):
            raise ValueError(
                f"{name} must contain only finite codes (found NaN or inf)"
            )
        if not np.all(array == np.round(array)):
            raise TypeError(f"{name} must hold integer codes, got non-integral floats")
    elif not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must hold integer codes, got dtype {array.dtype}")
    if array.min() < 0:
        raise ValueError(f"{name} must hold codes >= 0, got {array.min()}")
    if array.max() > np.iinfo(np.uint32).max:
        raise ValueError(f"{name} has a code above 2**32 - 1: {array.max()}")
    if cardinalities is None:
        raise ValueError(f"cardinalities must be given for {name}")
    cards = check_cardinalities(cardinalities, array.shape[1])
    too_big = array >= cards[None, :]
    if too_big.any():
        row, col = np.argwhere(too_big)[0]
        raise ValueError(
            f"{name}[{row}, {col}] = {array[row, col]} is >= cardinality {cards[col]} "
            f"of column {col}"
        )
    columns = np.ascontiguousarray(array.T, dtype=np.uint32)
    return columns, cards


def infer_code_columns(
    X: Any, name: str = "X", *, stacklevel: int = 2
) -> tuple[np.ndarray, np.ndarray]:
    """Validate codes whose cardinalities were not declared, and infer them.

    Like :func:`as_code_columns`, with each cardinality taken as the largest code
    + 1. The domain then comes from the private data, so a
    :class:`~privtab.exceptions.PrivacyLeakWarning` says so (``stacklevel`` is
    counted from the caller of this function).
    """
    array = to_numpy_2d(X, name)
    limit = int(np.iinfo(np.uint32).max)
    columns, _ = as_code_columns(
        array, name, cardinalities=np.full(array.shape[1], limit, dtype=np.int64)
    )
    cards = columns.max(axis=1).astype(np.int64) + 1
    if cards.max() > limit:
        raise ValueError(f"{name} has a code above 2**32 - 2: {int(cards.max()) - 1}")
    warnings.warn(
        f"cardinalities of {name} were inferred from the data (largest code + 1 per "
        "column), so the domain is not covered by the privacy guarantee; declare "
        "them or pass an EncodedTable",
        PrivacyLeakWarning,
        stacklevel=stacklevel + 1,
    )
    return columns, cards.astype(np.uint32)


def as_code_matrix(
    X: Any, name: str = "X", cardinalities: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Validate the types of a categorical code matrix, leaving its values to the core.

    Unlike :func:`as_code_columns` this makes no pass over the values when they are
    integers: the core kernels range-check them (negative codes included) while they
    read them, and name the first bad row and column.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), pandas or polars DataFrame, or
        :class:`~privtab.EncodedTable`
        Integer codes ``0 .. cardinality - 1`` (bools and whole-number floats are
        accepted and converted).
    name : str
        The argument's name, used in error messages.
    cardinalities : array-like of shape (n_features,), optional
        Public domain sizes. Taken from an ``EncodedTable``; otherwise required.

    Returns
    -------
    codes : ndarray of shape (n_samples, n_features)
        Integer codes of a dtype in :data:`CORE_CODE_DTYPES`, C- or F-contiguous (no
        copy when the input already is).
    cardinalities : ndarray of shape (n_features,), uint32
    """
    if hasattr(X, "codes") and hasattr(X, "cardinalities"):
        if cardinalities is None:
            cardinalities = X.cardinalities
        X = X.codes
    array = to_numpy_2d(X, name)
    if array.dtype == np.bool_:
        array = array.view(np.uint8)
    elif array.dtype == object:
        raise TypeError(f"{name} must hold integer codes, got dtype object")
    elif np.issubdtype(array.dtype, np.floating):
        if not np.all(np.isfinite(array)):
            raise ValueError(
                f"{name} must contain only finite codes (found NaN or inf)"
            )
        if not np.all(array == np.round(array)):
            raise TypeError(f"{name} must hold integer codes, got non-integral floats")
        # Whole floats beyond int64 would wrap in the conversion.
        if array.min() < -(2.0**63):
            raise ValueError(f"{name} must hold codes >= 0, got {array.min()}")
        if array.max() >= 2.0**63:
            raise ValueError(f"{name} has a code above 2**32 - 1: {array.max()}")
        array = array.astype(np.int64)
    elif not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must hold integer codes, got dtype {array.dtype}")
    if cardinalities is None:
        raise ValueError(f"cardinalities must be given for {name}")
    cards = check_cardinalities(cardinalities, array.shape[1])
    array = _core_dtype(array)
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        array = np.ascontiguousarray(array)
    return array, cards


def as_code_vector(
    values: Any,
    name: str,
    cardinality: Any = None,
    cardinality_name: str = "k",
    *,
    native: bool = False,
) -> tuple[np.ndarray, int]:
    """Validate a 1-D vector of integer codes and return it for the core.

    Parameters
    ----------
    values : array-like of shape (n_samples,), pandas or polars Series
        Integer codes ``0 .. cardinality - 1`` (bools and whole-number floats are
        accepted).
    name : str
        The argument's name, used in error messages.
    cardinality : int, optional
        The public number of categories; when ``None`` it is ``max(values) + 1``.
    cardinality_name : str
        The name of the cardinality argument, used in error messages.
    native : bool, default False
        Return integer codes in their own dtype (one of :data:`CORE_CODE_DTYPES`,
        without a copy when possible) rather than as ``uint32``. With a given
        ``cardinality`` the values are then not read at all: the core kernel checks
        them (negative codes included) in its counting pass.

    Returns
    -------
    codes : ndarray of shape (n_samples,), C-contiguous
        ``uint32`` unless ``native``.
    cardinality : int
    """
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        array = values
    elif isinstance(values, np.ndarray) and values.dtype == np.bool_:
        array = values.view(np.uint8)
    else:
        array = as_int_array(values, name)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got {array.ndim} dimension(s)")
    if array.size == 0:
        raise ValueError(f"{name} must be non-empty")
    limit = int(np.iinfo(np.uint32).max)
    if cardinality is None:
        if array.dtype.kind == "i" and int(array.min()) < 0:
            raise ValueError(f"{name} must hold codes >= 0, got {array.min()}")
        high = int(array.max())
        if high >= limit:
            raise ValueError(f"{name} has a code above 2**32 - 2: {high}")
        cardinality = high + 1
    else:
        cardinality = check_positive_int(cardinality, cardinality_name)
        if cardinality > limit:
            raise ValueError(
                f"{cardinality_name} must be <= 2**32 - 1, got {cardinality}"
            )
        if not native:
            if array.dtype.kind == "i" and int(array.min()) < 0:
                raise ValueError(f"{name} must hold codes >= 0, got {array.min()}")
            if array.dtype != np.uint32 and int(array.max()) >= cardinality:
                # uint32 codes are checked by the core, which names the first bad row.
                row = int(np.argmax(array >= cardinality))
                raise ValueError(
                    f"{name}[{row}] = {array[row]} is >= {cardinality_name} = "
                    f"{cardinality}"
                )
    if native:
        return np.ascontiguousarray(_core_dtype(array)), cardinality
    return np.ascontiguousarray(array, dtype=np.uint32), cardinality
