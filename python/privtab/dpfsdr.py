"""Differentially private feature selection for correlated data (DPFSDR; Wang, Zhang & Yan 2023).

C. Wang, Q. Zhang and Y. Yan, "Differentially Private Feature Selection Based on
Dynamic Relevance for Correlated Data", Journal of Computers 34(1):157-173, 2023 [1]_.

The non-private statistics run in the Rust core (:mod:`privtab._core`):
:func:`pearson_matrix`, the attribute filter :func:`filter_correlated_features`, the
adjacency matrix :func:`correlated_degree_matrix` (Algorithm 1), :func:`fscore`
(eq. 8) and :func:`correlated_sensitivity` (eq. 4 with the record threshold of §5.4).
:func:`dp_feature_importance` is Algorithm 2; :class:`DPFSDR` (Algorithm 3) and
:class:`DPFS` (Algorithm 4) are the selectors, whose private SVM is
:class:`~privtab.DPLinearSVC` with its output-perturbation noise scaled by the
correlated sensitivity.

A fixed ``random_state`` is for reproducibility only: anyone who knows it can
regenerate, and so subtract, the noise. Leave it ``None`` for a release.

References
----------
.. [1] C. Wang, Q. Zhang and Y. Yan, "Differentially Private Feature Selection Based on
   Dynamic Relevance for Correlated Data", Journal of Computers 34(1):157-173, 2023,
   doi:10.53106/199115992023023401012.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics import accuracy_score
from sklearn.utils.validation import _num_features, check_is_fitted

from privtab import _core
from privtab._docstrings import (
    LABEL_PARAMETER,
    REFITS_NOTE,
    THREADS_PARAMETER,
    fill_template,
)
from privtab._estimator import DPEstimatorMixin, PrivateRun, SupportSelectorMixin
from privtab._random import RandomState, check_random_state
from privtab._threads import runs_on_threads
from privtab._validation import (
    as_column_indices,
    as_float_array,
    check_bool,
    check_bounds_pair,
    check_choice,
    check_epsilon,
    check_labels,
    check_ledger_label,
    check_positive,
    check_positive_int,
    check_unit_interval,
    column_labels,
    to_numpy_2d,
    validate_float_data,
    warn_user,
)
from privtab.accountant import BudgetAccountant, resolve_accountant, split_budget
from privtab.exceptions import BudgetExceededError, PrivacyLeakWarning
from privtab.linear_model import (
    DPLinearSVC,
    huber_curvature,
    objective_perturbation_parameters,
    output_perturbation_l1_sensitivity,
)
from privtab.mechanisms import laplace_mechanism

__all__ = [
    "DPFS",
    "DPFSDR",
    "correlated_degree_matrix",
    "correlated_sensitivity",
    "dp_feature_importance",
    "filter_correlated_features",
    "fscore",
    "pearson_matrix",
]

_BUDGETS = ("per_refit", "total")
_TRAININGS = ("output", "objective")
_CORRELATIONS = ("data", "none")


# Non-private statistics -------------------------------------------------------------
def _matrix(X: Any) -> np.ndarray:
    """``X`` as a C-contiguous finite float64 (n, d) array with n, d >= 1."""
    return as_float_array(to_numpy_2d(X, "X"), "X", columns=column_labels(X))


def _delta(delta: Any, name: str) -> float:
    return check_unit_interval(delta, name, high_closed=True)


def pearson_matrix(X: Any) -> np.ndarray:
    """Return the feature-feature Pearson matrix θ (eq. 6), never NaN.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite real values.

    Returns
    -------
    ndarray of shape (n_features, n_features)
        Symmetric, in [-1, 1], with 1 on the diagonal. A constant column has θ = 0 with
        every other column (its correlation is undefined).

    Examples
    --------
    >>> pearson_matrix([[1.0, 2.0], [2.0, 4.0], [3.0, 5.0]]).round(3)
    array([[1.   , 0.982],
           [0.982, 1.   ]])
    """
    return _core.pearson_matrix(_matrix(X))


def filter_correlated_features(X: Any, delta: float) -> np.ndarray:
    """Return the features kept by DPFSDR's attribute filter (§4.1, Algorithm 1).

    Zero-variance columns are dropped; then for every pair ``i < j`` with Pearson
    ``θ_ij ≥ delta`` column ``j`` is dropped, even if ``i`` was itself dropped. This
    rule reproduces Table 1 of the paper exactly.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite real values.
    delta : float
        Threshold in (0, 1].

    Returns
    -------
    ndarray of int64
        Kept column indices, increasing.

    Raises
    ------
    ValueError
        If ``delta`` is not in (0, 1] or ``X`` is empty or not finite.

    Notes
    -----
    Not private: the kept set is computed from the data without noise, as in the paper.

    Examples
    --------
    >>> X = [[1.0, 2.0, 0.0], [2.0, 4.0, 1.0], [3.0, 6.1, 0.0]]
    >>> filter_correlated_features(X, 0.95)
    array([0, 2])
    """
    delta = _delta(delta, "delta")
    return _core.filter_correlated_features(_matrix(X), delta)


def correlated_degree_matrix(X: Any, delta: float) -> np.ndarray:
    """Return the correlated-degree adjacency matrix ``M`` (Definition 6, eq. 7).

    ``M_ij = θ_ij`` when ``θ_ij < delta`` and 0 otherwise (signed θ), so the diagonal
    is 0.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    delta : float
        Threshold in (0, 1].

    Returns
    -------
    ndarray of shape (n_features, n_features)

    Examples
    --------
    >>> correlated_degree_matrix([[1.0, 2.0], [2.0, 4.0], [3.0, 5.0]], 0.99).round(3)
    array([[0.   , 0.982],
           [0.982, 0.   ]])
    """
    delta = _delta(delta, "delta")
    return _core.correlated_degree_matrix(_matrix(X), delta)


def _label_codes(y: Any, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    return check_labels(y, None, n_rows=n_rows, warn=False)


def fscore(X: Any, y: Any) -> np.ndarray:
    """Return the multi-class F-score of every feature (eq. 8), never NaN.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels.

    Returns
    -------
    ndarray of shape (n_features,)
        ``Σ_j (x̄_i^j − x̄_i)² / Σ_j s²_ij`` over the classes ``j`` present (unweighted
        numerator, sample variances in the denominator). 0 when the numerator is 0
        (constant feature, one class); ``+inf`` when every class is constant on the
        feature yet the class means differ (a perfect separator). A class with one
        record adds no variance.

    Examples
    --------
    >>> fscore([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [3.0, 0.0]], [0, 0, 1, 1])
    array([ 2., inf])
    """
    X = _matrix(X)
    _, codes = _label_codes(y, X.shape[0])
    n_labels = int(codes.max()) + 1
    return _core.f_scores(X, np.ascontiguousarray(codes, dtype=np.uint32), n_labels)


def correlated_sensitivity(
    X: Any, features: Any = None, record_delta: float = 0.8
) -> float:
    """Return the correlated-sensitivity factor ``CS = max_i Σ_{j: |θ_ij| ≥ δ} |θ_ij|``.

    ``θ_ij`` is the Pearson correlation of records ``i`` and ``j`` on ``features``,
    ``θ_ii = 1`` counts, so ``CS ≥ 1``; a record whose values on the features are all
    equal is correlated with no other record. ``ΔCS = CS·Δf`` is the correlated
    sensitivity of eq. 4 for a query of sensitivity ``Δf``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    features : sequence of int, optional
        Distinct column indices; all columns by default.
    record_delta : float, default=0.8
        Record threshold in (0, 1] (0.8 in §5.4 of the paper).

    Returns
    -------
    float

    Examples
    --------
    >>> X = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.1], [3.0, 1.0, 2.0]]
    >>> round(correlated_sensitivity(X), 4)
    1.9999
    """
    X = _matrix(X)
    record_delta = _delta(record_delta, "record_delta")
    cols = (
        list(range(X.shape[1]))
        if features is None
        else as_column_indices(features, "features", X.shape[1], distinct=True)
    )
    degree, _ = _core.correlated_degrees(X, cols, record_delta)
    return float(degree.max())


def _importance(
    X: np.ndarray, codes: np.ndarray, n_labels: int
) -> tuple[np.ndarray, np.ndarray]:
    scores = _core.f_scores(X, np.ascontiguousarray(codes, dtype=np.uint32), n_labels)
    return scores, _core.feature_importance(scores)


def _noisy_importance(
    fim: np.ndarray,
    epsilon: float,
    sensitivity: float,
    rng: Any,
    normalize: bool = True,
) -> np.ndarray:
    noisy = np.asarray(
        laplace_mechanism(
            fim,
            sensitivity,
            epsilon,
            random_state=rng,
            accountant=BudgetAccountant(epsilon),
        ),
        dtype=np.float64,
    )
    total = float(noisy.sum())
    if not normalize:
        return noisy
    # eq. 13; dividing by a negative sum would reverse the order of the features.
    return noisy / total if total > 0 else noisy


def dp_feature_importance(
    X: Any,
    y: Any,
    epsilon: float,
    *,
    sensitivity: float = 2.0,
    normalize: bool = True,
    random_state: RandomState = None,
    accountant: BudgetAccountant | None = None,
    classes: Any = None,
    label: str | None = None,
) -> np.ndarray:
    """ε-DP feature importance ``fim'`` (Algorithm 2, eqs. 9, 12 and 13).

    ``fim = F / ΣF`` from :func:`fscore`; ``fim' = fim + Lap(sensitivity/ε)`` on every
    coordinate; then ``fim' / Σfim'`` when that sum is > 0.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    epsilon : float
        The budget ``ε₁``, finite and > 0.
    sensitivity : float, default=2.0
        L1 sensitivity ``Δ`` of the vector ``fim`` (see Notes).
    normalize : bool, default=True
        Apply eq. 13 (divide by ``Σfim'`` when it is > 0); ``False`` returns
        ``fim + Lap(Δ/ε)`` itself.
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (the secure default) uses operating-system entropy; a fixed seed voids
        privacy against anyone who knows it.
    accountant : BudgetAccountant, optional
        Checked before the data are read, charged ``epsilon`` after success.
    classes : array-like of labels, optional
        The public label set; ``None`` infers it from ``y`` and emits a
        :class:`~privtab.exceptions.PrivacyLeakWarning`.
    label : str, optional
        The label of the accountant's ledger entry (default
        ``"dp_feature_importance (Laplace on fim)"``).

    Returns
    -------
    ndarray of shape (n_features,)
        ``fim'`` in column order; ``np.argsort(-fim', kind="stable")`` is the paper's
        sequence ``F_cd``.

    Raises
    ------
    BudgetExceededError
        Before the data are read, if ``accountant`` cannot afford ``epsilon``.
    ValueError
        For an invalid ``epsilon`` or ``sensitivity``, or invalid ``X``, ``y``.

    Notes
    -----
    ``fim`` is a probability vector (eq. 9; an all-zero F-score gives ``1/d``
    everywhere, infinite scores share the mass), so on two neighbouring data sets
    ``‖fim − fim*‖₁ ≤ 2``; the default ``sensitivity=2`` makes the release ε-DP. The
    paper argues ``Δfim_Q ≤ 1`` "since the range of feature importance is from 0 to 1"
    (eq. 11), which bounds each coordinate, not the L1 norm that the Laplace
    mechanism needs; ``sensitivity=1.0`` reproduces the paper's noise, which is then
    only 2ε-DP. The noise is added with the floating-point-safe
    :func:`~privtab.laplace_mechanism`. Renormalising (eq. 13) is post-processing.

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import BudgetAccountant
    >>> X = np.array([[0.0, 5.0], [0.1, 4.0], [1.0, 5.0], [1.1, 4.0]])
    >>> fim = dp_feature_importance(
    ...     X, [0, 0, 1, 1], 1e6, random_state=0, classes=[0, 1],
    ...     accountant=BudgetAccountant(1e6),
    ... )
    >>> np.argsort(-fim).tolist()
    [0, 1]
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    normalize = check_bool(normalize, "normalize")
    run = PrivateRun.start(epsilon, random_state, accountant, label=label)
    Xa = _matrix(X)
    classes_, codes = check_labels(
        y, classes, n_rows=Xa.shape[0], owner="dp_feature_importance"
    )
    _, fim = _importance(Xa, codes, len(classes_))
    noisy = _noisy_importance(
        fim, run.epsilon, sensitivity, run.random_state, normalize
    )
    run.spend("dp_feature_importance (Laplace on fim)")
    return noisy


