"""The audit catalogue: every randomized release of privtab, the neighbouring pair that
stresses it, the statistic its events read, and the ε it claims.

Shared by ``tests/test_audit_mechanisms.py`` (each case's correct and broken variants)
and ``benches/audit_report.py`` (the same cases with more runs). A case audits one
release against the ε that release spends: the whole claim for a single mechanism,
the ledger entry for one step of an estimator (PrivateKD inside ProjectedHistogram, a
context or the tables of one attribute in DP-DILCA, the pick or the histogram of a k-AC
release, fim' or one refit of DPFSDR). The broken variant is the same release run with
ε tripled (or its sensitivity halved) while claiming the original ε: an audit with
power must flag it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import privtab as pt
from privtab import linear_model as lm
from privtab.accountant import split_budget
from privtab.audit import AuditResult, NeighbouringPair, audit_mechanism, pairs

#: Every audit of the suite holds at this confidence: a correct mechanism fails one with
#: probability at most 1e-6 (the level of the sampler tests, tests/_stats.py).
CONFIDENCE = 1 - 1e-6
#: Worker processes of the audits that fit an estimator per run (CI has 2 cores); the
#: results do not depend on it.
N_JOBS = 2
TRIPLED = "ε tripled"
HALVED = "sensitivity halved"


@dataclass(frozen=True)
class Case:
    """One audit: ``build(broken)`` returns the mechanism (callable or estimator)."""

    mechanism: str
    pair: NeighbouringPair
    claimed: float
    build: Callable[[bool], Any]
    statistic: Callable[[Any], Any] | None = None
    runs: int = 10_000
    vectorized: bool = False
    fit_params: dict[str, Any] = field(default_factory=dict)
    exact: tuple[Any, Any] | None = None
    broken: str = TRIPLED
    guarantee: str = "ε-DP"

    @property
    def id(self) -> str:
        return self.mechanism

    def audit(
        self,
        *,
        broken: bool = False,
        runs: int | None = None,
        random_state: int = 0,
        n_jobs: int | None = N_JOBS,
    ) -> AuditResult:
        return audit_mechanism(
            self.build(broken),
            self.pair.data,
            self.pair.neighbour,
            epsilon=self.claimed,
            statistic=self.statistic,
            runs=self.runs if runs is None else runs,
            confidence=CONFIDENCE,
            exact=self.exact,
            vectorized=self.vectorized,
            fit_params=self.fit_params,
            n_jobs=None if self.vectorized else n_jobs,
            random_state=random_state,
        )


def _scale(broken: bool) -> float:
    return 3.0 if broken else 1.0


def beyond(exact_data: Any, exact_neighbour: Any) -> Callable[[Any], float]:
    """The statistic ``min_i s_i·(v_i − b_i)``, ``s_i = sign(b_i − a_i)``.

    For independent Laplace noise on a vector whose exact value is ``a`` on one side and
    ``b`` on the other, ``{statistic >= 0}`` (every coordinate beyond ``b``, away from
    ``a``) carries the full likelihood ratio ``exp(Σ |b_i − a_i| / scale)``.
    """
    a = np.asarray(exact_data, dtype=np.float64).ravel()
    b = np.asarray(exact_neighbour, dtype=np.float64).ravel()
    moved = a != b
    signs, anchor = np.sign(b - a)[moved], b[moved]

    def statistic(values: Any) -> float:
        v = np.asarray(values, dtype=np.float64).ravel()[moved]
        return float(np.min(signs * (v - anchor)))

    return statistic


def _cell(hist: pt.SparseHistogram, key: int) -> float:
    at = int(np.searchsorted(hist.keys, key))
    if at < len(hist) and int(hist.keys[at]) == key:
        return float(hist.values[at])
    return -math.inf


def _cells_beyond(keys: list[int], exact: tuple[Any, Any]) -> Callable[[Any], float]:
    """``beyond`` on the values of some cells of a sparse histogram (missing: -inf)."""
    inner = beyond(*exact)
    return lambda hist: inner([_cell(hist, k) for k in keys])


# Base mechanisms --------------------------------------------------------------------
def _base_cases() -> list[Case]:
    extreme = pairs.extreme_record(10, (0.0, 1.0))

    def laplace(broken: bool):
        eps = _scale(broken)
        return lambda x, seed, size: pt.laplace_mechanism(
            np.full(size, float(x.sum())),
            1.0,
            eps,
            random_state=seed,
            accountant=pt.BudgetAccountant(),
        )

    def discrete(broken: bool):
        eps = _scale(broken)
        return lambda x, seed, size: pt.discrete_laplace_mechanism(
            np.full(size, int(x.sum())),
            1.0,
            eps,
            random_state=seed,
            accountant=pt.BudgetAccountant(),
        )

    # Column sums of a 0/1 table (per-candidate sensitivity 1): one candidate loses
    # one, nine gain one.
    change = pairs.partition_change(20, 10)
    scores = NeighbouringPair(
        change.data[0].sum(axis=0).astype(float),
        change.neighbour[0].sum(axis=0).astype(float),
        "column sums as scores; " + change.description,
    )

    def exponential(broken: bool):
        eps = _scale(broken)
        return lambda s, seed, size: pt.exponential_mechanism(
            s,
            1.0,
            eps,
            size=size,
            replace=True,
            random_state=seed,
            accountant=pt.BudgetAccountant(),
        )

    return [
        Case(
            "laplace_mechanism",
            extreme,
            1.0,
            laplace,
            runs=200_000,
            vectorized=True,
            exact=(0.0, 1.0),
        ),
        Case(
            "discrete_laplace_mechanism",
            extreme,
            1.0,
            discrete,
            runs=200_000,
            vectorized=True,
        ),
        Case(
            "exponential_mechanism",
            scores,
            1.0,
            exponential,
            runs=200_000,
            vectorized=True,
        ),
    ]


# Vinterbo 2012: PrivateKD, thresholded and projected histograms -----------------------
def _histogram_cases() -> list[Case]:
    cases = []
    crossing = pairs.threshold_crossing(20, [2, 2], 2)
    rare = pairs.rare_category(20, [64, 64])
    for noise in ("laplace", "discrete"):
        for pair, threshold, name in (
            (crossing, 2.5, "cell crossing τ = 2.5"),
            (rare, 0.5, "empty-cell sampling, τ = 0.5"),
        ):
            cards = [2, 2] if pair is crossing else [64, 64]
            keys, exact = _moved_cells(pair, cards)

            def build(broken: bool, cards=cards, threshold=threshold, noise=noise):
                eps = _scale(broken)
                return lambda codes, seed: pt.thresholded_histogram(
                    codes,
                    cards,
                    eps,
                    threshold=threshold,
                    noise=noise,
                    random_state=seed,
                    accountant=pt.BudgetAccountant(),
                )

            cases.append(
                Case(
                    f"thresholded_histogram ({noise}, {name})",
                    pair,
                    1.0,
                    build,
                    _cells_beyond(keys, exact),
                    runs=6_000,
                )
            )
    return cases


def _counts(codes: np.ndarray, cards: list[int]) -> np.ndarray:
    keys = pt.mixed_radix_encode(codes, cards).astype(np.int64)
    return np.bincount(keys, minlength=math.prod(cards))


def _moved_cells(
    pair: NeighbouringPair, cards: list[int]
) -> tuple[list[int], tuple[np.ndarray, np.ndarray]]:
    """The keys of the cell that gains the record and of the one that loses it, and
    their exact counts on both sides."""
    counts = [_counts(codes, cards) for codes in pair]
    keys = [
        int(np.flatnonzero(counts[1] > counts[0])[0]),
        int(np.flatnonzero(counts[1] < counts[0])[0]),
    ]
    return keys, (counts[0][keys], counts[1][keys])


def _selection_cases() -> list[Case]:
    change = pairs.partition_change(40, 10)
    cards = {"cardinalities": [2] * 10}

    def private_kd(broken: bool):
        return pt.PrivateKD(1, _scale(broken), classes=[0, 1])

    def projected_kd(broken: bool):
        return pt.ProjectedHistogram(
            2.0 * _scale(broken), n_features=1, gamma=0.5, classes=[0, 1]
        )

    # No projection (k = every predictor, gamma = 1): the histogram of (X, y) with
    # τ = A·ln(20)/ε = 1.5 at A = 0.5, crossed by cell (1, 1, 1).
    crossing = pairs.threshold_crossing(20, [2, 2, 2], 1)
    split = NeighbouringPair(
        *((codes[:, :2], codes[:, 2]) for codes in crossing),
        crossing.description,
        crossing.changed,
    )
    histogram_cells = _cells_beyond(*_moved_cells(crossing, [2, 2, 2]))

    def projected_hist(broken: bool):
        return pt.ProjectedHistogram(
            _scale(broken), n_features=2, A=0.5, classes=[0, 1]
        )

    return [
        Case(
            "PrivateKD",
            change,
            1.0,
            private_kd,
            lambda model: int(model.selection_order_[0]),
            runs=4_000,
            fit_params=cards,
        ),
        Case(
            "ProjectedHistogram (its PrivateKD step, ε_p = ε/2)",
            change,
            1.0,
            projected_kd,
            lambda model: int(model.selection_order_[0]),
            runs=4_000,
            fit_params=cards,
        ),
        Case(
            "ProjectedHistogram (no projection: the histogram)",
            split,
            1.0,
            projected_hist,
            lambda model: histogram_cells(model.histogram_),
            runs=4_000,
            fit_params={"cardinalities": [2, 2]},
        ),
    ]


# Battaglia et al. 2021: DP-DILCA ----------------------------------------------------
def _dilca_cases() -> list[Case]:
    change = pairs.partition_change(40, 4)
    table = NeighbouringPair(
        *(np.column_stack([y, X]) for X, y in change),
        "attribute 0 is the label; " + change.description,
    )
    h, m = 0.5, 5
    context_eps = split_budget(20.0, [h, 1.0 - h] * m)[0]
    cases = []
    # The entropy scores move by about gs when one record is replaced, half of the
    # sensitivity 2·gs of Theorem 6, so no pair brings a context within a factor 2 of
    # its claim: the broken variant has ε tripled and gs halved. DP-MeanSU's context is
    # a coarse function of 2m - 1 noisy entropies, further from its claim: its broken
    # variant has the noise removed (ε × 1000).
    for method, factor, broken, runs in (
        ("max_relevance", 6.0, f"{TRIPLED}, {HALVED}", 3_000),
        ("max_dependency", 6.0, f"{TRIPLED}, {HALVED}", 3_000),
        ("mean_su", 1000.0, "ε × 1000 (noise removed)", 1_000),
    ):

        def build(broken: bool, method=method, factor=factor):
            return pt.DPDILCA(
                20.0 * (factor if broken else 1.0),
                method=method,
                context_size=1,
                h=h,
            )

        cases.append(
            Case(
                f"DPDILCA ({method}, context of attribute 0)",
                table,
                context_eps,
                build,
                lambda model: tuple(model.contexts_[0].tolist()),
                runs=runs,
                fit_params={"cardinalities": [2] * m},
                broken=broken,
            )
        )
    crossing = pairs.threshold_crossing(60, [2, 2], 20)
    keys, exact = _moved_cells(crossing, [2, 2])
    table_stat = beyond(*exact)
    tables_eps = split_budget(2.0, [0.3, 0.7] * 2)[1]

    def dp_tables(broken: bool):
        return pt.DPDILCA(
            2.0 * _scale(broken), method="max_relevance", context_size=1, h=0.3
        )

    def baseline(broken: bool):
        return pt.DPDILCA(_scale(broken), method="baseline")

    def cells(model: Any) -> float:
        return table_stat(model.tables_[0][0].ravel()[keys])

    return [
        *cases,
        Case(
            "DPDILCA (max_relevance, tables of attribute 0)",
            crossing,
            tables_eps,
            dp_tables,
            cells,
            runs=3_000,
            fit_params={"cardinalities": [2, 2]},
        ),
        Case(
            "DPDILCA (baseline, the pairwise table)",
            crossing,
            1.0,
            baseline,
            cells,
            runs=3_000,
            fit_params={"cardinalities": [2, 2]},
        ),
    ]


# Chaudhuri et al. 2011: DP linear models --------------------------------------------
class HalvedSensitivitySVC(pt.DPLinearSVC):
    """A deliberately broken DPLinearSVC: output noise of half the sensitivity."""

    def _sensitivity_factor(self) -> float:
        return 0.5


def _linear_cases() -> list[Case]:
    flipped = pairs.flipped_label(20, 1.0)
    cases = []
    # The logistic loss has |ℓ'| = 1/2 where the flipped record sits, so its releases
    # reach about half their claim, and the tripled variant 1.5 times it: more runs.
    # With the Huber parameter h = 0.1 (curvature c = 5) and C = 0.15, objective
    # perturbation takes its other branch at ε = 1 (ε' = ε/2 with extra regularisation
    # Δ > 0); at C = 0.05 and h = 0.5, ε' = ε − 2·ln(1.05).
    settings = [
        (pt.DPLinearSVC, "output", 0.25, 4_000, {}),
        (pt.DPLinearSVC, "objective", 0.05, 3_000, {}),
        (pt.DPLinearSVC, "objective", 0.15, 3_000, {"huber_h": 0.1}),
        (pt.DPLogisticRegression, "output", 0.05, 8_000, {}),
        (pt.DPLogisticRegression, "objective", 0.05, 8_000, {}),
    ]
    for estimator, method, C, runs, extra in settings:
        halved = estimator is pt.DPLinearSVC and method == "output"

        def build(
            broken: bool,
            estimator=estimator,
            method=method,
            C=C,
            halved=halved,
            extra=extra,
        ):
            cls = HalvedSensitivitySVC if (broken and halved) else estimator
            eps = 1.0 if halved else _scale(broken)
            return cls(
                eps,
                C=C,
                method=method,
                data_norm=1.0,
                fit_intercept=False,
                classes=[0, 1],
                **extra,
            )

        cases.append(
            Case(
                f"{estimator.__name__} ({method} perturbation, C = {C:g}"
                + "".join(f", {k} = {v:g}" for k, v in extra.items())
                + ")",
                flipped,
                1.0,
                build,
                lambda model: float(model.coef_[0, 0]),
                runs=runs,
                broken=HALVED if halved else TRIPLED,
            )
        )
    # One-vs-rest with declared classes: the model of the class held by one record
    # (ε/3 of ε = 3) hinges on that record alone.
    holder = pairs.single_holder_label(21, 1.0, n_classes=3)

    def one_vs_rest(broken: bool):
        return pt.DPLinearSVC(
            3.0 * _scale(broken),
            C=0.25,
            method="output",
            data_norm=1.0,
            fit_intercept=False,
            classes=[0, 1, 2],
        )

    cases.append(
        Case(
            "DPLinearSVC (3 classes, the model of class 2, ε/3)",
            holder,
            split_budget(3.0, [1.0, 1.0, 1.0])[2],
            one_vs_rest,
            lambda model: float(model.coef_[2, 0]),
            runs=4_000,
        )
    )
    return cases


# Zhang et al. 2017: the k-AC DP releases --------------------------------------------
def _kac_cases() -> list[Case]:
    change = pairs.partition_change(20, 10, background="alternating")
    n = 40
    B = (np.arange(n) % 4 < 2).astype(np.int64).reshape(n, 1)
    y = np.arange(n) % 2
    B[0], y[0] = 0, 1
    release = pairs.replace_record(
        (B, y), 0, ([1], 1), "a positive record sets its one feature"
    )
    exact = tuple(
        np.bincount(b[:, 0] + 2 * labels, minlength=4)[[3, 2]] for b, labels in release
    )
    release_stat = beyond(*exact)
    cases = []
    for estimator in (pt.LaplaceDPRelease, pt.ExponentialDPRelease):

        def build(broken: bool, estimator=estimator):
            # Both pairs keep at least 10 records of each class.
            return estimator(2.0 * _scale(broken), 1, classes=[0, 1], min_class_size=10)

        cases += [
            Case(
                f"{estimator.__name__} (the pick, ε/2)",
                change,
                1.0,
                build,
                lambda model: int(model.selection_order_[0]),
                runs=4_000,
            ),
            Case(
                f"{estimator.__name__} (the histogram, ε/2)",
                release,
                1.0,
                build,
                lambda model: release_stat(model.noisy_counts_[[3, 2]]),
                runs=4_000,
            ),
        ]
    return cases


# Soria-Comas et al.: microaggregation masks -----------------------------------------
def _microagg_cases() -> list[Case]:
    def masker(k: int, mechanism: str):
        def build(broken: bool):
            return pt.MicroaggregationMasker(
                k, _scale(broken), mechanism=mechanism, bounds=[(0.0, 1.0)]
            )

        return build

    first = lambda model: float(model.masked_[0, 0])  # noqa: E731
    return [
        Case(
            "MicroaggregationMasker (DP, k = 1)",
            pairs.extreme_record(5, (0.0, 1.0)),
            1.0,
            masker(1, "dp"),
            first,
            runs=6_000,
        ),
        Case(
            "MicroaggregationMasker (DP-UM, k = 3)",
            pairs.extreme_record(3, (0.0, 1.0)),
            1.0,
            masker(3, "dp"),
            first,
            runs=6_000,
        ),
        Case(
            "MicroaggregationMasker (iDP-LS, k = 3)",
            pairs.local_sensitivity_extremes((0.0, 1.0), mechanism="idp_ls"),
            1.0,
            masker(3, "idp_ls"),
            first,
            runs=6_000,
            guarantee="ε-iDP",
        ),
        Case(
            "MicroaggregationMasker (iDP-CBLS, k = 3)",
            pairs.local_sensitivity_extremes((0.0, 1.0), mechanism="idp_cbls"),
            1.0,
            masker(3, "idp_cbls"),
            first,
            runs=6_000,
            guarantee="ε-iDP",
        ),
    ]


def rank_shift_case() -> Case:
    """iDP-CBLS on a pair that shifts every cluster: the documented caveat."""
    pair = pairs.rank_shift(9, 3, (0.0, 20.0))
    stat = beyond([1.0, 4.0, 7.0], [2.0, 5.0, 8.0])

    def build(broken: bool):
        return pt.MicroaggregationMasker(
            3, _scale(broken), mechanism="idp_cbls", bounds=[(0.0, 20.0)]
        )

    return Case(
        "MicroaggregationMasker (iDP-CBLS, k = 3, every cluster shifted)",
        pair,
        1.0,
        build,
        lambda model: stat(np.sort(model.masked_.ravel())[::3]),
        runs=4_000,
        guarantee="ε-iDP",
    )


# Wang et al.: the DP F-score and DPFSDR's releases ----------------------------------
def _fscore_pair() -> NeighbouringPair:
    """Two features whose F-score is 0 without record 0 (each class centred on 0);
    record 0 shifts its class's mean on feature 0 in ``data`` and on feature 1 in the
    neighbour, so fim goes from (1, 0) to (0, 1), and the attribute filter keeps both
    columns on both sides."""
    _, y = pairs.partition_change(20, 2, background="alternating").data
    X = np.column_stack(
        [np.resize([1.0, 1.0, -1.0, -1.0], 20), np.resize([-1.0, 1.0, 1.0, -1.0], 20)]
    )
    for label in (0, 1):
        rows = np.flatnonzero(y == label)[1:] if label == 1 else np.flatnonzero(y == 0)
        X[rows] -= X[rows].mean(axis=0)
    X[0] = [3.0, 0.0]
    return pairs.replace_record(
        (X, y), 0, ([0.0, 3.0], 1), "record 0 moves a class-mean shift between features"
    )


def _dpfsdr_cases() -> list[Case]:
    fpair = _fscore_pair()
    fim_stat = beyond([1.0, 0.0], [0.0, 1.0])

    def importance(broken: bool):
        eps = _scale(broken)
        return lambda data, seed: pt.dp_feature_importance(
            *data,
            eps,
            normalize=False,
            classes=[0, 1],
            random_state=seed,
            accountant=pt.BudgetAccountant(),
        )

    def dpfsdr_fim(broken: bool):
        return pt.DPFSDR(_scale(broken), None, data_norm=10.0, classes=[0, 1])

    flipped = pairs.flipped_label(20, 1.0)
    exact = []
    for X, y in flipped:
        w = lm.erm_minimizer(
            lm.scale_rows(X, 1.0), np.where(y == 1, 1.0, -1.0), C=0.25, loss="huber"
        )
        exact.append([w[0] / math.sqrt(2.0), w[1] / math.sqrt(2.0)])
    weights_stat = beyond(*exact)

    def dpfsdr_refit(broken: bool):
        return pt.DPFSDR(
            None, _scale(broken), C=0.25, max_refits=1, data_norm=1.0, classes=[0, 1]
        )

    return [
        Case(
            "dp_feature_importance (normalize=False)",
            fpair,
            1.0,
            importance,
            fim_stat,
            runs=6_000,
        ),
        Case(
            "DPFSDR (fim', ε₁)",
            fpair,
            1.0,
            dpfsdr_fim,
            lambda model: float(
                model.feature_importance_[0] - model.feature_importance_[1]
            ),
            runs=2_000,
        ),
        Case(
            "DPFSDR (one refit's weights, ε₂)",
            flipped,
            1.0,
            dpfsdr_refit,
            lambda model: weights_stat(
                [model.classifier_.coef_[0, 0], model.classifier_.intercept_[0]]
            ),
            runs=3_000,
        ),
    ]


def all_cases() -> list[Case]:
    """Every audited release, in the order of the report."""
    return [
        *_base_cases(),
        *_selection_cases(),
        *_histogram_cases(),
        *_dilca_cases(),
        *_linear_cases(),
        *_kac_cases(),
        *_microagg_cases(),
        *_dpfsdr_cases(),
    ]
