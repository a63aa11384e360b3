"""Paper 004 baselines: randomization flipping (RF), Laplace-DP and Exponential-DP."""

from __future__ import annotations

import contextlib
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import integrate, stats

from privtab import (
    BudgetAccountant,
    ExponentialDPRelease,
    LaplaceDPRelease,
    randomization_flipping,
)
from privtab.exceptions import BudgetExceededError, PrivacyLeakWarning

from _stats import (
    assert_accepts,
    assert_rejects,
    chi2_discrete_pvalue,
    chi2_pvalue,
)

binary_matrices = hnp.arrays(
    np.uint8,
    st.tuples(st.integers(1, 40), st.integers(1, 12)),
    elements=st.integers(0, 1),
)


def reference_majority(B, clusters):
    """Per-cluster majority pattern (ties → 0), computed with plain NumPy."""
    out = np.empty_like(B)
    for c in np.unique(clusters):
        rows = clusters == c
        ones = B[rows].sum(axis=0)
        out[rows] = (2 * ones > rows.sum()).astype(np.uint8)
    return out


# --- randomization flipping -------------------------------------------------------


@given(binary_matrices, st.integers(1, 6), st.integers(0, 2**32))
def test_flipping_is_k_anonymous_majority_release(B, k, seed):
    k = min(k, B.shape[0])
    result = randomization_flipping(B, k, random_state=seed)
    sizes = np.bincount(result.clusters)
    assert len(sizes) == result.n_clusters
    assert sizes.min() >= k
    np.testing.assert_array_equal(result.data, reference_majority(B, result.clusters))
    _, counts = np.unique(result.data, axis=0, return_counts=True)
    assert counts.min() >= k
    assert result.flipped_fraction == np.mean(result.data != B)
    assert result.data.dtype == np.uint8


def reference_clusterings(B, k):
    """Every clustering the greedy k-member algorithm can return, one per start row.

    A plain-Python transcription of the documented rule: distinct rows in ascending
    order of ``Σ_f B[u, f] 2^f`` (the core's order for up to 64 features), patterns with
    ``>= k`` copies as their own clusters, then furthest-seed / nearest-rows growth
    with ties to the lowest index, leftovers to the nearest seed.
    """
    n, m = B.shape
    keys = (B.astype(np.int64) << np.arange(m)).sum(axis=1)
    distinct, inverse = np.unique(keys, return_inverse=True)
    rows = (distinct[:, None] >> np.arange(m)) & 1
    dist = (rows[:, None, :] != rows[None, :, :]).sum(axis=2)
    counts = np.bincount(inverse, minlength=len(distinct))
    own = [(g, [(g, int(c))]) for g, c in enumerate(counts) if c >= k]
    left0 = np.where(counts >= k, 0, counts)
    alive0 = [g for g in range(len(distinct)) if left0[g] > 0]
    starts = alive0 if left0.sum() >= k else [None]
    out = []
    for start in starts:
        left = left0.copy()
        clusters = [(seed, list(parts)) for seed, parts in own]
        alive, reference, total = list(alive0), start, int(left.sum())
        while total >= k:
            far = max(alive, key=lambda g, r=reference: (dist[r, g], -g))
            parts, need = [(far, int(left[far]))], k - int(left[far])
            left[far] = 0
            for _, g in sorted((dist[far, g], g) for g in alive if left[g] > 0):
                if need == 0:
                    break
                take = min(int(left[g]), need)
                parts.append((g, take))
                left[g] -= take
                need -= take
            total -= k
            clusters.append((far, parts))
            alive = [g for g in alive if left[g] > 0]
            reference = far
        for g in alive:
            nearest = min(
                range(len(clusters)), key=lambda c, g=g: (dist[clusters[c][0], g], c)
            )
            clusters[nearest][1].append((g, int(left[g])))
        labels = np.empty(n, dtype=np.int64)
        members = {g: list(np.flatnonzero(inverse == g)) for g in range(len(distinct))}
        for c, (_, parts) in enumerate(clusters):
            for g, take in parts:
                for _ in range(take):
                    labels[members[g].pop(0)] = c
        out.append(labels)
    return out


@given(
    hnp.arrays(
        np.uint8,
        st.tuples(st.integers(1, 30), st.integers(1, 8)),
        elements=st.integers(0, 1),
    ),
    st.integers(1, 5),
    st.integers(0, 2**32),
)
def test_clustering_matches_the_greedy_reference(B, k, seed):
    k = min(k, B.shape[0])
    labels = randomization_flipping(B, k, random_state=seed).clusters
    candidates = reference_clusterings(B, k)
    assert any(np.array_equal(labels, c) for c in candidates)


