"""The ``privtab demo`` tour: each method on bundled data, next to its truth.

The demo is a registry of sections. A section is a function that receives a
:class:`DemoContext` (the console, the privacy parameters, the shared data) and prints
one comparison of a private release with its non-private counterpart. Register a new
method with :func:`section`::

    @section("histogram", "Thresholded sparse histogram", steps=3)
    def _histogram(ctx: DemoContext) -> None:
        table = ctx.encoded()
        ...
        ctx.advance("counted")

Sections run in registration order, each spending at most ``ctx.epsilon`` from
``ctx.accountant`` (sequential composition: the ledger printed at the end shows the
total). A section shows its results with ``ctx.show`` (a rich table or a line of
text), which prints them and keeps them for the HTML page of ``--report``
(:class:`DemoReport`: the page of ``privtab report``, a table per rich table, the full
labels, and every text escaped as HTML). Text that comes from the data (categories, column names, ledger labels) is
printed through :func:`~privtab.cli._options.literal`, so that rich shows it as
written instead of reading it as markup.

Core kernels called: none directly; the sections use the public API of :mod:`privtab`
(``privtab._core`` counting, partition, histogram, pairwise, anonymity, microagg and
sampling kernels behind it).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

import privtab
from privtab._validation import check_epsilon, check_positive_int
from privtab.accountant import BudgetAccountant, split_budget
from privtab.cli._options import literal

__all__ = [
    "SECTIONS",
    "DemoContext",
    "DemoReport",
    "Section",
    "run_demo",
    "section",
]


@dataclass(frozen=True)
class Section:
    """One part of the demo: a name (for ``--only``), a title and its step count."""

    name: str
    title: str
    steps: int
    run: Callable[[DemoContext], None]


SECTIONS: dict[str, Section] = {}


def section(
    name: str, title: str, *, steps: int = 1
) -> Callable[[Callable[[DemoContext], None]], Callable[[DemoContext], None]]:
    """Register a demo section (a decorator); ``steps`` sizes its progress bar."""

    def register(run: Callable[[DemoContext], None]) -> Callable[[DemoContext], None]:
        if name in SECTIONS:
            raise ValueError(f"a demo section called {name!r} is already registered")
        SECTIONS[name] = Section(name, title, steps, run)
        return run

    return register


@dataclass
class DemoContext:
    """What every section gets: output, privacy parameters and cached shared data.

    Attributes
    ----------
    console : rich.console.Console
        Where to print.
    epsilon : float
        The budget of one section.
    accountant : BudgetAccountant
        Charged by every release.
    random_state : None or numpy.random.Generator
        ``None`` (operating-system entropy) unless the demo was given a seed; pass it
        as ``random_state=`` to every randomized call.
    report : DemoReport or None
        Keeps what :meth:`show` prints, for ``--report``.
    """

    console: Console
    epsilon: float
    accountant: BudgetAccountant
    random_state: np.random.Generator | None
    advance: Callable[[str], None] = lambda description: None
    report: DemoReport | None = None
    _cache: dict[str, Any] = field(default_factory=dict)

    def show(self, result: Table | str) -> None:
        """Print ``result`` (a rich table, or text in rich markup) and report it."""
        self.console.print(result)
        if self.report is not None:
            self.report.add(result)

    def adult(self) -> Any:
        """Return the bundled Adult data (:func:`privtab.datasets.load_adult`), cached."""
        if "adult" not in self._cache:
            from privtab.datasets import load_adult

            self._cache["adult"] = load_adult()
        return self._cache["adult"]

    def encoded(self) -> tuple[privtab.TableEncoder, privtab.EncodedTable]:
        """Adult encoded with its declared domains and bounds (missing → a category)."""
        if "encoded" not in self._cache:
            adult = self.adult()
            encoder = privtab.TableEncoder(
                domains=adult.domains, bounds=adult.bounds, missing="category"
            )
            self._cache["encoded"] = (encoder, encoder.fit_transform(adult.frame))
        return self._cache["encoded"]


@section("contingency", "Contingency table: education x income", steps=4)
def _contingency(ctx: DemoContext) -> None:
    """Release education x income with the discrete Laplace mechanism.

    Under replace-one neighbours, changing one record moves one count down and another
    up: the table's L1 sensitivity is 2.
    """
    ctx.adult()
    ctx.advance("loaded Adult")
    encoder, table = ctx.encoded()
    ctx.advance("encoded with the declared domains")
    ix, iy = table.column_index("education"), table.column_index("income")
    kx, ky = int(table.cardinalities[ix]), int(table.cardinalities[iy])
    true = np.asarray(
        privtab.contingency_table(table.codes[:, ix], table.codes[:, iy], kx, ky)
    )
    if true.shape != (kx, ky):
        raise RuntimeError(
            f"contingency_table returned shape {true.shape}, not {(kx, ky)}"
        )
    ctx.advance("counted")
    noisy = np.asarray(
        privtab.discrete_laplace_mechanism(
            true,
            2,
            ctx.epsilon,
            random_state=ctx.random_state,
            accountant=ctx.accountant,
        )
    )
    ctx.advance("released")

    # The released table covers the whole public domain, including the missing-value
    # code that missing="category" gives every column.
    education = [_label(v) for v in encoder.categories_[ix]]
    income = [_label(v) for v in encoder.categories_[iy]]
    view = Table(
        title=f"education x income: true counts and ε = {ctx.epsilon:g} release",
        caption="discrete Laplace noise, scale 2/ε (L1 sensitivity 2)",
    )
    view.add_column("education")
    for label in income:
        view.add_column(f"{label} true", justify="right")
        view.add_column(f"{label} DP", justify="right", style="cyan")
    for r, name in enumerate(education):
        cells = []
        for c in range(len(income)):
            cells += [f"{int(true[r, c]):,}", f"{int(noisy[r, c]):,}"]
        view.add_row(name, *cells)
    ctx.show(view)
    error = np.abs(noisy.astype(np.int64) - true.astype(np.int64))
    ctx.show(
        f"{error.size} cells: mean absolute error {error.mean():.2f}, "
        f"largest {int(error.max())}; {int(true.sum()):,} records"
    )


@section("histogram", "Thresholded histogram: age x education x sex x income", steps=3)
def _histogram(ctx: DemoContext) -> None:
    """Release a thresholded sparse histogram over the full product domain.

    Noise of scale 2/ε goes on every cell (L1 sensitivity 2), cells above
    τ = ½·ln(n)/ε are kept; empty cells are sampled without being enumerated.
    """
    adult = ctx.adult()
    names = ["age", "education", "sex", "income"]
    domains = {k: v for k, v in adult.domains.items() if k in names}
    encoder = privtab.TableEncoder(
        domains=domains,
        bounds={"age": adult.bounds["age"]},
        bins={"age": 8},
        missing="category",
    )
    table = encoder.fit_transform(adult.frame[names])
    ctx.advance("encoded age (8 bins) x education x sex x income")
    hist = privtab.thresholded_histogram(
        table,
        None,
        ctx.epsilon,
        random_state=ctx.random_state,
        accountant=ctx.accountant,
    )
    ctx.advance("released")
    # Non-private comparison: which kept cells were really observed, and their counts.
    truth = privtab.count_columns(table)
    observed = np.isin(hist.keys, truth.keys)
    true_of_kept = np.zeros(len(hist), dtype=np.int64)
    true_of_kept[observed] = truth.counts[
        np.searchsorted(truth.keys, hist.keys[observed])
    ]
    ctx.advance("compared with the true counts")

    summary = Table(title=f"thresholded histogram, ε = {ctx.epsilon:g}")
    summary.add_column("quantity")
    summary.add_column("value", justify="right")
    rows = [
        ("domain size (cells)", f"{hist.domain_size:,}"),
        ("records", f"{hist.n_rows:,}"),
        ("threshold τ = ½·ln(n)/ε", f"{hist.threshold:.2f}"),
        ("observed cells (true, non-private)", f"{len(truth):,}"),
        ("cells kept", f"{len(hist):,}"),
        ("  of which observed", f"{int(observed.sum()):,}"),
        ("  of which empty (false positives)", f"{int((~observed).sum()):,}"),
        ("records in the kept observed cells", f"{int(true_of_kept.sum()):,}"),
        ("synthetic records (⌈v − ½⌉ per cell)", f"{len(hist.to_records()):,}"),
    ]
    for name, value in rows:
        summary.add_row(name, value)
    ctx.show(summary)
    top = np.argsort(-hist.values)[:8]
    cells = hist.to_codes()[top]
    view = Table(title="largest released cells", caption="noise Lap(0, 2/ε)")
    for name in [*names, "true", "DP"]:
        view.add_column(name, justify="right" if name in ("true", "DP") else "left")
    for row, i in zip(cells, top, strict=True):
        labels = [_label(encoder.categories_[j][c]) for j, c in enumerate(row)]
        view.add_row(*labels, f"{int(true_of_kept[i]):,}", f"{hist.values[i]:,.1f}")
    ctx.show(view)


@section("privatekd", "PrivateKD: 4 attributes that discern income", steps=4)
def _privatekd(ctx: DemoContext) -> None:
    """Select 4 of Adult's 14 predictors of income with PrivateKD, next to the greedy.

    PrivateKD spends ε over k = 4 rounds (ε' = ε/16 per round in the weights, 4ε' per
    round by the sensitivity 2 of the discernibility F); the non-private greedy order
    is what it would pick with ε → ∞.
    """
    _, table = ctx.encoded()
    ctx.advance("encoded with the declared domains")
    target = table.column_index("income")
    predictors = [j for j in range(table.n_columns) if j != target]
    X = table.select([table.columns[j] for j in predictors])
    y = table.codes[:, target]
    k = 4
    greedy = privtab.greedy_discernibility(X, y, k)
    ctx.advance("non-private greedy order")
    # income's codes 0 .. cardinality - 1 are public: its categories are declared.
    selector = privtab.PrivateKD(
        k,
        ctx.epsilon,
        random_state=ctx.random_state,
        accountant=ctx.accountant,
        classes=np.arange(table.cardinalities[target]),
    ).fit(X, y)
    ctx.advance("private selection")
    full = privtab.discernibility(X, y, range(len(predictors)))
    view = Table(
        title=f"k = {k} attributes for income: greedy vs PrivateKD at ε = {ctx.epsilon:g}",
        caption="F(S) = ordered record pairs split by S and by income, per record; "
        "F(S)/F(A) is the share of what all 14 predictors discern",
    )
    view.add_column("step", justify="right")
    view.add_column("greedy (not private)")
    view.add_column("F/F(A)", justify="right")
    view.add_column("PrivateKD", style="cyan")
    view.add_column("F/F(A)", justify="right", style="cyan")
    for step in range(k):
        g, p = greedy[: step + 1], selector.selection_order_[: step + 1]
        view.add_row(
            str(step + 1),
            literal(X.columns[int(greedy[step])]),
            f"{privtab.discernibility(X, y, g) / full:.3f}",
            literal(X.columns[int(selector.selection_order_[step])]),
            f"{privtab.discernibility(X, y, p) / full:.3f}",
        )
    ctx.advance("compared")
    ctx.show(view)
    common = len(set(greedy.tolist()) & set(selector.selection_order_.tolist()))
    ctx.show(
        f"{common} of {k} attributes in common; ledger: "
        + ", ".join(f"{eps:.3g}" for _, eps in selector.privacy_ledger_)
        + f" (sum {selector.epsilon_spent_:g})"
    )


@section("projected", "Projected histogram: synthetic Adult data for income", steps=5)
def _projected(ctx: DemoContext) -> None:
    """Train logistic regression on synthetic records from a projected histogram.

    ProjectedHistogram (Vinterbo 2012) spends (1 − γ)·ε on PrivateKD to choose k
    predictors of income and γ·ε on a thresholded histogram of them and income; k and
    γ are estimated from n, d and the number of classes (no budget). A logistic
    regression trained on the synthetic records (post-processing, no further budget)
    is compared on a held-out 30 % with one trained on the original records.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import OneHotEncoder

    adult = ctx.adult()
    frame = adult.frame
    train, test = train_test_split(
        frame, test_size=0.3, random_state=0, stratify=frame["income"]
    )
    predictors = [c for c in frame.columns if c != "income"]
    n = len(train)
    encoder = privtab.TableEncoder(
        domains={c: v for c, v in adult.domains.items() if c in predictors},
        bounds=adult.bounds,
        bins=privtab.lei_bins(n, len(predictors)),
        missing="category",
    )
    X_train = encoder.fit_transform(train[predictors])
    X_test = encoder.transform(test[predictors])
    positive = adult.domains["income"][-1]
    y_train = (train["income"] == positive).to_numpy().astype(np.int64)
    y_test = (test["income"] == positive).to_numpy().astype(np.int64)
    ctx.advance(f"encoded {n:,} training records, bins = lei_bins(n, 14)")

    model = privtab.ProjectedHistogram(
        ctx.epsilon,
        random_state=ctx.random_state,
        accountant=ctx.accountant,
        classes=[0, 1],  # income is >50K or not: a public label set
    ).fit(X_train, y_train)
    X_syn, y_syn = model.synthetic(decode=False)
    ctx.advance("released the projected histogram")

    def auc(columns: list[int], X: Any, y: Any) -> float | None:
        if len(np.unique(y)) < 2:
            return None
        onehot = OneHotEncoder(
            categories=[list(range(int(X_train.cardinalities[j]))) for j in columns]
        )
        lr = LogisticRegression(max_iter=500).fit(onehot.fit_transform(X), y)
        test_codes = onehot.transform(X_test.codes[:, columns])
        return float(roc_auc_score(y_test, lr.predict_proba(test_codes)[:, 1]))

    chosen = model.selection_order_.tolist()
    all_columns = list(range(len(predictors)))
    aucs = [
        ("original data, all 14 predictors (not private)", all_columns, X_train.codes),
        (f"original data, the {len(chosen)} selected (not private)", chosen, None),
        (f"synthetic data (ε = {ctx.epsilon:g})", chosen, X_syn),
    ]
    view = Table(
        title="logistic regression for income: held-out AUC",
        caption=f"{len(y_test):,} held-out records; synthetic records: {len(y_syn):,}",
    )
    view.add_column("trained on")
    view.add_column("AUC", justify="right")
    for name, columns, X in aucs:
        if X is None:
            X, y = X_train.codes[:, columns], y_train
        else:
            y = y_syn if X is X_syn else y_train
        value = auc(columns, X, y)
        view.add_row(name, "—" if value is None else f"{value:.3f}")
        ctx.advance(f"trained on {name.split(',')[0]}")
    ctx.show(view)
    ctx.show(
        f"k = {model.n_features_} "
        f"({', '.join(literal(predictors[j]) for j in chosen)}), "
        f"γ = {model.gamma_:.3f}, {len(model.histogram_):,} kept cells above "
        f"τ = {model.histogram_.threshold:.1f}; ledger: "
        + ", ".join(
            f"{literal(label)} {eps:.3g}" for label, eps in model.privacy_ledger_
        )
        + f" (sum {model.epsilon_spent_:g})"
    )