# Selectors ---------------------------------------------------------------------------
class _CorrelatedLinearSVC(DPLinearSVC):
    """:class:`~privtab.DPLinearSVC` whose output noise is ``Lap(CS·Δw/ε)``.

    ``sensitivity_factor`` is the correlated-sensitivity factor ``CS``; 0 fits the
    exact (non-private) minimiser, the paper's DFS baseline.
    """

    def __init__(
        self,
        epsilon: float,
        *,
        C: float = 1.0,
        huber_h: float = 0.5,
        method: str = "output",
        data_norm: float | None = None,
        sensitivity_factor: float = 1.0,
        random_state: RandomState = None,
        accountant: BudgetAccountant | None = None,
        classes: Any = None,
        label: str | None = None,
        n_threads: int | None = None,
    ) -> None:
        super().__init__(
            epsilon,
            C=C,
            huber_h=huber_h,
            method=method,
            data_norm=data_norm,
            random_state=random_state,
            accountant=accountant,
            classes=classes,
            label=label,
            n_threads=n_threads,
        )
        self.sensitivity_factor = sensitivity_factor

    def _sensitivity_factor(self) -> float:
        return float(self.sensitivity_factor)

    def release(self) -> dict[str, Any]:
        """Refuse: the parameters hold ``CS`` and the row-norm bound, not covered.

        Raises
        ------
        TypeError
            Always; the selector's :meth:`release` publishes this model's weights.
        """
        raise TypeError(
            "the SVM of a DPFSDR/DPFS selector is published by the selector's "
            "release(), which holds its coef_ and intercept_"
        )

    def fit(self, X: Any, y: Any) -> _CorrelatedLinearSVC:
        """Fit; with ``sensitivity_factor=0`` nothing is released or spent."""
        super().fit(X, y)
        if self.sensitivity_factor == 0:
            self.epsilon_spent_ = 0.0
            self.privacy_ledger_ = []
        return self


