"""Baselines of the k-anonymity-by-containment paper: RF, Laplace-DP and Exponential-DP.

Zhang, Mohammed, Dave and Al Hasan (2017), section 5.2, compare their k-AC feature
selectors with three data-release baselines on binary data:

- :func:`randomization_flipping` (RF): k-member clustering of the rows, then every
  cluster's bits are flipped to the cluster's majority so that each released row is
  shared by at least ``k`` rows (k-anonymity, hence k-AC). Not differentially private.
- :class:`LaplaceDPRelease` and :class:`ExponentialDPRelease`: select ``n_features``
  features by their per-feature Ham utility with half of ε (report-noisy-max with Laplace
  noise, or the exponential mechanism), then release a synthetic data set from a
  full-domain noisy histogram over the selected features and the label with the other
  half.

Core kernels called: ``privtab._core.randomization_flipping`` (k-member clustering on
bit-packed rows and the majority flip); the feature choice and the noisy histogram go
through :mod:`privtab.mechanisms` (``privtab._core`` samplers).

Full references: :mod:`privtab.kac`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from privtab import _core
from privtab._docstrings import LABEL_PARAMETER, REFITS_NOTE, fill_doc
from privtab._estimator import DPEstimatorMixin, SupportSelectorMixin
from privtab._random import RandomState, core_seed
from privtab._validation import check_labels, check_positive_int, warn_user
from privtab.accountant import BudgetAccountant, split_budget
from privtab.exceptions import PrivacyLeakWarning
from privtab.kac._binary import as_binary_matrix, ham_scores
from privtab.mechanisms import (
    discrete_laplace_mechanism,
    exponential_mechanism,
    laplace_mechanism,
)

__all__ = [
    "ExponentialDPRelease",
    "FlippingResult",
    "LaplaceDPRelease",
    "randomization_flipping",
]


@dataclass(frozen=True, eq=False)
class FlippingResult:
    """The output of :func:`randomization_flipping`.

    Attributes
    ----------
    data : ndarray of uint8, shape (n_rows, n_features)
        The released 0/1 matrix; rows of the same cluster are identical.
    flipped_fraction : float
        Flipped cells divided by all ``n_rows * n_features`` cells.
    clusters : ndarray of int64, shape (n_rows,)
        Cluster id of every row, ``0 .. n_clusters - 1``; every cluster has ``>= k``
        rows.
    n_clusters : int
        Number of clusters.
    k : int
        The anonymity parameter used.
    """

    data: np.ndarray
    flipped_fraction: float
    clusters: np.ndarray
    n_clusters: int
    k: int


def randomization_flipping(
    B: Any,
    k: int,
    *,
    random_state: RandomState = None,
    n_threads: int | None = None,
) -> FlippingResult:
    """Make a binary matrix k-anonymous by k-member clustering and bit flipping (RF).

    Parameters
    ----------
    B : array-like, DataFrame or sparse matrix of shape (n_rows, n_features)
        0/1 data (see ``as_binary_matrix``).
    k : int
        Minimum cluster size, ``1 <= k <= n_rows``.
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        Draws the row the clustering starts from. ``None`` uses operating-system
        entropy.
    n_threads : int, optional
        Threads of the distance scans (the global pool by default); the result does
        not depend on it.

    Returns
    -------
    FlippingResult

    Raises
    ------
    ValueError
        If ``B`` is not a non-empty 0/1 matrix, or ``k`` is not in ``1 .. n_rows``.
    TypeError
        If ``B`` is not numeric or ``k`` not an int.

    Notes
    -----
    Clustering (greedy k-member clustering, Byun, Kamra, Bertino and Li 2007, with
    Hamming distance between rows). Identical rows are merged first; a row pattern that
    occurs ``>= k`` times is a cluster by itself (it needs no flips). Over the remaining
    rows: draw a starting row uniformly at random; take the row furthest from it as the
    seed of a new cluster and add the seed's ``k - 1`` nearest rows (its identical
    copies first); repeat, starting from the row furthest from the previous seed, while
    at least ``k`` rows remain. The fewer than ``k`` rows left over join the cluster
    whose seed is nearest. Ties are broken by a fixed order of the distinct rows, so a
    seed determines the output, for any number of threads.

    Flipping: inside each cluster every feature is set to the cluster's majority value
    (ties, possible in clusters of even size, go to 0, which keeps the data as sparse
    as possible and the release deterministic). All rows of a cluster become
    identical, so every released row occurs at least ``k`` times: the release is
    k-anonymous and therefore k-anonymous by containment. ``flipped_fraction`` is the
    percentage the paper reports for RF (Table 5).

    Privacy: this is a k-anonymity baseline, not differential privacy; it takes no
    ``epsilon`` and charges no accountant. A fixed seed only makes the run
    reproducible.

    Examples
    --------
    >>> import numpy as np
    >>> from privtab.kac import randomization_flipping
    >>> B = np.array([[1, 0, 1], [1, 0, 1], [1, 1, 1], [0, 0, 0], [0, 0, 1], [0, 1, 0]])
    >>> result = randomization_flipping(B, 3, random_state=0)
    >>> bool(np.bincount(result.clusters).min() >= 3)
    True
    >>> 0.0 <= result.flipped_fraction <= 1.0
    True
    """
    k = check_positive_int(k, "k")
    if n_threads is not None:
        n_threads = check_positive_int(n_threads, "n_threads")
    matrix = as_binary_matrix(B)
    if k > matrix.n_rows:
        raise ValueError(f"k must be <= the number of rows ({matrix.n_rows}), got {k}")
    seed = core_seed(random_state)
    flat, clusters, n_clusters, flipped = _core.randomization_flipping(
        matrix.indptr, matrix.indices, matrix.n_features, k, seed, n_threads
    )
    cells = matrix.n_rows * matrix.n_features
    return FlippingResult(
        data=flat.reshape(matrix.n_rows, matrix.n_features),
        flipped_fraction=flipped / cells,
        clusters=clusters.astype(np.int64),
        n_clusters=int(n_clusters),
        k=k,
    )


class _DPRelease(DPEstimatorMixin, SupportSelectorMixin, BaseEstimator):
    """Shared fit of the two DP baselines; subclasses pick the selection mechanism."""

    _mechanism = ""

    released_attributes: ClassVar[tuple[str, ...]] = (
        "selection_order_",
        "support_",
        "synthetic_X_",
        "synthetic_y_",
        "noisy_counts_",
        "classes_",
        "n_features_in_",
    )

    def __init__(
        self,
        epsilon: float,
        n_features: int = 8,
        *,
        max_cells: int = 2**24,
        random_state: RandomState = None,
        accountant: BudgetAccountant | None = None,
        classes: Any = None,
        min_class_size: int | None = None,
        label: str | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.n_features = n_features
        self.max_cells = max_cells
        self.random_state = random_state
        self.accountant = accountant
        self.classes = classes
        self.min_class_size = min_class_size
        self.label = label

    def _pick(
        self,
        scores: np.ndarray,
        sensitivity: float,
        epsilon: float,
        generator: np.random.Generator | None,
        scratch: BudgetAccountant,
    ) -> int:
        """Index into ``scores`` of one ``epsilon``-DP pick (the subclass's mechanism)."""
        raise NotImplementedError

    def _select(
        self,
        scores: np.ndarray,
        sensitivity: float,
        steps: list[float],
        generator: np.random.Generator | None,
        scratch: BudgetAccountant,
    ) -> np.ndarray:
        """One pick per budget step among the features not chosen yet, in pick order."""
        remaining = np.arange(scores.shape[0])
        order = []
        for step in steps:
            best = self._pick(scores[remaining], sensitivity, step, generator, scratch)
            order.append(int(remaining[best]))
            remaining = np.delete(remaining, best)
        return np.asarray(order, dtype=np.int64)

    def fit(self, X: Any, y: Any) -> _DPRelease:
        """Select features and release a synthetic data set.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_rows, n_features_in)
            0/1 data (B in the paper).
        y : array-like of shape (n_rows,)
            Binary labels: in ``classes`` when it is declared, else two distinct
            values. The larger class (``classes_[1]``) is the positive one; each
            class must hold at least ``min_class_size`` records (at least one when
            it is not declared).

        Returns
        -------
        self
        """
        t = check_positive_int(self.n_features, "n_features")
        max_cells = check_positive_int(self.max_cells, "max_cells")
        if t + 1 >= 64 or 2 ** (t + 1) > max_cells:
            raise ValueError(
                f"n_features = {t} needs a histogram of 2^{t + 1} cells, more than "
                f"max_cells = {max_cells}"
            )
        declared_size = (
            None
            if self.min_class_size is None
            else check_positive_int(self.min_class_size, "min_class_size")
        )
        run = self._start_private_fit()
        matrix = as_binary_matrix(X, "X")
        m = matrix.n_features
        if t > m:
            raise ValueError(
                f"n_features must be <= the number of features ({m}), got {t}"
            )
        if declared_size is not None and 2 * declared_size > matrix.n_rows:
            raise ValueError(
                f"min_class_size must be <= half the number of rows "
                f"({matrix.n_rows // 2}): two classes of {declared_size} records or "
                f"more need {2 * declared_size} rows, got {declared_size}"
            )
        classes, codes = check_labels(
            y,
            self.classes,
            n_rows=matrix.n_rows,
            n_classes=2,
            owner=type(self).__name__,
        )
        positive = codes == 1
        n_positive = int(positive.sum())
        smaller_class = min(n_positive, matrix.n_rows - n_positive)
        if smaller_class == 0:
            absent = 0 if n_positive else 1
            raise ValueError(
                "y must hold both classes, but no record has the class "
                f"{classes[absent : absent + 1].tolist()[0]!r}"
            )
        if declared_size is None:
            warn_user(
                f"{type(self).__name__}: min_class_size was not given, so the "
                "sensitivity of Ham is 1 / (the size of the smaller class of y), read "
                "off the data and not covered by the privacy guarantee; declare a "
                "public lower bound on the size of each class with min_class_size=...",
                PrivacyLeakWarning,
            )
        elif smaller_class < declared_size:
            raise ValueError(
                f"min_class_size = {declared_size} is declared as a lower bound on the "
                "size of each class, but a class of y has fewer records"
            )
        sensitivity = 1.0 / (smaller_class if declared_size is None else declared_size)
        parts = split_budget(run.epsilon, [1.0] * t + [float(t)])
        steps, release = parts[:t], parts[t]
        generator = run.random_state
        scratch = BudgetAccountant()
        with run.charged_on_failure(type(self).__name__):
            order = self._select(
                ham_scores(matrix, positive), sensitivity, steps, generator, scratch
            )
            self._set_selection(order, m)
            selected = np.flatnonzero(self.support_)
            bits = matrix.dense(selected).astype(np.int64)
            keys = (bits << np.arange(t, dtype=np.int64)).sum(axis=1)
            keys += positive.astype(np.int64) << t
            counts = np.bincount(keys, minlength=2 ** (t + 1))
            noisy = discrete_laplace_mechanism(
                counts,
                2.0,
                release,
                random_state=generator,
                accountant=scratch,
            )
            cells = np.repeat(
                np.arange(2 ** (t + 1), dtype=np.int64), np.maximum(noisy, 0)
            )
            self.synthetic_X_ = (
                (cells[:, None] >> np.arange(t, dtype=np.int64)) & 1
            ).astype(np.uint8)
            self.synthetic_y_ = classes[(cells >> t) & 1]
        self.n_features_in_ = m
        if matrix.feature_names is not None:
            self.feature_names_in_ = matrix.feature_names
        self.classes_ = classes
        self.ham_sensitivity_ = sensitivity
        self.noisy_counts_ = np.asarray(noisy, dtype=np.int64)
        self._finish_private_fit(
            run,
            f"{type(self).__name__}: {t} picks + release",
            [
                *(
                    (f"pick {r + 1} of {t} ({self._mechanism})", part)
                    for r, part in enumerate(steps)
                ),
                (f"noisy histogram of 2^{t + 1} cells (discrete Laplace)", release),
            ],
        )
        return self


_RELEASE_DOC = """%(summary)s

    Parameters
    ----------
    epsilon : float
        Total privacy budget, finite and > 0 (required: a release has no default
        budget).
    n_features : int, default=8
        Number ``t`` of features to select (the paper uses the count Greedy-DistCnt
        selects).
    max_cells : int, default=2**24
        Largest histogram (``2^(n_features + 1)`` cells) the release may build.
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (the secure default) uses operating-system entropy.
    accountant : BudgetAccountant, optional
        Checked for ``epsilon`` before reading data, charged once after success (the
        default accountant when ``None``).
    classes : array-like of 2 labels, optional
        The public label set: exactly two distinct labels, sorted into ``classes_``
        (the second is the positive class). A label of ``y`` outside it raises a
        ``ValueError``. ``None`` takes the set from ``y`` with ``numpy.unique`` and
        emits a :class:`~privtab.exceptions.PrivacyLeakWarning`.
    min_class_size : int, optional
        A public lower bound on the number of records of each class, >= 1 and at most
        half the rows: it sets the sensitivity ``Δ = 1 / min_class_size`` of the
        selection scores (see Notes). A ``y`` with a smaller class raises a
        ``ValueError``. ``None`` takes ``Δ = 1 / min(n+, n−)``, the size of the
        smaller class of ``y``, and emits a
        :class:`~privtab.exceptions.PrivacyLeakWarning`: the noise scale of the
        selection then depends on the data and the guarantee does not cover it.
    %(label)s

    Attributes
    ----------
    support_ : ndarray of bool, shape ``(n_features_in_,)``
    selection_order_ : ndarray of int64, shape (n_features,)
        Selected features in the order picked.
    synthetic_X_ : ndarray of uint8, shape (n_synthetic, n_features)
        The released records (selected features in ascending feature order).
    synthetic_y_ : ndarray, shape (n_synthetic,)
        Their labels, from ``classes_``.
    noisy_counts_ : ndarray of int64, shape (2^(n_features + 1),)
        The noisy histogram before negative counts are set to 0; cell
        ``Σ_j x_j 2^j + y 2^t`` (``x`` in ascending feature order, ``y`` 1 for the
        positive class).
    ham_sensitivity_ : float
        The Δ used: ``1 / min_class_size`` when declared (public), else
        ``1 / min(n+, n−)``, exactly the size of the smaller class of ``y``: a value
        computed from the data without noise, kept for analysis, not covered by the
        guarantee and not part of :meth:`release`.
    classes_ : ndarray, shape (2,)
        ``classes`` (sorted) when declared, else the two labels of ``y``.
    epsilon_spent_ : float
        Equal to ``epsilon``.
    privacy_ledger_ : list of LedgerEntry
        Steps that unpack as ``(label, epsilon)``, each tagged with its ``guarantee``.
        One entry per pick and one for the release; sums to ``epsilon``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only for DataFrame input.

    Raises
    ------
    BudgetExceededError
        If ``accountant`` cannot afford ``epsilon`` (before reading any data).
    ValueError
        For invalid parameters (``epsilon``, ``n_features`` larger than the number of
        features, a histogram above ``max_cells``, ``min_class_size`` above half the
        rows), non-binary ``X``, ``y`` without exactly two classes (or without records
        of one of them, or with a class smaller than ``min_class_size``), ``classes``
        without exactly two distinct labels, or a label of ``y`` outside ``classes``.
        An error after the first pick was drawn charges ``epsilon``.

    Notes
    -----
    %(selection)s

    Budget (Zhang et al. 2017, section 5.2): half of ``epsilon`` selects the features, split
    equally over the ``t = n_features`` picks (``epsilon / (2t)`` each); the other half
    releases the data. The ledger lists the ``t`` picks and the release, and sums to
    ``epsilon`` exactly.

    Sensitivity of Ham({f}). ``Ham({f}) = Σ_{u ∈ E+, v ∈ E−} |u_f − v_f| / (n+ n−)``
    ``= a (1 − b) + b (1 − a)``, with ``a`` and ``b`` the fractions of ones of
    feature ``f`` among the positive and the negative records. Neighbouring data
    sets differ by replacing one record, of either class (``n`` is public, the class
    sizes are not); ``m = min_class_size`` bounds the size of each class on both.
    Replacing a record within its class moves ``a`` (or ``b``) by at most ``1/n+``
    (or ``1/n−``), and ``|∂Ham/∂a| = |1 − 2b| ≤ 1``: Ham({f}) moves by at most
    ``1/m``. A record that changes class moves ``a`` by at most ``1/(n+ + 1)`` and
    ``b`` by at most ``1/(n− − 1)``, and the two moves push Ham({f}) in opposite
    directions whenever both are large (writing ``Ham = a + b − 2ab`` and taking
    the cases of the two records' values), so it moves by at most
    ``max(1/(n+ + 1), 1/(n− − 1), 1/(2 n+)) ≤ 1/m`` as well. Hence
    ``Δ = 1 / min_class_size`` for every feature at once; with ``min_class_size``
    inferred, ``Δ = 1 / min(n+, n−)``, the paper's normalisation, whose value is
    read off the data.

    Release: the full-domain histogram over the ``t`` selected features and the label
    (``2^(t+1)`` cells; a record changes two cells by one, L1 sensitivity 2) gets exact
    discrete Laplace noise of scale ``2 / (epsilon / 2)`` in every cell (also the empty
    ones, so the domain leaks nothing); negative counts become 0, and the synthetic
    data holds that many copies of each cell's record ("add instances to match the
    count", Dwork et al. 2006). Its columns are the selected features in ascending
    order, the order of ``transform``. The histogram is refused (before any
    spending) when ``2^(t+1)`` exceeds ``max_cells``. Post-processing keeps the
    guarantee: ``epsilon``-DP overall by sequential composition, on data sets whose
    classes hold at least ``min_class_size`` records each. The labels themselves
    (``classes_``, the values of ``synthetic_y_``) are public only when declared with
    ``classes``; inferred ones are read off ``y``, with a
    :class:`~privtab.exceptions.PrivacyLeakWarning`. A fixed ``random_state`` is for
    reproducibility and voids privacy against anyone who knows it.

    Publishing: :meth:`release` returns the covered attributes (the selection, the
    synthetic records, the noisy counts, ``classes_`` and ``n_features_in_``);
    ``ham_sensitivity_`` is left out (see above).

    %(refits)s

    Examples
    --------
    %(example)s
    """


@fill_doc(
    _RELEASE_DOC,
    label=LABEL_PARAMETER,
    refits=REFITS_NOTE,
    summary="Laplace-DP baseline: report-noisy-max feature selection, noisy histogram release.",
    selection="""\
    Selection: ``t`` rounds of report-noisy-max among the features not yet chosen:
    each round adds fresh Laplace noise of scale ``2Δ / (epsilon / (2t))`` to every
    remaining feature's Ham({f}) and picks the largest. One round is
    ``epsilon / (2t)``-DP; the factor 2 in the scale (rather than the ``Δ / ε`` of the
    monotone counting-query case) is needed because replacing a record can raise some
    scores and lower others (McKenna and Sheldon 2020).
""",
    example="""\
    >>> import numpy as np
    >>> from privtab import BudgetAccountant
    >>> from privtab.kac import LaplaceDPRelease
    >>> rng = np.random.default_rng(0)
    >>> B = rng.integers(0, 2, size=(200, 6))
    >>> y = B[:, 0] | B[:, 1]
    >>> model = LaplaceDPRelease(
    ...     1.0,
    ...     2,
    ...     random_state=0,
    ...     accountant=BudgetAccountant(),
    ...     classes=[0, 1],
    ...     min_class_size=20,
    ... )
    >>> model.fit(B, y).transform(B).shape
    (200, 2)
    >>> model.synthetic_X_.shape[1], sum(e for _, e in model.privacy_ledger_)
    (2, 1.0)
""",
)
class LaplaceDPRelease(_DPRelease):
    _mechanism = "Laplace report-noisy-max"

    def _pick(
        self,
        scores: np.ndarray,
        sensitivity: float,
        epsilon: float,
        generator: np.random.Generator | None,
        scratch: BudgetAccountant,
    ) -> int:
        noisy = laplace_mechanism(
            scores,
            2.0 * sensitivity,
            epsilon,
            random_state=generator,
            accountant=scratch,
        )
        return int(np.argmax(noisy))


@fill_doc(
    _RELEASE_DOC,
    label=LABEL_PARAMETER,
    refits=REFITS_NOTE,
    summary="Exponential-DP baseline: exponential-mechanism selection, noisy histogram release.",
    selection="""\
    Selection: ``t`` successive draws of the exponential mechanism without
    replacement, each choosing a remaining feature with probability
    ∝ ``exp(epsilon_pick · Ham({f}) / (2Δ))``, ``epsilon_pick = epsilon / (2t)``
    (McSherry and Talwar 2007); each draw is ``epsilon_pick``-DP.
""",
    example="""\
    >>> import numpy as np
    >>> from privtab import BudgetAccountant
    >>> from privtab.kac import ExponentialDPRelease
    >>> rng = np.random.default_rng(0)
    >>> B = rng.integers(0, 2, size=(200, 6))
    >>> y = B[:, 0] | B[:, 1]
    >>> model = ExponentialDPRelease(
    ...     1.0,
    ...     3,
    ...     random_state=0,
    ...     accountant=BudgetAccountant(),
    ...     classes=[0, 1],
    ...     min_class_size=20,
    ... )
    >>> model.fit(B, y).selection_order_.shape
    (3,)
""",
)
class ExponentialDPRelease(_DPRelease):
    _mechanism = "exponential mechanism"

    def _pick(
        self,
        scores: np.ndarray,
        sensitivity: float,
        epsilon: float,
        generator: np.random.Generator | None,
        scratch: BudgetAccountant,
    ) -> int:
        chosen = exponential_mechanism(
            scores, sensitivity, epsilon, random_state=generator, accountant=scratch
        )
        return int(chosen[0])
