"""Distribution tests of the raw samplers of privtab._core.

Every statistical test runs at ALPHA = 1e-6 with a fixed seed, and the same test
function is shown to reject a sampler whose scale is off by +-30 % (power check).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from privtab import _core

from _stats import (
    WRONG_SCALES,
    assert_accepts,
    assert_rejects,
    chi2_discrete_pvalue,
    chi2_pvalue,
    ks_pvalue,
)

CHUNK = 1 << 16


# Continuous samplers ------------------------------------------------------------------
@pytest.mark.parametrize("scale", [0.3, 1.0, 25.0])
def test_laplace_matches_scipy(scale):
    samples = _core.laplace_samples(40_000, scale, 11)
    assert_accepts(ks_pvalue(samples, stats.laplace(scale=scale)))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_laplace_test_has_power(factor):
    samples = _core.laplace_samples(40_000, 2.0 * factor, 12)
    assert_rejects(ks_pvalue(samples, stats.laplace(scale=2.0)))


def test_gumbel_matches_scipy():
    samples = _core.gumbel_samples(40_000, 13)
    assert np.all(np.isfinite(samples))
    assert_accepts(ks_pvalue(samples, stats.gumbel_r()))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_gumbel_test_has_power(factor):
    samples = _core.gumbel_samples(40_000, 14) * factor
    assert_rejects(ks_pvalue(samples, stats.gumbel_r()))


@pytest.mark.parametrize("mean", [0.01, 1.0, 300.0])
def test_exponential_matches_scipy(mean):
    samples = _core.exponential_samples(40_000, mean, 15)
    assert samples.min() >= 0
    assert_accepts(ks_pvalue(samples, stats.expon(scale=mean)))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_exponential_test_has_power(factor):
    samples = _core.exponential_samples(40_000, 3.0 * factor, 16)
    assert_rejects(ks_pvalue(samples, stats.expon(scale=3.0)))


# Discrete Laplace ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sensitivity", "epsilon"),
    [(1.0, 1.0), (1.0, 0.3), (0.7, 0.45), (2.0, 5.0), (1.0, 0.02), (3.0, 1e-9)],
)
def test_discrete_laplace_exact_pmf(sensitivity, epsilon):
    samples = _core.discrete_laplace_samples(60_000, sensitivity, epsilon, 21)
    assert samples.dtype == np.int64
    # scipy's dlaplace(a) has pmf tanh(a/2) exp(-a |k|), a = 1 / scale.
    a = epsilon / sensitivity
    if a < 1e-3:
        # Too many bins for a pmf table: the scale is checked through quantiles of |Z|,
        # which is geometric with ratio exp(-a) shifted by the sign convention.
        scaled = np.abs(samples) * a
        q = np.exp(-a)
        p_zero = (1 - q) / (1 + q)
        assert abs(np.mean(samples == 0) - p_zero) < 1e-3
        assert_accepts(ks_pvalue(scaled[scaled > 0], stats.expon()))
        return
    assert_accepts(chi2_discrete_pvalue(samples, stats.dlaplace(a)))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_discrete_laplace_test_has_power(factor):
    samples = _core.discrete_laplace_samples(60_000, 1.0 * factor, 0.3, 22)
    assert_rejects(chi2_discrete_pvalue(samples, stats.dlaplace(0.3)))


@pytest.mark.parametrize(
    ("sensitivity", "epsilon"),
    [
        (1.0, 3.0),  # numerator 1: no offset, two tries per random word
        (1.0, 3 * 2.0**-10),  # numerator 2^10: two tries per word, lazy last offset bit
        (1.0, 0.1),  # numerator 2^55 below D = 32 den: two tries, lazy offset bits
        (2.0, 0.01),  # numerator 2^60 above D: two tries, lazy offset bits
        (3.0, 0.1),  # numerator 3 * 2^55 (not a power of two) below D
        (3.0, 0.05),  # numerator 3 * 2^56 above D
        (1.0, 2.0**-10),  # scale 1024 = 2^10 / 1: one try per word, offset in the word
        (1.0, 1e-3),  # numerator 2^60: one try per word, lazy offset bits
    ],
)
def test_discrete_laplace_bulk_paths_exact_pmf(sensitivity, epsilon):
    # Each scale takes one path of the batched sampler (half a random word or one per
    # variate).
    samples = _core.discrete_laplace_samples(200_000, sensitivity, epsilon, 26)
    assert_accepts(chi2_discrete_pvalue(samples, stats.dlaplace(epsilon / sensitivity)))


def _residue_probs(scale: float, period: int, bins: int) -> np.ndarray:
    """Probabilities of the `bins` equal ranges of `|Z| mod period` for Z ~ DLap(scale).

    P(|Z| = m) = c q^m (twice for m >= 1), c = (1 - q) / (1 + q), q = exp(-1/scale), so
    P(|Z| mod period = r) = 2c q^r / (1 - q^period) - c [r = 0].
    """
    one_minus_q = -math.expm1(-1 / scale)
    c = one_minus_q / (2 - one_minus_q)
    width = period // bins
    starts = np.arange(bins) * width
    sums = np.exp(-starts / scale) * -np.expm1(-width / scale) / one_minus_q
    probs = 2 * c * sums / -math.expm1(-period / scale)
    probs[0] -= c
    return probs


@pytest.mark.parametrize(
    ("sensitivity", "period"),
    [(2.0**32, 2**27), (3 * 2.0**30, 3 * 2**25)],
)
def test_discrete_laplace_offset_law_inside_blocks(sensitivity, period):
    # Scale sensitivity / 1 = num: a block spans period = num / 32 magnitudes, and
    # |Z| mod period is the offset's own law, P(r) ∝ exp(-r / scale) (a 3 % slope over a
    # block). At 2^32 every offset needs its low bits (drawn lazily); 3 * 2^30 is not a
    # power of two. A uniform offset (the acceptance step left out) is rejected.
    samples = _core.discrete_laplace_samples(2_000_000, sensitivity, 1.0, 27)
    bins = 32
    residues = np.abs(samples) % period
    observed = np.bincount(residues // (period // bins), minlength=bins)
    assert len(observed) == bins
    assert_accepts(chi2_pvalue(observed, _residue_probs(sensitivity, period, bins)))
    assert_rejects(chi2_pvalue(observed, _residue_probs(1e30, period, bins)))


def test_discrete_laplace_scale_is_the_exact_ratio():
    for sensitivity, epsilon in [(1.0, 0.1), (0.7, 0.45), (3.0, 1e-9), (2.5, 8.0)]:
        num, den = _core.discrete_laplace_scale(sensitivity, epsilon)
        assert Fraction(num, den) == Fraction(sensitivity) / Fraction(epsilon)
        assert math.gcd(num, den) == 1
    with pytest.raises(ValueError, match="128-bit"):
        _core.discrete_laplace_scale(1e300, 1e-300)


@pytest.mark.parametrize(
    ("sensitivity", "epsilon", "threshold"),
    [(1.0, 0.5, 0), (2.0, 0.5, 7), (1.0, 3.0, 2), (1.0, 0.5, -1)],
)
def test_discrete_laplace_tail_exact_pmf(sensitivity, epsilon, threshold):
    samples = _core.discrete_laplace_tail_samples(
        40_000, sensitivity, epsilon, threshold, 23
    )
    assert samples.min() > threshold
    # Z - threshold is geometric on {1, 2, ...} with success 1 - exp(-epsilon/sens).
    frozen = stats.geom(1 - math.exp(-epsilon / sensitivity))
    assert_accepts(chi2_discrete_pvalue(samples - threshold, frozen))


def test_discrete_laplace_tail_below_minus_one_is_conditioned():
    samples = _core.discrete_laplace_tail_samples(40_000, 1.0, 0.5, -4, 24)
    assert samples.min() > -4
    # Condition the full pmf on Z > -4 and compare over the values -3, -2, ...
    a = 0.5
    frozen = stats.dlaplace(a)
    lo, hi = -3, 30
    support = np.arange(lo, hi + 1)
    probs = np.append(frozen.pmf(support), frozen.sf(hi))
    observed = np.append(
        np.bincount(samples[samples <= hi] - lo, minlength=hi - lo + 1),
        np.sum(samples > hi),
    )
    assert_accepts(chi2_pvalue(observed, probs))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_discrete_laplace_tail_test_has_power(factor):
    samples = _core.discrete_laplace_tail_samples(40_000, factor, 0.5, 3, 25)
    frozen = stats.geom(1 - math.exp(-0.5))
    assert_rejects(chi2_discrete_pvalue(samples - 3, frozen))


# Binomial -----------------------------------------------------------------------------
N_MAX = 2**64 - 1


@pytest.mark.parametrize(
    ("n", "p"),
    [(50, 0.1), (7, 0.5), (1000, 0.3), (10**6, 0.97), (10**12, 2e-11), (40, 0.85)],
)
def test_binomial_matches_scipy(n, p):
    samples = _core.binomial_samples(30_000, n, p, 31)
    assert samples.dtype == np.uint64
    assert_accepts(chi2_discrete_pvalue(samples.astype(np.int64), stats.binom(n, p)))


@pytest.mark.parametrize("p", [1e-18, 2.0**-70, 4e-17])
def test_binomial_huge_n_tiny_p_is_poisson(p):
    # B(2^64 - 1, p) and Poisson(np) differ by O(p) in total variation.
    samples = _core.binomial_samples(30_000, N_MAX, p, 32)
    frozen = stats.poisson(N_MAX * p)
    assert_accepts(chi2_discrete_pvalue(samples.astype(np.int64), frozen))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_binomial_test_has_power(factor):
    samples = _core.binomial_samples(30_000, N_MAX, 1e-18 * factor, 33)
    assert_rejects(
        chi2_discrete_pvalue(samples.astype(np.int64), stats.poisson(N_MAX * 1e-18))
    )


@pytest.mark.parametrize("p", [0.5, 0.3, 0.999])
def test_binomial_huge_mean(p):
    samples = _core.binomial_samples(20_000, N_MAX, p, 34)
    mean = Fraction(N_MAX) * Fraction(p)
    sd = math.sqrt(N_MAX * p * (1 - p))
    # Standardise with exact integer arithmetic: the variates are near 2^63.
    z = np.array([float(Fraction(int(s)) - mean) / sd for s in samples])
    assert_accepts(ks_pvalue(z, stats.norm()))
    # The low bits are random too (f64-based samplers lose them above 2^53).
    low = np.bincount((samples % np.uint64(16)).astype(np.int64), minlength=16)
    assert_accepts(chi2_pvalue(low, np.full(16, 1 / 16)))


@pytest.mark.parametrize("factor", WRONG_SCALES)
def test_binomial_huge_mean_test_has_power(factor):
    # The sd scales with sqrt(p(1-p)); test variates of B(n, p') standardised for p.
    p = 0.01
    samples = _core.binomial_samples(20_000, N_MAX, p, 35)
    mean = Fraction(N_MAX) * Fraction(p)
    sd = math.sqrt(N_MAX * p * (1 - p))
    z = np.array([float(Fraction(int(s)) - mean) / sd for s in samples]) * factor
    assert_rejects(ks_pvalue(z, stats.norm()))


def test_binomial_edge_parameters():
    assert np.all(_core.binomial_samples(5, N_MAX, 1.0, 1) == np.uint64(N_MAX))
    assert np.all(_core.binomial_samples(5, N_MAX, 0.0, 1) == 0)
    assert np.all(_core.binomial_samples(5, 0, 0.4, 1) == 0)
    assert np.all(_core.binomial_samples(100, N_MAX, 5e-324, 1) == 0)
    top = _core.binomial_samples(100, N_MAX, 1 - 2.0**-53, 1)
    assert np.all(top <= np.uint64(N_MAX))
    assert np.all(top >= np.uint64(N_MAX - 10_000))


# sample_distinct ----------------------------------------------------------------------
@given(
    range_=st.one_of(st.integers(1, 200), st.integers(1, 2**64)),
    k=st.integers(0, 300),
    seed=st.integers(0, 2**64 - 1),
)
def test_sample_distinct_sorted_distinct_in_range(range_, k, seed):
    k = min(k, range_)
    out = _core.sample_distinct(range_, k, seed)
    assert out.dtype == np.uint64
    assert len(out) == k
    values = [int(v) for v in out]
    assert values == sorted(set(values))
    assert all(0 <= v < range_ for v in values)


@pytest.mark.parametrize(
    ("range_", "k"), [(2**64, 100_000), (10**6, 600_000), (10**6, 200)]
)
def test_sample_distinct_uniform_over_bins(range_, k):
    out = _core.sample_distinct(range_, k, 41)
    bins = (out.astype(object) * 16 // range_).astype(np.int64)
    counts = np.bincount(bins, minlength=16)
    # Without replacement the bin counts are hypergeometric; the multinomial chi-square
    # overstates their variance, which only makes the test conservative.
    assert_accepts(chi2_pvalue(counts, np.full(16, 1 / 16)))


@pytest.mark.parametrize(("range_", "k"), [(6, 3), (9, 2), (5, 4)])
def test_sample_distinct_every_subset_equally_likely(range_, k):
    subsets = {s: i for i, s in enumerate(itertools.combinations(range(range_), k))}
    counts = np.zeros(len(subsets))
    for seed in range(400 * len(subsets)):
        counts[
            subsets[tuple(int(v) for v in _core.sample_distinct(range_, k, seed))]
        ] += 1
    assert counts.min() > 0
    assert_accepts(chi2_pvalue(counts, np.full(len(subsets), 1 / len(subsets))))


def test_sample_distinct_subset_test_has_power():
    # A sampler that over-weights subsets containing 0 by 30 % must be rejected.
    subsets = list(itertools.combinations(range(6), 3))
    weights = np.array([1.3 if 0 in s else 1.0 for s in subsets])
    rng = np.random.default_rng(42)
    counts = np.bincount(
        rng.choice(len(subsets), size=400 * len(subsets), p=weights / weights.sum()),
        minlength=len(subsets),
    )
    assert_rejects(chi2_pvalue(counts, np.full(len(subsets), 1 / len(subsets))))


def test_sample_distinct_full_range_and_errors():
    assert len(_core.sample_distinct(2**64, 0, 1)) == 0
    assert list(_core.sample_distinct(3, 3, 1)) == [0, 1, 2]
    with pytest.raises(ValueError, match="k must be <= range"):
        _core.sample_distinct(10, 11, 1)
    with pytest.raises(ValueError, match=r"range must be <= 2\*\*64"):
        _core.sample_distinct(2**64 + 1, 1, 1)
    with pytest.raises(MemoryError, match="cannot allocate"):
        _core.sample_distinct(2**64, 2**61, 1)


# Determinism and threads --------------------------------------------------------------
N_CHUNKED = 2 * CHUNK + 5

SAMPLERS = {
    "laplace": lambda seed, threads: _core.laplace_samples(
        N_CHUNKED, 1.5, seed, threads
    ),
    "gumbel": lambda seed, threads: _core.gumbel_samples(N_CHUNKED, seed, threads),
    "exponential": lambda seed, threads: _core.exponential_samples(
        N_CHUNKED, 2.0, seed, threads
    ),
    "discrete_laplace": lambda seed, threads: _core.discrete_laplace_samples(
        N_CHUNKED, 1.0, 0.7, seed, threads
    ),
    "discrete_laplace_tail": lambda seed, threads: _core.discrete_laplace_tail_samples(
        N_CHUNKED, 1.0, 0.7, 4, seed, threads
    ),
    "binomial": lambda seed, threads: _core.binomial_samples(
        N_CHUNKED, N_MAX, 0.25, seed, threads
    ),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_same_seed_same_output_any_thread_count(name):
    sampler = SAMPLERS[name]
    one = sampler(7, 1)
    np.testing.assert_array_equal(one, sampler(7, 2))
    np.testing.assert_array_equal(one, sampler(7, None))
    assert not np.array_equal(one, sampler(8, 1))


def test_sample_distinct_same_seed_same_output():
    a = _core.sample_distinct(2**64, 1000, 5)
    np.testing.assert_array_equal(a, _core.sample_distinct(2**64, 1000, 5))
    assert not np.array_equal(a, _core.sample_distinct(2**64, 1000, 6))


def test_no_seed_uses_fresh_entropy():
    assert not np.array_equal(
        _core.laplace_samples(10, 1.0), _core.laplace_samples(10, 1.0)
    )


# Validation of the raw bindings -------------------------------------------------------
def test_raw_sampler_validation():
    with pytest.raises(ValueError, match="scale must be finite and > 0"):
        _core.laplace_samples(3, 0.0)
    with pytest.raises(ValueError, match="mean must be finite and > 0"):
        _core.exponential_samples(3, float("nan"))
    with pytest.raises(ValueError, match="epsilon must be finite and > 0"):
        _core.discrete_laplace_samples(3, 1.0, -1.0)
    with pytest.raises(ValueError, match="sensitivity must be finite and > 0"):
        _core.discrete_laplace_tail_samples(3, float("inf"), 1.0, 0)
    with pytest.raises(ValueError, match="p must be a probability"):
        _core.binomial_samples(3, 10, 1.5)
    with pytest.raises(ValueError, match="n_threads must be >= 1"):
        _core.gumbel_samples(3, 1, 0)
    with pytest.raises(ValueError, match="int64 range"):
        _core.discrete_laplace_tail_samples(3, 1.0, 1.0, 2**63 - 2, 1)
    with pytest.raises(MemoryError, match="cannot allocate"):
        _core.laplace_samples(2**62, 1.0, 1)
    with pytest.raises(OverflowError):
        _core.laplace_samples(-1, 1.0)


@given(
    sensitivity=st.floats(allow_nan=True, allow_infinity=True),
    epsilon=st.floats(allow_nan=True, allow_infinity=True),
    threshold=st.integers(-(2**63), 2**63 - 1),
)
def test_discrete_laplace_never_panics(sensitivity, epsilon, threshold):
    try:
        samples = _core.discrete_laplace_samples(20, sensitivity, epsilon, 1)
        assert samples.shape == (20,)
        tail = _core.discrete_laplace_tail_samples(
            20, sensitivity, epsilon, threshold, 1
        )
        assert np.all(tail > threshold)
    except ValueError:
        pass


@given(n=st.integers(0, 2**64 - 1), p=st.floats(allow_nan=True, allow_infinity=True))
def test_binomial_never_panics(n, p):
    try:
        samples = _core.binomial_samples(20, n, p, 1)
    except ValueError:
        assert not 0 <= p <= 1
        return
    assert all(0 <= int(s) <= n for s in samples)


def test_discrete_laplace_tail_at_the_int64_limit_raises_instead_of_panicking():
    with pytest.raises(ValueError, match="exceeds the int64 range"):
        _core.discrete_laplace_tail_samples(4, 1.0, 1.0, 2**63 - 1, 5)
