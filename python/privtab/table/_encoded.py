"""The encoded table: categorical codes over public domains.

:class:`EncodedTable` holds one ``uint32`` code per cell with the public size of every
column's domain; it is what :class:`~privtab.table.TableEncoder` returns and what the
counting, partition and histogram kernels read.

Core kernels called: none (a container; the kernels read its ``codes``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from privtab._validation import as_code_columns, check_cardinalities
from privtab.engine import is_distributed
from privtab.table._readers import _as_object_array

if TYPE_CHECKING:
    pass  # scikit-learn >= 1.6


#: Most default categories (``0 .. cardinality - 1``, summed over the columns) that an
#: ``EncodedTable`` lists when none are given: about 0.6 GB of Python ints.
MAX_DEFAULT_CATEGORIES = 2**24


# The encoded table -------------------------------------------------------------------
class EncodedTable:
    """A table of categorical codes over public domains.

    Usually produced by :meth:`TableEncoder.transform`; every privtab function that takes
    categorical codes also takes an ``EncodedTable`` (and reads its cardinalities).

    Parameters
    ----------
    codes : array-like of shape (n_rows, n_columns), or a Dask array
        Integer codes, ``0 <= codes[:, j] < cardinalities[j]``. A Dask array (what
        :meth:`TableEncoder.transform` makes of a Dask DataFrame) stays lazy: its
        partitions are encoded and checked where the counting methods read them.
    cardinalities : array-like of shape (n_columns,)
        Public domain size of every column, in [1, 2**32 - 1].
    columns : sequence of hashable, optional
        Column names; ``"x0", "x1", ...`` by default.
    categories : sequence of sequences, optional
        The value of every code, per column; ``range(cardinality)`` by default.

    Attributes
    ----------
    codes : ndarray of shape (n_rows, n_columns), uint32
        Stored Fortran-ordered (column-major), so that every column is one contiguous
        block: the layout of the Rust kernels, reached without a copy.
    cardinalities : ndarray of shape (n_columns,), int64
        Signed, so that arithmetic on it (``cardinalities - 1``, products) behaves as
        in Python; the kernels receive it as ``uint32``.
    columns : list
        Column names.
    categories : list of ndarray
        ``categories[j][c]`` is what code ``c`` of column ``j`` stands for: a category, the
        midpoint of a numeric bin, or ``None`` for the missing-value category.

    Raises
    ------
    ValueError
        If the codes are not a non-empty 2-D integer array within the cardinalities, or
        ``columns``/``categories`` do not match the number of columns, or the default
        categories would exceed ``MAX_DEFAULT_CATEGORIES`` values.
    TypeError
        If the codes are not integers.

    Notes
    -----
    An ``EncodedTable`` behaves as its array of codes where an array is expected:
    ``np.asarray(table)`` is ``table.codes`` (no copy), and ``shape``, ``ndim``,
    ``dtype``, ``len`` and integer, slice or mask indexing of rows (``table[rows]``)
    are those of ``table.codes``.

    Examples
    --------
    >>> table = EncodedTable([[0, 1], [2, 0]], [3, 2], columns=["colour", "size"])
    >>> table.n_rows, table.codes.dtype, table.codes.flags.f_contiguous
    (2, dtype('uint32'), True)
    >>> table.column_index("size")
    1
    >>> table[1].tolist()
    [2, 0]
    """

    def __init__(
        self,
        codes: Any,
        cardinalities: Any,
        columns: Sequence[Hashable] | None = None,
        categories: Sequence[Any] | None = None,
    ) -> None:
        lazy = is_distributed(codes)
        if lazy:
            # Codes of a Dask frame encoded partition by partition: checked when a
            # partition is computed (every kernel range-checks the codes it reads).
            n_columns = int(codes.shape[1])
            cards = check_cardinalities(cardinalities, n_columns)
        else:
            column_major, cards = as_code_columns(codes, "codes", cardinalities)
            n_columns = column_major.shape[0]
        if columns is None:
            columns = [f"x{j}" for j in range(n_columns)]
        if isinstance(columns, str | bytes) or not isinstance(columns, Iterable):
            raise TypeError(
                f"columns must be a sequence of names, got {type(columns).__name__}"
            )
        columns = list(columns)
        if len(columns) != n_columns:
            raise ValueError(
                f"columns must have one name per column ({n_columns}), got {len(columns)}"
            )
        if len(set(columns)) != n_columns:
            raise ValueError(f"columns must be unique, got {columns!r}")
        if categories is not None and (
            isinstance(categories, str | bytes) or not isinstance(categories, Iterable)
        ):
            raise TypeError(
                "categories must be a sequence of per-column sequences, got "
                f"{type(categories).__name__}"
            )
        if (
            categories is None
            and int(cards.sum(dtype=np.int64)) > MAX_DEFAULT_CATEGORIES
        ):
            j = int(np.argmax(cards))
            raise ValueError(
                f"cardinalities[{j}] = {cards[j]} is too large to list the default "
                f"categories 0 .. cardinality - 1 (at most {MAX_DEFAULT_CATEGORIES} in "
                "all columns); declare smaller domains"
            )
        given = [np.arange(int(k)) for k in cards] if categories is None else categories
        category_arrays = []
        for j, cats in enumerate(given):
            if isinstance(cats, str | bytes) or not isinstance(cats, Iterable):
                raise TypeError(
                    f"categories[{j}] must be a sequence of categories, got "
                    f"{type(cats).__name__}"
                )
            category_arrays.append(_as_object_array(cats))
        if len(category_arrays) != n_columns:
            raise ValueError(
                f"categories must have one entry per column ({n_columns}), "
                f"got {len(category_arrays)}"
            )
        for j, (cats, card) in enumerate(zip(category_arrays, cards, strict=True)):
            if len(cats) != int(card):
                raise ValueError(
                    f"categories[{j}] has {len(cats)} entries but column "
                    f"{columns[j]!r} has cardinality {int(card)}"
                )
        # The transpose of the C-ordered (d, n) block is an F-ordered (n, d) view.
        self.codes: Any = codes if lazy else column_major.T
        self.cardinalities: np.ndarray = cards.astype(np.int64)
        self.columns: list[Hashable] = columns
        self.categories: list[np.ndarray] = category_arrays
        # A Dask DataFrame and how its partitions become ``codes``
        # (``encode(partition, *args)``), set by TableEncoder.
        self._encoded_frame: tuple[Any, Any, tuple[Any, ...]] | None = None

    @property
    def n_rows(self) -> int:
        """Number of rows (records); counted once for lazy codes of unknown length."""
        n = self.codes.shape[0]
        if n != n:  # NaN: a Dask array whose partition lengths are not known yet
            self.codes = self.codes.compute_chunk_sizes()
            n = self.codes.shape[0]
        return int(n)

    @property
    def n_columns(self) -> int:
        """Number of columns (attributes)."""
        return int(self.codes.shape[1])

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_columns)``."""
        return self.n_rows, self.n_columns

    @property
    def ndim(self) -> int:
        """Always 2, as for the array of codes."""
        return 2

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the codes, ``uint32``."""
        return self.codes.dtype

    def __getitem__(self, key: Any) -> Any:
        """Index the codes like an array: ``table[rows]`` is ``table.codes[rows]``.

        Columns are reached by name with :meth:`column` and :meth:`select`.
        """
        if isinstance(key, str) or (
            isinstance(key, tuple) and any(isinstance(k, str) for k in key)
        ):
            raise TypeError(
                f"EncodedTable is indexed like its array of codes, got {key!r}; "
                "use table.column(name) or table.select(names) for columns by name"
            )
        return self.codes[key]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """Return the codes, so ``np.asarray(table)`` works like ``table.codes``."""
        if copy is False and dtype is not None and np.dtype(dtype) != self.codes.dtype:
            raise ValueError("EncodedTable codes cannot be cast without a copy")
        codes = self.codes if dtype is None else self.codes.astype(dtype, copy=False)
        return codes.copy() if copy else codes

    def __len__(self) -> int:
        return self.n_rows

    def __repr__(self) -> str:
        return (
            f"EncodedTable(n_rows={self.n_rows}, columns={self.columns!r}, "
            f"cardinalities={self.cardinalities.tolist()!r})"
        )

    def column_index(self, name: Hashable) -> int:
        """Position of the column called ``name``.

        Raises
        ------
        KeyError
            If there is no such column.
        """
        for j, column in enumerate(self.columns):
            if column == name:
                return j
        raise KeyError(f"no column named {name!r}; columns are {self.columns!r}")

    def column(self, name: Hashable) -> np.ndarray:
        """Return the codes of the column called ``name`` (a contiguous view)."""
        return self.codes[:, self.column_index(name)]

    def select(self, columns: Sequence[Hashable]) -> EncodedTable:
        """Return a new table with the given columns, in the given order."""
        if isinstance(columns, str | bytes) or not isinstance(columns, Iterable):
            raise TypeError(
                f"columns must be a sequence of names, got {type(columns).__name__}"
            )
        index = [self.column_index(c) for c in columns]
        return EncodedTable(
            self.codes[:, index],
            self.cardinalities[index],
            [self.columns[j] for j in index],
            [self.categories[j] for j in index],
        )

    def to_pandas(self, *, decode: bool = False) -> pd.DataFrame:
        """Return the table as a pandas DataFrame.

        Parameters
        ----------
        decode : bool, default=False
            ``False`` gives the ``uint32`` codes; ``True`` gives what they stand for
            (``categories[j][code]``; bin midpoints for numeric columns).

        Returns
        -------
        pandas.DataFrame
        """
        if not decode:
            return pd.DataFrame(
                {c: self.codes[:, j] for j, c in enumerate(self.columns)},
                columns=self.columns,
            )
        return pd.DataFrame(
            {
                c: self.categories[j][self.codes[:, j]]
                for j, c in enumerate(self.columns)
            },
            columns=self.columns,
        )
