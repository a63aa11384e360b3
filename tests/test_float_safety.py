"""Every real-valued release is free of the floating-point side channel (Mironov 2012).

For each mechanism that releases real numbers, many outputs are drawn from two
neighbouring inputs and every output of one side is checked against the other side's
input with two tests:

- the *round trip*: ``fl(fl(o − x_B) + x_B) == o`` is necessary for ``o`` to be a double
  that additive noise can produce from ``x_B`` (a black-box test: it knows nothing of the
  mechanism); textbook floating-point Laplace fails it for a large share of outputs,
  which shows the test has power;
- the *lattice*: every output is a multiple of the mechanism's public grid step ``g``,
  and the noise support is all of ``g·Z``, so each output is reachable from either
  input.

The number of outputs distinguishable from the neighbour must be 0 in >= 100,000 draws
per side. The sampler's distribution is checked at ALPHA = 1e-6 with a ±30 % power check,
as the other samplers are (tests/test_samplers.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import privtab as pt
from privtab import _core
from privtab import linear_model as lm

from _stats import WRONG_SCALES, assert_accepts, assert_rejects, ks_pvalue

DRAWS = 100_000


def unreachable_from(outputs, other_input) -> int:
    """How many outputs fail the round trip through ``other_input`` (0 = none can be
    told apart from the neighbour by the set of reachable doubles)."""
    outputs = np.asarray(outputs, dtype=np.float64)
    other = np.broadcast_to(np.asarray(other_input, dtype=np.float64), outputs.shape)
    return int(np.count_nonzero((outputs - other) + other != outputs))


def off_grid(outputs, exponent: int) -> int:
    """How many outputs are not multiples of ``2**exponent``."""
    units = np.ldexp(np.asarray(outputs, dtype=np.float64), -exponent)
    return int(np.count_nonzero(units != np.round(units)))


def distinguishable(side_a, x_a, side_b, x_b) -> int:
    return unreachable_from(side_a, x_b) + unreachable_from(side_b, x_a)


def test_the_round_trip_flags_textbook_laplace():
    rng = np.random.default_rng(0)
    zero = 0.0 + rng.laplace(0.0, 1.0, DRAWS)
    one = 1.0 + rng.laplace(0.0, 1.0, DRAWS)
    assert distinguishable(zero, 0.0, one, 1.0) > DRAWS // 10


def test_laplace_mechanism_has_no_distinguishable_output():
    zero = pt.laplace_mechanism(np.zeros(DRAWS), 1.0, 1.0, random_state=1)
    one = pt.laplace_mechanism(np.ones(DRAWS), 1.0, 1.0, random_state=2)
    assert distinguishable(zero, 0.0, one, 1.0) == 0
    exponent, _ = _core.laplace_grid(1.0, 1.0, DRAWS)
    assert off_grid(zero, exponent) == 0
    assert off_grid(one, exponent) == 0
    assert len(np.unique(zero)) > DRAWS * 0.99


@pytest.mark.parametrize(
    ("x_a", "x_b", "sensitivity", "epsilon"),
    [(0.1, 0.35, 0.25, 0.5), (-3.7, -2.7, 1.0, 2.0), (1e6, 1e6 + 5, 5.0, 0.1)],
)
def test_laplace_mechanism_any_values(x_a, x_b, sensitivity, epsilon):
    side_a = pt.laplace_mechanism(
        np.full(DRAWS, x_a), sensitivity, epsilon, random_state=3
    )
    side_b = pt.laplace_mechanism(
        np.full(DRAWS, x_b), sensitivity, epsilon, random_state=4
    )
    exponent, _ = _core.laplace_grid(sensitivity, epsilon, DRAWS)
    assert off_grid(side_a, exponent) == off_grid(side_b, exponent) == 0
    # Inputs off the grid are rounded to it first: the round trip is taken through the
    # rounded neighbour, which is what the mechanism adds noise to.
    rounded_a = np.ldexp(np.round(np.ldexp(x_a, -exponent)), exponent)
    rounded_b = np.ldexp(np.round(np.ldexp(x_b, -exponent)), exponent)
    assert distinguishable(side_a, rounded_a, side_b, rounded_b) == 0


def test_grid_noise_is_laplace():
    for sensitivity, epsilon in [(1.0, 1.0), (2.0, 0.5), (0.01, 3.0)]:
        scale = sensitivity / epsilon
        samples = _core.grid_laplace_samples(DRAWS, sensitivity, epsilon, 1, 31)
        assert_accepts(ks_pvalue(samples, stats.laplace(scale=scale)))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_grid_noise_test_has_power(factor):
    samples = _core.grid_laplace_samples(DRAWS, 2.0 * factor, 1.0, 1, 32)
    assert_rejects(ks_pvalue(samples, stats.laplace(scale=2.0)))


def test_grid_scale_covers_the_rounding():
    exponent, units = _core.laplace_grid(1.0, 0.5, 1000)
    step = math.ldexp(1.0, exponent)
    assert step <= 2.0 / 2**40 < 2 * step
    assert units * step >= (1.0 + 1000 * step) / 0.5
    assert units * step <= 2.0 * (1 + 1e-6)


def _cells(count: int) -> np.ndarray:
    """Every cell of a 400 × 250 domain, each held by ``count`` rows."""
    cells = np.stack(np.meshgrid(np.arange(400), np.arange(250), indexing="ij"), -1)
    return np.repeat(cells.reshape(-1, 2), count, axis=0).astype(np.uint32)


def test_thresholded_histogram_cells_have_no_distinguishable_value():
    # 100,000 cells of count 4 against 100,000 cells of count 3: every cell's released
    # value is one draw of "count + noise".
    kwargs = {"threshold": -100.0, "noise": "laplace"}
    four = pt.thresholded_histogram(
        _cells(4), [400, 250], 1.0, random_state=5, **kwargs
    )
    three = pt.thresholded_histogram(
        _cells(3), [400, 250], 1.0, random_state=6, **kwargs
    )
    assert len(four) == len(three) == DRAWS
    assert distinguishable(four.values, 4.0, three.values, 3.0) == 0
    exponent, _ = _core.laplace_grid(2.0, 1.0, 2)
    assert off_grid(four.values, exponent) == off_grid(three.values, exponent) == 0


def test_thresholded_histogram_empty_cells_are_on_the_grid():
    codes = np.zeros((10, 2), dtype=np.uint32)
    hist = pt.thresholded_histogram(
        codes, [1000, 1000], 1.0, threshold=0.5, noise="laplace", random_state=7
    )
    empty = hist.values[hist.keys != 0]
    assert len(empty) > DRAWS
    assert np.all(empty > 0.5)
    exponent, _ = _core.laplace_grid(2.0, 1.0, 2)
    assert off_grid(empty, exponent) == 0
    assert unreachable_from(empty, 0.0) == unreachable_from(empty, 1.0) == 0


def test_dpdilca_tables_have_no_distinguishable_cell():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 40, size=(4000, 2)).astype(np.uint32)
    neighbour = X.copy()
    neighbour[0] = (X[0] + 1) % 40
    released = {0: [], 1: []}
    for side, data in enumerate((X, neighbour)):
        for seed in range(40):
            model = pt.DPDILCA(1.0, method="baseline", random_state=seed)
            model.fit(data, cardinalities=[40, 40])
            cells = [t.ravel() for tables in model.tables_ for t in tables]
            released[side].append(np.concatenate(cells))
    side_a, side_b = np.concatenate(released[0]), np.concatenate(released[1])
    assert len(side_a) >= DRAWS
    # The table noise has scale 2·|ctx|·m / (ε·(1 − h)) ≈ 5.7 here, so its grid step is
    # 2**-38: no released cell has a set bit below it. Textbook noise of the same scale,
    # clamped at 0 the same way, has bits down to 2**-60 and below.
    for side in (side_a, side_b):
        assert lowest_set_bit(side[side > 0]) >= -40
    counts = np.random.default_rng(1).poisson(2.5, DRAWS)
    textbook = np.maximum(counts + np.random.default_rng(2).laplace(0, 5.7, DRAWS), 0)
    assert lowest_set_bit(textbook[textbook > 0]) < -60


def lowest_set_bit(values) -> int:
    """The exponent of the lowest set bit over all (non-zero) ``values``."""
    mantissas, exponents = np.frexp(np.abs(np.asarray(values, dtype=np.float64)))
    integers = np.ldexp(mantissas, 53).astype(np.int64)
    trailing = np.log2(integers & -integers).astype(np.int64)
    return int(np.min(exponents - 53 + trailing))


@pytest.mark.parametrize("estimator", [pt.DPLinearSVC, pt.DPLogisticRegression])
def test_output_perturbation_weights_have_no_distinguishable_release(estimator):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    neighbour = X.copy()
    neighbour[0] = -X[0]
    Z_a = lm.scale_rows(X, 4.0)
    Z_b = lm.scale_rows(neighbour, 4.0)
    signs = np.where(y == 1, 1.0, -1.0)
    loss = "huber" if estimator is pt.DPLinearSVC else "logistic"
    w_a = lm.erm_minimizer(Z_a, signs, C=1.0, loss=loss)
    w_b = lm.erm_minimizer(Z_b, signs, C=1.0, loss=loss)
    sensitivity = lm.output_perturbation_l1_sensitivity(300, 4, 1.0)
    draws = DRAWS // 4
    side_a = lm._release_weights(
        np.tile(w_a, (draws, 1)), sensitivity, [1.0] * draws, np.random.default_rng(1)
    )
    side_b = lm._release_weights(
        np.tile(w_b, (draws, 1)), sensitivity, [1.0] * draws, np.random.default_rng(2)
    )
    assert side_a.size >= DRAWS
    exponent, _ = _core.laplace_grid(sensitivity, 1.0, 4)
    rounded = lambda w: np.ldexp(np.round(np.ldexp(w, -exponent)), exponent)  # noqa: E731
    assert off_grid(side_a, exponent) == off_grid(side_b, exponent) == 0
    assert distinguishable(side_a, rounded(w_a), side_b, rounded(w_b)) == 0


@pytest.mark.parametrize("estimator", [pt.DPLinearSVC, pt.DPLogisticRegression])
def test_output_perturbation_goes_through_the_safe_release(estimator, monkeypatch):
    calls = []
    original = lm._release_weights

    def spy(weights, sensitivity, epsilons, rng):
        calls.append((weights.shape, sensitivity, list(epsilons)))
        return original(weights, sensitivity, epsilons, rng)

    monkeypatch.setattr(lm, "_release_weights", spy)
    rng = np.random.default_rng(10)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    model = estimator(
        1.0, method="output", data_norm=5.0, random_state=0, classes=[0, 1]
    )
    model.fit(X, y)
    assert calls == [((1, 3), model.l1_sensitivity_, [1.0])]
    assert model.noise_scale_[0] == pytest.approx(model.l1_sensitivity_ / 1.0)
