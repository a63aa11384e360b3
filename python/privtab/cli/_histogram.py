"""``privtab histogram``: synthetic data from a DP projected histogram.

Core kernels called: none directly; :class:`~privtab.ProjectedHistogram` (PrivateKD,
then a thresholded sparse histogram) calls the ``privtab._core`` partition and
histogram kernels. The method (Vinterbo 2012) and its reference:
:mod:`privtab.projected`.
"""

from __future__ import annotations

import click
import pandas as pd

from privtab.cli._options import (
    Encoding,
    allow_inferred_option,
    check_columns,
    choice_option,
    classes_option,
    cluster_options,
    command,
    count_option,
    encode_table,
    encoding_options,
    epsilon_option,
    input_argument,
    labels_of,
    open_input,
    option,
    output_option,
    refuse_inferred_domains,
    release,
    renamed_option,
    seed_option,
    target_option,
    write_output,
)
from privtab.cli._progress import working

__all__ = ["histogram"]


@command(
    terms={
        "n_features": "--n-features N",
        "k": "--n-features N",
        "gamma": "--gamma GAMMA",
        "noise": "--noise NOISE",
    },
    epilog="\b\nOutput: synthetic records, one per line, with the selected columns\n"
    "(categories; numeric columns as bin midpoints; an empty cell only in a\n"
    "column that may be missing, see --missing) and the target. A summary (the\n"
    "number of predictors, γ, the selection, kept cells and the privacy ledger)\n"
    "goes to stderr, after one line per predictor that says how it was encoded\n"
    "(categories or bins, declared or taken from the data).",
)
@input_argument(partitions=True)
@output_option("OUT", "Where to write the synthetic data (.csv, .tsv or .parquet).")
@target_option()
@epsilon_option(help="Privacy budget ε of the whole release (finite and > 0).")
@count_option(
    "--n-features",
    "n_features",
    help="Number of predictors to project on. Default: estimated from n, the "
    "number of columns and of classes (simulation of the paper; no ε spent).",
)
@renamed_option("--k", "n_features", "--n-features")
@option(
    "--gamma",
    type=click.FloatRange(0, 1, min_open=True),
    help="Share of ε given to the histogram, in (0, 1]; the rest selects the "
    "predictors (PrivateKD). Default: the paper's estimate (no ε spent).",
)
@choice_option(
    "--noise",
    ["laplace", "discrete"],
    "Histogram noise: the paper's Laplace (exact on a fine power-of-two grid, "
    "no floating-point side channel) or the discrete Laplace (integer values).",
)
@encoding_options(
    bins_help="Equal-width bins of every numeric column. Default: Lei's "
    "lei_bins(n, d - 1) with d - 1 the number of predictors.",
)
@classes_option()
@allow_inferred_option("categories, bin midpoints and labels of the synthetic records")
@seed_option()
@cluster_options
def histogram(
    input_path: str,
    output_path: str,
    target: str,
    epsilon: float,
    n_features: int | None,
    gamma: float | None,
    noise: str,
    encoding: Encoding,
    classes: list[str] | None,
    allow_inferred: bool,
    seed: int | None,
    scheduler: str | None,
    workers: int | None,
) -> None:
    """Release synthetic data from a DP projected histogram of the table IN.

    PrivateKD chooses N_FEATURES predictors that discern TARGET with (1 − γ)·ε, then a
    thresholded histogram of those predictors and TARGET is released with γ·ε
    (Vinterbo 2012); the synthetic records replicate each kept cell. Columns are
    encoded with their categories (numeric columns are binned, except those named by
    --categorical and integer codes spanning at most 32 values). The synthetic
    records show the domains, so they are public: the categories of every text
    predictor (--domain), the bounds of every numeric one (--bounds) and the labels
    of TARGET (--classes, which also set the histogram's domain). Taking them from
    the data instead needs --allow-inferred-domains.

    A Parquet IN (a file or a directory of partitions) is read one partition at a
    time on a Dask cluster with --scheduler or --workers (a directory always so);
    the release is the one made in memory for the same seed.
    """
    from privtab.projected import ProjectedHistogram

    columns = check_columns(input_path, target, encoding.named, "predictor")
    _check_n_features(n_features, len(columns))
    with open_input(input_path, target, scheduler, workers) as frame:
        predictors = [c for c in frame.columns if c != target]
        n_rows = len(frame)
        if n_rows < 2:
            raise click.ClickException(f"{input_path} needs at least 2 rows")
        with release(), working("projected histogram"):
            encoder, table = encode_table(frame[predictors], encoding, "predictor")
            refuse_inferred_domains(
                encoder.inferred_,
                allow_inferred,
                labels=target if classes is None else None,
            )
            labels = labels_of(frame, target)
            model = ProjectedHistogram(
                epsilon,
                n_features=n_features,
                gamma=gamma,
                noise=noise,
                random_state=seed,
                classes=classes,
            ).fit(table, labels)
            X_syn, y_syn = model.synthetic()
    chosen = [predictors[int(j)] for j in model.selection_order_]
    synthetic = pd.DataFrame(X_syn, columns=chosen)
    synthetic[target] = y_syn
    write_output(output_path, None, synthetic)
    ledger = ", ".join(f"{label} {eps:.6g}" for label, eps in model.privacy_ledger_)
    click.echo(
        f"predictors projected on: {model.n_features_}, gamma = {model.gamma_:.4g}\n"
        f"selected: {', '.join(map(str, chosen))}\n"
        f"kept cells: {len(model.histogram_)} (threshold "
        f"{model.histogram_.threshold:.4g}); synthetic records: {len(synthetic)}\n"
        f"privacy ledger: {ledger} (total {model.epsilon_spent_:g})",
        err=True,
    )


def _check_n_features(n_features: int | None, n_predictors: int) -> None:
    """Refuse ``--n-features`` beyond the predictors of IN, or IN without one."""
    if n_predictors == 0:
        raise click.BadParameter(
            "IN needs at least one column besides the target", param_hint="--target"
        )
    if n_features is not None and n_features > n_predictors:
        raise click.BadParameter(
            f"must be at most the number of predictors ({n_predictors}), got "
            f"{n_features}",
            param_hint="--n-features",
        )
