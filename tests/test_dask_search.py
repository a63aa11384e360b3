"""The distributed discernibility search and the narrow partitions of the Dask engine.

Its pieces are checked against independent NumPy references (counts of unique row
tuples), and the whole search against the in-memory kernels: on a 2-worker
``distributed.LocalCluster`` with the classes moved into single partitions at once,
and in this process with the synchronous scheduler.
"""

import contextlib
import io
import logging

import numpy as np
import pandas as pd
import pytest
from _dask import dask_modules, local_client

import privtab as pt
from privtab._validation import as_code_columns
from privtab.engine import _dask as engine

dask, distributed, da, dd = dask_modules()

CARDS = [3, 7, 12, 5, 9, 11, 4, 8]
#: Seconds a computation of the test cluster may take before its test fails.
TIMEOUT = 60


@pytest.fixture(scope="module")
def client():
    with local_client() as client:
        yield client


def labelled_codes(n_rows, n_labels, seed):
    """Codes of CARDS, each following the label on a third of the rows."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_labels, size=n_rows)
    columns = []
    for j, card in enumerate(CARDS):
        follow = rng.random(n_rows) < 1 / 3
        columns.append(
            np.where(follow, (y * (j + 1)) % card, rng.integers(0, card, n_rows))
        )
    return np.column_stack(columns).astype(np.int64), y


def reference_undiscerned(classes, values, labels):
    """Σ_g (n_g² − Σ_l n_gl²) over the groups g = (class, value), by numpy.unique."""
    _, cell_counts = np.unique(
        np.column_stack([classes, values, labels]), axis=0, return_counts=True
    )
    _, group_counts = np.unique(
        np.column_stack([classes, values]), axis=0, return_counts=True
    )
    return int((group_counts.astype(np.int64) ** 2).sum()) - int(
        (cell_counts.astype(np.int64) ** 2).sum()
    )


def grouped_part(rng, class_sizes, cards, n_labels, dtype=np.uint8):
    """A part grouped by class, classes of ``class_sizes`` rows, random codes."""
    n_rows = int(class_sizes.sum())
    columns = np.vstack([rng.integers(0, c, n_rows) for c in cards]).astype(dtype)
    labels = rng.integers(0, n_labels, n_rows).astype(np.uint32)
    bounds = np.concatenate([[0], np.cumsum(class_sizes)]).astype(np.uint64)
    return engine._LocalPart(columns, list(range(len(cards))), labels, bounds)


# The pieces ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32])
def test_a_local_round_counts_and_refines_as_numpy(dtype):
    rng = np.random.default_rng(np.dtype(dtype).itemsize)
    cards = np.array([2, 9, 30, 250], dtype=np.uint32)
    shapes = {
        "small classes": np.full(800, 3),
        "large classes": np.array([700, 900, 400]),
        "both": rng.geometric(0.15, size=400),
    }
    for n_labels in (2, 3):
        for class_sizes in shapes.values():
            part = grouped_part(rng, class_sizes, cards, n_labels, dtype)
            classes = np.repeat(np.arange(class_sizes.shape[0]), class_sizes)
            left, label_counts, same = engine._local_round(
                part, None, [3, 0, 2, 1], cards, n_labels
            )
            assert same is part
            expected = [
                reference_undiscerned(classes, part.columns[a], part.labels)
                for a in [3, 0, 2, 1]
            ]
            assert left == expected
            np.testing.assert_array_equal(
                label_counts, np.bincount(part.labels, minlength=n_labels)
            )
            left, _, refined = engine._local_round(part, 1, [0, 3, 2], cards, n_labels)
            keys = classes * 9 + part.columns[1].astype(np.int64)
            expected = [
                reference_undiscerned(keys, part.columns[a], part.labels)
                for a in [0, 3, 2]
            ]
            assert left == expected
            # The refined rows: the mixed (class, value) groups in key order, each
            # group's rows in their order.
            groups, inverse = np.unique(keys, return_inverse=True)
            mixed = np.array(
                [
                    np.unique(part.labels[inverse == g]).shape[0] >= 2
                    for g in range(groups.shape[0])
                ]
            )
            order = np.lexsort((np.arange(keys.shape[0]), keys))
            order = order[mixed[inverse][order]]
            sizes = np.bincount(inverse, minlength=groups.shape[0])[mixed]
            assert refined.index == [0, 2, 3]
            assert refined.columns.dtype == dtype
            np.testing.assert_array_equal(
                refined.columns, part.columns[[0, 2, 3]][:, order]
            )
            np.testing.assert_array_equal(refined.labels, part.labels[order])
            np.testing.assert_array_equal(refined.bounds, np.r_[0, np.cumsum(sizes)])


@pytest.mark.parametrize("refine_by", [None, 1])
def test_rows_joined_in_any_order_are_grouped_by_class_first(refine_by):
    """A part joined from moved rows (classes given, rows in arrival order) gives the
    round of the same rows grouped by class with a stable sort (NumPy)."""
    rng = np.random.default_rng(5)
    cards = np.array([2, 9, 30, 250], dtype=np.uint32)
    n_rows, n_classes = 3000, 40
    columns = np.vstack([rng.integers(0, c, n_rows) for c in cards]).astype(np.uint8)
    labels = rng.integers(0, 2, n_rows).astype(np.uint32)
    # Class 7 has no rows here: it lives in another partition.
    classes = rng.choice(np.delete(np.arange(n_classes), 7), n_rows).astype(np.uint32)
    joined = engine._LocalPart(columns, [0, 1, 2, 3], labels, None, classes, n_classes)
    order = np.argsort(classes, kind="stable")
    sizes = np.bincount(classes, minlength=n_classes)
    grouped = engine._LocalPart(
        columns[:, order],
        [0, 1, 2, 3],
        labels[order],
        np.r_[0, np.cumsum(sizes[sizes > 0])].astype(np.uint64),
    )
    candidates = [0, 2, 3] if refine_by == 1 else [3, 0, 2, 1]
    got = engine._local_round(joined, refine_by, candidates, cards, 2)
    want = engine._local_round(grouped, refine_by, candidates, cards, 2)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])
    assert got[2].index == want[2].index
    assert got[2].classes is None
    np.testing.assert_array_equal(got[2].columns, want[2].columns)
    np.testing.assert_array_equal(got[2].labels, want[2].labels)
    np.testing.assert_array_equal(got[2].bounds, want[2].bounds)


@pytest.mark.parametrize("n_classes", [1, 40, 3000])
def test_a_merged_round_counts_class_value_label_as_numpy(n_classes):
    """Every candidate's (class, value, label) counts, keyed as the merge keys them,
    whether counted in one pass (few classes) or candidate by candidate (many)."""
    rng = np.random.default_rng(n_classes)
    cards = np.array([2, 9, 30, 250, 7], dtype=np.uint32)
    n_rows = 5000
    columns = np.vstack([rng.integers(0, c, n_rows) for c in cards]).astype(np.uint16)
    labels = rng.integers(0, 3, n_rows).astype(np.uint8)
    classes = rng.integers(0, n_classes, n_rows).astype(np.uint32)
    # Column 2 no longer needed (index -1), as after a refinement that kept every row.
    part = engine._SearchPart(columns, [0, 1, -1, 3, 4], labels, classes, n_classes)
    candidates = [4, 0, 3]
    got = part.all_counts(candidates, cards, 3)
    for a, (keys, counts) in zip(candidates, got, strict=True):
        row = [0, 1, -1, 3, 4].index(a)
        want = (classes.astype(np.uint64) * cards[a] + columns[row]) * 3 + labels
        want_keys, want_counts = np.unique(want, return_counts=True)
        np.testing.assert_array_equal(keys, want_keys)
        np.testing.assert_array_equal(counts, want_counts)


def test_a_local_round_of_no_rows_counts_nothing():
    cards = np.array([3, 4], dtype=np.uint32)
    part = grouped_part(np.random.default_rng(0), np.zeros(0, int), cards, 2)
    left, label_counts, refined = engine._local_round(part, 0, [1], cards, 2)
    assert left == [0]
    assert refined.columns.shape == (1, 0)
    np.testing.assert_array_equal(label_counts, [0, 0])


def test_classes_are_dealt_evenly_and_numbered_per_destination():
    rng = np.random.default_rng(2)
    sizes = rng.integers(1, 1000, size=5000).astype(np.uint64)
    destination, local_ids, per_part = engine._balanced_destinations(sizes, 7)
    assert per_part.sum() == sizes.shape[0]
    for p in range(7):
        ids = np.sort(local_ids[destination == p])
        np.testing.assert_array_equal(ids, np.arange(per_part[p]))
    loads = np.bincount(destination, weights=sizes.astype(np.float64), minlength=7)
    assert loads.max() - loads.min() <= sizes.max()


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int64])
def test_partitions_are_kept_in_the_narrowest_dtype(dtype):
    X, _ = labelled_codes(500, 2, 1)
    cards = np.array([*CARDS, 300], dtype=np.uint32)
    X = np.column_stack([X, np.arange(500) % 300]).astype(dtype)
    expected, _ = as_code_columns(X, "X", cards)
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    for block, first_eight in ((X, X[:, :8]), (frame, frame.iloc[:, :8])):
        columns = engine._block_columns(block, cards, "X")
        assert columns.dtype == np.uint16
        np.testing.assert_array_equal(columns, expected)
        narrow = engine._block_columns(first_eight, cards[:8], "X")
        assert narrow.dtype == np.uint8
        np.testing.assert_array_equal(narrow, expected[:8])


def test_a_bad_code_in_a_partition_is_named_as_in_memory():
    X, _ = labelled_codes(100, 2, 1)
    X[17, 2] = 12
    cards = np.array(CARDS, dtype=np.uint32)
    with pytest.raises(ValueError, match=r"X\[17, 2\] = 12 is >= cardinality 12"):
        engine._block_columns(pd.DataFrame(X), cards, "X")
    X[17, 2] = -1
    with pytest.raises(ValueError, match="codes >= 0"):
        engine._block_columns(X, cards, "X")


def test_a_split_routes_rows_by_destination_in_their_order():
    """The rows of a part split by the destination of their refined class (NumPy
    reference: the stable order of the destinations), dropped groups left out."""
    rng = np.random.default_rng(9)
    cards = np.array([3, 5, 40], dtype=np.uint32)
    n_rows = 4000
    columns = np.vstack([rng.integers(0, c, n_rows) for c in cards]).astype(np.uint8)
    labels = rng.integers(0, 2, n_rows).astype(np.uint8)
    classes = rng.integers(0, 6, n_rows).astype(np.uint32)
    part = engine._SearchPart(columns, [0, 1, 2], labels, classes, 6)
    # Refined by column 1: groups (class, value) keyed class * 5 + value; keep some.
    groups = np.unique(classes.astype(np.uint64) * 5 + columns[1])[::3]
    destination = rng.integers(0, 3, groups.shape[0]).astype(np.uint32)
    local_ids = rng.permutation(groups.shape[0]).astype(np.uint32)
    pieces = engine._split_part(part, 1, 5, (groups, destination, local_ids), 3)
    keys = classes.astype(np.uint64) * 5 + columns[1]
    rank = np.searchsorted(groups, keys).clip(max=groups.shape[0] - 1)
    kept = groups[rank] == keys
    for p, piece in enumerate(pieces):
        rows = np.flatnonzero(kept & (destination[rank] == p))
        assert piece.index == [0, 2]
        np.testing.assert_array_equal(piece.columns, columns[[0, 2]][:, rows])
        np.testing.assert_array_equal(piece.labels, labels[rows])
        np.testing.assert_array_equal(piece.classes, local_ids[rank[rows]])


@pytest.mark.parametrize("n_classes", [6, 400_000])
def test_refined_classes_are_those_of_numpy(n_classes):
    """The core's one-pass refinement (a table of the keys for few classes, a search
    in the groups for many) against NumPy's search of the sorted groups."""
    rng = np.random.default_rng(n_classes)
    n_rows = 20_000
    columns = np.vstack([rng.integers(0, 40, n_rows) for _ in range(3)]).astype(
        np.uint16
    )
    classes = rng.integers(0, n_classes, n_rows).astype(np.uint32)
    part = engine._SearchPart(
        columns, [4, 7, 9], np.zeros(n_rows, np.uint8), classes, n_classes
    )
    keys = classes.astype(np.uint64) * 40 + columns[1]
    groups = np.unique(keys)[::2]
    new_ids = rng.permutation(groups.shape[0]).astype(np.uint32)
    got = part.refined_classes(7, 40, groups, new_ids)
    rank = np.searchsorted(groups, keys).clip(max=groups.shape[0] - 1)
    want = np.where(groups[rank] == keys, new_ids[rank], engine._DROPPED)
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="strictly increasing"):
        part.refined_classes(7, 40, groups[::-1].copy(), new_ids)


