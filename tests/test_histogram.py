"""Tests of the thresholded sparse DP histogram (paper 001, §2.1).

Statistical tests run at ALPHA = 1e-6 with fixed seeds; each is paired with a power
check showing that the same test rejects a wrong scale or probability.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

import privtab as pt
from privtab import _core
from privtab.exceptions import BudgetExceededError, DomainError, PrivacyLeakWarning

from _stats import (
    ALPHA,
    WRONG_SCALES,
    assert_accepts,
    assert_rejects,
    chi2_discrete_pvalue,
    chi2_pvalue,
    ks_pvalue,
)


def equal_count_cells(n_cells: int, count: int) -> np.ndarray:
    """One column whose every code 0..n_cells-1 appears exactly ``count`` times."""
    return np.repeat(np.arange(n_cells), count)[:, None]


def truncated_laplace(scale: float, low: float):
    """Laplace(0, scale) conditioned on > low, as an object with a ``cdf``."""
    base = stats.laplace(scale=scale)
    mass = base.sf(low)

    class Truncated:
        @staticmethod
        def cdf(x):
            return np.clip((base.cdf(x) - base.cdf(low)) / mass, 0.0, 1.0)

    return Truncated()


def reference_keys_counts(codes: np.ndarray, cards) -> tuple[np.ndarray, np.ndarray]:
    keys = np.ravel_multi_index(codes.T, cards).astype(np.uint64)
    return np.unique(keys, return_counts=True)


# Observed cells --------------------------------------------------------------------
def test_observed_noise_is_laplace_of_scale_two_over_epsilon():
    eps, count = 0.8, 5
    codes = equal_count_cells(20_000, count)
    hist = pt.thresholded_histogram(
        codes, [20_000], eps, threshold=-200.0, random_state=1
    )
    assert len(hist) == 20_000
    noise = hist.values - count
    assert_accepts(ks_pvalue(noise, stats.laplace(scale=2 / eps)))
    for factor in WRONG_SCALES:
        assert_rejects(ks_pvalue(noise, stats.laplace(scale=2 * factor / eps)))


def test_kept_observed_cells_follow_the_conditional_laplace_tail():
    eps, count, tau = 1.0, 5, 4.0
    codes = equal_count_cells(30_000, count)
    hist = pt.thresholded_histogram(codes, [30_000], eps, threshold=tau, random_state=2)
    scale = 2 / eps
    p_keep = stats.laplace(scale=scale).sf(tau - count)
    assert_accepts(stats.binomtest(len(hist), 30_000, p_keep).pvalue)
    for factor in WRONG_SCALES:
        wrong = stats.laplace(scale=scale * factor).sf(tau - count)
        assert_rejects(stats.binomtest(len(hist), 30_000, wrong).pvalue)
    noise = hist.values - count
    assert noise.min() > tau - count
    assert_accepts(ks_pvalue(noise, truncated_laplace(scale, tau - count)))
    for factor in WRONG_SCALES:
        assert_rejects(ks_pvalue(noise, truncated_laplace(scale * factor, tau - count)))


# Empty cells ----------------------------------------------------------------------
def empty_kept(hist: pt.SparseHistogram, observed: np.ndarray):
    mask = ~np.isin(hist.keys, observed)
    return hist.keys[mask], hist.values[mask]


@pytest.mark.parametrize("noise", ["laplace", "discrete"])
def test_number_of_kept_empty_cells_is_binomial(noise):
    # About 50 kept empty cells out of 2**30.
    eps, tau = 1.0, 32.3
    cards = [1 << 10, 1 << 10, 1 << 10]
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 1 << 10, size=(50, 3))
    observed, _ = reference_keys_counts(codes, cards)
    trials = 2**30 - len(observed)
    if noise == "laplace":
        p = stats.laplace(scale=2 / eps).sf(tau)
        assert p == pytest.approx(0.5 * math.exp(-eps * tau / 2), rel=1e-12)
    else:
        p = stats.dlaplace(eps / 2).sf(math.floor(tau))
    assert _core.empty_cell_probability(eps, tau, noise) == pytest.approx(p, rel=1e-9)
    q = []
    for seed in range(300):
        hist = pt.thresholded_histogram(
            codes, cards, eps, threshold=tau, noise=noise, random_state=seed
        )
        keys, _ = empty_kept(hist, observed)
        q.append(len(keys))
    q = np.array(q)
    assert_accepts(chi2_discrete_pvalue(q, stats.binom(trials, p)))
    for factor in WRONG_SCALES:
        assert_rejects(chi2_discrete_pvalue(q, stats.binom(trials, p * factor)))


@pytest.mark.parametrize("tau", [0.0, 2.0])
def test_kept_empty_cells_are_uniform_over_the_unobserved_domain(tau):
    # Observed cells are the block of first codes 96..159: a rank-to-key mapping that
    # ignored them would land on observed keys or leave a hole in the spread.
    cards = [256, 256]
    first, second = np.meshgrid(np.arange(96, 160), np.arange(256), indexing="ij")
    codes = np.column_stack([first.ravel(), second.ravel()])
    observed, _ = reference_keys_counts(codes, cards)
    hist = pt.thresholded_histogram(codes, cards, 1.0, threshold=tau, random_state=4)
    keys, _ = empty_kept(hist, observed)
    assert np.all(np.diff(hist.keys.astype(np.int64)) > 0)
    assert not np.isin(keys, observed).any()
    unobserved = np.setdiff1d(np.arange(2**16, dtype=np.uint64), observed)
    bins = np.arange(0, 2**16 + 1, 1024)
    slots = np.histogram(unobserved, bins)[0]
    occupied = slots > 0
    got = np.histogram(keys, bins)[0]
    assert np.all(got[~occupied] == 0)
    assert_accepts(chi2_pvalue(got[occupied], slots[occupied]))
    rng = np.random.default_rng(5)
    skewed = rng.choice(unobserved[: int(0.9 * len(unobserved))], len(keys), False)
    assert_rejects(
        chi2_pvalue(np.histogram(skewed, bins)[0][occupied], slots[occupied])
    )


def test_empty_cell_values_are_threshold_plus_exponential():
    # p = exp(-16) / 2: about 62,000 kept empty cells out of 2**40.
    eps, tau = 0.5, 64.0
    rng = np.random.default_rng(6)
    cards = [1 << 20, 1 << 20]
    codes = rng.integers(0, 1 << 20, size=(100, 2))
    observed, _ = reference_keys_counts(codes, cards)
    hist = pt.thresholded_histogram(
        codes, cards, eps, threshold=tau, max_cells=10**6, random_state=7
    )
    _, values = empty_kept(hist, observed)
    assert len(values) > 20_000
    excess = values - tau
    assert_accepts(ks_pvalue(excess, stats.expon(scale=2 / eps)))
    for factor in WRONG_SCALES:
        assert_rejects(ks_pvalue(excess, stats.expon(scale=2 * factor / eps)))


# Discrete noise --------------------------------------------------------------------
def test_discrete_observed_noise_and_geometric_tail():
    eps, count = 0.6, 3
    a = eps / 2
    codes = equal_count_cells(30_000, count)
    hist = pt.thresholded_histogram(
        codes, [30_000], eps, threshold=-500.0, noise="discrete", random_state=8
    )
    assert np.array_equal(hist.values, np.round(hist.values))
    noise = (hist.values - count).astype(np.int64)
    assert_accepts(chi2_discrete_pvalue(noise, stats.dlaplace(a)))
    for factor in WRONG_SCALES:
        assert_rejects(chi2_discrete_pvalue(noise, stats.dlaplace(a / factor)))

    # P(Z > 20.5) = q^21 / (1 + q), q = exp(-0.3): about 17,600 of 2**24 cells.
    tau = 20.5
    cards = [1 << 12, 1 << 12]
    codes = np.zeros((10, 2), dtype=np.int64)
    hist = pt.thresholded_histogram(
        codes, cards, eps, threshold=tau, noise="discrete", random_state=9
    )
    values = hist.values[hist.keys != 0]
    assert np.array_equal(values, np.round(values))
    assert len(values) > 5_000
    excess = (values - (math.floor(tau) + 1)).astype(np.int64)
    q = math.exp(-a)
    assert_accepts(chi2_discrete_pvalue(excess, stats.geom(1 - q, loc=-1)))
    for factor in WRONG_SCALES:
        wrong = math.exp(-a / factor)
        assert_rejects(chi2_discrete_pvalue(excess, stats.geom(1 - wrong, loc=-1)))


# Exactness against a dense brute-force reference ----------------------------------
def dense_keep_probabilities(counts_dense, eps, tau, noise):
    """P(cell kept) when every cell of the domain is noised and thresholded."""
    if noise == "laplace":
        return stats.laplace(scale=2 / eps).sf(tau - counts_dense)
    return stats.dlaplace(eps / 2).sf(np.floor(tau) - counts_dense)


@pytest.mark.parametrize("noise", ["laplace", "discrete"])
def test_per_cell_keep_probabilities_match_the_dense_reference(noise):
    eps, tau = 1.0, 1.5
    cards = [3, 4]
    codes = np.array([[0, 0], [0, 0], [0, 0], [1, 2], [2, 3], [2, 3], [0, 1]])
    keys, counts = reference_keys_counts(codes, cards)
    dense = np.zeros(12)
    dense[keys.astype(np.int64)] = counts
    probs = dense_keep_probabilities(dense, eps, tau, noise)
    runs = 4000
    kept = np.zeros(12)
    values_of_empty = []
    columns = np.ascontiguousarray(codes.T, dtype=np.uint32)
    card_array = np.array(cards, dtype=np.uint32)
    for seed in range(runs):
        k, v = _core.thresholded_histogram(
            columns, card_array, eps, tau, noise, 10**6, seed
        )
        kept[k.astype(np.int64)] += 1
        values_of_empty.append(v[dense[k.astype(np.int64)] == 0])
    z2 = (kept - runs * probs) ** 2 / (runs * probs * (1 - probs))
    assert_accepts(float(stats.chi2.sf(z2.sum(), df=12)))
    wrong = dense_keep_probabilities(dense, eps * 1.3, tau, noise)
    z2_wrong = (kept - runs * wrong) ** 2 / (runs * wrong * (1 - wrong))
    assert_rejects(float(stats.chi2.sf(z2_wrong.sum(), df=12)))
    # Values of empty cells: the dense reference's noise conditioned on > tau.
    tail = np.concatenate(values_of_empty)
    if noise == "laplace":
        assert_accepts(ks_pvalue(tail - tau, stats.expon(scale=2 / eps)))
    else:
        excess = (tail - math.floor(tau) - 1).astype(np.int64)
        geom = stats.geom(1 - math.exp(-eps / 2), loc=-1)
        assert_accepts(chi2_discrete_pvalue(excess, geom))


# Huge domains -----------------------------------------------------------------------
def test_two_to_the_sixty_runs_as_fast_as_two_to_the_twenty():
    rng = np.random.default_rng(10)
    n, eps = 200_000, 1.0
    small = rng.integers(0, 1 << 20, size=(n, 1))
    big = np.column_stack([small[:, 0], rng.integers(0, 1 << 20, size=(n, 2))])
    timings = {}
    for name, codes, cards in [
        ("2^20", small, [1 << 20]),
        ("2^60", big, [1 << 20] * 3),
    ]:
        m = math.prod(cards)
        observed, _ = reference_keys_counts(codes, cards)
        # About 1000 kept empty cells in both domains.
        p = 1000 / (m - len(observed))
        tau = -(2 / eps) * math.log(2 * p)
        best = math.inf
        for seed in range(3):
            start = time.perf_counter()
            hist = pt.thresholded_histogram(
                codes, cards, eps, threshold=tau, random_state=seed
            )
            best = min(best, time.perf_counter() - start)
        timings[name] = best
        empty = np.count_nonzero(~np.isin(hist.keys, observed))
        assert abs(empty - 1000) < 6 * math.sqrt(1000)
    assert timings["2^60"] < 10 * timings["2^20"] + 0.05, timings


def test_full_two_to_the_64_domain():
    cards = [1 << 16] * 4
    codes = np.full((3, 4), (1 << 16) - 1)
    hist = pt.thresholded_histogram(codes, cards, 1.0, threshold=80.0, random_state=11)
    assert hist.domain_size == 2**64
    assert hist.keys.dtype == np.uint64
    assert np.all(hist.to_codes() < (1 << 16))


# Errors ------------------------------------------------------------------------------
def test_domain_above_two_to_the_64_is_a_domain_error():
    cards = [1 << 16, 1 << 16, 1 << 16, (1 << 16) + 1]
    with pytest.raises(DomainError, match=r"exceeds 2\*\*64"):
        pt.thresholded_histogram(np.zeros((2, 4), int), cards, 1.0, random_state=0)


def test_expected_output_above_max_cells_names_both_numbers():
    rng = np.random.default_rng(12)
    cards = [1 << 10, 1 << 10]
    codes = rng.integers(0, 1 << 10, size=(500, 2))
    eps, tau = 1.0, 3.0
    p = 0.5 * math.exp(-eps * tau / 2)
    # The check uses public numbers only: m·p, never the observed cells.
    expected = 2**20 * p
    mantissa, exponent = f"{expected:.4e}".split("e")
    acc = pt.BudgetAccountant(2.0)
    shown = rf"{mantissa}e{int(exponent)} empty cells.*max_cells = 1000\b"
    with pytest.raises(DomainError, match=shown):
        pt.thresholded_histogram(
            codes, cards, eps, threshold=tau, max_cells=1000, accountant=acc
        )
    assert acc.spent == 0


def test_max_cells_check_does_not_depend_on_the_data():
    cards = [1 << 10, 1 << 10]
    eps, tau = 1.0, 3.0
    one_cell = np.zeros((500, 2), dtype=np.int64)
    many_cells = np.random.default_rng(3).integers(0, 1 << 10, size=(500, 2))
    cap = int(2**20 * 0.5 * math.exp(-eps * tau / 2)) + 1
    for codes in (one_cell, many_cells):
        hist = pt.thresholded_histogram(
            codes, cards, eps, threshold=tau, max_cells=cap, random_state=0
        )
        assert len(hist) > 0
    for codes in (one_cell, many_cells):
        with pytest.raises(DomainError, match="max_cells"):
            pt.thresholded_histogram(
                codes, cards, eps, threshold=tau, max_cells=cap - 2, random_state=0
            )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon must be finite and > 0"),
        ({"epsilon": math.nan}, ValueError, "epsilon must be finite and > 0"),
        ({"epsilon": "1"}, TypeError, "epsilon must be a real number"),
        ({"A": -1.0}, ValueError, "A must be finite and >= 0"),
        ({"A": math.inf}, ValueError, "A must be finite and >= 0"),
        ({"A": None}, TypeError, "A must be a real number"),
        ({"threshold": math.nan}, ValueError, "threshold must be finite"),
        ({"threshold": 2.0**60}, ValueError, r"\|threshold\| < 2\*\*53"),
        ({"threshold": "3"}, TypeError, "threshold must be a real number"),
        ({"noise": "gaussian"}, ValueError, "noise must be 'laplace' or 'discrete'"),
        ({"noise": 1}, TypeError, "noise must be a str"),
        ({"max_cells": 0}, ValueError, "max_cells must be >= 1"),
        ({"max_cells": 1.5}, TypeError, "max_cells must be an int"),
        ({"random_state": "seed"}, TypeError, "random_state must be None"),
        ({"accountant": 1.0}, TypeError, "accountant must be a privtab"),
        ({"A": 1e300}, ValueError, "default threshold"),
    ],
)
def test_parameter_validation(kwargs, error, match):
    args = {"epsilon": 1.0, **kwargs}
    epsilon = args.pop("epsilon")
    with pytest.raises(error, match=match):
        pt.thresholded_histogram(np.zeros((4, 2), int), [2, 2], epsilon, **args)


@pytest.mark.parametrize(
    ("codes", "cards", "error", "match"),
    [
        ([[0, -1]], [2, 2], ValueError, "codes must hold codes >= 0"),
        ([[0, 2]], [2, 2], ValueError, r"codes\[0, 1\] = 2 is >= cardinality 2"),
        ([[0.0, math.nan]], [2, 2], ValueError, "finite codes"),
        ([[0.5, 1.0]], [2, 2], TypeError, "non-integral floats"),
        (np.zeros((0, 2)), [2, 2], ValueError, "must be non-empty"),
        ([[0, 1], [1]], [2, 2], ValueError, "ragged"),
        ([["a", "b"]], [2, 2], TypeError, "integer codes"),
        ([[0, 1]], [2], ValueError, "one entry per column"),
        ([[0, 1]], [2, 0], ValueError, r"must be in \[1, 2\*\*32 - 1\]"),
    ],
)
def test_data_validation(codes, cards, error, match):
    with pytest.raises(error, match=match):
        pt.thresholded_histogram(codes, cards, 1.0, random_state=0)


def test_uint32_codes_are_checked_by_the_core():
    codes = np.array([[0, 1], [1, 2]], dtype=np.uint32)
    with pytest.raises(ValueError, match="column 1 has code 2 at row 1"):
        pt.thresholded_histogram(codes, [2, 2], 1.0, random_state=0)
    with pytest.raises(ValueError, match="one entry per column"):
        pt.thresholded_histogram(codes, [2, 2, 2], 1.0, random_state=0)


def test_core_rejects_bad_arguments():
    columns = np.zeros((2, 3), dtype=np.uint32)
    cards = np.array([2, 2], dtype=np.uint32)
    with pytest.raises(ValueError, match="noise must be"):
        _core.thresholded_histogram(columns, cards, 1.0, 1.0, "normal", 10)
    with pytest.raises(ValueError, match="epsilon must be finite and > 0"):
        _core.thresholded_histogram(columns, cards, -1.0, 1.0, "laplace", 10)
    with pytest.raises(ValueError, match="threshold must be finite"):
        _core.thresholded_histogram(columns, cards, 1.0, math.inf, "discrete", 10)
    with pytest.raises(ValueError, match="C-contiguous"):
        _core.thresholded_histogram(columns[:, ::2], cards, 1.0, 1.0, "laplace", 10)
    bad = np.array([[5, 0, 0], [0, 0, 0]], dtype=np.uint32)
    with pytest.raises(ValueError, match="code 5 at row 0"):
        _core.thresholded_histogram(bad, cards, 1.0, 1.0, "laplace", 10)


def test_budget_is_checked_before_reading_data_and_spent_after():
    acc = pt.BudgetAccountant(1.0)
    pt.thresholded_histogram([[0, 1]], [2, 2], 0.75, random_state=0, accountant=acc)
    assert [tuple(e) for e in acc.ledger] == [("thresholded_histogram", 0.75)]
    with pytest.raises(BudgetExceededError):
        pt.thresholded_histogram([["not", "codes"]], [2, 2], 0.5, accountant=acc)
    with pytest.raises(ValueError, match="codes must hold codes >= 0"):
        pt.thresholded_histogram([[-1, 0]], [2, 2], 0.25, accountant=acc)
    assert acc.spent == 0.75


def test_inferred_cardinalities_warn():
    codes = np.array([[0, 1], [2, 0]])
    with pytest.warns(PrivacyLeakWarning, match="inferred from the data"):
        hist = pt.thresholded_histogram(codes, None, 1.0, random_state=0)
    assert hist.cardinalities == (3, 2)


# Inputs, determinism, decoding -----------------------------------------------------
def test_input_types_agree_and_encoded_tables_need_no_cardinalities():
    rng = np.random.default_rng(13)
    codes = rng.integers(0, 5, size=(300, 3))
    cards = [5, 5, 5]
    ref = pt.thresholded_histogram(codes, cards, 1.0, random_state=14)
    frames = [
        pd.DataFrame(codes),
        pl.DataFrame(codes, orient="row"),
        codes.astype(np.uint8),
        codes.astype(np.uint32),
        np.asfortranarray(codes.astype(np.uint32)),
        codes.astype(float),
    ]
    for frame in frames:
        got = pt.thresholded_histogram(frame, cards, 1.0, random_state=14)
        assert np.array_equal(got.keys, ref.keys)
        assert np.array_equal(got.values, ref.values)
    table = pt.EncodedTable(codes, cards)
    got = pt.thresholded_histogram(table, None, 1.0, random_state=14)
    assert np.array_equal(got.values, ref.values)
    assert got.n_rows == 300
    assert got.threshold == pytest.approx(0.5 * math.log(300))


def test_same_seed_same_output_for_one_and_two_threads():
    rng = np.random.default_rng(15)
    codes = rng.integers(0, 1 << 12, size=(300_000, 2))
    columns = np.ascontiguousarray(codes.T, dtype=np.uint32)
    cards = np.array([1 << 12, 1 << 12], dtype=np.uint32)
    for noise in ["laplace", "discrete"]:
        runs = [
            _core.thresholded_histogram(columns, cards, 1.0, 9.0, noise, 10**7, 5, t)
            for t in (1, 2, None)
        ]
        for keys, values in runs[1:]:
            assert np.array_equal(keys, runs[0][0])
            assert np.array_equal(values, runs[0][1])
        other = _core.thresholded_histogram(columns, cards, 1.0, 9.0, noise, 10**7, 6)
        assert not np.array_equal(other[1], runs[0][1])
    a = pt.thresholded_histogram(codes, cards, 1.0, A=2.0, random_state=3)
    b = pt.thresholded_histogram(codes, cards, 1.0, A=2.0, random_state=3)
    assert np.array_equal(a.keys, b.keys)
    assert np.array_equal(a.values, b.values)


def test_to_codes_and_to_records_match_numpy():
    rng = np.random.default_rng(16)
    cards = [7, 3, 11]
    codes = rng.integers(0, 3, size=(2_000, 3))
    hist = pt.thresholded_histogram(codes, cards, 0.5, threshold=0.2, random_state=17)
    cells = hist.to_codes()
    expected = np.column_stack(np.unravel_index(hist.keys.astype(np.int64), cards))
    assert np.array_equal(cells, expected)
    copies = np.maximum(np.ceil(hist.values - 0.5), 0).astype(int)
    records = hist.to_records()
    assert records.shape == (copies.sum(), 3)
    assert np.array_equal(records, np.repeat(expected, copies, axis=0))
    assert len(hist) == len(hist.keys)
    assert "SparseHistogram(n_cells=" in repr(hist)
    with pytest.raises(MemoryError, match="more than the limit of 10"):
        hist.to_records(max_records=10)
    empty = pt.SparseHistogram(
        np.zeros(0, np.uint64),
        np.zeros(0),
        cards,
        threshold=1.0,
        epsilon=1.0,
        noise="laplace",
        n_rows=1,
    )
    assert empty.to_codes().shape == (0, 3)
    assert empty.to_records().shape == (0, 3)
    with pytest.raises(ValueError, match="same length"):
        pt.SparseHistogram(
            np.zeros(2, np.uint64),
            np.zeros(1),
            cards,
            threshold=1.0,
            epsilon=1.0,
            noise="laplace",
            n_rows=1,
        )


def test_demo_section_reports_kept_cells():
    from rich.console import Console

    from privtab.cli._demo import run_demo

    console = Console(record=True, width=120)
    acc = run_demo(1.0, seed=3, progress=False, console=console, sections=["histogram"])
    text = console.export_text()
    assert "of which empty" in text
    assert "domain size" in text
    assert [tuple(e) for e in acc.ledger] == [("thresholded_histogram", 1.0)]


# No input makes the core panic ----------------------------------------------------
SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6)


def test_max_cells_above_two_to_the_64_is_capped():
    hist = pt.thresholded_histogram([[0, 1]], [2, 2], 1.0, max_cells=2**70)
    assert np.all(hist.values > hist.threshold)


@given(
    codes=st.one_of(
        hnp.arrays(
            dtype=st.sampled_from([np.int64, np.int8]),
            shape=SHAPES,
            elements=st.integers(-2, 40),
        ),
        hnp.arrays(dtype=np.uint32, shape=SHAPES, elements=st.integers(0, 40)),
        hnp.arrays(
            dtype=np.float64,
            shape=SHAPES,
            elements=st.sampled_from([0.0, 1.0, 3.0, 0.5, math.nan, -math.inf]),
        ),
    ),
    cards=st.lists(st.integers(0, 2**32), min_size=0, max_size=5),
    epsilon=st.sampled_from([1.0, 1e-300, 1e300, math.inf, -1.0]),
    threshold=st.one_of(
        st.none(), st.sampled_from([-1e15, -3.0, 0.0, 2.5, 1e15, math.nan])
    ),
    noise=st.sampled_from(["laplace", "discrete"]),
    max_cells=st.sampled_from([1, 100, 10**5]),
)
def test_no_input_makes_the_core_panic(
    codes, cards, epsilon, threshold, noise, max_cells
):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            hist = pt.thresholded_histogram(
                codes,
                cards or None,
                epsilon,
                threshold=threshold,
                noise=noise,
                max_cells=max_cells,
                random_state=0,
            )
        except (ValueError, TypeError, MemoryError):
            return
    assert np.all(hist.values > hist.threshold)
    assert np.all(np.diff(hist.keys.astype(object)) > 0) if len(hist) > 1 else True


def test_alpha_is_the_shared_level():
    assert ALPHA == 1e-6


@pytest.mark.parametrize("noise", ["laplace", "discrete"])
def test_c_ordered_codes_read_in_place_give_the_same_release(noise):
    """C-ordered integer codes are counted in place, then released from their counts:
    bit for bit the fused kernel's release of the same rows as uint32 columns."""
    rng = np.random.default_rng(41)
    cards = [6, 250, 9, 40]
    codes = rng.integers(0, [3, 20, 9, 5], (60_000, 4)).astype(np.uint8)
    columns = np.asfortranarray(codes.astype(np.uint32))  # the general path
    for seed in (0, 1, 2):
        acc = pt.BudgetAccountant()
        in_place = pt.thresholded_histogram(
            codes, cards, 1.0, noise=noise, random_state=seed, accountant=acc
        )
        fused = pt.thresholded_histogram(
            columns,
            cards,
            1.0,
            noise=noise,
            random_state=seed,
            accountant=pt.BudgetAccountant(),
        )
        np.testing.assert_array_equal(in_place.keys, fused.keys)
        np.testing.assert_array_equal(in_place.values, fused.values)
        assert acc.spent == 1.0
    assert len(in_place) > 100
    bad = codes.copy()
    bad[123, 2] = 9
    messages = []
    for layout in (bad, np.asfortranarray(bad)):
        acc = pt.BudgetAccountant()
        with pytest.raises(ValueError, match=r"codes\[123, 2\] = 9") as caught:
            pt.thresholded_histogram(layout, cards, 1.0, random_state=0, accountant=acc)
        messages.append(str(caught.value))
        assert acc.spent == 0
    assert messages[0] == messages[1]
