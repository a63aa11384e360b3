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

import dataclasses
import math
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
from privtab.engine._table import (
    LABEL,
    CodeTable,
    KeyCounts,
    MemoryTable,
    _group_starts,
    _mixed_groups,
    _undiscerned,
    aligned,
)
from privtab.exceptions import DomainError

__all__ = [
    "DaskTable",
    "dask_table",
    "distributed_n_columns",
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
    return _partitions(collection, name, ndim)[0]


def _partitions(
    collection: Any, name: str, ndim: int
) -> tuple[list[Any], list[tuple[str, ...]]]:
    """Return the partitions as delayed objects, and the files each one is read from.

    The files are those Dask reads the partition from (:func:`_partition_files`),
    empty where Dask does not say.
    """
    import dask.array as da

    if isinstance(collection, da.Array):
        if collection.ndim != ndim:
            raise ValueError(
                f"{name} must be {ndim}-dimensional, got a Dask array of "
                f"{collection.ndim} dimension(s)"
            )
        if ndim == 2:
            collection = collection.rechunk({1: -1})
        blocks = list(collection.to_delayed().ravel())
        return blocks, [()] * len(blocks)
    if not hasattr(collection, "to_delayed"):
        raise TypeError(
            f"{name} must be a Dask array or DataFrame, got {type(collection).__name__}"
        )
    if ndim == 2 and collection.ndim != 2:
        raise ValueError(f"{name} must be a Dask DataFrame (2-D), got a Dask Series")
    # Optimized once, so that the files are those of the partitions computed.
    optimized = collection.optimize()
    blocks = list(optimized.to_delayed(optimize_graph=False))
    return blocks, _partition_files(optimized, len(blocks))


def _partition_files(collection: Any, n_partitions: int) -> list[tuple[str, ...]]:
    """Return the files every partition of an optimized Dask DataFrame is read from.

    Known for partitions read by ``dask.dataframe.read_parquet`` (one file, or the
    files Dask reads into one partition) and for anything computed from them
    partition by partition (column selections, ``assign``, ``map_partitions``); a
    partition that also holds rows of another source, or rows moved between
    partitions, gets no file (empty), as does any collection when Dask's
    expressions do not say.
    """
    unknown: list[tuple[str, ...]] = [()] * n_partitions
    expr = getattr(collection, "expr", None)
    if expr is None:
        return unknown
    try:
        files = _expression_files(expr, {})
    except (AttributeError, KeyError, IndexError, TypeError, ImportError):
        # Dask's expressions are not a stable interface: a file is named only
        # where they are read as this Dask version writes them.
        return unknown
    if files is None or len(files) != n_partitions:
        return unknown
    return files


def _expression_files(
    expr: Any, seen: dict[str, list[tuple[str, ...]] | None]
) -> list[tuple[str, ...]] | None:
    """Return the files of every partition of a Dask expression (None: unknown)."""
    from dask.dataframe.dask_expr._expr import (
        Blockwise,
        Fused,
        MapOverlap,
        Partitions,
    )
    from dask.dataframe.dask_expr.io.io import FusedIO
    from dask.dataframe.dask_expr.io.parquet import ReadParquet

    if expr._name in seen:
        return seen[expr._name]
    files: list[tuple[str, ...]] | None = None
    if isinstance(expr, Fused):
        # Expressions run as one task; the first is the one whose output it is.
        files = _expression_files(expr.exprs[0], seen)
    elif isinstance(expr, FusedIO):
        read = _reader_files(expr.operand("_expr"))
        if read is not None:
            files = [
                _joined(read[i] for i in bucket) for bucket in expr._fusion_buckets
            ]
    elif isinstance(expr, ReadParquet):
        read = _reader_files(expr)
        if read is not None:
            files = [read[i] for i in expr._partitions]
    elif isinstance(expr, Partitions):
        inner = _expression_files(expr.frame, seen)
        if inner is not None:
            files = [inner[i] for i in expr.partitions]
    elif isinstance(expr, Blockwise) and not isinstance(expr, MapOverlap):
        files = _blockwise_files(expr, seen)
    seen[expr._name] = files
    return files


def _blockwise_files(
    expr: Any, seen: dict[str, list[tuple[str, ...]] | None]
) -> list[tuple[str, ...]] | None:
    """Return the files of a blockwise expression's partitions (None: unknown).

    Partition ``i`` holds the rows of partition ``i`` of every input, aside from an
    input of one partition given to every partition.
    """
    n = expr.npartitions
    per_input = []
    for dependency in expr.dependencies():
        if dependency.npartitions != n:
            if dependency.npartitions == 1 and expr._broadcast_dep(dependency):
                continue
            return None
        files = _expression_files(dependency, seen)
        if files is None:
            return None
        per_input.append(files)
    if not per_input:
        return None
    return [_joined(files[i] for files in per_input) for i in range(n)]


def _reader_files(reader: Any) -> list[tuple[str, ...]] | None:
    """Return the files of a Parquet reader's partitions, by Dask's partition number."""
    plan = getattr(reader, "_plan", None)
    if plan is not None:
        return [
            _joined(
                (piece["piece"][0],)
                for piece in (part if isinstance(part, list) else [part])
            )
            for part in plan["parts"]
        ]
    fragments = getattr(reader, "fragments", None)
    if fragments is not None:
        return [(str(fragment.path),) for fragment in fragments]
    return None


def _joined(groups: Any) -> tuple[str, ...]:
    """Return the files of ``groups``, each once, in order."""
    return tuple(dict.fromkeys(f for files in groups for f in files))


def _place(partition: int, files: Sequence[str], name: str | None = None) -> str:
    """Where a partition is: its number, the files it is read from, the argument.

    >>> _place(3, ["/data/part.3.parquet"], "X")
    'partition 3 (file /data/part.3.parquet) of X'
    >>> _place(0, [])
    'partition 0'
    """
    where = f"partition {partition}"
    if len(files) == 1:
        where += f" (file {files[0]})"
    elif len(files) > 1:
        shown = ", ".join(files[:_FILES_SHOWN])
        more = len(files) - _FILES_SHOWN
        where += f" (files {shown}{f' and {more} more' if more > 0 else ''})"
    return where if name is None else f"{where} of {name}"


#: Most files a message names for one partition (Dask fuses the files of a projection
#: into partitions of at most the square root of their number).
_FILES_SHOWN = 10


#: The attribute of an error raised for the rows of one partition: where they are.
_WHERE = "privtab_partition"


def _located_error(exc: Exception, where: str) -> Exception:
    """Return ``exc`` with ``where`` (``_place``) before its message.

    Only privtab's own errors about the data (a ``ValueError``, ``TypeError`` or
    ``DomainError`` with a message, raised by privtab's code) are located, once;
    others (a failure inside pandas, say, whose traceback is wanted) are returned
    as they are. The new error keeps ``where`` in an attribute, by which
    :func:`_compute` knows it.
    """
    if (
        type(exc) not in (ValueError, TypeError, DomainError)
        or len(exc.args) != 1
        or not isinstance(exc.args[0], str)
        or getattr(exc, _WHERE, None) is not None
        or not _raised_by_privtab(exc)
    ):
        return exc
    located = type(exc)(f"{where}: {exc}")
    setattr(located, _WHERE, where)
    return located


def _raised_by_privtab(exc: Exception) -> bool:
    """Whether the innermost Python frame of ``exc``'s traceback is privtab's."""
    trace = exc.__traceback__
    if trace is None:
        return False
    while trace.tb_next is not None:
        trace = trace.tb_next
    module = trace.tb_frame.f_globals.get("__name__", "")
    return module.split(".")[0] == "privtab"


def _compute(*values: Any) -> Any:
    """``dask.compute(*values)``; an error located in a partition is raised alone.

    The scheduler raises a task's error with the traceback of the worker that ran
    it; an error about the data of a partition (:func:`_located_error`) already
    says where it happened, and is raised from here without that traceback.
    """
    import dask

    try:
        return dask.compute(*values)
    except (ValueError, TypeError) as exc:
        if getattr(exc, _WHERE, None) is None:
            raise
        raise exc.with_traceback(None) from None


def _delayed(function: Callable[..., Any]) -> Callable[..., Any]:
    """``dask.delayed(function)``, with numpy arguments aligned when the task runs."""
    import dask

    return dask.delayed(_Aligned(function), pure=True)


def _located(function: Callable[..., Any]) -> Callable[..., Any]:
    """As :func:`_delayed`, for a function reading the rows of one partition.

    The task takes where the rows are (``_place``) as its first argument, and
    an error the function raises about them says so (:func:`_located_error`).
    """
    import dask

    return dask.delayed(_Located(function), pure=True)


class _Aligned:
    """Call ``function`` with its numpy arguments aligned.

    Arrays that crossed the network may arrive unaligned; the kernels read slices.
    Tasks are named after ``function`` (``privtab-block_count-<token>``), so that
    a dashboard or a progress bar shows what runs.
    """

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.__name__ = "privtab-" + function.__name__.strip("_")

    def __call__(self, *args: Any) -> Any:
        return self.function(
            *(
                np.require(a, requirements=["A"]) if isinstance(a, np.ndarray) else a
                for a in args
            )
        )

    def __dask_tokenize__(self) -> tuple[str, ...]:
        return (self.function.__module__, self.function.__qualname__)


class _Located(_Aligned):
    """:class:`_Aligned`, whose first argument says where the rows are."""

    def __call__(self, where: str, *args: Any) -> Any:
        try:
            return super().__call__(*args)
        except (ValueError, TypeError) as exc:
            located = _located_error(exc, where)
            if located is exc:
                raise
            raise located from None

    def __dask_tokenize__(self) -> tuple[str, ...]:
        return ("located", *super().__dask_tokenize__())


def _keep(*values: Any) -> list[Any]:
    """Compute delayed ``values`` and keep them for later tasks; return them as delayed.

    A scheduler that keeps results (a ``distributed.Client``) holds them on its
    workers under their own keys (``dask.persist``). Any other scheduler returns the
    values to this process: each is then named by a new unique key, because the
    scheduler may still know the key of the task that computed it, and a key sent
    again with another definition (now the value itself) makes ``distributed`` warn
    of a different ``run_spec`` (a scheduler function that wraps a client, such as a
    progress bar's, does exactly this).
    """
    import uuid

    import dask
    from dask.base import get_scheduler

    schedule = get_scheduler(collections=list(values))
    client = getattr(schedule, "__self__", schedule)
    if callable(getattr(client, "persist", None)):
        return list(dask.persist(*values))
    return [
        dask.delayed(value, name=f"privtab-kept-{uuid.uuid4().hex}", traverse=False)
        for value in _compute(*values)
    ]


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

    Each call gets the blocks of the same rows (as numpy or pandas objects): the
    partitions of the first collection, and those of the others cut to the same
    rows when they are partitioned differently (``_aligned_rows``). An error
    ``function`` raises about them names the partition (``_place``): the
    argument too when there is one collection, the files when Dask reads them
    and the others are not cut. Series that are columns of one Dask DataFrame are
    read together, a partition of all of them in one task
    (``_columns_of_one_frame``).
    """
    shared = _columns_of_one_frame(collections) if ndim == 1 else None
    if shared is not None:
        frame, columns = shared
        blocks, files = _partitions(frame, names[0], 2)
        task = _located(_OnColumns(function, columns))
        parts = [
            task(_place(p, files[p]), block, *args) for p, block in enumerate(blocks)
        ]
        return _reduce(parts, combine)
    partitioned = [
        _partitions(c, n, ndim) for c, n in zip(collections, names, strict=True)
    ]
    read = [blocks for blocks, _ in partitioned]
    per_collection = _aligned_rows(read, names)
    n_parts = len(per_collection[0])
    files = [
        _joined(f[p] for _, f in partitioned) if per_collection is read else ()
        for p in range(n_parts)
    ]
    name = names[0] if len(names) == 1 else None
    task = _located(function)
    parts = [
        task(_place(p, files[p], name), *blocks, *args)
        for p, blocks in enumerate(zip(*per_collection, strict=True))
    ]
    return _reduce(parts, combine)


def _columns_of_one_frame(collections: Sequence[Any]) -> tuple[Any, list[Any]] | None:
    """Return the frame that Dask Series ``collections`` are columns of, and theirs.

    Series selected from one Dask DataFrame (``X["a"]``, ``X["b"]``) are read as one
    frame of their columns, so that each partition's rows are read once, in one task,
    for all of them: read apart, Dask may read the columns of a partition on two
    workers and send one to the other, which costs more than the reads. ``None`` when
    they are not all columns of one frame (by Dask's expressions), or there is one.
    """
    if len(collections) < 2:
        return None
    try:
        from dask.dataframe.dask_expr._collection import new_collection
        from dask.dataframe.dask_expr._expr import Projection
    except ImportError:
        return None
    parents: set[str] = set()
    columns: list[Any] = []
    for collection in collections:
        expr = getattr(collection, "expr", None)
        if not isinstance(expr, Projection) or getattr(collection, "ndim", 0) != 1:
            return None
        parents.add(expr.frame._name)
        columns.append(expr.operand("columns"))
    if len(parents) != 1:
        return None
    frame = new_collection(collections[0].expr.frame)
    return frame[list(dict.fromkeys(columns))], columns


class _OnColumns:
    """``function`` of the columns ``columns`` of one partition of a frame, in order.

    Named and tokenized as ``function`` with its columns (:class:`_Aligned`).
    """

    def __init__(self, function: Callable[..., Any], columns: list[Any]) -> None:
        self.function = function
        self.columns = columns
        self.__name__ = function.__name__
        self.__module__ = function.__module__
        self.__qualname__ = f"{function.__qualname__}{columns!r}"

    def __call__(self, frame: Any, *args: Any) -> Any:
        return self.function(*(frame[c] for c in self.columns), *args)


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
    An error ``function`` raises about a partition's rows names the partition
    (``_place``) when the array is computed.
    """
    import dask.array as da

    blocks, files = _partitions(collection, name, 2)
    chunks = getattr(collection, "chunks", None)
    lengths: list[float] = (
        [float(c) for c in chunks[0]] if chunks is not None else [np.nan] * len(blocks)
    )
    task = _located(function)
    return da.concatenate(
        [
            da.from_delayed(
                task(_place(p, files[p], name), block, *args),
                shape=(length,) if width is None else (length, width),
                dtype=dtype,
            )
            for p, (block, length) in enumerate(zip(blocks, lengths, strict=True))
        ]
    )


def _aligned_rows(
    per_collection: list[list[Any]], names: Sequence[str]
) -> list[list[Any]]:
    """Return the blocks of every collection cut to the partitions of the first.

    Collections with as many partitions are taken as partitioned alike (each block
    is then checked against its partner where it is read). Otherwise Dask may have
    fused the partitions of some (a projection on few columns of a Parquet table
    reads several files in one partition), and the rows are matched by position:
    the partition lengths of every collection are counted (one pass, nothing kept)
    and the blocks of the others are cut and joined to the lengths of the first.

    Raises
    ------
    ValueError
        If the collections do not hold the same number of rows.
    """
    if len({len(blocks) for blocks in per_collection}) == 1:
        return per_collection
    counted = _compute(
        *[[_delayed(_n_rows)(b) for b in blocks] for blocks in per_collection]
    )
    lengths = [[int(n) for n in part] for part in counted]
    totals = [sum(part) for part in lengths]
    if len(set(totals)) > 1:
        shown = ", ".join(f"{n} has {t}" for n, t in zip(names, totals, strict=True))
        raise ValueError(
            f"the Dask collections must hold the same rows, one per row of "
            f"{names[0]}: {shown} rows; pass columns of one Dask DataFrame (or "
            "collections of the same rows in the same order)"
        )
    first = lengths[0]
    return [per_collection[0]] + [
        _cut(blocks, part, first)
        for blocks, part in zip(per_collection[1:], lengths[1:], strict=True)
    ]


def _cut(blocks: list[Any], lengths: list[int], target: list[int]) -> list[Any]:
    """Return delayed blocks of the rows of ``blocks`` in partitions of ``target`` rows."""
    ends = np.cumsum(lengths)
    starts = ends - np.asarray(lengths)
    task = _delayed(_rows_between)
    out = []
    position = 0
    for length in target:
        stop = position + length
        pieces = [
            (b, int(max(position - s, 0)), int(min(stop, e) - s))
            for b, s, e in zip(blocks, starts, ends, strict=True)
            if s < stop and e > position
        ] or [(blocks[0], 0, 0)]
        out.append(task([(lo, hi) for _, lo, hi in pieces], *[b for b, _, _ in pieces]))
        position = stop
    return out


def _rows_between(bounds: list[tuple[int, int]], *blocks: Any) -> Any:
    """Rows ``lo:hi`` of every block, joined (numpy arrays or pandas objects)."""
    parts = [
        b[lo:hi] if isinstance(b, np.ndarray) else b.iloc[lo:hi]
        for b, (lo, hi) in zip(blocks, bounds, strict=True)
    ]
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)
    import pandas as pd

    return pd.concat(parts)


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


def narrow_dtype(cardinalities: np.ndarray) -> np.dtype:
    """Return the narrowest unsigned dtype holding every code below ``cardinalities``."""
    largest = int(np.max(cardinalities, initial=1)) - 1
    for dtype in (np.uint8, np.uint16):
        if largest <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint32)


