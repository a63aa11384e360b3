"""The budget half of the report: the ledger of a budget, and the verdict on a plan."""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
import threading
import time

import pytest

import privtab as pt
from privtab.report import _budget as report_budget
from privtab.report._budget import (
    Plan,
    PlannedRelease,
    budget_sections,
    load_plan,
    plan_section,
)


def known_spends(acc: pt.BudgetAccountant) -> None:
    """0.5 (ε-DP), a block of parts 0.25 + 0.25 and 0.75 (charges 0.75), 0.1 (ε-iDP)."""
    acc.spend(0.5, label="counts")
    with acc.parallel("regions") as block:
        with block.part("north"):
            acc.spend(0.25, label="mean")
            acc.spend(0.25, label="sum")
        with block.part("south"):
            acc.spend(0.75, label="mean")
    acc.spend(0.1, label="masked means", guarantee="idp")


def store_with_known_spends(tmp_path) -> str:
    path = str(tmp_path / "data.budget")
    acc = pt.BudgetAccountant.open(path, epsilon=2.0)
    known_spends(acc)
    acc._store.close()
    return path


def file_state(path: str) -> tuple[str, float]:
    with open(path, "rb") as file:
        return hashlib.sha256(file.read()).hexdigest(), time.time()


def top_records(section):
    return [record for record in section.records if record["depth"] == 0]


@pytest.fixture
def store(tmp_path) -> str:
    return store_with_known_spends(tmp_path)


@pytest.mark.parametrize("kind", ["accountant", "store path", "store accountant"])
def test_ledger_running_totals_match_a_hand_computation(kind, store):
    if kind == "accountant":
        source: object = pt.BudgetAccountant(2.0)
        known_spends(source)  # type: ignore[arg-type]
    elif kind == "store path":
        source = store
    else:
        source = pt.BudgetAccountant.open(store)
    [section] = budget_sections(source)  # type: ignore[arg-type]
    top = top_records(section)
    assert [r["label"] for r in top] == ["counts", "regions", "masked means"]
    # The block charges its largest part, 0.75, not the sum 1.25 of its parts.
    assert [r["epsilon"] for r in top] == [0.5, 0.75, 0.1]
    assert [r["running_total"] for r in top] == pytest.approx([0.5, 1.25, 1.35])
    assert [r["remaining"] for r in top] == pytest.approx([1.5, 0.75, 0.65])
    assert [r["guarantee"] for r in top] == ["dp", "dp", "idp"]
    assert all(isinstance(r["time"], float) for r in top)
    assert (
        section.summary == "ε = 1.35 spent of 2 (1.25 ε-DP, 0.1 ε-iDP); 0.65 remains."
    )
    [table] = section.tables
    assert table.columns == (
        "time",
        "release",
        "guarantee",
        "ε",
        "running total",
        "remaining",
    )
    labels = [row[1].replace("\u00a0", " ") for row in table.rows]
    assert labels == [
        "counts",
        "regions (max of parts)",
        "    north (sum)",
        "        mean",
        "        sum",
        "    south (sum)",
        "        mean",
        "masked means",
    ]
    totals = [row[4] for row in table.rows]
    assert totals == ["0.5", "1.25", "", "", "", "", "", "1.35"]
    assert [row[2] for row in table.rows][-1] == "ε-iDP"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", table.rows[0][0])


