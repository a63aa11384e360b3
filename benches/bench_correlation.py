"""Correlated sensitivity and the DPFSDR fit: privtab against a blocked NumPy version.

Run on purpose (not part of the test suite)::

    python benches/bench_correlation.py [--rows N] [--large-rows N] [--parts abc]

Writes ``correlation.md`` and ``correlation.json`` into ``benches/results`` (or
``--out``).

(a) ``privtab.correlated_sensitivity`` (the largest record correlated degree
    ``max_r Σ_{s: |θ_rs| ≥ 0.8} |θ_rs|``, θ the Pearson correlation of two records)
    on 100,000 × 30 rows, side by side with :func:`numpy_correlated_degrees`, written
    here: each record centred and scaled to unit length once, then blocks of 1,024
    records (the fastest of 16 to 1,024 per block; the buffer is 1,024 × n doubles)
    multiplied by all records (``corrcoef`` of the block against every record),
    thresholded and summed. Two tables: independent uniform values (few correlated
    records) and records around four latent profiles (a fifth of all pairs
    correlated). The degrees of both are checked to agree. Target: ≥ 10×.
(b) The whole ``DPFSDR`` fit on Semeion (1,593 × 256, 10 classes; δ = 0.7 as in
    Table 1 of the paper, record threshold 0.8, ε₁ = 0.1, ε₂ ∈ {1, 0.1}; the public row
    bound ``data_norm = 16`` holds for 256 pixels in {0, 1}). Target: under 2 s.
(c) ``correlated_sensitivity`` on 1,000,000 × 50 uniform values: time and memory (the
    n × n matrix would take 8 TB); 64 records are checked against NumPy.

Memory is reported two ways, both as growth during the call:

- ``traced``: the peak of :mod:`tracemalloc`, i.e. of the allocations made through
  Python's allocators (NumPy arrays included); the Rust core's allocations are not seen;
- ``RSS``: the process's resident-set high-water mark (``VmHWM``, reset through
  ``/proc/self/clear_refs`` just before the call) minus its resident set before the
  call: every page touched, the Rust core's and BLAS's included (Linux only). glibc is
  told to return every freed block of 128 KiB or more to the system (``mallopt``), so
  that memory freed by an earlier call cannot hide a later call's peak.

Times are wall-clock seconds (privtab: best of three calls; the NumPy version runs
once) and the process's CPU seconds (all threads; in (a) and (c) of the call whose
memory is measured), which a busy machine inflates less than wall-clock time. The
one-minute load average before and after each part is recorded with them.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import platform
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import privtab as pt
from privtab import _core

from _timing import Stopwatch, best_of

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
RESULTS = Path(__file__).resolve().parent / "results"
RECORD_DELTA = 0.8
BLOCK = 1024


# The NumPy version -------------------------------------------------------------------
def unit_records(X: np.ndarray) -> np.ndarray:
    """Each record centred and scaled to unit length; a constant record becomes 0."""
    centred = X - X.mean(axis=1, keepdims=True)
    norms = np.sqrt(np.einsum("ij,ij->i", centred, centred))
    varies = (X.max(axis=1) > X.min(axis=1)) & (norms > 0)
    Z = np.zeros_like(centred)
    Z[varies] = centred[varies] / norms[varies, None]
    return Z


def numpy_correlated_degrees(
    X: np.ndarray, record_delta: float, block: int = BLOCK, rows: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Correlated degree and count of every record (or of ``rows``), one block at a time.

    ``θ_rs = z_rᵀz_s`` for the unit records ``z``; ``degree_r = 1 + Σ_{s ≠ r,
    |θ_rs| ≥ δ} min(|θ_rs|, 1)`` and ``count_r = 1 + |{s ≠ r : |θ_rs| ≥ δ}|``. Memory:
    the unit records plus one ``block × n`` buffer and its mask.
    """
    Z = unit_records(X)
    n = X.shape[0]
    wanted = np.arange(n) if rows is None else np.asarray(rows)
    degree = np.empty(wanted.size)
    count = np.empty(wanted.size, dtype=np.int64)
    buffer = np.empty((min(block, wanted.size), n))
    for start in range(0, wanted.size, block):
        own = wanted[start : start + block]
        theta = buffer[: own.size]
        np.matmul(Z[own], Z.T, out=theta)
        np.abs(theta, out=theta)
        np.minimum(theta, 1.0, out=theta)
        theta[np.arange(own.size), own] = 0.0
        hit = theta >= record_delta
        np.multiply(theta, hit, out=theta)
        degree[start : start + own.size] = theta.sum(axis=1) + 1.0
        count[start : start + own.size] = hit.sum(axis=1) + 1
    return degree, count


