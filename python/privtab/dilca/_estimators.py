"""The DILCA and DP-DILCA estimators.

:class:`DILCA` learns the context and the distance matrix of every attribute exactly
(Ienco, Pensa and Meo 2012); :class:`DPDILCA` makes the context choice and the contingency tables
differentially private (Battaglia, Celano and Pensa 2021) (DP-meanSU, DP-MaxRelevance, DP-MaxDependency and the
baseline).

Core kernels called: ``privtab._core.pairwise_tables`` and
``privtab._core.subset_entropies`` (through :mod:`privtab.dilca._contexts`), the
counting kernels behind :func:`privtab.contingency_table` and :func:`privtab.entropy`,
and the samplers behind :func:`privtab.laplace_mechanism` and
:func:`privtab.exponential_mechanism`.

Full references: :mod:`privtab.dilca`.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from privtab._docstrings import (
    LABEL_PARAMETER,
    REFITS_NOTE,
    THREADS_PARAMETER,
    fill_doc,
)
from privtab._estimator import DPEstimatorMixin
from privtab._random import RandomState
from privtab._threads import runs_on_threads
from privtab._validation import (
    as_code_columns,
    check_choice,
    check_positive,
    check_positive_int,
    check_unit_interval,
    feature_names_out,
    is_encoded,
    to_numpy_2d,
    validate_data,
    warn_inferred_domain,
)
from privtab.accountant import BudgetAccountant, split_budget
from privtab.counts import entropy
from privtab.dilca._contexts import (
    _CONTEXTS,
    _DP_METHODS,
    _mean_su_rule,
    _prepare,
    _relevance_redundancy_rule,
    _subset_scores,
    _symmetric_uncertainty,
    _Tables,
)
from privtab.dilca._distances import (
    _principal_coordinates,
    _scaled_profiles,
    dilca_distance_matrix,
)
from privtab.mechanisms import exponential_mechanism, laplace_mechanism


class _DistanceMixin:
    """``distance_matrix`` and ``pairwise_distances`` of a fitted DILCA model."""

    distance_matrices_: list[np.ndarray]
    cardinalities_: np.ndarray
    tables_: list[list[np.ndarray]]

    def distance_matrix(self, j: int) -> np.ndarray:
        """Return the ``|V_j|×|V_j|`` distances between the values of attribute ``j``.

        Parameters
        ----------
        j : int
            Attribute index, in ``[0, n_features_in_)``.

        Returns
        -------
        ndarray of shape (cardinalities_[j], cardinalities_[j])
            Symmetric, zero diagonal, within [0, 1].
        """
        check_is_fitted(self, "distance_matrices_")
        d = len(self.distance_matrices_)
        if isinstance(j, bool) or not isinstance(j, int | np.integer):
            raise TypeError(f"j must be an int, got {type(j).__name__}")
        if not 0 <= int(j) < d:
            raise ValueError(f"j must be in [0, {d - 1}], got {j}")
        return self.distance_matrices_[int(j)]

    def _codes(self, X: Any, name: str) -> np.ndarray:
        if is_encoded(X):
            X = X.codes
        array = to_numpy_2d(X, name)
        d = self.cardinalities_.shape[0]
        if name == "X" and (
            hasattr(X, "columns") or hasattr(self, "feature_names_in_")
        ):
            # Feature names must match those seen in fit (scikit-learn's rule, which
            # names missing and unseen columns before it counts them).
            validate_data(self, X, skip_check_array=True, reset=False)
        if array.shape[1] != d:
            raise ValueError(
                f"{name} has {array.shape[1]} features, but {type(self).__name__} is "
                f"expecting {d} features as input (it was fitted with {d})"
            )
        columns, _ = as_code_columns(array, name, self.cardinalities_)
        return columns

    def value_embedding(self, j: int, n_components: int | None = None) -> np.ndarray:
        """Euclidean coordinates of the values of attribute ``j`` (classical MDS).

        Parameters
        ----------
        j : int
            Attribute index, in ``[0, n_features_in_)``.
        n_components : int, optional
            Number of coordinates, in [1, cardinalities_[j]]; default the rank ``r`` of
            the configuration (at most ``cardinalities_[j] − 1``). Coordinates beyond
            the rank are 0.

        Returns
        -------
        ndarray of shape (cardinalities_[j], n_components or r)
            Row ``v`` embeds value ``v``. With the default rank, the Euclidean distance
            between rows ``u`` and ``v`` is ``distance_matrix(j)[u, v]`` up to rounding
            (about 1e-15); with fewer components, the best approximation of that rank
            (the classical-MDS truncation).

        Raises
        ------
        TypeError, ValueError
            For an invalid ``j`` or ``n_components``.

        Notes
        -----
        DILCA's distance is the Euclidean distance between the rows of
        ``P / sqrt(Σ_X |X|)``, with ``P`` the concatenated conditional probabilities
        ``P(y | x)`` of the context (``dilca_distance_matrix``), so the matrix is
        exactly Euclidean: ``B = −½·J·D²·J`` (``J = I − 11ᵀ/|V_j|``) is positive
        semi-definite and classical MDS / the Crippen–Havel construction
        (``classical_mds``) embeds it with no negative eigenvalue beyond rounding
        (clipped mass about 1e-16). The same holds for DP-DILCA: its distances come
        from the clamped (non-negative) noisy tables through the same formula, so their
        columns are still conditional distributions and no distance reaches the
        [0, 1] clip. The coordinates returned are these principal coordinates,
        ``U_r·S_r`` from the SVD of the centred rows (``B = U S² Uᵀ``, the eigen-
        decomposition classical MDS would compute), taken from the rows rather than
        from ``D²`` so that near-zero distances keep full precision. Unique up to a
        rotation and the signs of the axes.

        Examples
        --------
        >>> import numpy as np
        >>> from privtab import DILCA
        >>> X = np.array([[0, 0, 1], [1, 1, 0], [2, 1, 0], [0, 0, 1], [2, 1, 1]])
        >>> model = DILCA().fit(X)
        >>> coords = model.value_embedding(0)
        >>> coords.shape
        (3, 2)
        >>> gaps = np.linalg.norm(coords[:, None] - coords[None], axis=2)
        >>> bool(np.allclose(gaps, model.distance_matrix(0), atol=1e-12))
        True
        """
        size = self.distance_matrix(j).shape[0]
        if n_components is not None:
            if isinstance(n_components, bool) or not isinstance(
                n_components, int | np.integer
            ):
                raise TypeError(
                    f"n_components must be an int or None, got "
                    f"{type(n_components).__name__}"
                )
            if not 1 <= int(n_components) <= size:
                raise ValueError(
                    f"n_components must be in [1, {size}] for attribute {j}, got "
                    f"{n_components}"
                )
        return _principal_coordinates(
            _scaled_profiles(self.tables_[int(j)]), n_components
        )

    def transform(self, X: Any) -> np.ndarray:
        """Concatenated value coordinates: Euclidean distances = object distances.

        Parameters
        ----------
        X : array-like of shape ``(n_samples, n_features_in_)``
            Categorical codes within the fitted cardinalities.

        Returns
        -------
        ndarray of shape (n_samples, Σ_j r_j)
            Row ``i`` concatenates ``value_embedding(j)[X[i, j]]`` over the attributes
            (``r_j`` = rank of attribute ``j``), so that
            ``‖T(x) − T(y)‖ = sqrt(Σ_j d_j(x_j, y_j)²) = pairwise_distances(x, y)`` up
            to rounding: KMeans, SVMs or any Euclidean method can use the learnt metric.

        Examples
        --------
        >>> import numpy as np
        >>> from privtab import DILCA
        >>> X = np.array([[0, 0, 1], [1, 1, 0], [2, 1, 0], [0, 0, 1], [2, 1, 1]])
        >>> model = DILCA().fit(X)
        >>> T = model.transform(X)
        >>> gaps = np.linalg.norm(T[:, None] - T[None], axis=2)
        >>> bool(np.allclose(gaps, model.pairwise_distances(X), atol=1e-12))
        True
        """
        check_is_fitted(self, "distance_matrices_")
        xs = self._codes(X, "X")
        blocks = [coords[xs[j]] for j, coords in enumerate(self._embeddings())]
        return np.ascontiguousarray(np.concatenate(blocks, axis=1))

    def _embeddings(self) -> list[np.ndarray]:
        return [
            _principal_coordinates(_scaled_profiles(tables), None)
            for tables in self.tables_
        ]

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the :meth:`transform` columns: ``<feature>_mds<c>``.

        Parameters
        ----------
        input_features : array-like of str, optional
            Input feature names; default ``feature_names_in_`` or ``x0, x1, ...``.

        Returns
        -------
        ndarray of object
            One name per coordinate, attribute after attribute.
        """
        check_is_fitted(self, "distance_matrices_")
        names = feature_names_out(self, input_features)
        return np.asarray(
            [
                f"{name}_mds{c}"
                for name, coords in zip(names, self._embeddings(), strict=True)
                for c in range(coords.shape[1])
            ],
            dtype=object,
        )

    def pairwise_distances(self, X: Any, Y: Any = None) -> np.ndarray:
        """Object distances ``sqrt(Σ_j d_j(x_j, y_j)²)`` between the rows of X and Y.

        Parameters
        ----------
        X : array-like of shape ``(n_samples_X, n_features_in_)``
            Categorical codes within the fitted cardinalities.
        Y : array-like of shape ``(n_samples_Y, n_features_in_)``, optional
            Defaults to ``X``.

        Returns
        -------
        ndarray of shape (n_samples_X, n_samples_Y)
            With ``Y = None``: symmetric with a zero diagonal, so it can be given to
            ``KNeighborsClassifier(metric="precomputed")`` or, condensed with
            ``scipy.spatial.distance.squareform``, to Ward linkage.
        """
        check_is_fitted(self, "distance_matrices_")
        xs = self._codes(X, "X")
        ys = xs if Y is None else self._codes(Y, "Y")
        squared = np.zeros((xs.shape[1], ys.shape[1]))
        for j, matrix in enumerate(self.distance_matrices_):
            squared += (matrix**2)[np.ix_(xs[j], ys[j])]
        return np.sqrt(squared)


