"""Contingency tables, mergeable sparse counts and entropies (log base 2).

These are non-private building blocks: they read the data exactly. Differentially
private methods add noise to their outputs (a contingency table has L1 sensitivity 2
under the replace-one-record neighbourhood); :func:`dp_contingency_table` is the
release of a contingency table of two columns of an ``EncodedTable``. A table whose
shape is read off the data (``contingency_table`` without ``kx`` and ``ky``) warns
with :class:`~privtab.exceptions.PrivacyLeakWarning`: noise cannot hide its shape.

Core kernels called: ``privtab._core.contingency_table``,
``privtab._core.contingency_sparse``, ``privtab._core.count_columns``,
``privtab._core.count_columns_of_rows``, ``privtab._core.count_keys``,
``privtab._core.merge_counts``, ``privtab._core.entropy``,
``privtab._core.mutual_information``, ``privtab._core.symmetric_uncertainty`` and,
for the release, ``privtab._core.discrete_laplace_scale`` and
``privtab._core.add_discrete_laplace`` (through
:func:`~privtab.discrete_laplace_mechanism`).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from privtab import _core
from privtab._estimator import PrivateRun
from privtab._random import RandomState
from privtab._validation import (
    as_cardinalities,
    as_code_columns,
    as_code_vector,
    as_column_indices,
    as_float_array,
    as_keys,
    check_bool,
    check_cardinalities,
    check_epsilon,
    check_keys_in_domain,
    check_threads,
    rows_in_place,
    warn_inferred_domain,
)
from privtab.accountant import BudgetAccountant
from privtab.engine import (
    dask_table,
    distributed_n_columns,
    is_distributed,
    map_blocks_1d,
    sum_arrays,
)
from privtab.mechanisms import add_discrete_laplace
from privtab.mixed_radix import mixed_radix_decode
from privtab.table import EncodedTable

__all__ = [
    "SparseCounts",
    "contingency_table",
    "count_columns",
    "count_keys",
    "dp_contingency_table",
    "entropy",
    "mutual_information",
    "symmetric_uncertainty",
]


class SparseCounts:
    """Counts of distinct ``uint64`` keys, sorted by key, that add up across row blocks.

    Build one with :func:`count_keys`, :func:`count_columns` or
    ``contingency_table(..., sparse=True)``. Counts of disjoint blocks of rows
    :meth:`merge` into the counts of all the rows, so partitions of a large or
    distributed table can be counted separately and combined before noise is added
    once.

    Parameters
    ----------
    keys : array-like of int of shape (n_keys,)
        Distinct keys, strictly increasing.
    counts : array-like of int of shape (n_keys,)
        The count of each key, all >= 1.
    cardinalities : sequence of int, optional
        The domain sizes the keys are mixed-radix encoded over, if any.

    Attributes
    ----------
    keys : ndarray of shape (n_keys,), uint64
    counts : ndarray of shape (n_keys,), int64
    cardinalities : tuple of int or None

    Examples
    --------
    >>> from privtab.counts import count_keys
    >>> a = count_keys([5, 1, 5])
    >>> b = count_keys([2, 5])
    >>> merged = a.merge(b)
    >>> merged.keys, merged.counts
    (array([1, 2, 5], dtype=uint64), array([1, 1, 3]))
    """

    def __init__(self, keys: Any, counts: Any, cardinalities: Any = None) -> None:
        keys_array = as_keys(keys, allow_empty=True)
        counts_array = np.asarray(counts)
        if keys_array.ndim != 1 or counts_array.shape != keys_array.shape:
            raise ValueError(
                "keys and counts must be 1-D of the same length, got shapes "
                f"{keys_array.shape} and {counts_array.shape}"
            )
        if keys_array.size and np.any(keys_array[1:] <= keys_array[:-1]):
            raise ValueError("keys must be strictly increasing")
        if not np.issubdtype(counts_array.dtype, np.integer):
            raise TypeError(
                f"counts must hold integers, got dtype {counts_array.dtype}"
            )
        if counts_array.size and counts_array.min() < 1:
            raise ValueError(f"counts must be >= 1, got {counts_array.min()}")
        self.cardinalities = (
            None
            if cardinalities is None
            else tuple(int(k) for k in as_cardinalities(cardinalities))
        )
        if self.cardinalities is not None:
            check_keys_in_domain(keys_array, self.cardinalities)
        self.keys = keys_array
        self.counts = np.require(counts_array, dtype=np.int64, requirements=["C"])

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SparseCounts):
            return NotImplemented
        return (
            self.cardinalities == other.cardinalities
            and np.array_equal(self.keys, other.keys)
            and np.array_equal(self.counts, other.counts)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"SparseCounts(n_keys={len(self)}, total={self.total}, "
            f"cardinalities={self.cardinalities})"
        )

    @property
    def total(self) -> int:
        """The number of rows counted (the sum of the counts)."""
        return int(self.counts.sum(dtype=np.uint64))

    def merge(self, other: SparseCounts) -> SparseCounts:
        """Return the counts of the rows counted by ``self`` and by ``other``.

        Parameters
        ----------
        other : SparseCounts
            Counts over the same key space (same ``cardinalities``).

        Returns
        -------
        SparseCounts
            Keys present in both get the sum of their counts.

        Raises
        ------
        TypeError
            If ``other`` is not a ``SparseCounts``.
        ValueError
            If the two were counted over different cardinalities.
        """
        if not isinstance(other, SparseCounts):
            raise TypeError(f"other must be a SparseCounts, got {type(other).__name__}")
        if self.cardinalities != other.cardinalities:
            raise ValueError(
                "cannot merge counts over different cardinalities: "
                f"{self.cardinalities} and {other.cardinalities}"
            )
        # Counts unpickled from another process may be unaligned: the core reads slices.
        keys, counts = _core.merge_counts(
            *(
                np.require(a, dtype=np.uint64, requirements=["C", "A"])
                for a in (self.keys, self.counts, other.keys, other.counts)
            )
        )
        if counts.size and counts.max() > np.iinfo(np.int64).max:
            raise ValueError("merged counts exceed 2**63 - 1")
        return SparseCounts(keys, counts.astype(np.int64), self.cardinalities)

    def to_codes(self) -> np.ndarray:
        """Decode the keys into rows of codes (needs ``cardinalities``).

        Returns
        -------
        ndarray of shape (n_keys, len(cardinalities)), uint32
        """
        if self.cardinalities is None:
            raise ValueError("to_codes needs the cardinalities the keys were made with")
        if len(self) == 0:
            return np.zeros((0, len(self.cardinalities)), dtype=np.uint32)
        return mixed_radix_decode(self.keys, self.cardinalities)


def count_keys(
    keys: Any, *, cardinalities: Any = None, n_threads: int | None = None
) -> SparseCounts:
    """Count the distinct values of ``uint64`` keys in (near) linear time.

    Parameters
    ----------
    keys : array-like of int of shape (n_samples,)
        Keys in ``[0, 2**64)``, e.g. from :func:`~privtab.mixed_radix_encode`.
        A Dask array is counted partition by partition (:mod:`privtab.engine`).
    cardinalities : sequence of int, optional
        Recorded on the result, so that :meth:`SparseCounts.to_codes` can decode it.
    n_threads : int, optional
        Threads to use (default: all cores). The result does not depend on it.

    Returns
    -------
    SparseCounts

    Examples
    --------
    >>> from privtab.counts import count_keys
    >>> count_keys([3, 3, 0]).counts
    array([1, 2])
    """
    if is_distributed(keys):
        return map_blocks_1d(
            _block_count_keys, _merge_sparse, [keys], ["keys"], cardinalities, n_threads
        )
    array = as_keys(keys)
    unique, counts = _core.count_keys(array, n_threads=check_threads(n_threads))
    return SparseCounts(unique, counts.astype(np.int64), cardinalities)


def count_columns(
    codes: Any,
    cardinalities: Any = None,
    columns: Any = None,
    *,
    n_threads: int | None = None,
) -> SparseCounts:
    """Count the value combinations of some columns (a k-way marginal), sparsely.

    Parameters
    ----------
    codes : array-like of shape (n_samples, n_features), DataFrame or ``EncodedTable``
        Integer codes. A Dask array or DataFrame is counted partition by partition
        (:mod:`privtab.engine`).
    cardinalities : array-like of int of shape (n_features,)
        Public domain sizes (taken from an ``EncodedTable``).
    columns : sequence of int, optional
        The column indices to count over, in key order (first most significant);
        all columns by default.
    n_threads : int, optional
        Threads to use (default: all cores).

    Returns
    -------
    SparseCounts
        Keys are mixed-radix over the selected cardinalities; ``cardinalities`` is set.

    Raises
    ------
    DomainError
        If the product of the selected cardinalities exceeds 2**64.

    Examples
    --------
    >>> import numpy as np
    >>> from privtab.counts import count_columns
    >>> counts = count_columns(np.array([[0, 1], [0, 1], [1, 0]]), [2, 2])
    >>> counts.to_codes(), counts.counts
    (array([[0, 1],
           [1, 0]], dtype=uint32), array([2, 1]))
    """
    if is_distributed(codes):
        return _distributed_count_columns(codes, cardinalities, columns)
    threads = check_threads(n_threads)
    rows = rows_in_place(codes) if cardinalities is not None else None
    if rows is not None:
        try:
            cards = check_cardinalities(cardinalities, rows.shape[1])
            subset = _column_subset(columns, cards.shape[0])
            keys, counts = _core.count_columns_of_rows(
                rows, cards, subset, n_threads=threads
            )
        except (ValueError, TypeError):
            # The general path below raises the same error, worded as for any input.
            pass
        else:
            return _subset_counts(keys, counts, cards, subset)
    data, cards = as_code_columns(codes, "codes", cardinalities)
    subset = _column_subset(columns, cards.shape[0])
    keys, counts = _core.count_columns(data, cards, subset, n_threads=threads)
    return _subset_counts(keys, counts, cards, subset)


def _subset_counts(
    keys: np.ndarray, counts: np.ndarray, cards: np.ndarray, subset: list[int]
) -> SparseCounts:
    sub_cards = [int(cards[j]) for j in subset] if subset else None
    return SparseCounts(keys, counts.astype(np.int64), sub_cards)


def _distributed_count_columns(
    codes: Any, cardinalities: Any, columns: Any
) -> SparseCounts:
    """:func:`count_columns` of a Dask collection; Dask reads the counted columns only.

    Where the collection does not say how many columns it has, every column is read.
    """
    n_columns = distributed_n_columns(codes)
    if n_columns is None:
        table, _ = dask_table(codes, cardinalities, "codes")
        subset = _column_subset(columns, table.n_columns)
    else:
        subset = _column_subset(columns, n_columns)
        used = list(dict.fromkeys(subset))
        table, _ = dask_table(codes, cardinalities, "codes", columns=used or None)
        if used:
            position = {j: p for p, j in enumerate(used)}
            subset = [position[j] for j in subset]
    ((keys, counts),) = table.count([subset])
    return SparseCounts(
        keys,
        counts.astype(np.int64),
        table.cardinalities[subset] if subset else None,
    )


def _column_subset(columns: Any, n_columns: int) -> list[int]:
    """Return the column indices to count over (all by default), checked."""
    if columns is None:
        return list(range(n_columns))
    return as_column_indices(columns, "columns", n_columns)


def contingency_table(
    x: Any,
    y: Any,
    kx: int | None = None,
    ky: int | None = None,
    *,
    sparse: bool = False,
    n_threads: int | None = None,
) -> Any:
    """Count the co-occurrences of two categorical code vectors.

    Parameters
    ----------
    x, y : array-like of int of shape (n_samples,)
        Codes ``0 .. kx - 1`` and ``0 .. ky - 1`` (numpy, pandas or polars; or
        Dask arrays or Series partitioned alike, counted partition by partition).
    kx, ky : int, optional
        Public cardinalities, the shape of the table: for columns of an
        ``EncodedTable``, its ``cardinalities``. ``None`` takes ``max + 1`` of the
        data and emits a :class:`~privtab.exceptions.PrivacyLeakWarning` (see Notes).
    sparse : bool, default False
        Return only the non-zero cells as :class:`SparseCounts` with keys
        ``a * ky + b`` (memory O(n) whatever ``kx * ky``).
    n_threads : int, optional
        Threads to use (default: all cores). The result does not depend on it.

    Returns
    -------
    table : ndarray of shape (kx, ky), int64, or SparseCounts
        ``table[a, b]`` is the number of rows with ``x == a`` and ``y == b``.

    Raises
    ------
    ValueError
        For different lengths, empty input, negative, NaN or out-of-range codes.
    TypeError
        For non-integer codes.
    MemoryError
        If a dense ``kx * ky`` table cannot be allocated (use ``sparse=True``).

    Notes
    -----
    Counted in parallel over fixed blocks of rows into local tables that are added
    together, so the result never depends on the number of threads. Under the
    replace-one-record neighbourhood the table has L1 sensitivity 2, and its shape
    must be public: a shape read off the data (``kx`` or ``ky`` left ``None``)
    shows, whatever noise is added to the counts, whether some record holds the
    largest code (a neighbour without it gives a smaller table). Pass the declared
    cardinalities, or release the table with :func:`dp_contingency_table`.

    Examples
    --------
    >>> from privtab import contingency_table
    >>> contingency_table([0, 1, 1, 2], [1, 0, 0, 1], 3, 2)
    array([[0, 1],
           [2, 0],
           [0, 1]])
    """
    if is_distributed(x, y):
        return _distributed_contingency(x, y, kx, ky, sparse, n_threads)
    sparse = check_bool(sparse, "sparse")
    threads = check_threads(n_threads)
    inferred = [name for name, k in (("kx", kx), ("ky", ky)) if k is None]
    xs, kx = as_code_vector(x, "x", kx, "kx", native=True)
    ys, ky = as_code_vector(y, "y", ky, "ky", native=True)
    if xs.dtype != ys.dtype:
        xs, ys = _same_dtype(xs, ys, [("x", "kx", kx), ("y", "ky", ky)])
    if sparse:
        keys, counts = _core.contingency_sparse(xs, kx, ys, ky, n_threads=threads)
        result: Any = SparseCounts(keys, counts.astype(np.int64), (kx, ky))
    else:
        try:
            table = _core.contingency_table(xs, kx, ys, ky, n_threads=threads)
        except MemoryError as exc:
            raise MemoryError(
                f"the dense kx × ky = {kx} × {ky} table cannot be allocated; pass "
                "sparse=True"
            ) from exc
        result = table.view(np.int64)
    # After every check of the input: a call that fails does not warn.
    if inferred:
        _warn_inferred_shape(inferred)
    return result


def _distributed_contingency(
    x: Any, y: Any, kx: Any, ky: Any, sparse: bool, n_threads: int | None
) -> Any:
    """:func:`contingency_table` of aligned Dask partitions, counted and merged."""
    inferred = [name for name, k in (("kx", kx), ("ky", ky)) if k is None]
    if inferred:
        found = map_blocks_1d(_block_sizes, _largest, [x, y], ["x", "y"])
        kx = found[0] if kx is None else kx
        ky = found[1] if ky is None else ky
    result = map_blocks_1d(
        _block_contingency,
        _merge_sparse if sparse else sum_arrays,
        [x, y],
        ["x", "y"],
        kx,
        ky,
        sparse,
        n_threads,
    )
    if inferred:
        _warn_inferred_shape(inferred)
    return result


def _warn_inferred_shape(inferred: list[str]) -> None:
    warn_inferred_domain(
        f"the cardinalities ({', '.join(inferred)}) of the table",
        owner="contingency_table",
        remedy=(
            "pass kx and ky (an EncodedTable's cardinalities), or release the table "
            "with dp_contingency_table"
        ),
    )


def dp_contingency_table(
    table: EncodedTable,
    col_a: Hashable,
    col_b: Hashable,
    epsilon: float,
    *,
    accountant: BudgetAccountant | None = None,
    random_state: RandomState = None,
    label: str | None = None,
) -> np.ndarray:
    """Release an ε-differentially private contingency table of two columns.

    The table of :func:`contingency_table` over the declared domains of ``col_a``
    and ``col_b``, with exact discrete Laplace noise of scale ``2 / epsilon`` added
    to every cell (:func:`~privtab.discrete_laplace_mechanism`).

    Parameters
    ----------
    table : EncodedTable
        The encoded data (from :class:`~privtab.TableEncoder`, with declared
        domains); its ``cardinalities`` give the shape. A lazy (Dask) table is
        counted partition by partition.
    col_a, col_b : hashable
        The names of the two columns (in ``table.columns``): ``col_a`` indexes the
        rows of the result, ``col_b`` its columns.
    epsilon : float
        Privacy parameter, finite and > 0.
    accountant : BudgetAccountant, optional
        Checked before the data are read, charged ``epsilon`` after success (the
        default accountant when ``None``).
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (the secure default) uses operating-system entropy. A fixed seed makes
        the output reproducible and voids privacy against anyone who knows it.
    label : str, optional
        The label of the accountant's ledger entry (default
        ``"dp_contingency_table(col_a, col_b)"`` with the two names).

    Returns
    -------
    ndarray of int64, shape (cardinality of col_a, cardinality of col_b)
        ``counts[a, b] + Z[a, b]``: the number of rows with code ``a`` in ``col_a``
        and ``b`` in ``col_b``, plus independent noise; cells can be negative.
        Decode the codes with ``table.categories``.

    Raises
    ------
    TypeError
        If ``table`` is not an ``EncodedTable`` (encode the data with
        ``TableEncoder``), or ``label`` is not a str.
    KeyError
        If ``col_a`` or ``col_b`` is not a column of ``table``.
    ValueError
        If ``epsilon`` is not finite and > 0.
    BudgetExceededError
        If ``accountant`` cannot afford ``epsilon`` (before the data are read).
    MemoryError
        If the table of the two declared domains cannot be allocated (refused
        before any noise is drawn, nothing charged).

    Notes
    -----
    Privacy: ``epsilon``-differential privacy under the replace-one-record
    neighbourhood (``n`` is public). The shape is the product of the two declared
    cardinalities, the same on every data set. Replacing one record takes it out of
    its cell ``(a, b)`` and puts its replacement in a cell ``(a', b')``: one count
    goes down by 1 and one goes up by 1 (none changes when the cells are the same),
    so the table has L1 sensitivity 2, and discrete Laplace noise of scale
    ``2 / epsilon`` on every cell, the empty ones included, is ``epsilon``-DP
    (Dwork et al. 2006). The noise is sampled exactly with integer arithmetic
    (Canonne, Kamath and Steinke 2020), so no floating-point rounding reveals the
    counts. Rounding negative cells up to 0, margins and entropies of the result
    are post-processing and cost nothing more. The column names are public. A
    refusal after the noise is drawn charges ``epsilon``.

    Examples
    --------
    >>> from privtab import BudgetAccountant, EncodedTable, dp_contingency_table
    >>> table = EncodedTable([[0, 1], [2, 0], [2, 1]], [4, 2], columns=["a", "b"])
    >>> acc = BudgetAccountant(1.0)
    >>> noisy = dp_contingency_table(table, "a", "b", 0.5, accountant=acc)
    >>> noisy.shape, noisy.dtype, acc.spent
    ((4, 2), dtype('int64'), 0.5)
    """
    if not isinstance(table, EncodedTable):
        raise TypeError(
            "table must be an EncodedTable (codes over declared domains, from "
            f"TableEncoder), got {type(table).__name__}"
        )
    a = _column_position(table, col_a, "col_a")
    b = _column_position(table, col_b, "col_b")
    ka, kb = int(table.cardinalities[a]), int(table.cardinalities[b])
    sensitivity = 2.0
    # The exact scale depends on the two parameters only: refused before the budget.
    _core.discrete_laplace_scale(sensitivity, check_epsilon(epsilon))
    run = PrivateRun.start(epsilon, random_state, accountant, label=label)
    try:
        counts = contingency_table(table.codes[:, a], table.codes[:, b], ka, kb)
    except MemoryError as exc:
        raise MemoryError(
            f"the {ka} × {kb} table of the declared domains of {col_a!r} and "
            f"{col_b!r} cannot be allocated; thresholded_histogram releases large "
            "domains without enumerating them"
        ) from exc
    return add_discrete_laplace(
        run, counts, sensitivity, f"dp_contingency_table({col_a!r}, {col_b!r})"
    )


def _column_position(table: EncodedTable, name: Hashable, argument: str) -> int:
    """Return the index of the column ``name``; a KeyError names ``argument``."""
    try:
        return table.column_index(name)
    except KeyError:
        raise KeyError(
            f"{argument} = {name!r} is not a column of table; its columns are "
            f"{table.columns!r}"
        ) from None


def _block_sizes(x: Any, y: Any) -> tuple[int, int]:
    """``max + 1`` of a partition's codes (0 for an empty partition)."""
    if len(x) == 0:
        return 0, 0
    return as_code_vector(x, "x")[1], as_code_vector(y, "y")[1]


