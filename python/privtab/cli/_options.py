"""What the ``privtab`` subcommands share: options, input, warnings, errors, output.

The option factories (``epsilon_option``, ``seed_option``, ``classes_option``, ...)
give every subcommand the same flags with the same checks; :func:`read_input`,
:func:`release` and :func:`write_output` are the three steps every subcommand takes
around its estimator (read IN, run with the library's warnings and errors turned into
shell messages, write OUT).

The counting commands also take :func:`cluster_options` (``--scheduler ADDRESS``,
``--workers N``) and read IN through :func:`open_input`: with either option, or
when IN is a directory of Parquet partitions, IN becomes a Dask DataFrame read one
partition at a time on Dask's current scheduler (:mod:`privtab.engine`), and
:func:`encode` fits the encoder on the rows that show its domains
(:func:`privtab.cli._io.domain_sample`), so that it infers and warns exactly as on
the table in memory, and the release is the same for the same seed.

Core kernels called: none (option parsing, pandas/Dask I/O and JSON).
"""

from __future__ import annotations

import contextlib
import json
import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from privtab._validation import check_epsilon
from privtab.exceptions import PrivtabError

__all__ = [
    "bounds_option",
    "choice_option",
    "classes_option",
    "cluster_options",
    "count_option",
    "encode",
    "epsilon_option",
    "input_argument",
    "json_value",
    "labels_of",
    "ledger_pairs",
    "open_input",
    "option",
    "output_option",
    "read_input",
    "release",
    "seed_option",
    "target_option",
    "write_output",
]

F = TypeVar("F", bound=Callable[..., Any])


def _epsilon_callback(
    ctx: click.Context, param: click.Parameter, value: float | None
) -> float | None:
    if value is None:
        return None
    try:
        return check_epsilon(value)
    except (TypeError, ValueError) as exc:
        raise click.BadParameter(str(exc)) from None


def epsilon_option(
    default: float | None = 1.0,
    help: str | None = None,
    *names: str,
) -> Callable[[F], F]:
    """Add a privacy-budget option: a finite float > 0 (``--epsilon/-e`` by default).

    ``names`` gives another option (``"--epsilon-selection"``); ``default=None``
    leaves it unset unless given.
    """
    return click.option(
        *(names or ("--epsilon", "-e")),
        type=float,
        default=default,
        show_default=default is not None,
        callback=_epsilon_callback,
        help=help
        or "Privacy budget ε (smaller is more private and noisier; finite and > 0).",
    )


def seed_option(help: str | None = None) -> Callable[[F], F]:
    """Add the shared ``--seed`` option: a non-negative int, or none for OS entropy."""
    return click.option(
        "--seed",
        type=click.IntRange(min=0),
        default=None,
        help=help
        or "Seed the noise for a reproducible run. A known seed voids the privacy "
        "of the output; omit it (operating-system entropy) for real releases.",
    )


def input_argument(partitions: bool = False) -> Callable[[F], F]:
    """Add the ``IN`` argument: the input table (.csv, .tsv or .parquet).

    With ``partitions``, IN may also be a directory of Parquet partitions.
    """
    return click.argument(
        "input_path", metavar="IN", type=click.Path(dir_okay=partitions)
    )


def output_option(metavar: str, help: str) -> Callable[[F], F]:
    """Add the shared required ``--output/-o`` file option."""
    return click.option(
        "--output",
        "-o",
        "output_path",
        required=True,
        metavar=metavar,
        type=click.Path(dir_okay=False),
        help=help,
    )


def target_option(
    help: str = "Name of the label column (the class to predict).",
) -> Callable[[F], F]:
    """Add the required ``--target`` option: the name of the label column."""
    return click.option("--target", required=True, help=help)


def option(
    *decls: str, help: str, default: Any = None, **attrs: Any
) -> Callable[[F], F]:
    """``click.option`` with the house rule: a default, when there is one, is shown."""
    if default is not None:
        attrs.update(default=default, show_default=True)
    return click.option(*decls, help=help, **attrs)


