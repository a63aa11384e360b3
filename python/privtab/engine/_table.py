"""The seam between the counting methods and where their rows live.

A :class:`CodeTable` is a table of categorical codes over public cardinalities, with
optional label codes. Methods ask it for counts (merged over all rows) and for a few
composite steps built on counts; they never touch the rows themselves.

:class:`CodeTable` implements the composite steps once, from three primitive
operations that an engine provides:

``_count(subsets)``
    the sparse counts of the mixed-radix keys of some columns, merged over all rows;
``_pairwise_counts()``
    every pairwise contingency table, summed over all rows;
``_search_step(state, refine_by, candidates)``
    one round of a discernibility search, in one pass: refine the partition of the
    selected columns by the column chosen last (the rows' class ids stay where the
    rows are), then, for every candidate column ``a``, the label-differing row pairs
    that the partition of S ∪ {a} leaves undiscerned (exact integers), and the rows
    per label.

:class:`MemoryTable` (numpy arrays in this process) overrides the composite steps with
the fused Rust kernels, which give the same results; the Dask engine
(:mod:`privtab.engine._dask`) implements only the primitives.

Core kernels called: ``privtab._core.count_columns``, ``privtab._core.count_entropy``,
``privtab._core.contingency_table``, ``privtab._core.pairwise_tables``,
``privtab._core.subset_entropies``, ``privtab._core.thresholded_histogram`` and
``privtab._core.thresholded_histogram_of_counts``, ``privtab._core.private_kd``,
``privtab._core.greedy_discernibility`` and ``privtab._core.private_kd_round``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from privtab import _core

__all__ = ["LABEL", "CodeTable", "MemoryTable", "aligned"]

#: Stands for the label column in the subsets passed to :meth:`CodeTable.count`.
LABEL = -1

#: Largest number of subsets :meth:`CodeTable.subset_entropies` enumerates (the core's).
MAX_SUBSETS = 50_000_000

KeyCounts = tuple[np.ndarray, np.ndarray]


class CodeTable:
    """Categorical codes over public cardinalities, wherever the rows are.

    Subclasses set ``cardinalities`` (uint32, one per column) and ``n_labels`` (the
    size of the label set, or ``None`` without labels), and implement the primitive
    operations named in the module docstring.
    """

    cardinalities: np.ndarray
    n_labels: int | None

    @property
    def n_columns(self) -> int:
        """Number of columns (the label is not one)."""
        return int(self.cardinalities.shape[0])

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        raise NotImplementedError

    def select(self, columns: Sequence[int], *, with_label: bool = False) -> CodeTable:
        """Return a table of some columns (and the label codes last, if asked)."""
        raise NotImplementedError

    # Primitives ------------------------------------------------------------------
    def _count(self, subsets: Sequence[Sequence[int]]) -> list[KeyCounts]:
        raise NotImplementedError

    def _pairwise_counts(self) -> np.ndarray:
        raise NotImplementedError

    def _search_start(self) -> Any:
        raise NotImplementedError

    def _search_step(
        self, state: Any, refine_by: int | None, candidates: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, Any]:
        raise NotImplementedError

    # Counting --------------------------------------------------------------------
    def _cards_of(self, subset: Sequence[int]) -> np.ndarray:
        return np.array(
            [self.n_labels if j == LABEL else self.cardinalities[j] for j in subset],
            dtype=np.uint32,
        )

    def count(self, subsets: Sequence[Sequence[int]]) -> list[KeyCounts]:
        """Count the value combinations of each subset of columns over all rows.

        Parameters
        ----------
        subsets : sequence of sequences of int
            Column indices, first most significant in the mixed-radix key;
            :data:`LABEL` stands for the label.

        Returns
        -------
        list of (keys, counts)
            Per subset: sorted distinct ``uint64`` keys and their ``uint64`` counts.
        """
        return self._count([list(s) for s in subsets])

    def contingency(self, i: int, j: int) -> np.ndarray:
        """Return the dense ``(|V_i|, |V_j|)`` table of columns ``i`` and ``j`` (int64)."""
        ((keys, counts),) = self.count([[i, j]])
        ki, kj = int(self.cardinalities[i]), int(self.cardinalities[j])
        table = np.zeros(ki * kj, dtype=np.int64)
        table[keys.astype(np.int64)] = counts.astype(np.int64)
        return table.reshape(ki, kj)

    def pairwise_tables(
        self, with_tables: bool
    ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """Every pairwise table (when ``with_tables``), their offsets, every entropy.

        As ``privtab._core.pairwise_tables``: tables of the pairs ``i < j`` in
        lexicographic order, row-major and concatenated; the ``m × m`` entropies in
        bits, ``H(X_i)`` on the diagonal and ``H(X_i, X_j)`` off it, computed from the
        merged counts.
        """
        offsets = pair_offsets(self.cardinalities)
        d = self.n_columns
        pairs = list(itertools.combinations(range(d), 2))
        entropies = np.zeros((d, d))
        if not with_tables:
            # Only the entropies: each table counted sparsely, nonzero cells in key
            # order, which is the order of the dense table's nonzero cells.
            counted = self.count([[i, j] for i, j in pairs] + [[j] for j in range(d)])
            for (i, j), (_, counts) in zip(pairs, counted, strict=False):
                entropies[i, j] = entropies[j, i] = _entropy(counts)
            for j, (_, counts) in enumerate(counted[len(pairs) :]):
                entropies[j, j] = _entropy(counts)
            return None, offsets, entropies
        flat = self._pairwise_counts()
        for p, (i, j) in enumerate(pairs):
            table = flat[offsets[p] : offsets[p + 1]].reshape(
                int(self.cardinalities[i]), int(self.cardinalities[j])
            )
            entropies[i, j] = entropies[j, i] = _entropy(
                np.ascontiguousarray(table.ravel())
            )
            if i == 0 and j == 1:
                entropies[0, 0] = _entropy(table.sum(axis=1, dtype=np.uint64))
            if i == 0:
                entropies[j, j] = _entropy(table.sum(axis=0, dtype=np.uint64))
        return flat, offsets, entropies

    def subset_entropies(
        self, target: int, among: Sequence[int], k: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """H(S) and H(Y, S) of every size-``k`` subset S of ``among``, Y = ``target``.

        As ``privtab._core.subset_entropies``: subsets in lexicographic order of their
        positions in ``among``. Entropies are computed from the merged counts of
        ``S + [target]`` in key order, which is the order in which the core's
        partition walk sums them, so the values agree bit for bit.
        """
        n_subsets = _binomial(len(among), k)
        if n_subsets > MAX_SUBSETS:
            raise ValueError(
                f"there are {n_subsets} subsets of size {k} of {len(among)} "
                f"attributes, more than {MAX_SUBSETS}"
            )
        subsets = [list(s) for s in itertools.combinations(among, k)]
        counted = self.count([[*s, target] for s in subsets])
        card = np.uint64(self.cardinalities[target])
        h_s = np.empty(len(subsets))
        h_ys = np.empty(len(subsets))
        for p, (keys, counts) in enumerate(counted):
            groups = keys // card
            starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
            h_ys[p] = _entropy(counts)
            h_s[p] = _entropy(np.add.reduceat(counts, starts))
        return np.array(subsets, dtype=np.int64).reshape(-1, k), h_s, h_ys

    # Releases built on counts ----------------------------------------------------
    def thresholded_histogram(
        self,
        epsilon: float,
        threshold: float,
        noise: str,
        max_cells: int,
        seed: int | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Keys and noisy values of the thresholded histogram of all columns.

        The rows are counted (merged over the engine's blocks) and noise is added once,
        here, by ``privtab._core.thresholded_histogram_of_counts``.
        """
        ((keys, counts),) = self.count([list(range(self.n_columns))])
        return _core.thresholded_histogram_of_counts(
            aligned(keys, np.uint64),
            aligned(counts, np.uint64),
            self.cardinalities,
            epsilon,
            threshold,
            noise,
            max_cells,
            seed,
        )

    def select_discerning(
        self, k: int, epsilon_step: float | None, seed: int | None
    ) -> np.ndarray:
        """PrivateKD (``epsilon_step`` given) or NonPrivateKD: ``k`` attributes in order.

        Each round gets from the engine, for every remaining candidate ``a``, the
        label-differing row pairs Σ_c (n_c² − Σ_l n_{c,l}²) left undiscerned by the
        classes c of S ∪ {a}, exactly, and picks by the rule of the core's selection
        (``privtab._core.private_kd_round`` draws what ``private_kd`` draws in that
        round). The first round's rows per label give n and the differing pairs of
        S = ∅.
        """
        state = self._search_start()
        n = 0
        undiscerned: int | None = None
        refine_by: int | None = None
        remaining = list(range(self.n_columns))
        order: list[int] = []
        for round_index in range(k):
            if undiscerned != 0:
                left, label_counts, state = self._search_step(
                    state, refine_by, remaining
                )
            if undiscerned is None:
                n, undiscerned = _differing_pairs(label_counts)
            if undiscerned == 0:
                gains = np.zeros(len(remaining), dtype=np.uint64)
            else:
                gains = np.uint64(undiscerned) - np.minimum(
                    left, np.uint64(undiscerned)
                )
            if epsilon_step is None:
                pick = int(np.argmax(gains))
            else:
                pick = _core.private_kd_round(gains, epsilon_step, n, round_index, seed)
            attribute = remaining.pop(pick)
            order.append(attribute)
            if undiscerned:
                undiscerned = int(left[pick])
                refine_by = attribute
        return np.asarray(order, dtype=np.int64)


