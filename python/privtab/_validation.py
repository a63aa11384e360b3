"""Input checks shared by every public function: the one place privtab validates input.

Each check names the argument and the offending value, and never repairs input silently:
NaN, infinities, ragged or empty data and wrong dtypes are errors. Scalars and options
(:func:`check_epsilon`, :func:`check_threads`, ...), code matrices and vectors
(:func:`as_code_columns`, :func:`as_code_matrix`, :func:`as_code_vector`), keys,
labels (:func:`check_labels`, :func:`as_binary_labels`), ledger labels
(:func:`check_ledger_label`), the warnings for what was read off the data instead of
declared (:func:`warn_user`, :func:`warn_inferred_domain`), and scikit-learn's
feature-name rules through its public API (:func:`validate_data`,
:func:`feature_names_out`).

Core kernels called: none (NumPy and scikit-learn checks before any kernel runs).
"""

from __future__ import annotations

import math
import numbers
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from privtab import _core
from privtab.exceptions import DomainError, PrivacyLeakWarning

__all__ = [
    "CORE_CODE_DTYPES",
    "as_binary_labels",
    "as_cardinalities",
    "as_code_columns",
    "as_code_matrix",
    "as_code_vector",
    "as_column_indices",
    "as_float_array",
    "as_int_array",
    "as_keys",
    "cell_at",
    "check_bool",
    "check_cardinalities",
    "check_choice",
    "check_epsilon",
    "check_finite",
    "check_keys_in_domain",
    "check_labels",
    "check_ledger_label",
    "check_limits",
    "check_n_features",
    "check_not_empty",
    "check_positive",
    "check_positive_int",
    "check_real",
    "check_real_matrix",
    "check_threads",
    "check_unit_interval",
    "code_columns",
    "column_label",
    "column_labels",
    "feature_names_out",
    "first_non_number",
    "infer_code_columns",
    "is_encoded",
    "show_value",
    "to_numpy_2d",
    "validate_data",
    "validate_float_data",
    "warn_inferred_domain",
    "warn_user",
]


try:  # scikit-learn >= 1.6: the public function
    from sklearn.utils.validation import validate_data
except ImportError:  # pragma: no cover - older scikit-learn

    def validate_data(
        _estimator: Any,
        /,
        X: Any = "no_validation",
        y: Any = "no_validation",
        reset: bool = True,
        validate_separately: Any = False,
        skip_check_array: bool = False,
        **check_params: Any,
    ) -> Any:
        """``sklearn.utils.validation.validate_data`` for scikit-learn < 1.6."""
        return _estimator._validate_data(
            X,
            y,
            reset=reset,
            validate_separately=validate_separately,
            cast_to_ndarray=not skip_check_array,
            **check_params,
        )


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


# Where a value is, and what to do about it --------------------------------------------
#: The fix for a missing value in data that cannot have one.
MISSING_FIX = "drop or impute the missing values first"
#: What codes are, for an error about one that is not.
CODES_FIX = (
    "the codes of a column run from 0 to its cardinality - 1; declare the "
    "cardinalities, or let privtab.TableEncoder make the codes"
)
#: The fix for text where numbers are expected.
NUMBERS_FIX = (
    "encode categorical columns with privtab.TableEncoder; convert numbers stored as "
    "text with pandas.to_numeric"
)
#: The fix for raw categories where integer codes are expected.
ENCODE_FIX = (
    "categories must be integer codes: encode them with privtab.TableEncoder "
    "(declaring their domains), which returns the codes and their cardinalities"
)


def column_labels(X: Any) -> list[Any] | None:
    """Return the column names of a pandas or polars frame, ``None`` for anything else.

    Messages name a frame's columns by name (:func:`cell_at`), an array's by position.
    """
    if frame_kind(X) == "numpy":
        return None
    return list(X.columns)


def column_label(column: int, labels: Sequence[Any] | None) -> str:
    """Return a column as messages name it: ``'age'`` (frame) or ``2`` (array)."""
    return repr(labels[column]) if labels is not None else str(column)


def cell_at(index: Sequence[int], labels: Sequence[Any] | None = None) -> str:
    """Where an entry is, for a message: `` at row 3``, `` at row 3, column 'age'``.

    ``index`` is the entry's index in a 1-D or 2-D array; higher dimensions are shown
    as the index, and a 0-D array's only entry as nothing.
    """
    position = tuple(int(i) for i in index)
    if len(position) == 1:
        return f" at row {position[0]}"
    if len(position) == 2:
        return f" at row {position[0]}, column {column_label(position[1], labels)}"
    return f" at index {position}" if position else ""


def show_value(value: Any) -> str:
    """Return a data value for a message: NaN and infinities spelled out, else repr."""
    if isinstance(value, float | np.floating) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return repr(value.item() if isinstance(value, np.generic) else value)


def _first(mask: np.ndarray) -> tuple[int, ...]:
    """Index of the first ``True`` entry of ``mask`` in C order."""
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), mask.shape))


def first_non_number(array: np.ndarray) -> tuple[tuple[int, ...], Any] | None:
    """Index and value of the first entry of an object array that is not a real number.

    ``None`` when every entry is one (bools are not).
    """
    for flat, value in enumerate(array.ravel().tolist()):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return tuple(int(i) for i in np.unravel_index(flat, array.shape)), value
    return None


def _missing_at(array: np.ndarray) -> tuple[int, ...] | None:
    """Index of the first NaN or ``None`` of an object array, or ``None``."""
    for flat, value in enumerate(array.ravel().tolist()):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return tuple(int(i) for i in np.unravel_index(flat, array.shape))
    return None


# Scalars and options ------------------------------------------------------------------
def check_real(value: Any, name: str) -> float:
    """Return ``value`` as a float if it is a real number (``bool`` excluded).

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def check_positive(value: Any, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number > 0.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (``bool`` included).
    ValueError
        If it is NaN, infinite, zero or negative.
    """
    value = check_real(value, name)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return value


def check_unit_interval(
    value: Any, name: str, *, low_closed: bool = False, high_closed: bool = False
) -> float:
    """Return ``value`` as a float if it lies in the unit interval (ends as given).

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If it is outside ``[0, 1]``, NaN, or on an open end.
    """
    number = check_real(value, name)
    above = number >= 0.0 if low_closed else number > 0.0
    below = number <= 1.0 if high_closed else number < 1.0
    if not (above and below):
        interval = f"{'[' if low_closed else '('}0, 1{']' if high_closed else ')'}"
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return number


