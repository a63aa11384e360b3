"""Discernibility and the partition-refinement kernel against brute force."""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from privtab import _core, discernibility
from privtab.discernibility import score_candidates


@st.composite
def labelled_tables(draw, max_n=25, max_d=4, max_card=4):
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    cards = draw(st.lists(st.integers(1, max_card), min_size=d, max_size=d))
    X = np.stack(
        [draw(hnp.arrays(np.int64, n, elements=st.integers(0, k - 1))) for k in cards],
        axis=1,
    )
    y = draw(hnp.arrays(np.int64, n, elements=st.integers(-3, 3)))
    return X, y


def brute_force_f(X, y, features):
    n = len(y)
    rows = X[:, list(features)]
    count = 0
    for u in range(n):
        for v in range(n):
            if y[u] != y[v] and not np.array_equal(rows[u], rows[v]):
                count += 1
    return count / n


def reference_stats(X, y, subset):
    n = len(y)
    keys = X[:, list(subset)] if subset else np.zeros((n, 1), dtype=np.int64)
    _, classes, sizes = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    joint = np.concatenate([keys, y[:, None]], axis=1)
    _, joint_counts = np.unique(joint, axis=0, return_counts=True)
    p, q = sizes / n, joint_counts / n
    undiscerned = int(
        (sizes.astype(object) ** 2).sum() - (joint_counts.astype(object) ** 2).sum()
    )
    return (
        len(sizes),
        undiscerned,
        float(-(p * np.log2(p)).sum()),
        float(-(q * np.log2(q)).sum()),
        classes.ravel(),
    )


@given(labelled_tables(), st.data())
def test_discernibility_matches_ordered_pair_count(table, data):
    X, y = table
    features = data.draw(st.lists(st.integers(0, X.shape[1] - 1), max_size=3))
    assert discernibility(X, y, features) == pytest.approx(
        brute_force_f(X, y, features)
    )


@given(labelled_tables(max_n=60, max_card=6), st.data())
def test_candidate_scores_match_unique_on_row_tuples(table, data):
    X, y = table
    d = X.shape[1]
    selected = data.draw(st.lists(st.integers(0, d - 1), max_size=2))
    scores = score_candidates(X, y, selected)
    np.testing.assert_array_equal(scores.candidates, np.arange(d))
    for a in range(d):
        n_classes, pairs, h, hy, _ = reference_stats(X, y, [*selected, a])
        assert scores.n_classes[a] == n_classes
        assert scores.undiscerned_pairs[a] == pairs
        assert scores.entropy[a] == pytest.approx(h, abs=1e-9)
        assert scores.joint_entropy[a] == pytest.approx(hy, abs=1e-9)
        assert scores.discernibility[a] == pytest.approx(
            brute_force_f(X, y, [*selected, a]), abs=1e-9
        )


@given(labelled_tables(max_n=60, max_card=300))
def test_refined_class_ids_are_ranks_of_row_tuples(table):
    X, _ = table
    cards = np.full(X.shape[1], 300, dtype=np.uint32)
    columns = np.ascontiguousarray(X.T, dtype=np.uint32)
    partition = _core.Partition(X.shape[0])
    for j in range(X.shape[1]):
        partition = partition.refine(columns[j], 300)
        _, inverse, sizes = np.unique(
            X[:, : j + 1], axis=0, return_inverse=True, return_counts=True
        )
        np.testing.assert_array_equal(partition.classes(), inverse.ravel())
        np.testing.assert_array_equal(partition.sizes(), sizes)
        assert partition.n_classes == len(sizes)
    same = _core.Partition.from_columns(columns, cards, list(range(X.shape[1])))
    np.testing.assert_array_equal(same.classes(), partition.classes())
    p = sizes / X.shape[0]
    assert partition.entropy() == pytest.approx(
        float(-(p * np.log2(p)).sum()), abs=1e-9
    )


def test_large_domains_use_the_sorted_refinement():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2**31, (3000, 3))
    y = rng.integers(0, 5, 3000)
    scores = score_candidates(X, y, [0], [1, 2])
    for i, a in enumerate([1, 2]):
        n_classes, pairs, h, hy, _ = reference_stats(X, y, [0, a])
        assert scores.n_classes[i] == n_classes
        assert scores.undiscerned_pairs[i] == pairs
        assert scores.entropy[i] == pytest.approx(h)
        assert scores.joint_entropy[i] == pytest.approx(hy)


def test_one_and_two_threads_agree():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 9, (300_000, 6))
    y = rng.integers(0, 3, 300_000)
    one = score_candidates(X, y, [1, 4], n_threads=1)
    two = score_candidates(X, y, [1, 4], n_threads=2)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a, b)
    assert discernibility(X, y, [0, 2], n_threads=1) == discernibility(
        X, y, [0, 2], n_threads=2
    )