def test_a_store_is_read_without_charging_changing_or_locking_it(store):
    before_bytes, _ = file_state(store)
    before = pt.BudgetAccountant.open(store).to_dict()
    pt.BudgetAccountant.open(store)._store.close()
    plan = {
        "release": [
            {"label": "fits", "epsilon": 0.25},
            {"label": "too much", "epsilon": 5.0},
        ]
    }
    budget_sections(store)
    plan_section(plan, store)
    assert file_state(store)[0] == before_bytes
    after = pt.BudgetAccountant.open(store)
    assert after.to_dict() == before
    after._store.close()

    # A writer in the middle of a transaction does not hold the report off.
    writer = sqlite3.connect(store, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute(
        "INSERT INTO ledger (parent, kind, label, epsilon, delta, guarantee, time, "
        "pid) VALUES (NULL, 'spend', 'uncommitted', 0.5, 0.0, 'dp', 0.0, 0)"
    )
    results: list[object] = []
    reader = threading.Thread(
        target=lambda: results.append(
            (budget_sections(store), plan_section(plan, store))
        ),
        daemon=True,
    )
    started = time.perf_counter()
    reader.start()
    reader.join(timeout=20)
    waited = time.perf_counter() - started
    writer.execute("ROLLBACK")
    writer.close()
    assert results, f"the report waited {waited:.1f} s for the writer"
    [section] = results[0][0]  # type: ignore[index]
    assert "uncommitted" not in [r["label"] for r in section.records]
    assert pt.BudgetAccountant.open(store).to_dict() == before


def test_nothing_is_charged_to_any_accountant():
    acc = pt.BudgetAccountant(2.0)
    known_spends(acc)
    before = acc.to_dict()
    default_before = pt.default_accountant().to_dict()
    budget_sections(acc)
    plan_section({"release": [{"label": "x", "epsilon": 0.5}]}, acc)
    plan_section({"release": [{"label": "x", "epsilon": 5.0}]}, acc)
    plan_section({"budget": 1.0, "release": [{"label": "x", "epsilon": 0.5}]})
    assert acc.to_dict() == before
    assert pt.default_accountant().to_dict() == default_before


def test_plan_that_fits_gives_the_hand_computed_ledger():
    acc = pt.BudgetAccountant(3.0)
    acc.spend(1.0, label="counts")
    plan = load_plan(
        {
            "release": [
                {"label": "PrivateKD", "epsilon": 0.5},
                {"label": "north", "epsilon": 0.4, "parallel": "regions"},
                {"label": "south", "epsilon": 0.7, "parallel": "regions"},
                {"label": "masking", "epsilon": 0.4, "guarantee": "idp"},
            ]
        }
    )
    section = plan_section(plan, acc)
    # 1.0 spent + 0.5 + max(0.4, 0.7) + 0.4 = 2.6 of 3.
    assert section.summary == "fits, leaves ε = 0.4"
    releases = [r for r in section.records if "release" in r]
    assert [r["status"] for r in releases] == ["fits"] * 4
    assert [r["charged"] for r in releases] == pytest.approx([0.5, 0.4, 0.3, 0.4])
    assert [r["running_total"] for r in releases] == pytest.approx([1.5, 1.9, 2.2, 2.6])
    assert [r["remaining"] for r in releases] == pytest.approx([1.5, 1.1, 0.8, 0.4])
    [verdict] = [r for r in section.records if "verdict" in r]
    assert verdict["fits"] is True
    assert verdict["first_refused"] is None
    assert verdict["total"] == pytest.approx(2.6)
    [table] = section.tables
    assert [row[-1] for row in table.rows] == ["spent"] + ["fits"] * 4
    assert [row[2] for row in table.rows] == ["", "", "regions", "regions", ""]


def test_plan_that_does_not_fit_names_the_first_refused_release():
    acc = pt.BudgetAccountant(3.0)
    acc.spend(1.0, label="counts")
    plan = {
        "release": [
            {"label": "PrivateKD", "epsilon": 0.5},
            {"label": "dpfsdr", "epsilon": 2.0},
            {"label": "small", "epsilon": 0.1},
        ]
    }
    section = plan_section(plan, acc)
    # 1.5 spent after PrivateKD: dpfsdr needs 2.0 and 1.5 remains.
    assert section.summary == (
        "does not fit: release 'dpfsdr' needs ε = 2, 1.5 remains; spent and "
        "planned together: ε = 3.6 of 3"
    )
    releases = [r for r in section.records if "release" in r]
    assert [r["status"] for r in releases] == ["fits", "refused", "not tried"]
    assert [r["running_total"] for r in releases] == pytest.approx([1.5, 3.5, 3.6])
    [verdict] = [r for r in section.records if "verdict" in r]
    assert (verdict["fits"], verdict["first_refused"]) == (False, 2)


def test_a_parallel_group_needs_only_what_it_adds_to_its_maximum():
    plan = {
        "budget": 1.0,
        "release": [
            {"label": "a", "epsilon": 0.5, "parallel": "g"},
            {"label": "b", "epsilon": 0.9, "parallel": "g"},
            {"label": "c", "epsilon": 1.25, "parallel": "g"},
        ],
    }
    section = plan_section(plan)
    # The group is at 0.9 after b; c would raise it to 1.25: it needs 0.35, 0.1 remains.
    assert section.summary == (
        "does not fit: release 'c' needs ε = 0.35 (its parallel group 'g' rises by "
        "that much), 0.1 remains; spent and planned together: ε = 1.25 of 1"
    )


@pytest.mark.parametrize(
    ("spent", "releases", "fits"),
    [
        # Ten charges of 0.1 fit 1.0 (their exact sum is 1 + 5.6e-17, within the
        # accountant's tolerance); an eleventh does not.
        ([], [0.1] * 10, True),
        ([], [0.1] * 11, False),
        # Exactly what remains fits; a relative 2^-50 more does not.
        ([0.3], [0.7], True),
        ([0.3], [0.7 * (1 + 2.0**-50)], False),
        ([0.1, 0.2], [1.0 - 0.1 - 0.2], True),
    ],
)
def test_tolerance_edge_agrees_with_the_accountant(spent, releases, fits):
    acc = pt.BudgetAccountant(1.0)
    for epsilon in spent:
        acc.spend(epsilon)
    plan = {
        "release": [{"label": f"r{i}", "epsilon": e} for i, e in enumerate(releases)]
    }
    section = plan_section(plan, acc)
    assert section.summary.startswith("fits" if fits else "does not fit")
    if fits:
        assert section.summary == "fits, leaves ε = 0"
    else:
        needs, left = re.search(
            r"needs ε = (\S+), (\S+) remains", section.summary
        ).groups()
        assert float(needs) > float(left)
    live = pt.BudgetAccountant(1.0)
    for epsilon in spent:
        live.spend(epsilon)
    refused = False
    for epsilon in releases:
        try:
            live.spend(epsilon)
        except pt.BudgetExceededError:
            refused = True
            break
    assert refused is not fits


def test_without_a_source_the_plan_uses_its_own_budget_or_none():
    plan = {"release": [{"label": "a", "epsilon": 2.5}]}
    assert plan_section(plan).summary == (
        "fits: no budget is set; spent and planned together: ε = 2.5"
    )
    assert plan_section({**plan, "budget": 3.0}).summary == "fits, leaves ε = 0.5"
    assert plan_section({**plan, "budget": 2.0}).summary.startswith(
        "does not fit: release 'a' needs ε = 2.5, 2 remains"
    )


def test_the_smaller_of_the_plan_and_source_budgets_is_checked():
    acc = pt.BudgetAccountant(3.0)
    plan = {"budget": 2.0, "release": [{"label": "a", "epsilon": 2.5}]}
    section = plan_section(plan, acc)
    assert section.summary.startswith("does not fit: release 'a' needs ε = 2.5, 2 ")
    assert any("checked against the smaller, 2" in note for note in section.notes)
    looser = plan_section({**plan, "budget": 5.0}, acc)
    assert looser.summary == "fits, leaves ε = 0.5"


def test_the_documented_plan_loads(tmp_path):
    documented = report_budget.__doc__.split("::\n")[1].split("\nReleases are")[0]
    path = tmp_path / "plan.toml"
    path.write_text("\n".join(line[4:] for line in documented.splitlines()))
    assert load_plan(path) == Plan(
        (
            PlannedRelease("PrivateKD on adult", 1.0, "dp"),
            PlannedRelease("histogram, north", 0.5, "dp", "regions"),
            PlannedRelease("histogram, south", 0.75, "dp", "regions"),
        ),
        budget=3.0,
    )
    # 1.0 + max(0.5, 0.75) = 1.75 of 3.
    assert plan_section(path).summary == "fits, leaves ε = 1.25"


GOOD_RELEASE = {"label": "counts", "epsilon": 0.5}


@pytest.mark.parametrize(
    ("plan", "error", "match"),
    [
        ({"budgt": 1.0, "release": [GOOD_RELEASE]}, ValueError, r"unknown key 'budgt'"),
        (
            {"release": [{**GOOD_RELEASE, "delta": 1e-6}]},
            ValueError,
            r"release 1 \('counts'\): unknown key 'delta'",
        ),
        (
            {"release": [{**GOOD_RELEASE, "epsilon": 0}]},
            ValueError,
            r"release 1 \('counts'\): epsilon must be finite and > 0, got 0\.0",
        ),
        (
            {"release": [GOOD_RELEASE, {**GOOD_RELEASE, "epsilon": -1.0}]},
            ValueError,
            r"release 2 \('counts'\): epsilon must be finite and > 0, got -1\.0",
        ),
        (
            {"release": [{**GOOD_RELEASE, "epsilon": math.inf}]},
            ValueError,
            r"epsilon must be finite and > 0, got inf",
        ),
        (
            {"release": [{**GOOD_RELEASE, "epsilon": math.nan}]},
            ValueError,
            r"epsilon must be finite and > 0, got nan",
        ),
        (
            {"release": [{**GOOD_RELEASE, "epsilon": "1"}]},
            TypeError,
            r"release 1 \('counts'\): epsilon must be a real number, got str",
        ),
        (
            {"release": [{**GOOD_RELEASE, "guarantee": "adp"}]},
            ValueError,
            r"release 1 \('counts'\): guarantee must be one of 'dp', 'idp', got 'adp'",
        ),
        ({"release": [{"epsilon": 0.5}]}, ValueError, r"release 1 has no label"),
        (
            {"release": [{**GOOD_RELEASE, "label": " "}]},
            ValueError,
            r"label must be a non-empty string, got ' '",
        ),
        (
            {"release": [{"label": "x"}]},
            ValueError,
            r"release 1 \('x'\) has no epsilon",
        ),
        (
            {"budget": -2, "release": [GOOD_RELEASE]},
            ValueError,
            r"plan: budget must be finite and > 0, got -2\.0",
        ),
        ({"budget": 1.0}, ValueError, r"plan has no release"),
        ({"release": []}, ValueError, r"plan has no release"),
        ({"release": GOOD_RELEASE}, TypeError, r"release must be a list of tables"),
        (
            {"release": [{**GOOD_RELEASE, "parallel": 3}]},
            ValueError,
            r"parallel must be the non-empty name of a group, got 3",
        ),
        (
            {
                "release": [
                    {**GOOD_RELEASE, "parallel": "g"},
                    GOOD_RELEASE,
                    {"label": "late", "epsilon": 0.5, "parallel": "g"},
                ]
            },
            ValueError,
            r"release 3 \('late'\) is in the parallel group 'g', whose releases must "
            r"be listed together \(it started at release 1",
        ),
        (["not", "a", "plan"], TypeError, r"plan must be the path of a TOML file"),
    ],
)
def test_bad_plans_name_the_field_and_value(plan, error, match):
    with pytest.raises(error, match=match):
        load_plan(plan)


def test_bad_toml_names_the_file(tmp_path):
    path = tmp_path / "plan.toml"
    path.write_text('[[release]]\nlabel = "a"\nepsilon = \n')
    with pytest.raises(ValueError, match=r"plan '.*plan\.toml' is not valid TOML"):
        load_plan(path)
    path.write_text('[[release]]\nlabel = "a"\nepsilon = 1\nguarantee = "x"\n')
    with pytest.raises(ValueError, match=r"plan '.*plan\.toml': release 1 \('a'\)"):
        load_plan(str(path))


def test_a_bad_source_is_refused():
    with pytest.raises(TypeError, match=r"source must be a privtab.BudgetAccountant"):
        budget_sections(2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"source must be a privtab.BudgetAccountant"):
        plan_section({"release": [GOOD_RELEASE]}, source=2.0)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match="no budget store"):
        budget_sections("/nonexistent/privtab.budget")


