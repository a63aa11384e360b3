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
    "family", "metric", "series", "mechanism", "epsilon", "k", "repetition", "value",
)  # fmt: skip

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
    non_private: float | None = None,
    baseline: float | None = None,
    baseline_label: str = "baseline",
    reading: str,
    log_x: bool = True,
) -> Figure:
    """Draw utility against ``x``: each curve's median and band, and the two lines.

    ``curves`` holds ``(label, values)`` with ``values`` of shape
    ``(len(x), repetitions)``; a NaN value (undefined) is left out of its point.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.4))
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
    if non_private is not None and math.isfinite(non_private):
        ax.axhline(non_private, color="black", linestyle="--", label="non-private")
    if baseline is not None and math.isfinite(baseline):
        ax.axhline(baseline, color="grey", linestyle=":", label=baseline_label)
    if log_x:
        ax.set_xscale("log")
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
                "—" if np.all(np.isnan(row)) else f"{float(np.nanmedian(row)):.3f}"
            )
        rows.append(tuple(cells))
    columns = (x_name, *(f"{label} (median)" for label, _ in curves))
    return Table(columns, tuple(rows), caption)


def seed_of(rng: np.random.Generator) -> int:
    """Draw a 63-bit seed from ``rng`` for a mechanism's ``random_state``."""
    return int(rng.integers(0, 2**63 - 1))


def held_out_auc(
    data: ReportData,
    columns: Sequence[int],
    codes: np.ndarray,
    y: np.ndarray,
) -> float | None:
    """Held-out AUC of a logistic regression on one-hot ``columns``.

    ``codes`` (n x len(columns)) and ``y`` are its training rows; the held-out rows
    are ``data.codes_test``. ``None`` when it cannot be measured (one class only).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import OneHotEncoder

    if len(columns) == 0 or len(np.unique(y)) < 2:
        return None
    onehot = OneHotEncoder(
        categories=[list(range(int(data.cardinalities[j]))) for j in columns]
    )
    # liblinear: a few times faster than lbfgs on one-hot codes, the same AUC.
    model = LogisticRegression(solver="liblinear").fit(onehot.fit_transform(codes), y)
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
                record(key, "F(S)/F(A)", "private", ratios[i, r], epsilon=epsilon,
                       k=k, repetition=r)
            )  # fmt: skip
            records.append(
                record(key, "held-out AUC", "private", value, epsilon=epsilon, k=k,
                       repetition=r)
            )  # fmt: skip
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
