"""``privtab mask``: release a numeric table by microaggregation, ε-DP or ε-iDP.

Core kernels called: none directly; :class:`~privtab.MicroaggregationMasker` calls the
``privtab._core`` microaggregation kernels and the grid Laplace sampler.
The method (Soria-Comas et al. 2017, 2023) and its references: :mod:`privtab.microagg`.
"""

from __future__ import annotations

import click

from privtab.cli._options import (
    bounds_option,
    choice_option,
    count_option,
    epsilon_option,
    input_argument,
    option,
    output_option,
    read_input,
    release,
    seed_option,
    write_output,
)

__all__ = ["mask"]


@click.command(
    "mask",
    short_help="Release a numeric table by microaggregation: ε-DP or ε-iDP.",
    epilog="The masked table goes to OUT; the mechanism, the bounds used and the "
    "privacy ledger (ε-DP or ε-iDP per column) go to stderr.",
)
@input_argument()
@output_option("OUT", "Where to write the masked table (.csv, .tsv or .parquet).")
@choice_option(
    "--mechanism",
    ["idp_cbls", "idp_ls", "dp"],
    "Centroid noise: iDP-CBLS and iDP-LS (ε-individual DP, local sensitivity "
    "at the actual data) or DP-UM (ε-DP, global sensitivity from the bounds; with "
    "--k 1 plain Laplace noise).",
)
@count_option(
    "--k",
    default=10,
    help="Minimum cluster size of the individual ranking (>= 3 for idp_cbls).",
)
@epsilon_option(help="Privacy budget ε of the whole table, split over its columns.")
@bounds_option(
    "Public domain of a numeric column (repeatable). Columns without bounds get "
    "[0, 1.5·max] from the data, with a warning: the domain is then not covered."
)
@option(
    "--clip/--no-clip",
    default=False,
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
    from privtab.microagg import MicroaggregationMasker

    frame = read_input(input_path)
    with release():
        masker = MicroaggregationMasker(
            k,
            epsilon,
            mechanism=mechanism,
            bounds=bounds,
            out_of_bounds="clip" if clip else "raise",
            random_state=seed,
        )
        masked = masker.fit_transform(frame)
    write_output(output_path, None, masked)
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
