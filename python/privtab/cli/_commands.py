"""The ``privtab`` command line.

``privtab demo`` tours the methods on the bundled Adult data. Method subcommands
(``select``, ``histogram``, ``distances``, ``mask``, ``kac``) are added to the
:func:`main` group; they share the options defined here (``--epsilon``, ``--seed``) and
read their input with :func:`privtab.cli._io.read_table`.

Core kernels called: none directly; each subcommand runs the public estimators of
:mod:`privtab` (``PrivateKD``, ``ProjectedHistogram``, ``DILCA``/``DPDILCA``,
``MicroaggregationMasker``, ``KACSelector``), which call ``privtab._core``.
"""

from __future__ import annotations

import contextlib
import json
import math
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click
import pandas as pd
from rich.console import Console

from privtab._core import __version__
from privtab._validation import check_epsilon
from privtab.cli._demo import SECTIONS, run_demo
from privtab.exceptions import PrivtabError

__all__ = ["classes_option", "epsilon_option", "main", "seed_option"]

F = TypeVar("F", bound=Callable[..., Any])


def _epsilon_callback(
    ctx: click.Context, param: click.Parameter, value: float
) -> float:
    try:
        return check_epsilon(value)
    except (TypeError, ValueError) as exc:
        raise click.BadParameter(str(exc)) from None


def epsilon_option(default: float = 1.0, help: str | None = None) -> Callable[[F], F]:
    """Add the shared ``--epsilon`` option: a finite float > 0."""
    return click.option(
        "--epsilon",
        "-e",
        type=float,
        default=default,
        show_default=True,
        callback=_epsilon_callback,
        help=help
        or "Privacy budget ε (smaller is more private and noisier; finite and > 0).",
    )


def seed_option(help: str | None = None) -> Callable[[F], F]:
    """Add the shared ``--seed`` option: a non-negative int, or none for OS entropy."""
    return click.option(
        "--seed",
        type=click.IntRange(min=0),
        default=None,
        help=help
        or "Seed the noise for a reproducible run. A known seed voids the privacy "
        "of the output; omit it (operating-system entropy) for real releases.",
    )


def output_option(metavar: str, help: str) -> Callable[[F], F]:
    """Add the shared required ``--output/-o`` file option."""
    return click.option(
        "--output",
        "-o",
        "output_path",
        required=True,
        metavar=metavar,
        type=click.Path(dir_okay=False),
        help=help,
    )