def test_partition_counts_dense_or_sorted_are_those_of_numpy():
    rng = np.random.default_rng(4)
    cards = np.array([3, 200, 250, 7], dtype=np.uint32)
    columns = np.vstack([rng.integers(0, c, 400) for c in cards]).astype(np.uint8)
    labels = rng.integers(0, 3, 400).astype(np.uint32)
    # Domains of 9, 1400 and 50000 cells (dense) and of 450000 cells (sorted).
    subsets = [[0, engine.LABEL], [3, 1], [1, 2], [0, 1, 2, engine.LABEL]]
    counted = engine._block_count(columns, labels, cards, 3, subsets)
    for subset, (keys, counts) in zip(subsets, counted, strict=True):
        rows = [labels if j == engine.LABEL else columns[j] for j in subset]
        sizes = [3 if j == engine.LABEL else int(cards[j]) for j in subset]
        expected = np.ravel_multi_index(tuple(r.astype(np.int64) for r in rows), sizes)
        unique, number = np.unique(expected, return_counts=True)
        np.testing.assert_array_equal(keys, unique)
        np.testing.assert_array_equal(counts, number)


# The whole search --------------------------------------------------------------------
def count_moves(monkeypatch):
    """Count the rounds in which the search moved its classes into single partitions."""
    moves = []
    gather = engine.DaskTable._gather_classes

    def counted(self, *args):
        moves.append(args[1])
        return gather(self, *args)

    monkeypatch.setattr(engine.DaskTable, "_gather_classes", counted)
    return moves


