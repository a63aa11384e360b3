"""NonPrivateKD, MDA and PrivateKD against NumPy references and statistical tests."""

from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.base import clone

import privtab as pt
from privtab import (
    BudgetAccountant,
    BudgetExceededError,
    PrivacyLeakWarning,
    PrivateKD,
    TableEncoder,
    _core,
    discernibility,
    greedy_discernibility,
    minimum_discerning_attributes,
)

from _stats import assert_accepts, assert_rejects, chi2_pvalue


# NumPy references ---------------------------------------------------------------------
def label_codes(y):
    return np.unique(np.asarray(y), return_inverse=True)[1].ravel()


def differing_pairs(y):
    counts = np.unique(label_codes(y), return_counts=True)[1].astype(object)
    n = len(y)
    return n * n - int((counts**2).sum())


def undiscerned(X, y, subset):
    """Sum over the classes of S of n_c^2 - sum_l n_{c,l}^2, from np.unique on tuples."""
    n = len(y)
    keys = X[:, list(subset)] if len(subset) else np.zeros((n, 1), dtype=np.int64)
    _, classes, sizes = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    joint = np.column_stack([classes.ravel(), label_codes(y)])
    _, joint_counts = np.unique(joint, axis=0, return_counts=True)
    return int(
        (sizes.astype(object) ** 2).sum() - (joint_counts.astype(object) ** 2).sum()
    )


def brute_force_pairs(X, y, subset):
    """Ordered pairs differing on S and on the label, one pair at a time."""
    rows = X[:, list(subset)]
    n = len(y)
    return sum(
        1
        for u in range(n)
        for v in range(n)
        if y[u] != y[v] and not np.array_equal(rows[u], rows[v])
    )


def reference_greedy(X, y, k):
    """Greedy order and the gains (in pairs) of every round: first maximum wins."""
    chosen, gains_path = [], []
    current = undiscerned(X, y, [])
    for _ in range(k):
        remaining = [a for a in range(X.shape[1]) if a not in chosen]
        after = [undiscerned(X, y, [*chosen, a]) for a in remaining]
        gains = [current - u for u in after]
        best = int(np.argmax(gains))
        gains_path.append(sorted(gains, reverse=True))
        chosen.append(remaining[best])
        current = after[best]
    return chosen, gains_path


def reference_mda(X, y, sigma):
    total = differing_pairs(y)
    full = total - undiscerned(X, y, range(X.shape[1]))
    if full == 0:
        return []
    order, _ = reference_greedy(X, y, X.shape[1])
    for size in range(X.shape[1] + 1):
        if total - undiscerned(X, y, order[:size]) >= (1 - sigma) * full:
            return order[:size]
    raise AssertionError("F(A) is always reached")


@st.composite
def labelled_tables(draw, max_n=30, max_d=5, max_card=4):
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    cards = draw(st.lists(st.integers(1, max_card), min_size=d, max_size=d))
    X = np.stack(
        [draw(hnp.arrays(np.int64, n, elements=st.integers(0, k - 1))) for k in cards],
        axis=1,
    )
    y = draw(hnp.arrays(np.int64, n, elements=st.integers(-2, 2)))
    return X, y


#: The label set of make_table, declared to PrivateKD.
LABELS = [0, 1, 2]