def _block_columns(raw: Any, cards: np.ndarray, name: str) -> np.ndarray:
    """Validate one partition; return its codes column-major, in the narrowest dtype.

    Codes stay in the dtype of :func:`narrow_dtype` (one byte a code for cardinalities
    up to 256), so a partition kept on a worker costs a quarter of ``uint32``; counting
    widens only the columns it reads. Integer columns are checked and converted
    (:func:`_integer_columns`); anything else (and any invalid code, for the error message) goes through
    :func:`privtab._validation.as_code_columns`, whose error (one line) names the
    column by its name too (the task adds the partition, :func:`_located_error`).
    """
    dtype = narrow_dtype(cards)
    if len(raw) == 0:
        return np.zeros((cards.shape[0], 0), dtype=dtype)
    columns = _integer_columns(raw, cards, dtype)
    if columns is not None:
        return columns
    try:
        columns, _ = as_code_columns(raw, name, cards)
    except (ValueError, TypeError) as exc:
        raise type(exc)(_with_column_name(raw, name, str(exc))) from None
    if columns.shape[0] != cards.shape[0]:
        raise ValueError(
            f"{name} has a partition of {columns.shape[0]} columns, expected "
            f"{cards.shape[0]}"
        )
    return columns.astype(dtype)


def _with_column_name(raw: Any, name: str, message: str) -> str:
    """Add to ``message`` the name of the column of the cell it is about, if unsaid."""
    import re

    cell = re.match(rf"{re.escape(name)}\[\d+, (\d+)\]", message)
    names = getattr(raw, "columns", None)
    if cell is not None and names is not None:
        column = f"column {names[int(cell.group(1))]!r}"
        if column not in message:
            message += f" ({column})"
    return message


