"""Where the rows are counted: in this process, or on a Dask cluster.

The counting methods (contingency tables and sparse counts, the thresholded
histogram, PrivateKD and the greedy discernibility order, ProjectedHistogram, DILCA
and DP-DILCA, containment anonymity) read their rows through one seam, a :class:`CodeTable`: counts of the
mixed-radix keys of some columns, merged over all rows; pairwise contingency tables;
and per-class label counts of the refinements of a partition, whose class ids stay
with the rows. :class:`MemoryTable` holds numpy arrays in this process;
:class:`~privtab.engine._dask.DaskTable` holds the partitions of a Dask array or
DataFrame (``pip install "privtab[dask]"``). Another engine (e.g. PySpark's
``mapInArrow``) would implement the same few primitives.

Same answer
-----------
For the same rows, the same declared domains and the same ``random_state``, a method
given a Dask collection returns what it returns for the numpy array of those rows,
bit for bit:

- every partition is validated and counted by the same functions and Rust kernels
  (``privtab._core``); counts are exact integers and merging them is addition, so
  the merged counts are the counts of the whole table whatever the partitioning;
- nothing random happens on the workers: noise and exponential-mechanism draws are
  made once, in the calling process, from the same seed and in the same order as the
  in-memory path (``privtab._core.thresholded_histogram_of_counts`` and
  ``privtab._core.private_kd_round`` are the second halves of the in-memory kernels);
- real numbers computed from counts (entropies) are summed in the same order as the
  in-memory kernels sum them (cells in key order), so they agree to the last bit.

Where it does not hold, and why:

- An inferred domain (cardinalities or labels read off the data) is the same, but
  costs one more pass over the data, and warns as in memory.
- Error messages about a bad value name the row within its partition, not within
  the whole table, and come from the worker when the partition is computed. They
  begin with where that is, ``partition 3 (file /data/part.3.parquet) of X: ``:
  the partition's number and, when Dask reads it with
  ``dask.dataframe.read_parquet`` (directly or through column selections,
  ``assign`` or ``map_partitions``), the files it is read from; the error is
  raised in the calling process as one line, without the worker's traceback.
- ``random_state=None`` draws fresh operating-system entropy on both paths, so two
  runs never agree (by design).
- The limits differ: mixed-radix keys of the counted columns must fit in 64 bits on
  both paths, but the distributed discernibility search also keys (class, value,
  label) triples, which can overflow where the in-memory search (which keeps class
  ids per row) does not; it then raises ``DomainError``. Distributed containment
  anonymity counts patterns of at most 64 features, and a Dask DataFrame given to
  ``TableEncoder`` needs every domain declared (inferring one would read the table).
- The cost differs. The distributed PrivateKD reads the source once: the first
  round keeps every partition's validated codes on its worker (in the narrowest
  unsigned dtype, one byte a code for cardinalities up to 256) with its label and
  class ids, and later rounds refine those. While the classes of the selected
  columns are few, partitions count (class, value, label) with global class ids
  and the counts are merged; once a candidate's table would pass 2**16 cells, the
  rows move once so that every class lies in one partition, and from then on each
  partition refines its own classes and returns one undiscerned-pair count per
  candidate (merged counts would be as large as the data), with the in-memory
  search's kernel (``privtab._core.grouped_discernibility_round``). A worker holds its
  partitions' kept rows, about ``n_columns + 8`` bytes a row, up to twice during a
  round, and while a partition's round runs a ``uint32`` copy of its codes (the
  kernel's type). DP-DILCA's MaxDependency counts every candidate subset separately, where
  the in-memory kernels refine one partition in place.
- Dask reads only the columns a method uses: ``count_columns(columns=...)`` and a
  table's selection (ProjectedHistogram's histogram of the chosen attributes and the
  label) select their columns on the collection before Dask optimizes it, so that
  ``read_parquet`` reads only theirs; select the columns yourself
  (``frame[names]``) for a method that reads every column it is given. Series of one
  Dask DataFrame given together (``contingency_table(X["a"], X["b"])``) are read
  together: each partition of both columns in one task, rather than each column in
  its own task and one of them sent to the worker that holds the other. A partition
  whose columns share one integer dtype is checked and narrowed as one array: pandas'
  block is used in place when it already is the narrow dtype (as a Parquet read of
  ``uint8`` codes gives it), else converted in one pass, with no wider copy.

Running on a cluster
--------------------
Computations run on Dask's current scheduler: the ``distributed.Client`` the caller
opened (``Client("tls://host:8786")`` for an existing cluster, or
``Client(LocalCluster(n_workers=N, security=True))``), else Dask's local default. The
scheduler and its workers read the rows and hold the counts before noise is added, so
they are inside the trust boundary, as the calling process is; a cluster that other
users can reach should require TLS with certificates only trusted parties hold
(``distributed.Security``, or Dask's ``distributed.comm.tls`` configuration), and a
local one listen on 127.0.0.1. A caller such as a command line passes
``dask.dataframe.read_parquet(path)`` (a file or a directory of partitions, read one
partition at a time) to the same functions. A task's kernels use
every core of its machine (rayon's default) unless ``RAYON_NUM_THREADS`` says
otherwise; Dask sets ``OMP_NUM_THREADS=1`` for its workers but not that, so several
single-threaded workers on one machine should be started with
``RAYON_NUM_THREADS=1`` (``LocalCluster(env={"RAYON_NUM_THREADS": "1"})``).

Core kernels called: see ``privtab.engine._table`` and
``privtab.engine._dask``.
"""

from __future__ import annotations

from privtab.engine._dask import (
    DaskTable,
    dask_table,
    distributed_n_columns,
    is_distributed,
    map_blocks_1d,
    map_rows,
    sum_arrays,
)
from privtab.engine._table import LABEL, CodeTable, MemoryTable

__all__ = [
    "LABEL",
    "CodeTable",
    "DaskTable",
    "MemoryTable",
    "dask_table",
    "distributed_n_columns",
    "is_distributed",
    "map_blocks_1d",
    "map_rows",
    "sum_arrays",
]
