"""privtab.audit: the Clopper–Pearson bounds, the event search, validity, power,
determinism, input checks and the neighbouring pairs.

Validity is checked as a coverage rate: over many audits of randomized response with a
known ε, the bound exceeds ε in at most ``1 - confidence`` of them (binomial test at
ALPHA = 1e-6). Power is checked against the documented numbers for ε = 1 Laplace noise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import privtab as pt
from privtab.audit import MIN_RUNS, AuditResult, audit_mechanism, clopper_pearson, pairs

from _stats import ALPHA


def laplace_sums(epsilon: float):
    """A vectorised Laplace mechanism on the sum of a data set of values in [0, 1]."""

    def mechanism(x, seed, size):
        return pt.laplace_mechanism(
            np.full(size, float(np.sum(x))),
            1.0,
            epsilon,
            random_state=seed,
            accountant=pt.BudgetAccountant(),
        )

    return mechanism


def randomized_response(epsilon: float):
    """Report the data set's one bit truthfully with probability e^ε / (1 + e^ε)."""
    keep = math.exp(epsilon) / (1.0 + math.exp(epsilon))

    def mechanism(bit, seed, size):
        truthful = np.random.default_rng(seed).random(size) < keep
        return np.where(truthful, bit, 1 - bit)

    return mechanism


ZERO, ONE = np.zeros(10), np.r_[np.zeros(9), 1.0]


# Clopper–Pearson ----------------------------------------------------------------------
@pytest.mark.parametrize(("k", "n"), [(0, 50), (7, 50), (50, 50), (312, 1000)])
def test_clopper_pearson_matches_scipy_exact_interval(k, n):
    lower, upper = clopper_pearson([k], [n], 0.025)
    interval = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    assert lower[0] == pytest.approx(interval.low, abs=1e-12)
    assert upper[0] == pytest.approx(interval.high, abs=1e-12)


def test_clopper_pearson_closed_forms_at_the_ends():
    lower, upper = clopper_pearson([0, 20], [20, 20], 0.01)
    assert lower[0] == 0.0
    assert upper[1] == 1.0
    assert upper[0] == pytest.approx(1 - 0.01 ** (1 / 20), rel=1e-12)
    assert lower[1] == pytest.approx(0.01 ** (1 / 20), rel=1e-12)


def test_lowest_set_bit_of_floats():
    from privtab.audit._events import lowest_set_bit

    def reference(x: float) -> int:
        mantissa, exponent = math.frexp(abs(x))
        integer = int(mantissa * 2**53)
        return exponent - 53 + (integer & -integer).bit_length() - 1

    values = np.array([0.5, 3.0, 0.75, 1e-3, -6.25, 2.0**-40 * 3, 1e300])
    expected = [reference(v) for v in values]
    assert lowest_set_bit(values).tolist() == expected
    assert expected[:3] == [-1, 0, -2]
    rows = lowest_set_bit(values[:6].reshape(3, 2))
    assert rows.tolist() == [min(expected[0:2]), min(expected[2:4]), min(expected[4:6])]


# Validity and power -------------------------------------------------------------------
def test_the_bound_covers_the_true_epsilon_at_the_stated_rate():
    # 300 audits of randomized response (ε = 1, whose outcome event is tight) at 90 %
    # confidence: at most 10 % may exceed ε, up to binomial noise at ALPHA.
    epsilon, audits, confidence = 1.0, 300, 0.9
    above = 0
    for seed in range(audits):
        result = audit_mechanism(
            randomized_response(epsilon),
            0,
            1,
            epsilon=epsilon,
            runs=2_000,
            confidence=confidence,
            vectorized=True,
            random_state=seed,
        )
        above += result.epsilon_lower > epsilon
    assert above <= stats.binom.ppf(1 - ALPHA, audits, 1 - confidence)
    assert above < 0.06 * audits  # Clopper–Pearson is conservative: well below 10 %.


