"""Time privtab's counting kernels against the NumPy paths they replace.

Run on purpose (not in the test suite): ``python benches/bench_counts.py [n_rows]``.
"""

from __future__ import annotations

import sys

import numpy as np

from privtab import _core
from privtab.counts import contingency_table, count_keys
from privtab.discernibility import score_candidates
from privtab.mixed_radix import mixed_radix_encode

from _timing import best_seconds


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    rng = np.random.default_rng(0)
    print(f"n = {n:,} rows")
    for kx, ky in [(10, 10), (100, 50), (1000, 1000)]:
        x = rng.integers(0, kx, n).astype(np.uint32)
        y = rng.integers(0, ky, n).astype(np.uint32)
        t_np = best_seconds(
            5,
            lambda x=x, y=y, kx=kx, ky=ky: np.bincount(
                x.astype(np.int64) * ky + y, minlength=kx * ky
            ),
        )
        t_core = best_seconds(
            5, lambda x=x, y=y, kx=kx, ky=ky: _core.contingency_table(x, kx, y, ky)
        )
        t_api = best_seconds(
            5, lambda x=x, y=y, kx=kx, ky=ky: contingency_table(x, y, kx, ky)
        )
        print(
            f"contingency {kx}x{ky}: numpy {t_np * 1e3:.1f} ms, core {t_core * 1e3:.1f} ms "
            f"(ratio {t_core / t_np:.2f}), public API {t_api * 1e3:.1f} ms "
            f"(ratio {t_api / t_np:.2f})"
        )
    codes = rng.integers(0, 1000, (n, 3))
    cards = [1000, 1000, 1000]
    keys = mixed_radix_encode(codes, cards)
    t_np = best_seconds(3, lambda: np.ravel_multi_index(codes.T, cards))
    t_pt = best_seconds(3, lambda: mixed_radix_encode(codes, cards))
    print(f"mixed_radix_encode d=3: numpy {t_np:.3f} s, privtab {t_pt:.3f} s")
    t_np = best_seconds(1, lambda: np.unique(keys, return_counts=True))
    t_pt = best_seconds(3, lambda: count_keys(keys))
    print(f"count_keys: numpy unique {t_np:.3f} s, privtab {t_pt:.3f} s")
    m = min(n, 1_000_000)
    X = rng.integers(0, 8, (m, 20))
    y = rng.integers(0, 2, m)
    t_pt = best_seconds(3, lambda: score_candidates(X, y, [0, 1]))
    print(f"score_candidates {m:,} rows x 20 candidates: {t_pt:.3f} s")


if __name__ == "__main__":
    main()
