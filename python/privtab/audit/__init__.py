"""Audit the privacy of a mechanism: a statistically valid lower bound on its ε.

:func:`audit_mechanism` runs a mechanism (any callable, or a privtab estimator and a
statistic of its fitted result) on two neighbouring data sets, chooses an output event
on half of the runs and turns the event's frequencies on the other half into a lower
bound ``epsilon_lower`` that holds at the stated confidence. A mechanism that claims ε
and shows ``epsilon_lower > ε`` is not ε-DP; :class:`FamilyBound` says, for each kind
of event searched, which kind of violation it detects and how large it is. :mod:`privtab.audit.pairs` builds the
neighbouring data sets that stress each mechanism of privtab.

Core kernels called: none directly (the audited mechanisms call their own).
"""

from __future__ import annotations

from privtab.audit import pairs
from privtab.audit._auditor import MIN_RUNS, AuditResult, FamilyBound, audit_mechanism
from privtab.audit._events import clopper_pearson
from privtab.audit.pairs import NeighbouringPair

__all__ = [
    "MIN_RUNS",
    "AuditResult",
    "FamilyBound",
    "NeighbouringPair",
    "audit_mechanism",
    "clopper_pearson",
    "pairs",
]