def test_a_correct_laplace_certifies_most_of_its_epsilon():
    result = audit_mechanism(
        laplace_sums(1.0), ZERO, ONE, epsilon=1.0, runs=100_000, vectorized=True,
        random_state=0,
    )  # fmt: skip
    # The shortfall is about 10 / sqrt(runs) = 0.03 (docstring), sd about 0.005.
    assert 0.94 < result.epsilon_lower <= 1.0
    assert result.passed
    assert result.family == "threshold"
    assert "consistent with the claim" in result.verdict


@pytest.mark.slow
def test_a_million_runs_certify_epsilon_within_two_percent():
    result = audit_mechanism(
        laplace_sums(1.0), ZERO, ONE, epsilon=1.0, runs=1_000_000, vectorized=True,
        random_state=1,
    )  # fmt: skip
    assert 0.98 < result.epsilon_lower <= 1.0


def test_a_tripled_epsilon_is_flagged():
    result = audit_mechanism(
        laplace_sums(3.0), ZERO, ONE, epsilon=1.0, runs=20_000, vectorized=True,
        random_state=2,
    )  # fmt: skip
    assert not result.passed
    assert result.epsilon_lower > 2.5
    assert "VIOLATION" in result.verdict


def test_discrete_outcomes_find_randomized_response():
    result = audit_mechanism(
        randomized_response(1.0), 0, 1, epsilon=1.0, runs=100_000, vectorized=True,
        events="outcomes", random_state=3,
    )  # fmt: skip
    assert result.family == "outcomes"
    assert 0.9 < result.epsilon_lower <= 1.0
    assert "outcome in {" in result.event


def test_reachable_sets_expose_textbook_floating_point_laplace():
    # Mironov (2012): x + Laplace noise in binary floating point reaches doubles that
    # x' + noise cannot; the round trip through the other exact value shows it.
    def textbook(x, seed, size):
        return float(np.sum(x)) + np.random.default_rng(seed).laplace(0.0, 1.0, size)

    kwargs = {"epsilon": 1.0, "runs": 20_000, "vectorized": True, "exact": (0.0, 1.0)}
    broken = audit_mechanism(textbook, ZERO, ONE, random_state=4, **kwargs)
    assert broken.family == "reachable"
    assert broken.epsilon_lower > 5
    assert min(broken.counts) == 0
    safe = audit_mechanism(
        laplace_sums(1.0), ZERO, ONE, events="reachable", random_state=4, **kwargs
    )
    assert safe.epsilon_lower < 0.5


def textbook_laplace(scale: float):
    """numpy's floating-point Laplace noise of ``scale`` on the sum (Mironov 2012)."""

    def mechanism(x, seed, size):
        return float(np.sum(x)) + np.random.default_rng(seed).laplace(0.0, scale, size)

    return mechanism


@pytest.mark.parametrize(("scale", "true_epsilon"), [(1.0, 1.0), (0.5, 2.0)])
def test_the_verdict_gives_each_kind_of_violation_its_bound(scale, true_epsilon):
    # numpy's Laplace leaks through its floating-point outputs whatever its scale;
    # the noise scale's own bound must still show whether the scale is right
    # (sensitivity 1 and scale b: the true ε is 1/b).
    result = audit_mechanism(
        textbook_laplace(scale), ZERO, ONE, epsilon=1.0, runs=20_000,
        vectorized=True, random_state=12,
    )  # fmt: skip
    bounds = {b.family: b for b in result.by_family}
    assert set(bounds) == {"threshold", "reachable"}
    assert bounds["reachable"].epsilon_lower > 5
    # Shortfall at 20k runs: about 10 / sqrt(runs) = 0.07 at ε = 1, 0.11 at ε = 2.
    assert true_epsilon - 0.25 < bounds["threshold"].epsilon_lower <= true_epsilon
    assert result.family == "reachable"
    assert result.epsilon_lower == bounds["reachable"].epsilon_lower
    assert result.events_tested == 2
    sign = ">" if true_epsilon > 1 else "<="
    noise = f"noise scale: ε_lower {bounds['threshold'].epsilon_lower:.3g} {sign} 1"
    side_channel = "floating-point side channel (Mironov 2012)"
    assert noise in result.verdict
    assert f"{side_channel}: ε_lower" in result.verdict
    assert f"exceeds the claimed ε through the {side_channel}" in result.verdict
    assert "\n" not in result.verdict


