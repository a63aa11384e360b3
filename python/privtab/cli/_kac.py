"""``privtab kac``: binary features whose projection is k-anonymous by containment.

Core kernels called: none directly; :class:`~privtab.KACSelector` calls the
``privtab._core`` anonymity and maximal-set mining kernels. The methods (Zhang,
Mohammed, Dave and Al Hasan 2017) and their reference: :mod:`privtab.kac`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from privtab.cli._options import (
    check_columns,
    check_projection,
    choice_option,
    command,
    count_option,
    input_argument,
    option,
    output_option,
    projection_option,
    read_input,
    release,
    renamed_option,
    target_option,
    write_output,
)
from privtab.cli._progress import working

__all__ = ["kac"]


@command(
    terms={
        "k": "--anonymity K",
        "method": "--method METHOD",
        "top_t": "--top-t N",
        "max_sets": "--max-sets N",
        "time_limit": "--time-limit SECONDS",
        "B": "The columns of IN besides --target",
    },
    epilog="\b\nOutput, chosen by the extension of OUT:\n"
    "  .json                 the selection: feature names in the order added,\n"
    "                        AC achieved, k-anonymity and utility\n"
    "  .csv, .tsv, .parquet  only with --write-projection: the input projected on\n"
    "                        the selected features and the target (the rows of\n"
    "                        IN, k-anonymous by containment, not differentially\n"
    "                        private)",
)
@input_argument()
@output_option(
    "OUT",
    "Where to write the result: .json, or .csv, .tsv or .parquet with "
    "--write-projection.",
    formats=("json", "table"),
)
@projection_option()
@count_option(
    "--anonymity",
    "anonymity",
    metavar="K",
    help="Anonymity by containment to guarantee (required): every row's selected "
    "1-features are contained in those of at least K rows (itself included).",
)
@renamed_option("--k", "anonymity", "--anonymity", required=True)
@choice_option(
    "--method",
    ["greedy_distcnt", "greedy_ham", "maximal", "maximal_feasible"],
    "greedy_distcnt: add the feature that separates most new (positive, "
    "negative) row pairs each round; greedy_ham: add features by decreasing "
    "Hamming utility (both stop at the first feature that breaks K-AC); maximal: "
    "the best (by DistCnt) of the TOP_T largest maximal frequent itemsets with "
    "support K (--anonymity); maximal_feasible: the same over the exact maximal "
    "K-AC sets.",
)
@count_option(
    "--top-t",
    "top_t",
    default=10,
    help="maximal methods: number of largest maximal sets compared.",
)
@count_option(
    "--max-sets",
    help="maximal methods: stop the enumeration after this many maximal sets "
    "(default: no limit).",
)
@option(
    "--time-limit",
    type=click.FloatRange(min=0),
    help="maximal methods: stop the enumeration after this many seconds "
    "(default: no limit).",
)
@target_option("Name of the binary label column (two classes).")
@option(
    "--skip-infeasible/--stop-at-infeasible",
    default=False,
    help="Skip a feature that would break K-AC and continue, instead of stopping "
    "(the paper's rule).",
)
def kac(
    input_path: str,
    output_path: str,
    write_projection: bool,
    anonymity: int,
    method: str,
    top_t: int,
    max_sets: int | None,
    time_limit: float | None,
    target: str,
    skip_infeasible: bool,
) -> None:
    """Select binary features of IN whose projection is K-anonymous by containment.

    Every column except TARGET must hold 0/1 values (binarise a text or numeric
    column first: one 0/1 column per category, or per threshold); TARGET must have
    exactly two classes. k-anonymity by containment (Zhang et al.) is a syntactic guarantee on
    the released columns, not differential privacy: no ε is spent.
    """
    from privtab.kac import KACSelector
    from privtab.kac._itemsets import observe_search

    check_projection(
        output_path,
        write_projection,
        "k-anonymous by containment, not differentially private",
    )
    if check_columns(input_path, target) == []:
        raise click.BadParameter(
            f"{input_path} has no column besides {target!r}", param_hint="--target"
        )
    frame = read_input(input_path, target)
    features = [c for c in frame.columns if c != target]
    _check_binary(frame, features, input_path)
    doing = f"selecting features ({method}, --anonymity {anonymity})"
    with (
        release(),
        working(doing) as describe,
        observe_search(_search_shown(describe, doing)),
    ):
        selector = KACSelector(
            anonymity,
            method=method,
            top_t=top_t,
            skip_infeasible=skip_infeasible,
            max_sets=max_sets,
            time_limit=time_limit,
        ).fit(frame[features], frame[target].to_numpy())
    chosen = [str(features[int(j)]) for j in selector.selection_order_]
    result = {
        "method": method,
        "target": target,
        "k": anonymity,
        "selected": chosen,
        "selection_order": selector.selection_order_.tolist(),
        "anonymity": selector.anonymity_,
        "k_anonymity": selector.k_anonymity_,
        "distcnt": selector.utility_,
        "complete": selector.complete_,
    }
    write_output(output_path, result, frame[[*chosen, target]])
    click.echo(
        f"selected ({method}, --anonymity {anonymity}): {', '.join(chosen) if chosen else '(none)'}"
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


def _search_shown(
    describe: Callable[[str], None], doing: str
) -> Callable[[float, int, int, int], None]:
    """Return a search-progress report that shows the sets found next to ``doing``."""

    def report(seconds: float, found: int, done: int, branches: int) -> None:
        of = f", {done}/{branches} branches" if branches else ""
        describe(f"{doing}: {found:,} maximal sets found{of}")

    return report


def _check_binary(frame: Any, features: list[Any], input_path: str) -> None:
    """Refuse a feature column of IN that holds anything but 0 and 1.

    Raises
    ------
    click.ClickException
        Naming the column, a row (counted from 0) and its value, and how to
        binarise the column.
    """
    import numpy as np
    import pandas as pd

    for column in features:
        series = frame[column]
        if pd.api.types.is_bool_dtype(series.dtype):
            continue
        if pd.api.types.is_numeric_dtype(series.dtype):
            bad = ~series.isin([0, 1]).to_numpy()
        else:
            bad = np.ones(len(series), dtype=bool)
        if not bad.any():
            continue
        row = int(bad.argmax())
        value = series.iloc[row]
        shown = repr(value) if isinstance(value, str) else str(value)
        kind = "numbers" if pd.api.types.is_numeric_dtype(series.dtype) else "text"
        how = (
            "one 0/1 column per threshold (value > t)"
            if kind == "numbers"
            else "one 0/1 column per category (as pandas.get_dummies makes)"
        )
        raise click.ClickException(
            f"the column {str(column)!r} of {input_path} holds {kind}, not 0/1 "
            f"(row {row}: {shown}); every column besides --target must "
            f"be 0/1. Binarise it into {how}, or leave it out of IN."
        )