@fill_doc(threads=THREADS_PARAMETER)
class DILCA(_DistanceMixin, TransformerMixin, BaseEstimator):
    """Context-based distances between categorical values (non-private DILCA).

    Parameters
    ----------
    context : {"mean_su", "relevance_redundancy"}, default="mean_su"
        ``"mean_su"`` (DILCA_M): the attributes ``X ≠ Y`` with
        ``SU(X, Y) >= sigma · mean_{X' ≠ Y} SU(X', Y)``. ``"relevance_redundancy"``
        (DILCA_RR, FCBF without threshold): order the other attributes by SU with Y,
        descending (ties by index); take the first, then add each next candidate
        ``c`` iff ``SU(c, Y) > max_{s ∈ context} SU(c, s)``.
    sigma : float, default=1.0
        Multiplier of the mean for ``"mean_su"``; finite and > 0.
    %(threads)s

    Attributes
    ----------
    contexts_ : list of ndarray of int64
        The context of each attribute (sorted column indices).
    tables_ : list of list of ndarray
        For each attribute Y, the ``|Y|×|X|`` contingency tables of its context (in the
        order of ``contexts_``) the distances were computed from.
    distance_matrices_ : list of ndarray
        The ``|V_j|×|V_j|`` distance matrix of each attribute: symmetric, zero diagonal,
        within [0, 1].
    cardinalities_ : ndarray of uint32 of shape ``(n_features_in_,)``
    n_features_in_ : int

    Notes
    -----
    SU(X, Y) = 2(H(X) + H(Y) − H(X, Y)) / (H(X) + H(Y)) in bits, 0 when
    H(X) + H(Y) = 0. Distances follow ``dilca_distance_matrix`` with ``|X|`` the
    declared cardinality. Should the ``"mean_su"`` context be empty (possible with
    ``sigma > 1``, or when rounding puts the mean of equal SU values just above them),
    the single attribute with the largest SU (lowest index among ties) is taken, as
    DP-MeanSU does. Cardinalities come from an ``EncodedTable``, the
    ``cardinalities`` argument of :meth:`fit`, or ``max + 1`` of each column.

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import DILCA
    >>> X = np.array([[0, 0, 1], [1, 1, 0], [2, 1, 0], [0, 0, 1], [2, 1, 1]])
    >>> model = DILCA().fit(X)
    >>> [c.tolist() for c in model.contexts_]
    [[1], [0], [0]]
    >>> model.distance_matrix(1)
    array([[0., 1.],
           [1., 0.]])
    >>> model.pairwise_distances(X[:2]).round(4)
    array([[0.    , 1.4907],
           [1.4907, 0.    ]])
    """

    def __init__(
        self,
        context: str = "mean_su",
        *,
        sigma: float = 1.0,
        n_threads: int | None = None,
    ) -> None:
        self.context = context
        self.sigma = sigma
        self.n_threads = n_threads

    @runs_on_threads
    def fit(self, X: Any, y: Any = None, cardinalities: Any = None) -> DILCA:
        """Choose the context of every attribute and compute its distance matrix.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), pandas or polars DataFrame,
            or :class:`~privtab.EncodedTable`
            Categorical codes ``0 .. cardinality - 1``; at least 2 attributes. A
            Dask array or DataFrame has its pairwise tables counted partition by
            partition (:mod:`privtab.engine`); the fit is the in-memory one.
        y : None
            Ignored.
        cardinalities : array-like of int, optional
            Declared domain sizes (from an ``EncodedTable``; else ``max + 1``).

        Returns
        -------
        DILCA
            ``self``, fitted.

        Raises
        ------
        ValueError
            For an unknown ``context``, ``sigma`` not finite and > 0, or invalid X.
        """
        check_choice(self.context, "context", _CONTEXTS)
        sigma = check_positive(self.sigma, "sigma")
        table, cards, _ = _prepare(X, cardinalities)
        d = table.n_columns
        tables = _Tables(table)
        su = tables.symmetric_uncertainty_matrix()
        contexts, matrices, used = [], [], []
        for target in range(d):
            others = np.array([j for j in range(d) if j != target], dtype=np.int64)
            if self.context == "mean_su":
                ctx = _mean_su_rule(su[target], others, sigma)
            else:
                ctx = _relevance_redundancy_rule(su, target)
            contexts.append(ctx.astype(np.int64))
            used.append([tables.table(target, int(x)) for x in ctx])
            matrices.append(dilca_distance_matrix(used[-1]))
        validate_data(self, X, skip_check_array=True, reset=True)
        self.n_features_in_ = d
        self.cardinalities_ = cards
        self.contexts_ = contexts
        self.tables_ = used
        self.distance_matrices_ = matrices
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        return tags