def _integer_columns(raw: Any, cards: np.ndarray, dtype: np.dtype) -> np.ndarray | None:
    """Codes of a block of plain integer columns, all in range, column-major; else None.

    ``None`` sends the block through the general validation (which names the problem).
    Codes are read once for their range (the maximum, and the minimum if signed) and
    once to convert them straight into ``dtype``. Codes of one integer dtype are
    taken as one 2-D array: a DataFrame's values are then pandas' own block (no
    copy), used in place when already of ``dtype`` (as a Parquet read of narrow
    codes makes them); columns of several dtypes are converted one at a time.
    """
    if hasattr(raw, "columns") and hasattr(raw, "dtypes"):
        if len(raw.columns) != cards.shape[0]:
            return None
        dtypes = list(raw.dtypes)
        if not all(isinstance(t, np.dtype) and t.kind in "iu" for t in dtypes):
            return None
        if len(set(dtypes)) == 1:
            return _narrowed(raw.to_numpy().T, cards, dtype)
        arrays = [raw.iloc[:, j].to_numpy() for j in range(cards.shape[0])]
    elif isinstance(raw, np.ndarray) and raw.ndim == 2 and raw.dtype.kind in "iu":
        if raw.shape[1] != cards.shape[0]:
            return None
        return _narrowed(raw.T, cards, dtype)
    else:
        return None
    out = np.empty((cards.shape[0], len(raw)), dtype=dtype)
    for j, array in enumerate(arrays):
        if not _in_range(array[None, :], cards[j : j + 1]):
            return None
        out[j] = array
    return out


