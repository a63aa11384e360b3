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
NOISE_IS_EXPECTED = pytest.mark.filterwarnings(
    "ignore:.*the released model is noise:UserWarning"
)


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
    assert [e.epsilon for e in sel.privacy_ledger_] == [BIG, BIG]
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
        0.5,
        0.25,
        budget="per_refit",
        data_norm=4.0,
        classes=["neg", "pos"],
        random_state=3,
        accountant=acc,
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


@NOISE_IS_EXPECTED
@pytest.mark.parametrize("cls", [pt.DPFSDR, pt.DPFS])
def test_default_budget_spends_epsilon_selection_plus_epsilon_training(cls):
    # Was: budget="per_refit" by default, r refits spending 0.5 + r·1.0.
    X, y = hand_made(2, n=120)
    acc = pt.BudgetAccountant(1.5)
    sel = cls(
        0.5, 1.0, data_norm=4.0, classes=["neg", "pos"], random_state=3, accountant=acc
    ).fit(X, y)
    assert sel.epsilon_spent_ == 1.5
    assert acc.spent == 1.5
    assert [e.epsilon for e in sel.privacy_ledger_] == [0.5, 1.0]
    # Every refit's share is public: epsilon_training over the 4 columns of X.
    assert "at most 4, each epsilon_training/4" in sel.privacy_ledger_[1].label
    assert sel.classifier_.epsilon == pytest.approx(0.25)


def test_per_refit_refusal_states_the_worst_case():
    X, y = hand_made(2, n=50)
    with pytest.raises(BudgetExceededError) as info:
        pt.DPFSDR(
            0.5,
            1.0,
            budget="per_refit",
            data_norm=4.0,
            classes=["neg", "pos"],
            accountant=pt.BudgetAccountant(3.0),
        ).fit(X, y)
    message = str(info.value)
    # Algorithm 3 on 4 columns: at most 1 + 4·3/2 = 7 refits.
    assert "0.5 + 7·1 = 7.5" in message
    assert "budget='total'" in message
    assert "max_refits" in message


def test_worst_case_is_checked_before_reading_data():
    X = np.full((10, 4), np.nan)
    y = np.arange(10) % 2
    acc = pt.BudgetAccountant(1.5)
    # per_refit: 0.5 + 4 columns * 1.0 > 1.5
    with pytest.raises(BudgetExceededError):
        pt.DPFSDR(
            0.5, 1.0, budget="per_refit", data_norm=1.0, classes=[0, 1], accountant=acc
        ).fit(X, y)
    with pytest.raises(BudgetExceededError):
        pt.DPFS(
            0.5,
            1.0,
            budget="per_refit",
            max_refits=2,
            data_norm=1.0,
            classes=[0, 1],
            accountant=acc,
        ).fit(X, y)
    with pytest.raises(BudgetExceededError):
        pt.DPFS(0.5, 1.5, data_norm=1.0, classes=[0, 1], accountant=acc).fit(X, y)
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
    with pytest.warns(PrivacyLeakWarning, match="not private"):
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
    common = {"budget": "per_refit", "data_norm": 1.0, "classes": [0, 1]}
    with pytest.raises(BudgetExceededError):
        pt.DPFSDR(0.5, 1.0, accountant=acc, **common).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        pt.DPFS(0.5, 1.0, accountant=acc, **common).fit(X, y)
    assert acc.spent == 0


