"""Tests of the projected histogram (paper 001, §2.3) and its parameter choices.

Non-private quantities (the simulated table, MDA, the choice of gamma, true counts)
are checked against NumPy re-implementations written here from PAPERS.md §001.
Statistical tests run at ALPHA = 1e-6 with fixed seeds, each with a power check.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import privtab as pt
from privtab import projected
from privtab.exceptions import BudgetExceededError, DomainError, PrivacyLeakWarning
from privtab.projected import ProjectedHistogram, estimate_gamma, estimate_n_features

from _stats import assert_accepts, assert_rejects, chi2_pvalue, ks_pvalue


# NumPy references -------------------------------------------------------------------
def ref_bins(n, d):
    bw = (math.log(n) / n) ** (1.0 / (d + 1))
    return max(1, math.ceil(1.0 / bw - 0.5))


def ref_cut(draws, bins):
    """Min-max scale every column of ``draws`` into [0, 1] and cut into ``bins``."""
    low, high = draws.min(axis=0), draws.max(axis=0)
    unit = (draws - low) / (high - low)
    return np.clip(np.floor(unit * bins), 0, bins - 1).astype(np.int64)


def ref_gamma(n, m, q, k, *, A=0.5, B=0.5, seed=0):
    """gamma of PAPERS.md §001 "Choosing γ", with d - 1 = m predictors."""
    if k == m:
        return 1.0
    s = ref_bins(n, m)
    draws = np.random.default_rng(seed).standard_normal(projected.BIN_MASS_DRAWS)
    p_i = np.bincount(ref_cut(draws, s), minlength=s) / draws.size
    pi_q = n**2 * (q - 1) / (2 * q)
    eps_p = n * B * k**2 * math.log(m) / (0.05 * pi_q)
    z = (n / q) * float(np.sum(p_i**2)) ** k
    p = 0.95
    eps_h = max(
        (A * math.log(n) - 2 * math.log(1 / (2 * p))) / z,
        (A * math.log(n) - 2 * math.log(2 - 2 * p)) / z,
    )
    return eps_h / (eps_h + eps_p)


def undiscerned(X, y, subset):
    """Σ_c (n_c² − Σ_l n_{c,l}²) over the classes c of the columns ``subset``."""
    if subset:
        _, cls = np.unique(X[:, subset], axis=0, return_inverse=True)
    else:
        cls = np.zeros(len(y), dtype=np.int64)
    _, lab = np.unique(y, return_inverse=True)
    joint = np.zeros((cls.max() + 1, lab.max() + 1), dtype=np.int64)
    np.add.at(joint, (cls.ravel(), lab.ravel()), 1)
    return int((joint.sum(axis=1) ** 2).sum() - (joint**2).sum())


def ref_pairs(X, y, subset):
    """n·F(S): ordered pairs differing on S and on the label."""
    return undiscerned(X, y, []) - undiscerned(X, y, subset)


def ref_greedy(X, y, k):
    order = []
    for _ in range(k):
        gains = [
            -1 if a in order else ref_pairs(X, y, [*order, a])
            for a in range(X.shape[1])
        ]
        order.append(int(np.argmax(gains)))
    return order


def ref_mda(X, y, sigma=0.1):
    total = ref_pairs(X, y, list(range(X.shape[1])))
    if total == 0:
        return []
    order = ref_greedy(X, y, X.shape[1])
    for size in range(1, len(order) + 1):
        if ref_pairs(X, y, order[:size]) >= (1 - sigma) * total:
            return order[:size]
    return order


def ref_keys(codes, cards):
    keys = np.zeros(codes.shape[0], dtype=object)
    for j, card in enumerate(cards):
        keys = keys * int(card) + codes[:, j].astype(object)
    return keys


#: The label set of signal_data, declared to the estimator.
SIGNAL_CLASSES = ["no", "yes"]


def signal_data(n=3000, seed=0):
    """Four predictors with distinct discernibility gains and a binary label."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.integers(0, 2, n),
            rng.integers(0, 3, n),
            rng.integers(0, 4, n),
            rng.integers(0, 3, n),
        ]
    )
    flip = rng.random(n) < 0.1
    y = np.where(((X[:, 2] >= 2) ^ (X[:, 0] == 1)) ^ flip, "yes", "no")
    return X, y, [2, 3, 4, 3]