def _narrowed(
    values: np.ndarray, cards: np.ndarray, dtype: np.dtype
) -> np.ndarray | None:
    """Integer codes (columns, rows) as C-ordered ``dtype``; None if one is out of range.

    Already C-ordered codes of ``dtype`` are returned as they are.
    """
    if not _in_range(values, cards):
        return None
    if values.dtype == dtype and values.flags.c_contiguous:
        return values
    return values.astype(dtype, order="C")


def _in_range(values: np.ndarray, cards: np.ndarray) -> bool:
    """Whether integer codes (columns, rows) are >= 0 and below their cardinalities."""
    if values.shape[1] == 0:
        return True
    if values.dtype.kind == "i" and values.min() < 0:
        return False
    return not np.any(values.max(axis=1) >= cards)


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
    """Count the subsets on one partition.

    A subset whose domain has at most ``max(2**16, 2 n)`` cells is counted densely
    (``_core.mixed_radix_encode``, then one bincount); larger ones are sorted by
    ``_core.count_columns``, widening only the columns they read. Both give the
    sorted keys of the observed cells and their exact counts.
    """
    n = columns.shape[1]
    out: list[KeyCounts] = []
    for subset in subsets:
        sizes = [int(n_labels or 1) if j == LABEL else int(cards[j]) for j in subset]
        cells = math.prod(sizes)
        if cells > max(1 << 16, 2 * n):
            used = sorted({j for j in subset if j != LABEL})
            position = {j: p for p, j in enumerate(used)}
            position[LABEL] = LABEL
            table = MemoryTable(
                aligned(columns[used], np.uint32), cards[used], labels, n_labels
            )
            out.extend(table._count([[position[j] for j in subset]]))
            continue
        rows: list[np.ndarray] = []
        for j in subset:
            if j == LABEL:
                assert labels is not None
                rows.append(labels)
            else:
                rows.append(columns[j])
        data = np.vstack(rows) if rows else np.zeros((0, n), dtype=np.uint8)
        keys = _core.mixed_radix_encode(
            np.ascontiguousarray(data), np.array(sizes, dtype=np.uint32)
        )
        dense = np.bincount(keys.view(np.int64), minlength=cells)
        observed = np.flatnonzero(dense)
        out.append((observed.astype(np.uint64), dense[observed].astype(np.uint64)))
    return out


def _block_pairwise(columns: np.ndarray, cards: np.ndarray) -> np.ndarray:
    flat, _, _ = _core.pairwise_tables(
        aligned(columns, np.uint32), aligned(cards, np.uint32), True
    )
    return flat


# The discernibility search ----------------------------------------------------------
@dataclasses.dataclass
class _SearchPart:
    """The rows of one partition that a discernibility search still needs.

    Attributes
    ----------
    columns : ndarray of shape (len(index), n_kept)
        Codes of the remaining candidates (narrow dtype), one row per ``index`` entry;
        may be shared with the part this one was refined from.
    index : list of int
        The table's column number of each row of ``columns`` (-1: no longer needed).
    labels : ndarray of shape (n_kept,), unsigned
    classes : ndarray of shape (n_kept,), uint32
        Class of S of every kept row, below ``n_classes``.
    n_classes : int
    """

    columns: np.ndarray
    index: list[int]
    labels: np.ndarray
    classes: np.ndarray
    n_classes: int

    @classmethod
    def start(
        cls, columns: np.ndarray, labels: np.ndarray, n_labels: int
    ) -> _SearchPart:
        """Every row in one class (S = ∅); labels kept in the narrowest dtype."""
        labels = labels.astype(narrow_dtype(np.array([n_labels])))
        classes = np.zeros(labels.shape[0], dtype=np.uint32)
        return cls(columns, list(range(columns.shape[0])), labels, classes, 1)

    def column(self, attribute: int) -> np.ndarray:
        return self.columns[self.index.index(attribute)]

    def __sizeof__(self) -> int:
        # What Dask's scheduler weighs when it places tasks and counts a worker's
        # memory (its default for an unknown object would be a few bytes).
        arrays = (self.columns, self.labels, self.classes)
        return object.__sizeof__(self) + sum(a.nbytes for a in arrays)

    def refined(
        self, attribute: int, card: int, groups: np.ndarray, new_ids: np.ndarray
    ) -> _SearchPart:
        """Rows of the (class, value) groups ``groups`` (sorted keys), in new classes.

        Row ``r`` goes to class ``new_ids[rank]``, ``rank`` the position of its key
        ``class · card + value`` in ``groups``; rows of other groups are dropped, and
        so is the column of ``attribute``.
        """
        classes = self.refined_classes(attribute, card, groups, new_ids)
        index = [-1 if j == attribute else j for j in self.index]
        n_classes = int(new_ids.max()) + 1 if new_ids.shape[0] else 0
        kept = classes != _DROPPED
        if kept.all():
            # The rows stay: share the codes, only the class ids are new.
            return _SearchPart(self.columns, index, self.labels, classes, n_classes)
        rows = [p for p, j in enumerate(index) if j >= 0]
        # The kept rows in their order: a split into one part, in the core.
        ((columns, labels, classes),) = _core.split_rows(
            aligned(self.columns, self.columns.dtype),
            rows,
            aligned(self.labels, np.uint32),
            classes,
            np.zeros(n_classes, dtype=np.uint32),
            np.arange(n_classes, dtype=np.uint32),
            1,
        )
        index = [index[p] for p in rows]
        return _SearchPart(columns, index, labels, classes, n_classes)

    def refined_classes(
        self, attribute: int, card: int, groups: np.ndarray, new_ids: np.ndarray
    ) -> np.ndarray:
        """Return the class of every row refined by ``attribute`` (as :meth:`refined`).

        Rows of groups not in ``groups`` get ``_DROPPED``; one pass over the rows in
        the core (``privtab._core.refined_classes``).
        """
        return _core.refined_classes(
            aligned(self.columns, self.columns.dtype),
            self.index.index(attribute),
            card,
            aligned(self.classes, np.uint32),
            max(self.n_classes, 1),
            aligned(groups, np.uint64),
            aligned(new_ids, np.uint32),
        )

    def all_counts(
        self, candidates: list[int], cards: np.ndarray, n_labels: int
    ) -> list[KeyCounts]:
        """Return :meth:`counts` of every candidate.

        In one pass over the rows (the core's ``class_value_label_counts``) while
        every table is dense and all fit in :data:`_ONE_PASS_CELLS` cells.
        """
        n = self.labels.shape[0]
        n_classes = max(self.n_classes, 1)
        cells = [n_classes * int(cards[a]) * n_labels for a in candidates]
        if (
            n == 0
            or sum(cells) > _ONE_PASS_CELLS
            or max(cells, default=0) > max(1 << 16, 2 * n)
        ):
            return [self.counts(a, int(cards[a]), n_labels) for a in candidates]
        tables = _core.class_value_label_counts(
            aligned(self.columns, self.columns.dtype),
            [self.index.index(a) for a in candidates],
            aligned(cards[candidates], np.uint32),
            aligned(self.classes, np.uint32),
            n_classes,
            aligned(self.labels, np.uint32),
            n_labels,
        )
        counted = []
        for table in tables:
            keys = np.flatnonzero(table).astype(np.uint64)
            counted.append((keys, table[keys]))
        return counted

    def counts(self, attribute: int, card: int, n_labels: int) -> KeyCounts:
        """Count (class, value of ``attribute``, label), keyed as the merge keys them.

        The key ``(class · card + value) · n_labels + label`` is that of the pair
        ``(class, value · n_labels + label)`` in a contingency table; small tables are
        counted densely (``_core.contingency_table``), others sparsely.
        """
        n = self.labels.shape[0]
        cells = max(self.n_classes, 1) * card * n_labels
        if cells >= 1 << 64:
            raise DomainError(
                f"the distributed discernibility search keys {max(self.n_classes, 1)} "
                f"classes x {card} values x {n_labels} labels, more than 2**64"
            )
        if n == 0:
            empty = np.zeros(0, dtype=np.uint64)
            return empty, empty.copy()
        if card * n_labels > np.iinfo(np.uint32).max:
            keys = self.classes.astype(np.uint64) * np.uint64(card)
            keys += self.column(attribute)
            keys *= np.uint64(n_labels)
            keys += self.labels
            return _core.count_keys(keys)
        values = np.multiply(
            self.column(attribute), np.uint32(n_labels), dtype=np.uint32
        )
        values += self.labels
        classes = max(self.n_classes, 1)
        if cells <= max(1 << 16, 2 * n):
            table = _core.contingency_table(
                aligned(self.classes, np.uint32), classes, values, card * n_labels
            ).ravel()
            keys = np.flatnonzero(table).astype(np.uint64)
            return keys, table[keys]
        return _core.contingency_sparse(
            aligned(self.classes, np.uint32), classes, values, card * n_labels
        )

    def label_counts(self, n_labels: int) -> np.ndarray:
        return np.bincount(self.labels, minlength=n_labels).astype(np.uint64)


