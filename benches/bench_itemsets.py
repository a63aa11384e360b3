"""Time maximal frequent itemset mining against pyfim and mlxtend on the FIMI data sets.

Run on purpose (not in the test suite)::

    python benches/bench_itemsets.py [--quick] [DATA ...]

Naming data sets (e.g. ``retail T10I4D100K``) runs only their cases and prints them
without writing the results files.

Side by side in one process, on each (data set, absolute minimum support) case:

- privtab ``maximal_itemsets(B, min_support)``, the call only (the file is parsed
  before the clock starts), median of 3, on all cores and with ``n_threads=1`` (pyfim
  uses one thread);
- pyfim ``fim.fpgrowth(transactions, target="m", supp=-min_support)``, the call only
  (the transactions are Python lists built beforehand), median of 3; for it and the
  one-thread privtab call the median CPU seconds too;
- mlxtend ``fpmax`` on a pandas boolean DataFrame (sparse for retail, whose 16,470
  columns do not fit densely), one run, only where the reference table gives mlxtend
  less than 60 s; the other cases are recorded as skipped.

The counts of maximal itemsets must agree with pyfim's (asserted). Writes
``benches/results/bench_itemsets.md`` and ``benches/results/bench_itemsets.json``.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

import fim
import numpy as np
import pandas as pd
from mlxtend.frequent_patterns import fpmax

from privtab import maximal_itemsets, read_transactions

from _timing import Stopwatch, median_of, median_wall_and_cpu

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "fimi"
RESULTS = Path(__file__).resolve().parent / "results"

#: (data set, absolute minimum support, mlxtend time in the reference table, seconds).
#: The supports of MINING.md's table, then lower ones down to the last before pyfim's or
#: privtab's output exceeds 500,000 maximal sets (chess 600, connect 2000, retail 3 and
#: T10I4D100K 3 exceed it; mushroom never does). mlxtend runs only on MINING.md's cases.
CASES = [
    ("chess", 2000, 2.5),
    ("chess", 1500, 46.8),
    ("chess", 1000, None),
    ("chess", 800, None),
    ("chess", 700, None),
    ("mushroom", 800, 1.8),
    ("mushroom", 300, 3.0),
    ("mushroom", 100, 7.2),
    ("mushroom", 50, None),
    ("mushroom", 20, None),
    ("mushroom", 10, None),
    ("mushroom", 5, None),
    ("mushroom", 1, None),
    ("connect", 50000, 3.4),
    ("connect", 40000, 4.2),
    ("connect", 30000, None),
    ("connect", 20000, None),
    ("connect", 10000, None),
    ("connect", 5000, None),
    ("connect", 3000, None),
    ("retail", 100, 10.7),
    ("retail", 50, 11.6),
    ("retail", 20, None),
    ("retail", 10, None),
    ("retail", 5, None),
    ("retail", 4, None),
    ("T10I4D100K", 50, 15.9),
    ("T10I4D100K", 20, None),
    ("T10I4D100K", 10, 61.8),
    ("T10I4D100K", 5, None),
    ("T10I4D100K", 4, None),
]
MLXTEND_LIMIT = 60.0


def main(quick: bool, only: list[str]) -> None:
    rows = []
    load = os.getloadavg()
    for name, min_support, mlxtend_reference in CASES:
        if only and name not in only:
            continue
        B, _ = read_transactions(DATA / f"{name}.dat")
        transactions = [t.tolist() for t in np.split(B.indices, B.indptr[1:-1])]
        t_privtab, sets = median_of(
            3, lambda B=B, s=min_support: maximal_itemsets(B, s)
        )
        t_one, cpu_one, one = median_wall_and_cpu(
            3, lambda B=B, s=min_support: maximal_itemsets(B, s, n_threads=1)
        )
        assert [a.tolist() for a in one] == [a.tolist() for a in sets]
        t_pyfim, cpu_pyfim, expected = median_wall_and_cpu(
            3,
            lambda t=transactions, s=min_support: fim.fpgrowth(t, target="m", supp=-s),
        )
        assert len(sets) == len(expected), (name, min_support, len(sets), len(expected))
        row = {
            "data": name,
            "min_support": min_support,
            "n_maximal": len(sets),
            "privtab_s": t_privtab,
            "privtab_1_thread_s": t_one,
            "pyfim_s": t_pyfim,
            "privtab_1_thread_cpu_s": cpu_one,
            "pyfim_cpu_s": cpu_pyfim,
            "mlxtend_s": None,
        }
        if quick:
            row["mlxtend_note"] = "skipped (--quick)"
        elif mlxtend_reference is None:
            row["mlxtend_note"] = "skipped (not in MINING.md)"
        elif mlxtend_reference >= MLXTEND_LIMIT:
            row["mlxtend_note"] = "skipped (> 60 s in MINING.md)"
        else:
            if name == "retail":
                frame = pd.DataFrame.sparse.from_spmatrix(B.astype(bool))
            else:
                frame = pd.DataFrame(B.toarray())
            frame.columns = [str(c) for c in frame.columns]
            with Stopwatch() as mlxtend_time:
                found = fpmax(frame, min_support=min_support / B.shape[0])
            row["mlxtend_s"] = mlxtend_time.seconds
            row["mlxtend_n_maximal"] = len(found)
        rows.append(row)
        print(row, flush=True)
    if not only:
        write(rows, load)


def write(rows, load) -> None:
    lines = [
        "# Maximal frequent itemsets: privtab vs pyfim vs mlxtend",
        "",
        f"Seconds (privtab and pyfim: median of 3 calls; mlxtend: one call). "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}. privtab uses all cores, "
        "privtab (1) one thread; pyfim uses one thread. The CPU ratio compares the "
        "median process CPU seconds of the two one-thread calls, which waiting for a "
        "core on a busy machine does not inflate. Load average when the run "
        f"started (1, 5, 15 min): {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}.",
        "",
        "| data | min support | # maximal | privtab | privtab (1) | pyfim | mlxtend "
        "| privtab / pyfim | privtab (1) / pyfim | privtab (1) / pyfim, CPU "
        "| mlxtend / privtab |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        mlx = (
            f"{r['mlxtend_s']:.2f}" if r["mlxtend_s"] is not None else r["mlxtend_note"]
        )
        speedup = (
            f"{r['mlxtend_s'] / r['privtab_s']:.0f}×"
            if r["mlxtend_s"] is not None
            else "–"
        )
        lines.append(
            f"| {r['data']} | {r['min_support']} | {r['n_maximal']:,} | "
            f"{r['privtab_s']:.3f} | {r['privtab_1_thread_s']:.3f} | "
            f"{r['pyfim_s']:.3f} | {mlx} | {r['privtab_s'] / r['pyfim_s']:.2f} | "
            f"{r['privtab_1_thread_s'] / r['pyfim_s']:.2f} | "
            f"{r['privtab_1_thread_cpu_s'] / r['pyfim_cpu_s']:.2f} | {speedup} |"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_itemsets.md").write_text("\n".join(lines) + "\n")
    (RESULTS / "bench_itemsets.json").write_text(json.dumps(rows, indent=2) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    arguments = sys.argv[1:]
    main("--quick" in arguments, [a for a in arguments if a != "--quick"])
