"""Differentially private projected histograms (Vinterbo 2012).

A projected histogram spends part of the budget on choosing ``k`` predictors with
:class:`~privtab.PrivateKD` and the rest on a thresholded histogram of the table
projected onto those predictors and the target. Synthetic records drawn from it can
train any classifier, which inherits the privacy guarantee by post-processing.

Reference: S. A. Vinterbo, "Differentially private projected histograms: construction
and use for prediction", ECML PKDD 2012, Sections 2.1-2.3.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from privtab._random import RandomState, check_random_state
from privtab._validation import (
    as_code_columns,
    check_epsilon,
    check_positive_int,
    to_numpy_2d,
)
from privtab.accountant import BudgetAccountant, resolve_accountant, split_budget
from privtab.discernibility import PrivateKD, minimum_discerning_attributes
from privtab.exceptions import PrivacyLeakWarning
from privtab.histogram import thresholded_histogram
from privtab.table import lei_bandwidth

__all__ = ["ProjectedHistogram", "estimate_gamma", "estimate_n_features"]

#: The paper's tolerated fraction of label pairs lost to privacy in PrivateKD (l).
PAIR_LOSS = 0.05
#: The paper's target probability that an occupied cell survives thresholding (p).
CELL_SURVIVAL = 0.95
#: Normal draws used to estimate the bin masses p_i in the choice of gamma.
BIN_MASS_DRAWS = 100_000


def _lei_bin_count(n: int, d: int) -> int:
    return max(1, math.ceil(1.0 / lei_bandwidth(n, d) - 0.5))


def _scaled_normal_codes(
    rng: np.random.Generator, size: tuple[int, ...], bins: int
) -> np.ndarray:
    """N(0, 1) draws min-max scaled into [0, 1] per column and cut into ``bins`` bins."""
    draws = rng.standard_normal(size)
    low, high = draws.min(axis=0), draws.max(axis=0)
    scaled = (draws - low) / np.where(high > low, high - low, 1.0)
    return np.minimum((scaled * bins).astype(np.int64), bins - 1)


def estimate_n_features(
    n: int, n_predictors: int, n_classes: int, *, sigma: float = 0.1, random_state=None
) -> int:
    """Choose ``k`` as the paper does, from a simulated table (spends no budget).

    Simulates ``n`` records: a label uniform on ``n_classes`` classes and
    ``n_predictors`` independent N(0, 1) predictors, min-max scaled to [0, 1] and cut
    into ``ceil(1 / bw(n, n_predictors) - 0.5)`` bins. ``k`` is the size of the minimum
    discerning attribute set (MDA with ``sigma``) of that simulation, at least 1.

    Parameters
    ----------
    n : int
        Number of records (public under replace-one neighbours), >= 2.
    n_predictors : int
        Number of predictors ``d - 1``, >= 1.
    n_classes : int
        Number of target classes ``q`` (public), >= 2.
    sigma : float, default=0.1
        MDA's tolerance.
    random_state : None, int, Generator or SeedSequence
        Seeds the simulation.

    Returns
    -------
    int
        The estimated number of predictors to keep, in ``[1, n_predictors]``.
    """
    n = check_positive_int(n, "n", minimum=2)
    n_predictors = check_positive_int(n_predictors, "n_predictors")
    n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    rng = check_random_state(random_state)
    bins = _lei_bin_count(n, n_predictors)
    labels = rng.integers(0, n_classes, n)
    codes = _scaled_normal_codes(rng, (n, n_predictors), bins)
    chosen = minimum_discerning_attributes(
        codes, labels, sigma=sigma, cardinalities=np.full(n_predictors, bins)
    )
    return int(min(max(len(chosen), 1), n_predictors))


def estimate_gamma(
    n: int,
    n_predictors: int,
    n_classes: int,
    n_features: int,
    *,
    A: float = 0.5,
    B: float = 0.5,
    random_state: RandomState = None,
) -> float:
    """Choose the histogram's share ``gamma`` of the budget as the paper does.

    With ``d - 1 = n_predictors``, ``q = n_classes`` and ``k = n_features``:

    - ``eps_p = n * B * k**2 * ln(d - 1) / (l * pi(q))``, ``pi(q) = n**2 (q-1) / (2q)``,
      ``l = 0.05``: the budget that keeps the fraction of label pairs PrivateKD loses
      to privacy near ``l``;
    - ``eps_h = max((A ln n - 2 ln(1/(2p))) / z, (A ln n - 2 ln(2 - 2p)) / z)`` with
      ``p = 0.95`` and ``z = (n / q) * (sum_i p_i**2)**k``, ``p_i`` the masses of the
      ``ceil(1/bw(n, d-1) - 0.5)`` bins of min-max-scaled N(0, 1) draws: the budget
      that keeps a typical occupied cell with probability ``p``;
    - ``gamma = eps_h / (eps_h + eps_p)``; 1 when ``k = d - 1`` (no projection) or when
      ``ln(d - 1) = 0``.

    Spends no budget: everything here is public (``n``, ``d``, ``q``, ``k``).

    Returns
    -------
    float
        ``gamma`` in (0, 1].
    """
    n = check_positive_int(n, "n", minimum=2)
    n_predictors = check_positive_int(n_predictors, "n_predictors")
    n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    k = check_positive_int(n_features, "n_features")
    if k > n_predictors:
        raise ValueError(
            f"n_features must be <= n_predictors ({n_predictors}), got {k}"
        )
    if k == n_predictors or n_predictors == 1:
        return 1.0
    rng = check_random_state(random_state)
    bins = _lei_bin_count(n, n_predictors)
    codes = _scaled_normal_codes(rng, (BIN_MASS_DRAWS, 1), bins)[:, 0]
    masses = np.bincount(codes, minlength=bins) / BIN_MASS_DRAWS
    pairs_bound = n * n * (n_classes - 1) / (2 * n_classes)
    eps_p = n * B * k**2 * math.log(n_predictors) / (PAIR_LOSS * pairs_bound)
    z = (n / n_classes) * float(np.sum(masses**2)) ** k
    p = CELL_SURVIVAL
    eps_h = max(
        (A * math.log(n) - 2 * math.log(1 / (2 * p))) / z,
        (A * math.log(n) - 2 * math.log(2 - 2 * p)) / z,
    )
    if eps_h <= 0:
        return 1.0
    return eps_h / (eps_h + eps_p)


class ProjectedHistogram(BaseEstimator):
    """A DP histogram of the target and ``k`` privately chosen predictors.

    Parameters
    ----------
    epsilon : float
        Total privacy budget, finite and > 0.
    n_features : int, optional
        ``k``, the number of predictors to keep. Estimated with
        :func:`estimate_n_features` (a seeded simulation, no budget) when ``None``.
    gamma : float, optional
        Share of ``epsilon`` given to the histogram, in (0, 1]. Estimated with
        :func:`estimate_gamma` when ``None``.
    A : float, default=0.5
        Threshold constant: ``tau = A * ln(n) / eps_h``.
    B : float, default=0.5
        Tuning constant of the choice of ``gamma``.
    sigma : float, default=0.1
        MDA's tolerance in the choice of ``k``.
    noise : {"laplace", "discrete"}, default="laplace"
        Histogram noise: the paper's Laplace or the exact discrete Laplace.
    max_cells : int, default=10_000_000
        Cap on the histogram's expected number of cells.
    random_state : None, int, Generator or SeedSequence
        ``None`` (the secure default) uses operating-system entropy; a fixed seed is
        for reproducibility only and voids privacy against anyone who knows it.
    accountant : BudgetAccountant, optional
        Charged ``epsilon`` once, after success.

    Attributes
    ----------
    support_ : ndarray of bool, shape (n_predictors,)
        The predictors kept.
    selection_order_ : ndarray of int
        Indices of the kept predictors, in PrivateKD's order.
    n_features_ : int
        ``k`` (given or estimated).
    gamma_ : float
        The histogram's share (given or estimated).
    histogram_ : SparseHistogram
        Over the kept predictors (in ``selection_order_``) followed by the target.
    classes_ : ndarray
        The target's labels; the histogram's last column holds their indices.
    epsilon_spent_ : float
    privacy_ledger_ : list of (str, float)
        ``[("PrivateKD", (1 - gamma) * epsilon), ("thresholded_histogram",
        gamma * epsilon)]`` (just the histogram when ``k`` keeps every predictor).

    Notes
    -----
    Privacy: PrivateKD with ``eps_p = (1 - gamma) * epsilon`` is ``eps_p``-DP
    (Corollary 1, per-round ``eps' = eps_p / (4k)``); the thresholded histogram with
    Laplace noise ``Lap(0, 2 / eps_h)``, ``eps_h = gamma * epsilon``, is ``eps_h``-DP
    (Proposition 1: the threshold depends only on ``n``); by sequential composition
    the pair is ``epsilon``-DP, and :meth:`synthetic` is post-processing. Neighbouring
    tables differ in one record (``n`` is public); the predictors' domains and the
    label set are public inputs. When ``k`` equals the number of predictors there is
    no projection and ``gamma = 1``. Codes of numeric predictors should come from
    :class:`~privtab.TableEncoder` with declared bounds and Lei's bin count
    ``lei_bins(n, d - 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import ProjectedHistogram
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(2000, 5))
    >>> y = (X[:, 0] + X[:, 1] > 2).astype(int)
    >>> model = ProjectedHistogram(
    ...     2.0, n_features=2, gamma=0.5, random_state=0
    ... ).fit(X, y, cardinalities=[3] * 5)
    >>> sorted(model.selection_order_.tolist())
    [0, 1]
    >>> X_syn, y_syn = model.synthetic()
    >>> X_syn.shape[1]
    2
    """

    def __init__(
        self,
        epsilon: float,
        *,
        n_features: int | None = None,
        gamma: float | None = None,
        A: float = 0.5,
        B: float = 0.5,
        sigma: float = 0.1,
        noise: str = "laplace",
        max_cells: int = 10_000_000,
        random_state: RandomState = None,
        accountant: BudgetAccountant | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.n_features = n_features
        self.gamma = gamma
        self.A = A
        self.B = B
        self.sigma = sigma
        self.noise = noise
        self.max_cells = max_cells
        self.random_state = random_state
        self.accountant = accountant

    def fit(self, X: Any, y: Any, *, cardinalities: Any = None) -> ProjectedHistogram:
        """Choose the predictors and release the histogram.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_predictors), DataFrame or EncodedTable
            Categorical codes of the predictors.
        y : array-like of shape (n_samples,)
            Target labels (any hashable values; the label set is public).
        cardinalities : array-like of int, optional
            Public domain sizes of the predictors; taken from an ``EncodedTable``.
            Inferred from the data (with a ``PrivacyLeakWarning``) when missing.

        Returns
        -------
        self
        """
        epsilon = check_epsilon(self.epsilon)
        accountant = resolve_accountant(self.accountant)
        accountant.check(epsilon)
        gamma = self._check_gamma()
        self._check_constants()

        categories = getattr(X, "categories", None)
        columns, cards = _columns_and_cardinalities(X, cardinalities)
        n_predictors, n = columns.shape
        labels = np.asarray(y)
        if labels.ndim != 1 or labels.shape[0] != n:
            raise ValueError(
                f"y must be 1-dimensional with {n} labels, got shape {labels.shape}"
            )
        classes, label_codes = np.unique(labels, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(f"y must have at least 2 classes, got {len(classes)}")

        rng = check_random_state(self.random_state)
        if self.n_features is None:
            k = estimate_n_features(
                n, n_predictors, len(classes), sigma=self.sigma, random_state=rng
            )
        else:
            k = check_positive_int(self.n_features, "n_features")
            if k > n_predictors:
                raise ValueError(
                    f"n_features must be <= the number of predictors ({n_predictors}), "
                    f"got {k}"
                )
        if gamma is None:
            gamma = estimate_gamma(
                n, n_predictors, len(classes), k, A=self.A, B=self.B, random_state=rng
            )
        if k == n_predictors:
            gamma = 1.0

        internal = BudgetAccountant()
        if gamma < 1.0:
            eps_p, eps_h = split_budget(epsilon, [1.0 - gamma, gamma])
            selector = PrivateKD(k, eps_p, random_state=rng, accountant=internal).fit(
                columns.T, label_codes, cardinalities=cards
            )
            order = np.asarray(selector.selection_order_, dtype=np.int64)
            ledger = [("PrivateKD", eps_p), ("thresholded_histogram", eps_h)]
        else:
            eps_h = epsilon
            order = np.arange(n_predictors, dtype=np.int64)
            ledger = [("thresholded_histogram", eps_h)]

        projected = np.column_stack([columns[order].T, label_codes]).astype(np.uint32)
        projected_cards = np.append(cards[order], len(classes)).astype(np.int64)
        histogram = thresholded_histogram(
            projected,
            projected_cards,
            eps_h,
            A=self.A,
            noise=self.noise,
            max_cells=self.max_cells,
            random_state=rng,
            accountant=internal,
        )

        support = np.zeros(n_predictors, dtype=bool)
        support[order] = True
        self.n_features_in_ = n_predictors
        self.n_features_ = int(k)
        self.gamma_ = float(gamma)
        self.support_ = support
        self.selection_order_ = order
        self.classes_ = classes
        self.histogram_ = histogram
        self.cardinalities_ = np.asarray(cards, dtype=np.int64)
        self.categories_ = (
            None if categories is None else [categories[j] for j in order.tolist()]
        )
        self.privacy_ledger_ = ledger
        self.epsilon_spent_ = epsilon
        accountant.spend(epsilon, label="ProjectedHistogram")
        return self

    def synthetic(self, *, decode: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Synthetic records: each kept cell replicated ``ceil(value - 0.5)`` times.

        Parameters
        ----------
        decode : bool, default=True
            Map codes back to categories (bin midpoints for numeric columns) when the
            model was fitted on an ``EncodedTable``; otherwise return codes.

        Returns
        -------
        X_syn : ndarray of shape (n_synthetic, n_features_)
            The kept predictors, in ``selection_order_``.
        y_syn : ndarray of shape (n_synthetic,)
            Labels from ``classes_``.
        """
        if not hasattr(self, "histogram_"):
            raise ValueError(
                "this ProjectedHistogram is not fitted yet; call fit first"
            )
        records = self.histogram_.to_records()
        codes, label_codes = records[:, :-1], records[:, -1]
        y_syn = self.classes_[label_codes.astype(np.int64)]
        if not decode or self.categories_ is None:
            return codes, y_syn
        columns = [
            np.asarray(categories)[codes[:, j].astype(np.int64)]
            for j, categories in enumerate(self.categories_)
        ]
        if not columns:
            return np.empty((len(y_syn), 0)), y_syn
        return np.column_stack(columns), y_syn

    def _check_gamma(self) -> float | None:
        if self.gamma is None:
            return None
        if isinstance(self.gamma, bool) or not isinstance(self.gamma, int | float):
            raise TypeError(f"gamma must be a float, got {type(self.gamma).__name__}")
        if not (0.0 < float(self.gamma) <= 1.0):
            raise ValueError(f"gamma must be in (0, 1], got {self.gamma!r}")
        return float(self.gamma)

    def _check_constants(self) -> None:
        for name in ("A", "B"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{name} must be a float, got {type(value).__name__}")
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be finite and > 0, got {value!r}")
        if not (isinstance(self.sigma, int | float) and 0.0 <= self.sigma < 1.0):
            raise ValueError(f"sigma must be in [0, 1), got {self.sigma!r}")
        if self.noise not in ("laplace", "discrete"):
            raise ValueError(
                f"noise must be 'laplace' or 'discrete', got {self.noise!r}"
            )


def _columns_and_cardinalities(
    X: Any, cardinalities: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Column-major codes and public cardinalities; inferring them warns."""
    if cardinalities is not None or hasattr(X, "cardinalities"):
        return as_code_columns(X, "X", cardinalities=cardinalities)
    array = to_numpy_2d(X, "X")
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
        raise TypeError(f"X must hold integer codes, got dtype {array.dtype}")
    finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array
    top = int(finite.max()) if finite.size else 0
    columns, cards = as_code_columns(
        array, "X", cardinalities=[top + 1] * array.shape[1]
    )
    cards = (columns.max(axis=1).astype(np.int64) + 1).astype(np.uint32)
    warnings.warn(
        "cardinalities of X were inferred from the data (max code + 1); declare them "
        "or pass an EncodedTable so that the domain stays public",
        PrivacyLeakWarning,
        stacklevel=3,
    )
    return columns, cards
