"""Readers: numpy arrays, pandas and polars DataFrames as a list of columns.

:func:`_read_columns` gives :class:`~privtab.table.TableEncoder` one uniform view of
its input (name, values, missing mask, dtype kind) whatever the frame library.

Core kernels called: none (pure Python and NumPy).
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from privtab._validation import frame_kind, to_numpy_2d

if TYPE_CHECKING:
    pass  # scikit-learn >= 1.6


def _as_object_array(values: Any) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = list(values)
    return array


# Reading columns out of numpy / pandas / polars --------------------------------------
@dataclass
class _Column:
    name: Hashable
    values: np.ndarray  # original values (numeric dtype or object)
    missing: np.ndarray  # bool mask
    kind: str  # "numeric", "bool" or "categorical"
    dtype_categories: list[Any] | None = None  # categories fixed by the dtype
    dtype_declared: bool = False  # the dtype's categories are a declaration


def _read_columns(X: Any) -> tuple[str, list[_Column]]:
    kind = frame_kind(X)
    if kind != "numpy" and 0 in X.shape:
        to_numpy_2d(X, "X")  # raises the same message as for an empty array
    if kind == "pandas":
        columns = [
            _pandas_column(name, X.iloc[:, j]) for j, name in enumerate(X.columns)
        ]
        if len({c.name for c in columns}) != len(columns):
            raise ValueError(f"X has duplicate column names: {list(X.columns)!r}")
    elif kind == "polars":
        columns = [_polars_column(s) for s in X.get_columns()]
    else:
        columns = _numpy_columns(X)
    return kind, columns


def _pandas_column(name: Hashable, s: pd.Series) -> _Column:
    dtype = s.dtype
    missing = np.asarray(pd.isna(s), dtype=bool)
    if isinstance(dtype, pd.CategoricalDtype):
        values = s.to_numpy(dtype=object)
        return _Column(name, values, missing, "categorical", list(dtype.categories))
    if pd.api.types.is_bool_dtype(dtype):
        return _Column(name, s.to_numpy(dtype=object), missing, "bool")
    if pd.api.types.is_complex_dtype(dtype):
        raise ValueError(
            f"column {name!r} of X has dtype {dtype}. Complex data not supported: "
            "privtab needs real values or categories"
        )
    if pd.api.types.is_numeric_dtype(dtype):
        values = s.to_numpy(dtype=np.float64, na_value=np.nan)
        return _Column(name, values, missing, "numeric")
    return _Column(name, s.to_numpy(dtype=object), missing, "categorical")


def _polars_column(s: Any) -> _Column:
    import polars as pl

    missing = s.is_null().to_numpy()
    dtype = s.dtype
    if dtype == pl.Boolean:
        return _Column(s.name, _as_object_array(s.to_list()), missing, "bool")
    if dtype.is_numeric():
        if dtype.is_float():
            missing = missing | s.is_nan().fill_null(False).to_numpy()
        values = s.cast(pl.Float64).to_numpy()
        return _Column(s.name, np.asarray(values, dtype=np.float64), missing, "numeric")
    values = _as_object_array(s.to_list())
    if isinstance(dtype, pl.Enum):
        cats = dtype.categories.to_list()
        return _Column(
            s.name, values, missing, "categorical", cats, dtype_declared=True
        )
    return _Column(s.name, values, missing, "categorical")


def _numpy_columns(X: Any) -> list[_Column]:
    array = to_numpy_2d(X, "X")
    if np.iscomplexobj(array):
        # ValueError, as in scikit-learn, whose users catch it for complex input.
        raise ValueError(
            f"X has dtype {array.dtype}. Complex data not supported: privtab needs "
            "real values or categories"
        )
    columns = []
    for j in range(array.shape[1]):
        name = f"x{j}"
        col = array[:, j]
        if array.dtype == np.bool_:
            columns.append(
                _Column(name, col.astype(object), np.zeros(len(col), bool), "bool")
            )
        elif np.issubdtype(array.dtype, np.number):
            values = col.astype(np.float64)
            columns.append(_Column(name, values, np.isnan(values), "numeric"))
        else:
            values = col.astype(object)
            missing = np.asarray(pd.isna(values), dtype=bool)
            columns.append(_Column(name, values, missing, "categorical"))
    return columns


# The columns of a partition against its DataFrame's schema ----------------------------
#: What a column holds, by pandas' reading of an object column's values.
_VALUE_KINDS: dict[str, str | None] = {
    "empty": None,
    "string": "string",
    "bytes": "string",
    "boolean": "boolean",
    "integer": "numeric",
    "floating": "numeric",
    "mixed-integer-float": "numeric",
    "decimal": "numeric",
}


def _dtype_kind(dtype: Any) -> str:
    """Say what a column of ``dtype`` holds: string, numeric, boolean, categorical...

    Integers and floats are both numeric: a column of integer codes with a missing
    value is read as floats, and the encoder codes either alike. An object dtype is
    taken as strings, as Dask declares a column of strings.
    """
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_numeric_dtype(dtype):
        return "numeric"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "timedelta"
    return "string"


def _column_kind(column: pd.Series) -> str | None:
    """Say what ``column`` holds, as :func:`_dtype_kind`, or None if nothing.

    An object column is judged by its values; a column of missing values only holds
    nothing, whatever its dtype.
    """
    if column.isna().all():
        return None
    if pd.api.types.is_object_dtype(column.dtype):
        return _VALUE_KINDS.get(pd.api.types.infer_dtype(column, skipna=True), "mixed")
    return _dtype_kind(column.dtype)


def check_partition_schema(frame: pd.DataFrame, schema: pd.Series) -> None:
    """Check that a partition's columns hold what its Dask DataFrame's schema says.

    ``schema`` holds the dtypes of the DataFrame (its ``dtypes``, Dask's reading of
    the first file or of the dataset's metadata). A column whose dtype differs must
    still be of the same kind (:func:`_dtype_kind`): integers where the schema has
    floats, or booleans with a missing value in an object column, are accepted;
    strings where it has numbers are not.

    Raises
    ------
    TypeError
        If a column of ``frame`` holds another kind of value than ``schema`` says,
        naming the column and both kinds.
    """
    for name, dtype in frame.dtypes.items():
        declared = schema.get(name)
        if declared is None or dtype == declared:
            continue
        kind = _column_kind(frame[name])
        expected = _dtype_kind(declared)
        if kind is not None and kind != expected:
            raise TypeError(
                f"column {name!r} is {_kind_and_dtype(kind, dtype)} in this partition "
                f"but {_kind_and_dtype(expected, declared)} in the schema of the Dask "
                "DataFrame; every partition must hold the column types of the "
                "schema: write the files with the same types, or cast the column with "
                "astype"
            )


def _kind_and_dtype(kind: str, dtype: Any) -> str:
    return kind if str(dtype) == kind else f"{kind} ({dtype})"


# The encoder -------------------------------------------------------------------------
def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(
        value, bool | np.bool_
    )
