"""Discernibility F(S), its greedy maximisation and PrivateKD [1]_ (§2.2).

F(S) counts the ordered pairs of records that differ both on the attributes S and on
the label, per record: with classes c of the partition induced by S and label counts
n_{c,l},

    n * F(S) = (n**2 - sum_l n_l**2) - sum_c (n_c**2 - sum_l n_{c,l}**2).

:func:`discernibility`, :func:`score_candidates`, :func:`greedy_discernibility`
(NonPrivateKD) and :func:`minimum_discerning_attributes` (MDA) are exact and not
private; :class:`PrivateKD` selects attributes with differential privacy.

Core kernels called: ``privtab._core.discernibility``, ``privtab._core.score_candidates``,
``privtab._core.greedy_discernibility``, ``privtab._core.minimum_discerning_attributes``
and ``privtab._core.private_kd`` (the k rounds with Gumbel-max choices).

References
----------
.. [1] S. A. Vinterbo, "Differentially Private Projected Histograms: Construction and
   Use for Prediction", in Machine Learning and Knowledge Discovery in Databases
   (ECML PKDD 2012), Lecture Notes in Computer Science 7524, Springer, 2012.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

import numpy as np
from sklearn.base import BaseEstimator

from privtab import _core
from privtab._docstrings import LABEL_PARAMETER, REFITS_NOTE, fill_doc
from privtab._estimator import DPEstimatorMixin, SupportSelectorMixin
from privtab._random import RandomState
from privtab._validation import (
    check_labels,
    check_n_features,
    check_positive_int,
    check_threads,
    check_unit_interval,
    declared_label_set,
    is_encoded,
    read_code_columns,
    refuse_lazy_frame,
    validate_data,
    warn_inferred_domain,
)
from privtab.accountant import BudgetAccountant, split_budget
from privtab.engine import CodeTable, MemoryTable, dask_table, is_distributed

__all__ = [
    "CandidateScores",
    "PrivateKD",
    "discernibility",
    "greedy_discernibility",
    "minimum_discerning_attributes",
    "score_candidates",
]


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
    refuse_lazy_frame(X, "X")
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    return list(columns)


def _prepare(
    X: Any,
    y: Any,
    cardinalities: Any,
    classes: Any = None,
    *,
    owner: str = "",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[Any] | None]:
    """Validate ``X`` and ``y``: (columns, cardinalities, labels, classes, names).

    The label set is ``classes`` when declared; otherwise it is inferred from ``y``,
    with a ``PrivacyLeakWarning`` when an ``owner`` (a private estimator) is named.
    """
    names = _column_names(X)
    # Inferred cardinalities only serve validation here; warned by the caller.
    columns, cards, _ = read_code_columns(X, "X", cardinalities)
    label_set, labels = check_labels(
        y,
        classes,
        n_rows=columns.shape[1],
        owner=owner,
        warn=bool(owner),
    )
    return columns, cards, labels, label_set, names


def _code_table(
    X: Any,
    y: Any,
    cardinalities: Any,
    classes: Any = None,
    *,
    owner: str = "",
    n_threads: int | None = None,
) -> tuple[CodeTable, np.ndarray]:
    """``X`` and ``y`` as a labelled :class:`~privtab.engine.CodeTable` and the label set.

    Dask collections stay where they are (validated per partition); anything else goes
    through :func:`_prepare`. Inferred labels warn when an ``owner`` is named. A
    labelled ``CodeTable`` (from another estimator) is used as it is, with the
    declared ``classes`` as its label set.
    """
    if isinstance(X, CodeTable):
        label_set = declared_label_set(classes, 1, None, owner)
        if X.n_labels != label_set.shape[0]:
            raise ValueError(
                f"classes has {label_set.shape[0]} labels, the table {X.n_labels}"
            )
        return X, label_set
    if is_distributed(X, y):
        table, _ = dask_table(X, cardinalities, "X")
        return table.with_labels(y, classes, owner=owner, warn=bool(owner))
    columns, cards, labels, label_set, _ = _prepare(
        X, y, cardinalities, classes, owner=owner
    )
    return MemoryTable(columns, cards, labels, len(label_set), n_threads), label_set


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
    features: Sequence[Any] | np.ndarray,
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
    Computed through partition refinement in ``O(n·|S|)`` (Vinterbo 2012, §2.2):
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
    columns, cards, labels, label_set, names = _prepare(X, y, cardinalities)
    n_labels = len(label_set)
    subset = _resolve(features, names, columns.shape[0], "features")
    return float(
        _core.discernibility(
            columns,
            cards,
            labels,
            n_labels,
            subset,
            n_threads=check_threads(n_threads),
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
    columns, cards, labels, label_set, names = _prepare(X, y, cardinalities)
    n_labels = len(label_set)
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
        n_threads=check_threads(n_threads),
    )
    return CandidateScores(np.asarray(cand, dtype=np.int64), n_classes, pairs, h, hy, f)


def greedy_discernibility(
    X: Any,
    y: Any,
    n_features: int,
    *,
    cardinalities: Any = None,
    n_threads: int | None = None,
) -> np.ndarray:
    """Order attributes greedily by discernibility gain (NonPrivateKD).

    Each round adds the attribute ``a`` with the largest gain F(S ∪ {a}) − F(S),
    ties going to the lowest column index. Attributes that are constant in the data
    stay candidates (their gain is 0).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features_in), pandas or polars DataFrame, or
        :class:`~privtab.EncodedTable`
        Categorical codes (integers >= 0). A Dask array or DataFrame (with ``y`` a
        Dask array or Series) is counted partition by partition
        (:mod:`privtab.engine`); the order is the in-memory one.
    y : array-like of shape (n_samples,)
        Labels (any integers or strings; remapped with ``numpy.unique``).
    n_features : int
        Number of attributes to order, between 1 and the number of columns of X.
    cardinalities : array-like of int, optional
        Domain sizes; ``max + 1`` per column by default (they do not change F).
    n_threads : int, optional
        Threads to use (default: all cores). The result does not depend on it.

    Returns
    -------
    ndarray of int64, shape (n_features,)
        Column indices in the order chosen.

    Raises
    ------
    ValueError
        For ``n_features`` out of range, empty, ragged or negative input, NaN, codes
        out of range or mismatched lengths.
    TypeError
        For a non-integer ``n_features`` or non-integer codes.

    See Also
    --------
    PrivateKD : the differentially private version.
    minimum_discerning_attributes : the shortest greedy prefix that is good enough.

    Notes
    -----
    F is monotone and submodular, so the greedy prefix of size k is within a factor
    (1 − 1/e) of the best k attributes (Vinterbo 2012, §2.2). The partition of S is
    refined once per round and all candidates are scored against it in one parallel
    pass, O(k·d·n) in total. Exact, hence not private.

    Examples
    --------
    >>> from privtab import greedy_discernibility
    >>> X = [[0, 1, 5], [0, 0, 5], [1, 1, 5], [1, 0, 5]]
    >>> greedy_discernibility(X, [0, 0, 1, 1], 3)
    array([0, 1, 2])
    """
    table, _ = _code_table(X, y, cardinalities, n_threads=check_threads(n_threads))
    k = check_n_features(n_features, table.n_columns)
    return table.select_discerning(k, None, None)


def minimum_discerning_attributes(
    X: Any,
    y: Any,
    sigma: float = 0.1,
    *,
    cardinalities: Any = None,
    n_threads: int | None = None,
) -> np.ndarray:
    """MDA: the shortest greedy prefix S with F(S) ≥ (1 − σ)·F(A).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features_in), pandas or polars DataFrame, or
        :class:`~privtab.EncodedTable`
        Categorical codes (integers >= 0).
    y : array-like of shape (n_samples,)
        Labels (remapped with ``numpy.unique``).
    sigma : float, default=0.1
        Fraction of F(A) that may be given up, in [0, 1).
    cardinalities : array-like of int, optional
        Domain sizes; ``max + 1`` per column by default.
    n_threads : int, optional
        Threads to use (default: all cores).

    Returns
    -------
    ndarray of int64
        The prefix of the :func:`greedy_discernibility` order, possibly empty (when
        F(A) = 0, e.g. a single label).

    Raises
    ------
    ValueError
        For ``sigma`` outside [0, 1) and for invalid ``X`` or ``y``.
    TypeError
        For a non-real ``sigma`` or non-integer codes.

    Notes
    -----
    Vinterbo 2012, §2.3 ("Choosing k"): ``k = |MDA(σ)|`` with σ = 0.1, computed on public
    or simulated data. The comparison is made on pair counts, n·F(S) ≥ (1 − σ)·n·F(A),
    in floating point. Exact, hence not private.

    Examples
    --------
    >>> from privtab import minimum_discerning_attributes
    >>> X = [[0, 1], [0, 0], [1, 1], [1, 0]]
    >>> minimum_discerning_attributes(X, [0, 0, 1, 1])
    array([0])
    >>> minimum_discerning_attributes(X, [1, 1, 1, 1])
    array([], dtype=int64)
    """
    value = check_unit_interval(sigma, "sigma", low_closed=True)
    columns, cards, labels, label_set, _ = _prepare(X, y, cardinalities)
    n_labels = len(label_set)
    order, _ = _core.minimum_discerning_attributes(
        columns, cards, labels, n_labels, value, n_threads=check_threads(n_threads)
    )
    return order


@fill_doc(label=LABEL_PARAMETER, refits=REFITS_NOTE)
class PrivateKD(DPEstimatorMixin, SupportSelectorMixin, BaseEstimator):
    """Differentially private attribute selection by discernibility (PrivateKD).

    Selects ``n_features`` attributes in k = ``n_features`` rounds; each round picks a
    remaining attribute ``a`` with probability ∝ exp(ε'·(F(S ∪ {a}) − F(S))), where
    ε' = ε/(4k) and F is the discernibility of :func:`discernibility`.

    Parameters
    ----------
    n_features : int
        Number of attributes to select (k), between 1 and the number of columns.
    epsilon : float
        Privacy budget ε of the whole selection; finite and > 0.
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (operating-system entropy) for real releases. A fixed seed makes the
        selection reproducible, and voids its privacy against anyone who knows it.
    accountant : BudgetAccountant, optional
        Charged ε once, after success (default: the process-wide accountant).
    n_threads : int, optional
        Threads to use (default: all cores). The selection does not depend on it.
    classes : array-like of labels, optional
        The public label set of ``y`` (distinct labels; stored sorted in
        ``classes_``). A label of ``y`` outside it raises a ``ValueError``. ``None``
        takes it from ``y`` with ``numpy.unique`` and emits a
        :class:`~privtab.exceptions.PrivacyLeakWarning`.
    %(label)s

    Attributes
    ----------
    support_ : ndarray of bool, shape ``(n_features_in_,)``
        Mask of the selected attributes. Released.
    selection_order_ : ndarray of int64, shape (n_features,)
        Indices of the selected attributes, in the order chosen. Released.
    n_features_in_ : int
        Number of columns of X.
    feature_names_in_ : ndarray of str
        Column names, when X was a DataFrame with string column names.
    epsilon_spent_ : float
        ε charged to the accountant.
    privacy_ledger_ : list of LedgerEntry
        Steps that unpack as ``(label, epsilon)``, each tagged with its ``guarantee``.
        One entry per round, ε/k each; they add up exactly to ``epsilon_spent_``.
    classes_ : ndarray
        The label set: ``classes`` (sorted) when declared, else the labels of ``y``,
        then not covered by the guarantee. Not released: the selection does not
        depend on it.

    Raises
    ------
    ValueError
        From :meth:`fit`, for ``n_features`` outside [1, d], ``epsilon`` not finite
        and > 0, invalid ``X``/``y``/``cardinalities`` (NaN, negative codes, codes
        >= cardinality, mismatched lengths), an empty ``classes`` or one with a
        repeated label, or a label of ``y`` outside ``classes``.
    BudgetExceededError
        From :meth:`fit`, before any data is read, when the accountant cannot afford ε.

    Notes
    -----
    Privacy (Vinterbo 2012, Theorem 1 and Corollary 1; proof in its appendix A).
    Neighbouring data sets differ by *replacing* one record, and n is public. Write
    ``n·F(S) = Σ_i |{j : x_j differs from x_i on S and on the label}|``. Replacing record
    i changes at most the 2(n − 1) ordered pairs that contain i, each by at most 1, so
    F(S) changes by at most 2(n − 1)/n < 2: ΔF ≤ 2, and the same holds for the gain
    F(S ∪ {a}) − F(S) (the pairs discerned by a but not by S), or equivalently for
    F(S ∪ {a}), since F(S) is common to every candidate of a round. The exponential
    mechanism with weights exp(ε'·u) for a utility of sensitivity Δ is 2ε'Δ-DP, so one
    round is 4ε'-DP, and k rounds compose (adaptively, S being public after each
    round) to 4kε' = ε. The ledger splits ε into k equal rounds. Only equality of
    labels enters F, so the selection does not depend on the label set, but
    ``classes_`` shows it: declare it with ``classes`` so that it is public knowledge
    rather than read off the data (where a class held by one record would appear).
    Cardinalities are public too: from an ``EncodedTable``, the ``cardinalities``
    argument of :meth:`fit`, or inferred from the data (``max + 1``, with a
    :class:`~privtab.exceptions.PrivacyLeakWarning`); they only serve validation.

    Publishing. :meth:`release` returns ``support_`` and ``selection_order_`` with the
    public parameters and the ledger. The estimator, pickled, also carries its
    ``accountant`` (with the caller's whole ledger) and ``random_state``: publish
    :meth:`release`, not the estimator.

    Each round is a Gumbel-max draw on the log-weights ε'·ΔF in Rust, after scoring
    every remaining candidate in one parallel O(n) pass against the partition of S,
    which is refined once per round: O(k·d·n) in total, as in §2.2 of the paper. While
    the partition is coarse a round is a plain pass over all rows; then only the rows
    of classes that still mix labels are kept, grouped by class, so later rounds get
    cheaper. The gains are exact integers, so neither this choice nor the thread count
    changes the selection for a given seed.

    %(refits)s

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import BudgetAccountant, PrivateKD
    >>> X = np.array([[0, 1, 5], [0, 0, 5], [1, 1, 5], [1, 0, 5]] * 25)
    >>> y = np.array([0, 0, 1, 1] * 25)
    >>> acc = BudgetAccountant(1.0)
    >>> selector = PrivateKD(1, 1.0, random_state=0, accountant=acc, classes=[0, 1])
    >>> selector = selector.fit(X, y, cardinalities=[2, 2, 6])
    >>> selector.get_support()
    array([ True, False, False])
    >>> selector.transform(X).shape, acc.spent
    ((100, 1), 1.0)
    """

    released_attributes: ClassVar[tuple[str, ...]] = ("support_", "selection_order_")

    def __init__(
        self,
        n_features: int,
        epsilon: float,
        *,
        random_state: RandomState = None,
        accountant: BudgetAccountant | None = None,
        n_threads: int | None = None,
        classes: Any = None,
        label: str | None = None,
    ) -> None:
        self.n_features = n_features
        self.epsilon = epsilon
        self.random_state = random_state
        self.accountant = accountant
        self.n_threads = n_threads
        self.classes = classes
        self.label = label

    def fit(self, X: Any, y: Any, cardinalities: Any = None) -> PrivateKD:
        """Select ``n_features`` attributes of ``X`` privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in), pandas or polars
            DataFrame, or :class:`~privtab.EncodedTable`
            Categorical codes ``0 .. cardinality - 1``. A Dask array or DataFrame
            (with ``y`` a Dask array or Series) is counted partition by partition,
            and the rounds draw what they draw in memory for the same seed
            (:mod:`privtab.engine`).
        y : array-like of shape (n_samples,)
            Labels (integers or strings), in ``classes`` when it is declared.
        cardinalities : array-like of int, optional
            Public domain sizes. Taken from an ``EncodedTable``; otherwise inferred as
            ``max + 1`` per column, which emits a ``PrivacyLeakWarning``.

        Returns
        -------
        PrivateKD
            ``self``, fitted.
        """
        k = check_positive_int(self.n_features, "n_features")
        threads = check_threads(self.n_threads)
        run = self._start_private_fit()
        table, label_set = _code_table(
            X, y, cardinalities, self.classes, owner="PrivateKD", n_threads=threads
        )
        if cardinalities is None and not is_encoded(X):
            warn_inferred_domain("cardinalities", owner="PrivateKD")
        d = table.n_columns
        k = check_n_features(k, d)
        step = run.epsilon / (4 * k)
        with run.charged_on_failure(f"PrivateKD: {k} exponential-mechanism rounds"):
            order = table.select_discerning(k, step, run.seed())
            if not isinstance(X, CodeTable):
                validate_data(self, X, skip_check_array=True, reset=True)
            self._set_selection(order, d)
            self.n_features_in_ = d
            self.classes_ = label_set
        self._finish_private_fit(
            run,
            f"PrivateKD: {k} exponential-mechanism rounds",
            [
                (
                    f"PrivateKD round {r + 1} of {k} (exponential mechanism, ε' = {step:g})",
                    part,
                )
                for r, part in enumerate(split_budget(run.epsilon, [1.0] * k))
            ],
        )
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # X holds categorical codes 0 .. cardinality - 1.
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        return tags
