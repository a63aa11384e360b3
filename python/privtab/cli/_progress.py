"""Progress of a command on stderr, in the demo's rich progress style.

:func:`working` shows a spinner, what the command is doing and the time elapsed while
a method runs that gives no progress of its own (a selection, a masking); it is drawn
only on a terminal, and not inside :func:`dask_progress`, whose bars say more.

:func:`dask_progress` shows, on stderr and only on a terminal, one bar per Dask
computation run inside it: the tasks of every partition (read, encode, count) and
of the merges, done out of all. On a ``distributed`` cluster it follows the tasks
through the scheduler (distributed's own :class:`~distributed.diagnostics.progressbar.ProgressBar`
feed); on Dask's local scheduler through a :class:`dask.callbacks.Callback`.

Core kernels called: none.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

__all__ = ["dask_progress", "stderr_console", "working"]

_DESCRIPTION = "counting IN ({where})"

#: Whether a progress display is already drawn (rich draws one at a time).
_DRAWING: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "privtab_cli_drawing", default=False
)


def stderr_console() -> Console:
    """Return the console progress is drawn on: stderr, only if it is a terminal."""
    return Console(stderr=True)


@contextlib.contextmanager
def working(
    description: str, console: Console | None = None
) -> Iterator[Callable[[str], None]]:
    """Show a spinner, ``description`` and the time elapsed while the context runs.

    Drawn on stderr (:func:`stderr_console`) when it is a terminal and no other
    progress is drawn; the display is removed when the context ends. The context
    gives a function that replaces the description (to show how far a method is);
    it does nothing when nothing is drawn.
    """
    console = console if console is not None else stderr_console()
    if _DRAWING.get() or not console.is_terminal:
        yield lambda _: None
        return
    token = _DRAWING.set(True)
    try:
        with Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as progress:
            task = progress.add_task(description, total=None)
            yield lambda text: progress.update(task, description=text)
    finally:
        _DRAWING.reset(token)


@contextlib.contextmanager
def dask_progress(console: Console | None = None) -> Iterator[None]:
    """Draw the progress of the Dask computations run in the context.

    The bars are drawn only when ``console`` (stderr by default) is a terminal;
    the computations go through the same path either way.
    """
    import dask

    console = console if console is not None else stderr_console()
    token = _DRAWING.set(console.is_terminal)
    try:
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
    finally:
        _DRAWING.reset(token)


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
