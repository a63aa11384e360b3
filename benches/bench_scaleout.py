"""Scale-out: 100 million rows x 20 columns from Parquet on 1 and 2 Dask workers.

Run on purpose (not in the test suite)::

    python benches/bench_scaleout.py [--rows 100000000] [--partition-rows 5000000]
        [--memory-rows 10000000] [--workers 1,2] [--data DIR]

Data: ``--rows`` rows of 20 categorical code columns (cardinalities 2 to 50, each
correlated with a binary label) and the label, written as Parquet partitions of
``--partition-rows`` rows, one partition at a time (the table never exists in memory;
``--data DIR`` keeps them in ``DIR`` and reuses them on the next run with the same
shape). Three methods, each from the Parquet partitions on its own (nothing is
persisted between them):

- ``thresholded_histogram`` over 4 columns;
- ``PrivateKD`` selecting k = 6 of the 20 columns;
- ``DILCA().fit`` (every pairwise contingency table, mean-SU contexts).

In memory: the first ``--memory-rows`` rows are read into numpy (timed on its own)
and the three methods run on them in this process (the kernels use every core), best
of 3 runs. On a ``distributed.LocalCluster`` of 1, then 2 worker processes (1 thread
each, kernels included: ``RAYON_NUM_THREADS=1``; memory limit ``--memory-limit``):
the same first rows, best of 3 runs, held in the workers' memory (persisted before
timing, as the in-memory side holds them) and read from Parquet by every run; both
must give results equal to the in-memory ones with the same seed (their time against
the in-memory time is the Dask path's overhead: like for like with the rows held in
memory, and from Parquet with and without the in-memory side's reading counted), then
all ``--rows`` rows once, which
must give the same results on 1 and 2 workers. Reported: seconds, rows per second
per worker, the 1 -> 2 worker speed-up, and the peak resident memory of every worker
(``VmHWM``).

Writes ``benches/results/scaleout.json`` and ``benches/results/scaleout.md``
(``--name`` changes the file names, for trial runs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import privtab as pt

from _parquet_table import (
    LABEL,
    column_names,
    partition_paths,
    peak_rss_mib,
    read_head,
    write_partitions,
)
from _timing import Stopwatch, best_of, free_page_reporting

#: Cardinalities 2 to 50, evenly spread over the 20 columns.
CARDS = [int(c) for c in np.linspace(2, 50, 20).round()]
NAMES = column_names(len(CARDS))
HIST_COLUMNS = ["c0", "c6", "c12", "c19"]
K = 6
EPSILON = 1.0
SEED = 2012
RESULTS = Path(__file__).resolve().parent / "results"
METHODS = ("thresholded_histogram", "PrivateKD", "DILCA")
#: The columns each method reads (and whether it reads the label).
READS = {
    "thresholded_histogram": (HIST_COLUMNS, False),
    "PrivateKD": (NAMES, True),
    "DILCA": (NAMES, False),
}
#: Runs of each method on the same rows (in memory and on Dask); the best is kept,
#: so that neither side is charged a fresh process's first touch of its memory.
REPEATS = 3
LABELS = {
    "thresholded_histogram": f"thresholded_histogram ({len(HIST_COLUMNS)} columns)",
    "PrivateKD": f"PrivateKD (k = {K} of {len(CARDS)})",
    "DILCA": f"DILCA fit ({len(CARDS)} columns)",
}


def warm_up() -> None:
    """Import what the tasks use, so that no timed run pays a worker's imports."""
    import pyarrow.parquet  # noqa: F401

    import privtab.engine  # noqa: F401


def run_method(method: str, X: Any, y: Any) -> Any:
    """Run one method on codes ``X`` (and labels ``y``); return what identifies its result."""
    if method == "thresholded_histogram":
        columns = [NAMES.index(c) for c in HIST_COLUMNS]
        codes = X[HIST_COLUMNS] if hasattr(X, "columns") else X[:, columns]
        hist = pt.thresholded_histogram(
            codes,
            [CARDS[j] for j in columns],
            EPSILON,
            random_state=SEED,
            accountant=pt.BudgetAccountant(),
        )
        return {"keys": hist.keys, "values": hist.values, "n_rows": hist.n_rows}
    if method == "PrivateKD":
        selector = pt.PrivateKD(
            K,
            EPSILON,
            random_state=SEED,
            accountant=pt.BudgetAccountant(),
            classes=[0, 1],
        )
        return {"order": selector.fit(X, y, cardinalities=CARDS).selection_order_}
    model = pt.DILCA().fit(X, cardinalities=CARDS)
    return {
        "contexts": model.contexts_,
        "distances": model.distance_matrices_,
    }


