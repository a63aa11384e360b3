"""Time microaggregation masking against numpy.argsort and a NumPy/pandas implementation.

Run on purpose (not part of the test suite)::

    python benches/bench_microagg.py [n_rows] [n_attributes]

Defaults: 10,000,000 rows × 10 attributes of uniform reals. Side by side in one process:

- ``numpy.argsort`` of every column (stable): the floor of any ranking method;
- ``MicroaggregationMasker`` with each mechanism (k = 10), on every core and on one
  (``n_threads=1``: the same single core the NumPy/pandas version runs on);
- a straightforward NumPy/pandas implementation of the same mechanism (stable argsort,
  ``groupby`` statistics per cluster, textbook float Laplace noise), written here.

Peak memory is the growth of the process's peak resident set (``VmHWM``, reset through
``/proc/self/clear_refs`` before each contender) over the input's size.

Every contender is timed in wall-clock seconds (the targets: privtab at most 2× argsort
and at least 20× faster than the NumPy/pandas version) and in CPU seconds of the whole
process (all threads), which a busy machine distorts less. Writes
``benches/results/microagg.md`` and ``benches/results/microagg.json``.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import privtab as pt
from privtab.accountant import split_budget

from _timing import PeakMemory, Stopwatch

K = 10
RESULTS = Path(__file__).resolve().parent / "results"


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


def measure(fn, size):
    """Wall seconds, CPU seconds and peak memory growth (× ``size``) of one call."""
    with PeakMemory() as memory, Stopwatch() as watch:
        fn()
    return {
        "wall_s": watch.seconds,
        "cpu_s": watch.cpu_seconds,
        "memory_x_input": (memory.grown_bytes or 0) / size,
    }


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    d = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    X = np.asfortranarray(np.random.default_rng(0).uniform(0, 100, size=(n, d)))
    size = X.nbytes
    bounds = [(0.0, 100.0)] * d
    epsilons = split_budget(1.0, [1.0] * d)
    load_before = os.getloadavg()[0]
    print(f"{n:,} rows × {d} attributes ({size / 2**20:,.0f} MiB), k = {K}")

    argsort = measure(
        lambda: [np.argsort(X[:, a], kind="stable") for a in range(d)], size
    )
    print(f"numpy.argsort (stable), every column: {argsort}", flush=True)
    rows = []
    for mechanism in ("dp", "idp_ls", "idp_cbls"):
        maskers = [
            pt.MicroaggregationMasker(
                K,
                1.0,
                mechanism=mechanism,
                bounds=bounds,
                random_state=1,
                accountant=pt.BudgetAccountant(),
                n_threads=n_threads,
            )
            for n_threads in (None, 1)
        ]
        ours, ours_one = (
            measure(lambda masker=masker: masker.fit_transform(X), size)
            for masker in maskers
        )
        rng = np.random.default_rng(1)
        naive = measure(
            lambda mechanism=mechanism, rng=rng: naive_mask(
                X, K, mechanism, bounds, epsilons, rng
            ),
            size,
        )
        row = {
            "mechanism": mechanism,
            "privtab": ours,
            "privtab_one_thread": ours_one,
            "pandas": naive,
        }
        for clock in ("wall_s", "cpu_s"):
            row[f"privtab_over_argsort_{clock}"] = ours[clock] / argsort[clock]
            row[f"pandas_over_privtab_{clock}"] = naive[clock] / ours[clock]
        row["pandas_over_privtab_one_thread_wall_s"] = (
            naive["wall_s"] / ours_one["wall_s"]
        )
        rows.append(row)
        print(row, flush=True)
    write(n, d, size, argsort, rows, (load_before, os.getloadavg()[0]))


def write(n, d, size, argsort, rows, load) -> None:
    command = "python benches/bench_microagg.py" + (
        f" {n} {d}" if (n, d) != (10_000_000, 10) else ""
    )
    lines = [
        "# Microaggregation masking: privtab vs numpy.argsort vs NumPy/pandas",
        "",
        f"`{command}`: {n:,} rows × {d} uniform attributes ({size / 2**20:,.0f} MiB), "
        f"k = {K}, one call each, side by side in one process. "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; privtab uses every core (one in the "
        "rows marked 1 thread), argsort and pandas one. Load average "
        f"{load[0]:.1f} before, {load[1]:.1f} after (a busy machine inflates "
        "wall-clock times; CPU seconds count every thread of the process).",
        "",
        "Targets: privtab / argsort ≤ 2 and pandas / privtab ≥ 20 (wall clock); peak "
        "memory ≤ 3× the input.",
        "",
        "| contender | wall s | CPU s | / argsort (wall) | / argsort (CPU) "
        "| pandas / privtab (wall) | pandas / privtab (CPU) | peak memory |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        f"| numpy.argsort (stable), every column | {argsort['wall_s']:.2f} | "
        f"{argsort['cpu_s']:.2f} | 1 | 1 | | | {argsort['memory_x_input']:.2f}× |",
    ]
    for r in rows:
        ours, one, naive = r["privtab"], r["privtab_one_thread"], r["pandas"]
        lines.append(
            f"| privtab {r['mechanism']} | {ours['wall_s']:.2f} | {ours['cpu_s']:.2f} | "
            f"{r['privtab_over_argsort_wall_s']:.2f} | "
            f"{r['privtab_over_argsort_cpu_s']:.2f} | "
            f"{r['pandas_over_privtab_wall_s']:.1f}× | "
            f"{r['pandas_over_privtab_cpu_s']:.1f}× | {ours['memory_x_input']:.2f}× |"
        )
        lines.append(
            f"| privtab {r['mechanism']}, 1 thread | {one['wall_s']:.2f} | "
            f"{one['cpu_s']:.2f} | {one['wall_s'] / argsort['wall_s']:.2f} | "
            f"{one['cpu_s'] / argsort['cpu_s']:.2f} | "
            f"{r['pandas_over_privtab_one_thread_wall_s']:.1f}× | | "
            f"{one['memory_x_input']:.2f}× |"
        )
        lines.append(
            f"| pandas {r['mechanism']} | {naive['wall_s']:.2f} | {naive['cpu_s']:.2f} | "
            f"{naive['wall_s'] / argsort['wall_s']:.2f} | "
            f"{naive['cpu_s'] / argsort['cpu_s']:.2f} | | | "
            f"{naive['memory_x_input']:.2f}× |"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "microagg.md").write_text("\n".join(lines) + "\n")
    (RESULTS / "microagg.json").write_text(
        json.dumps(
            {
                "command": command,
                "n_rows": n,
                "n_attributes": d,
                "k": K,
                "load_average": load,
                "argsort": argsort,
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
