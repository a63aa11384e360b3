"""``privtab distances``: DILCA and DP-DILCA distances between categorical values.

Core kernels called: none directly; :class:`~privtab.DILCA` and
:class:`~privtab.DPDILCA` call the ``privtab._core`` pairwise-table and entropy
kernels. The methods (Ienco et al. 2012; Battaglia, Celano and Pensa 2021) and
their references: :mod:`privtab.dilca`.
"""

from __future__ import annotations

import click

from privtab.cli._options import (
    Encoding,
    allow_inferred_option,
    check_columns,
    choice_option,
    cluster_options,
    command,
    count_option,
    encode_table,
    encoding_options,
    epsilon_option,
    input_argument,
    json_value,
    ledger_pairs,
    open_input,
    output_option,
    refuse_inferred_domains,
    release,
    seed_option,
    write_output,
)
from privtab.cli._progress import working

__all__ = ["distances"]


@command(
    terms={
        "context_size": "--context-size K",
        "method": "--method METHOD",
    },
    epilog="\b\nOutput (JSON): for every column, its context (the columns whose\n"
    "values explain it), its categories (declared with --domain, or bin midpoints\n"
    "within --bounds; null for missing values, with --missing) and the matrix of\n"
    "distances between them, plus the method, ε and the privacy ledger. Warnings\n"
    "go to stderr only, as does one line per column that says how it was\n"
    "encoded.",
)
@input_argument(partitions=True)
@output_option("OUT.json", "Where to write the distances (JSON).", formats=("json",))
@choice_option(
    "--method",
    [
        "max_relevance",
        "max_dependency",
        "mean_su",
        "baseline",
        "dilca_m",
        "dilca_rr",
    ],
    "DP-DILCA context selection (max_relevance, max_dependency, mean_su, or the "
    "baseline of noisy pairwise tables), or the NON-private DILCA_M / DILCA_RR "
    "(dilca_m, dilca_rr: spend no ε).",
)
@count_option(
    "--context-size",
    default=3,
    help="k, the context size of max_relevance and max_dependency.",
)
@encoding_options(
    bins_help="Equal-width bins of every numeric column (the paper used 5).",
    bins_default=5,
)
@allow_inferred_option("the categories and bin midpoints of every column")
@epsilon_option(help="Privacy budget ε of the whole metric, ε/m per column.")
@seed_option()
@cluster_options
def distances(
    input_path: str,
    output_path: str,
    method: str,
    context_size: int,
    encoding: Encoding,
    allow_inferred: bool,
    epsilon: float,
    seed: int | None,
    scheduler: str | None,
    workers: int | None,
) -> None:
    """Learn distances between the values of every categorical column of IN.

    DILCA (Ienco et al.) measures how differently two values of a column
    distribute the values of its context columns; DP-DILCA (Battaglia, Celano and
    Pensa 2021) chooses the context and releases the tables under ε-DP. The
    categories of every text column (--domain) and the bounds of every numeric
    one (--bounds) are public: OUT lists them. Taking them from the data instead
    needs --allow-inferred-domains, as OUT then shows values of the records.

    A Parquet IN (a file or a directory of partitions) is read one partition at a
    time on a Dask cluster with --scheduler or --workers (a directory always so);
    the distances are those computed in memory for the same seed.
    """
    from privtab.dilca import DILCA, DPDILCA

    check_columns(input_path, named=encoding.named)
    with (
        open_input(input_path, None, scheduler, workers) as frame,
        release(),
        working(f"distances ({method})"),
    ):
        encoder, table = encode_table(frame, encoding)
        refuse_inferred_domains(encoder.inferred_, allow_inferred)
        if method in ("dilca_m", "dilca_rr"):
            context = "mean_su" if method == "dilca_m" else "relevance_redundancy"
            model = DILCA(context=context).fit(table)
            ledger: list = []
            spent = 0.0
        else:
            model = DPDILCA(
                epsilon, method=method, context_size=context_size, random_state=seed
            ).fit(table)
            ledger = ledger_pairs(model.privacy_ledger_)
            spent = model.epsilon_spent_
    columns = [str(c) for c in table.columns]
    result = {
        "method": method,
        "epsilon": spent,
        "columns": {
            name: {
                "context": [columns[int(j)] for j in model.contexts_[i]],
                "categories": [json_value(v) for v in table.categories[i]],
                "distances": model.distance_matrix(i).tolist(),
            }
            for i, name in enumerate(columns)
        },
        "privacy_ledger": ledger,
    }
    write_output(output_path, result)
    click.echo(
        f"distances ({method}) for {len(columns)} columns written to {output_path}"
    )
