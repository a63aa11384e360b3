"""privtab.report.Report: the page, its figures, its numbers, and that it spends nothing."""

from __future__ import annotations

import itertools
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import privtab
from privtab.accountant import use_accountant
from privtab.exceptions import PrivacyLeakWarning
from privtab.report import BANNER, FAMILIES, Report
from privtab.report._data import prepare
from privtab.report._families import Run

pytest.importorskip("matplotlib")
pytest.importorskip("jinja2")


def _table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Categorical and numeric predictors of a binary target, some informative."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], n)
    size = rng.choice(["S", "M", "L", "XL"], n)
    age = rng.integers(18, 80, n)
    hours = rng.normal(40, 8, n).round(1)
    score = (colour == "red") * 1.5 + (size == "XL") + (age > 50) + rng.normal(0, 1, n)
    return pd.DataFrame(
        {
            "colour": colour,
            "size": size,
            "shape": rng.choice(["round", "square"], n),
            "age": age,
            "hours": hours,
            "label": np.where(score > 1.2, "yes", "no"),
        }
    )


@pytest.fixture(scope="module")
def small_report() -> Report:
    return Report.from_data(
        _table(),
        "label",
        families=["privatekd"],
        epsilons=[0.1, 1.0, 10.0],
        repetitions=2,
        random_state=7,
    )


def test_page_has_no_external_reference(small_report: Report) -> None:
    page = small_report.to_html()
    assert "http" not in page
    assert "src=" not in page
    hrefs = re.findall(r"href\s*=\s*[\"']?([^\"' >]*)", page)
    assert hrefs, "the table of contents links its sections"
    assert all(h.startswith("#") for h in hrefs), hrefs
    assert "<script" not in page
    assert "<link" not in page


def test_page_has_the_banner_and_a_contents_entry_per_section(
    small_report: Report,
) -> None:
    page = small_report.to_html()
    assert BANNER in page.replace("\n", " ")
    for section in small_report.sections:
        assert f'href="#{section.key}"' in page
        assert f'id="{section.key}"' in page


def test_every_figure_has_its_reading_guide(small_report: Report) -> None:
    page = small_report.to_html()
    figures = re.findall(r"<figure\b.*?</figure>", page, re.DOTALL)
    expected = sum(len(s.figures) for s in small_report.sections)
    assert expected >= 2
    assert len(figures) == expected
    for markup in figures:
        caption = re.search(r"<figcaption>(.*?)</figcaption>", markup, re.DOTALL)
        assert caption is not None
        assert "is better" in caption.group(1)
        assert "dashed line is the non-private result" in caption.group(1)
        assert "<svg" in markup


def _pairs_discerned(X: np.ndarray, y: np.ndarray, columns: list[int]) -> int:
    """Ordered pairs with different labels and different values on ``columns``."""
    frame = (
        pd.DataFrame(X[:, columns]) if columns else pd.DataFrame(index=range(len(y)))
    )
    frame["y"] = y
    n = len(y)
    labels = np.bincount(y)
    differ_in_y = n * n - int((labels.astype(np.int64) ** 2).sum())
    if not columns:
        return 0
    keys = list(range(len(columns)))
    cell = frame.groupby(keys).size()
    cell_label = frame.groupby([*keys, "y"]).size()
    same_cell = int((cell.astype(np.int64) ** 2).sum())
    same_cell_label = int((cell_label.astype(np.int64) ** 2).sum())
    return differ_in_y - (same_cell - same_cell_label)


