"""A labelled categorical table written as Parquet partitions, for the Dask benchmarks.

Shared by ``bench_dask.py`` and ``bench_scaleout.py``: the table is generated and
written one partition at a time, so it never exists whole in memory, and the first
rows can be read back into numpy for the in-memory side of a comparison.
"""

from __future__ import annotations

import resource
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

#: Name of the binary label column.
LABEL = "label"


def column_names(n_columns: int) -> list[str]:
    """Names of the code columns: ``c0``, ``c1``, ..."""
    return [f"c{j}" for j in range(n_columns)]


def write_partitions(
    directory: Path,
    n_rows: int,
    partition_rows: int,
    cardinalities: Sequence[int],
    seed: int,
) -> int:
    """Write ``n_rows`` rows as Parquet partitions of ``partition_rows``; return how many.

    Column ``j`` (cardinality ``cardinalities[j]``, at most 256) follows the binary
    label on a third of the rows (value ``label · (j + 1) mod cardinality``) and is
    uniform on the rest. Codes and label are stored as uint8.
    """
    names = column_names(len(cardinalities))
    rng = np.random.default_rng(seed)
    n_parts = 0
    for start in range(0, n_rows, partition_rows):
        n = min(partition_rows, n_rows - start)
        label = rng.integers(0, 2, n, dtype=np.uint8)
        columns = {}
        for j, card in enumerate(cardinalities):
            noise = rng.integers(0, card, n, dtype=np.uint16)
            shift = np.uint16(j + 1)
            # A third of the rows follow the label, the rest are uniform.
            follow = rng.random(n) < 1 / 3
            columns[names[j]] = np.where(follow, (label * shift) % card, noise).astype(
                np.uint8
            )
        columns[LABEL] = label
        pq.write_table(pa.table(columns), directory / f"part-{n_parts:05d}.parquet")
        n_parts += 1
    return n_parts


def partition_paths(directory: Path) -> list[Path]:
    """The partitions of ``directory`` in the order they were written."""
    return sorted(directory.glob("*.parquet"))


def read_head(
    directory: Path, n_rows: int, names: Sequence[str], *, label: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """The first ``n_rows`` rows of the columns ``names`` (and the label), as numpy."""
    tables = []
    total = 0
    for path in partition_paths(directory):
        tables.append(pq.read_table(path, columns=[*names, *[LABEL][: int(label)]]))
        total += tables[-1].num_rows
        if total >= n_rows:
            break
    table = pa.concat_tables(tables).slice(0, n_rows)
    codes = np.column_stack([table[name].to_numpy() for name in names])
    return codes, table[LABEL].to_numpy() if label else None


def peak_rss_mib() -> float:
    """Peak resident memory of this process in MiB.

    Read from ``VmHWM`` where Linux provides it: ``ru_maxrss`` survives ``exec``, so
    a worker process spawned by a large client would report the client's peak.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
