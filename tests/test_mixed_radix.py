"""Mixed-radix encoding against numpy.ravel_multi_index / unravel_index."""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from privtab import DomainError, mixed_radix_decode, mixed_radix_encode


@st.composite
def tables(draw, max_card=50):
    d = draw(st.integers(1, 4))
    n = draw(st.integers(1, 40))
    cards = draw(st.lists(st.integers(1, max_card), min_size=d, max_size=d))
    cols = [
        draw(hnp.arrays(np.int64, n, elements=st.integers(0, k - 1))) for k in cards
    ]
    return np.stack(cols, axis=1), cards


@given(tables())
def test_encode_matches_ravel_multi_index(table):
    codes, cards = table
    keys = mixed_radix_encode(codes, cards)
    assert keys.dtype == np.uint64
    np.testing.assert_array_equal(keys, np.ravel_multi_index(codes.T, cards))
    decoded = mixed_radix_decode(keys, cards)
    assert decoded.dtype == np.uint32
    np.testing.assert_array_equal(decoded, codes)
    np.testing.assert_array_equal(
        decoded, np.stack(np.unravel_index(keys.astype(np.int64), cards), axis=1)
    )


def python_key(row, cards):
    key = 0
    for code, card in zip(row, cards, strict=True):
        key = key * card + int(code)
    return key


@given(
    st.lists(st.integers(1, 2**32 - 1), min_size=1, max_size=6).filter(
        lambda c: (
            np.prod([float(k) for k in c]) <= 2.0**64
            and __import__("math").prod(c) <= 2**64
        )
    ),
    st.randoms(use_true_random=False),
)
def test_big_cardinalities_against_python_ints(cards, random):
    rows = [[random.randrange(k) for k in cards] for _ in range(5)]
    rows.append([k - 1 for k in cards])
    codes = np.array(rows, dtype=np.uint32)
    keys = mixed_radix_encode(codes, cards)
    assert [int(k) for k in keys] == [python_key(r, cards) for r in rows]
    np.testing.assert_array_equal(mixed_radix_decode(keys, cards), codes)


def test_product_of_exactly_two_to_the_64_is_allowed():
    cards = [2**16] * 4
    codes = np.array([[2**16 - 1] * 4, [0, 0, 0, 1]])
    keys = mixed_radix_encode(codes, cards)
    assert int(keys[0]) == 2**64 - 1
    assert int(keys[1]) == 1
    np.testing.assert_array_equal(mixed_radix_decode([2**64 - 1, 1], cards), codes)


def test_product_above_two_to_the_64_is_a_domain_error():
    cards = [2**16] * 3 + [2**16 + 1]
    with pytest.raises(DomainError, match="exceeds 2\\*\\*64"):
        mixed_radix_encode(np.zeros((2, 4), dtype=int), cards)
    with pytest.raises(DomainError, match="exceeds 2\\*\\*64"):
        mixed_radix_decode([0], cards)


def test_dataframes_and_encoded_table_like_objects():
    codes = np.array([[0, 2], [1, 1], [1, 0]])
    expect = np.ravel_multi_index(codes.T, (2, 3))
    pdf = pd.DataFrame(codes, columns=["a", "b"])
    np.testing.assert_array_equal(mixed_radix_encode(pdf, [2, 3]), expect)
    pldf = pl.DataFrame({"a": codes[:, 0], "b": codes[:, 1]})
    np.testing.assert_array_equal(mixed_radix_encode(pldf, [2, 3]), expect)

    class Encoded:
        def __init__(self):
            self.codes = codes.astype(np.uint32)
            self.cardinalities = np.array([2, 3])

    np.testing.assert_array_equal(mixed_radix_encode(Encoded()), expect)


def test_thread_count_does_not_change_keys():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 7, (200_000, 3))
    one = mixed_radix_encode(codes, [7, 7, 7], n_threads=1)
    two = mixed_radix_encode(codes, [7, 7, 7], n_threads=2)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(
        mixed_radix_decode(one, [7, 7, 7], n_threads=1),
        mixed_radix_decode(one, [7, 7, 7], n_threads=2),
    )