def references(svg: str) -> list[str]:
    return re.findall(r"(?:href|src)=\"([^\"]*)\"", svg)


def test_figures_are_inline_svg_with_a_reading_guide(store):
    [budget] = budget_sections(store)
    plan = plan_section(
        {"release": [GOOD_RELEASE, {"label": "$big$ one", "epsilon": 5.0}]}, store
    )
    for section in (budget, plan):
        [figure] = section.figures
        assert figure.svg.startswith("<svg")
        assert figure.svg.rstrip().endswith("</svg>")
        assert all(ref.startswith("#") for ref in references(figure.svg))
        assert "dashed line is the" in figure.reading_guide
        assert figure.alt
    assert "counts" in budget.figures[0].svg
    assert "regions (max of parts)" in budget.figures[0].svg
    assert "$big$ one" in plan.figures[0].svg


def test_an_empty_ledger_has_no_figure_and_says_so():
    [section] = budget_sections(pt.BudgetAccountant(1.0))
    assert section.figures == ()
    assert section.tables[0].rows == ()
    assert "Nothing has been spent yet." in section.notes
    assert section.summary == "ε = 0 spent of 1 (0 ε-DP, 0 ε-iDP); 1 remains."


def test_a_ledger_without_times_is_drawn_in_order():
    acc = pt.BudgetAccountant(2.0)
    known_spends(acc)
    copy = pt.BudgetAccountant.from_dict(acc.to_dict())
    [section] = budget_sections(copy)
    assert [r["time"] for r in top_records(section)] == [None, None, None]
    assert any("drawn in ledger order" in note for note in section.notes)
    assert section.tables[0].rows[0][0] == "unknown"


def test_records_and_plans_round_trip_through_json(store):
    plan = load_plan(
        {
            "budget": 4.0,
            "release": [
                {"label": "a", "epsilon": 0.5, "parallel": "g", "guarantee": "idp"},
                {"label": "b", "epsilon": 0.25, "parallel": "g"},
                {"label": "c", "epsilon": 9.0},
            ],
        }
    )
    assert load_plan(json.loads(json.dumps(plan.to_dict()))) == plan
    sections = [*budget_sections(store), plan_section(plan, store)]
    sections.append(plan_section(plan))
    for section in sections:
        records = list(section.records)
        assert json.loads(json.dumps(records, allow_nan=False)) == records
