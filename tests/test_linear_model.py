"""Tests of the DP linear models (Chaudhuri, Monteleoni & Sarwate 2011) and their noise.

Non-private quantities are checked against independent references (scikit-learn's
LogisticRegression, a separately written Huber objective minimised by scipy's BFGS, NumPy
row scaling); noise is checked with KS tests at ALPHA = 1e-6 with power checks.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import optimize, stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from privtab import (
    BudgetAccountant,
    BudgetExceededError,
    DPLinearSVC,
    DPLogisticRegression,
    PrivacyLeakWarning,
    _core,
    objective_perturbation_parameters,
    output_perturbation_l1_sensitivity,
    output_perturbation_l2_sensitivity,
)
from privtab.linear_model import erm_minimizer, huber_curvature, scale_rows

from _stats import ALPHA, WRONG_SCALES, assert_accepts, assert_rejects, ks_pvalue

ESTIMATORS = [DPLogisticRegression, DPLinearSVC]


# Independent references -------------------------------------------------------------
def reference_rows(X, data_norm, fit_intercept=True):
    """Rows scaled by data_norm, clipped into the unit ball, [r, 1]/sqrt(2)."""
    X = np.asarray(X, dtype=float)
    rows = []
    for x in X:
        r = x / data_norm
        norm = math.sqrt(float(np.sum(r * r)))
        if norm > 1:
            r = r / norm
        rows.append(np.append(r, 1.0) / math.sqrt(2) if fit_intercept else r)
    return np.array(rows)


def sklearn_logistic_weights(Z, y_signed, C):
    """C·Σ log(1+exp(-y wᵀz)) + ½‖w‖², which has the minimiser of (1/n)Σℓ + λ/2‖w‖²."""
    # Newton-Cholesky converges to tol=1e-12 where L-BFGS can stall in its line search.
    model = LogisticRegression(
        C=C, fit_intercept=False, tol=1e-12, max_iter=1000, solver="newton-cholesky"
    )
    return model.fit(Z, y_signed).coef_[0]


def huber_objective(Z, y_signed, C, h):
    """The Huber-SVM objective and its gradient, the loss written as
    clip(1+h-z, 0, 2h)²/(4h) + (1-h-z)_+."""
    n = Z.shape[0]
    lam = 1.0 / (C * n)

    def fun(w):
        z = y_signed * (Z @ w)
        t = np.clip(1 + h - z, 0, 2 * h)
        lin = np.maximum(1 - h - z, 0)
        value = np.sum(t**2 / (4 * h) + lin) / n + lam / 2 * w @ w
        quadratic = (z > 1 - h) & (z < 1 + h)
        slope = np.where(quadratic, -t / (2 * h), 0.0) - (z <= 1 - h)
        return value, Z.T @ (slope * y_signed) / n + lam * w

    return fun


def huber_reference_weights(Z, y_signed, C, h):
    """Huber-SVM minimiser by scipy's BFGS on :func:`huber_objective`."""
    result = optimize.minimize(
        huber_objective(Z, y_signed, C, h),
        np.zeros(Z.shape[1]),
        jac=True,
        method="BFGS",
        options={"gtol": 1e-11},
    )
    return result.x


def unscaled_weights(model, data_norm):
    """The weights on the scaled rows, recovered from coef_ and intercept_."""
    return np.column_stack(
        [model.coef_ * math.sqrt(2) * data_norm, model.intercept_ * math.sqrt(2)]
    )


def blobs(n, centers, spread, seed):
    rng = np.random.default_rng(seed)
    centers = np.asarray(centers, dtype=float)
    y = rng.integers(0, len(centers), size=n)
    X = centers[y] + spread * rng.normal(size=(n, centers.shape[1]))
    return X, y


# The L2-Laplace noise vector -----------------------------------------------------------
@pytest.mark.parametrize(("d", "scale"), [(1, 0.5), (3, 2.0), (10, 0.01)])
def test_noise_norm_is_gamma(d, scale):
    noise = _core.l2_laplace_samples(30_000, d, scale, 31)
    assert noise.shape == (30_000, d)
    norms = np.linalg.norm(noise, axis=1)
    assert_accepts(ks_pvalue(norms, stats.gamma(d, scale=scale)))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_noise_norm_test_has_power(factor):
    norms = np.linalg.norm(
        _core.l2_laplace_samples(30_000, 3, 2.0 * factor, 32), axis=1
    )
    assert_rejects(ks_pvalue(norms, stats.gamma(3, scale=2.0)))


def test_noise_direction_is_uniform_on_the_sphere():
    # Archimedes: a coordinate of a uniform point on the 2-sphere is uniform on [-1, 1];
    # in R^5 its square is Beta(1/2, 2).
    noise = _core.l2_laplace_samples(30_000, 3, 1.0, 33)
    direction = noise / np.linalg.norm(noise, axis=1, keepdims=True)
    for j in range(3):
        assert_accepts(ks_pvalue(direction[:, j], stats.uniform(-1, 2)))
    noise5 = _core.l2_laplace_samples(30_000, 5, 1.0, 34)
    u5 = noise5[:, 4] / np.linalg.norm(noise5, axis=1)
    assert_accepts(ks_pvalue(u5**2, stats.beta(0.5, 2.0)))