def make_table(seed, n=400, cards=(2, 3, 5, 4, 2, 6), noise=0.3):
    """Codes whose label depends on a few columns, so that gains differ (labels 0-2)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, k, n) for k in cards])
    y = (X[:, 0] + X[:, 2] // 2 + (rng.random(n) < noise)) % 3
    return X, y


# Non-private greedy and MDA -----------------------------------------------------------
@given(labelled_tables())
def test_greedy_matches_reference(table):
    X, y = table
    d = X.shape[1]
    order = greedy_discernibility(X, y, d)
    assert order.dtype == np.int64
    assert order.tolist() == reference_greedy(X, y, d)[0]
    for k in range(1, d + 1):
        assert greedy_discernibility(X, y, k).tolist() == order[:k].tolist()


@given(labelled_tables(max_n=12, max_d=3))
def test_greedy_gains_are_brute_force_pair_counts(table):
    X, y = table
    order = greedy_discernibility(X, y, X.shape[1]).tolist()
    previous = 0
    for size in range(1, len(order) + 1):
        pairs = brute_force_pairs(X, y, order[:size])
        assert discernibility(X, y, order[:size]) == pytest.approx(pairs / len(y))
        remaining = [a for a in range(X.shape[1]) if a not in order[: size - 1]]
        best = max(brute_force_pairs(X, y, [*order[: size - 1], a]) for a in remaining)
        assert pairs == best
        assert pairs >= previous
        previous = pairs


def test_greedy_on_larger_data_and_constant_columns():
    X, y = make_table(3, n=5000)
    X = np.column_stack([np.zeros(len(y), dtype=np.int64), X])
    order = greedy_discernibility(X, y, X.shape[1])
    assert order.tolist() == reference_greedy(X, y, X.shape[1])[0]
    assert 0 in order.tolist()


@given(labelled_tables(), st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9]))
def test_mda_matches_reference(table, sigma):
    X, y = table
    assert minimum_discerning_attributes(X, y, sigma).tolist() == reference_mda(
        X, y, sigma
    )


def test_mda_default_sigma_and_empty_result():
    X, y = make_table(5, n=3000)
    mda = minimum_discerning_attributes(X, y)
    assert mda.tolist() == reference_mda(X, y, 0.1)
    assert 0 < len(mda) < X.shape[1]
    F = discernibility(X, y, mda)
    assert 0.9 * discernibility(X, y, range(X.shape[1])) <= F
    assert minimum_discerning_attributes(X, np.ones(len(y))).tolist() == []
    assert minimum_discerning_attributes(X, np.ones(len(y))).dtype == np.int64


def test_functions_accept_dataframes_and_encoded_tables():
    X, y = make_table(6, n=300)
    expected = greedy_discernibility(X, y, 3).tolist()
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    assert greedy_discernibility(frame, y, 3).tolist() == expected
    assert greedy_discernibility(pl.from_pandas(frame), y, 3).tolist() == expected
    labels = np.array(["no", "maybe", "yes"])[y]
    assert greedy_discernibility(X, labels, 3).tolist() == expected
    domains = {c: list(range(X[:, j].max() + 1)) for j, c in enumerate(frame)}
    table = TableEncoder(domains=domains).fit_transform(frame)
    assert greedy_discernibility(table, y, 3).tolist() == expected
    mda = minimum_discerning_attributes(table, y, 0.2, n_threads=1).tolist()
    assert mda == reference_mda(X, y, 0.2)


# PrivateKD: distribution of the choices -----------------------------------------------
FREQ_X, FREQ_Y = make_table(11, n=40, cards=(2, 3, 2, 4), noise=0.4)


def first_round_probs(X, y, epsilon_step):
    n = len(y)
    gains = np.array(
        [undiscerned(X, y, []) - undiscerned(X, y, [a]) for a in range(X.shape[1])]
    )
    logits = epsilon_step * gains / n
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def first_round_counts(epsilon, draws, seed):
    generator = np.random.default_rng(seed)
    picks = [
        PrivateKD(1, epsilon, random_state=generator, classes=LABELS)
        .fit(FREQ_X, FREQ_Y, cardinalities=[2, 3, 2, 4])
        .selection_order_[0]
        for _ in range(draws)
    ]
    return np.bincount(picks, minlength=FREQ_X.shape[1])


def test_first_round_frequencies_follow_exponential_weights():
    gains_f = np.array(
        [discernibility(FREQ_X, FREQ_Y, [a]) for a in range(FREQ_X.shape[1])]
    )
    assert len(set(gains_f.round(9))) == len(gains_f), "the test needs distinct gains"
    # k = 1: epsilon' = epsilon / 4; scale so that the log-weights span about 2.
    epsilon = 4 * 2.0 / (gains_f.max() - gains_f.min())
    step = epsilon / 4
    counts = first_round_counts(epsilon, 4000, 2024)
    assert_accepts(chi2_pvalue(counts, first_round_probs(FREQ_X, FREQ_Y, step)))
    # Power: the same counts reject a mechanism with twice or half the epsilon'.
    for wrong in (2 * step, step / 2):
        assert_rejects(chi2_pvalue(counts, first_round_probs(FREQ_X, FREQ_Y, wrong)))


def test_tiny_epsilon_is_uniform():
    d = FREQ_X.shape[1]
    counts = first_round_counts(1e-9, 2000, 7)
    assert_accepts(chi2_pvalue(counts, np.full(d, 1 / d)))
    assert_rejects(chi2_pvalue(counts, [0.4, 0.2, 0.2, 0.2]))


@pytest.mark.slow
def test_second_round_given_first_follows_exponential_weights():
    generator = np.random.default_rng(99)
    epsilon = 8 * 2.0 / discernibility(FREQ_X, FREQ_Y, [0, 1, 2, 3])
    orders = [
        tuple(
            PrivateKD(2, epsilon, random_state=generator, classes=LABELS)
            .fit(FREQ_X, FREQ_Y, cardinalities=[2, 3, 2, 4])
            .selection_order_
        )
        for _ in range(3000)
    ]
    first = max(range(4), key=lambda a: sum(o[0] == a for o in orders))
    rest = [a for a in range(4) if a != first]
    counts = [sum(o == (first, a) for o in orders) for a in rest]
    current = undiscerned(FREQ_X, FREQ_Y, [first])
    gains = np.array([current - undiscerned(FREQ_X, FREQ_Y, [first, a]) for a in rest])
    step = epsilon / 8
    logits = step * gains / len(FREQ_Y)
    assert_accepts(chi2_pvalue(counts, np.exp(logits - logits.max())))


def distinct_greedy_prefix(X, y):
    """Length of the greedy prefix along which every round has a unique best gain."""
    _, gains = reference_greedy(X, y, X.shape[1])
    length = 0
    for ranked in gains:
        if len(ranked) > 1 and ranked[0] == ranked[1]:
            break
        length += 1
    return length


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_huge_epsilon_reproduces_the_greedy_order(seed):
    X, y = make_table(seed, n=500)
    k = distinct_greedy_prefix(X, y)
    assert k >= 3
    selector = PrivateKD(k, 1e12, random_state=seed, classes=LABELS).fit(
        X, y, cardinalities=X.max(axis=0) + 1
    )
    assert selector.selection_order_.tolist() == greedy_discernibility(X, y, k).tolist()


def test_same_seed_same_output_at_one_and_two_threads():
    X, y = make_table(8, n=20_000, cards=(3, 4, 5, 2, 7, 3, 9, 2))
    cards = X.max(axis=0) + 1
    runs = {
        threads: [
            PrivateKD(5, 50.0, random_state=seed, n_threads=threads, classes=LABELS)
            .fit(X, y, cardinalities=cards)
            .selection_order_.tolist()
            for seed in range(6)
        ]
        for threads in (1, 2)
    }
    assert runs[1] == runs[2]
    assert len({tuple(order) for order in runs[1]}) > 1


# PrivateKD: accounting ----------------------------------------------------------------
@pytest.mark.parametrize(("k", "epsilon"), [(1, 1.0), (3, 0.1), (7, 0.3), (4, 1e-3)])
def test_ledger_adds_up_exactly_and_accountant_is_charged_once(k, epsilon):
    X, y = make_table(9, n=200, cards=(2, 3, 4, 2, 5, 3, 2))
    acc = BudgetAccountant(10.0)
    selector = PrivateKD(
        k, epsilon, random_state=0, accountant=acc, classes=LABELS
    ).fit(X, y, cardinalities=[2, 3, 4, 2, 5, 3, 2])
    assert selector.epsilon_spent_ == epsilon
    assert len(selector.privacy_ledger_) == k
    assert sum(part for _, part in selector.privacy_ledger_) == epsilon
    assert all(
        math.isclose(part, epsilon / k, rel_tol=1e-12)
        for _, part in selector.privacy_ledger_
    )
    assert len(acc.ledger) == 1
    assert acc.spent == epsilon
    assert selector.support_.sum() == k
    assert (
        sorted(selector.selection_order_.tolist())
        == np.flatnonzero(selector.support_).tolist()
    )


def test_budget_is_checked_before_reading_data():
    acc = BudgetAccountant(0.5)
    not_data = [["not", "codes"], [1.5, float("nan")]]
    with pytest.raises(BudgetExceededError, match="privacy budget exceeded"):
        PrivateKD(1, 1.0, accountant=acc).fit(not_data, [0, 1])
    assert acc.spent == 0.0
    with pytest.raises(ValueError, match="must contain only finite codes"):
        PrivateKD(1, 0.5, accountant=acc).fit(
            np.array([[0.0], [np.nan]]), [0, 1], cardinalities=[2]
        )
    assert acc.spent == 0.0
    assert acc.ledger == []


# PrivateKD: scikit-learn behaviour ----------------------------------------------------
def test_sklearn_basics_with_pandas_and_polars():
    X, y = make_table(10, n=300)
    names = [f"col_{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    cards = X.max(axis=0) + 1
    selector = PrivateKD(3, 5.0, random_state=4, classes=LABELS)
    assert selector.get_params()["n_features"] == 3
    twin = clone(selector)
    assert twin.get_params() == selector.get_params()
    assert not hasattr(twin, "support_")
    selector.fit(frame, y, cardinalities=cards)
    assert selector.n_features_in_ == X.shape[1]
    assert selector.feature_names_in_.tolist() == names
    support = selector.get_support()
    assert support.dtype == bool
    assert support.sum() == 3
    np.testing.assert_array_equal(
        selector.get_support(indices=True), np.sort(selector.selection_order_)
    )
    np.testing.assert_array_equal(selector.transform(frame), X[:, support])
    assert selector.get_feature_names_out().tolist() == [
        names[j] for j in np.flatnonzero(support)
    ]
    fitted = PrivateKD(3, 5.0, random_state=4, classes=LABELS).fit(
        pl.from_pandas(frame), y, cards
    )
    assert fitted.selection_order_.tolist() == selector.selection_order_.tolist()
    assert fitted.feature_names_in_.tolist() == names
    assert np.asarray(fitted.transform(pl.from_pandas(frame))).shape == (300, 3)
    plain = PrivateKD(3, 5.0, random_state=4, classes=LABELS).fit(X, y, cards)
    assert not hasattr(plain, "feature_names_in_")
    assert plain.get_feature_names_out().tolist() == [
        f"x{j}" for j in np.flatnonzero(plain.support_)
    ]


def test_encoded_table_supplies_cardinalities_without_warning():
    X, y = make_table(12, n=300)
    frame = pd.DataFrame(X, columns=list("abcdef"))
    domains = {c: list(range(int(X[:, j].max()) + 1)) for j, c in enumerate(frame)}
    table = TableEncoder(domains=domains).fit_transform(frame)
    selector = PrivateKD(2, 1.0, random_state=0, classes=LABELS).fit(table, y)
    expected = PrivateKD(2, 1.0, random_state=0, classes=LABELS).fit(
        X, y, X.max(axis=0) + 1
    )
    assert selector.selection_order_.tolist() == expected.selection_order_.tolist()


def test_inferred_cardinalities_warn():
    X, y = make_table(13, n=100)
    with pytest.warns(PrivacyLeakWarning, match="cardinalities were inferred"):
        PrivateKD(2, 1.0, random_state=0, classes=LABELS).fit(X, y)


def test_refit_replaces_the_fitted_state():
    X, y = make_table(14, n=200)
    frame = pd.DataFrame(X, columns=list("abcdef"))
    selector = PrivateKD(2, 1.0, random_state=0, classes=LABELS).fit(
        frame, y, X.max(axis=0) + 1
    )
    selector.set_params(n_features=4).fit(X, y, X.max(axis=0) + 1)
    assert selector.support_.sum() == 4
    assert not hasattr(selector, "feature_names_in_")


# Validation: one pytest.raises per branch ---------------------------------------------
SMALL_X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
SMALL_Y = np.array([0, 1, 1, 0])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_features": 0}, ValueError, "n_features must be >= 1"),
        ({"n_features": 3}, ValueError, r"n_features must be <= the number of columns"),
        ({"n_features": 1.5}, TypeError, "n_features must be an int"),
        ({"epsilon": 0.0}, ValueError, "epsilon must be finite and > 0"),
        ({"epsilon": float("nan")}, ValueError, "epsilon must be finite and > 0"),
        ({"epsilon": float("inf")}, ValueError, "epsilon must be finite and > 0"),
        ({"epsilon": "1"}, TypeError, "epsilon must be a real number"),
        ({"random_state": -1}, ValueError, "random_state must be a non-negative"),
        ({"random_state": "seed"}, TypeError, "random_state must be None"),
        ({"accountant": 1.0}, TypeError, "accountant must be a privtab"),
        ({"n_threads": 0}, ValueError, "n_threads must be >= 1"),
    ],
)
def test_private_kd_parameter_validation(kwargs, error, match):
    params = {"n_features": 1, "epsilon": 1.0, "classes": [0, 1], **kwargs}
    with pytest.raises(error, match=match):
        PrivateKD(**params).fit(SMALL_X, SMALL_Y, cardinalities=[2, 2])


@pytest.mark.parametrize(
    ("X", "y", "cards", "error", "match"),
    [
        (np.array([[0.0, np.nan]] * 4), SMALL_Y, [2, 2], ValueError, "finite codes"),
        (np.array([[0, -1]] * 4), SMALL_Y, [2, 2], ValueError, "codes >= 0"),
        (SMALL_X, SMALL_Y, [2, 1], ValueError, r"X\[0, 1\] = 1 is >= cardinality 1"),
        (SMALL_X, SMALL_Y, [2], ValueError, "one entry per column"),
        (SMALL_X, SMALL_Y[:3], [2, 2], ValueError, "y has 3 labels, expected 4"),
        (SMALL_X, SMALL_Y[:, None], [2, 2], ValueError, "y must be 1-dimensional"),
        (SMALL_X, [0.5, 1, 1, 0], [2, 2], TypeError, "y must hold integers"),
        (SMALL_X, [0, np.nan, 1, 0], [2, 2], ValueError, "y must contain only finite"),
        (SMALL_X[:, :0], SMALL_Y, [], ValueError, "X must be non-empty"),
        (SMALL_X[0], SMALL_Y, [2, 2], ValueError, "X must be 2-dimensional"),
        (SMALL_X + 0.5, SMALL_Y, [2, 2], TypeError, "non-integral floats"),
    ],
)
def test_private_kd_data_validation(X, y, cards, error, match):
    with pytest.raises(error, match=match):
        PrivateKD(1, 1.0, random_state=0).fit(X, y, cardinalities=cards)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: greedy_discernibility(SMALL_X, SMALL_Y, 0), ValueError, ">= 1"),
        (lambda: greedy_discernibility(SMALL_X, SMALL_Y, 3), ValueError, "<= the"),
        (lambda: greedy_discernibility(SMALL_X, SMALL_Y, "2"), TypeError, "an int"),
        (
            lambda: greedy_discernibility(SMALL_X, SMALL_Y, 1, n_threads=0),
            ValueError,
            "n_threads must be >= 1",
        ),
        (
            lambda: minimum_discerning_attributes(SMALL_X, SMALL_Y, 1.0),
            ValueError,
            r"sigma must be in \[0, 1\)",
        ),
        (
            lambda: minimum_discerning_attributes(SMALL_X, SMALL_Y, -0.1),
            ValueError,
            r"sigma must be in \[0, 1\)",
        ),
        (
            lambda: minimum_discerning_attributes(SMALL_X, SMALL_Y, float("nan")),
            ValueError,
            r"sigma must be in \[0, 1\)",
        ),
        (
            lambda: minimum_discerning_attributes(SMALL_X, SMALL_Y, "0.1"),
            TypeError,
            "sigma must be a real number",
        ),
        (
            lambda: minimum_discerning_attributes(SMALL_X, SMALL_Y, True),
            TypeError,
            "sigma must be a real number",
        ),
        (
            lambda: minimum_discerning_attributes(SMALL_X, SMALL_Y[:2]),
            ValueError,
            "y has 2 labels",
        ),
    ],
)
def test_function_validation(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_core_entry_points_validate_on_their_own():

    columns = np.ascontiguousarray(SMALL_X.T, dtype=np.uint32)
    cards = np.array([2, 2], dtype=np.uint32)
    labels = SMALL_Y.astype(np.uint32)
    with pytest.raises(
        ValueError, match=r"n_features must be <= the number of columns, got 3"
    ):
        _core.greedy_discernibility(columns, cards, labels, 2, 3)
    with pytest.raises(ValueError, match="epsilon must be finite and > 0"):
        _core.private_kd(columns, cards, labels, 2, 1, -1.0, 0)
    with pytest.raises(ValueError, match=r"sigma must be in \[0, 1\)"):
        _core.minimum_discerning_attributes(columns, cards, labels, 2, 1.5)
    with pytest.raises(ValueError, match="labels"):
        _core.private_kd(columns, cards, labels[:3], 2, 1, 1.0, 0)
    with pytest.raises(ValueError, match="labels"):
        _core.greedy_discernibility(columns, cards, labels, 1, 1)


# No input makes the core panic --------------------------------------------------------
DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float32, np.float64]


@given(
    hnp.arrays(
        st.sampled_from(DTYPES),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6),
        elements={"allow_nan": True, "allow_infinity": True},
    ),
    hnp.arrays(
        st.sampled_from([np.int64, np.float64, np.uint8]),
        hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=6),
        elements={"allow_nan": True, "allow_infinity": True},
    ),
    st.integers(-1, 4),
    st.sampled_from([None, 0.0, 1e-300, 1.0, 1e300]),
)
def test_no_input_makes_the_core_panic(X, y, k, epsilon):
    def attempt(call):
        with contextlib.suppress(ValueError, TypeError, OverflowError):
            call()

    attempt(lambda: greedy_discernibility(X, y, k))
    attempt(lambda: minimum_discerning_attributes(X, y, 0.1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        attempt(
            lambda: PrivateKD(k, epsilon if epsilon else 1.0, random_state=0).fit(X, y)
        )


@given(labelled_tables(max_n=40, max_d=4), st.integers(1, 4), st.floats(1e-6, 1e6))
def test_private_kd_returns_distinct_valid_indices(table, k, epsilon):
    X, y = table
    assume(k <= X.shape[1])
    selector = PrivateKD(k, epsilon, random_state=1, classes=range(-2, 3)).fit(
        X, y, X.max(axis=0) + 1
    )
    order = selector.selection_order_.tolist()
    assert len(order) == len(set(order)) == k
    assert all(0 <= a < X.shape[1] for a in order)


def test_exports():
    for name in (
        "PrivateKD",
        "greedy_discernibility",
        "minimum_discerning_attributes",
    ):
        assert name in pt.__all__


LAYOUTS = ["auto", "full_pass", "indexed", "copied", "records"]


def _core_inputs(X, y):
    columns = np.ascontiguousarray(np.asarray(X).T, dtype=np.uint32)
    cards = np.ascontiguousarray(columns.max(axis=1) + 1, dtype=np.uint32)
    labels = np.ascontiguousarray(np.unique(y, return_inverse=True)[1], np.uint32)
    return columns, cards, labels, int(labels.max()) + 1


@given(labelled_tables(max_n=60, max_d=6, max_card=5), st.integers(0, 2**32))
def test_search_layouts_give_identical_selections(table, seed):
    # The layout only changes how rows are scanned: the integer gains, hence the
    # greedy order and every Gumbel-max draw of PrivateKD, must not change.
    X, y = table
    columns, cards, labels, n_labels = _core_inputs(X, y)
    d = columns.shape[0]
    results = {
        (layout, threads): (
            _core.greedy_discernibility(
                columns, cards, labels, n_labels, d, threads, layout=layout
            )[0].tolist(),
            _core.minimum_discerning_attributes(
                columns, cards, labels, n_labels, 0.2, threads, layout=layout
            )[0].tolist(),
            _core.private_kd(
                columns, cards, labels, n_labels, d, 0.5, seed, threads, layout=layout
            ).tolist(),
        )
        for layout in LAYOUTS
        for threads in (1, 2)
    }
    first = next(iter(results.values()))
    assert all(result == first for result in results.values())
    assert first[0] == reference_greedy(X, y, d)[0]


def test_search_layouts_agree_on_a_larger_table():
    # Large enough for the automatic layout to leave its full passes midway.
    X, y = make_table(3, n=30_000, cards=(2, 3, 5, 4, 2, 6, 40, 40, 40))
    columns, cards, labels, n_labels = _core_inputs(X, y)
    orders = {
        layout: _core.private_kd(
            columns, cards, labels, n_labels, 9, 0.01, 7, layout=layout
        ).tolist()
        for layout in LAYOUTS
    }
    assert len(set(map(tuple, orders.values()))) == 1
    greedy = {
        layout: _core.greedy_discernibility(
            columns, cards, labels, n_labels, 9, layout=layout
        )[1].tolist()
        for layout in LAYOUTS
    }
    assert len(set(map(tuple, greedy.values()))) == 1


def test_search_layout_is_validated():
    columns, cards, labels, n_labels = _core_inputs(SMALL_X, SMALL_Y)
    with pytest.raises(ValueError, match="layout must be 'auto'"):
        _core.private_kd(columns, cards, labels, n_labels, 1, 1.0, 0, layout="rows")
