"""Distances of DILCA: value-to-value distance matrices and their embeddings.

:func:`dilca_distance_matrix` turns the contingency tables of a target and its context
into the DILCA distance between every pair of the target's values (Ienco, Pensa and Meo 2012);
:func:`classical_mds` embeds a distance matrix in Euclidean coordinates.

Core kernels called: none (NumPy on tables already counted by
``privtab._core.pairwise_tables`` or :func:`privtab.contingency_table`).

Full references: :mod:`privtab.dilca`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def dilca_distance_matrix(tables: Any) -> np.ndarray:
    """DILCA distances between the values of a target from its context tables.

    Parameters
    ----------
    tables : sequence of array-like of shape (n_target_values, n_values_of_X)
        One contingency table (counts, possibly noisy but >= 0) per context attribute
        ``X``: rows are the target's values, columns the values of ``X``, as many as
        its declared cardinality.

    Returns
    -------
    ndarray of shape (n_target_values, n_target_values)
        ``d(y_i, y_j) = sqrt(Σ_X Σ_x (P(y_i|x) − P(y_j|x))² / Σ_X |X|)`` with
        ``P(y|x) = T[y, x] / Σ_y T[y, x]`` and ``P = 0`` for an all-zero column.
        Symmetric, zero diagonal, within [0, 1].

    Raises
    ------
    ValueError
        If there is no table, the tables have different numbers of rows, or a cell
        is negative or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from privtab.dilca import dilca_distance_matrix
    >>> d = dilca_distance_matrix([[[2, 0], [0, 3], [1, 0]]])
    >>> bool(np.isclose(d[0, 1], np.sqrt(((2 / 3) ** 2 + 1) / 2)))
    True
    >>> bool(np.isclose(d[0, 2], np.sqrt((1 / 3) ** 2 / 2)))
    True
    """
    p = _profiles(tables)
    rows, width = p.shape[0], float(p.shape[1])
    squared = np.empty((rows, rows))
    for i in range(rows):
        squared[i] = ((p[i] - p) ** 2).sum(axis=1)
    distances = np.minimum(np.sqrt(squared / width), 1.0)
    np.fill_diagonal(distances, 0.0)
    return distances


def _scaled_profiles(tables: Any) -> np.ndarray:
    """Return ``[P_X1 | P_X2 | ...] / sqrt(Σ|X|)``: rows at DILCA distances."""
    p = _profiles(tables)
    return p / math.sqrt(p.shape[1])


def _profiles(tables: Any) -> np.ndarray:
    """Return the validated conditional probabilities ``[P_X1 | P_X2 | ...]``."""
    arrays = [np.asarray(t, dtype=np.float64) for t in tables]
    if not arrays:
        raise ValueError("tables must hold at least one contingency table")
    rows = arrays[0].shape[0] if arrays[0].ndim == 2 else -1
    for index, table in enumerate(arrays):
        if table.ndim != 2 or table.shape[0] != rows or table.shape[1] == 0:
            raise ValueError(
                f"tables[{index}] must be 2-D with {rows} rows and >= 1 column, got "
                f"shape {table.shape}"
            )
        if not np.all(np.isfinite(table)) or (table.size and table.min() < 0):
            raise ValueError(f"tables[{index}] must hold finite counts >= 0")
    probabilities = []
    for table in arrays:
        totals = table.sum(axis=0)
        safe = np.where(totals > 0, totals, 1.0)
        probabilities.append(np.where(totals > 0, table / safe, 0.0))
    return np.concatenate(probabilities, axis=1)


def classical_mds(
    distances: Any, n_components: int | None = None
) -> tuple[np.ndarray, float]:
    """Classical (Torgerson) MDS of a distance matrix, as Crippen and Havel embed one.

    Parameters
    ----------
    distances : array-like of shape (k, k)
        Symmetric distances with a zero diagonal.
    n_components : int, optional
        Number of coordinates, in [1, k]; default the number of eigenvalues above
        ``k · eps · λ_max`` (the numerical rank, at least 1).

    Returns
    -------
    coordinates : ndarray of shape (k, r)
        ``Q_r · Λ_r^{1/2}`` for the ``r`` largest eigenvalues of
        ``B = −½·J·D²·J`` (``J = I − 11ᵀ/k``), negative ones set to 0.
    clipped : float
        ``Σ|λ⁻| / Σ|λ|``, the relative mass of the negative eigenvalues that were set
        to 0: 0 up to rounding exactly when ``distances`` is Euclidean.

    Raises
    ------
    ValueError
        If ``distances`` is not a finite square matrix or ``n_components`` is out of
        range.

    Notes
    -----
    Squaring loses precision for tiny distances: a distance below about 1e-8 is only
    reproduced within about 1e-8. :meth:`DILCA.value_embedding` avoids this by taking
    the principal coordinates of the conditional-probability rows themselves.

    Examples
    --------
    >>> import numpy as np
    >>> from privtab.dilca import classical_mds
    >>> d = np.array([[0.0, 3.0, 5.0], [3.0, 0.0, 4.0], [5.0, 4.0, 0.0]])
    >>> coords, clipped = classical_mds(d)
    >>> coords.shape, clipped < 1e-12
    ((3, 2), True)
    >>> gaps = np.linalg.norm(coords[:, None] - coords[None], axis=2)
    >>> bool(np.allclose(gaps, d))
    True
    """
    matrix = np.asarray(distances, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.size == 0:
        raise ValueError(
            f"distances must be a non-empty square matrix, got shape {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)):
        raise ValueError("distances must be finite")
    size = matrix.shape[0]
    if n_components is not None and not 1 <= int(n_components) <= size:
        raise ValueError(f"n_components must be in [1, {size}], got {n_components}")
    squared = matrix**2
    centred = squared - squared.mean(axis=0)[None, :]
    centred = centred - centred.mean(axis=1)[:, None]
    values, vectors = np.linalg.eigh(-0.25 * (centred + centred.T))
    values, vectors = values[::-1], vectors[:, ::-1]
    total = float(np.abs(values).sum())
    clipped = float(-values[values < 0].sum() / total) if total > 0 else 0.0
    values = np.maximum(values, 0.0)
    if n_components is None:
        tolerance = size * np.finfo(np.float64).eps * float(values[0])
        n_components = max(1, int(np.count_nonzero(values > tolerance)))
    r = int(n_components)
    return vectors[:, :r] * np.sqrt(values[:r]), clipped


def _principal_coordinates(
    profiles: np.ndarray, n_components: int | None
) -> np.ndarray:
    """Principal coordinates of the rows of ``profiles`` (PCA without scaling)."""
    centred = profiles - profiles.mean(axis=0)[None, :]
    u, singular, _ = np.linalg.svd(centred, full_matrices=False)
    if n_components is None:
        # Centring leaves at most (values − 1) dimensions; directions below 1e-12 of
        # the largest are rounding error and would move distances by less than that.
        top = float(singular[0]) if singular.size else 0.0
        rank = int(np.count_nonzero(singular > 1e-12 * top))
        n_components = max(1, min(rank, profiles.shape[0] - 1))
    coords = np.zeros((profiles.shape[0], int(n_components)))
    r = min(int(n_components), singular.size)
    coords[:, :r] = u[:, :r] * singular[:r]
    return coords
