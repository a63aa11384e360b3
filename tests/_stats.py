"""Statistical helpers shared by the distribution tests.

Every test runs at ALPHA = 1e-6 with a fixed seed (a correct sampler almost never
fails), and the same test function is shown to reject a sampler whose scale is off by
the factors in WRONG_SCALES (a power check).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

ALPHA = 1e-6
WRONG_SCALES = [0.7, 1.3]


def ks_pvalue(samples, frozen) -> float:
    """Kolmogorov-Smirnov p-value of continuous samples against a scipy distribution."""
    return float(stats.kstest(samples, frozen.cdf).pvalue)


def chi2_pvalue(observed, expected_probs) -> float:
    """Chi-squared p-value of counts against probabilities; bins with an expected
    count below 5 are pooled into one (or into the largest bin if still too small)."""
    observed = np.asarray(observed, dtype=float)
    probs = np.asarray(expected_probs, dtype=float)
    total = observed.sum()
    expected = probs / probs.sum() * total
    small = expected < 5
    if small.any():
        pooled_obs, pooled_exp = observed[small].sum(), expected[small].sum()
        observed, expected = observed[~small], expected[~small]
        if pooled_exp >= 5:
            observed = np.append(observed, pooled_obs)
            expected = np.append(expected, pooled_exp)
        else:
            biggest = int(np.argmax(expected))
            observed[biggest] += pooled_obs
            expected[biggest] += pooled_exp
    if len(observed) < 2:
        return 1.0
    return float(stats.chisquare(observed, expected).pvalue)


def chi2_discrete_pvalue(samples, frozen) -> float:
    """Chi-squared p-value of integer samples against a scipy discrete distribution:
    one bin per integer with expected count >= 5, both tails pooled."""
    samples = np.asarray(samples)
    n = len(samples)
    lo, hi = int(frozen.ppf(1e-9)) - 1, int(frozen.ppf(1 - 1e-9)) + 1
    support = np.arange(lo, hi + 1)
    expected = n * frozen.pmf(support)
    keep = support[expected >= 5]
    a, b = int(keep.min()), int(keep.max())
    edges = np.arange(a, b + 1)
    probs = np.concatenate([[frozen.cdf(a - 1)], frozen.pmf(edges), [frozen.sf(b)]])
    observed = np.concatenate(
        [
            [np.sum(samples < a)],
            np.bincount(
                (samples[(samples >= a) & (samples <= b)] - a).astype(np.int64),
                minlength=b - a + 1,
            ),
            [np.sum(samples > b)],
        ]
    )
    return chi2_pvalue(observed, probs)


def assert_accepts(pvalue: float) -> None:
    assert pvalue > ALPHA, f"a correct sampler was rejected: p = {pvalue:.3g}"


def assert_rejects(pvalue: float) -> None:
    assert pvalue < ALPHA, f"a sampler with the wrong scale passed: p = {pvalue:.3g}"