def same(a: Any, b: Any) -> bool:
    """Whether two results are equal, bit for bit."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(u, v) for u, v in zip(a, b, strict=True))
    return bool(np.array_equal(a, b))


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    with Stopwatch() as watch:
        result = fn()
    return watch.seconds, result


def summary(result: Any) -> Any:
    """A short, JSON-friendly description of a result."""
    if "order" in result:
        return {"order": result["order"].tolist()}
    if "keys" in result:
        return {"cells": len(result["keys"]), "n_rows": int(result["n_rows"])}
    return {"context_sizes": [len(c) for c in result["contexts"]]}


def prepare_data(args: argparse.Namespace, directory: Path) -> dict:
    """Write the partitions (or reuse those of an earlier run with the same shape)."""
    stamp = directory / "shape.json"
    shape = {
        "rows": args.rows,
        "partition_rows": args.partition_rows,
        "cardinalities": CARDS,
        "seed": SEED,
    }
    if stamp.exists() and json.loads(stamp.read_text()) == shape:
        return {"reused": True, "partitions": len(partition_paths(directory))}
    for path in partition_paths(directory):
        path.unlink()
    seconds, n_parts = timed(
        lambda: write_partitions(directory, args.rows, args.partition_rows, CARDS, SEED)
    )
    stamp.write_text(json.dumps(shape))
    return {"reused": False, "seconds": seconds, "partitions": n_parts}


def memory_runs(directory: Path, head: int) -> tuple[dict, dict]:
    """Read the first ``head`` rows into numpy and run every method on them.

    Reading is timed apart, for each method the columns it reads (as the Dask path
    reads only those), the best of :data:`REPEATS` reads.
    """
    codes, labels = read_head(directory, head, NAMES)
    memory: dict = {}
    expected = {}
    for method in METHODS:
        names, label = READS[method]
        read_seconds, _ = best_of(
            REPEATS, lambda n=names, w=label: read_head(directory, head, n, label=w)
        )
        seconds, expected[method] = best_of(
            REPEATS, lambda m=method: run_method(m, codes, labels)
        )
        memory[method] = {
            "seconds": seconds,
            "read_parquet_seconds": read_seconds,
            "result": summary(expected[method]),
        }
        print(
            f"memory {head:,} rows, {method}: {seconds:.2f} s "
            f"(reading its columns {read_seconds:.2f} s)",
            flush=True,
        )
    return memory, expected


def cluster_runs(
    args: argparse.Namespace,
    n_workers: int,
    paths: list[Path],
    head: int,
    memory: dict,
    expected: dict,
    first: dict,
) -> dict:
    """Run every method on a new cluster: the first ``head`` rows, then all rows.

    ``first`` collects the all-rows results of the first cluster, which the later
    ones must equal.
    """
    import dask.dataframe as dd
    from distributed import Client, LocalCluster, wait

    cluster = LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=args.memory_limit,
        host="127.0.0.1",
        dashboard_address=None,
        # One core per worker, kernels included (Dask sets OMP_NUM_THREADS=1).
        env={"RAYON_NUM_THREADS": "1"},
    )
    client = Client(cluster)
    client.run(warm_up)
    entry: dict = {"same_rows": {}, "all_rows": {}}
    small = dd.read_parquet(paths[: max(1, head // args.partition_rows)])
    # The same rows held in the workers' memory, as the in-memory side holds them.
    held = small.persist()
    wait(held)
    for method in METHODS:
        seconds, got = best_of(
            REPEATS, lambda m=method: run_method(m, small[NAMES], small[LABEL])
        )
        held_seconds, got_held = best_of(
            REPEATS, lambda m=method, h=held: run_method(m, h[NAMES], h[LABEL])
        )
        in_memory = memory[method]["seconds"]
        entry["same_rows"][method] = {
            "seconds": seconds,
            "ratio": seconds / in_memory,
            "ratio_with_read": seconds
            / (in_memory + memory[method]["read_parquet_seconds"]),
            "held_seconds": held_seconds,
            "held_ratio": held_seconds / in_memory,
            "equal": same(got, expected[method]) and same(got_held, expected[method]),
        }
        print(
            f"{n_workers} worker(s), {head:,} rows, {method}: {seconds:.2f} s from "
            f"Parquet (x{seconds / in_memory:.2f}), {held_seconds:.2f} s held in "
            f"memory (x{held_seconds / in_memory:.2f}), equal "
            f"{entry['same_rows'][method]['equal']}",
            flush=True,
        )
    del held
    frame = dd.read_parquet(paths)
    for method in METHODS if args.rows > head else ():
        seconds, got = timed(lambda m=method: run_method(m, frame[NAMES], frame[LABEL]))
        per_worker = args.rows / seconds / n_workers
        entry["all_rows"][method] = {
            "seconds": seconds,
            "rows_per_second_per_worker": per_worker,
            "result": summary(got),
            "equal_to_first_cluster": same(got, first.setdefault(method, got)),
        }
        print(
            f"{n_workers} worker(s), {args.rows:,} rows, {method}: {seconds:.1f} s, "
            f"{per_worker / 1e6:.2f} M rows/s/worker",
            flush=True,
        )
    entry["peak_rss_mib"] = sorted(client.run(peak_rss_mib).values())
    print(f"peak RSS of the workers (MiB): {entry['peak_rss_mib']}", flush=True)
    client.close()
    cluster.close()
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--partition-rows", type=int, default=5_000_000)
    parser.add_argument("--memory-rows", type=int, default=10_000_000)
    parser.add_argument("--workers", default="1,2", help="cluster sizes, e.g. 1,2")
    parser.add_argument("--memory-limit", default="8GiB")
    parser.add_argument("--data", type=Path, help="directory of the partitions")
    parser.add_argument("--name", default="scaleout", help="name of the result files")
    parser.add_argument(
        "--malloc",
        choices=("dask", "glibc"),
        default="dask",
        help="the workers' malloc settings: Dask's (MALLOC_TRIM_THRESHOLD_=65536) or "
        "glibc's own (the variable unset)",
    )
    args = parser.parse_args()
    if args.malloc == "glibc":
        import dask

        # Dask's documented way to unset a variable it gives its workers.
        dask.config.set(
            {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
        )
    head = min(args.memory_rows, args.rows)
    if head % args.partition_rows and head != args.rows:
        raise SystemExit("--memory-rows must be a multiple of --partition-rows")
    cluster_sizes = [int(w) for w in args.workers.split(",")]

    # Dask's Parquet reader calls pandas methods that recent pandas deprecates.
    warnings.filterwarnings("ignore", message="The inplace keyword")
    report: dict = {
        "rows": args.rows,
        "partition_rows": args.partition_rows,
        "memory_rows": head,
        "memory_limit": args.memory_limit,
        "cardinalities": CARDS,
        "histogram_columns": HIST_COLUMNS,
        "k": K,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "privtab": pt.__version__,
        "command": " ".join(["python benches/bench_scaleout.py", *sys.argv[1:]]),
        "worker_malloc": args.malloc,
        "free_page_reporting": free_page_reporting(),
    }
    directory = args.data or Path(tempfile.mkdtemp(prefix="privtab-scaleout-"))
    directory.mkdir(parents=True, exist_ok=True)
    try:
        report["generate"] = prepare_data(args, directory)
        paths = partition_paths(directory)
        size = sum(p.stat().st_size for p in paths)
        report["generate"]["parquet_mib"] = size / 2**20
        print(f"data: {len(paths)} partitions, {size / 2**20:.0f} MiB", flush=True)

        # In memory: the first rows read into numpy, then each method in this process.
        memory, expected = memory_runs(directory, head)
        report["memory"] = memory
        clusters: dict = {}
        first: dict = {}
        for n_workers in cluster_sizes:
            clusters[str(n_workers)] = cluster_runs(
                args, n_workers, paths, head, memory, expected, first
            )
        report["clusters"] = clusters
        report["client_peak_rss_mib"] = peak_rss_mib()
        report["load_average_at_end"] = os.getloadavg()
    finally:
        if args.data is None:
            shutil.rmtree(directory, ignore_errors=True)

    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / f"{args.name}.md").write_text(markdown(report))


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table: the first column left-aligned, the others right-aligned."""
    align = ["---"] + ["---:"] * (len(header) - 1)
    return ["| " + " | ".join(line) + " |" for line in [header, align, *rows]] + [""]