def test_identical_rows_are_not_flipped():
    B = np.repeat(np.array([[1, 0, 1, 1], [0, 1, 0, 0]], dtype=np.uint8), 5, axis=0)
    result = randomization_flipping(B, 5, random_state=0)
    assert result.flipped_fraction == 0.0
    np.testing.assert_array_equal(result.data, B)


def test_clusters_are_seeded_by_far_apart_rows():
    # Two well separated groups of k rows: the greedy clustering keeps them apart.
    rng = np.random.default_rng(1)
    low = (rng.random((4, 30)) < 0.05).astype(np.uint8)
    high = 1 - (rng.random((4, 30)) < 0.05).astype(np.uint8)
    B = np.vstack([low, high])
    result = randomization_flipping(B, 4, random_state=3)
    assert result.n_clusters == 2
    assert len(set(result.clusters[:4])) == 1
    assert len(set(result.clusters[4:])) == 1


def test_flipping_is_deterministic_per_seed_and_thread_count():
    rng = np.random.default_rng(5)
    B = (rng.random((500, 40)) < 0.3).astype(np.uint8)
    one = randomization_flipping(B, 5, random_state=11, n_threads=1)
    two = randomization_flipping(B, 5, random_state=11, n_threads=2)
    again = randomization_flipping(B, 5, random_state=11)
    for other in (two, again):
        np.testing.assert_array_equal(one.clusters, other.clusters)
        np.testing.assert_array_equal(one.data, other.data)
    seeds = {
        randomization_flipping(B, 5, random_state=s).clusters.tobytes()
        for s in range(5)
    }
    assert len(seeds) > 1


def test_flipping_accepts_sparse_and_dataframes():
    from scipy import sparse

    rng = np.random.default_rng(2)
    B = (rng.random((60, 9)) < 0.3).astype(np.uint8)
    dense = randomization_flipping(B, 4, random_state=0)
    for other in (sparse.csr_matrix(B), __import__("pandas").DataFrame(B)):
        result = randomization_flipping(other, 4, random_state=0)
        np.testing.assert_array_equal(result.data, dense.data)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"k": 0}, ValueError, "k"),
        ({"k": 11}, ValueError, "k must be <= the number of rows"),
        ({"k": 2.5}, TypeError, "k"),
        ({"k": 2, "n_threads": 0}, ValueError, "n_threads"),
    ],
)
def test_flipping_validation(kwargs, error, match):
    B = np.zeros((10, 3), dtype=np.uint8)
    with pytest.raises(error, match=match):
        randomization_flipping(B, **kwargs)


def test_flipping_rejects_non_binary():
    with pytest.raises(ValueError, match="binary"):
        randomization_flipping(np.array([[0, 2], [1, 1]]), 1)


@given(
    hnp.arrays(
        st.sampled_from([np.float64, np.int64, np.uint8, np.bool_]),
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6),
    ),
    st.integers(-2, 8),
)
def test_flipping_never_panics(B, k):
    with contextlib.suppress(ValueError, TypeError):
        randomization_flipping(B, k, random_state=0)


# --- DP releases --------------------------------------------------------------------


