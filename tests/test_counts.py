"""Contingency tables, sparse counts and entropies against NumPy references."""

from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from privtab import (
    BudgetAccountant,
    BudgetExceededError,
    EncodedTable,
    PrivacyLeakWarning,
    contingency_table,
    dp_contingency_table,
    entropy,
    mutual_information,
    symmetric_uncertainty,
)
from privtab.counts import SparseCounts, count_columns, count_keys


@st.composite
def code_pairs(draw, max_card=30, max_n=60):
    n = draw(st.integers(1, max_n))
    kx = draw(st.integers(1, max_card))
    ky = draw(st.integers(1, max_card))
    x = draw(hnp.arrays(np.int64, n, elements=st.integers(0, kx - 1)))
    y = draw(hnp.arrays(np.int64, n, elements=st.integers(0, ky - 1)))
    return x, y, kx, ky


def reference_table(x, y, kx, ky):
    return np.bincount(x * ky + y, minlength=kx * ky).reshape(kx, ky)


def reference_entropy(counts):
    counts = np.asarray(counts, dtype=float).ravel()
    total = counts.sum()
    if total == 0:
        return 0.0
    p = counts[counts > 0] / total
    return float(-(p * np.log2(p)).sum())


def reference_h(codes):
    return reference_entropy(np.unique(codes, return_counts=True)[1])


def reference_hxy(x, y):
    return reference_entropy(np.unique(np.stack([x, y]), axis=1, return_counts=True)[1])


@given(code_pairs())
def test_dense_table_matches_bincount(pair):
    x, y, kx, ky = pair
    table = contingency_table(x, y, kx, ky)
    assert table.dtype == np.int64
    np.testing.assert_array_equal(table, reference_table(x, y, kx, ky))
    with pytest.warns(PrivacyLeakWarning):
        inferred = contingency_table(x, y)
    assert inferred.shape == (x.max() + 1, y.max() + 1)


@given(code_pairs(max_card=2**20))
def test_sparse_table_matches_unique(pair):
    x, y, kx, ky = pair
    sparse = contingency_table(x, y, kx, ky, sparse=True)
    keys, counts = np.unique(
        x.astype(np.uint64) * ky + y.astype(np.uint64), return_counts=True
    )
    np.testing.assert_array_equal(sparse.keys, keys)
    np.testing.assert_array_equal(sparse.counts, counts)
    assert sparse.cardinalities == (kx, ky)
    assert sparse.total == len(x)


def test_large_tables_fall_back_to_sparse_counting_in_core():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2**31, 1000)
    y = rng.integers(0, 2**31, 1000)
    expect_mi = reference_h(x) + reference_h(y) - reference_hxy(x, y)
    assert mutual_information(x, y) == pytest.approx(expect_mi, rel=1e-12)


def test_tables_over_many_row_blocks_and_threads():
    rng = np.random.default_rng(4)
    n = 700_000
    for kx, ky in [(3, 5), (300, 400)]:
        x = rng.integers(0, kx, n)
        y = rng.integers(0, ky, n)
        one = contingency_table(x, y, kx, ky, n_threads=1)
        np.testing.assert_array_equal(one, reference_table(x, y, kx, ky))
        np.testing.assert_array_equal(one, contingency_table(x, y, kx, ky, n_threads=2))
        a = contingency_table(x, y, kx, ky, sparse=True, n_threads=1)
        assert a == contingency_table(x, y, kx, ky, sparse=True, n_threads=2)


@given(
    hnp.arrays(np.uint64, st.integers(0, 200), elements=st.integers(0, 2**64 - 1)),
    st.integers(0, 200),
)
def test_count_keys_merge_equals_whole(keys, cut):
    cut = min(cut, len(keys))
    if len(keys) == 0:
        return
    whole = count_keys(keys)
    expect_keys, expect_counts = np.unique(keys, return_counts=True)
    np.testing.assert_array_equal(whole.keys, expect_keys)
    np.testing.assert_array_equal(whole.counts, expect_counts)
    if 0 < cut < len(keys):
        merged = count_keys(keys[:cut]).merge(count_keys(keys[cut:]))
        assert merged == whole


def test_count_keys_over_several_sort_blocks():
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 5000, 2_500_000).astype(np.uint64) << np.uint64(40)
    whole = count_keys(keys, n_threads=2)
    expect_keys, expect_counts = np.unique(keys, return_counts=True)
    np.testing.assert_array_equal(whole.keys, expect_keys)
    np.testing.assert_array_equal(whole.counts, expect_counts)
    assert whole == count_keys(keys, n_threads=1)


