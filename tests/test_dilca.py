"""DILCA / DP-DILCA (paper 000) against independent NumPy references."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform
from sklearn.metrics import adjusted_rand_score
from sklearn.neighbors import KNeighborsClassifier
from test_samplers import assert_accepts, assert_rejects, chi2_pvalue, ks_pvalue

from privtab import DILCA, DPDILCA, BudgetAccountant
from privtab.dilca import (
    dilca_distance_matrix,
    max_dependency_context,
    max_relevance_context,
)
from privtab.exceptions import BudgetExceededError, PrivacyLeakWarning

# ---------------------------------------------------------------- references


def ref_entropy(X, cols):
    """H of the joint distribution of some columns, in bits."""
    _, counts = np.unique(X[:, list(cols)], axis=0, return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum())


def ref_su(X, a, b):
    ha, hb = ref_entropy(X, [a]), ref_entropy(X, [b])
    if ha + hb == 0:
        return 0.0
    return 2 * (ha + hb - ref_entropy(X, [a, b])) / (ha + hb)


def ref_su_matrix(X):
    d = X.shape[1]
    su = np.zeros((d, d))
    for a in range(d):
        for b in range(d):
            if a != b:
                su[a, b] = ref_su(X, a, b)
    return su


def ref_contexts(su, rule, sigma=1.0):
    d = su.shape[0]
    out = []
    for y in range(d):
        others = [j for j in range(d) if j != y]
        if rule == "mean_su":
            mean = sum(su[y, j] for j in others) / len(others)
            out.append([j for j in others if su[y, j] >= sigma * mean])
        else:
            order = sorted(others, key=lambda j: (-su[y, j], j))
            ctx = [order[0]]
            for c in order[1:]:
                if su[c, y] > max(su[c, s] for s in ctx):
                    ctx.append(c)
            out.append(sorted(ctx))
    return out


def ref_table(X, y, x, cards):
    table = np.zeros((cards[y], cards[x]))
    for a, b in zip(X[:, y], X[:, x], strict=True):
        table[a, b] += 1
    return table


def ref_distance(tables):
    rows = tables[0].shape[0]
    width = sum(t.shape[1] for t in tables)
    d = np.zeros((rows, rows))
    for i in range(rows):
        for j in range(rows):
            total = 0.0
            for t in tables:
                for x in range(t.shape[1]):
                    col = t[:, x].sum()
                    pi = t[i, x] / col if col > 0 else 0.0
                    pj = t[j, x] / col if col > 0 else 0.0
                    total += (pi - pj) ** 2
            d[i, j] = math.sqrt(total / width)
    return d


def well_separated(values, gap=1e-9):
    values = sorted(values)
    return all(b - a > gap for a, b in itertools.pairwise(values))


@st.composite
def tables(draw, min_rows=20, max_rows=60, max_cols=4):
    d = draw(st.integers(2, max_cols))
    cards = draw(st.lists(st.integers(2, 4), min_size=d, max_size=d))
    n = draw(st.integers(min_rows, max_rows))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, k, n) for k in cards])
    # Correlate some columns so contexts are not arbitrary.
    if d > 2 and draw(st.booleans()):
        X[:, 1] = np.minimum(X[:, 0], cards[1] - 1)
    return X, cards


def assert_valid_matrices(model):
    for j, matrix in enumerate(model.distance_matrices_):
        k = model.cardinalities_[j]
        assert matrix.shape == (k, k)
        assert np.array_equal(matrix, matrix.T)
        assert np.all(np.diag(matrix) == 0)
        assert matrix.min() >= 0
        assert matrix.max() <= 1


def structured(n, seed):
    """Attribute 0 drives 1 and 2 strongly, 3 weakly; 4 is noise."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    flip = rng.random((n, 3))
    b = np.where(flip[:, 0] < 0.9, a, rng.integers(0, 3, n))
    c = np.where(flip[:, 1] < 0.75, a % 2, rng.integers(0, 2, n))
    e = np.where(flip[:, 2] < 0.4, a, rng.integers(0, 3, n))
    f = rng.integers(0, 4, n)
    return np.column_stack([a, b, c, e, f]), [3, 3, 2, 3, 4]


# ---------------------------------------------------------- non-private DILCA