def _largest(*parts: tuple[int, int]) -> tuple[int, int]:
    return max(p[0] for p in parts), max(p[1] for p in parts)


def _block_contingency(
    x: Any, y: Any, kx: int, ky: int, sparse: bool, n_threads: int | None
) -> Any:
    if len(x) == 0 and len(y) == 0:
        if sparse:
            return SparseCounts(np.zeros(0, np.uint64), np.zeros(0, np.int64), (kx, ky))
        return np.zeros((kx, ky), dtype=np.int64)
    return contingency_table(x, y, kx, ky, sparse=sparse, n_threads=n_threads)


def _block_count_keys(
    keys: Any, cardinalities: Any, n_threads: int | None
) -> SparseCounts:
    if len(keys) == 0:
        return SparseCounts(
            np.zeros(0, np.uint64), np.zeros(0, np.int64), cardinalities
        )
    return count_keys(keys, cardinalities=cardinalities, n_threads=n_threads)


def _merge_sparse(*parts: SparseCounts) -> SparseCounts:
    merged = parts[0]
    for part in parts[1:]:
        merged = merged.merge(part)
    return merged


def _same_dtype(
    xs: np.ndarray, ys: np.ndarray, limits: list[tuple[str, str, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """Convert two integer code vectors to one dtype the core reads, exactly.

    ``limits`` holds each vector's name, its cardinality's name and the cardinality.
    ``uint64`` with a signed dtype becomes ``int64``: a ``uint64`` code that does not
    fit is out of range for any cardinality, and is named here as the core names one.
    """
    common = np.promote_types(xs.dtype, ys.dtype)
    if common.kind not in "iu":
        for values, (name, k_name, k) in zip((xs, ys), limits, strict=True):
            if values.dtype == np.uint64 and int(values.max()) >= k:
                row = int(np.argmax(values >= k))
                raise ValueError(f"{name}[{row}] = {values[row]} is >= {k_name} = {k}")
        common = np.dtype(np.int64)
    return xs.astype(common), ys.astype(common)


def entropy(counts: Any) -> float:
    """Shannon entropy in bits of the distribution given by counts.

    Parameters
    ----------
    counts : array-like of any shape
        Non-negative finite counts or weights (e.g. a contingency table, flattened).

    Returns
    -------
    float
        ``-sum(p * log2(p))`` with ``p = counts / counts.sum()`` and ``0 * log 0 = 0``;
        0.0 when all counts are 0 (or there are none).

    Raises
    ------
    ValueError
        If a count is negative, NaN or infinite.
    TypeError
        If the counts are not numeric.

    Examples
    --------
    >>> from privtab import entropy
    >>> entropy([2, 2, 0, 4])
    1.5
    """
    array = as_float_array(counts, "counts").ravel()
    if array.size and array.min() < 0:
        raise ValueError(f"counts must be >= 0, got {array.min()}")
    return float(_core.entropy(np.ascontiguousarray(array)))


def _code_pair(x: Any, y: Any) -> tuple[np.ndarray, int, np.ndarray, int]:
    xs, kx = as_code_vector(x, "x")
    ys, ky = as_code_vector(y, "y")
    if xs.shape[0] != ys.shape[0]:
        raise ValueError(
            f"x and y must have the same length, got {xs.shape[0]} and {ys.shape[0]}"
        )
    return xs, kx, ys, ky


def mutual_information(x: Any, y: Any, *, n_threads: int | None = None) -> float:
    """Mutual information ``I(X; Y) = H(X) + H(Y) - H(X, Y)`` in bits.

    Parameters
    ----------
    x, y : array-like of int of shape (n_samples,)
        Categorical codes (>= 0).
    n_threads : int, optional
        Threads to use (default: all cores).

    Returns
    -------
    float
        Non-negative; at most ``min(H(X), H(Y))``.

    Examples
    --------
    >>> from privtab import mutual_information
    >>> mutual_information([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    xs, kx, ys, ky = _code_pair(x, y)
    return float(
        _core.mutual_information(xs, kx, ys, ky, n_threads=check_threads(n_threads))
    )


def symmetric_uncertainty(x: Any, y: Any, *, n_threads: int | None = None) -> float:
    """Symmetric uncertainty ``2 I(X; Y) / (H(X) + H(Y))``, in [0, 1].

    Parameters
    ----------
    x, y : array-like of int of shape (n_samples,)
        Categorical codes (>= 0).
    n_threads : int, optional
        Threads to use (default: all cores).

    Returns
    -------
    float
        0 when both variables are constant (``H(X) + H(Y) = 0``), as DILCA defines it.

    Notes
    -----
    Entropies in bits (the base cancels). Used by DILCA (Battaglia, Celano & Pensa)
    to choose the context of each attribute.

    Examples
    --------
    >>> from privtab import symmetric_uncertainty
    >>> symmetric_uncertainty([0, 1, 2, 3], [0, 0, 1, 1])
    0.6666666666666666
    """
    xs, kx, ys, ky = _code_pair(x, y)
    return float(
        _core.symmetric_uncertainty(xs, kx, ys, ky, n_threads=check_threads(n_threads))
    )