def _label(value: Any) -> str:
    return "(missing)" if value is None else literal(value)


@section(
    "distances", "DP-DILCA: distances between the values of each attribute", steps=4
)
def _distances(ctx: DemoContext) -> None:
    """Learn DILCA distances on Adult, privately (DP-MaxRelevance) and not.

    DP-DILCA spends ε/m per attribute: h = 0.3 of it to choose the context by the
    exponential mechanism, the rest on Laplace noise of the context tables.
    """
    _, table = ctx.encoded()
    ctx.advance("encoded with the declared domains")
    exact = privtab.DILCA(context="relevance_redundancy").fit(table)
    ctx.advance("non-private DILCA_RR")
    private = privtab.DPDILCA(
        ctx.epsilon,
        method="max_relevance",
        random_state=ctx.random_state,
        accountant=ctx.accountant,
    ).fit(table)
    ctx.advance("DP-MaxRelevance")
    view = Table(
        title=f"per attribute: non-private vs DP (ε = {ctx.epsilon:g} for all "
        f"{table.n_columns} attributes)",
        caption="Pearson r between the off-diagonal distances of the two metrics",
    )
    view.add_column("attribute")
    view.add_column("DILCA_RR context")
    view.add_column("DP context", style="cyan")
    view.add_column("r", justify="right", style="cyan")
    for j, name in enumerate(table.columns):
        a, b = exact.distance_matrix(j), private.distance_matrix(j)
        upper = np.triu_indices_from(a, k=1)
        x, y = a[upper], b[upper]
        if x.size > 1 and x.std() > 0 and y.std() > 0:
            r = f"{np.corrcoef(x, y)[0, 1]:.2f}"
        else:
            r = "-"
        view.add_row(
            literal(name),
            ", ".join(literal(table.columns[i]) for i in exact.contexts_[j]),
            ", ".join(literal(table.columns[i]) for i in private.contexts_[j]),
            r,
        )
    ctx.advance("compared")
    ctx.show(view)