def _parse_classes(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> list[str] | None:
    if value is None:
        return None
    labels = value.split(",")
    if "" in labels:
        raise click.BadParameter(
            f"expected labels separated by commas, got an empty label in {value!r}"
        )
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise click.BadParameter(
            f"repeats the label(s) {', '.join(map(repr, repeated))}"
        )
    return labels


def classes_option() -> Callable[[F], F]:
    """Add the ``--classes`` option: the public label set of the target column."""
    return click.option(
        "--classes",
        metavar="LABEL,LABEL,...",
        default=None,
        callback=_parse_classes,
        help="The public labels of TARGET, separated by commas and written as in IN "
        "(e.g. --classes '<=50K,>50K'); a row with another label is an error. "
        "Default: the labels found in the data, with a warning (a label held by "
        "one record would show in the output).",
    )


def _read_input(input_path: str, target: str | None = None) -> Any:
    """Read IN as a DataFrame; with ``target``, check that it is one of its columns."""
    from privtab.cli import _io

    try:
        frame = _io.read_table(input_path)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot read {input_path}: {exc}") from exc
    if target is not None and target not in frame.columns:
        raise click.BadParameter(
            f"{target!r} is not a column of {input_path}; columns: "
            f"{', '.join(map(str, frame.columns))}",
            param_hint="--target",
        )
    return frame


#: Advice in the library's warnings, and how to follow it from the shell.
_SHELL_ADVICE = {
    "with classes=[...]": "with --classes",
    "declare bounds=...": "declare them with --bounds COL=LO:HI",
}


def _shell_advice(message: str) -> str:
    for python, shell in _SHELL_ADVICE.items():
        message = message.replace(python, shell)
    return message


@contextlib.contextmanager
def _warnings_to_stderr() -> Iterator[list[str]]:
    """Collect the warnings of a release and print each once to stderr afterwards.

    Yields the list the distinct messages are put in (sorted), for JSON outputs.
    """
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield notes
    notes.extend(sorted({_shell_advice(str(w.message)) for w in caught}))
    for note in notes:
        click.echo(f"warning: {note}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="privtab")
def main() -> None:
    """privtab: differentially private feature selection and data release.

    Run `privtab demo` for a tour on the bundled Adult data set, or
    `privtab COMMAND --help` for the options of a command.
    """


@main.command(
    epilog="\b\nSections:\n"
    + "\n".join(f"  {s.name:<14} {s.title}" for s in SECTIONS.values())
)
@epsilon_option(help="Privacy budget ε of each demo section (finite and > 0).")
@seed_option()
@click.option(
    "--progress/--no-progress",
    default=True,
    show_default=True,
    help="Show a progress bar (only drawn on a terminal).",
)
@click.option(
    "--only",
    multiple=True,
    metavar="SECTION",
    help="Run only this section (repeatable). See the list below.",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    metavar="FILE.html",
    help="Also save everything the demo prints as an HTML report.",
)
def demo(
    epsilon: float,
    seed: int | None,
    progress: bool,
    only: tuple[str, ...],
    report: str | None,
) -> None:
    """Tour the methods on the Adult data, next to their non-private results.

    Every section spends at most ε; the privacy ledger printed at the end sums them
    (sequential composition).
    """
    unknown = [name for name in only if name not in SECTIONS]
    if unknown:
        raise click.BadParameter(
            f"unknown section(s) {', '.join(unknown)}; "
            f"choose from {', '.join(SECTIONS)}",
            param_hint="--only",
        )
    console = Console(record=report is not None)
    try:
        run_demo(
            epsilon,
            seed=seed,
            progress=progress,
            sections=only or None,
            console=console,
        )
    except PrivtabError as exc:
        raise click.ClickException(str(exc)) from exc
    if report is not None:
        try:
            console.save_html(report)
        except OSError as exc:
            raise click.ClickException(
                f"cannot write --report {report}: {exc}"
            ) from exc
        click.echo(f"report written to {report}", err=True)


@main.command(
    epilog="\b\nOutput, chosen by the extension of OUT:\n"
    "  .json                 the selection: attribute names in the order chosen,\n"
    "                        parameters and the privacy ledger\n"
    "  .csv, .tsv, .parquet  the input projected on the selected attributes and\n"
    "                        the target, with their original values"
)
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=False))
@output_option("OUT", "Where to write the result (.json, .csv, .tsv or .parquet).")
@click.option(
    "--method",
    type=click.Choice(["privatekd", "greedy"]),
    default="privatekd",
    show_default=True,
    help="privatekd: differentially private discernibility selection (Vinterbo "
    "2012); greedy: the exact, NON-private greedy order (spends no ε).",
)
@click.option(
    "--target", required=True, help="Name of the label column (the class to predict)."
)
@click.option(
    "--k",
    "k",
    type=click.IntRange(min=1),
    required=True,
    help="Number of attributes to select, at most the number of predictors.",
)
@classes_option()
@epsilon_option(help="Privacy budget ε of the whole selection (finite and > 0).")
@seed_option()
def select(
    input_path: str,
    output_path: str,
    method: str,
    target: str,
    k: int,
    classes: list[str] | None,
    epsilon: float,
    seed: int | None,
) -> None:
    """Select K attributes of the table IN that discern the TARGET column.

    Every column except TARGET is a candidate. Columns are encoded with their
    categories (numeric columns are binned); as nothing is declared, the domains
    come from the data, which a warning repeats: declare them through the Python
    API (TableEncoder) for a guarantee that covers them too. The labels of TARGET
    are declared with --classes.
    """
    from privtab._validation import check_labels
    from privtab.cli import _io
    from privtab.discernibility import PrivateKD, greedy_discernibility
    from privtab.table import TableEncoder

    frame = _read_input(input_path, target)
    predictors = [c for c in frame.columns if c != target]
    if not 1 <= k <= len(predictors):
        raise click.BadParameter(
            f"must be between 1 and the number of predictors ({len(predictors)}), "
            f"got {k}",
            param_hint="--k",
        )
    out = Path(output_path)
    as_json = out.suffix.lower() == ".json"
    with _warnings_to_stderr() as notes:
        try:
            encoder = TableEncoder(missing="category")
            table = encoder.fit_transform(frame[predictors])
            labels = frame[target].astype(str).to_numpy()
            if method == "privatekd":
                selector = PrivateKD(
                    k, epsilon, random_state=seed, classes=classes
                ).fit(table, labels)
                order = selector.selection_order_
                ledger = [[label, eps] for label, eps in selector.privacy_ledger_]
            else:
                if classes is not None:  # not private: only check the labels
                    check_labels(labels, classes, n_rows=len(labels), warn=False)
                order = greedy_discernibility(table, labels, k)
                ledger = []
        except (PrivtabError, ValueError, TypeError) as exc:
            raise click.ClickException(str(exc)) from exc
    chosen = [predictors[int(j)] for j in order]
    try:
        if as_json:
            result = {
                "method": method,
                "target": target,
                "k": k,
                "epsilon": epsilon if method == "privatekd" else 0.0,
                "selected": [str(c) for c in chosen],
                "selection_order": [int(j) for j in order],
                "privacy_ledger": ledger,
                "warnings": notes,
            }
            out.write_text(json.dumps(result, indent=2) + "\n")
        else:
            _io.write_table(frame[[*chosen, target]], out)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot write {output_path}: {exc}") from exc
    click.echo(f"selected ({method}): {', '.join(map(str, chosen))}")