# estimate_gamma ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("n", "m", "q", "k"),
    [(1000, 10, 2, 3), (45_083, 14, 2, 4), (150, 4, 3, 2), (6435, 36, 6, 5)],
)
def test_estimate_gamma_matches_the_formulas(n, m, q, k):
    got = estimate_gamma(n, m, q, k, random_state=7)
    assert got == pytest.approx(ref_gamma(n, m, q, k, seed=7), rel=1e-12)
    assert 0 < got < 1


def test_estimate_gamma_constants_enter_as_written():
    got = estimate_gamma(2000, 8, 3, 2, A=1.5, B=2.0, random_state=1)
    assert got == pytest.approx(ref_gamma(2000, 8, 3, 2, A=1.5, B=2.0, seed=1))


@pytest.mark.parametrize(("n", "m", "k"), [(500, 5, 5), (500, 1, 1), (10, 1, 1)])
def test_estimate_gamma_is_one_without_projection(n, m, k):
    assert estimate_gamma(n, m, 2, k, random_state=0) == 1.0


@given(
    n=st.integers(2, 10**7),
    m=st.integers(2, 60),
    q=st.integers(2, 20),
    data=st.data(),
)
def test_estimate_gamma_is_in_unit_interval(n, m, q, data):
    k = data.draw(st.integers(1, m - 1))
    assert 0 < estimate_gamma(n, m, q, k, random_state=0) <= 1


def test_bin_masses_are_reproducible_and_sum_to_one():
    masses = projected._bin_masses(5, np.random.default_rng(3))
    assert masses.sum() == pytest.approx(1.0)
    np.testing.assert_array_equal(
        masses, projected._bin_masses(5, np.random.default_rng(3))
    )


# estimate_n_features ----------------------------------------------------------------
@given(
    n=st.integers(2, 300),
    m=st.integers(1, 5),
    q=st.integers(2, 4),
    seed=st.integers(0, 2**32),
)
def test_simulated_table_follows_the_recipe(n, m, q, seed):
    codes, labels, bins = projected._simulate_table(
        n, m, q, np.random.default_rng(seed)
    )
    rng = np.random.default_rng(seed)
    expected_labels = rng.integers(0, q, n)
    draws = rng.standard_normal((n, m))
    assert bins == ref_bins(n, m)
    np.testing.assert_array_equal(labels, expected_labels)
    if n > 1:
        np.testing.assert_array_equal(codes, ref_cut(draws, bins))


@given(
    n=st.integers(2, 200),
    m=st.integers(1, 5),
    q=st.integers(2, 3),
    seed=st.integers(0, 2**32),
)
def test_estimate_n_features_is_mda_of_the_simulation(n, m, q, seed):
    codes, labels, _ = projected._simulate_table(n, m, q, np.random.default_rng(seed))
    expected = min(max(len(ref_mda(codes, labels)), 1), m)
    assert estimate_n_features(n, m, q, random_state=seed) == expected