@section("kac", "k-anonymity by containment: binary Adult features for income", steps=5)
def _kac(ctx: DemoContext) -> None:
    """Select binary Adult features whose projection is 5-anonymous by containment.

    Greedy-DistCnt and Greedy-Ham (Zhang, Mohammed, Dave & Al Hasan) keep adding
    features while every row's 1-features are contained in those of ≥ k rows; Maximal
    picks the best of the largest maximal frequent itemsets at minimum support k. k-AC
    is a syntactic guarantee, not differential privacy: no ε is spent. Utility is the
    5-fold cross-validated AUC of a linear SVM on the selected features.
    """
    from sklearn.model_selection import cross_val_score
    from sklearn.svm import LinearSVC

    from privtab.datasets import load_adult_binary

    if "adult_binary" not in ctx._cache:
        adult = load_adult_binary()
        ctx._cache["adult_binary"] = (adult.data, adult.target.to_numpy())
    B, y = ctx._cache["adult_binary"]
    ctx.advance(f"loaded {B.shape[1]} binary features")
    k = 5

    def auc(columns: list[str]) -> float:
        model = LinearSVC(dual=False)
        scores = cross_val_score(model, B[columns], y, cv=5, scoring="roc_auc")
        return float(scores.mean())

    view = Table(
        title=f"k-AC selection on binary Adult (k = {k}, n = {len(B)})",
        caption="AC: the smallest anonymity by containment of a row; AUC: linear "
        "SVM, 5-fold cross-validation",
    )
    view.add_column("method")
    view.add_column("selected features")
    view.add_column("AC", justify="right")
    view.add_column("AUC", justify="right", style="cyan")
    for method in ("greedy_distcnt", "greedy_ham", "maximal"):
        selector = privtab.KACSelector(k, method=method).fit(B, y)
        chosen = [str(B.columns[j]) for j in selector.selection_order_]
        view.add_row(
            method,
            f"{len(chosen)}: " + ", ".join(map(literal, chosen)),
            str(selector.anonymity_),
            f"{auc(chosen):.3f}",
        )
        ctx.advance(method)
    everything = list(B.columns)
    full_ac = int(privtab.containment_anonymity(B).min())
    view.add_row(
        "all features (no anonymity)",
        f"all {len(everything)}",
        str(full_ac),
        f"{auc(everything):.3f}",
    )
    ctx.advance("compared with all features")
    ctx.show(view)


