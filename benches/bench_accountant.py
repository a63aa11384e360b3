"""Time one spend: the in-memory accountant against the SQLite budget store.

Run on purpose (not part of the test suite)::

    python benches/bench_accountant.py [n_spends] [directory]

Spends ``n_spends`` (default 10,000) times on ``BudgetAccountant(inf)`` and on
``BudgetAccountant.open(path, inf)`` (a file in ``directory``, default a temporary
one: put it on the disk the budget will live on), timing each spend, and prints the
median and the 90th percentile in µs, and the store's median over the in-memory
one. Each store spend is one ``BEGIN IMMEDIATE`` transaction written with
``synchronous=FULL`` (an fsync of the WAL), so its time is mostly the disk's.
"""

from __future__ import annotations

import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import privtab as pt


def spend_times_us(accountant: pt.BudgetAccountant, n: int) -> list[float]:
    """Microseconds of each of ``n`` spends of 0.001."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        accountant.spend(0.001, label="bench")
        times.append((time.perf_counter() - start) * 1e6)
    return times


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    directory = sys.argv[2] if len(sys.argv) > 2 else None
    with tempfile.TemporaryDirectory(dir=directory) as folder:
        rows = {
            "in memory": spend_times_us(pt.BudgetAccountant(math.inf), n),
            "SQLite store": spend_times_us(
                pt.BudgetAccountant.open(Path(folder) / "bench.budget", math.inf), n
            ),
        }
    print(f"{n} spends each; µs per spend")
    print(f"{'accountant':<14} {'median':>10} {'p90':>10}")
    for name, times in rows.items():
        p90 = statistics.quantiles(times, n=10)[-1]
        print(f"{name:<14} {statistics.median(times):>10.1f} {p90:>10.1f}")
    ratio = statistics.median(rows["SQLite store"]) / statistics.median(
        rows["in memory"]
    )
    print(f"store / in memory (median): {ratio:.0f}x")


if __name__ == "__main__":
    main()
