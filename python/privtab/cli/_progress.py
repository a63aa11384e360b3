"""Progress of the Dask computations of a command, in the demo's rich progress style.

:func:`dask_progress` shows, on stderr and only on a terminal, one bar per Dask
computation run inside it: the tasks of every partition (read, encode, count) and
of the merges, done out of all. On a ``distributed`` cluster it follows the tasks
through the scheduler (distributed's own :class:`~distributed.diagnostics.progressbar.ProgressBar`
feed); on Dask's local scheduler through a :class:`dask.callbacks.Callback`.

Core kernels called: none.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

__all__ = ["dask_progress"]

_DESCRIPTION = "counting IN ({where})"


@contextlib.contextmanager
def dask_progress(console: Console | None = None) -> Iterator[None]:
    """Draw the progress of the Dask computations run in the context.

    The bars are drawn only when ``console`` (stderr by default) is a terminal;
    the computations go through the same path either way.
    """
    import dask

    console = console if console is not None else Console(stderr=True)
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} tasks"),
        TimeElapsedColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=True,
    ) as bar:
        client = _current_client()
        if client is None:
            with _local_progress(bar):
                yield
        else:
            get = functools.partial(_get_with_progress, client, bar)
            with dask.config.set(scheduler=get):
                yield


def _current_client() -> Any:
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:  # no client: Dask's local scheduler
        return None


def _get_with_progress(
    client: Any, bar: Progress, dsk: Any, keys: Any, **kwargs: Any
) -> Any:
    """``client.get`` that follows the tasks of the graph on a progress bar."""
    from distributed import futures_of
    from distributed.diagnostics.progressbar import ProgressBar

    futures = client.get(dsk, keys, sync=False, **kwargs)
    task = bar.add_task(_DESCRIPTION.format(where="cluster"), total=None)

    class _Feed(ProgressBar):
        def _draw_bar(self, remaining: int, all: int, **_: Any) -> None:
            bar.update(task, total=all, completed=all - remaining)

    client.sync(_Feed(futures_of(futures), scheduler=client.scheduler.address).listen)
    return client.gather(futures)


def _local_progress(bar: Progress) -> Any:
    """Return a :class:`dask.callbacks.Callback` advancing one bar per computation."""
    from dask.callbacks import Callback

    tasks: list[TaskID] = []

    def start_state(dsk: Any, state: dict[str, Any]) -> None:
        total = sum(len(state[k]) for k in ("ready", "waiting", "running", "finished"))
        where = _DESCRIPTION.format(where="local scheduler")
        tasks.append(bar.add_task(where, total=total))

    def posttask(*_: Any) -> None:
        bar.advance(tasks[-1])

    return Callback(start_state=start_state, posttask=posttask)