@section(
    "microagg",
    "Microaggregation release: Adult's numeric columns, ε-DP and ε-iDP",
    steps=5,
)
def _microagg(ctx: DemoContext) -> None:
    """Mask Adult's numeric columns with each calibration and compare information loss.

    Every column is ranked and cut into clusters of k = 10; each cluster's centroid
    gets Laplace noise calibrated to its sensitivity (Soria-Comas et al.): DP (plain
    Laplace on every value) and DP-UM are ε-DP, iDP-LS and iDP-CBLS are ε-individual
    DP. The four releases share the section's ε (ε/4 each). Utility is the paper's
    mean SSE (lower is better).
    """
    adult = ctx.adult()
    columns = list(adult.bounds)
    X = adult.frame[columns].to_numpy(dtype=float)
    bounds = [adult.bounds[c] for c in columns]
    ctx.advance(f"{len(columns)} numeric columns")
    parts = split_budget(ctx.epsilon, [1.0] * 4)
    view = Table(
        title=f"Microaggregation of {len(columns)} numeric Adult columns (n = {len(X)})",
        caption="mean SSE: the paper's eq. 5, distances scaled by each column's "
        "variance; ε-iDP holds with respect to the actual data set only",
    )
    view.add_column("mechanism")
    view.add_column("k", justify="right")
    view.add_column("guarantee")
    view.add_column("ε", justify="right")
    view.add_column("mean SSE", justify="right", style="cyan")
    runs = [("DP (plain Laplace)", "dp", 1), ("DP-UM", "dp", 10)]
    runs += [("iDP-LS", "idp_ls", 10), ("iDP-CBLS", "idp_cbls", 10)]
    for (name, mechanism, k), eps in zip(runs, parts, strict=True):
        masker = privtab.MicroaggregationMasker(
            k,
            eps,
            mechanism=mechanism,
            bounds=bounds,
            random_state=ctx.random_state,
            accountant=ctx.accountant,
        )
        masked = masker.fit_transform(X)
        view.add_row(
            name,
            str(k),
            "ε-DP" if mechanism == "dp" else "ε-iDP",
            f"{eps:.3g}",
            f"{privtab.mean_sse(X, masked):.3g}",
        )
        ctx.advance(name)
    ctx.show(view)


