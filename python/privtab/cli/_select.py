"""``privtab select``: choose the attributes of a table that predict a target.

Two families share the command. ``privatekd`` and ``greedy`` choose ``--n-features`` attributes
that discern the target (Vinterbo 2012); ``dpfsdr`` and ``dpfs`` choose the numeric
features of a DP linear SVM on correlated data and release its perturbed weights
(Wang, Zhang and Yan 2023). Each family has its own options; giving one of the other
family's is an error, never silently ignored.

Core kernels called: none directly; :class:`~privtab.PrivateKD`,
:func:`~privtab.greedy_discernibility`, :class:`~privtab.DPFSDR` and
:class:`~privtab.DPFS` call the ``privtab._core`` partition and correlation kernels.
The full references: :mod:`privtab.discernibility` and :mod:`privtab.dpfsdr`.
"""

from __future__ import annotations

from typing import Any

import click
import numpy as np
import pandas as pd
from click.core import ParameterSource

from privtab.cli._options import (
    Encoding,
    allow_inferred_option,
    check_columns,
    check_projection,
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
    ledger_pairs,
    open_input,
    option,
    output_option,
    projection_option,
    refuse_inferred_domains,
    release,
    renamed_option,
    seed_option,
    target_option,
    write_output,
)
from privtab.cli._progress import working

__all__ = ["select"]

_DISCERNIBILITY = ("privatekd", "greedy")
_CORRELATED = ("dpfsdr", "dpfs")

_FRACTION = click.FloatRange(0, 1, min_open=True)
_POSITIVE = click.FloatRange(0, min_open=True)

#: The options that belong to one family of methods, and that family.
_FAMILY_OPTIONS = {
    "n_features": _DISCERNIBILITY,
    "epsilon": _DISCERNIBILITY,
    "domains": _DISCERNIBILITY,
    "bounds": (*_DISCERNIBILITY, *_CORRELATED),
    "bins": _DISCERNIBILITY,
    "clip": _DISCERNIBILITY,
    "missing": _DISCERNIBILITY,
    "categorical": _DISCERNIBILITY,
    "allow_inferred": _CORRELATED,
    "epsilon_selection": _CORRELATED,
    "epsilon_training": _CORRELATED,
    "delta": _CORRELATED,
    "record_delta": _CORRELATED,
    "C": _CORRELATED,
    "data_norm": _CORRELATED,
    "huber_h": _CORRELATED,
    "training_budget": _CORRELATED,
    "training": _CORRELATED,
    "correlation": _CORRELATED,
    "max_refits": _CORRELATED,
}

#: The options a family cannot run without.
_REQUIRED = {
    "privatekd": ("n_features",),
    "greedy": ("n_features",),
    "dpfsdr": ("epsilon_selection", "epsilon_training"),
    "dpfs": ("epsilon_selection", "epsilon_training"),
}


def _flag(ctx: click.Context, name: str) -> click.Parameter:
    return next(p for p in ctx.command.params if p.name == name)


def _check_family_options(ctx: click.Context, method: str) -> None:
    """Reject options of the other family; require the method's own."""
    wrong = [
        _flag(ctx, name).opts[0]
        for name, methods in _FAMILY_OPTIONS.items()
        if method not in methods
        and ctx.get_parameter_source(name)
        not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)
    ]
    if wrong:
        others = _CORRELATED if method in _DISCERNIBILITY else _DISCERNIBILITY
        raise click.UsageError(
            f"{', '.join(wrong)} cannot be used with --method {method} (only with "
            f"{' or '.join(others)})",
            ctx,
        )
    for name in _REQUIRED[method]:
        if ctx.params[name] is None:
            if method in _DISCERNIBILITY:
                raise click.MissingParameter(ctx=ctx, param=_flag(ctx, name))
            raise click.UsageError(
                f"Missing option '{_flag(ctx, name).opts[0]}' "
                f"(required with --method {method}).",
                ctx,
            )


