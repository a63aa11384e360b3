"""Feature selection under k-anonymity by containment (Zhang et al. 2017).

Zhang, Mohammed, Dave & Al Hasan select a subset S of the binary features of a
two-class data set so that the projection D_S is *k-anonymous by containment* (k-AC):
every row's set of 1-features within S is contained in the 1-features of at least k
rows (itself included). Among such subsets they look for one that separates the
classes well, measured by Ham (modular) or DistCnt (monotone submodular).

This module holds the measures (:func:`containment_anonymity`, :func:`ham_utility`,
:func:`distcnt_utility`, :func:`classification_metric`), the k-AC selector
:class:`KACSelector` and the plumbing shared with the greedy baselines of the paper's
section 5.2 (:class:`~privtab.kac.KAnonymityGreedy`, :class:`~privtab.kac.CMGreedy`, in
:mod:`privtab.kac._baselines`). All selectors run one greedy loop
(:func:`_greedy`) with a feasibility predicate and a scoring function. None of this is
differential privacy: k-AC is a syntactic guarantee on the released columns.

Core kernels called: ``privtab._core.containment_anonymity`` (AC of every row),
``privtab._core.class_sizes`` (equivalence-class sizes) and
``privtab._core.Partition`` (partition refinement for the DistCnt and CM gains).

Full references: :mod:`privtab.kac`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from privtab import _core
from privtab._estimator import SupportSelectorMixin
from privtab._validation import (
    as_binary_labels,
    check_bool,
    check_choice,
    check_limits,
    check_positive_int,
    check_threads,
    validate_data,
)
from privtab.engine import is_distributed, map_blocks_1d, map_rows
from privtab.engine._dask import merge_count_lists
from privtab.kac._binary import BinaryMatrix, as_binary_matrix
from privtab.kac._itemsets import Itemsets, mine_maximal_sets

__all__ = [
    "KACSelector",
    "classification_metric",
    "containment_anonymity",
    "distcnt_utility",
    "ham_utility",
]


def _as_features(S: Any, n_features: int, name: str = "S") -> np.ndarray:
    """Return the feature subset S as sorted distinct int64 indices.

    S is an iterable of column indices or a boolean mask of length ``n_features``.
    """
    if isinstance(S, (str, bytes)):
        raise TypeError(f"{name} must be column indices or a boolean mask, got {S!r}")
    array = np.asarray(list(S) if isinstance(S, Iterable) else S)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {array.shape}")
    if array.dtype == bool:
        if len(array) != n_features:
            raise ValueError(
                f"{name} is a boolean mask of length {len(array)}, expected "
                f"{n_features} (the number of features)"
            )
        return np.flatnonzero(array).astype(np.int64)
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if array.dtype.kind not in "iu":
        raise TypeError(
            f"{name} must hold integer column indices, got dtype {array.dtype}"
        )
    bad = (array < 0) | (array >= n_features)
    if bad.any():
        raise ValueError(
            f"{name} has the column index {array[bad][0].item()}, out of range for "
            f"{n_features} features"
        )
    return np.unique(array.astype(np.int64))


def _anonymity(
    M: BinaryMatrix, features: Any, n_threads: int | None = None
) -> np.ndarray:
    return _core.containment_anonymity(
        M.indptr, M.indices, M.n_features, [int(f) for f in features], n_threads
    )


def _class_sizes(
    M: BinaryMatrix, features: Any, n_threads: int | None = None
) -> np.ndarray:
    return _core.class_sizes(
        M.indptr, M.indices, M.n_features, [int(f) for f in features], n_threads
    )


def containment_anonymity(
    B: Any, features: Any = None, *, n_threads: int | None = None
) -> np.ndarray:
    """Return the anonymity by containment AC(u) of every row of B projected on S.

    ``AC(u) = |{v : C_S(u) ⊆ C_S(v)}|``, where C_S(u) is the set of features of S equal to 1
    in row u; u counts itself, so AC(u) ≥ 1. ``.min()`` of the result is AC(D_S), and
    D_S is k-anonymous by containment iff that minimum is ≥ k.

    Parameters
    ----------
    B : array-like, DataFrame or SciPy sparse matrix of shape (n, m)
        Binary (0/1) matrix; sparse input is never densified. A Dask array or
        DataFrame has its patterns counted partition by partition (at most 64
        features in S) and gets a lazy Dask array back (:mod:`privtab.engine`).
    features : iterable of int or boolean mask of length m, optional
        The subset S (default: all features). Empty S gives AC(u) = n for every row.
    n_threads : int, optional
        Threads to use (default: all). The result does not depend on it.

    Returns
    -------
    ndarray of int64, shape (n,)

    Raises
    ------
    ValueError
        If B is not a non-empty 0/1 matrix or a feature index is out of range.
    TypeError
        If B is not numeric or ``features`` does not hold integers.

    Notes
    -----
    Rows are grouped by their projected pattern (a bitmask key when S has at most 64
    features, counted as the histogram counts cells). For each distinct pattern the
    rows whose pattern contains it are counted either by summing the counts over the
    supersets of every mask of S at once (the zeta transform, ``2^|S|·|S|`` additions)
    or by intersecting per-feature lists of patterns, shortest first, in parallel over
    patterns, whichever costs less. The cost depends on n, the size of S and the
    number of distinct patterns, never on n² row pairs.

    Examples
    --------
    >>> import numpy as np
    >>> B = np.array([[1, 0], [1, 1], [1, 1], [0, 1]])
    >>> containment_anonymity(B)
    array([3, 2, 2, 3])
    >>> containment_anonymity(B, [1]).min()
    np.int64(3)
    """
    if is_distributed(B):
        return _distributed_anonymity(B, features)
    M = as_binary_matrix(B)
    S = (
        np.arange(M.n_features)
        if features is None
        else _as_features(features, M.n_features, "features")
    )
    return _anonymity(M, S, check_threads(n_threads))


def _distributed_anonymity(B: Any, features: Any) -> Any:
    """Return :func:`containment_anonymity` of a Dask collection as a lazy Dask array.

    The projected patterns of every partition are counted and merged; AC of a
    pattern is the number of rows whose pattern contains it, summed over the distinct
    patterns (exact integers, hence equal to the in-memory result); the rows then
    look their pattern up, partition by partition.
    """
    n_features = int(B.shape[1])
    S = (
        np.arange(n_features)
        if features is None
        else _as_features(features, n_features, "features")
    )
    if S.shape[0] > 64:
        raise ValueError(
            f"features has {S.shape[0]} features; a distributed B is counted by "
            "patterns of at most 64 features"
        )
    ((keys, counts),) = map_blocks_1d(
        _block_patterns, merge_count_lists, [B], ["B"], S, ndim=2
    )
    anonymity = _superset_sums(keys, counts)
    return map_rows(_block_anonymity, B, "B", S, keys, anonymity)


def _block_codes(block: Any, S: np.ndarray) -> np.ndarray:
    """Return the codes of the features S of one partition, column-major (0/1)."""
    if len(block) == 0:
        return np.zeros((S.shape[0], 0), dtype=np.uint32)
    M = as_binary_matrix(block)
    if S.shape[0] == 0:
        return np.zeros((0, M.n_rows), dtype=np.uint32)
    return np.ascontiguousarray(M.column_codes(S), dtype=np.uint32)


def _block_patterns(block: Any, S: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    codes = _block_codes(block, S)
    if codes.shape[1] == 0:
        return [(np.zeros(0, np.uint64), np.zeros(0, np.uint64))]
    cards = np.full(S.shape[0], 2, dtype=np.uint32)
    return [_core.count_columns(codes, cards, list(range(S.shape[0])))]


def _block_anonymity(
    block: Any, S: np.ndarray, keys: np.ndarray, anonymity: np.ndarray
) -> np.ndarray:
    codes = _block_codes(block, S)
    if S.shape[0] == 0:
        return np.full(codes.shape[1], int(anonymity.sum()), dtype=np.int64)
    row_keys = _core.mixed_radix_encode(codes, np.full(S.shape[0], 2, dtype=np.uint32))
    keys = np.require(keys, requirements=["C", "A"])
    return anonymity[np.searchsorted(keys, row_keys)]


#: Patterns compared at once by :func:`_superset_sums` (rows of its boolean block).
_SUPERSET_BLOCK_CELLS = 1 << 24


def _superset_sums(keys: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Return AC of every distinct pattern: the count of the patterns containing it.

    Patterns are bit masks (``keys``); O(P²) comparisons in blocks of bounded memory.
    """
    total = np.zeros(keys.shape[0], dtype=np.int64)
    if keys.shape[0] == 0:
        return total
    weights = counts.astype(np.int64)
    step = max(1, _SUPERSET_BLOCK_CELLS // keys.shape[0])
    for start in range(0, keys.shape[0], step):
        part = keys[start : start + step, None]
        contains = (keys[None, :] & part) == part
        total[start : start + step] = contains @ weights
    return total


def _prepare(B: Any, y: Any, S: Any) -> tuple[BinaryMatrix, np.ndarray, np.ndarray]:
    M = as_binary_matrix(B)
    positive = as_binary_labels(y, M.n_rows)
    return M, positive, _as_features(S, M.n_features)


def _labels(positive: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(positive, dtype=np.uint32)


def _partition(M: BinaryMatrix, S: np.ndarray) -> Any:
    if len(S) == 0:
        return _core.Partition(M.n_rows)
    codes = M.column_codes(S)
    cards = np.full(len(S), 2, dtype=np.uint32)
    return _core.Partition.from_columns(codes, cards, list(range(len(S))))


def ham_utility(B: Any, y: Any, S: Any) -> float:
    """Return Ham(S): the mean Hamming distance on S over (positive, negative) pairs.

    ``Ham(S) = Σ_{u∈E+, v∈E−} Hamming(u_S, v_S) / (|E+|·|E−|) = Σ_{f∈S} Ham({f})``.

    Parameters
    ----------
    B : array-like, DataFrame or SciPy sparse matrix of shape (n, m)
        Binary (0/1) matrix.
    y : array-like of shape (n,)
        Two classes; the larger value is the positive class.
    S : iterable of int or boolean mask of length m
        Feature subset (may be empty: Ham = 0).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For a non-binary B, y without exactly two classes, or an index out of range.

    Examples
    --------
    >>> ham_utility([[1, 0], [0, 0], [1, 1]], [1, 0, 0], [0, 1])
    1.0
    """
    M, positive, S = _prepare(B, y, S)
    return _ham(M, positive, S)


def _ham(M: BinaryMatrix, positive: np.ndarray, S: np.ndarray) -> float:
    """Return Ham(S) from integer pair counts, divided once.

    That is the correctly rounded value, the same for a set whatever the order of its
    features; a float sum of the per-feature scores would differ in its last bits
    between orders (two selectors picking one set in two orders reported two values).
    """
    n_positive = int(positive.sum())
    n_negative = M.n_rows - n_positive
    pos = M.feature_counts(positive)
    neg = M.feature_counts(~positive)
    pairs = sum(
        int(pos[f]) * (n_negative - int(neg[f]))
        + (n_positive - int(pos[f])) * int(neg[f])
        for f in S
    )
    return pairs / (n_positive * n_negative)


def _undiscerned(M: BinaryMatrix, positive: np.ndarray, S: np.ndarray) -> int:
    """(positive, negative) pairs that agree on S (unordered: u positive, v negative)."""
    _, pairs, *_ = _partition(M, S).score(_labels(positive), 2)
    return int(pairs) // 2


def distcnt_utility(B: Any, y: Any, S: Any) -> float:
    """Return DistCnt(S): the fraction of (positive, negative) pairs that differ on S.

    ``DistCnt(S) = |{(u, v) ∈ E+ × E− : u_S ≠ v_S}| / (|E+|·|E−|)``, computed on the
    partition-refinement kernel as ``1 − Σ_c n_{c,+}·n_{c,−} / (|E+|·|E−|)`` over the
    equivalence classes c of D_S.

    Parameters
    ----------
    B : array-like, DataFrame or SciPy sparse matrix of shape (n, m)
        Binary (0/1) matrix.
    y : array-like of shape (n,)
        Two classes; the larger value is the positive class.
    S : iterable of int or boolean mask of length m
        Feature subset (may be empty: DistCnt = 0).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For a non-binary B, y without exactly two classes, or an index out of range.

    Examples
    --------
    >>> distcnt_utility([[1, 0], [0, 0], [1, 1]], [1, 0, 0], [0])
    0.5
    """
    M, positive, S = _prepare(B, y, S)
    total = int(positive.sum()) * int((~positive).sum())
    return (total - _undiscerned(M, positive, S)) / total


def _minority(classes: np.ndarray, positive: np.ndarray, n_classes: int) -> int:
    counts = np.bincount(
        classes.astype(np.int64) * 2 + positive, minlength=2 * n_classes
    ).reshape(-1, 2)
    return int(counts.min(axis=1).sum())


def classification_metric(B: Any, y: Any, S: Any) -> float:
    """Return Iyengar's classification metric CM(S) of the projection D_S.

    CM(S) is the fraction of rows whose label is not the majority label of their
    equivalence class under S (rows equal on every feature of S). Lower is better.

    Parameters
    ----------
    B : array-like, DataFrame or SciPy sparse matrix of shape (n, m)
        Binary (0/1) matrix.
    y : array-like of shape (n,)
        Two classes.
    S : iterable of int or boolean mask of length m
        Feature subset (may be empty: CM is the minority-class fraction).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For a non-binary B, y without exactly two classes, or an index out of range.

    Notes
    -----
    A class penalises its minority rows: min(n_{c,+}, n_{c,−}). In a tie either label
    may be called the majority, and either way n_c/2 rows carry the other one, so a
    tied class contributes n_c/2.

    Examples
    --------
    >>> classification_metric([[1], [1], [0], [0]], [1, 0, 0, 0], [0])
    0.25
    """
    M, positive, S = _prepare(B, y, S)
    partition = _partition(M, S)
    return _minority(partition.classes(), positive, partition.n_classes) / M.n_rows


def _greedy(
    n_features: int,
    gains: Callable[[list[int], np.ndarray], np.ndarray],
    feasible: Callable[[list[int]], bool],
    *,
    skip_infeasible: bool,
    positive_gain: bool,
) -> list[int]:
    """Run the greedy loop shared by every selector here.

    Each round scores the remaining candidates (``gains(selected, candidates)``,
    higher is better, ties to the lowest index) and takes the best. If adding it
    breaks ``feasible``, the loop stops, or with ``skip_infeasible`` drops that
    candidate and tries the next best with the same scores (they do not depend on the
    dropped feature). With ``positive_gain`` the loop also stops when the best gain
    is ≤ 0.
    """
    selected: list[int] = []
    candidates = np.arange(n_features)
    scores = gains(selected, candidates) if n_features else candidates
    while len(candidates):
        best = int(np.argmax(scores))
        if positive_gain and scores[best] <= 0:
            break
        feature = int(candidates[best])
        keep = np.arange(len(candidates)) != best
        if feasible([*selected, feature]):
            selected.append(feature)
            candidates = candidates[keep]
            if len(candidates):
                scores = gains(selected, candidates)
        elif skip_infeasible:
            candidates, scores = candidates[keep], scores[keep]
        else:
            break
    return selected


@dataclass
class _Data:
    """A validated fit input and the cached column codes of the scoring kernel."""

    matrix: BinaryMatrix
    positive: np.ndarray
    n_threads: int | None
    _codes: np.ndarray | None = None

    @property
    def codes(self) -> np.ndarray:
        if self._codes is None:
            self._codes = self.matrix.column_codes(np.arange(self.matrix.n_features))
        return self._codes

    def ham_gains(self, selected: list[int], candidates: np.ndarray) -> np.ndarray:
        # Pair counts as integers (not Ham's floats) so that ties are exact.
        pos = self.matrix.feature_counts(self.positive)
        neg = self.matrix.feature_counts(~self.positive)
        n_pos = int(self.positive.sum())
        n_neg = len(self.positive) - n_pos
        pairs = pos * (n_neg - neg) + (n_pos - pos) * neg
        return pairs[candidates]

    def _base(self, selected: list[int]) -> Any:
        cards = np.full(self.matrix.n_features, 2, dtype=np.uint32)
        return _core.Partition.from_columns(
            self.codes, cards, selected, n_threads=self.n_threads
        )

    def distcnt_gains(self, selected: list[int], candidates: np.ndarray) -> np.ndarray:
        """Newly separated (positive, negative) pairs, ×2 (ordered pairs)."""
        if self.matrix.n_rows * self.matrix.n_features > _DENSE_CELLS:
            return self._sparse_distcnt_gains(selected, candidates)
        base = self._base(selected)
        labels = _labels(self.positive)
        _, now, *_ = base.score(labels, 2)
        cards = np.full(self.matrix.n_features, 2, dtype=np.uint32)
        _, after, *_ = base.score_candidates(
            self.codes,
            cards,
            labels,
            2,
            [int(c) for c in candidates],
            n_threads=self.n_threads,
        )
        return int(now) - after.astype(np.int64)

    def _sparse_distcnt_gains(
        self, selected: list[int], candidates: np.ndarray
    ) -> np.ndarray:
        # Wide sparse data: the classes of S come from the partition kernel, and the
        # split of each class by a candidate f only involves the rows with f = 1, so
        # the gains are summed over the stored ones instead of n rows per candidate.
        M = self.matrix
        base = _partition(M, np.asarray(selected, dtype=np.int64))
        classes = base.classes().astype(np.int64)
        n_classes = base.n_classes
        pos = self.positive.astype(np.int64)
        class_pos = np.bincount(classes, weights=pos, minlength=n_classes)
        class_neg = np.bincount(classes, minlength=n_classes) - class_pos
        rows = M.row_ids()
        keys = M.indices.astype(np.int64) * n_classes + classes[rows]
        groups, inverse = np.unique(keys, return_inverse=True)
        a_pos = np.bincount(inverse, weights=pos[rows], minlength=len(groups))
        a_neg = np.bincount(inverse, minlength=len(groups)) - a_pos
        c = groups % n_classes
        split = a_pos * (class_neg[c] - a_neg) + a_neg * (class_pos[c] - a_pos)
        gains = np.bincount(
            groups // n_classes, weights=split, minlength=M.n_features
        ).round()
        return 2 * gains.astype(np.int64)[candidates]

    def cm_gains(self, selected: list[int], candidates: np.ndarray) -> np.ndarray:
        """Decrease of the number of minority rows (CM·n) when adding each candidate."""
        base = self._base(selected)
        classes = base.classes().astype(np.int64)
        now = _minority(classes, self.positive, base.n_classes)
        out = np.empty(len(candidates), dtype=np.int64)
        for i, f in enumerate(candidates):
            refined = classes * 2 + self.codes[f]
            out[i] = now - _minority(refined, self.positive, 2 * base.n_classes)
        return out

    def k_ac(self, k: int) -> Callable[[list[int]], bool]:
        # The rows with the new feature f only contain each other's patterns if f has
        # at least k of them: a cheap necessary condition checked first.
        # The greedy loop only asks about S ∪ {f} with S feasible. Rows without f keep
        # their pattern and its supersets, so only the rows with f are rechecked, among
        # themselves (a superset of a pattern with f has f).
        M = self.matrix
        support = M.feature_counts()
        by_feature = np.argsort(M.indices, kind="stable")
        starts = np.concatenate([[0], np.cumsum(support)])
        row_of = M.row_ids()
        lengths = np.diff(M.indptr)

        def feasible(S: list[int]) -> bool:
            f = S[-1]
            if support[f] == 0:
                return True
            if support[f] < k:
                return False
            rows = row_of[by_feature[starts[f] : starts[f + 1]]]
            sub_lengths = lengths[rows]
            indptr = np.zeros(len(rows) + 1, dtype=np.int64)
            np.cumsum(sub_lengths, out=indptr[1:])
            offsets = np.repeat(M.indptr[rows] - indptr[:-1], sub_lengths)
            indices = M.indices[np.arange(indptr[-1]) + offsets]
            ac = _core.containment_anonymity(
                indptr, indices, M.n_features, [int(j) for j in S], self.n_threads
            )
            return int(ac.min()) >= k

        return feasible

    def k_anonymous(self, k: int) -> Callable[[list[int]], bool]:
        # Both sides of the split by the new feature are unions of classes.
        support = self.matrix.feature_counts()
        n = self.matrix.n_rows

        def feasible(S: list[int]) -> bool:
            if 0 < support[S[-1]] < k or 0 < n - support[S[-1]] < k:
                return False
            return int(_class_sizes(self.matrix, S, self.n_threads).min()) >= k

        return feasible


# Above this many cells (n·m) Greedy-DistCnt scores candidates from the stored ones
# rather than from dense columns of codes.
_DENSE_CELLS = 1 << 25


_UTILITIES: dict[str, Callable[[BinaryMatrix, np.ndarray, Sequence[int]], float]] = {
    "ham": lambda M, p, S: ham_utility(M, p, S),
    "distcnt": lambda M, p, S: distcnt_utility(M, p, S),
}


class _BinarySelector(SupportSelectorMixin, BaseEstimator):
    """Shared fit plumbing of the selectors on binary data (not public)."""

    def _fit_data(self, X: Any, y: Any, k: int) -> _Data:
        M = as_binary_matrix(X, "X")
        positive = as_binary_labels(y, M.n_rows)
        if M.n_rows < k:
            raise ValueError(
                f"k = {k} exceeds the number of rows ({M.n_rows}): not even the empty "
                "feature set is k-anonymous"
            )
        return _Data(M, positive, check_threads(getattr(self, "n_threads", None)))

    def _finish(self, X: Any, data: _Data, order: list[int]) -> None:
        validate_data(self, X, skip_check_array=True, reset=True)
        self.n_features_in_ = data.matrix.n_features
        self._set_selection(order, data.matrix.n_features)
        self.anonymity_ = int(_anonymity(data.matrix, order, data.n_threads).min())
        self.k_anonymity_ = int(_class_sizes(data.matrix, order, data.n_threads).min())

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        return tags


def _greedy_ham(data: _Data, feasible: Any, skip: bool) -> list[int]:
    return _greedy(
        data.matrix.n_features,
        data.ham_gains,
        feasible,
        skip_infeasible=skip,
        positive_gain=False,
    )


def _greedy_distcnt(data: _Data, feasible: Any, skip: bool) -> list[int]:
    return _greedy(
        data.matrix.n_features,
        data.distcnt_gains,
        feasible,
        skip_infeasible=skip,
        positive_gain=True,
    )


# KACSelector's methods: each maps (data, selector) to the selected features in the order
# added. A method that searches candidate sets (maximal k-AC sets) fits the same slot.
def _kac_greedy_ham(data: _Data, est: KACSelector) -> list[int]:
    return _greedy_ham(data, data.k_ac(est.k), est.skip_infeasible)


def _kac_greedy_distcnt(data: _Data, est: KACSelector) -> list[int]:
    return _greedy_distcnt(data, data.k_ac(est.k), est.skip_infeasible)


def _best_of_largest(data: _Data, est: KACSelector, sets: Itemsets) -> list[int]:
    """Return the best by ``est.utility`` of the ``top_t`` first (largest) ``sets``.

    Ties go to the earlier set in the miner's order. Scores are integer pair counts
    (Ham: Σ Hamming distances; DistCnt: separated pairs), so ties are exact. The set
    comes back ordered by decreasing Ham({f}) (= DistCnt({f}) for one binary
    feature), ties by lowest index.
    """
    est.complete_ = sets.complete
    candidates = sets[: est.top_t]
    if not candidates:
        return []
    pairs = data.ham_gains([], np.arange(data.matrix.n_features))
    if est.utility == "ham":
        scores = [int(pairs[S].sum()) for S in candidates]
    else:
        scores = [-_undiscerned(data.matrix, data.positive, S) for S in candidates]
    best = candidates[int(np.argmax(scores))]
    return [int(f) for f in best[np.lexsort((best, -pairs[best]))]]


def _kac_maximal_sets(
    predicate: str,
) -> Callable[[_Data, KACSelector], list[int]]:
    # With "frequency" every itemset with support ≥ k is k-AC: each row's pattern on S
    # is contained in S, and at least k rows contain S. "containment" is exact k-AC.
    def choose(data: _Data, est: KACSelector) -> list[int]:
        sets = mine_maximal_sets(
            data.matrix,
            int(est.k),
            predicate,
            est.max_sets,
            est.time_limit,
            data.n_threads,
        )
        return _best_of_largest(data, est, sets)

    return choose


_KAC_METHODS: dict[str, Callable[[_Data, KACSelector], list[int]]] = {
    "greedy_distcnt": _kac_greedy_distcnt,
    "greedy_ham": _kac_greedy_ham,
    "maximal": _kac_maximal_sets("frequency"),
    "maximal_feasible": _kac_maximal_sets("containment"),
}


class KACSelector(_BinarySelector):
    """Select binary features so that the projection is k-anonymous by containment.

    Parameters
    ----------
    k : int
        The anonymity parameter: every row's projected 1-features must be contained in
        those of at least k rows (itself included).
    method : {"greedy_distcnt", "greedy_ham", "maximal", "maximal_feasible"}
        ``"greedy_ham"`` (the paper's Greedy-Ham): sort the features by Ham({f})
        descending (ties by lowest index) and add them in that order.
        ``"greedy_distcnt"`` (Greedy-DistCnt): each round add the feature with the
        largest marginal DistCnt gain (ties by lowest index).
        ``"maximal"`` (the paper's Maximal): the maximal frequent itemsets of the rows
        read as transactions, with absolute minimum support k
        (:func:`privtab.kac.maximal_itemsets`); of the ``top_t`` largest, the one
        with the best ``utility``.
        ``"maximal_feasible"``: the same rule over the exact maximal k-AC feature sets
        (:func:`privtab.kac.maximal_kac_sets`).
    utility : {"distcnt", "ham"}
        The utility reported in ``utility_``, and the one the maximal-set methods
        maximise.
    top_t : int
        Number of largest maximal sets compared by the maximal-set methods (not used by
        the greedy methods; validated all the same). Sets come by decreasing size, then
        in lexicographic order of their column indices; that order also breaks ties of
        size and of utility.
    skip_infeasible : bool
        When the next feature would break k-AC, skip it and continue with the next
        best (True) instead of stopping (False, the paper's rule). Greedy methods only.
    max_sets : int, optional
        Maximal-set methods: stop the enumeration after this many maximal sets (see
        :func:`privtab.kac.maximal_itemsets` for which ones are kept).
    time_limit : float, optional
        Maximal-set methods: stop the enumeration after this many seconds (the result
        then depends on timing).
    n_threads : int, optional
        Threads of the kernels (default: all); the result does not depend on it.

    Attributes
    ----------
    support_ : ndarray of bool, shape ``(n_features_in_,)``
        Mask of the selected features.
    selection_order_ : ndarray of int64
        The selected features in the order added (greedy methods), or by decreasing
        single-feature utility Ham({f}) = DistCnt({f}), ties by lowest index
        (maximal-set methods).
    anonymity_ : int
        AC of the projection on the selection (≥ k).
    complete_ : bool
        ``False`` when ``max_sets`` or ``time_limit`` stopped the enumeration of a
        maximal-set method, so that the choice was made among some of the maximal sets
        only; always ``True`` for the greedy methods. No warning is emitted: a limit
        is only ever hit when the caller set one, so this flag is the report (as
        ``Itemsets.complete``).
    k_anonymity_ : int
        The smallest equivalence class of the projection (plain k-anonymity).
    utility_ : float
        ``utility`` of the selection.
    n_features_in_ : int
        Number of columns of X.
    feature_names_in_ : ndarray of str
        Column names, when X was a DataFrame with string column names.

    Raises
    ------
    ValueError
        From :meth:`fit`, for an invalid parameter, non-binary input, or n < k.

    Notes
    -----
    k-AC (Zhang, Mohammed, Dave & Al Hasan) is downward closed in S, so both greedy
    methods only ever hold a feasible set. Greedy-DistCnt also stops when the best
    marginal gain is 0: DistCnt is monotone, and a feature that separates no further
    (positive, negative) pair adds no utility while it can only lower anonymity.
    Greedy-Ham has no such rule (the paper adds features in Ham order until k-AC
    breaks). This is a syntactic guarantee, not differential privacy.

    Every itemset with support ≥ k is k-AC (each row's pattern on S is a subset of S,
    contained in the ≥ k rows holding all of S), so ``"maximal"`` only returns k-AC
    sets; the maximal k-AC sets contain every such itemset and both utilities are
    monotone, so with ``top_t`` at least the number of maximal k-AC sets,
    ``"maximal_feasible"`` is never worse than ``"maximal"``. When no feature can be
    selected (the only maximal set is empty, or a limit stopped the search before
    any set was found) the selection is empty, as with the greedy methods.

    Examples
    --------
    >>> import numpy as np
    >>> B = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 1], [0, 0, 1], [1, 1, 1], [0, 1, 0]])
    >>> y = np.array([1, 1, 1, 0, 0, 0])
    >>> sel = KACSelector(2, method="greedy_ham").fit(B, y)
    >>> sel.selection_order_, sel.anonymity_
    (array([0, 2]), 2)
    >>> sel = KACSelector(2, method="maximal", utility="ham").fit(B, y)
    >>> sel.selection_order_, sel.anonymity_, sel.complete_
    (array([0, 2]), 2, True)
    """

    def __init__(
        self,
        k: int = 2,
        *,
        method: str = "greedy_distcnt",
        utility: str = "distcnt",
        top_t: int = 10,
        skip_infeasible: bool = False,
        max_sets: int | None = None,
        time_limit: float | None = None,
        n_threads: int | None = None,
    ) -> None:
        self.k = k
        self.method = method
        self.utility = utility
        self.top_t = top_t
        self.skip_infeasible = skip_infeasible
        self.max_sets = max_sets
        self.time_limit = time_limit
        self.n_threads = n_threads

    def fit(self, X: Any, y: Any) -> KACSelector:
        """Select the features of the binary matrix ``X`` (B in the paper).

        Parameters
        ----------
        X : array-like, DataFrame or SciPy sparse matrix of shape (n, m)
            Binary (0/1) matrix (one-hot encode categorical columns with
            ``pandas.get_dummies``).
        y : array-like of shape (n,)
            Two classes; the larger value is the positive class.

        Returns
        -------
        KACSelector
            ``self``, fitted.
        """
        k = check_positive_int(self.k, "k")
        method = check_choice(self.method, "method", tuple(_KAC_METHODS))
        utility = check_choice(self.utility, "utility", tuple(_UTILITIES))
        check_positive_int(self.top_t, "top_t")
        check_bool(self.skip_infeasible, "skip_infeasible")
        check_limits(self.max_sets, self.time_limit)
        data = self._fit_data(X, y, k)
        self.complete_ = True
        order = _KAC_METHODS[method](data, self)
        self._finish(X, data, order)
        self.utility_ = _UTILITIES[utility](data.matrix, data.positive, order)
        return self