# Data ----------------------------------------------------------------------------------
def uniform_table(n: int, d: int, seed: int) -> np.ndarray:
    """Independent uniform values: few records are correlated at 0.8."""
    return np.random.default_rng(seed).uniform(size=(n, d))


def profile_table(n: int, d: int, seed: int) -> np.ndarray:
    """Records ``a·b + c + noise`` around four profiles ``b``: many correlated pairs."""
    rng = np.random.default_rng(seed)
    profiles = rng.uniform(-1.0, 1.0, size=(4, d))
    which = rng.integers(0, 4, size=n)
    slope = rng.uniform(-2.0, 2.0, size=(n, 1))
    offset = rng.uniform(0.0, 10.0, size=(n, 1))
    return profiles[which] * slope + offset + 0.3 * rng.uniform(-0.5, 0.5, (n, d))


def load_semeion() -> tuple[np.ndarray, np.ndarray]:
    """Semeion: 256 pixels in {0, 1} and the digit (from the one-hot label columns)."""
    values = np.loadtxt(DATA / "semeion" / "semeion.data")
    if values.shape != (1593, 266):
        raise RuntimeError(f"unexpected Semeion shape {values.shape}")
    return np.ascontiguousarray(values[:, :256]), values[:, 256:].argmax(axis=1)