def test_several_events_are_tested_with_bonferroni():
    one = audit_mechanism(
        laplace_sums(1.0), ZERO, ONE, epsilon=1.0, runs=20_000, vectorized=True,
        random_state=5,
    )  # fmt: skip
    three = audit_mechanism(
        laplace_sums(1.0), ZERO, ONE, epsilon=1.0, runs=20_000, vectorized=True,
        random_state=5, max_events=3,
    )  # fmt: skip
    # Each family that applies (thresholds; floating-point outputs) tests its own.
    assert one.events_tested == len(one.by_family) == 2
    assert three.events_tested == 3 * len(three.by_family) == 6
    assert three.probabilities[0][0] <= three.counts[0] / three.held_out[0]
    assert 0 < three.epsilon_lower <= 1.0


def test_counts_and_intervals_are_consistent():
    result = audit_mechanism(
        laplace_sums(1.0), ZERO, ONE, epsilon=1.0, runs=10_000, vectorized=True,
        random_state=6,
    )  # fmt: skip
    assert result.held_out == (5_000, 5_000)
    assert result.runs == 10_000
    for count, held, (low, high) in zip(
        result.counts, result.held_out, result.probabilities, strict=True
    ):
        assert 0 <= low <= count / held <= high <= 1
    (a_low, a_high), (b_low, b_high) = result.probabilities
    ratios = [math.log(a_low / b_high), math.log(b_low / a_high)]
    assert result.epsilon_lower == pytest.approx(max(ratios))


# Determinism and the two kinds of mechanism -------------------------------------------
@pytest.mark.slow  # starts worker processes
def test_a_seed_gives_the_same_result_for_any_number_of_jobs():
    def noisy_count(x, seed):
        return pt.discrete_laplace_mechanism(
            int(np.sum(x)),
            1.0,
            1.0,
            random_state=seed,
            accountant=pt.BudgetAccountant(),
        )

    kwargs = {"epsilon": 1.0, "runs": 1_000, "batch_size": 100, "random_state": 7}
    serial = audit_mechanism(noisy_count, ZERO, ONE, **kwargs)
    again = audit_mechanism(noisy_count, ZERO, ONE, **kwargs)
    parallel = audit_mechanism(noisy_count, ZERO, ONE, n_jobs=2, **kwargs)
    assert serial == again == parallel
    other = audit_mechanism(noisy_count, ZERO, ONE, **{**kwargs, "random_state": 8})
    assert other.counts != serial.counts


def test_random_state_accepts_a_generator_and_a_seed_sequence():
    kwargs = {"epsilon": 1.0, "runs": 1_000, "vectorized": True}
    mech = laplace_sums(1.0)
    by_sequence = audit_mechanism(
        mech, ZERO, ONE, random_state=np.random.SeedSequence(9), **kwargs
    )
    by_int = audit_mechanism(mech, ZERO, ONE, random_state=9, **kwargs)
    assert by_sequence == by_int
    by_generator = audit_mechanism(
        mech, ZERO, ONE, random_state=np.random.default_rng(9), **kwargs
    )
    assert isinstance(by_generator, AuditResult)


def test_an_estimator_is_cloned_with_its_own_seed_and_accountant():
    pair = pairs.partition_change(30, 3)
    before = len(pt.default_accountant().ledger)
    result = audit_mechanism(
        pt.PrivateKD(1, 1.0, classes=[0, 1]),
        pair.data,
        pair.neighbour,
        epsilon=1.0,
        statistic=lambda model: int(model.selection_order_[0]),
        fit_params={"cardinalities": [2, 2, 2]},
        runs=MIN_RUNS,
        random_state=10,
    )
    assert len(pt.default_accountant().ledger) == before
    assert result.family in ("threshold", "outcomes")
    assert sum(result.counts) > 0


def test_a_statistic_may_return_tuples_and_strings():
    def labelled(bit, seed, size):
        flips = randomized_response(1.0)(bit, seed, size)
        return [("yes",) if v else ("no",) for v in flips]

    result = audit_mechanism(
        labelled, 0, 1, epsilon=1.0, runs=4_000, vectorized=True, random_state=11
    )
    assert result.family == "outcomes"
    assert "('yes',)" in result.event or "('no',)" in result.event