def test_max_refits_bounds_the_search():
    X, y = hand_made(4, n=100)
    sel = pt.DPFSDR(
        1.0,
        1.0,
        budget="per_refit",
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
    with pytest.warns(PrivacyLeakWarning) as caught:
        sel = pt.DPFS(None, None, data_norm=4.0, accountant=acc).fit(X, y)
    # Was: no warning at all.
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert "epsilon_selection=None" in messages[0]
    assert "not private" in messages[0]
    assert "epsilon_training=None" in messages[1]
    assert "not private" in messages[1]
    assert sel.epsilon_spent_ == 0.0
    assert sel.privacy_ledger_ == []
    assert acc.spent == 0
    assert sel.correlated_sensitivity_ == 0.0
    np.testing.assert_array_equal(sel.selection_order_, [0, 1])
    with pytest.warns(PrivacyLeakWarning, match="epsilon_training=None"):
        dfs = pt.DPFSDR(
            0.5,
            None,
            data_norm=4.0,
            classes=["neg", "pos"],
            random_state=0,
            accountant=acc,
        ).fit(X, y)
    assert dfs.epsilon_spent_ == 0.5
    assert len(dfs.privacy_ledger_) == 1


def test_selector_warnings_and_errors():
    X, y = hand_made(6, n=80)
    acc = pt.BudgetAccountant(100.0)
    with pytest.warns(PrivacyLeakWarning):
        pt.DPFS(1.0, 1.0, data_norm=4.0, random_state=0, accountant=acc).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="bounds were not declared"):
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


@NOISE_IS_EXPECTED
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


@NOISE_IS_EXPECTED
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


# Declared bounds, objective perturbation, the correlation switch --------------------
def _raw_breast_cancer():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    X, y = load_breast_cancer(return_X_y=True)
    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)


def test_raw_data_dfs_matches_a_linear_svm_on_the_same_features():
    # Was: the largest row norm (about 4,000) scaled every row, one feature was
    # selected and the majority class predicted (0.63).
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler
    from sklearn.svm import LinearSVC

    X_train, X_test, y_train, y_test = _raw_breast_cancer()
    with pytest.warns(PrivacyLeakWarning) as caught:
        dfs = pt.DPFSDR(None, None, classes=[0, 1]).fit(X_train, y_train)
    assert any("bounds were not declared" in str(w.message) for w in caught)
    columns = dfs.support_
    reference = make_pipeline(MinMaxScaler((-1, 1)), LinearSVC()).fit(
        X_train[:, columns], y_train
    )
    expected = reference.score(X_test[:, columns], y_test)
    assert expected > 0.9
    assert abs(dfs.score(X_test, y_test) - expected) <= 0.04
    assert columns.sum() >= 2


def _map_to_unit_cube(X, bounds):
    low, high = np.asarray(bounds, dtype=float).T
    return np.clip((2.0 * X - (high + low)) / (high - low), -1.0, 1.0)