def test_subset_walk_matches_unique():
    rng = np.random.default_rng(9)
    X = rng.integers(0, 4, (400, 5))
    y = rng.integers(0, 3, 400)
    columns = np.ascontiguousarray(X.T, dtype=np.uint32)
    cards = np.full(5, 4, dtype=np.uint32)
    labels = y.astype(np.uint32)
    among = [0, 2, 3, 4]
    subsets, h, hy = _core.subset_entropies(columns, cards, labels, 3, among, 2)
    np.testing.assert_array_equal(subsets, list(itertools.combinations(among, 2)))
    for s, subset in enumerate(subsets):
        _, _, eh, ehy, _ = reference_stats(X, y, list(subset))
        assert h[s] == pytest.approx(eh)
        assert hy[s] == pytest.approx(ehy)
    _, h1, hy1 = _core.subset_entropies(
        columns, cards, labels, 3, among, 3, n_threads=1
    )
    _, h2, hy2 = _core.subset_entropies(
        columns, cards, labels, 3, among, 3, n_threads=2
    )
    np.testing.assert_array_equal(h1, h2)
    np.testing.assert_array_equal(hy1, hy2)


def test_partition_object_scores():
    X = np.array([[0, 1], [0, 0], [1, 1], [1, 0]])
    columns = np.ascontiguousarray(X.T, dtype=np.uint32)
    labels = np.array([0, 0, 1, 1], dtype=np.uint32)
    p = _core.Partition(4)
    assert repr(p) == "Partition(n_rows=4, n_classes=1)"
    n_classes, pairs, h, hy, f = p.refine(columns[0], 2).score(labels, 2)
    assert (n_classes, pairs, h, hy, f) == (2, 0, 1.0, 1.0, 2.0)
    out = p.score_candidates(
        columns, np.array([2, 2], dtype=np.uint32), labels, 2, [0, 1]
    )
    np.testing.assert_array_equal(out[4], [2.0, 1.0])


def test_dataframes_names_strings_and_encoded_tables():
    X = np.array([[0, 1], [0, 0], [1, 1], [1, 0]])
    y = np.array(["a", "a", "b", "b"])
    expect = discernibility(X, [0, 0, 1, 1], [0])
    pdf = pd.DataFrame(X, columns=["u", "v"])
    assert discernibility(pdf, y, ["u"]) == expect
    assert (
        discernibility(pl.DataFrame({"u": X[:, 0], "v": X[:, 1]}), pd.Series(y), ["u"])
        == expect
    )
    assert discernibility(X, [7, 7, -2, -2], []) == 0.0

    class Encoded:
        codes = X.astype(np.uint32)
        cardinalities = np.array([2, 2])

    assert discernibility(Encoded(), y, [0]) == expect
    assert score_candidates(pdf, y, ["u"], ["v"]).discernibility[0] == pytest.approx(
        brute_force_f(X, [0, 0, 1, 1], [0, 1])
    )


@pytest.mark.parametrize(
    ("X", "y", "features", "error", "match"),
    [
        ([[0, 1]], [0, 1], [0], ValueError, "y has 2 labels, expected 1"),
        ([[0, 1]], [[0]], [0], ValueError, "y must be 1-dimensional"),
        ([[0, 1]], [np.nan], [0], ValueError, "y must contain only finite"),
        ([[0, 1]], [0.5], [0], TypeError, "y must hold integers"),
        (
            [[0, 1], [1, 0]],
            [None, 1],
            [0],
            ValueError,
            "y must not contain missing labels",
        ),
        ([[0, 1]], [0], [2], ValueError, "out of range for 2 columns"),
        ([[0, 1]], [0], ["z"], ValueError, "'z', which is not a column"),
        ([[0, 1]], [0], 0, TypeError, "features must be a sequence"),
        ([[0, -1]], [0], [0], ValueError, "codes >= 0"),
        ([[0, np.nan]], [0], [0], ValueError, "finite codes"),
        ([[0, 0.5]], [0], [0], TypeError, "non-integral"),
        (np.zeros((0, 2)), [], [0], ValueError, "non-empty"),
        ([[0, 1], [1]], [0, 1], [0], ValueError, "ragged"),
    ],
)
def test_discernibility_validation(X, y, features, error, match):
    with pytest.raises(error, match=match):
        discernibility(X, y, features)


def test_cardinality_and_thread_validation():
    with pytest.raises(ValueError, match="is >= cardinality 1"):
        discernibility([[0, 1]], [0], [0], cardinalities=[1, 1])
    with pytest.raises(ValueError, match="n_threads must be >= 1"):
        discernibility([[0, 1]], [0], [0], n_threads=0)
    with pytest.raises(ValueError, match="candidates has column index 5"):
        score_candidates([[0, 1]], [0], [], [5])
    columns = np.zeros((1, 3), dtype=np.uint32)
    with pytest.raises(ValueError, match="column has 2 rows, expected 3"):
        _core.Partition(3).refine(np.zeros(2, dtype=np.uint32), 1)
    with pytest.raises(ValueError, match="labels has code 2"):
        _core.Partition(3).score(np.array([0, 2, 0], dtype=np.uint32), 2)
    with pytest.raises(ValueError, match="column index 4 is out of range"):
        _core.subset_entropies(
            columns,
            np.ones(1, dtype=np.uint32),
            np.zeros(3, dtype=np.uint32),
            1,
            [4],
            1,
        )


@given(
    hnp.arrays(
        st.sampled_from([np.int8, np.int64, np.uint64, np.float64]),
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
    ),
    hnp.arrays(st.sampled_from([np.int64, np.float64]), st.integers(0, 5)),
    st.lists(st.integers(-1, 4), max_size=3),
)
def test_no_input_panics(X, y, features):
    for call in (
        lambda: discernibility(X, y, features),
        lambda: score_candidates(X, y, features),
    ):
        with contextlib.suppress(ValueError, TypeError):
            call()