def small_data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    B = np.zeros((n, 4), dtype=np.uint8)
    y = np.zeros(n, dtype=np.int64)
    y[: n // 3] = 1
    # Features with clearly different per-feature Ham.
    for f, (p, q) in enumerate([(0.9, 0.1), (0.7, 0.3), (0.5, 0.45), (0.2, 0.2)]):
        B[:, f] = np.where(y == 1, rng.random(n) < p, rng.random(n) < q)
    return B, y


def smaller_class(y):
    """The size of the smaller class: the tightest public bound a test can declare."""
    return int(min(np.sum(y == 1), np.sum(y == 0)))


def reference_ham(B, y):
    pos, neg = B[y == 1].astype(float), B[y == 0].astype(float)
    return np.array(
        [
            np.mean(np.abs(pos[:, f][:, None] - neg[:, f][None, :]))
            for f in range(B.shape[1])
        ]
    )


def laplace_max_probabilities(scores, scale):
    """P(argmax(scores + Laplace(scale))) by numerical integration."""
    out = []
    for i in range(len(scores)):

        def density(x, i=i):
            value = stats.laplace.pdf(x, scores[i], scale)
            for j in range(len(scores)):
                if j != i:
                    value *= stats.laplace.cdf(x, scores[j], scale)
            return value

        lo, hi = scores.min() - 40 * scale, scores.max() + 40 * scale
        points = sorted(scores.tolist())
        out.append(integrate.quad(density, lo, hi, points=points, limit=200)[0])
    return np.array(out)


def first_picks(cls, B, y, epsilon, n_runs):
    picks = np.empty(n_runs, dtype=np.int64)
    for r in range(n_runs):
        model = cls(
            epsilon,
            1,
            random_state=r,
            accountant=BudgetAccountant(),
            classes=[0, 1],
            min_class_size=smaller_class(y),
        )
        picks[r] = model.fit(B, y).selection_order_[0]
    return np.bincount(picks, minlength=B.shape[1])


def test_exponential_selection_follows_the_mechanism():
    B, y = small_data()
    epsilon, n_runs = 0.3, 5000
    delta = 1.0 / min(y.sum(), len(y) - y.sum())
    ham = reference_ham(B, y)
    observed = first_picks(ExponentialDPRelease, B, y, epsilon, n_runs)
    probs = np.exp((epsilon / 2) * ham / (2 * delta))
    assert_accepts(chi2_pvalue(observed, probs))
    # Power: the same counts against the mechanism without the factor 2.
    assert_rejects(chi2_pvalue(observed, np.exp((epsilon / 2) * ham / delta)))


def test_laplace_selection_follows_report_noisy_max():
    B, y = small_data()
    epsilon, n_runs = 0.3, 5000
    delta = 1.0 / min(y.sum(), len(y) - y.sum())
    ham = reference_ham(B, y)
    observed = first_picks(LaplaceDPRelease, B, y, epsilon, n_runs)
    probs = laplace_max_probabilities(ham, 2 * delta / (epsilon / 2))
    assert abs(probs.sum() - 1) < 1e-6
    assert_accepts(chi2_pvalue(observed, probs))
    assert_rejects(
        chi2_pvalue(observed, laplace_max_probabilities(ham, delta / (epsilon / 2)))
    )


@pytest.mark.parametrize("cls", [LaplaceDPRelease, ExponentialDPRelease])
def test_huge_epsilon_selects_the_top_ham_features(cls):
    B, y = small_data()
    ham = reference_ham(B, y)
    model = cls(
        1e9,
        3,
        random_state=0,
        accountant=BudgetAccountant(),
        classes=[0, 1],
        min_class_size=smaller_class(y),
    ).fit(B, y)
    np.testing.assert_array_equal(model.selection_order_, np.argsort(-ham)[:3])
    assert model.support_.sum() == 3
    np.testing.assert_array_equal(
        model.transform(B), B[:, np.sort(np.argsort(-ham)[:3])]
    )


@pytest.mark.parametrize("cls", [LaplaceDPRelease, ExponentialDPRelease])
def test_histogram_noise_has_the_discrete_laplace_scale(cls):
    B, y = small_data(n=300)
    epsilon, t = 2.0, 3
    noise = []
    for seed in range(40):
        model = cls(
            epsilon,
            t,
            random_state=seed,
            accountant=BudgetAccountant(),
            classes=[0, 1],
            min_class_size=smaller_class(y),
        )
        model.fit(B, y)
        columns = np.sort(model.selection_order_)
        keys = (B[:, columns].astype(np.int64) << np.arange(t)).sum(axis=1) + (y << t)
        true = np.bincount(keys, minlength=2 ** (t + 1))
        noise.append(model.noisy_counts_ - true)
        # The released records reproduce the clipped noisy histogram.
        released = (model.synthetic_X_.astype(np.int64) << np.arange(t)).sum(axis=1)
        released += model.synthetic_y_.astype(np.int64) << t
        np.testing.assert_array_equal(
            np.bincount(released, minlength=2 ** (t + 1)),
            np.maximum(model.noisy_counts_, 0),
        )
    noise = np.concatenate(noise)
    release = model.privacy_ledger_[-1][1]
    assert_accepts(chi2_discrete_pvalue(noise, stats.dlaplace(release / 2)))
    assert_rejects(chi2_discrete_pvalue(noise, stats.dlaplace(release)))


@pytest.mark.parametrize("cls", [LaplaceDPRelease, ExponentialDPRelease])
@pytest.mark.parametrize("epsilon", [0.1, 0.3, 1.0, 7.7])
def test_ledger_sums_exactly_and_accountant_is_charged_once(cls, epsilon):
    B, y = small_data()
    acc = BudgetAccountant(10.0)
    model = cls(
        epsilon, 3, random_state=0, accountant=acc, classes=[0, 1], min_class_size=40
    ).fit(B, y)
    assert model.epsilon_spent_ == epsilon
    assert sum(e for _, e in model.privacy_ledger_) == epsilon
    assert len(model.privacy_ledger_) == 4
    assert len(acc.ledger) == 1
    assert acc.spent == epsilon


class Unreadable:
    """An input whose reading fails loudly."""

    def __array__(self, *args, **kwargs):
        raise AssertionError("data was read")


@pytest.mark.parametrize("cls", [LaplaceDPRelease, ExponentialDPRelease])
def test_budget_error_before_reading_data(cls):
    acc = BudgetAccountant(0.5)
    with pytest.raises(BudgetExceededError):
        cls(1.0, 2, accountant=acc).fit(Unreadable(), Unreadable())
    assert acc.spent == 0


@pytest.mark.parametrize("cls", [LaplaceDPRelease, ExponentialDPRelease])
@pytest.mark.parametrize(
    ("params", "data", "error", "match"),
    [
        ({"epsilon": 0.0}, None, ValueError, "epsilon"),
        ({"epsilon": float("nan")}, None, ValueError, "epsilon"),
        ({"n_features": 0}, None, ValueError, "n_features"),
        ({"n_features": 5}, None, ValueError, "n_features must be <= the number"),
        ({"n_features": 3, "max_cells": 8}, None, ValueError, "max_cells"),
        ({"max_cells": 0}, None, ValueError, "max_cells"),
        ({}, "three_classes", ValueError, "two classes"),
        ({}, "non_binary", ValueError, "binary"),
        ({"min_class_size": 0}, None, ValueError, "min_class_size must be >= 1"),
        ({"min_class_size": 2.0}, None, TypeError, "min_class_size must be an int"),
        (
            {"min_class_size": 61, "classes": [0, 1]},
            None,
            ValueError,
            "half the number of rows \\(60\\)",
        ),
        (
            {"min_class_size": 41, "classes": [0, 1]},
            None,
            ValueError,
            "a class of y has fewer records",
        ),
    ],
)
def test_dp_validation(cls, params, data, error, match):
    B, y = small_data()
    if data == "three_classes":
        y = np.arange(len(y)) % 3
    if data == "non_binary":
        B = B * 2
    acc = BudgetAccountant()
    kwargs = {"epsilon": 1.0, "n_features": 2, "min_class_size": 40, **params}
    with pytest.raises(error, match=match):
        cls(random_state=0, accountant=acc, **kwargs).fit(B, y)
    assert acc.spent == 0


def test_dp_release_keeps_label_values_and_feature_names():
    pd = pytest.importorskip("pandas")
    B, y = small_data()
    frame = pd.DataFrame(B, columns=["a", "b", "c", "d"])
    labels = np.where(y == 1, "yes", "no")
    model = ExponentialDPRelease(
        1e9,
        2,
        random_state=0,
        accountant=BudgetAccountant(),
        classes=["yes", "no"],
        min_class_size=40,
    ).fit(frame, labels)
    assert model.classes_.tolist() == ["no", "yes"]
    assert set(np.unique(model.synthetic_y_)) <= {"yes", "no"}
    assert list(model.get_feature_names_out()) == ["a", "b"]


@pytest.mark.parametrize("cls", [LaplaceDPRelease, ExponentialDPRelease])
@given(
    B=hnp.arrays(
        st.sampled_from([np.float64, np.int64, np.uint8]),
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6),
    ),
    y=hnp.arrays(np.float64, st.integers(0, 7)),
    t=st.integers(1, 4),
)
def test_dp_release_never_panics(cls, B, y, t):
    model = cls(1.0, t, random_state=0, accountant=BudgetAccountant())
    with warnings.catch_warnings(), contextlib.suppress(ValueError, TypeError):
        # The labels are arbitrary floats: a fit infers them, and says so.
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        model.fit(B, y)