@command(
    terms={
        "k": "--n-features N",
        "n_features": "--n-features N",
        "epsilon_selection": "--epsilon-selection ε₁",
        "epsilon_training": "--epsilon-training ε₂",
        "budget": "--training-budget BUDGET",
        "training": "--training TRAINING",
        "correlation": "--correlation CORRELATION",
        "max_refits": "--max-refits N",
        "delta": "--delta DELTA",
        "record_delta": "--record-delta RECORD_DELTA",
        "C": "--C C",
    },
    epilog="\b\nOutput, chosen by the extension of OUT:\n"
    "  .json                 the selection: attribute names in the order chosen,\n"
    "                        parameters and the privacy ledger; with dpfsdr and\n"
    "                        dpfs also the released SVM (coef, intercept, classes),\n"
    "                        while its training accuracy, correlated sensitivity\n"
    "                        and a data norm taken from the data, computed without\n"
    "                        noise, go to stderr only, as do the warnings\n"
    "  .csv, .tsv, .parquet  only with --write-projection: the input projected on\n"
    "                        the selected attributes and the target, with their\n"
    "                        original values (raw data, not covered)\n"
    "\b\nOptions of each method:\n"
    "  privatekd, greedy  --n-features (required), --epsilon, --domain,\n"
    "                     --bounds, --bins, --clip, --missing,\n"
    "                     --categorical\n"
    "  dpfsdr, dpfs       --epsilon-selection, --epsilon-training (required),\n"
    "                     --training, --correlation, --training-budget,\n"
    "                     --max-refits, --delta, --record-delta, --C,\n"
    "                     --bounds or --data-norm, --allow-inferred-domains",
)
@input_argument(partitions=True)
@output_option(
    "OUT",
    "Where to write the result: .json, or .csv, .tsv or .parquet with "
    "--write-projection.",
    formats=("json", "table"),
)
@projection_option()
@choice_option(
    "--method",
    [*_DISCERNIBILITY, *_CORRELATED],
    "privatekd: differentially private discernibility selection (Vinterbo "
    "2012); greedy: the exact, NON-private greedy order (spends no ε); dpfsdr, dpfs: "
    "DP feature selection for correlated numeric data with and without dynamic "
    "relevance (Wang, Zhang and Yan 2023), releasing a DP linear SVM.",
)
@target_option()
@count_option(
    "--n-features",
    "n_features",
    help="Number of attributes to select, at most the number of predictors "
    "(privatekd and greedy: required).",
)
@renamed_option("--k", "n_features", "--n-features")
@classes_option()
@encoding_options(
    bins_help="Equal-width bins of every numeric predictor (privatekd, greedy). "
    "Default: Lei's lei_bins(n, d) with d the number of predictors.",
    bounds_help="Public bounds of a numeric predictor (repeatable), e.g. --bounds "
    "age=17:90 (privatekd, greedy: the bins; dpfsdr, dpfs: mapped to [-1, 1]). "
    "Bounds not given are taken from the data, with a warning.",
    clip_help="Put a number outside its --bounds into the nearest end bin instead "
    "of stopping with an error (privatekd, greedy).",
)
@allow_inferred_option("the labels of TARGET, as the classes of the SVM; dpfsdr, dpfs")
@epsilon_option(
    1.0, "Privacy budget ε of the whole selection (privatekd; finite and > 0)."
)
@epsilon_option(
    None,
    "ε₁ of the noisy F-score importance that ranks the candidates (dpfsdr, dpfs).",
    "--epsilon-selection",
)
@epsilon_option(
    None,
    "ε₂ of the perturbed SVM weights: of every refit, or of all of them with "
    "--training-budget total (dpfsdr, dpfs).",
    "--epsilon-training",
)
@choice_option(
    "--training-budget",
    ["total", "per_refit"],
    "total: ε₂ is split over --max-refits refits and the selection spends exactly "
    "ε₁ + ε₂; per_refit: each refit of the SVM releases weights with ε₂, so r "
    "refits spend ε₁ + r·ε₂ (the paper's algorithm, honestly accounted).",
)
@choice_option(
    "--training",
    ["output", "objective"],
    "How each refit's SVM is made private: output (Laplace noise on the weights, "
    "the paper's) or objective (Chaudhuri et al.'s objective perturbation, far less "
    "noise at the same ε).",
)
@option(
    "--correlation",
    default="data",
    help="data: the noise is scaled by the records' correlated sensitivity, "
    "computed from the data without noise (the paper's); none: plain ε-DP for one "
    "record; an integer G: ε-DP for any G records replaced together.",
)
@count_option(
    "--max-refits",
    help="Stop the search after this many SVM fits. Default: the number of "
    "predictors with --training-budget total, else the most the method can make.",
)
@option(
    "--delta",
    type=_FRACTION,
    default=0.9,
    help="Correlation filter: a column whose Pearson θ with an earlier one is >= "
    "DELTA is dropped.",
)
@option(
    "--record-delta",
    type=_FRACTION,
    default=0.8,
    help="Records correlated at |θ| >= RECORD_DELTA count in the correlated "
    "sensitivity that scales the SVM's noise.",
)
@option(
    "--C",
    "C",
    type=_POSITIVE,
    default=1.0,
    help="Inverse regularisation of the SVM, λ = 1/(C·n); the noise grows with C.",
)
@option(
    "--data-norm",
    type=_POSITIVE,
    help="Instead of --bounds: a public bound on the L2 norm of a row of predictors "
    "(rows are scaled by it and clipped to norm 1; the paper's preprocessing).",
)
@option(
    "--huber-h",
    "huber_h",
    type=_POSITIVE,
    default=0.5,
    help="Width h of the Huber hinge of the SVM (dpfsdr, dpfs): its curvature bound "
    "1/(2h) sets the objective perturbation's extra regulariser; a larger h (e.g. 2) "
    "keeps more signal at small ε.",
)
@seed_option()
@cluster_options
@click.pass_context
def select(
    ctx: click.Context,
    input_path: str,
    output_path: str,
    write_projection: bool,
    method: str,
    target: str,
    n_features: int | None,
    classes: list[str] | None,
    encoding: Encoding,
    allow_inferred: bool,
    epsilon: float,
    epsilon_selection: float | None,
    epsilon_training: float | None,
    training_budget: str,
    training: str,
    correlation: str,
    max_refits: int | None,
    delta: float,
    record_delta: float,
    C: float,
    data_norm: float | None,
    huber_h: float,
    seed: int | None,
    scheduler: str | None,
    workers: int | None,
) -> None:
    """Select attributes of the table IN that predict the TARGET column.

    Every column except TARGET is a candidate.

    privatekd and greedy select N_FEATURES attributes that discern TARGET. Columns
    are encoded with their categories (numeric columns are binned, except those
    named by --categorical and integer codes spanning at most 32 values); the
    categories not declared with --domain and the bounds not declared with --bounds
    come from the data, which a warning repeats (OUT names the selected attributes,
    not their values).

    dpfsdr and dpfs need numeric predictors. They drop columns correlated at
    >= DELTA, rank the rest by an ε₁-DP F-score and add features while the training
    accuracy of a DP linear SVM strictly improves (--training output or objective
    perturbation; --correlation data scales its noise by the records' correlated
    sensitivity, as the paper). Declare --bounds for a guarantee that covers the
    scaling. OUT lists the classes of the SVM: without
    --classes they come from the data, which needs --allow-inferred-domains.

    The labels of TARGET are declared with --classes.

    privatekd and greedy read a Parquet IN (a file or a directory of partitions)
    one partition at a time on a Dask cluster with --scheduler or --workers (a
    directory always so); the selection is the one made in memory for the same
    seed. dpfsdr and dpfs read IN in memory.
    """
    _check_family_options(ctx, method)
    if method in _CORRELATED and (scheduler is not None or workers is not None):
        raise click.UsageError(
            f"--scheduler and --workers cannot be used with --method {method} "
            f"(only with {' or '.join(_DISCERNIBILITY)})",
            ctx,
        )
    check_projection(output_path, write_projection)
    if method in _CORRELATED:
        refuse_inferred_domains(
            [], allow_inferred, labels=target if classes is None else None
        )
    predictors = check_columns(input_path, target, encoding.named, "predictor")
    if method in _DISCERNIBILITY:
        assert n_features is not None
        if not 1 <= n_features <= len(predictors):
            raise click.BadParameter(
                f"must be between 1 and the number of predictors ({len(predictors)}), "
                f"got {n_features}",
                param_hint="--n-features",
            )
    with open_input(input_path, target, scheduler, workers) as frame:
        predictors = [c for c in frame.columns if c != target]
        labels = labels_of(frame, target)
        if method in _CORRELATED:
            from privtab.dpfsdr import DPFS, DPFSDR
            from privtab.engine import is_distributed

            if is_distributed(frame):  # a directory of partitions, read in memory
                frame = frame.compute()
                labels = labels_of(frame, target)

            estimator = (DPFSDR if method == "dpfsdr" else DPFS)(
                epsilon_selection,
                epsilon_training,
                delta=delta,
                record_delta=record_delta,
                C=C,
                bounds=dict(encoding.bounds) if encoding.bounds else None,
                data_norm=data_norm,
                huber_h=huber_h,
                training=training,
                correlation=_correlation(correlation),
                budget=training_budget,
                max_refits=max_refits,
                classes=classes,
                random_state=seed,
            )
            _select_correlated(estimator, method, frame, labels, target, output_path)
            return
        assert n_features is not None
        with release(), working(f"selecting {n_features} attributes ({method})"):
            _, table = encode_table(frame[predictors], encoding, "predictor")
            order, ledger = _discerning_order(
                table, labels, method, n_features, epsilon, classes, seed
            )
        chosen = [predictors[int(j)] for j in order]
        result = {
            "method": method,
            "target": target,
            "k": n_features,
            "epsilon": epsilon if method == "privatekd" else 0.0,
            "selected": [str(c) for c in chosen],
            "selection_order": [int(j) for j in order],
            "privacy_ledger": ledger,
        }
        write_output(output_path, result, frame[[*chosen, target]])
        click.echo(f"selected ({method}): {', '.join(map(str, chosen))}")


