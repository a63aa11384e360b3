"""The families a report measures: each runs its mechanism over a grid of epsilon.

A family is registered with :func:`family`: a key (for ``families=`` and the
command line's ``--family``), a title, a test of whether it applies to the table
(:class:`~privtab.report._data.ReportData`) and a runner that returns one
:class:`~privtab.report._section.Section`. A runner repeats its mechanism
``repetitions`` times at every epsilon of the grid, and draws its utility against
epsilon with the non-private result (dashed) and a naive baseline (dotted): the
spread over the repetitions is the band around the median.

Every mechanism is called with the throw-away accountant the runner is given, never
the caller's or the default one: a report spends nothing.

Core kernels called: none directly; the estimators of :mod:`privtab` call theirs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privtab.accountant import BudgetAccountant
from privtab.report._data import ReportData
from privtab.report._section import Figure, Section, Table, svg_of

__all__ = ["FAMILIES", "Family", "Run", "family"]

#: Long-form records share these keys, so that every section fits one frame.
RECORD_KEYS = (
    "family",
    "metric",
    "series",
    "mechanism",
    "epsilon",
    "k",
    "repetition",
    "value",
)

NON_PRIVATE_LINE = "the dashed line is the non-private result"
BASELINE_LINE = "the dotted line is the naive baseline"
BAND_LINE = "the band spans the repetitions around their median"


@dataclass
class Run:
    """What a family's runner gets: the grid, a random generator and its accountant.

    Attributes
    ----------
    epsilons : tuple of float
        The grid of epsilon.
    repetitions : int
        Runs of the mechanism at each point of the grid.
    rng : numpy.random.Generator
        The family's own stream (the report's seed spawns one per family).
    accountant : BudgetAccountant
        The throw-away accountant every mechanism is charged on.
    quick : bool
        Whether the report was asked for a smaller grid.
    advance : callable
        Reports one step done (``advance(description)``).
    """

    epsilons: tuple[float, ...]
    repetitions: int
    rng: np.random.Generator
    accountant: BudgetAccountant
    quick: bool = False
    advance: Callable[[str], None] = lambda description: None


@dataclass(frozen=True)
class Family:
    """A registered family: how to tell whether it applies, and how to run it."""

    key: str
    title: str
    applies: Callable[[ReportData], str | None]
    run: Callable[[ReportData, Run], Section]
    steps: Callable[[ReportData, Run], int]


#: The families a report can run, by key (`--family`): each says whether it applies to
#: a table, runs its grid and returns its section, in page order.
FAMILIES: dict[str, Family] = {}


def family(
    key: str,
    title: str,
    *,
    applies: Callable[[ReportData], str | None],
    steps: Callable[[ReportData, Run], int],
) -> Callable[[Callable[[ReportData, Run], Section]], Callable[..., Section]]:
    """Register a family runner (a decorator).

    ``applies(data)`` returns ``None`` when the family applies to the table, else the
    reason it does not; ``steps(data, run)`` sizes the progress bar.
    """

    def register(
        runner: Callable[[ReportData, Run], Section],
    ) -> Callable[[ReportData, Run], Section]:
        if key in FAMILIES:
            raise ValueError(f"a report family called {key!r} is already registered")
        FAMILIES[key] = Family(key, title, applies, runner, steps)
        return runner

    return register


def record(
    family: str,
    metric: str,
    series: str,
    value: float | None,
    *,
    epsilon: float | None = None,
    k: int | None = None,
    repetition: int | None = None,
    mechanism: str | None = None,
) -> dict[str, Any]:
    """Return one measured value in long form; an undefined one (NaN) is ``None``."""
    if value is not None and not math.isfinite(value):
        value = None
    return {
        "family": family,
        "metric": metric,
        "series": series,
        "mechanism": mechanism,
        "epsilon": epsilon,
        "k": k,
        "repetition": repetition,
        "value": None if value is None else float(value),
    }


def reading_guide(better: str, *, baseline: str | None = None) -> str:
    """Return the one-line reading guide of a utility plot."""
    parts = [f"{better} is better", NON_PRIVATE_LINE]
    if baseline is not None:
        parts.append(f"{BASELINE_LINE} ({baseline})")
    parts.append(BAND_LINE)
    return "; ".join(parts)


def utility_figure(
    x: Sequence[float],
    curves: Sequence[tuple[str, np.ndarray]],
    *,
    ylabel: str,
    xlabel: str = "ε",
    non_private: float | Sequence[float] | None = None,
    baseline: float | None = None,
    baseline_label: str = "baseline",
    reading: str,
    log_x: bool = True,
    log_y: bool = False,
) -> Figure:
    """Draw utility against ``x``: each curve's median and band, and the two lines.

    ``curves`` holds ``(label, values)`` with ``values`` of shape
    ``(len(x), repetitions)``; a NaN value (undefined) is left out of its point.
    ``non_private`` is one value (a horizontal line) or one per point of ``x``.
    """
    # A Figure of its own, not pyplot's: families draw in parallel threads, and the
    # caller's pyplot state and backend stay as they were.
    from matplotlib.figure import Figure as MatplotlibFigure

    # Small enough that its text stays legible when a phone shrinks it to fit.
    fig = MatplotlibFigure(figsize=(5.2, 3.2))
    ax = fig.subplots()
    xs = np.asarray(x, dtype=float)
    for label, values in curves:
        values = np.asarray(values, dtype=float)
        defined = ~np.all(np.isnan(values), axis=1)
        if not defined.any():
            continue
        low = np.nanmin(values[defined], axis=1)
        mid = np.nanmedian(values[defined], axis=1)
        high = np.nanmax(values[defined], axis=1)
        (line,) = ax.plot(xs[defined], mid, marker="o", markersize=4, label=label)
        ax.fill_between(xs[defined], low, high, alpha=0.2, color=line.get_color())
    if isinstance(non_private, Sequence):
        ax.plot(xs, non_private, color="black", linestyle="--", label="non-private")
    elif non_private is not None and math.isfinite(non_private):
        ax.axhline(non_private, color="black", linestyle="--", label="non-private")
    if baseline is not None and math.isfinite(baseline):
        ax.axhline(baseline, color="grey", linestyle=":", label=baseline_label)
    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    alt = f"{ylabel} against {xlabel}: " + ", ".join(label for label, _ in curves)
    return Figure(svg_of(fig), reading, alt)


def grid_table(
    x_name: str,
    x: Sequence[float],
    curves: Sequence[tuple[str, np.ndarray]],
    caption: str,
) -> Table:
    """Return the medians of each curve at each point of ``x`` as a table."""
    rows = []
    for i, point in enumerate(x):
        cells: list[Any] = [f"{point:g}"]
        for _, values in curves:
            row = np.asarray(values, dtype=float)[i]
            cells.append(
                "—" if np.all(np.isnan(row)) else f"{float(np.nanmedian(row)):.3g}"
            )
        rows.append(tuple(cells))
    columns = (x_name, *(f"{label} (median)" for label, _ in curves))
    return Table(columns, tuple(rows), caption)


def seed_of(rng: np.random.Generator) -> int:
    """Draw a 63-bit seed from ``rng`` for a mechanism's ``random_state``."""
    return int(rng.integers(0, 2**63 - 1))