def _public_n_columns(estimator: Any, X: Any, y: Any) -> int:
    """Return the number of columns of ``X`` from its (public) shape."""
    try:
        return int(_num_features(X))
    except (TypeError, LookupError):  # a dict's missing key 0, for instance
        # Not a 2-D table: let the validation name the problem (a ValueError for 1-D).
        validate_float_data(estimator, X, y)
        raise


def _check_correlation(correlation: Any) -> float | None:
    """Return the declared correlation factor, or ``None`` for ``"data"``."""
    if isinstance(correlation, str):
        choice = check_choice(correlation, "correlation", _CORRELATIONS)
        return None if choice == "data" else 1.0
    if isinstance(correlation, bool | np.bool_) or not isinstance(
        correlation, int | np.integer
    ):
        raise TypeError(
            "correlation must be 'data', 'none' or a group size (an int >= 1), got "
            f"{correlation!r}"
        )
    return float(check_positive_int(correlation, "correlation"))


def _declared_bounds(bounds: Any, names: list[Any]) -> list[Any]:
    """Return one ``(lo, hi)`` pair or ``None`` (to infer) per column of ``X``."""
    d = len(names)
    if isinstance(bounds, dict):
        unknown = [key for key in bounds if key not in names and key not in range(d)]
        if unknown:
            raise ValueError(f"bounds names {unknown!r}, which is not a column of X")
        return [bounds.get(name, bounds.get(j)) for j, name in enumerate(names)]
    if isinstance(bounds, str | bytes) or not isinstance(
        bounds, list | tuple | np.ndarray
    ):
        raise TypeError(
            "bounds must be a (lo, hi) pair, a sequence of one pair per column or a "
            f"dict, got {type(bounds).__name__}"
        )
    pairs = list(bounds)
    if len(pairs) == 2 and all(np.isscalar(v) for v in pairs):
        return [pairs] * d
    if len(pairs) != d:
        raise ValueError(
            f"bounds must be one (lo, hi) pair or {d} pairs (one per column of X), "
            f"got {len(pairs)} entries"
        )
    return pairs


def _resolve_bounds(
    bounds: Any, X: np.ndarray, names: list[Any], owner: str
) -> np.ndarray:
    """Return the (d, 2) bounds: declared, or the column's minimum and maximum.

    Columns without a declared pair take the data's range, with a
    :class:`~privtab.exceptions.PrivacyLeakWarning` naming them.
    """
    declared = (
        [None] * X.shape[1] if bounds is None else _declared_bounds(bounds, names)
    )
    out = np.empty((X.shape[1], 2))
    inferred = []
    for j, pair in enumerate(declared):
        if pair is None:
            lo, hi = float(X[:, j].min()), float(X[:, j].max())
            out[j] = (lo, hi) if hi > lo else (lo - 0.5, lo + 0.5)
            inferred.append(names[j])
        else:
            out[j] = check_bounds_pair(f"bounds[{names[j]!r}]", pair)
    if inferred:
        shown = ", ".join(map(repr, inferred[:10])) + (
            f" and {len(inferred) - 10} more" if len(inferred) > 10 else ""
        )
        warn_user(
            f"{owner}: bounds were not declared for the columns {shown} and are taken "
            "from the data (their minimum and maximum); the privacy guarantee does not "
            "cover them. Declare public bounds with bounds=...",
            PrivacyLeakWarning,
        )
    return out


def _largest_noise_to_weight(
    training: str,
    epsilon: float,
    n_samples: int,
    C: float,
    huber_h: float,
    factor: float,
) -> tuple[float, float]:
    """Return the least per-weight noise of a refit and the largest weight norm.

    From public quantities only: the refit's ``epsilon`` (already divided among the
    one-vs-rest models), ``n``, ``C``, the Huber parameter and a lower bound on the
    correlation factor; the fewest weights, ``p = 2`` (one feature and the
    intercept). Output perturbation adds ``Lap(factor·√p·2C/ε)`` to each weight;
    objective perturbation moves the minimiser by at most ``‖b‖/(n(λ + Δ))``, with
    ``E‖b‖ = 2p/ε'``, about ``2√p/(ε'·n(λ + Δ))`` per weight. The exact weights
    have ``‖w‖₂ ≤ √(2/(λ + Δ))`` (the objective at ``w`` is at most its value 1 at
    0), which is ``√(2Cn)`` without ``Δ``.
    """
    lam = 1.0 / (C * n_samples)
    p = 2
    if training == "output":
        noise = factor * output_perturbation_l1_sensitivity(n_samples, p, C) / epsilon
        extra = 0.0
    else:
        eps_prime, extra = objective_perturbation_parameters(
            epsilon / factor, n_samples, lam, huber_curvature(huber_h)
        )
        noise = 2.0 * math.sqrt(p) / (eps_prime * n_samples * (lam + extra))
    return noise, math.sqrt(2.0 / (lam + extra))


