"""BudgetAccountant.open: a budget in a SQLite file, shared by threads and processes."""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import pickle
import random
import signal
import sqlite3
import stat
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from fractions import Fraction

import numpy as np
import pytest
from _budget_workers import (
    fit_dpdilca,
    spend_from_threads,
    spend_times,
    spend_until_killed,
    try_spend,
)

import privtab as pt


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "data.budget")


def test_open_creates_a_private_file_and_reopens_it(path):
    acc = pt.BudgetAccountant.open(path, epsilon=1.0, delta=1e-6)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    acc.spend(0.25, label="counts")
    again = pt.BudgetAccountant.open(path)
    assert (again.epsilon, again.delta, again.spent) == (1.0, 1e-6, 0.25)
    assert pt.BudgetAccountant.open(path, 1.0, delta=1e-6).ledger == [("counts", 0.25)]
    assert again.path == os.path.abspath(path)
    assert "path=" in repr(again)
    for name in os.listdir(os.path.dirname(path)):
        mode = stat.S_IMODE(os.stat(os.path.join(os.path.dirname(path), name)).st_mode)
        assert mode & 0o077 == 0, name


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"epsilon": 2.0},
            ValueError,
            r"holds a budget of epsilon=1\.0, not epsilon=2\.0",
        ),
        ({"epsilon": 1.0, "delta": 0.5}, ValueError, "delta=0.0, not delta=0.5"),
        ({"delta": 0.5}, ValueError, "delta=0.0, not delta=0.5"),
        ({"epsilon": -1.0}, ValueError, "epsilon must be finite and > 0"),
        ({"delta": 2.0}, ValueError, r"delta must be a number in \[0, 1\]"),
    ],
)
def test_open_checks_the_budget_asked_for(path, kwargs, error, match):
    pt.BudgetAccountant.open(path, 1.0)
    with pytest.raises(error, match=match):
        pt.BudgetAccountant.open(path, **kwargs)


def test_open_refuses_what_is_not_a_store(tmp_path):
    with pytest.raises(FileNotFoundError, match="privtab budget init"):
        pt.BudgetAccountant.open(tmp_path / "missing.budget")
    assert not (tmp_path / "missing.budget").exists()
    text = tmp_path / "notes.txt"
    text.write_text("not a database, but long enough to have a header " * 20)
    with pytest.raises(ValueError, match="is not a privtab budget store"):
        pt.BudgetAccountant.open(text)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE t (x)")
    with pytest.raises(ValueError, match="not a privtab budget store"):
        pt.BudgetAccountant.open(other, 1.0)
    with pytest.raises(TypeError, match="path must be a str or a path, got int"):
        pt.BudgetAccountant.open(3, 1.0)


def _workload(acc):
    acc.spend(0.25, label="counts")
    acc.spend(0.125, label="masked means", guarantee="idp")
    with acc.parallel("regions") as block:
        for region in ("north", "south"):
            with block.part(region):
                acc.spend(0.1, label="count")
                acc.spend(0.2, label="sum")
    with pytest.raises(pt.BudgetExceededError, match=r"epsilon=0\.5"):
        acc.spend(0.5)
    acc.spend(0.25)


def test_a_store_keeps_the_same_books_as_memory(path):
    in_memory = pt.BudgetAccountant(1.0)
    on_file = pt.BudgetAccountant.open(path, 1.0)
    _workload(in_memory)
    _workload(on_file)
    assert on_file.ledger == in_memory.ledger
    assert (on_file.spent, on_file.remaining) == (in_memory.spent, in_memory.remaining)
    assert on_file.to_dict() == {**in_memory.to_dict(), "path": on_file.path}
    assert pt.BudgetAccountant.open(path).report() == in_memory.report()
    assert on_file.spent_by("idp") == 0.125


def test_an_open_block_is_charged_in_the_file_as_it_grows(path):
    acc = pt.BudgetAccountant.open(path, 2.0)
    reader = pt.BudgetAccountant.open(path)
    with acc.parallel("regions") as block:
        with block.part("north"):
            acc.spend(0.5)
        assert reader.spent == 0.5
        with block.part("south"):
            acc.spend(0.25)
            acc.spend(0.5)
        assert reader.spent == 0.75
        assert [tuple(p) for p in reader.ledger[0].parts] == [
            ("north", 0.5),
            ("south", 0.75),
        ]


def test_a_store_pickles_as_a_reference_to_its_file(path, tmp_path):
    acc = pt.BudgetAccountant.open(path, 1.0)
    copy = pickle.loads(pickle.dumps(acc))
    copy.spend(0.5)
    assert acc.spent == 0.5
    data = pickle.dumps(acc)
    os.remove(path)
    pt.BudgetAccountant.open(path, 1.0)
    with pytest.raises(ValueError, match="it was replaced"):
        pickle.loads(data)
    with acc.parallel() as block, pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(block)


def test_exact_totals_in_the_file(path):
    acc = pt.BudgetAccountant.open(path, 1.0)
    for _ in range(1000):
        acc.spend(0.001)
    with pytest.raises(pt.BudgetExceededError):
        acc.spend(0.001)
    assert pt.BudgetAccountant.open(path).spent == 1.0


