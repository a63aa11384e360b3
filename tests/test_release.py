"""The publishable form of every DP estimator: release() holds covered values only.

The covered attributes of each estimator are written out here, from its docstring's
account of what the guarantee covers, independently of ``released_attributes``.
"""

from __future__ import annotations

import json
import pickle
from typing import ClassVar

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

import privtab as pt
from privtab._estimator import DPEstimatorMixin
from privtab.accountant import LedgerEntry

RNG = np.random.default_rng(0)
CODES = RNG.integers(0, 3, size=(200, 4))
LABELS = (CODES[:, 0] + CODES[:, 1] > 2).astype(int)
REAL = RNG.normal(size=(200, 3))
REAL_LABELS = (REAL[:, 0] > 0).astype(int)

METADATA = {
    "estimator",
    "params",
    "guarantee",
    "epsilon_spent",
    "privacy_ledger",
    "attributes",
}
UNPUBLISHED_PARAMS = {"accountant", "random_state", "n_threads", "n_jobs"}
LINEAR = {"coef_", "intercept_", "classes_"}
SELECTION = {"support_", "selection_order_"}
DPFS_COVERED = SELECTION | {"classes_", "classifier_.coef_", "classifier_.intercept_"}


def fit(estimator):
    """Fit ``estimator`` on data of the kind it takes (declared domains, no warning)."""
    if isinstance(estimator, pt.PrivateKD | pt.ProjectedHistogram):
        return estimator.fit(CODES, LABELS, cardinalities=[3] * 4)
    if isinstance(estimator, pt.DPDILCA):
        return estimator.fit(CODES, cardinalities=[3] * 4)
    return estimator.fit(REAL, REAL_LABELS)


def cases(accountant=None):
    """Each DP estimator of this module's scope with the attributes it may publish."""
    common = {"random_state": 0, "accountant": accountant}
    return [
        (
            pt.DPLogisticRegression(1.0, data_norm=10.0, classes=[0, 1], **common),
            LINEAR,
        ),
        (
            pt.DPLogisticRegression(
                1.0, method="output", data_norm=10.0, classes=[0, 1], **common
            ),
            LINEAR,
        ),
        (pt.DPLinearSVC(1.0, data_norm=10.0, classes=[0, 1], **common), LINEAR),
        (
            pt.DPLinearSVC(
                1.0, method="objective", data_norm=10.0, classes=[0, 1], **common
            ),
            LINEAR,
        ),
        (pt.PrivateKD(2, 1.0, classes=[0, 1], **common), SELECTION),
        (
            pt.ProjectedHistogram(
                1.0, n_features=2, gamma=0.5, classes=[0, 1], **common
            ),
            SELECTION
            | {"n_features_", "gamma_", "histogram_", "classes_", "categories_"},
        ),
        (
            pt.DPDILCA(1.0, context_size=1, **common),
            {"contexts_", "tables_", "distance_matrices_"},
        ),
        (
            pt.DPFSDR(0.5, 0.5, data_norm=10.0, classes=[0, 1], **common),
            DPFS_COVERED,
        ),
        (
            pt.DPFS(0.5, 0.5, data_norm=10.0, budget="total", classes=[0, 1], **common),
            DPFS_COVERED,
        ),
        (
            pt.MicroaggregationMasker(3, 1.0, bounds=(-10.0, 10.0), **common),
            {"masked_", "n_clusters_", "epsilons_"},
        ),
    ]


def case_id(case):
    estimator = case[0]
    method = estimator.get_params().get("method")
    return type(estimator).__name__ + ("" if method is None else f"-{method}")


CASES = cases()


def fitted_value(estimator, name):
    value = estimator
    for part in name.split("."):
        value = getattr(value, part)
    return value