def private_kd_order(X, y, seed, classes):
    selector = pt.PrivateKD(
        6, 1.0, random_state=seed, accountant=pt.BudgetAccountant(), classes=classes
    )
    return selector.fit(X, y, cardinalities=CARDS).selection_order_


def selections(X, y, classes, seeds, to_dask):
    """Pairs of (in memory, on Dask) orders: greedy, then PrivateKD for each seed."""
    yield (
        pt.greedy_discernibility(X, y, 6, cardinalities=CARDS),
        pt.greedy_discernibility(*to_dask(X, y), 6, cardinalities=CARDS),
    )
    for seed in seeds:
        yield (
            private_kd_order(X, y, seed, classes),
            private_kd_order(*to_dask(X, y), seed, classes),
        )


@pytest.mark.parametrize("local_cells", [0, 1 << 62])
@pytest.mark.parametrize("n_parts", [1, 3, 5])
def test_search_on_a_cluster_moves_classes_and_selects_as_in_memory(
    client, monkeypatch, local_cells, n_parts
):
    monkeypatch.setattr(engine, "_LOCAL_CELLS", local_cells)
    moves = count_moves(monkeypatch)
    X, y = labelled_codes(12_000, 3, n_parts)
    chunk = -(-X.shape[0] // n_parts)

    def to_dask(X, y):
        return da.from_array(X, chunks=(chunk, X.shape[1])), da.from_array(y, chunk)

    for memory, spread in selections(X, y, [0, 1, 2], range(3), to_dask):
        np.testing.assert_array_equal(spread, memory)
    # Four runs, which move their classes once each, or never.
    assert len(moves) == (4 if local_cells == 0 else 0)


def test_search_in_process_selects_as_in_memory(monkeypatch):
    monkeypatch.setattr(engine, "_LOCAL_CELLS", 0)
    moves = count_moves(monkeypatch)
    X, y = labelled_codes(6000, 2, 7)

    def to_dask(X, y):
        frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
        frame["label"] = y
        spread = dd.from_pandas(frame, npartitions=4)
        return spread.drop(columns="label"), spread["label"]

    with dask.config.set(scheduler="synchronous"):
        for memory, spread in selections(X, y, [0, 1], range(2), to_dask):
            np.testing.assert_array_equal(spread, memory)
    assert len(moves) == 3


@contextlib.contextmanager
def scheduler_log():
    """Collect what the in-process scheduler of the test cluster logs."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("distributed.scheduler")
    logger.addHandler(handler)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)


def test_repeated_searches_send_no_key_twice(client):
    """A scheduler given as a function that calls the client (as a progress bar's
    is) does not keep results, so what a round keeps came back to this process and
    went out again in the next round's graph under the key of the task that made it:
    the scheduler warned that the key's run_spec had changed. On the old keys 8 of 8
    such fits warned here (6 of 12 runs of the command line's select on 2 workers);
    were each fit to warn with probability 1/2 only, the 3 fits below would pass on
    the old keys with probability 1/8."""
    X, y = labelled_codes(6000, 3, 11)
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    frame["label"] = y
    spread = dd.from_pandas(frame, npartitions=4)

    def through_the_client(dsk, keys, **kwargs):
        futures = client.get(dsk, keys, sync=False, **kwargs)
        distributed.wait(distributed.futures_of(futures), timeout=TIMEOUT)
        return client.gather(futures)

    expected = [private_kd_order(X, y, seed, [0, 1, 2]) for seed in range(4)]
    with scheduler_log() as log, dask.config.set(scheduler=through_the_client):
        for seed in range(3):
            got = private_kd_order(
                spread.drop(columns="label"), spread["label"], seed, [0, 1, 2]
            )
            np.testing.assert_array_equal(got, expected[seed])
    with scheduler_log() as log_of_client:
        got = private_kd_order(
            spread.drop(columns="label"), spread["label"], 3, [0, 1, 2]
        )
        np.testing.assert_array_equal(got, expected[3])
    assert "run_spec" not in log.getvalue() + log_of_client.getvalue()