def test_k_way_counts_use_mixed_radix_keys():
    rng = np.random.default_rng(6)
    codes = rng.integers(0, [3, 4, 5], (500, 3))
    counts = count_columns(codes, [3, 4, 5], [2, 0])
    rows, expect = np.unique(codes[:, [2, 0]], axis=0, return_counts=True)
    np.testing.assert_array_equal(counts.to_codes(), rows)
    np.testing.assert_array_equal(counts.counts, expect)
    assert counts.cardinalities == (5, 3)
    halves = count_columns(codes[:250], [3, 4, 5], [2, 0]).merge(
        count_columns(codes[250:], [3, 4, 5], [2, 0])
    )
    assert halves == counts


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint32, np.int64])
def test_k_way_counts_of_row_major_codes_read_in_place(dtype):
    """C-ordered integer codes are counted as they are (no column-major copy): the
    same counts as a NumPy reference, and the same errors as other layouts."""
    rng = np.random.default_rng(16)
    cards = [3, 200, 7, 120]
    codes = rng.integers(0, cards, (70_000, 4)).astype(dtype)
    for subset in ([2, 0], [1, 3, 2], [3, 3], None):
        counted = list(range(4)) if subset is None else subset
        counts = count_columns(codes, cards, subset)
        rows, expect = np.unique(codes[:, counted], axis=0, return_counts=True)
        np.testing.assert_array_equal(counts.to_codes(), rows)
        np.testing.assert_array_equal(counts.counts, expect)
        assert counts == count_columns(np.asfortranarray(codes), cards, subset)
        assert counts == count_columns(codes, cards, subset, n_threads=1)
    bad = codes.copy()
    bad[4000, 3] = 120
    bad[60_000, 0] = 3
    messages = []
    for layout in (bad, np.asfortranarray(bad)):
        with pytest.raises(ValueError, match=r"codes\[4000, 3\] = 120") as caught:
            count_columns(layout, cards, [2])
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    if np.dtype(dtype).kind == "i":
        bad[10, 1] = -1
        with pytest.raises(ValueError, match=r"codes >= 0, got -1"):
            count_columns(bad, cards, [0])


@given(
    hnp.arrays(
        st.sampled_from([np.int64, np.float64]),
        hnp.array_shapes(max_dims=3),
        elements=st.integers(0, 10**6),
    )
)
def test_entropy_matches_reference(counts):
    assert entropy(counts) == pytest.approx(reference_entropy(counts), abs=1e-9)


def test_entropy_edge_cases():
    assert entropy([0, 0, 0]) == 0.0
    assert entropy([]) == 0.0
    assert entropy([[1, 1], [1, 1]]) == pytest.approx(2.0)
    assert entropy([1e308, 1e308]) == pytest.approx(1.0)


@given(code_pairs())
def test_mi_and_su_match_reference(pair):
    x, y, _, _ = pair
    hx, hy, hxy = reference_h(x), reference_h(y), reference_hxy(x, y)
    mi = mutual_information(x, y)
    assert mi == pytest.approx(hx + hy - hxy, abs=1e-9)
    su = symmetric_uncertainty(x, y)
    expect = 0.0 if hx + hy == 0 else 2 * (hx + hy - hxy) / (hx + hy)
    assert su == pytest.approx(expect, abs=1e-9)
    assert 0.0 <= su <= 1.0


def test_su_of_constant_variables_is_zero():
    assert symmetric_uncertainty([3, 3, 3], [0, 0, 0]) == 0.0
    assert symmetric_uncertainty([0, 1, 0, 1], [0, 1, 0, 1]) == pytest.approx(1.0)


def test_series_inputs():
    x = [0, 1, 1, 2]
    y = [1, 0, 0, 1]
    expect = contingency_table(x, y, 3, 2)
    np.testing.assert_array_equal(
        contingency_table(pd.Series(x), pd.Series(y), 3, 2), expect
    )
    np.testing.assert_array_equal(
        contingency_table(pl.Series(x), pl.Series(y), 3, 2), expect
    )


