"""Maximal sets on binary data: maximal frequent itemsets and maximal k-AC feature sets.

Zhang, Mohammed, Dave & Al Hasan (2017) select features under k-anonymity by
containment (k-AC). Its "Maximal" method mines the maximal frequent itemsets of the rows
read as transactions, with absolute minimum support k (every frequent itemset is k-AC);
:func:`maximal_kac_sets` enumerates the maximal k-AC feature sets exactly. Both run one
depth-first enumerator in Rust (LCM-style: prefix extension, occurrence deliver, database
reduction with merged duplicate transactions, look-ahead and perfect-extension pruning,
maximality by the single-item extension test), in parallel over the top-level branches
with a result that does not depend on the number of threads.

:func:`read_transactions` reads the FIMI ``.dat`` format of the frequent itemset mining
benchmarks into a SciPy CSR array that every binary-input function of privtab accepts,
one column per distinct item, with the item id of each column.

Core kernels called: ``privtab._core.maximal_sets`` (the enumerator, with a frequency
or a k-AC oracle) and ``privtab._core.read_transactions`` (the FIMI parser).

Full references: :mod:`privtab.kac`.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
import numbers
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import scipy.sparse

from privtab import _core
from privtab._validation import (
    as_int_array,
    check_bool,
    check_limits,
    check_threads,
    warn_user,
)
from privtab.exceptions import LongSearchWarning
from privtab.kac._binary import BinaryMatrix, as_binary_matrix

__all__ = [
    "LONG_SEARCH_SECONDS",
    "Itemsets",
    "maximal_itemsets",
    "maximal_kac_sets",
    "read_transactions",
]

#: Seconds after which a search without ``time_limit`` emits a
#: :class:`~privtab.exceptions.LongSearchWarning` (once per call).
LONG_SEARCH_SECONDS = 10.0

#: What a search in progress reports, about twice a second: seconds elapsed, maximal sets
#: found, top-level branches done, top-level branches (0 until known).
SearchProgress = Callable[[float, int, int, int], None]

_OBSERVER: contextvars.ContextVar[SearchProgress | None] = contextvars.ContextVar(
    "privtab_search_observer", default=None
)


@contextlib.contextmanager
def observe_search(report: SearchProgress) -> Iterator[None]:
    """Send the progress of every maximal-set search run in the context to ``report``.

    ``report(seconds, found, branches_done, branches)`` is called about twice a second
    from the thread that started the search (a command line shows it); an exception it
    raises stops the search and propagates.
    """
    token = _OBSERVER.set(report)
    try:
        yield
    finally:
        _OBSERVER.reset(token)


class Itemsets(list[np.ndarray]):
    """Maximal sets: a list of sorted ``int64`` arrays of column indices.

    Sets come by decreasing size, then in lexicographic order of their column indices,
    for any number of threads.

    Attributes
    ----------
    complete : bool
        ``False`` when ``time_limit`` stopped the search or ``max_sets`` sets were
        found (the search stops there, so it does not know whether more exist): the
        list may then hold only some of the maximal sets (no warning is emitted; check
        this flag).
    supports : ndarray of int64
        Per set: its support (rows containing it) for :func:`maximal_itemsets`, the
        containment anonymity AC(D_S) of its projection for :func:`maximal_kac_sets`.
    """

    complete: bool
    supports: np.ndarray

    def __init__(self, sets: Any = (), *, complete: bool, supports: Any) -> None:
        if isinstance(sets, str | bytes) or not isinstance(sets, Iterable):
            raise TypeError(
                f"sets must be an iterable of index arrays, got {type(sets).__name__}"
            )
        super().__init__(sets)
        self.complete = check_bool(complete, "complete")
        self.supports = as_int_array(supports, "supports")
        if self.supports.shape != (len(self),):
            raise ValueError(
                f"supports must hold one value per set ({len(self)}), got shape "
                f"{self.supports.shape}"
            )

    def __repr__(self) -> str:
        state = "complete" if self.complete else "incomplete"
        return f"Itemsets({len(self)} sets, {state})"


def read_transactions(
    path: str | os.PathLike[str],
) -> tuple[scipy.sparse.csr_array, np.ndarray]:
    r"""Read a FIMI transaction file (``.dat``) into a boolean CSR array.

    Parameters
    ----------
    path : str or os.PathLike
        Text file with one transaction per line, items as non-negative integers
        separated by spaces. An empty line is an empty transaction; the newline at the
        end of the file does not start one.

    Returns
    -------
    B : scipy.sparse.csr_array of bool, shape (n_transactions, n_items)
        Row ``t`` is transaction ``t`` with sorted column indices. Column ``j`` is the
        ``j``-th smallest item id that occurs in the file, so there is one column per
        distinct item whatever the ids' values.
    item_ids : numpy.ndarray of int64, shape (n_items,)
        The item id of each column, increasing: map column indices (e.g. the sets of
        :func:`maximal_itemsets`) back to the file's ids with ``item_ids[columns]``.

    Raises
    ------
    ValueError
        Naming the path, line and token, for a token that is not an item id and for an
        item repeated within a line.
    FileNotFoundError
        When ``path`` does not exist.
    OSError
        When ``path`` cannot be read otherwise (a directory, no permission).
    TypeError
        When ``path`` is neither a string nor a path-like object.

    Notes
    -----
    Memory is linear in the size of the file: a few large ids (e.g. 4000000000) give
    a few columns, not a column per possible id below them.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     file = pathlib.Path(tmp) / "toy.dat"
    ...     _ = file.write_text("1 7\n\n0 1\n")
    ...     B, item_ids = read_transactions(file)
    >>> B.shape
    (3, 3)
    >>> B.toarray().astype(int).tolist()
    [[0, 1, 1], [0, 0, 0], [1, 1, 0]]
    >>> item_ids.tolist()
    [0, 1, 7]
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    indptr, indices, item_ids = _core.read_transactions(os.fspath(path))
    data = np.ones(len(indices), dtype=bool)
    n_items = len(item_ids)
    matrix = scipy.sparse.csr_array(
        (
            data,
            indices.astype(np.int32, copy=False) if n_items < 2**31 else indices,
            indptr,
        ),
        shape=(len(indptr) - 1, n_items),
    )
    return matrix, item_ids.astype(np.int64)


