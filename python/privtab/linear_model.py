"""Differentially private linear classifiers by empirical risk minimisation.

:class:`DPLogisticRegression` and :class:`DPLinearSVC` implement the output- and
objective-perturbation algorithms of Chaudhuri, Monteleoni & Sarwate (2011) [1]_ for
L2-regularised linear models with the logistic loss and the Huber (smoothed hinge) loss.
Both are scikit-learn classifiers; more than two classes are handled one-vs-rest, each
binary model with an equal share of the budget (the PMLR baseline of Vinterbo 2012 [2]_).

The helpers :func:`output_perturbation_l2_sensitivity`,
:func:`output_perturbation_l1_sensitivity` and :func:`objective_perturbation_parameters`
return the constants of the two algorithms; ``scale_rows`` and
:func:`erm_minimizer` expose the (non-private) pre-processing and solver, so that other
mechanisms (e.g. the correlated-sensitivity SVM of DPFSDR) can perturb the same weights.

A fixed ``random_state`` is for reproducibility only: anyone who knows it can regenerate,
and so subtract, the noise. Leave it ``None`` (operating-system entropy) for a release.

References
----------
.. [1] K. Chaudhuri, C. Monteleoni and A. D. Sarwate, "Differentially private empirical
   risk minimization", Journal of Machine Learning Research 12, 1069-1109 (2011).
.. [2] S. Vinterbo, "Differentially private projected histograms: construction and use
   for prediction", ECML PKDD 2012.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from scipy import optimize, special
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import ThreadpoolController

from privtab import _core
from privtab._docstrings import (
    LABEL_PARAMETER,
    REFITS_NOTE,
    THREADS_PARAMETER,
    fill_doc,
)
from privtab._estimator import DPEstimatorMixin
from privtab._random import RandomState, core_seed
from privtab._threads import runs_on_threads
from privtab._validation import (
    check_bool,
    check_choice,
    check_epsilon,
    check_labels,
    check_positive,
    validate_float_data,
    warn_user,
)
from privtab.accountant import BudgetAccountant, split_budget
from privtab.exceptions import PrivacyLeakWarning

__all__ = [
    "LOGISTIC_CURVATURE",
    "DPLinearSVC",
    "DPLogisticRegression",
    "erm_minimizer",
    "huber_curvature",
    "objective_perturbation_parameters",
    "output_perturbation_l1_sensitivity",
    "output_perturbation_l2_sensitivity",
    "scale_rows",
]

#: Bound ``c`` on the second derivative of the logistic loss ``log(1 + exp(-z))``.
LOGISTIC_CURVATURE = 0.25

_METHODS = ("objective", "output")
_LOSSES = ("logistic", "huber")
# L-BFGS stops when the largest gradient component is below _GTOL; the distance to the
# exact minimiser is then at most sqrt(p) * _GTOL / lambda (strong convexity).
_GTOL = 1e-10
_FTOL = 1e-15
_MAXITER = 15_000
_NEWTON_MAX_WEIGHTS = 2_000
_NEWTON_STEPS = 6
_NEWTON_MAX_ITER = 100
_NEWTON_MAX_HALVINGS = 60
_NEWTON_BATCH_VALUES = 1 << 22
_BLAS: list[ThreadpoolController] = []


def _single_threaded_blas() -> Any:
    """Return a context that limits BLAS to one thread.

    L-BFGS works on vectors of length p and the Newton refinement on p × p systems
    (p ≤ 2000), where BLAS threads only add synchronisation (a hundredfold slowdown of
    small fits on a busy machine).
    """
    if not _BLAS:
        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


# Constants of the two algorithms -------------------------------------------------------
def _regularization(n_samples: Any, C: Any) -> tuple[int, float]:
    if isinstance(n_samples, bool) or not isinstance(n_samples, int | np.integer):
        raise TypeError(f"n_samples must be an int, got {type(n_samples).__name__}")
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    C = check_positive(C, "C")
    return int(n_samples), 1.0 / (C * int(n_samples))


def output_perturbation_l2_sensitivity(n_samples: int, C: float = 1.0) -> float:
    """L2 sensitivity ``2 / (n·λ)`` of the regularised ERM minimiser, ``λ = 1 / (C·n)``.

    Parameters
    ----------
    n_samples : int
        Number of training rows ``n`` (public; neighbours replace one row).
    C : float, default=1.0
        Inverse regularisation strength, as in scikit-learn.

    Returns
    -------
    float
        The largest L2 distance between the minimisers of
        ``(1/n) Σ ℓ(y_i w·x_i) + (λ/2)‖w‖²`` on two data sets that differ in one row,
        for any convex loss with ``|ℓ'| ≤ 1`` and rows with ``‖x_i‖₂ ≤ 1``.

    Raises
    ------
    ValueError
        If ``n_samples < 1`` or ``C`` is not finite and > 0.
    TypeError
        If ``n_samples`` is not an int.

    Notes
    -----
    Chaudhuri et al. (2011), Corollary 8. With ``λ = 1/(C·n)`` the bound equals ``2·C``
    whatever ``n``: the noise does not shrink with more data at a fixed ``C``, but the
    weights it perturbs grow with ``n``, so the signal-to-noise ratio still improves.

    Examples
    --------
    >>> output_perturbation_l2_sensitivity(1000, C=0.5)
    1.0
    """
    n, lam = _regularization(n_samples, C)
    return 2.0 / (n * lam)


def output_perturbation_l1_sensitivity(
    n_samples: int, n_weights: int, C: float = 1.0
) -> float:
    """L1 sensitivity ``√d · 2 / (n·λ)`` of the regularised ERM minimiser in ``R^d``.

    Parameters
    ----------
    n_samples : int
        Number of training rows ``n``.
    n_weights : int
        Dimension ``d`` of the weight vector (the number of features, plus one when an
        intercept is fitted through a constant feature).
    C : float, default=1.0
        Inverse regularisation strength; ``λ = 1 / (C·n)``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``n_samples`` or ``n_weights`` is < 1, or ``C`` is not finite and > 0.
    TypeError
        If ``n_samples`` or ``n_weights`` is not an int.

    Notes
    -----
    ``‖v‖₁ ≤ √d·‖v‖₂`` turns the L2 bound of :func:`output_perturbation_l2_sensitivity`
    (Chaudhuri et al. 2011, Corollary 8) into the L1 bound that per-coordinate Laplace
    noise needs: the ``Δw`` of DPFSDR's correlated sensitivity (Wang et al.), for rows
    scaled to ``‖x‖₂ ≤ 1`` as ``scale_rows`` does.

    Examples
    --------
    >>> output_perturbation_l1_sensitivity(100, 4, C=1.0)
    4.0
    """
    if isinstance(n_weights, bool) or not isinstance(n_weights, int | np.integer):
        raise TypeError(f"n_weights must be an int, got {type(n_weights).__name__}")
    if n_weights < 1:
        raise ValueError(f"n_weights must be >= 1, got {n_weights}")
    return math.sqrt(int(n_weights)) * output_perturbation_l2_sensitivity(n_samples, C)


def huber_curvature(huber_h: float) -> float:
    """Bound ``c = 1/(2h)`` on the second derivative of the Huber loss of parameter ``h``.

    Examples
    --------
    >>> huber_curvature(0.5)
    1.0
    """
    return 1.0 / (2.0 * check_positive(huber_h, "huber_h"))


def objective_perturbation_parameters(
    epsilon: float, n_samples: int, lambda_: float, c: float
) -> tuple[float, float]:
    """Return ``ε'`` and ``Δ`` of objective perturbation (Chaudhuri et al. 2011, Alg. 2).

    Parameters
    ----------
    epsilon : float
        Privacy parameter ``ε_p`` of the whole algorithm, finite and > 0.
    n_samples : int
        Number of training rows ``n``.
    lambda_ : float
        Regularisation ``Λ`` of ``(1/n) Σ ℓ + (Λ/2)‖w‖²``, finite and > 0.
    c : float
        Bound on the loss's second derivative (1/4 logistic, ``1/(2h)`` Huber).

    Returns
    -------
    epsilon_prime : float
        ``ε' = ε − log(1 + 2c/(nΛ) + c²/(n²Λ²))`` when that is at least ``ε/2``,
        else ``ε/2``.
    Delta : float
        ``0`` when the first ``ε'`` is at least ``ε/2``, else
        ``c / (n·(exp(ε/4) − 1)) − Λ`` (> 0).

    Raises
    ------
    ValueError
        If an argument is not finite and > 0 (``n_samples`` < 1).
    TypeError
        If ``n_samples`` is not an int.

    Notes
    -----
    The noise vector ``b`` then has density ∝ ``exp(−(ε'/2)·‖b‖₂)`` and the private
    weights minimise ``(1/n) Σ ℓ + (Λ/2)‖w‖² + (1/n)·bᵀw + (Δ/2)‖w‖²``.

    Chaudhuri et al.'s proof (Theorem 9) holds for any regularisation ``Λ + Δ`` with
    ``ε' = ε − 2·log(1 + c/(n(Λ + Δ))) > 0``: the data's part of the privacy loss is
    at most ``2·log(1 + c/(n(Λ + Δ)))`` and the noise's ``ε'``. Algorithm 2 adds
    ``Δ`` only when ``ε' ≤ 0``, so as ``ε'`` falls to 0 the noise ``2/ε'`` grows
    without bound (``c = 1``, ``C = 1/(nΛ) = 1``: ``ε = 1.4`` gives
    ``ε' = 0.014``, noise 50 times that at ``ε' = ε/2``). Here ``Δ`` is added as
    soon as ``ε' < ε/2``, so that ``ε'`` never falls below ``ε/2`` (the split of
    Kifer, Smith & Thakurta 2012): the guarantee is the same, the noise scale is
    continuous in ``ε`` and ``C``.

    Examples
    --------
    >>> eps_prime, Delta = objective_perturbation_parameters(1.0, 100, 0.01, 0.25)
    >>> round(eps_prime, 6), Delta  # 1 - 2 ln(1 + 0.25 / (100 * 0.01))
    (0.553713, 0.0)
    >>> objective_perturbation_parameters(0.1, 100, 0.01, 0.25)[0]  # halved
    0.05
    >>> eps_prime, Delta = objective_perturbation_parameters(1.5, 100, 0.01, 1.0)
    >>> eps_prime, round(Delta, 6)  # 1.5 − 2 ln 2 = 0.11 < 0.75: Δ keeps ε' = ε/2
    (0.75, 0.011978)
    """
    epsilon = check_epsilon(epsilon)
    lam = check_positive(lambda_, "lambda_")
    c = check_positive(c, "c")
    if isinstance(n_samples, bool) or not isinstance(n_samples, int | np.integer):
        raise TypeError(f"n_samples must be an int, got {type(n_samples).__name__}")
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    ratio = c / (int(n_samples) * lam)
    epsilon_prime = epsilon - 2.0 * math.log1p(ratio)
    if epsilon_prime >= epsilon / 2.0:
        return epsilon_prime, 0.0
    Delta = c / (int(n_samples) * math.expm1(epsilon / 4.0)) - lam
    return epsilon / 2.0, Delta


# Pre-processing and the (non-private) solver --------------------------------------------
def scale_rows(X: Any, data_norm: float, *, fit_intercept: bool = True) -> np.ndarray:
    """Scale rows into the unit L2 ball, appending a constant feature if asked.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite real values.
    data_norm : float
        Public upper bound on the rows' L2 norms; finite and > 0.
    fit_intercept : bool, default=True
        Append a constant feature for the intercept.

    Returns
    -------
    Z : ndarray of shape (n_samples, n_features + fit_intercept), float64
        ``r_i = x_i / data_norm``, shrunk to norm 1 when ``‖r_i‖₂ > 1`` (a row above the
        declared bound is clipped, not rejected); with an intercept,
        ``z_i = [r_i, 1] / √2``, so ``‖z_i‖₂² = (‖r_i‖₂² + 1)/2 ≤ 1``. Without,
        ``z_i = r_i``.

    Examples
    --------
    >>> scale_rows([[3.0, 4.0], [0.3, 0.4]], 1.0, fit_intercept=False)
    array([[0.6, 0.8],
           [0.3, 0.4]])
    """
    data_norm = check_positive(data_norm, "data_norm")
    R = np.asarray(X, dtype=np.float64) / data_norm
    norms = np.linalg.norm(R, axis=1)
    over = norms > 1.0
    if over.any():
        R[over] /= norms[over, None]
    if fit_intercept:
        R = np.hstack([R, np.ones((R.shape[0], 1))]) / math.sqrt(2.0)
    return np.ascontiguousarray(R)


def _loss_terms(
    margins: np.ndarray, loss: str, huber_h: float
) -> tuple[np.ndarray, np.ndarray]:
    """Loss values ``ℓ(m)`` and derivatives ``ℓ'(m)`` at the margins ``m = y·wᵀz``."""
    if loss == "logistic":
        return np.logaddexp(0.0, -margins), -special.expit(-margins)
    h = huber_h
    values = np.where(
        margins > 1.0 + h,
        0.0,
        np.where(
            margins < 1.0 - h, 1.0 - margins, (1.0 + h - margins) ** 2 / (4.0 * h)
        ),
    )
    slopes = np.where(
        margins > 1.0 + h,
        0.0,
        np.where(margins < 1.0 - h, -1.0, -(1.0 + h - margins) / (2.0 * h)),
    )
    return values, slopes


def _minimize(
    Z: np.ndarray,
    y: np.ndarray,
    lam: float,
    loss: str,
    huber_h: float,
    linear: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """Minimise ``(1/n) Σ ℓ(y_i wᵀz_i) + (lam/2)‖w‖² + linear·w``.

    Returns the minimiser and the L2 norm of the final gradient
    (``‖w − w*‖₂ ≤ ‖∇‖₂ / lam`` by strong convexity).
    """
    n = Z.shape[0]
    shift = np.zeros(Z.shape[1]) if linear is None else linear

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        values, slopes = _loss_terms(y * (Z @ w), loss, huber_h)
        value = values.mean() + 0.5 * lam * (w @ w) + shift @ w
        grad = Z.T @ (y * slopes) / n + lam * w + shift
        return float(value), grad

    with _single_threaded_blas():
        result = optimize.minimize(
            objective,
            np.zeros(Z.shape[1]),
            jac=True,
            method="L-BFGS-B",
            options={
                "maxiter": _MAXITER,
                "maxfun": _MAXITER,
                "gtol": _GTOL,
                "ftol": _FTOL,
            },
        )
        w = np.asarray(result.x, dtype=np.float64)
        grad = objective(w)[1]
        grad_norm = float(np.linalg.norm(grad))
        # L-BFGS often stalls when λ is tiny (large n·C); a few Newton steps then reach
        # the floating-point floor. The Hessian costs n·p² flops and p² memory.
        if grad_norm > _GTOL * lam and Z.shape[1] <= _NEWTON_MAX_WEIGHTS:
            for _ in range(_NEWTON_STEPS):
                margins = y * (Z @ w)
                if loss == "logistic":
                    prob = special.expit(margins)
                    curvature = prob * (1.0 - prob)
                else:
                    inside = np.abs(margins - 1.0) < huber_h
                    curvature = np.where(inside, 1.0 / (2.0 * huber_h), 0.0)
                hessian = (Z.T * curvature) @ Z / n
                hessian[np.diag_indices_from(hessian)] += lam
                candidate = w - np.linalg.solve(hessian, grad)
                candidate_grad = objective(candidate)[1]
                candidate_norm = float(np.linalg.norm(candidate_grad))
                if not candidate_norm < grad_norm:
                    break
                w, grad, grad_norm = candidate, candidate_grad, candidate_norm
    return w, grad_norm


def _huber_newton(
    Z: np.ndarray,
    signs: np.ndarray,
    strengths: np.ndarray,
    huber_h: float,
    linear: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Minimise the Huber objectives of several models on the same rows by Newton's method.

    Model ``k`` minimises ``J_k(w) = (1/n) Σ ℓ_h(s_ki·wᵀz_i) + (λ_k/2)‖w‖² + b_kᵀw``;
    all models step together, so a step is a few matrix products for all of them.

    The Huber loss is piecewise quadratic, so ``J_k`` is a strongly convex quadratic on
    each region of the margins (above ``1 + h``, within ``h`` of 1, below ``1 − h``):
    the Newton step reaches the minimiser of the quadratic of the current regions, a
    backtracking (Armijo) line search keeps the iteration globally convergent, and once
    a full step lands in the regions it was computed for, that point is the exact
    minimiser. The start is the minimiser when every margin is taken to be within
    ``h`` of 1 (one linear solve). A model stops at an exact minimiser, when its
    gradient is below ``_GTOL·λ_k``, when no step lowers its objective (rounding), or
    after ``_NEWTON_MAX_ITER`` steps; the caller checks the final gradient.

    Returns the weights ``(q, p)`` and the final gradient norms.
    """
    q, n = signs.shape
    p = Z.shape[1]
    h = huber_h
    diagonal = np.diag_indices(p)
    curvature = 1.0 / (2.0 * h * n)

    def evaluate(models: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, ...]:
        margins = signs[models] * (weights @ Z.T)
        # ℓ_h(m) = u²/(4h) + max(1 − h − m, 0) and ℓ_h'(m) = −u/(2h), u = clip(1 + h − m).
        inside = np.clip((1.0 + h) - margins, 0.0, 2.0 * h)
        values = inside * inside / (4.0 * h) + np.maximum((1.0 - h) - margins, 0.0)
        objective = (
            values.mean(axis=1)
            + 0.5 * strengths[models] * np.einsum("kp,kp->k", weights, weights)
            + np.einsum("kp,kp->k", linear[models], weights)
        )
        region = (margins > 1.0 + h).view(np.int8) - (margins < 1.0 - h).view(np.int8)
        return inside / (-2.0 * h), objective, region

    gram = Z.T @ Z * curvature
    start = gram.copy()
    W = np.empty((q, p))
    for k in range(q):
        start[diagonal] = gram[diagonal] + strengths[k]
        W[k] = np.linalg.solve(
            start, signs[k] @ Z * ((1.0 + h) * curvature) - linear[k]
        )
    n_iter = np.zeros(q, dtype=np.int64)
    grad_norm = np.empty(q)
    settled = np.zeros(q, dtype=bool)
    active = np.arange(q)
    slopes, objective, region = evaluate(active, W)
    while active.size:
        grad = (
            (signs[active] * slopes) @ Z / n
            + strengths[active, None] * W[active]
            + linear[active]
        )
        grad_norm[active] = np.linalg.norm(grad, axis=1)
        going = (
            (grad_norm[active] > _GTOL * strengths[active])
            & ~settled[active]
            & (n_iter[active] < _NEWTON_MAX_ITER)
        )
        active, grad = active[going], grad[going]
        slopes, objective, region = slopes[going], objective[going], region[going]
        if not active.size:
            break
        hessian = np.empty((active.size, p, p))
        for i, within in enumerate(region == 0):
            rows = Z[within]
            hessian[i] = rows.T @ rows * curvature
        hessian[:, diagonal[0], diagonal[1]] += strengths[active, None]
        step = -np.linalg.solve(hessian, grad[..., None])[..., 0]
        descent = np.einsum("kp,kp->k", grad, step)
        scale = np.ones(active.size)
        pending = np.flatnonzero(descent < 0)
        moved = np.zeros(active.size, dtype=bool)
        for _ in range(_NEWTON_MAX_HALVINGS):
            if not pending.size:
                break
            trial = W[active[pending]] + scale[pending, None] * step[pending]
            t_slopes, t_objective, t_region = evaluate(active[pending], trial)
            bound = objective[pending] + 1e-4 * scale[pending] * descent[pending]
            ok = t_objective <= bound
            done = pending[ok]
            W[active[done]] = trial[ok]
            settled[active[done]] = (scale[done] == 1.0) & np.all(
                t_region[ok] == region[done], axis=1
            )
            slopes[done], objective[done], region[done] = (
                t_slopes[ok],
                t_objective[ok],
                t_region[ok],
            )
            moved[done] = True
            pending = pending[~ok]
            scale[pending] /= 2.0
        n_iter[active[moved]] += 1
        # No step lowers the objective: stop at the current point.
        settled[active[~moved]] = True
    return W, grad_norm


def _minimize_models(
    Z: np.ndarray,
    signs: np.ndarray,
    strengths: np.ndarray,
    loss: str,
    huber_h: float,
    linear: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Minimise one objective per row of ``signs`` (labels ±1) on the rows ``Z``.

    Model ``k`` minimises ``(1/n) Σ ℓ(s_ki·wᵀz_i) + (λ_k/2)‖w‖² + b_kᵀw`` with
    ``λ_k = strengths[k]`` and ``b_k = linear[k]`` (0 by default). The Huber loss with at
    most ``_NEWTON_MAX_WEIGHTS`` weights goes to :func:`_huber_newton` (models in batches
    of at most ``_NEWTON_BATCH_VALUES`` margins, to bound its memory); a model it leaves
    farther than ``1e-6·max(1, ‖w‖₂)`` from the minimiser (by the strong-convexity bound
    ``‖∇J‖₂/λ``), and every other case, to L-BFGS (:func:`_minimize`).

    Returns the weights ``(q, p)`` and the final gradient norms.
    """
    q, p = signs.shape[0], Z.shape[1]
    shifts = np.zeros((q, p)) if linear is None else linear
    weights = np.zeros((q, p))
    grad_norm = np.full(q, np.inf)
    if loss == "huber" and p <= _NEWTON_MAX_WEIGHTS:
        # Models in batches of at most _NEWTON_BATCH_VALUES margins.
        batch = max(1, _NEWTON_BATCH_VALUES // Z.shape[0])
        for start in range(0, q, batch):
            models = slice(start, start + batch)
            try:
                with _single_threaded_blas():
                    weights[models], grad_norm[models] = _huber_newton(
                        Z, signs[models], strengths[models], huber_h, shifts[models]
                    )
            except np.linalg.LinAlgError:
                pass  # a numerically singular system (tiny λ): these go to L-BFGS
    for k in range(q):
        if _uncertified(weights[k], grad_norm[k], strengths[k]):
            weights[k], grad_norm[k] = _minimize(
                Z, signs[k], float(strengths[k]), loss, huber_h, shifts[k]
            )
    return weights, grad_norm


def _uncertified(weights: np.ndarray, grad_norm: float, strength: float) -> bool:
    """Whether the distance bound ``‖∇J‖₂/λ`` exceeds ``1e-6·max(1, ‖w‖₂)``.

    Strong convexity bounds the distance to the exact minimiser by ``‖∇J‖₂/λ``.
    """
    return bool(grad_norm / strength > 1e-6 * max(1.0, float(np.linalg.norm(weights))))


def erm_minimizer(
    Z: Any,
    y: Any,
    *,
    C: float = 1.0,
    loss: str = "huber",
    huber_h: float = 0.5,
) -> np.ndarray:
    """Return the exact (non-private) L2-regularised ERM weights on pre-scaled rows.

    Minimises ``(1/n) Σ ℓ(y_i wᵀz_i) + (λ/2)‖w‖²`` with ``λ = 1/(C·n)``, which has the
    same minimiser as scikit-learn's ``C·Σ ℓ + ½‖w‖²``.

    Parameters
    ----------
    Z : array-like of shape (n_samples, n_weights)
        Rows with ``‖z_i‖₂ ≤ 1``, e.g. from ``scale_rows``.
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}.
    C : float, default=1.0
        Inverse regularisation strength.
    loss : {"huber", "logistic"}, default="huber"
        The Huber loss of Chaudhuri et al. (0 above ``1 + h``, ``(1 + h − z)²/(4h)``
        within ``h`` of 1, ``1 − z`` below ``1 − h``) or ``log(1 + exp(−z))``.
    huber_h : float, default=0.5
        Huber parameter ``h`` > 0.

    Returns
    -------
    ndarray of shape (n_weights,)

    Raises
    ------
    ValueError
        If a row has norm above 1 (beyond rounding), a label is not ±1, shapes
        disagree, values are not finite, or a parameter is invalid.

    Notes
    -----
    Not private by itself: the output-perturbation mechanism adds noise of L2
    sensitivity :func:`output_perturbation_l2_sensitivity` to these weights.

    Examples
    --------
    >>> Z = scale_rows([[1.0], [2.0], [-1.0], [-2.0]], 2.0)
    >>> w = erm_minimizer(Z, [1, 1, -1, -1], C=10.0)
    >>> bool(w[0] > 0)
    True
    """
    check_choice(loss, "loss", _LOSSES)
    huber_h = check_positive(huber_h, "huber_h")
    C = check_positive(C, "C")
    Z = np.asarray(Z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if Z.ndim != 2 or Z.shape[0] == 0 or Z.shape[1] == 0:
        raise ValueError(f"Z must be a non-empty 2-D array, got shape {Z.shape}")
    if y.shape != (Z.shape[0],):
        raise ValueError(f"y must have shape ({Z.shape[0]},), got {y.shape}")
    if not np.all(np.isfinite(Z)):
        raise ValueError("Z must contain only finite values")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("y must hold labels -1 and +1 only")
    if np.linalg.norm(Z, axis=1).max() > 1.0 + 1e-12:
        raise ValueError("Z must have rows of L2 norm <= 1 (use scale_rows)")
    _, lam = _regularization(Z.shape[0], C)
    return _minimize_models(Z, y[None, :], np.array([lam]), loss, huber_h)[0][0]


def _release_weights(
    weights: np.ndarray,
    l1_sensitivity: float,
    epsilons: list[float],
    rng: np.random.Generator | None,
) -> np.ndarray:
    """Output perturbation: each model's weights through the safe Laplace mechanism.

    Row ``k`` gets per-coordinate Laplace noise of scale ``l1_sensitivity /
    epsilons[k]`` on the exact grid of :func:`~privtab.laplace_mechanism` (no
    floating-point side channel); the accountant is charged by the caller.
    """
    released = np.empty_like(weights)
    for k, eps_k in enumerate(epsilons):
        released[k] = _core.add_laplace(
            np.ascontiguousarray(weights[k]), l1_sensitivity, eps_k, core_seed(rng)
        )
    return released


# Estimators ------------------------------------------------------------------------------
_ERM_NOTES = """\
    Rows are first scaled into the unit ball with the public bound ``data_norm``
    (``scale_rows``): ``r = x / data_norm``, rows still above norm 1 are clipped to
    norm 1 (this clipping is part of the mechanism, so the guarantee holds whatever the
    data); with ``fit_intercept`` the constant feature is appended and the row divided
    by √2, ``z = [r, 1]/√2``, so ``‖z‖₂ ≤ 1`` with the intercept weight regularised like
    the others. ``coef_`` and ``intercept_`` are mapped back to the units of ``X``;
    predictions apply them to unclipped rows.

    With ``λ = 1/(C·n)`` the objective ``(1/n) Σ ℓ(y_i wᵀz_i) + (λ/2)‖w‖²`` has the same
    minimiser as scikit-learn's ``C·Σ ℓ + ½‖w‖²``. Neighbouring data sets differ in one
    row (``n`` is public).

    - ``method="output"`` (Algorithm 1): ``w = w* + b`` with independent Laplace noise
      on every weight, scale ``s = √p·2/(n·λ·ε) = √p·2C/ε`` for ``p`` weights: the L1
      sensitivity ``√p·2/(n·λ)`` that follows from the L2 bound ``2/(n·λ)`` of
      Corollary 8 (needs a convex loss with ``|ℓ'| ≤ 1``). The noise is added with the
      floating-point-safe grid construction of :func:`~privtab.laplace_mechanism`, so
      the released weights carry no side channel (Mironov 2012). Chaudhuri et al.'s
      noise of density ∝ ``exp(−‖b‖₂·ε·n·λ/2)`` has no known floating-point-safe
      sampler; the per-coordinate noise is ε-DP by the L1 bound, with an expected norm
      about √2 times larger.
    - ``method="objective"`` (Algorithm 2): ``ε' = ε − log(1 + 2c/(nλ) + c²/(n²λ²))``;
      if ``ε' < ε/2``, ``Δ = c/(n(e^{ε/4} − 1)) − λ`` and ``ε' = ε/2``, else ``Δ = 0``
      (Algorithm 2 adds ``Δ`` only for ``ε' ≤ 0``; see
      :func:`objective_perturbation_parameters`);
      ``b`` has density ∝ ``exp(−(ε'/2)‖b‖₂)``, and ``w`` minimises the objective plus
      ``bᵀw/n + (Δ/2)‖w‖²`` (needs ``|ℓ'| ≤ 1`` and ``|ℓ''| ≤ c``).
"""

_ERM_CLASSES = """\
    With ``q > 2`` classes, one binary model per class (that class against the rest) is
    trained with ``ε/q`` each (sequential composition; ``privacy_ledger_`` has one entry
    per class and the accountant is charged ``ε`` once). ``q`` and the models are
    those of the declared ``classes``, so that a class held by one record changes
    neither ``classes_`` nor the shapes of ``coef_`` and ``intercept_``; with
    ``classes=None`` the label set is read off ``y`` and is not covered by the
    guarantee (a :class:`~privtab.exceptions.PrivacyLeakWarning` says so).
    ``data_norm=None`` takes the bound from the data and emits
    :class:`~privtab.exceptions.PrivacyLeakWarning`.
    A fixed ``random_state`` voids privacy against anyone who knows it.

    Publishing. :meth:`release` returns ``coef_``, ``intercept_`` and ``classes_``
    (``released_attributes``), the public parameters and the ledger. The other
    fitted attributes follow from ``n`` and the parameters, except ``data_norm_``
    and ``classes_`` when taken from the data. No iteration count is kept: under
    output perturbation it is a function of the exact data (a neighbour can change
    it at any ε), under objective perturbation of the data and the noise vector
    together, and the guarantee covers only the minimiser. The estimator itself,
    pickled, also carries its ``accountant`` (with the caller's whole ledger) and
    ``random_state``: publish :meth:`release`, not the estimator.
"""


class _DPLinearClassifier(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Shared fit/predict of the two DP linear classifiers (one-vs-rest beyond 2 classes)."""

    released_attributes: ClassVar[tuple[str, ...]] = ("coef_", "intercept_", "classes_")

    _loss: ClassVar[str]
    epsilon: float
    C: float
    method: str
    data_norm: float | None
    fit_intercept: bool
    random_state: RandomState
    accountant: BudgetAccountant | None
    classes: Any
    epsilon_prime_: np.ndarray | None
    extra_regularization_: np.ndarray | None

    def _curvature(self) -> float:
        raise NotImplementedError

    def _huber_h(self) -> float:
        return 0.5

    def _sensitivity_factor(self) -> float:
        """Multiplier of the L1 sensitivity of output perturbation (default 1).

        DPFSDR's correlated-sensitivity SVM (:mod:`privtab.dpfsdr`) overrides it with
        its factor ``CS``, so that the noise is ``Lap(CS·Δw/ε)``; 0 adds no noise (the
        paper's non-private DFS baseline).
        """
        return 1.0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The noise needed for privacy costs accuracy on small data sets: the generic
        # accuracy threshold of scikit-learn's checks does not apply.
        tags.classifier_tags.poor_score = True
        return tags

    @runs_on_threads
    def fit(self, X: Any, y: Any) -> _DPLinearClassifier:
        """Fit the private model; charges ``epsilon`` to the accountant once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite real values (numpy, pandas or polars).
        y : array-like of shape (n_samples,)
            Class labels: in ``classes`` when it is declared, else at least two
            distinct ones.

        Returns
        -------
        self
        """
        C = check_positive(self.C, "C")
        check_choice(self.method, "method", _METHODS)
        c = self._curvature()
        huber_h = self._huber_h()
        data_norm = (
            None
            if self.data_norm is None
            else check_positive(self.data_norm, "data_norm")
        )
        check_bool(self.fit_intercept, "fit_intercept")
        run = self._start_private_fit()

        X, y = validate_float_data(self, X, y)
        try:
            check_classification_targets(y)
        except ValueError as exc:
            raise ValueError(f"y: {exc}") from exc
        classes, _ = check_labels(
            y,
            self.classes,
            n_rows=X.shape[0],
            min_classes=2,
            owner=type(self).__name__,
        )
        if data_norm is None:
            largest = float(np.linalg.norm(X, axis=1).max())
            data_norm = largest if largest > 0 else 1.0
            warn_user(
                "data_norm was not given and is taken from the data (the largest row "
                f"norm, {data_norm:.6g}); the privacy guarantee does not cover it. "
                "Declare a public bound with data_norm=...",
                PrivacyLeakWarning,
            )
        n, lam = _regularization(X.shape[0], C)
        Z = scale_rows(X, data_norm, fit_intercept=bool(self.fit_intercept))
        n_weights = Z.shape[1]

        binary = classes.shape[0] == 2
        targets = [classes[1]] if binary else list(classes)
        parts = (
            [run.epsilon] if binary else split_budget(run.epsilon, [1.0] * len(targets))
        )
        rng = run.random_state
        factor = self._sensitivity_factor()
        l1_sensitivity = output_perturbation_l1_sensitivity(n, n_weights, C) * factor
        if self.method == "objective":
            # Unit-scale draws, rescaled per model: exp(-‖b‖/s) is a scale family.
            unit_noise = _core.l2_laplace_samples(
                len(targets), n_weights, 1.0, core_seed(rng)
            )

        signs = np.array([np.where(y == target, 1.0, -1.0) for target in targets])
        if self.method == "output":
            scales = l1_sensitivity / np.asarray(parts)
            strengths = np.full(len(targets), lam)
            eps_primes = extras = np.empty(len(targets))
            linear = None
        else:
            eps_primes, extras = np.array(
                [objective_perturbation_parameters(e, n, lam, c) for e in parts]
            ).T
            scales = 2.0 / eps_primes
            strengths = lam + extras
            linear = scales[:, None] * unit_noise / n
        weights, grad_norms = _minimize_models(
            Z, signs, strengths, self._loss, huber_h, linear
        )
        for w, grad_norm, strength in zip(weights, grad_norms, strengths, strict=True):
            if _uncertified(w, grad_norm, strength):
                warn_user(
                    f"The solver stopped {grad_norm / strength:.3g} (L2) from the "
                    "exact minimiser that the privacy proof assumes; the weights are "
                    "still noisy but the guarantee is only approximate",
                    ConvergenceWarning,
                )
        if self.method == "output" and factor > 0:
            weights = _release_weights(weights, l1_sensitivity, parts, rng)

        d = X.shape[1]
        if self.fit_intercept:
            self.coef_ = weights[:, :d] / (math.sqrt(2.0) * data_norm)
            self.intercept_ = weights[:, d] / math.sqrt(2.0)
        else:
            self.coef_ = weights / data_norm
            self.intercept_ = np.zeros(len(targets))
        self.classes_ = classes
        self.data_norm_ = data_norm
        self.lambda_ = lam
        self.sensitivity_ = output_perturbation_l2_sensitivity(n, C)
        self.l1_sensitivity_ = l1_sensitivity
        self.noise_scale_ = scales
        if self.method == "objective":
            self.epsilon_prime_ = eps_primes
            self.extra_regularization_ = extras
        else:
            self.epsilon_prime_ = None
            self.extra_regularization_ = None
        name = type(self).__name__
        if binary:
            labels = [f"{name} ({self.method} perturbation)"]
        else:
            labels = [
                f"{name} ({self.method} perturbation), class {t!r} vs rest"
                for t in targets
            ]
        self._finish_private_fit(
            run, f"{name} ({self.method} perturbation)", zip(labels, parts, strict=True)
        )
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Signed scores ``X @ coef_.T + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive: ``classes_[1]``),
        else (n_samples, n_classes) (one-vs-rest scores).
        """
        check_is_fitted(self)
        X = validate_float_data(self, X, reset=False)
        scores = X @ self.coef_.T + self.intercept_
        return scores[:, 0] if self.classes_.shape[0] == 2 else scores

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class labels (largest one-vs-rest score).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]


@fill_doc(
    erm_notes=_ERM_NOTES,
    erm_classes=_ERM_CLASSES,
    label=LABEL_PARAMETER,
    refits=REFITS_NOTE,
    threads=THREADS_PARAMETER,
)
class DPLogisticRegression(_DPLinearClassifier):
    """ε-differentially private L2-regularised logistic regression.

    Chaudhuri, Monteleoni & Sarwate (2011) output or objective perturbation of
    ``(1/n) Σ log(1 + exp(−y_i wᵀz_i)) + (λ/2)‖w‖²``, ``λ = 1/(C·n)``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, finite and > 0.
    C : float, default=1.0
        Inverse regularisation strength (scikit-learn's meaning).
    method : {"objective", "output"}, default="objective"
        Objective perturbation (Algorithm 2) or output perturbation (Algorithm 1).
    data_norm : float, optional
        Public upper bound on the L2 norm of the rows of ``X``. ``None`` takes it from
        the data and warns.
    fit_intercept : bool, default=True
        Fit an intercept through a constant feature (see Notes).
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (the secure default) uses operating-system entropy.
    accountant : BudgetAccountant, optional
        Checked before the data are read and charged ``epsilon`` once after success
        (the default accountant when ``None``).
    classes : array-like of labels, optional
        The public label set: at least 2 distinct labels, stored sorted in
        ``classes_``. One model per declared class (one in all for two classes), a
        class no record holds included; a label of ``y`` outside it raises a
        ``ValueError``. ``None`` takes the set from ``y`` with ``numpy.unique`` and
        emits a :class:`~privtab.exceptions.PrivacyLeakWarning`.
    %(label)s
    %(threads)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        ``classes`` (sorted) when declared, else the labels of ``y`` (then not
        covered by the guarantee: a class held by one record shows).
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Released: the perturbed weights.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Released: the perturbed intercepts.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.
    data_norm_ : float
        The row-norm bound used: ``data_norm``, or when it is ``None`` the largest
        row norm of ``X``, a value of the data the guarantee does not cover.
    lambda_ : float
        ``λ = 1/(C·n)``.
    sensitivity_ : float
        L2 sensitivity ``2/(n·λ)`` of the non-private weights on the scaled rows.
    l1_sensitivity_ : float
        Their L1 sensitivity ``√p·2/(n·λ)``, ``p`` weights (features + intercept).
    noise_scale_ : ndarray of shape (n_models,)
        Scale ``s`` of each binary model's noise: per-weight Laplace scale for
        ``method="output"``, ``s`` of the density ∝ ``exp(−‖b‖₂/s)`` for
        ``method="objective"``.
    epsilon_prime_, extra_regularization_ : ndarray of shape (n_models,) or None
        ``ε'`` and ``Δ`` of objective perturbation (``None`` for ``method="output"``).
    epsilon_spent_ : float
    privacy_ledger_ : list of LedgerEntry
        Steps that unpack as ``(label, epsilon)``, each tagged with its ``guarantee``.
        One entry per binary model; the entries sum exactly to ``epsilon_spent_``.

    Raises
    ------
    ValueError
        From ``fit``: invalid ``epsilon``, ``C``, ``method`` or ``data_norm``; ``X``
        with NaN, infinities or the wrong shape; ``y`` with fewer than two classes
        (``classes=None``); ``classes`` with fewer than two labels or a repeated
        one; a label of ``y`` outside ``classes``.
    BudgetExceededError
        From ``fit``, before the data are read, if the accountant cannot afford
        ``epsilon``.

    Notes
    -----
    The logistic loss has ``|ℓ'| ≤ 1`` and ``ℓ'' ≤ c = 1/4`` (Chaudhuri et al. 2011,
    Section 3.4.1).
    %(erm_notes)s

    Both are ε-differentially private for the *exact* minimiser, which a solver only
    approximates. L-BFGS (scipy) runs to a gradient tolerance of 1e-10; when that does
    not reach ``‖∇J‖₂ ≤ 1e-10·λ`` (it stalls for tiny λ, i.e. large ``n·C``) and there
    are at most 2000 weights, up to 6 Newton steps follow, each kept only if it lowers
    ``‖∇J‖₂``. Strong convexity bounds the distance to the exact minimiser by
    ``‖∇J‖₂/λ``; a ``ConvergenceWarning`` says when that bound exceeds
    ``1e-6·max(1, ‖w‖₂)``, far below the noise's scale in any useful setting.

    %(erm_classes)s

    ``predict_proba`` gives ``[1 − σ(s), σ(s)]`` for two classes and, beyond, the
    one-vs-rest sigmoids ``σ(s_k)`` normalised to sum to one (Vinterbo 2012's PMLR).

    %(refits)s

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import BudgetAccountant, DPLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> acc = BudgetAccountant(2.0)
    >>> model = DPLogisticRegression(
    ...     1.0, C=0.1, data_norm=5.0, random_state=0, accountant=acc, classes=[0, 1]
    ... ).fit(X, y)
    >>> bool(model.score(X, y) > 0.9), acc.spent
    (True, 1.0)
    """

    _loss = "logistic"

    def __init__(
        self,
        epsilon: float,
        *,
        C: float = 1.0,
        method: str = "objective",
        data_norm: float | None = None,
        fit_intercept: bool = True,
        random_state: RandomState = None,
        accountant: BudgetAccountant | None = None,
        classes: Any = None,
        label: str | None = None,
        n_threads: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.C = C
        self.method = method
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.accountant = accountant
        self.classes = classes
        self.label = label
        self.n_threads = n_threads

    def _curvature(self) -> float:
        return LOGISTIC_CURVATURE

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to one; columns follow ``classes_``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            positive = special.expit(scores)
            return np.column_stack([1.0 - positive, positive])
        probs = special.expit(scores)
        return probs / probs.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack(
                [special.log_expit(-scores), special.log_expit(scores)]
            )
        logs = special.log_expit(scores)
        return logs - special.logsumexp(logs, axis=1, keepdims=True)


@fill_doc(
    erm_notes=_ERM_NOTES,
    erm_classes=_ERM_CLASSES,
    label=LABEL_PARAMETER,
    refits=REFITS_NOTE,
    threads=THREADS_PARAMETER,
)
class DPLinearSVC(_DPLinearClassifier):
    """ε-differentially private linear SVM with the Huber (smoothed hinge) loss.

    Chaudhuri, Monteleoni & Sarwate (2011) output or objective perturbation of
    ``(1/n) Σ ℓ_h(y_i wᵀz_i) + (λ/2)‖w‖²``, ``λ = 1/(C·n)``, where ``ℓ_h(z)`` is 0 for
    ``z > 1 + h``, ``(1 + h − z)²/(4h)`` for ``|1 − z| ≤ h`` and ``1 − z`` for
    ``z < 1 − h``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, finite and > 0.
    C : float, default=1.0
        Inverse regularisation strength (scikit-learn's meaning).
    huber_h : float, default=0.5
        Huber parameter ``h`` > 0 (the hinge is recovered as ``h → 0``).
    method : {"output", "objective"}, default="output"
        Output perturbation (Algorithm 1) or objective perturbation (Algorithm 2).
    data_norm : float, optional
        Public upper bound on the L2 norm of the rows of ``X``. ``None`` takes it from
        the data and warns.
    fit_intercept : bool, default=True
        Fit an intercept through a constant feature (see Notes).
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (the secure default) uses operating-system entropy.
    accountant : BudgetAccountant, optional
        Checked before the data are read and charged ``epsilon`` once after success.
    classes : array-like of labels, optional
        The public label set: at least 2 distinct labels, stored sorted in
        ``classes_``. One model per declared class (one in all for two classes), a
        class no record holds included; a label of ``y`` outside it raises a
        ``ValueError``. ``None`` takes the set from ``y`` with ``numpy.unique`` and
        emits a :class:`~privtab.exceptions.PrivacyLeakWarning`.
    %(label)s
    %(threads)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        ``classes`` (sorted) when declared, else the labels of ``y`` (then not
        covered by the guarantee: a class held by one record shows).
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Released: the perturbed weights.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Released: the perturbed intercepts.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.
    data_norm_ : float
        The row-norm bound used: ``data_norm``, or when it is ``None`` the largest
        row norm of ``X``, a value of the data the guarantee does not cover.
    lambda_ : float
        ``λ = 1/(C·n)``.
    sensitivity_ : float
        L2 sensitivity ``2/(n·λ)`` of the non-private weights on the scaled rows.
    l1_sensitivity_ : float
        Their L1 sensitivity ``√p·2/(n·λ)``, ``p`` weights (features + intercept):
        the ``Δw`` of DPFSDR's correlated sensitivity (Wang et al.).
    noise_scale_ : ndarray of shape (n_models,)
    epsilon_prime_, extra_regularization_ : ndarray of shape (n_models,) or None
        ``ε'`` and ``Δ`` of objective perturbation (``None`` for ``method="output"``).
    epsilon_spent_ : float
    privacy_ledger_ : list of LedgerEntry
        Steps that unpack as ``(label, epsilon)``, each tagged with its ``guarantee``.

    Raises
    ------
    ValueError
        From ``fit``: invalid ``epsilon``, ``C``, ``huber_h``, ``method`` or
        ``data_norm``; ``X`` with NaN, infinities or the wrong shape; ``y`` with fewer
        than two classes (``classes=None``); ``classes`` with fewer than two labels
        or a repeated one; a label of ``y`` outside ``classes``.
    BudgetExceededError
        From ``fit``, before the data are read, if the accountant cannot afford
        ``epsilon``.

    Notes
    -----
    The Huber loss has ``|ℓ'| ≤ 1`` and ``|ℓ''| ≤ c = 1/(2h)``; it is twice
    differentiable except at ``1 ± h``, which Chaudhuri et al. (2011, Section 3.4.2)
    show does not affect Algorithm 2.
    %(erm_notes)s

    Both are ε-differentially private for the *exact* minimiser, which a solver only
    approximates. The Huber loss is piecewise quadratic, so with at most 2000 weights
    Newton's method with a backtracking line search (all one-vs-rest models at once)
    ends at the exact minimiser, up to rounding, in a few steps: once a full step stays
    in the margin regions (above ``1 + h``, within ``h`` of 1, below ``1 − h``) it was
    computed for, the gradient there is zero. Beyond 2000 weights, or if Newton's method
    does not get within the bound below, L-BFGS (scipy, gradient tolerance 1e-10, then
    up to 6 Newton steps) solves instead. Strong convexity bounds the distance to the
    exact minimiser by ``‖∇J‖₂/λ``; a ``ConvergenceWarning`` says when that bound
    exceeds ``1e-6·max(1, ‖w‖₂)``, far below the noise's scale in any useful setting.

    %(erm_classes)s

    %(refits)s

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import DPLinearSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = np.where(X[:, 0] - X[:, 1] > 0, "a", "b")
    >>> model = DPLinearSVC(
    ...     1.0, C=0.1, data_norm=5.0, random_state=0, classes=["a", "b"]
    ... ).fit(X, y)
    >>> bool(model.score(X, y) > 0.9), model.epsilon_spent_
    (True, 1.0)
    """

    _loss = "huber"

    def __init__(
        self,
        epsilon: float,
        *,
        C: float = 1.0,
        huber_h: float = 0.5,
        method: str = "output",
        data_norm: float | None = None,
        fit_intercept: bool = True,
        random_state: RandomState = None,
        accountant: BudgetAccountant | None = None,
        classes: Any = None,
        label: str | None = None,
        n_threads: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.C = C
        self.huber_h = huber_h
        self.method = method
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.accountant = accountant
        self.classes = classes
        self.label = label
        self.n_threads = n_threads

    def _curvature(self) -> float:
        return huber_curvature(self.huber_h)

    def _huber_h(self) -> float:
        return check_positive(self.huber_h, "huber_h")