def count_option(
    *decls: str, help: str, default: int | None = None, **attrs: Any
) -> Callable[[F], F]:
    """Add an option whose value is a whole number >= 1."""
    return option(
        *decls, type=click.IntRange(min=1), default=default, help=help, **attrs
    )


def choice_option(name: str, choices: Sequence[str], help: str) -> Callable[[F], F]:
    """Add an option that takes one of ``choices``, the first by default."""
    return option(name, type=click.Choice(list(choices)), default=choices[0], help=help)


def _parse_classes(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> list[str] | None:
    if value is None:
        return None
    labels = value.split(",")
    if "" in labels:
        raise click.BadParameter(
            f"expected labels separated by commas, got an empty label in {value!r}"
        )
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise click.BadParameter(
            f"repeats the label(s) {', '.join(map(repr, repeated))}"
        )
    return labels


def classes_option() -> Callable[[F], F]:
    """Add the ``--classes`` option: the public label set of the target column."""
    return click.option(
        "--classes",
        metavar="LABEL,LABEL,...",
        default=None,
        callback=_parse_classes,
        help="The public labels of TARGET, separated by commas and written as in IN "
        "(e.g. --classes '<=50K,>50K'); a row with another label is an error. "
        "Default: the labels found in the data, with a warning (a label held by "
        "one record would show in the output).",
    )


def _parse_bounds(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, tuple[float, float]]:
    bounds: dict[str, tuple[float, float]] = {}
    for value in values:
        name, sep, rest = value.rpartition("=")
        low, colon, high = rest.partition(":")
        try:
            pair = (float(low), float(high))
        except ValueError:
            pair = (math.nan, math.nan)
        if not (sep and name and colon) or not all(map(math.isfinite, pair)):
            raise click.BadParameter(
                f"expected COLUMN=LOW:HIGH with finite numbers, got {value!r}"
            )
        if not pair[0] < pair[1]:
            raise click.BadParameter(f"LOW must be < HIGH, got {value!r}")
        bounds[name] = pair
    return bounds


def bounds_option(help: str) -> Callable[[F], F]:
    """Add the repeatable ``--bounds COL=LO:HI`` option, parsed into a dict."""
    return click.option(
        "--bounds",
        "bounds",
        multiple=True,
        metavar="COL=LO:HI",
        callback=_parse_bounds,
        help=help,
    )


def cluster_options(f: F) -> F:
    """Add ``--scheduler ADDRESS`` and ``--workers N``: count IN on a Dask cluster."""
    f = click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help="Count IN on a local Dask cluster of N worker processes, reading it one "
        "Parquet partition at a time. The cluster listens on 127.0.0.1 only, over TLS "
        "with a certificate made for this run, and has no dashboard "
        '(pip install "privtab[dask]").',
    )(f)
    return click.option(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="Count IN on the running Dask cluster whose scheduler is at ADDRESS "
        "(e.g. tls://host:8786), reading it one Parquet partition at a time. The "
        "scheduler and its workers see the private data: use only a cluster you "
        "trust with it. A tls:// address takes its certificates from Dask's "
        "configuration (distributed.comm.tls.*).",
    )(f)


_DASK_MISSING = (
    "{what} needs Dask, which is not installed; install the extra with "
    'pip install "privtab[dask]"'
)

#: Dask's HTTP pages show task states and errors, whose messages can quote values
#: of the rows; a cluster started by ``--workers`` serves none of them.
_NO_HTTP_PAGES: dict[str, list[str]] = {
    "distributed.scheduler.http.routes": [],
    "distributed.worker.http.routes": [],
}


