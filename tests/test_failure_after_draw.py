"""A release that fails after it drew noise charges what it drew.

Otherwise a caller could retry a data- and noise-dependent refusal for free until the
draws before it told them what they wanted. Each case makes the step after the first
draw fail (a stand-in for an allocation failure or a worker error) and checks the
accountant; failures before any draw (validation) stay free.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import privtab as pt
from privtab import dpfsdr
from privtab.dilca import _estimators as dilca_estimators

RNG = np.random.default_rng(3)
CODES = RNG.integers(0, 3, size=(300, 4))
LABELS = (CODES[:, 0] + CODES[:, 1] > 2).astype(int)
REAL = RNG.uniform(0.0, 1.0, size=(300, 4))
# The module, which the function of the same name shadows on the package.
discernibility_module = sys.modules["privtab.discernibility"]
REAL_LABELS = (REAL[:, 0] + 0.1 * RNG.normal(size=300) > 0.5).astype(int)


def out_of_memory(*args, **kwargs):
    raise MemoryError("could not allocate")


def test_dpdilca_charges_a_failure_after_its_contexts_were_drawn(monkeypatch):
    monkeypatch.setattr(dilca_estimators, "dilca_distance_matrix", out_of_memory)
    acc = pt.BudgetAccountant(2.0)
    model = pt.DPDILCA(1.0, context_size=1, random_state=0, accountant=acc)
    with pytest.raises(MemoryError):
        model.fit(CODES, cardinalities=[3] * 4)
    assert acc.spent == 1.0
    assert [entry.label for entry in acc.ledger] == [
        "DPDILCA (max_relevance, 4 attributes) (failed after drawing noise)"
    ]


def test_privatekd_charges_a_failure_after_its_rounds(monkeypatch):
    monkeypatch.setattr(discernibility_module, "validate_data", out_of_memory)
    acc = pt.BudgetAccountant(2.0)
    model = pt.PrivateKD(2, 0.8, random_state=0, accountant=acc, classes=[0, 1])
    with pytest.raises(MemoryError):
        model.fit(CODES, LABELS, cardinalities=[3] * 4)
    assert acc.spent == 0.8


def test_dpfsdr_charges_the_steps_it_drew_before_failing(monkeypatch):
    fits = {"n": 0}
    real_fit = dpfsdr._CorrelatedLinearSVC.fit

    def second_fit_fails(self, X, y):
        fits["n"] += 1
        if fits["n"] == 2:
            raise MemoryError("could not allocate")
        return real_fit(self, X, y)

    monkeypatch.setattr(dpfsdr._CorrelatedLinearSVC, "fit", second_fit_fails)
    acc = pt.BudgetAccountant(10.0)
    model = pt.DPFS(
        0.5,
        0.5,
        data_norm=2.0,
        classes=[0, 1],
        budget="per_refit",
        random_state=0,
        accountant=acc,
    )
    with pytest.raises(MemoryError):
        model.fit(REAL, REAL_LABELS)
    # The importance (0.5) and two refits (0.5 each: the second had started) were
    # drawn or begun; the worst case of the whole search would be far more.
    assert acc.spent == pytest.approx(1.5)
    assert len(acc.ledger) == 1


def test_validation_failures_before_any_draw_stay_free():
    acc = pt.BudgetAccountant(2.0)
    bad = CODES.copy()
    bad[0, 0] = 7
    with pytest.raises(ValueError, match="3"):
        pt.DPDILCA(1.0, random_state=0, accountant=acc).fit(bad, cardinalities=[3] * 4)
    with pytest.raises(ValueError, match="3"):
        pt.PrivateKD(2, 1.0, random_state=0, accountant=acc, classes=[0, 1]).fit(
            bad, LABELS, cardinalities=[3] * 4
        )
    assert acc.spent == 0.0


FITS = {
    "PrivateKD": (
        lambda acc: pt.PrivateKD(
            2, 0.8, random_state=0, accountant=acc, classes=[0, 1]
        ),
        lambda estimator: estimator.fit(CODES, LABELS, cardinalities=[3] * 4),
    ),
    "DPDILCA": (
        lambda acc: pt.DPDILCA(0.8, context_size=1, random_state=0, accountant=acc),
        lambda estimator: estimator.fit(CODES, cardinalities=[3] * 4),
    ),
    "DPFS": (
        lambda acc: pt.DPFS(
            0.4, 0.4, data_norm=2.0, classes=[0, 1], random_state=0, accountant=acc
        ),
        lambda estimator: estimator.fit(REAL, REAL_LABELS),
    ),
}


@pytest.mark.filterwarnings("ignore:.*the released model is noise")
@pytest.mark.parametrize("name", FITS)
def test_a_fit_refused_at_its_charge_keeps_nothing_it_computed(monkeypatch, name):
    # Another process spent from a shared budget between this fit's check and its
    # charge: the check passed, the charge is refused.
    make, fit = FITS[name]
    acc = pt.BudgetAccountant(1.0)
    acc.spend(0.5, label="another process")
    monkeypatch.setattr(acc, "check", lambda *args, **kwargs: None)
    estimator = make(acc)
    before = dict(vars(estimator))
    with pytest.raises(pt.BudgetExceededError):
        fit(estimator)
    assert vars(estimator).keys() == before.keys()
    assert acc.spent == 0.5
