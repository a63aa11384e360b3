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
from sklearn.utils.validation import _num_features, check_is_fitted

from privtab import _core
from privtab._docstrings import LABEL_PARAMETER, REFITS_NOTE, fill_template
from privtab._estimator import DPEstimatorMixin, PrivateRun, SupportSelectorMixin
from privtab._random import RandomState, check_random_state
from privtab._validation import (
    as_column_indices,
    as_float_array,
    check_bool,
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
from privtab.exceptions import PrivacyLeakWarning
from privtab.linear_model import DPLinearSVC, output_perturbation_l1_sensitivity
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
        data_norm: float | None = None,
        sensitivity_factor: float = 1.0,
        random_state: RandomState = None,
        accountant: BudgetAccountant | None = None,
        classes: Any = None,
        label: str | None = None,
    ) -> None:
        super().__init__(
            epsilon,
            C=C,
            data_norm=data_norm,
            random_state=random_state,
            accountant=accountant,
            classes=classes,
            label=label,
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
        data_norm: float | None = None,
        budget: str = "per_refit",
        max_refits: int | None = None,
        classes: Any = None,
        random_state: RandomState = None,
        accountant: BudgetAccountant | None = None,
        label: str | None = None,
    ) -> None:
        self.epsilon_selection = epsilon_selection
        self.epsilon_training = epsilon_training
        self.delta = delta
        self.record_delta = record_delta
        self.C = C
        self.data_norm = data_norm
        self.budget = budget
        self.max_refits = max_refits
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant
        self.label = label

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
        data_norm = (
            None
            if self.data_norm is None
            else check_positive(self.data_norm, "data_norm")
        )
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
        refit_bound = most if max_refits is None else max_refits
        worst = sum(
            [eps1 or 0.0]
            + (
                []
                if eps2 is None
                else [eps2]
                if budget == "total"
                else [eps2] * refit_bound
            )
        )
        private = worst > 0
        # Checked even when nothing is spent.
        resolve_accountant(self.accountant)
        if self.random_state is not None:
            check_random_state(self.random_state)
        check_ledger_label(self.label)
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
        rng = None if run is None else run.random_state
        name = type(self).__name__

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
        if data_norm is None:
            largest = float(np.linalg.norm(X, axis=1).max())
            data_norm = largest if largest > 0 else 1.0
            if eps2 is not None:
                warn_user(
                    "data_norm was not given and is taken from the data (the largest "
                    f"row norm, {data_norm:.6g}); the privacy guarantee does not cover "
                    "it. Declare a public bound with data_norm=...",
                    PrivacyLeakWarning,
                )

        # Step 1: the attribute filter; step 2: the (noisy) feature importance.
        kept = _core.filter_correlated_features(X, delta)
        if len(kept) == 0:
            raise ValueError(
                f"X has no column that varies across its {X.shape[0]} rows, so "
                f"{name} has nothing to select: the correlation filter keeps only "
                "columns whose values differ (drop the constant columns, or pass "
                "more rows)"
            )
        Xk = np.ascontiguousarray(X[:, kept])
        _, fim = _importance(Xk, codes, len(classes))
        m = len(kept)
        if max_refits is not None:
            limit = max_refits
        elif budget == "total":
            limit = m
        else:
            limit = self._most_fits(m)
        # The budget of fim' and of every refit, in ledger order.
        eps_fim = eps1
        per_refit: list[float] | None = None
        if eps2 is not None and budget == "total":
            weights = [eps2 / limit] * limit
            if eps1 is None:
                per_refit = split_budget(worst, weights)
            else:
                eps_fim, *per_refit = split_budget(worst, [eps1, *weights])
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
            theta = np.abs(_core.pearson_matrix(Xk))

            state: dict[str, Any] = {"refits": 0}

            def refit(subset: list[int]) -> tuple[_CorrelatedLinearSVC, float, float]:
                cols = sorted(subset)
                Xs = np.ascontiguousarray(Xk[:, cols])
                k = state["refits"]
                if per_refit is None:
                    eps_k, factor = 1.0, 0.0
                else:
                    eps_k = per_refit[k]
                    degree, _ = _core.correlated_degrees(Xk, cols, record_delta)
                    factor = float(degree.max())
                    steps.append(
                        (f"{name} refit {k + 1} (SVM output perturbation)", eps_k)
                    )
                state["refits"] = k + 1
                model = _CorrelatedLinearSVC(
                    eps_k,
                    C=C,
                    data_norm=data_norm,
                    sensitivity_factor=factor,
                    random_state=rng,
                    accountant=BudgetAccountant(eps_k),
                    classes=classes,
                ).fit(Xs, y)
                return model, float(np.mean(model.predict(Xs) == y)), factor

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
        n, p = X.shape[0], len(selected) + 1
        self.kept_features_ = kept
        self.feature_importance_ = fim
        self.candidate_order_ = kept[ranking]
        self.classifier_ = model
        self.accuracy_ = accuracy
        self.correlated_sensitivity_ = factor
        self.lambda_ = 1.0 / (C * n)
        self.delta_w_ = output_perturbation_l1_sensitivity(n, p, C)
        self.n_refits_ = state["refits"]
        self.data_norm_ = data_norm
        self.classes_ = classes
        self._set_selection(kept[selected], X.shape[1])
        if run is None or not steps:
            self.epsilon_spent_ = 0.0
            self.privacy_ledger_ = []
        else:
            spent = dataclasses.replace(run, epsilon=sum(eps for _, eps in steps))
            self._finish_private_fit(spent, name, steps)
        return self

    def release(self) -> dict[str, Any]:
        """Return the publishable form of the fitted selector: covered values only.

        See :meth:`privtab._estimator.DPEstimatorMixin.release`; the attributes are
        ``support_``, ``selection_order_``, ``classes_``, ``classifier_.coef_`` and
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
        Inverse regularisation of the SVM, ``λ = 1/(C·n)``.
    data_norm : float, optional
        Public bound on the rows' L2 norms (it bounds every feature subset too).
        ``None`` takes it from the data and warns.
    budget : {"per_refit", "total"}, default="per_refit"
        ``"per_refit"``: every refit is a release of weights with ``ε₂``, so ``r``
        refits spend ``r·ε₂``. ``"total"``: ``ε₂`` is split equally over
        ``max_refits`` refits, so the whole selection spends at most ``ε₁ + ε₂``.
    max_refits : int, optional
        The search stops after this many refits (the first fit counts). Default with
        ``budget="per_refit"``: the most the algorithm can make on the ``m``
        candidates left by the filter (Algorithm 3: ``1 + m(m − 1)/2``; Algorithm 4:
        ``m``), so the search always runs to its own end; with ``budget="total"``:
        ``m``. The accountant is checked for ``ε₁ + max_refits·ε₂``
        (``"per_refit"``; for the default, the bound with the column count of ``X``
        in place of ``m``) or ``ε₁ + ε₂`` (``"total"``) before the data are read.
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

    Attributes
    ----------
    support_ : ndarray of bool, shape (n_features,)
        Released (see Notes for what the choice depends on).
    selection_order_ : ndarray of int64
        Selected columns in the order they were accepted. Released.
    classifier_ : DPLinearSVC
        The last accepted model, fitted on ``X[:, support_]`` (columns in increasing
        order, i.e. ``transform(X)``); its ``coef_`` and ``intercept_`` are the
        perturbed ``w'``, and are released. Its other attributes and parameters
        (among them ``CS`` and the row-norm bound) are not.
    classes_ : ndarray
        ``classes`` (sorted) when declared, else the labels of ``y`` (then not
        covered by the guarantee). Released.
    accuracy_ : float
        Its accuracy on the training data, without noise: not covered by the
        guarantee, kept for analysis.
    correlated_sensitivity_ : float
        ``CS``, the largest record correlated degree on the selected features (0 when
        ``epsilon_training`` is None), without noise: not covered, kept for analysis.
    lambda_ : float
        ``λ = 1/(C·n)``.
    delta_w_ : float
        ``Δw = √p·2/(n·λ)``, ``p`` = selected features + intercept; the noise of
        ``classifier_`` is ``Lap(CS·Δw/ε)`` per weight.
    data_norm_ : float
        ``data_norm``, or when it is ``None`` the largest row norm of ``X``: then a
        value of the data the guarantee does not cover.
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
        One entry for ``fim'`` and one per refit; they sum exactly to
        ``epsilon_spent_``. Both count the refits, so they show ``n_refits_`` too
        (and with ``budget="total"`` and no ``max_refits``, each refit's share shows
        the number of kept columns).
"""