def check_bool(value: Any, name: str) -> bool:
    """Return ``value`` as a bool if it is one (``numpy.bool_`` included)."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


#: Deprecated spellings of an option's value, and the value they stand for: ``"raise"``
#: is the one word for refusing bad data (``missing``, ``out_of_bounds``,
#: ``non_numeric``).
DEPRECATED_CHOICES = {"error": "raise"}


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of the strings ``choices``.

    A deprecated spelling of one of them (:data:`DEPRECATED_CHOICES`) is accepted
    with a ``FutureWarning`` at the user's line and returned as the choice it stands
    for.
    """
    canonical = DEPRECATED_CHOICES.get(value) if isinstance(value, str) else None
    if canonical is not None and canonical in choices and value not in choices:
        warn_user(
            f"{name}={value!r} is deprecated and will be removed in a future version: "
            f"pass {name}={canonical!r}, which does the same",
            FutureWarning,
        )
        return canonical
    if not isinstance(value, str) or value not in choices:
        raise ValueError(
            f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}"
        )
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


def check_threads(n_threads: Any) -> int | None:
    """Return ``n_threads`` (``None``: all cores) as an int >= 1 or ``None``."""
    if n_threads is None:
        return None
    return check_positive_int(n_threads, "n_threads")


def check_n_features(n_features: Any, n_columns: int) -> int:
    """Return ``n_features`` as an int in ``[1, n_columns]``."""
    k = check_positive_int(n_features, "n_features")
    if k > n_columns:
        raise ValueError(
            f"n_features must be <= the number of columns of X ({n_columns}), got {k}"
        )
    return k


def check_limits(max_sets: Any, time_limit: Any) -> None:
    """Check the optional limits of a maximal-set enumeration."""
    if max_sets is not None and (
        isinstance(max_sets, bool | np.bool_)
        or not isinstance(max_sets, numbers.Integral)
    ):
        raise TypeError(
            f"max_sets must be an int or None, got {type(max_sets).__name__}"
        )
    if max_sets is not None and int(max_sets) < 1:
        raise ValueError(f"max_sets must be >= 1, got {max_sets}")
    if time_limit is not None and (
        isinstance(time_limit, bool | np.bool_)
        or not isinstance(time_limit, numbers.Real)
    ):
        raise TypeError(
            f"time_limit must be a number of seconds or None, got {type(time_limit).__name__}"
        )
    if time_limit is not None and not (
        math.isfinite(time_limit) and float(time_limit) >= 0
    ):
        raise ValueError(f"time_limit must be finite and >= 0, got {time_limit}")


def as_column_indices(
    indices: Any, name: str, n_columns: int, *, distinct: bool = False
) -> list[int]:
    """Return a sequence of column indices as ints in ``[0, n_columns)``, in order.

    Raises
    ------
    TypeError
        If ``indices`` is a string, not a sequence, or holds anything but integers.
    ValueError
        If it is not 1-D, an index is out of range or, with ``distinct``, repeated.
    """
    if isinstance(indices, str | bytes) or not isinstance(
        indices, Sequence | np.ndarray | range
    ):
        raise TypeError(
            f"{name} must be a sequence of column indices, got {type(indices).__name__}"
        )
    array = np.asarray(indices)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {array.shape}")
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(
            f"{name} must hold integer column indices, got dtype {array.dtype}"
        )
    values = [int(j) for j in array]
    bad = [j for j in values if not 0 <= j < n_columns]
    if bad:
        raise ValueError(
            f"{name} has the column index {bad[0]}, out of range for {n_columns} columns"
        )
    if distinct and len(set(values)) != len(values):
        twice = next(j for i, j in enumerate(values) if j in values[:i])
        raise ValueError(
            f"{name} has the column index {twice} twice; a subset has distinct indices"
        )
    return values


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
    refuse_lazy_frame(X, name)
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


def refuse_lazy_frame(X: Any, name: str) -> None:
    """Refuse a polars ``LazyFrame``, saying how to pass its rows.

    A query is not a table: collecting it is the caller's choice of when (and
    whether) to run it and hold its rows in memory.
    """
    polars = sys.modules.get("polars")
    if polars is not None and isinstance(X, polars.LazyFrame):
        raise TypeError(
            f"{name} is a polars LazyFrame, which privtab does not run; pass its "
            f"rows as a DataFrame: {name}.collect()"
        )


def _is_sparse(X: Any) -> bool:
    # Without scipy.sparse imported, X cannot be one of its matrices.
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(X))


def _is_sequence(value: Any) -> bool:
    return isinstance(value, list | tuple | np.ndarray)


def check_not_empty(n_rows: int, n_features: int, name: str) -> None:
    """Raise a ``ValueError`` naming ``name`` if a matrix has no rows or no columns."""
    if n_rows == 0 or n_features == 0:
        raise ValueError(
            f"{name} must be non-empty, got shape ({n_rows}, {n_features})"
        )


def as_float_array(
    values: Any,
    name: str,
    *,
    ndim: int | None = None,
    contiguous: bool = True,
    finite: bool = True,
    non_empty: bool = False,
    columns: Sequence[Any] | None = None,
) -> np.ndarray:
    """Return ``values`` as a float64 array with only finite entries.

    C-contiguous unless ``contiguous=False`` (then the input's layout is kept, so a
    Fortran-ordered table is not copied); ``ndim`` checks the number of dimensions,
    ``non_empty`` that there is at least one value. ``finite=False`` leaves the
    finiteness check (a full pass over the data) to a caller whose kernel rejects NaN and
    infinities itself; it calls :func:`check_finite` to name the bad value when the
    kernel fails. ``columns`` names the columns of a table in messages (see
    :func:`column_labels`).
    """
    try:
        array = np.asarray(values)
    except ValueError as exc:
        raise ValueError(f"{name} is ragged or not array-like: {exc}") from exc
    if array.dtype == object or not (
        np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_
    ):
        raise _non_number_error(array, name, columns)
    if np.iscomplexobj(array):
        raise TypeError(f"{name} must be real, got dtype {array.dtype}")
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {array.shape}")
    if non_empty and array.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {array.shape}")
    if contiguous:
        array = np.require(array, dtype=np.float64, requirements=["C", "A"])
    else:
        array = np.asarray(array, dtype=np.float64)
    if finite:
        check_finite(array, name, columns)
    return array