@pytest.mark.parametrize(
    "dtype", ["uint8", "int8", "uint16", "int32", "uint64", "bool", "Int16"]
)
def test_series_of_every_integer_dtype_count_as_their_values(dtype):
    """Series are read in their own dtype (a numpy-backed one without a copy)."""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 2, 500)
    y = rng.integers(0, 2, 500)
    table = contingency_table(
        pd.Series(x).astype(dtype), pl.Series(y).cast(pl.UInt8), 2, 2
    )
    np.testing.assert_array_equal(table, reference_table(x, y, 2, 2))
    big = pd.Series(np.array([0, 2**63 + 5], dtype=np.uint64))
    with pytest.raises(ValueError, match=r"x\[1\] = 9223372036854775813 is >= kx"):
        contingency_table(big, [0, 0], 2, 1)
    with pytest.raises(ValueError, match=r"found NaN at row 1"):
        contingency_table(pd.Series([1, None, 0], dtype="Int16"), [0, 0, 0], 2, 1)


@pytest.mark.parametrize(
    ("x", "y", "kwargs", "error", "match"),
    [
        ([0, 3], [0, 0], {"kx": 3}, ValueError, "x\\[1\\] = 3 is >= kx = 3"),
        (
            np.array([0, 3], dtype=np.uint32),
            [0, 0],
            {"kx": 3},
            ValueError,
            "x\\[1\\] = 3 is >= kx = 3",
        ),
        (
            np.array([0, -1], dtype=np.int8),
            [0, 0],
            {"kx": 3},
            ValueError,
            "x must hold codes >= 0, got x\\[1\\] = -1",
        ),
        (
            [0, 1],
            np.array([1, 2], dtype=np.uint64),
            {"ky": 2},
            ValueError,
            "y\\[1\\] = 2 is >= ky = 2",
        ),
        ([0, -1], [0, 0], {}, ValueError, "x must hold codes >= 0"),
        ([0, np.nan], [0, 0], {}, ValueError, "x must contain only finite"),
        ([0, 0.5], [0, 0], {}, TypeError, "x must hold integers"),
        (["a"], [0], {}, TypeError, "x must hold integers"),
        ([[0, 1], [0]], [0, 0], {}, ValueError, "x is ragged"),
        ([], [], {}, ValueError, "x must be non-empty"),
        ([[0, 1]], [0, 1], {}, ValueError, "x must be 1-dimensional"),
        ([0, 1], [0], {}, ValueError, "same length"),
        ([0, 1], [0, 1], {"kx": 0}, ValueError, "kx must be >= 1"),
        ([0, 1], [0, 1], {"ky": 1.5}, TypeError, "ky must be an int"),
        ([0, 1], [0, 1], {"kx": 2**32}, ValueError, "kx must be <= 2\\*\\*32 - 1"),
        ([0, 2**32], [0, 1], {}, ValueError, "code above 2\\*\\*32 - 2"),
        ([0, 1], [0, 1], {"n_threads": 0}, ValueError, "n_threads must be >= 1"),
        (
            [0],
            [0],
            {"kx": 2**32 - 1, "ky": 2**32 - 1},
            MemoryError,
            "cannot be allocated",
        ),
    ],
)
def test_contingency_validation(x, y, kwargs, error, match):
    with pytest.raises(error, match=match):
        contingency_table(x, y, **kwargs)


CODE_DTYPES = [
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.bool_,
    np.float32,
    np.dtype(">i4"),
]


@pytest.mark.parametrize("dtype", CODE_DTYPES)
@pytest.mark.parametrize("sparse", [False, True])
def test_every_code_dtype_matches_bincount(dtype, sparse):
    rng = np.random.default_rng(7)
    n = 3 * 2**16 + 11
    kx, ky = (2, 2) if dtype == np.bool_ else (9, 4)
    x = rng.integers(0, kx, n)
    y = rng.integers(0, ky, n)
    expect = reference_table(x, y, kx, ky)
    xs, ys = x.astype(dtype), y.astype(dtype)
    table = contingency_table(xs, ys, kx, ky, sparse=sparse, n_threads=2)
    if sparse:
        cells = np.zeros(kx * ky, dtype=np.int64)
        cells[table.keys.astype(np.int64)] = table.counts
        table = cells.reshape(kx, ky)
    np.testing.assert_array_equal(table, expect)
    np.testing.assert_array_equal(
        contingency_table(xs[::-3], ys[::-3], kx, ky),
        reference_table(x[::-3], y[::-3], kx, ky),
    )


@pytest.mark.parametrize(
    ("x_dtype", "y_dtype"),
    [(np.int64, np.uint8), (np.uint64, np.int32), (np.uint16, np.int8)],
)
def test_mixed_code_dtypes(x_dtype, y_dtype):
    rng = np.random.default_rng(8)
    x = rng.integers(0, 5, 1000)
    y = rng.integers(0, 3, 1000)
    table = contingency_table(x.astype(x_dtype), y.astype(y_dtype), 5, 3)
    np.testing.assert_array_equal(table, reference_table(x, y, 5, 3))