# The maxima published with WDBC (truncated to three decimals in its documentation),
# plus one unit in their last place, rounded up to two significant digits; every
# measurement is >= 0. In the column order of load_breast_cancer.
_WDBC_UPPER_BOUNDS = (
    29.0, 40.0, 190.0, 2600.0, 0.17, 0.35, 0.43, 0.21, 0.31, 0.098,  # means
    2.9, 4.9, 22.0, 550.0, 0.032, 0.14, 0.4, 0.054, 0.08, 0.04,  # standard errors
    37.0, 50.0, 260.0, 4300.0, 0.23, 1.1, 1.3, 0.3, 0.67, 0.21,  # worst values
)  # fmt: skip


@section("dpfsdr", "DPFSDR and DPFS: the features of a breast-cancer SVM", steps=4)
def _dpfsdr(ctx: DemoContext) -> None:
    """Select the features of a DP linear SVM on WDBC with DPFS and DPFSDR, next to DFS.

    WDBC (Wolberg, Street & Mangasarian 1995; the copy scikit-learn ships as
    ``load_breast_cancer``, the same 569 records as UCI's) has 30 strongly correlated
    measurements of cell nuclei. Every column is divided by a public upper bound, so
    each row has L2 norm <= √30, the declared ``data_norm``. DPFS and DPFSDR (Wang,
    Zhang & Yan 2023) get ε/2 each: a fifth ranks the features by the ε₁-DP F-score,
    the rest (``budget="total"``) is split over at most 10 SVM fits whose output noise
    is Lap(CS·Δw/ε) per weight, CS the correlated sensitivity of the records. DFS, the
    same search with no noise, is the non-private baseline. Accuracy is on a held-out
    30 %.
    """
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    wdbc = load_breast_cancer()
    X = wdbc.data / np.asarray(_WDBC_UPPER_BOUNDS)
    X_train, X_test, y_train, y_test = train_test_split(
        X, wdbc.target, test_size=0.3, random_state=0, stratify=wdbc.target
    )
    ctx.advance(f"scaled {X.shape[1]} WDBC columns by their public bounds")
    shares = split_budget(ctx.epsilon, [1.0, 1.0])
    runs: list[tuple[str, Any, float | None]] = [
        ("DFS (not private)", privtab.DPFS, None),
        ("DPFS", privtab.DPFS, shares[0]),
        ("DPFSDR", privtab.DPFSDR, shares[1]),
    ]
    view = Table(
        title=f"WDBC (n = {len(X_train)} training records), ε = {ctx.epsilon:g} in all",
        caption="C = 10; at most 10 SVM fits; CS: the correlated sensitivity of the "
        "released model's features, which multiplies its noise",
    )
    for name in ("method", "ε", "selected features", "CS"):
        view.add_column(name, justify="right" if name in ("ε", "CS") else "left")
    view.add_column("held-out accuracy", justify="right", style="cyan")
    for name, estimator, share in runs:
        budgets = (None, None) if share is None else split_budget(share, [1.0, 4.0])
        with warnings.catch_warnings():
            # The row says so: DFS is the non-private baseline.
            warnings.filterwarnings("ignore", ".*this fit is not private")
            selector = estimator(
                *budgets,
                C=10.0,
                data_norm=float(np.sqrt(X.shape[1])),
                budget="total",
                max_refits=10,
                classes=[0, 1],
                random_state=ctx.random_state,
                accountant=ctx.accountant if share is not None else None,
            ).fit(X_train, y_train)
        accuracy = selector.classifier_.score(selector.transform(X_test), y_test)
        chosen = [str(wdbc.feature_names[j]) for j in selector.selection_order_]
        view.add_row(
            name,
            f"{selector.epsilon_spent_:.3g}",
            f"{len(chosen)}: " + ", ".join(map(literal, chosen)),
            f"{selector.correlated_sensitivity_:.4g}",
            f"{accuracy:.3f}",
        )
        ctx.advance(name)
    ctx.show(view)
    ctx.show(
        f"A model that always predicts the majority class scores "
        f"{max(y_test.mean(), 1 - y_test.mean()):.3f}. Records of WDBC correlate "
        "strongly on a few features, so CS and the noise are large at small ε."
    )