def test_estimate_n_features_sigma_zero_keeps_what_is_needed():
    codes, labels, _ = projected._simulate_table(80, 4, 2, np.random.default_rng(5))
    expected = max(len(ref_mda(codes, labels, sigma=0.0)), 1)
    assert estimate_n_features(80, 4, 2, sigma=0.0, random_state=5) == expected


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n": 1}, ValueError, "n must be >= 2, got 1"),
        ({"n": 2.5}, TypeError, "n must be an int"),
        ({"n_predictors": 0}, ValueError, "n_predictors must be >= 1"),
        ({"n_classes": 1}, ValueError, "n_classes must be >= 2"),
        ({"sigma": 1.0}, ValueError, r"sigma must be in \[0, 1\)"),
        ({"sigma": "a"}, TypeError, "sigma must be a real number"),
        ({"random_state": -1}, ValueError, "random_state must be a non-negative"),
    ],
)
def test_estimate_n_features_validation(kwargs, error, match):
    args = {"n": 100, "n_predictors": 3, "n_classes": 2} | kwargs
    sigma = args.pop("sigma", 0.1)
    state = args.pop("random_state", 0)
    with pytest.raises(error, match=match):
        estimate_n_features(**args, sigma=sigma, random_state=state)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((1, 3, 2, 1), {}, ValueError, "n must be >= 2"),
        ((100, 0, 2, 1), {}, ValueError, "n_predictors must be >= 1"),
        ((100, 3, 1, 1), {}, ValueError, "n_classes must be >= 2"),
        ((100, 3, 2, 0), {}, ValueError, "n_features must be >= 1"),
        ((100, 3, 2, 4), {}, ValueError, r"n_features must be <= n_predictors \(3\)"),
        ((100, 3, 2, 1.0), {}, TypeError, "n_features must be an int"),
        ((100, 3, 2, 1), {"A": 0.0}, ValueError, "A must be finite and > 0"),
        ((100, 3, 2, 1), {"B": math.inf}, ValueError, "B must be finite and > 0"),
        ((100, 3, 2, 1), {"B": "x"}, TypeError, "B must be a real number"),
    ],
)
def test_estimate_gamma_validation(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        estimate_gamma(*args, **kwargs)


# Budget -----------------------------------------------------------------------------
def test_ledger_splits_epsilon_exactly_and_charges_once():
    X, y, cards = signal_data()
    acc = pt.BudgetAccountant(0.7)
    model = ProjectedHistogram(
        0.7,
        n_features=2,
        gamma=0.3,
        random_state=1,
        accountant=acc,
        classes=SIGNAL_CLASSES,
    ).fit(X, y, cardinalities=cards)
    assert model.epsilon_spent_ == 0.7
    (kd, kd_eps), (hist, hist_eps) = model.privacy_ledger_
    assert (kd, hist) == ("PrivateKD", "thresholded_histogram")
    assert kd_eps == pytest.approx(0.7 * 0.7, rel=1e-14)
    assert hist_eps == pytest.approx(0.3 * 0.7, rel=1e-14)
    assert sum(eps for _, eps in model.privacy_ledger_) == model.epsilon_spent_
    assert model.histogram_.epsilon == hist_eps
    assert [tuple(e) for e in acc.ledger] == [("ProjectedHistogram", 0.7)]
    assert acc.spent == 0.7


def test_estimated_parameters_are_the_estimators():
    X, y, cards = signal_data(n=2000)
    model = ProjectedHistogram(
        1.0,
        random_state=3,
        accountant=pt.BudgetAccountant(),
        classes=SIGNAL_CLASSES,
    )
    model.fit(X, y, cardinalities=cards)
    rng = np.random.default_rng(3)
    k = estimate_n_features(2000, 4, 2, random_state=rng)
    assert model.n_features_ == k
    gamma = 1.0 if k == 4 else estimate_gamma(2000, 4, 2, k, random_state=rng)
    assert model.gamma_ == gamma
    assert sum(eps for _, eps in model.privacy_ledger_) == 1.0


class Untouchable:
    """Data that fails the test if anything reads it."""

    shape = (10, 2)

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data was read")


def test_budget_is_checked_before_reading_data():
    acc = pt.BudgetAccountant(0.5)
    model = ProjectedHistogram(1.0, n_features=1, accountant=acc)
    with pytest.raises(BudgetExceededError):
        model.fit(Untouchable(), Untouchable(), cardinalities=[2, 2])
    assert acc.spent == 0
    assert not acc.ledger


def test_failure_charges_nothing():
    acc = pt.BudgetAccountant(1.0)
    with pytest.raises(DomainError):
        ProjectedHistogram(
            1.0, n_features=2, max_cells=5, accountant=acc, classes=[0, 1]
        ).fit(np.zeros((50, 2), dtype=int), [0, 1] * 25, cardinalities=[100, 100])
    assert acc.spent == 0


@pytest.mark.parametrize("gamma", [None, 0.2])
def test_no_projection_when_k_keeps_every_predictor(gamma):
    X, y, cards = signal_data(n=1000)
    model = ProjectedHistogram(
        2.0,
        n_features=4,
        gamma=gamma,
        random_state=0,
        accountant=pt.BudgetAccountant(),
        classes=SIGNAL_CLASSES,
    ).fit(X, y, cardinalities=cards)
    assert model.gamma_ == 1.0
    assert model.privacy_ledger_ == [("thresholded_histogram", 2.0)]
    np.testing.assert_array_equal(model.selection_order_, np.arange(4))
    assert model.support_.all()
    assert model.histogram_.cardinalities == (2, 3, 4, 3, 2)


# Utility with a huge epsilon ----------------------------------------------------------
@pytest.mark.parametrize("noise", ["laplace", "discrete"])
def test_huge_epsilon_matches_greedy_and_true_counts(noise):
    X, y, cards = signal_data()
    k = 2
    model = ProjectedHistogram(
        1e7,
        n_features=k,
        gamma=0.5,
        noise=noise,
        random_state=4,
        accountant=pt.BudgetAccountant(),
        classes=SIGNAL_CLASSES,
    ).fit(X, y, cardinalities=cards)
    assert model.selection_order_.tolist() == ref_greedy(X, y, k)
    classes, labels = np.unique(y, return_inverse=True)
    np.testing.assert_array_equal(model.classes_, classes)
    projected_codes = np.column_stack([X[:, model.selection_order_], labels])
    pcards = [cards[j] for j in model.selection_order_] + [2]
    true_keys, true_counts = np.unique(
        ref_keys(projected_codes, pcards), return_counts=True
    )
    kept = dict(
        zip(model.histogram_.keys.tolist(), model.histogram_.values, strict=True)
    )
    for key, count in zip(true_keys.tolist(), true_counts, strict=True):
        assert kept[key] == pytest.approx(count, abs=1e-3)
    # Kept cells that were not observed are false positives just above τ ≈ 0.
    extra = set(kept) - set(true_keys.tolist())
    assert all(kept[key] < 0.5 for key in extra)
    X_syn, _y_syn = model.synthetic()
    assert len(X_syn) == len(X)


# Synthetic records ------------------------------------------------------------------
def adult_like(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.uniform(17, 90, n).round(),
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.choice(["S", "M", "L", "XL"], n),
            "flag": rng.choice(["a", "b"], n),
        }
    )
    high = (frame["age"] > 45) & (frame["colour"] == "red")
    frame["label"] = np.where(high ^ (rng.random(n) < 0.05), ">50K", "<=50K")
    return frame


