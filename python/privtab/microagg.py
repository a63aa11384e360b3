"""DP and individual-DP data release by individual-ranking microaggregation.

Each numeric attribute is masked on its own (Algorithm 1 of Soria-Comas et al. [1]_):
its values are ranked and cut into clusters of ``k`` consecutive ranks (the remainder
joins the last cluster), every cluster's centroid gets Laplace noise calibrated to the
centroid's sensitivity, the noisy centroid is clamped to the attribute's declared
bounds, and every record of the cluster receives it. Three calibrations:

- ``"dp"`` (DP-UM; with ``k=1`` the paper's plain "DP" baseline): the global
  sensitivity ``(hi − lo)/|C_j|`` from the declared bounds: ε-differential privacy.
- ``"idp_ls"`` (iDP-LS, Proposition 2): the local sensitivity
  ``max(hi − min C_j, max C_j − lo)/|C_j|``: ε-individual differential privacy.
- ``"idp_cbls"`` (iDP-CBLS, Proposition 3, ``k ≥ 3``): the centroid of the cluster
  with one smallest value raised to the second smallest and one largest lowered to the
  second largest, whose local sensitivity depends on the cluster's order statistics
  only: ε-individual differential privacy, with far less noise.

**What ε-iDP promises, and what it does not** (Section 2 of [1]_, after [2]_). Like
ε-DP, it bounds by ``exp(ε)`` how much any one person's record can change the
probability of any release, so each subject of the actual data set has the protection
ε-DP would give them. Unlike ε-DP, the bound holds only between the actual data set and
its neighbours, not between any two neighbouring data sets: the noise may depend on the
actual data (through the local sensitivity), so the release says something about the
data set as a whole (for instance how spread its clusters are), and an iDP release is not
an ε-DP release. privtab's ledgers and accountant keep the two apart.

Kernels: ``privtab._core.microaggregate_columns`` (ranking by a stable radix sort, one
pass per attribute, rayon over attributes, noise from the floating-point-safe grid
Laplace sampler) and ``privtab._core.microaggregate``.

References
----------
.. [1] J. Soria-Comas, D. Sánchez, J. Domingo-Ferrer, S. Martínez and L. Del
   Vasto-Terrientes, "Conciliating privacy and utility in data releases via individual
   differential privacy and microaggregation", Transactions on Data Privacy 18(1):29-50,
   2025.
.. [2] J. Soria-Comas, J. Domingo-Ferrer, D. Sánchez and D. Megías, "Individual
   differential privacy: a utility-preserving formulation of differential privacy
   guarantees", IEEE Transactions on Information Forensics and Security 12(6), 2017.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np
from sklearn.base import BaseEstimator

from privtab import _core
from privtab._docstrings import LABEL_PARAMETER, REFITS_NOTE, fill_doc
from privtab._estimator import DPEstimatorMixin
from privtab._validation import (
    as_float_array,
    check_bool,
    check_bounds_pair,
    check_choice,
    check_finite,
    check_positive_int,
    check_threads,
    first_non_number,
    frame_kind,
    show_value,
    warn_user,
)
from privtab.accountant import split_budget
from privtab.exceptions import PrivacyLeakWarning

__all__ = [
    "MECHANISMS",
    "Microaggregation",
    "MicroaggregationMasker",
    "individual_ranking_clusters",
    "mean_sse",
    "microaggregate",
    "sse",
]

#: The calibrations of the centroid noise.
MECHANISMS = ("idp_cbls", "idp_ls", "dp")

#: What :class:`MicroaggregationMasker` does with the non-numeric columns of a frame.
NON_NUMERIC = ("raise", "drop", "passthrough")

#: What :class:`MicroaggregationMasker` does with a value outside its bounds.
OUT_OF_BOUNDS = ("raise", "clip")

#: The paper's data-derived domain: ``[0, ALPHA · max]`` (Section 4).
BOUNDS_ALPHA = 1.5

_LABELS = {"dp": "DP-UM", "idp_ls": "iDP-LS", "idp_cbls": "iDP-CBLS"}


class Microaggregation(NamedTuple):
    """The non-private microaggregation of one attribute (see :func:`microaggregate`)."""

    labels: np.ndarray
    centroids: np.ndarray
    sensitivities: np.ndarray


def _cluster_size(k: Any, n: int) -> int:
    """Return ``k`` checked to be an int in ``[1, n]``."""
    k = check_positive_int(k, "k")
    if k > n:
        raise ValueError(f"k must be <= the number of values of x ({n}), got {k}")
    return k


def individual_ranking_clusters(x: Any, k: int) -> np.ndarray:
    """Cluster labels of individual-ranking microaggregation with minimum size ``k``.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite numeric values of one attribute.
    k : int
        Minimum cluster size, ``1 <= k <= n``.

    Returns
    -------
    ndarray of int64, shape (n,)
        Cluster of every record, numbered in rank order: the stable ascending sort of
        ``x`` cut into groups of exactly ``k`` ranks, the remaining ``n mod k`` joining
        the last group (``⌊n/k⌋`` clusters, the last of size ``k .. 2k−1``; one
        cluster when ``n < 2k``).

    Raises
    ------
    ValueError
        If ``x`` is empty, not 1-D or not finite, or ``k`` is not in ``[1, n]``.
    TypeError
        If ``x`` is not numeric or ``k`` not an int.

    Examples
    --------
    >>> individual_ranking_clusters([5.0, 1.0, 3.0, 2.0, 4.0], 2)
    array([1, 0, 1, 0, 1])
    """
    values = as_float_array(x, "x", ndim=1, non_empty=True)
    k = _cluster_size(k, values.shape[0])
    return _core.individual_ranking_clusters(values, k).astype(np.int64)


def microaggregate(
    x: Any, k: int, *, mechanism: str = "idp_cbls", bounds: tuple[float, float]
) -> Microaggregation:
    """Microaggregate one attribute exactly, without noise (for analysis, not release).

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite numeric values, inside ``bounds``.
    k : int
        Minimum cluster size (``>= 3`` for ``"idp_cbls"``).
    mechanism : {"idp_cbls", "idp_ls", "dp"}, default="idp_cbls"
        Which centroid and sensitivity (see the module documentation).
    bounds : (float, float)
        The attribute's domain ``[lo, hi]``.

    Returns
    -------
    Microaggregation
        ``labels`` (cluster per record), ``centroids`` and ``sensitivities`` (per
        cluster, in rank order), as the mechanism defines them.

    Notes
    -----
    Not private: the centroids are exact, and for the iDP mechanisms the
    sensitivities are functions of each cluster's extreme values. Use it to study the
    method, never to publish.

    Examples
    --------
    >>> result = microaggregate([1.0, 2.0, 3.0, 10.0], 2, mechanism="dp", bounds=(0, 10))
    >>> result.centroids.tolist(), result.sensitivities.tolist()
    ([1.5, 6.5], [5.0, 5.0])
    """
    values = as_float_array(x, "x", ndim=1, non_empty=True)
    k = _cluster_size(k, values.shape[0])
    mechanism = check_choice(mechanism, "mechanism", MECHANISMS)
    lo, hi = check_bounds_pair("bounds", bounds, strict=False)
    labels, centroids, sensitivities = _core.microaggregate(
        values, k, mechanism, lo, hi
    )
    return Microaggregation(labels.astype(np.int64), centroids, sensitivities)


@fill_doc(label=LABEL_PARAMETER, refits=REFITS_NOTE)
class MicroaggregationMasker(DPEstimatorMixin, BaseEstimator):
    """Release a numeric table by microaggregation and Laplace noise (ε-DP or ε-iDP).

    Parameters
    ----------
    k : int
        Minimum cluster size: ``1 <= k <= n``; ``k >= 3`` for ``"idp_cbls"``.
        ``mechanism="dp"`` with ``k=1`` is plain Laplace noise on every value.
    epsilon : float
        Total privacy parameter, finite and > 0, split over the attributes.
    mechanism : {"idp_cbls", "idp_ls", "dp"}, default="idp_cbls"
        The calibration of the centroid noise (see the module documentation):
        ``"dp"`` gives ε-differential privacy; ``"idp_ls"`` and ``"idp_cbls"`` give
        ε-individual differential privacy, a guarantee with respect to the actual
        data set.
    bounds : None, (lo, hi), sequence of (lo, hi) or dict, default=None
        The attributes' public domains: one pair for every attribute, one pair per
        numeric attribute (in order), or a dict from column name (or index) to pair.
        ``None`` (or an attribute missing from the dict) takes the paper's
        data-derived domain ``[0, 1.5·max]`` (``[1.5·min, 1.5·max]`` when the
        attribute has negative values) and warns with
        :class:`~privtab.exceptions.PrivacyLeakWarning`. The outputs are clamped to
        the bounds.
    epsilon_split : sequence of float, optional
        The ε of each numeric attribute, summing exactly to ``epsilon``; default an
        equal split.
    non_numeric : {"raise", "drop", "passthrough"}, default="raise"
        The non-numeric columns of a data frame (strings, booleans, datetimes,
        durations, categories, objects), which microaggregation cannot mask:
        ``"raise"`` a ``TypeError`` naming them, ``"drop"`` them from the release, or
        ``"passthrough"``: copy them into the release unmasked, with a
        :class:`~privtab.exceptions.PrivacyLeakWarning` naming every one of them.
        Their values are then published as they are, outside the guarantee.
    keep_index : bool, default=False
        pandas input: give the release the index of ``X`` (a
        :class:`~privtab.exceptions.PrivacyLeakWarning` says that it is copied
        unmasked) instead of a fresh ``RangeIndex``. An index of names, dates or row
        numbers of a larger table identifies the records.
    keep_attrs : bool, default=False
        pandas input: copy ``X.attrs`` into the release (with a
        :class:`~privtab.exceptions.PrivacyLeakWarning`) instead of leaving its
        ``attrs`` empty.
    out_of_bounds : {"raise", "clip"}, default="raise"
        A value outside its declared bounds raises ``ValueError`` (naming the
        attribute, row and value), or is clipped to the bounds before masking
        (clipping is then part of the mechanism, and the guarantee holds).
        ``"error"``, the old spelling of ``"raise"``, still works with a
        ``FutureWarning``.
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (the secure default) uses operating-system entropy. A fixed seed is
        for reproducibility only and voids privacy against anyone who knows it.
    accountant : BudgetAccountant, optional
        Checked before the data are read, charged ``epsilon`` after success (the
        default accountant when ``None``).
    n_threads : int, optional
        Threads of the kernel; the output does not depend on it.
    %(label)s

    Attributes
    ----------
    privacy_guarantee : str
        ``"dp"`` for ``mechanism="dp"``, else ``"idp"``: the guarantee every ledger
        entry of a fit records.
    masked_ : ndarray or DataFrame
        The release (also returned by :meth:`fit_transform`): the masked numeric
        attributes, with the non-numeric columns copied unmasked when
        ``non_numeric="passthrough"``; a pandas release has a fresh ``RangeIndex``
        and empty ``attrs`` unless ``keep_index`` or ``keep_attrs`` asks otherwise.
    sensitivities_ : list of ndarray
        Per numeric attribute, the sensitivity ``Δ_j`` of every cluster (rank order).
        Not covered: for the iDP mechanisms these are local sensitivities of the
        actual data (functions of each cluster's extreme values).
    n_clusters_ : ndarray of int64
        Clusters per numeric attribute (``⌊n/k⌋``: public).
    bounds_ : ndarray of shape (n_attributes, 2)
        The bounds used. Not covered where they were inferred from the data (the
        declared ones are the ``bounds`` parameter).
    epsilons_ : ndarray of float64
        The ε of each numeric attribute.
    feature_names_in_ : ndarray of str
        The numeric columns masked (data frames only).
    epsilon_spent_ : float
    privacy_ledger_ : list of LedgerEntry
        One entry per attribute (``(label, epsilon)`` pairs whose ``guarantee`` is
        ``"dp"`` or ``"idp"``; the labels say ε-DP or ε-iDP); they sum exactly to
        ``epsilon_spent_``.

    The guarantee covers ``masked_`` without its passed-through columns, index and
    ``attrs``, and the public ``n_clusters_`` and ``epsilons_``: :meth:`release`
    returns exactly these (``released_attributes``). ``sensitivities_``, inferred
    ``bounds_``, the passed-through columns, a kept index or ``attrs`` are not covered
    and stay with the data holder.

    Raises
    ------
    ValueError
        From ``fit_transform``: invalid ``k``, ``epsilon``, ``mechanism``, bounds,
        ``epsilon_split``, ``non_numeric`` or ``out_of_bounds``; empty data, NaN or
        infinities, values outside their bounds (with ``out_of_bounds="raise"``).
    TypeError
        Non-numeric data, non-numeric frame columns with ``non_numeric="raise"``
        (naming them), or ``keep_index``/``keep_attrs`` not a bool.
    BudgetExceededError
        Before the data are read, if the accountant cannot afford ``epsilon``.

    Notes
    -----
    **Budget.** ``ε = Σ_a ε_a`` over the numeric attributes (sequential composition);
    within an attribute every centroid gets all of ``ε_a``: the clusters are
    disjoint, so their releases compose in parallel (the paper's
    Algorithm 1). Noise ``Lap(0, Δ_j/ε_a)`` per centroid, drawn with the
    floating-point-safe grid construction of :func:`~privtab.laplace_mechanism`
    (``Δ_j`` widened by the worst rounding of the centroid's floating-point mean, a
    relative ``n·1e-16`` of the bounds), then clamped to the bounds (post-processing).

    **Sensitivities** (cluster ``C_j``, its sorted values ``a_1 ≤ … ≤ a_m``, bounds
    ``[lo, hi]``): DP-UM ``(hi − lo)/m``; iDP-LS ``max(hi − a_1, a_m − lo)/m``;
    iDP-CBLS ``max(|a_m − a_2| + |a_3 − a_2| + |a_m − a_{m−1}|, |a_1 − a_{m−1}| +
    |a_{m−2} − a_{m−1}| + |a_1 − a_2|)/m`` (Proposition 3 with the second and third
    order statistics).

    **Guarantee.** ``"dp"`` is ε-DP under replace-one neighbours: changing one record
    moves the sorted values by at most ``hi − lo`` in L1, however the ranks shift, so
    the centroids' noise (scale ``(hi − lo)/(|C_j|·ε_a)``) covers every cluster at once.
    The iDP mechanisms are ε-individually DP as the paper states it (Soria-Comas et al. 2017 and 2025): each
    subject of the actual data set gets the ε-DP protection, but indistinguishability
    holds only between the actual data set and its neighbours, and the noise reveals
    how spread the clusters are. The ledger labels and
    :meth:`BudgetAccountant.report` keep ε-DP and ε-iDP spending apart.

    **Caveat on the paper's iDP analysis.** Propositions 2 and 3 bound the change of
    one centroid when one record of its cluster changes, with the clusters fixed. But
    the clusters are ranks of the data: changing one record can shift every later
    rank by one and so move several centroids at once. privtab implements the
    mechanisms as the paper specifies and labels them ε-iDP as the paper does; the
    core's documentation (``privtab_core::microagg``) works out the worst case: for
    iDP-LS at most ``2·ε_a`` per attribute, for iDP-CBLS up to ``⌊n/k⌋·ε_a`` (moving
    the smallest record above the largest shifts every cluster). Use ``"dp"`` where
    that matters.

    **Row linkage is not covered.** The release keeps the records in their order, and
    the records of one cluster share one noisy centroid, so it shows exactly which
    records share a cluster in each attribute (and, across attributes, which clusters
    occur together). That partition depends on the data: with ``k=3``, bounds
    ``(0, 10)`` and ``x = [0, 2, 3, 4, 5, 6]``, the first two records always share a
    value; replace the first by 9 and they share one in about 1.5 % of the releases,
    at any ε. The paper's analysis, and so the guarantee above (ε-DP for ``"dp"``,
    ε-iDP for the others), covers each attribute's values as an unordered set of
    noisy centroids with their cluster sizes, not which record received which.
    Publish the record-level table only where linking records by their shared values
    is acceptable.

    **Dtypes.** The noise is drawn in float64; the release then takes each
    attribute's dtype where it can hold it. A float32 (or float16) attribute gets
    each noisy centroid rounded to the nearest value of its dtype inside the bounds,
    when the bounds are finite in that dtype. An integer attribute gets each noisy
    centroid rounded to the nearest integer and moved to the nearest integer inside
    the bounds (``ceil(lo) .. floor(hi)``), when the dtype holds one: an integer
    release, no longer the noisy mean itself (an error of at most 0.5 on top of the
    noise). Both roundings are post-processing of the release, so the guarantee is
    unchanged. Booleans, and attributes whose dtype cannot hold their bounds, are
    released as float64, and so are nested lists; a NumPy array has one dtype, so it
    keeps the input's only when every attribute can (else it is float64 as a whole). A pandas nullable
    dtype (``"Int64"``, ``"Float32"``) is kept as such.

    **What is released besides the masked values.** Only the masked numeric
    attributes are covered. Non-numeric columns (a name, a diagnosis, a date of birth)
    and a pandas index or ``attrs`` come from the data unmasked: by default they are
    refused or left out, and copying them into the release must be asked for
    (``non_numeric="passthrough"``, ``keep_index=True``, ``keep_attrs=True``) and is
    warned about. The number of rows and the column names are public.

    %(refits)s

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import BudgetAccountant, MicroaggregationMasker
    >>> X = np.array([[10.0, 1.0], [12.0, 2.0], [11.0, 3.0], [40.0, 4.0], [42.0, 5.0],
    ...               [41.0, 6.0]])
    >>> masker = MicroaggregationMasker(3, 1.0, bounds=[(0, 50), (0, 10)],
    ...                                 random_state=0, accountant=BudgetAccountant(1))
    >>> masker.fit_transform(X).shape
    (6, 2)
    >>> [(label.split(":")[0], eps) for label, eps in masker.privacy_ledger_]
    [('MicroaggregationMasker (iDP-CBLS, ε-iDP, k=3)', 0.5), ('MicroaggregationMasker (iDP-CBLS, ε-iDP, k=3)', 0.5)]
    """

    released_attributes = ("masked_", "n_clusters_", "epsilons_")

    def __init__(
        self,
        k: int,
        epsilon: float,
        *,
        mechanism: str = "idp_cbls",
        bounds: Any = None,
        epsilon_split: Any = None,
        non_numeric: str = "raise",
        keep_index: bool = False,
        keep_attrs: bool = False,
        out_of_bounds: str = "raise",
        random_state: Any = None,
        accountant: Any = None,
        n_threads: int | None = None,
        label: str | None = None,
    ) -> None:
        self.k = k
        self.epsilon = epsilon
        self.mechanism = mechanism
        self.bounds = bounds
        self.epsilon_split = epsilon_split
        self.non_numeric = non_numeric
        self.keep_index = keep_index
        self.keep_attrs = keep_attrs
        self.out_of_bounds = out_of_bounds
        self.random_state = random_state
        self.accountant = accountant
        self.n_threads = n_threads
        self.label = label

    @property
    def privacy_guarantee(self) -> str:  # type: ignore[override]
        """The guarantee of the release: ``"dp"`` for ``mechanism="dp"``, else ``"idp"``.

        What the ledger entries of a fit record as their ``guarantee``.
        """
        return "dp" if self.mechanism == "dp" else "idp"

    def fit(self, X: Any, y: Any = None) -> MicroaggregationMasker:
        """Release ``X`` (see :meth:`fit_transform`); the release is ``masked_``.

        Returns
        -------
        self
        """
        self.fit_transform(X)
        return self

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """Mask every numeric attribute of ``X``: one ε-DP or ε-iDP release.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_attributes), pandas or polars DataFrame
            Numeric values (frames may hold other columns, see ``non_numeric``).
        y : ignored

        Returns
        -------
        ndarray or DataFrame
            The masked table, of the input's type, with its column names and order
            (less the dropped columns) and, where they hold the release, its dtypes
            (see Notes); a pandas release has a fresh ``RangeIndex`` and empty
            ``attrs`` unless ``keep_index``/``keep_attrs`` ask otherwise. A NumPy
            release is in column-major (Fortran) order, the order the kernel
            computes it in; ``np.ascontiguousarray`` gives a row-major copy.
        """
        k = check_positive_int(self.k, "k")
        mechanism = check_choice(self.mechanism, "mechanism", MECHANISMS)
        if mechanism == "idp_cbls" and k < 3:
            raise ValueError(
                f"k must be >= 3 for mechanism='idp_cbls' (its pre-processing needs "
                f"three values per cluster), got k={k}"
            )
        non_numeric = check_choice(self.non_numeric, "non_numeric", NON_NUMERIC)
        keep_index = check_bool(self.keep_index, "keep_index")
        keep_attrs = check_bool(self.keep_attrs, "keep_attrs")
        out_of_bounds = check_choice(self.out_of_bounds, "out_of_bounds", OUT_OF_BOUNDS)
        n_threads = check_threads(self.n_threads)
        run = self._start_private_fit()

        kind = frame_kind(X)
        values, names, numeric, dtypes = _numeric_values(
            X, kind, non_numeric, finite=False
        )
        n, d = values.shape
        if n == 0 or d == 0:
            raise ValueError(
                f"X must have at least one row and one numeric column, got shape {values.shape}"
            )
        if k > n:
            raise ValueError(f"k must be <= the number of rows ({n}), got k={k}")
        bounds = self._resolve_bounds(values, names, kind)
        if out_of_bounds == "clip":
            check_finite(values, "X", _frame_names(kind, names))
            values = _check_inside(values, bounds, names, out_of_bounds)
        epsilons = self._resolve_split(run.epsilon, d)

        try:
            masked_t, sensitivities = _core.microaggregate_columns(
                np.ascontiguousarray(values.T),
                k,
                mechanism,
                np.ascontiguousarray(bounds),
                np.asarray(epsilons, dtype=np.float64),
                run.seed(),
                n_threads,
            )
        except ValueError:
            # The kernel checks every value in its first pass over the column (no
            # separate pass here); name the first bad one as the rest of privtab does.
            check_finite(values, "X", _frame_names(kind, names))
            _check_inside(values, bounds, names, "raise")
            raise
        masked = _in_input_dtypes(masked_t, dtypes, bounds, kind)

        kind_label = "ε-DP" if mechanism == "dp" else "ε-iDP"
        method = "DP" if mechanism == "dp" and k == 1 else _LABELS[mechanism]
        title = f"{type(self).__name__} ({method}, {kind_label}, k={k})"
        steps = [
            (f"{title}: attribute {name!r}", eps)
            for name, eps in zip(names, epsilons, strict=True)
        ]
        self._finish_private_fit(run, title, steps)
        self.sensitivities_ = list(sensitivities)
        self.n_clusters_ = np.array([len(s) for s in sensitivities], dtype=np.int64)
        self.bounds_ = bounds
        self.epsilons_ = np.asarray(epsilons, dtype=np.float64)
        self.n_features_in_ = d
        if kind != "numpy":
            self.feature_names_in_ = np.asarray(names, dtype=object)
        self.masked_ = _rebuild(
            X, kind, masked, numeric, non_numeric, keep_index, keep_attrs
        )
        owner = type(self).__name__
        unmasked = []
        if non_numeric == "passthrough" and not all(numeric):
            columns = [c for c, ok in zip(X.columns, numeric, strict=True) if not ok]
            unmasked.append(f"the non-numeric columns {columns!r} are")
        if kind == "pandas" and keep_index:
            unmasked.append("the index of X (keep_index=True) is")
        if kind == "pandas" and keep_attrs:
            unmasked.append("X.attrs (keep_attrs=True) are")
        for what in unmasked:
            warn_user(
                f"{owner}: {what} copied into the release unmasked: published as "
                "in the data, not covered by the privacy guarantee",
                PrivacyLeakWarning,
            )
        return self.masked_

    def release(self) -> dict[str, Any]:
        """Return the publishable form of the fitted masker: covered values only.

        As every DP estimator's ``release``, with ``masked_`` reduced to what the
        guarantee covers: the masked numeric attributes, without passed-through
        columns, with a fresh ``RangeIndex`` and empty ``attrs`` (pandas), whatever
        ``non_numeric``, ``keep_index`` and ``keep_attrs`` put in ``masked_``. No
        ``sensitivities_`` and no ``bounds_`` (the declared bounds are in
        ``params``).

        Returns
        -------
        dict
            ``"estimator"``, ``"params"``, ``"guarantee"``, ``"epsilon_spent"``,
            ``"privacy_ledger"`` and ``"attributes"``: ``masked_``, ``n_clusters_``,
            ``epsilons_`` (copies).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the masker has not been fitted.
        """
        published = super().release()
        published["attributes"]["masked_"] = _covered_part(self.masked_)
        return published

    def _resolve_bounds(
        self, values: np.ndarray, names: list[Any], kind: str
    ) -> np.ndarray:
        d = values.shape[1]
        declared: list[Any] = [None] * d
        spec = self.bounds
        if isinstance(spec, dict):
            unknown = [key for key in spec if key not in names and key not in range(d)]
            if unknown:
                raise ValueError(
                    f"bounds names {unknown!r}, which is not a numeric column of X"
                )
            for j, name in enumerate(names):
                declared[j] = spec.get(name, spec.get(j))
        elif spec is not None:
            if not isinstance(spec, Iterable):
                raise TypeError(
                    "bounds must be a (lo, hi) pair, a sequence of pairs or a dict, "
                    f"got {type(spec).__name__}"
                )
            pairs = list(spec)
            if len(pairs) == 2 and all(np.isscalar(v) for v in pairs):
                declared = [pairs] * d
            elif len(pairs) == d:
                declared = pairs
            else:
                raise ValueError(
                    f"bounds must be one (lo, hi) pair, {d} pairs (one per numeric "
                    f"attribute) or a dict, got {len(pairs)} entries"
                )
        out = np.empty((d, 2))
        inferred = []
        if any(pair is None for pair in declared):
            check_finite(values, "X", _frame_names(kind, names))
        for j, pair in enumerate(declared):
            if pair is None:
                column = values[:, j]
                lo = min(0.0, BOUNDS_ALPHA * float(column.min()))
                hi = max(0.0, BOUNDS_ALPHA * float(column.max()))
                if hi <= lo:
                    hi = lo + 1.0
                out[j] = (lo, hi)
                inferred.append(names[j])
            else:
                out[j] = check_bounds_pair(f"bounds[{names[j]!r}]", pair, strict=False)
        if inferred:
            warn_user(
                f"{type(self).__name__}: bounds of {inferred!r} were inferred from the "
                f"data ([0, {BOUNDS_ALPHA}·max], as the paper's experiments do), so the "
                "domain is not covered by the privacy guarantee; declare bounds=...",
                PrivacyLeakWarning,
            )
        return out

    def _resolve_split(self, epsilon: float, d: int) -> list[float]:
        if self.epsilon_split is None:
            return split_budget(epsilon, [1.0] * d)
        try:
            parts = [float(e) for e in self.epsilon_split]
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"epsilon_split must be a sequence of {d} numbers, got {self.epsilon_split!r}"
            ) from exc
        if len(parts) != d:
            raise ValueError(
                f"epsilon_split must have one entry per numeric attribute ({d}), got {len(parts)}"
            )
        if any(not (math.isfinite(e) and e > 0) for e in parts):
            raise ValueError(
                f"epsilon_split must hold finite values > 0, got {parts!r}"
            )
        if sum(parts) != epsilon:
            raise ValueError(
                f"epsilon_split must sum exactly to epsilon={epsilon!r}, got "
                f"{parts!r} (sum {sum(parts)!r}); privtab.split_budget makes exact parts"
            )
        return parts

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags


def _numeric_columns(X: Any, kind: str) -> list[bool]:
    """Which columns of a pandas or polars frame can be masked (real numbers).

    Booleans, complex numbers, datetimes, durations, categories, strings and objects
    cannot.
    """
    if kind == "pandas":
        from pandas.api import types

        return [
            types.is_numeric_dtype(dtype)
            and not types.is_bool_dtype(dtype)
            and not types.is_complex_dtype(dtype)
            for dtype in X.dtypes
        ]
    return [dtype.is_numeric() for dtype in X.dtypes]


def _numeric_values(
    X: Any, kind: str, non_numeric: str, name: str = "X", *, finite: bool = True
) -> tuple[np.ndarray, list[Any], list[bool], list[np.dtype]]:
    """Return the numeric attributes (n × d float64), their names, which are numeric.

    And the dtype of each numeric attribute in ``X`` (the NumPy dtype of a pandas
    extension dtype or a polars dtype). With ``non_numeric="raise"`` a frame's
    non-numeric columns raise ``TypeError``; otherwise they are left out.
    ``finite=False`` skips the finiteness check (see :func:`as_float_array`).
    """
    if kind == "numpy":
        if isinstance(X, str):
            raise TypeError(f"{name} must be array-like, got a str")
        values = as_float_array(X, name, ndim=2, contiguous=False, finite=finite)
        names: list[Any] = list(range(values.shape[1]))
        numeric = [True] * values.shape[1]
        # Nested lists have no dtype of their own: they are released as float64.
        dtype = X.dtype if isinstance(X, np.ndarray) else np.dtype(np.float64)
        return values, names, numeric, [dtype] * values.shape[1]
    columns = list(X.columns)
    numeric = _numeric_columns(X, kind)
    others = [c for c, ok in zip(columns, numeric, strict=True) if not ok]
    if others and non_numeric == "raise":
        raise TypeError(
            f"{name} has non-numeric columns {others!r}{_first_text(X, kind, numeric)}, "
            "which microaggregation cannot mask; pass non_numeric='drop' to leave "
            "them out of the release, or non_numeric='passthrough' to copy them into "
            "it unmasked (not covered by the privacy guarantee)"
        )
    positions = [i for i, ok in enumerate(numeric) if ok]
    names = [columns[i] for i in positions]
    if kind == "pandas":
        values = X.iloc[:, positions].to_numpy(dtype=np.float64, na_value=np.nan)
        dtypes = [_numpy_dtype(X.dtypes.iloc[i]) for i in positions]
    else:
        selected = X.select(names)
        values = selected.to_numpy().astype(np.float64)
        dtypes = [
            _numpy_dtype(selected.head(0).to_series(j).to_numpy().dtype)
            for j in range(len(names))
        ]
    values = as_float_array(
        values, name, ndim=2, contiguous=False, finite=finite, columns=names
    )
    return values, names, numeric, dtypes


def _first_text(X: Any, kind: str, numeric: list[bool]) -> str:
    """Where the first non-numeric column holds a value that is not a number.

    For a column of numbers stored as objects because of one string, say: names the
    string, its row and its column; empty for columns of another dtype.
    """
    for i, ok in enumerate(numeric):
        column = X.iloc[:, i] if kind == "pandas" else X.to_series(i)
        if ok or str(column.dtype) not in ("object", "Object"):
            continue
        found = first_non_number(np.asarray(column.to_numpy(), dtype=object))
        if found is not None:
            (row,), value = found
            return f" (column {X.columns[i]!r} holds {show_value(value)} at row {row})"
    return ""


def _numpy_dtype(dtype: Any) -> np.dtype:
    """Return the NumPy dtype of a column's dtype (float64 when it has none)."""
    dtype = getattr(dtype, "numpy_dtype", dtype)
    return dtype if isinstance(dtype, np.dtype) else np.dtype(np.float64)


