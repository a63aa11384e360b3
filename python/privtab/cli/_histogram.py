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
    allow_inferred_option,
    bounds_option,
    choice_option,
    classes_option,
    cluster_options,
    count_option,
    declared_bounds,
    declared_domains,
    domain_option,
    encode,
    epsilon_option,
    input_argument,
    labels_of,
    open_input,
    option,
    output_option,
    refuse_inferred_domains,
    release,
    seed_option,
    target_option,
    write_output,
)

__all__ = ["histogram"]


@click.command(
    epilog="\b\nOutput: synthetic records, one per line, with the selected columns\n"
    "(categories; numeric columns as bin midpoints) and the target. A summary\n"
    "(k, γ, the selection, kept cells and the privacy ledger) goes to stderr."
)
@input_argument(partitions=True)
@output_option("OUT", "Where to write the synthetic data (.csv, .tsv or .parquet).")
@target_option()
@epsilon_option(help="Privacy budget ε of the whole release (finite and > 0).")
@count_option(
    "--n-features",
    "n_features",
    help="Number of predictors to project on. Default: estimated from n, the "
    "number of columns and of classes (simulation of the paper; no ε spent). "
    "--k is a deprecated alias.",
)
@count_option("--k", "k", hidden=True, help="Deprecated alias of --n-features.")
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
@count_option(
    "--bins",
    help="Equal-width bins of every numeric column. Default: Lei's lei_bins(n, d - 1) "
    "with d - 1 the number of predictors.",
)
@domain_option()
@bounds_option(
    "Public bounds of a numeric column (repeatable), e.g. --bounds age=17:90."
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
    k: int | None,
    gamma: float | None,
    noise: str,
    bins: int | None,
    domains: dict[str, list[str]],
    bounds: dict[str, tuple[float, float]],
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
    encoded with their categories (numeric columns are binned). The synthetic
    records show the domains, so they are public: the categories of every text
    predictor (--domain), the bounds of every numeric one (--bounds) and the labels
    of TARGET (--classes, which also set the histogram's domain). Taking them from
    the data instead needs --allow-inferred-domains.

    A Parquet IN (a file or a directory of partitions) is read one partition at a
    time on a Dask cluster with --scheduler or --workers (a directory always so);
    the release is the one made in memory for the same seed.
    """
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
    with open_input(input_path, target, scheduler, workers) as frame:
        predictors = [c for c in frame.columns if c != target]
        n_rows = len(frame)
        if not predictors or n_rows < 2:
            raise click.ClickException(
                f"{input_path} needs at least 2 rows and one column besides the target"
            )
        if k is not None and k > len(predictors):
            raise click.BadParameter(
                f"must be at most the number of predictors ({len(predictors)}), got {k}",
                param_hint=option,
            )
        n_bins = bins if bins is not None else lei_bins(n_rows, len(predictors))
        with release():
            encoder = TableEncoder(
                domains=declared_domains(frame[predictors], domains, "predictor"),
                bounds=declared_bounds(frame[predictors], bounds, "predictor"),
                bins=n_bins,
                missing="category",
            )
            table = encode(encoder, frame[predictors])
            refuse_inferred_domains(
                encoder.inferred_,
                allow_inferred,
                labels=target if classes is None else None,
            )
            labels = labels_of(frame, target)
            model = ProjectedHistogram(
                epsilon,
                n_features=k,
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
        f"k = {model.n_features_}, gamma = {model.gamma_:.4g}\n"
        f"selected: {', '.join(map(str, chosen))}\n"
        f"kept cells: {len(model.histogram_)} (threshold "
        f"{model.histogram_.threshold:.4g}); synthetic records: {len(synthetic)}\n"
        f"privacy ledger: {ledger} (total {model.epsilon_spent_:g})",
        err=True,
    )
