import contextlib
import itertools
import time
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
import scipy.sparse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import privtab
from privtab import _core
from privtab.exceptions import LongSearchWarning
from privtab.itemsets import Itemsets, maximal_itemsets, maximal_kac_sets
from privtab.kac._binary import as_binary_matrix
from privtab.kac._itemsets import observe_search

fim = pytest.importorskip("fim")

FIMI_CASES = [
    ("chess", 2000),
    ("chess", 1500),
    pytest.param("chess", 1000, marks=pytest.mark.slow),
    ("mushroom", 800),
    ("mushroom", 300),
    ("mushroom", 100),
    ("connect", 50000),
    ("connect", 40000),
    ("retail", 100),
    ("retail", 50),
    ("T10I4D100K", 50),
    pytest.param("T10I4D100K", 10, marks=pytest.mark.slow),
]


# --- NumPy references ---------------------------------------------------------------


def reference_support(B, subset):
    return int(B[:, list(subset)].all(axis=1).sum())


def reference_anonymity(B, subset):
    P = B[:, list(subset)].astype(bool)
    # contained[u, v]: C_S(u) ⊆ C_S(v)
    contained = ~(P[:, None, :] & ~P[None, :, :]).any(axis=2)
    return int(contained.sum(axis=1).min()) if len(B) else 0


def brute_force(B, measure, threshold):
    m = B.shape[1]
    feasible = {}
    for r in range(m + 1):
        for subset in itertools.combinations(range(m), r):
            value = measure(B, subset)
            if value >= threshold:
                feasible[frozenset(subset)] = value
    return {
        s: v
        for s, v in feasible.items()
        if not any(s | {i} in feasible for i in range(m) if i not in s)
    }


def as_dict(sets):
    assert all(s.dtype == np.int64 for s in sets)
    assert all(np.all(np.diff(s) > 0) for s in sets)
    return {
        frozenset(s.tolist()): int(v) for s, v in zip(sets, sets.supports, strict=True)
    }


def assert_canonical_order(sets):
    keys = [(-len(s), s.tolist()) for s in sets]
    assert keys == sorted(keys)


binary_matrices = st.integers(1, 12).flatmap(
    lambda m: arrays(
        np.uint8, st.tuples(st.integers(1, 40), st.just(m)), elements=st.integers(0, 1)
    )
)


# --- exactness -----------------------------------------------------------------------


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(binary_matrices, st.integers(1, 8))
def test_maximal_itemsets_equal_brute_force(B, min_support):
    sets = maximal_itemsets(B, min_support)
    assert sets.complete
    assert_canonical_order(sets)
    assert as_dict(sets) == brute_force(B, reference_support, min_support)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(binary_matrices, st.integers(1, 8))
def test_maximal_kac_sets_equal_brute_force(B, k):
    sets = maximal_kac_sets(B, k)
    assert sets.complete
    assert_canonical_order(sets)
    assert as_dict(sets) == brute_force(B, reference_anonymity, k)


@settings(max_examples=40, deadline=None)
@given(
    binary_matrices, st.integers(1, 6), st.sampled_from(["frequency", "containment"])
)
def test_thread_count_does_not_change_the_result(B, threshold, predicate):
    matrix = as_binary_matrix(B)
    args = (matrix.indptr, matrix.indices, matrix.n_features, predicate, threshold)
    for max_sets in (None, 2):
        one = _core.maximal_sets(*args, max_sets=max_sets, n_threads=1)
        two = _core.maximal_sets(*args, max_sets=max_sets, n_threads=2)
        for a, b in zip(one[:3], two[:3], strict=True):
            np.testing.assert_array_equal(a, b)
        assert one[3] == two[3]


@pytest.mark.parametrize("function", [maximal_itemsets, privtab.maximal_kac_sets])
def test_public_n_threads_gives_the_same_sets_and_is_checked(function):
    B = np.random.default_rng(3).random((300, 14)) < 0.6
    one, two = function(B, 20, n_threads=1), function(B, 20, n_threads=2)
    assert [s.tolist() for s in one] == [s.tolist() for s in two]
    np.testing.assert_array_equal(one.supports, two.supports)
    with pytest.raises(ValueError, match="n_threads"):
        function(B, 20, n_threads=0)
    with pytest.raises(TypeError, match="n_threads"):
        function(B, 20, n_threads=1.5)


