"""The ``privtab`` command: the :func:`main` click group, ``demo`` and the subcommands.

``privtab demo`` tours the methods on bundled data (:mod:`privtab.cli._demo`). The
method subcommands live one family to a module (:mod:`~privtab.cli._select`,
:mod:`~privtab.cli._histogram`, :mod:`~privtab.cli._distances`,
:mod:`~privtab.cli._mask`, :mod:`~privtab.cli._kac`, :mod:`~privtab.cli._report`) over the shared options and
steps of :mod:`privtab.cli._options`, and are added to :func:`main` here.

Core kernels called: none directly; each subcommand runs the public estimators of
:mod:`privtab`, which call ``privtab._core``.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from privtab._core import __version__
from privtab.cli._budget import budget
from privtab.cli._demo import SECTIONS, DemoReport, run_demo
from privtab.cli._distances import distances
from privtab.cli._histogram import histogram
from privtab.cli._io import replace_file
from privtab.cli._kac import kac
from privtab.cli._mask import mask
from privtab.cli._options import (
    check_output,
    epsilon_option,
    force_option,
    option,
    seed_option,
)
from privtab.cli._report import report, require_report_extra
from privtab.cli._select import select
from privtab.exceptions import PrivtabError

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="privtab")
def main() -> None:
    """privtab: differentially private feature selection and data release.

    Run `privtab demo` for a tour on the bundled Adult and WDBC data sets, or
    `privtab COMMAND --help` for the options of a command.
    """


@main.command(
    epilog="\b\nSections:\n"
    + "\n".join(f"  {s.name:<14} {s.title}" for s in SECTIONS.values())
)
@epsilon_option(
    help="Privacy budget ε of each demo section (finite and > 0).", budget=False
)
@seed_option()
@option(
    "--progress/--no-progress",
    default=True,
    help="Show a progress bar (only drawn on a terminal).",
)
@click.option(
    "--only",
    multiple=True,
    metavar="SECTION",
    help="Run only this section (repeatable). See the list below.",
)
@option(
    "--report",
    type=click.Path(dir_okay=False, writable=True),
    metavar="FILE.html",
    help="Also save what the demo shows as an HTML page, laid out as `privtab "
    "report`'s: a table per result and the privacy ledger. The name must end in "
    ".html or .htm.",
)
@force_option()
def demo(
    epsilon: float,
    seed: int | None,
    progress: bool,
    only: tuple[str, ...],
    report: str | None,
    force: bool,
) -> None:
    """Tour the methods on Adult and WDBC, next to their non-private results.

    Every section spends at most ε; the privacy ledger printed at the end sums them
    (sequential composition). --report is checked before the demo runs: it must end
    in .html or .htm, and an existing one is replaced only with --force.
    """
    unknown = [name for name in only if name not in SECTIONS]
    if unknown:
        raise click.BadParameter(
            f"unknown section(s) {', '.join(unknown)}; "
            f"choose from {', '.join(SECTIONS)}",
            param_hint="--only",
        )
    if report is not None:
        _check_report_name(report)
        check_output(report, force=force, option="--report")
        require_report_extra("--report", modules=("jinja2",))
    page = None if report is None else DemoReport(epsilon, seed)
    try:
        run_demo(
            epsilon,
            seed=seed,
            progress=progress,
            sections=only or None,
            console=Console(),
            report=page,
        )
    except PrivtabError as exc:
        raise click.ClickException(str(exc)) from exc
    if report is not None and page is not None:
        html = page.to_html()
        try:
            replace_file(report, lambda path: path.write_text(html, encoding="utf-8"))
        except OSError as exc:
            raise click.ClickException(
                f"cannot write --report {report}: {exc}"
            ) from exc
        click.echo(f"report written to {report}", err=True)


#: The extensions of an HTML page, the only report the demo writes.
_REPORT_EXTENSIONS = (".html", ".htm")


def _check_report_name(report: str) -> None:
    """Refuse a ``--report`` whose extension says another format than HTML."""
    if Path(report).suffix.lower() not in _REPORT_EXTENSIONS:
        raise click.BadParameter(
            f"{report!r}: the report is an HTML page, and the file name must end in "
            f"{' or '.join(_REPORT_EXTENSIONS)}; for an image, open the page in a "
            "browser and save or print it",
            param_hint="'--report'",
        )


for _command in (select, histogram, mask, distances, kac, budget, report):
    main.add_command(_command)


if __name__ == "__main__":
    main()