def test_synthetic_decodes_categories_and_bin_midpoints():
    frame = adult_like()
    n, d = len(frame), frame.shape[1]
    bins = pt.lei_bins(n, d - 1)
    domains = {
        "colour": ["red", "green", "blue"],
        "size": ["S", "M", "L", "XL"],
        "flag": ["a", "b"],
    }
    encoder = pt.TableEncoder(domains=domains, bounds={"age": (17, 90)}, bins=bins)
    table = encoder.fit_transform(frame.drop(columns="label"))
    model = ProjectedHistogram(
        5.0,
        n_features=2,
        gamma=0.5,
        random_state=2,
        accountant=pt.BudgetAccountant(),
        classes=[">50K", "<=50K"],
    ).fit(table, frame["label"])
    X_syn, y_syn = model.synthetic()
    hist = model.histogram_
    counts = np.ceil(hist.values - 0.5).clip(min=0).astype(np.int64)
    assert X_syn.shape == (counts.sum(), 2)
    assert y_syn.shape == (counts.sum(),)
    assert set(y_syn) <= {">50K", "<=50K"}
    # Independent decoding of the kept cells: categories, or midpoints of age bins.
    names = [table.columns[j] for j in model.selection_order_]
    cells = np.repeat(hist.to_codes(), counts, axis=0)
    for j, name in enumerate(names):
        if name == "age":
            width = (90 - 17) / bins
            expected = 17 + (cells[:, j] + 0.5) * width
            np.testing.assert_allclose(X_syn[:, j].astype(float), expected)
        else:
            expected = np.asarray(domains[name], dtype=object)[cells[:, j]]
            np.testing.assert_array_equal(X_syn[:, j], expected)
    np.testing.assert_array_equal(y_syn, np.array(["<=50K", ">50K"])[cells[:, -1]])
    codes, labels = model.synthetic(decode=False)
    np.testing.assert_array_equal(codes, cells[:, :-1])
    np.testing.assert_array_equal(labels, y_syn)


