"""``privtab report``: the privacy-utility trade-off of a table, as one HTML page.

The command reads IN, runs :meth:`privtab.report.Report.from_data` with a progress bar
on stderr, and writes the page (``.html``) or its numbers and figures (``.json``).
``--budget PATH`` and ``--plan FILE`` add the ledger of a budget file and the ledger a
plan of releases would produce; the budget file is only read.

Core kernels called: none directly; the report's families run the estimators of
:mod:`privtab`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from privtab.cli._io import replace_file
from privtab.cli._options import (
    _integer_codes,
    bounds_option,
    categorical_option,
    check_columns,
    check_output,
    command,
    count_option,
    domain_option,
    force_option,
    option,
    read_input,
    seed_option,
)
from privtab.cli._progress import stderr_console
from privtab.exceptions import PrivtabError
from privtab.report._families import FAMILIES

__all__ = ["report", "require_report_extra"]

#: What ``--output`` may be: the page, or its numbers and figures.
_OUTPUT_EXTENSIONS = (".html", ".htm", ".json")


def require_report_extra(
    option: str, modules: Sequence[str] = ("jinja2", "matplotlib")
) -> None:
    """Stop with the install command if a module of the ``report`` extra is missing."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise click.UsageError(
            f"{option} needs {' and '.join(missing)}: install them with "
            "pip install 'privtab[report]'"
        )


