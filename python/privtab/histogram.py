"""Thresholded differentially private histograms over large product domains.

The construction of Vinterbo (2012), §2.1 [1]_: noise on every cell of the declared
domain, keep the cells above a threshold, and never enumerate the (possibly 2**64-cell)
domain to do so.

Core kernels called: ``privtab._core.thresholded_histogram`` (noise, threshold and
the sampled false positives over the domain without enumerating it), or
``privtab._core.thresholded_histogram_of_rows`` for C-ordered codes read in place.

References
----------
.. [1] S. A. Vinterbo, "Differentially Private Projected Histograms: Construction and
   Use for Prediction", in Machine Learning and Knowledge Discovery in Databases
   (ECML PKDD 2012), Lecture Notes in Computer Science 7524, Springer, 2012.
.. [2] J. Lei, "Differentially private M-estimators", NIPS 2011.
.. [3] C. Canonne, G. Kamath and T. Steinke, "The discrete Gaussian for differential
   privacy", NeurIPS 2020.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from privtab import _core
from privtab._estimator import PrivateRun
from privtab._random import RandomState
from privtab._validation import (
    as_cardinalities,
    as_code_columns,
    as_float_array,
    as_keys,
    check_cardinalities,
    check_choice,
    check_epsilon,
    check_keys_in_domain,
    check_positive_int,
    check_real,
    infer_code_columns,
    is_encoded,
    rows_in_place,
    warn_inferred_domain,
)
from privtab.accountant import BudgetAccountant
from privtab.engine import CodeTable, MemoryTable, dask_table, is_distributed
from privtab.mixed_radix import mixed_radix_decode

__all__ = ["SparseHistogram", "thresholded_histogram"]

_NOISES = ("laplace", "discrete")
_MAX_THRESHOLD = 2.0**53


class SparseHistogram:
    """The kept cells of a thresholded histogram over a product domain.

    Returned by :func:`thresholded_histogram`; cells not listed were released as 0.

    Parameters
    ----------
    keys : ndarray of shape (n_cells,), uint64
        Mixed-radix keys of the kept cells (first column most significant),
        strictly increasing.
    values : ndarray of shape (n_cells,), float64
        Their noisy values, all > ``threshold``.
    cardinalities : sequence of int
        The public domain size of each column.
    threshold : float
        The threshold τ the values exceed.
    epsilon : float
        The privacy parameter of the release.
    noise : {"laplace", "discrete"}
        The noise distribution used.
    n_rows : int
        The number of records (public under replace-one neighbours).

    Attributes
    ----------
    keys, values, cardinalities, threshold, epsilon, noise, n_rows
        As above; ``cardinalities`` is a tuple of int.
    domain_size : int
        The number of cells of the domain, ``prod(cardinalities)``.

    Examples
    --------
    >>> import numpy as np
    >>> hist = SparseHistogram(
    ...     np.array([1, 4], dtype=np.uint64), np.array([2.4, 1.7]), [2, 3],
    ...     threshold=0.5, epsilon=1.0, noise="laplace", n_rows=5,
    ... )
    >>> hist.to_codes()
    array([[0, 1],
           [1, 1]], dtype=uint32)
    >>> hist.to_records()
    array([[0, 1],
           [0, 1],
           [1, 1],
           [1, 1]], dtype=uint32)
    """

    def __init__(
        self,
        keys: np.ndarray,
        values: np.ndarray,
        cardinalities: Any,
        *,
        threshold: float,
        epsilon: float,
        noise: str,
        n_rows: int,
    ) -> None:
        self.keys = as_keys(keys, allow_empty=True)
        self.values = as_float_array(values, "values", ndim=1)
        if self.values.shape != self.keys.shape:
            raise ValueError(
                "keys and values must be 1-D of the same length, got shapes "
                f"{self.keys.shape} and {self.values.shape}"
            )
        if np.any(self.keys[1:] <= self.keys[:-1]):
            raise ValueError("keys must be strictly increasing")
        self.cardinalities = tuple(int(k) for k in as_cardinalities(cardinalities))
        check_keys_in_domain(self.keys, self.cardinalities)
        self.threshold = check_real(threshold, "threshold")
        if math.isnan(self.threshold):
            raise ValueError("threshold must not be NaN")
        if np.any(self.values <= self.threshold):
            raise ValueError(
                f"values must all be > threshold = {self.threshold!r}, got "
                f"{self.values.min()!r}"
            )
        self.epsilon = check_epsilon(epsilon)
        self.noise = check_choice(noise, "noise", _NOISES)
        self.n_rows = check_positive_int(n_rows, "n_rows", minimum=0)

    @property
    def domain_size(self) -> int:
        """The number of cells of the declared domain (an exact Python int)."""
        return math.prod(self.cardinalities)

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def __repr__(self) -> str:
        return (
            f"SparseHistogram(n_cells={len(self)}, domain_size={self.domain_size}, "
            f"threshold={self.threshold:.6g}, epsilon={self.epsilon!r}, "
            f"noise={self.noise!r})"
        )

    def to_codes(self) -> np.ndarray:
        """Decode the kept cells into rows of codes.

        Returns
        -------
        ndarray of shape (n_cells, n_columns), uint32
            Row ``i`` is the cell of ``keys[i]``.
        """
        if len(self) == 0:
            return np.zeros((0, len(self.cardinalities)), dtype=np.uint32)
        return mixed_radix_decode(self.keys, self.cardinalities)

    def record_counts(self) -> np.ndarray:
        """Return the number of synthetic records of each kept cell, ``⌈v − 0.5⌉`` (>= 0).

        Returns
        -------
        ndarray of shape (n_cells,), int64
        """
        counts = np.ceil(self.values - 0.5)
        # Values are below 2**53 + n_rows, far inside int64.
        return np.maximum(counts, 0).astype(np.int64)

    def to_records(self, *, max_records: int | None = None) -> np.ndarray:
        """Synthetic records: each kept cell repeated ``⌈v − 0.5⌉`` times.

        Parameters
        ----------
        max_records : int, optional
            Refuse to build more records than this (default: only what fits in
            memory addressing).

        Returns
        -------
        ndarray of shape (n_records, n_columns), uint32
            Cells in key order, each repeated.

        Raises
        ------
        MemoryError
            If the records would exceed ``max_records`` or cannot be addressed; the
            size is checked before anything is allocated.
        """
        counts = self.record_counts()
        total = int(counts.sum(dtype=np.float64)) if counts.size else 0
        limit = sys.maxsize // (4 * max(len(self.cardinalities), 1))
        if max_records is not None:
            limit = min(
                limit, check_positive_int(max_records, "max_records", minimum=0)
            )
        if total > limit:
            bound = (
                "max_records"
                if max_records is not None and limit == max_records
                else "what can be addressed"
            )
            raise MemoryError(
                f"to_records would build {total} records of {len(self.cardinalities)} "
                f"codes, more than the limit of {limit} ({bound})"
            )
        return np.repeat(self.to_codes(), counts, axis=0)


class _RowsInPlace:
    """C-ordered integer codes of :func:`thresholded_histogram`, counted in place.

    The core counts them as they are and checks every code
    (``privtab._core.thresholded_histogram_of_rows``), with no column-major ``uint32``
    copy: for the same seed, the release of ``privtab._core.thresholded_histogram`` on
    that copy, bit for bit.
    """

    def __init__(self, rows: np.ndarray, cardinalities: np.ndarray) -> None:
        self.rows = rows
        self.cardinalities = cardinalities
        self.n_rows = rows.shape[0]

    def thresholded_histogram(
        self,
        epsilon: float,
        threshold: float,
        noise: str,
        max_cells: int,
        seed: int | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Keys and noisy values of the thresholded histogram of all columns."""
        try:
            return _core.thresholded_histogram_of_rows(
                self.rows,
                self.cardinalities,
                epsilon,
                threshold,
                noise,
                max_cells,
                seed,
            )
        except ValueError:
            # A bad code is named as for any input; any other error is raised as is.
            as_code_columns(self.rows, "codes", self.cardinalities)
            raise


