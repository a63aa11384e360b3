"""The ``privtab`` command line.

``privtab demo`` tours the methods on the bundled Adult data. Method subcommands
(``select``, ``histogram``, ``distances``, ``mask``, ``kac``) are added to the
:func:`main` group; they share the options defined here (``--epsilon``, ``--seed``) and
read their input with :func:`privtab._io.read_table`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
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


if __name__ == "__main__":
    main()