@contextlib.contextmanager
def _dask_scheduler(scheduler: str | None, workers: int | None) -> Iterator[None]:
    """Make a ``distributed.Client`` current: at ``scheduler``, or of a local cluster.

    The scheduler and the workers read the rows, so they are inside the trust boundary.
    At ``scheduler`` the client takes its security settings from Dask's configuration
    (``distributed.comm.tls.*``, or ``distributed.client.security-loader``), which a
    ``tls://`` address needs. The local cluster of ``workers`` processes listens on
    127.0.0.1 only and speaks TLS with a certificate made for it and held in memory
    (``distributed.Security.temporary``), so a process without that certificate can
    neither join it nor submit work to it; it has no dashboard, and its HTTP servers
    (which Dask always starts) serve no pages.
    """
    if scheduler is None and workers is None:
        yield
        return
    option_name = "--scheduler" if scheduler is not None else "--workers"
    try:
        import dask
        from distributed import Client, LocalCluster, Security
    except ImportError:
        raise click.ClickException(_DASK_MISSING.format(what=option_name)) from None
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=5)
        except (OSError, ValueError, TypeError, RuntimeError) as exc:
            advice = ""
            if scheduler.startswith("tls://"):
                advice = (
                    "; a tls:// scheduler takes the client's certificates from "
                    "Dask's configuration (distributed.comm.tls.ca-file, "
                    "distributed.comm.tls.client.cert, distributed.comm.tls.client.key)"
                )
            raise click.BadParameter(
                f"cannot connect to the Dask scheduler at {scheduler!r}: {exc}{advice}",
                param_hint="--scheduler",
            ) from None
        with client:
            yield
        return
    try:
        security = Security.temporary()
    except ImportError:
        raise click.ClickException(
            "--workers needs the cryptography package for its cluster's TLS "
            'certificate; install the extra with pip install "privtab[dask]"'
        ) from None
    with dask.config.set(_NO_HTTP_PAGES):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            security=security,
            dashboard_address=None,
            # The scheduler's HTTP server starts without a dashboard too: on a port of
            # the system's choosing rather than 8787, which another cluster may hold.
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        )
    with cluster, Client(cluster):
        yield


@contextlib.contextmanager
def open_input(
    input_path: str,
    target: str | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
) -> Iterator[Any]:
    """Read IN, in memory or lazily on Dask, for as long as the context lasts.

    IN is read lazily (a Dask DataFrame, see :func:`privtab.cli._io.read_parquet_lazily`)
    when ``--scheduler`` or ``--workers`` is given or IN is a directory; the
    computations in the context then run on that scheduler (else Dask's local one),
    with their progress on stderr (:func:`privtab.cli._progress.dask_progress`).

    Raises
    ------
    click.UsageError
        If both ``--scheduler`` and ``--workers`` are given.
    click.ClickException
        If Dask is needed but not installed, or IN cannot be read.
    """
    if scheduler is not None and workers is not None:
        raise click.UsageError("give --scheduler or --workers, not both")
    if scheduler is None and workers is None and not Path(input_path).is_dir():
        yield read_input(input_path, target)
        return
    from privtab.cli import _io
    from privtab.cli._progress import dask_progress

    what = "reading a directory of Parquet partitions"
    if scheduler is not None or workers is not None:
        what = "--scheduler" if scheduler is not None else "--workers"
    try:
        import dask.dataframe  # noqa: F401
    except ImportError:
        raise click.ClickException(_DASK_MISSING.format(what=what)) from None
    with _dask_scheduler(scheduler, workers), dask_progress():
        try:
            frame = _io.read_parquet_lazily(input_path)
        except (OSError, ValueError) as exc:
            raise click.ClickException(f"cannot read {input_path}: {exc}") from exc
        yield _check_target(frame, input_path, target)


