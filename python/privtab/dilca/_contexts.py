"""Contexts of DILCA and DP-DILCA: which attributes a target attribute is compared on.

Exact pairwise contingency tables and entropies (:class:`_Tables`), the non-private
context rules (mean symmetric uncertainty, relevance-redundancy) of DILCA (Ienco, Pensa and Meo 2012) and the
context searches of DP-DILCA (Battaglia, Celano and Pensa 2021) (:func:`max_relevance_context`,
:func:`max_dependency_context`).

Core kernels called: ``privtab._core.pairwise_tables`` (every pairwise table and
entropy in one parallel pass) and ``privtab._core.subset_entropies`` (entropies of
attribute subsets by a depth-first walk).

Full references: :mod:`privtab.dilca`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privtab._validation import check_positive_int, read_code_columns
from privtab.engine import CodeTable, MemoryTable, dask_table, is_distributed

_MAX_VALUES = 8192
_CONTEXTS = ("mean_su", "relevance_redundancy")
_DP_METHODS = ("max_relevance", "max_dependency", "mean_su", "baseline")


def _prepare(X: Any, cardinalities: Any) -> tuple[CodeTable, np.ndarray, bool]:
    """Return the codes as a CodeTable, the cardinalities, and whether they were inferred.

    The callers that need it have warned about inferred cardinalities already.
    """
    if is_distributed(X):
        table: CodeTable
        table, inferred = dask_table(X, cardinalities, "X")
        cards = table.cardinalities
    else:
        columns, cards, inferred = read_code_columns(X, "X", cardinalities)
        table = MemoryTable(columns, cards)
    if int(cards.max()) > _MAX_VALUES:
        j = int(np.argmax(cards))
        source = " (inferred from the codes of X)" if inferred else ""
        raise ValueError(
            f"cardinalities[{j}] = {cards[j]}{source} is above {_MAX_VALUES}: DILCA "
            "stores a |V|×|V| distance matrix per attribute"
        )
    if table.n_columns < 2:
        raise ValueError(
            f"X must have at least 2 attributes (a context needs another one), "
            f"got {table.n_columns} feature(s)"
        )
    return table, cards, inferred


def _symmetric_uncertainty(h_x: float, h_y: float, h_xy: float) -> float:
    total = h_x + h_y
    if total == 0.0 or not math.isfinite(total):
        return 0.0
    return 2.0 * (h_x + h_y - h_xy) / total


#: Above this many cells in all the pairwise tables together, only their entropies are
#: computed in one pass and the tables a context needs are counted one by one.
_MAX_PAIRWISE_CELLS = 1 << 25


class _Tables:
    """Exact contingency tables and entropies of every attribute pair.

    One call to the Rust kernel ``pairwise_tables`` reads each column pair once (in
    parallel) and returns every |V_i|×|V_j| table, every H(X_i) and every H(X_i, X_j);
    on a distributed table the partitions' tables are added up and the entropies
    computed from the sums (:meth:`~privtab.engine.CodeTable.pairwise_tables`).
    """

    def __init__(self, source: CodeTable) -> None:
        self.source = source
        self.cards = source.cardinalities
        d = source.n_columns
        sizes = self.cards.astype(np.float64)
        cells = (sizes.sum() ** 2 - (sizes**2).sum()) / 2.0
        keep = cells <= _MAX_PAIRWISE_CELLS
        flat, offsets, entropies = source.pairwise_tables(keep)
        self._flat = flat if keep else None
        self._offsets = offsets
        self._entropy_matrix = entropies
        self.entropies = np.diagonal(entropies).tolist()
        self._d = d

    def table(self, y: int, x: int) -> np.ndarray:
        """Return the |Y|×|X| table of attribute ``y`` (rows) against ``x`` (columns)."""
        i, j = min(y, x), max(y, x)
        if self._flat is None:
            table = self.source.contingency(i, j)
        else:
            p = i * (2 * self._d - i - 1) // 2 + (j - i - 1)
            start, stop = int(self._offsets[p]), int(self._offsets[p + 1])
            table = self._flat[start:stop].reshape(
                int(self.cards[i]), int(self.cards[j])
            )
        return table if y <= x else table.T

    def joint_entropy(self, y: int, x: int) -> float:
        return float(self._entropy_matrix[y, x])

    def symmetric_uncertainty_matrix(self) -> np.ndarray:
        d = self._d
        su = np.zeros((d, d))
        for i in range(d):
            for j in range(i + 1, d):
                su[i, j] = su[j, i] = _symmetric_uncertainty(
                    self.entropies[i], self.entropies[j], self.joint_entropy(i, j)
                )
        return su


def _mean_su_rule(su: np.ndarray, others: np.ndarray, sigma: float) -> np.ndarray:
    """DILCA_M: the attributes whose SU with the target is >= sigma times the mean."""
    values = su[others]
    mean = math.fsum(values.tolist()) / values.shape[0]
    context = others[values >= sigma * mean]
    if context.size == 0:
        # Only with sigma > 1, or when rounding puts the mean of equal values above them.
        context = others[[int(np.argmax(values))]]
    return context


def _relevance_redundancy_rule(su: np.ndarray, target: int) -> np.ndarray:
    """DILCA_RR (FCBF without threshold) on a symmetric SU matrix."""
    d = su.shape[0]
    order = sorted(
        (j for j in range(d) if j != target), key=lambda j: (-su[target, j], j)
    )
    context = [order[0]]
    for candidate in order[1:]:
        if su[candidate, target] > max(su[candidate, s] for s in context):
            context.append(candidate)
    return np.sort(np.asarray(context, dtype=np.int64))


def _context_arrays(X: Any, target: Any, k: Any, cardinalities: Any) -> tuple:
    table, _, _ = _prepare(X, cardinalities)
    d = table.n_columns
    if isinstance(target, bool) or not isinstance(target, int | np.integer):
        raise TypeError(f"target must be an int, got {type(target).__name__}")
    if not 0 <= int(target) < d:
        raise ValueError(f"target must be in [0, {d - 1}], got {target}")
    k = check_positive_int(k, "k")
    if k > d - 1:
        raise ValueError(
            f"k must be <= the number of other attributes ({d - 1}), got {k}"
        )
    others = np.array([j for j in range(d) if j != int(target)], dtype=np.int64)
    return table, int(target), k, others


def max_relevance_context(
    X: Any, target: int, k: int = 3, *, cardinalities: Any = None
) -> np.ndarray:
    """Non-private MaxRelevance: the ``k`` attributes with the largest I'(X, Y).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), DataFrame or ``EncodedTable``
        Categorical codes.
    target : int
        The column ``Y`` whose context is chosen.
    k : int, default=3
        Context size, in [1, n_features − 1].
    cardinalities : array-like of int, optional
        Declared domain sizes (``max + 1`` of the data when omitted).

    Returns
    -------
    ndarray of int64 of shape (k,)
        Column indices, sorted; ties in I' go to the lower index.

    Notes
    -----
    ``I'(X, Y) = H(X) − H(X, Y)`` (bits) differs from ``I(X; Y)`` by ``H(Y)`` only,
    so it ranks the attributes as mutual information does.

    Examples
    --------
    >>> import numpy as np
    >>> from privtab.dilca import max_relevance_context
    >>> X = np.array([[0, 0, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1], [1, 1, 1, 1]])
    >>> max_relevance_context(X, 0, 1)
    array([1])
    """
    table, target, k, others = _context_arrays(X, target, k, cardinalities)
    tables = _Tables(table)
    scores = np.array(
        [tables.entropies[x] - tables.joint_entropy(target, x) for x in others]
    )
    order = np.argsort(-scores, kind="stable")
    return np.sort(others[order[:k]])


def _subset_scores(
    table: CodeTable, target: int, others: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every size-k subset of ``others`` and its I'(Y, S) = H(S) − H(Y, S)."""
    subsets, h_s, h_ys = table.subset_entropies(target, others.tolist(), k)
    return subsets, h_s - h_ys


