"""The table encoder: mixed-type tables into categorical codes over public domains.

:class:`TableEncoder` codes categorical columns in the order of their declared
categories and scales numeric columns into [0, 1] with declared bounds before cutting
them into equal-width bins (default: Lei's bin count, see
:func:`~privtab.table.lei_bins`).

Core kernels called: none (NumPy; the codes it produces feed ``privtab._core``).
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from privtab._validation import (
    as_code_columns,
    check_bounds_pair,
    check_choice,
    check_positive_int,
    frame_kind,
    warn_user,
)
from privtab.engine import is_distributed, map_rows
from privtab.exceptions import DomainError, PrivacyLeakWarning
from privtab.table._binning import lei_bins
from privtab.table._encoded import EncodedTable
from privtab.table._readers import (
    _as_object_array,
    _Column,
    _is_int,
    _pandas_column,
    _read_columns,
    check_partition_schema,
)

_MAX_CODES = int(np.iinfo(np.uint32).max)
#: What a missing value and a value outside its bounds can do.
_MISSING = ("raise", "category")
_OUT_OF_BOUNDS = ("raise", "clip")

if TYPE_CHECKING:
    from sklearn.utils import Tags  # scikit-learn >= 1.6


class TableEncoder(TransformerMixin, BaseEstimator):
    """Encode a table into categorical codes over public domains.

    Categorical columns are coded ``0 .. cardinality - 1`` in the order of their
    categories; numeric columns are scaled into [0, 1] with their bounds and cut into
    equal-width bins (a value equal to the upper bound goes into the last bin).

    Parameters
    ----------
    domains : dict, optional
        Column → list of categories, in code order. Declares the column categorical
        (whatever its dtype). Keys are column names, or integer positions for numpy
        input (whose columns are called ``"x0", "x1", ...``).
    bins : int or dict, optional
        Number of equal-width bins of the numeric columns: one int for all, or a dict
        column → int (other columns get the default). Default:
        ``lei_bins(n_rows, n_columns)`` with the row count seen by ``fit``.
    bounds : dict, optional
        Column → ``(lo, hi)`` with finite ``lo < hi``. Declares the column numeric.
    missing : {"raise", "category"}, default="raise"
        What a missing value (None, NaN, ``pd.NA``, a polars null) does: raise a
        ``ValueError``, or take an extra category (``"error"``, the old spelling of
        ``"raise"``, still works with a ``FutureWarning``). With ``"category"`` *every* column
        gets that category, as its last code (``cardinality - 1``, shown as ``None`` in
        ``categories_``), whether or not the data has missing values, so that the
        cardinalities do not depend on the data.
    out_of_bounds : {"raise", "clip"}, default="raise"
        What a numeric value outside its bounds does: raise :class:`DomainError`, or
        go into the nearest end bin (``"error"``, the old spelling of ``"raise"``,
        still works with a ``FutureWarning``).

    Attributes
    ----------
    columns_ : list
        Column names, in order.
    n_features_in_ : int
        Number of columns.
    feature_names_in_ : ndarray of shape ``(n_features_in_,)``, dtype object
        Column names, set only when ``fit`` saw a DataFrame whose column names are
        all strings (the scikit-learn convention).
    kinds_ : list of str
        ``"categorical"`` or ``"numeric"`` per column.
    categories_ : list of ndarray
        Per column, what each code stands for: the categories, or for numeric columns
        the midpoints of the bins (then ``None`` for the missing category, if any).
    cardinalities_ : ndarray of shape (n_columns,), int64
        Number of codes per column.
    bounds_ : dict
        Numeric column → ``(lo, hi)``, declared or inferred.
    bin_edges_ : dict
        Numeric column → ndarray of ``bins + 1`` edges.
    n_bins_ : dict
        Numeric column → its number of bins.
    inferred_ : list
        Columns whose categories or bounds were taken from the data.

    Raises
    ------
    ValueError, TypeError
        From ``fit``/``transform`` when a parameter or the data is invalid (the message
        names the parameter or column).
    DomainError
        When a value is outside its column's categories or bounds.

    Warns
    -----
    PrivacyLeakWarning
        From ``fit``, when categories or bounds of some columns are inferred from the
        data (one warning naming them all).

    Notes
    -----
    Differential privacy treats domains as public: the cardinalities and what the codes
    mean must not depend on the records. Declare ``domains`` and ``bounds`` from public
    knowledge (a questionnaire, a codebook); what privtab has to infer from the data is
    itself a release that no privacy guarantee covers, hence the warning. Boolean
    columns have the public domain ``[False, True]`` and polars ``Enum`` columns carry
    declared categories, so neither warns; pandas ``category`` columns do warn unless
    declared, because ``astype("category")`` takes its categories from the data.

    The default number of bins follows Lei (2011) as used by Vinterbo (2012)
    (:func:`lei_bins`); it depends only on the public ``n`` and the number of columns.

    A Dask DataFrame is encoded lazily: ``fit`` reads only its column names and
    dtypes (and its length, for the default bins), so every column must be declared
    in ``domains`` or ``bounds`` (or be boolean); ``transform`` returns an
    ``EncodedTable`` whose codes are a Dask array, each partition encoded where a
    counting method reads it (:mod:`privtab.engine`). An error in a partition names
    it, the Parquet files Dask reads it from (when Dask says), and the column, value
    and row within the partition, in one line; a column whose partition holds
    another kind of value than the DataFrame's dtype says (strings where the
    dtype is numeric; integers and floats are both numeric) is refused as such.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"colour": ["red", "blue", "red"], "age": [20, 64, 35]})
    >>> enc = TableEncoder(domains={"colour": ["red", "green", "blue"]},
    ...                    bounds={"age": (0, 100)}, bins=4)
    >>> table = enc.fit_transform(X)
    >>> table.codes.tolist()
    [[0, 0], [2, 2], [0, 1]]
    >>> table.cardinalities.tolist()
    [3, 4]
    >>> enc.inverse_transform(table)["age"].tolist()
    [12.5, 62.5, 37.5]
    """

    def __init__(
        self,
        domains: Mapping[Hashable, Sequence[Any]] | None = None,
        bins: int | Mapping[Hashable, int] | None = None,
        bounds: Mapping[Hashable, tuple[float, float]] | None = None,
        missing: str = "raise",
        out_of_bounds: str = "raise",
    ) -> None:
        self.domains = domains
        self.bins = bins
        self.bounds = bounds
        self.missing = missing
        self.out_of_bounds = out_of_bounds

    def __sklearn_tags__(self) -> Tags:
        """Describe the encoder to scikit-learn.

        It takes categorical (and string) columns, NaN only with
        ``missing="category"``, and always returns ``uint32`` codes, whatever the
        dtype of ``X``.
        """
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.allow_nan = self.missing == "category"
        tags.transformer_tags.preserves_dtype = []
        return tags

    # Parameter checks --------------------------------------------------------------
    def _check_options(self) -> None:
        # "error", the old spelling of "raise", is accepted with a FutureWarning.
        check_choice(self.missing, "missing", _MISSING)
        check_choice(self.out_of_bounds, "out_of_bounds", _OUT_OF_BOUNDS)

    @staticmethod
    def _resolve(
        mapping: Any, param: str, names: list[Hashable], numpy: bool
    ) -> dict[int, Any]:
        """Map the keys of ``mapping`` (names or numpy positions) to column indices."""
        if mapping is None:
            return {}
        if not isinstance(mapping, Mapping):
            raise TypeError(
                f"{param} must be a dict keyed by column, got {type(mapping).__name__}"
            )
        resolved: dict[int, Any] = {}
        for key, value in mapping.items():
            if key in names:
                index = names.index(key)
            elif numpy and _is_int(key) and 0 <= int(key) < len(names):
                index = int(key)
            else:
                raise ValueError(
                    f"{param} has a key {key!r} that is not a column of X "
                    f"(columns: {names!r})"
                )
            if index in resolved:
                raise ValueError(
                    f"{param} names column {names[index]!r} twice (key {key!r})"
                )
            resolved[index] = value
        return resolved

    @staticmethod
    def _check_domain(name: Hashable, domain: Any) -> np.ndarray:
        if isinstance(domain, str | bytes) or not isinstance(
            domain, Sequence | np.ndarray | pd.Index | pd.Series
        ):
            raise TypeError(
                f"domains[{name!r}] must be a list of categories, "
                f"got {type(domain).__name__}"
            )
        values = _as_object_array(domain)
        if len(values) == 0:
            raise ValueError(f"domains[{name!r}] must not be empty")
        if len(values) > _MAX_CODES:
            raise ValueError(f"domains[{name!r}] has more than 2**32 - 1 categories")
        missing = np.asarray(pd.isna(values), dtype=bool)
        if missing.any():
            raise ValueError(
                f"domains[{name!r}] contains a missing value ({values[missing][0]!r}); "
                "use missing='category' to encode missing values"
            )
        try:
            index = pd.Index(values, dtype=object)
            unique = index.is_unique
        except TypeError as exc:
            raise TypeError(f"domains[{name!r}] has unhashable categories") from exc
        if not unique:
            dup = index[index.duplicated()][0]
            raise ValueError(f"domains[{name!r}] lists the category {dup!r} twice")
        return values

    @staticmethod
    def _check_bins(name: str, value: Any) -> int:
        bins = check_positive_int(value, name)
        if bins > _MAX_CODES - 1:
            raise ValueError(
                f"{name} must be <= 2**32 - 2 (codes are uint32), got {bins}"
            )
        return bins

    # Fitting -----------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None) -> TableEncoder:
        """Learn each column's codes from the declared domains and bounds.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_columns), pandas or polars DataFrame
            The table; rows are records.
        y : ignored
            Accepted for scikit-learn compatibility.

        Returns
        -------
        self : TableEncoder

        Raises
        ------
        ValueError
            For invalid parameters, an empty, ragged or non-2-D table, complex
            data, or, in a column whose categories or bounds are inferred, a missing
            value with ``missing="raise"``, an infinite value or no finite value.
            Columns with declared domains or bounds are checked by ``transform``:
            ``fit`` learns nothing from their values.
        TypeError
            For parameters or columns of the wrong type, sparse input, or a cell that
            cannot be a category (unhashable).

        Warns
        -----
        PrivacyLeakWarning
            When categories or bounds are inferred from ``X``.
        """
        self._fit(X)
        return self

    def _fit(self, X: Any) -> tuple[str, list[_Column]]:
        self._check_options()
        distributed = is_distributed(X)
        kind, columns = _meta_columns(X) if distributed else _read_columns(X)
        names = [c.name for c in columns]
        numpy = kind == "numpy"
        domains = self._resolve(self.domains, "domains", names, numpy)
        bounds = self._resolve(self.bounds, "bounds", names, numpy)
        if self.bins is None or isinstance(self.bins, Mapping):
            bins_map = self._resolve(self.bins, "bins", names, numpy)
            default_bins = None
        else:
            bins_map = {}
            default_bins = self._check_bins("bins", self.bins)
        for j in domains.keys() & bounds.keys():
            raise ValueError(
                f"column {names[j]!r} is in both domains (categorical) and bounds "
                "(numeric); declare it in one of them"
            )

        if distributed:
            _check_declared(columns, domains, bounds)
        n_columns = len(columns)
        n_rows = -1 if distributed else len(columns[0].values)
        add_missing = self.missing == "category"
        kinds: list[str] = []
        categories: list[np.ndarray] = []
        fitted_bounds: dict[Hashable, tuple[float, float]] = {}
        edges: dict[Hashable, np.ndarray] = {}
        n_bins: dict[Hashable, int] = {}
        inferred_categories: list[Hashable] = []
        inferred_bounds: list[Hashable] = []
        for j, col in enumerate(columns):
            numeric = j in bounds or (j not in domains and col.kind == "numeric")
            if j in bins_map and not numeric:
                raise ValueError(
                    f"bins has a key for column {col.name!r}, which is categorical"
                )
            if not numeric:
                if j in domains:
                    cats = self._check_domain(col.name, domains[j])
                elif col.kind == "bool":
                    cats = _as_object_array([False, True])
                elif col.dtype_categories is not None:
                    cats = _as_object_array(col.dtype_categories)
                    if not col.dtype_declared:
                        inferred_categories.append(col.name)
                else:
                    self._check_missing(col)
                    try:
                        cats = _infer_categories(col.values[~col.missing])
                    except TypeError:
                        raise _unhashable_error(col) from None
                    inferred_categories.append(col.name)
                    if len(cats) == 0:
                        raise ValueError(
                            f"column {col.name!r} has only missing values; "
                            "declare its categories in domains"
                        )
                if len(cats) + add_missing > _MAX_CODES:
                    raise ValueError(
                        f"column {col.name!r} has more than 2**32 - 1 categories"
                    )
                kinds.append("categorical")
                categories.append(
                    _as_object_array([*cats, None]) if add_missing else cats
                )
                continue

            values = _as_float(col)
            if j in bounds:
                lo, hi = check_bounds_pair(f"bounds[{col.name!r}]", bounds[j])
            else:
                self._check_missing(col)
                self._check_infinite(col, values)
                finite = values[~col.missing]
                if finite.size == 0:
                    raise ValueError(
                        f"column {col.name!r} has only missing values; "
                        "declare its bounds"
                    )
                lo, hi = float(finite.min()), float(finite.max())
                inferred_bounds.append(col.name)
            if j in bins_map:
                k = self._check_bins(f"bins[{col.name!r}]", bins_map[j])
            elif default_bins is not None:
                k = default_bins
            else:
                if n_rows < 0:
                    n_rows = len(X)  # one pass over a distributed frame
                if n_rows < 2:
                    raise ValueError(
                        "bins must be given when X has fewer than 2 rows: the "
                        "default lei_bins(n_rows, n_columns) needs n_rows >= 2, "
                        f"got n_samples = {n_rows}"
                    )
                k = lei_bins(n_rows, n_columns)
            edge = lo + (hi - lo) * (np.arange(k + 1, dtype=np.float64) / k)
            edge[-1] = hi
            mids = lo + (hi - lo) * ((np.arange(k, dtype=np.float64) + 0.5) / k)
            kinds.append("numeric")
            fitted_bounds[col.name] = (lo, hi)
            edges[col.name] = edge
            n_bins[col.name] = k
            categories.append(_as_object_array([*mids, None]) if add_missing else mids)

        if inferred_categories or inferred_bounds:
            parts = []
            if inferred_categories:
                parts.append(f"categories of {inferred_categories!r}")
            if inferred_bounds:
                parts.append(f"bounds of {inferred_bounds!r}")
            warn_user(
                f"TableEncoder inferred the {' and the '.join(parts)} from the data; "
                "the privacy guarantee does not cover them. Declare domains= and "
                "bounds= from public knowledge instead.",
                PrivacyLeakWarning,
            )

        self.columns_ = names
        self.n_features_in_ = n_columns
        if kind != "numpy" and all(isinstance(n, str) for n in names):
            self.feature_names_in_ = _as_object_array(names)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.kinds_ = kinds
        self.categories_ = categories
        self.cardinalities_ = np.array([len(c) for c in categories], dtype=np.int64)
        self.bounds_ = fitted_bounds
        self.bin_edges_ = edges
        self.n_bins_ = n_bins
        self.inferred_ = inferred_categories + inferred_bounds
        self._input_kind = kind
        return kind, columns

    def _check_missing(self, col: _Column) -> None:
        if self.missing != "category" and col.missing.any():
            row = int(np.flatnonzero(col.missing)[0])
            raise ValueError(
                f"column {col.name!r} has a missing value at row {row} "
                f"({_show(col.values[row])}); pass missing='category' to encode missing "
                "values as an extra category"
            )

    @staticmethod
    def _check_infinite(col: _Column, values: np.ndarray) -> None:
        infinite = np.isinf(values)
        if infinite.any():
            row = int(np.flatnonzero(infinite)[0])
            raise ValueError(
                f"column {col.name!r} has an infinite value at row {row} "
                f"({_show(values[row])}); numeric values must be finite"
            )

    # Transforming ------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "categories_"):
            raise ValueError(
                "this TableEncoder is not fitted yet; call fit(X) before using it"
            )

    def transform(self, X: Any) -> EncodedTable:
        """Encode ``X`` with the fitted categories and bins.

        Parameters
        ----------
        X : ndarray, pandas or polars DataFrame
            Same columns as in ``fit`` (by name for DataFrames, by count for arrays).

        Returns
        -------
        EncodedTable

        Raises
        ------
        ValueError
            If the encoder is not fitted; if ``X`` is empty, not 2-D or complex; if a
            DataFrame's column names differ from ``fit`` or the number of columns
            does (the message gives both); if a value is missing with
            ``missing="raise"``, or a numeric value is infinite.
        TypeError
            For sparse input, or a cell that cannot be a category (unhashable).
        DomainError
            If a category is not in its column's domain, or a numeric value is outside
            its bounds with ``out_of_bounds="raise"``.
        """
        self._check_fitted()
        self._check_options()
        if is_distributed(X):
            kind, columns = _meta_columns(X)
            self._check_columns(kind, [c.name for c in columns])
            return self._transform_distributed(X)
        kind, columns = _read_columns(X)
        self._check_columns(kind, [c.name for c in columns])
        return self._transform(columns)

    def fit_transform(self, X: Any, y: Any = None) -> EncodedTable:
        """Fit on ``X`` and encode it; same as ``fit(X).transform(X)``.

        Raises and warns as :meth:`fit` and :meth:`transform`.
        """
        _, columns = self._fit(X)
        if is_distributed(X):
            return self._transform_distributed(X)
        return self._transform(columns)

    def _transform_distributed(self, X: Any) -> EncodedTable:
        """Encode a Dask DataFrame lazily, partition by partition.

        The table remembers the frame and how its partitions are encoded, so that
        the engine can join labels from the same frame to the rows before encoding
        them, however Dask partitions a projection of the frame.
        """
        schema = X._meta.dtypes
        codes = map_rows(
            _encode_partition,
            X,
            "X",
            self,
            schema,
            dtype=np.uint32,
            width=len(self.columns_),
        )
        table = EncodedTable(
            codes, self.cardinalities_, list(self.columns_), list(self.categories_)
        )
        table._encoded_frame = (X, _encode_partition, (self, schema))
        return table

    def _check_columns(self, kind: str, names: list[Hashable]) -> None:
        """Check the columns of ``X`` against ``fit``: by name, else by count."""
        fitted = self.columns_
        # Arrays (and frames with the default names) are matched by position.
        positional = kind == "numpy" or names == [f"x{j}" for j in range(len(names))]
        if not positional and names != fitted:
            raise ValueError(_names_mismatch(names, fitted))
        if len(names) != len(fitted):
            raise ValueError(
                f"X has {len(names)} features, but {type(self).__name__} is expecting "
                f"{len(fitted)} features as input (fitted on columns {fitted!r})"
            )

    def _transform(self, columns: list[_Column]) -> EncodedTable:
        n_rows = len(columns[0].values)
        codes = np.empty((n_rows, len(columns)), dtype=np.uint32, order="F")
        for j, col in enumerate(columns):
            name = self.columns_[j]
            col.name = name
            if self.kinds_[j] == "categorical":
                codes[:, j] = self._encode_categorical(j, col)
            else:
                codes[:, j] = self._encode_numeric(j, col)
        return EncodedTable(
            codes, self.cardinalities_, list(self.columns_), list(self.categories_)
        )

    def _encode_categorical(self, j: int, col: _Column) -> np.ndarray:
        self._check_missing(col)
        cats = self.categories_[j]
        add_missing = self.missing == "category"
        known = cats[:-1] if add_missing else cats
        codes = np.empty(len(col.values), dtype=np.int64)
        present = ~col.missing
        values = col.values[present]
        try:
            codes[present] = pd.Index(known, dtype=object).get_indexer(
                pd.Index(values, dtype=object)
            )
        except TypeError:
            raise _unhashable_error(col) from None
        if add_missing:
            codes[col.missing] = len(cats) - 1
        bad = codes < 0
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise DomainError(
                f"column {col.name!r} has the value {_show(col.values[row])} at row {row}, "
                f"which is not among its {len(known)} categories"
            )
        return codes

    def _encode_numeric(self, j: int, col: _Column) -> np.ndarray:
        name = self.columns_[j]
        self._check_missing(col)
        values = _as_float(col)
        self._check_infinite(col, values)
        lo, hi = self.bounds_[name]
        k = self.n_bins_[name]
        present = ~col.missing
        x = values[present]
        outside = (x < lo) | (x > hi)
        if outside.any():
            if self.out_of_bounds != "clip":
                row = int(np.flatnonzero(present)[np.flatnonzero(outside)[0]])
                raise DomainError(
                    f"column {name!r} has the value {_show(values[row])} at row {row}, "
                    f"outside its bounds [{lo!r}, {hi!r}]; pass out_of_bounds='clip' "
                    "to clip it"
                )
            x = np.clip(x, lo, hi)
        codes = np.empty(len(values), dtype=np.int64)
        if hi > lo:
            scaled = np.floor((x - lo) / (hi - lo) * k)
            codes[present] = np.clip(scaled, 0, k - 1).astype(np.int64)
        else:
            codes[present] = 0
        codes[col.missing] = k
        return codes

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Return the column names of the encoded table, as an object array.

        Raises
        ------
        ValueError
            If the encoder is not fitted.
        """
        self._check_fitted()
        return _as_object_array(self.columns_)

    # Decoding ----------------------------------------------------------------------
    def inverse_transform(self, codes: Any) -> Any:
        """Decode codes back to categories (numeric bins to their midpoints).

        Parameters
        ----------
        codes : EncodedTable or array-like of shape (n_rows, n_columns)
            Integer codes within the fitted cardinalities.

        Returns
        -------
        pandas.DataFrame, polars.DataFrame or ndarray of dtype object
            The same kind of table the encoder was fitted on (a numpy object array for
            numpy input). Missing-value codes decode to ``None`` (NaN in numeric
            DataFrame columns, null in polars).

        Raises
        ------
        ValueError
            If the encoder is not fitted, or ``codes`` has the wrong shape or a code
            outside its column's cardinality.
        TypeError
            If ``codes`` are not integers.
        """
        self._check_fitted()
        if isinstance(codes, EncodedTable):
            if list(codes.columns) != list(self.columns_):
                raise ValueError(
                    f"codes has columns {codes.columns!r} but the encoder was fitted "
                    f"on {self.columns_!r}"
                )
            codes = codes.codes
        array = np.asarray(codes)
        n_columns = len(self.columns_)
        if array.ndim != 2 or array.shape[1] != n_columns:
            raise ValueError(
                f"codes must have shape (n_rows, {n_columns}), got {array.shape}"
            )
        column_major, _ = as_code_columns(array, "codes", self.cardinalities_)
        n_rows = column_major.shape[1]
        if self._input_kind == "numpy":
            out = np.empty((n_rows, n_columns), dtype=object)
            for j in range(n_columns):
                out[:, j] = self.categories_[j][column_major[j]]
            return out
        decoded = []
        for j in range(n_columns):
            if self.kinds_[j] == "numeric":
                decoded.append(_float_categories(self.categories_[j])[column_major[j]])
            else:
                decoded.append(self.categories_[j][column_major[j]])
        if self._input_kind == "pandas":
            data = {}
            for j, name in enumerate(self.columns_):
                if self.kinds_[j] == "numeric":
                    data[name] = decoded[j]
                else:
                    data[name] = pd.Series(decoded[j], dtype=object).infer_objects()
            return pd.DataFrame(data, columns=self.columns_)
        import polars as pl

        series = []
        for j, column in enumerate(self.columns_):
            name = str(column)  # polars names are strings (those of the fitted frame)
            if self.kinds_[j] == "numeric":
                series.append(pl.Series(name, decoded[j]).fill_nan(None))
                continue
            values = decoded[j].tolist()
            try:
                series.append(pl.Series(name, values))
            except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
                series.append(pl.Series(name, values, dtype=pl.Object))
        return pl.DataFrame(series)