sparse_matrices = st.tuples(
    st.integers(1, 10), st.integers(1, 60), st.integers(0, 2**32 - 1)
).map(
    lambda a: (np.random.default_rng(a[2]).random((a[1], a[0])) < 0.2).astype(np.uint8)
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sparse_matrices, st.integers(1, 5), st.sampled_from([1, 2]))
def test_sparse_tables_equal_brute_force_on_one_and_two_threads(B, threshold, threads):
    # One thread searches in one sequence from the root, two split the top-level branches.
    sets = maximal_itemsets(B, threshold, n_threads=threads)
    assert sets.complete
    assert_canonical_order(sets)
    assert as_dict(sets) == brute_force(B, reference_support, threshold)
    kac = maximal_kac_sets(B, threshold, n_threads=threads)
    assert as_dict(kac) == brute_force(B, reference_anonymity, threshold)


def pyfim_maximal(B, min_support):
    transactions = [t.tolist() for t in np.split(B.indices, B.indptr[1:-1])]
    expected = fim.fpgrowth(transactions, target="m", supp=-min_support, report="a")
    return {frozenset(s): int(c) for s, c in expected}


@pytest.mark.parametrize(("name", "min_support"), FIMI_CASES)
def test_fimi_benchmarks_equal_pyfim(shared_data, name, min_support):
    B, _ = privtab.read_transactions(shared_data / "fimi" / f"{name}.dat")
    sets = maximal_itemsets(B, min_support)
    assert sets.complete
    assert_canonical_order(sets)
    assert as_dict(sets) == pyfim_maximal(B, min_support)


@pytest.mark.parametrize(
    ("name", "min_support"),
    [("retail", 20), ("T10I4D100K", 20), ("mushroom", 20), ("chess", 1500)],
)
def test_fimi_benchmarks_on_one_thread_equal_pyfim(shared_data, name, min_support):
    B, _ = privtab.read_transactions(shared_data / "fimi" / f"{name}.dat")
    sets = maximal_itemsets(B, min_support, n_threads=1)
    assert sets.complete
    assert_canonical_order(sets)
    assert as_dict(sets) == pyfim_maximal(B, min_support)


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
@pytest.mark.parametrize(
    ("name", "n_rows", "min_support"),
    [
        ("T10I4D100K", 40000, 8),
        ("retail", 40000, 6),
        ("mushroom", 8124, 300),
        ("retail", 300, 2),
    ],
)
def test_fimi_prefixes_equal_pyfim_on_any_thread_count(
    shared_data, name, n_rows, min_support, threads
):
    # Large enough to split subtrees of the first levels into tasks (the last case is
    # small enough to stay on the calling thread).
    B, _ = privtab.read_transactions(shared_data / "fimi" / f"{name}.dat")
    B = B[:n_rows]
    with privtab.threads(threads):
        sets = maximal_itemsets(B, min_support)
    assert sets.complete
    assert_canonical_order(sets)
    assert as_dict(sets) == pyfim_maximal(B, min_support)


@pytest.mark.parametrize("threads", [1, 2])
def test_more_items_than_the_bitset_cover_equal_pyfim(threads):
    # 6,000 frequent items: found sets are kept as item lists instead of bitsets.
    rng = np.random.default_rng(11)
    n_rows, n_items = 6000, 6000
    rows = [
        np.unique(rng.integers(0, n_items, size=rng.integers(1, 12)))
        for _ in range(n_rows)
    ]
    rows += [np.array([i]) for i in range(n_items)]
    indptr = np.cumsum([0] + [len(r) for r in rows])
    B = scipy.sparse.csr_array(
        (np.ones(indptr[-1], dtype=bool), np.concatenate(rows), indptr),
        shape=(len(rows), n_items),
    )
    assert (B.sum(axis=0) >= 2).sum() > 4096
    sets = maximal_itemsets(B, 2, n_threads=threads)
    assert sets.complete
    assert as_dict(sets) == pyfim_maximal(B, 2)


# --- inputs --------------------------------------------------------------------------


