"""The ``privtab`` command line.

``privtab demo`` tours the methods on the bundled Adult data. Method subcommands
(``select``, ``histogram``, ``distances``, ``mask``, ``kac``) are added to the
:func:`main` group; they share the options defined here (``--epsilon``, ``--seed``) and
read their input with :func:`privtab._io.read_table`.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from privtab._core import __version__
from privtab.demo import SECTIONS, run_demo
from privtab.exceptions import PrivtabError

__all__ = ["epsilon_option", "main", "seed_option"]

F = TypeVar("F", bound=Callable[..., Any])


def _check_epsilon(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise click.BadParameter(f"must be finite and > 0, got {value!r}")
    return value


def epsilon_option(default: float = 1.0, help: str | None = None) -> Callable[[F], F]:
    """Add the shared ``--epsilon`` option: a finite float > 0."""
    return click.option(
        "--epsilon",
        "-e",
        type=float,
        default=default,
        show_default=True,
        callback=_check_epsilon,
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
def demo(
    epsilon: float, seed: int | None, progress: bool, only: tuple[str, ...]
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
    try:
        run_demo(epsilon, seed=seed, progress=progress, sections=only or None)
    except PrivtabError as exc:
        raise click.ClickException(str(exc)) from exc


@main.command(
    epilog="\b\nOutput, chosen by the extension of OUT:\n"
    "  .json                 the selection: attribute names in the order chosen,\n"
    "                        parameters and the privacy ledger\n"
    "  .csv, .tsv, .parquet  the input projected on the selected attributes and\n"
    "                        the target, with their original values"
)
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=False))
@click.option(
    "--output",
    "-o",
    "output_path",
    required=True,
    metavar="OUT",
    type=click.Path(dir_okay=False),
    help="Where to write the result (.json, .csv, .tsv or .parquet).",
)
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
@epsilon_option(help="Privacy budget ε of the whole selection (finite and > 0).")
@seed_option()
def select(
    input_path: str,
    output_path: str,
    method: str,
    target: str,
    k: int,
    epsilon: float,
    seed: int | None,
) -> None:
    """Select K attributes of the table IN that discern the TARGET column.

    Every column except TARGET is a candidate. Columns are encoded with their
    categories (numeric columns are binned); as nothing is declared, the domains
    come from the data, which a warning repeats: declare them through the Python
    API (TableEncoder) for a guarantee that covers them too.
    """
    from privtab import _io
    from privtab.discernibility import PrivateKD, greedy_discernibility
    from privtab.table import TableEncoder

    try:
        frame = _io.read_table(input_path)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot read {input_path}: {exc}") from exc
    if target not in frame.columns:
        raise click.BadParameter(
            f"{target!r} is not a column of {input_path}; columns: "
            f"{', '.join(map(str, frame.columns))}",
            param_hint="--target",
        )
    predictors = [c for c in frame.columns if c != target]
    if not 1 <= k <= len(predictors):
        raise click.BadParameter(
            f"must be between 1 and the number of predictors ({len(predictors)}), "
            f"got {k}",
            param_hint="--k",
        )
    out = Path(output_path)
    as_json = out.suffix.lower() == ".json"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            encoder = TableEncoder(missing="category")
            table = encoder.fit_transform(frame[predictors])
            labels = frame[target].astype(str).to_numpy()
            if method == "privatekd":
                selector = PrivateKD(k, epsilon, random_state=seed).fit(table, labels)
                order = selector.selection_order_
                ledger = [[label, eps] for label, eps in selector.privacy_ledger_]
            else:
                order = greedy_discernibility(table, labels, k)
                ledger = []
        except (PrivtabError, ValueError, TypeError) as exc:
            raise click.ClickException(str(exc)) from exc
    notes = sorted({str(w.message) for w in caught})
    for note in notes:
        click.echo(f"warning: {note}", err=True)
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


if __name__ == "__main__":
    main()