class MemoryTable(CodeTable):
    """A :class:`CodeTable` of numpy arrays in this process (the fused kernels).

    Parameters
    ----------
    columns : ndarray of shape (n_columns, n_rows), uint32, C-contiguous
        Validated codes, column-major.
    cardinalities : ndarray of shape (n_columns,), uint32
    labels : ndarray of shape (n_rows,), uint32, optional
        Validated label codes ``0 .. n_labels - 1``.
    n_labels : int, optional
    n_threads : int, optional
        Threads of the kernels (the results do not depend on it).
    """

    def __init__(
        self,
        columns: np.ndarray,
        cardinalities: np.ndarray,
        labels: np.ndarray | None = None,
        n_labels: int | None = None,
        n_threads: int | None = None,
    ) -> None:
        # Arrays that crossed a network may arrive unaligned; the kernels read them
        # as slices.
        self.columns = aligned(columns, np.uint32)
        self.cardinalities = aligned(cardinalities, np.uint32)
        self.labels = None if labels is None else aligned(labels, np.uint32)
        self.n_labels = n_labels
        self.n_threads = n_threads

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.columns.shape[1])

    def select(
        self, columns: Sequence[int], *, with_label: bool = False
    ) -> MemoryTable:
        """Return a table of some columns (and the label codes last, if asked)."""
        index = list(columns)
        cards = self.cardinalities[index].astype(np.int64)
        parts = [self.columns[index]]
        if with_label:
            assert self.labels is not None
            assert self.n_labels is not None
            cards = np.append(cards, self.n_labels)
            parts.append(self.labels[None, :])
        data = np.ascontiguousarray(np.vstack(parts), dtype=np.uint32)
        return MemoryTable(data, cards.astype(np.uint32), n_threads=self.n_threads)

    def _count(self, subsets: Sequence[Sequence[int]]) -> list[KeyCounts]:
        out = []
        for subset in subsets:
            if LABEL in subset:
                assert self.labels is not None
                data = np.ascontiguousarray(
                    np.vstack(
                        [self.labels if j == LABEL else self.columns[j] for j in subset]
                    )
                )
                cards, index = self._cards_of(subset), list(range(len(subset)))
            else:
                data, cards, index = self.columns, self.cardinalities, list(subset)
            out.append(
                _core.count_columns(data, cards, index, n_threads=self.n_threads)
            )
        return out

    def contingency(self, i: int, j: int) -> np.ndarray:
        """Return the dense table of columns ``i`` and ``j`` (int64)."""
        table = _core.contingency_table(
            self.columns[i],
            int(self.cardinalities[i]),
            self.columns[j],
            int(self.cardinalities[j]),
            n_threads=self.n_threads,
        )
        return table.view(np.int64)

    def pairwise_tables(
        self, with_tables: bool
    ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """Every pairwise table and entropy in one pass (``_core.pairwise_tables``)."""
        flat, offsets, entropies = _core.pairwise_tables(
            self.columns, self.cardinalities, with_tables
        )
        return (flat if with_tables else None), offsets, entropies

    def subset_entropies(
        self, target: int, among: Sequence[int], k: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """H(S) and H(Y, S) of every size-``k`` subset (``_core.subset_entropies``)."""
        return _core.subset_entropies(
            self.columns,
            self.cardinalities,
            self.columns[target],
            int(self.cardinalities[target]),
            list(among),
            k,
        )

    def thresholded_histogram(
        self,
        epsilon: float,
        threshold: float,
        noise: str,
        max_cells: int,
        seed: int | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Count and noise the histogram in one kernel call."""
        return _core.thresholded_histogram(
            self.columns,
            self.cardinalities,
            epsilon,
            threshold,
            noise,
            max_cells,
            seed,
        )

    def select_discerning(
        self, k: int, epsilon_step: float | None, seed: int | None
    ) -> np.ndarray:
        """Run the whole selection in one kernel call (``private_kd`` or greedy)."""
        assert self.labels is not None
        assert self.n_labels is not None
        if epsilon_step is None:
            order, _ = _core.greedy_discernibility(
                self.columns,
                self.cardinalities,
                self.labels,
                self.n_labels,
                k,
                n_threads=self.n_threads,
            )
            return order
        return _core.private_kd(
            self.columns,
            self.cardinalities,
            self.labels,
            self.n_labels,
            k,
            epsilon_step,
            seed,
            n_threads=self.n_threads,
        )


# Helpers of the composite steps --------------------------------------------------
def aligned(array: np.ndarray, dtype: Any) -> np.ndarray:
    """Return ``array`` C-contiguous and aligned with ``dtype`` (copied only if not)."""
    return np.require(array, dtype=dtype, requirements=["C", "A"])


def pair_index(m: int, i: int, j: int) -> int:
    """Position of the pair ``i < j`` in the lexicographic order of the pairs of ``m``."""
    return i * (2 * m - i - 1) // 2 + (j - i - 1)


def pair_offsets(cardinalities: np.ndarray) -> np.ndarray:
    """Offsets of the pairwise tables in their concatenation (as the core lays them)."""
    cards = [int(c) for c in cardinalities]
    sizes = [a * b for a, b in itertools.combinations(cards, 2)]
    return np.concatenate([[0], np.cumsum(sizes, dtype=np.uint64)]).astype(np.uint64)


def _entropy(counts: np.ndarray) -> float:
    """Entropy in bits of exact counts, summed in their order (the kernels' sum)."""
    return _core.count_entropy(aligned(counts, np.uint64))


def _binomial(n: int, k: int) -> int:
    return math.comb(n, k) if 0 <= k <= n else 0


def _differing_pairs(label_counts: np.ndarray) -> tuple[int, int]:
    """Return n and n² − Σ_l n_l² from the rows per label."""
    per_label = [int(c) for c in label_counts.tolist()]
    n = sum(per_label)
    return n, n * n - sum(c * c for c in per_label)


def _group_starts(keys: np.ndarray, n_labels: int | None) -> np.ndarray:
    groups = keys // np.uint64(n_labels or 1)
    return np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])


def _undiscerned(keys: np.ndarray, counts: np.ndarray, n_labels: int | None) -> int:
    """Σ_c (n_c² − Σ_l n_{c,l}²) from counts keyed ``(class · |a| + value) · L + l``."""
    if keys.shape[0] == 0:
        return 0
    sizes = np.add.reduceat(counts, _group_starts(keys, n_labels))
    # n < 2**32 rows, so every sum of squares is below 2**64: exact in uint64.
    return int(np.dot(sizes, sizes)) - int(np.dot(counts, counts))


def _mixed_groups(keys: np.ndarray, n_labels: int | None) -> np.ndarray:
    """Return the (class, value) groups holding two labels or more: the new classes."""
    if keys.shape[0] == 0:
        return np.zeros(0, dtype=np.uint64)
    starts = _group_starts(keys, n_labels)
    ends = np.r_[starts[1:], keys.shape[0]]
    mixed = (ends - starts) >= 2
    return (keys[starts[mixed]] // np.uint64(n_labels or 1)).astype(np.uint64)
