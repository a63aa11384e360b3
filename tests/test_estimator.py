"""The one flow of every DP estimator: start-up, ledger with guarantees, tags."""

from __future__ import annotations

import inspect
import warnings
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline

import privtab as pt
from privtab._estimator import DPEstimatorMixin, PrivateRun, SupportSelectorMixin
from privtab.exceptions import BudgetExceededError

RNG = np.random.default_rng(0)
CODES = RNG.integers(0, 3, size=(200, 4))
LABELS = (CODES[:, 0] + CODES[:, 1] > 2).astype(int)
BINARY = (CODES > 0).astype(np.uint8)
REAL = RNG.normal(size=(200, 3))


def fit(estimator):
    """Fit ``estimator`` on data of the kind it takes (declared domains, no warning)."""
    if isinstance(estimator, pt.PrivateKD | pt.ProjectedHistogram):
        return estimator.fit(CODES, LABELS, cardinalities=[3] * 4)
    if isinstance(estimator, pt.DPDILCA):
        return estimator.fit(CODES, cardinalities=[3] * 4)
    if isinstance(estimator, pt.LaplaceDPRelease | pt.ExponentialDPRelease):
        return estimator.fit(BINARY, LABELS)
    return estimator.fit(REAL, LABELS)


def dp_estimators(random_state=0, accountant=None):
    common = {"random_state": random_state, "accountant": accountant}
    return [
        pt.PrivateKD(2, 1.0, classes=[0, 1], **common),
        pt.ProjectedHistogram(1.0, n_features=2, gamma=0.5, classes=[0, 1], **common),
        pt.DPDILCA(1.0, context_size=1, **common),
        pt.DPLogisticRegression(1.0, data_norm=10.0, classes=[0, 1], **common),
        pt.DPLinearSVC(1.0, data_norm=10.0, classes=[0, 1], **common),
        pt.LaplaceDPRelease(
            1.0, n_features=2, classes=[0, 1], min_class_size=10, **common
        ),
        pt.ExponentialDPRelease(
            1.0, n_features=2, classes=[0, 1], min_class_size=10, **common
        ),
    ]


def every_dp_estimator(random_state=0, accountant=None):
    """:func:`dp_estimators` and the estimators whose spending is not one epsilon."""
    common = {"random_state": random_state, "accountant": accountant}
    return [
        *dp_estimators(**common),
        pt.DPFSDR(0.5, 1.0, budget="total", data_norm=10.0, classes=[0, 1], **common),
        pt.DPFS(0.5, 1.0, budget="total", data_norm=10.0, classes=[0, 1], **common),
        pt.MicroaggregationMasker(
            5, 1.0, mechanism="dp", bounds=(-10.0, 10.0), **common
        ),
    ]


def test_every_public_dp_estimator_is_listed():
    public = {
        name
        for name in pt.__all__
        if isinstance(getattr(pt, name), type)
        and issubclass(getattr(pt, name), DPEstimatorMixin)
    }
    assert public == {type(e).__name__ for e in every_dp_estimator()}


@pytest.mark.parametrize("estimator", dp_estimators(), ids=lambda e: type(e).__name__)
def test_every_dp_estimator_follows_the_flow(estimator):
    assert isinstance(estimator, DPEstimatorMixin)
    acc = pt.BudgetAccountant(1.0)
    estimator.set_params(accountant=acc)
    fit(estimator)
    assert acc.spent == estimator.epsilon_spent_ == 1.0
    (charge,) = acc.ledger
    assert charge.guarantee == "dp"
    ledger = estimator.privacy_ledger_
    assert all(isinstance(entry, pt.LedgerEntry) for entry in ledger)
    assert all(entry.guarantee == "dp" for entry in ledger)
    assert sum(eps for _, eps in ledger) == estimator.epsilon_spent_
    assert [tuple(entry) for entry in ledger] == [(e.label, e.epsilon) for e in ledger]


@pytest.mark.parametrize("estimator", dp_estimators(), ids=lambda e: type(e).__name__)
def test_budget_is_checked_before_the_data_is_read(estimator):
    acc = pt.BudgetAccountant(0.5)
    estimator.set_params(accountant=acc)
    with pytest.raises(BudgetExceededError):
        # Data that would fail validation: the budget check comes first.
        estimator.fit(np.array([[np.nan]]), [0])
    assert acc.ledger == []