def _frame_names(kind: str, names: list[Any]) -> list[Any] | None:
    """Column names for messages: a frame's, or ``None`` for an array's positions."""
    return None if kind == "numpy" else names


def _release_dtype(dtype: np.dtype, lo: float, hi: float) -> np.dtype:
    """Return the dtype of a masked attribute: the input's, where it holds the release.

    Floats keep their precision when the bounds are finite in it; integers (a
    rounded release) when an integer of the dtype lies in the bounds. Anything else
    (booleans, bounds a float16 or an int8 cannot hold) is released as float64.
    """
    if dtype.kind == "f" and dtype.itemsize < 8:
        fits = max(abs(lo), abs(hi)) <= float(np.finfo(dtype).max)
        low, high = _float_bounds(dtype, lo, hi)
        return dtype if fits and low <= high else np.dtype(np.float64)
    if dtype.kind in "iu":
        low_int, high_int = _integer_bounds(dtype, lo, hi)
        return dtype if low_int <= high_int else np.dtype(np.float64)
    return np.dtype(np.float64)


def _float_bounds(dtype: np.dtype, lo: float, hi: float) -> tuple[Any, Any]:
    """Return the smallest and largest values of a float ``dtype`` in ``[lo, hi]``."""
    low, high = dtype.type(lo), dtype.type(hi)
    if float(low) < lo:
        low = np.nextafter(low, dtype.type(np.inf))
    if float(high) > hi:
        high = np.nextafter(high, dtype.type(-np.inf))
    return low, high