def test_first_bad_row_is_named_for_any_thread_count():
    n = 5 * 2**16
    x = np.zeros(n, dtype=np.int64)
    x[[3 * 2**16 + 1, 4 * 2**16]] = [-5, 9]
    y = np.zeros(n, dtype=np.int64)
    y[7] = 2**40
    for threads in (1, 2):
        with pytest.raises(ValueError, match=f"got x\\[{3 * 2**16 + 1}\\] = -5"):
            contingency_table(x, y, 3, 2, n_threads=threads)
        with pytest.raises(ValueError, match=f"y\\[7\\] = {2**40} is >= ky = 2"):
            contingency_table(np.zeros(n, dtype=np.int64), y, 3, 2, n_threads=threads)
    big = np.array([0, 2**63 + 5], dtype=np.uint64)
    with pytest.raises(ValueError, match="is >= kx = 3"):
        contingency_table(big, np.array([0, 1], dtype=np.int64), 3, 2)


@pytest.mark.parametrize(
    ("counts", "error", "match"),
    [
        ([1, -1], ValueError, "counts must be >= 0"),
        ([1, np.nan], ValueError, "finite"),
        ([1, np.inf], ValueError, "finite"),
        (["a"], TypeError, "numeric"),
    ],
)
def test_entropy_validation(counts, error, match):
    with pytest.raises(error, match=match):
        entropy(counts)


def test_mi_validation():
    with pytest.raises(ValueError, match="same length"):
        mutual_information([0, 1], [0])
    with pytest.raises(ValueError, match="same length"):
        symmetric_uncertainty([0, 1], [0])


def test_sparse_counts_validation():
    with pytest.raises(ValueError, match="strictly increasing"):
        SparseCounts([2, 1], [1, 1])
    with pytest.raises(ValueError, match="same length"):
        SparseCounts([1, 2], [1])
    with pytest.raises(ValueError, match="counts must be >= 1"):
        SparseCounts([1], [0])
    with pytest.raises(TypeError, match="counts must hold integers"):
        SparseCounts([1], [1.5])
    a = SparseCounts([1], [1], cardinalities=[4])
    with pytest.raises(ValueError, match="different cardinalities"):
        a.merge(SparseCounts([1], [1], cardinalities=[5]))
    with pytest.raises(TypeError, match="must be a SparseCounts"):
        a.merge([1])
    with pytest.raises(ValueError, match="exceed 2\\*\\*63 - 1"):
        SparseCounts([1], [2**63 - 1]).merge(SparseCounts([1], [1]))
    with pytest.raises(ValueError, match="needs the cardinalities"):
        SparseCounts([1], [1]).to_codes()
    with pytest.raises(ValueError, match="out of range"):
        count_columns([[0, 1]], [1, 2], [2])


