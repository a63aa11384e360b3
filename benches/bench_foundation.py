"""Foundation benchmarks: privtab's kernels next to the usual NumPy/pandas/OpenDP paths.

Run from the repository root after building the extension::

    python benches/bench_foundation.py            # 10M rows (the reported setting)
    python benches/bench_foundation.py --rows 1e6 # a quicker look

Times are the best of ``--repeat`` runs in one process, wall-clock seconds. The script
prints a table with ratios and writes ``benches/results/foundation.json``.

Targets (the foundation issue): contingency table <= 0.5x NumPy's bincount path;
discrete Laplace <= 0.5 us per value and >= 20x faster than OpenDP's integer Laplace.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

import privtab as pt

from _timing import best_seconds


def bench_contingency(n: int, repeat: int, rng: np.random.Generator) -> dict:
    kx, ky = 16, 2
    x = rng.integers(0, kx, n).astype(np.int64)
    y = rng.integers(0, ky, n).astype(np.int64)
    reference = np.bincount(x * ky + y, minlength=kx * ky).reshape(kx, ky)
    np.testing.assert_array_equal(pt.contingency_table(x, y, kx, ky), reference)
    return {
        "privtab": best_seconds(repeat, lambda: pt.contingency_table(x, y, kx, ky)),
        "numpy_bincount": best_seconds(
            repeat, lambda: np.bincount(x * ky + y, minlength=kx * ky).reshape(kx, ky)
        ),
        "pandas_crosstab": best_seconds(1, lambda: pd.crosstab(x, y)),
    }


def bench_mixed_radix(n: int, repeat: int, rng: np.random.Generator) -> dict:
    cards = np.array([16, 9, 7, 42, 2, 5, 14, 6], dtype=np.int64)
    codes = np.column_stack([rng.integers(0, c, n) for c in cards]).astype(np.uint32)
    np.testing.assert_array_equal(
        pt.mixed_radix_encode(codes, cards), np.ravel_multi_index(codes.T, cards)
    )
    return {
        "privtab": best_seconds(repeat, lambda: pt.mixed_radix_encode(codes, cards)),
        "numpy_ravel_multi_index": best_seconds(
            repeat, lambda: np.ravel_multi_index(codes.T, cards)
        ),
    }


def bench_discrete_laplace(n: int, repeat: int, opendp_rows: int) -> dict:
    values = np.zeros(n, dtype=np.int64)
    epsilon = 1.0
    numpy_rng = np.random.default_rng(0)
    result = {
        "privtab": best_seconds(
            repeat,
            lambda: pt.discrete_laplace_mechanism(
                values, 1, epsilon, random_state=1, accountant=pt.BudgetAccountant()
            ),
        ),
        "numpy_float_laplace_unsafe": best_seconds(
            repeat, lambda: values + np.rint(numpy_rng.laplace(0.0, 1.0 / epsilon, n))
        ),
    }
    try:
        import opendp.prelude as dp
    except ImportError:
        result["opendp"] = None
        return result
    dp.enable_features("contrib")
    small = [0] * opendp_rows
    measurement = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=int)),
        dp.l1_distance(T=int),
        scale=1.0 / epsilon,
    )
    opendp_time = best_seconds(1, lambda: measurement(small))
    result["opendp"] = opendp_time * n / opendp_rows
    result["opendp_rows_timed"] = opendp_rows
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--opendp-rows",
        type=float,
        default=1e6,
        help="OpenDP is timed on this many values and scaled to --rows",
    )
    parser.add_argument(
        "--output", type=Path, default=Path("benches/results/foundation.json")
    )
    args = parser.parse_args()
    n = int(args.rows)
    rng = np.random.default_rng(2024)

    results = {
        "rows": n,
        "threads": os.cpu_count(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "contingency_table": bench_contingency(n, args.repeat, rng),
        "mixed_radix_encode": bench_mixed_radix(n, args.repeat, rng),
        "discrete_laplace": bench_discrete_laplace(
            n, args.repeat, min(n, int(args.opendp_rows))
        ),
    }

    print(f"{n:,} rows, {results['threads']} cores, best of {args.repeat}")
    for name in ("contingency_table", "mixed_radix_encode", "discrete_laplace"):
        timings = results[name]
        ours = timings["privtab"]
        print(f"\n{name}")
        for tool, seconds in timings.items():
            if tool == "opendp_rows_timed" or seconds is None:
                continue
            ratio = ours / seconds
            print(f"  {tool:<28} {seconds:9.4f} s   privtab/this = {ratio:6.3f}")
    per_value = results["discrete_laplace"]["privtab"] / n * 1e6
    results["discrete_laplace"]["privtab_us_per_value"] = per_value
    print(f"\ndiscrete Laplace: {per_value:.3f} us per value")
    opendp = results["discrete_laplace"].get("opendp")
    if opendp:
        speedup = opendp / results["discrete_laplace"]["privtab"]
        results["discrete_laplace"]["speedup_vs_opendp"] = speedup
        print(f"discrete Laplace: {speedup:.1f}x faster than OpenDP (scaled)")
    ratio = (
        results["contingency_table"]["privtab"]
        / results["contingency_table"]["numpy_bincount"]
    )
    results["contingency_table"]["ratio_vs_numpy"] = ratio
    print(f"contingency table: {ratio:.3f}x NumPy's bincount time (target <= 0.5)")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