# --- declared class sizes -------------------------------------------------------------


def class_changing_neighbour(B, y):
    """``(B, y)`` with its first negative record replaced by a positive one."""
    B2, y2 = B.copy(), y.copy()
    row = int(np.flatnonzero(y == 0)[0])
    B2[row], y2[row] = 1 - B[row], 1
    return B2, y2


@pytest.mark.parametrize("cls", [LaplaceDPRelease, ExponentialDPRelease])
def test_inferred_class_sizes_warn_declared_do_not(cls):
    B, y = small_data()
    model = cls(1.0, 2, random_state=0, accountant=BudgetAccountant(), classes=[0, 1])
    with pytest.warns(PrivacyLeakWarning, match="min_class_size was not given"):
        model.fit(B, y)
    assert model.ham_sensitivity_ == 1 / 40
    # Declared: no warning at all (warnings are errors in this suite).
    model.set_params(min_class_size=30).fit(B, y)
    assert model.ham_sensitivity_ == 1 / 30


@pytest.mark.parametrize(
    ("cls", "function", "factor"),
    [
        (LaplaceDPRelease, "laplace_mechanism", 2.0),
        (ExponentialDPRelease, "exponential_mechanism", 1.0),
    ],
)
def test_declared_class_sizes_give_neighbours_the_same_noise(
    cls, function, factor, monkeypatch
):
    # A neighbour whose record changes class has other class sizes; with a declared
    # bound, what the caller sees of the noise (the sensitivity attribute and every
    # scale handed to a mechanism) is the same on both.
    from privtab.kac import _dp_release

    calls = []
    mechanism = getattr(_dp_release, function)

    def spy(scores, sensitivity, epsilon, **kwargs):
        calls.append((sensitivity, epsilon))
        return mechanism(scores, sensitivity, epsilon, **kwargs)

    monkeypatch.setattr(_dp_release, function, spy)
    B, y = small_data()
    seen = []
    for data in ((B, y), class_changing_neighbour(B, y)):
        calls.clear()
        model = cls(
            1.0,
            3,
            random_state=0,
            accountant=BudgetAccountant(),
            classes=[0, 1],
            min_class_size=35,
        ).fit(*data)
        seen.append((model.ham_sensitivity_, list(calls)))
    assert seen[0] == seen[1]
    sensitivity, scales = seen[0]
    assert sensitivity == 1 / 35
    assert scales == [(factor / 35, 1.0 / 6)] * 3