# Measurement ---------------------------------------------------------------------------
def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def return_freed_memory() -> None:
    """Have glibc unmap freed blocks of 128 KiB or more (a fixed mmap threshold)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD (fixed: no dynamic raise)
    libc.mallopt(-1, 128 * 1024)  # M_TRIM_THRESHOLD


def measured(fn: Callable[[], Any]) -> dict[str, Any]:
    """One call: wall and CPU seconds, tracemalloc and RSS peak growth, result."""
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")
        rss_before: int | None = _status("VmRSS:")
    except OSError:
        rss_before = None
    tracemalloc.start()
    cpu = time.process_time()
    with Stopwatch() as watch:
        result = fn()
    cpu = time.process_time() - cpu
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "seconds": watch.seconds,
        "cpu_seconds": cpu,
        "traced_bytes": traced,
        "rss_bytes": None if rss_before is None else _status("VmHWM:") - rss_before,
        "result": result,
    }


def mib(value: int | None) -> str:
    return "n/a" if value is None else f"{value / 2**20:,.1f} MiB"


def privtab_sensitivity(X: np.ndarray) -> float:
    return pt.correlated_sensitivity(X, record_delta=RECORD_DELTA)


# (a) -----------------------------------------------------------------------------------
def small_tables(n: int, d: int) -> list[dict[str, Any]]:
    rows = []
    for name, make in (("uniform", uniform_table), ("profiles", profile_table)):
        X = make(n, d, 1)
        ours = measured(lambda X=X: privtab_sensitivity(X))
        seconds, cs = best_of(3, lambda X=X: privtab_sensitivity(X))
        theirs = measured(lambda X=X: numpy_correlated_degrees(X, RECORD_DELTA))
        degree, count = theirs.pop("result")
        got, got_count = _core.correlated_degrees(X, list(range(d)), RECORD_DELTA)
        np.testing.assert_array_equal(got_count, count)
        np.testing.assert_allclose(got, degree, rtol=1e-10)
        assert cs == ours.pop("result") == got.max()
        row = {
            "table": name,
            "rows": n,
            "features": d,
            "input_bytes": X.nbytes,
            "correlated_sensitivity": cs,
            "mean_correlated_records": float(count.mean()),
            "privtab_seconds": seconds,
            "speedup": theirs["seconds"] / seconds,
            "privtab": ours,
            "numpy": theirs,
        }
        print(
            f"(a) {name} {n:,} × {d}: privtab {seconds:.2f} s, NumPy "
            f"{theirs['seconds']:.1f} s ({row['speedup']:.0f}×); memory privtab "
            f"{mib(ours['traced_bytes'])} traced / {mib(ours['rss_bytes'])} RSS, "
            f"NumPy {mib(theirs['traced_bytes'])} / {mib(theirs['rss_bytes'])}",
            flush=True,
        )
        rows.append(row)
    return rows


# (b) -----------------------------------------------------------------------------------
def semeion_fits() -> list[dict[str, Any]]:
    X, y = load_semeion()
    rows = []
    for epsilon_training in (1.0, 0.1):

        def fit(epsilon_training: float = epsilon_training) -> pt.DPFSDR:
            return pt.DPFSDR(
                0.1,
                epsilon_training,
                delta=0.7,
                record_delta=RECORD_DELTA,
                data_norm=16.0,
                classes=list(range(10)),
                random_state=0,
                accountant=pt.BudgetAccountant(1e6),
            ).fit(X, y)

        walls, cpus = [], []
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(3):
                cpu = time.process_time()
                seconds, selector = best_of(1, fit)
                cpus.append(time.process_time() - cpu)
                walls.append(seconds)
        row = {
            "epsilon_selection": 0.1,
            "epsilon_training": epsilon_training,
            "seconds": min(walls),
            "cpu_seconds": min(cpus),
            "refits": int(selector.n_refits_),
            "kept_features": len(selector.kept_features_),
            "selected": [int(f) for f in selector.selection_order_],
            "training_accuracy": float(selector.accuracy_),
            "correlated_sensitivity": float(selector.correlated_sensitivity_),
        }
        print(
            f"(b) DPFSDR on Semeion, ε₂ = {epsilon_training}: {row['seconds']:.2f} s "
            f"({row['cpu_seconds']:.2f} CPU s), {row['refits']} "
            f"refits, {len(row['selected'])} features selected",
            flush=True,
        )
        rows.append(row)
    return rows


# (c) -----------------------------------------------------------------------------------
def large_table(n: int, d: int) -> dict[str, Any]:
    X = uniform_table(n, d, 2)
    run = measured(lambda: privtab_sensitivity(X))
    cs = run.pop("result")
    sample = np.random.default_rng(3).choice(n, size=64, replace=False)
    degree, count = numpy_correlated_degrees(X, RECORD_DELTA, block=8, rows=sample)
    got, got_count = _core.correlated_degrees(X, list(range(d)), RECORD_DELTA)
    np.testing.assert_array_equal(got_count[sample], count)
    np.testing.assert_allclose(got[sample], degree, rtol=1e-10)
    assert cs == got.max()
    print(
        f"(c) {n:,} × {d}: {run['seconds']:.1f} s ({run['cpu_seconds']:.1f} CPU s), "
        f"CS = {cs:.4f}; memory {mib(run['traced_bytes'])} traced, "
        f"{mib(run['rss_bytes'])} RSS (input {mib(X.nbytes)})",
        flush=True,
    )
    return {
        "rows": n,
        "features": d,
        "input_bytes": X.nbytes,
        "correlated_sensitivity": cs,
        "checked_records": len(sample),
        **run,
    }


# Report --------------------------------------------------------------------------------
def sensitivity_lines(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## (a) Correlated sensitivity, privtab vs blocked NumPy",
        "",
        f"Record threshold {RECORD_DELTA}; NumPy blocked over {BLOCK:,} rows. Seconds: "
        "wall-clock (privtab best of 3), CPU seconds of one call in brackets. Memory: "
        "growth during one call, `traced` = tracemalloc peak (Python/NumPy allocations "
        "only), `RSS` = resident high-water mark (everything, Rust included).",
        "",
        "| table | rows × features | CS | mean correlated records | privtab | NumPy "
        "| speed-up | privtab traced | privtab RSS | NumPy traced | NumPy RSS |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ours, theirs = r["privtab"], r["numpy"]
        lines.append(
            f"| {r['table']} | {r['rows']:,} × {r['features']} "
            f"| {r['correlated_sensitivity']:.4f} | {r['mean_correlated_records']:,.1f} "
            f"| {r['privtab_seconds']:.2f} s ({ours['cpu_seconds']:.1f}) "
            f"| {theirs['seconds']:.1f} s ({theirs['cpu_seconds']:.1f}) "
            f"| {r['speedup']:.0f}× | {mib(ours['traced_bytes'])} "
            f"| {mib(ours['rss_bytes'])} | {mib(theirs['traced_bytes'])} "
            f"| {mib(theirs['rss_bytes'])} |"
        )
    return lines


def semeion_lines(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## (b) DPFSDR fit on Semeion (1,593 × 256, 10 classes)",
        "",
        "δ = 0.7, record threshold 0.8, ε₁ = 0.1, `data_norm=16`, "
        "`random_state=0`; wall-clock and CPU seconds, each the least of 3 fits.",
        "",
        "| ε₂ | seconds | CPU seconds | refits | kept by the filter | selected "
        "| training accuracy | CS |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['epsilon_training']} | {r['seconds']:.2f} "
            f"| {r['cpu_seconds']:.2f} | {r['refits']} "
            f"| {r['kept_features']} | {len(r['selected'])} "
            f"| {r['training_accuracy']:.3f} | {r['correlated_sensitivity']:.2f} |"
        )
    return lines


def large_lines(large: dict[str, Any]) -> list[str]:
    return [
        f"## (c) {large['rows']:,} × {large['features']}, uniform values",
        "",
        f"{large['seconds']:.1f} s ({large['cpu_seconds']:.1f} CPU s), CS = "
        f"{large['correlated_sensitivity']:.4f}; memory {mib(large['traced_bytes'])} "
        f"traced, {mib(large['rss_bytes'])} RSS for an input of "
        f"{mib(large['input_bytes'])} (the n × n matrix would take "
        f"{large['rows'] ** 2 * 8 / 2**40:,.1f} TiB). "
        f"{large['checked_records']} records' degrees checked against NumPy.",
    ]


def write(results: dict[str, Any], command: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "correlation.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        "# Correlated sensitivity and the DPFSDR fit",
        "",
        f"`{command}` on {results['machine']}. Timings taken on a shared machine "
        "(other jobs running): read the ratios, measured side by side in one process, "
        "and the CPU seconds. One-minute load average (2 cores) before → after each "
        "part: "
        + ", ".join(
            f"({part}) {before:.1f} → {after:.1f}"
            for part, (before, after) in results["load_average"].items()
        )
        + ".",
    ]
    for key, section in (
        ("sensitivity", sensitivity_lines),
        ("dpfsdr_semeion", semeion_lines),
        ("large", large_lines),
    ):
        if key in results:
            lines += ["", *section(results[key])]
    (out / "correlation.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=30)
    parser.add_argument("--large-rows", type=int, default=1_000_000)
    parser.add_argument("--large-features", type=int, default=50)
    parser.add_argument(
        "--parts", default="abc", help="which of the parts a, b, c to run (abc)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    args = parser.parse_args()
    return_freed_memory()
    results: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "record_delta": RECORD_DELTA,
        "numpy_block_rows": BLOCK,
    }
    parts: list[tuple[str, str, Callable[[], Any]]] = [
        ("a", "sensitivity", lambda: small_tables(args.rows, args.features)),
        ("b", "dpfsdr_semeion", semeion_fits),
        ("c", "large", lambda: large_table(args.large_rows, args.large_features)),
    ]
    results["load_average"] = {}
    for part, key, run in parts:
        if part in args.parts:
            before = os.getloadavg()[0]
            results[key] = run()
            results["load_average"][part] = [before, os.getloadavg()[0]]
    command = "python benches/bench_correlation.py" + "".join(
        f" --{name.replace('_', '-')} {value}"
        for name, value in vars(args).items()
        if value != parser.get_default(name)
    )
    write(results, command, args.out)


if __name__ == "__main__":
    main()