@dataclasses.dataclass
class _LocalPart:
    """The rows of one partition once each class of S lies in one partition.

    Attributes
    ----------
    columns : ndarray of shape (len(index), n_kept)
        Codes of the remaining candidates (narrow dtype), rows grouped by class, or
        in any order while ``classes`` is given.
    index : list of int
        The table's column number of each row of ``columns``.
    labels : ndarray of shape (n_kept,), uint32
    bounds : ndarray of shape (n_classes + 1,), uint64, or None
        Class ``b`` is the kept rows ``bounds[b]:bounds[b + 1]``; every class mixes
        labels. None while ``classes`` is given.
    classes : ndarray of shape (n_kept,), uint32, or None
        The class of every row (below ``n_classes``), as the rows arrive from the
        partitions they were moved from; the next round groups them.
    n_classes : int
    """

    columns: np.ndarray
    index: list[int]
    labels: np.ndarray
    bounds: np.ndarray | None
    classes: np.ndarray | None = None
    n_classes: int = 0

    def __sizeof__(self) -> int:
        arrays = (self.columns, self.labels, self.bounds, self.classes)
        return object.__sizeof__(self) + sum(a.nbytes for a in arrays if a is not None)

    def label_counts(self, n_labels: int) -> np.ndarray:
        return np.bincount(self.labels, minlength=n_labels).astype(np.uint64)


def _merged_round(
    part: _SearchPart | None,
    columns: np.ndarray | None,
    labels: np.ndarray | None,
    refinement: tuple[int, np.ndarray] | None,
    candidates: list[int],
    cards: np.ndarray,
    n_labels: int,
) -> tuple[list[KeyCounts], _SearchPart]:
    """Run a round whose classes span partitions: counts to merge, refined rows.

    The first round starts from the partition's ``columns`` and ``labels``; later
    rounds refine ``part`` by the column chosen last and the (class, value) groups
    that mix labels over the whole table (``refinement``): their ranks are the new
    class ids, the same in every partition.
    """
    if part is None:
        assert columns is not None
        assert labels is not None
        part = _SearchPart.start(columns, labels, n_labels)
    if refinement is not None:
        attribute, groups = refinement
        ranks = np.arange(groups.shape[0], dtype=np.uint32)
        part = part.refined(attribute, int(cards[attribute]), groups, ranks)
    return part.all_counts(candidates, cards, n_labels), part


def _split_part(
    part: _SearchPart,
    attribute: int,
    card: int,
    routing: tuple[np.ndarray, np.ndarray, np.ndarray],
    n_parts: int,
) -> list[_SearchPart]:
    """Refine ``part`` by the merged groups, then split its rows by destination.

    ``routing`` holds the groups (sorted (class, value) keys, the new classes), the
    partition each goes to, and its class id there.
    """
    groups, destination, local_ids = routing
    classes = part.refined_classes(
        attribute, card, groups, np.arange(groups.shape[0], dtype=np.uint32)
    )
    moved = [p for p, j in enumerate(part.index) if j >= 0 and j != attribute]
    index = [part.index[p] for p in moved]
    pieces = _core.split_rows(
        aligned(part.columns, part.columns.dtype),
        moved,
        aligned(part.labels, np.uint32),
        classes,
        aligned(destination, np.uint32),
        aligned(local_ids, np.uint32),
        n_parts,
    )
    return [
        _SearchPart(codes, index, labels, local, 0) for codes, labels, local in pieces
    ]


def _joined_parts(n_classes: int, *pieces: _SearchPart) -> _LocalPart:
    """Join the rows several partitions sent here (classes numbered locally).

    The rows stay in the order they arrive, with their classes: the next round
    (:func:`_local_round`) groups them by class in the core, as it copies them.
    """
    return _LocalPart(
        np.concatenate([p.columns for p in pieces], axis=1),
        pieces[0].index,
        np.concatenate([p.labels for p in pieces]).astype(np.uint32, copy=False),
        None,
        np.concatenate([p.classes for p in pieces]),
        n_classes,
    )


