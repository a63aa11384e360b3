"""The budget half of a report: what was spent, and what a plan of releases would spend.

:func:`budget_sections` shows the ledger of an accountant or of a budget store (the
file of ``privtab budget init`` or ``BudgetAccountant.open``): what was released,
when, under which guarantee, and what remains. :func:`plan_section` appends a plan of
releases to that ledger (or to an empty one) and says whether the plan fits.
Both read the budget and never spend it: a store is read in one read-only
transaction, and the plan is composed on an in-memory copy
(``privtab.accountant.rehearsal_copy``) by the accountant's own code, so the
verdict is the accountant's, float tolerance included.

A plan is a TOML file (or the same structure as a dict)::

    budget = 3.0                # optional: the total when no store is given

    [[release]]
    label = "PrivateKD on adult"
    epsilon = 1.0
    guarantee = "dp"            # "dp" (default) or "idp"

    [[release]]
    label = "histogram, north"
    epsilon = 0.5
    parallel = "regions"        # optional: releases of one group compose as
                                # their maximum (disjoint records each)

    [[release]]
    label = "histogram, south"
    epsilon = 0.75
    parallel = "regions"

Releases are spent in the order listed; the releases of one parallel group are
listed together and the group charges the largest of them (here 0.75), as
``with acc.parallel("regions") as block:`` with one part per release does. With a
store or an accountant, the plan is checked against its budget (and the plan's own
``budget``, if it states a smaller one) on top of what it spent already.

Examples
--------
>>> from privtab.report._budget import load_plan, plan_section
>>> plan = load_plan({
...     "budget": 2.0,
...     "release": [
...         {"label": "PrivateKD", "epsilon": 1.0},
...         {"label": "DPFSDR", "epsilon": 1.5},
...     ],
... })
>>> plan_section(plan).summary
"does not fit: release 'DPFSDR' needs ε = 1.5, 1 remains; spent and planned together: ε = 2.5 of 2"

Core kernels called: none (the accountant's composition, on a copy).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from privtab._validation import check_positive
from privtab.accountant import (
    GUARANTEES,
    BudgetAccountant,
    ParallelBlock,
    check_guarantee,
    entry_times,
    ledger_lines,
    rehearsal_copy,
)
from privtab.exceptions import BudgetExceededError
from privtab.report._section import Figure, Section, Table, svg_of

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MatplotlibFigure

__all__ = ["Plan", "PlannedRelease", "budget_sections", "load_plan", "plan_section"]

BudgetSource = BudgetAccountant | str | os.PathLike[str]

_GUARANTEE_TITLES = {"dp": "ε-DP", "idp": "ε-iDP"}
_GUARANTEE_STYLES: dict[str, tuple[Literal["solid", "dotted"], str]] = {
    "dp": ("solid", "o"),
    "idp": ("dotted", "s"),
}
_PLAN_KEYS = ("budget", "release")
_RELEASE_KEYS = ("label", "epsilon", "guarantee", "parallel")
_LEGEND_LABELS = 8
_LEGEND_WIDTH = 40
#: Non-breaking, so that HTML keeps the indentation of a block's parts.
_INDENT = "\u00a0" * 4
#: Remainders within this fraction of the budget are the rounding of the float charges
#: (ten charges of 0.1 leave -5.6e-17 of 1.0), not budget anyone could spend.
_ROUNDING = 2.0**-40


@dataclass(frozen=True)
class PlannedRelease:
    """One release of a :class:`Plan`.

    Attributes
    ----------
    label : str
        What would be released (the label of its ledger entry).
    epsilon : float
        What it would spend, finite and > 0.
    guarantee : {"dp", "idp"}
        ε-differential privacy or ε-individual differential privacy.
    parallel : str or None
        The parallel group it belongs to: the releases of one group cover disjoint
        records and compose as their maximum.
    """

    label: str
    epsilon: float
    guarantee: str = "dp"
    parallel: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the release as the table of a plan file holds it."""
        release: dict[str, Any] = {
            "label": self.label,
            "epsilon": self.epsilon,
            "guarantee": self.guarantee,
        }
        if self.parallel is not None:
            release["parallel"] = self.parallel
        return release