def _integer_bounds(dtype: np.dtype, lo: float, hi: float) -> tuple[int, int]:
    """Return the smallest and largest integers of an integer ``dtype`` in ``[lo, hi]``."""
    info = np.iinfo(dtype)
    return max(math.ceil(lo), int(info.min)), min(math.floor(hi), int(info.max))


def _in_input_dtypes(
    masked_t: np.ndarray, dtypes: list[np.dtype], bounds: np.ndarray, kind: str
) -> Any:
    """Return the masked attributes (rows of ``masked_t``) in the dtypes of the input.

    Post-processing of the noisy centroids, which lie in their bounds: a float32 (or
    float16) attribute is rounded to the nearest value of its dtype inside the bounds,
    an integer attribute to the nearest integer inside them (as the exact integer
    the dtype holds), where :func:`_release_dtype` says the dtype can hold the
    release. A NumPy release has one dtype: the input's when every attribute keeps it,
    else float64. Returns the (n, d) array, or for a frame the list of columns.

    The array is in column-major (Fortran) order, the order the kernel writes its
    attributes in: a float64 release is the kernel's output itself, seen transposed,
    and no (n, d) copy is made (on 5M × 4 values that copy cost as much as the
    kernel on two threads).
    """
    targets = [
        _release_dtype(dtype, float(lo), float(hi))
        for dtype, (lo, hi) in zip(dtypes, bounds, strict=True)
    ]
    if kind == "numpy" and any(t != targets[0] for t in targets):
        targets = [np.dtype(np.float64)] * len(targets)
    columns = []
    for column, target, (lo, hi) in zip(masked_t, targets, bounds, strict=True):
        if target.kind == "f" and target.itemsize < 8:
            low, high = _float_bounds(target, float(lo), float(hi))
            column = np.clip(column.astype(target), low, high)
        elif target.kind in "iu":
            low_int, high_int = _integer_bounds(target, float(lo), float(hi))
            # Float ends inside the integer ones (beyond 2**53 a float may round
            # past them), so that the cast is exact and stays in the bounds.
            low, high = float(low_int), float(high_int)
            if low < low_int:
                low = float(np.nextafter(low, np.inf))
            if high > high_int:
                high = float(np.nextafter(high, -np.inf))
            column = np.clip(np.rint(column), low, high).astype(target)
        columns.append(column)
    if kind == "numpy":
        if not columns or targets[0] == masked_t.dtype:
            return masked_t.T
        return np.array(columns, dtype=targets[0]).T
    return columns