def test_synthetic_from_codes_returns_codes():
    X, y, cards = signal_data(n=1000)
    model = ProjectedHistogram(
        3.0,
        n_features=2,
        gamma=0.6,
        random_state=0,
        accountant=pt.BudgetAccountant(),
        classes=SIGNAL_CLASSES,
    ).fit(X, y, cardinalities=cards)
    X_syn, y_syn = model.synthetic()
    assert X_syn.dtype == np.uint32
    assert X_syn.shape[1] == 2
    counts = np.ceil(model.histogram_.values - 0.5).clip(min=0)
    assert len(y_syn) == counts.sum()
    assert set(y_syn.tolist()) <= {"no", "yes"}
    for j, col in enumerate(model.selection_order_):
        assert X_syn[:, j].max() < cards[col]


def test_synthetic_before_fit():
    with pytest.raises(NotFittedError, match="not fitted yet"):
        ProjectedHistogram(1.0).synthetic()


# Inputs -----------------------------------------------------------------------------
def test_inferred_cardinalities_warn():
    X, y, _ = signal_data(n=500)
    model = ProjectedHistogram(
        1.0,
        n_features=2,
        gamma=0.5,
        random_state=0,
        accountant=pt.BudgetAccountant(),
        classes=SIGNAL_CLASSES,
    )
    with pytest.warns(PrivacyLeakWarning, match="cardinalities of X were inferred"):
        model.fit(X, y)
    np.testing.assert_array_equal(model.cardinalities_, X.max(axis=0) + 1)


def fitted(X, y, cardinalities=None, seed=5, classes=SIGNAL_CLASSES):
    return ProjectedHistogram(
        2.0,
        n_features=2,
        gamma=0.4,
        random_state=seed,
        accountant=pt.BudgetAccountant(),
        classes=classes,
    ).fit(X, y, cardinalities=cardinalities)


def same_release(a, b):
    np.testing.assert_array_equal(a.selection_order_, b.selection_order_)
    np.testing.assert_array_equal(a.histogram_.keys, b.histogram_.keys)
    np.testing.assert_array_equal(a.histogram_.values, b.histogram_.values)


def test_dataframes_and_encoded_tables_give_the_same_release():
    X, y, cards = signal_data(n=1500)
    base = fitted(X, y, cards)
    same_release(base, fitted(pd.DataFrame(X, columns=list("abcd")), y, cards))
    same_release(base, fitted(pl.DataFrame(X, schema=list("abcd")), y, cards))
    same_release(base, fitted(pt.EncodedTable(X, cards), pd.Series(y)))
    same_release(base, fitted(X.astype(np.uint8), list(y), cards))


def test_seed_determinism():
    X, y, cards = signal_data(n=1500)
    same_release(fitted(X, y, cards, seed=9), fitted(X, y, cards, seed=9))
    other = fitted(X, y, cards, seed=10)
    assert not np.array_equal(
        fitted(X, y, cards, seed=9).histogram_.values, other.histogram_.values
    )


def test_numeric_labels_round_trip():
    X, y, cards = signal_data(n=800)
    labels = np.where(y == "yes", 7.0, -1.0)
    model = fitted(X, labels, cards, classes=[7.0, -1.0])
    np.testing.assert_array_equal(model.classes_, [-1.0, 7.0])
    assert set(model.synthetic()[1].tolist()) <= {-1.0, 7.0}


# Validation -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon must be finite and > 0, got 0.0"),
        ({"epsilon": math.nan}, ValueError, "epsilon must be finite and > 0"),
        ({"epsilon": "1"}, TypeError, "epsilon must be a real number"),
        ({"gamma": 0.0}, ValueError, r"gamma must be in \(0, 1\], got 0.0"),
        ({"gamma": 1.5}, ValueError, r"gamma must be in \(0, 1\], got 1.5"),
        ({"gamma": "half"}, TypeError, "gamma must be a real number, got str"),
        ({"gamma": True}, TypeError, "gamma must be a real number, got bool"),
        ({"n_features": 0}, ValueError, "n_features must be >= 1, got 0"),
        ({"n_features": 1.5}, TypeError, "n_features must be an int"),
        ({"n_features": 5}, ValueError, r"n_features must be <= .* \(4\), got 5"),
        ({"A": 0}, ValueError, "A must be finite and > 0, got 0.0"),
        ({"A": "x"}, TypeError, "A must be a real number"),
        ({"B": -1.0}, ValueError, "B must be finite and > 0, got -1.0"),
        ({"B": math.inf}, ValueError, "B must be finite and > 0, got inf"),
        ({"sigma": 1.0}, ValueError, r"sigma must be in \[0, 1\), got 1.0"),
        ({"sigma": None}, TypeError, "sigma must be a real number"),
        ({"noise": "gauss"}, ValueError, "noise must be 'laplace' or 'discrete'"),
        ({"noise": 3}, TypeError, "noise must be a str, got int"),
        ({"max_cells": 0}, ValueError, "max_cells must be >= 1, got 0"),
        ({"random_state": "x"}, TypeError, "random_state must be None, an int"),
        ({"accountant": 1.0}, TypeError, "accountant must be a privtab.Budget"),
    ],
)
def test_parameter_validation(params, error, match):
    X, y, cards = signal_data(n=200)
    params = {
        "epsilon": 1.0,
        "accountant": pt.BudgetAccountant(),
        "classes": SIGNAL_CLASSES,
    } | params
    epsilon = params.pop("epsilon")
    with pytest.raises(error, match=match):
        ProjectedHistogram(epsilon, **params).fit(X, y, cardinalities=cards)