@given(
    B=hnp.arrays(np.uint8, (9, 3), elements=st.integers(0, 1)),
    n_positive=st.integers(3, 6),
)
def test_ham_moves_by_at_most_the_sensitivity_on_every_neighbour(B, n_positive):
    # Every replace-one neighbour (any row, any class) whose classes both keep at
    # least min_class_size records: Ham({f}) of the reference moves by at most
    # ham_sensitivity_.
    y = (np.arange(9) < n_positive).astype(np.int64)
    bound = min(n_positive, 9 - n_positive) - 1
    model = LaplaceDPRelease(
        1.0,
        1,
        random_state=0,
        accountant=BudgetAccountant(),
        classes=[0, 1],
        min_class_size=bound,
    ).fit(B, y)
    ham = reference_ham(B, y)
    largest = 0.0
    for row in range(9):
        for bits in itertools.product((0, 1), repeat=3):
            for label in (0, 1):
                B2, y2 = B.copy(), y.copy()
                B2[row], y2[row] = bits, label
                if smaller_class(y2) < bound:
                    continue
                largest = max(largest, np.abs(reference_ham(B2, y2) - ham).max())
    assert largest <= model.ham_sensitivity_ + 1e-12


@pytest.mark.parametrize("cls", [LaplaceDPRelease, ExponentialDPRelease])
def test_a_failure_after_the_picks_charges_epsilon(cls, monkeypatch):
    from privtab.kac import _dp_release

    def failing_release(*args, **kwargs):
        raise MemoryError("the histogram could not be allocated")

    monkeypatch.setattr(_dp_release, "discrete_laplace_mechanism", failing_release)
    B, y = small_data()
    acc = BudgetAccountant(2.0)
    model = cls(
        1.0, 2, random_state=0, accountant=acc, classes=[0, 1], min_class_size=40
    )
    with pytest.raises(MemoryError):
        model.fit(B, y)
    assert acc.spent == 1.0
    assert [tuple(entry) for entry in acc.ledger] == [
        (f"{cls.__name__} (failed after drawing noise)", 1.0)
    ]


@pytest.mark.parametrize("cls", [LaplaceDPRelease, ExponentialDPRelease])
def test_release_holds_the_covered_attributes_only(cls):
    B, y = small_data()
    model = cls(
        1.0,
        2,
        random_state=0,
        accountant=BudgetAccountant(),
        classes=[0, 1],
        min_class_size=40,
    ).fit(B, y)
    published = model.release()
    assert set(published["attributes"]) == {
        "selection_order_",
        "support_",
        "synthetic_X_",
        "synthetic_y_",
        "noisy_counts_",
        "classes_",
        "n_features_in_",
    }
    assert published["params"]["min_class_size"] == 40
    np.testing.assert_array_equal(
        published["attributes"]["noisy_counts_"], model.noisy_counts_
    )
