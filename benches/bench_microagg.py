"""Time microaggregation masking against numpy.argsort and a NumPy/pandas implementation.

Run on purpose (not part of the test suite)::

    python benches/bench_microagg.py [n_rows] [n_attributes]

Defaults: 10,000,000 rows × 10 attributes of uniform reals. Side by side in one process:

- ``numpy.argsort`` of every column (stable): the floor of any ranking method;
- ``MicroaggregationMasker`` with each mechanism (k = 10);
- a straightforward NumPy/pandas implementation of the same mechanism (stable argsort,
  ``groupby`` statistics per cluster, textbook float Laplace noise), written here.

Peak memory is the growth of the process's peak resident set (``VmHWM``, reset through
``/proc/self/clear_refs`` before each contender) over the input's size.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

import privtab as pt
from privtab.accountant import split_budget

from _timing import best_of

K = 10


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def peak_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def current_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def naive_mask(X, k, mechanism, bounds, epsilons, rng):
    """Individual-ranking microaggregation the way one would write it in pandas."""
    n, d = X.shape
    out = np.empty_like(X)
    n_clusters = max(n // k, 1)
    for a in range(d):
        x = X[:, a]
        lo, hi = bounds[a]
        order = np.argsort(x, kind="stable")
        labels = np.empty(n, dtype=np.int64)
        labels[order] = np.minimum(np.arange(n) // k, n_clusters - 1)
        stats = (
            pd.DataFrame({"x": x, "c": labels})
            .groupby("c")["x"]
            .agg(["mean", "min", "max", "size"])
        )
        size = stats["size"].to_numpy()
        centroid = stats["mean"].to_numpy()
        if mechanism == "dp":
            sens = (hi - lo) / size
        elif mechanism == "idp_ls":
            sens = np.maximum(hi - stats["min"], stats["max"] - lo).to_numpy() / size
        else:
            ordered = x[order]
            starts = np.arange(n_clusters) * k
            ends = np.append(starts[1:], n)
            a1, a2, a3 = ordered[starts], ordered[starts + 1], ordered[starts + 2]
            am, am1, am2 = ordered[ends - 1], ordered[ends - 2], ordered[ends - 3]
            centroid = centroid + (a2 - a1 + am1 - am) / size
            up = np.abs(am - a2) + np.abs(a3 - a2) + np.abs(am - am1)
            down = np.abs(a1 - am1) + np.abs(am2 - am1) + np.abs(a1 - a2)
            sens = np.maximum(up, down) / size
        noisy = np.clip(centroid + rng.laplace(0.0, sens / epsilons[a]), lo, hi)
        out[:, a] = noisy[labels]
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    d = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    X = np.asfortranarray(np.random.default_rng(0).uniform(0, 100, size=(n, d)))
    size = X.nbytes
    bounds = [(0.0, 100.0)] * d
    epsilons = split_budget(1.0, [1.0] * d)
    print(f"{n:,} rows × {d} attributes ({size / 2**20:,.0f} MiB), k = {K}")

    def measure(fn):
        reset_peak()
        before = current_bytes()
        seconds, _ = best_of(1, fn)
        return seconds, (peak_bytes() - before) / size

    argsort_s, argsort_mem = measure(
        lambda: [np.argsort(X[:, a], kind="stable") for a in range(d)]
    )
    print(f"{'numpy.argsort (stable), every column':>44} {argsort_s:7.2f} s")
    rows = []
    for mechanism in ("dp", "idp_ls", "idp_cbls"):
        masker = pt.MicroaggregationMasker(
            K,
            1.0,
            mechanism=mechanism,
            bounds=bounds,
            random_state=1,
            accountant=pt.BudgetAccountant(),
        )
        ours, ours_mem = measure(lambda masker=masker: masker.fit_transform(X))
        rng = np.random.default_rng(1)
        naive, naive_mem = measure(
            lambda mechanism=mechanism, rng=rng: naive_mask(
                X, K, mechanism, bounds, epsilons, rng
            )
        )
        rows.append((mechanism, ours, ours_mem, naive, naive_mem))
    header = (
        f"{'mechanism':>10} {'privtab':>9} {'/argsort':>9} {'pandas':>9} "
        f"{'speed-up':>9} {'privtab mem':>12} {'pandas mem':>11}"
    )
    print(header)
    for mechanism, ours, ours_mem, naive, naive_mem in rows:
        print(
            f"{mechanism:>10} {ours:8.2f}s {ours / argsort_s:8.2f}x {naive:8.2f}s "
            f"{naive / ours:8.1f}x {ours_mem:10.2f}×in {naive_mem:9.2f}×in"
        )
    print(f"(argsort's own peak: {argsort_mem:.2f}× the input)")


if __name__ == "__main__":
    main()
