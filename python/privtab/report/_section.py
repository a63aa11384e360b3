"""The parts a report page is made of: sections holding figures, tables and records.

Every part holds only what the page shows, as plain strings and numbers, so a page can
be rendered to one self-contained HTML file (figures are inline SVG) and its data
exported as a frame or JSON without re-running anything.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MatplotlibFigure

_XML_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.DOTALL)
# Matplotlib writes its name and the RDF vocabularies as URLs; an inline SVG needs
# neither the metadata nor the namespace declarations (HTML's parser supplies them).
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)
_NAMESPACES = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


@dataclass(frozen=True)
class Figure:
    """One inline figure of a report.

    Parameters
    ----------
    svg : str
        The ``<svg>...</svg>`` markup, with no external reference (see :func:`svg_of`).
    reading_guide : str
        One line telling how to read it, e.g. "higher is better; the dashed line is
        the non-private result".
    alt : str
        A text description for screen readers.
    """

    svg: str
    reading_guide: str
    alt: str = ""


@dataclass(frozen=True)
class Table:
    """One table of a report: column names and rows of plain values."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    caption: str = ""


@dataclass(frozen=True)
class Section:
    """One section of a report page (one family, or one part of the budget).

    Parameters
    ----------
    key : str
        The anchor of the section in the page (letters, digits and ``-``).
    title : str
        The heading, also its entry in the table of contents.
    summary : str
        A short paragraph above the figures (plain text).
    figures, tables : tuple
        What the section shows, in order.
    records : tuple of dict
        The numbers behind the figures in long form (one dict a measured value, e.g.
        ``{"family": ..., "metric": ..., "epsilon": ..., "repetition": ..., "value": ...}``),
        for ``Report.to_frame()`` and ``Report.to_json()``.
    notes : tuple of str
        Warnings or remarks shown under the section (plain text).
    """

    key: str
    title: str
    summary: str = ""
    figures: tuple[Figure, ...] = ()
    tables: tuple[Table, ...] = ()
    records: tuple[dict[str, Any], ...] = field(default=())
    notes: tuple[str, ...] = ()


def svg_of(figure: MatplotlibFigure) -> str:
    """Return a matplotlib figure as inline ``<svg>`` markup and close it.

    Text is kept as text (``svg.fonttype = "none"``) so the page stays small and
    searchable; the XML prologue, the doctype, the metadata and the namespace
    declarations are dropped so the markup can sit inside HTML with no URL in it
    (its only references are ``#`` anchors within the figure).
    """
    import matplotlib
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "privtab"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    svg = _XML_PROLOGUE.sub("", buffer.getvalue(), count=1)
    svg = _METADATA.sub("", svg, count=1)
    head, rest = svg.split(">", 1)
    return _NAMESPACES.sub("", head) + ">" + rest