class _BaseDPFS(SupportSelectorMixin, DPEstimatorMixin, BaseEstimator):
    """The shared fit of :class:`DPFSDR` and :class:`DPFS`."""

    _dynamic = True
    released_attributes: ClassVar[tuple[str, ...]] = (
        "support_",
        "selection_order_",
        "classes_",
        "classifier_.coef_",
        "classifier_.intercept_",
    )

    def __init__(
        self,
        epsilon_selection: float | None,
        epsilon_training: float | None,
        *,
        delta: float = 0.9,
        record_delta: float = 0.8,
        C: float = 1.0,
        huber_h: float = 0.5,
        bounds: Any = None,
        data_norm: float | None = None,
        training: str = "output",
        correlation: str | int = "data",
        budget: str = "total",
        max_refits: int | None = None,
        classes: Any = None,
        random_state: RandomState = None,
        accountant: BudgetAccountant | None = None,
        label: str | None = None,
        n_threads: int | None = None,
    ) -> None:
        self.epsilon_selection = epsilon_selection
        self.epsilon_training = epsilon_training
        self.delta = delta
        self.record_delta = record_delta
        self.C = C
        self.huber_h = huber_h
        self.bounds = bounds
        self.data_norm = data_norm
        self.training = training
        self.correlation = correlation
        self.budget = budget
        self.max_refits = max_refits
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant
        self.label = label
        self.n_threads = n_threads

    @runs_on_threads
    def fit(self, X: Any, y: Any) -> _BaseDPFS:
        """Select features; charges the accountant once with ``epsilon_spent_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite real values.
        y : array-like of shape (n_samples,)
            Class labels (in ``classes`` when declared).

        Returns
        -------
        self
        """
        name = type(self).__name__
        eps1 = (
            None
            if self.epsilon_selection is None
            else check_epsilon(self.epsilon_selection, "epsilon_selection")
        )
        eps2 = (
            None
            if self.epsilon_training is None
            else check_epsilon(self.epsilon_training, "epsilon_training")
        )
        delta = _delta(self.delta, "delta")
        record_delta = _delta(self.record_delta, "record_delta")
        C = check_positive(self.C, "C")
        huber_h = check_positive(self.huber_h, "huber_h")
        data_norm = (
            None
            if self.data_norm is None
            else check_positive(self.data_norm, "data_norm")
        )
        if data_norm is not None and self.bounds is not None:
            raise ValueError(
                "give bounds=... (per column, mapped to [-1, 1]) or data_norm=... (one "
                "bound on the rows' L2 norms), not both; got "
                f"data_norm={self.data_norm!r} and the bounds {self.bounds!r}"
            )
        training = check_choice(self.training, "training", _TRAININGS)
        declared_factor = _check_correlation(self.correlation)
        budget = check_choice(self.budget, "budget", _BUDGETS)
        max_refits = (
            None
            if self.max_refits is None
            else check_positive_int(self.max_refits, "max_refits")
        )
        # The worst case, from the public shape only: at most n_columns candidates.
        # Sums run left to right as the ledger's do, so every prefix stays below.
        n_columns = _public_n_columns(self, X, y)
        most = self._most_fits(n_columns)
        if max_refits is not None and max_refits > most:
            raise ValueError(
                f"max_refits must be <= {most}, the most refits the search can make "
                f"on {n_columns} columns, got {max_refits}"
            )
        if max_refits is not None:
            limit = max_refits
        elif budget == "total" and eps2 is not None:
            limit = min(n_columns, most)
        else:
            limit = most
        worst = sum(
            [eps1 or 0.0]
            + ([] if eps2 is None else [eps2] if budget == "total" else [eps2] * limit)
        )
        private = worst > 0
        # Checked even when nothing is spent.
        resolve_accountant(self.accountant)
        if self.random_state is not None:
            check_random_state(self.random_state)
        check_ledger_label(self.label)
        try:
            run = (
                dataclasses.replace(
                    PrivateRun.start(
                        worst, self.random_state, self.accountant, label=self.label
                    ),
                    owner_state=dict(vars(self)),
                )
                if private
                else None
            )
        except BudgetExceededError as exc:
            if budget != "per_refit" or eps2 is None:
                raise
            raise BudgetExceededError(
                f"{name}: budget='per_refit' charges every refit epsilon_training, so "
                f"the worst case is epsilon_selection + max_refits·epsilon_training = "
                f"{eps1 or 0.0:g} + {limit}·{eps2:g} = {worst:g} ({exc}). Use "
                "budget='total' (epsilon_selection + epsilon_training over all "
                "refits), a smaller max_refits, or a larger budget"
            ) from exc
        rng = None if run is None else run.random_state
        for argument, value in (
            ("epsilon_selection", eps1),
            ("epsilon_training", eps2),
        ):
            if value is None:
                what = (
                    "the feature importance that ranks the candidates is exact"
                    if argument == "epsilon_selection"
                    else "the SVM weights are exact (the paper's DFS baseline)"
                )
                warn_user(
                    f"{name}: {argument}=None, so {what}: this fit is not private "
                    "and has no publishable form",
                    PrivacyLeakWarning,
                )

        X, y = validate_float_data(
            self,
            X,
            y,
            min_rows=2,
            needs=f"{name} needs at least 2 rows: its correlation filter and "
            "F-scores compare records",
        )
        X = np.ascontiguousarray(X)
        classes, codes = check_labels(
            y,
            self.classes,
            n_rows=X.shape[0],
            min_classes=2,
            owner=name,
            warn=private,
        )
        n = X.shape[0]
        if data_norm is None:
            names = (
                list(self.feature_names_in_)
                if hasattr(self, "feature_names_in_")
                else list(range(X.shape[1]))
            )
            bounds = _resolve_bounds(self.bounds, X, names, name)
            low, high = bounds[:, 0], bounds[:, 1]
            # r = slope·x + offset maps [low, high] onto [-1, 1].
            slope = 2.0 / (high - low)
            offset = -(high + low) / (high - low)
            R = np.ascontiguousarray(np.clip(X * slope + offset, -1.0, 1.0))
        else:
            bounds = None
            R = X
        n_models = 1 if len(classes) == 2 else len(classes)
        if eps2 is not None:
            share = eps2 if budget == "per_refit" else eps2 / limit
            noise, weight_norm = _largest_noise_to_weight(
                training, share / n_models, n, C, huber_h, declared_factor or 1.0
            )
            if noise > weight_norm:
                warn_user(
                    f"{name}: the noise on each SVM weight (scale at least "
                    f"{noise:.3g} per refit) exceeds the largest norm an exact weight "
                    f"vector can have ({weight_norm:.3g}): the released model is "
                    "noise. Raise epsilon_training, lower max_refits or C, or use "
                    "training='objective'",
                    UserWarning,
                )

        # Step 1: the attribute filter; step 2: the (noisy) feature importance.
        kept = _core.filter_correlated_features(R, delta)
        if len(kept) == 0:
            raise ValueError(
                f"X has no column that varies across its {X.shape[0]} rows, so "
                f"{name} has nothing to select: the correlation filter keeps only "
                "columns whose values differ (drop the constant columns, or pass "
                "more rows)"
            )
        Rk = np.ascontiguousarray(R[:, kept])
        _, fim = _importance(Rk, codes, len(classes))
        # The budget of fim' and of every refit.
        eps_fim, eps_refits = eps1, 0.0 if eps2 is None else eps2
        per_refit: list[float] | None = None
        if eps2 is not None and budget == "total":
            if eps1 is not None:
                eps_fim, eps_refits = split_budget(worst, [eps1, eps2])
            per_refit = split_budget(eps_refits, [1.0] * limit)
        elif eps2 is not None:
            per_refit = [eps2] * limit
        steps: list[tuple[str, float]] = []
        drawn_so_far = (
            contextlib.nullcontext()
            if run is None
            else run.charged_on_failure(
                name, drawn=lambda: sum(eps for _, eps in steps)
            )
        )
        with drawn_so_far:
            if eps_fim is not None:
                fim = _noisy_importance(fim, eps_fim, 2.0, rng)
                steps.append(("dp_feature_importance (Laplace on fim)", eps_fim))
            ranking = np.argsort(-fim, kind="stable")
            theta = np.abs(_core.pearson_matrix(Rk))

            state: dict[str, Any] = {"refits": 0}

            def refit(subset: list[int]) -> tuple[_CorrelatedLinearSVC, float, float]:
                cols = sorted(subset)
                Rs = np.ascontiguousarray(Rk[:, cols])
                k = state["refits"]
                method, eps_model, noise_factor = "output", 1.0, 0.0
                factor = 0.0
                if per_refit is not None:
                    eps_k = per_refit[k]
                    if declared_factor is None:
                        degree, _ = _core.correlated_degrees(Rk, cols, record_delta)
                        factor = float(degree.max())
                    else:
                        factor = declared_factor
                    steps.append(
                        (f"{name} refit {k + 1} (SVM {training} perturbation)", eps_k)
                    )
                    method = training
                    if training == "output":
                        eps_model, noise_factor = eps_k, factor
                    else:
                        eps_model, noise_factor = eps_k / factor, 1.0
                state["refits"] = k + 1
                model = _CorrelatedLinearSVC(
                    eps_model,
                    C=C,
                    huber_h=huber_h,
                    method=method,
                    data_norm=math.sqrt(len(cols)) if data_norm is None else data_norm,
                    sensitivity_factor=noise_factor,
                    random_state=rng,
                    accountant=BudgetAccountant(eps_model),
                    classes=classes,
                ).fit(Rs, y)
                accuracy = float(np.mean(model.predict(Rs) == y))
                if data_norm is None:
                    # Post-processing: the weights on r = slope·x + offset, in units
                    # of X.
                    columns = kept[cols]
                    model.intercept_ = model.intercept_ + model.coef_ @ offset[columns]
                    model.coef_ = model.coef_ * slope[columns]
                return model, accuracy, factor

            selected = [int(ranking[0])]
            best = refit(selected)
            candidates = [int(i) for i in ranking[1:]]
            if self._dynamic:
                while candidates and state["refits"] < limit:
                    ranked = self._dynamic_order(candidates, selected, fim, theta)
                    accepted = False
                    for f in ranked:
                        if state["refits"] >= limit:
                            break
                        trial = refit([*selected, f])
                        if trial[1] > best[1]:
                            best, accepted = trial, True
                            selected.append(f)
                            candidates.remove(f)
                            break
                    if not accepted:
                        break
            else:
                for f in candidates:
                    if state["refits"] >= limit:
                        break
                    trial = refit([*selected, f])
                    if trial[1] > best[1]:
                        best = trial
                        selected.append(f)

        model, accuracy, factor = best
        p = len(selected) + 1
        self.kept_features_ = kept
        self.feature_importance_ = fim
        self.candidate_order_ = kept[ranking]
        self.classifier_ = model
        self.accuracy_ = accuracy
        self.correlated_sensitivity_ = factor
        self.lambda_ = 1.0 / (C * n)
        self.delta_w_ = output_perturbation_l1_sensitivity(n, p, C)
        self.n_refits_ = state["refits"]
        self.bounds_ = bounds
        self.data_norm_ = data_norm
        self.classes_ = classes
        self._set_selection(kept[selected], X.shape[1])
        if run is None or not steps:
            self.epsilon_spent_ = 0.0
            self.privacy_ledger_ = []
        elif per_refit is not None and budget == "total":
            # The whole ε₁ + ε₂, however many refits ran: the spend and the ledger
            # then do not depend on the data.
            ledger = steps[:1] if eps1 is not None else []
            ledger.append(
                (
                    f"{name} SVM refits ({training} perturbation; at most {limit}, "
                    f"each epsilon_training/{limit})",
                    eps_refits,
                )
            )
            self._finish_private_fit(run, name, ledger)
        else:
            spent = dataclasses.replace(run, epsilon=sum(eps for _, eps in steps))
            self._finish_private_fit(spent, name, steps)
        return self

    def _selected_columns(self, X: Any) -> np.ndarray:
        """``X`` validated against the fit, on the selected columns."""
        check_is_fitted(self, "classifier_")
        values = validate_float_data(self, X, reset=False)
        return np.ascontiguousarray(values[:, self.support_])

    def decision_function(self, X: Any) -> np.ndarray:
        """Scores of ``classifier_`` on the selected features of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All the columns the selector was fitted on.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive: ``classes_[1]``),
        else (n_samples, n_classes).
        """
        selected = self._selected_columns(X)
        return self.classifier_.decision_function(selected)

    def predict(self, X: Any) -> np.ndarray:
        """Labels ``classifier_`` predicts from the selected features of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All the columns the selector was fitted on.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        selected = self._selected_columns(X)
        return self.classifier_.predict(selected)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy of :meth:`predict` on ``X`` against ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        float

        Notes
        -----
        Not private: on private test data the accuracy is a statistic of those data.
        """
        return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))

    def release(self) -> dict[str, Any]:
        """Return the publishable form of the fitted selector: covered values only.

        As for every DP estimator (:meth:`privtab.PrivateKD.release`); the attributes
        are ``support_``, ``selection_order_``, ``classes_``, ``classifier_.coef_`` and
        ``classifier_.intercept_``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the selector has not been fitted.
        ValueError
            If ``epsilon_selection`` or ``epsilon_training`` is ``None``: the
            importance that ranks the candidates, or the weights, are then exact.
        """
        check_is_fitted(self, "epsilon_spent_")
        for name in ("epsilon_selection", "epsilon_training"):
            if getattr(self, name) is None:
                raise ValueError(
                    f"{name} is None, so the fit is not private and has no "
                    "publishable form; give it a budget to release the selection"
                )
        return super().release()

    @classmethod
    def _most_fits(cls, m: int) -> int:
        """Return the most SVM fits the algorithm makes on ``m`` candidates.

        Algorithm 4 tries each candidate once after the first fit (``m`` fits);
        Algorithm 3 may try all ``c`` remaining candidates before accepting one, for
        ``c = m − 1, …, 1``: ``1 + m(m − 1)/2`` fits.
        """
        return 1 + m * (m - 1) // 2 if cls._dynamic else m

    @staticmethod
    def _dynamic_order(
        candidates: list[int], selected: list[int], fim: np.ndarray, theta: np.ndarray
    ) -> list[int]:
        """Candidates by dynamic relevance ``DR_i = fim'_i / R_i`` (eqs. 14-15)."""
        values = []
        for c in candidates:
            r = float(theta[c, selected].mean())
            if r > 0:
                values.append(fim[c] / r)
            else:
                values.append(math.copysign(math.inf, fim[c]) if fim[c] != 0 else 0.0)
        order = np.argsort(-np.asarray(values), kind="stable")
        return [candidates[i] for i in order]