@pytest.mark.parametrize("rule", ["mean_su", "relevance_redundancy"])
@given(data=tables())
def test_dilca_contexts_and_distances_match_reference(rule, data):
    X, cards = data
    su = ref_su_matrix(X)
    d = X.shape[1]
    upper = [su[i, j] for i in range(d) for j in range(i + 1, d)]
    means = [np.mean([su[y, j] for j in range(d) if j != y]) for y in range(d)]
    assume(well_separated(upper + means, 1e-7))
    model = DILCA(rule).fit(X, cardinalities=cards)
    expected = ref_contexts(su, rule)
    assert [c.tolist() for c in model.contexts_] == expected
    for y, ctx in enumerate(expected):
        ref = ref_distance([ref_table(X, y, x, cards) for x in ctx])
        np.testing.assert_allclose(model.distance_matrix(y), ref, atol=1e-12)
    assert_valid_matrices(model)


def test_dilca_sigma_scales_the_mean():
    X, cards = structured(600, 1)
    su = ref_su_matrix(X)
    loose = DILCA(sigma=0.2).fit(X, cardinalities=cards)
    assert [c.tolist() for c in loose.contexts_] == ref_contexts(su, "mean_su", 0.2)


def test_declared_cardinality_is_the_normaliser_and_zero_columns_give_zero():
    X = np.array([[0, 0], [1, 1], [1, 1], [0, 0]])
    wide = DILCA().fit(X, cardinalities=[2, 5])
    # Three never-seen values of column 1 count in |X| with P = 0.
    root = math.sqrt(2 / 5)
    np.testing.assert_allclose(wide.distance_matrix(0), [[0, root], [root, 0]])
    narrow = DILCA().fit(X, cardinalities=[2, 2])
    np.testing.assert_allclose(narrow.distance_matrix(0), [[0, 1], [1, 0]])


def test_inputs_pandas_polars_and_encoded_table():
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    X, cards = structured(200, 2)
    base = DILCA().fit(X, cardinalities=cards)
    for data in (pd.DataFrame(X), pl.DataFrame(X)):
        other = DILCA().fit(data, cardinalities=cards)
        for a, b in zip(base.distance_matrices_, other.distance_matrices_, strict=True):
            np.testing.assert_array_equal(a, b)
    inferred = DILCA().fit(X)
    assert inferred.cardinalities_.tolist() == [int(v) + 1 for v in X.max(axis=0)]


# ------------------------------------------------------------ MaxRelevance etc.


@given(data=tables(max_cols=5), k=st.integers(1, 3), target=st.integers(0, 4))
def test_max_relevance_and_dependency_match_reference(data, k, target):
    X, cards = data
    d = X.shape[1]
    assume(target < d and k <= d - 1)
    others = [j for j in range(d) if j != target]
    relevance = {x: ref_entropy(X, [x]) - ref_entropy(X, [x, target]) for x in others}
    assume(well_separated(list(relevance.values()), 1e-7))
    top = sorted(others, key=lambda x: -relevance[x])[:k]
    got = max_relevance_context(X, target, k, cardinalities=cards)
    assert got.tolist() == sorted(top)
    subsets = list(itertools.combinations(others, k))
    dependency = [ref_entropy(X, s) - ref_entropy(X, [*s, target]) for s in subsets]
    assume(well_separated(dependency, 1e-7))
    best = subsets[int(np.argmax(dependency))]
    got = max_dependency_context(X, target, k, cardinalities=cards)
    assert got.tolist() == list(best)


# ----------------------------------------------------------- object distances


@given(data=tables(max_rows=30))
def test_pairwise_distances_match_loop(data):
    X, cards = data
    model = DILCA().fit(X, cardinalities=cards)
    Y = X[::-1][:7]
    got = model.pairwise_distances(X, Y)
    ref = np.zeros((X.shape[0], Y.shape[0]))
    for i, a in enumerate(X):
        for j, b in enumerate(Y):
            ref[i, j] = math.sqrt(
                sum(
                    model.distance_matrix(f)[a[f], b[f]] ** 2 for f in range(X.shape[1])
                )
            )
    np.testing.assert_allclose(got, ref, atol=1e-12)
    square = model.pairwise_distances(X)
    assert np.array_equal(square, square.T)
    assert np.all(np.diag(square) == 0)