@fill_doc(label=LABEL_PARAMETER, refits=REFITS_NOTE, threads=THREADS_PARAMETER)
class DPDILCA(DPEstimatorMixin, _DistanceMixin, TransformerMixin, BaseEstimator):
    """Differentially private DILCA distances (DP-DILCA) for every attribute.

    Parameters
    ----------
    epsilon : float
        Privacy budget of the whole metric (all attributes); finite and > 0.
    method : {"max_relevance", "max_dependency", "mean_su", "baseline"}
        Private context selection: DP-MaxRelevance, DP-MaxDependency, DP-MeanSU, or
        the baseline (noisy pairwise tables, then DILCA_RR).
    context_size : int, default=3
        ``k`` of MaxRelevance / MaxDependency, in [1, n_features − 1] (ignored by
        the other methods).
    h : float, default=0.3
        Share of each attribute's budget spent on its context, in (0, 1) (ignored by
        ``"baseline"``).
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (operating-system entropy) for real releases. A fixed seed makes
        the output reproducible and voids its privacy against anyone who knows it.
    accountant : BudgetAccountant, optional
        Charged ε once, after success (default: the process-wide accountant).
    %(label)s
    %(threads)s

    Attributes
    ----------
    contexts_ : list of ndarray of int64
        The private context of each attribute (sorted column indices). Released.
    tables_ : list of list of ndarray
        For each attribute Y, the noisy (clamped) ``|Y|×|X|`` tables of its context, in
        the order of ``contexts_``: differentially private. Released.
    distance_matrices_ : list of ndarray
        The private ``|V_j|×|V_j|`` distance matrices (symmetric, zero diagonal, [0, 1]).
        Released.
    cardinalities_ : ndarray of uint32 of shape ``(n_features_in_,)``
        Declared, or inferred (``max + 1``) and then not covered by the guarantee
        (the shapes of the released matrices show them either way).
    n_features_in_ : int
    epsilon_spent_ : float
        ε, charged to the accountant.
    privacy_ledger_ : list of LedgerEntry
        Steps that unpack as ``(label, epsilon)``, each tagged with its ``guarantee``.
        Two entries per attribute (its context, then its tables) for the DP-DILCA
        methods, one per pairwise table for ``"baseline"``; they add up exactly to
        ``epsilon_spent_``.

    Raises
    ------
    ValueError
        From :meth:`fit`, for invalid parameters or X.
    BudgetExceededError
        From :meth:`fit`, before any data is read, when the accountant cannot afford ε.

    Notes
    -----
    Neighbouring data sets differ by replacing one record; N (rows) is public, and so
    are the cardinalities (inferred ones emit a ``PrivacyLeakWarning``).

    DP-DILCA (Algorithm 2 of Battaglia et al. 2021): each of the m attributes Y gets
    ε_Y = ε/m (sequential composition over the targets). Its context costs ε_Y·h, and
    its tables ε_Y·(1 − h): ``Lap(0, 2·|ctx|/(ε_Y(1 − h)))`` is added to every cell of
    each ``|Y|×|X|`` table (L1 sensitivity 2 per table, ``|ctx|`` tables), negative cells become 0
    (no rounding) and the distance is computed from these noisy tables. The entropy of
    an attribute set has sensitivity gs = (1/N)(1/ln 2 + log2 N) (Theorem 5), so
    I'(X, Y) = H(X) − H(X, Y) and I'(Y, S) = H(S) − H(Y, S) have sensitivity 2·gs
    (Theorems 6, 7).

    - DP-MeanSU (Algorithm 3): ε_H = ε_Y·h/(2m − 1); Lap(gs/ε_H) is added to H(Y),
      every H(X) and every H(X, Y); SU~ uses all three noisy values (0 when the noisy
      H(X) + H(Y) is 0); context = {X : SU~ ≥ mean SU~}. Should it be empty (only
      possible when the noisy values make the mean undefined) the single attribute
      with the largest SU~ is taken.
    - DP-MaxRelevance (Algorithm 4): k exponential-mechanism draws without
      replacement, each ∝ exp(ε_Y·h·I'(X, Y)/(4k·gs)) (ε_Y·h/k each).
    - DP-MaxDependency (Algorithm 5): one draw over all C(m − 1, k) subsets,
      ∝ exp(ε_Y·h·I'(Y, S)/(4·gs)); the entropies of every subset come from one
      depth-first partition walk.
    - Baseline (Algorithm 1): every one of the C(m, 2) pairwise tables gets
      Lap(0, 2·C(m, 2)/ε) noise (ε/C(m, 2) each, ε in total for the whole metric);
      negatives become 0; SU is computed from the noisy tables (marginals included);
      DILCA_RR picks each context and the distances use the same noisy tables.

    Draws use the Gumbel-max exponential mechanism and Laplace noise of
    ``privtab.mechanisms`` (ChaCha20 in Rust).

    Publishing. :meth:`release` returns ``contexts_``, ``tables_`` and
    ``distance_matrices_`` with the public parameters and the ledger. The estimator,
    pickled, also carries its ``accountant`` (with the caller's whole ledger) and
    ``random_state``: publish :meth:`release`, not the estimator.

    %(refits)s

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import BudgetAccountant, DPDILCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(500, 4))
    >>> acc = BudgetAccountant(2.0)
    >>> model = DPDILCA(2.0, context_size=2, random_state=0, accountant=acc)
    >>> model = model.fit(X, cardinalities=[3, 3, 3, 3])
    >>> [len(c) for c in model.contexts_], acc.spent
    ([2, 2, 2, 2], 2.0)
    >>> sum(part for _, part in model.privacy_ledger_) == model.epsilon_spent_
    True
    """

    released_attributes: ClassVar[tuple[str, ...]] = (
        "contexts_",
        "tables_",
        "distance_matrices_",
    )

    def __init__(
        self,
        epsilon: float,
        *,
        method: str = "max_relevance",
        context_size: int = 3,
        h: float = 0.3,
        random_state: RandomState = None,
        accountant: BudgetAccountant | None = None,
        label: str | None = None,
        n_threads: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.method = method
        self.context_size = context_size
        self.h = h
        self.random_state = random_state
        self.accountant = accountant
        self.label = label
        self.n_threads = n_threads

    @runs_on_threads
    def fit(self, X: Any, y: Any = None, cardinalities: Any = None) -> DPDILCA:
        """Learn ε-differentially private distances for every attribute of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), pandas or polars DataFrame,
            or :class:`~privtab.EncodedTable`
            Categorical codes ``0 .. cardinality - 1``; at least 2 attributes. A
            Dask array or DataFrame has its pairwise tables counted partition by
            partition (:mod:`privtab.engine`); the fit is the in-memory one.
        y : None
            Ignored.
        cardinalities : array-like of int, optional
            Public domain sizes. Taken from an ``EncodedTable``; otherwise inferred as
            ``max + 1`` per column, which emits a ``PrivacyLeakWarning``.

        Returns
        -------
        DPDILCA
            ``self``, fitted.
        """
        check_choice(self.method, "method", _DP_METHODS)
        k = check_positive_int(self.context_size, "context_size")
        h = check_unit_interval(self.h, "h")
        run = self._start_private_fit()
        table, cards, inferred = _prepare(X, cardinalities)
        if inferred:
            warn_inferred_domain("cardinalities", owner="DPDILCA")
        d = table.n_columns
        if self.method in ("max_relevance", "max_dependency") and k > d - 1:
            raise ValueError(
                f"context_size must be <= the number of other attributes ({d - 1}), "
                f"got {k}"
            )
        tables = _Tables(table)
        with run.charged_on_failure(f"DPDILCA ({self.method}, {d} attributes)"):
            if self.method == "baseline":
                contexts, used, ledger = _fit_baseline(
                    tables, run.epsilon, run.random_state
                )
            else:
                contexts, used, ledger = _fit_dp_dilca(
                    tables, run.epsilon, self.method, k, h, run.random_state
                )
            validate_data(self, X, skip_check_array=True, reset=True)
            self.n_features_in_ = d
            self.cardinalities_ = cards
            self.contexts_ = contexts
            self.tables_ = used
            self.distance_matrices_ = [dilca_distance_matrix(t) for t in used]
        self._finish_private_fit(
            run, f"DPDILCA ({self.method}, {d} attributes)", ledger
        )
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        return tags


def _noisy(values: np.ndarray, sensitivity: float, epsilon: float, generator) -> Any:
    """Laplace noise of scale sensitivity/epsilon (budget charged by the caller)."""
    return laplace_mechanism(
        values,
        sensitivity,
        epsilon,
        random_state=generator,
        accountant=BudgetAccountant(),
    )


def _fit_dp_dilca(
    tables: _Tables,
    epsilon: float,
    method: str,
    k: int,
    h: float,
    generator: np.random.Generator | None,
) -> tuple[list[np.ndarray], list[list[np.ndarray]], list[tuple[str, float]]]:
    d, n = tables.source.n_columns, tables.source.n_rows
    gs = (1.0 / math.log(2) + math.log2(n)) / n
    parts = split_budget(epsilon, [h, 1.0 - h] * d)
    contexts, used, ledger = [], [], []
    for target in range(d):
        eps_context, eps_tables = parts[2 * target], parts[2 * target + 1]
        others = np.array([j for j in range(d) if j != target], dtype=np.int64)
        if method == "mean_su":
            exact = np.array(
                [tables.entropies[target]]
                + [tables.entropies[x] for x in others]
                + [tables.joint_entropy(target, int(x)) for x in others]
            )
            noisy = _noisy(exact, gs, eps_context / (2 * d - 1), generator)
            h_y, h_x, h_xy = noisy[0], noisy[1:d], noisy[d:]
            su = np.array(
                [_symmetric_uncertainty(h_x[i], h_y, h_xy[i]) for i in range(d - 1)]
            )
            mean = math.fsum(su.tolist()) / su.shape[0]
            ctx = others[su >= mean]
            if ctx.size == 0:
                ctx = others[[int(np.argmax(su))]]
        elif method == "max_relevance":
            scores = np.array(
                [
                    tables.entropies[x] - tables.joint_entropy(target, int(x))
                    for x in others
                ]
            )
            chosen = exponential_mechanism(
                scores,
                2.0 * gs,
                eps_context / k,
                size=k,
                random_state=generator,
                accountant=BudgetAccountant(),
            )
            ctx = others[chosen]
        else:
            subsets, scores = _subset_scores(tables.source, target, others, k)
            chosen = exponential_mechanism(
                scores,
                2.0 * gs,
                eps_context,
                random_state=generator,
                accountant=BudgetAccountant(),
            )
            ctx = subsets[int(chosen[0])]
        ctx = np.sort(np.asarray(ctx, dtype=np.int64))
        exact_tables = [tables.table(target, int(x)) for x in ctx]
        flat = np.concatenate([t.ravel() for t in exact_tables]).astype(np.float64)
        noisy_flat = np.maximum(
            _noisy(flat, 2.0 * ctx.size, eps_tables, generator), 0.0
        )
        noisy_tables, start = [], 0
        for table in exact_tables:
            noisy_tables.append(
                noisy_flat[start : start + table.size].reshape(table.shape)
            )
            start += table.size
        contexts.append(ctx)
        used.append(noisy_tables)
        ledger.append((f"DP-DILCA attribute {target}: context ({method})", eps_context))
        ledger.append(
            (
                f"DP-DILCA attribute {target}: {ctx.size} noisy contingency table(s)",
                eps_tables,
            )
        )
    return contexts, used, ledger


def _fit_baseline(
    tables: _Tables, epsilon: float, generator: np.random.Generator | None
) -> tuple[list[np.ndarray], list[list[np.ndarray]], list[tuple[str, float]]]:
    d = tables.source.n_columns
    pairs = [(i, j) for i in range(d) for j in range(i + 1, d)]
    parts = split_budget(epsilon, [1.0] * len(pairs))
    noisy: dict[tuple[int, int], np.ndarray] = {}
    su = np.zeros((d, d))
    ledger = []
    for (i, j), part in zip(pairs, parts, strict=True):
        exact = tables.table(i, j).astype(np.float64)
        table = np.maximum(_noisy(exact, 2.0, part, generator), 0.0)
        noisy[(i, j)] = table
        su[i, j] = su[j, i] = _symmetric_uncertainty(
            entropy(table.sum(axis=1)), entropy(table.sum(axis=0)), entropy(table)
        )
        ledger.append(
            (f"Baseline DP-DILCA: noisy table of attributes ({i}, {j})", part)
        )
    contexts, used = [], []
    for target in range(d):
        ctx = _relevance_redundancy_rule(su, target)
        contexts.append(ctx)
        used.append(
            [
                noisy[(target, x)] if target < x else noisy[(x, target)].T
                for x in ctx.tolist()
            ]
        )
    return contexts, used, ledger