def _meta_columns(X: Any) -> tuple[str, list[_Column]]:
    """Read the columns of a Dask DataFrame from its (empty) pandas meta frame."""
    meta: Any = getattr(X, "_meta", None)
    if meta is None or frame_kind(meta) != "pandas":
        raise TypeError(
            f"TableEncoder takes a Dask DataFrame, got {type(X).__name__}; encode a "
            "Dask array of codes by passing it with its cardinalities instead"
        )
    return "pandas", [
        _pandas_column(name, meta.iloc[:, j]) for j, name in enumerate(meta.columns)
    ]


def _check_declared(
    columns: list[_Column], domains: dict[int, Any], bounds: dict[int, Any]
) -> None:
    """Refuse to infer a domain from a distributed frame: every column is declared."""
    undeclared = [
        c.name
        for j, c in enumerate(columns)
        if j not in domains
        and j not in bounds
        and c.kind != "bool"
        and not (c.dtype_categories is not None and c.dtype_declared)
    ]
    if undeclared:
        raise ValueError(
            f"TableEncoder needs declared domains or bounds for the columns "
            f"{undeclared!r} of a Dask DataFrame: inferring them would read the "
            "whole table (and leak it); declare them from public knowledge"
        )


def _encode_partition(
    frame: Any, encoder: TableEncoder, schema: pd.Series
) -> np.ndarray:
    """Encode one partition of a Dask DataFrame, as ``transform`` does.

    A column whose kind differs from the DataFrame's ``schema`` (strings in one
    file, numbers in the others) is refused as such
    (:func:`~privtab.table._readers.check_partition_schema`) before its values are.
    """
    if len(frame) == 0:
        return np.zeros((0, len(encoder.columns_)), dtype=np.uint32)
    check_partition_schema(frame, schema)
    _, columns = _read_columns(frame)
    return np.asarray(encoder._transform(columns).codes)


