"""Neighbouring data sets that stress privtab's mechanisms.

An audit bounds ε for one pair of data sets, so it finds a violation only on a pair
where the mechanism's privacy loss comes close to its claim. Each function here builds
such a pair for a given domain, under privtab's neighbouring relation: *replace one
record* (the number of rows ``n`` is public). ``pair.data`` and ``pair.neighbour``
differ in the record ``pair.changed`` only.

====================================  ===============================================
pair                                  stresses
====================================  ===============================================
:func:`extreme_record`                sums and means (Laplace mechanism, DP
                                      microaggregation): a record crosses the domain
:func:`rare_category`                 histograms and tables: a cell held by one record
                                      (the empty-cell sampling of the thresholded
                                      histogram on the other side)
:func:`threshold_crossing`            a thresholded histogram: one cell crosses the
                                      threshold while another moves the other way
:func:`partition_change`              PrivateKD, DP-DILCA contexts, the k-AC picks, the
                                      F-score importance: one candidate gains, every
                                      other loses
:func:`flipped_label`                 DP linear models: a record at the norm bound
                                      with its label flipped
:func:`single_holder_label`           label sets and one-vs-rest models: a class held
                                      by one record
:func:`local_sensitivity_extremes`    iDP microaggregation: a centroid moves by its
                                      full local sensitivity, the noise scale stays
:func:`rank_shift`                    iDP microaggregation: one record shifts every
                                      cluster by one rank
====================================  ===============================================

Core kernels called: none (NumPy only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privtab._validation import (
    check_bounds_pair,
    check_positive,
    check_positive_int,
)

__all__ = [
    "NeighbouringPair",
    "extreme_record",
    "flipped_label",
    "local_sensitivity_extremes",
    "partition_change",
    "rank_shift",
    "rare_category",
    "replace_record",
    "single_holder_label",
    "threshold_crossing",
]


@dataclass(frozen=True)
class NeighbouringPair:
    """Two data sets that differ in one record.

    Attributes
    ----------
    data, neighbour : any
        The two data sets: arrays, or ``(X, y)`` tuples for supervised mechanisms.
    description : str
        What the replaced record does.
    changed : int
        The index of the replaced record.

    Examples
    --------
    >>> pair = extreme_record(4, (0.0, 1.0))
    >>> data, neighbour = pair
    >>> data.ravel().tolist(), neighbour.ravel().tolist()
    ([0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0])
    """

    data: Any
    neighbour: Any
    description: str
    changed: int = 0

    def __iter__(self) -> Any:
        return iter((self.data, self.neighbour))


def _rows(n_rows: Any, minimum: int = 2) -> int:
    return check_positive_int(n_rows, "n_rows", minimum=minimum)


def replace_record(
    data: Any, row: int, record: Any, description: str = ""
) -> NeighbouringPair:
    """Pair ``data`` with a copy whose row ``row`` is replaced by ``record``.

    Parameters
    ----------
    data : array-like of shape (n_rows, ...) or tuple of them
        A tuple (e.g. ``(X, y)``) is replaced element-wise: ``record`` is then a tuple
        of the same length.
    row : int
        The record to replace, in ``[0, n_rows)``.
    record : array-like or tuple
        The new record.
    description : str, optional

    Returns
    -------
    NeighbouringPair

    Examples
    --------
    >>> import numpy as np
    >>> X, y = np.zeros((3, 2)), np.array([0, 1, 0])
    >>> pair = replace_record((X, y), 1, ([5.0, 5.0], 0))
    >>> pair.neighbour[0][1].tolist(), pair.neighbour[1].tolist()
    ([5.0, 5.0], [0, 0, 0])
    """
    parts = data if isinstance(data, tuple) else (data,)
    records = record if isinstance(data, tuple) else (record,)
    if len(records) != len(parts):
        raise ValueError(
            f"record must have one part per part of data ({len(parts)}), got "
            f"{len(records)}"
        )
    arrays = [np.asarray(p) for p in parts]
    n = arrays[0].shape[0]
    row = check_positive_int(row, "row", minimum=0)
    if row >= n:
        raise ValueError(f"row must be in [0, {n}), got {row}")
    changed = []
    for array, new in zip(arrays, records, strict=True):
        copy = array.copy()
        copy[row] = new
        changed.append(copy)
    if isinstance(data, tuple):
        return NeighbouringPair(tuple(arrays), tuple(changed), description, row)
    return NeighbouringPair(arrays[0], changed[0], description, row)


def extreme_record(
    n_rows: int, bounds: Any, *, n_columns: int = 1, row: int = 0
) -> NeighbouringPair:
    """Every value at the lower bound; the neighbour moves one record to the upper one.

    The largest change of any sum, mean or centroid a record can make: the query moves
    by exactly its sensitivity ``hi − lo`` (per column).

    Parameters
    ----------
    n_rows : int
        Number of records, >= 2.
    bounds : (lo, hi)
        The public domain of every column, ``lo < hi``.
    n_columns : int, default=1
    row : int, default=0
        The record moved.

    Returns
    -------
    NeighbouringPair
        ``float64`` arrays of shape ``(n_rows, n_columns)``.
    """
    n = _rows(n_rows)
    d = check_positive_int(n_columns, "n_columns")
    lo, hi = check_bounds_pair("bounds", bounds)
    data = np.full((n, d), lo, dtype=np.float64)
    return replace_record(
        data, row, np.full(d, hi), f"one record moved from {lo:g} to {hi:g}"
    )


def rare_category(
    n_rows: int, cardinalities: Any, *, column: int = 0, row: int = 0
) -> NeighbouringPair:
    """Every record in cell 0; the neighbour gives one record a category no other holds.

    The neighbour's record sits alone in a cell that is empty in ``data`` (its value
    there comes from the thresholded histogram's empty-cell sampling), and its new
    category appears in the neighbour only.

    Parameters
    ----------
    n_rows : int
        Number of records, >= 2.
    cardinalities : sequence of int
        Public domain size of each column (each >= 2).
    column : int, default=0
        The column that takes the rare category ``cardinalities[column] - 1``.
    row : int, default=0

    Returns
    -------
    NeighbouringPair
        ``uint32`` code matrices of shape ``(n_rows, len(cardinalities))``.
    """
    n = _rows(n_rows)
    cards = _cardinalities(cardinalities)
    column = _column(column, len(cards))
    data = np.zeros((n, len(cards)), dtype=np.uint32)
    record = np.zeros(len(cards), dtype=np.uint32)
    record[column] = cards[column] - 1
    return replace_record(
        data,
        row,
        record,
        f"one record takes category {cards[column] - 1} of column {column}, held by "
        "no other record",
    )


def threshold_crossing(n_rows: int, cardinalities: Any, count: int) -> NeighbouringPair:
    """Let a cell of ``count`` records gain one, crossing a threshold in (count, count + 1].

    Cell ``u = (1, 1, …)`` holds ``count`` records in ``data`` and ``count + 1`` in
    the neighbour; the moved record comes from the background cell ``w = (0, 0, …)``,
    which loses one. Both changed cells are observed: the pair reaches the histogram's
    full L1 sensitivity 2.

    Parameters
    ----------
    n_rows : int
        Number of records, > ``count + 1``.
    cardinalities : sequence of int
        Each >= 2.
    count : int
        Records of cell ``u`` in ``data``, >= 0.

    Returns
    -------
    NeighbouringPair
        ``uint32`` code matrices; ``changed`` is the moved record.
    """
    count = check_positive_int(count, "count", minimum=0)
    n = _rows(n_rows, minimum=count + 2)
    cards = _cardinalities(cardinalities)
    data = np.zeros((n, len(cards)), dtype=np.uint32)
    data[:count] = 1
    return replace_record(
        data,
        count,
        np.ones(len(cards), dtype=np.uint32),
        f"a record moves from cell (0, …), holding {n - count}, to cell (1, …), "
        f"holding {count}",
    )


def partition_change(
    n_rows: int, n_columns: int, *, background: str = "constant"
) -> NeighbouringPair:
    """One record discerns column 0 in ``data`` and every other column in the neighbour.

    ``X`` is binary: every record is all zeros except record 0, which is ``(1, 0, …,
    0)`` in ``data`` and ``(0, 1, …, 1)`` in the neighbour, with label 1 on both sides.
    Column 0 is the one candidate whose score rises (it alone splits record 0 from the
    rest in ``data``) while every other candidate's falls: the exponential mechanism's
    worst case as the number of columns grows (PrivateKD's discernibility, DP-DILCA's
    relevance with the label as the target, the Ham score of the k-AC picks, the
    F-score importance, whose L1 change is the full 2).

    Parameters
    ----------
    n_rows : int
        Number of records, >= 4.
    n_columns : int
        Number of candidate columns, >= 2.
    background : {"constant", "alternating"}, default="constant"
        The labels of the other records: all 0 (discernibility, relevance), or
        alternating 0, 1, 0, … from record 1 on (so both classes have several records,
        ``n_rows // 2`` positives with an even ``n_rows``: class sizes, within-class
        variances).

    Returns
    -------
    NeighbouringPair
        ``(X, y)`` tuples, ``X`` of ``int64`` 0/1 and ``y`` of ``int64`` labels.
    """
    n = _rows(n_rows, minimum=4)
    d = check_positive_int(n_columns, "n_columns", minimum=2)
    if background not in ("constant", "alternating"):
        raise ValueError(
            f"background must be 'constant' or 'alternating', got {background!r}"
        )
    X = np.zeros((n, d), dtype=np.int64)
    X[0, 0] = 1
    y = np.zeros(n, dtype=np.int64)
    y[0] = 1
    if background == "alternating":
        y[1:] = np.arange(2, n + 1) % 2
    record = np.ones(d, dtype=np.int64)
    record[0] = 0
    return replace_record(
        (X, y),
        0,
        (record, 1),
        "one record moves its distinguishing value from column 0 to every other column",
    )


def flipped_label(n_rows: int, norm: float, *, n_columns: int = 1) -> NeighbouringPair:
    """Flip the label of a record at the norm bound; every other row is zero.

    The other rows carry no gradient, so the ERM minimiser is decided by the one
    record: it moves as far as strong convexity allows (Chaudhuri et al. 2011's bound
    ``2/(nλ)`` for a loss with ``|ℓ'| = 1`` there, the Huber loss near 0).

    Parameters
    ----------
    n_rows : int
        Number of records, >= 3.
    norm : float
        The public bound on the rows' L2 norm (``data_norm``), > 0.
    n_columns : int, default=1
        The record is ``norm`` times the first unit vector.

    Returns
    -------
    NeighbouringPair
        ``(X, y)`` tuples: ``X`` float64, ``y`` int64 in {0, 1} (record 0 has label 1
        in ``data`` and 0 in the neighbour; the others alternate 0, 1, …).
    """
    n = _rows(n_rows, minimum=3)
    d = check_positive_int(n_columns, "n_columns")
    norm = check_positive(norm, "norm")
    X = np.zeros((n, d))
    X[0, 0] = norm
    y = np.arange(n, dtype=np.int64) % 2
    y[0] = 1
    return replace_record(
        (X, y), 0, (X[0], 0), f"a record at norm {norm:g} has its label flipped"
    )


def single_holder_label(
    n_rows: int, norm: float, *, n_classes: int = 3, n_columns: int = 1
) -> NeighbouringPair:
    """Give a class to one record in ``data`` and to none in the neighbour.

    Record 0 (at the norm bound) has class ``n_classes - 1`` in ``data`` and class 0
    in the neighbour; the other records, all zero, cycle through the classes
    ``0 .. n_classes - 2``. An inferred label set differs between the two; a
    declared one does not, but the one-vs-rest model (or the histogram cells) of the
    rare class still hinge on the one record.

    Parameters
    ----------
    n_rows : int
        Number of records, >= ``n_classes``.
    norm : float
        The record's L2 norm, > 0.
    n_classes : int, default=3
        >= 2.
    n_columns : int, default=1

    Returns
    -------
    NeighbouringPair
        ``(X, y)`` tuples.
    """
    q = check_positive_int(n_classes, "n_classes", minimum=2)
    n = _rows(n_rows, minimum=max(q, 3))
    d = check_positive_int(n_columns, "n_columns")
    norm = check_positive(norm, "norm")
    X = np.zeros((n, d))
    X[0, 0] = norm
    y = np.arange(n, dtype=np.int64) % (q - 1)
    y[0] = q - 1
    return replace_record(
        (X, y),
        0,
        (X[0], 0),
        f"class {q - 1} is held by one record (at norm {norm:g}), which the neighbour "
        "relabels 0",
    )


def local_sensitivity_extremes(bounds: Any, *, mechanism: str) -> NeighbouringPair:
    """One cluster of three; its centroid moves by its full local sensitivity.

    For ε-individual DP the noise is calibrated on the actual data set, so a faithful
    audit needs a neighbour whose local sensitivity, hence noise scale, is the same.
    ``"idp_ls"``: ``(lo, lo, hi)`` → ``(lo, hi, hi)``: the mean moves by
    ``(hi − lo)/3 = LS``. ``"idp_cbls"``: ``(lo, mid, hi)`` → ``(lo, lo, mid)``: the
    pre-processed centroid (the median) moves by ``(hi − lo)/2 = LS``.

    Parameters
    ----------
    bounds : (lo, hi)
    mechanism : {"idp_ls", "idp_cbls"}

    Returns
    -------
    NeighbouringPair
        ``float64`` arrays of shape ``(3, 1)``; ``data`` is the actual data set.
    """
    lo, hi = check_bounds_pair("bounds", bounds)
    if mechanism == "idp_ls":
        data, record, row = np.array([lo, lo, hi]), hi, 1
    elif mechanism == "idp_cbls":
        data, record, row = np.array([lo, (lo + hi) / 2, hi]), lo, 2
    else:
        raise ValueError(f"mechanism must be 'idp_ls' or 'idp_cbls', got {mechanism!r}")
    return replace_record(
        data.reshape(3, 1),
        row,
        [record],
        f"one record of a 3-record cluster moves to {record:g}; the local sensitivity "
        "stays",
    )


def rank_shift(n_rows: int, k: int, bounds: Any) -> NeighbouringPair:
    """Evenly spaced values; the smallest record jumps above the largest.

    With ``n_rows`` a multiple of ``k``, every cluster of the individual ranking gains
    its next value and loses its smallest: each centroid moves by one spacing, and so
    does each local sensitivity's anchor values, which keeps the iDP noise scales
    equal on both sides. The paper's iDP analysis fixes the clusters; this pair
    shifts all of them, the worst case documented for
    :class:`~privtab.MicroaggregationMasker`.

    Parameters
    ----------
    n_rows : int
        Number of records, a multiple of ``k``, >= ``2k``.
    k : int
        Cluster size, >= 1.
    bounds : (lo, hi)
        The values ``0, 1, …, n_rows − 1`` and the jump to ``n_rows`` must lie inside.

    Returns
    -------
    NeighbouringPair
        ``float64`` arrays of shape ``(n_rows, 1)``.
    """
    k = check_positive_int(k, "k")
    n = _rows(n_rows, minimum=2 * k)
    if n % k:
        raise ValueError(f"n_rows must be a multiple of k={k}, got {n}")
    lo, hi = check_bounds_pair("bounds", bounds)
    if lo > 0 or hi < n:
        raise ValueError(f"bounds must contain [0, {n}], got ({lo:g}, {hi:g})")
    data = np.arange(n, dtype=np.float64).reshape(n, 1)
    return replace_record(
        data, 0, [float(n)], f"the smallest of {n} records jumps above the largest"
    )


def _cardinalities(cardinalities: Any) -> list[int]:
    cards = [check_positive_int(c, "cardinalities", minimum=2) for c in cardinalities]
    if not cards:
        raise ValueError("cardinalities must hold at least one column")
    return cards


def _column(column: Any, n_columns: int) -> int:
    column = check_positive_int(column, "column", minimum=0)
    if column >= n_columns:
        raise ValueError(f"column must be in [0, {n_columns}), got {column}")
    return column