_DOC_NOTES = """
    Every fit is on the training data; a candidate is accepted only if the accuracy
    of the *perturbed* weights ``w'`` on the training data strictly exceeds that of
    the current model (Steps 3 and 6 of §4.3: "the classification accuracy of the
    training subset"). Each fit adds ``Lap(ΔCS/ε)`` per weight with
    ``ΔCS = CS·Δw``: ``CS`` the correlated-sensitivity factor of the fitted subset
    (:func:`correlated_sensitivity` at ``record_delta``), ``Δw = √p·2/(n·λ)`` the L1
    sensitivity of the Huber-loss SVM minimiser of Chaudhuri et al. (2011) on rows
    scaled to ``‖x‖₂ ≤ 1`` (:class:`~privtab.DPLinearSVC`, ``method="output"``);
    beyond two classes each one-vs-rest model gets an equal share of the refit's ε.

    Accounting. The paper charges the whole search one ``ε₂`` (Theorem 2: ``ε₁ + ε₂``).
    Each refit releases a new ``w'`` computed from the data, so by sequential
    composition ``r`` refits cost ``r·ε₂``: that is what ``budget="per_refit"``
    records (one ledger entry per refit). ``budget="total"`` gives each refit
    ``ε₂/max_refits`` and is held to ``ε₁ + ε₂``. Both count only the noisy
    releases: the attribute filter, the feature correlations θ in the dynamic
    relevance, the factor ``CS`` (which sets the noise scale) and the training
    accuracies that decide acceptance are computed from the data without noise, as in
    the paper, and what they reveal is not covered by the guarantee.

    Publishing. :meth:`release` returns the selection (``support_``,
    ``selection_order_``), ``classes_`` and the released weights
    (``classifier_.coef_``, ``classifier_.intercept_``), with the public parameters
    and the ledger; it refuses when ``epsilon_selection`` or ``epsilon_training`` is
    ``None`` (the importance or the weights are then exact). The selection and the
    noise scale also depend on the values computed without noise above, as the
    paper's accounting accepts. Everything else the fit keeps (``accuracy_``,
    ``correlated_sensitivity_``, ``kept_features_``, ``candidate_order_``,
    ``n_refits_``, an inferred ``data_norm_``, and ``classifier_`` as a whole) is for
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
    can need ``1 + m(m − 1)/2`` fits for ``m`` candidates, the default bound with
    ``budget="per_refit"``).
    {shared}

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import BudgetAccountant
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 4))
    >>> y = (X[:, 1] > 0).astype(int)
    >>> sel = DPFSDR(
    ...     1e6, 1e6, data_norm=10.0, classes=[0, 1], random_state=0,
    ...     accountant=BudgetAccountant(1e8),
    ... ).fit(X, y)
    >>> int(sel.selection_order_[0]), len(sel.privacy_ledger_) == sel.n_refits_ + 1
    (1, True)
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
)
for _cls in (DPFSDR, DPFS):
    _cls.__doc__ = (_cls.__doc__ or "").replace(
        "    {shared}\n", "\n" + _SHARED.strip("\n") + "\n\n"
    )
