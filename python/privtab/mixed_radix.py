"""Mixed-radix keys: one ``uint64`` per row for a combination of categorical codes.

The digit order is that of :func:`numpy.ravel_multi_index` (first column most
significant), so results can be cross-checked against NumPy.

Core kernels called: ``privtab._core.mixed_radix_encode``,
``privtab._core.mixed_radix_encode_rows`` and ``privtab._core.mixed_radix_decode``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privtab import _core
from privtab._validation import (
    as_cardinalities,
    as_code_columns,
    as_code_matrix,
    as_keys,
    check_threads,
    column_labels,
)

__all__ = ["mixed_radix_decode", "mixed_radix_encode"]


def mixed_radix_encode(
    codes: Any, cardinalities: Any = None, *, n_threads: int | None = None
) -> np.ndarray:
    """Encode each row of categorical codes as one mixed-radix ``uint64`` key.

    Parameters
    ----------
    codes : array-like of shape (n_samples, n_features), pandas or polars DataFrame, or
        :class:`~privtab.EncodedTable`
        Integer codes, column ``j`` in ``0 .. cardinalities[j] - 1``.
    cardinalities : array-like of int of shape (n_features,)
        Public domain sizes; taken from ``codes`` when it is an ``EncodedTable``.
    n_threads : int, optional
        Threads to use (default: all cores). The result does not depend on it.

    Returns
    -------
    keys : ndarray of shape (n_samples,), uint64
        ``key = ((c_0 * k_1 + c_1) * k_2 + c_2) ...``: the first column is the most
        significant digit, as in ``numpy.ravel_multi_index(codes.T, cardinalities)``.

    Raises
    ------
    DomainError
        If the product of the cardinalities exceeds 2**64 (keys would not fit).
    ValueError
        If a code is negative, NaN, infinite or >= its cardinality, if the input is
        empty or ragged, or if ``cardinalities`` has the wrong length.
    TypeError
        If the codes are not integers (non-integral floats, strings, objects).

    Notes
    -----
    A product of exactly 2**64 is allowed: every key is then below 2**64.

    Integer codes of any width and signedness are read in place, whether C- or
    Fortran-ordered, and range-checked in the same pass that encodes them, so the
    data is read once.

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import mixed_radix_encode
    >>> mixed_radix_encode(np.array([[1, 2], [0, 0], [2, 3]]), [3, 4])
    array([ 6,  0, 11], dtype=uint64)
    """
    array, cards = as_code_matrix(codes, "codes", cardinalities)
    threads = check_threads(n_threads)
    try:
        if array.flags.c_contiguous:
            return _core.mixed_radix_encode_rows(array, cards, n_threads=threads)
        # F-ordered codes are column-major already: their transpose is a C-contiguous
        # view.
        return _core.mixed_radix_encode(array.T, cards, n_threads=threads)
    except ValueError:
        # The kernel names the first bad code by position; a frame's column is named
        # by its name, as everywhere else (a second pass, on the error path only).
        if column_labels(codes) is not None:
            as_code_columns(codes, "codes", cards)
        raise


def mixed_radix_decode(
    keys: Any, cardinalities: Any, *, n_threads: int | None = None
) -> np.ndarray:
    """Decode mixed-radix keys back into rows of categorical codes.

    Parameters
    ----------
    keys : array-like of int of shape (n_samples,)
        Keys in ``0 .. prod(cardinalities) - 1``.
    cardinalities : array-like of int of shape (n_features,)
        The domain sizes the keys were encoded with.
    n_threads : int, optional
        Threads to use (default: all cores). The result does not depend on it.

    Returns
    -------
    codes : ndarray of shape (n_samples, n_features), uint32
        The inverse of :func:`mixed_radix_encode` (as ``numpy.unravel_index``).

    Raises
    ------
    DomainError
        If the product of the cardinalities exceeds 2**64.
    ValueError
        If a key is negative, NaN or not below the product of the cardinalities, or if
        ``keys`` or ``cardinalities`` is empty or not 1-D.
    TypeError
        If the keys are not integers.

    Examples
    --------
    >>> from privtab import mixed_radix_decode
    >>> mixed_radix_decode([6, 0, 11], [3, 4])
    array([[1, 2],
           [0, 0],
           [2, 3]], dtype=uint32)
    """
    cards = as_cardinalities(cardinalities)
    array = as_keys(keys)
    return _core.mixed_radix_decode(array, cards, n_threads=check_threads(n_threads))