def test_noise_direction_test_has_power():
    rng = np.random.default_rng(35)
    skewed = rng.normal(size=(30_000, 3)) * np.array([1.15, 1.0, 1.0])
    direction = skewed / np.linalg.norm(skewed, axis=1, keepdims=True)
    assert_rejects(ks_pvalue(direction[:, 0], stats.uniform(-1, 2)))


@pytest.mark.parametrize(
    ("shape", "scale"), [(0.4, 1.0), (1.0, 3.0), (2.5, 0.2), (40.0, 1.0)]
)
def test_gamma_sampler_matches_scipy(shape, scale):
    samples = _core.gamma_samples(30_000, shape, scale, 36)
    assert_accepts(ks_pvalue(samples, stats.gamma(shape, scale=scale)))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_gamma_test_has_power(factor):
    samples = _core.gamma_samples(30_000, 2.5, factor, 37)
    assert_rejects(ks_pvalue(samples, stats.gamma(2.5)))


def test_noise_is_deterministic_and_thread_independent():
    one = _core.l2_laplace_samples(70_000, 2, 1.0, 5, 1)
    assert np.array_equal(one, _core.l2_laplace_samples(70_000, 2, 1.0, 5, 2))
    assert np.array_equal(one[:1], _core.l2_laplace_samples(1, 2, 1.0, 5))
    assert not np.array_equal(one, _core.l2_laplace_samples(70_000, 2, 1.0, 6))
    assert _core.l2_laplace_samples(0, 4, 1.0, 5).shape == (0, 4)
    fresh = _core.l2_laplace_samples(2, 3, 1.0)
    assert fresh.shape == (2, 3)


def test_noise_rejects_bad_arguments():
    with pytest.raises(ValueError, match="d must be >= 1, got 0"):
        _core.l2_laplace_samples(3, 0, 1.0, 0)
    with pytest.raises(ValueError, match="scale must be finite and > 0, got -1"):
        _core.l2_laplace_samples(3, 2, -1.0, 0)
    with pytest.raises(ValueError, match="scale is too large"):
        _core.l2_laplace_samples(3, 10, 1e308, 0)
    with pytest.raises(ValueError, match="shape must be finite and > 0"):
        _core.gamma_samples(3, 0.0, 1.0, 0)
    with pytest.raises(MemoryError, match="l2 laplace samples"):
        _core.l2_laplace_samples(2**62, 8, 1.0, 0)


@given(
    n=st.integers(0, 50),
    d=st.integers(0, 20),
    scale=st.floats(allow_nan=True, allow_infinity=True),
    n_threads=st.sampled_from([None, 1, 2]),
)
def test_noise_never_panics(n, d, scale, n_threads):
    try:
        out = _core.l2_laplace_samples(n, d, scale, 1, n_threads)
    except ValueError:
        assert d == 0 or not (math.isfinite(scale) and scale > 0) or scale > 1e300
        return
    assert out.shape == (n, d)
    assert np.all(np.isfinite(out))


# Constants of the two algorithms -------------------------------------------------------
@pytest.mark.parametrize(
    ("n", "C", "d"), [(1, 1.0, 1), (100, 0.1, 4), (12345, 3.5, 30)]
)
def test_output_sensitivities_follow_the_paper(n, C, d):
    lam = 1.0 / (C * n)
    assert output_perturbation_l2_sensitivity(n, C) == pytest.approx(2.0 / (n * lam))
    assert output_perturbation_l1_sensitivity(n, d, C) == pytest.approx(
        math.sqrt(d) * 2.0 / (n * lam)
    )


# (n, λ, c, ε): both branches of Algorithm 2, logistic (c = 1/4) and Huber (c = 1/(2h)).
OBJECTIVE_CASES = [
    (100, 0.01, 0.25, 1.0),
    (1000, 0.001, 0.25, 0.1),
    (50, 0.1, 1.0, 2.0),
    (10, 0.01, 1.0, 0.5),
    (10_000, 1e-5, 0.25, 5.0),
    (200, 0.5, 5.0, 0.05),
    (1, 1.0, 0.25, 3.0),
    (100, 0.01, 1.0, 1.5),
]


@pytest.mark.parametrize(("n", "lam", "c", "eps"), OBJECTIVE_CASES)
def test_objective_perturbation_parameters_follow_the_paper(n, lam, c, eps):
    eps_prime, Delta = objective_perturbation_parameters(eps, n, lam, c)
    first = eps - math.log(1 + 2 * c / (n * lam) + c**2 / (n**2 * lam**2))
    if first >= eps / 2:
        assert eps_prime == pytest.approx(first, rel=1e-12)
        assert Delta == 0.0
    else:
        assert eps_prime == eps / 2
        assert Delta == pytest.approx(
            c / (n * (math.exp(eps / 4) - 1)) - lam, rel=1e-12
        )
        assert Delta > 0
        # The proof's budget: 2 ln(1 + c/(n(λ+Δ))) + ε' = ε.
        assert 2 * math.log(1 + c / (n * (lam + Delta))) + eps_prime == pytest.approx(
            eps
        )