def _non_number_error(
    array: np.ndarray, name: str, columns: Sequence[Any] | None
) -> TypeError:
    """Return the ``TypeError`` for a non-numeric array, naming its first non-number."""
    found = first_non_number(array) if array.dtype == object else None
    if found is None and array.size and array.dtype.kind in "USV":
        found = (_first(np.ones(array.shape, dtype=bool)), array.flat[0])
    if found is None:
        return TypeError(f"{name} must be numeric, got dtype {array.dtype}")
    index, value = found
    text = isinstance(value, str | bytes | np.str_)
    got = (
        f"dtype {array.dtype}: {show_value(value)}"
        if array.dtype != object
        else f"the string {show_value(value)}"
        if text
        else f"{type(value).__name__} {show_value(value)}"
    )
    hint = f" ({NUMBERS_FIX})" if text else ""
    return TypeError(
        f"{name} must be numeric, got {got}{cell_at(index, columns)}{hint}"
    )


def check_finite(
    array: np.ndarray,
    name: str,
    columns: Sequence[Any] | None = None,
    *,
    what: str = "values",
) -> None:
    """Raise a ``ValueError`` naming ``name`` and its first NaN or infinity, and where.

    ``columns`` names the columns of a 2-D table (a frame's names, see
    :func:`column_labels`); ``what`` the entries (``"values"``, ``"codes"``).
    """
    finite = np.isfinite(array)
    if not finite.all():
        index = _first(~finite)
        bad = array[index]
        fix = f": {MISSING_FIX}" if np.isnan(bad) else ""
        raise ValueError(
            f"{name} must contain only finite {what} (no NaN or infinity), found "
            f"{show_value(bad)}{cell_at(index, columns)}{fix}"
        )


def check_real_matrix(
    X: Any, name: str = "X", *, min_rows: int = 1, needs: str = ""
) -> int:
    """Check that ``X`` is a 2-D table of finite real numbers, before scikit-learn does.

    For the estimators validated by scikit-learn (:func:`validate_float_data`), which
    turns numeric strings into floats (a silent repair), reports 1-D input and
    complex numbers without naming the argument, and NaN without naming the cell.
    Object cells must be real numbers (scikit-learn's own checks pass them). Sparse
    input is left to the caller. ``min_rows`` is the fewest rows the caller can fit
    on, and ``needs`` says who needs them and why (``"DPFSDR needs ... because
    ..."``).

    Returns the number of rows.

    Raises
    ------
    TypeError
        For strings or bytes, named with their row and column.
    ValueError
        For input that is not 2-D or is empty (:func:`to_numpy_2d`), for NaN or
        infinities (:func:`check_finite`), and for complex numbers (scikit-learn's
        wording, "Complex data not supported").
    """
    if _is_sparse(X):
        return int(X.shape[0])
    columns = column_labels(X)
    array = to_numpy_2d(X, name)
    if array.shape[0] < min_rows:
        count = (
            f"{array.shape[0]} row (1 sample)"
            if array.shape[0] == 1
            else (f"{array.shape[0]} rows")
        )
        raise ValueError(
            f"{name} has {count}, but {needs or f'at least {min_rows} are needed'}"
        )
    if array.dtype.kind in "USV":
        raise _non_number_error(array, name, columns)
    cells = array.ravel() if array.dtype == object else array[:0, 0]
    if array.dtype.kind == "c" or any(isinstance(v, complex) for v in cells):
        raise ValueError(f"Complex data not supported: {name} holds complex numbers")
    if array.dtype == object:
        missing = _missing_at(array)
        if missing is not None:
            raise ValueError(
                f"{name} must contain only finite values (no NaN or infinity), found "
                f"NaN{cell_at(missing, columns)}: {MISSING_FIX}"
            )
        if any(isinstance(v, str | bytes) for v in cells):
            raise _non_number_error(array, name, columns)
    elif array.dtype.kind == "f":
        check_finite(array, name, columns)
    return int(array.shape[0])


def as_int_array(values: Any, name: str) -> np.ndarray:
    """Return ``values`` as a C-contiguous int64 array; floats must be whole numbers.

    Errors name the first bad entry and its row (raw categories are told to use
    :class:`~privtab.TableEncoder`).
    """
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
        check_finite(array, name)
        whole = array == np.round(array)
        if not whole.all():
            index = _first(~whole)
            raise TypeError(
                f"{name} must hold integers, got non-integral floats: "
                f"{show_value(array[index])}{cell_at(index, None)}"
            )
        if array.size and float(np.abs(array).max()) >= 2.0**63:
            raise ValueError(f"{name} has values outside the int64 range")
        return np.require(array, dtype=np.int64, requirements=["C", "A"])
    raise _non_integer_error(array, name, None)


def _non_integer_error(
    array: np.ndarray, name: str, columns: Sequence[Any] | None, what: str = "integers"
) -> TypeError | ValueError:
    """Return the error for codes or integers of the wrong dtype, with the fix.

    Names the first entry that is not an integer, and where it is; raw categories
    (strings) are told to use :class:`~privtab.TableEncoder`.
    """
    found = None
    if array.dtype == object:
        for flat, value in enumerate(array.ravel().tolist()):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                found = (
                    tuple(int(i) for i in np.unravel_index(flat, array.shape)),
                    value,
                )
                break
    elif array.size and array.dtype.kind in "USV":
        found = (_first(np.ones(array.shape, dtype=bool)), array.flat[0])
    if found is None:
        return TypeError(f"{name} must hold {what}, got dtype {array.dtype}")
    index, value = found
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    if missing:
        return ValueError(
            f"{name} must contain only finite {what} (no NaN or infinity), found "
            f"NaN{cell_at(index, columns)}: {MISSING_FIX}"
        )
    hint = f" ({ENCODE_FIX})" if isinstance(value, str | bytes | np.str_) else ""
    return TypeError(
        f"{name} must hold {what}, got dtype {array.dtype}: "
        f"{show_value(value)}{cell_at(index, columns)}{hint}"
    )


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


def as_cardinalities(cardinalities: Any) -> np.ndarray:
    """Return a non-empty 1-D sequence of cardinalities as ``uint32``, each >= 1."""
    array = np.asarray(cardinalities)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(
            f"cardinalities must be a non-empty 1-D sequence, got shape {array.shape}"
        )
    return check_cardinalities(array, array.shape[0])