@pytest.mark.parametrize(
    ("X", "y", "cards", "error", "match"),
    [
        (np.zeros((4, 2)), [0, 1, 0], [2, 2], ValueError, "y has 3 labels, expected 4"),
        (np.zeros((4, 2)), [[0, 1, 0, 1]], [2, 2], ValueError, r"got shape \(1, 4\)"),
        (np.zeros((4, 2)), [1, 1, 1, 1], [2, 2], ValueError, "at least 2 classes"),
        (np.zeros((2, 2)), [0.0, np.nan], [2, 2], ValueError, "only finite labels"),
        (np.zeros((2, 2)), ["a", None], [2, 2], ValueError, "missing labels"),
        (
            np.zeros((2, 2)),
            np.array([1, "a"], dtype=object),
            [2, 2],
            TypeError,
            "one sortable type",
        ),
        (np.zeros((2, 2)), np.array([1j, 2j]), [2, 2], TypeError, "y must hold"),
        (np.zeros(4), [0, 1, 0, 1], [2], ValueError, "X must be 2-dimensional"),
        (np.zeros((0, 2)), [], [2, 2], ValueError, "X must be non-empty"),
        ([[0, np.nan], [1, 0]], [0, 1], [2, 2], ValueError, "finite codes"),
        ([[0, -1], [1, 0]], [0, 1], [2, 2], ValueError, "codes >= 0, got -1"),
        ([[0, 2], [1, 0]], [0, 1], [2, 2], ValueError, r"X\[0, 1\] = 2 is >= card"),
        ([[0.5, 0], [1, 0]], [0, 1], [2, 2], TypeError, "integer codes"),
        ([["a", "b"], ["c", "d"]], [0, 1], [2, 2], TypeError, "integer codes"),
        ([[0, 1], [1, 0]], [0, 1], [2], ValueError, "cardinalities must have one"),
        ([[0, 1], [1, 0]], [0, 1], [2, 0], ValueError, "cardinalities must be in"),
    ],
)
def test_data_validation(X, y, cards, error, match):
    model = ProjectedHistogram(1.0, n_features=1, accountant=pt.BudgetAccountant())
    with pytest.raises(error, match=match):
        model.fit(X, y, cardinalities=cards)


def test_inferred_cardinalities_validate_codes():
    model = ProjectedHistogram(1.0, n_features=1, accountant=pt.BudgetAccountant())
    with pytest.raises(ValueError, match="codes >= 0"):
        model.fit([[0, -3], [1, 0]], [0, 1])
    with pytest.raises(ValueError, match="finite codes"):
        model.fit([[0, np.inf], [1, 0]], [0, 1])


codes_strategy = hnp.arrays(
    dtype=st.sampled_from(
        [np.int8, np.int64, np.uint32, np.uint64, np.float64, np.bool_]
    ),
    shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=12),
    elements={"allow_nan": True, "allow_infinity": True},
)


