"""Time the thresholded sparse DP histogram against NumPy counting and OpenDP.

Run on purpose (not in the test suite)::

    python benches/bench_histogram.py [n_rows]

Data: 10M rows over 4 columns of 2**10 codes (a 2**40-cell domain), drawn from about
1M distinct cells with skewed frequencies. Threshold: ``A = 2`` (τ = 2·ln(n)/ε), so
``p = 1/(2n)`` and about ``m / (2n) ≈ 55,000`` empty cells are kept; the default
``A = 0.5`` would keep ``m / (2·sqrt(n)) ≈ 1.7e8`` of them.

Baselines, side by side in one process:

- ``numpy.unique(keys, return_counts=True)`` on the same mixed-radix keys (the count
  alone: no noise, no empty cells);
- OpenDP ``make_count_by >> then_laplace_threshold`` with the same scale 2/ε and
  threshold (noise on the observed keys only; OpenDP never adds empty cells, which is
  why its guarantee is (ε, δ) rather than ε).

Writes ``benches/results/histogram.json``.
"""

from __future__ import annotations

import json
import math
import platform
import sys
from pathlib import Path

import numpy as np

import privtab
from privtab import _core, thresholded_histogram
from privtab.mixed_radix import mixed_radix_encode

from _timing import Stopwatch, best_interleaved, best_of, best_seconds

EPSILON = 1.0
A = 2.0
CARDS = [1 << 10] * 4
N_CELLS = 1_000_000


def make_data(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = math.prod(CARDS)
    cells = np.unique(rng.integers(0, m, size=int(N_CELLS * 1.01), dtype=np.uint64))
    cells = rng.permutation(cells[:N_CELLS])
    # Cell i has frequency ∝ i^(-1/2): a few thousand rows for the first cells, about
    # five for the last, so nearly all 1M cells are observed.
    index = (N_CELLS * rng.random(n) ** 2).astype(np.int64)
    cell_codes = np.column_stack(np.unravel_index(cells.astype(np.int64), CARDS))
    return np.asfortranarray(cell_codes[index].astype(np.uint32))


def opendp_measurement(scale: float, threshold: float):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T="i64")), dp.symmetric_distance()
    return (
        space
        >> dp.t.then_count_by(TV="i64")
        >> dp.m.then_laplace_threshold(scale=scale, threshold=math.ceil(threshold))
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    codes = make_data(n)
    keys = mixed_radix_encode(codes, CARDS)
    n_distinct = len(np.unique(keys))
    tau = A * math.log(n) / EPSILON
    print(
        f"n = {n:,} rows, d = 4, domain 2^40, {n_distinct:,} distinct cells, "
        f"epsilon = {EPSILON}, A = {A} (tau = {tau:.2f})"
    )
    results: dict[str, object] = {
        "n_rows": n,
        "domain_size": math.prod(CARDS),
        "n_distinct_cells": n_distinct,
        "epsilon": EPSILON,
        "A": A,
        "threshold": tau,
        "machine": platform.machine(),
    }

    t_api, hist = best_of(
        3, lambda: thresholded_histogram(codes, CARDS, EPSILON, A=A, random_state=1)
    )
    observed = np.isin(hist.keys, keys)
    print(
        f"privtab thresholded_histogram: {t_api:.3f} s  ({len(hist):,} cells kept: "
        f"{int(observed.sum()):,} observed, {int((~observed).sum()):,} empty)"
    )
    columns = np.ascontiguousarray(codes.T)
    cards = np.array(CARDS, dtype=np.uint32)
    t_core = best_seconds(
        3,
        lambda: _core.thresholded_histogram(
            columns, cards, EPSILON, tau, "laplace", 10**7, 1
        ),
    )
    print(f"privtab core kernel (codes checked as counted): {t_core:.3f} s")
    t_disc = best_seconds(
        3,
        lambda: thresholded_histogram(
            codes, CARDS, EPSILON, A=A, noise="discrete", random_state=1
        ),
    )
    print(f"privtab thresholded_histogram, discrete noise: {t_disc:.3f} s")
    t_np = best_seconds(2, lambda: np.unique(keys, return_counts=True))
    print(
        f"numpy.unique(keys, return_counts=True): {t_np:.3f} s  "
        f"(privtab / numpy = {t_api / t_np:.2f})"
    )
    # NumPy counts on one thread: privtab on one thread too, the two interleaved.
    with privtab.threads(1):
        t_one, t_np_one = best_interleaved(
            3,
            lambda: thresholded_histogram(codes, CARDS, EPSILON, A=A, random_state=1),
            lambda: np.unique(keys, return_counts=True),
        )
    print(
        f"one thread: privtab {t_one:.3f} s, numpy.unique {t_np_one:.3f} s "
        f"(privtab / numpy = {t_one / t_np_one:.2f})"
    )
    results.update(
        privtab_seconds=t_api,
        privtab_core_seconds=t_core,
        privtab_discrete_seconds=t_disc,
        numpy_unique_seconds=t_np,
        one_thread_privtab_seconds=t_one,
        one_thread_numpy_unique_seconds=t_np_one,
        cells_kept=len(hist),
        observed_cells_kept=int(observed.sum()),
        empty_cells_kept=int((~observed).sum()),
    )

    try:
        measurement = opendp_measurement(2.0 / EPSILON, tau)
    except ImportError:
        print("OpenDP not installed (pip install opendp): skipped")
    else:
        with Stopwatch() as building:
            as_list = keys.astype(np.int64).tolist()
        t_list = building.seconds
        t_odp, released = best_of(1, lambda: measurement(as_list))
        print(
            f"OpenDP count_by >> laplace_threshold: {t_odp:.3f} s "
            f"({len(released):,} cells kept; building its input list took "
            f"{t_list:.3f} s more)  OpenDP / privtab = {t_odp / t_api:.1f}x"
        )
        results.update(
            opendp_seconds=t_odp,
            opendp_list_seconds=t_list,
            opendp_cells_kept=len(released),
            speedup_vs_opendp=t_odp / t_api,
        )

    out = Path(__file__).resolve().parent / "results" / "histogram.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
