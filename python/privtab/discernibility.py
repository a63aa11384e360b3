"""Discernibility F(S) and the scores of candidate attributes (Vinterbo 2012).

F(S) counts the ordered pairs of records that differ both on the attributes S and on
the label, per record: with classes c of the partition induced by S and label counts
n_{c,l},

    n * F(S) = (n**2 - sum_l n_l**2) - sum_c (n_c**2 - sum_l n_{c,l}**2).

These functions are exact (non-private); PrivateKD adds the randomness.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from privtab import _core
from privtab._validation import as_code_columns, as_int_array, to_numpy_2d
from privtab.encode import _check_threads

__all__ = ["CandidateScores", "discernibility", "score_candidates"]

_U32_MAX = int(np.iinfo(np.uint32).max)


class CandidateScores(NamedTuple):
    """Scores of candidate attributes ``a`` on the partition of ``selected + [a]``.

    Attributes
    ----------
    candidates : ndarray of int64
        The candidate column indices, in the order scored.
    n_classes : ndarray of uint64
        Number of equivalence classes of S ∪ {a}.
    undiscerned_pairs : ndarray of uint64
        Ordered pairs in one class with different labels: Σ_c (n_c² − Σ_l n_{c,l}²).
    entropy : ndarray of float64
        H(S ∪ {a}) in bits.
    joint_entropy : ndarray of float64
        H(Y, S ∪ {a}) in bits.
    discernibility : ndarray of float64
        F(S ∪ {a}).
    """

    candidates: np.ndarray
    n_classes: np.ndarray
    undiscerned_pairs: np.ndarray
    entropy: np.ndarray
    joint_entropy: np.ndarray
    discernibility: np.ndarray


def _column_names(X: Any) -> list[Any] | None:
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    return list(columns)


def _prepare(
    X: Any, y: Any, cardinalities: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, list[Any] | None]:
    """Validate ``X`` and ``y``; return (columns, cardinalities, labels, n_labels, names)."""
    names = _column_names(X)
    if cardinalities is None and not (
        hasattr(X, "codes") and hasattr(X, "cardinalities")
    ):
        array = to_numpy_2d(X, "X")
        columns, _ = as_code_columns(
            array, "X", np.full(array.shape[1], _U32_MAX, dtype=np.int64)
        )
        cards = np.ascontiguousarray(columns.max(axis=1) + 1, dtype=np.uint32)
    else:
        columns, cards = as_code_columns(X, "X", cardinalities)
    labels, n_labels = _label_codes(y, columns.shape[1])
    return columns, cards, labels, n_labels, names


def _label_codes(y: Any, n_rows: int) -> tuple[np.ndarray, int]:
    try:
        array = np.asarray(y)
    except ValueError as exc:
        raise ValueError(f"y is ragged or not array-like: {exc}") from exc
    if array.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got {array.ndim} dimension(s)")
    if array.shape[0] != n_rows:
        raise ValueError(
            f"y has {array.shape[0]} labels, expected {n_rows} (one per row of X)"
        )
    if array.dtype.kind in "biuf":
        array = as_int_array(array, "y")
    elif array.dtype.kind not in "USO":
        raise TypeError(
            f"y must hold integer or string labels, got dtype {array.dtype}"
        )
    try:
        uniques, inverse = np.unique(array, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"y must hold labels of one sortable type: {exc}") from exc
    return np.ascontiguousarray(inverse.ravel(), dtype=np.uint32), int(uniques.shape[0])


def _resolve(
    features: Any, names: list[Any] | None, n_columns: int, name: str
) -> list[int]:
    if isinstance(features, str | bytes) or not isinstance(
        features, Sequence | np.ndarray
    ):
        raise TypeError(
            f"{name} must be a sequence of column indices or names, "
            f"got {type(features).__name__}"
        )
    indices = []
    for feature in features:
        if isinstance(feature, numbers.Integral) and not isinstance(
            feature, bool | np.bool_
        ):
            index = int(feature)
            if not 0 <= index < n_columns:
                raise ValueError(
                    f"{name} has column index {index}, out of range for "
                    f"{n_columns} columns"
                )
        elif names is not None and feature in names:
            index = names.index(feature)
        else:
            raise ValueError(f"{name} has {feature!r}, which is not a column of X")
        indices.append(index)
    return indices


def discernibility(
    X: Any,
    y: Any,
    features: Sequence[Any],
    *,
    cardinalities: Any = None,
    n_threads: int | None = None,
) -> float:
    """Discernibility F(S): ordered record pairs split by S and by the label, per record.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), pandas or polars DataFrame, or
        :class:`~privtab.EncodedTable`
        Categorical codes (integers >= 0).
    y : array-like of shape (n_samples,)
        Labels (any integers or strings; remapped with ``numpy.unique``).
    features : sequence of int or str
        The attribute set S: column indices, or column names of a DataFrame.
    cardinalities : array-like of int, optional
        Domain sizes; ``max + 1`` per column by default (they do not change F).
    n_threads : int, optional
        Threads to use (default: all cores).

    Returns
    -------
    float
        ``F(S) = |{(u, v) : u_S != v_S and y_u != y_v}| / n``; 0.0 for empty ``features``.

    Raises
    ------
    ValueError
        For empty, ragged or negative input, NaN, mismatched lengths or an unknown
        feature.
    TypeError
        For non-integer codes or a ``features`` that is not a sequence.

    Notes
    -----
    Computed through partition refinement in O(n·|S|) (Vinterbo 2012, §2.2):
    ``n·F(S) = (n² − Σ_l n_l²) − Σ_c (n_c² − Σ_l n_{c,l}²)`` over the classes c of S.
    F is monotone in S and at most ``n − Σ_l n_l² / n``. Exact, hence not private.

    Examples
    --------
    >>> from privtab import discernibility
    >>> X = [[0, 1], [0, 0], [1, 1], [1, 0]]
    >>> y = [0, 0, 1, 1]
    >>> discernibility(X, y, [0]), discernibility(X, y, [1]), discernibility(X, y, [])
    (2.0, 1.0, 0.0)
    """
    columns, cards, labels, n_labels, names = _prepare(X, y, cardinalities)
    subset = _resolve(features, names, columns.shape[0], "features")
    return float(
        _core.discernibility(
            columns,
            cards,
            labels,
            n_labels,
            subset,
            n_threads=_check_threads(n_threads),
        )
    )


def score_candidates(
    X: Any,
    y: Any,
    selected: Sequence[Any] = (),
    candidates: Sequence[Any] | None = None,
    *,
    cardinalities: Any = None,
    n_threads: int | None = None,
) -> CandidateScores:
    """Score every candidate attribute ``a`` on the partition of ``selected + [a]``.

    One parallel pass over the candidates, each O(n): the building block of greedy
    selectors (NonPrivateKD, PrivateKD, MDA, DistCnt) and of entropy-based contexts.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), DataFrame or ``EncodedTable``
        Categorical codes.
    y : array-like of shape (n_samples,)
        Labels (remapped with ``numpy.unique``).
    selected : sequence of int or str, default ()
        The current attribute set S.
    candidates : sequence of int or str, optional
        Attributes to score; all columns by default (members of S score a gain of 0).
    cardinalities : array-like of int, optional
        Domain sizes; ``max + 1`` per column by default.
    n_threads : int, optional
        Threads to use (default: all cores). The result does not depend on it.

    Returns
    -------
    CandidateScores
        Per candidate: number of classes, undiscerned pairs, H(S ∪ {a}),
        H(Y, S ∪ {a}) and F(S ∪ {a}).

    Examples
    --------
    >>> from privtab.discernibility import score_candidates
    >>> scores = score_candidates([[0, 1], [0, 0], [1, 1], [1, 0]], [0, 0, 1, 1])
    >>> scores.discernibility, scores.entropy
    (array([2., 1.]), array([1., 1.]))
    """
    columns, cards, labels, n_labels, names = _prepare(X, y, cardinalities)
    d = columns.shape[0]
    base = _resolve(selected, names, d, "selected")
    cand = (
        list(range(d))
        if candidates is None
        else _resolve(candidates, names, d, "candidates")
    )
    n_classes, pairs, h, hy, f = _core.score_candidates(
        columns,
        cards,
        labels,
        n_labels,
        base,
        cand,
        n_threads=_check_threads(n_threads),
    )
    return CandidateScores(np.asarray(cand, dtype=np.int64), n_classes, pairs, h, hy, f)
