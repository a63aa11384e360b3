"""How many threads privtab's kernels use: ``n_threads``, or a ``privtab.threads`` block.

Every kernel runs on a rayon pool. A function or estimator given ``n_threads`` runs on
that many threads; one given none (``None``, the default) runs on the threads of the
innermost enclosing ``with privtab.threads(n):`` block of the calling thread, and outside
any block on every core of the machine (rayon's default, or ``RAYON_NUM_THREADS`` when it
is set before the first kernel runs). Results never depend on the thread count: the
kernels split their work into fixed-size chunks.

Core kernels called: ``privtab._core.set_block_threads`` and ``kernel_threads``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from privtab import _core
from privtab._validation import check_threads

__all__ = ["kernel_threads", "runs_on_threads", "threads"]

_Method = TypeVar("_Method", bound=Callable[..., Any])


@contextlib.contextmanager
def threads(n_threads: int | None) -> Iterator[int | None]:
    """Run the kernels called in this block on ``n_threads`` threads.

    The one way to set the thread count of everything privtab runs, including the
    estimators and functions that take no ``n_threads`` of their own: within the block
    every kernel called from this thread without an explicit ``n_threads`` uses
    ``n_threads`` threads. An explicit ``n_threads`` argument still wins. Blocks nest;
    leaving one restores the enclosing setting, also when the block raises.

    Parameters
    ----------
    n_threads : int >= 1 or None
        Threads per kernel; ``None`` is every core (rayon's default).

    Yields
    ------
    int or None
        ``n_threads``, checked.

    Raises
    ------
    TypeError, ValueError
        If ``n_threads`` is not an int >= 1 or ``None``.

    Notes
    -----
    The setting belongs to the calling thread, like a ``decimal.localcontext``: kernels
    called from other threads (joblib's or Dask's workers) are not affected. To bound
    those, give their functions ``n_threads`` or set ``RAYON_NUM_THREADS`` in the
    workers' environment. Results are identical whatever the thread count, so the
    setting changes speed and memory only, never a release.

    Examples
    --------
    >>> import numpy as np
    >>> import privtab
    >>> with privtab.threads(1):
    ...     privtab.kernel_threads()
    1
    >>> table = np.array([[0, 1], [1, 1], [1, 0]], dtype=np.uint8)
    >>> with privtab.threads(1):
    ...     one = privtab.count_columns(table, [2, 2], [0, 1])
    >>> two = privtab.count_columns(table, [2, 2], [0, 1], n_threads=2)
    >>> np.array_equal(one.counts, two.counts)
    True
    """
    checked = check_threads(n_threads)
    previous = _core.set_block_threads(checked)
    try:
        yield checked
    finally:
        _core.set_block_threads(previous)


def kernel_threads() -> int:
    """Return the number of threads a kernel called here without ``n_threads`` uses.

    That of the innermost :func:`threads` block of the calling thread, else the size
    of the process's pool (every core, or ``RAYON_NUM_THREADS``). It is measured by
    running a kernel, so it is what the kernels really get.
    """
    return _core.kernel_threads()


def runs_on_threads(method: _Method) -> _Method:
    """Run an estimator's ``method`` within ``threads(self.n_threads)``.

    For the estimators whose kernels are called through functions without an
    ``n_threads`` of their own: their ``n_threads`` parameter applies to every kernel
    the method calls, as a :func:`threads` block would; ``None`` leaves the caller's
    setting alone.
    """

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.n_threads is None:
            return method(self, *args, **kwargs)
        with threads(self.n_threads):
            return method(self, *args, **kwargs)

    return run  # type: ignore[return-value]
