"""privtab in processes forked after it has run (``multiprocessing``'s "fork" method).

The children must finish (the core's thread pool does not survive a fork) and must draw
noise of their own (a generator state copied by the fork would give every child the
same noise).
"""

from __future__ import annotations

import _thread
import multiprocessing
import os
import signal
import threading
from typing import Any

import numpy as np
import pytest

import privtab as pt
from privtab import _core

pytestmark = [
    pytest.mark.skipif(
        "fork" not in multiprocessing.get_all_start_methods(), reason="needs fork"
    ),
    # Python 3.12+ warns when a process with threads (the core's pool) forks.
    pytest.mark.filterwarnings(
        r"ignore:This process \(pid=\d+\) is multi-threaded:DeprecationWarning"
    ),
]

#: Seconds a pool of forked children may take before the test fails instead of hanging.
TIMEOUT = 60

_barrier: Any = None


def _remember_barrier(barrier: Any) -> None:
    global _barrier
    _barrier = barrier


def _child_draws(_: int) -> tuple[int, list[float], list[int]]:
    # Every child waits for the other, so each child runs exactly one task, and the
    # draws below are the first privtab calls of the process.
    assert _barrier is not None
    _barrier.wait(timeout=TIMEOUT)
    noisy = pt.laplace_mechanism(
        np.zeros(200_000), sensitivity=1.0, epsilon=1.0, accountant=_childs_own()
    )
    subset = _core.sample_distinct(2**64, 4)
    return os.getpid(), noisy[:8].tolist(), subset.tolist()


def _childs_own() -> pt.BudgetAccountant:
    """An accountant made in the child: the parent's refuse to spend in a fork."""
    return pt.BudgetAccountant()


def _seeded_draw(seed: int) -> np.ndarray:
    return pt.laplace_mechanism(
        np.zeros(200_000),
        sensitivity=1.0,
        epsilon=1.0,
        random_state=seed,
        accountant=_childs_own(),
    )


def _draws_in_forked_children(n_children: int) -> list[tuple[int, list, list]]:
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(n_children)
    with context.Pool(
        n_children, initializer=_remember_barrier, initargs=(barrier,)
    ) as pool:
        pending = pool.map_async(_child_draws, range(n_children), chunksize=1)
        return pending.get(timeout=TIMEOUT)


def test_forked_children_finish_and_draw_their_own_noise():
    # The parent runs parallel kernels first (the pool's threads exist at the fork) and
    # draws a seed from the operating system on this thread.
    parent = pt.laplace_mechanism(np.zeros(200_000), sensitivity=1.0, epsilon=1.0)
    parent_subset = _core.sample_distinct(2**64, 4).tolist()
    draws = _draws_in_forked_children(2)
    pids = {pid for pid, _, _ in draws}
    assert len(pids) == 2
    assert os.getpid() not in pids
    noise = [tuple(values) for _, values, _ in draws] + [tuple(parent[:8].tolist())]
    subsets = [tuple(subset) for _, _, subset in draws] + [tuple(parent_subset)]
    assert len(set(noise)) == 3, noise
    assert len(set(subsets)) == 3, subsets
    # The parent's pool still works after the fork.
    assert np.isfinite(
        pt.laplace_mechanism(np.zeros(10), sensitivity=1.0, epsilon=1.0)
    ).all()


def test_fixed_seed_in_a_forked_child_matches_the_parent():
    expected = pt.laplace_mechanism(
        np.zeros(200_000), sensitivity=1.0, epsilon=1.0, random_state=7
    )
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        pending = pool.apply_async(_seeded_draw, (7,))
        in_child = pending.get(timeout=TIMEOUT)
    np.testing.assert_array_equal(in_child, expected)


def _dense_csr(n_rows: int, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    dense = np.random.default_rng(0).random((n_rows, n_items)) < 0.75
    indptr = np.concatenate([[0], np.cumsum(dense.sum(axis=1))]).astype(np.int64)
    return indptr, np.nonzero(dense)[1].astype(np.uint32)


def _interrupt_then_call_again(_: int) -> tuple[bool, str]:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    indptr, indices = _dense_csr(2000, 120)
    threading.Timer(0.5, _thread.interrupt_main).start()
    try:
        _core.maximal_sets(indptr, indices, 120, "frequency", 1, time_limit=30.0)
    except KeyboardInterrupt:
        stopped = True
    else:
        stopped = False
    try:
        pt.laplace_mechanism(
            np.zeros(10), sensitivity=1.0, epsilon=1.0, accountant=_childs_own()
        )
    except KeyboardInterrupt as err:
        return stopped, f"KeyboardInterrupt: {err}"
    return stopped, "ran"


def test_calls_running_in_the_parent_at_the_fork_do_not_hold_ctrl_c_in_the_child():
    # A search runs on another thread of the parent while the child is forked. In the
    # child, Ctrl-C stops a call, and the next call runs: the request ends with the
    # child's own calls, not with the parent's.
    indptr, indices = _dense_csr(2000, 120)
    started = threading.Event()

    def search() -> None:
        started.set()
        _core.maximal_sets(indptr, indices, 120, "frequency", 1, time_limit=3.0)

    searching = threading.Thread(target=search)
    searching.start()
    started.wait()
    try:
        threading.Event().wait(0.3)
        context = multiprocessing.get_context("fork")
        with context.Pool(1) as pool:
            pending = pool.apply_async(_interrupt_then_call_again, (0,))
            stopped, after = pending.get(timeout=TIMEOUT)
    finally:
        searching.join()
    assert stopped
    assert after == "ran"