@given(
    X=codes_strategy,
    y=st.lists(st.integers(0, 2), min_size=0, max_size=12),
    k=st.one_of(st.none(), st.integers(1, 3)),
    declared=st.booleans(),
)
def test_no_input_makes_the_core_panic(X, y, k, declared):
    cards = None
    if declared and X.ndim == 2:
        cards = [3] * X.shape[1]
    model = ProjectedHistogram(
        1.0, n_features=k, random_state=0, accountant=pt.BudgetAccountant()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        try:
            model.fit(X, y, cardinalities=cards)
        except (ValueError, TypeError, OverflowError):
            return
    X_syn, y_syn = model.synthetic()
    assert X_syn.shape[0] == y_syn.shape[0]


# Distributions ----------------------------------------------------------------------
def first_choice_probabilities(X, y, eps_weight):
    gains = np.array([ref_pairs(X, y, [a]) for a in range(X.shape[1])]) / len(y)
    weights = np.exp(eps_weight * (gains - gains.max()))
    return weights / weights.sum()


def first_choices(X, y, cards, epsilon, gamma, fits):
    rng = np.random.default_rng(2024)
    picks = np.zeros(X.shape[1], dtype=np.int64)
    for _ in range(fits):
        model = ProjectedHistogram(
            epsilon,
            n_features=1,
            gamma=gamma,
            random_state=rng,
            accountant=pt.BudgetAccountant(),
            classes=[0, 1],
        ).fit(X, y, cardinalities=cards)
        picks[model.selection_order_[0]] += 1
    return picks


@pytest.fixture(scope="module")
def choice_data():
    rng = np.random.default_rng(8)
    n = 60
    X = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 3, n)])
    y = np.where((X[:, 1] == 0) ^ (rng.random(n) < 0.3), 1, 0)
    X = np.column_stack([X, rng.integers(0, 2, n)])
    return X, y, [2, 3, 2]


def test_projection_uses_one_minus_gamma_of_epsilon(choice_data):
    X, y, cards = choice_data
    epsilon, gamma = 1.0, 0.25
    picks = first_choices(X, y, cards, epsilon, gamma, 3000)
    eps_p = (1 - gamma) * epsilon
    assert_accepts(chi2_pvalue(picks, first_choice_probabilities(X, y, eps_p / 4)))
    # Power: the whole epsilon, or eps_p without the factor 1/4, are rejected.
    assert_rejects(chi2_pvalue(picks, first_choice_probabilities(X, y, epsilon / 4)))
    assert_rejects(chi2_pvalue(picks, first_choice_probabilities(X, y, eps_p / 2)))


def histogram_noise(epsilon, gamma, seeds):
    """Noisy minus true values of the observed cells (all far above τ)."""
    rng = np.random.default_rng(0)
    n = 20_000
    X = np.column_stack([rng.integers(0, 10, n), rng.integers(0, 10, n)])
    X = np.column_stack([X, rng.integers(0, 2, n)])
    y = rng.integers(0, 2, n)
    cards = [10, 10, 2]
    noise = []
    for seed in seeds:
        model = ProjectedHistogram(
            epsilon,
            n_features=2,
            gamma=gamma,
            random_state=seed,
            accountant=pt.BudgetAccountant(),
            classes=[0, 1],
        ).fit(X, y, cardinalities=cards)
        order = model.selection_order_
        pcards = [cards[j] for j in order] + [2]
        keys, counts = np.unique(
            ref_keys(np.column_stack([X[:, order], y]), pcards), return_counts=True
        )
        hist = model.histogram_
        assert set(keys.tolist()) <= set(hist.keys.tolist())
        index = np.searchsorted(hist.keys, keys.astype(np.uint64))
        noise.append(hist.values[index] - counts)
    return np.concatenate(noise)


def test_histogram_noise_has_scale_two_over_gamma_epsilon():
    epsilon, gamma = 2.0, 0.5
    noise = histogram_noise(epsilon, gamma, range(10))
    scale = 2 / (gamma * epsilon)
    assert_accepts(ks_pvalue(noise, stats.laplace(scale=scale)))
    assert_rejects(ks_pvalue(noise, stats.laplace(scale=2 / epsilon)))
    assert_rejects(ks_pvalue(noise, stats.laplace(scale=1.6 * scale)))