def _names_mismatch(names: list[Hashable], fitted: list[Hashable]) -> str:
    """Explain how the columns of a DataFrame differ from those seen by ``fit``.

    The second sentence and the lists follow scikit-learn's wording, so that code
    written against scikit-learn transformers recognises the error.
    """

    def listing(values: list[Any]) -> str:
        with contextlib.suppress(TypeError):
            values = sorted(values)
        shown = [f"- {v}\n" for v in values[:5]]
        return "".join(shown) + ("- ...\n" if len(values) > 5 else "")

    message = (
        f"X has {len(names)} columns {names!r} but the encoder was fitted on "
        f"{len(fitted)} columns {fitted!r}. The feature names should match those "
        "that were passed during fit.\n"
    )
    unseen = [n for n in names if n not in fitted]
    missing = [n for n in fitted if n not in names]
    if unseen:
        message += "Feature names unseen at fit time:\n" + listing(unseen)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + listing(
            missing
        )
    if not unseen and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    return message


def _float_categories(categories: np.ndarray) -> np.ndarray:
    """Bin midpoints as float64, NaN for the missing-value category."""
    return np.array([np.nan if v is None else v for v in categories], dtype=np.float64)


def _show(value: Any) -> str:
    """Repr of a cell for error messages, without numpy scalar wrappers."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return repr(value)


def _unhashable_error(col: _Column) -> TypeError:
    """Build the error for a categorical column with a cell that is not hashable."""
    for row, value in enumerate(col.values):
        try:
            hash(value)
        except TypeError:
            return TypeError(
                f"column {col.name!r} has an unhashable {type(value).__name__} at row "
                f"{row} ({_show(value)}), which cannot be a category: each cell of "
                "the X argument must be a string, a number or another hashable value"
            )
    return TypeError(f"column {col.name!r} has values that cannot be categories")


def _as_float(col: _Column) -> np.ndarray:
    """Return the column as float64, NaN where missing; TypeError if not numeric."""
    if col.values.dtype == np.float64:
        return col.values
    out = np.full(len(col.values), np.nan)
    present = ~col.missing
    try:
        out[present] = [_to_float(v) for v in col.values[present]]
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"column {col.name!r} has bounds but holds non-numeric values ({exc})"
        ) from exc
    return out


def _to_float(value: Any) -> float:
    if isinstance(value, str | bytes) or not isinstance(value, numbers.Real):
        raise TypeError(f"got {value!r}")
    return float(value)


def _infer_categories(values: np.ndarray) -> np.ndarray:
    """Distinct values, sorted when they are comparable, else in order of appearance."""
    unique = list(pd.unique(pd.Index(values, dtype=object)))
    with contextlib.suppress(TypeError):
        unique = sorted(unique)
    return _as_object_array(unique)