def test_precomputed_metric_knn_and_ward():
    X, cards = structured(400, 3)
    labels = X[:, 0]
    features = X[:, 1:]
    model = DPDILCA(
        50.0, context_size=2, random_state=0, accountant=BudgetAccountant()
    ).fit(features, cardinalities=cards[1:])
    train, test = np.arange(300), np.arange(300, 400)
    knn = KNeighborsClassifier(5, metric="precomputed")
    knn.fit(model.pairwise_distances(features[train]), labels[train])
    predicted = knn.predict(model.pairwise_distances(features[test], features[train]))
    assert np.mean(predicted == labels[test]) > 0.6
    condensed = squareform(model.pairwise_distances(features), checks=True)
    clusters = fcluster(linkage(condensed, method="ward"), 3, criterion="maxclust")
    assert adjusted_rand_score(labels, clusters) > 0.3


# ------------------------------------------------------------------ DP-DILCA


@pytest.mark.parametrize(
    ("method", "rule"),
    [
        ("max_relevance", None),
        ("max_dependency", None),
        ("mean_su", "mean_su"),
        ("baseline", "relevance_redundancy"),
    ],
)
def test_huge_epsilon_gives_the_non_private_contexts(method, rule):
    X, cards = structured(3000, 4)
    model = DPDILCA(
        1e9,
        method=method,
        context_size=2,
        random_state=5,
        accountant=BudgetAccountant(),
    ).fit(X, cardinalities=cards)
    d = X.shape[1]
    if rule is None:
        helper = (
            max_relevance_context
            if method == "max_relevance"
            else max_dependency_context
        )
        expected = [helper(X, y, 2, cardinalities=cards).tolist() for y in range(d)]
    else:
        expected = ref_contexts(ref_su_matrix(X), rule)
    assert [c.tolist() for c in model.contexts_] == expected
    for y, ctx in enumerate(expected):
        ref = ref_distance([ref_table(X, y, x, cards) for x in ctx])
        np.testing.assert_allclose(model.distance_matrix(y), ref, atol=1e-5)
    assert_valid_matrices(model)


def selection_probabilities(X, cards, epsilon, h, method, k):
    n, d = X.shape
    gs = (1 / math.log(2) + math.log2(n)) / n
    eps_context = epsilon / d * h
    others = list(range(1, d))
    if method == "max_relevance":
        options = [(x,) for x in others]
        scores = [ref_entropy(X, [x]) - ref_entropy(X, [x, 0]) for x in others]
        factor = eps_context / (4 * k * gs)
    else:
        options = list(itertools.combinations(others, k))
        scores = [ref_entropy(X, s) - ref_entropy(X, [*s, 0]) for s in options]
        factor = eps_context / (4 * gs)
    logits = np.array(scores) * factor
    p = np.exp(logits - logits.max())
    return options, p / p.sum()


@pytest.mark.slow
@pytest.mark.parametrize(("method", "k"), [("max_relevance", 1), ("max_dependency", 2)])
def test_dp_context_follows_exponential_mechanism(method, k):
    X, cards = structured(120, 6)
    X = X[:, :4]
    cards = cards[:4]
    epsilon, h, runs = 6.0, 0.3, 4000
    options, probs = selection_probabilities(X, cards, epsilon, h, method, k)
    assert probs.max() < 0.9
    counts = np.zeros(len(options))
    for seed in range(runs):
        model = DPDILCA(
            epsilon,
            method=method,
            context_size=k,
            h=h,
            random_state=seed,
            accountant=BudgetAccountant(),
        ).fit(X, cardinalities=cards)
        counts[options.index(tuple(model.contexts_[0].tolist()))] += 1
    assert_accepts(chi2_pvalue(counts, probs))
    # Power: the same counts reject the mechanism at twice (and half) the budget.
    for wrong in (2 * epsilon, epsilon / 2):
        _, wrong_probs = selection_probabilities(X, cards, wrong, h, method, k)
        assert_rejects(chi2_pvalue(counts, wrong_probs))