# scikit-learn -----------------------------------------------------------------------
def test_clone_and_params():
    acc = pt.BudgetAccountant(3.0)
    model = ProjectedHistogram(
        1.5, n_features=2, gamma=0.5, noise="discrete", random_state=3, accountant=acc
    )
    params = model.get_params()
    assert params == {
        "A": 0.5,
        "B": 0.5,
        "accountant": acc,
        "classes": None,
        "epsilon": 1.5,
        "gamma": 0.5,
        "label": None,
        "max_cells": 10_000_000,
        "n_features": 2,
        "n_threads": None,
        "noise": "discrete",
        "random_state": 3,
        "sigma": 0.1,
    }
    copy = clone(model)
    assert copy is not model
    # clone deep-copies parameters that are not estimators, the accountant included.
    assert copy.get_params() | {"accountant": acc} == params
    assert copy.accountant.remaining == acc.remaining
    X, y, cards = signal_data(n=500)
    model.set_params(classes=SIGNAL_CLASSES).fit(X, y, cardinalities=cards)
    assert not hasattr(clone(model), "histogram_")
    assert model.set_params(gamma=0.2) is model
    assert model.gamma == 0.2
    assert "ProjectedHistogram(" in repr(model)


# Refusals -----------------------------------------------------------------------------
def wide_column_data(n=400, seed=0):
    """A label copy (2 codes), noise (2 codes) and a near-identifier (20,000 codes).

    PrivateKD with k = 1 picks the label copy or the near-identifier about as often:
    both discern nearly every pair of records with different labels. Only the
    near-identifier's histogram (40,000 cells) is above ``max_cells = 1000``.
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.column_stack([y, rng.integers(0, 2, n), rng.integers(0, 20_000, n)])
    return X, y, [2, 2, 20_000]


def test_refusal_comes_before_the_selection_and_is_the_same_on_neighbours():
    X, y, cards = wide_column_data()
    X_neighbour, y_neighbour = X.copy(), y.copy()
    X_neighbour[0], y_neighbour[0] = [1 - y[0], 0, 7], 1 - y[0]
    messages = set()
    for data in ((X, y), (X_neighbour, y_neighbour)):
        for seed in range(6):
            generator = np.random.default_rng(seed)
            state = generator.bit_generator.state
            acc = pt.BudgetAccountant(2.0)
            model = ProjectedHistogram(
                2.0,
                n_features=1,
                gamma=0.5,
                max_cells=1000,
                random_state=generator,
                accountant=acc,
                classes=[0, 1],
            )
            with pytest.raises(DomainError) as refusal:
                model.fit(*data, cardinalities=cards)
            messages.add(str(refusal.value))
            # Nothing drawn (the generator seeds every draw), nothing charged.
            assert generator.bit_generator.state == state
            assert acc.spent == 0
            assert not acc.ledger
    (message,) = messages
    assert "20000" in message
    assert "n_features = 1" in message


def test_the_worst_selection_that_fits_is_released():
    # The same data with max_cells above the near-identifier's expected 4,472 kept
    # empty cells (m·p = 40,000 · ½·400^(-1/4)): every selection fits, none refused.
    X, y, cards = wide_column_data()
    acc = pt.BudgetAccountant(2.0)
    ProjectedHistogram(
        2.0,
        n_features=1,
        gamma=0.5,
        max_cells=5000,
        random_state=0,
        accountant=acc,
        classes=[0, 1],
    ).fit(X, y, cardinalities=cards)
    assert acc.spent == 2.0
    with pytest.raises(DomainError):
        ProjectedHistogram(
            2.0, n_features=1, gamma=0.5, max_cells=4000, classes=[0, 1]
        ).fit(X, y, cardinalities=cards)


def test_a_failure_after_the_selection_charges_epsilon(monkeypatch):
    X, y, cards = signal_data()

    def failing_histogram(*args, **kwargs):
        raise MemoryError("the histogram could not be allocated")

    monkeypatch.setattr(projected, "thresholded_histogram", failing_histogram)
    acc = pt.BudgetAccountant(1.0)
    model = ProjectedHistogram(
        0.6,
        n_features=2,
        gamma=0.5,
        random_state=0,
        accountant=acc,
        classes=SIGNAL_CLASSES,
    )
    with pytest.raises(MemoryError):
        model.fit(X, y, cardinalities=cards)
    assert acc.spent == 0.6
    assert [tuple(entry) for entry in acc.ledger] == [
        ("ProjectedHistogram (failed after drawing noise)", 0.6)
    ]