def _parse_bounds(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, tuple[float, float]]:
    bounds: dict[str, tuple[float, float]] = {}
    for value in values:
        name, sep, rest = value.rpartition("=")
        low, colon, high = rest.partition(":")
        try:
            pair = (float(low), float(high))
        except ValueError:
            pair = (math.nan, math.nan)
        if not (sep and name and colon) or not all(map(math.isfinite, pair)):
            raise click.BadParameter(
                f"expected COLUMN=LOW:HIGH with finite numbers, got {value!r}"
            )
        if not pair[0] < pair[1]:
            raise click.BadParameter(f"LOW must be < HIGH, got {value!r}")
        bounds[name] = pair
    return bounds


@main.command(
    epilog="\b\nOutput: synthetic records, one per line, with the selected columns\n"
    "(categories; numeric columns as bin midpoints) and the target. A summary\n"
    "(k, γ, the selection, kept cells and the privacy ledger) goes to stderr."
)
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=False))
@output_option("OUT", "Where to write the synthetic data (.csv, .tsv or .parquet).")
@click.option(
    "--target", required=True, help="Name of the label column (the class to predict)."
)
@epsilon_option(help="Privacy budget ε of the whole release (finite and > 0).")
@click.option(
    "--n-features",
    "n_features",
    type=click.IntRange(min=1),
    default=None,
    help="Number of predictors to project on. Default: estimated from n, the "
    "number of columns and of classes (simulation of the paper; no ε spent). "
    "--k is a deprecated alias.",
)
@click.option(
    "--k",
    "k",
    type=click.IntRange(min=1),
    default=None,
    hidden=True,
    help="Deprecated alias of --n-features.",
)
@click.option(
    "--gamma",
    type=click.FloatRange(0, 1, min_open=True),
    default=None,
    help="Share of ε given to the histogram, in (0, 1]; the rest selects the "
    "predictors (PrivateKD). Default: the paper's estimate (no ε spent).",
)
@click.option(
    "--noise",
    type=click.Choice(["laplace", "discrete"]),
    default="laplace",
    show_default=True,
    help="Histogram noise: the paper's Laplace (exact on a fine power-of-two grid, "
    "no floating-point side channel) or the discrete Laplace (integer values).",
)
@click.option(
    "--bins",
    type=click.IntRange(min=1),
    default=None,
    help="Equal-width bins of every numeric column. Default: Lei's lei_bins(n, d - 1) "
    "with d - 1 the number of predictors.",
)
@click.option(
    "--bounds",
    multiple=True,
    metavar="COL=LO:HI",
    callback=_parse_bounds,
    help="Public bounds of a numeric column (repeatable), e.g. --bounds age=17:90. "
    "Bounds not given are taken from the data, with a warning.",
)
@classes_option()
@seed_option()
def histogram(
    input_path: str,
    output_path: str,
    target: str,
    epsilon: float,
    n_features: int | None,
    k: int | None,
    gamma: float | None,
    noise: str,
    bins: int | None,
    bounds: dict[str, tuple[float, float]],
    classes: list[str] | None,
    seed: int | None,
) -> None:
    """Release synthetic data from a DP projected histogram of the table IN.

    PrivateKD chooses N_FEATURES predictors that discern TARGET with (1 − γ)·ε, then a
    thresholded histogram of those predictors and TARGET is released with γ·ε
    (Vinterbo 2012); the synthetic records replicate each kept cell. Columns are
    encoded with their categories (numeric columns are binned); domains that are
    not declared come from the data, which a warning repeats: declare them through
    the Python API (TableEncoder) for a guarantee that covers them too, and the
    labels of TARGET with --classes (they also set the histogram's domain).
    """
    from privtab.cli import _io
    from privtab.projected import ProjectedHistogram
    from privtab.table import TableEncoder, lei_bins

    option = "--n-features"
    if k is not None:
        if n_features is not None:
            raise click.UsageError(
                "give --n-features only (--k is its deprecated alias)"
            )
        click.echo(
            "warning: --k is deprecated and will be removed; use --n-features", err=True
        )
        n_features, option = k, "--k"
    k = n_features
    frame = _read_input(input_path, target)
    predictors = [c for c in frame.columns if c != target]
    if not predictors or len(frame) < 2:
        raise click.ClickException(
            f"{input_path} needs at least 2 rows and one column besides the target"
        )
    if k is not None and k > len(predictors):
        raise click.BadParameter(
            f"must be at most the number of predictors ({len(predictors)}), got {k}",
            param_hint=option,
        )
    unknown = sorted(set(bounds) - set(map(str, predictors)))
    if unknown:
        raise click.BadParameter(
            f"{', '.join(map(repr, unknown))} is not a predictor of {input_path}",
            param_hint="--bounds",
        )
    n_bins = bins if bins is not None else lei_bins(len(frame), len(predictors))
    with _warnings_to_stderr():
        try:
            encoder = TableEncoder(
                bounds={c: bounds[str(c)] for c in predictors if str(c) in bounds},
                bins=n_bins,
                missing="category",
            )
            table = encoder.fit_transform(frame[predictors])
            labels = frame[target].astype(str).to_numpy()
            model = ProjectedHistogram(
                epsilon,
                n_features=k,
                gamma=gamma,
                noise=noise,
                random_state=seed,
                classes=classes,
            ).fit(table, labels)
            X_syn, y_syn = model.synthetic()
        except (PrivtabError, ValueError, TypeError, MemoryError) as exc:
            raise click.ClickException(str(exc)) from exc
    chosen = [predictors[int(j)] for j in model.selection_order_]
    synthetic = pd.DataFrame(X_syn, columns=chosen)
    synthetic[target] = y_syn
    try:
        _io.write_table(synthetic, Path(output_path))
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot write {output_path}: {exc}") from exc
    ledger = ", ".join(f"{label} {eps:.6g}" for label, eps in model.privacy_ledger_)
    click.echo(
        f"k = {model.n_features_}, gamma = {model.gamma_:.4g}\n"
        f"selected: {', '.join(map(str, chosen))}\n"
        f"kept cells: {len(model.histogram_)} (threshold "
        f"{model.histogram_.threshold:.4g}); synthetic records: {len(synthetic)}\n"
        f"privacy ledger: {ledger} (total {model.epsilon_spent_:g})",
        err=True,
    )