def max_dependency_context(
    X: Any, target: int, k: int = 3, *, cardinalities: Any = None
) -> np.ndarray:
    """Non-private MaxDependency: the size-``k`` subset S maximising I'(Y, S).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), DataFrame or ``EncodedTable``
        Categorical codes.
    target : int
        The column ``Y`` whose context is chosen.
    k : int, default=3
        Context size, in [1, n_features − 1].
    cardinalities : array-like of int, optional
        Declared domain sizes (``max + 1`` of the data when omitted).

    Returns
    -------
    ndarray of int64 of shape (k,)
        Column indices, sorted; among tied subsets the first in lexicographic order.

    Notes
    -----
    ``I'(Y, S) = H(S) − H(Y, S)`` ranks subsets as ``I(Y; S)`` does. The joint
    entropies of all ``C(m − 1, k)`` subsets come from one depth-first walk that
    refines the partition of each prefix once (``privtab._core.subset_entropies``).

    Examples
    --------
    >>> import numpy as np
    >>> from privtab.dilca import max_dependency_context
    >>> X = np.array([[0, 0, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1], [1, 1, 1, 1]])
    >>> max_dependency_context(X, 0, 2)
    array([1, 2])
    """
    table, target, k, others = _context_arrays(X, target, k, cardinalities)
    subsets, scores = _subset_scores(table, target, others, k)
    return np.sort(subsets[int(np.argmax(scores))]).astype(np.int64)