_DOC_PARAMETERS = """
    Parameters
    ----------
    epsilon_selection : float or None
        ``ε₁`` of the noisy feature importance (Algorithm 2, with ``Δ = 2``; see
        :func:`dp_feature_importance`). ``None``: the exact importance, nothing spent.
    epsilon_training : float or None
        ``ε₂`` of the perturbed SVM refits (see ``budget``). ``None``: no noise on the
        weights, the paper's non-private DFS baseline ("ε₂ = 0").
    delta : float, default=0.9
        Threshold of the attribute filter (:func:`filter_correlated_features`).
    record_delta : float, default=0.8
        Record-correlation threshold of the correlated sensitivity (§5.4).
    C : float, default=1.0
        Inverse regularisation of the SVM, ``λ = 1/(C·n)``. With
        ``training="objective"`` it is an upper bound: a refit with budget ``ε``
        uses at most ``C = 2h·(e^{ε/4} − 1)`` (see Notes), so a larger ``C`` only
        matters at large ε.
    huber_h : float, default=0.5
        Huber parameter ``h`` > 0 of the SVM's smoothed hinge loss (quadratic
        within ``h`` of the margin 1; see :class:`~privtab.DPLinearSVC`). With
        ``training="objective"`` the loss's curvature bound ``c = 1/(2h)`` sets
        the privacy cost of the regularisation, and ``h = 2`` does better at small
        budgets (see Notes).
    bounds : (lo, hi), sequence of (lo, hi) per column, or dict, optional
        Public bounds of each column (a dict maps column names or indices to pairs).
        Each column is mapped onto [-1, 1] (values beyond are clipped) and a refit
        on ``k`` columns uses the row-norm bound ``√k``. Columns without bounds take
        their minimum and maximum from the data, with a
        :class:`~privtab.exceptions.PrivacyLeakWarning`, whatever the budgets.
    data_norm : float, optional
        Instead of ``bounds``: one public bound on the rows' L2 norms, used for every
        refit on the unmapped columns (the paper's preprocessing). Not with
        ``bounds``.
    training : {"output", "objective"}, default="output"
        How each refit's weights are made private (Chaudhuri, Monteleoni & Sarwate
        2011; see Notes): ``"output"`` adds Laplace noise to the exact weights (the
        paper's mechanism), ``"objective"`` perturbs the Huber-SVM objective.
    correlation : {"data", "none"} or int, default="data"
        The factor ``f`` that multiplies each refit's sensitivity (equivalently,
        divides its ε). ``"data"``: the paper's correlated-sensitivity factor ``CS``
        of the refit's columns, computed from the data without noise. ``"none"``:
        ``f = 1``, plain ε-DP for one replaced record. An int ``g ≥ 1``: ``f = g``,
        ε-DP for any ``g`` records replaced together (group privacy), a guarantee
        that holds whatever the data when at most ``g`` records are correlated.
    budget : {"total", "per_refit"}, default="total"
        ``"total"``: ``ε₂`` is split equally over ``max_refits`` refits and the fit
        charges exactly ``ε₁ + ε₂``, however many refits it makes. ``"per_refit"``
        (the paper's algorithm, honestly accounted): every refit releases weights
        with ``ε₂``, so ``r`` refits spend ``ε₁ + r·ε₂``, and the accountant is
        checked for the worst case ``ε₁ + max_refits·ε₂``.
    max_refits : int, optional
        The search stops after this many refits (the first fit counts). Default with
        ``budget="total"``: the number of columns of ``X`` (public); with
        ``budget="per_refit"`` or no ``epsilon_training``: the most the algorithm can
        make on the ``d`` columns of ``X`` (Algorithm 3: ``1 + d(d − 1)/2``;
        Algorithm 4: ``d``), so the search always runs to its own end.
    classes : array-like of labels, optional
        The public label set (at least 2). ``None`` infers it from ``y`` and emits a
        :class:`~privtab.exceptions.PrivacyLeakWarning`.
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (the secure default) uses operating-system entropy; a fixed seed voids
        privacy against anyone who knows it.
    accountant : BudgetAccountant, optional
        Checked for the worst case before the data are read; charged
        ``epsilon_spent_`` once after success.
    %(label)s
    %(threads)s

    Attributes
    ----------
    support_ : ndarray of bool, shape (n_features,)
        Released (see Notes for what the choice depends on).
    selection_order_ : ndarray of int64
        Selected columns in the order they were accepted. Released.
    classifier_ : DPLinearSVC
        The last accepted model; its ``coef_`` and ``intercept_`` are the perturbed
        ``w'`` in the units of ``X[:, support_]`` (columns in increasing order, i.e.
        ``transform(X)``), and are released; :meth:`predict`,
        :meth:`decision_function` and :meth:`score` apply it to a full ``X``. Its
        other attributes and parameters (among them the factor ``f`` and, with
        ``bounds``, its ``data_norm_`` ``√k`` on the mapped columns) are not.
    classes_ : ndarray
        ``classes`` (sorted) when declared, else the labels of ``y`` (then not
        covered by the guarantee). Released.
    accuracy_ : float
        Its accuracy on the training data, without noise: not covered by the
        guarantee, kept for analysis.
    correlated_sensitivity_ : float
        The factor ``f`` of the final model: ``CS`` on its columns (``"data"``;
        computed without noise, not covered, kept for analysis), 1 or ``g``; 0 when
        ``epsilon_training`` is None.
    lambda_ : float
        ``λ = 1/(C·n)``.
    delta_w_ : float
        ``Δw = √p·2/(n·λ)``, ``p`` = selected features + intercept; with
        ``training="output"`` the noise of ``classifier_`` is ``Lap(f·Δw/ε)`` per
        weight.
    bounds_ : ndarray of shape (n_features, 2) or None
        The bounds used (``None`` with ``data_norm``); those taken from the data
        are values of the data the guarantee does not cover.
    data_norm_ : float or None
        ``data_norm``.
    kept_features_ : ndarray of int64
        The columns kept by the attribute filter, computed without noise: not
        covered, kept for analysis.
    feature_importance_ : ndarray
        ``fim'`` of the kept columns (``fim`` when ``epsilon_selection`` is None);
        indexed like ``kept_features_``, so not released.
    candidate_order_ : ndarray of int64
        ``F_cd``: the kept columns by decreasing ``fim'``; it shows
        ``kept_features_``: not covered.
    n_refits_ : int
        SVM fits made; the accuracies decide it: not covered.
    epsilon_spent_ : float
        ``ε₁ + Σ`` of the refits' budgets.
    privacy_ledger_ : list of LedgerEntry
        One entry for ``fim'``, then one for all refits (``budget="total"``) or one
        per refit (``budget="per_refit"``: then both show ``n_refits_``); they sum
        exactly to ``epsilon_spent_``.
"""

