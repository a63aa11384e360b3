"""The counting methods on Dask collections give the in-memory answer, bit for bit.

One ``distributed.LocalCluster`` (2 worker processes) serves the module. Every test
runs a method on numpy data and on the same rows as Dask partitions with the same
seed, and compares the results exactly.
"""

import re

import numpy as np
import pandas as pd
import pytest
from _dask import dask_modules, local_client

import privtab as pt
from privtab.dilca import max_dependency_context, max_relevance_context
from privtab.exceptions import PrivacyLeakWarning

dask, distributed, da, dd = dask_modules()

N_ROWS = 3000
CARDS = [4, 5, 3, 5, 6, 7]


@pytest.fixture(scope="module")
def client():
    with local_client() as client:
        yield client


@pytest.fixture(scope="module")
def data():
    """Codes correlated with a 3-class label; some columns are noise."""
    rng = np.random.default_rng(20121)
    y = rng.integers(0, 3, size=N_ROWS)
    X = np.column_stack(
        [
            (y + rng.integers(0, 2, size=N_ROWS)) % 4,
            rng.integers(0, 5, size=N_ROWS),
            (y + rng.integers(0, 2, size=N_ROWS)) % 3,
            rng.integers(0, 5, size=N_ROWS),
            (2 * y + rng.integers(0, 3, size=N_ROWS)) % 6,
            rng.integers(0, 7, size=N_ROWS),
        ]
    ).astype(np.int64)
    return X, y


def as_array(X, chunk=700):
    return da.from_array(X, chunks=(chunk, X.shape[1]) if X.ndim == 2 else chunk)


def as_frame(X, y=None, npartitions=4):
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    if y is not None:
        frame["label"] = y
    return dd.from_pandas(frame, npartitions=npartitions)


def fresh():
    return pt.BudgetAccountant()


# Counting primitives ---------------------------------------------------------------
def test_counts_merge_to_the_in_memory_counts(client, data):
    X, _ = data
    frame = as_frame(X)
    assert pt.count_columns(as_array(X), CARDS) == pt.count_columns(X, CARDS)
    assert pt.count_columns(frame, CARDS, [4, 0]) == pt.count_columns(X, CARDS, [4, 0])
    keys = pt.mixed_radix_encode(X, CARDS)
    assert pt.count_keys(as_array(keys, 500)) == pt.count_keys(keys)
    dense = pt.contingency_table(frame["c0"], frame["c4"], 4, 6)
    np.testing.assert_array_equal(dense, pt.contingency_table(X[:, 0], X[:, 4], 4, 6))
    assert dense.dtype == np.int64
    # A shape read off the partitions warns as in memory, at the caller's line.
    with pytest.warns(PrivacyLeakWarning, match=r"cardinalities \(kx, ky\)") as caught:
        inferred = pt.contingency_table(frame["c0"], frame["c4"])
    assert caught[0].filename == __file__
    with pytest.warns(PrivacyLeakWarning, match=r"cardinalities \(kx, ky\)"):
        np.testing.assert_array_equal(inferred, pt.contingency_table(X[:, 0], X[:, 4]))
    sparse = pt.contingency_table(frame["c0"], frame["c4"], 4, 6, sparse=True)
    assert sparse == pt.contingency_table(X[:, 0], X[:, 4], 4, 6, sparse=True)


def test_counts_do_not_depend_on_the_partitioning(client, data):
    X, _ = data
    expected = pt.count_columns(X, CARDS, [1, 3])
    for chunk in (N_ROWS, 1001, 97):
        assert pt.count_columns(as_array(X, chunk), CARDS, [1, 3]) == expected


def test_a_bad_code_in_a_partition_is_named(client, data):
    X, _ = data
    bad = X.copy()
    bad[2500, 2] = 3
    with pytest.raises(ValueError, match=r"codes\[\d+, 2\] = 3 is >= cardinality 3"):
        pt.count_columns(as_array(bad), CARDS)