def test_both_branches_are_covered():
    firsts = [
        (eps - math.log(1 + 2 * c / (n * lam) + c**2 / (n**2 * lam**2))) / eps
        for n, lam, c, eps in OBJECTIVE_CASES
    ]
    assert min(firsts) <= 0
    assert any(0 < f < 0.5 for f in firsts)
    assert max(firsts) >= 0.5


def test_objective_noise_never_exceeds_that_of_half_the_budget():
    # Algorithm 2 as printed keeps ε' = ε − 2 ln(1 + c/(nΛ)) while it is > 0, so its
    # noise 2/ε' grows without bound as ε' falls to 0 (here C = 1/(nΛ) = 1, c = 1).
    n, c = 398, 1.0
    lam = 1.0 / n
    for eps in np.linspace(1.0, 3.0, 41):
        eps_prime, Delta = objective_perturbation_parameters(float(eps), n, lam, c)
        assert eps_prime >= eps / 2
        assert 2 * math.log(1 + c / (n * (lam + Delta))) + eps_prime <= eps * (
            1 + 1e-12
        )
    eps_prime, Delta = objective_perturbation_parameters(1.4, n, lam, c)
    assert (eps_prime, Delta) == (0.7, pytest.approx(c / (n * math.expm1(0.35)) - lam))


@pytest.mark.parametrize(
    ("Estimator", "c"), [(DPLogisticRegression, 0.25), (DPLinearSVC, 1.0 / 0.6)]
)
def test_fitted_objective_constants(Estimator, c):
    X, y = blobs(80, [[1, 1], [-1, -1]], 1.0, 0)
    kwargs = {"huber_h": 0.3} if Estimator is DPLinearSVC else {}
    model = Estimator(
        0.2,
        C=2.0,
        method="objective",
        data_norm=4.0,
        random_state=0,
        classes=[0, 1],
        **kwargs,
    )
    model.fit(X, y)
    lam = 1.0 / (2.0 * 80)
    assert model.lambda_ == pytest.approx(lam)
    first = 0.2 - math.log(1 + 2 * c / (80 * lam) + c**2 / (80**2 * lam**2))
    assert first <= 0
    assert model.epsilon_prime_[0] == 0.1
    assert model.extra_regularization_[0] == pytest.approx(
        c / (80 * (math.exp(0.2 / 4) - 1)) - lam
    )
    assert model.noise_scale_[0] == pytest.approx(2 / 0.1)
    assert model.sensitivity_ == pytest.approx(2 / (80 * lam))
    assert model.l1_sensitivity_ == pytest.approx(math.sqrt(3) * 2 / (80 * lam))


def test_curvature_and_helper_validation():
    assert huber_curvature(0.25) == 2.0
    with pytest.raises(ValueError, match="huber_h must be finite and > 0"):
        huber_curvature(0.0)
    with pytest.raises(ValueError, match="n_samples must be >= 1, got 0"):
        output_perturbation_l2_sensitivity(0, 1.0)
    with pytest.raises(TypeError, match="n_samples must be an int"):
        output_perturbation_l2_sensitivity(2.5, 1.0)
    with pytest.raises(ValueError, match="C must be finite and > 0"):
        output_perturbation_l2_sensitivity(10, -1.0)
    with pytest.raises(ValueError, match="n_weights must be >= 1, got 0"):
        output_perturbation_l1_sensitivity(10, 0)
    with pytest.raises(TypeError, match="n_weights must be an int"):
        output_perturbation_l1_sensitivity(10, 1.5)
    with pytest.raises(ValueError, match="epsilon must be finite and > 0"):
        objective_perturbation_parameters(0.0, 10, 0.1, 0.25)
    with pytest.raises(ValueError, match="lambda_ must be finite and > 0"):
        objective_perturbation_parameters(1.0, 10, 0.0, 0.25)
    with pytest.raises(ValueError, match="c must be finite and > 0"):
        objective_perturbation_parameters(1.0, 10, 0.1, math.nan)
    with pytest.raises(ValueError, match="n_samples must be >= 1"):
        objective_perturbation_parameters(1.0, 0, 0.1, 0.25)
    with pytest.raises(TypeError, match="n_samples must be an int"):
        objective_perturbation_parameters(1.0, "10", 0.1, 0.25)


# Non-private pieces against independent references ----------------------------------
finite = st.floats(-50, 50, allow_nan=False)


