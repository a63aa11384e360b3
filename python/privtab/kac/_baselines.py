"""Greedy baselines of the k-AC paper under plain k-anonymity.

:class:`KAnonymityGreedy` (Greedy-Ham / Greedy-DistCnt under k-anonymity) and
:class:`CMGreedy` (Iyengar's classification metric), section 5.2 of Zhang et al.
They reuse the greedy loop and the data plumbing of :mod:`privtab.kac._selection`.

Core kernels called (through that plumbing): ``privtab._core.class_sizes``
(k-anonymity of a candidate set), ``privtab._core.containment_anonymity`` (the
reported ``anonymity_``) and ``privtab._core.Partition`` (DistCnt and CM gains).

Full references: :mod:`privtab.kac`.
"""

from __future__ import annotations

from typing import Any

from privtab._validation import check_bool, check_choice, check_positive_int
from privtab.kac._selection import (
    _UTILITIES,
    _BinarySelector,
    _greedy,
    _greedy_distcnt,
    _greedy_ham,
    classification_metric,
)

__all__ = ["CMGreedy", "KAnonymityGreedy"]


class KAnonymityGreedy(_BinarySelector):
    """The greedy selectors of :class:`KACSelector` under plain k-anonymity.

    Every equivalence class of the projection (rows equal on all selected features)
    must hold at least k rows. The paper's "k-anonymity Ham" and "k-anonymity
    DistCnt" baselines (section 5.2).

    Parameters
    ----------
    k : int
        Minimum equivalence-class size.
    utility : {"ham", "distcnt"}
        Greedy-Ham order or Greedy-DistCnt rounds, with the stop rules of
        :class:`KACSelector`.
    skip_infeasible : bool
        Skip a feature that breaks k-anonymity instead of stopping.
    n_threads : int, optional
        Threads of the kernels (default: all).

    Attributes
    ----------
    support_, selection_order_, anonymity_, k_anonymity_, utility_, n_features_in_
        As in :class:`KACSelector`; ``k_anonymity_`` ≥ k.

    Examples
    --------
    >>> import numpy as np
    >>> B = np.array([[1, 1], [1, 1], [1, 0], [0, 0], [0, 1], [0, 1]])
    >>> KAnonymityGreedy(2, utility="ham").fit(B, [1, 1, 1, 0, 0, 0]).selection_order_
    array([0])
    """

    def __init__(
        self,
        k: int = 2,
        *,
        utility: str = "ham",
        skip_infeasible: bool = False,
        n_threads: int | None = None,
    ) -> None:
        self.k = k
        self.utility = utility
        self.skip_infeasible = skip_infeasible
        self.n_threads = n_threads

    def fit(self, X: Any, y: Any) -> KAnonymityGreedy:
        """Select the features of the binary matrix ``X`` (see :meth:`KACSelector.fit`)."""
        k = check_positive_int(self.k, "k")
        utility = check_choice(self.utility, "utility", tuple(_UTILITIES))
        skip = check_bool(self.skip_infeasible, "skip_infeasible")
        data = self._fit_data(X, y, k)
        search = _greedy_ham if utility == "ham" else _greedy_distcnt
        order = search(data, data.k_anonymous(k), skip)
        self._finish(X, data, order)
        self.utility_ = _UTILITIES[utility](data.matrix, data.positive, order)
        return self


class CMGreedy(_BinarySelector):
    """Greedy selection by Iyengar's classification metric under k-anonymity.

    Each round adds the feature that lowers CM most (ties by lowest index); the loop
    stops when no feature lowers CM strictly or when the best one breaks
    k-anonymity (Zhang et al. 2017, section 5.2 "CM Greedy").

    Parameters
    ----------
    k : int
        Minimum equivalence-class size.
    n_threads : int, optional
        Threads of the kernels (default: all).

    Attributes
    ----------
    support_, selection_order_, anonymity_, k_anonymity_, n_features_in_
        As in :class:`KACSelector`; ``k_anonymity_`` ≥ k.
    utility_ : float
        CM of the selection (see :func:`classification_metric`).

    Examples
    --------
    >>> import numpy as np
    >>> B = np.array([[1, 1], [1, 1], [1, 0], [0, 0], [0, 1], [0, 1]])
    >>> CMGreedy(2).fit(B, [1, 1, 1, 0, 0, 0]).selection_order_
    array([0])
    """

    def __init__(self, k: int = 2, *, n_threads: int | None = None) -> None:
        self.k = k
        self.n_threads = n_threads

    def fit(self, X: Any, y: Any) -> CMGreedy:
        """Select the features of the binary matrix ``X`` (see :meth:`KACSelector.fit`)."""
        k = check_positive_int(self.k, "k")
        data = self._fit_data(X, y, k)
        order = _greedy(
            data.matrix.n_features,
            data.cm_gains,
            data.k_anonymous(k),
            skip_infeasible=False,
            positive_gain=True,
        )
        self._finish(X, data, order)
        self.utility_ = classification_metric(data.matrix, data.positive, order)
        return self