def is_encoded(X: Any) -> bool:
    """Whether ``X`` is an :class:`~privtab.EncodedTable` (codes with declared domains)."""
    return hasattr(X, "codes") and hasattr(X, "cardinalities")


#: Packages whose frames a warning skips to reach the user's line: privtab itself, and
#: scikit-learn and joblib when they call a fit (a Pipeline, cross_val_score,
#: GridSearchCV).
_LIBRARY_PACKAGES = ("privtab", "sklearn", "joblib")


def _library_directories() -> tuple[str, ...]:
    """Return the source directories of the :data:`_LIBRARY_PACKAGES` imported."""
    directories = []
    for name in _LIBRARY_PACKAGES:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            directories.append(os.path.dirname(path) + os.sep)
    return tuple(directories)


def _user_stacklevel() -> int:
    """Return the ``stacklevel`` of the first frame outside privtab and scikit-learn.

    Counted as :func:`warnings.warn` counts it when called by the caller of this
    function: 1 is that caller. A package not imported has no frame on the stack.
    """
    skipped = _library_directories()
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(skipped):
        frame = frame.f_back
        level += 1
    return level


def warn_user(message: str, category: type[Warning]) -> None:
    """Warn at the line of the user's code (a :class:`PrivacyLeakWarning`, say).

    The warning is attributed to the first caller outside privtab, scikit-learn and
    joblib, so a fit run by a ``Pipeline``, ``cross_val_score`` or ``GridSearchCV``
    names the line that started it, as a direct call does, whatever the calls in
    between.
    """
    warnings.warn(message, category, stacklevel=_user_stacklevel())


def warn_inferred_domain(what: str, *, owner: str = "", remedy: str = "") -> None:
    """Warn that cardinalities were read off the private data instead of declared.

    ``what`` names them (``"cardinalities"``, ``"cardinalities of X"``); ``owner``
    (an estimator's name) prefixes the message; ``remedy`` says how to declare them
    (by default: declare them or pass an ``EncodedTable``).
    """
    who = f"{owner}: " if owner else ""
    fix = remedy or "declare them or pass an EncodedTable"
    warn_user(
        f"{who}{what} were inferred from the data (largest code + 1 per column), so "
        f"the domain is not covered by the privacy guarantee; {fix}",
        PrivacyLeakWarning,
    )


def check_ledger_label(label: Any) -> str | None:
    """Return a ledger label: a non-empty ``str``, or ``None`` for the default one."""
    if label is None:
        return None
    if not isinstance(label, str):
        raise TypeError(
            f"label must be a str or None, got {type(label).__name__}: {label!r}"
        )
    if not label.strip():
        raise ValueError(f"label must not be blank, got {label!r}")
    return label


def _integer_codes(
    X: Any, name: str, cardinalities: Any
) -> tuple[np.ndarray, Any, list[Any] | None]:
    """Check that a code matrix holds integers; its values are left to the caller.

    Unwraps an ``EncodedTable`` (its cardinalities unless others are given), turns
    bools into ``uint8`` (a view) and whole floats in ``[0, 2**32)`` into ``uint32``,
    and rejects objects, strings, NaN, infinities, fractions and other floats, naming
    the first bad cell (raw categories are told to use
    :class:`~privtab.TableEncoder`). Returns the array, the cardinalities as given
    (possibly ``None``) and the column names of a frame (:func:`column_labels`).
    """
    if is_encoded(X):
        if cardinalities is None:
            cardinalities = X.cardinalities
        X = X.codes
    labels = column_labels(X)
    if frame_kind(X) == "pandas":
        categorical = [c for c in X.columns if str(X[c].dtype) == "category"]
        if categorical:
            raise TypeError(
                f"{name} has pandas categorical columns {categorical!r}: pass integer "
                f"codes ({name}[column].cat.codes, with the categories as the "
                "cardinality), or encode the table with TableEncoder"
            )
    array = to_numpy_2d(X, name)
    if array.dtype == np.bool_:
        return array.view(np.uint8), cardinalities, labels
    if np.issubdtype(array.dtype, np.floating):
        check_finite(array, name, labels, what="codes")
        whole = array == np.round(array)
        if not whole.all():
            index = _first(~whole)
            raise TypeError(
                f"{name} must hold integer codes, got non-integral floats: "
                f"{show_value(array[index])}{cell_at(index, labels)} ({ENCODE_FIX})"
            )
        # No cardinality admits these codes, and checking them here (the values are
        # read anyway) keeps the conversion exact.
        if array.min() < 0:
            index = _first(array < 0)
            raise ValueError(
                f"{name} must hold codes >= 0, got {show_value(array[index])}"
                f"{cell_at(index, labels)} ({CODES_FIX})"
            )
        if array.max() > np.iinfo(np.uint32).max:
            raise ValueError(f"{name} has a code above 2**32 - 1: {array.max()}")
        return array.astype(np.uint32), cardinalities, labels
    if not np.issubdtype(array.dtype, np.integer):
        raise _non_integer_error(array, name, labels, "integer codes")
    return array, cardinalities, labels