@main.command(
    "mask",
    short_help="Release a numeric table by microaggregation: ε-DP or ε-iDP.",
    epilog="The masked table goes to OUT; the mechanism, the bounds used and the "
    "privacy ledger (ε-DP or ε-iDP per column) go to stderr.",
)
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=False))
@output_option("OUT", "Where to write the masked table (.csv, .tsv or .parquet).")
@click.option(
    "--mechanism",
    type=click.Choice(["idp_cbls", "idp_ls", "dp"]),
    default="idp_cbls",
    show_default=True,
    help="Centroid noise: iDP-CBLS and iDP-LS (ε-individual DP, local sensitivity "
    "at the actual data) or DP-UM (ε-DP, global sensitivity from the bounds; with "
    "--k 1 plain Laplace noise).",
)
@click.option(
    "--k",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Minimum cluster size of the individual ranking (>= 3 for idp_cbls).",
)
@epsilon_option(help="Privacy budget ε of the whole table, split over its columns.")
@click.option(
    "--bounds",
    "bounds",
    multiple=True,
    callback=_parse_bounds,
    metavar="COL=LO:HI",
    help="Public domain of a numeric column (repeatable). Columns without bounds get "
    "[0, 1.5·max] from the data, with a warning: the domain is then not covered.",
)
@click.option(
    "--clip/--no-clip",
    default=False,
    show_default=True,
    help="Clip values outside their bounds instead of stopping with an error.",
)
@seed_option()
def mask(
    input_path: str,
    output_path: str,
    mechanism: str,
    k: int,
    epsilon: float,
    bounds: dict[str, tuple[float, float]],
    clip: bool,
    seed: int | None,
) -> None:
    """Mask every numeric column of the table IN by microaggregation and noise.

    Each numeric column is ranked and cut into clusters of K consecutive values;
    every cluster's centroid gets Laplace noise calibrated to its sensitivity and is
    clamped to the column's bounds (Soria-Comas et al.). Non-numeric columns are
    copied unchanged. ε is split equally over the numeric columns.
    """
    from privtab.cli import _io
    from privtab.microagg import MicroaggregationMasker

    frame = _read_input(input_path)
    with _warnings_to_stderr():
        try:
            masker = MicroaggregationMasker(
                k,
                epsilon,
                mechanism=mechanism,
                bounds=bounds,
                out_of_bounds="clip" if clip else "raise",
                random_state=seed,
            )
            masked = masker.fit_transform(frame)
        except (PrivtabError, ValueError, TypeError, MemoryError) as exc:
            raise click.ClickException(str(exc)) from exc
    try:
        _io.write_table(masked, Path(output_path))
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot write {output_path}: {exc}") from exc
    ledger = "\n".join(
        f"  {entry.label}: {entry.epsilon:.6g} ({entry.guarantee})"
        for entry in masker.privacy_ledger_
    )
    used = ", ".join(
        f"{name}=[{lo:.6g}, {hi:.6g}]"
        for name, (lo, hi) in zip(masker.feature_names_in_, masker.bounds_, strict=True)
    )
    click.echo(
        f"mechanism: {mechanism}, k = {k}, {masker.n_features_in_} numeric columns "
        "masked\n"
        f"bounds: {used}\n"
        f"privacy ledger (total {masker.epsilon_spent_:g}):\n{ledger}",
        err=True,
    )