def test_declared_bounds_give_the_exact_svm_on_the_mapped_features():
    X, y = hand_made(8, n=150)
    bounds = [(-1.0, 1.0), (-1.0, 1.0), (-1e-6, 1e-6), (-2.01, 2.01)]
    with pytest.warns(PrivacyLeakWarning, match="not private"):
        dfs = pt.DPFS(None, None, C=10.0, bounds=bounds, classes=["neg", "pos"]).fit(
            X, y
        )
    columns = np.flatnonzero(dfs.support_)
    k = len(columns)
    R = _map_to_unit_cube(X, bounds)[:, columns]
    Z = np.column_stack([R / np.sqrt(k), np.ones(len(R))]) / np.sqrt(2)
    w = erm_minimizer(Z, np.where(y == "pos", 1.0, -1.0), C=10.0)
    low, high = np.asarray(bounds)[columns].T
    # w·z = w_r·(2x − (high + low))/((high − low)·√(2k)) + w_b/√2
    coef = w[:k] * 2.0 / ((high - low) * np.sqrt(2 * k))
    intercept = w[k] / np.sqrt(2) - w[:k] @ ((high + low) / (high - low)) / np.sqrt(
        2 * k
    )
    np.testing.assert_allclose(dfs.classifier_.coef_[0], coef, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(dfs.classifier_.intercept_[0], intercept, atol=1e-6)
    assert dfs.data_norm_ is None
    np.testing.assert_array_equal(dfs.bounds_, bounds)


@pytest.mark.parametrize("training", ["output", "objective"])
def test_private_selection_converges_to_dfs(training):
    X, y = hand_made(9, n=200)
    bounds = [(-1.0, 1.0), (-1.0, 1.0), (-1e-6, 1e-6), (-2.01, 2.01)]
    common = {"C": 10.0, "bounds": bounds, "classes": ["neg", "pos"]}
    with pytest.warns(PrivacyLeakWarning, match="not private"):
        dfs = pt.DPFS(None, None, **common).fit(X, y)
    errors = []
    for epsilon in (1e2, 1e4, 1e6, 1e8):
        sel = pt.DPFS(
            epsilon,
            epsilon,
            training=training,
            correlation="none",
            random_state=1,
            accountant=pt.BudgetAccountant(2 * epsilon),
            **common,
        ).fit(X, y)
        if np.array_equal(sel.support_, dfs.support_):
            errors.append(
                np.abs(sel.classifier_.coef_ - dfs.classifier_.coef_).max()
                / np.abs(dfs.classifier_.coef_).max()
            )
        else:
            errors.append(np.inf)
    assert errors[-1] < 1e-4
    assert errors == sorted(errors, reverse=True)
    assert sel.score(X, y) == dfs.score(X, y)


def _huber_terms(margins, h=0.5):
    """First and second derivatives of Chaudhuri et al.'s Huber loss."""
    first = np.where(margins > 1 + h, 0.0, np.where(margins < 1 - h, -1.0, 0.0))
    inside = np.abs(1.0 - margins) <= h
    first = np.where(inside, -(1 + h - margins) / (2 * h), first)
    return first, inside / (2 * h)


def _objective_constants(epsilon, n, C, h=0.5):
    """ε' and Δ of Chaudhuri et al. (2011), Algorithm 2, for the Huber loss.

    Δ is added as soon as ε' < ε/2 (the paper: ε' ≤ 0), so that ε' ≥ ε/2.
    """
    lam, c = 1.0 / (C * n), 1.0 / (2 * h)
    eps_prime = epsilon - 2.0 * np.log1p(c / (n * lam))
    if eps_prime >= epsilon / 2:
        return eps_prime, 0.0
    return epsilon / 2.0, c / (n * np.expm1(epsilon / 4.0)) - lam


ONE_COLUMN_BOUNDS = [(0.0, 4.0)]


def _one_column(seed, n=200):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 4.0, size=n)
    y = (x + rng.normal(scale=1.0, size=n) > 2.0).astype(int)
    return x[:, None], y


def _rows_and_weights(sel, X):
    """The rows z the SVM sees and its weights on them, from the declared bounds."""
    ((low, high),) = ONE_COLUMN_BOUNDS
    r = _map_to_unit_cube(X, ONE_COLUMN_BOUNDS)[:, 0]
    Z = np.column_stack([r, np.ones_like(r)]) / np.sqrt(2)
    coef_r = sel.classifier_.coef_[0, 0] * (high - low) / 2.0
    intercept_r = sel.classifier_.intercept_[0] + coef_r * (high + low) / (high - low)
    return Z, np.sqrt(2) * np.array([coef_r, intercept_r])


def _noise_vector(Z, y, w, n, C, extra, h=0.5):
    """The b with ∇[(1/n)Σℓ(y wᵀz) + (λ+Δ)/2‖w‖² + bᵀw/n] = 0 at the released w."""
    signs = np.where(y == 1, 1.0, -1.0)
    first, _ = _huber_terms(signs * (Z @ w), h)
    gradient = (first * signs) @ Z / n + (1.0 / (C * n) + extra) * w
    return -n * gradient


def _hessian(Z, y, w, n, C, extra, h=0.5):
    signs = np.where(y == 1, 1.0, -1.0)
    _, second = _huber_terms(signs * (Z @ w), h)
    return (Z * second[:, None]).T @ Z / n + (1.0 / (C * n) + extra) * np.eye(2)


