"""The gallery's examples (examples/plot_*.py) run as scripts and show what they say.

Each example runs top to bottom with matplotlib's Agg backend in an empty working
directory, must draw at least one figure, and must emit no warning (pytest turns
warnings into errors; an example whose point is a warning records and prints it).
Where the text of an example makes a claim about its result, the claim is checked on
the example's own variables.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = sorted(EXAMPLES.glob("plot_*.py"))


@pytest.fixture
def run_example(tmp_path, monkeypatch):
    """Run an example by name in a fresh directory; return its global variables."""

    def run(name):
        monkeypatch.setenv("MPLBACKEND", "Agg")
        monkeypatch.chdir(tmp_path)
        plt.close("all")
        namespace = runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")
        assert plt.get_fignums(), f"{name} drew no figure"
        plt.close("all")
        return namespace

    return run


def test_gallery_has_every_example():
    expected = {
        "plot_privatekd_utility.py",
        "plot_synthetic_vs_real.py",
        "plot_dilca_heatmap.py",
        "plot_microaggregation_sse.py",
        "plot_dpfsdr_accuracy.py",
        "plot_kac_features.py",
        "plot_end_to_end.py",
        "plot_audit.py",
    }
    assert expected <= {script.name for script in SCRIPTS}
    assert (EXAMPLES / "README.rst").read_text().startswith("Gallery\n=======\n")


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_example_opens_with_a_titled_docstring(script):
    """sphinx-gallery takes the title from the docstring's first RST heading."""
    text = script.read_text()
    assert text.startswith('"""\n')
    title, underline = text.splitlines()[1:3]
    assert title.strip()
    assert set(underline) == {"="}
    assert len(underline) == len(title)


def test_privatekd_reaches_the_greedy_selection_from_epsilon_one(run_example):
    """'from ε ≈ 1 on it is as discerning as the greedy one (within a few
    thousandths of F(A)) and as accurate'."""
    ns = run_example("plot_privatekd_utility")
    large = ns["epsilons"] >= 1.0
    assert large.any()
    assert np.all(np.abs(ns["F_runs"][large].mean(axis=1) - ns["greedy_F"]) < 0.005)
    accuracy = ns["accuracy_runs"][large].mean(axis=1)
    assert np.all(np.abs(accuracy - ns["greedy_accuracy"]) < 0.01)


def test_synthetic_records_train_almost_as_well_at_epsilon_ten(run_example):
    """'At ε = 1 ... about three points of accuracy below ... and at ε = 10 within
    one point'."""
    ns = run_example("plot_synthetic_vs_real")
    epsilons = ns["epsilons"]
    gap = ns["projected_runs"].mean(axis=1) - ns["synthetic_runs"].mean(axis=1)
    assert gap[epsilons.index(1.0)] < 0.05
    assert abs(gap[epsilons.index(10.0)]) < 0.015


def test_dp_dilca_follows_dilca_from_epsilon_three(run_example):
    """'the private distances follow DILCA's closely from ε ≈ 3 (mean correlation
    above 0.9)'."""
    ns = run_example("plot_dilca_heatmap")
    large = np.asarray(ns["epsilons"]) >= 3.0
    for runs in ns["correlations"].values():
        assert np.all(runs[large].mean(axis=1) > 0.9)


def test_idp_cbls_meets_the_noise_free_floor_and_dp_does_not(run_example):
    """'[DP] stays one to two orders of magnitude above the noise-free floor even at
    k = 200' and iDP-CBLS 'meets it from k ≈ 20 at ε = 1'."""
    ns = run_example("plot_microaggregation_sse")
    ks, floor = np.asarray(ns["ks"]), np.asarray(ns["floor_by_k"])
    assert np.all(ns["by_k"]["dp"].mean(axis=1) > 10 * floor)
    cbls = ns["by_k"]["idp_cbls"].mean(axis=1)
    assert np.all(cbls[ks >= 20] < 2 * floor[ks >= 20])


def test_dpfsdr_levels_off_near_0_8(run_example):
    """'Both searches improve up to ε₂ ≈ 3 and then level off at about 0.8'."""
    ns = run_example("plot_dpfsdr_accuracy")
    large = np.asarray(ns["epsilons"]) >= 3.0
    for runs in ns["accuracy"].values():
        assert np.all(runs[large].mean(axis=1) > 0.75)
        assert runs[0].mean() < runs[-1].mean()


def test_kac_keeps_more_features_than_k_anonymity(run_example):
    """'k-AC keeps one or two more than k-anonymity up to k ≈ 300' and greedy
    DistCnt 'stays within about two points of the accuracy of all 19 features up
    to k = 1000'."""
    ns = run_example("plot_kac_features")
    ks = np.asarray(ns["ks"])
    assert np.all(ns["gain"][ks <= 300] >= 1)
    distcnt = np.asarray(ns["accuracy"]["k-AC, greedy DistCnt"])
    assert np.all(ns["all_features"] - distcnt < 0.025)


def test_end_to_end_spends_the_budget_and_stays_near_the_non_private_model(
    run_example,
):
    """'Three releases ... 0.5 + 1 + 0.5 = 2, the whole budget' and 'both private
    models come within about a point of the non-private one on the same columns'."""
    ns = run_example("plot_end_to_end")
    accountant = ns["accountant"]
    assert [entry.epsilon for entry in accountant.ledger] == [0.5, 1.0, 0.5]
    assert accountant.spent == pytest.approx(2.0)
    *private, non_private = ns["accuracy"].values()
    assert all(abs(non_private - value) < 0.015 for value in private)


def test_audit_passes_privtab_and_refutes_the_half_scale_laplace(run_example):
    """'its audit finds epsilon_lower just below 1 ... thresholds on the output give
    a bound near 2 ... [and] the floating-point side channel'."""
    ns = run_example("plot_audit")
    correct, broken = ns["results"].values()
    assert correct.passed
    assert 0.9 < correct.epsilon_lower <= 1.0
    assert not broken.passed
    found = {bound.name: bound.epsilon_lower for bound in broken.by_family}
    assert found["noise scale"] > 1.5
    assert found["floating-point side channel (Mironov 2012)"] > 1.0