def test_six_processes_share_one_budget(path):
    # 6 x 40 spends of 0.025 against 4.0: exactly 160 fit (the relative 2^-52 of
    # the budget covers 160 roundings of 1/40 to a float), in any interleaving.
    acc = pt.BudgetAccountant.open(path, 4.0)
    with ProcessPoolExecutor(6, mp_context=mp.get_context("fork")) as pool:
        futures = [pool.submit(spend_times, acc, 40, 0.025) for _ in range(6)]
        accepted = [future.result(timeout=300) for future in futures]
    assert sum(accepted) == 160
    assert acc.spent == 4.0
    assert len(acc.ledger) == 160
    assert len({entry.label for entry in acc.ledger}) > 1


def test_a_spawned_process_spends_on_the_same_file(path):
    acc = pt.BudgetAccountant.open(path, 1.0)
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        assert pool.submit(try_spend, acc, 0.75).result(timeout=300) == "spent"
        refused = pool.submit(try_spend, acc, 0.5).result(timeout=300)
    assert "privacy budget exceeded" in refused
    assert acc.ledger == [("laplace_mechanism", 0.75)]


@pytest.fixture
def frequent_thread_switches():
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


@pytest.mark.usefixtures("frequent_thread_switches")
def test_threads_share_one_budget(path):
    acc = pt.BudgetAccountant.open(path, 25.0)
    accepted = spend_from_threads(acc, threads=8, times=100, epsilon=0.0625)
    assert sum(accepted) == 400
    assert acc.spent == 25.0
    # One handle per thread: SQLite's locks, not the handle's, keep the count.
    path2 = path + "2"
    pt.BudgetAccountant.open(path2, 25.0)
    handles = [pt.BudgetAccountant.open(path2) for _ in range(8)]
    import threading

    counts = [0] * 8

    def work(i):
        counts[i] = spend_times(handles[i], 100, 0.0625)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    assert sum(counts) == 400
    assert pt.BudgetAccountant.open(path2).spent == 25.0


def _read_acks(fd):
    data = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        data += chunk
    return [int(line) for line in data.decode().split("\n")[:-1]]


def test_a_writer_killed_at_random_points_leaves_exactly_its_acknowledged_spends(
    path,
):
    pt.BudgetAccountant.open(path, math.inf)
    rng = random.Random(27)
    acknowledged = 0
    for _ in range(20):
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        pid = os.fork()
        if pid == 0:  # the writer
            os.close(read_fd)
            try:
                spend_until_killed(path, write_fd)
            finally:
                os._exit(1)
        os.close(write_fd)
        acks: list[int] = []
        deadline = time.monotonic() + 60
        target = rng.uniform(0.0, 0.15)
        start = time.monotonic()
        while time.monotonic() - start < target or not acks:
            acks += _read_acks(read_fd)
            assert time.monotonic() < deadline
            time.sleep(0.001)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        acks += _read_acks(read_fd)
        os.close(read_fd)
        with sqlite3.connect(path) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        reopened = pt.BudgetAccountant.open(path)
        ledger = reopened.ledger
        labels = [entry.label for entry in ledger]
        acknowledged = acks[-1] + 1
        # Every acknowledged spend is there; at most one more (killed after its
        # commit, before its acknowledgement); nothing else.
        assert labels[:acknowledged] == [f"spend {i}" for i in range(acknowledged)]
        assert len(labels) - acknowledged in (0, 1)
        assert Fraction(reopened.to_dict()["exact_spent"]) == sum(
            Fraction(entry.epsilon) for entry in ledger
        )
    assert acknowledged > 20


def test_cross_val_score_with_a_store_runs_only_the_fits_the_budget_affords(path):
    from sklearn.exceptions import FitFailedWarning
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(100, 4))
    y = (X[:, 0] + rng.integers(0, 2, size=100)) % 2
    declared = {"dpdilca__cardinalities": [3, 3, 3, 3]}
    acc = pt.BudgetAccountant.open(path, 2.5)
    model = make_pipeline(
        pt.DPDILCA(1.0, accountant=acc, random_state=0), KNeighborsClassifier()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitFailedWarning)
        scores = cross_val_score(model, X, y, cv=5, n_jobs=2, params=declared)
    assert np.isfinite(scores).sum() == 2
    assert acc.spent == 2.0
    assert len(acc.ledger) == 2

    in_memory = pt.BudgetAccountant(2.5)
    model = make_pipeline(
        pt.DPDILCA(1.0, accountant=in_memory, random_state=0), KNeighborsClassifier()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitFailedWarning)
        with pytest.raises(
            ValueError,
            match=r"(?s)fits failed.*copied into process.*BudgetAccountant\.open",
        ):
            cross_val_score(model, X, y, cv=5, n_jobs=2, params=declared)
    assert in_memory.spent == 0.0


def test_joblib_threads_fit_against_the_same_file(path):
    from joblib import Parallel, delayed

    acc = pt.BudgetAccountant.open(path, 2.5)
    charged = Parallel(n_jobs=2, backend="threading")(
        delayed(fit_dpdilca)(acc, seed) for seed in range(4)
    )
    assert sorted(charged) == [False, False, True, True]
    assert acc.spent == 2.0


def test_dask_workers_fit_against_the_same_file(path):
    pytest.importorskip("distributed")
    from _dask import local_client

    acc = pt.BudgetAccountant.open(path, 2.5)
    with local_client() as client:
        futures = [
            client.submit(fit_dpdilca, acc, seed, pure=False) for seed in range(4)
        ]
        charged = client.gather(futures)
    assert sorted(charged) == [False, False, True, True]
    reopened = pt.BudgetAccountant.open(path)
    assert reopened.spent == 2.0
    assert len(reopened.ledger) == 2
