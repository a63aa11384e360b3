"""Differentially private projected histograms (Vinterbo 2012).

A projected histogram spends part of the budget on choosing ``k`` predictors with
:class:`~privtab.PrivateKD` and the rest on a thresholded histogram of the table
projected onto those predictors and the target. Synthetic records drawn from it can
train any classifier, which inherits the privacy guarantee by post-processing.

Core kernels called: none directly; ``privtab._core.private_kd`` through
:class:`~privtab.PrivateKD` and ``privtab._core.thresholded_histogram`` through
:func:`~privtab.thresholded_histogram`.

References
----------
.. [1] S. A. Vinterbo, "Differentially Private Projected Histograms: Construction and
   Use for Prediction", in Machine Learning and Knowledge Discovery in Databases
   (ECML PKDD 2012), Lecture Notes in Computer Science 7524, Springer, 2012. Sections 2.1-2.3.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from privtab._docstrings import (
    LABEL_PARAMETER,
    REFITS_NOTE,
    THREADS_PARAMETER,
    fill_doc,
)
from privtab._estimator import DPEstimatorMixin
from privtab._random import RandomState, check_random_state
from privtab._threads import runs_on_threads
from privtab._validation import (
    as_code_columns,
    check_labels,
    check_positive,
    check_positive_int,
    check_unit_interval,
    infer_code_columns,
    is_encoded,
    warn_inferred_domain,
)
from privtab.accountant import BudgetAccountant, split_budget
from privtab.discernibility import PrivateKD, minimum_discerning_attributes
from privtab.engine import CodeTable, MemoryTable, dask_table, is_distributed
from privtab.exceptions import DomainError
from privtab.histogram import (
    SparseHistogram,
    check_histogram_size,
    thresholded_histogram,
)
from privtab.table import lei_bins

__all__ = ["ProjectedHistogram", "estimate_gamma", "estimate_n_features"]

#: The paper's tolerated fraction of label pairs lost to privacy in PrivateKD (l).
PAIR_LOSS = 0.05
#: The paper's target probability that an occupied cell survives thresholding (p).
CELL_SURVIVAL = 0.95
#: Normal draws used to estimate the bin masses p_i in the choice of gamma.
BIN_MASS_DRAWS = 100_000


def _scaled_normal_codes(
    rng: np.random.Generator, size: tuple[int, ...], bins: int
) -> np.ndarray:
    """N(0, 1) draws min-max scaled into [0, 1] per column and cut into ``bins`` bins."""
    draws = rng.standard_normal(size)
    low, high = draws.min(axis=0), draws.max(axis=0)
    scaled = (draws - low) / np.where(high > low, high - low, 1.0)
    return np.minimum((scaled * bins).astype(np.int64), bins - 1)


def _simulate_table(
    n: int, n_predictors: int, n_classes: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, int]:
    """Simulate the paper's table: ``(codes (n, n_predictors), labels (n,), bins)``.

    Labels are drawn first (``rng.integers(0, n_classes, n)``), then the predictors
    (``rng.standard_normal((n, n_predictors))``), each min-max scaled and cut into
    ``lei_bins(n, n_predictors)`` bins.
    """
    bins = lei_bins(n, n_predictors)
    labels = rng.integers(0, n_classes, n)
    codes = _scaled_normal_codes(rng, (n, n_predictors), bins)
    return codes, labels, bins


def _bin_masses(bins: int, rng: np.random.Generator) -> np.ndarray:
    """Masses of ``bins`` bins of ``BIN_MASS_DRAWS`` min-max scaled N(0, 1) draws."""
    codes = _scaled_normal_codes(rng, (BIN_MASS_DRAWS,), bins)
    return np.bincount(codes, minlength=bins) / BIN_MASS_DRAWS


def estimate_n_features(
    n: int,
    n_predictors: int,
    n_classes: int,
    *,
    sigma: float = 0.1,
    random_state: RandomState = None,
) -> int:
    """Choose ``k`` as the paper does, from a simulated table (spends no budget).

    Simulates ``n`` records: a label uniform on ``n_classes`` classes and
    ``n_predictors`` independent N(0, 1) predictors, min-max scaled to [0, 1] and cut
    into ``lei_bins(n, n_predictors) = ceil(1 / bw(n, n_predictors) - 0.5)`` bins.
    ``k`` is the size of the minimum discerning attribute set (MDA with ``sigma``) of
    that simulation, at least 1.

    Parameters
    ----------
    n : int
        Number of records (public under replace-one neighbours), >= 2.
    n_predictors : int
        Number of predictors ``d - 1``, >= 1.
    n_classes : int
        Number of target classes ``q`` (public), >= 2.
    sigma : float, default=0.1
        MDA's tolerance, in [0, 1).
    random_state : None, int, Generator or SeedSequence
        Seeds the simulation: the labels are drawn first
        (``integers(0, n_classes, n)``), then the predictors
        (``standard_normal((n, n_predictors))``).

    Returns
    -------
    int
        The estimated number of predictors to keep, in ``[1, n_predictors]``.

    Raises
    ------
    ValueError
        If ``n < 2``, ``n_predictors < 1``, ``n_classes < 2`` or ``sigma`` is outside
        [0, 1).
    TypeError
        If an argument has the wrong type.

    Notes
    -----
    Vinterbo 2012, §2.3 ("Choosing k"): ``k = |MDA(f, D', 0.1)|`` on the simulated
    table ``D'``. Only ``n``, ``d`` and ``q`` enter, all public, so no budget is spent.
    The simulation has no signal, so ``k`` mostly reflects how many binned predictors
    it takes to split ``n`` records into small classes.

    Examples
    --------
    >>> from privtab.projected import estimate_n_features
    >>> estimate_n_features(1000, 10, 2, random_state=0)
    4
    """
    n = check_positive_int(n, "n", minimum=2)
    n_predictors = check_positive_int(n_predictors, "n_predictors")
    n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    sigma = check_unit_interval(sigma, "sigma", low_closed=True)
    rng = check_random_state(random_state)
    codes, labels, bins = _simulate_table(n, n_predictors, n_classes, rng)
    chosen = minimum_discerning_attributes(
        codes, labels, sigma=sigma, cardinalities=np.full(n_predictors, bins)
    )
    return int(min(max(len(chosen), 1), n_predictors))


def estimate_gamma(
    n: int,
    n_predictors: int,
    n_classes: int,
    n_features: int,
    *,
    A: float = 0.5,
    B: float = 0.5,
    random_state: RandomState = None,
) -> float:
    """Choose the histogram's share ``gamma`` of the budget as the paper does.

    With ``d - 1 = n_predictors``, ``q = n_classes`` and ``k = n_features``:

    - ``eps_p = n * B * k**2 * ln(d - 1) / (l * pi(q))``, ``pi(q) = n**2 (q-1) / (2q)``,
      ``l = 0.05``: the budget that keeps the fraction of label pairs PrivateKD loses
      to privacy near ``l``;
    - ``eps_h = max((A ln n - 2 ln(1/(2p))) / z, (A ln n - 2 ln(2 - 2p)) / z)`` with
      ``p = 0.95`` and ``z = (n / q) * (sum_i p_i**2)**k``, ``p_i`` the masses of the
      ``s = lei_bins(n, d - 1)`` bins of ``BIN_MASS_DRAWS`` min-max-scaled N(0, 1)
      draws: the budget that keeps a typical occupied cell with probability ``p``;
    - ``gamma = eps_h / (eps_h + eps_p)``; 1 when ``k = d - 1`` (no projection, which
      includes ``d - 1 = 1`` where ``ln(d - 1) = 0``).

    Parameters
    ----------
    n : int
        Number of records, >= 2.
    n_predictors : int
        Number of predictors ``d - 1``, >= 1.
    n_classes : int
        Number of target classes ``q``, >= 2.
    n_features : int
        ``k``, in ``[1, n_predictors]``.
    A : float, default=0.5
        The threshold constant of the histogram (``tau = A ln(n) / eps_h``), > 0.
    B : float, default=0.5
        The paper's tuning constant of ``eps_p``, > 0.
    random_state : None, int, Generator or SeedSequence
        Seeds the draws of the bin masses (``standard_normal(BIN_MASS_DRAWS)``).

    Returns
    -------
    float
        ``gamma`` in (0, 1].

    Raises
    ------
    ValueError
        If an argument is out of range (``n_features > n_predictors`` included).
    TypeError
        If an argument has the wrong type.

    Notes
    -----
    Vinterbo 2012, §2.3 ("Choosing γ"). Spends no budget: everything here is public
    (``n``, ``d``, ``q``, ``k``, the constants). Computed as
    ``c / (c + eps_p * z)`` with ``c = z * eps_h``, which is the same ratio but stays
    finite when ``(sum_i p_i**2)**k`` underflows.

    Examples
    --------
    >>> from privtab.projected import estimate_gamma
    >>> round(estimate_gamma(1000, 10, 2, 3, random_state=0), 3)
    0.132
    >>> estimate_gamma(1000, 10, 2, 10)
    1.0
    """
    n = check_positive_int(n, "n", minimum=2)
    n_predictors = check_positive_int(n_predictors, "n_predictors")
    n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    k = check_positive_int(n_features, "n_features")
    A = check_positive(A, "A")
    B = check_positive(B, "B")
    if k > n_predictors:
        raise ValueError(
            f"n_features must be <= n_predictors ({n_predictors}), got {k}"
        )
    if k == n_predictors:
        return 1.0
    rng = check_random_state(random_state)
    masses = _bin_masses(lei_bins(n, n_predictors), rng)
    pairs_bound = n * n * (n_classes - 1) / (2 * n_classes)
    eps_p = n * B * k**2 * math.log(n_predictors) / (PAIR_LOSS * pairs_bound)
    z = (n / n_classes) * float(np.sum(masses**2)) ** k
    p = CELL_SURVIVAL
    # z * eps_h; positive for p = 0.95, A > 0 and n >= 2.
    need = max(
        A * math.log(n) - 2 * math.log(1 / (2 * p)),
        A * math.log(n) - 2 * math.log(2 - 2 * p),
    )
    return need / (need + eps_p * z)


def _check_largest_histogram(
    cardinalities: np.ndarray,
    k: int,
    n_classes: int,
    n: int,
    epsilon: float,
    *,
    A: float,
    noise: str,
    max_cells: int,
) -> None:
    """Refuse before PrivateKD draws if a selection of ``k`` could exceed the histogram.

    The histogram's domain grows with the product of the kept cardinalities, so the
    ``k`` largest and the label bound every selection: when their histogram fits, the
    selection's does. The check reads the public cardinalities, ``k``, ``n`` and the
    parameters only, so its refusal is the same on neighbouring tables.
    """
    largest = sorted((int(c) for c in cardinalities), reverse=True)[:k]
    try:
        check_histogram_size(
            [*largest, n_classes], n, epsilon, A=A, noise=noise, max_cells=max_cells
        )
    except DomainError as exc:
        raise DomainError(
            f"a selection of n_features = {k} predictors can need a histogram over "
            f"the {k} largest cardinalities {largest} and the {n_classes} classes; "
            f"refused before the selection: {exc}"
        ) from None


@fill_doc(label=LABEL_PARAMETER, refits=REFITS_NOTE, threads=THREADS_PARAMETER)
class ProjectedHistogram(DPEstimatorMixin, BaseEstimator):
    """A DP histogram of the target and ``k`` privately chosen predictors.

    Parameters
    ----------
    epsilon : float
        Total privacy budget, finite and > 0.
    n_features : int, optional
        ``k``, the number of predictors to keep, in ``[1, n_predictors]``. Estimated
        with ``estimate_n_features`` (a seeded simulation, no budget) when ``None``.
    gamma : float, optional
        Share of ``epsilon`` given to the histogram, in (0, 1]. Estimated with
        ``estimate_gamma`` when ``None``.
    A : float, default=0.5
        Threshold constant, finite and > 0: ``tau = A * ln(n) / eps_h``.
    B : float, default=0.5
        Tuning constant of the choice of ``gamma``, finite and > 0.
    sigma : float, default=0.1
        MDA's tolerance in the choice of ``k``, in [0, 1).
    noise : {"laplace", "discrete"}, default="laplace"
        Histogram noise: the paper's Laplace or the exact discrete Laplace.
    max_cells : int, default=10_000_000
        Cap on the histogram's expected number of kept cells.
    random_state : None, int, Generator or SeedSequence
        ``None`` (the secure default) uses operating-system entropy; a fixed seed is
        for reproducibility only and voids privacy against anyone who knows it.
    accountant : BudgetAccountant, optional
        Charged ``epsilon`` once, after success (default: the process-wide
        accountant).
    classes : array-like of labels, optional
        The public label set of the target: at least 2 distinct labels, stored
        sorted in ``classes_``. It sets the target's domain in the histogram (a
        declared class no record holds still has its cells) and the number of
        classes used to estimate ``k`` and ``gamma``; a label of ``y`` outside it
        raises a ``ValueError``. ``None`` takes the set from ``y`` with
        ``numpy.unique`` and emits a :class:`~privtab.exceptions.PrivacyLeakWarning`.
    %(label)s
    %(threads)s

    Attributes
    ----------
    support_ : ndarray of bool, shape ``(n_features_in_,)``
        The predictors kept. Released.
    selection_order_ : ndarray of int64, shape ``(n_features_,)``
        Indices of the kept predictors, in PrivateKD's order (``0 .. d - 2`` without
        projection). Released.
    n_features_in_ : int
        Number of predictors ``d - 1`` (columns of ``X``).
    n_features_ : int
        ``k`` (given or estimated from public quantities). Released.
    gamma_ : float
        The histogram's share (given or estimated; 1 without projection). Released.
    histogram_ : SparseHistogram
        Over the kept predictors (in ``selection_order_``) followed by the target.
        Released.
    classes_ : ndarray
        The target's labels, sorted (``classes`` when declared, else those of ``y``,
        then not covered by the guarantee); the histogram's last column holds their
        indices. Released.
    cardinalities_ : ndarray of int64, shape ``(n_features_in_,)``
        The predictors' domain sizes (declared, or inferred and then not covered).
        Not released: the kept predictors' are in ``histogram_``.
    categories_ : list of ndarray or None
        What the codes of the kept predictors stand for (from an ``EncodedTable``),
        in ``selection_order_``; ``None`` for plain codes. Released.
    epsilon_spent_ : float
        ``epsilon``.
    privacy_ledger_ : list of LedgerEntry
        Steps that unpack as ``(label, epsilon)``, each tagged with its ``guarantee``.
        ``[("PrivateKD", (1 - gamma) * epsilon), ("thresholded_histogram",
        gamma * epsilon)]`` (just the histogram when ``k`` keeps every predictor);
        the parts add up exactly to ``epsilon_spent_``.

    Raises
    ------
    ValueError
        From :meth:`fit`, for a parameter out of range or invalid ``X``/``y`` (NaN,
        negative codes, codes >= cardinality, mismatched lengths, a single class), a
        ``classes`` with fewer than 2 labels or a repeated one, or a label of ``y``
        outside ``classes``.
    TypeError
        From :meth:`fit`, for a parameter or data of the wrong type.
    BudgetExceededError
        From :meth:`fit`, before any data is read, when the accountant cannot afford
        ``epsilon``.
    DomainError
        From :meth:`fit`, before PrivateKD draws and with nothing charged, when the
        histogram over the ``k`` predictors of largest cardinality and the target
        would exceed 2**64 cells or keep more than ``max_cells`` cells in expectation:
        that bounds every selection, so the refusal depends on public values only.
        An error after the selection was drawn charges ``epsilon``.

    Notes
    -----
    Privacy (Vinterbo 2012, §2.3). Neighbouring tables differ by replacing one record
    (``n`` is public); the predictors' domains and the label set are public inputs, so
    declare them: an inferred label set would reveal a class held by a single record (in
    ``classes_``, the histogram's domain and the estimates of ``k`` and ``gamma``), and
    a declared ``classes`` fixes all three in advance. PrivateKD with ``eps_p = (1 -
    gamma) * epsilon`` is ``eps_p``-DP (Corollary 1, per-round weights ``eps' = eps_p /
    (4k)``, the discernibility having sensitivity 2); the thresholded histogram with
    noise ``Lap(0, 2 / eps_h)``, ``eps_h = gamma * epsilon`` (L1 sensitivity 2), is
    ``eps_h``-DP (Proposition 1: the threshold ``A ln(n) / eps_h`` depends only on
    ``n``); by sequential composition the pair is ``epsilon``-DP, and :meth:`synthetic`
    is post-processing. ``k`` and ``gamma``, when estimated, depend only on ``n``,
    ``d``, the number of classes and the constants, so they spend nothing. When ``k``
    equals the number of predictors there is no projection and ``gamma = 1``.

    Publishing. :meth:`release` returns the attributes marked "Released" above
    (``released_attributes``) with the public parameters and the ledger, enough for
    :meth:`synthetic`'s records. The estimator, pickled, also carries its
    ``accountant`` (with the caller's whole ledger) and ``random_state``: publish
    :meth:`release`, not the estimator.

    Numeric predictors should be binned by :class:`~privtab.TableEncoder` with
    declared ``bounds`` and Lei's bin count ``bins=lei_bins(n, d - 1)`` (Vinterbo 2012,
    §2.3); :meth:`synthetic` then decodes their bins to midpoints.

    %(refits)s

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import BudgetAccountant, ProjectedHistogram
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(2000, 5))
    >>> y = (X[:, 0] + X[:, 1] > 2).astype(int)
    >>> acc = BudgetAccountant(2.0)
    >>> model = ProjectedHistogram(
    ...     2.0, n_features=2, gamma=0.5, random_state=0, accountant=acc, classes=[0, 1]
    ... ).fit(X, y, cardinalities=[3] * 5)
    >>> sorted(model.selection_order_.tolist())
    [0, 1]
    >>> [(label, eps) for label, eps in model.privacy_ledger_]
    [('PrivateKD', 1.0), ('thresholded_histogram', 1.0)]
    >>> model.privacy_ledger_[0].guarantee
    'dp'
    >>> X_syn, y_syn = model.synthetic()
    >>> X_syn.shape[1], acc.spent
    (2, 2.0)
    """

    released_attributes: ClassVar[tuple[str, ...]] = (
        "support_",
        "selection_order_",
        "n_features_",
        "gamma_",
        "histogram_",
        "classes_",
        "categories_",
    )

    def __init__(
        self,
        epsilon: float,
        *,
        n_features: int | None = None,
        gamma: float | None = None,
        A: float = 0.5,
        B: float = 0.5,
        sigma: float = 0.1,
        noise: str = "laplace",
        max_cells: int = 10_000_000,
        random_state: RandomState = None,
        accountant: BudgetAccountant | None = None,
        classes: Any = None,
        label: str | None = None,
        n_threads: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.n_features = n_features
        self.gamma = gamma
        self.A = A
        self.B = B
        self.sigma = sigma
        self.noise = noise
        self.max_cells = max_cells
        self.random_state = random_state
        self.accountant = accountant
        self.classes = classes
        self.label = label
        self.n_threads = n_threads

    @runs_on_threads
    def fit(self, X: Any, y: Any, *, cardinalities: Any = None) -> ProjectedHistogram:
        """Choose the predictors and release the histogram.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_predictors), DataFrame or EncodedTable
            Categorical codes of the predictors. A Dask array or DataFrame (with
            ``y`` a Dask array or Series) is counted partition by partition; the
            release is the in-memory one for the same seed (:mod:`privtab.engine`).
        y : array-like of shape (n_samples,)
            Target labels (integers, whole floats or strings), in ``classes`` when it
            is declared.
        cardinalities : array-like of int, optional
            Public domain sizes of the predictors; taken from an ``EncodedTable``.
            Inferred from the data (``max + 1``, with a ``PrivacyLeakWarning``) when
            missing.

        Returns
        -------
        ProjectedHistogram
            ``self``, fitted.
        """
        gamma = (
            None
            if self.gamma is None
            else check_unit_interval(self.gamma, "gamma", high_closed=True)
        )
        k_given = (
            None
            if self.n_features is None
            else check_positive_int(self.n_features, "n_features")
        )
        A = check_positive(self.A, "A")
        B = check_positive(self.B, "B")
        sigma = check_unit_interval(self.sigma, "sigma", low_closed=True)
        if not isinstance(self.noise, str):
            raise TypeError(f"noise must be a str, got {type(self.noise).__name__}")
        if self.noise not in ("laplace", "discrete"):
            raise ValueError(
                f"noise must be 'laplace' or 'discrete', got {self.noise!r}"
            )
        max_cells = check_positive_int(self.max_cells, "max_cells")
        run = self._start_private_fit()
        # The simulations that choose k and gamma use public quantities only; the
        # noise state stays None without a seed, so the kernels key it from the OS.
        noise_state = run.random_state
        rng = np.random.default_rng() if noise_state is None else noise_state

        categories = getattr(X, "categories", None)
        table: CodeTable
        if is_distributed(X, y):
            unlabelled, inferred = dask_table(X, cardinalities, "X")
            if inferred:
                warn_inferred_domain("cardinalities of X")
            table, classes = unlabelled.with_labels(
                y, self.classes, min_classes=2, owner="ProjectedHistogram"
            )
        else:
            if cardinalities is None and not is_encoded(X):
                columns, cards = infer_code_columns(X, "X")
            else:
                columns, cards = as_code_columns(X, "X", cardinalities=cardinalities)
            classes, label_codes = check_labels(
                y,
                self.classes,
                n_rows=columns.shape[1],
                min_classes=2,
                owner="ProjectedHistogram",
            )
            table = MemoryTable(columns, cards, label_codes, len(classes))
        cards = table.cardinalities
        n_predictors, n = table.n_columns, table.n_rows

        if k_given is None:
            k = estimate_n_features(
                n, n_predictors, len(classes), sigma=sigma, random_state=rng
            )
        elif k_given > n_predictors:
            raise ValueError(
                f"n_features must be <= the number of predictors ({n_predictors}), "
                f"got {k_given}"
            )
        else:
            k = k_given
        if k == n_predictors:
            gamma = 1.0
        elif gamma is None:
            gamma = estimate_gamma(
                n, n_predictors, len(classes), k, A=A, B=B, random_state=rng
            )

        if gamma < 1.0:
            eps_p, eps_h = split_budget(run.epsilon, [1.0 - gamma, gamma])
            ledger = [("PrivateKD", eps_p), ("thresholded_histogram", eps_h)]
        else:
            eps_h = run.epsilon
            ledger = [("thresholded_histogram", eps_h)]
        _check_largest_histogram(
            cards, k, len(classes), n, eps_h, A=A, noise=self.noise, max_cells=max_cells
        )

        internal = BudgetAccountant()
        with run.charged_on_failure("ProjectedHistogram"):
            if gamma < 1.0:
                selector = PrivateKD(
                    k,
                    eps_p,
                    random_state=noise_state,
                    accountant=internal,
                    classes=np.arange(len(classes)),
                ).fit(table, None, cardinalities=cards)
                order = np.asarray(selector.selection_order_, dtype=np.int64)
            else:
                order = np.arange(n_predictors, dtype=np.int64)
            histogram = thresholded_histogram(
                table.select(order.tolist(), with_label=True),
                None,
                eps_h,
                A=A,
                noise=self.noise,
                max_cells=max_cells,
                random_state=noise_state,
                accountant=internal,
            )

        support = np.zeros(n_predictors, dtype=bool)
        support[order] = True
        self.n_features_in_ = n_predictors
        self.n_features_ = int(k)
        self.gamma_ = float(gamma)
        self.support_ = support
        self.selection_order_ = order
        self.classes_ = classes
        self.histogram_: SparseHistogram = histogram
        self.cardinalities_ = np.asarray(cards, dtype=np.int64)
        self.categories_ = (
            None
            if categories is None
            else [np.asarray(categories[j], dtype=object) for j in order.tolist()]
        )
        self._finish_private_fit(run, "ProjectedHistogram", ledger)
        return self

    @runs_on_threads
    def synthetic(self, *, decode: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Synthetic records: each kept cell replicated ``ceil(value - 0.5)`` times.

        Parameters
        ----------
        decode : bool, default=True
            Map codes back to categories (bin midpoints for numeric columns) when the
            model was fitted on an ``EncodedTable``; otherwise return codes.

        Returns
        -------
        X_syn : ndarray of shape ``(n_synthetic, n_features_)``
            The kept predictors, in ``selection_order_``: ``uint32`` codes, or an
            object array of categories when decoded.
        y_syn : ndarray of shape (n_synthetic,)
            Labels from ``classes_``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If :meth:`fit` has not been called.

        Notes
        -----
        Post-processing of the released histogram (Vinterbo 2012, §3): spends
        nothing. Cells come in key order, so records are grouped by cell.
        """
        check_is_fitted(self, "histogram_")
        records = self.histogram_.to_records()
        codes, label_codes = records[:, :-1], records[:, -1]
        y_syn = self.classes_[label_codes.astype(np.int64)]
        if not decode or self.categories_ is None:
            return codes, y_syn
        decoded = np.empty(codes.shape, dtype=object)
        for j, categories in enumerate(self.categories_):
            decoded[:, j] = categories[codes[:, j].astype(np.int64)]
        return decoded, y_syn

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