def _objective_fits(X, y, correlation, runs, seed, C=1.0, huber_h=0.5):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(runs):
        out.append(
            pt.DPFS(
                1.0,
                2.0,
                C=C,
                huber_h=huber_h,
                training="objective",
                correlation=correlation,
                bounds=ONE_COLUMN_BOUNDS,
                classes=[0, 1],
                random_state=rng,
                accountant=pt.BudgetAccountant(3.0),
            ).fit(X, y)
        )
    return out


@pytest.mark.parametrize(
    ("correlation", "C", "h"), [("none", 0.25, 0.5), (3, 1.0, 0.5), ("none", 1.0, 2.0)]
)
def test_objective_perturbation_noise_has_the_stated_law(correlation, C, h):
    # Seeded; each KS test fails a correct sampler with probability ALPHA = 1e-6.
    # ε₂ = 2 on one column (one refit); correlation=3 trains at 2/3 (ε' = ε/2, Δ > 0),
    # "none" at 2 with c·C = 1/4 (ε' = 2 − 2 ln 1.25 ≥ 1, Δ = 0): C = 1/4 and
    # c = 1/(2h) = 1, or C = 1 and h = 2.
    X, y = _one_column(10)
    n = len(y)
    group = 1 if correlation == "none" else correlation
    eps_prime, extra = _objective_constants(2.0 / group, n, C, h)
    assert (extra > 0) == (correlation == 3)
    fits = _objective_fits(X, y, correlation, 1000, seed=11, C=C, huber_h=h)
    noise = []
    for sel in fits:
        assert sel.n_refits_ == 1
        assert sel.epsilon_spent_ == 3.0
        Z, w = _rows_and_weights(sel, X)
        noise.append(_noise_vector(Z, y, w, n, C, extra, h))
    noise = np.array(noise)
    norms = np.linalg.norm(noise, axis=1)
    # Density ∝ exp(−(ε'/2)‖b‖) in 2 dimensions: ‖b‖ ~ Gamma(2, 2/ε'), angle uniform.
    law = stats.gamma(2, scale=2.0 / eps_prime)
    assert_accepts(ks_pvalue(norms, law))
    for wrong in WRONG_SCALES:
        assert_rejects(ks_pvalue(norms, stats.gamma(2, scale=wrong * 2.0 / eps_prime)))
    angles = np.arctan2(noise[:, 1], noise[:, 0])
    assert_accepts(ks_pvalue(angles, stats.uniform(-np.pi, 2 * np.pi)))
    np.testing.assert_allclose(fits[0].classifier_.epsilon_prime_, [eps_prime])
    np.testing.assert_allclose(fits[0].classifier_.extra_regularization_, [extra])


@pytest.mark.parametrize(("correlation", "h"), [("none", 0.5), (3, 0.5), ("none", 2.0)])
def test_objective_perturbation_privacy_loss_is_within_the_charge(correlation, h):
    # The released w has density ν(b_D(w))·|det ∇b_D(w)| on D. Replacing as many
    # records as the declared group (one for "none") by extreme ones outside the
    # bounds must change its logarithm by at most the ε₂ charged for the refit:
    # the sensitivity of the gradient (‖z‖ ≤ 1, |ℓ'| ≤ 1) and the curvature bound.
    X, y = _one_column(12)
    n, C = len(y), 1.0
    group = 1 if correlation == "none" else correlation
    eps_prime, extra = _objective_constants(2.0 / group, n, C, h)
    X_other, y_other = X.copy(), y.copy()
    X_other[:group] = 1e6
    y_other[:group] = 1 - y[:group]
    worst = 0.0
    for sel in _objective_fits(X, y, correlation, 200, seed=13, huber_h=h):
        Z, w = _rows_and_weights(sel, X)
        Z_other, _ = _rows_and_weights(sel, X_other)
        b = _noise_vector(Z, y, w, n, C, extra, h)
        b_other = _noise_vector(Z_other, y_other, w, n, C, extra, h)
        loss = -(eps_prime / 2) * (np.linalg.norm(b) - np.linalg.norm(b_other))
        loss += np.linalg.slogdet(_hessian(Z, y, w, n, C, extra, h))[1]
        loss -= np.linalg.slogdet(_hessian(Z_other, y_other, w, n, C, extra, h))[1]
        worst = max(worst, abs(loss))
    assert 0 < worst <= 2.0 + 1e-9