@given(
    hnp.arrays(
        st.sampled_from(
            [np.int8, np.int64, np.uint64, np.float64, np.float32, np.bool_]
        ),
        hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=5),
    ),
    hnp.arrays(np.float64, st.integers(0, 5)),
    st.one_of(st.none(), st.integers(-2, 2**33)),
)
def test_no_input_panics(x, y, k):
    calls = [
        lambda: contingency_table(x, x, k, k),
        lambda: contingency_table(x, y),
        lambda: contingency_table(x, x, k, 3, sparse=True),
        lambda: entropy(x),
        lambda: mutual_information(x, y),
        lambda: symmetric_uncertainty(x, x),
        lambda: count_keys(x),
    ]
    for call in calls:
        with (
            contextlib.suppress(ValueError, TypeError, MemoryError),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            call()


# Shapes: declared, or warned about ---------------------------------------------------
# D and its neighbour D' (the last record replaced): the largest codes of x and y are
# held by that record only.
X_D, Y_D = [0, 1, 1, 2], [0, 0, 0, 2]
X_NEIGHBOUR, Y_NEIGHBOUR = [0, 1, 1, 1], [0, 0, 0, 0]


def _shape(table):
    return table.cardinalities if isinstance(table, SparseCounts) else table.shape


INFERRED_SHAPES = {
    "dense": lambda x, y: contingency_table(x, y),
    "dense, kx declared": lambda x, y: contingency_table(x, y, 3),
    "dense, ky declared": lambda x, y: contingency_table(x, y, ky=3),
    "sparse": lambda x, y: contingency_table(x, y, sparse=True),
}


@pytest.mark.parametrize("count", INFERRED_SHAPES.values(), ids=list(INFERRED_SHAPES))
def test_a_table_whose_shape_comes_from_the_data_warns(count):
    with pytest.warns(PrivacyLeakWarning, match="contingency_table: the cardinal") as w:
        on_data = count(X_D, Y_D)
    assert "pass kx and ky" in str(w[0].message)
    assert w[0].filename == __file__
    with pytest.warns(PrivacyLeakWarning):
        on_neighbour = count(X_NEIGHBOUR, Y_NEIGHBOUR)
    # What the warning is about: the shape tells the two data sets apart.
    assert _shape(on_data) != _shape(on_neighbour)


@pytest.mark.parametrize("sparse", [False, True])
def test_a_declared_shape_is_the_same_on_neighbours(sparse):
    on_data = contingency_table(X_D, Y_D, 4, 3, sparse=sparse)
    on_neighbour = contingency_table(X_NEIGHBOUR, Y_NEIGHBOUR, 4, 3, sparse=sparse)
    assert _shape(on_data) == _shape(on_neighbour) == (4, 3)


# dp_contingency_table ----------------------------------------------------------------
def _encoded(x, y, kx=4, ky=3):
    return EncodedTable(np.column_stack([x, y]), [kx, ky], columns=["edu", "income"])


def test_dp_contingency_table_has_the_declared_shape_on_neighbours():
    # Code 3 of "edu" is held by no record of either data set.
    acc = BudgetAccountant(2.0)
    on_data = dp_contingency_table(
        _encoded(X_D, Y_D), "edu", "income", 1.0, accountant=acc
    )
    on_neighbour = dp_contingency_table(
        _encoded(X_NEIGHBOUR, Y_NEIGHBOUR), "edu", "income", 1.0, accountant=acc
    )
    assert on_data.shape == on_neighbour.shape == (4, 3)
    assert on_data.dtype == on_neighbour.dtype == np.int64
    assert acc.spent == 2.0
    assert [e.label for e in acc.ledger] == [
        "dp_contingency_table('edu', 'income')"
    ] * 2


def test_dp_contingency_table_counts_the_two_columns():
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 5, 300), rng.integers(0, 4, 300)
    table = EncodedTable(np.column_stack([y, rng.integers(0, 2, 300), x]), [4, 2, 6])
    # Noise of scale 2e-12: P(a cell moves) = 2q / (1 + q), q = exp(-5e11), is 0.
    noisy = dp_contingency_table(
        table, "x2", "x0", 1e12, accountant=BudgetAccountant(), random_state=0
    )
    np.testing.assert_array_equal(noisy, reference_table(x, y, 6, 4))


def test_dp_contingency_table_noise_has_scale_two_over_epsilon():
    table = EncodedTable(np.zeros((10, 2), dtype=np.uint32), [100, 60])
    epsilon = 1.0
    noisy = dp_contingency_table(
        table, "x0", "x1", epsilon, accountant=BudgetAccountant(), random_state=1
    )
    noise = noisy - reference_table(np.zeros(10, int), np.zeros(10, int), 100, 60)
    # Discrete Laplace of scale t = sensitivity / epsilon = 2: variance 2q / (1 - q)**2,
    # q = exp(-1/t); 6000 cells measure it within a few percent (a scale of 1 gives 1.84).
    q = math.exp(-epsilon / 2.0)
    assert noise.var() == pytest.approx(2 * q / (1 - q) ** 2, rel=0.15)
    assert abs(noise.mean()) < 0.2


def test_dp_contingency_table_refuses_before_reading_the_data():
    acc = BudgetAccountant(0.5)
    with pytest.raises(BudgetExceededError):
        dp_contingency_table(_encoded(X_D, Y_D), "edu", "income", 1.0, accountant=acc)
    with pytest.raises(
        TypeError, match=r"table must be an EncodedTable .*TableEncoder"
    ):
        dp_contingency_table(np.zeros((3, 2)), "x0", "x1", 0.1, accountant=acc)
    with pytest.raises(KeyError, match="col_b = 'age' is not a column of table"):
        dp_contingency_table(_encoded(X_D, Y_D), "edu", "age", 0.1, accountant=acc)
    with pytest.raises(ValueError, match="epsilon must be finite and > 0"):
        dp_contingency_table(_encoded(X_D, Y_D), "edu", "income", 0.0, accountant=acc)
    assert acc.ledger == []