#: The notice at the top of the demo's page.
DEMO_BANNER = (
    "A demonstration on public data: each release is shown next to the non-private "
    "result it is compared with, which a real release would never show. The ledger "
    "at the end is what the demo spent."
)


@dataclass
class DemoReport:
    """What the demo showed, section by section, as an HTML page (``--report``).

    :func:`run_demo` starts a section for each title and every ``ctx.show`` adds a
    rich table or a line of text to it; :meth:`to_report` turns them into a
    :class:`privtab.report.Report` (a table per rich table, its title as caption and
    every label in full; each line, and each table's caption, as a note), with the
    privacy ledger as its last section, and :meth:`to_html` renders it as the page
    of ``privtab report``. All text, including the categories and column names of
    the data, is escaped, so that the page shows it as written and runs none of it.

    Parameters
    ----------
    epsilon : float
        The budget of one section.
    seed : int or None
        The demo's seed, if it was given one.
    """

    epsilon: float
    seed: int | None = None
    sections: list[tuple[str, list[Table | str]]] = field(default_factory=list)
    accountant: BudgetAccountant | None = None
    seconds: float = 0.0

    def start(self, title: str) -> None:
        """Begin the section called ``title``."""
        self.sections.append((title, []))

    def add(self, result: Table | str) -> None:
        """Add a rich table, or a line of rich markup, to the current section."""
        if not self.sections:
            self.start("")
        self.sections[-1][1].append(result)

    def to_report(self) -> Any:
        """Return what the demo showed as a :class:`privtab.report.Report`."""
        from privtab.report import Report
        from privtab.report import Section as PageSection

        seed = (
            "operating-system entropy (no seed)"
            if self.seed is None
            else f"seed {self.seed}, fixed for reproducibility: a known seed voids "
            "the privacy of these releases"
        )
        sections = []
        for index, (title, results) in enumerate(self.sections, start=1):
            tables = tuple(_page_table(r) for r in results if isinstance(r, Table))
            notes = []
            for r in results:
                if isinstance(r, Table):
                    if r.caption:
                        notes.append(_plain(r.caption))
                else:
                    notes.append(_plain(r))
            sections.append(
                PageSection(
                    f"section-{index}",
                    _plain(title),
                    tables=tables,
                    notes=tuple(notes),
                )
            )
        if self.accountant is not None:
            sections.append(_ledger_section(self.accountant, self.seconds))
        about = {
            "details": [
                ["ε", f"{self.epsilon:g} per section, {len(self.sections)} section(s)"],
                ["noise", seed],
            ],
            "seconds": round(self.seconds, 1),
        }
        return Report("privtab demo", tuple(sections), about, DEMO_BANNER)

    def to_html(self) -> str:
        """Return the report as a self-contained HTML page (no script, no link)."""
        return str(self.to_report().to_html())