@settings(max_examples=25, deadline=None)
@given(
    X=hnp.arrays(
        np.float64, st.tuples(st.integers(1, 30), st.integers(1, 5)), elements=finite
    ),
    data_norm=st.floats(0.01, 100),
    fit_intercept=st.booleans(),
)
def test_scale_rows_matches_reference(X, data_norm, fit_intercept):
    Z = scale_rows(X, data_norm, fit_intercept=fit_intercept)
    np.testing.assert_allclose(
        Z, reference_rows(X, data_norm, fit_intercept), rtol=1e-12, atol=1e-15
    )
    assert np.all(np.linalg.norm(Z, axis=1) <= 1 + 1e-12)


labelled = st.integers(4, 30).flatmap(
    lambda n: st.tuples(
        hnp.arrays(
            np.float64,
            st.tuples(st.just(n), st.integers(1, 4)),
            elements=st.floats(-3, 3),
        ),
        hnp.arrays(np.int8, n, elements=st.sampled_from([-1, 1])).filter(
            lambda y: len(np.unique(y)) == 2
        ),
    )
)


@settings(max_examples=25, deadline=None)
@given(data=labelled, C=st.sampled_from([0.05, 1.0, 20.0]))
def test_logistic_minimizer_matches_sklearn(data, C):
    X, y = data
    Z = scale_rows(X, 3.0)
    w = erm_minimizer(Z, y, C=C, loss="logistic")
    np.testing.assert_allclose(
        w, sklearn_logistic_weights(Z, y, C), rtol=1e-5, atol=1e-6
    )


@settings(max_examples=25, deadline=None)
@given(
    data=labelled,
    C=st.sampled_from([0.05, 1.0, 20.0]),
    h=st.sampled_from([0.1, 0.5, 1.0]),
)
def test_huber_minimizer_matches_reference(data, C, h):
    X, y = data
    Z = scale_rows(X, 3.0)
    w = erm_minimizer(Z, y, C=C, loss="huber", huber_h=h)
    reference = huber_reference_weights(Z, y, C, h)
    # BFGS can stop short of gtol (precision loss in its line search); by strong
    # convexity its distance to the minimiser is at most ‖∇J‖₂/λ.
    lam = 1.0 / (C * Z.shape[0])
    gradient = huber_objective(Z, y, C, h)(reference)[1]
    np.testing.assert_allclose(
        w, reference, rtol=1e-5, atol=1e-6 + np.linalg.norm(gradient) / lam
    )


@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_solver_certifies_the_minimiser_for_a_tiny_lambda(loss):
    # λ = 1/(C·n) = 2.5e-7: L-BFGS alone stalls here; the Newton polish must bring the
    # strong-convexity bound ‖∇J‖/λ on the distance to the exact minimiser below 1e-6.
    X, y = blobs(4000, [[0.3] * 8, [-0.3] * 8], 1.0, 13)
    Z = reference_rows(X, 6.0)
    signs = np.where(y == 1, 1.0, -1.0)
    w = erm_minimizer(Z, signs, C=1000.0, loss=loss, huber_h=0.5)
    lam = 1.0 / (1000.0 * 4000)
    m = signs * (Z @ w)
    if loss == "logistic":
        slope = -1.0 / (1.0 + np.exp(m))
    else:
        slope = np.where(m > 1.5, 0.0, np.where(m < 0.5, -1.0, -(1.5 - m)))
    grad = Z.T @ (signs * slope) / 4000 + lam * w
    assert np.linalg.norm(grad) / lam < 1e-6
    # The estimator raises no ConvergenceWarning (warnings are errors in this suite).
    DPLinearSVC(1.0, C=1000.0, data_norm=6.0, random_state=0, classes=[0, 1]).fit(X, y)


@pytest.mark.parametrize("h", [0.1, 0.5])
def test_newton_and_lbfgs_reach_the_same_huber_minimiser(monkeypatch, h):
    # The Huber loss goes to Newton's method; with its steps disabled the start point is
    # not certified, so the L-BFGS path solves instead: both must find w*.
    import privtab.linear_model as lm

    X, y = blobs(600, [[0.4, -0.2, 0.1], [-0.3, 0.3, 0.0]], 1.0, 5)
    Z = reference_rows(X, 4.0)
    signs = np.where(y == 1, 1.0, -1.0)
    newton = erm_minimizer(Z, signs, C=2.0, huber_h=h)
    monkeypatch.setattr(lm, "_NEWTON_MAX_ITER", 0)
    lbfgs = erm_minimizer(Z, signs, C=2.0, huber_h=h)
    np.testing.assert_allclose(newton, lbfgs, rtol=0, atol=1e-9)
    assert np.abs(newton - huber_reference_weights(Z, signs, 2.0, h)).max() < 1e-6


def test_one_vs_rest_models_solved_in_batches_or_together_agree(monkeypatch):
    import privtab.linear_model as lm

    X, y = blobs(300, [[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0], [1.0, -1.0]], 0.8, 6)
    model = DPLinearSVC(1e9, data_norm=4.0, random_state=0, classes=[0, 1, 2, 3])
    together = model.fit(X, y).coef_
    monkeypatch.setattr(lm, "_NEWTON_BATCH_VALUES", 1)
    np.testing.assert_allclose(model.fit(X, y).coef_, together, rtol=1e-12, atol=0)