@pytest.mark.parametrize("seed", [None, 0])
def test_non_deterministic_tag_follows_the_seed(seed):
    for estimator in dp_estimators(random_state=seed):
        tags = estimator.__sklearn_tags__()
        assert tags.non_deterministic is (seed is None), type(estimator).__name__


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon must be finite and > 0"),
        ({"random_state": "seed"}, TypeError, "random_state must be None, an int"),
        ({"accountant": 1.0}, TypeError, "accountant must be a privtab.Budget"),
        ({"label": 3}, TypeError, "label must be a str or None, got int: 3"),
        ({"label": " "}, ValueError, "label must not be blank"),
    ],
)
def test_start_up_validates_epsilon_seed_and_accountant(params, error, match):
    for estimator in dp_estimators():
        with pytest.raises(error, match=match):
            fit(estimator.set_params(**params))


def test_ledger_must_add_up_to_epsilon():
    run = PrivateRun.start(1.0, None, pt.BudgetAccountant())
    with pytest.raises(RuntimeError, match=r"adds up to 0\.5"):
        run.ledger([("half", 0.5)])


class ToySelector(DPEstimatorMixin, SupportSelectorMixin, BaseEstimator):
    """A new ε-individual-DP selector: the whole start-up is two calls."""

    privacy_guarantee: ClassVar[str] = "idp"

    def __init__(self, epsilon=1.0, *, random_state=None, accountant=None):
        self.epsilon = epsilon
        self.random_state = random_state
        self.accountant = accountant

    def fit(self, X, y):
        run = self._start_private_fit()
        X = np.asarray(X)
        scores = np.abs(np.corrcoef(X.T, y)[-1, :-1])
        # The estimator charges its accountant once, in _finish_private_fit.
        scratch = pt.BudgetAccountant()
        noisy = pt.laplace_mechanism(
            scores, 2.0, run.epsilon, random_state=run.random_state, accountant=scratch
        )
        self.n_features_in_ = X.shape[1]
        self._set_selection([int(np.argmax(noisy))], X.shape[1])
        self._finish_private_fit(run, "ToySelector")
        return self


def test_a_new_estimator_gets_the_flow_and_its_guarantee_kind():
    acc = pt.BudgetAccountant(2.0)
    selector = ToySelector(1.0, random_state=0, accountant=acc).fit(REAL, LABELS)
    assert selector.get_support().sum() == 1
    assert selector.transform(REAL).shape == (200, 1)
    assert selector.privacy_ledger_ == [("ToySelector", 1.0)]
    assert selector.privacy_ledger_[0].guarantee == "idp"
    assert acc.ledger[0].guarantee == "idp"
    assert "idp" in acc.report()
    assert selector.__sklearn_tags__().target_tags.required
    assert not selector.__sklearn_tags__().non_deterministic


# Warnings point at the user's line ---------------------------------------------------
def _score_nothing(estimator, X, y=None):
    return 0.0


def leaky_estimators():
    """Every DP estimator (and the encoder) with something left for the data to say."""
    return [
        (pt.PrivateKD(2, 1.0), CODES, LABELS),
        (pt.ProjectedHistogram(1.0, n_features=2, gamma=0.5), CODES, LABELS),
        (pt.DPDILCA(1.0, context_size=1), CODES, None),
        (pt.DPLogisticRegression(1.0), REAL, LABELS),
        (pt.DPLinearSVC(1.0), REAL, LABELS),
        (pt.LaplaceDPRelease(1.0, n_features=2), BINARY, LABELS),
        (pt.ExponentialDPRelease(1.0, n_features=2), BINARY, LABELS),
        (pt.DPFSDR(0.5, 1.0, budget="total"), REAL, LABELS),
        (pt.DPFS(0.5, 1.0, budget="total"), REAL, LABELS),
        (pt.MicroaggregationMasker(5, 1.0), np.abs(REAL), None),
        (pt.TableEncoder(), pd.DataFrame({"colour": ["red", "blue"] * 100}), None),
    ]


