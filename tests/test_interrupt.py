"""Ctrl-C interrupts a long kernel (rust/privtab-py/src/errors.rs::run)."""

import _thread
import os
import signal
import threading
import time

import numpy as np
import pytest

from privtab import _core


def dense_csr(n_rows, n_items, seed=0):
    dense = np.random.default_rng(seed).random((n_rows, n_items)) < 0.75
    indptr = np.concatenate([[0], np.cumsum(dense.sum(axis=1))]).astype(np.int64)
    return indptr, np.nonzero(dense)[1].astype(np.uint32)


def send_sigint():
    os.kill(os.getpid(), signal.SIGINT)


@pytest.fixture
def sigint_raises():
    # A shell starts background jobs with SIGINT ignored, and Python then installs no
    # handler: install the one that raises KeyboardInterrupt for the test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="needs SIGINT")
@pytest.mark.parametrize("interrupt", [_thread.interrupt_main, send_sigint])
@pytest.mark.parametrize("n_threads", [None, 2])
def test_ctrl_c_stops_a_long_search(sigint_raises, interrupt, n_threads):
    # Maximal itemsets of support 1 in a dense 2000 x 120 matrix: minutes of work, cut at
    # 20 s so that a broken interruption fails on the elapsed time instead of hanging.
    indptr, indices = dense_csr(2000, 120)
    timer = threading.Timer(0.3, interrupt)
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            _core.maximal_sets(
                indptr, indices, 120, "frequency", 1, None, 20.0, n_threads
            )
        elapsed = time.perf_counter() - start
    finally:
        timer.join()
    assert elapsed < 5.0
    # The request is cleared: the next call runs to completion.
    small_indptr, small_indices = dense_csr(10, 8)
    found = _core.maximal_sets(small_indptr, small_indices, 8, "frequency", 5)
    assert found[3]