#: More maximal sets than the core can count: a larger ``max_sets`` is no limit.
_MOST_SETS = 2**63 - 1


def _threshold(value: Any, name: str, n_rows: int, *, fraction: bool) -> int:
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be an int or a float, got bool")
    if isinstance(value, numbers.Integral):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
        return int(value)
    if fraction and isinstance(value, numbers.Real):
        if not (0.0 < float(value) < 1.0):
            raise ValueError(
                f"{name} as a float must be a fraction of rows in (0, 1), got {value}"
            )
        return max(1, math.ceil(float(value) * n_rows))
    kind = "an int or a float in (0, 1)" if fraction else "an int"
    raise TypeError(f"{name} must be {kind}, got {type(value).__name__}")


def mine_maximal_sets(
    matrix: BinaryMatrix,
    threshold: int,
    predicate: str,
    max_sets: int | None,
    time_limit: float | None,
    n_threads: int | None = None,
) -> Itemsets:
    """Run the core's maximal-set enumerator on a validated matrix (arguments checked).

    ``predicate`` is ``"frequency"`` (support >= ``threshold``) or the k-AC test.
    Past ``LONG_SEARCH_SECONDS`` without ``time_limit`` it warns with
    :class:`~privtab.exceptions.LongSearchWarning`; its progress goes to the report of
    an enclosing :func:`observe_search`.
    """
    observer = _OBSERVER.get()
    warned = time_limit is not None
    searcher = "maximal_itemsets" if predicate == "frequency" else "maximal_kac_sets"

    def progress(seconds: float, found: int, done: int, branches: int) -> None:
        nonlocal warned
        if not warned and seconds >= LONG_SEARCH_SECONDS:
            warned = True
            warn_user(
                f"{searcher} has searched for {seconds:.0f} s without time_limit "
                f"({found} maximal sets found, {done} of {branches} top-level "
                "branches done) and may run much longer; bound it with time_limit= "
                "(seconds) or max_sets= (the result then says complete=False)",
                LongSearchWarning,
            )
        if observer is not None:
            observer(seconds, found, done, branches)

    offsets, items, measures, complete = _core.maximal_sets(
        matrix.indptr,
        matrix.indices,
        matrix.n_features,
        predicate,
        # Beyond these, larger limits change nothing (and would not fit in 64 bits).
        min(threshold, matrix.n_rows + 1),
        max_sets=None if max_sets is None else min(int(max_sets), _MOST_SETS),
        time_limit=None if time_limit is None else float(time_limit),
        n_threads=n_threads,
        progress=progress,
    )
    items = items.astype(np.int64)
    bounds = offsets.tolist()
    sets = [items[start:stop] for start, stop in itertools.pairwise(bounds)]
    return Itemsets(sets, complete=complete, supports=measures.astype(np.int64))