def encode(encoder: Any, frame: Any) -> Any:
    """Fit ``encoder`` on ``frame`` and encode it: in memory, or lazily for Dask.

    For a Dask DataFrame the encoder is fitted on :func:`~privtab.cli._io.domain_sample`
    (the default bins from the whole table's row count), so it infers the same
    categories and bounds, with the same warning, as on the table in memory; the
    codes stay a Dask array, encoded partition by partition where they are counted.
    """
    from privtab.engine import is_distributed
    from privtab.table import lei_bins

    if not is_distributed(frame):
        return encoder.fit_transform(frame)
    from privtab.cli import _io

    sample, n_rows = _io.domain_sample(frame)
    if encoder.bins is None and n_rows >= 2:
        encoder.set_params(bins=lei_bins(n_rows, frame.shape[1]))
    return encoder.fit(sample).transform(frame)


def labels_of(frame: Any, target: str) -> Any:
    """Return the labels of TARGET as text: numpy, or a Dask Series for Dask."""
    from privtab.engine import is_distributed

    labels = frame[target].astype(str)
    return labels if is_distributed(labels) else labels.to_numpy()


def read_input(input_path: str, target: str | None = None) -> Any:
    """Read IN as a DataFrame; with ``target``, check that it is one of its columns."""
    from privtab.cli import _io

    try:
        frame = _io.read_table(input_path)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot read {input_path}: {exc}") from exc
    return _check_target(frame, input_path, target)


def _check_target(frame: Any, input_path: str, target: str | None) -> Any:
    if target is not None and target not in frame.columns:
        raise click.BadParameter(
            f"{target!r} is not a column of {input_path}; columns: "
            f"{', '.join(map(str, frame.columns))}",
            param_hint="--target",
        )
    return frame


#: Advice in the library's warnings, and how to follow it from the shell.
_SHELL_ADVICE = {
    "with classes=[...]": "with --classes",
    "declare bounds=...": "declare them with --bounds COL=LO:HI",
    "with data_norm=...": "with --data-norm",
}


def _shell_advice(message: str) -> str:
    for python, shell in _SHELL_ADVICE.items():
        message = message.replace(python, shell)
    return message


@contextlib.contextmanager
def release() -> Iterator[list[str]]:
    """Run a release: its errors become shell errors, its warnings go to stderr.

    A :class:`~privtab.exceptions.PrivtabError`, ``ValueError``, ``TypeError`` or
    ``MemoryError`` raised inside stops the command with its message. On success each
    distinct warning is printed once to stderr, with the library's advice
    (``classes=[...]``) rewritten as the shell's (``--classes``). Yields the list the
    messages are put in (sorted), for JSON outputs. Warnings raised inside Dask
    (its own deprecations, and pandas' seen from Dask) are not the release's and
    are left out, so a table read on Dask reports what it reports in memory.
    """
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", module=r"(dask|distributed)(\.|$)")
        try:
            yield notes
        except (PrivtabError, ValueError, TypeError, MemoryError) as exc:
            raise click.ClickException(str(exc)) from exc
    notes.extend(sorted({_shell_advice(str(w.message)) for w in caught}))
    for note in notes:
        click.echo(f"warning: {note}", err=True)


def write_output(
    output_path: str, result: Mapping[str, Any] | None, table: Any = None
) -> None:
    """Write ``result`` as JSON, or ``table`` (a DataFrame) by the extension of OUT.

    With both, a ``.json`` OUT gets the JSON and any other extension the table. A
    Dask ``table`` is computed only when it is written.
    """
    from privtab.cli import _io

    out = Path(output_path)
    try:
        if result is not None and (table is None or out.suffix.lower() == ".json"):
            out.write_text(json.dumps(result, indent=2) + "\n")
        else:
            if hasattr(table, "compute"):
                table = table.compute()
            _io.write_table(table, out)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot write {output_path}: {exc}") from exc


def ledger_pairs(ledger: Iterable[Any]) -> list[list[Any]]:
    """Return a privacy ledger as JSON pairs ``[label, epsilon]``."""
    return [[label, eps] for label, eps in ledger]


def json_value(value: Any) -> Any:
    """Return a category as JSON: numbers stay numbers, the rest becomes text."""
    if value is None:
        return None
    if isinstance(value, bool | int | float | str):
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)