def _distinct_rows(
    rows: np.ndarray, cardinalities: Sequence[int], weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Return the distinct rows of integer codes and their counts (or summed weights).

    Rows of codes below ``cardinalities`` are keyed by their mixed-radix number when
    it fits in 62 bits (a 1-D sort), else compared whole.
    """
    weights = np.ones(len(rows)) if weights is None else np.asarray(weights, float)
    if math.prod(cardinalities) < 2**62:
        strides = np.cumprod([1, *cardinalities[:0:-1]])[::-1].astype(np.int64)
        keys = rows @ strides
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(
            rows, axis=0, return_index=True, return_inverse=True
        )
    return rows[first], np.bincount(inverse.ravel(), weights=weights)


def held_out_auc(
    data: ReportData,
    columns: Sequence[int],
    codes: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None = None,
) -> float | None:
    """Held-out AUC of a logistic regression on one-hot ``columns``.

    ``codes`` (n x len(columns)) and ``y`` are its training rows, each counted
    ``weights`` times (once by default); the held-out rows are ``data.codes_test``.
    ``None`` when it cannot be measured (one class only).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import OneHotEncoder

    if len(columns) == 0 or len(np.unique(y)) < 2:
        return None
    onehot = OneHotEncoder(
        categories=[list(range(int(data.cardinalities[j]))) for j in columns]
    )
    # Rows repeat (synthetic records are copies of cells, codes are few): fitting
    # each distinct row once, weighted by its count, is the same fit, faster.
    rows, counts = _distinct_rows(
        np.column_stack([codes, y]).astype(np.int64),
        [*(int(data.cardinalities[j]) for j in columns), data.n_classes],
        weights,
    )
    # liblinear: a few times faster than lbfgs on one-hot codes, the same AUC; it
    # fits two classes only.
    solver = "liblinear" if data.n_classes == 2 else "lbfgs"
    model = LogisticRegression(solver=solver, max_iter=300).fit(
        onehot.fit_transform(rows[:, :-1]), rows[:, -1], sample_weight=counts
    )
    scores = model.predict_proba(onehot.transform(data.codes_test[:, list(columns)]))
    return auc_of(data.y_test, scores, model.classes_, data.n_classes)


def auc_of(
    y: np.ndarray, scores: np.ndarray, classes: np.ndarray, n_classes: int
) -> float | None:
    """AUC of class scores (one-vs-rest macro average beyond two classes)."""
    from sklearn.metrics import roc_auc_score

    if len(np.unique(y)) < 2:
        return None
    if scores.ndim == 1:
        return float(roc_auc_score(y, scores))
    if n_classes == 2:
        if len(classes) < 2:
            return None
        return float(roc_auc_score(y, scores[:, list(classes).index(1)]))
    present = np.isin(np.unique(y), classes).all()
    if not present or len(classes) < 2:
        return None
    return float(
        roc_auc_score(y, scores, multi_class="ovr", labels=classes, average="macro")
    )


# -- PrivateKD ---------------------------------------------------------------------


def _privatekd_k(data: ReportData) -> int:
    return min(4, len(data.predictors))


@family(
    "privatekd",
    "PrivateKD: selecting attributes that discern the target",
    applies=lambda data: None,
    steps=lambda data, run: len(run.epsilons) + 1,
)
def privatekd_section(data: ReportData, run: Run) -> Section:
    """PrivateKD at every epsilon: F(S)/F(A) and the held-out AUC on S.

    The non-private result is the greedy order (what PrivateKD picks as epsilon
    grows); the baseline is ``k`` attributes drawn uniformly (F) and a constant
    score, the majority class (AUC 0.5).
    """
    from privtab import PrivateKD, discernibility, greedy_discernibility

    key = "privatekd"
    k = _privatekd_k(data)
    X, y = data.codes_train, data.y_train
    d = X.shape[1]
    full = float(discernibility(X, y, range(d), cardinalities=data.cardinalities))
    cache: dict[tuple[int, ...], float | None] = {}

    def auc(selected: Sequence[int]) -> float | None:
        columns = tuple(sorted(int(j) for j in selected))
        if columns not in cache:
            cache[columns] = held_out_auc(data, columns, X[:, columns], y)
        return cache[columns]

    def ratio(selected: Any) -> float:
        f = discernibility(X, y, list(selected), cardinalities=data.cardinalities)
        return float(f) / full if full else math.nan

    greedy = [
        int(j) for j in greedy_discernibility(X, y, k, cardinalities=data.cardinalities)
    ]
    exact_ratio, exact_auc = ratio(greedy), auc(greedy)
    uniform = [ratio(run.rng.choice(d, size=k, replace=False)) for _ in range(20)]
    baseline_ratio = float(np.mean(uniform))
    run.advance("non-private greedy order")
    records = [
        record(key, "F(S)/F(A)", "non-private", exact_ratio, k=k),
        record(key, "held-out AUC", "non-private", exact_auc, k=k),
        record(key, "F(S)/F(A)", "baseline", baseline_ratio, k=k),
        record(key, "held-out AUC", "baseline", 0.5, k=k),
    ]
    ratios = np.full((len(run.epsilons), run.repetitions), np.nan)
    aucs = np.full_like(ratios, np.nan)
    for i, epsilon in enumerate(run.epsilons):
        for r in range(run.repetitions):
            selector = PrivateKD(
                k,
                epsilon,
                classes=np.arange(data.n_classes),
                random_state=seed_of(run.rng),
                accountant=run.accountant,
            ).fit(X, y, cardinalities=data.cardinalities)
            chosen = [int(j) for j in selector.selection_order_]
            ratios[i, r] = ratio(chosen)
            value = auc(chosen)
            aucs[i, r] = np.nan if value is None else value
            records.append(
                record(
                    key,
                    "F(S)/F(A)",
                    "private",
                    ratios[i, r],
                    epsilon=epsilon,
                    k=k,
                    repetition=r,
                )
            )
            records.append(
                record(
                    key,
                    "held-out AUC",
                    "private",
                    value,
                    epsilon=epsilon,
                    k=k,
                    repetition=r,
                )
            )
        run.advance(f"ε = {epsilon:g}")
    names = ", ".join(str(data.predictors[j]) for j in greedy)
    figures = (
        utility_figure(
            run.epsilons,
            [("PrivateKD", ratios)],
            ylabel="F(S) / F(A)",
            non_private=exact_ratio,
            baseline=baseline_ratio,
            baseline_label=f"{k} attributes at random",
            reading=reading_guide("higher", baseline=f"{k} attributes drawn at random"),
        ),
        utility_figure(
            run.epsilons,
            [("PrivateKD", aucs)],
            ylabel="held-out AUC",
            non_private=exact_auc,
            baseline=0.5,
            baseline_label="majority class",
            reading=reading_guide("higher", baseline="majority class, AUC 0.5"),
        ),
    )
    return Section(
        key=key,
        title=FAMILIES[key].title,
        summary=(
            f"PrivateKD (Vinterbo 2012) selects k = {k} of the {d} predictors, spending "
            f"ε over k rounds of the exponential mechanism. F(S)/F(A) is the share of "
            f"the record pairs with different {data.target} that the selected "
            f"attributes tell apart, of those all predictors tell apart (training "
            f"rows); the AUC is that of a logistic regression on the selected "
            f"attributes, on the held-out rows. The non-private greedy order picks "
            f"{names}."
        ),
        figures=figures,
        tables=(
            grid_table(
                "ε",
                run.epsilons,
                [("F(S)/F(A)", ratios), ("AUC", aucs)],
                f"PrivateKD, k = {k}, {run.repetitions} repetitions per ε",
            ),
        ),
        records=tuple(records),
    )


# -- projected histogram -----------------------------------------------------------


def _total_variation(
    keys_a: np.ndarray, mass_a: np.ndarray, keys_b: np.ndarray, mass_b: np.ndarray
) -> float:
    """Total-variation distance of two distributions given on sorted unique keys."""
    union = np.union1d(keys_a, keys_b)
    a = np.zeros(len(union))
    b = np.zeros(len(union))
    a[np.searchsorted(union, keys_a)] = mass_a
    b[np.searchsorted(union, keys_b)] = mass_b
    return 0.5 * float(np.abs(a - b).sum())


def _marginal(codes: np.ndarray, cardinalities: np.ndarray) -> tuple[Any, Any]:
    """Return the cells (mixed-radix keys) of the rows of ``codes``, and their shares."""
    from privtab import mixed_radix_encode

    keys = np.asarray(
        mixed_radix_encode(np.ascontiguousarray(codes, dtype=np.uint32), cardinalities)
    )
    cells, counts = np.unique(keys, return_counts=True)
    return cells, counts / counts.sum()


@family(
    "projected",
    "Projected histogram: synthetic data for the target",
    applies=lambda data: None,
    steps=lambda data, run: len(run.epsilons) + 1,
)
def projected_section(data: ReportData, run: Run) -> Section:
    """ProjectedHistogram at every epsilon: AUC on synthetic data, TV of the marginal.

    A logistic regression trained on the synthetic records is measured on the
    held-out rows; the total-variation distance compares the released histogram
    (normalised, negative cells at 0) with the training rows' marginal on the same
    attributes and the target. Non-private: a model trained on the training rows
    (all predictors), and TV 0; baseline: the majority class (AUC 0.5) and the
    uniform distribution over the projection's domain (TV).
    """
    from privtab import ProjectedHistogram, greedy_discernibility

    key = "projected"
    X, y = data.codes_train, data.y_train
    d = X.shape[1]
    exact_auc = held_out_auc(data, list(range(d)), X, y)
    labels = np.arange(data.n_classes)
    records = [
        record(key, "held-out AUC", "non-private", exact_auc),
        record(key, "held-out AUC", "baseline", 0.5),
        record(key, "total variation", "non-private", 0.0),
    ]
    aucs = np.full((len(run.epsilons), run.repetitions), np.nan)
    distances = np.full_like(aucs, np.nan)
    k = None
    for i, epsilon in enumerate(run.epsilons):
        for r in range(run.repetitions):
            model = ProjectedHistogram(
                epsilon,
                classes=labels,
                random_state=seed_of(run.rng),
                accountant=run.accountant,
            ).fit(X, y, cardinalities=data.cardinalities)
            chosen = [int(j) for j in model.selection_order_]
            k = len(chosen)
            histogram = model.histogram_
            # The synthetic records are each kept cell ⌈v − ½⌉ times (synthetic()),
            # given to the model as cells with those weights.
            copies = np.ceil(np.asarray(histogram.values, dtype=float) - 0.5)
            cells = np.asarray(histogram.to_codes(), dtype=np.int64)
            value = held_out_auc(
                data, chosen, cells[:, :-1], cells[:, -1], weights=copies
            )
            aucs[i, r] = np.nan if value is None else value
            released = np.clip(np.asarray(histogram.values, dtype=float), 0, None)
            cards = np.asarray(histogram.cardinalities, dtype=np.int64)
            true_cells, true_mass = _marginal(np.column_stack([X[:, chosen], y]), cards)
            tv = (
                _total_variation(
                    np.asarray(histogram.keys),
                    released / released.sum(),
                    true_cells,
                    true_mass,
                )
                if released.sum() > 0
                else math.nan
            )
            distances[i, r] = tv
            records.append(
                record(
                    key,
                    "held-out AUC",
                    "private",
                    value,
                    epsilon=epsilon,
                    k=k,
                    repetition=r,
                )
            )
            records.append(
                record(
                    key,
                    "total variation",
                    "private",
                    tv,
                    epsilon=epsilon,
                    k=k,
                    repetition=r,
                )
            )
        run.advance(f"ε = {epsilon:g}")
    k = k or 1
    greedy = [
        int(j) for j in greedy_discernibility(X, y, k, cardinalities=data.cardinalities)
    ]
    cards = np.append(data.cardinalities[greedy], data.n_classes)
    cells, mass = _marginal(np.column_stack([X[:, greedy], y]), cards)
    domain = float(np.prod(cards.astype(float)))
    uniform_tv = 0.5 * (
        float(np.abs(mass - 1 / domain).sum()) + (domain - len(cells)) / domain
    )
    records.append(record(key, "total variation", "baseline", uniform_tv, k=k))
    run.advance("baselines")
    figures = (
        utility_figure(
            run.epsilons,
            [("synthetic data", aucs)],
            ylabel="held-out AUC",
            non_private=exact_auc,
            baseline=0.5,
            baseline_label="majority class",
            reading=reading_guide("higher", baseline="majority class, AUC 0.5"),
        ),
        utility_figure(
            run.epsilons,
            [("released marginal", distances)],
            ylabel="total-variation distance",
            non_private=0.0,
            baseline=uniform_tv,
            baseline_label="uniform",
            reading=reading_guide(
                "lower", baseline="the uniform distribution over the cells"
            ),
        ),
    )
    return Section(
        key=key,
        title=FAMILIES[key].title,
        summary=(
            f"ProjectedHistogram (Vinterbo 2012) spends part of ε choosing k = {k} "
            f"predictors of {data.target} with PrivateKD and the rest on a "
            f"thresholded histogram of them and {data.target}; its synthetic records "
            f"train a logistic regression, measured on the held-out rows. The total "
            f"variation compares the released histogram with the training rows' "
            f"marginal on the same columns (0: identical, 1: disjoint). A missing "
            f"point means that nothing was released above the threshold."
        ),
        figures=figures,
        tables=(
            grid_table(
                "ε",
                run.epsilons,
                [("AUC", aucs), ("TV", distances)],
                f"projected histogram, {run.repetitions} repetitions per ε",
            ),
        ),
        records=tuple(records),
    )


# -- DP-DILCA ------------------------------------------------------------------------


def _dilca_columns(data: ReportData) -> list[int]:
    predictors = data.predictors
    categorical = [predictors.index(c) for c in data.categorical]
    return categorical if len(categorical) >= 2 else list(range(len(predictors)))


def _off_diagonal(matrices: Sequence[np.ndarray]) -> np.ndarray:
    parts = [np.asarray(m)[np.triu_indices(len(m), k=1)] for m in matrices]
    return np.concatenate(parts) if parts else np.zeros(0)


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    if a.size < 2 or a.std() == 0 or b.std() == 0:
        return math.nan
    return float(np.corrcoef(a, b)[0, 1])


@family(
    "dilca",
    "DP-DILCA: distances between the values of each attribute",
    applies=lambda data: (
        None if len(data.predictors) >= 2 else "DILCA needs at least 2 attributes"
    ),
    steps=lambda data, run: len(run.epsilons) + 1,
)
def dilca_section(data: ReportData, run: Run) -> Section:
    """DP-DILCA at every epsilon: Pearson r with the non-private DILCA distances.

    The distances of every attribute's values (their upper triangles, all
    attributes together) are correlated with those of DILCA_RR on the same rows.
    Non-private: r = 1; baseline: distances drawn uniformly at random.
    """
    from privtab import DILCA, DPDILCA

    key = "dilca"
    columns = _dilca_columns(data)
    codes = np.vstack([data.codes_train, data.codes_test])[:, columns]
    cards = data.cardinalities[columns]
    exact = DILCA(context="relevance_redundancy").fit(codes, cardinalities=cards)
    reference = _off_diagonal([exact.distance_matrix(j) for j in range(len(columns))])
    baseline = float(
        np.mean(
            [
                _correlation(reference, run.rng.uniform(size=reference.size))
                for _ in range(max(run.repetitions, 5))
            ]
        )
    )
    run.advance("non-private DILCA")
    records = [
        record(key, "Pearson r", "non-private", 1.0),
        record(key, "Pearson r", "baseline", baseline),
    ]
    values = np.full((len(run.epsilons), run.repetitions), np.nan)
    for i, epsilon in enumerate(run.epsilons):
        for r in range(run.repetitions):
            private = DPDILCA(
                epsilon,
                method="max_relevance",
                context_size=min(3, len(columns) - 1),
                random_state=seed_of(run.rng),
                accountant=run.accountant,
            ).fit(codes, cardinalities=cards)
            found = _off_diagonal(
                [private.distance_matrix(j) for j in range(len(columns))]
            )
            values[i, r] = _correlation(reference, found)
            records.append(
                record(
                    key,
                    "Pearson r",
                    "private",
                    values[i, r],
                    epsilon=epsilon,
                    repetition=r,
                )
            )
        run.advance(f"ε = {epsilon:g}")
    names = ", ".join(str(data.predictors[j]) for j in columns)
    return Section(
        key=key,
        title=FAMILIES[key].title,
        summary=(
            f"DP-DILCA (DP-MaxRelevance) learns a distance between the values of each "
            f"of {len(columns)} attributes ({names}) from their context, spending ε/m "
            f"per attribute. Each point is the Pearson correlation of all its "
            f"distances with those of the non-private DILCA_RR on the same rows."
        ),
        figures=(
            utility_figure(
                run.epsilons,
                [("DP-DILCA", values)],
                ylabel="Pearson r with DILCA",
                non_private=1.0,
                baseline=baseline,
                baseline_label="random distances",
                reading=reading_guide("higher", baseline="distances drawn at random"),
            ),
        ),
        tables=(
            grid_table(
                "ε",
                run.epsilons,
                [("r", values)],
                f"DP-DILCA, {run.repetitions} repetitions per ε",
            ),
        ),
        records=tuple(records),
    )


# -- microaggregation --------------------------------------------------------------

#: The mechanisms of :class:`~privtab.MicroaggregationMasker` and their guarantees.
_MICROAGG_MECHANISMS = (
    ("dp", "DP (ε-DP)"),
    ("idp_ls", "iDP-LS (ε-iDP)"),
    ("idp_cbls", "iDP-CBLS (ε-iDP)"),
)
_MICROAGG_K = 10
_MICROAGG_KS = (3, 5, 10, 20, 50, 100)
_MICROAGG_EPSILON = 1.0


def _microaggregated(X: np.ndarray, k: int) -> np.ndarray:
    """Each column's values replaced by the mean of their cluster (no noise)."""
    from privtab import individual_ranking_clusters

    out = np.empty_like(X)
    for j in range(X.shape[1]):
        labels = np.asarray(individual_ranking_clusters(X[:, j], k))
        sums = np.bincount(labels, weights=X[:, j])
        counts = np.bincount(labels)
        out[:, j] = (sums / counts)[labels]
    return out


def _microagg_rows(data: ReportData) -> np.ndarray:
    X = data.frame[list(data.numeric)].to_numpy(dtype=float)
    return X[~np.isnan(X).any(axis=1)]


@family(
    "microagg",
    "Microaggregation release: the numeric columns, ε-DP and ε-iDP",
    applies=lambda data: None if data.numeric else "the table has no numeric column",
    steps=lambda data, run: len(run.epsilons) + len(_MICROAGG_KS) + 1,
)
def microagg_section(data: ReportData, run: Run) -> Section:
    """Mean SSE of each microaggregation mechanism against epsilon and against k.

    Non-private: the same microaggregation without noise; baseline: every value
    drawn uniformly between its column's bounds.
    """
    from privtab import MicroaggregationMasker, mean_sse

    key = "microagg"
    X = _microagg_rows(data)
    bounds = [data.bounds[c] for c in data.numeric]
    low = np.array([b[0] for b in bounds])
    high = np.array([b[1] for b in bounds])
    uniform = float(
        np.mean(
            [
                mean_sse(X, run.rng.uniform(low, high, size=X.shape))
                for _ in range(run.repetitions)
            ]
        )
    )
    exact = {k: float(mean_sse(X, _microaggregated(X, k))) for k in _MICROAGG_KS}
    run.advance("non-private microaggregation")
    records = [record(key, "mean SSE", "baseline", uniform)]
    records += [
        record(key, "mean SSE", "non-private", v, k=k) for k, v in exact.items()
    ]

    def masked_sse(mechanism: str, k: int, epsilon: float) -> float:
        masker = MicroaggregationMasker(
            k,
            epsilon,
            mechanism=mechanism,
            bounds=bounds,
            out_of_bounds="clip",
            random_state=seed_of(run.rng),
            accountant=run.accountant,
        )
        return float(mean_sse(X, masker.fit_transform(X)))

    def sweep(
        settings: list[tuple[int, float]], step: Callable[[int, float], str]
    ) -> list[tuple[str, np.ndarray]]:
        """Mean SSE of every mechanism at each (k, ε), one column a repetition."""
        curves = [
            (name, np.full((len(settings), run.repetitions), np.nan))
            for _, name in _MICROAGG_MECHANISMS
        ]
        for i, (k, epsilon) in enumerate(settings):
            for (mechanism, _), (_, values) in zip(
                _MICROAGG_MECHANISMS, curves, strict=True
            ):
                for r in range(run.repetitions):
                    values[i, r] = masked_sse(mechanism, k, epsilon)
                    records.append(
                        record(
                            key,
                            "mean SSE",
                            "private",
                            values[i, r],
                            epsilon=epsilon,
                            k=k,
                            repetition=r,
                            mechanism=mechanism,
                        )
                    )
            run.advance(step(k, epsilon))
        return curves

    by_epsilon = sweep(
        [(_MICROAGG_K, epsilon) for epsilon in run.epsilons],
        lambda _, epsilon: f"ε = {epsilon:g}",
    )
    by_k = sweep(
        [(k, _MICROAGG_EPSILON) for k in _MICROAGG_KS], lambda k, _: f"k = {k}"
    )
    guide = reading_guide("lower", baseline="values drawn uniformly within the bounds")
    figures = (
        utility_figure(
            run.epsilons,
            by_epsilon,
            ylabel=f"mean SSE (k = {_MICROAGG_K})",
            non_private=exact[_MICROAGG_K],
            baseline=uniform,
            baseline_label="uniform values",
            reading=guide,
            log_y=True,
        ),
        utility_figure(
            _MICROAGG_KS,
            by_k,
            xlabel="k",
            ylabel=f"mean SSE (ε = {_MICROAGG_EPSILON:g})",
            non_private=[exact[k] for k in _MICROAGG_KS],
            baseline=uniform,
            baseline_label="uniform values",
            reading=guide,
            log_y=True,
        ),
    )
    dropped = len(data.frame) - len(X)
    notes = (
        (f"{dropped} rows with a missing numeric value are left out.",)
        if dropped
        else ()
    )
    return Section(
        key=key,
        title=FAMILIES[key].title,
        summary=(
            f"MicroaggregationMasker ranks each of the {len(data.numeric)} numeric "
            f"columns ({', '.join(data.numeric)}) into clusters of at least k values "
            f"and releases each cluster's mean with Laplace noise calibrated to its "
            f"sensitivity: DP is ε-differentially private, iDP-LS and iDP-CBLS are "
            f"ε-individually private (with respect to this data set only). Mean SSE "
            f"is the paper's information loss (distances scaled by each column's "
            f"variance), over all {len(X)} rows."
        ),
        figures=figures,
        tables=(
            grid_table(
                "ε",
                run.epsilons,
                by_epsilon,
                f"mean SSE at k = {_MICROAGG_K}, {run.repetitions} repetitions per ε",
            ),
            grid_table(
                "k", _MICROAGG_KS, by_k, f"mean SSE at ε = {_MICROAGG_EPSILON:g}"
            ),
        ),
        records=tuple(records),
        notes=notes,
    )


# -- DPFSDR and DPFS ---------------------------------------------------------------

#: DPFSDR's training rows are subsampled to this many (its refits dominate the time).
DPFSDR_ROWS = 5_000
_DPFSDR_MAX_REFITS = 10


def _dpfsdr_applies(data: ReportData) -> str | None:
    if not data.numeric:
        return "DPFSDR needs numeric predictors; the table has none"
    if data.n_classes != 2:
        return f"DPFSDR's SVM needs a binary target; {data.target} has {data.n_classes} labels"
    return None


@family(
    "dpfsdr",
    "DPFSDR and DPFS: the features of a DP linear SVM",
    applies=_dpfsdr_applies,
    steps=lambda data, run: len(run.epsilons) + 1,
)
def dpfsdr_section(data: ReportData, run: Run) -> Section:
    """DPFSDR and DPFS at every epsilon: held-out accuracy and features selected.

    Each gets the whole epsilon: a fifth for the noisy F-score ranking, the rest
    for at most 10 SVM refits (``budget="total"``). Non-private: DFS, the same
    search without noise; baseline: the majority class of the training rows.
    """
    from privtab import DPFS, DPFSDR
    from privtab.accountant import split_budget

    key = "dpfsdr"
    columns = list(data.numeric)
    X_all = data.frame[columns].to_numpy(dtype=float)
    train = data.train_rows
    if len(train) > DPFSDR_ROWS:
        train = np.sort(run.rng.choice(train, size=DPFSDR_ROWS, replace=False))
    keep_train = ~np.isnan(X_all[train]).any(axis=1)
    keep_test = ~np.isnan(X_all[data.test_rows]).any(axis=1)
    X_train, X_test = X_all[train][keep_train], X_all[data.test_rows][keep_test]
    y_all = np.empty(len(data.frame), dtype=np.int64)
    y_all[data.train_rows], y_all[data.test_rows] = data.y_train, data.y_test
    y_train, y_test = y_all[train][keep_train], y_all[data.test_rows][keep_test]
    bounds = [data.bounds[c] for c in columns]
    refits = min(_DPFSDR_MAX_REFITS, len(columns))

    def fit(estimator: Any, epsilon: float | None) -> tuple[float, int]:
        budgets = (None, None) if epsilon is None else split_budget(epsilon, [1.0, 4.0])
        selector = estimator(
            *budgets,
            bounds=bounds,
            budget="total",
            max_refits=refits,
            classes=[0, 1],
            random_state=seed_of(run.rng),
            accountant=run.accountant if epsilon is not None else None,
        ).fit(X_train, y_train)
        return float(selector.score(X_test, y_test)), int(selector.support_.sum())

    exact_accuracy, exact_count = fit(DPFS, None)
    majority = float(max(np.mean(y_train == c) for c in (0, 1)))
    baseline_accuracy = float(np.mean(y_test == int(np.mean(y_train) > 0.5)))
    run.advance("non-private DFS")
    records = [
        record(key, "held-out accuracy", "non-private", exact_accuracy),
        record(key, "features selected", "non-private", exact_count),
        record(key, "held-out accuracy", "baseline", baseline_accuracy),
    ]
    curves = {
        name: (
            np.full((len(run.epsilons), run.repetitions), np.nan),
            np.full((len(run.epsilons), run.repetitions), np.nan),
        )
        for name in ("DPFS", "DPFSDR")
    }
    estimators = {"DPFS": DPFS, "DPFSDR": DPFSDR}
    for i, epsilon in enumerate(run.epsilons):
        for name, (accuracy, count) in curves.items():
            for r in range(run.repetitions):
                accuracy[i, r], count[i, r] = fit(estimators[name], epsilon)
                records.append(
                    record(
                        key,
                        "held-out accuracy",
                        "private",
                        accuracy[i, r],
                        epsilon=epsilon,
                        repetition=r,
                        mechanism=name,
                    )
                )
                records.append(
                    record(
                        key,
                        "features selected",
                        "private",
                        count[i, r],
                        epsilon=epsilon,
                        repetition=r,
                        mechanism=name,
                    )
                )
        run.advance(f"ε = {epsilon:g}")
    accuracy_curves = [(name, curves[name][0]) for name in curves]
    count_curves = [(name, curves[name][1]) for name in curves]
    figures = (
        utility_figure(
            run.epsilons,
            accuracy_curves,
            ylabel="held-out accuracy",
            non_private=exact_accuracy,
            baseline=baseline_accuracy,
            baseline_label="majority class",
            reading=reading_guide(
                "higher", baseline="the majority class of the training rows"
            ),
        ),
        utility_figure(
            run.epsilons,
            count_curves,
            ylabel="features selected",
            non_private=exact_count,
            reading=(
                f"closer to the dashed line is better (of {len(columns)}); "
                f"{NON_PRIVATE_LINE} (DFS); {BAND_LINE}"
            ),
        ),
    )
    return Section(
        key=key,
        title=FAMILIES[key].title,
        summary=(
            f"DPFS and DPFSDR (Wang, Zhang & Yan 2023) select among the "
            f"{len(columns)} numeric predictors ({', '.join(columns)}) by a noisy "
            f"F-score ranking (ε/5) and keep a feature while the training accuracy "
            f"of a DP linear SVM improves (4ε/5 over at most {refits} refits, output "
            f"perturbation scaled by the records' correlated sensitivity). The "
            f"majority class is {majority:.1%} of the training rows."
        ),
        figures=figures,
        tables=(
            grid_table(
                "ε",
                run.epsilons,
                accuracy_curves,
                f"held-out accuracy, {run.repetitions} repetitions per ε",
            ),
        ),
        records=tuple(records),
        notes=(
            f"Trained on {len(X_train)} of the {len(data.train_rows)} training rows "
            f"drawn at random, to keep the report fast; measured on the "
            f"{len(X_test)} held-out rows.",
        ),
    )


# -- k-anonymity by containment ----------------------------------------------------

_KAC_KS = (2, 5, 10, 20, 50, 100)
_KAC_QUICK_KS = (5, 20, 100)
_KAC_METHODS = (("greedy_distcnt", "Greedy-DistCnt"), ("greedy_ham", "Greedy-Ham"))
#: A category held by fewer rows than this share is left out of the binary features.
_KAC_MIN_SHARE = 0.01


def _kac_applies(data: ReportData) -> str | None:
    if data.n_classes != 2:
        return f"k-AC selection needs a binary target; {data.target} has {data.n_classes} labels"
    if not data.categorical:
        return "k-AC selection needs categorical predictors; the table has none"
    return None


def _binary_features(data: ReportData) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """One binary feature per frequent category of each categorical predictor."""
    predictors = data.predictors
    train, test, names = [], [], []
    n = len(data.codes_train)
    for column in data.categorical:
        j = predictors.index(column)
        counts = np.bincount(
            data.codes_train[:, j], minlength=int(data.cardinalities[j])
        )
        for code in np.flatnonzero(counts >= max(1, _KAC_MIN_SHARE * n)):
            if counts[code] == n:
                continue
            train.append(data.codes_train[:, j] == code)
            test.append(data.codes_test[:, j] == code)
            names.append(f"{column}={code}")
    return (
        np.column_stack(train).astype(np.uint8)
        if train
        else np.zeros((n, 0), np.uint8),
        np.column_stack(test).astype(np.uint8) if test else np.zeros((0, 0), np.uint8),
        names,
    )


def _svm_auc(
    B_train: np.ndarray, y_train: np.ndarray, B_test: np.ndarray, y_test: np.ndarray
) -> float | None:
    from sklearn.metrics import roc_auc_score
    from sklearn.svm import LinearSVC

    if B_train.shape[1] == 0 or len(np.unique(y_train)) < 2:
        return None
    model = LinearSVC(dual=False).fit(B_train, y_train)
    return float(roc_auc_score(y_test, model.decision_function(B_test)))


@family(
    "kac",
    "k-anonymity by containment: selecting binary features (no ε)",
    applies=_kac_applies,
    steps=lambda data, run: len(_KAC_QUICK_KS if run.quick else _KAC_KS) + 1,
)
def kac_section(data: ReportData, run: Run) -> Section:
    """Greedy k-AC selection at every k: held-out AUC of a linear SVM.

    k-AC is a syntactic guarantee, not differential privacy: it spends no epsilon
    and runs once per k. Non-private: all binary features; baseline: AUC 0.5.
    """
    from privtab import KACSelector

    key = "kac"
    ks = _KAC_QUICK_KS if run.quick else _KAC_KS
    B_train, B_test, names = _binary_features(data)
    y_train, y_test = data.y_train, data.y_test
    exact = _svm_auc(B_train, y_train, B_test, y_test)
    run.advance("all features")
    records = [
        record(key, "held-out AUC", "non-private", exact),
        record(key, "held-out AUC", "baseline", 0.5),
    ]
    curves = [(name, np.full((len(ks), 1), np.nan)) for _, name in _KAC_METHODS]
    rows = []
    for i, k in enumerate(ks):
        row: list[Any] = [k]
        for (method, _), (_, values) in zip(_KAC_METHODS, curves, strict=True):
            selector = KACSelector(k, method=method).fit(B_train, y_train)
            chosen = [int(j) for j in selector.selection_order_]
            value = _svm_auc(B_train[:, chosen], y_train, B_test[:, chosen], y_test)
            values[i, 0] = np.nan if value is None else value
            records.append(
                record(key, "held-out AUC", "private", value, k=k, mechanism=method)
            )
            records.append(
                record(
                    key,
                    "features selected",
                    "private",
                    len(chosen),
                    k=k,
                    mechanism=method,
                )
            )
            row += [len(chosen), "—" if value is None else f"{value:.3f}"]
        rows.append(tuple(row))
        run.advance(f"k = {k}")
    columns = ["k"]
    for _, name in _KAC_METHODS:
        columns += [f"{name} features", f"{name} AUC"]
    return Section(
        key=key,
        title=FAMILIES[key].title,
        summary=(
            f"Greedy-DistCnt and Greedy-Ham (Zhang, Mohammed, Dave & Al Hasan) add "
            f"binary features while every training row's features are contained in "
            f"those of at least k rows. The {len(names)} binary features are the "
            f"categories of the categorical predictors held by at least "
            f"{_KAC_MIN_SHARE:.0%} of the training rows; the AUC is that of a linear "
            f"SVM on the held-out rows. k-AC is a syntactic guarantee, not "
            f"differential privacy: no ε."
        ),
        figures=(
            utility_figure(
                ks,
                curves,
                xlabel="k",
                ylabel="held-out AUC",
                non_private=exact,
                baseline=0.5,
                baseline_label="majority class",
                reading=(
                    "higher is better; larger k is more anonymous; "
                    f"{NON_PRIVATE_LINE} (all features); {BASELINE_LINE} "
                    "(majority class, AUC 0.5)"
                ),
            ),
        ),
        tables=(Table(tuple(columns), tuple(rows), "k-AC selection per k"),),
        records=tuple(records),
    )
