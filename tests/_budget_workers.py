"""Work done in other processes by the budget tests (importable by spawned children)."""

from __future__ import annotations

import os
import threading

import numpy as np

import privtab as pt


def spend_times(accountant: pt.BudgetAccountant, times: int, epsilon: float) -> int:
    """Spend ``epsilon`` ``times`` times; return how many spends were accepted."""
    accepted = 0
    for _ in range(times):
        try:
            accountant.spend(epsilon, label=f"pid {os.getpid()}")
        except pt.BudgetExceededError:
            continue
        accepted += 1
    return accepted


def try_spend(accountant: pt.BudgetAccountant | None, epsilon: float) -> str:
    """Release one Laplace count; return ``"spent"`` or the error's message."""
    try:
        pt.laplace_mechanism(np.array([3.0]), 1.0, epsilon, accountant=accountant)
    except pt.BudgetExceededError as exc:
        return str(exc)
    return "spent"


def spend_from_threads(
    accountant: pt.BudgetAccountant, threads: int, times: int, epsilon: float
) -> list[int]:
    """Spend from ``threads`` threads at once; return each thread's accepted count."""
    accepted = [0] * threads
    start = threading.Barrier(threads)

    def work(index: int) -> None:
        start.wait()
        accepted[index] = spend_times(accountant, times, epsilon)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    return accepted


def spend_until_killed(path: str, ack_fd: int) -> None:
    """Spend 0.001 at a time on the store at ``path``, writing each acknowledged index.

    Each index is written (as one line) to ``ack_fd`` only after its spend returned,
    so every acknowledged spend must be in the store, and at most one more.
    """
    accountant = pt.BudgetAccountant.open(path)
    index = len(accountant.ledger)
    while True:
        accountant.spend(0.001, label=f"spend {index}")
        os.write(ack_fd, f"{index}\n".encode())
        index += 1


def fit_dpdilca(accountant, seed):
    """Fit DP-DILCA (ε = 1) charging ``accountant``; ``True`` if it was charged."""
    import numpy as np

    import privtab as pt

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(60, 4))
    try:
        pt.DPDILCA(1.0, accountant=accountant, random_state=seed).fit(
            X, cardinalities=[3, 3, 3, 3]
        )
    except pt.BudgetExceededError:
        return False
    return True