def test_objective_refits_above_the_cap_do_not_depend_on_c():
    # ε₂ = 0.9 over 3 refits: 0.3 each, with h = 2 the cap 2h·(e^{0.3/4} − 1) = 0.31
    # on C; Δ makes λ + Δ = c/(n(e^{ε/4} − 1)) whatever C above it.
    X, y = hand_made(15, n=300)
    bounds = [(-1, 1), (-1, 1), (-1, 1), (-3, 3)]
    fits = [
        pt.DPFS(
            0.1,
            0.9,
            C=C,
            huber_h=2.0,
            training="objective",
            correlation="none",
            max_refits=3,
            bounds=bounds,
            classes=["neg", "pos"],
            random_state=4,
            accountant=pt.BudgetAccountant(1.0),
        ).fit(X, y)
        for C in (1.0, 100.0, 0.31)
    ]
    n, eps = 300, 0.3
    lam_plus_delta = 0.25 / (n * np.expm1(eps / 4))
    for sel in fits[:2]:
        model = sel.classifier_
        np.testing.assert_allclose(model.epsilon_prime_, [eps / 2])
        np.testing.assert_allclose(
            model.lambda_ + model.extra_regularization_, [lam_plus_delta]
        )
    np.testing.assert_array_equal(fits[0].support_, fits[1].support_)
    np.testing.assert_array_equal(fits[0].classifier_.coef_, fits[1].classifier_.coef_)
    # Below the cap C is used as given: no Δ, and ε' = ε − 2 ln(1 + C/(2h)).
    below = fits[2].classifier_
    assert below.extra_regularization_[0] == 0.0
    assert below.epsilon_prime_[0] == pytest.approx(eps - 2 * np.log1p(0.31 / 4))


@NOISE_IS_EXPECTED
@pytest.mark.parametrize(("correlation", "factor"), [("none", 1.0), (4, 4.0)])
def test_declared_correlation_scales_the_output_noise(correlation, factor):
    X, y = hand_made(10, n=100)
    sel = pt.DPFS(
        0.5,
        2.0,
        correlation=correlation,
        max_refits=2,
        bounds=[(-1, 1), (-1, 1), (-1, 1), (-3, 3)],
        C=3.0,
        classes=["neg", "pos"],
        random_state=0,
        accountant=pt.BudgetAccountant(2.5),
    ).fit(X, y)
    p = sel.support_.sum() + 1
    assert sel.correlated_sensitivity_ == factor
    # Lap(g·√p·2C/ε) per weight, ε = ε₂/max_refits.
    np.testing.assert_allclose(
        sel.classifier_.noise_scale_, [factor * np.sqrt(p) * 2 * 3.0 / 1.0]
    )


def test_data_correlation_is_the_papers_factor_on_the_mapped_features():
    X, y = hand_made(11, n=120)
    bounds = [(-1, 1), (-1, 1), (-1, 1), (-3, 3)]
    sel = pt.DPFS(
        BIG,
        BIG,
        bounds=bounds,
        classes=["neg", "pos"],
        random_state=0,
        accountant=pt.BudgetAccountant(2 * BIG),
    ).fit(X, y)
    R = _map_to_unit_cube(X, bounds)
    columns = np.flatnonzero(sel.support_)
    assert sel.correlated_sensitivity_ == pytest.approx(
        ref_sensitivity(R, columns, 0.8), rel=1e-9
    )