def test_privatekd_non_private_line_is_the_greedy_order_computed_by_hand() -> None:
    with pytest.warns(PrivacyLeakWarning):
        data = prepare(_table(300, seed=3), "label", seed=0)
    X, y = data.codes_train.astype(np.int64), data.y_train
    d = X.shape[1]
    k = min(4, d)
    chosen: list[int] = []
    for _ in range(k):
        gains = {
            j: _pairs_discerned(X, y, [*chosen, j]) for j in range(d) if j not in chosen
        }
        chosen.append(max(gains, key=lambda j: (gains[j], -j)))
    expected = _pairs_discerned(X, y, chosen) / _pairs_discerned(X, y, list(range(d)))
    run = Run((1.0,), 1, np.random.default_rng(0), privtab.BudgetAccountant())
    section = FAMILIES["privatekd"].run(data, run)
    (line,) = [
        r
        for r in section.records
        if r["metric"] == "F(S)/F(A)" and r["series"] == "non-private"
    ]
    assert line["value"] == pytest.approx(expected, rel=1e-12)


def test_no_accountant_is_charged() -> None:
    default = privtab.default_accountant()
    before = list(default.ledger)
    given = privtab.BudgetAccountant(1.0)
    previous = privtab.set_default_accountant(given)
    try:
        scoped = privtab.BudgetAccountant(0.5)
        with use_accountant(scoped):
            Report.from_data(
                _table(200),
                "label",
                epsilons=[1.0, 5.0],
                repetitions=1,
                random_state=0,
            )
        assert scoped.spent == 0.0
        assert scoped.ledger == []
        assert given.spent == 0.0
        assert given.ledger == []
    finally:
        privtab.set_default_accountant(previous)
    assert default.ledger == before


def test_inferred_domains_still_warn_after_a_report(small_report: Report) -> None:
    with pytest.warns(PrivacyLeakWarning):
        privtab.TableEncoder().fit(_table(50))


def test_report_itself_raises_no_privacy_leak_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        Report.from_data(
            _table(200),
            "label",
            families=["privatekd"],
            epsilons=[1.0],
            repetitions=1,
            random_state=0,
        )


def test_json_round_trips(small_report: Report, tmp_path) -> None:
    again = Report.from_json(small_report.to_json())
    assert again == small_report
    path = tmp_path / "report.json"
    small_report.to_json(path)
    assert Report.from_json(path) == small_report
    assert again.to_html() == small_report.to_html()


def test_from_json_refuses_other_documents() -> None:
    with pytest.raises(ValueError, match="not a privtab report"):
        Report.from_json('{"title": "x"}')


def test_to_frame_has_a_row_per_record(small_report: Report) -> None:
    frame = small_report.to_frame()
    assert len(frame) == sum(len(s.records) for s in small_report.sections)
    private = frame[
        (frame["series"] == "private") & (frame["metric"] == "held-out AUC")
    ]
    assert sorted(private["epsilon"].unique()) == [0.1, 1.0, 10.0]
    assert set(private["repetition"]) == {0, 1}
    assert private["value"].between(0, 1).all()


def test_the_same_seed_gives_the_same_report() -> None:
    def make() -> Report:
        return Report.from_data(
            _table(200),
            "label",
            families=["privatekd"],
            epsilons=[0.1, 1.0],
            repetitions=2,
            random_state=11,
        )

    first, second = make(), make()
    assert first.sections == second.sections


def test_repr_html_is_the_page(small_report: Report) -> None:
    assert small_report._repr_html_() == small_report.to_html()


def test_to_html_writes_the_file(small_report: Report, tmp_path) -> None:
    path = tmp_path / "report.html"
    page = small_report.to_html(path)
    assert path.read_text(encoding="utf-8") == page