def _plain(markup: Any) -> str:
    """Return rich markup (or a rich renderable's text) as the text it shows.

    The markup is read as rich reads it, so that a value printed through
    :func:`~privtab.cli._options.literal` shows as written, without its escapes.
    """
    if isinstance(markup, Text):
        plain = markup.plain
    elif isinstance(markup, str):
        plain = Text.from_markup(markup).plain
    else:
        plain = str(markup)
    # An indent marks a sub-row ("  of which ..."); HTML would collapse its spaces.
    text = plain.lstrip(" ")
    return "\u00a0" * (len(plain) - len(text)) + text


def _page_table(table: Table) -> Any:
    """Return a rich table as a report table: its title, header and rows as text."""
    from privtab.report import Table as PageTable

    cells = [[_plain(cell) for cell in column.cells] for column in table.columns]
    return PageTable(
        tuple(_plain(column.header) for column in table.columns),
        tuple(zip(*cells, strict=True)),
        _plain(table.title) if table.title else "",
    )


def _ledger_section(accountant: BudgetAccountant, seconds: float) -> Any:
    """Return the privacy ledger as a report section, parts indented under blocks."""
    from privtab.report import Section as PageSection
    from privtab.report import Table as PageTable

    rows: list[tuple[str, str, str]] = []

    def add(entry: Any, depth: int) -> None:
        rows.append(
            ("\u2003" * depth + entry.label, f"{entry.epsilon:.6g}", entry.guarantee)
        )
        for part in entry.parts:
            add(part, depth + 1)

    for entry in accountant.ledger:
        add(entry, 0)
    budget = "∞" if accountant.epsilon == float("inf") else f"{accountant.epsilon:g}"
    return PageSection(
        "privacy-ledger",
        "privacy ledger",
        tables=(PageTable(("release", "ε", "guarantee"), tuple(rows)),),
        notes=(
            f"spent ε = {accountant.spent:.6g} of {budget} (sequential composition "
            f"over the sections) in {seconds:.1f} s",
        ),
    )