def _check_inside(
    values: np.ndarray, bounds: np.ndarray, names: list[Any], out_of_bounds: str
) -> np.ndarray:
    below = values < bounds[:, 0]
    above = values > bounds[:, 1]
    if not (below.any() or above.any()):
        return values
    if out_of_bounds == "clip":
        return np.clip(values, bounds[:, 0], bounds[:, 1])
    rows, cols = np.nonzero(below | above)
    j = cols[0]
    raise ValueError(
        f"X[{rows[0]}, {names[j]!r}] = {values[rows[0], j]} is outside the declared "
        f"bounds ({bounds[j, 0]}, {bounds[j, 1]}); fix the bounds or pass "
        "out_of_bounds='clip'"
    )


def _rebuild(
    X: Any,
    kind: str,
    masked: Any,
    numeric: list[bool],
    non_numeric: str,
    keep_index: bool,
    keep_attrs: bool,
) -> Any:
    """Return the release of the input's type: masked columns, and any passed through.

    ``masked`` is the (n, d) array for NumPy input, else the list of masked columns
    (:func:`_in_input_dtypes`). A pandas release gets a fresh ``RangeIndex`` and no
    ``attrs`` unless ``keep_index``/``keep_attrs``; a polars frame has neither. A
    pandas extension dtype (``"Int64"``, ``"Float32"``) is kept where the masked
    column has its NumPy dtype.
    """
    if kind == "numpy":
        return np.asarray(masked)
    positions, columns = [], []
    masked_columns = iter(masked)
    for i, ok in enumerate(numeric):
        if ok:
            column = next(masked_columns)
            if kind == "pandas":
                dtype = X.dtypes.iloc[i]
                if getattr(dtype, "numpy_dtype", None) == column.dtype:
                    import pandas as pd

                    column = pd.array(column, dtype=dtype)
            columns.append(column)
        elif non_numeric == "passthrough":
            columns.append(X.iloc[:, i].array if kind == "pandas" else X.to_series(i))
        else:
            continue
        positions.append(i)
    if kind == "pandas":
        import pandas as pd

        index = X.index if keep_index else pd.RangeIndex(len(X))
        out = _pandas_frame(X.columns[positions], columns, index)
        if keep_attrs:
            out.attrs = copy.deepcopy(X.attrs)
        return out
    import polars as pl

    return pl.DataFrame(
        [
            pl.Series(X.columns[i], column) if numeric[i] else column
            for i, column in zip(positions, columns, strict=True)
        ]
    )