@main.command(
    epilog="\b\nOutput (JSON): for every column, its context (the columns whose\n"
    "values explain it), its categories and the matrix of distances between them,\n"
    "plus the method, ε and the privacy ledger."
)
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=False))
@output_option("OUT.json", "Where to write the distances (JSON).")
@click.option(
    "--method",
    type=click.Choice(
        [
            "max_relevance",
            "max_dependency",
            "mean_su",
            "baseline",
            "dilca_m",
            "dilca_rr",
        ]
    ),
    default="max_relevance",
    show_default=True,
    help="DP-DILCA context selection (max_relevance, max_dependency, mean_su, or the "
    "baseline of noisy pairwise tables), or the NON-private DILCA_M / DILCA_RR "
    "(dilca_m, dilca_rr: spend no ε).",
)
@click.option(
    "--context-size",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="k, the context size of max_relevance and max_dependency.",
)
@click.option(
    "--bins",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Equal-width bins of every numeric column (the paper used 5).",
)
@epsilon_option(help="Privacy budget ε of the whole metric, ε/m per column.")
@seed_option()
def distances(
    input_path: str,
    output_path: str,
    method: str,
    context_size: int,
    bins: int,
    epsilon: float,
    seed: int | None,
) -> None:
    """Learn distances between the values of every categorical column of IN.

    DILCA (Ienco et al.) measures how differently two values of a column
    distribute the values of its context columns; DP-DILCA (Battaglia, Celano and
    Pensa 2021) chooses the context and releases the tables under ε-DP. Domains
    come from the data, which a warning repeats: declare them through the Python
    API (TableEncoder) for a guarantee that covers them too.
    """
    from privtab.dilca import DILCA, DPDILCA
    from privtab.table import TableEncoder

    frame = _read_input(input_path)
    with _warnings_to_stderr() as notes:
        try:
            table = TableEncoder(missing="category", bins=bins).fit_transform(frame)
            if method in ("dilca_m", "dilca_rr"):
                context = "mean_su" if method == "dilca_m" else "relevance_redundancy"
                model = DILCA(context=context).fit(table)
                ledger: list = []
                spent = 0.0
            else:
                model = DPDILCA(
                    epsilon, method=method, context_size=context_size, random_state=seed
                ).fit(table)
                ledger = [[label, eps] for label, eps in model.privacy_ledger_]
                spent = model.epsilon_spent_
        except (PrivtabError, ValueError, TypeError) as exc:
            raise click.ClickException(str(exc)) from exc
    columns = [str(c) for c in table.columns]
    result = {
        "method": method,
        "epsilon": spent,
        "columns": {
            name: {
                "context": [columns[int(j)] for j in model.contexts_[i]],
                "categories": [_json_value(v) for v in table.categories[i]],
                "distances": model.distance_matrix(i).tolist(),
            }
            for i, name in enumerate(columns)
        },
        "privacy_ledger": ledger,
        "warnings": notes,
    }
    try:
        Path(output_path).write_text(json.dumps(result, indent=2) + "\n")
    except OSError as exc:
        raise click.ClickException(f"cannot write {output_path}: {exc}") from exc
    click.echo(
        f"distances ({method}) for {len(columns)} columns written to {output_path}"
    )


