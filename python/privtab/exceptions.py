"""Exceptions and warnings raised by privtab.

Every error subclasses the built-in exception a user would expect (``ValueError`` for
bad values) so that generic handlers keep working, and :class:`PrivtabError` so that
privtab's own failures can be caught together.

Core kernels called: none; the Rust binding raises these classes.
"""

from __future__ import annotations

__all__ = [
    "BudgetExceededError",
    "DomainError",
    "LongSearchWarning",
    "PrivacyLeakWarning",
    "PrivtabError",
]


class PrivtabError(Exception):
    """Base class of every error privtab raises on its own account."""


class BudgetExceededError(PrivtabError, ValueError):
    """A privacy accountant cannot afford the epsilon a call asked for.

    Raised *before* the call reads any data, so nothing was spent.
    """


class DomainError(PrivtabError, ValueError):
    """A declared domain is unusable, or data falls outside it.

    Examples: the product of cardinalities exceeds 2**64, a value is not among the
    declared categories, or an output over the domain would exceed ``max_cells``.
    """


class PrivacyLeakWarning(UserWarning):
    """Something public was taken from the private data instead of being declared.

    Differential privacy assumes that domains (categories, bounds) are public knowledge.
    When privtab infers them from the data, the released output can reveal them, so the
    stated guarantee holds only for the rest of the output.
    """


class LongSearchWarning(UserWarning):
    """A search without a time limit has run long and may run much longer.

    Emitted once per call, while the search runs, by the maximal-set searches
    (:func:`privtab.maximal_itemsets`, :func:`privtab.maximal_kac_sets`, and the k-AC
    selector's maximal methods) when they pass ``privtab.kac.LONG_SEARCH_SECONDS``
    seconds without ``time_limit``. It concerns running time only, not privacy: bound
    the search with ``time_limit`` or ``max_sets``. Turned into an error (e.g. by
    ``warnings.simplefilter("error")``) it stops the search.
    """