def _parse_epsilons(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> list[float] | None:
    if value is None:
        return None
    try:
        values = [float(v) for v in value.split(",")]
    except ValueError:
        values = []
    if not values or not all(0 < v < float("inf") for v in values):
        raise click.BadParameter(
            f"expected finite numbers > 0 separated by commas, got {value!r}"
        )
    return values


def _check_output_name(output_path: str) -> None:
    if Path(output_path).suffix.lower() not in _OUTPUT_EXTENSIONS:
        raise click.BadParameter(
            f"{output_path!r}: the report is an HTML page (.html, .htm) or its data "
            "(.json); for an image, open the page in a browser and save or print it",
            param_hint="'--output'",
        )


@command(
    epilog="\b\nFamilies (each runs only if it applies to the table):\n"
    + "\n".join(f"  {key:<10} {f.title}" for key, f in FAMILIES.items())
)
@click.argument(
    "input_path", metavar="[IN]", type=click.Path(dir_okay=False), required=False
)
@option("--target", help="The column of IN to predict (required with IN).")
@click.option(
    "--output",
    "-o",
    "output_path",
    required=True,
    metavar="OUT.html",
    type=click.Path(dir_okay=False),
    help="Where to write the report: .html (the page) or .json (its data and figures).",
)
@force_option()
@option(
    "--family",
    "families",
    multiple=True,
    type=click.Choice(list(FAMILIES)),
    help="Run only this family (repeatable). Default: every one that applies.",
)
@option(
    "--skip",
    multiple=True,
    type=click.Choice(list(FAMILIES)),
    help="Leave this family out (repeatable).",
)
@option(
    "--quick",
    is_flag=True,
    default=False,
    help="A smaller grid (ε = 0.01, 0.1, 1, 10; 2 repetitions), for a first look.",
)
@option(
    "--epsilons",
    metavar="E,E,...",
    callback=_parse_epsilons,
    help="The grid of ε, e.g. 0.1,1,10. Default: 7 points from 0.01 to 10 "
    "(log-spaced).",
)
@count_option(
    "--repetitions",
    help="Runs of each mechanism at each ε. Default: 3 (2 with --quick).",
)
@domain_option()
@bounds_option(
    "Public bounds of a numeric column (repeatable), e.g. --bounds age=17:90. "
    "Bounds not given are taken from the data."
)
@categorical_option()
@count_option(
    "--bins",
    help="Equal-width bins of every numeric predictor. Default: Lei's lei_bins(n, d).",
)
@option(
    "--budget",
    "budget_path",
    type=click.Path(dir_okay=False),
    metavar="PATH",
    help="Add the ledger of this budget file (privtab budget init): what was "
    "spent, by label and guarantee, over time. The file is only read.",
)
@option(
    "--plan",
    "plan_path",
    type=click.Path(dir_okay=False, exists=True),
    metavar="FILE.toml",
    help="Add the ledger this plan of releases would produce (on top of --budget) "
    "and whether it fits.",
)
@count_option(
    "--jobs",
    help="Families run in parallel on N threads. Default: the CPUs, at most 4.",
)
@option(
    "--progress/--no-progress",
    default=True,
    help="Show a progress bar on stderr (only drawn on a terminal).",
)
@seed_option(
    "Seed the split into training and held-out rows and every mechanism, for a "
    "reproducible report."
)
def report(
    input_path: str | None,
    target: str | None,
    output_path: str,
    force: bool,
    families: tuple[str, ...],
    skip: tuple[str, ...],
    quick: bool,
    epsilons: list[float] | None,
    repetitions: int | None,
    domains: dict[str, list[str]],
    bounds: dict[str, tuple[float, float]],
    categorical: list[str],
    bins: int | None,
    budget_path: str | None,
    plan_path: str | None,
    jobs: int | None,
    progress: bool,
    seed: int | None,
) -> None:
    """See the privacy-utility trade-off of the table IN before releasing anything.

    Every family that applies to IN (from its column types and TARGET) runs its
    mechanism over a grid of ε, several times, and the page plots its utility
    against ε next to the non-private result and a naive baseline. Without IN, the
    page shows only --budget and --plan.

    The report is about the data, not a release: it reads IN many times, is NOT
    differentially private and must not be published. It spends nothing on any
    budget: --budget is only read.
    """
    from privtab.report._report import Report

    _check_output_name(output_path)
    require_report_extra("privtab report")
    if budget_path is not None and not Path(budget_path).exists():
        raise click.BadParameter(
            f"no budget file {budget_path}; create it with `privtab budget init "
            f"{budget_path} --epsilon E`",
            param_hint="'--budget'",
        )
    plan = _read_plan(plan_path)
    if input_path is None:
        if budget_path is None and plan_path is None:
            raise click.UsageError(
                "give a table IN (with --target), or --budget or --plan to see a "
                "budget only"
            )
        check_output(output_path, None, force)
        page = Report.from_budget(budget_path, plan)
        _write(page, output_path, None, force)
        click.echo(f"report written to {output_path}", err=True)
        return
    if target is None:
        raise click.MissingParameter(param_hint="'--target'", param_type="option")
    check_output(output_path, input_path, force)
    check_columns(
        input_path,
        target,
        {
            "--domain": [c for c in domains if c != target],
            "--bounds": bounds,
            "--categorical": categorical,
        },
    )
    frame = read_input(input_path, target)
    # Integer codes are categories, as in every other command.
    frame = frame.astype(
        _integer_codes(frame, [target, *domains, *bounds, *categorical])
    )
    console = stderr_console()
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        disable=not (progress and console.is_terminal),
        transient=True,
    ) as bar:
        task = bar.add_task("privtab report", total=None)

        def advance(description: str, done: int, total: int) -> None:
            bar.update(task, description=description, completed=done, total=total)

        try:
            page = Report.from_data(
                frame,
                target,
                families=families or None,
                skip=skip,
                epsilons=epsilons,
                repetitions=repetitions,
                quick=quick,
                domains=domains,
                bounds=bounds,
                categorical=categorical,
                bins=bins,
                budget=budget_path,
                plan=plan,
                random_state=seed,
                n_jobs=jobs,
                progress=advance,
                title=f"privtab report: {Path(input_path).name}, target {target}",
            )
        except (PrivtabError, ValueError, TypeError) as exc:
            raise click.ClickException(str(exc)) from exc
    _write(page, output_path, input_path, force)
    shown = ", ".join(page.about["families"]) or "none"
    click.echo(
        f"report written to {output_path} in {page.about['seconds']:g} s "
        f"(families: {shown})",
        err=True,
    )
    for key, reason in page.about["skipped"].items():
        click.echo(f"skipped {key}: {reason}", err=True)


def _write(page: Any, output_path: str, input_path: str | None, force: bool) -> None:
    check_output(output_path, input_path, force)
    as_json = Path(output_path).suffix.lower() == ".json"
    try:
        replace_file(
            output_path,
            lambda path: page.to_json(path) if as_json else page.to_html(path),
        )
    except OSError as exc:
        raise click.ClickException(f"cannot write {output_path}: {exc}") from exc


def _read_plan(plan_path: str | None) -> Any:
    """Read and check ``--plan`` before any data is read; its errors name the option."""
    if plan_path is None:
        return None
    from privtab.report._budget import load_plan

    try:
        return load_plan(plan_path)
    except (ValueError, TypeError, OSError) as exc:
        raise click.BadParameter(str(exc), param_hint="'--plan'") from None