@main.command(
    epilog="\b\nOutput, chosen by the extension of OUT:\n"
    "  .json                 the selection: feature names in the order added,\n"
    "                        AC achieved, k-anonymity and utility\n"
    "  .csv, .tsv, .parquet  the input projected on the selected features and\n"
    "                        the target"
)
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=False))
@output_option("OUT", "Where to write the result (.json, .csv, .tsv or .parquet).")
@click.option(
    "--k",
    "k",
    type=click.IntRange(min=1),
    required=True,
    help="Anonymity by containment to guarantee: every row's selected 1-features are "
    "contained in those of at least K rows (itself included).",
)
@click.option(
    "--method",
    type=click.Choice(["greedy_distcnt", "greedy_ham", "maximal", "maximal_feasible"]),
    default="greedy_distcnt",
    show_default=True,
    help="greedy_distcnt: add the feature that separates most new (positive, "
    "negative) row pairs each round; greedy_ham: add features by decreasing "
    "Hamming utility (both stop at the first feature that breaks K-AC); maximal: "
    "the best (by DistCnt) of the TOP_T largest maximal frequent itemsets with "
    "support K; maximal_feasible: the same over the exact maximal K-AC sets.",
)
@click.option(
    "--top-t",
    "top_t",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="maximal methods: number of largest maximal sets compared.",
)
@click.option(
    "--max-sets",
    type=click.IntRange(min=1),
    default=None,
    help="maximal methods: stop the enumeration after this many maximal sets "
    "(default: no limit).",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0),
    default=None,
    help="maximal methods: stop the enumeration after this many seconds "
    "(default: no limit).",
)
@click.option(
    "--target", required=True, help="Name of the binary label column (two classes)."
)
@click.option(
    "--skip-infeasible/--stop-at-infeasible",
    default=False,
    show_default=True,
    help="Skip a feature that would break K-AC and continue, instead of stopping "
    "(the paper's rule).",
)
def kac(
    input_path: str,
    output_path: str,
    k: int,
    method: str,
    top_t: int,
    max_sets: int | None,
    time_limit: float | None,
    target: str,
    skip_infeasible: bool,
) -> None:
    """Select binary features of IN whose projection is K-anonymous by containment.

    Every column except TARGET must hold 0/1 values; TARGET must have exactly two
    classes. k-anonymity by containment (Zhang et al.) is a syntactic guarantee on
    the released columns, not differential privacy: no ε is spent.
    """
    from privtab.cli import _io
    from privtab.kac import KACSelector

    frame = _read_input(input_path, target)
    features = [c for c in frame.columns if c != target]
    if not features:
        raise click.ClickException(f"{input_path} has no column besides {target!r}")
    out = Path(output_path)
    with _warnings_to_stderr() as notes:
        try:
            selector = KACSelector(
                k,
                method=method,
                top_t=top_t,
                skip_infeasible=skip_infeasible,
                max_sets=max_sets,
                time_limit=time_limit,
            ).fit(frame[features], frame[target].to_numpy())
        except (PrivtabError, ValueError, TypeError) as exc:
            raise click.ClickException(str(exc)) from exc
    chosen = [str(features[int(j)]) for j in selector.selection_order_]
    try:
        if out.suffix.lower() == ".json":
            result = {
                "method": method,
                "target": target,
                "k": k,
                "selected": chosen,
                "selection_order": selector.selection_order_.tolist(),
                "anonymity": selector.anonymity_,
                "k_anonymity": selector.k_anonymity_,
                "distcnt": selector.utility_,
                "complete": selector.complete_,
                "warnings": notes,
            }
            out.write_text(json.dumps(result, indent=2) + "\n")
        else:
            _io.write_table(frame[[*chosen, target]], out)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot write {output_path}: {exc}") from exc
    click.echo(
        f"selected ({method}, k = {k}): {', '.join(chosen) if chosen else '(none)'}"
    )
    click.echo(
        f"anonymity by containment: {selector.anonymity_} (k-anonymity "
        f"{selector.k_anonymity_}); DistCnt utility: {selector.utility_:.4f}"
    )
    if not selector.complete_:
        click.echo(
            "the enumeration of maximal sets stopped at --max-sets or --time-limit: "
            "the selection is the best of the sets found"
        )


def _json_value(value: Any) -> Any:
    """Return a category as JSON: numbers stay numbers, the rest becomes text."""
    if value is None:
        return None
    if isinstance(value, bool | int | float | str):
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)


if __name__ == "__main__":
    main()