def test_a_bad_code_names_its_partition_and_column_in_one_line(client, data):
    X, _ = data
    frame_of = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    bad = frame_of.copy()
    bad.loc[2900, "c2"] = 3  # the last of 4 partitions of 750 rows: its row 650
    with pytest.raises(ValueError, match=r"^partition 3 of codes") as caught:
        pt.count_columns(dd.from_pandas(bad, npartitions=4), CARDS)
    message = str(caught.value)
    assert message.startswith(
        "partition 3 of codes: codes[650, 2] = 3 is >= cardinality 3"
    )
    assert message.count("column 'c2'") == 1
    assert "\n" not in message
    negative = frame_of.copy()
    negative.loc[10, "c4"] = -1
    with pytest.raises(
        ValueError, match=r"^partition 0 of codes: .*codes >= 0, got -1.*column 'c4'"
    ):
        pt.count_columns(dd.from_pandas(negative, npartitions=4), CARDS)


# Thresholded histogram ------------------------------------------------------------
@pytest.mark.parametrize("noise", ["laplace", "discrete"])
def test_thresholded_histogram_is_the_same_release(client, data, noise):
    X, _ = data
    for seed in (0, 1, 2):
        memory = pt.thresholded_histogram(
            X, CARDS, 1.0, noise=noise, random_state=seed, accountant=fresh()
        )
        acc = fresh()
        spread = pt.thresholded_histogram(
            as_frame(X), CARDS, 1.0, noise=noise, random_state=seed, accountant=acc
        )
        np.testing.assert_array_equal(spread.keys, memory.keys)
        np.testing.assert_array_equal(spread.values, memory.values)
        assert (spread.threshold, spread.n_rows) == (memory.threshold, memory.n_rows)
        assert acc.spent == 1.0


def test_inferred_cardinalities_warn_as_in_memory(client, data):
    X, _ = data
    with pytest.warns(PrivacyLeakWarning, match="cardinalities of codes") as caught:
        spread = pt.thresholded_histogram(
            as_array(X), None, 1.0, random_state=4, accountant=fresh()
        )
    assert caught[0].filename == __file__
    with pytest.warns(PrivacyLeakWarning, match="cardinalities of codes"):
        memory = pt.thresholded_histogram(
            X, None, 1.0, random_state=4, accountant=fresh()
        )
    assert spread.cardinalities == memory.cardinalities
    np.testing.assert_array_equal(spread.values, memory.values)


def test_histogram_size_is_checked_before_counting(client, data):
    X, _ = data
    with pytest.raises(pt.DomainError, match="max_cells = 10"):
        pt.thresholded_histogram(
            as_array(X), CARDS, 1.0, threshold=0.0, max_cells=10, accountant=fresh()
        )


# Dask's Parquet reader calls a pandas method that pandas 3.1 deprecates.
@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame")
def test_parquet_partitions_on_disk(client, data, tmp_path):
    X, _ = data
    as_frame(X, npartitions=5).to_parquet(tmp_path / "codes")
    frame = dd.read_parquet(tmp_path / "codes")
    memory = pt.thresholded_histogram(X, CARDS, 0.5, random_state=9, accountant=fresh())
    spread = pt.thresholded_histogram(
        frame, CARDS, 0.5, random_state=9, accountant=fresh()
    )
    np.testing.assert_array_equal(spread.keys, memory.keys)
    np.testing.assert_array_equal(spread.values, memory.values)


# Discernibility ----------------------------------------------------------------
def test_greedy_discernibility_is_the_same_order(client, data):
    X, y = data
    expected = pt.greedy_discernibility(X, y, 6, cardinalities=CARDS)
    frame = as_frame(X, y)
    got = pt.greedy_discernibility(
        frame.drop(columns="label"), frame["label"], 6, cardinalities=CARDS
    )
    np.testing.assert_array_equal(got, expected)


def test_private_kd_draws_the_same_attributes(client, data):
    X, y = data
    for seed in range(4):
        memory = pt.PrivateKD(
            4, 1.0, random_state=seed, accountant=fresh(), classes=[0, 1, 2]
        ).fit(X, y, cardinalities=CARDS)
        spread = pt.PrivateKD(
            4, 1.0, random_state=seed, accountant=fresh(), classes=[0, 1, 2]
        ).fit(as_array(X), as_array(y), cardinalities=CARDS)
        np.testing.assert_array_equal(spread.selection_order_, memory.selection_order_)
        assert spread.privacy_ledger_ == memory.privacy_ledger_


