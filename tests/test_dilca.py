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
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC

from privtab import DILCA, DPDILCA, BudgetAccountant, _core
from privtab.counts import contingency_table
from privtab.dilca import _contexts as dilca_module
from privtab.dilca import (
    classical_mds,
    dilca_distance_matrix,
    max_dependency_context,
    max_relevance_context,
)
from privtab.exceptions import BudgetExceededError, PrivacyLeakWarning

from _stats import assert_accepts, assert_rejects, chi2_pvalue, ks_pvalue

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
            ctx = [j for j in others if su[y, j] >= sigma * mean]
            out.append(ctx or [max(others, key=lambda j: (su[y, j], -j))])
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


def test_empty_mean_su_context_falls_back_to_the_best_attribute():
    X, cards = structured(300, 2)
    model = DILCA(sigma=100.0).fit(X, cardinalities=cards)
    su = ref_su_matrix(X)
    assert [c.tolist() for c in model.contexts_] == ref_contexts(su, "mean_su", 100.0)
    assert all(len(c) == 1 for c in model.contexts_)


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


# ------------------------------------------------------- one-pass pairwise kernel


def ref_pairs(X, cards):
    """Every table (pairs i < j, lexicographic) and the entropy matrix, in NumPy."""
    d = X.shape[1]
    tables, h = [], np.zeros((d, d))
    for i in range(d):
        h[i, i] = ref_entropy(X, [i]) if X.shape[0] else 0.0
        for j in range(i + 1, d):
            tables.append(ref_table(X, i, j, cards))
            h[i, j] = h[j, i] = ref_entropy(X, [i, j]) if X.shape[0] else 0.0
    return tables, h


@given(
    data=tables(min_rows=0, max_rows=80, max_cols=6), threads=st.sampled_from([1, 2])
)
def test_pairwise_kernel_matches_reference_for_every_pair(data, threads):
    X, cards = data
    columns = np.ascontiguousarray(X.T, dtype=np.uint32)
    cardinalities = np.asarray(cards, dtype=np.uint32)
    flat, offsets, h = _core.pairwise_tables(columns, cardinalities, n_threads=threads)
    expected_tables, expected_h = ref_pairs(X, cards)
    assert offsets.shape == (len(expected_tables) + 1,)
    assert offsets[-1] == flat.shape[0]
    for p, (i, j) in enumerate(itertools.combinations(range(X.shape[1]), 2)):
        table = flat[offsets[p] : offsets[p + 1]].reshape(cards[i], cards[j])
        assert np.array_equal(table, expected_tables[p])
        if X.shape[0]:
            assert np.array_equal(
                table, contingency_table(X[:, i], X[:, j], cards[i], cards[j])
            )
    np.testing.assert_allclose(h, expected_h, rtol=0, atol=1e-12)
    flat2, offsets2, h2 = _core.pairwise_tables(columns, cardinalities, False)
    assert flat2.shape == (0,)
    assert np.array_equal(offsets2, offsets)
    np.testing.assert_allclose(h2, expected_h, rtol=0, atol=1e-12)


def test_pairwise_kernel_errors():
    columns = np.zeros((3, 1), dtype=np.uint32)
    huge = np.full(3, 2**32 - 1, dtype=np.uint32)
    with pytest.raises(MemoryError, match="pairwise contingency tables"):
        _core.pairwise_tables(columns, huge)
    with pytest.raises(ValueError, match="column 1"):
        _core.pairwise_tables(
            np.array([[0, 1], [0, 2]], dtype=np.uint32),
            np.array([2, 2], dtype=np.uint32),
        )
    with pytest.raises(ValueError, match="cardinalities"):
        _core.pairwise_tables(columns, np.array([2, 0, 2], dtype=np.uint32))
    with pytest.raises(ValueError, match="n_threads"):
        _core.pairwise_tables(columns, np.full(3, 2, dtype=np.uint32), n_threads=0)


def test_large_domains_count_entropies_only(monkeypatch):
    X, cards = structured(300, 5)
    exact = DILCA().fit(X, cardinalities=cards)
    monkeypatch.setattr(dilca_module, "_MAX_PAIRWISE_CELLS", 0)
    light = DILCA().fit(X, cardinalities=cards)
    assert [c.tolist() for c in light.contexts_] == [
        c.tolist() for c in exact.contexts_
    ]
    for a, b in zip(light.distance_matrices_, exact.distance_matrices_, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


# ------------------------------------------------------------ Euclidean embedding


def fitted_models(X, cards):
    yield DILCA().fit(X, cardinalities=cards)
    yield DILCA("relevance_redundancy").fit(X, cardinalities=cards)
    for method in ("max_relevance", "mean_su", "baseline"):
        yield DPDILCA(
            0.5,
            method=method,
            context_size=1,
            random_state=3,
            accountant=BudgetAccountant(),
        ).fit(X, cardinalities=cards)


def euclidean(A, B):
    return np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2))