def run_demo(
    epsilon: float = 1.0,
    *,
    seed: int | None = None,
    progress: bool = True,
    sections: Iterable[str] | None = None,
    console: Console | None = None,
    report: DemoReport | None = None,
) -> BudgetAccountant:
    """Run the demo sections and print each comparison and the final ledger.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of *each* section; the accountant's budget is ``epsilon`` times
        the number of sections run.
    seed : int, optional
        Fixes the noise for reproducibility (and voids the privacy of the printed
        releases against anyone who knows it). ``None`` uses operating-system entropy.
    progress : bool, default=True
        Show a progress bar (it is drawn only on a terminal).
    sections : iterable of str, optional
        Names of the sections to run (default: all, in registration order).
    console : rich.console.Console, optional
        Where to print (default: standard output).
    report : DemoReport, optional
        Keeps every section's results and the ledger for an HTML page
        (:meth:`DemoReport.to_html`).

    Returns
    -------
    BudgetAccountant
        The accountant every section charged.

    Raises
    ------
    ValueError
        If ``epsilon`` is not finite and > 0, ``seed`` is negative, or a section name
        is unknown.
    TypeError
        If ``epsilon`` or ``seed`` has the wrong type.
    """
    epsilon = check_epsilon(epsilon)
    if seed is not None:
        seed = check_positive_int(seed, "seed", minimum=0)
    names = list(SECTIONS) if sections is None else list(sections)
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        raise ValueError(
            f"sections has unknown names {unknown!r}; available: {list(SECTIONS)!r}"
        )
    console = console if console is not None else Console()
    accountant = BudgetAccountant(epsilon * max(len(names), 1))
    random_state = None if seed is None else np.random.default_rng(seed)
    ctx = DemoContext(console, epsilon, accountant, random_state, report=report)
    chosen = [SECTIONS[n] for n in names]
    start = time.perf_counter()
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        disable=not progress,
        transient=True,
    ) as bar:
        task = bar.add_task("privtab demo", total=sum(s.steps for s in chosen))
        for part in chosen:
            console.rule(part.title)
            if report is not None:
                report.start(part.title)

            def advance(description: str, part: Section = part) -> None:
                bar.update(task, advance=1, description=f"{part.name}: {description}")

            ctx.advance = advance
            part.run(ctx)
    seconds = time.perf_counter() - start
    console.print(
        Panel(
            literal(accountant.report()),
            title="privacy ledger",
            subtitle=f"{seconds:.1f} s",
        )
    )
    if report is not None:
        report.accountant, report.seconds = accountant, seconds
    return accountant