def test_erm_minimizer_validation():
    Z = scale_rows([[1.0], [-1.0]], 1.0)
    with pytest.raises(ValueError, match="loss must be one of"):
        erm_minimizer(Z, [1, -1], loss="hinge")
    with pytest.raises(ValueError, match="labels -1 and \\+1"):
        erm_minimizer(Z, [1, 0])
    with pytest.raises(ValueError, match="rows of L2 norm <= 1"):
        erm_minimizer([[2.0], [1.0]], [1, -1])
    with pytest.raises(ValueError, match="y must have shape"):
        erm_minimizer(Z, [1, -1, 1])
    with pytest.raises(ValueError, match="non-empty 2-D"):
        erm_minimizer(np.zeros((0, 2)), [])
    with pytest.raises(ValueError, match="finite"):
        erm_minimizer([[np.nan], [0.1]], [1, -1])


# The estimators at a huge epsilon approach the non-private minimisers -------------------
@pytest.mark.parametrize("method", ["objective", "output"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_huge_epsilon_logistic_matches_sklearn(method, fit_intercept):
    X, y = blobs(300, [[1.0, 0.5, 0.0], [-0.5, -1.0, 0.5]], 1.5, 1)
    model = DPLogisticRegression(
        1e9,
        C=0.5,
        method=method,
        data_norm=4.0,
        fit_intercept=fit_intercept,
        random_state=0,
        classes=[0, 1],
    ).fit(X, y)
    Z = reference_rows(X, 4.0, fit_intercept)
    expected = sklearn_logistic_weights(Z, np.where(y == 1, 1, -1), 0.5)
    if fit_intercept:
        got = unscaled_weights(model, 4.0)[0]
    else:
        got = model.coef_[0] * 4.0
        assert np.all(model.intercept_ == 0)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    # The same predictions as scikit-learn's model on the scaled rows.
    reference = LogisticRegression(C=0.5, fit_intercept=False, tol=1e-12).fit(Z, y)
    # Rows within the declared bound are not clipped: predictions agree there.
    inside = np.linalg.norm(X, axis=1) <= 4.0
    assert inside.sum() > 100
    assert np.array_equal(model.predict(X[inside]), reference.predict(Z[inside]))
    np.testing.assert_allclose(
        model.predict_proba(X[inside]), reference.predict_proba(Z[inside]), atol=1e-4
    )


@pytest.mark.parametrize("method", ["objective", "output"])
def test_huge_epsilon_svm_matches_huber_minimiser(method):
    X, y = blobs(300, [[1.0, 0.5], [-0.5, -1.0]], 1.5, 2)
    model = DPLinearSVC(
        1e9,
        C=2.0,
        huber_h=0.25,
        method=method,
        data_norm=5.0,
        random_state=0,
        classes=[0, 1],
    ).fit(X, y)
    Z = reference_rows(X, 5.0)
    expected = huber_reference_weights(Z, np.where(y == 1, 1.0, -1.0), 2.0, 0.25)
    np.testing.assert_allclose(
        unscaled_weights(model, 5.0)[0], expected, rtol=1e-4, atol=1e-5
    )


# Output perturbation: the noise on the weights is L2-Laplace of scale 2/(nλε) ----------
def output_noise(Estimator, n_fits, epsilon, C, seed0, **kwargs):
    X, y = blobs(20, [[1.0], [-1.0]], 1.0, 3)
    Z = reference_rows(X, 3.0)
    signs = np.where(y == 1, 1.0, -1.0)
    if Estimator is DPLogisticRegression:
        exact = sklearn_logistic_weights(Z, signs, C)
    else:
        exact = huber_reference_weights(Z, signs, C, 0.5)
    model = Estimator(
        epsilon, C=C, method="output", data_norm=3.0, classes=[0, 1], **kwargs
    )
    noise = np.empty((n_fits, 2))
    for i in range(n_fits):
        model.set_params(random_state=seed0 + i).fit(X, y)
        noise[i] = unscaled_weights(model, 3.0)[0] - exact
    # Two weights (feature and intercept): L1 sensitivity √2 · 2/(n·λ).
    return noise.ravel(), math.sqrt(2) * 2.0 / (20 * (1.0 / (C * 20)) * epsilon)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("Estimator", "epsilon", "C"),
    [(DPLogisticRegression, 0.8, 0.5), (DPLinearSVC, 2.0, 0.25)],
)
def test_output_noise_is_laplace_per_weight(Estimator, epsilon, C):
    # Each fit is one L-BFGS run: 2000 fits (4000 weights) are enough for the KS test to
    # reject a scale off by 30 % (the power check), in a few seconds.
    noise, scale = output_noise(Estimator, 2000, epsilon, C, 1000)
    assert scale == pytest.approx(math.sqrt(2) * 2 * C / epsilon)
    assert_accepts(ks_pvalue(noise, stats.laplace(scale=scale)))
    for factor in WRONG_SCALES:
        assert_rejects(ks_pvalue(noise, stats.laplace(scale=scale * factor)))


# What a fitted model shows on neighbouring data sets ------------------------------------
def same_value(a, b):
    """Equality of fitted values: arrays elementwise, containers item by item."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(map(same_value, a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("method", ["output", "objective"])
def test_neighbours_differ_only_in_the_released_weights(Estimator, method):
    # D′ replaces D's first row by a far, mislabelled one. The solver needs a different
    # number of iterations on the two (with output perturbation 9 vs 8 L-BFGS
    # iterations for the logistic loss, 3 vs 2 Newton steps for the Huber loss), which
    # an iteration count would show at any epsilon. With data_norm and classes
    # declared and the same seed, everything but the perturbed weights must be the
    # same on both.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20, 2))
    y = (X[:, 0] > 0).astype(int)
    X_neighbour, y_neighbour = X.copy(), y.copy()
    X_neighbour[0], y_neighbour[0] = [3.0, -3.0], 1 - y[0]
    params = {"method": method, "data_norm": 5.0, "classes": [0, 1]}
    on_D = Estimator(1.0, random_state=1, **params).fit(X, y)
    on_neighbour = Estimator(1.0, random_state=1, **params).fit(
        X_neighbour, y_neighbour
    )
    assert not np.array_equal(on_D.coef_, on_neighbour.coef_)
    fitted = set(vars(on_D)) - set(on_D.get_params())
    assert fitted == set(vars(on_neighbour)) - set(on_neighbour.get_params())
    for name in sorted(fitted - {"coef_", "intercept_"}):
        assert same_value(getattr(on_D, name), getattr(on_neighbour, name)), name


# Utility at a moderate epsilon ----------------------------------------------------------
@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("method", ["objective", "output"])
def test_accuracy_well_above_chance(Estimator, method):
    # Two separable blobs (Bayes accuracy ~ 1); chance is 0.5. At ε = 0.5, n = 3000,
    # C = 0.05 the private models reach >= 0.9 on held-out data with these seeds.
    X, y = blobs(6000, [[2.0, 2.0], [-2.0, -2.0]], 1.0, 4)
    model = Estimator(
        0.5, C=0.05, method=method, data_norm=8.0, random_state=7, classes=[0, 1]
    )
    model.fit(X[:3000], y[:3000])
    assert model.score(X[3000:], y[3000:]) >= 0.9


# One-vs-rest ---------------------------------------------------------------------------
@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("method", ["objective", "output"])
def test_multiclass_one_vs_rest_budget(Estimator, method):
    X, y = blobs(3000, [[3, 0], [-3, 0], [0, 3], [0, -3]], 0.7, 5)
    labels = np.array(["north", "south", "east", "west"])[y]
    acc = BudgetAccountant(3.0)
    # Declared in any order; classes_ holds them sorted.
    model = Estimator(
        2.0,
        C=0.05,
        method=method,
        data_norm=6.0,
        random_state=1,
        accountant=acc,
        classes=["north", "south", "east", "west"],
    )
    model.fit(X, labels)
    assert list(model.classes_) == ["east", "north", "south", "west"]
    assert model.coef_.shape == (4, 2)
    assert model.intercept_.shape == (4,)
    assert model.epsilon_spent_ == 2.0
    assert len(model.privacy_ledger_) == 4
    assert sum(eps for _, eps in model.privacy_ledger_) == 2.0
    for (label, eps), cls in zip(model.privacy_ledger_, model.classes_, strict=True):
        assert eps == pytest.approx(0.5)
        assert repr(str(cls)) in label
    assert [tuple(entry) for entry in acc.ledger] == [
        (f"{Estimator.__name__} ({method} perturbation)", 2.0)
    ]
    parts = np.array([eps for _, eps in model.privacy_ledger_])
    if method == "output":
        np.testing.assert_allclose(
            model.noise_scale_, math.sqrt(3) * 2 / (3000 * model.lambda_ * parts)
        )
    else:
        expected = [
            objective_perturbation_parameters(
                e, 3000, model.lambda_, model._curvature()
            )
            for e in parts
        ]
        np.testing.assert_allclose(model.epsilon_prime_, [e for e, _ in expected])
        np.testing.assert_allclose(model.noise_scale_, 2 / model.epsilon_prime_)
    assert model.decision_function(X).shape == (3000, 4)
    assert model.score(X, labels) > 0.6  # chance is 0.25
    if Estimator is DPLogisticRegression:
        proba = model.predict_proba(X)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        sig = 1 / (1 + np.exp(-model.decision_function(X)))
        np.testing.assert_allclose(proba, sig / sig.sum(axis=1, keepdims=True))
        np.testing.assert_allclose(np.exp(model.predict_log_proba(X)), proba)
        assert np.array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])


def test_binary_proba_and_decision_are_consistent():
    X, y = blobs(200, [[1, 1], [-1, -1]], 1.0, 6)
    model = DPLogisticRegression(
        1.0, data_norm=4.0, random_state=0, classes=[0, 1]
    ).fit(X, y)
    scores = model.decision_function(X)
    assert scores.shape == (200,)
    np.testing.assert_allclose(scores, X @ model.coef_[0] + model.intercept_[0])
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-scores)))
    np.testing.assert_allclose(np.exp(model.predict_log_proba(X)), proba)
    assert np.array_equal(model.predict(X), model.classes_[(scores > 0).astype(int)])
    assert model.privacy_ledger_ == [
        ("DPLogisticRegression (objective perturbation)", 1.0)
    ]


# Budget, seeds, inferred norms ------------------------------------------------------------
class Untouchable:
    """An array-like that fails the test if anything reads it."""

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data were read before the budget check")

    def __len__(self):
        raise AssertionError("the data were read before the budget check")


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_budget_checked_before_reading_data_and_charged_once(Estimator):
    acc = BudgetAccountant(1.0)
    with pytest.raises(BudgetExceededError, match="privacy budget exceeded"):
        Estimator(1.5, data_norm=1.0, accountant=acc).fit(Untouchable(), Untouchable())
    assert acc.spent == 0
    X, y = blobs(100, [[1, 1], [-1, -1]], 1.0, 7)
    with pytest.raises(ValueError, match="at least 2 classes"):
        Estimator(0.5, data_norm=3.0, accountant=acc).fit(X, np.zeros(100))
    assert acc.spent == 0
    Estimator(0.5, data_norm=3.0, accountant=acc, classes=[0, 1]).fit(X, y)
    assert acc.spent == 0.5
    assert len(acc.ledger) == 1


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_seeds_reproduce_and_differ(Estimator):
    X, y = blobs(100, [[1, 1], [-1, -1]], 1.0, 8)
    a = Estimator(1.0, data_norm=3.0, random_state=3, classes=[0, 1]).fit(X, y).coef_
    b = Estimator(1.0, data_norm=3.0, random_state=3, classes=[0, 1]).fit(X, y).coef_
    c = Estimator(1.0, data_norm=3.0, random_state=4, classes=[0, 1]).fit(X, y).coef_
    d = Estimator(1.0, data_norm=3.0, classes=[0, 1]).fit(X, y).coef_
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a, d)
    gen = Estimator(
        1.0, data_norm=3.0, random_state=np.random.default_rng(0), classes=[0, 1]
    )
    assert not np.array_equal(gen.fit(X, y).coef_, gen.fit(X, y).coef_)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_inferred_data_norm_warns(Estimator):
    X, y = blobs(50, [[1, 1], [-1, -1]], 1.0, 9)
    with pytest.warns(PrivacyLeakWarning, match="data_norm was not given"):
        model = Estimator(1.0, random_state=0, classes=[0, 1]).fit(X, y)
    assert model.data_norm_ == pytest.approx(np.linalg.norm(X, axis=1).max())
    with pytest.warns(PrivacyLeakWarning):
        zero = Estimator(1.0, random_state=0, classes=[0, 1]).fit(
            np.zeros((4, 2)), [0, 1, 0, 1]
        )
    assert zero.data_norm_ == 1.0


def test_rows_above_the_bound_are_clipped():
    X, y = blobs(100, [[1, 1], [-1, -1]], 1.0, 10)
    far = X * 100
    clipped = reference_rows(far, 0.5)
    model = DPLogisticRegression(
        1e9, data_norm=0.5, random_state=0, method="output", classes=[0, 1]
    )
    expected = sklearn_logistic_weights(clipped, np.where(y == 1, 1, -1), 1.0)
    np.testing.assert_allclose(
        unscaled_weights(model.fit(far, y), 0.5)[0], expected, rtol=1e-4, atol=1e-5
    )


def test_dataframes_and_feature_names():
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    X, y = blobs(100, [[1, 1], [-1, -1]], 1.0, 11)
    frame = pd.DataFrame(X, columns=["a", "b"])
    model = DPLinearSVC(1.0, data_norm=3.0, random_state=0, classes=[0, 1])
    model.fit(frame, pd.Series(y))
    assert list(model.feature_names_in_) == ["a", "b"]
    expected = clone(model).fit(X, y).coef_
    assert np.array_equal(model.coef_, expected)
    polars_model = DPLinearSVC(1.0, data_norm=3.0, random_state=0, classes=[0, 1])
    polars_model.fit(pl.DataFrame(X, schema=["a", "b"]), pl.Series(y))
    assert np.array_equal(polars_model.coef_, expected)


# Validation: one pytest.raises per branch ---------------------------------------------------
X_OK, Y_OK = blobs(40, [[1, 1], [-1, -1]], 1.0, 12)


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon must be finite and > 0, got 0.0"),
        ({"epsilon": math.nan}, ValueError, "epsilon must be finite and > 0"),
        ({"epsilon": "1"}, TypeError, "epsilon must be a real number"),
        ({"C": -1.0}, ValueError, "C must be finite and > 0, got -1.0"),
        ({"C": math.inf}, ValueError, "C must be finite and > 0"),
        ({"method": "input"}, ValueError, "method must be one of"),
        ({"data_norm": 0.0}, ValueError, "data_norm must be finite and > 0"),
        ({"data_norm": math.inf}, ValueError, "data_norm must be finite and > 0"),
        ({"fit_intercept": "yes"}, TypeError, "fit_intercept must be a bool"),
        ({"random_state": -1}, ValueError, "random_state must be a non-negative int"),
        ({"random_state": "0"}, TypeError, "random_state must be None"),
        (
            {"accountant": 1.0},
            TypeError,
            "accountant must be a privtab.BudgetAccountant",
        ),
    ],
)
@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_parameter_validation(Estimator, params, error, match):
    kwargs = {"epsilon": 1.0, "data_norm": 3.0, "classes": [0, 1], **params}
    epsilon = kwargs.pop("epsilon")
    with pytest.raises(error, match=match):
        Estimator(epsilon, **kwargs).fit(X_OK, Y_OK)


@pytest.mark.parametrize("huber_h", [0.0, -0.5, math.nan, math.inf])
def test_huber_h_validation(huber_h):
    with pytest.raises(ValueError, match="huber_h must be finite and > 0"):
        DPLinearSVC(1.0, huber_h=huber_h, data_norm=3.0).fit(X_OK, Y_OK)


@pytest.mark.parametrize(
    ("X", "y", "match"),
    [
        (np.where(np.arange(80).reshape(40, 2) == 3, np.nan, X_OK), Y_OK, "NaN"),
        (np.where(np.arange(80).reshape(40, 2) == 3, np.inf, X_OK), Y_OK, "infinity"),
        (X_OK, Y_OK[:-1], "y has 39 labels, expected 40"),
        (X_OK[:, 0], Y_OK, "X must be 2-dimensional, got 1 dimension"),
        (np.zeros((0, 2)), np.zeros(0), "0 sample"),
        (X_OK, np.zeros(40), "at least 2 classes, got 1 class"),
        (X_OK, np.linspace(0, 1, 40), "Unknown label type"),
    ],
)
@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_data_validation(Estimator, X, y, match):
    with pytest.raises(ValueError, match=match):
        Estimator(1.0, data_norm=3.0).fit(X, y)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_predict_validation(Estimator):
    with pytest.raises(NotFittedError):
        Estimator(1.0).predict(X_OK)
    model = Estimator(1.0, data_norm=3.0, random_state=0, classes=[0, 1])
    model.fit(X_OK, Y_OK)
    with pytest.raises(ValueError, match="X has 3 features, but"):
        model.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        model.decision_function(np.full((2, 2), np.nan))


@settings(max_examples=40, deadline=None)
@given(
    X=hnp.arrays(
        st.sampled_from([np.float64, np.float32, np.int64, np.int8, np.bool_]),
        st.tuples(st.integers(0, 6), st.integers(0, 3)),
        elements={"allow_nan": True, "allow_infinity": True},
    ),
    y_kind=st.sampled_from(["two", "one", "many", "float"]),
    method=st.sampled_from(["objective", "output"]),
    Estimator=st.sampled_from(ESTIMATORS),
)
def test_no_input_makes_the_core_panic(X, y_kind, method, Estimator):
    n = X.shape[0]
    y = {
        "two": np.arange(n) % 2,
        "one": np.zeros(n, dtype=int),
        "many": np.arange(n),
        "float": np.linspace(0, 1, n),
    }[y_kind]
    # Declared labels: "one" then fits with a class no record holds.
    model = Estimator(
        1.0, method=method, data_norm=2.0, random_state=0, classes=np.arange(max(n, 2))
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            model.fit(X, y)
    except (ValueError, TypeError):
        return
    assert np.all(np.isfinite(model.coef_))
    # Rows near the float limit overflow X @ coef_ (numpy warns); the sign still decides.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        predictions = model.predict(np.nan_to_num(X.astype(np.float64)))
    assert predictions.shape == (n,)


def test_clone_keeps_parameters():
    model = DPLinearSVC(0.3, C=2.0, huber_h=0.1, method="objective", data_norm=2.0)
    params = clone(model).get_params()
    assert params["huber_h"] == 0.1
    assert params["method"] == "objective"
    assert ALPHA == 1e-6


def test_unconverged_solver_warns(monkeypatch):
    from sklearn.exceptions import ConvergenceWarning

    import privtab.linear_model as lm

    monkeypatch.setattr(lm, "_NEWTON_STEPS", 0)
    X, y = blobs(4000, [[0.3] * 8, [-0.3] * 8], 1.0, 13)
    with pytest.warns(ConvergenceWarning, match="from the exact minimiser"):
        DPLogisticRegression(
            1e6,
            C=1000.0,
            method="output",
            data_norm=6.0,
            random_state=0,
            classes=[0, 1],
        ).fit(X, y)
