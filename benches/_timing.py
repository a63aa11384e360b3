"""Timing helpers shared by every benchmark script (imported from benches/ itself)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def _times(repeats: int, fn: Callable[[], T]) -> tuple[list[float], T]:
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times, result


def best_of(repeats: int, fn: Callable[[], T]) -> tuple[float, T]:
    """Best wall-clock seconds of ``repeats`` calls of ``fn``, and the last result."""
    times, result = _times(repeats, fn)
    return min(times), result


def best_seconds(repeats: int, fn: Callable[[], object]) -> float:
    """Best wall-clock seconds of ``repeats`` calls of ``fn``."""
    return best_of(repeats, fn)[0]


def best_interleaved(
    repeats: int, first: Callable[[], object], second: Callable[[], object]
) -> tuple[float, float]:
    """Best wall-clock seconds of ``first`` and of ``second``, called in turn ``repeats``
    times each, so that a machine whose speed drifts weighs on both alike."""
    pairs = [(_times(1, first)[0][0], _times(1, second)[0][0]) for _ in range(repeats)]
    return min(a for a, _ in pairs), min(b for _, b in pairs)


def median_of(repeats: int, fn: Callable[[], T]) -> tuple[float, T]:
    """Median wall-clock seconds of ``repeats`` calls of ``fn``, and the last result."""
    times, result = _times(repeats, fn)
    return statistics.median(times), result


class Stopwatch:
    """Wall-clock seconds of a ``with`` block: ``with Stopwatch() as watch: ...``.

    ``watch.seconds`` runs on while the block runs, and stops when it ends;
    ``watch.cpu_seconds`` is the CPU time of the whole process (every thread) over the
    same span, which a busy machine distorts less than wall-clock time.
    """

    def __init__(self) -> None:
        self._start = time.perf_counter()
        self._cpu_start = time.process_time()
        self._stop: float | None = None
        self._cpu_stop: float | None = None

    def __enter__(self) -> Stopwatch:
        self._start = time.perf_counter()
        self._cpu_start = time.process_time()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop = time.perf_counter()
        self._cpu_stop = time.process_time()

    @property
    def seconds(self) -> float:
        """Seconds since the block started (until it ended)."""
        end = time.perf_counter() if self._stop is None else self._stop
        return end - self._start

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds of the process since the block started (until it ended)."""
        end = time.process_time() if self._cpu_stop is None else self._cpu_stop
        return end - self._cpu_start


def median_wall_and_cpu(repeats: int, fn: Callable[[], T]) -> tuple[float, float, T]:
    """Median wall-clock and median process CPU seconds of ``repeats`` calls of ``fn``.

    For one-thread calls on a loaded machine the CPU time is the steadier figure: waiting
    for a core counts in the wall-clock time only.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    walls, cpus = [], []
    result: T
    for _ in range(repeats):
        with Stopwatch() as watch:
            result = fn()
        walls.append(watch.seconds)
        cpus.append(watch.cpu_seconds)
    return statistics.median(walls), statistics.median(cpus), result


def free_page_reporting() -> dict[str, int] | None:
    """The guest's free page reporting settings, where it runs in such a VM.

    With reporting on, blocks of ``2**page_reporting_order`` pages freed for
    ``min_free_ms`` are handed back to the host, and the next touch of one is faulted
    in by the host: on the 2-vCPU VM of ``benches/results`` (``min_free_ms`` 0), filling
    a fresh 2 GB array took 2.6–8 s when its memory had been handed back and 0.36–0.7 s
    when it had not, so code that frees and reallocates large buffers pays far more
    there than on a machine that keeps its free memory. ``None`` where ``/sys`` shows
    no reporting.
    """
    folder = Path("/sys/module/page_reporting/parameters")
    settings = {}
    for name in ("page_reporting_order", "min_free_ms"):
        try:
            settings[name] = int((folder / name).read_text())
        except (OSError, ValueError):
            continue
    return settings or None


def _status_bytes(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) * 1024
    raise OSError(f"/proc/self/status has no {field}")


class PeakMemory:
    """Growth of the resident set during a ``with`` block, Rust allocations included.

    The high-water mark ``VmHWM`` is reset through ``/proc/self/clear_refs`` when the
    block starts; ``grown_bytes`` is that mark at the end minus the resident set at the
    start (``None`` where Linux's ``/proc`` is not available). Unlike :mod:`tracemalloc`
    it sees every allocation, not only those made through Python's allocators.
    """

    def __init__(self) -> None:
        self._before: int | None = None
        self.grown_bytes: int | None = None

    def __enter__(self) -> PeakMemory:
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self._before = _status_bytes("VmRSS:")
        except OSError:
            self._before = None
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._before is not None:
            self.grown_bytes = max(0, _status_bytes("VmHWM:") - self._before)