def test_every_input_form_gives_the_same_sets(tmp_path):
    rng = np.random.default_rng(5)
    B = (rng.random((60, 9)) < 0.5).astype(np.int64)
    path = tmp_path / "toy.dat"
    path.write_text(
        "\n".join(" ".join(str(i) for i in np.flatnonzero(row)) for row in B) + "\n"
    )
    from_file, item_ids = privtab.read_transactions(path)
    assert item_ids.tolist() == np.flatnonzero(B.any(axis=0)).tolist()
    forms = [
        B,
        B.astype(bool),
        pd.DataFrame(B),
        pl.DataFrame(B),
        scipy.sparse.csr_array(B),
        scipy.sparse.csc_matrix(B),
    ]
    if from_file.shape[1] == B.shape[1]:
        forms.append(from_file)
    for function, threshold in ((maximal_itemsets, 6), (maximal_kac_sets, 4)):
        expected = as_dict(function(B, threshold))
        for form in forms:
            assert as_dict(function(form, threshold)) == expected


def test_fractional_min_support_is_a_ceiling_of_rows():
    B = np.array([[1, 1], [1, 0], [1, 1], [0, 1]])
    assert as_dict(maximal_itemsets(B, 0.5)) == as_dict(maximal_itemsets(B, 2))
    assert as_dict(maximal_itemsets(B, 0.51)) == {frozenset({0}): 3, frozenset({1}): 3}


def test_thresholds_above_n_and_the_empty_set():
    B = np.array([[1, 0], [0, 1]])
    assert maximal_itemsets(B, 3) == []
    assert maximal_kac_sets(B, 3) == []
    only_empty = maximal_itemsets(B, 2)
    assert [s.tolist() for s in only_empty] == [[]]
    assert only_empty.supports.tolist() == [2]


def test_max_sets_truncates_deterministically():
    rng = np.random.default_rng(11)
    B = rng.random((300, 16)) < 0.6
    full = maximal_itemsets(B, 30)
    assert full.complete
    assert len(full) > 10
    part = maximal_itemsets(B, 30, max_sets=5)
    assert not part.complete
    assert len(part) == 5
    assert set(as_dict(part).items()) <= set(as_dict(full).items())
    again = maximal_itemsets(B, 30, max_sets=5)
    assert [s.tolist() for s in again] == [s.tolist() for s in part]
    kac = maximal_kac_sets(B, 3, max_sets=2)
    assert not kac.complete
    assert len(kac) == 2
    # The search stops at the cap, so exactly max_sets sets cannot be known complete.
    exact = maximal_itemsets(B, 30, max_sets=len(full))
    assert as_dict(exact) == as_dict(full)
    assert not exact.complete
    assert maximal_itemsets(B, 30, max_sets=len(full) + 1).complete


def dense_sets_matrix(n_rows, n_items, seed):
    # Half-dense random rows: at support 3, hundreds of thousands of maximal itemsets.
    return np.random.default_rng(seed).random((n_rows, n_items)) < 0.5


def test_max_sets_caps_the_whole_search_and_stops_it():
    # Each of the 60 top-level branches holds thousands of maximal sets. A cap per branch
    # searched up to 60 x 4000 sets (31 s on one loaded core); one cap for the whole
    # search stops after 4000 (0.06 s).
    B = dense_sets_matrix(2000, 60, 3)
    start = time.perf_counter()
    capped = maximal_itemsets(B, 3, max_sets=4000, n_threads=1)
    elapsed = time.perf_counter() - start
    assert len(capped) == 4000
    assert not capped.complete
    assert elapsed < 1.0, elapsed
    # The same sets on two threads: the first 4000 of the branches in their fixed order.
    two = maximal_itemsets(B, 3, max_sets=4000, n_threads=2)
    assert as_dict(two) == as_dict(capped)
    kac = maximal_kac_sets(B[:300, :24], 2, max_sets=50, n_threads=1)
    assert as_dict(maximal_kac_sets(B[:300, :24], 2, max_sets=50, n_threads=2)) == (
        as_dict(kac)
    )
    assert len(kac) == 50
    assert not kac.complete