def _code_table(codes: Any, cardinalities: Any) -> CodeTable | _RowsInPlace:
    """Return the validated codes of :func:`thresholded_histogram` as a CodeTable.

    A ``CodeTable`` (from another method, with its own cardinalities) is used as it
    is; C-ordered integer codes with declared cardinalities are counted in place
    (:class:`_RowsInPlace`), but for ``uint32`` codes, which the core checks as it
    reads their columns (and names a bad one its own way).
    """
    if isinstance(codes, CodeTable):
        return codes
    if is_distributed(codes):
        table, inferred = dask_table(codes, cardinalities, "codes")
        if inferred:
            warn_inferred_domain("cardinalities of codes")
        if table.n_rows == 0:
            raise ValueError("codes must be non-empty, got 0 rows in every partition")
        return table
    table_like = is_encoded(codes)
    if table_like and cardinalities is None:
        cardinalities = codes.cardinalities
    raw = codes.codes if table_like else codes
    rows = rows_in_place(raw) if cardinalities is not None else None
    if rows is not None and rows.dtype != np.uint32:
        return _RowsInPlace(rows, check_cardinalities(cardinalities, rows.shape[1]))
    if (
        cardinalities is not None
        and isinstance(raw, np.ndarray)
        and raw.dtype == np.uint32
        and raw.ndim == 2
        and raw.size > 0
    ):
        # uint32 codes need no conversion, and the core checks every code against
        # its cardinality while building its column view: skip a second pass here.
        columns = np.ascontiguousarray(raw.T)
        cards = check_cardinalities(cardinalities, raw.shape[1])
    elif cardinalities is None:
        columns, cards = infer_code_columns(codes, "codes")
    else:
        columns, cards = as_code_columns(raw, "codes", cardinalities)
    return MemoryTable(columns, cards)