@pytest.mark.parametrize("method", ["max_relevance", "baseline"])
def test_noisy_table_cells_have_the_stated_laplace_scale(method):
    rng = np.random.default_rng(7)
    d = 4 if method == "baseline" else 3
    n, epsilon, h, k = 8000, 3.0, 0.3, 2
    X = rng.integers(0, 2, (n, d))
    cards = [2] * d
    if method == "baseline":
        scale = 2 * math.comb(d, 2) / epsilon
    else:
        scale = 2 * k / (epsilon / d * (1 - h))
    residuals = []
    for seed in range(200):
        model = DPDILCA(
            epsilon,
            method=method,
            context_size=k,
            h=h,
            random_state=seed,
            accountant=BudgetAccountant(),
        ).fit(X, cardinalities=cards)
        seen = set()
        for y, ctx in enumerate(model.contexts_):
            if method != "baseline":
                assert ctx.size == k
            for x, noisy in zip(ctx.tolist(), model.tables_[y], strict=True):
                # The baseline shares one noisy table between its two attributes.
                if (min(x, y), max(x, y)) in seen:
                    continue
                seen.add((min(x, y), max(x, y)) if method == "baseline" else (y, x))
                table = ref_table(X, y, x, cards)
                assert table.min() > 50 * scale  # clamping never happens here
                residuals.extend((noisy - table).ravel().tolist())
    residuals = np.array(residuals)
    assert_accepts(ks_pvalue(residuals, stats.laplace(scale=scale)))
    assert_rejects(ks_pvalue(residuals, stats.laplace(scale=1.5 * scale)))


def test_noisy_tables_are_clamped_not_rounded():
    X, cards = structured(50, 8)
    model = DPDILCA(
        0.5, method="mean_su", random_state=1, accountant=BudgetAccountant()
    ).fit(X, cardinalities=cards)
    cells = np.concatenate([t.ravel() for ts in model.tables_ for t in ts])
    assert cells.min() == 0
    assert np.any(cells != np.round(cells))
    assert_valid_matrices(model)


@pytest.mark.parametrize(
    "method", ["max_relevance", "max_dependency", "mean_su", "baseline"]
)
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 0.7, 3.3])
def test_ledger_sums_exactly_and_accountant_is_charged_once(method, epsilon):
    X, cards = structured(100, 9)
    acc = BudgetAccountant(10.0)
    model = DPDILCA(
        epsilon, method=method, context_size=2, random_state=2, accountant=acc
    ).fit(X, cardinalities=cards)
    parts = [part for _, part in model.privacy_ledger_]
    assert sum(parts) == model.epsilon_spent_ == epsilon
    assert acc.spent == epsilon
    assert len(acc.ledger) == 1
    expected = math.comb(5, 2) if method == "baseline" else 2 * 5
    assert len(parts) == expected
    if method != "baseline":
        np.testing.assert_allclose(parts[0::2], epsilon / 5 * 0.3)
        np.testing.assert_allclose(parts[1::2], epsilon / 5 * 0.7)


def test_same_seed_same_output():
    X, cards = structured(200, 10)
    fits = [
        DPDILCA(
            1.0,
            method="max_dependency",
            context_size=2,
            random_state=3,
            accountant=BudgetAccountant(),
        ).fit(X, cardinalities=cards)
        for _ in range(2)
    ]
    for a, b in zip(
        fits[0].distance_matrices_, fits[1].distance_matrices_, strict=True
    ):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "method", ["max_relevance", "max_dependency", "mean_su", "baseline"]
)
@given(data=tables(min_rows=1, max_rows=30), epsilon=st.floats(0.01, 100))
def test_dp_matrices_always_valid(method, data, epsilon):
    X, cards = data
    k = min(2, X.shape[1] - 1)
    model = DPDILCA(
        epsilon,
        method=method,
        context_size=k,
        random_state=0,
        accountant=BudgetAccountant(),
    ).fit(X, cardinalities=cards)
    assert_valid_matrices(model)
    for ctx in model.contexts_:
        assert ctx.size >= 1


# ---------------------------------------------------------------- validation


def test_budget_is_checked_before_reading_data():
    acc = BudgetAccountant(0.5)
    with pytest.raises(BudgetExceededError):
        DPDILCA(1.0, accountant=acc).fit(np.array([[np.nan]]))
    assert acc.spent == 0


def test_inferred_cardinalities_warn():
    X, _ = structured(50, 11)
    with pytest.warns(PrivacyLeakWarning, match="inferred"):
        DPDILCA(1.0, random_state=0, accountant=BudgetAccountant()).fit(X)