def maximal_itemsets(
    B: Any,
    min_support: int | float,
    *,
    max_sets: int | None = None,
    time_limit: float | None = None,
    n_threads: int | None = None,
) -> Itemsets:
    """Return all maximal frequent itemsets of the rows of a binary matrix.

    An itemset is a set of columns; its support is the number of rows equal to 1 on all
    of them. It is frequent when its support is at least ``min_support`` and maximal
    when no frequent itemset strictly contains it.

    Parameters
    ----------
    B : array-like, DataFrame or SciPy sparse matrix of shape (n, m)
        0/1 matrix, rows as transactions (anything
        ``as_binary_matrix`` accepts, e.g. the output of
        the matrix :func:`read_transactions` returns).
    min_support : int or float
        An int ≥ 1 is an absolute number of rows (Zhang et al. 2017 use k). A float in (0, 1)
        is a fraction of the rows: ``ceil(min_support * n)``. Above n the result is
        empty.
    max_sets : int, optional
        Return at most this many maximal sets in all, stopping the search as soon as
        they are found (see Notes).
    time_limit : float, optional
        Stop after this many seconds (see Notes). Without it, a search still running
        after ``LONG_SEARCH_SECONDS`` (10) seconds warns once with
        :class:`~privtab.exceptions.LongSearchWarning`.
    n_threads : int, optional
        Threads to use (default: all cores). A complete result, and one truncated by
        ``max_sets``, does not depend on it.

    Returns
    -------
    Itemsets
        Sorted ``int64`` arrays of column indices by decreasing size, then
        lexicographically; ``supports`` holds their supports and ``complete`` says
        whether the list holds every maximal itemset.

    Raises
    ------
    TypeError
        For a bool or non-numeric ``min_support``, ``max_sets``, ``time_limit`` or
        ``n_threads``.
    ValueError
        For ``min_support`` ≤ 0 (or a float outside (0, 1)), ``max_sets`` or
        ``n_threads`` < 1, a
        negative or non-finite ``time_limit``, and for invalid ``B``.

    Notes
    -----
    The search has one top-level branch per item (the sets whose first item in the
    search order is that item), in an order fixed by the data, and each branch finds
    its sets in a fixed order. ``max_sets`` keeps the first ``max_sets`` sets of the
    branches taken in that order: the threads share one count, and a branch stops as
    soon as it and the branches before it have found ``max_sets`` sets, so the search
    does about ``max_sets`` sets' worth of work on one thread (more on several, which
    may run later branches that the cap then drops). The sets returned are therefore
    the same for any number of threads, the ones one thread returns. With exactly
    ``max_sets`` sets the result says ``complete=False`` even if no more exist.
    ``time_limit`` makes the result depend on timing, and sets ``complete=False``
    when it stopped the search. When no item is frequent but n ≥ ``min_support`` the
    only maximal itemset is the empty set.

    Neither limit has a default: a dense matrix with a low support can have millions
    of maximal sets. Past ``LONG_SEARCH_SECONDS`` seconds without ``time_limit``
    the search warns once (a :class:`~privtab.exceptions.LongSearchWarning`, about
    running time only) and goes on; Ctrl-C stops it within a fraction of a second.

    Examples
    --------
    >>> import numpy as np
    >>> B = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1], [1, 0, 0]])
    >>> sets = maximal_itemsets(B, 2)
    >>> [s.tolist() for s in sets], sets.supports.tolist(), sets.complete
    ([[0, 1], [1, 2]], [2, 2], True)
    """
    matrix = as_binary_matrix(B, "B")
    threshold = _threshold(min_support, "min_support", matrix.n_rows, fraction=True)
    check_limits(max_sets, time_limit)
    return mine_maximal_sets(
        matrix, threshold, "frequency", max_sets, time_limit, check_threads(n_threads)
    )


