"""The data owner's report: the privacy-utility trade-off of a table, and the budget.

A report reads the raw data many times to show what each family of privtab would
release at each epsilon. It is *not* differentially private and spends nothing on any
accountant: it is for the data owner choosing epsilon, never for publication.

Core kernels called: none directly; the mechanisms it runs call their own.
"""

from __future__ import annotations

from privtab.report._section import Figure, Section, Table, svg_of

__all__ = ["Figure", "Section", "Table", "svg_of"]
