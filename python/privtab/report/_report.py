"""The data owner's report: one page of sections, as HTML, a frame or JSON.

:meth:`Report.from_data` runs every family that applies to a table over a grid of
epsilon (:mod:`privtab.report._families`) and, given a budget or a plan, adds the
sections of :mod:`privtab.report._budget`. The page is rendered from a Jinja2
template into one self-contained HTML file: inline SVG figures, inline style, no
script and no link to anything outside the page.

Core kernels called: none directly; the families run the estimators of
:mod:`privtab`.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from privtab._validation import check_epsilon, check_positive_int
from privtab.accountant import BudgetAccountant, use_accountant
from privtab.exceptions import PrivacyLeakWarning
from privtab.report._data import ReportData, prepare
from privtab.report._families import FAMILIES, RECORD_KEYS, Run
from privtab.report._section import Figure, Section, Table

__all__ = ["BANNER", "DEFAULT_EPSILONS", "QUICK_EPSILONS", "Report"]

#: The default grid: 7 points, log-spaced from 0.01 to 10.
DEFAULT_EPSILONS = (0.01, 0.0316, 0.1, 0.316, 1.0, 3.16, 10.0)
#: The grid of ``quick=True``.
QUICK_EPSILONS = (0.01, 0.1, 1.0, 10.0)

#: The notice at the top of every report page: the report is not a release.
BANNER = (
    "This report is about the data, not a release. It reads the raw data many times "
    "and is NOT differentially private: it is for the data owner choosing ε, and must "
    "not be published. It spends nothing on any privacy accountant."
)

_JSON_FORMAT = "privtab-report/1"


def _seed_sequence(random_state: Any) -> np.random.SeedSequence:
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(0, 2**63 - 1)))
    return np.random.SeedSequence(
        check_positive_int(random_state, "random_state", minimum=0)
    )


def _check_epsilons(epsilons: Any) -> tuple[float, ...]:
    values = tuple(check_epsilon(e, "epsilons") for e in np.atleast_1d(epsilons))
    if not values:
        raise ValueError("epsilons must hold at least one epsilon, got none")
    return tuple(sorted(set(values)))


def _check_families(families: Iterable[str] | None, skip: Iterable[str]) -> list[str]:
    chosen = list(FAMILIES) if families is None else list(families)
    skipped = list(skip)
    unknown = [k for k in [*chosen, *skipped] if k not in FAMILIES]
    if unknown:
        raise ValueError(
            f"families or skip name unknown families {unknown!r}; choose from "
            f"{list(FAMILIES)!r}"
        )
    return [k for k in FAMILIES if k in chosen and k not in skipped]


@dataclass(frozen=True)
class Report:
    """A report on a table: what each family would release at each epsilon.

    Build one with :meth:`from_data`; show it in a notebook (``_repr_html_``), save
    it with :meth:`to_html`, or take its numbers with :meth:`to_frame` and
    :meth:`to_json` (:meth:`from_json` reads them back).

    Parameters
    ----------
    title : str
        The page's heading.
    sections : tuple of Section
        The sections in page order.
    about : dict
        What the report measured: rows, target, grid, repetitions, seconds, the
        families skipped and why, warnings; ``details``, a list of ``[term,
        description]`` pairs, is shown as given (JSON values only).
    banner : str, optional
        The notice at the top of the page; ``None`` (the default) is :data:`BANNER`.

    Notes
    -----
    A report is not differentially private. It reads the raw data once per
    mechanism run, for every epsilon of the grid and every repetition, and shows
    non-private statistics (the non-private results, the baselines, the data's
    domains and bounds where they were not declared). Every mechanism is charged on
    a throw-away accountant of unlimited budget, so that neither the default
    accountant nor any given one is charged; the page says all this in its banner.
    """

    title: str
    sections: tuple[Section, ...] = ()
    about: dict[str, Any] = field(default_factory=dict)
    banner: str = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.banner is None:
            object.__setattr__(self, "banner", BANNER)

    @classmethod
    def from_data(
        cls,
        data: Any,
        target: str,
        *,
        families: Iterable[str] | None = None,
        skip: Iterable[str] = (),
        epsilons: Sequence[float] | None = None,
        repetitions: int | None = None,
        quick: bool = False,
        domains: Mapping[Any, Sequence[Any]] | None = None,
        bounds: Mapping[Any, tuple[float, float]] | None = None,
        categorical: Sequence[str] = (),
        bins: int | None = None,
        budget: Any = None,
        plan: Any = None,
        random_state: Any = None,
        n_jobs: int | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        title: str | None = None,
    ) -> Report:
        """Measure the privacy-utility trade-off of ``data`` for every family.

        Parameters
        ----------
        data : pandas or polars DataFrame
            The table, with the ``target`` column.
        target : str
            The column to predict (and to select attributes for).
        families, skip : iterable of str, optional
            The families to run (default: every one that applies to the table)
            and those to leave out: ``"privatekd"``, ... (``FAMILIES``).
        epsilons : sequence of float, optional
            The grid (each finite and > 0). Default: :data:`DEFAULT_EPSILONS`, or
            :data:`QUICK_EPSILONS` with ``quick``.
        repetitions : int, optional
            Runs of each mechanism at each epsilon; default 3, or 2 with ``quick``.
        quick : bool, default=False
            A smaller grid, for a first look.
        domains, bounds, categorical, bins
            How to encode the table (as :class:`~privtab.table.TableEncoder`);
            what is not declared is taken from the data, silently (the report is
            not private).
        budget : BudgetAccountant or path, optional
            Add the ledger of this accountant or budget store (read only).
        plan : path or mapping, optional
            Add the ledger a plan of releases would produce, and whether it fits
            (on top of ``budget``, if given).
        random_state : None, int, numpy.random.Generator or SeedSequence
            Seeds the split and every mechanism (a report's seed voids nothing: it
            is not a release).
        n_jobs : int, optional
            Families run in parallel on this many threads (default: the number of
            CPUs, at most 4).
        progress : callable, optional
            Called as ``progress(description, done, total)`` after each step.
        title : str, optional
            The page's heading.

        Returns
        -------
        Report

        Raises
        ------
        ValueError
            If ``target`` is not a column, ``epsilons`` holds a value that is not
            finite and > 0, ``repetitions`` is < 1, or a family name is unknown.
        TypeError
            If ``data`` is not a DataFrame, or an argument has the wrong type.

        Notes
        -----
        Not differentially private, and not meant to be: every repetition of every
        mechanism reads the raw table, and the page shows non-private results, the
        data's own categories and bounds where they are not declared, and the
        messages of the warnings raised. Each family charges its mechanisms on its
        own ``BudgetAccountant(inf)`` (also made the accountant of its thread with
        :func:`~privtab.accountant.use_accountant`), so neither the default
        accountant nor any accountant or budget file of the caller is charged.

        The :class:`~privtab.exceptions.PrivacyLeakWarning` of domains taken from
        the data is dropped inside the report only (the banner says that the report
        reads the data directly); the other warnings are listed on the page. While
        the report runs, warnings are recorded rather than shown in every thread of
        the process (Python's warning filters are process-wide); they are shown as
        before once it returns.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> rng = np.random.default_rng(0)
        >>> frame = pd.DataFrame({"a": rng.choice(["x", "y"], 200),
        ...                       "b": rng.choice(["u", "v", "w"], 200)})
        >>> frame["label"] = np.where(frame["a"] == "x", "yes", "no")
        >>> report = Report.from_data(frame, "label", families=["privatekd"],
        ...                           epsilons=[1.0], repetitions=1)
        >>> [section.key for section in report.sections]
        ['privatekd']
        >>> report.to_html().startswith("<!DOCTYPE html>")
        True
        """
        start = time.perf_counter()
        quick = bool(quick)
        grid = _check_epsilons(
            epsilons
            if epsilons is not None
            else (QUICK_EPSILONS if quick else DEFAULT_EPSILONS)
        )
        repetitions = check_positive_int(
            repetitions if repetitions is not None else (2 if quick else 3),
            "repetitions",
        )
        chosen = _check_families(families, skip)
        workers = (
            min(4, os.cpu_count() or 1)
            if n_jobs is None
            else check_positive_int(n_jobs, "n_jobs")
        )
        seeds = _seed_sequence(random_state).spawn(len(FAMILIES) + 1)
        split_seed = int(seeds[0].generate_state(1)[0] % (2**31))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            data_ = prepare(
                data,
                target,
                domains=domains,
                bounds=bounds,
                categorical=categorical,
                bins=bins,
                seed=split_seed,
            )
            sections, skipped = _run_families(
                data_, chosen, grid, repetitions, quick, seeds[1:], workers, progress
            )
        notes = _warning_notes(
            w for w in caught if not issubclass(w.category, PrivacyLeakWarning)
        )
        if budget is not None or plan is not None:
            sections.extend(_budget_sections(budget, plan))
        about = {
            "rows": len(data_.frame),
            "training rows": len(data_.train_rows),
            "held-out rows": len(data_.test_rows),
            "target": str(target),
            "classes": [str(c) for c in data_.classes],
            "epsilons": list(grid),
            "repetitions": repetitions,
            "families": [s.key for s in sections if s.key in FAMILIES],
            "skipped": skipped,
            "inferred": list(data_.inferred),
            "warnings": notes,
            "seconds": round(time.perf_counter() - start, 1),
        }
        return cls(title or f"privtab report: {target}", tuple(sections), about)

    @classmethod
    def from_budget(
        cls, budget: Any = None, plan: Any = None, *, title: str | None = None
    ) -> Report:
        """Report on a budget and a plan only, without data.

        Parameters
        ----------
        budget : BudgetAccountant or path, optional
            An accountant, or a budget store (read only): its ledger over time.
        plan : path or mapping, optional
            A plan of releases: the ledger it would produce on top of ``budget``,
            and whether it fits.
        title : str, optional
            The page's heading.

        Raises
        ------
        ValueError
            If neither ``budget`` nor ``plan`` is given.
        """
        if budget is None and plan is None:
            raise ValueError("from_budget needs a budget, a plan or both; got neither")
        sections = _budget_sections(budget, plan)
        return cls(title or "privtab report: budget", tuple(sections), {})

    def with_sections(self, *sections: Section) -> Report:
        """Return this report with ``sections`` added at the end (budget, plan)."""
        return replace(self, sections=(*self.sections, *sections))

    def to_html(self, path: str | os.PathLike[str] | None = None) -> str:
        """Return the page as one self-contained HTML file; write it to ``path``.

        The page has no script and no reference outside itself: figures are
        inline SVG, the style is inline, links are ``#`` anchors of its table of
        contents. All text is escaped.
        """
        import jinja2

        environment = jinja2.Environment(
            loader=jinja2.PackageLoader("privtab.report", "templates"),
            autoescape=jinja2.select_autoescape(
                enabled_extensions=("html", "j2"), default=True
            ),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        environment.tests["numeric"] = _is_numeric_cell
        import privtab

        page = environment.get_template("report.html.j2").render(
            report=self,
            banner=self.banner,
            about=self.about,
            version=privtab.__version__,
            markup=_svg_markup,
        )
        if path is not None:
            Path(path).write_text(page, encoding="utf-8")
        return page

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_frame(self) -> Any:
        """Return every measured value as a pandas DataFrame, one row a value.

        Columns: ``section`` and the keys of the records (``family``, ``metric``,
        ``series`` — private, non-private or baseline —, ``mechanism``,
        ``epsilon``, ``k``, ``repetition``, ``value``), plus any other key a
        section's records hold.
        """
        import pandas as pd

        rows = [
            {"section": s.key, **dict.fromkeys(RECORD_KEYS), **r}
            for s in self.sections
            for r in s.records
        ]
        return pd.DataFrame(rows, columns=None if rows else ["section", *RECORD_KEYS])

    def to_json(self, path: str | os.PathLike[str] | None = None) -> str:
        """Return the report as JSON (figures included); write it to ``path``.

        :meth:`from_json` reads it back into an equal report.
        """
        document = {
            "format": _JSON_FORMAT,
            "title": self.title,
            "banner": self.banner,
            "about": self.about,
            "sections": [asdict(s) for s in self.sections],
        }
        text = json.dumps(document, ensure_ascii=False, allow_nan=False, indent=1)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def from_json(cls, text: str | os.PathLike[str]) -> Report:
        """Read a report written by :meth:`to_json` (its text, or a path to it).

        Raises
        ------
        ValueError
            If the text is not a privtab report.
        """
        if isinstance(text, os.PathLike) or (
            isinstance(text, str) and not text.lstrip().startswith("{")
        ):
            text = Path(text).read_text(encoding="utf-8")
        document = json.loads(text)
        if not isinstance(document, dict) or document.get("format") != _JSON_FORMAT:
            raise ValueError(
                f"text is not a privtab report (expected format {_JSON_FORMAT!r})"
            )
        sections = tuple(
            Section(
                key=s["key"],
                title=s["title"],
                summary=s["summary"],
                figures=tuple(Figure(**f) for f in s["figures"]),
                tables=tuple(
                    Table(
                        tuple(t["columns"]),
                        tuple(tuple(row) for row in t["rows"]),
                        t["caption"],
                    )
                    for t in s["tables"]
                ),
                records=tuple(s["records"]),
                notes=tuple(s["notes"]),
            )
            for s in document["sections"]
        )
        return cls(document["title"], sections, document["about"], document["banner"])


_NUMERIC_TEXT = re.compile(r"[-+−]?(?:\d[\d,]*)?\.?\d+(?:e[-+]?\d+)?%?")


def _is_numeric_cell(value: Any) -> bool:
    """Whether a table cell is a number, or text that writes one (right-aligned)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, str) and bool(_NUMERIC_TEXT.fullmatch(value.strip()))


