"""The data owner's report: the privacy-utility trade-off of a table, and the budget.

A report reads the raw data many times to show what each family of privtab would
release at each epsilon. It is *not* differentially private and spends nothing on any
accountant: it is for the data owner choosing epsilon, never for publication.

``Report.from_data(frame, target)`` runs every family that applies to the table over
a grid of epsilon (:data:`FAMILIES`); ``report.to_html(path)`` writes the page,
``to_frame()`` and ``to_json()`` give its numbers.

Core kernels called: none directly; the mechanisms it runs call their own.
"""

from __future__ import annotations

from privtab.report._budget import (
    Plan,
    PlannedRelease,
    budget_sections,
    load_plan,
    plan_section,
)
from privtab.report._families import FAMILIES
from privtab.report._report import BANNER, DEFAULT_EPSILONS, QUICK_EPSILONS, Report
from privtab.report._section import Figure, Section, Table, svg_of

__all__ = [
    "BANNER",
    "DEFAULT_EPSILONS",
    "FAMILIES",
    "QUICK_EPSILONS",
    "Figure",
    "Plan",
    "PlannedRelease",
    "Report",
    "Section",
    "Table",
    "budget_sections",
    "load_plan",
    "plan_section",
    "svg_of",
]