_DOC_NOTES = """
    Every fit is on the training data; a candidate is accepted only if the accuracy
    of the *perturbed* weights ``w'`` on the training data strictly exceeds that of
    the current model (Steps 3 and 6 of §4.3: "the classification accuracy of the
    training subset"). The SVM is the L2-regularised Huber-loss SVM of Chaudhuri et
    al. (2011) on rows ``z = [r/ρ, 1]/√2`` with ``‖z‖₂ ≤ 1``: ``r`` the columns
    mapped by ``bounds`` and ``ρ = √k``, or the raw columns and ``ρ = data_norm``
    (:class:`~privtab.DPLinearSVC`); beyond two classes each one-vs-rest model gets
    an equal share of the refit's ε. A refit with budget ``ε`` and factor ``f``
    (``correlation``) releases:

    - ``training="output"`` (the paper's): ``w' = w* + Lap(f·Δw/ε)`` per weight,
      ``Δw = √p·2/(n·λ)`` the L1 sensitivity of the exact minimiser ``w*`` (the
      L2 bound ``2/(n·λ)`` of Chaudhuri et al.'s Corollary 8, for a loss with
      ``|ℓ'| ≤ 1`` and rows in the unit ball). With ``f = CS`` this is the paper's
      correlated sensitivity ``ΔCS = CS·Δw``.
    - ``training="objective"``: Chaudhuri et al.'s Algorithm 2 at ``ε/f``: with
      ``c = 1/(2h)`` the bound on the Huber loss's second derivative,
      ``ε' = ε/f − 2·log(1 + c/(nλ))``; if ``ε' < ε/(2f)``,
      ``Δ = c/(n(e^{ε/(4f)} − 1)) − λ`` and ``ε' = ε/(2f)``, else ``Δ = 0`` (the
      paper adds ``Δ`` only for ``ε' ≤ 0``, where the noise grows without bound;
      see :func:`~privtab.objective_perturbation_parameters`). The weights
      minimise the objective plus ``bᵀw/n + (Δ/2)‖w‖²``, ``b`` of density
      ∝ ``exp(−(ε'/2)‖b‖₂)``. The gradient
      of the loss term changes by at most 2 in L2 norm when one row changes
      (``‖z‖ ≤ 1``, ``|ℓ'| ≤ 1``), and ``|ℓ''| ≤ c`` bounds the Jacobian term; the
      guarantee needs the exact minimiser (see :class:`~privtab.DPLinearSVC`).

    With ``f = g`` (an int) an ε-DP refit is ``ε``-DP for ``g`` records replaced at
    once (group privacy). With ``"data"``, ``f = CS`` is computed from the data
    without noise, as in the paper: it is a property of the data set, not a bound
    over neighbours, so the guarantee is the paper's, not ε-DP. A
    ``UserWarning`` says, from ``n``, ``C``, ε and the refit bound alone (``f ≥ 1``
    for ``"data"``), when the noise on each weight of even the smallest model
    exceeds the largest norm an exact weight vector can have, ``√(2/(λ + Δ))``
    (``√(2Cn)`` without ``Δ``): the released model is then noise.

    Utility. The noisy importance ranks nothing at the sizes of the paper: ``fim``
    is a probability vector over ``m`` columns (entries near ``1/m``, 0.04 on
    WDBC's 23) and its noise has scale ``2/ε₁``, so the rank correlation of
    ``fim'`` with ``fim`` is about 0.02 at ``ε₁ ≤ 2`` and 0.2 at ``ε₁ = 10``; the
    candidates are then tried in a random order, and only the refits' training
    accuracies (not covered) steer the search. A small ``ε₁`` (a tenth of the
    budget) and the default ``max_refits`` (every candidate gets a try) do best.
    With ``training="objective"`` the refit's ``Δ`` caps the effective ``C`` at
    ``2h·(e^{ε/4} − 1)`` (0.28 at ``ε = 1``, ``h = 0.5``): below that cap the SVM
    is so strongly regularised that every margin lies on the linear part of the
    hinge, the weights point along the class-mean difference of the uncentred
    columns and the intercept cannot place the threshold; a larger ``h`` (2)
    raises the cap fourfold and puts the margins on the quadratic part, where
    the intercept is fitted. ``C`` above the cap changes nothing: the refit uses
    ``λ + Δ = c/(n(e^{ε/4} − 1))`` and ``ε' = ε/2`` whatever ``C``. Below, every
    refit of the configuration quoted next has ``ε ≤ 0.3``, a cap of at most 0.31
    with ``h = 2``, so ``C = 1`` and ``C = 100`` release the same weights and no
    choice of ``C`` from the data arises. The mapped rows are divided by ``√k``, as the
    theorem's ``‖z‖ ≤ 1`` needs, which shrinks each column's signal: keep the
    declared bounds tight. On WDBC (``n`` = 398 training rows) DPFS with declared
    bounds, ``training="objective"``, ``correlation="none"``, ``huber_h=2``,
    ``C=1``, ``ε₁ = ε/10`` and the default ``max_refits`` reaches a test accuracy
    of 0.739, 0.778, 0.828 and 0.859 at ``ε₁ + ε₂`` = 0.3, 1, 3 and 10 (non-private
    DFS: 0.900); on Ionosphere (245) 0.735, 0.730, 0.758 and 0.787 (DFS: 0.858);
    mean of 50 splits, ``benches/results/paper003_blocks.md``. One
    :class:`~privtab.DPLinearSVC` with objective perturbation on all the mapped
    columns, without selection, does better from ``ε = 3`` on WDBC (0.878, 0.908)
    and at ``ε = 10`` on Ionosphere (0.837), worse below ``ε = 1``.

    The paper's Fig. 4 is not reached by any ε-DP reading of its mechanism at its
    ``n``: its accuracies at ``ε₂ ≤ 1`` match output noise ``Lap(√p·2C/(n·ε₂))``,
    the sensitivity divided by ``n`` once more, without the correlation factor.
    That refit is ``n·ε₂``-DP (about ``400·ε₂`` here), so privtab does not claim
    those accuracies.

    Accounting. The paper charges the whole search one ``ε₂`` (Theorem 2:
    ``ε₁ + ε₂``), yet each refit releases a new ``w'`` computed from the data, so by
    sequential composition ``r`` refits cost ``r·ε₂``: that is what
    ``budget="per_refit"`` records. ``budget="total"`` (the default) gives each
    refit ``ε₂/max_refits`` and charges ``ε₁ + ε₂``. Both count only the noisy
    releases: the attribute filter, the feature correlations θ in the dynamic
    relevance, the factor ``CS`` and the training accuracies that decide acceptance
    are computed from the data without noise, as in the paper, and what they reveal
    is not covered by the guarantee.

    Publishing. :meth:`release` returns the selection (``support_``,
    ``selection_order_``), ``classes_`` and the released weights
    (``classifier_.coef_``, ``classifier_.intercept_``), with the public parameters
    and the ledger; it refuses when ``epsilon_selection`` or ``epsilon_training`` is
    ``None`` (the importance or the weights are then exact). The selection and the
    noise scale also depend on the values computed without noise above, as the
    paper's accounting accepts. Everything else the fit keeps (``accuracy_``,
    ``correlated_sensitivity_``, ``kept_features_``, ``candidate_order_``,
    ``n_refits_``, inferred ``bounds_``, and ``classifier_`` as a whole) is for
    analysis; the estimator, pickled, also carries its ``accountant`` (with the
    caller's whole ledger) and ``random_state``: publish :meth:`release`.

    %(refits)s
"""


