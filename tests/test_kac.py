"""Containment anonymity, the k-AC utilities and the greedy selectors of paper 004.

Every quantity is checked against a brute-force NumPy reference written here (pairs of
rows enumerated, no use of privtab's kernels), and every selector against a greedy
reference that follows the documented rules with those brute-force measures.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from privtab import (
    CMGreedy,
    KACSelector,
    KAnonymityGreedy,
    _core,
    classification_metric,
    containment_anonymity,
    distcnt_utility,
    ham_utility,
)

# --- brute-force references -----------------------------------------------------------


def ref_ac(B: np.ndarray, S) -> np.ndarray:
    P = B[:, list(S)].astype(bool)
    # contains[u, v]: row v has every feature row u has.
    contains = ~(P[:, None, :] & ~P[None, :, :]).any(axis=2)
    return contains.sum(axis=1)


def ref_class_sizes(B: np.ndarray, S) -> np.ndarray:
    P = B[:, list(S)]
    same = (P[:, None, :] == P[None, :, :]).all(axis=2)
    return same.sum(axis=1)


def ref_pairs(B, y, S):
    """(differing-pair count on S, Hamming sum on S, n+ · n−) over positive × negative."""
    P = B[:, list(S)].astype(np.int64)
    pos, neg = P[y == 1], P[y == 0]
    hamming = np.abs(pos[:, None, :] - neg[None, :, :]).sum(axis=2)
    return int((hamming > 0).sum()), int(hamming.sum()), len(pos) * len(neg)


def ref_minority(B, y, S) -> int:
    P = B[:, list(S)]
    total = 0
    for u in range(len(B)):
        same = (P[u] == P).all(axis=1)
        if (P[:u] == P[u]).all(axis=1).any():
            continue
        total += min(int((y[same] == 1).sum()), int((y[same] == 0).sum()))
    return total


def ref_greedy(B, y, k, *, score, feasible, skip, positive_gain):
    """Greedy reference: ``score(S)`` is an integer utility (higher is better)."""
    m = B.shape[1]
    selected: list[int] = []
    candidates = list(range(m))
    current = score(selected)
    gains = {f: score([*selected, f]) - current for f in candidates}
    while candidates:
        best = max(candidates, key=lambda f: (gains[f], -f))
        if positive_gain and gains[best] <= 0:
            break
        if feasible([*selected, best]):
            selected.append(best)
            candidates.remove(best)
            current = score(selected)
            gains = {f: score([*selected, f]) - current for f in candidates}
        elif skip:
            candidates.remove(best)
        else:
            break
    return selected


def ref_kac(B, k):
    return lambda S: ref_ac(B, S).min() >= k


def ref_kanon(B, k):
    return lambda S: ref_class_sizes(B, S).min() >= k


def ref_ham_greedy(B, y, k, feasible, skip):
    # Ham is modular: the gains do not change, so the greedy is the sorted order.
    return ref_greedy(
        B,
        y,
        k,
        score=lambda S: ref_pairs(B, y, S)[1],
        feasible=feasible,
        skip=skip,
        positive_gain=False,
    )


def ref_distcnt_greedy(B, y, k, feasible, skip):
    return ref_greedy(
        B,
        y,
        k,
        score=lambda S: ref_pairs(B, y, S)[0],
        feasible=feasible,
        skip=skip,
        positive_gain=True,
    )


def ref_cm_greedy(B, y, k):
    return ref_greedy(
        B,
        y,
        k,
        score=lambda S: -ref_minority(B, y, S),
        feasible=ref_kanon(B, k),
        skip=False,
        positive_gain=True,
    )


def ref_maximal_sets(B, feasible):
    """All maximal feasible subsets by brute force (2^m), largest first, then lex."""
    from itertools import combinations

    m = B.shape[1]
    ok = [
        frozenset(S)
        for size in range(m + 1)
        for S in combinations(range(m), size)
        if feasible(list(S))
    ]
    maximal = [S for S in ok if not any(S < T for T in ok)]
    return sorted((sorted(S) for S in maximal), key=lambda S: (-len(S), S))


def ref_frequent(B, k):
    return lambda S: int(B[:, S].all(axis=1).sum()) >= k


def ref_best_maximal(B, y, k, feasible, utility, top_t):
    """Best of the top_t largest maximal sets, ordered by decreasing Ham({f}), index."""
    candidates = ref_maximal_sets(B, feasible)[:top_t]
    which = 0 if utility == "distcnt" else 1
    scores = [ref_pairs(B, y, S)[which] for S in candidates]
    best = candidates[scores.index(max(scores))]
    single = {f: ref_pairs(B, y, [f])[1] for f in best}
    return sorted(best, key=lambda f: (-single[f], f))


# --- strategies -----------------------------------------------------------------------


@st.composite
def labelled(draw, max_rows=16, max_features=6):
    n = draw(st.integers(4, max_rows))
    m = draw(st.integers(1, max_features))
    density = draw(st.sampled_from([0.15, 0.4, 0.7]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    B = (rng.random((n, m)) < density).astype(np.int8)
    if draw(st.booleans()):
        B[rng.integers(0, n, n // 2)] = B[0]  # duplicate rows
    if draw(st.booleans()):
        B[-1] = 0  # an all-zero row
    y = rng.integers(0, 2, n)
    y[0], y[1] = 1, 0
    return B, y


def subsets(m):
    return st.lists(st.integers(0, m - 1), max_size=m)


FAST = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# --- containment anonymity ------------------------------------------------------------


@FAST
@given(data=labelled(max_rows=30, max_features=8), pick=st.data())
def test_containment_anonymity_matches_brute_force(data, pick):
    B, _ = data
    np.testing.assert_array_equal(
        containment_anonymity(B), ref_ac(B, range(B.shape[1]))
    )
    S = pick.draw(subsets(B.shape[1]))
    np.testing.assert_array_equal(containment_anonymity(B, S), ref_ac(B, set(S)))
    mask = np.zeros(B.shape[1], dtype=bool)
    mask[S] = True
    np.testing.assert_array_equal(containment_anonymity(B, mask), ref_ac(B, set(S)))
    np.testing.assert_array_equal(
        containment_anonymity(sp.csr_matrix(B), S), ref_ac(B, set(S))
    )


def test_containment_anonymity_of_empty_subset_and_duplicates():
    B = np.array([[1, 1], [1, 1], [0, 0], [1, 0]])
    np.testing.assert_array_equal(containment_anonymity(B, []), [4, 4, 4, 4])
    np.testing.assert_array_equal(containment_anonymity(B), [2, 2, 4, 3])


def test_containment_anonymity_same_for_one_and_two_threads():
    rng = np.random.default_rng(3)
    B = sp.random(4000, 300, density=0.03, format="csr", random_state=rng)
    B.data[:] = 1
    one = containment_anonymity(B, n_threads=1)
    two = containment_anonymity(B, n_threads=2)
    np.testing.assert_array_equal(one, two)
    assert one.dtype == np.int64


def test_class_sizes_kernel_matches_brute_force():
    rng = np.random.default_rng(5)
    B = (rng.random((40, 5)) < 0.5).astype(np.int8)
    from privtab.kac._binary import as_binary_matrix

    M = as_binary_matrix(B)
    for S in ([], [0], [1, 3], [0, 1, 2, 3, 4]):
        got = _core.class_sizes(M.indptr, M.indices, M.n_features, S)
        np.testing.assert_array_equal(got, ref_class_sizes(B, S))


# --- utilities ------------------------------------------------------------------------


@FAST
@given(data=labelled(), pick=st.data())
def test_utilities_match_pair_enumeration(data, pick):
    B, y = data
    S = pick.draw(subsets(B.shape[1]))
    differing, hamming, total = ref_pairs(B, y, set(S))
    # Both sides divide one integer by another: equal to the last bit.
    assert ham_utility(B, y, S) == hamming / total
    assert distcnt_utility(B, y, S) == pytest.approx(differing / total, rel=1e-12)
    assert classification_metric(B, y, S) == pytest.approx(
        ref_minority(B, y, set(S)) / len(B), rel=1e-12
    )


def test_utilities_of_empty_subset():
    B = np.array([[1], [0], [1], [1]])
    y = np.array([1, 0, 0, 0])
    assert ham_utility(B, y, []) == 0.0
    assert distcnt_utility(B, y, []) == 0.0
    assert classification_metric(B, y, []) == 0.25


def test_cm_tie_counts_half_the_class():
    B = np.array([[1], [1], [0], [0], [0]])
    y = np.array([1, 0, 1, 0, 0])
    # Class {0, 1} is tied (contributes 1 = n_c / 2), class {2, 3, 4} has 1 minority row.
    assert classification_metric(B, y, [0]) == pytest.approx(2 / 5)


# --- selectors ------------------------------------------------------------------------


@FAST
@given(data=labelled(), k=st.integers(1, 4), skip=st.booleans())
def test_kac_greedy_matches_reference(data, k, skip):
    B, y = data
    for method, ref in (
        ("greedy_ham", ref_ham_greedy),
        ("greedy_distcnt", ref_distcnt_greedy),
    ):
        sel = KACSelector(k, method=method, skip_infeasible=skip).fit(B, y)
        expected = ref(B, y, k, ref_kac(B, k), skip)
        assert sel.selection_order_.tolist() == expected
        assert sel.anonymity_ == ref_ac(B, expected).min() >= k
        assert containment_anonymity(B, sel.support_).min() >= k
        assert sel.utility_ == pytest.approx(distcnt_utility(B, y, expected))


@FAST
@given(
    data=labelled(max_rows=16, max_features=8),
    k=st.integers(1, 5),
    utility=st.sampled_from(["distcnt", "ham"]),
    top_t=st.sampled_from([1, 2, 3, 10, 1000]),
)
def test_maximal_methods_match_brute_force(data, k, utility, top_t):
    B, y = data
    k = min(k, len(B))
    for method, feasible in (
        ("maximal", ref_frequent(B, k)),
        ("maximal_feasible", ref_kac(B, k)),
    ):
        sel = KACSelector(k, method=method, utility=utility, top_t=top_t).fit(B, y)
        expected = ref_best_maximal(B, y, k, feasible, utility, top_t)
        assert sel.selection_order_.tolist() == expected
        assert sel.complete_ is True
        assert sel.anonymity_ == ref_ac(B, expected).min() >= k
        reference = (distcnt_utility if utility == "distcnt" else ham_utility)(
            B, y, expected
        )
        assert sel.utility_ == pytest.approx(reference)


@FAST
@given(
    data=labelled(max_rows=30, max_features=8),
    k=st.integers(1, 6),
    skip=st.booleans(),
    top_t=st.integers(1, 4),
)
def test_every_method_selects_a_k_ac_set(data, k, skip, top_t):
    B, y = data
    k = min(k, len(B))
    for method in ("greedy_distcnt", "greedy_ham", "maximal", "maximal_feasible"):
        sel = KACSelector(k, method=method, skip_infeasible=skip, top_t=top_t)
        sel.fit(B, y)
        assert sel.anonymity_ >= k
        assert ref_ac(B, np.flatnonzero(sel.support_)).min() >= k
        assert (
            sorted(sel.selection_order_.tolist())
            == np.flatnonzero(sel.support_).tolist()
        )


@FAST
@given(data=labelled(max_rows=30, max_features=8), k=st.integers(1, 6))
@example(
    # Both methods pick the same 5 features in other orders: Ham must not depend on it.
    data=(
        np.array([[1, 0, 1, 0, 0, 1, 1, 1]] * 3 + [[0] * 8], dtype=np.int8),
        np.array([1, 0, 0, 0]),
    ),
    k=1,
)
def test_maximal_feasible_dominates_maximal_over_all_sets(data, k):
    # Every frequent itemset is k-AC, hence inside some maximal k-AC set, and both
    # utilities are monotone: comparing all sets, maximal_feasible is never worse.
    B, y = data
    k = min(k, len(B))
    for utility in ("distcnt", "ham"):
        args = {"utility": utility, "top_t": 10**6}
        frequent = KACSelector(k, method="maximal", **args).fit(B, y)
        feasible = KACSelector(k, method="maximal_feasible", **args).fit(B, y)
        assert feasible.utility_ >= frequent.utility_


def test_maximal_methods_select_nothing_when_no_feature_fits():
    # Each feature is 1 in one row only: at k = 2 no non-empty set is frequent or k-AC.
    B = np.eye(4, dtype=np.uint8)
    y = np.array([1, 0, 1, 0])
    for method in ("greedy_distcnt", "greedy_ham", "maximal", "maximal_feasible"):
        sel = KACSelector(2, method=method).fit(B, y)
        assert not sel.support_.any()
        assert sel.selection_order_.tolist() == []
        assert sel.anonymity_ == 4
        assert sel.utility_ == 0.0


def test_maximal_limits_set_complete_flag_without_warning():
    import warnings

    from privtab.itemsets import maximal_itemsets, maximal_kac_sets

    rng = np.random.default_rng(8)
    B = (rng.random((60, 9)) < 0.5).astype(np.uint8)
    y = rng.integers(0, 2, 60)
    for method, mine in (
        ("maximal", maximal_itemsets),
        ("maximal_feasible", maximal_kac_sets),
    ):
        assert len(mine(B, 3)) > 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sel = KACSelector(3, method=method, max_sets=1).fit(B, y)
        assert sel.complete_ is False
        first = mine(B, 3, max_sets=1)[0]
        assert sorted(sel.selection_order_.tolist()) == first.tolist()
        assert sel.anonymity_ >= 3
        limited = KACSelector(3, method=method, max_sets=10**6, time_limit=60.0)
        assert limited.fit(B, y).complete_ is True
        full = KACSelector(3, method=method).fit(B, y)
        np.testing.assert_array_equal(limited.selection_order_, full.selection_order_)
    assert KACSelector(3, max_sets=1).fit(B, y).complete_ is True


@FAST
@given(data=labelled(), k=st.integers(1, 4), skip=st.booleans())
def test_k_anonymity_greedy_matches_reference(data, k, skip):
    B, y = data
    for utility, ref in (("ham", ref_ham_greedy), ("distcnt", ref_distcnt_greedy)):
        sel = KAnonymityGreedy(k, utility=utility, skip_infeasible=skip).fit(B, y)
        expected = ref(B, y, k, ref_kanon(B, k), skip)
        assert sel.selection_order_.tolist() == expected
        assert sel.k_anonymity_ == ref_class_sizes(B, expected).min() >= k


@FAST
@given(data=labelled(), k=st.integers(1, 4))
def test_cm_greedy_matches_reference(data, k):
    B, y = data
    sel = CMGreedy(k).fit(B, y)
    expected = ref_cm_greedy(B, y, k)
    assert sel.selection_order_.tolist() == expected
    assert sel.k_anonymity_ >= k
    assert sel.utility_ == pytest.approx(ref_minority(B, y, expected) / len(B))


def test_selectors_same_for_one_and_two_threads():
    rng = np.random.default_rng(11)
    B = (rng.random((3000, 25)) < 0.2).astype(np.uint8)
    y = (B[:, :5].sum(axis=1) + rng.random(3000) > 1.5).astype(int)
    for make in (
        lambda t: KACSelector(5, n_threads=t),
        lambda t: KACSelector(5, method="greedy_ham", n_threads=t),
        lambda t: KACSelector(5, method="maximal", n_threads=t),
        lambda t: KACSelector(5, method="maximal_feasible", n_threads=t),
        lambda t: KAnonymityGreedy(5, utility="distcnt", n_threads=t),
        lambda t: CMGreedy(5, n_threads=t),
    ):
        one, two = make(1).fit(B, y), make(2).fit(B, y)
        np.testing.assert_array_equal(one.selection_order_, two.selection_order_)
        assert one.anonymity_ == two.anonymity_


def test_selector_dataframe_and_sparse_inputs():
    rng = np.random.default_rng(2)
    B = (rng.random((60, 6)) < 0.5).astype(int)
    y = rng.integers(0, 2, 60)
    frame = pd.DataFrame(B, columns=[f"f{j}" for j in range(6)])
    dense = KACSelector(3).fit(B, y)
    named = KACSelector(3).fit(frame, y)
    sparse = KACSelector(3).fit(sp.csr_matrix(B), y)
    np.testing.assert_array_equal(dense.support_, named.support_)
    np.testing.assert_array_equal(dense.support_, sparse.support_)
    assert list(named.feature_names_in_) == list(frame.columns)
    assert list(named.get_feature_names_out()) == [
        f"f{j}" for j in np.flatnonzero(dense.support_)
    ]
    assert named.transform(frame).shape == (60, dense.support_.sum())
    polars = pytest.importorskip("polars")
    from_polars = KACSelector(3, utility="ham").fit(polars.from_pandas(frame), y)
    np.testing.assert_array_equal(from_polars.support_, dense.support_)
    assert list(from_polars.feature_names_in_) == list(frame.columns)
    assert from_polars.utility_ == pytest.approx(
        ham_utility(B, y, dense.selection_order_)
    )


# --- validation -----------------------------------------------------------------------

B0 = np.array([[1, 0], [0, 1], [1, 1]])
Y0 = np.array([1, 0, 0])


@pytest.mark.parametrize(
    ("estimator", "error", "match"),
    [
        (KACSelector(0), ValueError, "k must be >= 1"),
        (KACSelector(1.5), TypeError, "k must be an int"),
        (KACSelector(2, method="exhaustive"), ValueError, "method must be one of"),
        (KACSelector(2, max_sets=0), ValueError, "max_sets must be >= 1"),
        (KACSelector(2, max_sets=2.0), TypeError, "max_sets must be an int"),
        (KACSelector(2, time_limit=-1.0), ValueError, "time_limit must be finite"),
        (KACSelector(2, time_limit=np.inf), ValueError, "time_limit must be finite"),
        (KACSelector(2, time_limit="1"), TypeError, "time_limit must be a number"),
        (KACSelector(2, utility="cm"), ValueError, "utility must be one of"),
        (KACSelector(2, top_t=0), ValueError, "top_t must be >= 1"),
        (KACSelector(2, skip_infeasible="yes"), TypeError, "skip_infeasible"),
        (KACSelector(2, n_threads=0), ValueError, "n_threads must be >= 1"),
        (KACSelector(4), ValueError, "exceeds the number of rows"),
        (KAnonymityGreedy(2, utility="cm"), ValueError, "utility must be one of"),
        (KAnonymityGreedy(2, skip_infeasible=1), TypeError, "skip_infeasible"),
        (KAnonymityGreedy(0), ValueError, "k must be >= 1"),
        (CMGreedy(4), ValueError, "exceeds the number of rows"),
        (CMGreedy("2"), TypeError, "k must be an int"),
    ],
)
def test_selector_validation(estimator, error, match):
    with pytest.raises(error, match=match):
        estimator.fit(B0, Y0)


@pytest.mark.parametrize(
    ("B", "y", "S", "error", "match"),
    [
        ([[2, 0], [0, 1]], [1, 0], [0], ValueError, "must be binary"),
        (B0, [1, 1, 1], [0], ValueError, "exactly two classes"),
        (B0, [1, 0], [0], ValueError, "y has 2 labels, expected 3"),
        (B0, Y0, [2], ValueError, "out of range for 2 features"),
        (B0, Y0, [-1], ValueError, "out of range for 2 features"),
        (B0, Y0, np.array([True]), ValueError, "boolean mask of length 1"),
        (B0, Y0, [0.5], TypeError, "integer column indices"),
        (B0, Y0, "ab", TypeError, "column indices or a boolean mask"),
        (B0, Y0, [[0]], ValueError, "1-dimensional"),
    ],
)
def test_utility_validation(B, y, S, error, match):
    for utility in (ham_utility, distcnt_utility, classification_metric):
        with pytest.raises(error, match=match):
            utility(B, y, S)


def test_containment_anonymity_validation():
    with pytest.raises(ValueError, match="out of range"):
        containment_anonymity(B0, [3])
    with pytest.raises(ValueError, match="n_threads must be >= 1"):
        containment_anonymity(B0, n_threads=0)
    with pytest.raises(ValueError, match="must be non-empty"):
        containment_anonymity(np.zeros((0, 3)))


@pytest.mark.parametrize(
    ("indptr", "indices", "m", "match"),
    [
        ([], [], 2, "n_rows \\+ 1 offsets"),
        ([1, 1], [0], 2, "from 0 to len"),
        ([0, 2, 1, 2], [0, 1], 2, "non-decreasing"),
        # An offset beyond the indices before the decrease that makes up for it.
        ([0, 100, 5, 10], [0] * 10, 2, "got 0 .. 100 at row 0"),
        ([0, 1], [5], 2, "out of range"),
        ([0, 2], [1, 0], 2, "strictly increasing"),
    ],
)
def test_kernel_rejects_malformed_csr(indptr, indices, m, match):
    with pytest.raises(ValueError, match=match):
        _core.containment_anonymity(
            np.asarray(indptr, dtype=np.int64),
            np.asarray(indices, dtype=np.uint32),
            m,
            [0],
        )


@settings(max_examples=80, deadline=None)
@given(
    B=arrays(
        np.float64,
        st.tuples(st.integers(0, 6), st.integers(0, 4)),
        elements=st.sampled_from([0.0, 1.0, 2.0, -1.0, np.nan, np.inf]),
    ),
    dtype=st.sampled_from([np.float64, np.int64, np.uint8, np.bool_]),
    S=st.lists(st.integers(-2, 6), max_size=4),
    k=st.integers(1, 8),
)
def test_no_input_panics(B, dtype, S, k):
    if dtype is not np.float64:
        B = np.nan_to_num(B, nan=0.0, posinf=3.0).astype(dtype)
    y = np.arange(B.shape[0]) % 2
    for call in (
        lambda: containment_anonymity(B, S),
        lambda: distcnt_utility(B, y, S),
        lambda: classification_metric(B, y, S),
        lambda: KACSelector(k, skip_infeasible=True).fit(B, y),
        lambda: KACSelector(k, method="maximal").fit(B, y),
        lambda: KACSelector(k, method="maximal_feasible", max_sets=1).fit(B, y),
        lambda: CMGreedy(k).fit(B, y),
    ):
        with contextlib.suppress(ValueError, TypeError):
            call()


@pytest.mark.parametrize(
    "estimator",
    [
        KACSelector(3),
        KACSelector(3, method="maximal_feasible", utility="ham"),
        KAnonymityGreedy(2, utility="distcnt"),
        CMGreedy(2),
    ],
    ids=repr,
)
def test_selectors_clone_pickle_and_refit_on_binary_data(estimator):
    import pickle

    from sklearn.base import clone

    rng = np.random.default_rng(4)
    B = (rng.random((80, 7)) < 0.4).astype(np.uint8)
    y = rng.integers(0, 2, 80)
    params = estimator.get_params()
    first = clone(estimator).fit(B, y)
    assert estimator.get_params() == params
    again = pickle.loads(pickle.dumps(first)).fit(B, y)
    np.testing.assert_array_equal(first.selection_order_, again.selection_order_)
    np.testing.assert_array_equal(first.transform(B), B[:, first.support_])


@FAST
@given(data=labelled(max_rows=30, max_features=8), k=st.integers(1, 4))
def test_sparse_distcnt_scoring_matches_reference(data, k):
    import privtab.kac._selection

    B, y = data
    saved, privtab.kac._selection._DENSE_CELLS = privtab.kac._selection._DENSE_CELLS, 0
    try:
        sel = KACSelector(k, skip_infeasible=True).fit(sp.csr_matrix(B), y)
    finally:
        privtab.kac._selection._DENSE_CELLS = saved
    assert sel.selection_order_.tolist() == ref_distcnt_greedy(
        B, y, k, ref_kac(B, k), True
    )