def markdown(report: dict) -> str:
    """The tables of ``scaleout.md``."""
    clusters = report["clusters"]
    sizes = list(clusters)
    head = report["memory_rows"]
    memory = report["memory"]
    lines = [
        f"# {report['rows']:,} rows x {len(CARDS)} columns from "
        f"{report['generate']['partitions']} Parquet partitions, Dask on "
        f"{' and '.join(sizes)} worker(s)",
        "",
    ]
    if report["rows"] > head:
        rows = []
        for method in METHODS:
            runs = [clusters[w]["all_rows"][method] for w in sizes]
            speedup = "-"
            if {"1", "2"} <= set(sizes):
                one, two = (clusters[w]["all_rows"][method]["seconds"] for w in "12")
                speedup = f"{one / two:.2f}"
            rows.append(
                [LABELS[method]]
                + [
                    f"{r['seconds']:.1f} s; {r['rows_per_second_per_worker'] / 1e6:.2f}"
                    for r in runs
                ]
                + [speedup, str(all(r["equal_to_first_cluster"] for r in runs))]
            )
        lines += [f"All {report['rows']:,} rows (seconds; M rows/s per worker):", ""]
        lines += table(
            ["method", *(f"{w} worker(s)" for w in sizes), "1 -> 2 speed-up", "equal"],
            rows,
        )
    rows = []
    for method in METHODS:
        runs = [clusters[w]["same_rows"][method] for w in sizes]
        rows.append(
            [
                LABELS[method],
                f"{memory[method]['seconds']:.2f}",
                f"{memory[method]['read_parquet_seconds']:.2f}",
            ]
            + [
                f"{r['held_seconds']:.2f} ({r['held_ratio']:.2f}); "
                f"{r['seconds']:.2f} ({r['ratio']:.2f}; {r['ratio_with_read']:.2f})"
                for r in runs
            ]
            + [str(all(r["equal"] for r in runs))]
        )
    lines += [
        f"Same {head:,} rows in memory (numpy, this process) and on Dask, best of "
        f"{REPEATS} runs each. On Dask, first with the rows held in the workers' "
        "memory (persisted before timing, as the in-memory side holds them in numpy), "
        "then from Parquet (each run reads the partitions). Ratio: Dask seconds over "
        "memory seconds; with read: over memory seconds plus those of reading the "
        "method's columns of these rows from Parquet into numpy (read s).",
        "",
    ]
    lines += table(
        [
            "method",
            "memory s",
            "read s",
            *(
                f"{w} worker(s): held s (ratio); from Parquet s (ratio; with read)"
                for w in sizes
            ),
            "equal",
        ],
        rows,
    )
    lines += [
        "Peak RSS per worker (MiB): "
        + "; ".join(
            f"{w} worker(s): " + ", ".join(f"{m:.0f}" for m in c["peak_rss_mib"])
            for w, c in clusters.items()
        )
        + f"; client {report['client_peak_rss_mib']:.0f} (includes the in-memory runs).",
        f"Load average at start {report['load_average_at_start'][0]:.1f}, at end "
        f"{report['load_average_at_end'][0]:.1f} ({report['cpus']} cores).",
        "Workers' malloc settings: "
        + (
            "glibc's own (Dask's `MALLOC_TRIM_THRESHOLD_` unset)."
            if report.get("worker_malloc") == "glibc"
            else "Dask's (`MALLOC_TRIM_THRESHOLD_=65536`, which fixes glibc's mmap "
            "threshold: every large allocation is fresh memory)."
        ),
        *free_page_lines(report.get("free_page_reporting")),
        "",
        f"Command: `{report['command']}`.",
    ]
    return "\n".join(lines) + "\n"


def free_page_lines(settings: dict | None) -> list[str]:
    """A line on the VM's free page reporting, which makes fresh memory costly."""
    if not settings:
        return []
    return [
        f"Free page reporting (VM): freed blocks of 2^{settings.get('page_reporting_order')} "
        f"pages go back to the host after {settings.get('min_free_ms')} ms, and are "
        "faulted in again by the host when touched: fresh large allocations (the "
        "workers' rows moved between rounds) cost much more here than in a process that "
        "reuses its memory."
    ]


if __name__ == "__main__":
    main()