def same(a, b):
    """Deep equality of released values (arrays elementwise, histograms by field)."""
    if isinstance(a, pt.SparseHistogram):
        return isinstance(b, pt.SparseHistogram) and same(vars(a), vars(b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and a == b


def walk(value):
    """Every object a released value is made of."""
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from walk(item)
    elif isinstance(value, pt.SparseHistogram):
        yield from walk(vars(value))


def jsonable(value):
    """Plain JSON values: arrays and NumPy scalars through tolist()."""
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    if isinstance(value, pt.SparseHistogram):
        return jsonable(vars(value))
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    return value


@pytest.mark.parametrize("case", range(len(CASES)), ids=map(case_id, CASES))
def test_release_holds_the_covered_attributes_and_the_metadata(case):
    estimator, covered = cases()[case]
    fit(estimator)
    released = estimator.release()
    assert set(released) == METADATA
    assert set(released["attributes"]) == covered
    assert list(released["attributes"]) == list(type(estimator).released_attributes)
    for name, value in released["attributes"].items():
        assert same(value, fitted_value(estimator, name)), name
    public = {
        name: value
        for name, value in estimator.get_params(deep=False).items()
        if name not in UNPUBLISHED_PARAMS
    }
    assert same(released["params"], public)
    assert released["estimator"] == type(estimator).__name__
    individual = str(getattr(estimator, "mechanism", "")).startswith("idp")
    assert released["guarantee"] == ("idp" if individual else "dp")
    assert released["epsilon_spent"] == estimator.epsilon_spent_
    assert released["privacy_ledger"] == [
        (entry.label, entry.epsilon) for entry in estimator.privacy_ledger_
    ]
    assert (
        sum(eps for _, eps in released["privacy_ledger"]) == released["epsilon_spent"]
    )
    for part in walk(released):
        assert not isinstance(part, BaseEstimator | pt.BudgetAccountant | LedgerEntry)


@pytest.mark.parametrize("case", range(len(CASES)), ids=map(case_id, CASES))
def test_release_shows_no_other_release_of_the_accountant(case):
    estimator = cases()[case][0]
    acc = pt.BudgetAccountant(10.0)
    first = pt.DPDILCA(
        1.0, method="mean_su", context_size=1, random_state=1, accountant=acc
    )
    fit(first)
    first_label = acc.ledger[0].label
    assert first_label == "DPDILCA (mean_su, 4 attributes)"
    fit(estimator.set_params(accountant=acc))
    assert len(acc.ledger) == 2
    released = estimator.release()
    assert released["epsilon_spent"] == acc.ledger[1].epsilon
    assert first_label.encode() not in pickle.dumps(released)
    assert first_label not in json.dumps(jsonable(released))
    # The estimator itself carries the caller's accountant, with every entry.
    assert first_label.encode() in pickle.dumps(estimator)


@pytest.mark.parametrize("case", range(len(CASES)), ids=map(case_id, CASES))
def test_release_survives_pickle_and_json(case):
    estimator, covered = cases()[case]
    released = fit(estimator).release()
    assert same(pickle.loads(pickle.dumps(released)), released)
    plain = jsonable(released)
    assert json.loads(json.dumps(plain)) == plain
    for name in covered:
        assert plain["attributes"][name] == jsonable(fitted_value(estimator, name))


@pytest.mark.parametrize("case", range(len(CASES)), ids=map(case_id, CASES))
def test_release_is_a_copy(case):
    estimator = cases()[case][0]
    fit(estimator)
    released = estimator.release()
    for name, value in released["attributes"].items():
        arrays = [part for part in walk(value) if isinstance(part, np.ndarray)]
        for array in arrays:
            before = fitted_value(estimator, name)
            kept = pickle.loads(pickle.dumps(before))
            array[...] = 0 if array.dtype != bool else ~array
            assert same(fitted_value(estimator, name), kept), name
    declared = released["params"].get("classes")
    if declared is not None:
        declared.append(2)
        assert estimator.get_params()["classes"] == [0, 1]


@pytest.mark.parametrize("case", range(len(CASES)), ids=map(case_id, CASES))
def test_release_before_fit_raises(case):
    estimator = cases()[case][0]
    with pytest.raises(NotFittedError):
        estimator.release()


@pytest.mark.parametrize("Selector", [pt.DPFSDR, pt.DPFS])
@pytest.mark.filterwarnings("ignore:.*this fit is not private")
@pytest.mark.filterwarnings("ignore:.*the released model is noise")
@pytest.mark.parametrize(
    ("param", "budgets"),
    [("epsilon_selection", (None, 0.5)), ("epsilon_training", (0.5, None))],
)
def test_a_selection_without_noise_has_no_publishable_form(Selector, param, budgets):
    selector = Selector(*budgets, data_norm=10.0, classes=[0, 1], random_state=0)
    fit(selector)
    with pytest.raises(ValueError, match=f"{param} is None"):
        selector.release()


@pytest.mark.parametrize("Selector", [pt.DPFSDR, pt.DPFS])
def test_the_selectors_svm_is_published_through_the_selector(Selector):
    selector = fit(Selector(0.5, 0.5, data_norm=10.0, classes=[0, 1], random_state=0))
    # Its parameters hold the correlated-sensitivity factor, computed without noise.
    assert selector.classifier_.get_params()["sensitivity_factor"] == (
        selector.correlated_sensitivity_
    )
    with pytest.raises(TypeError, match="published by the selector's release"):
        selector.classifier_.release()
    released = selector.release()["attributes"]
    np.testing.assert_array_equal(
        released["classifier_.coef_"], selector.classifier_.coef_
    )


class Wrapper(DPEstimatorMixin, BaseEstimator):
    """A DP estimator that keeps a fitted DP model as an attribute."""

    released_attributes: ClassVar[tuple[str, ...]] = ("model_",)

    def __init__(self, epsilon=1.0, *, random_state=None, accountant=None):
        self.epsilon = epsilon
        self.random_state = random_state
        self.accountant = accountant

    def fit(self, X, y):
        run = self._start_private_fit()
        self.model_ = pt.DPLinearSVC(
            run.epsilon,
            data_norm=10.0,
            classes=[0, 1],
            random_state=run.random_state,
            accountant=pt.BudgetAccountant(),
        ).fit(X, y)
        self._finish_private_fit(run, "Wrapper")
        return self


class CoefWrapper(Wrapper):
    """The same, publishing the model's weights by dotted name."""

    released_attributes: ClassVar[tuple[str, ...]] = ("model_.coef_",)


def test_a_fitted_estimator_is_not_a_released_value():
    wrapper = Wrapper(random_state=0).fit(REAL, REAL_LABELS)
    with pytest.raises(TypeError, match=r"model_ holds a DPLinearSVC.*'model_\.coef_'"):
        wrapper.release()
    by_name = CoefWrapper(random_state=0).fit(REAL, REAL_LABELS)
    released = by_name.release()["attributes"]
    assert list(released) == ["model_.coef_"]
    np.testing.assert_array_equal(released["model_.coef_"], by_name.model_.coef_)