def maximal_kac_sets(
    B: Any,
    k: int,
    *,
    max_sets: int | None = None,
    time_limit: float | None = None,
    n_threads: int | None = None,
) -> Itemsets:
    """Return all maximal feature sets S whose projection is k-anonymous by containment.

    With C_S(u) the features of S equal to 1 in row u, ``AC(u) = |{v : C_S(u) ⊆ C_S(v)}|``
    (u included) and D_S is k-AC iff min_u AC(u) ≥ k. k-AC is downward closed in S, so
    the maximal k-AC sets describe all of them.

    Parameters
    ----------
    B : array-like, DataFrame or SciPy sparse matrix of shape (n, m)
        0/1 feature matrix (anything ``as_binary_matrix`` accepts).
    k : int
        Anonymity level, ≥ 1. Above n the result is empty (even the empty set is not
        k-AC).
    max_sets, time_limit, n_threads
        As in :func:`maximal_itemsets`.

    Returns
    -------
    Itemsets
        Sorted ``int64`` arrays of column indices by decreasing size, then
        lexicographically; ``supports`` holds AC(D_S) of each set, ``complete`` whether
        every maximal set is listed.

    Raises
    ------
    TypeError
        For a non-int ``k`` (bools included), ``max_sets``, ``time_limit`` or
        ``n_threads``.
    ValueError
        For ``k`` < 1, ``max_sets`` or ``n_threads`` < 1, a negative or non-finite
        ``time_limit``, and for
        invalid ``B``.

    Notes
    -----
    Zhang et al. (2017), definition of k-anonymity by containment; ``method="maximal_feasible"``
    of the k-AC selector. Adding feature a to a k-AC set S keeps it k-AC iff, for every
    pattern P of the rows with a = 1, at least k rows contain P ∪ {a}; the search tests
    this with row bitsets. Memory: one bit per row and feature. Truncation by
    ``max_sets`` and ``time_limit``, and the warning past
    ``LONG_SEARCH_SECONDS``, as in :func:`maximal_itemsets`.

    Examples
    --------
    >>> import numpy as np
    >>> B = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1], [1, 1, 1]])
    >>> sets = maximal_kac_sets(B, 2)
    >>> [s.tolist() for s in sets], sets.supports.tolist()
    ([[0, 1], [0, 2], [1, 2]], [2, 2, 2])
    """
    matrix = as_binary_matrix(B, "B")
    threshold = _threshold(k, "k", matrix.n_rows, fraction=False)
    check_limits(max_sets, time_limit)
    return mine_maximal_sets(
        matrix,
        threshold,
        "containment",
        max_sets,
        time_limit,
        check_threads(n_threads),
    )
