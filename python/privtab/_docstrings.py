"""Docstrings shared by several estimators, written once and filled in at import.

A docstring template marks a shared block with a line holding only ``%(name)s``;
:func:`fill_doc` replaces that line by the block, indented like the marker. Used where
two estimators differ in one step and would otherwise repeat pages of Parameters,
Attributes and Notes (the k-AC DP releases, the DP linear classifiers).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")
_MARKER = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$")


def fill_template(template: str, **blocks: str) -> str:
    r"""Return ``template`` with every ``%(name)s`` line replaced by ``blocks[name]``.

    Each block is dedented, then indented like its marker line. Every marker needs a
    block and every block a marker (a ``KeyError`` or ``ValueError`` at import time
    otherwise, so a typo cannot ship a half-filled docstring).

    Examples
    --------
    >>> print(fill_template("Title.\n\n    %(body)s\n", body="Line one.\nLine two."))
    Title.
    <BLANKLINE>
        Line one.
        Line two.
    <BLANKLINE>
    """
    used: set[str] = set()
    lines = []
    for line in template.splitlines(keepends=True):
        marker = _MARKER.match(line.rstrip("\n"))
        if marker is None:
            lines.append(line)
            continue
        name = marker["name"]
        used.add(name)
        block = textwrap.dedent(blocks[name]).strip("\n")
        lines.append(textwrap.indent(block, marker["indent"]) + "\n")
    unused = set(blocks) - used
    if unused:
        raise ValueError(f"blocks without a marker in the template: {sorted(unused)}")
    return "".join(lines)


def fill_doc(template: str | None = None, **blocks: str) -> Callable[[_T], _T]:
    """Class or function decorator: ``__doc__ = fill_template(template, **blocks)``.

    Without ``template`` the object's own docstring is the template (nothing to do
    when docstrings are stripped, ``python -OO``).
    """

    def decorate(obj: _T) -> _T:
        own = template if template is not None else obj.__doc__
        if own is not None:
            obj.__doc__ = fill_template(own, **blocks)
        return obj

    return decorate


#: The ``label`` parameter of every DP estimator: an entry of its Parameters.
LABEL_PARAMETER = """\
label : str, optional
    The label of the accountant's ledger entry of each fit (default: the estimator's
    name and settings); ``privacy_ledger_`` lists the steps of the fit.
"""

#: The ``n_threads`` parameter of an estimator whose methods run kernels.
THREADS_PARAMETER = """\
n_threads : int, optional
    Threads of the kernels its methods run (default: those of the enclosing
    :func:`privtab.threads` block, else every core); the result does not depend on it.
"""

#: What repeated fits cost: a paragraph of the Notes of every DP estimator.
REFITS_NOTE = """\
Refits. Every call of ``fit`` is a new release of the data, charged again, and so
are the fits of scikit-learn's model selection: ``cross_val_score(..., cv=5)`` fits
five clones and is charged five fits (5.0 for an estimator of ``epsilon=1``);
``GridSearchCV`` is charged once per candidate and fold, plus once for the final
refit on all the data (``refit=True``). The clones share the accountant (a copy of
a ``BudgetAccountant`` is the accountant itself), so its budget caps the whole
search. The scores they return are computed on held-out records without noise:
they are for the analyst, not covered by the guarantee.
"""