def _local_round(
    part: _LocalPart,
    refine_by: int | None,
    candidates: list[int],
    cards: np.ndarray,
    n_labels: int,
) -> tuple[list[int], np.ndarray, _LocalPart]:
    """Run a round whose classes each lie in one partition: summable pair counts.

    Refining by the column chosen last needs only this partition's rows, since a
    class and all its rows are here; so do the undiscerned pairs of every candidate,
    whose sums over the partitions are the table's. Both are one call of the core's
    discernibility search on the rows grouped by class
    (``privtab._core.grouped_discernibility_round``), which keeps the rows of the
    classes that still mix labels, grouped by class, in the columns' dtype. Rows
    just moved here from other partitions come with their classes instead, and the
    core groups them as it copies them.
    """
    position = None if refine_by is None else part.index.index(refine_by)
    pairs, refined, bounds = _core.grouped_discernibility_round(
        aligned(part.columns, part.columns.dtype),
        aligned(cards[part.index], np.uint32),
        aligned(part.labels, np.uint32),
        n_labels,
        None if part.bounds is None else aligned(part.bounds, np.uint64),
        position,
        classes=None if part.classes is None else aligned(part.classes, np.uint32),
        n_classes=part.n_classes,
    )
    others = [j for j in part.index if j != refine_by]
    left_of = dict(zip(others, pairs.tolist(), strict=True))
    if refined is not None:
        codes, labels = refined
        part = _LocalPart(codes, others, labels, bounds.astype(np.uint64))
    left = [left_of[a] for a in candidates]
    return left, part.label_counts(n_labels), part


def _sum_rounds(
    *parts: tuple[list[int], np.ndarray],
) -> tuple[list[int], np.ndarray]:
    left = [sum(values) for values in zip(*(p[0] for p in parts), strict=True)]
    return left, sum_arrays(*(p[1] for p in parts))


def _local_part(round_: tuple[list[int], np.ndarray, _LocalPart]) -> _LocalPart:
    return round_[2]


def _local_sums(
    round_: tuple[list[int], np.ndarray, _LocalPart],
) -> tuple[list[int], np.ndarray]:
    return round_[0], round_[1]


def _piece(pieces: list[_SearchPart], p: int) -> _SearchPart:
    return pieces[p]