# Input checks -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon must be finite and > 0"),
        ({"epsilon": math.nan}, ValueError, "epsilon must be finite and > 0"),
        ({"runs": MIN_RUNS - 1}, ValueError, f"runs must be >= {MIN_RUNS}"),
        ({"runs": 1000.0}, TypeError, "runs must be an int"),
        ({"confidence": 1.0}, ValueError, r"confidence must be in \(0, 1\)"),
        ({"confidence": 0.0}, ValueError, r"confidence must be in \(0, 1\)"),
        ({"confidence": True}, TypeError, "confidence must be a real number"),
        ({"events": "sniper"}, ValueError, "events must be 'auto' or among"),
        ({"events": 3}, TypeError, "events must be 'auto', a family name"),
        ({"max_events": 0}, ValueError, "max_events must be >= 1"),
        ({"batch_size": 0}, ValueError, "batch_size must be >= 1"),
        ({"n_jobs": 0}, ValueError, "n_jobs must be None, -1 or an int >= 1"),
        ({"statistic": 3}, TypeError, "statistic must be callable"),
        ({"exact": (0.0,)}, ValueError, "exact must be a pair"),
        ({"fit_params": [1]}, TypeError, "fit_params must be a dict"),
        ({"random_state": -1}, ValueError, "random_state must be a non-negative int"),
        ({"random_state": "seed"}, TypeError, "random_state must be None, an int"),
    ],
)
def test_invalid_arguments_are_named(kwargs, error, match):
    arguments = {"epsilon": 1.0, "runs": 1_000, **kwargs}
    with pytest.raises(error, match=match):
        audit_mechanism(laplace_sums(1.0), ZERO, ONE, vectorized=True, **arguments)


def test_invalid_mechanisms_are_named():
    with pytest.raises(TypeError, match="mechanism must be a callable or an estimator"):
        audit_mechanism(3, ZERO, ONE, epsilon=1.0, runs=1_000)
    with pytest.raises(ValueError, match="statistic is required for an estimator"):
        audit_mechanism(pt.PrivateKD(1, 1.0), ZERO, ONE, epsilon=1.0, runs=1_000)
    with pytest.raises(ValueError, match="vectorized=True needs a callable"):
        audit_mechanism(
            pt.PrivateKD(1, 1.0), ZERO, ONE, epsilon=1.0, runs=1_000,
            statistic=len, vectorized=True,
        )  # fmt: skip
    with pytest.raises(ValueError, match="must return size=1000 outputs, got 3"):
        audit_mechanism(
            lambda x, seed, size: [0, 1, 2], ZERO, ONE, epsilon=1.0, runs=1_000,
            vectorized=True, statistic=int,
        )  # fmt: skip
    with pytest.raises(TypeError, match="statistic must return numbers, arrays or"):
        audit_mechanism(lambda x, seed: {"a": 1}, ZERO, ONE, epsilon=1.0, runs=MIN_RUNS)


def test_result_verdict_is_one_line():
    result = AuditResult(
        1.2, 1.0, 0.95, 1000, "P[x] on data / on neighbour", "threshold",
        (10, 1), (500, 500), ((0.01, 0.03), (0.0, 0.01)), 1,
    )  # fmt: skip
    assert not result.passed
    assert "\n" not in result.verdict
    assert str(result) == result.verdict
    assert result.verdict.startswith("ε_lower = 1.2000 > claimed ε = 1")


# Pairs --------------------------------------------------------------------------------
def differing_rows(pair) -> set[int]:
    parts = (
        zip(pair.data, pair.neighbour, strict=True)
        if isinstance(pair.data, tuple)
        else [(pair.data, pair.neighbour)]
    )
    rows: set[int] = set()
    for a, b in parts:
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape
        differ = (a != b).reshape(a.shape[0], -1).any(axis=1)
        rows |= set(np.flatnonzero(differ).tolist())
    return rows


