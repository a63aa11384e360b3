"""``privtab mask``: release a numeric table by microaggregation, ε-DP or ε-iDP.

Core kernels called: none directly; :class:`~privtab.MicroaggregationMasker` calls the
``privtab._core`` microaggregation kernels and the grid Laplace sampler.
The method (Soria-Comas et al. 2017, 2023) and its references: :mod:`privtab.microagg`.
"""

from __future__ import annotations

import click

from privtab.cli._options import (
    bounds_option,
    check_columns,
    choice_option,
    clip_option,
    command,
    count_option,
    epsilon_option,
    input_argument,
    option,
    output_option,
    read_input,
    release,
    renamed_option,
    seed_option,
    shell_terms,
    write_output,
)
from privtab.cli._progress import working

__all__ = ["mask"]

#: The library's parameters of the masker, as the options of ``privtab mask``.
_TERMS = {
    "k": "--min-cluster-size K",
    "mechanism": "--mechanism MECHANISM",
    "out_of_bounds='raise'": "--no-clip",
    "non_numeric='drop'": "--drop-non-numeric",
    "non_numeric='passthrough'": "--keep COL",
    "X": "IN",
}


@command(
    terms=_TERMS,
    name="mask",
    short_help="Release a numeric table by microaggregation: ε-DP or ε-iDP.",
    epilog="The masked table goes to OUT; the mechanism, the columns masked, kept "
    "unmasked and dropped, the bounds used and the privacy ledger (ε-DP or ε-iDP per "
    "column) go to stderr.",
)
@input_argument()
@output_option("OUT", "Where to write the masked table (.csv, .tsv or .parquet).")
@choice_option(
    "--mechanism",
    ["idp_cbls", "idp_ls", "dp"],
    "Centroid noise: iDP-CBLS and iDP-LS (ε-individual DP, local sensitivity "
    "at the actual data) or DP-UM (ε-DP, global sensitivity from the bounds; with "
    "--min-cluster-size 1 plain Laplace noise).",
)
@count_option(
    "--min-cluster-size",
    "min_cluster_size",
    default=10,
    metavar="K",
    help="Minimum cluster size K of the individual ranking (>= 3 for idp_cbls).",
)
@renamed_option("--k", "min_cluster_size", "--min-cluster-size")
@epsilon_option(help="Privacy budget ε of the whole table, split over its columns.")
@bounds_option(
    "Public domain of a numeric column (repeatable). Columns without bounds get "
    "[0, 1.5·max] from the data, with a warning: the domain is then not covered."
)
@clip_option(
    "Clamp a number outside its --bounds to the nearest bound instead of stopping "
    "with an error."
)
@option(
    "--keep",
    "keep",
    multiple=True,
    metavar="COL",
    help="Copy the non-numeric column COL into OUT unmasked (repeatable, or "
    "COL1,COL2): its values are published as they are, not covered by the "
    "privacy guarantee.",
)
@option(
    "--drop-non-numeric",
    is_flag=True,
    default=False,
    help="Leave the non-numeric columns not named by --keep out of OUT.",
)
@seed_option()
def mask(
    input_path: str,
    output_path: str,
    mechanism: str,
    min_cluster_size: int,
    epsilon: float,
    bounds: dict[str, tuple[float, float]],
    clip: bool,
    keep: tuple[str, ...],
    drop_non_numeric: bool,
    seed: int | None,
) -> None:
    """Mask every numeric column of the table IN by microaggregation and noise.

    Each numeric column is ranked and cut into clusters of at least
    MIN_CLUSTER_SIZE consecutive values;
    every cluster's centroid gets Laplace noise calibrated to its sensitivity and is
    clamped to the column's bounds (Soria-Comas et al.). ε is split equally over the
    numeric columns. Non-numeric columns (text, dates, booleans) cannot be masked:
    the command stops on them unless each is copied unmasked (--keep COL) or left
    out (--drop-non-numeric).
    """
    from privtab.microagg import MicroaggregationMasker, _numeric_columns

    if mechanism == "idp_cbls" and min_cluster_size < 3:
        raise click.BadParameter(
            "must be >= 3 with --mechanism idp_cbls (its pre-processing needs three "
            f"values per cluster), got {min_cluster_size}",
            param_hint="--min-cluster-size",
        )
    columns = check_columns(input_path, named={"--bounds": bounds})
    keep_named = [n for v in keep for n in ([v] if v in columns else v.split(","))]
    check_columns(input_path, named={"--keep": keep_named})
    frame = read_input(input_path)
    columns = [str(c) for c in frame.columns]
    numeric = _numeric_columns(frame, "pandas")
    kept = _columns_to_keep(keep, columns, numeric)
    undecided = [
        c for c, ok in zip(columns, numeric, strict=True) if not ok and c not in kept
    ]
    if undecided and not drop_non_numeric:
        raise click.ClickException(
            f"{input_path} has non-numeric columns ({', '.join(undecided)}), which "
            "microaggregation cannot mask. Copy them into OUT unmasked, outside the "
            "privacy guarantee, with --keep COL, or leave them out with "
            "--drop-non-numeric."
        )
    frame = frame.drop(columns=undecided)
    with release(), working(f"masking ({mechanism})"):
        masker = MicroaggregationMasker(
            min_cluster_size,
            epsilon,
            mechanism=mechanism,
            bounds=bounds,
            non_numeric="passthrough" if kept else "raise",
            out_of_bounds="clip" if clip else "raise",
            random_state=seed,
        )
        masked = masker.fit_transform(frame)
    write_output(output_path, None, masked)
    ledger = "\n".join(
        f"  {shell_terms(entry.label, _TERMS)}: {entry.epsilon:.6g} ({entry.guarantee})"
        for entry in masker.privacy_ledger_
    )
    used = ", ".join(
        f"{name}=[{lo:.6g}, {hi:.6g}]"
        for name, (lo, hi) in zip(masker.feature_names_in_, masker.bounds_, strict=True)
    )
    click.echo(
        f"mechanism: {mechanism}, minimum cluster size: {min_cluster_size}\n"
        f"masked: {', '.join(map(str, masker.feature_names_in_))}\n"
        f"kept unmasked (not covered): {', '.join(kept) or '(none)'}\n"
        f"dropped: {', '.join(undecided) or '(none)'}\n"
        f"bounds: {used}\n"
        f"privacy ledger (total {masker.epsilon_spent_:g}):\n{ledger}",
        err=True,
    )


def _columns_to_keep(
    keep: tuple[str, ...], columns: list[str], numeric: list[bool]
) -> list[str]:
    """Return the columns named by ``--keep``, in the order of IN.

    Each value of ``--keep`` is a column name or a comma-separated list of them.

    Raises
    ------
    click.BadParameter
        If a name is not a column of IN, or names a numeric column (those are
        always masked).
    """
    names = []
    for value in keep:
        names.extend([value] if value in columns else value.split(","))
    for name in names:
        if name not in columns:
            raise click.BadParameter(
                f"{name!r} is not a column of IN; columns: {', '.join(columns)}",
                param_hint="--keep",
            )
        if numeric[columns.index(name)]:
            raise click.BadParameter(
                f"{name!r} is numeric: numeric columns are always masked",
                param_hint="--keep",
            )
    return [c for c in columns if c in names]