X_OK = np.array([[0, 1, 0], [1, 0, 1], [1, 1, 0]])


@pytest.mark.parametrize(
    ("params", "match", "error"),
    [
        ({"epsilon": -1.0}, "epsilon", ValueError),
        ({"epsilon": 1.0, "method": "mean"}, "method must be one of", ValueError),
        ({"epsilon": 1.0, "context_size": 0}, "context_size", ValueError),
        ({"epsilon": 1.0, "context_size": 1.5}, "context_size", TypeError),
        ({"epsilon": 1.0, "context_size": 3}, "context_size must be <=", ValueError),
        ({"epsilon": 1.0, "h": 0.0}, "h", ValueError),
        ({"epsilon": 1.0, "h": 1.0}, r"h must be in \(0, 1\)", ValueError),
        ({"epsilon": 1.0, "random_state": "x"}, "random_state", TypeError),
    ],
)
def test_dpdilca_parameter_validation(params, match, error):
    with pytest.raises(error, match=match):
        DPDILCA(accountant=BudgetAccountant(), **params).fit(
            X_OK, cardinalities=[2, 2, 2]
        )


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"context": "mean"}, "context must be one of"),
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": math.nan}, "sigma"),
    ],
)
def test_dilca_parameter_validation(params, match):
    with pytest.raises(ValueError, match=match):
        DILCA(**params).fit(X_OK)


@pytest.mark.parametrize(
    ("X", "cards", "match", "error"),
    [
        (np.array([[0], [1]]), None, "at least 2 attributes", ValueError),
        (np.array([[0.0, np.nan]]), None, "finite", ValueError),
        (np.array([[0, -1]]), None, ">= 0", ValueError),
        (np.array([[0, 2]]), [2, 2], "cardinality", ValueError),
        (np.array([[0.5, 1.0]]), None, "integer", TypeError),
        (np.zeros((0, 2), dtype=int), None, "non-empty", ValueError),
        (np.array([["a", "b"]]), None, "integer", TypeError),
        (np.array([[0, 9000]]), None, "distance matrix per attribute", ValueError),
    ],
)
def test_x_validation(X, cards, match, error):
    with pytest.raises(error, match=match):
        DILCA().fit(X, cardinalities=cards)


def test_fitted_method_validation():
    model = DILCA().fit(X_OK)
    with pytest.raises(ValueError, match="j must be in"):
        model.distance_matrix(3)
    with pytest.raises(TypeError, match="j must be an int"):
        model.distance_matrix(1.0)
    with pytest.raises(ValueError, match="fitted with 3"):
        model.pairwise_distances(X_OK[:, :2])
    with pytest.raises(ValueError, match="cardinality"):
        model.pairwise_distances(X_OK + 1)
    with pytest.raises(ValueError, match="not fitted"):
        DILCA().pairwise_distances(X_OK)


def test_helper_validation():
    with pytest.raises(ValueError, match="target must be in"):
        max_relevance_context(X_OK, 3, 1)
    with pytest.raises(TypeError, match="target must be an int"):
        max_dependency_context(X_OK, "0", 1)
    with pytest.raises(ValueError, match="k must be <="):
        max_dependency_context(X_OK, 0, 3)
    with pytest.raises(ValueError, match="at least one"):
        dilca_distance_matrix([])
    with pytest.raises(ValueError, match="rows"):
        dilca_distance_matrix([np.ones((2, 2)), np.ones((3, 2))])
    with pytest.raises(ValueError, match="finite counts"):
        dilca_distance_matrix([-np.ones((2, 2))])


@given(
    X=hnp.arrays(
        dtype=st.sampled_from([np.int8, np.int64, np.uint32, np.float64, np.bool_]),
        shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5),
    ),
    method=st.sampled_from(["max_relevance", "max_dependency", "mean_su", "baseline"]),
)
def test_no_input_makes_the_core_panic(X, method):
    for model in (
        DILCA(),
        DPDILCA(
            1.0,
            method=method,
            context_size=1,
            random_state=0,
            accountant=BudgetAccountant(),
        ),
    ):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyLeakWarning)
                model.fit(X)
        except (ValueError, TypeError, MemoryError):
            continue
        assert_valid_matrices(model)
