"""Count 100 million rows from Parquet partitions on a 2-worker Dask cluster.

Run on purpose (not in the test suite)::

    python benches/bench_dask.py [--rows 100000000] [--partition-rows 5000000]

Data: ``--rows`` rows of 6 categorical code columns (cardinalities 2, 5, 10, 20, 35,
50, each correlated with a binary label) and the label, written as Parquet partitions
of ``--partition-rows`` rows into a temporary directory, one partition at a time (the
table never exists in memory). A ``distributed.LocalCluster`` of 2 worker processes
(1 thread each) then reads the partitions and runs, one after the other:

- ``contingency_table`` of two columns (one pass);
- ``thresholded_histogram`` over 4 columns (a pass for the row count, one for counts);
- ``PrivateKD`` selecting 3 of the 6 columns (one pass per round, plus the labels).

For each: wall-clock seconds and rows per second. Peak resident memory (``ru_maxrss``)
of each worker and of the client process shows that nothing held the table. The
first ``--memory-rows`` rows (default 10M) are also read into numpy and the histogram
and PrivateKD run in memory on them and, with the same seed, on the cluster: the
results must be equal, and the ratio of the two times is the overhead of the Dask path
(one process reading numpy arrays against two workers reading Parquet).

Writes ``benches/results/dask.json`` and ``benches/results/dask.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

import privtab as pt

from _parquet_table import (
    column_names,
    partition_paths,
    peak_rss_mib,
    read_head,
    write_partitions,
)
from _timing import Stopwatch

CARDS = [2, 5, 10, 20, 35, 50]
NAMES = column_names(len(CARDS))
HIST_COLUMNS = ["c1", "c2", "c3", "c5"]
EPSILON = 1.0
SEED = 2012
RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--partition-rows", type=int, default=5_000_000)
    parser.add_argument("--memory-rows", type=int, default=10_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="8GiB")
    args = parser.parse_args()

    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    # Dask's Parquet reader calls pandas methods that recent pandas deprecates.
    warnings.filterwarnings("ignore", message="The inplace keyword")
    report: dict = {
        "rows": args.rows,
        "partition_rows": args.partition_rows,
        "workers": args.workers,
        "memory_limit": args.memory_limit,
        "cardinalities": CARDS,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "privtab": pt.__version__,
    }
    with tempfile.TemporaryDirectory(prefix="privtab-bench-") as tmp:
        directory = Path(tmp)
        with Stopwatch() as watch:
            n_parts = write_partitions(
                directory, args.rows, args.partition_rows, CARDS, SEED
            )
        size = sum(p.stat().st_size for p in directory.glob("*.parquet"))
        report["generate"] = {
            "seconds": watch.seconds,
            "partitions": n_parts,
            "parquet_mib": size / 2**20,
        }
        print(
            f"wrote {n_parts} partitions, {size / 2**20:.0f} MiB, {watch.seconds:.1f} s"
        )

        cluster = LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=args.memory_limit,
            host="127.0.0.1",
            dashboard_address=None,
        )
        client = Client(cluster)
        frame = dd.read_parquet(directory)
        X, y = frame[NAMES], frame["label"]
        acc = pt.BudgetAccountant()
        runs = {}

        with Stopwatch() as watch:
            table = pt.contingency_table(X["c3"], X["c5"], 20, 50)
        assert int(table.sum()) == args.rows
        runs["contingency_table (c3, c5)"] = watch.seconds

        with Stopwatch() as watch:
            hist = pt.thresholded_histogram(
                X[HIST_COLUMNS],
                [CARDS[int(c[1:])] for c in HIST_COLUMNS],
                EPSILON,
                random_state=SEED,
                accountant=acc,
            )
        runs[f"thresholded_histogram ({len(HIST_COLUMNS)} columns)"] = watch.seconds
        report["histogram_cells"] = len(hist)

        with Stopwatch() as watch:
            selector = pt.PrivateKD(
                3, EPSILON, random_state=SEED, accountant=acc, classes=[0, 1]
            ).fit(X, y, cardinalities=CARDS)
        runs["PrivateKD (k = 3 of 6)"] = watch.seconds
        report["privatekd_order"] = selector.selection_order_.tolist()

        report["cluster"] = {
            name: {"seconds": s, "rows_per_second": args.rows / s}
            for name, s in runs.items()
        }
        for name, s in runs.items():
            print(f"{name:40s} {s:8.1f} s  {args.rows / s / 1e6:6.2f} M rows/s")

        # The same rows and seed in memory and on the cluster.
        head = min(args.memory_rows, args.rows)
        codes, labels = read_head(directory, head, NAMES)
        head_parts = -(-head // args.partition_rows)
        small = dd.read_parquet(partition_paths(directory)[:head_parts])
        small_X = small[NAMES]
        if head_parts * args.partition_rows != head:
            raise SystemExit("--memory-rows must be a multiple of --partition-rows")
        columns = [NAMES.index(c) for c in HIST_COLUMNS]
        compare = {}
        with Stopwatch() as watch:
            local = pt.thresholded_histogram(
                codes[:, columns],
                [CARDS[j] for j in columns],
                EPSILON,
                random_state=SEED,
                accountant=pt.BudgetAccountant(),
            )
        memory_seconds = watch.seconds
        with Stopwatch() as watch:
            spread = pt.thresholded_histogram(
                small_X[HIST_COLUMNS],
                [CARDS[j] for j in columns],
                EPSILON,
                random_state=SEED,
                accountant=pt.BudgetAccountant(),
            )
        equal = np.array_equal(local.keys, spread.keys) and np.array_equal(
            local.values, spread.values
        )
        compare["thresholded_histogram"] = {
            "memory_seconds": memory_seconds,
            "dask_seconds": watch.seconds,
            "ratio": watch.seconds / memory_seconds,
            "equal": bool(equal),
        }

        def select(X: object, y: object) -> np.ndarray:
            selector = pt.PrivateKD(
                3,
                EPSILON,
                random_state=SEED,
                accountant=pt.BudgetAccountant(),
                classes=[0, 1],
            )
            return selector.fit(X, y, cardinalities=CARDS).selection_order_

        with Stopwatch() as watch:
            local_order = select(codes, labels)
        memory_seconds = watch.seconds
        with Stopwatch() as watch:
            spread_order = select(small_X, small["label"])
        compare["PrivateKD"] = {
            "memory_seconds": memory_seconds,
            "dask_seconds": watch.seconds,
            "ratio": watch.seconds / memory_seconds,
            "equal": bool(np.array_equal(local_order, spread_order)),
        }
        report[f"same_rows_{head}"] = compare
        for name, entry in compare.items():
            print(
                f"{head} rows, {name}: memory {entry['memory_seconds']:.1f} s, "
                f"dask {entry['dask_seconds']:.1f} s (x{entry['ratio']:.2f}), "
                f"equal: {entry['equal']}"
            )

        workers = client.run(peak_rss_mib)
        report["peak_rss_mib"] = {
            "workers": sorted(workers.values()),
            "client (includes the in-memory comparison)": peak_rss_mib(),
        }
        report["load_average_at_end"] = os.getloadavg()
        print("peak RSS (MiB):", report["peak_rss_mib"])
        client.close()
        cluster.close()

    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dask.json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [
        f"# {args.rows:,} rows from {n_parts} Parquet partitions, "
        f"{args.workers} Dask workers",
        "",
        "| step | seconds | M rows/s |",
        "| --- | ---: | ---: |",
    ]
    for name, entry in report["cluster"].items():
        lines.append(
            f"| {name} | {entry['seconds']:.1f} | {entry['rows_per_second'] / 1e6:.2f} |"
        )
    lines += ["", f"Same {head:,} rows in memory and on the cluster:", ""]
    lines += [
        "| method | memory s | dask s | ratio | equal |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for name, entry in compare.items():
        lines.append(
            f"| {name} | {entry['memory_seconds']:.1f} | {entry['dask_seconds']:.1f} "
            f"| {entry['ratio']:.2f} | {entry['equal']} |"
        )
    rss = report["peak_rss_mib"]
    lines += [
        "",
        "Peak RSS (MiB): workers "
        + ", ".join(f"{w:.0f}" for w in rss["workers"])
        + f"; client {rss['client (includes the in-memory comparison)']:.0f}.",
        f"Load average at start {report['load_average_at_start'][0]:.1f}, at end "
        f"{report['load_average_at_end'][0]:.1f} (2 cores shared with other jobs).",
    ]
    (RESULTS / "dask.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