@pytest.mark.parametrize(
    ("function", "threshold"), [(maximal_itemsets, 1), (maximal_kac_sets, 2)]
)
def test_a_long_search_without_time_limit_warns_while_it_runs(
    monkeypatch, function, threshold
):
    monkeypatch.setattr("privtab.kac._itemsets.LONG_SEARCH_SECONDS", 0.3)
    B = dense_sets_matrix(2000, 120, 5)
    start = time.perf_counter()
    # An error filter turns the warning into an exception that stops the search.
    with warnings.catch_warnings():
        warnings.simplefilter("error", LongSearchWarning)
        with pytest.raises(LongSearchWarning, match=r"time_limit=.*max_sets="):
            function(B, threshold)
    # Progress is reported every half second: the warning comes at the first report.
    assert time.perf_counter() - start < 3.0
    # With a time limit the search is bounded: no warning (an error here).
    bounded = function(B, threshold, time_limit=0.8)
    assert not bounded.complete


def test_search_progress_reaches_an_observer(monkeypatch):
    reports = []
    B = dense_sets_matrix(2000, 120, 5)
    with observe_search(lambda *report: reports.append(report)):
        maximal_itemsets(B, 1, time_limit=1.6)
    assert len(reports) >= 2
    seconds, found, done, branches = zip(*reports, strict=True)
    assert list(seconds) == sorted(seconds)
    assert list(found) == sorted(found)
    assert found[-1] > 0
    assert branches[-1] == 120
    assert all(0 <= d <= b for d, b in zip(done, branches, strict=True))


def test_time_limit_zero_stops_the_search():
    rng = np.random.default_rng(3)
    B = rng.random((400, 20)) < 0.7
    sets = maximal_itemsets(B, 5, time_limit=0)
    assert not sets.complete
    assert maximal_itemsets(B, 300, time_limit=60.0).complete


def test_itemsets_is_a_list():
    sets = maximal_itemsets(np.eye(3, dtype=int), 1)
    assert isinstance(sets, list)
    assert isinstance(sets, Itemsets)
    assert "3 sets, complete" in repr(sets)


# --- validation ----------------------------------------------------------------------


B_SMALL = np.array([[1, 0], [1, 1]])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"min_support": 0}, ValueError, "min_support must be >= 1, got 0"),
        ({"min_support": -3}, ValueError, "min_support must be >= 1"),
        ({"min_support": 0.0}, ValueError, r"fraction of rows in \(0, 1\)"),
        ({"min_support": 1.5}, ValueError, r"fraction of rows in \(0, 1\)"),
        ({"min_support": float("nan")}, ValueError, r"fraction of rows in \(0, 1\)"),
        (
            {"min_support": True},
            TypeError,
            "min_support must be an int or a float, got bool",
        ),
        ({"min_support": "2"}, TypeError, "min_support must be an int or a float"),
        ({"min_support": 1, "max_sets": 0}, ValueError, "max_sets must be >= 1"),
        ({"min_support": 1, "max_sets": 2.0}, TypeError, "max_sets must be an int"),
        (
            {"min_support": 1, "time_limit": -1.0},
            ValueError,
            "time_limit must be finite",
        ),
        (
            {"min_support": 1, "time_limit": "1"},
            TypeError,
            "time_limit must be a number",
        ),
    ],
)
def test_maximal_itemsets_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        maximal_itemsets(B_SMALL, **kwargs)


@pytest.mark.parametrize(
    ("k", "error", "match"),
    [
        (0, ValueError, "k must be >= 1, got 0"),
        (2.0, TypeError, "k must be an int, got float"),
        (np.True_, TypeError, "k must be an int or a float, got bool"),
    ],
)
def test_maximal_kac_sets_validation(k, error, match):
    with pytest.raises(error, match=match):
        maximal_kac_sets(B_SMALL, k)


def test_invalid_matrices_are_rejected():
    with pytest.raises(ValueError, match="must be binary"):
        maximal_itemsets(np.array([[0, 2]]), 1)
    with pytest.raises(ValueError, match="NaN or infinity"):
        maximal_kac_sets(np.array([[0.0, np.nan]]), 1)