def test_private_kd_once_the_labels_are_discerned_or_with_one_label(client, data):
    X, y = data
    separated = X.copy()
    separated[:, 2] = y  # column 2 alone discerns every pair of labels
    for labels in (y, np.zeros_like(y)):
        for seed in (0, 1):
            memory = pt.PrivateKD(
                5, 1.0, random_state=seed, accountant=fresh(), classes=[0, 1, 2]
            ).fit(separated, labels, cardinalities=CARDS)
            spread = pt.PrivateKD(
                5, 1.0, random_state=seed, accountant=fresh(), classes=[0, 1, 2]
            ).fit(as_array(separated), as_array(labels), cardinalities=CARDS)
            np.testing.assert_array_equal(
                spread.selection_order_, memory.selection_order_
            )
        np.testing.assert_array_equal(
            pt.greedy_discernibility(
                as_array(separated), as_array(labels), 6, cardinalities=CARDS
            ),
            pt.greedy_discernibility(separated, labels, 6, cardinalities=CARDS),
        )


def test_private_kd_infers_labels_with_the_same_warnings(client, data):
    X, y = data
    with pytest.warns(PrivacyLeakWarning) as caught:
        spread = pt.PrivateKD(6, 50.0, random_state=3, accountant=fresh()).fit(
            as_array(X), as_array(y)
        )
    messages = sorted(str(w.message)[:40] for w in caught)
    assert all(w.filename == __file__ for w in caught)
    with pytest.warns(PrivacyLeakWarning) as caught:
        memory = pt.PrivateKD(6, 50.0, random_state=3, accountant=fresh()).fit(X, y)
    assert messages == sorted(str(w.message)[:40] for w in caught)
    np.testing.assert_array_equal(spread.classes_, memory.classes_)
    np.testing.assert_array_equal(spread.selection_order_, memory.selection_order_)


def test_labels_are_aligned_with_the_rows_or_refused(client, data):
    X, y = data
    expected = pt.greedy_discernibility(X, y, 3, cardinalities=CARDS)
    got = pt.greedy_discernibility(
        as_array(X, 700), as_array(y, 1000), 3, cardinalities=CARDS
    )
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match=r"y has 2999 labels, expected 3000"):
        pt.greedy_discernibility(as_array(X), as_array(y[:-1]), 2, cardinalities=CARDS)
    # Partitioned differently (5 chunks, 2 partitions): matched row by row.
    got = pt.greedy_discernibility(
        as_array(X), as_frame(y[:, None], npartitions=2)["c0"], 3, cardinalities=CARDS
    )
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(
        ValueError,
        match=r"must hold the same rows, one per row of X: X has 3000, y has 2999 "
        r"rows; pass columns of one Dask DataFrame",
    ):
        pt.greedy_discernibility(
            as_array(X), as_frame(y[:-1, None], npartitions=2)["c0"], 2
        )


def test_a_label_outside_the_declared_classes_is_refused(client, data):
    X, y = data
    with pytest.raises(pt.DomainError, match="not among the declared classes"):
        pt.PrivateKD(2, 1.0, accountant=fresh(), classes=[0, 1]).fit(
            as_array(X), as_array(y), cardinalities=CARDS
        )


def test_projected_histogram_is_the_same_release(client, data):
    X, y = data
    for seed in (0, 5):
        memory = pt.ProjectedHistogram(
            2.0, random_state=seed, accountant=fresh(), classes=[0, 1, 2]
        ).fit(X, y, cardinalities=CARDS)
        spread = pt.ProjectedHistogram(
            2.0, random_state=seed, accountant=fresh(), classes=[0, 1, 2]
        ).fit(as_array(X), as_array(y), cardinalities=CARDS)
        np.testing.assert_array_equal(spread.selection_order_, memory.selection_order_)
        np.testing.assert_array_equal(spread.histogram_.keys, memory.histogram_.keys)
        np.testing.assert_array_equal(
            spread.histogram_.values, memory.histogram_.values
        )


