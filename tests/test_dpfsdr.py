"""DPFSDR (paper 003): correlation statistics, DP feature importance, the selectors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import privtab as pt
from privtab.exceptions import BudgetExceededError, PrivacyLeakWarning
from privtab.linear_model import erm_minimizer, scale_rows
from tests._stats import WRONG_SCALES, assert_accepts, assert_rejects, ks_pvalue


# NumPy references ---------------------------------------------------------------------
def ref_pearson(X):
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    C = X - X.mean(axis=0)
    norms = np.sqrt((C**2).sum(axis=0))
    constant = X.min(axis=0) == X.max(axis=0)
    theta = np.eye(d)
    for i in range(d):
        for j in range(d):
            if i != j and not constant[i] and not constant[j]:
                theta[i, j] = np.clip(C[:, i] @ C[:, j] / (norms[i] * norms[j]), -1, 1)
    return theta


def ref_filter(X, delta):
    X = np.asarray(X, dtype=float)
    theta = ref_pearson(X)
    d = X.shape[1]
    dropped = X.min(axis=0) == X.max(axis=0)
    for i in range(d):
        for j in range(i + 1, d):
            if theta[i, j] >= delta:
                dropped[j] = True
    return np.flatnonzero(~dropped)


def ref_fscore(X, y):
    X = np.asarray(X, dtype=float)
    labels = np.unique(y)
    overall = X.mean(axis=0)
    between = np.zeros(X.shape[1])
    within = np.zeros(X.shape[1])
    for c in labels:
        rows = X[np.asarray(y) == c]
        between += (rows.mean(axis=0) - overall) ** 2
        if rows.shape[0] > 1:
            within += rows.var(axis=0, ddof=1)
    out = np.zeros(X.shape[1])
    for i in range(X.shape[1]):
        if between[i] <= 1e-300:
            out[i] = 0.0
        elif within[i] == 0:
            out[i] = np.inf
        else:
            out[i] = between[i] / within[i]
    return out


def ref_sensitivity(X, features, delta):
    Z = np.asarray(X, dtype=float)[:, features]
    Z = Z - Z.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(Z, axis=1)
    constant = np.ptp(np.asarray(X, dtype=float)[:, features], axis=1) == 0
    Z[~constant] /= norms[~constant, None]
    Z[constant] = 0.0
    R = np.abs(Z @ Z.T)
    np.fill_diagonal(R, 1.0)
    return float(np.where(delta <= R, R, 0.0).sum(axis=1).max())


def random_table(seed, n=60, d=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 2] = 0.97 * X[:, 0] + 0.03 * rng.normal(size=n)  # correlated with 0
    X[:, 4] = 3.0  # constant
    X[5] = X[6]  # duplicated rows
    return X


# Non-private statistics -----------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pearson_matches_numpy(seed):
    X = random_table(seed)
    np.testing.assert_allclose(pt.pearson_matrix(X), ref_pearson(X), atol=1e-12)


@pytest.mark.parametrize("n", [1, 2])
def test_tiny_tables_have_no_nan(n):
    X = np.arange(3.0 * n).reshape(n, 3)
    theta = pt.pearson_matrix(X)
    assert not np.isnan(theta).any()
    np.testing.assert_allclose(theta, ref_pearson(X), atol=1e-12)
    scores = pt.fscore(X, np.arange(n) % 2)
    assert not np.isnan(scores).any()
    np.testing.assert_array_equal(scores, ref_fscore(X, np.arange(n) % 2))
    assert pt.correlated_sensitivity(X) == pytest.approx(
        ref_sensitivity(X, [0, 1, 2], 0.8)
    )


@pytest.mark.parametrize("delta", [0.5, 0.9, 0.95, 1.0])
def test_filter_matches_reference(delta):
    X = random_table(3)
    np.testing.assert_array_equal(
        pt.filter_correlated_features(X, delta), ref_filter(X, delta)
    )
    assert 4 not in pt.filter_correlated_features(X, delta)  # constant column


def test_degree_matrix_matches_reference():
    X = random_table(4)
    theta = ref_pearson(X)
    M = pt.correlated_degree_matrix(X, 0.9)
    np.testing.assert_allclose(M, np.where(theta < 0.9, theta, 0.0), atol=1e-12)
    assert np.all(np.diag(M) == 0)
    assert np.allclose(M, M.T)


@pytest.mark.parametrize("seed", [0, 1])
def test_fscore_matches_reference(seed):
    X = random_table(seed)
    y = np.random.default_rng(seed).integers(0, 3, size=X.shape[0])
    np.testing.assert_allclose(pt.fscore(X, y), ref_fscore(X, y), rtol=1e-10)


def test_fscore_single_class_and_perfect_separator():
    X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [3.0, 0.0]])
    np.testing.assert_array_equal(pt.fscore(X, [0, 0, 0, 0]), [0.0, 0.0])
    np.testing.assert_allclose(pt.fscore(X, ["a", "a", "b", "b"]), [2.0, np.inf])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_correlated_sensitivity_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 5))
    X[3] = X[4]
    X[7] = 1.0  # a constant record
    for features in ([0, 1, 2, 3, 4], [1, 3], [2], [4, 0, 2]):
        for delta in (0.5, 0.8):
            assert pt.correlated_sensitivity(X, features, delta) == pytest.approx(
                ref_sensitivity(X, features, delta), rel=1e-9
            )


def test_validation_errors():
    X = random_table(0)
    with pytest.raises(ValueError, match="delta"):
        pt.filter_correlated_features(X, 0.0)
    with pytest.raises(ValueError, match="delta"):
        pt.correlated_degree_matrix(X, 1.5)
    with pytest.raises(ValueError, match="record_delta"):
        pt.correlated_sensitivity(X, record_delta=0.0)
    with pytest.raises(ValueError, match="twice"):
        pt.correlated_sensitivity(X, [1, 1])
    with pytest.raises(ValueError, match="NaN"):
        pt.pearson_matrix([[np.nan, 1.0]])


# Table 1 of the paper -----------------------------------------------------------------
def _load(path, take):
    rows = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        fields = [f.strip() for f in line.split(",")] if "," in line else line.split()
        try:
            rows.append([float(v) for v in take(fields)])
        except ValueError:
            continue  # rows with '?'
    return np.array(rows)


TABLE_1 = [
    ("wdbc/wdbc.data", lambda f: f[2:32], 569, 30, 0.95, 23),
    ("semeion/semeion.data", lambda f: f[:256], 1593, 256, 0.7, 196),
    ("dermatology/dermatology.data", lambda f: f[:34], 358, 34, 0.9, 29),
    ("ionosphere/ionosphere.data", lambda f: f[:34], 351, 34, 0.95, 33),
]


@pytest.mark.parametrize(("path", "take", "n", "d", "delta", "kept"), TABLE_1)
def test_filter_reproduces_table_1(shared_data, path, take, n, d, delta, kept):
    X = _load(shared_data / path, take)
    assert X.shape == (n, d)
    result = pt.filter_correlated_features(X, delta)
    assert len(result) == kept
    np.testing.assert_array_equal(result, ref_filter(X, delta))


# DP feature importance ----------------------------------------------------------------
def test_dp_feature_importance_noise_has_the_stated_scale():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 3000))
    y = rng.integers(0, 2, size=30)
    scores = ref_fscore(X, y)
    fim = scores / scores.sum()
    eps, sens = 0.5, 2.0
    noisy = pt.dp_feature_importance(
        X,
        y,
        eps,
        normalize=False,
        random_state=11,
        classes=[0, 1],
        accountant=pt.BudgetAccountant(1.0),
    )
    noise = noisy - fim
    scale = sens / eps
    assert_accepts(ks_pvalue(noise, stats.laplace(scale=scale)))
    for wrong in WRONG_SCALES:
        assert_rejects(ks_pvalue(noise, stats.laplace(scale=wrong * scale)))


def test_dp_feature_importance_is_normalised_and_charged():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 5))
    y = (X[:, 0] > 0).astype(int)
    acc = pt.BudgetAccountant(1.0)
    fim = pt.dp_feature_importance(
        X, y, 100.0 / 100, random_state=0, classes=[0, 1], accountant=acc
    )
    assert fim.shape == (5,)
    if fim.sum() > 0:
        assert fim.sum() == pytest.approx(1.0)
    assert acc.spent == 1.0
    with pytest.raises(BudgetExceededError):
        pt.dp_feature_importance(
            np.full((3, 2), np.nan), [0, 1, 0], 0.5, accountant=acc, classes=[0, 1]
        )


def test_inferred_classes_warn():
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = np.arange(20) % 2
    with pytest.warns(PrivacyLeakWarning, match="y"):
        pt.dp_feature_importance(
            X, y, 1.0, random_state=0, accountant=pt.BudgetAccountant(1.0)
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pt.dp_feature_importance(
            X, y, 1.0, random_state=0, classes=[0, 1], accountant=pt.BudgetAccountant(1)
        )


# Selectors ----------------------------------------------------------------------------
def hand_made(seed=0, n=300):
    """y needs x0 and x1 (x0 more); x2 is negligible noise; x3 duplicates x0."""
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-1, 1, size=n)
    x1 = rng.uniform(-1, 1, size=n)
    x2 = 1e-7 * rng.normal(size=n)
    x3 = 2.0 * x0 + 1e-3 * rng.normal(size=n)
    X = np.column_stack([x0, x1, x2, x3])
    y = np.where(x0 + 0.6 * x1 > 0, "pos", "neg")
    return X, y


BIG = 1e9


@pytest.mark.parametrize("cls", [pt.DPFSDR, pt.DPFS])
def test_selection_with_negligible_noise(cls):
    X, y = hand_made()
    sel = cls(
        BIG,
        BIG,
        C=100.0,
        data_norm=4.0,
        classes=["neg", "pos"],
        random_state=0,
        accountant=pt.BudgetAccountant(10 * BIG),
    ).fit(X, y)
    np.testing.assert_array_equal(sel.kept_features_, [0, 1, 2])
    np.testing.assert_array_equal(sel.selection_order_, [0, 1])
    np.testing.assert_array_equal(sel.get_support(), [True, True, False, False])
    assert sel.transform(X).shape == (300, 2)
    assert sel.classifier_.coef_.shape == (1, 2)
    assert sel.classifier_.score(sel.transform(X), y) == sel.accuracy_ > 0.95
    if cls is pt.DPFS:
        assert sel.n_refits_ == 3
    assert len(sel.privacy_ledger_) == sel.n_refits_ + 1
    assert sel.lambda_ == 1.0 / (100.0 * 300)
    assert sel.delta_w_ == pytest.approx(np.sqrt(3) * 2 * 100.0)
    # With two features every non-constant record is perfectly (anti)correlated.
    assert sel.correlated_sensitivity_ == pytest.approx(ref_sensitivity(X, [0, 1], 0.8))
    assert sel.classifier_.l1_sensitivity_ == pytest.approx(
        sel.correlated_sensitivity_ * sel.delta_w_
    )


@pytest.mark.parametrize("cls", [pt.DPFSDR, pt.DPFS])
def test_ledger_has_one_entry_per_refit(cls):
    X, y = hand_made(1, n=120)
    acc = pt.BudgetAccountant(10.0)
    sel = cls(
        0.5, 0.25, data_norm=4.0, classes=["neg", "pos"], random_state=3, accountant=acc
    ).fit(X, y)
    labels = [entry.label for entry in sel.privacy_ledger_]
    assert len(labels) == sel.n_refits_ + 1
    assert (
        sum(
            labels[i].startswith(f"{cls.__name__} refit") for i in range(1, len(labels))
        )
        == sel.n_refits_
    )
    assert sum(entry.epsilon for entry in sel.privacy_ledger_) == sel.epsilon_spent_
    assert sel.epsilon_spent_ == 0.5 + 0.25 * sel.n_refits_
    assert acc.spent == sel.epsilon_spent_


@pytest.mark.parametrize("cls", [pt.DPFSDR, pt.DPFS])
def test_total_budget_is_held(cls):
    X, y = hand_made(2, n=120)
    acc = pt.BudgetAccountant(1.5)
    sel = cls(
        0.5,
        1.0,
        budget="total",
        data_norm=4.0,
        classes=["neg", "pos"],
        random_state=3,
        accountant=acc,
    ).fit(X, y)
    assert sel.epsilon_spent_ <= 1.5
    assert acc.spent == sel.epsilon_spent_
    assert sum(e.epsilon for e in sel.privacy_ledger_) == sel.epsilon_spent_
    share = 1.0 / len(sel.kept_features_)
    for entry in sel.privacy_ledger_[1:]:
        assert entry.epsilon == pytest.approx(share)


def test_worst_case_is_checked_before_reading_data():
    X = np.full((10, 4), np.nan)
    y = np.arange(10) % 2
    acc = pt.BudgetAccountant(1.5)
    # per_refit: 0.5 + 4 columns * 1.0 > 1.5
    with pytest.raises(BudgetExceededError):
        pt.DPFSDR(0.5, 1.0, data_norm=1.0, classes=[0, 1], accountant=acc).fit(X, y)
    with pytest.raises(BudgetExceededError):
        pt.DPFS(
            0.5, 1.0, max_refits=2, data_norm=1.0, classes=[0, 1], accountant=acc
        ).fit(X, y)
    assert acc.spent == 0


def _exact_training_accuracy(X, y, columns, C, data_norm):
    """Training accuracy of the exact Huber-SVM minimiser on ``X[:, columns]``."""
    Z = scale_rows(X[:, sorted(columns)], data_norm)
    signs = np.where(y == 1, 1.0, -1.0)
    w = erm_minimizer(Z, signs, C=C)
    return float(np.mean(np.where(Z @ w > 0, 1.0, -1.0) == signs))


@pytest.mark.parametrize("seed", [3, 5, 9, 12, 26])
def test_algorithm_3_runs_to_its_end_by_default(seed):
    # Six useful features of decreasing weight: with these seeds Algorithm 3 needs
    # more than m = 6 fits (stopped after 6, a candidate that improves is left), and
    # it may stop only when no remaining candidate improves the training accuracy.
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(200, 6))
    y = (X @ np.linspace(1, 0.2, 6) + 0.5 * rng.normal(size=200) > 1.8).astype(int)
    sel = pt.DPFSDR(
        None, None, delta=1.0, C=100.0, data_norm=np.sqrt(6), classes=[0, 1]
    ).fit(X, y)
    m = len(sel.kept_features_)
    assert m < sel.n_refits_ <= 1 + m * (m - 1) // 2
    selected = list(sel.selection_order_)
    assert sel.accuracy_ == _exact_training_accuracy(X, y, selected, 100.0, np.sqrt(6))
    for f in set(range(6)) - set(selected):
        gain = _exact_training_accuracy(X, y, [*selected, f], 100.0, np.sqrt(6))
        assert gain <= sel.accuracy_


def test_default_worst_case_is_the_algorithms_own():
    X = np.full((10, 4), np.nan)
    y = np.arange(10) % 2
    # 0.5 + 4 * 1.0 fits for DPFS; Algorithm 3 may need 1 + 4 * 3 / 2 = 7 fits.
    acc = pt.BudgetAccountant(5.0)
    with pytest.raises(BudgetExceededError):
        pt.DPFSDR(0.5, 1.0, data_norm=1.0, classes=[0, 1], accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        pt.DPFS(0.5, 1.0, data_norm=1.0, classes=[0, 1], accountant=acc).fit(X, y)
    assert acc.spent == 0


def test_max_refits_bounds_the_search():
    X, y = hand_made(4, n=100)
    sel = pt.DPFSDR(
        1.0,
        1.0,
        max_refits=2,
        data_norm=4.0,
        classes=["neg", "pos"],
        random_state=0,
        accountant=pt.BudgetAccountant(3.0),
    ).fit(X, y)
    assert sel.n_refits_ <= 2
    assert sel.epsilon_spent_ == 1.0 + sel.n_refits_


def test_non_private_baseline_spends_nothing():
    X, y = hand_made(5, n=100)
    acc = pt.BudgetAccountant(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sel = pt.DPFS(None, None, data_norm=4.0, accountant=acc).fit(X, y)
    assert sel.epsilon_spent_ == 0.0
    assert sel.privacy_ledger_ == []
    assert acc.spent == 0
    assert sel.correlated_sensitivity_ == 0.0
    np.testing.assert_array_equal(sel.selection_order_, [0, 1])
    dfs = pt.DPFSDR(
        0.5, None, data_norm=4.0, classes=["neg", "pos"], random_state=0, accountant=acc
    ).fit(X, y)
    assert dfs.epsilon_spent_ == 0.5
    assert len(dfs.privacy_ledger_) == 1


def test_selector_warnings_and_errors():
    X, y = hand_made(6, n=80)
    acc = pt.BudgetAccountant(100.0)
    with pytest.warns(PrivacyLeakWarning):
        pt.DPFS(1.0, 1.0, data_norm=4.0, random_state=0, accountant=acc).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="data_norm"):
        pt.DPFS(1.0, 1.0, classes=["neg", "pos"], random_state=0, accountant=acc).fit(
            X, y
        )
    for kwargs, match in [
        ({"budget": "all"}, "budget"),
        ({"delta": 0.0}, "delta"),
        ({"record_delta": 2.0}, "record_delta"),
        ({"C": -1.0}, "C"),
        ({"max_refits": 0}, "max_refits"),
    ]:
        with pytest.raises(ValueError, match=match):
            pt.DPFSDR(1.0, 1.0, classes=["neg", "pos"], accountant=acc, **kwargs).fit(
                X, y
            )
    with pytest.raises(ValueError, match="epsilon_training"):
        pt.DPFSDR(1.0, -1.0, accountant=acc).fit(X, y)


@pytest.mark.parametrize("cls", [pt.DPFSDR, pt.DPFS])
@pytest.mark.parametrize(
    ("X", "y", "match"),
    [
        ([[1.0, 2.0]], [0], r"X has 1 row \(1 sample\), but {} needs at least 2 rows"),
        (
            [[1.0, 2.0]] * 4,
            [0, 1, 0, 1],
            r"X has no column that varies across its 4 rows, so {} has nothing",
        ),
    ],
    ids=["one row", "constant columns"],
)
def test_too_little_data_is_refused_in_rows_and_columns(cls, X, y, match):
    acc = pt.BudgetAccountant(10.0)
    selector = cls(1.0, 1.0, data_norm=3.0, classes=[0, 1], accountant=acc)
    with pytest.raises(ValueError, match=match.format(cls.__name__)) as info:
        selector.fit(np.array(X), np.array(y))
    assert "n_cols" not in str(info.value)
    # Refused before any draw: nothing is charged.
    assert acc.spent == 0.0


def test_fixed_seed_is_reproducible():
    X, y = hand_made(7, n=100)

    def fit():
        return pt.DPFSDR(
            0.5,
            0.5,
            data_norm=4.0,
            classes=["neg", "pos"],
            random_state=42,
            accountant=pt.BudgetAccountant(10.0),
        ).fit(X, y)

    a, b = fit(), fit()
    np.testing.assert_array_equal(a.selection_order_, b.selection_order_)
    np.testing.assert_array_equal(a.classifier_.coef_, b.classifier_.coef_)