def _discerning_order(
    table: Any,
    labels: Any,
    method: str,
    k: int,
    epsilon: float,
    classes: list[str] | None,
    seed: int | None,
) -> tuple[Any, list[list[Any]]]:
    """Run PrivateKD or the greedy order on the encoded predictors.

    Returns the order and the JSON ledger.
    """
    from privtab._validation import check_labels
    from privtab.discernibility import PrivateKD, greedy_discernibility
    from privtab.engine import is_distributed

    if method == "privatekd":
        selector = PrivateKD(k, epsilon, random_state=seed, classes=classes).fit(
            table, labels
        )
        return selector.selection_order_, ledger_pairs(selector.privacy_ledger_)
    if classes is not None:  # not private: only check the labels
        if is_distributed(labels):
            labels_seen = np.asarray(labels.unique().compute(), dtype=object)
            check_labels(labels_seen, classes, n_rows=len(labels_seen), warn=False)
        else:
            check_labels(labels, classes, n_rows=len(labels), warn=False)
    return greedy_discernibility(table, labels, k), []


def _correlation(value: str) -> str | int:
    """``--correlation``: data, none or a group size (an integer >= 1)."""
    if value in ("data", "none"):
        return value
    try:
        group = int(value)
    except ValueError:
        group = 0
    if group < 1:
        raise click.BadParameter(
            f"must be data, none or a group size (an integer >= 1), got {value!r}",
            param_hint="--correlation",
        )
    return group