@pytest.mark.parametrize(
    "pair",
    [
        pairs.extreme_record(5, (-1.0, 2.0), n_columns=3, row=2),
        pairs.rare_category(6, [3, 5], column=1),
        pairs.threshold_crossing(10, [2, 3], 4),
        pairs.partition_change(8, 4),
        pairs.partition_change(8, 3, background="alternating"),
        pairs.flipped_label(6, 2.0, n_columns=2),
        pairs.single_holder_label(7, 1.0, n_classes=3),
        pairs.local_sensitivity_extremes((0.0, 1.0), mechanism="idp_ls"),
        pairs.local_sensitivity_extremes((0.0, 1.0), mechanism="idp_cbls"),
        pairs.rank_shift(9, 3, (0.0, 20.0)),
    ],
    ids=lambda pair: pair.description[:40],
)
def test_every_pair_differs_in_exactly_its_changed_record(pair):
    assert differing_rows(pair) == {pair.changed}
    data, neighbour = pair
    assert data is pair.data
    assert neighbour is pair.neighbour


def test_pairs_reach_their_extremes():
    X = pairs.extreme_record(4, (0.0, 5.0))
    assert X.data.sum() == 0
    assert X.neighbour.sum() == 5
    rare = pairs.rare_category(5, [2, 7], column=1)
    assert rare.neighbour[0].tolist() == [0, 6]
    assert 6 not in rare.data[:, 1]
    crossing = pairs.threshold_crossing(10, [2, 2], 3)
    in_cell = lambda codes: int(np.all(codes == 1, axis=1).sum())  # noqa: E731
    assert (in_cell(crossing.data), in_cell(crossing.neighbour)) == (3, 4)
    (X0, y0), (X1, y1) = pairs.partition_change(10, 3, background="alternating")
    assert X0[0].tolist() == [1, 0, 0]
    assert X1[0].tolist() == [0, 1, 1]
    assert y0.sum() == y1.sum() == 5
    (F0, l0), (_F1, l1) = pairs.flipped_label(5, 3.0)
    assert np.linalg.norm(F0[0]) == 3.0
    assert (l0[0], l1[0]) == (1, 0)
    (_, s0), (_, s1) = pairs.single_holder_label(6, 1.0, n_classes=4)
    assert (s0 == 3).sum() == 1
    assert (s1 == 3).sum() == 0


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: pairs.extreme_record(1, (0, 1)), ValueError, "n_rows must be >= 2"),
        (lambda: pairs.extreme_record(3, (1, 0)), ValueError, "bounds must be finite"),
        (lambda: pairs.rare_category(3, [1, 2]), ValueError, "cardinalities must be"),
        (lambda: pairs.rare_category(3, [2], column=1), ValueError, "column must be"),
        (
            lambda: pairs.threshold_crossing(4, [2], 3),
            ValueError,
            "n_rows must be >= 5",
        ),
        (lambda: pairs.partition_change(8, 1), ValueError, "n_columns must be >= 2"),
        (
            lambda: pairs.partition_change(8, 2, background="x"),
            ValueError,
            "background",
        ),
        (lambda: pairs.flipped_label(5, -1.0), ValueError, "norm must be finite"),
        (
            lambda: pairs.single_holder_label(5, 1.0, n_classes=1),
            ValueError,
            "n_classes",
        ),
        (
            lambda: pairs.local_sensitivity_extremes((0, 1), mechanism="dp"),
            ValueError,
            "mechanism must be 'idp_ls' or 'idp_cbls'",
        ),
        (lambda: pairs.rank_shift(10, 3, (0, 20)), ValueError, "multiple of k=3"),
        (lambda: pairs.rank_shift(9, 3, (0, 5)), ValueError, r"bounds must contain"),
        (
            lambda: pairs.replace_record((ZERO, ZERO), 0, (1.0,)),
            ValueError,
            "record must have one part per part of data",
        ),
        (lambda: pairs.replace_record(ZERO, 10, 1.0), ValueError, r"row must be in"),
    ],
)
def test_pair_arguments_are_checked(call, error, match):
    with pytest.raises(error, match=match):
        call()