def test_core_rejects_malformed_csr():
    indptr = np.array([0, 2], dtype=np.int64)
    with pytest.raises(ValueError, match="strictly increasing"):
        _core.maximal_sets(indptr, np.array([1, 1], dtype=np.uint32), 3, "frequency", 1)
    with pytest.raises(ValueError, match="predicate must be"):
        _core.maximal_sets(indptr, np.array([0, 1], dtype=np.uint32), 3, "other", 1)
    with pytest.raises(ValueError, match="n_threads must be >= 1"):
        _core.maximal_sets(
            indptr, np.array([0, 1], dtype=np.uint32), 3, "frequency", 1, n_threads=0
        )


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(0, 6), st.integers(0, 5)),
        elements=st.sampled_from([0, 1, 2, -1, np.nan, np.inf]),
    ),
    st.integers(-2, 10),
)
def test_no_input_makes_rust_panic(B, threshold):
    finite = np.where(np.isfinite(B), B, 0)
    forms = (B, finite.astype(np.int8), finite > 0)
    for function, form in itertools.product(
        (maximal_itemsets, maximal_kac_sets), forms
    ):
        with contextlib.suppress(ValueError, TypeError):
            function(form, threshold)


# --- FIMI reader ---------------------------------------------------------------------


def test_read_transactions_format(tmp_path):
    path = tmp_path / "t.dat"
    path.write_text("3 1\n\n0 5 2\n")
    B, item_ids = privtab.read_transactions(str(path))
    assert isinstance(B, scipy.sparse.csr_array)
    assert B.dtype == np.bool_
    assert B.shape == (3, 5)
    assert B.has_sorted_indices
    assert item_ids.dtype == np.int64
    assert item_ids.tolist() == [0, 1, 2, 3, 5]
    rows = [item_ids[np.flatnonzero(r)].tolist() for r in B.toarray()]
    assert rows == [[1, 3], [], [0, 2, 5]]
    path.write_text("1\r\n2 \n\n")
    B, item_ids = privtab.read_transactions(path)
    assert B.shape == (3, 2)
    assert item_ids.tolist() == [1, 2]
    path.write_text("")
    B, item_ids = privtab.read_transactions(path)
    assert B.shape == (0, 0)
    assert item_ids.shape == (0,)


def test_read_transactions_sizes_columns_by_the_distinct_items(tmp_path):
    # Two huge ids: two columns, not one per id below them.
    path = tmp_path / "huge.dat"
    path.write_text("4000000000 7\n\n4294967294\n7\n")
    B, item_ids = privtab.read_transactions(path)
    assert B.shape == (4, 3)
    assert item_ids.tolist() == [7, 4_000_000_000, 4_294_967_294]
    assert B.toarray().astype(int).tolist() == [
        [1, 1, 0],
        [0, 0, 0],
        [0, 0, 1],
        [1, 0, 0],
    ]
    sets = maximal_itemsets(B, 1)
    assert sorted(item_ids[s].tolist() for s in sets) == [
        [7, 4_000_000_000],
        [4_294_967_294],
    ]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("1 2\n3 x\n", r"line 2: \"x\" is not an item id"),
        ("-1\n", r"line 1: \"-1\" is not an item id"),
        ("1.5\n", r"\"1.5\" is not an item id"),
        ("99999999999\n", "is not an item id"),
        ("4 2 4\n", "line 1: item 4 is repeated"),
    ],
)
def test_read_transactions_errors(tmp_path, text, match):
    path = tmp_path / "bad.dat"
    path.write_text(text)
    with pytest.raises(ValueError, match=match) as info:
        privtab.read_transactions(path)
    assert "bad.dat" in str(info.value)


def test_read_transactions_path_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="cannot read"):
        privtab.read_transactions(tmp_path / "missing.dat")
    with pytest.raises(OSError, match="cannot read"):
        privtab.read_transactions(tmp_path)
    with pytest.raises(TypeError, match=r"path must be a str or os\.PathLike"):
        privtab.read_transactions(3)


def test_fimi_file_matches_a_python_parse(shared_data):
    path = shared_data / "fimi" / "retail.dat"
    B, item_ids = privtab.read_transactions(path)
    lines = path.read_text().splitlines()
    assert B.shape[0] == len(lines)
    assert item_ids.tolist() == sorted({int(x) for line in lines for x in line.split()})
    for row in (0, 1, 500, len(lines) - 1):
        expected = sorted(int(x) for x in lines[row].split())
        columns = B.indices[B.indptr[row] : B.indptr[row + 1]]
        assert item_ids[columns].tolist() == expected