def _select_correlated(
    estimator: Any,
    method: str,
    frame: pd.DataFrame,
    labels: np.ndarray,
    target: str,
    output_path: str,
) -> None:
    """Fit DPFSDR or DPFS, write the selection and the released SVM, print the ledger."""
    predictors = [c for c in frame.columns if c != target]
    if not predictors:
        raise click.ClickException(f"IN has no column besides {target!r}")
    text = [str(c) for c in predictors if not pd.api.types.is_numeric_dtype(frame[c])]
    if text:
        raise click.ClickException(
            f"--method {method} needs numeric predictors; not numeric: "
            f"{', '.join(map(repr, text))} (drop them from IN, or use privatekd)"
        )
    with release(), working(f"selecting features ({method})"):
        selector = estimator.fit(frame[predictors], labels)
    names = [str(c) for c in predictors]
    chosen = [names[int(j)] for j in selector.selection_order_]
    model = selector.classifier_
    result = {
        "method": method,
        "target": target,
        "epsilon": selector.epsilon_spent_,
        "epsilon_selection": selector.epsilon_selection,
        "epsilon_training": selector.epsilon_training,
        "budget": selector.budget,
        "training": selector.training,
        "correlation": selector.correlation,
        "selected": chosen,
        "selection_order": selector.selection_order_.tolist(),
        "classifier": {
            "features": [names[int(j)] for j in np.flatnonzero(selector.support_)],
            "classes": [str(c) for c in model.classes_],
            "coef": model.coef_.tolist(),
            "intercept": model.intercept_.tolist(),
            "bounds": {str(k): list(v) for k, v in (estimator.bounds or {}).items()},
            "data_norm": estimator.data_norm,
            "huber_h": estimator.huber_h,
            "lambda": selector.lambda_,
            "delta_w": selector.delta_w_,
        },
        "n_refits": selector.n_refits_,
        "privacy_ledger": ledger_pairs(selector.privacy_ledger_),
    }
    projected = [predictors[int(j)] for j in selector.selection_order_]
    write_output(output_path, result, frame[[*projected, target]])
    ledger = "\n".join(
        f"  {label}: {eps:.6g}" for label, eps in selector.privacy_ledger_
    )
    click.echo(f"selected ({method}): {', '.join(chosen)}")
    click.echo(
        "computed without noise, for the data holder only (not in OUT): training "
        f"accuracy of the released SVM {selector.accuracy_:.4f}, correlation "
        f"factor {selector.correlated_sensitivity_:.6g}\n"
        f"privacy ledger (total {selector.epsilon_spent_:g}):\n{ledger}",
        err=True,
    )