def _core_max_cells(max_cells: int) -> int:
    """``max_cells`` as the core takes it: a cap above 2**64 - 1 cells caps nothing more."""
    return min(max_cells, int(np.iinfo(np.uint64).max))


def default_threshold(A: float, n_rows: int, epsilon: float) -> float:
    """Return the threshold ``A * ln(n_rows) / epsilon`` (Lei 2011), below 2**53.

    Raises
    ------
    ValueError
        If the threshold is not below ``2**53``: it depends on ``A``, ``n_rows`` and
        ``epsilon`` only, all public.
    """
    threshold = A * math.log(n_rows) / epsilon
    if not abs(threshold) < _MAX_THRESHOLD:
        raise ValueError(
            f"the default threshold A * ln(n) / epsilon = {threshold!r} is not "
            "below 2**53; pass a smaller A or a threshold"
        )
    return threshold


def check_histogram_size(
    cardinalities: Any,
    n_rows: int,
    epsilon: float,
    *,
    A: float,
    noise: str,
    max_cells: int,
) -> None:
    """Refuse, before any draw, what :func:`thresholded_histogram` would refuse.

    Checks a release with the default threshold over a domain of ``cardinalities``:
    the threshold, the noise parameters, a domain above 2**64 cells and the expected
    number of kept empty cells against ``max_cells``. Every input is public, so a
    refusal tells nothing about the data.

    Raises
    ------
    DomainError
        If the domain exceeds 2**64 cells or the expected output exceeds
        ``max_cells``.
    ValueError
        If the threshold is not below 2**53 or ``epsilon`` is out of the noise's range.
    """
    _core.check_histogram(
        np.asarray(cardinalities, dtype=np.uint32),
        epsilon,
        default_threshold(A, n_rows, epsilon),
        noise,
        _core_max_cells(max_cells),
    )