def _balanced_destinations(
    sizes: np.ndarray, n_parts: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spread classes of ``sizes`` rows over ``n_parts`` partitions, about evenly.

    Classes are dealt largest first, back and forth over the partitions. Returns the
    destination of every class, its id within its destination, and the number of
    classes per destination.
    """
    order = np.argsort(-sizes.astype(np.int64), kind="stable")
    turn = np.arange(order.shape[0]) % (2 * n_parts)
    dealt = np.where(turn < n_parts, turn, 2 * n_parts - 1 - turn)
    destination = np.empty(order.shape[0], dtype=np.int64)
    destination[order] = dealt
    by_destination = np.argsort(destination, kind="stable")
    per_part = np.bincount(destination, minlength=n_parts)
    starts = np.concatenate([[0], np.cumsum(per_part)[:-1]])
    local_ids = np.empty(order.shape[0], dtype=np.uint32)
    local_ids[by_destination] = (
        np.arange(order.shape[0]) - np.repeat(starts, per_part)
    ).astype(np.uint32)
    return destination, local_ids, per_part


class _Search:
    """Where a distributed discernibility search stands (kept by the client).

    ``parts`` are the partitions' kept rows (Dask futures or delayed values).
    While classes span partitions (``local`` false), ``counted`` holds the merged
    counts of the last round's ``candidates``.
    """

    def __init__(self) -> None:
        self.parts: list[Any] | None = None
        self.local = False
        self.candidates: list[int] = []
        self.counted: list[KeyCounts] = []


#: Most cells of all candidates' (class, value, label) tables counted together in one
#: pass over a partition's rows (8 bytes a cell).
_ONE_PASS_CELLS = 1 << 22
#: Cells of a candidate's (class, value, label) table from which the search moves
#: every class into one partition: beyond it the merged counts of every candidate
#: (16 bytes a cell, per partition) cost more than moving the rows once.
_LOCAL_CELLS = 1 << 16


def _first(pair: tuple[Any, Any]) -> Any:
    return pair[0]


def _second(pair: tuple[Any, Any]) -> Any:
    return pair[1]


# The table ---------------------------------------------------------------------
class DaskTable(CodeTable):
    """A :class:`CodeTable` over the partitions of a Dask collection.

    Build it with :func:`dask_table`. Blocks are validated where they are counted;
    an error in one names the partition, the files Dask reads it from (``files``,
    one tuple per block, when known) and the partition's own row numbers.
    """

    def __init__(
        self,
        raw_blocks: list[Any],
        cardinalities: np.ndarray,
        name: str,
        lengths: list[int] | None = None,
        *,
        validated: bool = False,
        files: list[tuple[str, ...]] | None = None,
    ) -> None:
        self.cardinalities = np.require(cardinalities, np.uint32, ["C"])
        self.n_labels = None
        self.name = name
        self._raw = raw_blocks
        self._files: list[tuple[str, ...]] = (
            files if files is not None else [()] * len(raw_blocks)
        )
        if validated:
            self._blocks = list(raw_blocks)
        else:
            task = _located(_block_columns)
            self._blocks = [
                task(self._place(p), raw, self.cardinalities, name)
                for p, raw in enumerate(raw_blocks)
            ]
        self._labels: list[Any] | None = None
        # The collection of codes the blocks are read from, and that of the labels
        # (with its name and label set): a selection reads only its columns of them.
        self._source: Any = None
        self._label_source: tuple[Any, str, np.ndarray] | None = None
        # (frame, encode, args): codes encoded lazily, encode(partition, *args).
        self._encoded_frame: tuple[Any, Callable[..., np.ndarray], tuple] | None = None
        self._lengths = lengths
        self._rows: int | None = None if lengths is None else int(sum(lengths))

    @property
    def n_rows(self) -> int:
        """Number of rows (computed once).

        A DataFrame is asked its length, which Dask answers from the Parquet footers
        when it reads Parquet (no pass over the data); otherwise the partitions are
        counted.
        """
        if self._rows is None and hasattr(self._source, "columns"):
            self._rows = len(self._source)
        if self._rows is None:
            lengths = _compute(*[_delayed(_n_rows)(raw) for raw in self._raw])
            self._lengths = [int(n) for n in lengths]
            self._rows = int(sum(self._lengths))
        return self._rows

    @property
    def n_partitions(self) -> int:
        """Number of partitions (blocks of rows)."""
        return len(self._blocks)

    def _place(self, partition: int) -> str:
        """Where a partition's rows are (``_place``)."""
        return _place(partition, self._files[partition], self.name)

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
    ) -> tuple[DaskTable, np.ndarray]:
        """Return this table with the label codes of ``y``, and the label set.

        As ``privtab._validation.check_labels``: a declared ``classes`` is
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
        table, y_blocks, y_files = self._aligned_with(y, name)
        places = [_place(p, files, name) for p, files in enumerate(y_files)]
        if declared is None:
            unique = _located(_block_unique_labels)
            label_set = _reduce(
                [
                    unique(where, b, name)
                    for where, b in zip(places, y_blocks, strict=True)
                ],
                _union,
            )
            check_inferred_labels(
                label_set,
                name,
                min_classes=min_classes,
                n_classes=n_classes,
                owner=owner,
                warn=warn,
            )
        else:
            label_set = declared
        labelled = DaskTable.__new__(DaskTable)
        labelled.__dict__.update(table.__dict__)
        task = _located(_block_labels)
        labelled._labels = [
            task(where, yb, raw, label_set, name)
            for where, yb, raw in zip(places, y_blocks, table._raw, strict=True)
        ]
        labelled.n_labels = int(label_set.shape[0])
        labelled._label_source = (y, name, label_set)
        return labelled, label_set

    def _aligned_with(
        self, y: Any, name: str
    ) -> tuple[DaskTable, list[Any], list[tuple[str, ...]]]:
        """Return a table of the same rows, and the blocks of ``y`` partitioned alike.

        The files each block of ``y`` is read from come third (empty where unknown).

        A Dask Series is joined to a Dask DataFrame of codes, or to the Dask
        DataFrame that ``TableEncoder`` encodes partition by partition (Dask aligns
        them, even where its optimizer would partition the two differently); a Dask
        array of labels is rechunked to the row chunks of a Dask array of codes. Any
        other pair is matched row by row (``_aligned_rows``).
        """
        import dask.array as da

        source = self._source
        encoded = self._encoded_frame
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
            blocks, files = _partitions(joined, name, 2)
            table = DaskTable(
                [_delayed(_without)(b) for b in blocks],
                self.cardinalities,
                self.name,
                files=files,
            )
            table._source = source
            return table, [_delayed(_label_column)(b) for b in blocks], files
        elif encoded is not None and hasattr(y, "to_frame") and y.ndim == 1:
            frame, encode, args = encoded
            blocks, files = _partitions(frame.assign(**{_LABEL_COLUMN: y}), name, 2)
            task = _located(_encoded_without_label)
            table = DaskTable(
                [
                    task(_place(p, files[p], "X"), b, encode, *args)
                    for p, b in enumerate(blocks)
                ],
                self.cardinalities,
                self.name,
                files=files,
            )
            table._source = frame
            table._encoded_frame = encoded
            return table, [_delayed(_label_column)(b) for b in blocks], files
        read, y_files = _partitions(y, name, 1)
        _, y_blocks = _aligned_rows([self._raw, read], ["X", name])
        if y_blocks is not read:
            y_files = [()] * len(y_blocks)
        return self, y_blocks, y_files

    def label_blocks(self) -> list[Any]:
        """Return the delayed label codes of the partitions."""
        if self._labels is None:
            raise ValueError("this table has no labels")
        return self._labels

    def select(self, columns: Sequence[int], *, with_label: bool = False) -> DaskTable:
        """Return a table of some columns (and the label codes last, if asked).

        Where the table wraps a collection of codes, the new one reads only the
        selected columns (and the labels) from it (``_projected``): a Parquet
        read then reads only those.
        """
        index = list(columns)
        projected = self._projected(index, with_label)
        if projected is not None:
            return projected
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
        selected = DaskTable(
            blocks, cards, self.name, self._lengths, validated=True, files=self._files
        )
        selected._raw = self._raw
        selected._rows = self._rows
        return selected

    def _projected(self, index: list[int], with_label: bool) -> DaskTable | None:
        """:meth:`select` on the columns ``index`` of the source collection, if known.

        ``None`` where the source is not a collection of these codes (codes encoded
        lazily, or a table made by :meth:`select`), or where the selection is every
        column in order, or repeats one.
        """
        source = self._source
        if (
            source is None
            or self._encoded_frame is not None
            or len(set(index)) != len(index)
            or index == list(range(self.n_columns))
            or (with_label and self._label_source is None)
        ):
            return None
        table, _ = dask_table(source, self.cardinalities, self.name, columns=index)
        if not with_label:
            return table
        assert self._label_source is not None
        y, name, label_set = self._label_source
        table, _ = table.with_labels(y, label_set, name=name, warn=False)
        return table.select(list(range(len(index))), with_label=True)

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

    def _search_start(self) -> _Search:
        return _Search()

    def _search_step(
        self, state: _Search, refine_by: int | None, candidates: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, _Search]:
        """One round of the search; the partitions keep their rows for the next one.

        The first round reads the partitions (validated, narrowed) and keeps them on
        the workers; no later round reads the source again. While the classes of S
        are few, class ids are global and the (class, value, label) counts of the
        partitions are merged. Once a candidate's table would exceed
        :data:`_LOCAL_CELLS` cells, the rows are moved once so that every class lies
        in one partition (classes dealt by size); from then on each partition
        refines its own classes and returns one undiscerned-pair count per candidate,
        and the counts add up.
        """
        import dask

        assert self.n_labels is not None
        n_labels = self.n_labels
        cards = self.cardinalities
        candidates = list(candidates)
        n_parts = len(self._blocks)
        parts = state.parts
        # The client lets go of the previous round's rows as soon as the tasks of
        # this one hold them, so that the workers can free each when it is used.
        state.parts = None
        if parts is not None and not state.local:
            assert refine_by is not None
            keys, counts = state.counted[state.candidates.index(refine_by)]
            state.counted = []
            groups = _mixed_groups(keys, n_labels)
            cells = groups.shape[0] * int(cards[candidates].max()) * n_labels
            if cells > _LOCAL_CELLS and (
                n_parts == 1 or groups.shape[0] >= 4 * n_parts
            ):
                parts = self._gather_classes(
                    parts, refine_by, keys, counts, groups, n_parts
                )
                state.local = True
                refine_by = None
        if state.local:
            assert parts is not None
            task = _delayed(_local_round)
            rounds = [
                task(part, refine_by, candidates, cards, n_labels) for part in parts
            ]
            kept = _keep(
                *[_delayed(_local_part)(r) for r in rounds],
                *[_delayed(_local_sums)(r) for r in rounds],
            )
            del rounds, parts
            state.parts = list(kept[:n_parts])
            sums = list(kept[n_parts:])
            del kept
            left, label_counts = _reduce(sums, _sum_rounds)
            return np.array(left, dtype=np.uint64), label_counts, state
        task = _delayed(_merged_round)
        if parts is None:
            steps = [
                task(None, block, labels, None, candidates, cards, n_labels)
                for block, labels in zip(self._blocks, self.label_blocks(), strict=True)
            ]
        else:
            shared = dask.delayed((refine_by, groups), pure=True)
            steps = [
                task(part, None, None, shared, candidates, cards, n_labels)
                for part in parts
            ]
        kept = _keep(
            *[_delayed(_second)(step) for step in steps],
            *[_delayed(_first)(step) for step in steps],
        )
        del steps, parts
        state.parts = list(kept[:n_parts])
        partial = list(kept[n_parts:])
        del kept
        counted = _reduce(partial, merge_count_lists)
        state.candidates, state.counted = candidates, counted
        left = np.array(
            [_undiscerned(keys, counts, n_labels) for keys, counts in counted],
            dtype=np.uint64,
        )
        keys, counts = counted[0]
        label_counts = np.zeros(n_labels, dtype=np.uint64)
        np.add.at(label_counts, (keys % np.uint64(n_labels)).astype(np.int64), counts)
        return left, label_counts, state

    def _gather_classes(
        self,
        parts: list[Any],
        refine_by: int,
        keys: np.ndarray,
        counts: np.ndarray,
        groups: np.ndarray,
        n_parts: int,
    ) -> list[Any]:
        """Refine by ``refine_by`` and move the rows so that each class is in one part.

        ``keys``/``counts`` are the merged counts of ``refine_by``; ``groups`` its
        (class, value) groups that mix labels, the new classes.
        """
        import dask

        starts = _group_starts(keys, self.n_labels)
        ends = np.r_[starts[1:], keys.shape[0]]
        # The groups of _mixed_groups, in the same order: two labels or more.
        sizes = np.add.reduceat(counts, starts)[(ends - starts) >= 2]
        destination, local_ids, per_part = _balanced_destinations(sizes, n_parts)
        split = _delayed(_split_part)
        shared = dask.delayed(
            (groups, destination.astype(np.uint32), local_ids), pure=True
        )
        pieces = [
            split(
                part,
                refine_by,
                int(self.cardinalities[refine_by]),
                shared,
                n_parts,
            )
            for part in parts
        ]
        piece = _delayed(_piece)
        join = _delayed(_joined_parts)
        return [
            join(int(per_part[p]), *[piece(s, p) for s in pieces])
            for p in range(n_parts)
        ]


#: The column that carries the labels of a Dask Series joined to a DataFrame of codes.
_LABEL_COLUMN = "__privtab_label__"


def _without(block: Any) -> Any:
    return block.drop(columns=_LABEL_COLUMN)


def _label_column(block: Any) -> Any:
    return block[_LABEL_COLUMN]


def _encoded_without_label(
    block: Any, encode: Callable[..., np.ndarray], *args: Any
) -> np.ndarray:
    return encode(_without(block), *args)


def _rows_of(columns: np.ndarray, index: list[int]) -> np.ndarray:
    return np.ascontiguousarray(columns[index])


def _stack_label(
    columns: np.ndarray, labels: np.ndarray, index: list[int]
) -> np.ndarray:
    return np.ascontiguousarray(np.vstack([columns[index], labels[None, :]]))


def dask_table(
    X: Any, cardinalities: Any, name: str = "X", columns: Sequence[int] | None = None
) -> tuple[DaskTable, bool]:
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
    columns : sequence of int, optional
        Column numbers (distinct, checked by the caller) of the only columns the
        table holds, in this order; every column by default. They are selected on
        the collection before its partitions are taken, so that Dask reads only
        these (a Parquet read reads only their column chunks); the cardinalities,
        given for every column of ``X``, are checked for all of them first.

    Returns
    -------
    table : DaskTable
    inferred : bool
        Whether the cardinalities were read off the data (the caller warns, as the
        in-memory path of the same method does).
    """
    from privtab._validation import check_cardinalities

    encoded_frame = None
    if is_encoded(X):
        if cardinalities is None:
            cardinalities = X.cardinalities
        encoded_frame = getattr(X, "_encoded_frame", None)
        X = X.codes
    if columns is not None:
        index = list(columns)
        if cardinalities is not None:
            every = check_cardinalities(cardinalities, _n_columns(X, cardinalities))
            cardinalities = every[index]
        X = _projected(X, index)
        encoded_frame = None
    raw, files = _partitions(X, name, 2)
    lengths = None
    chunks = getattr(X, "chunks", None)
    if chunks is not None and not any(np.isnan(c) for c in chunks[0]):
        lengths = [int(c) for c in chunks[0]]
    inferred = cardinalities is None
    if inferred:
        task = _located(_block_cardinalities)
        found = _reduce(
            [task(_place(p, files[p], name), b, name) for p, b in enumerate(raw)],
            _max_cardinalities,
        )
        if found is None:
            raise ValueError(f"{name} must be non-empty, got 0 rows in every partition")
        cards = found
    else:
        cards = np.asarray(cardinalities)
    n_columns = _n_columns(X, cards)
    table = DaskTable(
        raw, check_cardinalities(cards, n_columns), name, lengths, files=files
    )
    table._source = X
    table._encoded_frame = encoded_frame
    return table, inferred