def _pandas_frame(column_index: Any, columns: list[Any], index: Any) -> Any:
    """Build a pandas frame from columns by position (names may repeat)."""
    import pandas as pd

    out = pd.DataFrame(dict(enumerate(columns)), index=index)
    out.columns = column_index
    return out


def _covered_part(masked: Any) -> Any:
    """Return a copy of the masked attributes of a release, without anything else.

    No passed-through column, no index, no ``attrs``. The masked columns are the
    numeric ones: every column passed through is not.
    """
    kind = frame_kind(masked)
    if kind == "numpy":
        return np.array(masked)
    positions = [i for i, ok in enumerate(_numeric_columns(masked, kind)) if ok]
    if kind == "pandas":
        import pandas as pd

        columns = [masked.iloc[:, i].to_numpy(copy=True) for i in positions]
        return _pandas_frame(
            masked.columns[positions], columns, pd.RangeIndex(len(masked))
        )
    return masked.select([masked.columns[i] for i in positions])


def sse(X: Any, X_masked: Any) -> float:
    """Sum the squared distances between original and masked records (eq. 4).

    ``SSE = Σ_i dist(r_i, r'_i)²`` with ``dist(r, r') = (1/m)·sqrt(Σ_a ((r_a −
    r'_a)/σ_a²)²)``, ``σ_a²`` the variance of attribute ``a`` in ``X`` (population
    variance), as Soria-Comas et al. define it; an attribute of zero variance adds
    nothing.

    Parameters
    ----------
    X, X_masked : array-like of shape (n, m), or data frames of numeric columns
        The original and the masked table.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the shapes differ, a table is empty or holds NaN or infinities.

    Examples
    --------
    >>> sse([[0.0, 1.0], [2.0, 3.0]], [[0.0, 1.0], [2.0, 3.0]])
    0.0
    """
    original, masked = _pair(X, X_masked)
    variance = original.var(axis=0)
    scaled = np.zeros_like(original)
    nonzero = variance > 0
    scaled[:, nonzero] = (original[:, nonzero] - masked[:, nonzero]) / variance[nonzero]
    m = original.shape[1]
    return float(np.sum(scaled**2) / (m * m))


def mean_sse(X: Any, X_masked: Any) -> float:
    """Return :func:`sse` divided by the number of records (the paper's mean SSE).

    Examples
    --------
    >>> mean_sse([[0.0], [2.0]], [[1.0], [1.0]])
    1.0
    """
    original, _ = _pair(X, X_masked)
    return sse(X, X_masked) / original.shape[0]


def _pair(X: Any, Y: Any) -> tuple[np.ndarray, np.ndarray]:
    arrays = []
    for data, name in ((X, "X"), (Y, "X_masked")):
        values, _, _, _ = _numeric_values(data, frame_kind(data), "drop", name)
        # C order, so that the sums below do not depend on the input's layout.
        arrays.append(np.ascontiguousarray(values))
    if arrays[0].shape != arrays[1].shape:
        raise ValueError(
            f"X and X_masked must have the same shape, got {arrays[0].shape} and "
            f"{arrays[1].shape}"
        )
    if arrays[0].size == 0:
        raise ValueError("X must not be empty")
    return arrays[0], arrays[1]
