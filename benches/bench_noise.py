"""Time privtab's noise: the exact discrete Laplace sampler against OpenDP's integer
Laplace, and the floating-point-safe real Laplace mechanism against textbook float noise.

Run on purpose (not part of the test suite)::

    python benches/bench_noise.py [n_values]

Prints ns per value for privtab on 1 and 2 threads, for OpenDP's ``make_laplace`` on an
integer vector domain (exact integer sampling as well) and the ratio, and for NumPy's
float ``Generator.laplace`` of the same scale (inexact, one thread) with privtab's time
over NumPy's (the goal is at most 1). Then the seconds
of ``laplace_mechanism`` on ``n_values`` reals (grid construction, exact) against the
textbook construction it replaced (``values + scale·Exp·sign`` in floating point: the
core's raw float sampler plus a NumPy add) and NumPy's own float Laplace, in one process.
"""

from __future__ import annotations

import sys

import numpy as np

from privtab import _core

from _timing import best_seconds


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    n_opendp = min(n, 200_000)
    scales = [(1.0, 1.0), (1.0, 0.1), (2.0, 0.01)]
    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
    except ImportError:
        dp = None
    print(
        f"{'scale':>8} {'privtab 1 thr':>14} {'privtab 2 thr':>14} {'opendp':>12} "
        f"{'ratio':>8} {'numpy float':>12} {'/ numpy':>8}"
    )
    for sensitivity, epsilon in scales:
        per = {}
        for threads in (1, 2):
            seconds = best_seconds(
                3,
                lambda threads=threads, sens=sensitivity, eps=epsilon: (
                    _core.discrete_laplace_samples(n, sens, eps, None, threads)
                ),
            )
            per[threads] = seconds / n * 1e9
        opendp_ns = float("nan")
        if dp is not None:
            meas = dp.m.make_laplace(
                dp.vector_domain(dp.atom_domain(T=int)),
                dp.l1_distance(T=int),
                scale=sensitivity / epsilon,
            )
            data = np.zeros(n_opendp, dtype=np.int64).tolist()
            opendp_ns = (
                best_seconds(1, lambda meas=meas, data=data: meas(data))
                / n_opendp
                * 1e9
            )
        numpy_ns = (
            best_seconds(
                3,
                lambda scale=sensitivity / epsilon: np.random.default_rng(1).laplace(
                    0.0, scale, n
                ),
            )
            / n
            * 1e9
        )
        ratio = opendp_ns / min(per.values())
        print(
            f"{sensitivity / epsilon:>8g} {per[1]:>12.1f}ns {per[2]:>12.1f}ns "
            f"{opendp_ns:>10.1f}ns {ratio:>7.1f}x {numpy_ns:>10.1f}ns "
            f"{min(per.values()) / numpy_ns:>7.2f}x"
        )


def real_valued(n: int) -> None:
    import privtab as pt

    values = np.random.default_rng(0).normal(size=n)
    rows = {
        "laplace_mechanism (grid, exact)": lambda: pt.laplace_mechanism(
            values, 1.0, 1.0, random_state=1, accountant=pt.BudgetAccountant()
        ),
        "textbook float (raw sampler + add)": lambda: (
            values + _core.laplace_samples(n, 1.0, 1)
        ),
        "numpy Generator.laplace": lambda: np.random.default_rng(1).laplace(
            values, 1.0
        ),
    }
    times = {name: best_seconds(5, fn) for name, fn in rows.items()}
    base = times["textbook float (raw sampler + add)"]
    print(f"\nreal-valued Laplace, {n:,} values")
    for name, seconds in times.items():
        print(f"{name:>36} {seconds:8.3f} s {seconds / base:6.2f}x textbook")


if __name__ == "__main__":
    main()
    real_valued(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000)