def test_noise_warning_from_public_quantities():
    X, y = hand_made(12, n=300)
    bounds = [(-1, 1), (-1, 1), (-1, 1), (-3, 3)]
    common = {"bounds": bounds, "classes": ["neg", "pos"], "random_state": 0}
    # ε = 1/4 per refit, C = 60: √2·2·60·4 = 679 per weight against √(2·60·300) = 190.
    with pytest.warns(UserWarning, match="the released model is noise"):
        pt.DPFS(1.0, 1.0, C=60.0, accountant=pt.BudgetAccountant(2.0), **common).fit(
            X, y
        )
    # Objective perturbation at the same budget: Δ shrinks both, and the noise is
    # below the weights' bound.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pt.DPFS(
            1.0,
            100.0,
            C=1.0,
            training="objective",
            correlation="none",
            accountant=pt.BudgetAccountant(101.0),
            **common,
        ).fit(X, y)
    # The same decision on a neighbour: it reads only n, C, ε, the refit bound.
    X_other = X.copy()
    X_other[0] = [1.0, -1.0, 0.0, 3.0]
    with pytest.warns(UserWarning, match="the released model is noise"):
        pt.DPFS(1.0, 1.0, C=60.0, accountant=pt.BudgetAccountant(2.0), **common).fit(
            X_other, y
        )


def test_predict_decision_function_and_score_use_the_selected_features():
    pd = pytest.importorskip("pandas")
    X, y = hand_made(13, n=200)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    sel = pt.DPFSDR(
        BIG,
        BIG,
        bounds={"a": (-1, 1), "b": (-1, 1), "c": (-1, 1), "d": (-3, 3)},
        classes=["neg", "pos"],
        random_state=0,
        accountant=pt.BudgetAccountant(2 * BIG),
    ).fit(frame, y)
    selected = X[:, sel.support_]
    scores = selected @ sel.classifier_.coef_[0] + sel.classifier_.intercept_[0]
    np.testing.assert_allclose(sel.decision_function(frame), scores)
    np.testing.assert_array_equal(
        sel.predict(frame), np.where(scores > 0, "pos", "neg")
    )
    assert sel.score(frame, y) == np.mean(np.where(scores > 0, "pos", "neg") == y)
    with pytest.raises(ValueError, match="feature names"):
        sel.predict(frame[["a", "b"]])


def test_bounds_training_and_correlation_are_checked():
    X, y = hand_made(14, n=60)
    acc = pt.BudgetAccountant(100.0)
    common = {"classes": ["neg", "pos"], "accountant": acc}
    for kwargs, error, match in [
        ({"bounds": [(0, 1)] * 3}, ValueError, "4 pairs"),
        ({"bounds": [(1, 0)] * 4}, ValueError, r"bounds\[0\] must be finite"),
        ({"bounds": "0:1"}, TypeError, "bounds must be"),
        ({"bounds": {"e": (0, 1)}}, ValueError, "'e'"),
        ({"bounds": (0, 1), "data_norm": 2.0}, ValueError, "not both"),
        ({"training": "exact"}, ValueError, "training"),
        ({"correlation": "all"}, ValueError, "correlation"),
        ({"correlation": 0}, ValueError, "correlation"),
        ({"correlation": True}, TypeError, "correlation"),
        ({"correlation": 1.5}, TypeError, "correlation"),
        ({"huber_h": 0.0}, ValueError, "huber_h must be finite and > 0, got 0.0"),
    ]:
        with pytest.raises(error, match=match):
            pt.DPFS(1.0, 1.0, **kwargs, **common).fit(X, y)
    assert acc.spent == 0


def test_inferred_bounds_warn_in_every_mode():
    # Was: only when epsilon_training was set.
    X, y = hand_made(15, n=60)
    for eps in (None, BIG):
        with pytest.warns(PrivacyLeakWarning) as caught:
            pt.DPFS(
                eps,
                eps,
                bounds={0: (-1, 1), 1: (-1, 1)},
                classes=["neg", "pos"],
                random_state=0,
                accountant=pt.BudgetAccountant(2 * BIG),
            ).fit(X, y)
        inferred = [str(w.message) for w in caught if "bounds" in str(w.message)]
        assert len(inferred) == 1
        assert "columns 2, 3 " in inferred[0]
