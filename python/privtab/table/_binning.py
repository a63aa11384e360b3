"""Lei's bandwidth and bin count for equal-width binning of numeric columns.

The default number of bins of :class:`~privtab.table.TableEncoder` and of the projected
histogram: Lei's M-estimator analysis (2011) as used by Vinterbo (2012).

Core kernels called: none (closed-form arithmetic).

Full references: :mod:`privtab.table`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from privtab._validation import check_positive_int

if TYPE_CHECKING:
    pass  # scikit-learn >= 1.6


# Lei's bandwidth --------------------------------------------------------------------
def lei_bandwidth(n: int, d: int) -> float:
    """Bandwidth of Lei's histogram estimator: ``(ln n / n) ** (1 / (d + 1))``.

    Parameters
    ----------
    n : int
        Number of records, >= 2.
    d : int
        Number of dimensions of the histogram, >= 1.

    Returns
    -------
    float
        The bin width on the unit interval, in (0, 1).

    Raises
    ------
    TypeError
        If ``n`` or ``d`` is not an integer.
    ValueError
        If ``n < 2`` or ``d < 1``.

    Notes
    -----
    Lei [2]_ chooses this bandwidth for a differentially private histogram of ``n``
    points in ``[0, 1]^d``; Vinterbo [1]_ (projected histograms) uses it to discretise
    numeric predictors.

    References
    ----------
    .. [1] S. A. Vinterbo, "Differentially Private Projected Histograms: Construction
       and Use for Prediction", in Machine Learning and Knowledge Discovery in
       Databases (ECML PKDD 2012), Lecture Notes in Computer Science 7524, Springer,
       2012.
    .. [2] J. Lei, "Differentially private M-estimators", Advances in Neural
       Information Processing Systems 24 (NeurIPS 2011), 2011.

    Examples
    --------
    >>> round(lei_bandwidth(1000, 1), 4)
    0.0831
    """
    n = check_positive_int(n, "n", minimum=2)
    d = check_positive_int(d, "d", minimum=1)
    return (math.log(n) / n) ** (1.0 / (d + 1))


def lei_bins(n: int, d: int) -> int:
    """Count the equal-width bins on [0, 1] for Lei's bandwidth: ``ceil(1/bw - 0.5)``.

    Parameters
    ----------
    n : int
        Number of records, >= 2.
    d : int
        Number of dimensions, >= 1.

    Returns
    -------
    int
        The bandwidth's reciprocal rounded to the nearest integer, at least 1.

    Raises
    ------
    TypeError
        If ``n`` or ``d`` is not an integer.
    ValueError
        If ``n < 2`` or ``d < 1``.

    See Also
    --------
    lei_bandwidth

    Examples
    --------
    >>> lei_bins(1000, 1)
    12
    >>> lei_bins(48842, 15)
    2
    """
    return max(1, math.ceil(1.0 / lei_bandwidth(n, d) - 0.5))