@pytest.mark.parametrize(
    ("codes", "cards", "error", "match"),
    [
        ([[0, 3]], [2, 3], ValueError, "is >= cardinality 3"),
        ([[0, -1]], [2, 3], ValueError, "codes >= 0"),
        ([[0.0, np.nan]], [2, 3], ValueError, "finite codes"),
        ([[0.5, 1.0]], [2, 3], TypeError, "non-integral"),
        ([["a", "b"]], [2, 3], TypeError, "integer codes"),
        (np.zeros((0, 2)), [2, 3], ValueError, "non-empty"),
        ([[0, 1], [0]], [2, 3], ValueError, "ragged"),
        ([[0, 1]], [2, 3, 4], ValueError, "one entry per column"),
        ([[0, 1]], [2, 0], ValueError, "must be in \\[1"),
        ([[0, 1]], [2.0, 3.0], TypeError, "cardinalities must hold integers"),
        ([[0, 1]], None, ValueError, "cardinalities must be given"),
    ],
)
def test_encode_validation(codes, cards, error, match):
    with pytest.raises(error, match=match):
        mixed_radix_encode(codes, cards)


ENCODE_DTYPES = [
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.bool_,
    np.float64,
    np.dtype(">u2"),
]


@pytest.mark.parametrize("dtype", ENCODE_DTYPES)
@pytest.mark.parametrize("order", ["C", "F", "strided"])
def test_every_dtype_and_order_matches_ravel_multi_index(dtype, order):
    rng = np.random.default_rng(3)
    cards = np.array([2, 2, 2]) if dtype == np.bool_ else np.array([5, 1, 7, 3, 2])
    codes = np.column_stack([rng.integers(0, c, 2**17 + 3) for c in cards])
    data = codes.astype(dtype)
    if order == "F":
        data = np.asfortranarray(data)
    elif order == "strided":
        data, codes = data[::2, :], codes[::2, :]
    expect = np.ravel_multi_index(codes.T, cards)
    np.testing.assert_array_equal(mixed_radix_encode(data, cards), expect)
    np.testing.assert_array_equal(mixed_radix_encode(data, cards, n_threads=1), expect)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint32, np.uint64])
def test_bad_codes_name_the_first_row_and_column(order, dtype):
    codes = np.zeros((3 * 2**16, 3), dtype=dtype, order=order)
    codes[2**16 + 1, 2] = 4
    codes[2**16 + 1, 1] = 3
    codes[2**17, 0] = 9
    match = f"codes\\[{2**16 + 1}, 1\\] = 3 is >= cardinality 3 of column 1"
    for threads in (1, 2):
        with pytest.raises(ValueError, match=match):
            mixed_radix_encode(codes, [2, 3, 4], n_threads=threads)
    if np.dtype(dtype).kind == "i":
        codes[5, 2] = -1
        with pytest.raises(ValueError, match="codes >= 0, got codes\\[5, 2\\] = -1"):
            mixed_radix_encode(codes, [2, 3, 4])


@pytest.mark.parametrize(
    ("codes", "error", "match"),
    [
        ([[0.0, 2.0**70]], ValueError, "code above 2\\*\\*32 - 1"),
        ([[0.0, -(2.0**70)]], ValueError, "codes >= 0"),
        (np.array([[2**64 - 1, 0]], dtype=np.uint64), ValueError, "is >= cardinality"),
    ],
)
def test_codes_outside_int64_are_rejected(codes, error, match):
    with pytest.raises(error, match=match):
        mixed_radix_encode(codes, [2, 3])


@pytest.mark.parametrize(
    ("keys", "cards", "error", "match"),
    [
        ([12], [3, 4], ValueError, "keys\\[0\\] = 12 is >= the product"),
        ([-1], [3, 4], ValueError, "keys must be >= 0"),
        ([np.nan], [3, 4], ValueError, "finite"),
        ([1.5], [3, 4], TypeError, "non-integral"),
        (["a"], [3, 4], TypeError, "keys must hold integers"),
        ([2**64, 0], [3, 4], ValueError, "keys must be in \\[0, 2\\*\\*64\\)"),
        ([], [3, 4], ValueError, "keys must be non-empty"),
        ([[1]], [3, 4], ValueError, "1-dimensional"),
        ([1], [], ValueError, "non-empty 1-D"),
        ([1], [0, 4], ValueError, "must be in \\[1"),
    ],
)
def test_decode_validation(keys, cards, error, match):
    with pytest.raises(error, match=match):
        mixed_radix_decode(keys, cards)


def test_n_threads_is_validated():
    with pytest.raises(ValueError, match="n_threads must be >= 1"):
        mixed_radix_encode([[0]], [1], n_threads=0)


@given(
    hnp.arrays(
        st.sampled_from([np.int8, np.int64, np.uint32, np.float64, np.float32]),
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
    ),
    st.lists(st.integers(-1, 2**40), min_size=0, max_size=4),
)
def test_no_input_panics(codes, cards):
    for call in (
        lambda: mixed_radix_encode(codes, cards),
        lambda: mixed_radix_decode(codes, cards),
    ):
        with contextlib.suppress(ValueError, TypeError):
            call()