_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _warning_notes(caught: Iterable[warnings.WarningMessage]) -> list[str]:
    """Return each kind of warning once (messages that differ only in numbers)."""
    kinds: dict[str, list[str]] = {}
    for w in caught:
        text = f"{w.category.__name__}: {w.message}"
        kinds.setdefault(_NUMBER.sub("#", text), []).append(text)
    notes = []
    for texts in kinds.values():
        more = len(set(texts)) - 1
        notes.append(texts[0] + (f" (and {more} more like it)" if more else ""))
    return sorted(notes)


def _svg_markup(svg: str) -> Any:
    """Mark a figure's SVG as safe markup for the template (made by ``svg_of``)."""
    import markupsafe

    return markupsafe.Markup(svg)


def _run_families(
    data: ReportData,
    chosen: list[str],
    grid: tuple[float, ...],
    repetitions: int,
    quick: bool,
    seeds: Sequence[np.random.SeedSequence],
    workers: int,
    progress: Callable[[str, int, int], None] | None,
) -> tuple[list[Section], dict[str, str]]:
    """Run the families that apply, in parallel; return their sections in order."""
    skipped: dict[str, str] = {}
    runs: dict[str, Run] = {}
    for index, key in enumerate(FAMILIES):
        if key not in chosen:
            continue
        reason = FAMILIES[key].applies(data)
        if reason is not None:
            skipped[key] = reason
            continue
        runs[key] = Run(
            grid,
            repetitions,
            np.random.default_rng(seeds[index]),
            BudgetAccountant(float("inf")),
            quick,
        )
    total = sum(FAMILIES[key].steps(data, run) for key, run in runs.items())
    done = [0]
    counting = threading.Lock()
    stop = threading.Event()

    for key, run in runs.items():

        def advance(description: str, key: str = key) -> None:
            # Ctrl-C reaches the main thread only: the families stop at their next
            # step instead of running to the end.
            if stop.is_set():
                raise KeyboardInterrupt
            with counting:
                done[0] += 1
                if progress is not None:
                    progress(f"{key}: {description}", min(done[0], total), total)

        run.advance = advance

    def work(key: str) -> Section:
        run = runs[key]
        # Anything a runner calls without an accountant is charged on its own
        # throw-away one too, never on the caller's default.
        with use_accountant(run.accountant):
            return FAMILIES[key].run(data, run)

    if workers == 1 or len(runs) <= 1:
        sections = [work(key) for key in runs]
    else:
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            try:
                sections = list(pool.map(work, runs))
            except BaseException:
                stop.set()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    return sections, skipped


def _budget_sections(budget: Any, plan: Any) -> list[Section]:
    """Return the budget's ledger and the plan's verdict (``_budget``'s sections)."""
    from privtab.report import _budget

    sections: list[Section] = []
    if budget is not None:
        sections.extend(_budget.budget_sections(budget))
    if plan is not None:
        if not isinstance(plan, _budget.Plan):
            plan = _budget.load_plan(plan)
        sections.append(_budget.plan_section(plan, budget))
    return sections