def distributed_n_columns(X: Any) -> int | None:
    """Return the number of columns of a 2-D Dask collection or lazy ``EncodedTable``.

    Parameters
    ----------
    X : dask.array.Array, dask.dataframe.DataFrame or EncodedTable
        The codes (an ``EncodedTable``'s are a Dask array).

    Returns
    -------
    int or None
        From the collection's column names or shape, nothing read; ``None`` where
        neither says (a Dask array whose column chunks are unknown).
    """
    codes = X.codes if is_encoded(X) else X
    if getattr(codes, "columns", None) is not None:
        return len(codes.columns)
    shape = getattr(codes, "shape", None)
    if shape is not None and len(shape) == 2 and not np.isnan(shape[1]):
        return int(shape[1])
    return None


def _projected(X: Any, columns: list[int]) -> Any:
    """Select the columns numbered ``columns`` of a Dask DataFrame or 2-D Dask array.

    dask-expr carries a selection made before the collection is optimized down to
    its source: a Parquet read then reads only these columns.
    """
    names = getattr(X, "columns", None)
    if names is not None:
        return X[[names[j] for j in columns]]
    return X[:, columns]


def _n_columns(X: Any, cards: np.ndarray) -> int:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2 and not np.isnan(shape[1]):
        return int(shape[1])
    columns = getattr(X, "columns", None)
    return len(columns) if columns is not None else int(np.asarray(cards).shape[0])
