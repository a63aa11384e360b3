"""``privtab.threads(n)``: one way to set the thread count of every kernel call."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import privtab

#: The pool's size outside any block: RAYON_NUM_THREADS, else every core.
POOL_THREADS = int(os.environ.get("RAYON_NUM_THREADS", 0)) or os.cpu_count()


def test_a_block_sets_the_threads_of_kernels_and_leaving_it_restores_them():
    assert privtab.kernel_threads() == POOL_THREADS
    with privtab.threads(1) as n:
        assert n == 1
        assert privtab.kernel_threads() == 1
        with privtab.threads(3):
            assert privtab.kernel_threads() == 3
        assert privtab.kernel_threads() == 1
        with privtab.threads(None):
            assert privtab.kernel_threads() == POOL_THREADS
        assert privtab.kernel_threads() == 1
    assert privtab.kernel_threads() == POOL_THREADS


def test_a_block_left_by_an_exception_restores_the_setting():
    with pytest.raises(RuntimeError, match="inside"), privtab.threads(1):
        raise RuntimeError("inside")
    assert privtab.kernel_threads() == POOL_THREADS


def test_a_block_belongs_to_its_thread():
    seen = []
    with privtab.threads(1):
        worker = threading.Thread(target=lambda: seen.append(privtab.kernel_threads()))
        worker.start()
        worker.join()
        assert privtab.kernel_threads() == 1
    assert seen == [POOL_THREADS]


@pytest.mark.parametrize(
    ("value", "error"),
    [(0, ValueError), (-2, ValueError), (1.5, TypeError), (True, TypeError)],
)
def test_bad_thread_counts_are_refused_naming_the_argument(value, error):
    with pytest.raises(error, match="n_threads"), privtab.threads(value):
        pass  # pragma: no cover
    assert privtab.kernel_threads() == POOL_THREADS


def test_results_do_not_depend_on_the_block():
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 4, size=(20_000, 6), dtype=np.uint8)
    labels = (codes[:, 0] + codes[:, 3] > 3).astype(np.int64)
    fits = []
    for n in (1, 2):
        with privtab.threads(n):
            counts = privtab.count_columns(codes, [4] * 6, [0, 2, 5])
            model = privtab.PrivateKD(
                3,
                1.0,
                classes=[0, 1],
                random_state=11,
                accountant=privtab.BudgetAccountant(10.0),
            ).fit(privtab.EncodedTable(codes, [4] * 6), labels)
        fits.append((counts.keys, counts.counts, model.selection_order_))
    (keys1, counts1, order1), (keys2, counts2, order2) = fits
    np.testing.assert_array_equal(keys1, keys2)
    np.testing.assert_array_equal(counts1, counts2)
    np.testing.assert_array_equal(order1, order2)


def test_an_estimators_n_threads_applies_to_every_kernel_its_methods_call():
    from privtab._threads import runs_on_threads

    class Probe:
        def __init__(self, n_threads):
            self.n_threads = n_threads

        @runs_on_threads
        def fit(self):
            return privtab.kernel_threads()

    assert Probe(1).fit() == 1
    assert Probe(None).fit() == POOL_THREADS
    with privtab.threads(1):
        assert Probe(None).fit() == 1
        assert Probe(2).fit() == 2
        assert privtab.kernel_threads() == 1


@pytest.mark.parametrize(
    "make",
    [
        lambda n: privtab.DILCA(n_threads=n),
        lambda n: privtab.DPDILCA(
            1.0,
            context_size=2,
            random_state=3,
            accountant=privtab.BudgetAccountant(1.0),
            n_threads=n,
        ),
    ],
    ids=["DILCA", "DPDILCA"],
)
def test_estimators_give_the_same_fit_on_one_and_two_threads(make):
    rng = np.random.default_rng(5)
    table = privtab.EncodedTable(rng.integers(0, 3, size=(3_000, 5)), [3] * 5)
    one, two = make(1).fit(table), make(2).fit(table)
    assert make(1).get_params()["n_threads"] == 1
    for a, b in zip(one.distance_matrices_, two.distance_matrices_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_dp_linear_models_and_dpfs_take_n_threads_and_fit_the_same():
    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, size=(400, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    bounds = dict.fromkeys(range(4), (-1.0, 1.0))
    for make in (
        lambda n: privtab.DPLinearSVC(
            2.0, data_norm=2.0, classes=[0, 1], random_state=1, n_threads=n
        ),
        lambda n: privtab.DPLogisticRegression(
            2.0, data_norm=2.0, classes=[0, 1], random_state=1, n_threads=n
        ),
        lambda n: privtab.DPFS(
            0.5, 2.0, bounds=bounds, classes=[0, 1], random_state=1, n_threads=n
        ),
    ):
        with privtab.use_accountant(privtab.BudgetAccountant(100.0)):
            one, two = make(1).fit(X, y), make(2).fit(X, y)
        assert make(1).get_params()["n_threads"] == 1
        coef = [getattr(m, "classifier_", m).coef_ for m in (one, two)]
        np.testing.assert_array_equal(*coef)
