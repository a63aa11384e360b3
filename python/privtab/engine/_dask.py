"""The Dask engine: code tables whose rows are the partitions of Dask collections.

Every partition (a block of rows) is validated and counted on a worker by the same
functions and Rust kernels as an in-memory table; only counts travel back, they are
merged by a tree of reductions, and whatever is random happens afterwards, once, in
the calling process. Dask is imported here only, and only when a Dask collection is
passed; computations run on Dask's current scheduler (a ``distributed.Client`` when
one is active, else Dask's local default).

Core kernels called: those of :mod:`privtab.engine._table` on each block, and
``privtab._core.merge_counts`` to merge counts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privtab import _core
from privtab._validation import (
    as_code_columns,
    check_inferred_labels,
    check_label_arguments,
    check_labels,
    infer_code_columns,
    is_encoded,
    label_array,
)
from privtab.engine._table import LABEL, CodeTable, KeyCounts, MemoryTable, aligned

__all__ = [
    "DaskTable",
    "dask_table",
    "is_distributed",
    "map_blocks_1d",
    "map_rows",
    "sum_arrays",
]

#: Class id of the rows a discernibility search no longer needs (pure classes).
_DROPPED = np.uint32(np.iinfo(np.uint32).max)

#: Partial results merged by one task of a reduction tree.
_FAN_IN = 8


def is_distributed(*values: Any) -> bool:
    """Whether any of ``values`` (or the codes of an ``EncodedTable``) is a Dask collection.

    Checked by the type's module, so Dask is never imported to answer.
    """
    for value in values:
        if is_encoded(value):
            value = value.codes
        if type(value).__module__.split(".")[0] == "dask":
            return True
    return False


# Blocks of a collection ------------------------------------------------------------
def _blocks(collection: Any, name: str, ndim: int) -> list[Any]:
    """Return the partitions of a Dask array, DataFrame or Series as delayed objects."""
    import dask.array as da

    if isinstance(collection, da.Array):
        if collection.ndim != ndim:
            raise ValueError(
                f"{name} must be {ndim}-dimensional, got a Dask array of "
                f"{collection.ndim} dimension(s)"
            )
        if ndim == 2:
            collection = collection.rechunk({1: -1})
        return list(collection.to_delayed().ravel())
    if not hasattr(collection, "to_delayed"):
        raise TypeError(
            f"{name} must be a Dask array or DataFrame, got {type(collection).__name__}"
        )
    if ndim == 2 and collection.ndim != 2:
        raise ValueError(f"{name} must be a Dask DataFrame (2-D), got a Dask Series")
    return list(collection.to_delayed())


def _compute(*values: Any) -> Any:
    import dask

    return dask.compute(*values)


def _delayed(function: Callable[..., Any]) -> Callable[..., Any]:
    """``dask.delayed(function)``, with numpy arguments aligned when the task runs."""
    import dask

    return dask.delayed(functools.partial(_call_aligned, function), pure=True)


def _call_aligned(function: Callable[..., Any], *args: Any) -> Any:
    # Arrays that crossed the network may arrive unaligned; the kernels read slices.
    return function(
        *(
            np.require(a, requirements=["A"]) if isinstance(a, np.ndarray) else a
            for a in args
        )
    )


def _reduce(parts: list[Any], combine: Callable[..., Any]) -> Any:
    """Combine delayed partial results by a tree of fan-in :data:`_FAN_IN`; compute it."""
    task = _delayed(combine)
    while len(parts) > 1:
        parts = [task(*parts[i : i + _FAN_IN]) for i in range(0, len(parts), _FAN_IN)]
    return _compute(parts[0])[0]


def map_blocks_1d(
    function: Callable[..., Any],
    combine: Callable[..., Any],
    collections: Sequence[Any],
    names: Sequence[str],
    *args: Any,
    ndim: int = 1,
) -> Any:
    """Apply ``function(*blocks, *args)`` to aligned partitions, then ``combine``.

    The collections must have the same number of partitions; each call gets the
    blocks of one partition (as numpy or pandas objects).
    """
    per_collection = [
        _blocks(c, n, ndim) for c, n in zip(collections, names, strict=True)
    ]
    _check_aligned(per_collection, names)
    task = _delayed(function)
    parts = [task(*blocks, *args) for blocks in zip(*per_collection, strict=True)]
    return _reduce(parts, combine)


def map_rows(
    function: Callable[..., np.ndarray],
    collection: Any,
    name: str,
    *args: Any,
    dtype: Any = np.int64,
    width: int | None = None,
) -> Any:
    """Apply ``function(block, *args)`` to every partition of a 2-D collection, lazily.

    Returns a Dask array with one value (``width=None``) or ``width`` values per row,
    partitioned as ``collection`` (lengths unknown unless the collection knows them).
    """
    import dask.array as da

    blocks = _blocks(collection, name, 2)
    chunks = getattr(collection, "chunks", None)
    lengths: list[float] = (
        [float(c) for c in chunks[0]] if chunks is not None else [np.nan] * len(blocks)
    )
    task = _delayed(function)
    return da.concatenate(
        [
            da.from_delayed(
                task(block, *args),
                shape=(length,) if width is None else (length, width),
                dtype=dtype,
            )
            for block, length in zip(blocks, lengths, strict=True)
        ]
    )


def _check_aligned(per_collection: list[list[Any]], names: Sequence[str]) -> None:
    counts = [len(b) for b in per_collection]
    if len(set(counts)) > 1:
        shown = ", ".join(f"{n} has {c}" for n, c in zip(names, counts, strict=True))
        raise ValueError(
            f"the Dask collections must have the same partitions of rows: {shown}"
        )


def merge_count_lists(*parts: list[KeyCounts]) -> list[KeyCounts]:
    """Merge lists of ``(keys, counts)`` elementwise (counts of disjoint rows add up)."""
    merged = list(parts[0])
    for part in parts[1:]:
        merged = [
            _core.merge_counts(
                aligned(a[0], np.uint64),
                aligned(a[1], np.uint64),
                aligned(b[0], np.uint64),
                aligned(b[1], np.uint64),
            )
            for a, b in zip(merged, part, strict=True)
        ]
    return merged


def sum_arrays(*parts: np.ndarray) -> np.ndarray:
    """Add arrays of counts of disjoint rows."""
    total = parts[0].copy()
    for part in parts[1:]:
        total += part
    return total


# Work on one block ---------------------------------------------------------------
def _n_rows(raw: Any) -> int:
    return len(raw)


def _block_columns(raw: Any, cards: np.ndarray, name: str) -> np.ndarray:
    """Validate one partition and return its codes column-major (may be empty)."""
    if len(raw) == 0:
        return np.zeros((cards.shape[0], 0), dtype=np.uint32)
    columns, _ = as_code_columns(raw, name, cards)
    if columns.shape[0] != cards.shape[0]:
        raise ValueError(
            f"{name} has a partition of {columns.shape[0]} columns, expected "
            f"{cards.shape[0]}"
        )
    return columns


def _block_cardinalities(raw: Any, name: str) -> np.ndarray | None:
    if len(raw) == 0:
        return None
    _, cards = infer_code_columns(raw, name, warn=False)
    return cards.astype(np.int64)


def _max_cardinalities(*parts: np.ndarray | None) -> np.ndarray | None:
    present = [p for p in parts if p is not None]
    if not present:
        return None
    return np.max(np.vstack(present), axis=0)


def _block_labels(
    raw_y: Any, raw_x: Any, label_set: np.ndarray, name: str
) -> np.ndarray:
    if len(raw_x) == 0 and len(raw_y) == 0:
        return np.zeros(0, dtype=np.uint32)
    _, codes = check_labels(raw_y, label_set, n_rows=len(raw_x), name=name, warn=False)
    return codes


def _block_unique_labels(raw_y: Any, name: str) -> np.ndarray:
    return np.unique(label_array(raw_y, name))


def _union(*parts: np.ndarray) -> np.ndarray:
    return np.unique(np.concatenate(parts))


def _block_count(
    columns: np.ndarray,
    labels: np.ndarray | None,
    cards: np.ndarray,
    n_labels: int | None,
    subsets: list[list[int]],
) -> list[KeyCounts]:
    return MemoryTable(columns, cards, labels, n_labels)._count(subsets)


def _block_pairwise(columns: np.ndarray, cards: np.ndarray) -> np.ndarray:
    flat, _, _ = _core.pairwise_tables(
        aligned(columns, np.uint32), aligned(cards, np.uint32), True
    )
    return flat


def _block_search_step(
    columns: np.ndarray,
    labels: np.ndarray,
    classes: np.ndarray | None,
    refine_column: int,
    groups: np.ndarray | None,
    n_classes: int,
    n_labels: int,
    cards: np.ndarray,
    candidates: list[int],
) -> tuple[list[KeyCounts], np.ndarray | None]:
    """One round of a discernibility search on one partition.

    Refine the rows' classes by ``refine_column`` (new id: the rank of (class, value)
    among ``groups``; rows of other groups are dropped), then count (class, value,
    label) over the kept rows for every candidate. Returns the counts and the classes.
    """
    columns, labels = aligned(columns, np.uint32), aligned(labels, np.uint32)
    if groups is not None:
        classes = _refined(columns, classes, refine_column, cards, groups)
    # One (class, value, label) table of the kept rows, its value row filled per
    # candidate.
    if classes is None:
        stacked = np.zeros((3, columns.shape[1]), dtype=np.uint32)
        stacked[2] = labels
        kept = None
    else:
        kept = np.flatnonzero(classes != _DROPPED)
        stacked = np.empty((3, kept.shape[0]), dtype=np.uint32)
        np.take(classes, kept, out=stacked[0])
        np.take(labels, kept, out=stacked[2])
    out = []
    for a in candidates:
        if kept is None:
            stacked[1] = columns[a]
        else:
            np.take(columns[a], kept, out=stacked[1])
        table_cards = np.array([max(n_classes, 1), cards[a], n_labels], dtype=np.uint32)
        out.append(_core.count_columns(stacked, table_cards, [0, 1, 2]))
    return out, classes


def _refined(
    columns: np.ndarray,
    classes: np.ndarray | None,
    column: int,
    cards: np.ndarray,
    groups: np.ndarray,
) -> np.ndarray:
    """Return new class ids: the rank of (class, value) among the mixed groups."""
    n = columns.shape[1]
    if classes is None:
        classes = np.zeros(n, dtype=np.uint32)
    kept = classes != _DROPPED
    keys = classes.astype(np.uint64) * np.uint64(cards[column]) + columns[
        column
    ].astype(np.uint64)
    rank = np.searchsorted(groups, keys)
    found = kept & (rank < groups.shape[0])
    found[found] = groups[rank[found]] == keys[found]
    return np.where(found, rank, _DROPPED).astype(np.uint32)


def _first(pair: tuple[Any, Any]) -> Any:
    return pair[0]


def _second(pair: tuple[Any, Any]) -> Any:
    return pair[1]


# The table ---------------------------------------------------------------------
class DaskTable(CodeTable):
    """A :class:`CodeTable` over the partitions of a Dask collection.

    Build it with :func:`dask_table`. Blocks are validated where they are counted;
    an error in one names the partition's own row numbers.
    """

    def __init__(
        self,
        raw_blocks: list[Any],
        cardinalities: np.ndarray,
        name: str,
        lengths: list[int] | None = None,
        *,
        validated: bool = False,
    ) -> None:
        self.cardinalities = np.require(cardinalities, np.uint32, ["C"])
        self.n_labels = None
        self.name = name
        self._raw = raw_blocks
        if validated:
            self._blocks = list(raw_blocks)
        else:
            task = _delayed(_block_columns)
            self._blocks = [task(raw, self.cardinalities, name) for raw in raw_blocks]
        self._labels: list[Any] | None = None
        self._source: Any = None
        self._lengths = lengths
        self._rows: int | None = None if lengths is None else int(sum(lengths))

    @property
    def n_rows(self) -> int:
        """Number of rows (the lengths of the partitions are computed once)."""
        if self._rows is None:
            lengths = _compute(*[_delayed(_n_rows)(raw) for raw in self._raw])
            self._lengths = [int(n) for n in lengths]
            self._rows = int(sum(self._lengths))
        return self._rows

    @property
    def n_partitions(self) -> int:
        """Number of partitions (blocks of rows)."""
        return len(self._blocks)

    def with_labels(
        self,
        y: Any,
        classes: Any = None,
        *,
        name: str = "y",
        min_classes: int = 1,
        n_classes: int | None = None,
        owner: str = "",
        warn: bool = True,
        stacklevel: int = 2,
    ) -> tuple[DaskTable, np.ndarray]:
        """Return this table with the label codes of ``y``, and the label set.

        As :func:`privtab._validation.check_labels`: a declared ``classes`` is
        checked before the data; an inferred one is the union of the partitions'
        labels, sorted, and warns the same way.
        """
        declared = check_label_arguments(
            y, classes, name, min_classes, n_classes, owner
        )
        if not is_distributed(y):
            raise TypeError(
                f"{name} must be a Dask array or Series partitioned as X, got "
                f"{type(y).__name__}"
            )
        table, y_blocks = self._aligned_with(y, name)
        if declared is None:
            unique = _delayed(_block_unique_labels)
            label_set = _reduce([unique(b, name) for b in y_blocks], _union)
            check_inferred_labels(
                label_set,
                name,
                min_classes=min_classes,
                n_classes=n_classes,
                owner=owner,
                warn=warn,
                stacklevel=stacklevel + 1,
            )
        else:
            label_set = declared
        labelled = DaskTable.__new__(DaskTable)
        labelled.__dict__.update(table.__dict__)
        task = _delayed(_block_labels)
        labelled._labels = [
            task(yb, raw, label_set, name)
            for yb, raw in zip(y_blocks, table._raw, strict=True)
        ]
        labelled.n_labels = int(label_set.shape[0])
        return labelled, label_set

    def _aligned_with(self, y: Any, name: str) -> tuple[DaskTable, list[Any]]:
        """Return a table of the same rows and the blocks of ``y``, partitioned alike.

        A Dask Series is joined to a Dask DataFrame of codes (Dask aligns them, even
        where its optimizer would partition the two differently); a Dask array of
        labels is rechunked to the row chunks of a Dask array of codes.
        """
        import dask.array as da

        source = self._source
        if isinstance(y, da.Array) and isinstance(source, da.Array):
            rows, labels = source.shape[0], y.shape[0]
            if y.ndim == 1 and not (np.isnan(rows) or np.isnan(labels)):
                if rows != labels:
                    raise ValueError(
                        f"{name} has {labels} labels, expected {rows} (one per row)"
                    )
                y = y.rechunk({0: source.chunks[0]})
        elif hasattr(source, "columns") and getattr(y, "ndim", 0) == 1:
            joined = source.assign(**{_LABEL_COLUMN: y})
            blocks = _blocks(joined, name, 2)
            table = DaskTable(
                [_delayed(_without)(b) for b in blocks], self.cardinalities, self.name
            )
            table._source = source
            return table, [_delayed(_label_column)(b) for b in blocks]
        y_blocks = _blocks(y, name, 1)
        _check_aligned([self._raw, y_blocks], ["X", name])
        return self, y_blocks

    def label_blocks(self) -> list[Any]:
        """Return the delayed label codes of the partitions."""
        if self._labels is None:
            raise ValueError("this table has no labels")
        return self._labels

    def select(self, columns: Sequence[int], *, with_label: bool = False) -> DaskTable:
        """Return a table of some columns (and the label codes last, if asked)."""
        index = list(columns)
        cards = self.cardinalities[index].astype(np.int64)
        if with_label:
            assert self.n_labels is not None
            cards = np.append(cards, self.n_labels)
            task = _delayed(_stack_label)
            blocks = [
                task(block, label, index)
                for block, label in zip(self._blocks, self.label_blocks(), strict=True)
            ]
        else:
            blocks = [_delayed(_rows_of)(block, index) for block in self._blocks]
        selected = DaskTable(blocks, cards, self.name, self._lengths, validated=True)
        selected._raw = self._raw
        selected._rows = self._rows
        return selected

    # Primitives ------------------------------------------------------------------
    def _labels_or_none(self) -> list[Any]:
        return self._labels if self._labels is not None else [None] * len(self._blocks)

    def _count(self, subsets: Sequence[Sequence[int]]) -> list[KeyCounts]:
        if any(LABEL in s for s in subsets):
            self.label_blocks()
        task = _delayed(_block_count)
        parts = [
            task(block, labels, self.cardinalities, self.n_labels, list(subsets))
            for block, labels in zip(self._blocks, self._labels_or_none(), strict=True)
        ]
        return _reduce(parts, merge_count_lists)

    def _pairwise_counts(self) -> np.ndarray:
        task = _delayed(_block_pairwise)
        return _reduce([task(b, self.cardinalities) for b in self._blocks], sum_arrays)

    def _search_start(self) -> list[Any]:
        return [None] * len(self._blocks)

    def _search_step(
        self,
        state: list[Any],
        refinement: Any,
        n_classes: int,
        candidates: Sequence[int],
    ) -> tuple[list[KeyCounts], list[Any]]:
        import dask

        column, groups = (0, None) if refinement is None else refinement
        shared = dask.delayed(groups, pure=True)
        task = _delayed(_block_search_step)
        steps = [
            task(
                block,
                labels,
                classes,
                column,
                shared,
                n_classes,
                self.n_labels,
                self.cardinalities,
                list(candidates),
            )
            for block, labels, classes in zip(
                self._blocks, self.label_blocks(), state, strict=True
            )
        ]
        # Kept on the workers: the next round refines these classes in place.
        steps = list(dask.persist(*steps))
        counted = _reduce([_delayed(_first)(p) for p in steps], merge_count_lists)
        return counted, [_delayed(_second)(p) for p in steps]


#: The column that carries the labels of a Dask Series joined to a DataFrame of codes.
_LABEL_COLUMN = "__privtab_label__"


def _without(block: Any) -> Any:
    return block.drop(columns=_LABEL_COLUMN)


def _label_column(block: Any) -> Any:
    return block[_LABEL_COLUMN]


def _rows_of(columns: np.ndarray, index: list[int]) -> np.ndarray:
    return np.ascontiguousarray(columns[index])


def _stack_label(
    columns: np.ndarray, labels: np.ndarray, index: list[int]
) -> np.ndarray:
    return np.ascontiguousarray(np.vstack([columns[index], labels[None, :]]))


def dask_table(X: Any, cardinalities: Any, name: str = "X") -> tuple[DaskTable, bool]:
    """Wrap a Dask array or DataFrame of codes (or a lazy EncodedTable) in a DaskTable.

    Parameters
    ----------
    X : dask.array.Array of shape (n_rows, n_columns), dask.dataframe.DataFrame, or
        an ``EncodedTable`` whose codes are a Dask array
        Integer codes.
    cardinalities : array-like of int or None
        Public domain sizes; from an ``EncodedTable`` when ``None``, else the largest
        code + 1 of every column over all partitions (one pass).
    name : str
        The argument's name, for messages.

    Returns
    -------
    table : DaskTable
    inferred : bool
        Whether the cardinalities were read off the data (the caller warns, as the
        in-memory path of the same method does).
    """
    if is_encoded(X):
        if cardinalities is None:
            cardinalities = X.cardinalities
        X = X.codes
    raw = _blocks(X, name, 2)
    lengths = None
    chunks = getattr(X, "chunks", None)
    if chunks is not None and not any(np.isnan(c) for c in chunks[0]):
        lengths = [int(c) for c in chunks[0]]
    inferred = cardinalities is None
    if inferred:
        task = _delayed(_block_cardinalities)
        found = _reduce([task(b, name) for b in raw], _max_cardinalities)
        if found is None:
            raise ValueError(f"{name} must be non-empty, got 0 rows in every partition")
        cards = found
    else:
        cards = np.asarray(cardinalities)
    from privtab._validation import check_cardinalities

    n_columns = _n_columns(X, cards)
    table = DaskTable(raw, check_cardinalities(cards, n_columns), name, lengths)
    table._source = X
    return table, inferred


def _n_columns(X: Any, cards: np.ndarray) -> int:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2 and not np.isnan(shape[1]):
        return int(shape[1])
    columns = getattr(X, "columns", None)
    return len(columns) if columns is not None else int(np.asarray(cards).shape[0])