@given(data=tables(min_rows=2, max_rows=40, max_cols=4))
def test_embedding_reproduces_the_distances(data):
    X, cards = data
    for model in fitted_models(X, cards):
        for j in range(X.shape[1]):
            coords = model.value_embedding(j)
            assert coords.shape[0] == cards[j]
            assert 1 <= coords.shape[1] <= max(cards[j] - 1, 1)
            gaps = euclidean(coords, coords)
            np.testing.assert_allclose(
                gaps, model.distance_matrix(j), rtol=0, atol=1e-9
            )
            full = model.value_embedding(j, n_components=cards[j])
            np.testing.assert_allclose(
                euclidean(full, full), model.distance_matrix(j), rtol=0, atol=1e-9
            )
        T = model.transform(X)
        np.testing.assert_allclose(
            euclidean(T, T), model.pairwise_distances(X), rtol=0, atol=1e-9
        )
        T2 = model.transform(X[:3])
        np.testing.assert_allclose(
            euclidean(T2, T), model.pairwise_distances(X[:3], X), rtol=0, atol=1e-9
        )


@given(data=tables(min_rows=2, max_rows=40, max_cols=4))
def test_classical_mds_on_dilca_matrices_is_the_embedding(data):
    # DILCA (and DP-DILCA) matrices are Euclidean: classical MDS clips no mass and its
    # Gram matrix is the one of the principal coordinates.
    X, cards = data
    for model in fitted_models(X, cards):
        for j in range(X.shape[1]):
            matrix = model.distance_matrix(j)
            coords, clipped = classical_mds(matrix)
            assert clipped < 1e-9
            np.testing.assert_allclose(
                euclidean(coords, coords) ** 2, matrix**2, rtol=0, atol=1e-9
            )
            mine = model.value_embedding(j)
            np.testing.assert_allclose(
                coords @ coords.T, mine @ mine.T, rtol=0, atol=1e-9
            )


def test_classical_mds_of_a_non_euclidean_matrix_clips_mass():
    # Four points where d(0, 3) breaks the triangle inequality: not Euclidean.
    d = np.array([[0, 1, 2, 5], [1, 0, 1, 2], [2, 1, 0, 1], [5, 2, 1, 0]], dtype=float)
    coords, clipped = classical_mds(d)
    assert clipped > 0.01
    assert coords.shape[1] <= 3
    coords2, _ = classical_mds(d, n_components=4)
    assert coords2.shape == (4, 4)
    # Truncation: one component gives the best rank-1 Gram approximation.
    one, _ = classical_mds(d, n_components=1)
    assert one.shape == (4, 1)


def test_embedding_validation():
    model = DILCA().fit(X_OK)
    with pytest.raises(ValueError, match=r"n_components must be in \[1, 2\]"):
        model.value_embedding(0, n_components=3)
    with pytest.raises(TypeError, match="n_components must be an int"):
        model.value_embedding(0, n_components=1.5)
    with pytest.raises(ValueError, match="j must be in"):
        model.value_embedding(5)
    with pytest.raises(ValueError, match="not fitted"):
        DILCA().transform(X_OK)
    with pytest.raises(ValueError, match="fitted with 3"):
        model.transform(X_OK[:, :2])
    with pytest.raises(ValueError, match="square"):
        classical_mds(np.ones((2, 3)))
    with pytest.raises(ValueError, match="finite"):
        classical_mds(np.full((2, 2), np.nan))
    with pytest.raises(ValueError, match=r"n_components must be in \[1, 2\]"):
        classical_mds(np.zeros((2, 2)), n_components=0)


def test_embedding_lets_euclidean_learners_use_the_metric():
    X, cards = structured(400, 9)
    labels = X[:, 0]
    predictors, pred_cards = X[:, 1:], cards[1:]
    model = DILCA().fit(predictors, cardinalities=pred_cards)
    T = model.transform(predictors)
    svc = SVC(kernel="rbf").fit(T[:300], labels[:300])
    majority = np.bincount(labels[300:]).max() / 100
    assert svc.score(T[300:], labels[300:]) > majority + 0.2
    clusters = KMeans(3, n_init=5, random_state=0).fit_predict(T)
    # KMeans on the embedding minimises the within-cluster squared DILCA distance.
    D2 = model.pairwise_distances(predictors) ** 2
    within = sum(
        D2[np.ix_(clusters == c, clusters == c)].sum() / (2 * (clusters == c).sum())
        for c in np.unique(clusters)
    )
    centres = np.array([T[clusters == c].mean(axis=0) for c in np.unique(clusters)])
    inertia = ((T - centres[clusters]) ** 2).sum()
    assert math.isclose(within, inertia, rel_tol=1e-9)