# DILCA ----------------------------------------------------------------------
@pytest.mark.parametrize("context", ["mean_su", "relevance_redundancy"])
def test_dilca_learns_the_same_distances(client, data, context):
    X, _ = data
    memory = pt.DILCA(context).fit(X, cardinalities=CARDS)
    spread = pt.DILCA(context).fit(as_frame(X), cardinalities=CARDS)
    for a, b in zip(memory.contexts_, spread.contexts_, strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(memory.distance_matrices_, spread.distance_matrices_, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "method", ["max_relevance", "max_dependency", "mean_su", "baseline"]
)
def test_dp_dilca_learns_the_same_distances(client, data, method):
    X, _ = data
    kwargs = {"method": method, "context_size": 2, "random_state": 11}
    memory = pt.DPDILCA(2.0, accountant=fresh(), **kwargs).fit(X, cardinalities=CARDS)
    spread = pt.DPDILCA(2.0, accountant=fresh(), **kwargs).fit(
        as_array(X), cardinalities=CARDS
    )
    for a, b in zip(memory.contexts_, spread.contexts_, strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(memory.distance_matrices_, spread.distance_matrices_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_context_searches_score_with_the_same_entropies(client, data):
    X, _ = data
    for target in (0, 4):
        np.testing.assert_array_equal(
            max_dependency_context(as_array(X), target, 2, cardinalities=CARDS),
            max_dependency_context(X, target, 2, cardinalities=CARDS),
        )
        np.testing.assert_array_equal(
            max_relevance_context(as_array(X), target, 3, cardinalities=CARDS),
            max_relevance_context(X, target, 3, cardinalities=CARDS),
        )


# Containment anonymity ------------------------------------------------------------
def test_containment_anonymity_of_every_row(client):
    rng = np.random.default_rng(7)
    B = (rng.random((2000, 10)) < 0.3).astype(np.int64)
    for features in (None, [0, 4, 7], []):
        expected = pt.containment_anonymity(B, features)
        lazy = pt.containment_anonymity(as_frame(B), features)
        np.testing.assert_array_equal(lazy.compute(), expected)


# Lazy encoding --------------------------------------------------------------------
def mixed_frame():
    rng = np.random.default_rng(3)
    n = 4000
    return pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "age": rng.uniform(0, 100, n),
            "smoker": rng.random(n) < 0.3,
            "outcome": rng.choice(["yes", "no"], n),
        }
    )


def encoder():
    return pt.TableEncoder(
        domains={"colour": ["red", "green", "blue"], "outcome": ["no", "yes"]},
        bounds={"age": (0, 100)},
    )


def test_table_encoder_encodes_a_dask_frame_lazily(client):
    frame = mixed_frame()
    memory = encoder().fit_transform(frame)
    lazy = encoder().fit_transform(dd.from_pandas(frame, npartitions=3))
    assert type(lazy.codes).__module__.startswith("dask")
    np.testing.assert_array_equal(lazy.cardinalities, memory.cardinalities)
    assert lazy.n_rows == memory.n_rows
    np.testing.assert_array_equal(np.asarray(lazy.codes.compute()), memory.codes)
    for seed in (0, 1):
        a = pt.thresholded_histogram(
            memory, None, 1.0, random_state=seed, accountant=fresh()
        )
        b = pt.thresholded_histogram(
            lazy, None, 1.0, random_state=seed, accountant=fresh()
        )
        np.testing.assert_array_equal(a.keys, b.keys)
        np.testing.assert_array_equal(a.values, b.values)
    for a, b in zip(
        pt.DILCA().fit(memory).distance_matrices_,
        pt.DILCA().fit(lazy).distance_matrices_,
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)


def test_table_encoder_does_not_infer_a_distributed_domain(client):
    frame = dd.from_pandas(mixed_frame(), npartitions=2)
    with pytest.raises(
        ValueError,
        match=r"declared domains or bounds for the columns \['age', 'outcome'\]",
    ):
        pt.TableEncoder(domains={"colour": ["red", "green", "blue"]}).fit(frame)


# Dask's Parquet reader calls a pandas method that pandas 3.1 deprecates.
@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame")
def test_encoded_columns_and_the_label_of_one_parquet_table(client, data, tmp_path):
    """Dask reads a projection on one column (the label) of 8 Parquet files in fewer
    partitions than the other columns; the encoded columns and the label still
    select what they select in memory."""
    X, y = data
    as_frame(X, y, npartitions=8).to_parquet(tmp_path / "table")
    frame = dd.read_parquet(tmp_path / "table")
    columns = [f"c{j}" for j in range(len(CARDS))]
    domains = {c: list(range(k)) for c, k in zip(columns, CARDS, strict=True)}
    table = pt.TableEncoder(domains=domains).fit_transform(frame[columns])
    for seed in (0, 1):
        memory = pt.PrivateKD(
            4, 1.0, random_state=seed, accountant=fresh(), classes=[0, 1, 2]
        ).fit(X, y, cardinalities=CARDS)
        spread = pt.PrivateKD(
            4, 1.0, random_state=seed, accountant=fresh(), classes=[0, 1, 2]
        ).fit(table, frame["label"])
        np.testing.assert_array_equal(spread.selection_order_, memory.selection_order_)
    np.testing.assert_array_equal(
        pt.greedy_discernibility(table, frame["label"], 6),
        pt.greedy_discernibility(X, y, 6, cardinalities=CARDS),
    )


# Columns read --------------------------------------------------------------------
def parquet_columns_read(monkeypatch, action):
    """Run ``action`` on Dask's in-process scheduler; return the columns of every
    Parquet read it makes (as pyarrow is asked for them)."""
    import pyarrow.parquet as pq

    asked = []
    for method in ("read", "read_row_groups"):
        original = getattr(pq.ParquetFile, method)

        def spy(self, *args, _original=original, columns=None, **kwargs):
            asked.append(None if columns is None else sorted(columns))
            return _original(self, *args, columns=columns, **kwargs)

        monkeypatch.setattr(pq.ParquetFile, method, spy)
    with dask.config.set(scheduler="sync"):
        result = action()
    return asked, result


@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame")
def test_counting_some_columns_of_a_parquet_table_reads_only_those(
    client, data, tmp_path, monkeypatch
):
    X, _ = data
    as_frame(X, npartitions=3).to_parquet(tmp_path / "codes", write_index=False)
    frame = dd.read_parquet(tmp_path / "codes")
    asked, counts = parquet_columns_read(
        monkeypatch, lambda: pt.count_columns(frame, CARDS, [4, 1, 4])
    )
    assert asked
    assert all(columns == ["c1", "c4"] for columns in asked)
    keys = X[:, 4] * CARDS[1] * CARDS[4] + X[:, 1] * CARDS[4] + X[:, 4]
    expected_keys, expected_counts = np.unique(keys, return_counts=True)
    np.testing.assert_array_equal(counts.keys, expected_keys)
    np.testing.assert_array_equal(counts.counts, expected_counts)
    np.testing.assert_array_equal(counts.cardinalities, [CARDS[4], CARDS[1], CARDS[4]])


@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame")
def test_columns_of_one_parquet_table_are_read_together(
    client, data, tmp_path, monkeypatch
):
    """Two columns of one frame are read in one task per partition, both at once:
    read apart, a partition's columns may be read on two workers and one sent to the
    other."""
    X, _ = data
    as_frame(X, npartitions=3).to_parquet(tmp_path / "codes", write_index=False)
    frame = dd.read_parquet(tmp_path / "codes")
    asked, table = parquet_columns_read(
        monkeypatch, lambda: pt.contingency_table(frame["c3"], frame["c5"], 5, 7)
    )
    assert asked == [["c3", "c5"]] * 3
    expected = np.zeros((5, 7), dtype=np.int64)
    np.add.at(expected, (X[:, 3], X[:, 5]), 1)
    np.testing.assert_array_equal(table, expected)
    asked, same_column = parquet_columns_read(
        monkeypatch, lambda: pt.contingency_table(frame["c1"], frame["c1"], 5, 5)
    )
    assert asked == [["c1"]] * 3
    np.testing.assert_array_equal(
        same_column, np.diag(np.bincount(X[:, 1], minlength=5))
    )
    other = as_frame(X[:, ::-1].copy(), npartitions=5)
    mixed = pt.contingency_table(frame["c3"], other["c0"], 5, 7)
    np.testing.assert_array_equal(mixed, expected)


def test_counting_some_columns_checks_every_cardinality(client, data):
    X, _ = data
    with pytest.raises(ValueError, match="cardinalities"):
        pt.count_columns(as_frame(X), CARDS[:-1], [0, 1])


# Code conversion of a partition --------------------------------------------------
def odd_codes(kind):
    """A pandas frame of codes in 0..2 (cardinality 3) of an unusual kind."""
    rng = np.random.default_rng(7)
    a, b = rng.integers(0, 3, size=(2, 40))
    frames = {
        "one narrow dtype": {"a": a.astype(np.uint8), "b": b.astype(np.uint8)},
        "signed": {"a": a.astype(np.int8), "b": b.astype(np.int64)},
        "unsigned and signed": {"a": a.astype(np.uint8), "b": b.astype(np.int64)},
        "nullable": {"a": pd.array(a, dtype="Int64"), "b": pd.array(b, dtype="Int64")},
        "nullable with NA": {"a": pd.array([*a[:-1], None], dtype="Int64")},
        "pyarrow": {"a": pd.Series(a, dtype="uint8[pyarrow]")},
        "categorical": {"a": pd.Categorical(a), "b": b},
        "negative": {"a": np.r_[a[:-1], -1], "b": b},
        "beyond uint32": {"a": np.r_[a[:-1], 2**33], "b": b},
        "at the cardinality": {"a": a, "b": np.r_[b[:-1], 3]},
    }
    return pd.DataFrame(frames[kind])


@pytest.mark.parametrize(
    "kind",
    [
        "one narrow dtype",
        "signed",
        "unsigned and signed",
        "nullable",
        "nullable with NA",
        "pyarrow",
        "categorical",
        "negative",
        "beyond uint32",
        "at the cardinality",
    ],
)
def test_partition_codes_count_or_fail_as_in_memory(client, kind):
    frame = odd_codes(kind)
    cards = [3] * frame.shape[1]
    spread = dd.from_pandas(frame, npartitions=2)
    try:
        expected = pt.count_columns(frame, cards)
    except (TypeError, ValueError) as exc:
        in_memory = exc
    else:
        in_memory = None
    if in_memory is not None:
        with pytest.raises(type(in_memory)) as raised:
            pt.count_columns(spread, cards)
        # The in-memory message after the partition it names, with the row counted
        # in that partition: the bad codes are in the last row, row 19 of partition 1.
        where, message = str(raised.value).split(": ", 1)
        assert where in ("partition 0 of codes", "partition 1 of codes")
        assert message == re.sub(r"\b39\b", "19", str(in_memory))
        return
    # Mixed-radix keys, the first column most significant.
    keys = frame.to_numpy(dtype=np.int64) @ np.array([3, 1])[-frame.shape[1] :]
    expected_keys, expected_counts = np.unique(keys, return_counts=True)
    np.testing.assert_array_equal(expected.keys, expected_keys)
    np.testing.assert_array_equal(expected.counts, expected_counts)
    got = pt.count_columns(spread, cards)
    np.testing.assert_array_equal(got.keys, expected_keys)
    np.testing.assert_array_equal(got.counts, expected_counts)


def test_columns_of_one_dtype_in_another_order_keep_their_order(client, data):
    X, _ = data
    frame = pd.DataFrame(X.astype(np.uint8), columns=[f"c{j}" for j in range(6)])
    reordered = frame[["c3", "c0", "c5", "c1", "c4", "c2"]]
    cards = [CARDS[j] for j in (3, 0, 5, 1, 4, 2)]
    spread = pt.count_columns(dd.from_pandas(reordered, npartitions=3), cards)
    assert spread == pt.count_columns(X[:, [3, 0, 5, 1, 4, 2]], cards)


@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame")
def test_projected_histogram_reads_only_its_attributes_for_the_histogram(
    client, data, tmp_path, monkeypatch
):
    X, y = data
    as_frame(X, y, npartitions=3).to_parquet(tmp_path / "table", write_index=False)
    frame = dd.read_parquet(tmp_path / "table")
    names = [f"c{j}" for j in range(X.shape[1])]

    def fit(codes, labels):
        return pt.ProjectedHistogram(
            2.0, random_state=5, accountant=fresh(), classes=[0, 1, 2]
        ).fit(codes, labels, cardinalities=CARDS)

    memory = fit(X, y)
    asked, spread = parquet_columns_read(
        monkeypatch, lambda: fit(frame[names], frame["label"])
    )
    np.testing.assert_array_equal(spread.selection_order_, memory.selection_order_)
    np.testing.assert_array_equal(spread.histogram_.keys, memory.histogram_.keys)
    np.testing.assert_array_equal(spread.histogram_.values, memory.histogram_.values)
    assert len(memory.selection_order_) < len(names)
    selected = sorted([names[j] for j in memory.selection_order_] + ["label"])
    # The search reads every attribute and the label; the histogram its own only.
    assert {tuple(columns) for columns in asked} == {
        tuple(sorted([*names, "label"])),
        tuple(selected),
    }