def as_code_columns(
    X: Any, name: str = "X", cardinalities: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a categorical code matrix and return it column-major for the core.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), pandas or polars DataFrame, or
        :class:`~privtab.EncodedTable`
        Integer codes ``0 .. cardinality - 1``.
    name : str
        The argument's name, used in error messages.
    cardinalities : array-like of shape (n_features,), optional
        Public domain sizes. Taken from an ``EncodedTable``; otherwise required
        unless the caller infers them (and warns) with :func:`infer_code_columns`.

    Returns
    -------
    columns : ndarray of shape (n_features, n_samples), uint32, C-contiguous
        Row ``j`` holds the codes of attribute ``j`` (the core's column-major layout).
    cardinalities : ndarray of shape (n_features,), uint32
    """
    array, cardinalities, labels = _integer_codes(X, name, cardinalities)
    if cardinalities is None:
        raise ValueError(f"cardinalities must be given for {name}")
    columns, cards, _ = _checked_code_columns(array, name, cardinalities, labels)
    return columns, cards


def _checked_code_columns(
    array: np.ndarray, name: str, cardinalities: Any, labels: list[Any] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run the value checks of :func:`as_code_columns` on integer codes.

    Returns the core's columns, the cardinalities and the largest code of each column.
    The conversion reads every code once and finds the largest per column in the same
    pass; only when it refuses a code (negative, or above ``2**32 - 1``) is the table
    read again, to name the cell.
    """
    cards = check_cardinalities(cardinalities, array.shape[1])
    try:
        columns, highest = code_columns(array)
    except ValueError:
        _refuse_codes_beyond_uint32(array, name, labels)
        raise
    over = np.flatnonzero(highest >= cards)
    if over.size:
        row, at = np.argwhere(array[:, over] >= cards[over][None, :])[0]
        col = over[at]
        raise ValueError(
            f"{name}[{row}, {col}] = {array[row, col]} is >= cardinality {cards[col]} "
            f"of column {column_label(col, labels)} ({CODES_FIX})"
        )
    return columns, cards, highest


def _refuse_codes_beyond_uint32(
    array: np.ndarray, name: str, labels: list[Any] | None
) -> None:
    """Name the first negative code of ``array``, or its largest above ``2**32 - 1``."""
    if array.dtype.kind != "u" and array.min() < 0:
        index = _first(array < 0)
        raise ValueError(
            f"{name} must hold codes >= 0, got {array[index]}{cell_at(index, labels)} "
            f"({CODES_FIX})"
        )
    highest = array.max()
    if highest > np.iinfo(np.uint32).max:
        raise ValueError(f"{name} has a code above 2**32 - 1: {highest}")


def code_columns(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return integer codes of shape (n, d) as the core's (d, n) ``uint32`` columns.

    The core converts them (``privtab._core.code_columns``), transposing C-ordered codes
    in blocks on every thread and stopping on Ctrl-C. numpy's copy of the transpose
    cannot be stopped, and took 48 s on 2,000,000 x 200 ``uint8`` codes on two loaded
    cores (the core: about 1.5 s). The largest code of every column comes back too,
    read in the same pass: numpy's ``max(axis=0)`` over C-ordered codes took longer
    than counting them (92 ms against 83 ms on 4,000,000 x 4 ``uint8`` codes). Codes
    that already are ``uint32`` columns (an F-ordered array, e.g. the transpose of the
    core's own layout) are returned as a view, not copied. Codes must be >= 0 and below
    2**32.
    """
    array = _core_dtype(array)
    if not array.flags.aligned:
        # E.g. a partition Dask deserialized from a byte stream: the core reads aligned
        # values only.
        array = array.copy(order="K")
    if array.flags.f_contiguous and not array.flags.c_contiguous:
        if array.dtype == np.uint32:
            # Already the core's layout: read in place, only the maxima are computed.
            return array.T, _core.column_maxima(array.T)
        return _core.code_columns(array.T, row_major=False)
    return _core.code_columns(np.ascontiguousarray(array), row_major=True)


def rows_in_place(X: Any) -> np.ndarray | None:
    """Return ``X`` for the core's row-major readers when they can read it in place.

    That is a plain numpy array of integer codes, 2-D, non-empty, C-ordered and
    aligned, in a dtype the core reads (a platform alias is viewed as its own width).
    The readers check every code; anything else returns ``None`` and goes through
    :func:`as_code_columns`.
    """
    if (
        type(X) is not np.ndarray
        or X.ndim != 2
        or X.dtype.kind not in "iu"
        or X.size == 0
        or not (X.flags.c_contiguous and X.flags.aligned)
    ):
        return None
    array = _core_dtype(X)
    return array if array.flags.c_contiguous else None


def infer_code_columns(
    X: Any, name: str = "X", *, warn: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Validate codes whose cardinalities were not declared, and infer them.

    Like :func:`as_code_columns`, with each cardinality taken as the largest code
    + 1. The domain then comes from the private data, so, if ``warn``, a
    :class:`~privtab.exceptions.PrivacyLeakWarning` says so, after the codes are
    validated. ``warn=False`` is for non-private callers, and for estimators that
    have warned already.
    """
    array, _, labels = _integer_codes(X, name, None)
    limit = int(np.iinfo(np.uint32).max)
    columns, _, highest = _checked_code_columns(
        array, name, np.full(array.shape[1], limit, dtype=np.int64), labels
    )
    cards = highest.astype(np.int64) + 1
    if cards.max() > limit:
        raise ValueError(f"{name} has a code above 2**32 - 2: {int(cards.max()) - 1}")
    if warn:
        warn_inferred_domain(f"cardinalities of {name}")
    return columns, cards.astype(np.uint32)


def read_code_columns(
    X: Any, name: str, cardinalities: Any
) -> tuple[np.ndarray, np.ndarray, bool]:
    """In-memory codes as core columns: (columns, cardinalities, whether inferred).

    The cardinalities are :func:`inferred <infer_code_columns>` when none are declared
    and ``X`` is not an :class:`~privtab.EncodedTable`, without a warning: the private
    estimators that call this warn once themselves, the others only validate. Negative
    codes are reported as scikit-learn words it for estimators tagged
    ``positive_only`` ("Negative values in data passed to X").
    """
    inferred = cardinalities is None and not is_encoded(X)
    try:
        if inferred:
            columns, cards = infer_code_columns(X, name, warn=False)
        else:
            columns, cards = as_code_columns(X, name, cardinalities)
    except ValueError as exc:
        if "codes >= 0" not in str(exc):
            raise
        raise ValueError(f"Negative values in data passed to {name}: {exc}") from None
    return columns, cards, inferred


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
    array, cardinalities, _ = _integer_codes(X, name, cardinalities)
    if cardinalities is None:
        raise ValueError(f"cardinalities must be given for {name}")
    cards = check_cardinalities(cardinalities, array.shape[1])
    array = _core_dtype(array)
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        array = np.ascontiguousarray(array)
    return array, cards


def as_keys(keys: Any, *, allow_empty: bool = False) -> np.ndarray:
    """Return mixed-radix keys as a 1-D ``uint64`` array (Python ints kept exact)."""
    try:
        array = np.asarray(keys)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"keys is ragged or not array-like: {exc}") from exc
    if array.dtype.kind == "f" and not isinstance(keys, np.ndarray):
        # NumPy turns Python ints above 2**63 - 1 into floats; keep them exact.
        as_objects = np.asarray(keys, dtype=object)
        if as_objects.ndim == 1 and all(
            isinstance(k, numbers.Integral) for k in as_objects
        ):
            array = as_objects
    if array.ndim != 1:
        raise ValueError(f"keys must be 1-dimensional, got {array.ndim} dimension(s)")
    if array.size == 0:
        if allow_empty:
            return np.zeros(0, dtype=np.uint64)
        raise ValueError("keys must be non-empty")
    if array.dtype == object:
        if not all(
            isinstance(k, numbers.Integral) and not isinstance(k, bool | np.bool_)
            for k in array
        ):
            raise TypeError("keys must hold integers, got dtype object")
        values = [int(k) for k in array]
        if min(values) < 0 or max(values) >= 2**64:
            raise ValueError(
                f"keys must be in [0, 2**64), got min {min(values)}, max {max(values)}"
            )
        return np.array(values, dtype=np.uint64)
    if array.dtype.kind == "u":
        return np.require(array, dtype=np.uint64, requirements=["C", "A"])
    if array.dtype.kind == "i":
        if array.min() < 0:
            raise ValueError(f"keys must be >= 0, got {array.min()}")
        return np.require(array, dtype=np.uint64, requirements=["C", "A"])
    if array.dtype.kind == "f":
        check_finite(array, "keys")
        if not np.all(array == np.round(array)):
            raise TypeError("keys must hold integers, got non-integral floats")
        if array.min() < 0 or array.max() >= 2.0**64:
            raise ValueError(
                f"keys must be in [0, 2**64), got min {array.min()}, max {array.max()}"
            )
        return array.astype(np.uint64)
    raise TypeError(f"keys must hold integers, got dtype {array.dtype}")


def check_keys_in_domain(keys: np.ndarray, cardinalities: Sequence[int]) -> None:
    """Raise :class:`DomainError` if a mixed-radix key is outside the domain's cells."""
    size = math.prod(int(k) for k in cardinalities)
    if keys.size and int(keys.max()) >= size:
        raise DomainError(
            f"keys has the key {int(keys.max())}, outside the {size} cells of the "
            f"domain (cardinalities {[int(k) for k in cardinalities]})"
        )


def _plain_array(values: Any) -> np.ndarray | None:
    """Return ``values`` as a numpy array, without a copy where it can be viewed.

    A numpy-backed pandas Series is viewed; ``None`` when numpy cannot take
    ``values`` as they are (the general validation then explains why).
    """
    if isinstance(values, np.ndarray):
        return values
    try:
        return np.asarray(values)
    except (ValueError, TypeError):
        return None


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
    plain = _plain_array(values)
    if plain is not None and plain.dtype.kind in "iu":
        array = plain
    elif plain is not None and plain.dtype == np.bool_:
        array = plain.view(np.uint8)
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
        return np.require(_core_dtype(array), requirements=["C", "A"]), cardinality
    return np.require(array, dtype=np.uint32, requirements=["C", "A"]), cardinality


# Labels -------------------------------------------------------------------------------
#: Labels shown in an error message before it is cut short.
_SHOWN_LABELS = 10
_NUMBER_WORDS = {2: "two"}


def _show_labels(values: np.ndarray) -> str:
    """Return up to :data:`_SHOWN_LABELS` labels as a list, with the count if cut."""
    shown = values[:_SHOWN_LABELS].tolist()
    if values.shape[0] <= _SHOWN_LABELS:
        return repr(shown)
    return f"{repr(shown)[:-1]}, ...] ({values.shape[0]} labels)"


def label_array(values: Any, name: str) -> np.ndarray:
    """Return 1-D ``values`` as an array of integer, whole-float or string labels."""
    refuse_lazy_frame(values, name)
    module = type(values).__module__.split(".")[0]
    if module in ("pandas", "polars") and hasattr(values, "to_numpy"):
        values = values.to_numpy()
    elif isinstance(values, set | frozenset):
        values = list(values)
    try:
        array = np.asarray(values)
    except ValueError as exc:
        raise ValueError(f"{name} is ragged or not array-like: {exc}") from exc
    # numpy turns ["a", 1] into strings; keep the labels as they were given.
    if (
        array.dtype.kind in "US"
        and isinstance(values, list | tuple)
        and not all(isinstance(v, str | bytes) for v in values)
    ):
        array = np.asarray(values, dtype=object)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {array.shape}")
    kind = array.dtype.kind
    if kind not in "biufUSO":
        raise TypeError(
            f"{name} must hold integers or strings, got dtype {array.dtype}"
        )
    if kind == "f":
        check_finite(array, name, what="labels")
        whole = array == np.round(array)
        if not whole.all():
            bad = array[~whole][0]
            raise TypeError(
                f"{name} must hold integers or strings, got non-integral floats "
                f"(e.g. {bad})"
            )
    if kind == "O" and array.size:
        # None, and NaN (the one label unequal to itself), in one pass each.
        with np.errstate(invalid="ignore"):
            missing = np.equal(array, np.array(None, dtype=object)) | np.not_equal(
                array, array
            )
        if np.any(missing):
            raise ValueError(
                f"{name} must not contain missing labels (None or NaN), found one"
                f"{cell_at(_first(missing), None)} ({MISSING_FIX})"
            )
    return array


def _infer_labels(array: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Return ``numpy.unique(array, return_inverse=True)`` with uint32 codes.

    Integer and boolean labels with a small range are ranked in O(n + range) without
    sorting; the result is the same.
    """
    if array.dtype.kind in "biu" and array.size:
        low, high = int(array.min()), int(array.max())
        span = high - low + 1
        if span <= max(1 << 16, 4 * array.size) and high <= np.iinfo(np.int64).max:
            shifted = array.astype(np.int64) - low
            present = np.bincount(shifted, minlength=span) > 0
            ranks = (np.cumsum(present) - 1).astype(np.uint32)
            classes = (np.flatnonzero(present) + low).astype(array.dtype)
            return classes, ranks[shifted]
    try:
        classes, inverse = np.unique(array, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"{name} must hold labels of one sortable type: {exc}") from exc
    return classes, np.ascontiguousarray(inverse.ravel(), dtype=np.uint32)


def declared_label_set(
    classes: Any, min_classes: int, n_classes: int | None, owner: str
) -> np.ndarray:
    """Validate a declared label set; return it sorted."""
    if isinstance(classes, str | bytes | numbers.Number):
        raise TypeError(
            f"classes must be an array-like of labels, got {type(classes).__name__}"
        )
    array = label_array(classes, "classes")
    if array.shape[0] == 0:
        raise ValueError("classes must be non-empty, got no labels")
    try:
        unique, counts = np.unique(array, return_counts=True)
    except TypeError as exc:
        raise TypeError(
            f"classes must hold labels of one sortable type: {exc}"
        ) from exc
    if unique.shape[0] != array.shape[0]:
        raise ValueError(
            f"classes must not repeat a label, got duplicates "
            f"{_show_labels(unique[counts > 1])}"
        )
    where = f" for {owner}" if owner else ""
    if n_classes is not None and unique.shape[0] != n_classes:
        raise ValueError(
            f"classes must hold exactly {n_classes} labels{where}, got "
            f"{unique.shape[0]}: {_show_labels(unique)}"
        )
    if unique.shape[0] < min_classes:
        raise ValueError(
            f"classes must hold at least {min_classes} labels{where}, got "
            f"{unique.shape[0]}: {_show_labels(unique)}"
        )
    return unique


def _declared_codes(
    array: np.ndarray, classes: np.ndarray, name: str
) -> tuple[np.ndarray, np.ndarray | None]:
    """Positions of ``array``'s labels in the sorted ``classes``, and a found mask.

    The mask is ``None`` when every label was found.
    """
    k = classes.shape[0]
    exact = array.dtype.kind == "i" or (array.dtype.kind == "u" and array.itemsize <= 4)
    if (
        exact
        and classes.dtype.kind in "iu"
        and k
        and int(classes[0]) > -(2**62)
        and int(classes[-1]) < 2**62
        and int(classes[-1]) - int(classes[0]) == k - 1
    ):
        # Distinct sorted integers without a gap: a label's position is its offset
        # from the first one (no search). The range is checked by two reductions, and
        # the offsets are computed in int64 and cast block by block, with no
        # intermediate table; a mask is only made to name an offending row.
        low, high = int(classes[0]), int(classes[-1])
        if array.shape[0] and (int(array.min()) < low or int(array.max()) > high):
            return np.zeros(array.shape, np.uint32), (array >= low) & (array <= high)
        if low == 0:
            return np.ascontiguousarray(array, dtype=np.uint32), None
        codes = np.empty(array.shape, np.uint32)
        np.subtract(array, np.int64(low), out=codes, dtype=np.int64, casting="unsafe")
        return codes, None
    try:
        index = np.searchsorted(classes, array)
        np.minimum(index, classes.shape[0] - 1, out=index)
        found = np.asarray(classes[index] == array)
        if found.shape != array.shape:  # no elementwise comparison between the types
            found = np.zeros(array.shape, dtype=bool)
    except TypeError:
        # Labels numpy cannot order against the declared ones: look them up instead.
        lookup = {value: i for i, value in enumerate(classes.tolist())}
        try:
            index = np.fromiter(
                (lookup.get(value, -1) for value in array.tolist()),
                dtype=np.int64,
                count=array.shape[0],
            )
        except TypeError as exc:  # an unhashable label, such as a list or a dict
            raise TypeError(f"{name} must hold integers or strings: {exc}") from exc
        found = index >= 0
    return np.ascontiguousarray(index, dtype=np.uint32), found


def check_labels(
    y: Any,
    classes: Any = None,
    *,
    n_rows: int,
    name: str = "y",
    min_classes: int = 1,
    n_classes: int | None = None,
    owner: str = "",
    warn: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Validate class labels and code them against a declared or inferred label set.

    The one place where privtab checks a target ``y``.

    Parameters
    ----------
    y : array-like of shape (n_rows,), pandas or polars Series
        Labels: integers, whole-number floats, booleans or strings (no NaN or None).
    classes : array-like of labels, optional
        The public label set (e.g. from the data's documentation): distinct labels,
        in any order; it is sorted, as :func:`numpy.unique` sorts inferred labels,
        so declaring the labels the data happen to hold changes nothing but the
        warning. Labels no record holds keep their place. ``None`` takes the set
        from ``y`` with :func:`numpy.unique` and, if ``warn``, emits a
        :class:`~privtab.exceptions.PrivacyLeakWarning`.
    n_rows : int
        The number of rows ``y`` must have (one label per row of ``X``).
    name : str, default="y"
        The argument's name, used in messages.
    min_classes : int, default=1
        Fewest classes allowed: in the declared set, or in ``y`` when inferred.
    n_classes : int, optional
        The exact number of classes required (2 for binary estimators).
    owner : str, default=""
        The estimator, named in the warning and in messages about the label count.
    warn : bool, default=True
        Warn when the label set is inferred. ``False`` only for non-private callers.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        The label set, sorted.
    codes : ndarray of uint32, shape (n_rows,)
        The index in ``classes`` of every row's label.

    Raises
    ------
    ValueError
        If ``y`` is missing, not 1-D, of the wrong length, holds NaN or None, has too
        few (or, with ``n_classes``, not exactly that many) classes; if ``classes`` is
        empty, repeats a label or has the wrong size. A label of ``y`` outside the
        declared set raises :class:`~privtab.exceptions.DomainError`, a ``ValueError``.
    TypeError
        If labels are not integers or strings, or cannot be ordered together.

    Notes
    -----
    An inferred label set is not private: a class held by a single record appears in
    ``classes_``, and in the shape of what is released, on one data set and not on its
    neighbour without that record. A declared set is the same on both.

    Examples
    --------
    >>> classes, codes = check_labels(["b", "a", "b"], ["a", "b", "c"], n_rows=3)
    >>> classes.tolist(), codes.tolist()
    (['a', 'b', 'c'], [1, 0, 1])
    """
    declared = check_label_arguments(y, classes, name, min_classes, n_classes, owner)
    array = label_array(y, name)
    if array.shape[0] != n_rows:
        raise ValueError(
            f"{name} has {array.shape[0]} labels, expected {n_rows} (one per row)"
        )
    if declared is not None:
        codes, found = _declared_codes(array, declared, name)
        if found is not None and not found.all():
            row = int(np.argmin(found))
            label = array[row : row + 1].tolist()[0]  # a Python value, for the message
            raise DomainError(
                f"{name} has the label {label!r} at row {row}, which is not "
                f"among the declared classes {_show_labels(declared)}"
            )
        return declared, codes
    inferred, codes = _infer_labels(array, name)
    check_inferred_labels(
        inferred,
        name,
        min_classes=min_classes,
        n_classes=n_classes,
        owner=owner,
        warn=warn,
    )
    return inferred, codes


def check_label_arguments(
    y: Any,
    classes: Any,
    name: str,
    min_classes: int,
    n_classes: int | None,
    owner: str,
) -> np.ndarray | None:
    """Check a declared label set (before the data) and that ``y`` was passed.

    The first step of :func:`check_labels`; returns the declared set, sorted, or
    ``None`` when it is to be inferred.
    """
    declared = (
        None
        if classes is None
        else declared_label_set(classes, min_classes, n_classes, owner)
    )
    if y is None:
        raise ValueError(
            f"this function requires {name} to be passed, but the target {name} is None"
        )
    return declared


def check_inferred_labels(
    inferred: np.ndarray,
    name: str,
    *,
    min_classes: int = 1,
    n_classes: int | None = None,
    owner: str = "",
    warn: bool = True,
) -> None:
    """Check the size of a label set read off the data and warn that it was.

    The inferred-label branch of :func:`check_labels`, shared with engines that
    gather the labels of their partitions; arguments as there.
    """
    count = inferred.shape[0]
    if n_classes is not None and count != n_classes:
        raise ValueError(
            f"{name} must hold exactly {_NUMBER_WORDS.get(n_classes, n_classes)} "
            f"classes, got {count}: "
            f"{_show_labels(inferred)}"
        )
    if count < min_classes:
        got = f"{count} class" if count == 1 else f"{count} classes"
        raise ValueError(
            f"{name} must contain at least {min_classes} classes, got {got}: "
            f"{_show_labels(inferred)}"
        )
    if warn:
        who = f"{owner}: " if owner else ""
        warn_user(
            f"{who}the label set of {name} was inferred from the data ({count} "
            "classes, numpy.unique), so the privacy guarantee does not cover it: a "
            "class held by one record is revealed by classes_. Declare the public "
            "label set with classes=[...]",
            PrivacyLeakWarning,
        )


def as_binary_labels(y: Any, n_rows: int, name: str = "y") -> np.ndarray:
    """Return a binary label vector as a boolean mask of the positive class.

    ``y`` holds exactly two distinct values; the larger one (``1``, ``True``, or the
    later string in sorted order) is the positive class. Both classes must be present,
    since the k-AC utilities (Ham, DistCnt; Zhang et al. 2017) compare positive with negative rows. Validated by
    :func:`check_labels`; for the non-private k-AC methods, so the inferred label set
    raises no warning.
    """
    _, codes = check_labels(y, None, n_rows=n_rows, name=name, n_classes=2, warn=False)
    return codes == 1


# scikit-learn feature names --------------------------------------------------------------
def feature_names_out(estimator: Any, input_features: Any = None) -> np.ndarray:
    """Input feature names for ``get_feature_names_out``, by scikit-learn's rules.

    ``input_features`` when given (it must match ``feature_names_in_`` and have
    ``n_features_in_`` entries), else ``feature_names_in_``, else ``x0, x1, ...``.

    Raises
    ------
    ValueError
        If ``input_features`` disagrees with what the estimator was fitted on.
    """
    names_in = getattr(estimator, "feature_names_in_", None)
    n_features = getattr(estimator, "n_features_in_", None)
    if input_features is not None:
        names = np.asarray(input_features, dtype=object)
        if names_in is not None and not np.array_equal(names_in, names):
            raise ValueError("input_features is not equal to feature_names_in_")
        if n_features is not None and len(names) != n_features:
            raise ValueError(
                "input_features should have length equal to number of features "
                f"({n_features}), got {len(names)}"
            )
        return names
    if names_in is not None:
        return np.asarray(names_in, dtype=object)
    if n_features is None:
        raise ValueError("Unable to generate feature names without n_features_in_")
    return np.asarray([f"x{i}" for i in range(n_features)], dtype=object)


def validate_float_data(
    estimator: Any,
    X: Any,
    y: Any = "no_validation",
    *,
    reset: bool = True,
    min_rows: int = 1,
    needs: str = "",
) -> Any:
    """:func:`validate_data` to float64, after :func:`check_real_matrix` on ``X``.

    ``min_rows`` and ``needs`` as in :func:`check_real_matrix`. Returns what
    :func:`validate_data` returns: ``X``, or ``(X, y)`` when ``y`` is given.
    """
    n_rows = check_real_matrix(X, "X", min_rows=min_rows, needs=needs)
    if not (isinstance(y, str) and y == "no_validation") and y is not None:
        n_labels = len(y) if hasattr(y, "__len__") else None
        if n_labels is not None and n_labels != n_rows:
            raise ValueError(
                f"y has {n_labels} labels, expected {n_rows} (one per row of X)"
            )
        if np.iscomplexobj(np.asarray(y)):
            raise ValueError("Complex data not supported: y holds complex numbers")
    return validate_data(estimator, X, y, dtype=np.float64, reset=reset)


def frame_kind(X: Any) -> str:
    """Return ``"pandas"`` or ``"polars"`` for a data frame, else ``"numpy"``."""
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(X, pandas.DataFrame):
        return "pandas"
    polars = sys.modules.get("polars")
    if polars is not None and isinstance(X, polars.DataFrame):
        return "polars"
    return "numpy"


def check_bounds_pair(
    name: str, pair: Any, *, strict: bool = True
) -> tuple[float, float]:
    """Return the declared domain ``pair`` as finite floats ``(lo, hi)``.

    ``lo < hi`` is required, or ``lo <= hi`` (a single-point domain) when not
    ``strict``; ``name`` (e.g. ``"bounds['age']"``) is named in messages.
    """
    if isinstance(pair, str | bytes) or not isinstance(pair, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a pair (lo, hi), got {type(pair).__name__}")
    if len(pair) != 2:
        raise ValueError(f"{name} must be a pair (lo, hi), got {pair!r}")
    for v in pair:
        if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must hold real numbers, got {type(v).__name__}")
    lo, hi = float(pair[0]), float(pair[1])
    ordered = lo < hi if strict else lo <= hi
    if not (math.isfinite(lo) and math.isfinite(hi) and ordered):
        rule = "lo < hi" if strict else "lo <= hi"
        raise ValueError(f"{name} must be finite with {rule}, got ({lo!r}, {hi!r})")
    return lo, hi
