"""Mixed-radix keys: one ``uint64`` per row for a combination of categorical codes.

The digit order is that of :func:`numpy.ravel_multi_index` (first column most
significant), so results can be cross-checked against NumPy.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from privtab import _core
from privtab._validation import as_code_matrix, check_cardinalities, check_positive_int

__all__ = ["mixed_radix_decode", "mixed_radix_encode"]

_TWO_64 = 2**64


def _check_threads(n_threads: int | None) -> int | None:
    if n_threads is None:
        return None
    return check_positive_int(n_threads, "n_threads")


def _as_cardinalities(cardinalities: Any) -> np.ndarray:
    array = np.asarray(cardinalities)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(
            f"cardinalities must be a non-empty 1-D sequence, got shape {array.shape}"
        )
    return check_cardinalities(array, array.shape[0])


def _as_keys(keys: Any) -> np.ndarray:
    try:
        array = np.asarray(keys)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"keys is ragged or not array-like: {exc}") from exc
    if array.dtype.kind == "f" and not isinstance(keys, np.ndarray):
        # NumPy turns Python ints above 2**63 - 1 into floats; keep them exact.
        as_objects = np.asarray(keys, dtype=object)
        if as_objects.ndim == 1 and all(
            isinstance(k, numbers.Integral) for k in as_objects
        ):
            array = as_objects
    if array.ndim != 1:
        raise ValueError(f"keys must be 1-dimensional, got {array.ndim} dimension(s)")
    if array.size == 0:
        raise ValueError("keys must be non-empty")
    if array.dtype == object:
        if not all(
            isinstance(k, numbers.Integral) and not isinstance(k, bool | np.bool_)
            for k in array
        ):
            raise TypeError("keys must hold integers, got dtype object")
        values = [int(k) for k in array]
        if min(values) < 0 or max(values) >= _TWO_64:
            raise ValueError(
                f"keys must be in [0, 2**64), got min {min(values)}, max {max(values)}"
            )
        return np.array(values, dtype=np.uint64)
    if array.dtype.kind == "u":
        return np.require(array, dtype=np.uint64, requirements=["C", "A"])
    if array.dtype.kind == "i":
        if array.min() < 0:
            raise ValueError(f"keys must be >= 0, got {array.min()}")
        return np.require(array, dtype=np.uint64, requirements=["C", "A"])
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)):
            raise ValueError("keys must contain only finite values (found NaN or inf)")
        if not np.all(array == np.round(array)):
            raise TypeError("keys must hold integers, got non-integral floats")
        if array.min() < 0 or array.max() >= float(_TWO_64):
            raise ValueError(
                f"keys must be in [0, 2**64), got min {array.min()}, max {array.max()}"
            )
        return array.astype(np.uint64)
    raise TypeError(f"keys must hold integers, got dtype {array.dtype}")


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
    threads = _check_threads(n_threads)
    if array.flags.c_contiguous:
        return _core.mixed_radix_encode_rows(array, cards, n_threads=threads)
    # F-ordered codes are column-major already: their transpose is a C-contiguous view.
    return _core.mixed_radix_encode(array.T, cards, n_threads=threads)


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
    cards = _as_cardinalities(cardinalities)
    array = _as_keys(keys)
    return _core.mixed_radix_decode(array, cards, n_threads=_check_threads(n_threads))