class DPFSDR(_BaseDPFS):
    """DPFSDR: DP feature selection with dynamic relevance (Algorithm 3).

    The attribute filter keeps weakly correlated columns; the candidates ``F_cd`` are
    ranked by the noisy feature importance ``fim'``; the top one is selected and an
    SVM with perturbed weights is fitted. Then, while candidates remain, they are
    ranked by dynamic relevance ``DR_i = fim'_i / R_i`` with
    ``R_i = mean_{j selected} |θ_ij|`` (eqs. 14-15; ``R_i = 0`` gives ``DR_i = ±∞``
    by the sign of ``fim'_i``; ties keep the ``fim'`` order) and tried in that order;
    the first whose perturbed model is strictly more accurate is accepted and the
    ranking is recomputed. The search ends when no remaining candidate improves the
    accuracy, no candidate is left, or ``max_refits`` fits have been made (Algorithm 3
    can need ``1 + m(m − 1)/2`` fits for ``m`` candidates).
    {shared}

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import BudgetAccountant
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 4))
    >>> y = (X[:, 1] > 0).astype(int)
    >>> sel = DPFSDR(
    ...     1e6, 1e6, bounds=(-4.0, 4.0), training="objective", correlation="none",
    ...     classes=[0, 1], random_state=0, accountant=BudgetAccountant(2e6),
    ... ).fit(X, y)
    >>> int(sel.selection_order_[0]), sel.epsilon_spent_, bool(sel.score(X, y) > 0.95)
    (1, 2000000.0, True)
    """

    _dynamic = True