CALLERS = {
    "fit": lambda estimator, X, y: estimator.fit(X, y),
    "Pipeline.fit": lambda estimator, X, y: Pipeline([("step", estimator)]).fit(X, y),
    "cross_val_score": lambda estimator, X, y: cross_val_score(
        estimator, X, y, cv=2, scoring=_score_nothing, error_score="raise"
    ),
}


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize(
    ("estimator", "X", "y"),
    leaky_estimators(),
    ids=[type(case[0]).__name__ for case in leaky_estimators()],
)
def test_privacy_leak_warnings_point_at_the_callers_line(estimator, X, y, caller):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CALLERS[caller](estimator, X, y)
    leaks = [w for w in caught if issubclass(w.category, pt.PrivacyLeakWarning)]
    assert leaks
    assert {w.filename for w in leaks} == {__file__}


# Accounting in the user's terms -------------------------------------------------------
@pytest.mark.parametrize(
    "estimator", every_dp_estimator(), ids=lambda e: type(e).__name__
)
def test_label_names_the_ledger_entry_of_every_fit(estimator):
    acc = pt.BudgetAccountant()
    estimator.set_params(accountant=acc, label="income model, trial 7")
    copy = clone(estimator)
    assert copy.get_params()["label"] == "income model, trial 7"
    fit(estimator)
    fit(copy)
    assert [entry.label for entry in acc.ledger] == ["income model, trial 7"] * 2
    assert acc.spent == 2 * estimator.epsilon_spent_


def _mechanism_calls():
    """One call of every public function that charges an accountant."""
    return {
        "laplace_mechanism": lambda **kw: pt.laplace_mechanism(
            [1.0, 2.0], 1.0, 1.0, **kw
        ),
        "discrete_laplace_mechanism": lambda **kw: pt.discrete_laplace_mechanism(
            [1, 2], 1.0, 1.0, **kw
        ),
        "exponential_mechanism": lambda **kw: pt.exponential_mechanism(
            [1.0, 2.0, 3.0], 1.0, 0.5, size=2, **kw
        ),
        "thresholded_histogram": lambda **kw: pt.thresholded_histogram(
            CODES, [3] * 4, 1.0, **kw
        ),
        "dp_feature_importance": lambda **kw: pt.dp_feature_importance(
            REAL, LABELS, 1.0, classes=[0, 1], **kw
        ),
        "dp_contingency_table": lambda **kw: pt.dp_contingency_table(
            pt.EncodedTable(CODES, [3] * 4), "x0", "x2", 1.0, **kw
        ),
    }


#: Public functions that take an accountant to set it, not to charge it.
ACCOUNTANT_SETTERS = {"set_default_accountant", "use_accountant"}


def test_every_public_mechanism_is_listed():
    charging = {
        name
        for name in pt.__all__
        if inspect.isfunction(getattr(pt, name))
        and "accountant" in inspect.signature(getattr(pt, name)).parameters
        and name not in ACCOUNTANT_SETTERS
    }
    assert charging == set(_mechanism_calls())


@pytest.mark.parametrize("name", _mechanism_calls())
def test_label_names_the_ledger_entry_of_every_mechanism(name):
    call = _mechanism_calls()[name]
    acc = pt.BudgetAccountant()
    call(accountant=acc, random_state=0)
    call(accountant=acc, random_state=0, label="age counts")
    default, labelled = acc.ledger
    assert default.label.startswith(name)
    assert labelled.label == "age counts"
    assert labelled.epsilon == default.epsilon
    with pytest.raises(TypeError, match="label must be a str or None"):
        call(accountant=acc, label=b"age counts")
    assert len(acc.ledger) == 2


def test_cross_validation_is_charged_once_per_fit():
    acc = pt.BudgetAccountant()
    model = pt.DPLogisticRegression(
        1.0, data_norm=10.0, classes=[0, 1], accountant=acc, label="cv", random_state=0
    )
    scores = cross_val_score(model, REAL, LABELS, cv=5, n_jobs=None)
    assert scores.shape == (5,)
    assert acc.spent == 5.0
    assert [(e.label, e.epsilon) for e in acc.ledger] == [("cv", 1.0)] * 5
    # Two candidates on 5 folds, then the refit of the best one on all the rows.
    search = GridSearchCV(model, {"C": [0.5, 2.0]}, cv=5, n_jobs=None)
    search.fit(REAL, LABELS)
    assert acc.spent == 5.0 + 2 * 5 + 1