def thresholded_histogram(
    codes: Any,
    cardinalities: Any,
    epsilon: float,
    *,
    threshold: float | None = None,
    A: float = 0.5,
    noise: str = "laplace",
    max_cells: int = 10_000_000,
    random_state: RandomState = None,
    accountant: BudgetAccountant | None = None,
    label: str | None = None,
) -> SparseHistogram:
    """Release an ε-differentially private thresholded histogram of categorical rows.

    Every cell of the product domain of ``cardinalities`` gets its count plus noise of
    scale ``2 / epsilon``; the cells whose noisy value exceeds ``threshold`` are
    returned. The domain is never enumerated, so it may have up to 2**64 cells.

    Parameters
    ----------
    codes : array-like of shape (n_rows, n_columns), pandas or polars DataFrame, or
        :class:`~privtab.EncodedTable`
        Integer codes, column ``j`` in ``0 .. cardinalities[j] - 1``. A Dask array or
        DataFrame (or a lazy ``EncodedTable``) is counted partition by partition and
        noised once here: the release is the in-memory one for the same seed
        (:mod:`privtab.engine`).
    cardinalities : array-like of int of shape (n_columns,) or None
        Public domain sizes; ``None`` takes them from an ``EncodedTable``, or infers
        them from the data (largest code + 1) with a
        :class:`~privtab.PrivacyLeakWarning`.
    epsilon : float
        Privacy parameter, finite and > 0.
    threshold : float, optional
        τ: cells whose noisy value is <= τ are dropped. Default ``A * ln(n_rows) /
        epsilon`` (Lei 2011). Must not depend on the data beyond ``n_rows``.
    A : float, default=0.5
        Constant of the default threshold, finite and >= 0.
    noise : {"laplace", "discrete"}, default="laplace"
        ``"laplace"``: ``Lap(0, 2/ε)`` (the paper's Proposition 1), released without
        a floating-point side channel: exact discrete Laplace noise on a power-of-two
        grid of step about ``2**-40 · 2/ε``, as :func:`~privtab.laplace_mechanism`
        does; values are multiples of the grid step.
        ``"discrete"``: the exact discrete Laplace ``P(Z = z) ∝ exp(-|z|·ε/2)``,
        sampled with integer arithmetic (Canonne et al. 2020); values are then integers.
    max_cells : int, default=10_000_000
        Refuse releases whose expected number of kept cells exceeds this.
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (the secure default) uses operating-system entropy. A fixed seed makes
        the output reproducible and voids privacy against anyone who knows it.
    accountant : BudgetAccountant, optional
        Charged ``epsilon`` after success; the default accountant when ``None``.
    label : str, optional
        The label of the accountant's ledger entry (default
        ``"thresholded_histogram"``).

    Returns
    -------
    SparseHistogram
        ``keys`` (uint64, sorted), ``values`` (float64, all > τ), ``cardinalities``,
        ``threshold``, ``epsilon``, ``noise``, ``n_rows``.

    Raises
    ------
    BudgetExceededError
        If ``accountant`` cannot afford ``epsilon`` (before reading ``codes``).
    DomainError
        If the product of the cardinalities exceeds 2**64, or the expected number of
        kept empty cells, at most ``m·p``, exceeds ``max_cells`` (the message names
        both; observed cells kept are at most ``n``, the size of the input).
    ValueError
        For invalid codes (negative, NaN, >= cardinality, empty, ragged) or
        parameters (``epsilon``, ``threshold``, ``A``, ``noise``, ``max_cells``).
    TypeError
        For non-integer codes or parameters of the wrong type.

    Notes
    -----
    **Privacy.** Neighbouring data sets differ by replacing one record, so ``n`` is
    public and one replacement moves one count down and another up: the histogram
    has L1 sensitivity 2, and noise of scale ``2/ε`` on every cell of the declared
    domain is ε-differentially private. Thresholding is post-processing as long as
    τ depends only on ``n`` (Proposition 1 of Vinterbo 2012). The empty cells are sampled from
    exactly the distribution they would have if each were noised and thresholded
    one by one. The ``max_cells`` check uses public numbers only (the
    expected number ``m·p`` of kept empty cells), so whether it raises reveals
    nothing about the data. One caveat: the number of
    kept empty cells is drawn by a floating-point binomial sampler with ``p``
    computed in double precision, even with ``noise="discrete"``.

    **Construction** (the paper's efficient scheme, in expected
    ``O(n·d + output)`` time, never ``O(m)``): rows become mixed-radix keys and are
    counted by radix sort (the ``n'`` observed cells); each observed cell gets its
    own noise and is kept if above τ; the number of kept empty cells is
    ``q ~ Binomial(m - n', p)`` with ``p = P(L > τ)`` (``q_d^(⌊τ⌋+1) / (1 + q_d)``,
    ``q_d = exp(-1/t)``, τ and the scale ``t`` in units of the grid: ``t = 2/ε`` and
    unit 1 for discrete noise, unit ``2**k ≈ 2**-40 · 2/ε`` and ``t ≈ 2/(ε·2**k)`` for
    Laplace noise, which is ``½·exp(-ε·τ/2)`` up to the grid's resolution); ``q``
    of the ``m - n'`` empty cells are drawn uniformly without replacement (ranks
    mapped to keys by one merge with the observed keys) and given the value
    ``⌊τ⌋ + 1 + Geometric`` in grid units (the discrete Laplace tail is memoryless).
    Counts, noise and τ are compared in grid units, exactly. Work is split into fixed
    chunks, one ChaCha20 stream each: a seed gives the same output for any thread
    count.

    With the default τ and ``A``, ``p = ½·n^(-A/2)``: the expected number of kept
    empty cells is about ``m / (2·sqrt(n))``. Large domains need a larger ``A``
    (e.g. ``A = 2`` gives ``m / (2n)``) or fewer columns.

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import BudgetAccountant, thresholded_histogram
    >>> rng = np.random.default_rng(0)
    >>> codes = rng.integers(0, 4, size=(10_000, 3))
    >>> acc = BudgetAccountant(1.0)
    >>> hist = thresholded_histogram(
    ...     codes, [4, 4, 4], 1.0, random_state=0, accountant=acc
    ... )
    >>> len(hist), hist.domain_size, acc.spent
    (64, 64, 1.0)
    >>> bool(np.all(hist.values > hist.threshold))
    True
    """
    A = check_real(A, "A")
    if not (math.isfinite(A) and A >= 0):
        raise ValueError(f"A must be finite and >= 0, got {A!r}")
    if threshold is not None:
        threshold = check_real(threshold, "threshold")
        if not (math.isfinite(threshold) and abs(threshold) < _MAX_THRESHOLD):
            raise ValueError(
                f"threshold must be finite with |threshold| < 2**53, got {threshold!r}"
            )
    if not isinstance(noise, str):
        raise TypeError(f"noise must be a str, got {type(noise).__name__}")
    if noise not in _NOISES:
        raise ValueError(f"noise must be 'laplace' or 'discrete', got {noise!r}")
    max_cells = _core_max_cells(check_positive_int(max_cells, "max_cells"))
    run = PrivateRun.start(epsilon, random_state, accountant, label=label)
    epsilon = run.epsilon

    table = _code_table(codes, cardinalities)
    n_rows = table.n_rows
    if threshold is None:
        threshold = default_threshold(A, n_rows, epsilon)
    if not isinstance(table, MemoryTable):
        # The size check before the counting pass, as the fused kernel makes it.
        _core.check_histogram(table.cardinalities, epsilon, threshold, noise, max_cells)
    keys, values = table.thresholded_histogram(
        epsilon, threshold, noise, max_cells, run.seed()
    )
    cards = table.cardinalities
    run.spend("thresholded_histogram")
    return SparseHistogram(
        keys,
        values,
        cards,
        threshold=threshold,
        epsilon=epsilon,
        noise=noise,
        n_rows=n_rows,
    )