def test_text_from_the_data_is_escaped() -> None:
    frame = _table(200)
    frame = frame.rename(columns={"colour": "<b>colour</b>"})
    report = Report.from_data(
        frame,
        "label",
        families=["privatekd"],
        epsilons=[1.0],
        repetitions=1,
        random_state=0,
    )
    page = report.to_html()
    assert "<b>colour</b>" not in page
    assert "&lt;b&gt;colour&lt;/b&gt;" in page


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilons": [1.0, 0.0]}, ValueError, "epsilons"),
        ({"epsilons": [float("inf")]}, ValueError, "epsilons"),
        ({"epsilons": []}, ValueError, "epsilons"),
        ({"repetitions": 0}, ValueError, "repetitions"),
        ({"families": ["nope"]}, ValueError, "unknown families"),
        ({"skip": ["nope"]}, ValueError, "unknown families"),
        ({"random_state": -1}, ValueError, "random_state"),
        ({"n_jobs": 0}, ValueError, "n_jobs"),
        ({"bins": 0}, ValueError, "bins"),
        ({"bounds": {"missing": (0, 1)}}, ValueError, "'missing'"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        Report.from_data(_table(100), "label", **kwargs)


def test_bad_data_is_named() -> None:
    with pytest.raises(ValueError, match="target 'nope' is not a column"):
        Report.from_data(_table(100), "nope")
    with pytest.raises(TypeError, match="data must be a pandas or polars DataFrame"):
        Report.from_data(np.zeros((3, 2)), "label")
    with pytest.raises(ValueError, match="at least 2 labels"):
        Report.from_data(_table(100).assign(label="yes"), "label")


def test_each_family_can_be_skipped() -> None:
    report = Report.from_data(
        _table(200),
        "label",
        skip=list(FAMILIES),
        epsilons=[1.0],
        repetitions=1,
        random_state=0,
    )
    assert report.sections == ()
    assert report.about["families"] == []


def test_default_grid_is_a_log_grid_from_001_to_10() -> None:
    from privtab.report import DEFAULT_EPSILONS, QUICK_EPSILONS

    for grid in (DEFAULT_EPSILONS, QUICK_EPSILONS):
        assert grid[0] == 0.01
        assert grid[-1] == 10.0
        ratios = [b / a for a, b in itertools.pairwise(grid)]
        assert max(ratios) / min(ratios) < 1.01


@pytest.fixture(scope="module")
def mixed_report() -> Report:
    return Report.from_data(
        _table(500, seed=5),
        "label",
        epsilons=[0.5, 5.0],
        repetitions=2,
        random_state=3,
        bounds={"age": (18, 80), "hours": (0, 100)},
    )


def test_every_family_applies_to_a_mixed_table(mixed_report: Report) -> None:
    assert [s.key for s in mixed_report.sections] == list(FAMILIES)
    assert mixed_report.about["skipped"] == {}
    frame = mixed_report.to_frame()
    for key in FAMILIES:
        rows = frame[frame["family"] == key]
        assert set(rows["series"]) >= {"private", "non-private"}, key
    page = mixed_report.to_html()
    assert len(re.findall(r"<figcaption>", page)) == sum(
        len(s.figures) for s in mixed_report.sections
    )
    assert "http" not in page


def test_families_that_do_not_apply_say_why() -> None:
    frame = _table(200)[["colour", "size", "label"]]
    frame["label"] = np.where(
        np.arange(200) % 3 == 0, "a", np.where(np.arange(200) % 3 == 1, "b", "c")
    )
    report = Report.from_data(
        frame, "label", epsilons=[1.0], repetitions=1, random_state=0
    )
    skipped = report.about["skipped"]
    assert "numeric" in skipped["microagg"]
    assert "numeric" in skipped["dpfsdr"]
    assert "binary target" in skipped["kac"]
    assert "privatekd" in report.about["families"]


def _mean_sse_by_hand(X: np.ndarray, k: int) -> float:
    """Individual ranking by hand: k consecutive ranks, the rest in the last group."""
    n, m = X.shape
    masked = np.empty_like(X)
    for a in range(m):
        order = np.argsort(X[:, a], kind="stable")
        groups = np.minimum(np.arange(n) // k, max(n // k - 1, 0))
        for g in np.unique(groups):
            members = order[groups == g]
            masked[members, a] = X[members, a].mean()
    variance = X.var(axis=0)
    scaled = (X - masked) / np.where(variance > 0, variance, np.inf)
    distances = np.sqrt((scaled**2).sum(axis=1)) / m
    return float((distances**2).sum() / n)


def test_microaggregation_non_private_line_by_hand(mixed_report: Report) -> None:
    X = _table(500, seed=5)[["age", "hours"]].to_numpy(dtype=float)
    frame = mixed_report.to_frame()
    lines = frame[(frame["family"] == "microagg") & (frame["series"] == "non-private")]
    assert len(lines) >= 3
    for k, value in zip(lines["k"], lines["value"], strict=True):
        assert value == pytest.approx(_mean_sse_by_hand(X, int(k)), rel=1e-9)


def test_dpfsdr_baseline_is_the_majority_class_of_the_training_rows() -> None:
    frame = _table(500, seed=5)
    with pytest.warns(PrivacyLeakWarning):
        data = prepare(frame, "label", seed=0)
    majority = np.bincount(data.y_train).argmax()
    expected = float(np.mean(data.y_test == majority))
    run = Run((1.0,), 1, np.random.default_rng(0), privtab.BudgetAccountant())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        section = FAMILIES["dpfsdr"].run(data, run)
    (line,) = [
        r
        for r in section.records
        if r["series"] == "baseline" and r["metric"] == "held-out accuracy"
    ]
    assert line["value"] == pytest.approx(expected)


def test_from_budget_needs_a_budget_or_a_plan() -> None:
    with pytest.raises(ValueError, match="needs a budget, a plan or both"):
        Report.from_budget()


def test_a_polars_frame_gives_the_same_report() -> None:
    pl = pytest.importorskip("polars")
    frame = _table(200)

    def make(data) -> Report:
        return Report.from_data(
            data,
            "label",
            families=["privatekd"],
            epsilons=[1.0],
            repetitions=1,
            random_state=4,
        )

    assert make(pl.from_pandas(frame)).sections == make(frame).sections


def test_declared_target_labels_match_as_text() -> None:
    frame = _table(200)
    frame["label"] = (frame["label"] == "yes").astype(int)
    report = Report.from_data(
        frame,
        "label",
        domains={"label": ["0", "1"]},
        families=["privatekd"],
        epsilons=[1.0],
        repetitions=1,
        random_state=0,
    )
    assert report.about["classes"] == ["0", "1"]
    with pytest.raises(ValueError, match="holds '1', not one of its declared labels"):
        Report.from_data(frame, "label", domains={"label": ["0", "2"]})


def test_quick_is_a_smaller_grid_with_two_repetitions() -> None:
    from privtab.report import QUICK_EPSILONS

    report = Report.from_data(
        _table(200), "label", families=["privatekd"], quick=True, random_state=0
    )
    assert report.about["epsilons"] == list(QUICK_EPSILONS)
    assert report.about["repetitions"] == 2


def test_the_callers_matplotlib_state_is_left_alone() -> None:
    import matplotlib
    import matplotlib.pyplot as plt

    backend = matplotlib.get_backend()
    figure = plt.figure()
    try:
        Report.from_data(
            _table(200),
            "label",
            families=["privatekd", "dilca"],
            epsilons=[1.0],
            repetitions=1,
            random_state=0,
        )
        assert matplotlib.get_backend() == backend
        assert plt.get_fignums() == [figure.number]
        assert plt.gcf() is figure
    finally:
        plt.close(figure)


def test_progress_counts_every_step_to_the_total() -> None:
    calls: list[tuple[str, int, int]] = []
    Report.from_data(
        _table(200),
        "label",
        families=["privatekd", "dilca"],
        epsilons=[0.5, 5.0],
        repetitions=1,
        random_state=0,
        progress=lambda *call: calls.append(call),
    )
    totals = {total for _, _, total in calls}
    assert totals == {2 * (2 + 1)}  # per family: one step per ε and its reference
    assert sorted(done for _, done, _ in calls) == list(range(1, 7))
    assert {text.split(":")[0] for text, _, _ in calls} == {"privatekd", "dilca"}