class DPFS(_BaseDPFS):
    """DPFS: DP feature selection without dynamic relevance (Algorithm 4).

    The candidates ``F_cd`` (the columns kept by the attribute filter, by decreasing
    noisy importance ``fim'``) are each tried once, in that order: a candidate is
    added when the perturbed SVM on the selected features plus it is strictly more
    accurate than the current one. ``m`` candidates take ``m`` fits.
    {shared}

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import BudgetAccountant
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 4))
    >>> y = (X[:, 2] > 0).astype(int)
    >>> sel = DPFS(
    ...     1e6, 1e6, data_norm=10.0, classes=[0, 1], random_state=0,
    ...     accountant=BudgetAccountant(1e8),
    ... ).fit(X, y)
    >>> int(sel.selection_order_[0]), sel.n_refits_
    (2, 4)
    """

    _dynamic = False


_SHARED = fill_template(
    _DOC_PARAMETERS + "\n    Notes\n    -----" + _DOC_NOTES,
    label=LABEL_PARAMETER,
    refits=REFITS_NOTE,
    threads=THREADS_PARAMETER,
)
for _cls in (DPFSDR, DPFS):
    _cls.__doc__ = (_cls.__doc__ or "").replace(
        "    {shared}\n", "\n" + _SHARED.strip("\n") + "\n\n"
    )
