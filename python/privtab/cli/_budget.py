"""``privtab budget``: keep one privacy budget in a file, shared by every run.

``privtab budget init PATH --epsilon E`` creates the file (readable and writable by
its owner only); ``privtab budget show PATH`` prints its ledger. Every command that
releases takes ``--budget PATH`` (:func:`privtab.cli._options.epsilon_option`) and
charges its releases to that file, checked against what every earlier run spent.

Core kernels called: none (:meth:`privtab.BudgetAccountant.open`, SQLite).
"""

from __future__ import annotations

import json
import math
import os

import click
from rich.console import Console
from rich.table import Table

from privtab.accountant import BudgetAccountant, ledger_lines
from privtab.cli._options import open_budget

__all__ = ["budget"]


@click.group()
def budget() -> None:
    """Keep one privacy budget in a file, shared by every command run with --budget.

    A data set's budget lasts longer than one command: create it once with
    `privtab budget init`, pass `--budget PATH` to every command that releases
    (`select`, `histogram`, `mask`, `distances`), and read what was spent with
    `privtab budget show`. Each release is checked against the remaining budget and
    recorded in one step; a command the budget cannot afford stops before it
    computes anything.
    """


@budget.command()
@click.argument("path", metavar="PATH", type=click.Path(dir_okay=False))
@click.option(
    "--epsilon",
    "-e",
    type=float,
    required=True,
    help="The total budget ε of the data set (finite and > 0).",
)
@click.option(
    "--delta",
    type=click.FloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="The total budget δ, for releases that spend one.",
)
def init(path: str, epsilon: float, delta: float) -> None:
    """Create the budget file PATH with a total budget of ε (and δ).

    The file is readable and writable by you only: anyone who can write it can
    change the budget.
    """
    if os.path.lexists(path):
        raise click.ClickException(
            f"{path} exists already; `privtab budget show {path}` shows its budget"
        )
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise click.BadParameter(
            f"must be finite and > 0, got {epsilon!r}", param_hint="--epsilon"
        )
    try:
        accountant = BudgetAccountant.open(path, epsilon=epsilon, delta=delta)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot create {path}: {exc}") from exc
    click.echo(
        f"budget of ε = {accountant.epsilon:g}"
        + (f", δ = {accountant.delta:g}" if accountant.delta else "")
        + f" kept in {path} (readable and writable by you only); pass --budget "
        f"{path} to the commands that release"
    )


@budget.command()
@click.argument("path", metavar="PATH", type=click.Path(dir_okay=False))
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the budget and the ledger as JSON instead of a table.",
)
def show(path: str, as_json: bool) -> None:
    """Show the ledger of the budget file PATH: what was released, and what is left."""
    accountant = open_budget(path, "PATH")
    if as_json:
        click.echo(json.dumps(accountant.to_dict(), indent=2))
        return
    table = Table(title=f"privacy budget {path}", title_justify="left")
    table.add_column("release")
    table.add_column("ε", justify="right")
    if accountant.delta:
        table.add_column("δ", justify="right")
    table.add_column("guarantee")

    for entry, name, suffix in ledger_lines(accountant.ledger):
        cells = [name + suffix, f"{entry.epsilon:.6g}"]
        if accountant.delta:
            cells.append(f"{entry.delta:.3g}")
        table.add_row(*cells, entry.guarantee)
    console = Console()
    console.print(table)
    total = "unlimited" if accountant.epsilon == math.inf else f"{accountant.epsilon:g}"
    console.print(
        f"spent ε = {accountant.spent:.6g} of {total}; remaining "
        f"{accountant.remaining:.6g}",
        highlight=False,
    )