@dataclass(frozen=True)
class Plan:
    """Releases to be made, in order, and optionally the total budget they must fit.

    Made by :func:`load_plan`, which validates every field.

    Attributes
    ----------
    releases : tuple of PlannedRelease
    budget : float or None
        The total ε the plan must fit when no store or accountant is given.
    """

    releases: tuple[PlannedRelease, ...]
    budget: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the plan as the structure of its TOML file, for :func:`load_plan`."""
        plan: dict[str, Any] = {}
        if self.budget is not None:
            plan["budget"] = self.budget
        plan["release"] = [release.to_dict() for release in self.releases]
        return plan


def load_plan(plan: str | os.PathLike[str] | Mapping[str, Any]) -> Plan:
    """Read and validate a plan of releases (see the module's docstring for the format).

    Parameters
    ----------
    plan : str, path-like or mapping
        A TOML file, or the structure it holds (``Plan.to_dict()``).

    Returns
    -------
    Plan

    Raises
    ------
    ValueError
        If the file is not valid TOML, a key is unknown, a label is empty, an
        epsilon or the budget is not finite and > 0, a guarantee is neither
        ``"dp"`` nor ``"idp"``, or the releases of a parallel group are not listed
        together. The message names the release and the field.
    TypeError
        If ``plan`` or a field has the wrong type.
    FileNotFoundError
        If the file does not exist.

    Examples
    --------
    >>> load_plan({"release": [{"label": "counts", "epsilon": 0.5}]})
    Plan(releases=(PlannedRelease(label='counts', epsilon=0.5, guarantee='dp', \
parallel=None),), budget=None)
    >>> load_plan({"release": [{"label": "counts", "epsilon": -1}]})
    Traceback (most recent call last):
    ...
    ValueError: plan: release 1 ('counts'): epsilon must be finite and > 0, got -1.0
    """
    if isinstance(plan, str | os.PathLike):
        with open(plan, "rb") as file:
            try:
                data = tomllib.load(file)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(
                    f"plan {os.fspath(plan)!r} is not valid TOML: {exc}"
                ) from None
        return _plan_from(data, f"plan {os.fspath(plan)!r}")
    if isinstance(plan, Mapping):
        return _plan_from(plan, "plan")
    raise TypeError(
        f"plan must be the path of a TOML file or a dict, got {type(plan).__name__}"
    )


def _plan_from(data: Mapping[str, Any], where: str) -> Plan:
    _check_keys(data, _PLAN_KEYS, where)
    budget = None
    if "budget" in data:
        budget = _checked(check_positive, data["budget"], "budget", where)
    if "release" not in data:
        raise ValueError(f"{where} has no release: add a [[release]] table")
    releases = data["release"]
    if not isinstance(releases, Sequence) or isinstance(releases, str | bytes):
        raise TypeError(
            f"{where}: release must be a list of tables ([[release]]), got "
            f"{type(releases).__name__}"
        )
    if not releases:
        raise ValueError(f"{where} has no release: add a [[release]] table")
    parsed = tuple(
        _release_from(release, number, where)
        for number, release in enumerate(releases, start=1)
    )
    _check_groups_together(parsed, where)
    return Plan(parsed, budget)


def _release_from(release: Any, number: int, where: str) -> PlannedRelease:
    if not isinstance(release, Mapping):
        raise TypeError(
            f"{where}: release {number} must be a table, got {type(release).__name__}"
        )
    label = release.get("label")
    which = f"{where}: release {number}" + (
        f" ({label!r})" if isinstance(label, str) else ""
    )
    _check_keys(release, _RELEASE_KEYS, which)
    if "label" not in release:
        raise ValueError(f"{which} has no label")
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"{which}: label must be a non-empty string, got {label!r}")
    if "epsilon" not in release:
        raise ValueError(f"{which} has no epsilon")
    epsilon = _checked(check_positive, release["epsilon"], "epsilon", which)
    guarantee = release.get("guarantee", "dp")
    try:
        check_guarantee(guarantee)
    except ValueError as exc:
        raise ValueError(f"{which}: {exc}") from None
    parallel = release.get("parallel")
    if parallel is not None and (not isinstance(parallel, str) or not parallel.strip()):
        raise ValueError(
            f"{which}: parallel must be the non-empty name of a group, got {parallel!r}"
        )
    return PlannedRelease(label, epsilon, guarantee, parallel)


def _check_keys(table: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    for key in table:
        if key not in known:
            raise ValueError(
                f"{where}: unknown key {key!r} (known: {', '.join(known)})"
            )


def _checked(check: Any, value: Any, name: str, where: str) -> float:
    try:
        checked: float = check(value, name)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{where}: {exc}") from None
    return checked


def _check_groups_together(releases: Sequence[PlannedRelease], where: str) -> None:
    first_of: dict[str, int] = {}
    previous = None
    for number, release in enumerate(releases, start=1):
        group = release.parallel
        if group is not None and group != previous and group in first_of:
            raise ValueError(
                f"{where}: release {number} ({release.label!r}) is in the parallel "
                f"group {group!r}, whose releases must be listed together (it "
                f"started at release {first_of[group]} and other releases came "
                "between)"
            )
        if group is not None:
            first_of.setdefault(group, number)
        previous = group


# Budget ------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Step:
    """One rise of a cumulative-spend plot."""

    x: Any
    before: float
    after: float
    label: str
    guarantee: str | None
    """``None`` for a rise that mixes guarantees (what was spent before a plan)."""


def budget_sections(source: BudgetSource) -> list[Section]:
    """Return the report's "Budget" section: the ledger and ε spent over time.

    Parameters
    ----------
    source : BudgetAccountant, str or path-like
        An accountant, or the file of a budget store, which is read in one
        read-only transaction (nothing written, no writer held off).

    Returns
    -------
    list of Section
        The "Budget" section: a table of every ledger entry (time, release,
        guarantee, ε, running total, remaining; the parts of a parallel block
        indented under it) and a step plot of the cumulative ε spent over time,
        coloured by label, ε-DP and ε-iDP drawn differently, the budget dashed.

    Raises
    ------
    TypeError
        If ``source`` is neither an accountant nor a path.
    FileNotFoundError, ValueError
        If the path holds no budget store.

    Notes
    -----
    Nothing is spent or reserved: the section shows what the accountant's
    ``ledger`` and ``spent`` say, with a parallel block counted once, as its
    largest part (parallel composition), and the running total summed exactly as
    the accountant sums it. The ledger holds no data, but its labels say what was
    released and when.

    Examples
    --------
    >>> acc = BudgetAccountant(2.0)
    >>> acc.spend(0.5, label="counts")
    >>> acc.spend(0.25, label="masked means", guarantee="idp")
    >>> [section] = budget_sections(acc)
    >>> section.summary
    'ε = 0.75 spent of 2 (0.5 ε-DP, 0.25 ε-iDP); 1.25 remains.'
    >>> [record["running_total"] for record in section.records]
    [0.5, 0.75]
    """
    copy = rehearsal_copy(_checked_source(source))
    ledger = copy.ledger
    times = entry_times(copy)
    budget = copy.epsilon
    totals = _running_totals(entry.epsilon for entry in ledger)
    dated = bool(times) and all(math.isfinite(t) for t in times)
    columns = ["time", "release", "guarantee", "ε", "running total", "remaining"]
    if copy.delta:
        columns.insert(4, "δ")
    rows: list[tuple[Any, ...]] = []
    records: list[dict[str, Any]] = []
    for number, (charge, when, total) in enumerate(
        zip(ledger, times, totals, strict=True), start=1
    ):
        remaining = _remaining(budget, total)
        lines = ledger_lines([charge], indent=_INDENT)
        for position, (entry, name, suffix) in enumerate(lines):
            top = position == 0
            cells: list[Any] = [
                _time_text(when) if top else "",
                name + suffix,
                _GUARANTEE_TITLES[entry.guarantee],
                _number(entry.epsilon),
                _number(float(total)) if top else "",
                _remaining_text(remaining, budget) if top else "",
            ]
            if copy.delta:
                cells.insert(4, f"{entry.delta:.3g}")
            rows.append(tuple(cells))
            records.append(
                {
                    "section": "budget",
                    "entry": number,
                    "depth": (len(name) - len(entry.label)) // len(_INDENT),
                    "label": entry.label,
                    "composition": entry.composition
                    or ("parallel" if entry.parts else None),
                    "guarantee": entry.guarantee,
                    "epsilon": entry.epsilon,
                    "delta": entry.delta,
                    "time": when if top and math.isfinite(when) else None,
                    "running_total": float(total) if top else None,
                    "remaining": remaining if top else None,
                }
            )
    figures: tuple[Figure, ...] = ()
    notes = []
    if any(entry.parts for entry in ledger):
        notes.append(
            "A parallel block (max of parts) counts once, as its largest part: its "
            "parts cover disjoint records. Within a part, spends add up (sum)."
        )
    if ledger:
        before = [Fraction(0), *totals[:-1]]
        steps = [
            _Step(
                _as_datetime(times[i]) if dated else i + 1,
                float(before[i]),
                float(totals[i]),
                entry.label + (" (max of parts)" if entry.parts else ""),
                entry.guarantee,
            )
            for i, entry in enumerate(ledger)
        ]
        figures = (
            Figure(
                svg_of(
                    _cumulative_figure(
                        steps,
                        budget,
                        xlabel="time (UTC)" if dated else "release, in ledger order",
                        dates=dated,
                    )
                ),
                "Each step up is one release, coloured by its label (solid: ε-DP, "
                "dotted: ε-iDP); the dashed line is the total budget; a parallel "
                "block is one step, as high as its largest part.",
                f"Cumulative ε spent over {len(ledger)} releases, reaching "
                f"{_number(copy.spent)} of {_budget_text(budget)}.",
            ),
        )
        if not dated:
            notes.append(
                "The times of the releases are not known (a ledger restored with "
                "BudgetAccountant.from_dict): they are drawn in ledger order."
            )
    else:
        notes.append("Nothing has been spent yet.")
    path = _source_path(source)
    if path is not None:
        notes.append(f"Read from {path} without writing to it or locking it.")
    caption = f"Ledger of {path}" if path is not None else "Ledger of the accountant"
    return [
        Section(
            key="budget",
            title="Budget",
            summary=_spent_summary(copy),
            figures=figures,
            tables=(Table(tuple(columns), tuple(rows), caption),),
            records=tuple(records),
            notes=tuple(notes),
        )
    ]


def _checked_source(source: Any) -> BudgetSource:
    if not isinstance(source, BudgetAccountant | str | os.PathLike):
        raise TypeError(
            "source must be a privtab.BudgetAccountant or the path of a budget "
            f"store, got {type(source).__name__}"
        )
    return source


def _source_path(source: BudgetSource) -> str | None:
    """Return the file a source reads (a store's path), or ``None`` in memory."""
    if isinstance(source, BudgetAccountant):
        return source.path
    return os.path.abspath(os.fspath(source))


def _running_totals(epsilons: Any) -> list[Fraction]:
    """Return the exact running sums of the top-level charges, as the store sums them."""
    totals: list[Fraction] = []
    total = Fraction(0)
    for epsilon in epsilons:
        total += Fraction(epsilon)
        totals.append(total)
    return totals


def _exact_spent(accountant: BudgetAccountant) -> Fraction:
    """Return the exact sum of the ledger's charges (what the accountant's totals hold)."""
    return sum((Fraction(entry.epsilon) for entry in accountant.ledger), Fraction(0))


def _remaining(budget: float, spent: Fraction) -> float | None:
    """Return ``budget - spent`` rounded to a float; ``None`` for no limit."""
    if budget == math.inf:
        return None
    return float(Fraction(budget) - spent)


def _spent_summary(accountant: BudgetAccountant) -> str:
    by_kind = ", ".join(
        f"{_number(accountant.spent_by(kind))} {_GUARANTEE_TITLES[kind]}"
        for kind in GUARANTEES
    )
    spent = _number(accountant.spent)
    if accountant.epsilon == math.inf:
        return f"ε = {spent} spent, with no limit ({by_kind})."
    return (
        f"ε = {spent} spent of {_number(accountant.epsilon)} ({by_kind}); "
        f"{_remaining_text(accountant.remaining, accountant.epsilon)} remains."
    )


# Plan --------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Outcome:
    """What one planned release does to the ledger."""

    charged: float
    running_total: float
    remaining: float | None
    status: str


def plan_section(
    plan: Plan | str | os.PathLike[str] | Mapping[str, Any],
    source: BudgetSource | None = None,
) -> Section:
    """Return the report's "Plan" section: the ledger a plan would produce, and whether it fits.

    Parameters
    ----------
    plan : Plan, str, path-like or mapping
        A plan, or what :func:`load_plan` reads one from.
    source : BudgetAccountant, str or path-like, optional
        What was spent already: an accountant, or the file of a budget store (read
        in one read-only transaction). Without it the plan starts from an empty
        ledger with the plan's own ``budget`` (unlimited if it states none).

    Returns
    -------
    Section
        A table of the ledger entries already spent followed by the planned
        releases, each with what it would charge (a release in a parallel group
        charges only what it adds to the group's maximum), the running total, the
        remaining budget and whether the accountant would accept it; a step plot
        of the running total; the verdict as its summary ("fits, leaves ε = 0.4"
        or "does not fit: release 'dpfsdr' needs ε = 2, 0.7 remains; ...").

    Raises
    ------
    TypeError
        If ``source`` is neither an accountant nor a path.
    ValueError, FileNotFoundError
        For an invalid plan (see :func:`load_plan`) or a path without a store.

    Notes
    -----
    The plan is spent, in order, on an in-memory copy of the source
    (``rehearsal_copy``): parallel groups become
    ``acc.parallel(group)`` blocks with one part per release, and the first
    release the copy refuses (``BudgetExceededError``) is the one the verdict
    names; later releases are not tried. The verdict is therefore what the
    accountant itself would decide, with its exact sums and its float tolerance
    (``BudgetAccountant.RELATIVE_TOLERANCE``), as long as nothing else is
    spent in between. The source is never charged. When both the source and the
    plan state a budget, the smaller one is checked.

    Examples
    --------
    >>> acc = BudgetAccountant(1.0)
    >>> acc.spend(0.25, label="counts")
    >>> plan = {"release": [{"label": "histogram", "epsilon": 0.5}]}
    >>> plan_section(plan, acc).summary
    'fits, leaves ε = 0.25'
    >>> acc.spent
    0.25
    """
    if not isinstance(plan, Plan):
        plan = load_plan(plan)
    notes: list[str] = []
    if source is None:
        base = BudgetAccountant(math.inf if plan.budget is None else plan.budget)
    else:
        base = rehearsal_copy(_checked_source(source))
    budget = base.epsilon
    if plan.budget is not None and plan.budget != budget:
        if plan.budget < budget:
            budget = plan.budget
        notes.append(
            f"The plan states a budget of ε = {_number(plan.budget)}, the source "
            f"{_budget_text(base.epsilon)}: the plan is checked against the smaller, "
            f"{_number(budget)}."
        )
    bounded = rehearsal_copy(base, epsilon=budget)
    unlimited = rehearsal_copy(base, epsilon=math.inf)
    already = _exact_spent(base)
    outcomes, refused = _rehearse(plan.releases, bounded, unlimited, budget)

    rows: list[tuple[Any, ...]] = []
    records: list[dict[str, Any]] = []
    existing = base.ledger
    for entry, total in zip(
        existing, _running_totals(e.epsilon for e in existing), strict=True
    ):
        remaining = _remaining(budget, total)
        rows.append(
            (
                "",
                entry.label + (" (max of parts)" if entry.parts else ""),
                "",
                _GUARANTEE_TITLES[entry.guarantee],
                _number(entry.epsilon),
                _number(entry.epsilon),
                _number(float(total)),
                _remaining_text(remaining, budget),
                "spent",
            )
        )
    for number, (release, outcome) in enumerate(
        zip(plan.releases, outcomes, strict=True), start=1
    ):
        rows.append(
            (
                str(number),
                release.label,
                release.parallel or "",
                _GUARANTEE_TITLES[release.guarantee],
                _number(release.epsilon),
                _number(outcome.charged),
                _number(outcome.running_total),
                _remaining_text(outcome.remaining, budget),
                outcome.status,
            )
        )
        records.append(
            {
                "section": "plan",
                "release": number,
                **release.to_dict(),
                "parallel": release.parallel,
                "charged": outcome.charged,
                "running_total": outcome.running_total,
                "remaining": outcome.remaining,
                "status": outcome.status,
            }
        )
    verdict = _verdict(plan, outcomes, refused, budget, bounded)
    records.append(
        {
            "section": "plan",
            "verdict": verdict,
            "fits": refused is None,
            "first_refused": None if refused is None else refused + 1,
            "budget": None if budget == math.inf else budget,
            "spent_before": float(already),
            "total": outcomes[-1].running_total,
        }
    )
    steps = []
    if already:
        steps.append(_Step(0, 0.0, float(already), "spent already", None))
    previous = float(already)
    for number, (release, outcome) in enumerate(
        zip(plan.releases, outcomes, strict=True), start=1
    ):
        steps.append(
            _Step(
                number,
                previous,
                outcome.running_total,
                release.label,
                release.guarantee,
            )
        )
        previous = outcome.running_total
    figure = Figure(
        svg_of(
            _cumulative_figure(
                steps,
                budget,
                xlabel="planned release (0: spent already)",
                dates=False,
                refused=None if refused is None else refused + (1 if already else 0),
            )
        ),
        "Each step up is one planned release (step 0: what was spent already), "
        "coloured by its label (solid: ε-DP, dotted: ε-iDP); the dashed line is the "
        "budget; a red cross marks the first release that would be refused.",
        f"Running total of the plan's {len(plan.releases)} releases: {verdict}.",
    )
    if any(release.parallel for release in plan.releases):
        notes.append(
            "Releases of one parallel group cover disjoint records: the group "
            "charges its largest release, so a release charges only what it adds "
            "to that maximum."
        )
    return Section(
        key="plan",
        title="Plan",
        summary=verdict,
        figures=(figure,),
        tables=(
            Table(
                (
                    "#",
                    "release",
                    "parallel group",
                    "guarantee",
                    "ε",
                    "charged",
                    "running total",
                    "remaining",
                    "status",
                ),
                tuple(rows),
                "The ledger spent so far, then the plan's releases in order",
            ),
        ),
        records=tuple(records),
        notes=tuple(notes),
    )


def _rehearse(
    releases: Sequence[PlannedRelease],
    bounded: BudgetAccountant,
    unlimited: BudgetAccountant,
    budget: float,
) -> tuple[list[_Outcome], int | None]:
    """Spend the plan on both copies; return each release's outcome and the first refused."""
    outcomes: list[_Outcome] = []
    refused: int | None = None
    index = 0
    while index < len(releases):
        group = releases[index].parallel
        end = index + 1
        while group is not None and end < len(releases):
            if releases[end].parallel != group:
                break
            end += 1
        with contextlib.ExitStack() as blocks:
            unlimited_block = bounded_block = None
            if group is not None:
                unlimited_block = blocks.enter_context(unlimited.parallel(group))
                if refused is None:
                    bounded_block = blocks.enter_context(bounded.parallel(group))
            for position in range(index, end):
                release = releases[position]
                before = _exact_spent(unlimited)
                _spend(unlimited, release, unlimited_block)
                status = "not tried"
                if refused is None:
                    try:
                        _spend(bounded, release, bounded_block)
                        status = "fits"
                    except BudgetExceededError:
                        refused, status = position, "refused"
                total = _exact_spent(unlimited)
                remaining = _remaining(budget, total)
                if status == "fits" and remaining is not None:
                    remaining = max(remaining, 0.0)
                outcomes.append(
                    _Outcome(float(total - before), float(total), remaining, status)
                )
        index = end
    return outcomes, refused


def _spend(
    accountant: BudgetAccountant,
    release: PlannedRelease,
    block: ParallelBlock | None,
) -> None:
    if block is None:
        accountant.spend(release.epsilon, release.label, guarantee=release.guarantee)
        return
    with block.part(release.label):
        accountant.spend(release.epsilon, release.label, guarantee=release.guarantee)


def _verdict(
    plan: Plan,
    outcomes: Sequence[_Outcome],
    refused: int | None,
    budget: float,
    bounded: BudgetAccountant,
) -> str:
    total = outcomes[-1].running_total
    if budget == math.inf:
        return (
            f"fits: no budget is set; spent and planned together: ε = {_number(total)}"
        )
    if refused is None:
        return f"fits, leaves ε = {_remaining_text(bounded.remaining, budget)}"
    release = plan.releases[refused]
    name = repr(release.label)
    if sum(r.label == release.label for r in plan.releases) > 1:
        name += f" (release {refused + 1})"
    left = _remaining_text(max(bounded.remaining, 0.0), budget)
    needs = _number(outcomes[refused].charged)
    if needs == left:
        left, needs = repr(max(bounded.remaining, 0.0)), repr(outcomes[refused].charged)
    group = (
        f" (its parallel group {release.parallel!r} rises by that much)"
        if release.parallel is not None and outcomes[refused].charged != release.epsilon
        else ""
    )
    together = _number(total)
    if together == _number(budget):
        together = repr(total)
    return (
        f"does not fit: release {name} needs ε = {needs}{group}, "
        f"{left} remains; spent and planned together: ε = {together} of "
        f"{_number(budget)}"
    )


# Formatting and figures --------------------------------------------------------------
def _number(value: float) -> str:
    return f"{value:.6g}"


def _budget_text(budget: float) -> str:
    return "unlimited" if budget == math.inf else _number(budget)


def _remaining_text(remaining: float | None, budget: float) -> str:
    """Return what remains as text: 0 when only the rounding of the charges is left."""
    if remaining is None:
        return "unlimited"
    if abs(remaining) <= budget * _ROUNDING:
        return "0"
    return _number(remaining)


def _as_datetime(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _time_text(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "unknown"
    return _as_datetime(seconds).strftime("%Y-%m-%d %H:%M:%S UTC")


def _plain_text(label: str) -> str:
    """Return ``label`` for matplotlib, which reads ``$...$`` as mathematics."""
    short = label if len(label) <= _LEGEND_WIDTH else label[: _LEGEND_WIDTH - 1] + "…"
    return short.replace("$", r"\$")


def _cumulative_figure(
    steps: Sequence[_Step],
    budget: float,
    *,
    xlabel: str,
    dates: bool,
    refused: int | None = None,
) -> MatplotlibFigure:
    """Draw the running total as steps, each rise coloured by its label."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, date2num
    from matplotlib.figure import Figure as MatplotlibFigure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    figure = MatplotlibFigure(figsize=(5.6, 4.2), layout="constrained")
    axes = figure.add_subplot()
    xs = [float(date2num(step.x)) if dates else step.x for step in steps]
    colours: dict[str, str] = {}
    for step in steps:
        if step.guarantee is None:
            colours.setdefault(step.label, "0.45")
        else:
            colours.setdefault(step.label, f"C{len(colours) % 10}")
    axes.step(
        [xs[0], *xs],
        [steps[0].before, *(step.after for step in steps)],
        where="post",
        color="0.6",
        linewidth=1,
    )
    for x, step in zip(xs, steps, strict=True):
        style, marker = _GUARANTEE_STYLES[step.guarantee or "dp"]
        axes.vlines(
            x,
            step.before,
            step.after,
            colors=colours[step.label],
            linestyles=style,
            linewidth=3,
        )
        axes.plot(
            [x],
            [step.after],
            marker=marker,
            color=colours[step.label],
            markersize=4,
            linestyle="none",
        )
    if refused is not None:
        axes.plot(
            [xs[refused]],
            [steps[refused].after],
            marker="x",
            color="red",
            markersize=12,
            markeredgewidth=2.5,
            linestyle="none",
        )
    top = max(step.after for step in steps)
    handles = [
        Line2D([], [], color=colour, linewidth=3, label=_plain_text(label))
        for label, colour in list(colours.items())[:_LEGEND_LABELS]
    ]
    if len(colours) > _LEGEND_LABELS:
        handles.append(
            Line2D(
                [],
                [],
                color="none",
                label=f"… {len(colours) - _LEGEND_LABELS} more labels",
            )
        )
    drawn = {step.guarantee for step in steps}
    for kind in (kind for kind in GUARANTEES if kind in drawn):
        style, marker = _GUARANTEE_STYLES[kind]
        handles.append(
            Line2D(
                [],
                [],
                color="black",
                linestyle=style,
                marker=marker,
                label=_GUARANTEE_TITLES[kind],
            )
        )
    if budget != math.inf:
        axes.axhline(budget, color="0.25", linestyle="dashed", linewidth=1.2)
        handles.append(
            Line2D(
                [],
                [],
                color="0.25",
                linestyle="dashed",
                label=f"budget ε = {_number(budget)}",
            )
        )
        top = max(top, budget)
    axes.set_ylim(0, top * 1.08 if top > 0 else 1.0)
    axes.set_ylabel("cumulative ε spent")
    axes.set_xlabel(xlabel)
    if dates:
        locator = AutoDateLocator()
        axes.xaxis.set_major_locator(locator)
        axes.xaxis.set_major_formatter(ConciseDateFormatter(locator, tz=timezone.utc))
    else:
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(axis="y", color="0.9")
    # Below the axes, so the figure stays narrow enough to read on a phone.
    figure.legend(
        handles=handles,
        loc="outside lower center",
        ncols=3,
        fontsize="small",
        frameon=False,
    )
    return figure
