"""What the ``privtab`` subcommands share: options, input, warnings, errors, output.

The option factories (``epsilon_option``, ``seed_option``, ``classes_option``, ...)
give every subcommand the same flags with the same checks; :func:`read_input`,
:func:`release` and :func:`write_output` are the three steps every subcommand takes
around its estimator (read IN, run with the library's warnings and errors turned into
shell messages, write OUT).

OUT is checked before a command reads IN and again when it is written
(:func:`output_option`, :func:`check_output`): it is never IN, an existing file or
link is replaced only with ``--force``, and the new file replaces the old in one step
(:func:`privtab.cli._io.replace_file`). Only the release goes to OUT; statistics
computed without noise, and domains taken from the data, go to stderr. A command
whose OUT would show domains taken from the data refuses them unless they are
declared (``--domain``, ``--bounds``, ``--classes``) or ``--allow-inferred-domains``
is given (:func:`refuse_inferred_domains`); one whose OUT would hold rows of IN
writes them only with ``--write-projection`` (:func:`check_projection`).

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
import functools
import json
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click
from click.core import ParameterSource
from rich.markup import escape

from privtab._validation import check_epsilon
from privtab.exceptions import PrivtabError

if TYPE_CHECKING:
    from privtab.accountant import BudgetAccountant

__all__ = [
    "INTEGER_CODES_MAX",
    "SHELL_TERMS",
    "Encoding",
    "ShellCommand",
    "allow_inferred_option",
    "bounds_option",
    "categorical_option",
    "check_columns",
    "check_output",
    "check_output_format",
    "check_projection",
    "choice_option",
    "classes_option",
    "clip_option",
    "cluster_options",
    "command",
    "count_option",
    "declared_bounds",
    "declared_domains",
    "domain_option",
    "encode_table",
    "encoding_options",
    "epsilon_option",
    "force_option",
    "input_argument",
    "input_columns",
    "json_value",
    "labels_of",
    "ledger_pairs",
    "literal",
    "missing_option",
    "open_budget",
    "open_input",
    "option",
    "output_option",
    "projection_option",
    "read_input",
    "refuse_inferred_domains",
    "release",
    "renamed_option",
    "seed_option",
    "shell_terms",
    "target_option",
    "write_output",
]

F = TypeVar("F", bound=Callable[..., Any])

#: An integer column whose values span at most this many integers is read as codes
#: (one category per integer) unless an option declares it (:func:`encode_table`).
INTEGER_CODES_MAX = 32


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
    budget: bool = True,
) -> Callable[[F], F]:
    """Add a privacy-budget option: a finite float > 0 (``--epsilon/-e`` by default).

    ``names`` gives another option (``"--epsilon-selection"``); ``default=None``
    leaves it unset unless given. With ``budget`` (the default), the command also
    gets ``--budget PATH``, once however many epsilon options it has: the budget
    file (``privtab budget init``) that :func:`release` charges.
    """
    epsilon = click.option(
        *(names or ("--epsilon", "-e")),
        type=float,
        default=default,
        show_default=default is not None,
        callback=_epsilon_callback,
        help=help
        or "Privacy budget ε (smaller is more private and noisier; finite and > 0).",
    )
    if not budget:
        return epsilon

    def decorate(f: F) -> F:
        declared = getattr(f, "__click_params__", [])
        if not any(param.name == _BUDGET_PARAM for param in declared):
            f = click.option(
                "--budget",
                _BUDGET_PARAM,
                metavar="PATH",
                default=None,
                expose_value=False,
                callback=_budget_callback,
                help="Charge the release to the budget kept in PATH (made by "
                "`privtab budget init PATH --epsilon E`) and shared by every run: "
                "the command stops before computing if the budget cannot afford "
                "it, and records what it spent.",
            )(f)
        return epsilon(f)

    return decorate


_BUDGET_PARAM = "budget_path"
#: Where the ``--budget`` option leaves the opened accountant for :func:`release`.
_BUDGET_KEY = "privtab.budget"


def open_budget(path: str, param_hint: str) -> BudgetAccountant:
    """Open the budget file ``path``, or stop with a message that says how to make one."""
    from privtab.accountant import BudgetAccountant

    try:
        return BudgetAccountant.open(path)
    except FileNotFoundError:
        raise click.BadParameter(
            f"no budget file {path}; create it with `privtab budget init {path} "
            "--epsilon E`",
            param_hint=param_hint,
        ) from None
    except (OSError, ValueError) as exc:
        raise click.BadParameter(str(exc), param_hint=param_hint) from None


def _budget_callback(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> None:
    if value is None:
        return
    if value in _FORMER_TRAINING_BUDGETS and not Path(value).exists():
        raise click.BadParameter(
            f"{param.opts[0]} names a budget file (privtab budget init PATH); the "
            f"split of ε₂ over the SVM refits is --training-budget {value}",
            ctx,
            param,
        )
    ctx.meta[_BUDGET_KEY] = open_budget(value, param.opts[0])


#: The values of ``select --budget`` before it became ``--training-budget``: given to
#: ``--budget`` now, they are explained rather than opened as a file.
_FORMER_TRAINING_BUDGETS = ("per_refit", "total")


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


def _check_input_path(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from privtab.cli import _io

    if not Path(value).is_dir() and _io.table_format(value) is None:
        raise click.BadParameter(
            f"cannot tell the format of {value!r} from its extension; the file name "
            f"must end in {_io.TABLE_EXTENSIONS}"
        )
    return value


def input_argument(partitions: bool = False) -> Callable[[F], F]:
    """Add the ``IN`` argument: the input table (.csv, .tsv or .parquet).

    With ``partitions``, IN may also be a directory of Parquet partitions. An IN
    whose extension names no table format is refused before anything is read.
    """
    return click.argument(
        "input_path",
        metavar="IN",
        type=click.Path(dir_okay=partitions),
        callback=_check_input_path,
    )


def force_option() -> Callable[[F], F]:
    """Add ``--force``: replace an existing OUT (read by :func:`check_output`)."""
    return click.option(
        "--force",
        is_flag=True,
        default=False,
        help="Replace OUT if it exists (a symbolic link at OUT is replaced, not "
        "followed). OUT is never IN, even with --force.",
    )


def output_option(
    metavar: str, help: str, formats: Sequence[str] = ("table",)
) -> Callable[[F], F]:
    """Add the required ``--output/-o`` file and ``--force``; check OUT first.

    Before the command runs, OUT is checked (:func:`check_output`) against IN (the
    command's ``input_path``, if it has one) and ``--force``, and its extension
    against ``formats`` (``"table"``: .csv, .tsv or .parquet; ``"json"``), so that
    a command refuses an OUT it could not write before it reads IN or spends any
    ε. The command does not receive ``force``: :func:`write_output` reads it from
    the click context.
    """

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def checked(*args: Any, **kwargs: Any) -> Any:
            force = kwargs.pop("force")
            check_output(kwargs["output_path"], kwargs.get("input_path"), force)
            check_output_format(kwargs["output_path"], formats)
            return command(*args, **kwargs)

        with_force = force_option()(checked)
        return cast(
            F,
            click.option(
                "--output",
                "-o",
                "output_path",
                required=True,
                metavar=metavar,
                type=click.Path(dir_okay=False),
                help=help,
            )(with_force),
        )

    return decorate


def check_output_format(output_path: str, formats: Sequence[str]) -> None:
    """Refuse an OUT whose extension is none of ``formats`` (``"table"``, ``"json"``).

    Raises
    ------
    click.BadParameter
        If the extension of OUT names no format the command writes.
    """
    from privtab.cli import _io

    if "json" in formats and Path(output_path).suffix.lower() == ".json":
        return
    if "table" in formats and _io.table_format(output_path) is not None:
        return
    names = [
        _io.TABLE_EXTENSIONS if kind == "table" else f".{kind}" for kind in formats
    ]
    raise click.BadParameter(
        f"cannot tell what to write to {output_path!r} from its extension; the file "
        f"name must end in {' or '.join(names)}",
        param_hint="'--output'",
    )


def _is_same_file(output: Path, input_path: Path) -> bool:
    """Whether writing ``output`` would write IN (or into IN, a directory)."""
    real_output = Path(os.path.realpath(output))
    real_input = Path(os.path.realpath(input_path))
    if real_output == real_input or real_input in real_output.parents:
        return True
    try:
        return os.path.samefile(output, input_path)
    except OSError:
        return False


def check_output(
    output_path: str | Path,
    input_path: str | Path | None = None,
    force: bool = False,
    option: str = "--output",
) -> None:
    """Refuse an OUT that is IN, that exists without ``--force``, or has no directory.

    OUT is IN when both name the same file (through links too) or OUT lies in IN,
    a directory of partitions: refused even with ``force``. A symbolic link at OUT
    counts as an existing OUT, wherever it points. ``option`` names the option that
    gave OUT, in the messages.

    Raises
    ------
    click.BadParameter
        If OUT is IN, or OUT exists and ``force`` is false.
    click.ClickException
        If the directory of OUT does not exist.
    """
    output = Path(output_path)
    if input_path is not None and _is_same_file(output, Path(input_path)):
        raise click.BadParameter(
            f"{str(output)!r} is the input {str(input_path)!r} (or inside it); "
            "writing it would destroy IN, even with --force: choose another file",
            param_hint=f"'{option}'",
        )
    if os.path.lexists(output) and not force:
        what = "is a symbolic link" if output.is_symlink() else "exists"
        raise click.BadParameter(
            f"{str(output)!r} {what}; pass --force to replace it",
            param_hint=f"'{option}'",
        )
    if not output.absolute().parent.is_dir():
        raise click.ClickException(
            f"cannot write {option} {output}: the directory {str(output.parent)!r} "
            "does not exist"
        )


def projection_option() -> Callable[[F], F]:
    """Add ``--write-projection``: allow OUT to hold rows of IN (a table extension)."""
    return click.option(
        "--write-projection",
        is_flag=True,
        default=False,
        help="Allow a .csv, .tsv or .parquet OUT: the rows of IN on the selected "
        "columns and the target, with their original values (raw data). Without "
        "it, OUT must be .json (the selection).",
    )


def check_projection(
    output_path: str,
    write_projection: bool,
    guarantee: str = "which no privacy guarantee covers",
) -> None:
    """Refuse a table OUT (the raw projection) unless ``--write-projection`` is given.

    Call it before the command reads IN. With the option, a warning on stderr says
    that OUT will hold raw rows; ``guarantee`` says what covers them.

    Raises
    ------
    click.UsageError
        If OUT is not ``.json`` and ``write_projection`` is false, or OUT is
        ``.json`` and ``write_projection`` is true.
    """
    is_json = Path(output_path).suffix.lower() == ".json"
    if is_json and write_projection:
        raise click.UsageError(
            "--write-projection needs a .csv, .tsv or .parquet OUT; a .json OUT "
            "holds the selection only"
        )
    if not is_json and not write_projection:
        raise click.UsageError(
            f"OUT {output_path} would hold the rows of IN on the selected columns "
            f"and the target, with their original values: raw data, {guarantee}. "
            "Give a .json OUT for the selection, or pass --write-projection to "
            "write these rows."
        )
    if write_projection:
        click.echo(
            "warning: --write-projection: OUT holds rows of IN with their original "
            f"values: raw data, {guarantee}",
            err=True,
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


def renamed_option(
    old: str,
    name: str,
    new: str,
    type: click.ParamType = click.IntRange(min=1),  # noqa: B008
    required: bool = False,
) -> Callable[[F], F]:
    """Keep ``old``, the former spelling of option ``new``, as a hidden alias.

    ``name`` is the parameter of ``new``. Given ``old``, the command warns on
    stderr and runs as if ``new`` had been given; giving both is an error. With
    ``required``, one of them must be given (``new`` itself is then declared
    optional, so that ``old`` alone is accepted).
    """
    alias = f"{name}__{old.lstrip('-').replace('-', '_')}"

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def resolved(*args: Any, **kwargs: Any) -> Any:
            ctx = click.get_current_context()
            value = kwargs.pop(alias)
            if value is not None:
                if ctx.get_parameter_source(name) not in (
                    ParameterSource.DEFAULT,
                    ParameterSource.DEFAULT_MAP,
                    None,
                ):
                    raise click.UsageError(
                        f"give {new} only ({old} is its deprecated spelling)", ctx
                    )
                click.echo(
                    f"warning: {old} is deprecated and will be removed; use {new}",
                    err=True,
                )
                kwargs[name] = ctx.params[name] = value
                ctx.set_parameter_source(name, ParameterSource.COMMANDLINE)
            if required and kwargs[name] is None:
                param = next(p for p in ctx.command.params if p.name == name)
                raise click.MissingParameter(ctx=ctx, param=param)
            return command(*args, **kwargs)

        return cast(
            F,
            click.option(
                old,
                alias,
                type=type,
                default=None,
                hidden=True,
                help=f"Deprecated spelling of {new}.",
            )(resolved),
        )

    return decorate


def _parse_columns(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> list[str]:
    columns: list[str] = []
    for value in values:
        columns.extend(c for c in _split_labels(value) if c not in columns)
    return columns


def missing_option() -> Callable[[F], F]:
    """Add the repeatable ``--missing COL``: the columns that may hold missing values."""
    return click.option(
        "--missing",
        "missing",
        multiple=True,
        metavar="COL",
        callback=_parse_columns,
        help="A column that may hold missing values (repeatable, or COL1,COL2): it "
        "gets a category of its own for them, an empty cell in OUT. A column whose "
        "domain is declared (--domain, --bounds) and not named here must have no "
        "missing value; one whose domain comes from the data gets that category "
        "only if it holds a missing value. No other column gets one.",
    )


def categorical_option() -> Callable[[F], F]:
    """Add the repeatable ``--categorical COL``: numeric columns read as categories."""
    return click.option(
        "--categorical",
        "categorical",
        multiple=True,
        metavar="COL",
        callback=_parse_columns,
        help="A numeric column whose values are categories, not quantities "
        "(repeatable, or COL1,COL2), such as codes: each value gets a category of "
        "its own instead of a bin. Its categories are the values found in the data "
        "unless --domain declares them. An integer column spanning at most "
        f"{INTEGER_CODES_MAX} values (largest - smallest < {INTEGER_CODES_MAX}) "
        "is read as categories without it; --bounds COL=LO:HI bins it instead.",
    )


def clip_option(help: str) -> Callable[[F], F]:
    """Add ``--clip/--no-clip``: clip numbers outside their bounds, or stop."""
    return option("--clip/--no-clip", default=False, help=help)


def choice_option(name: str, choices: Sequence[str], help: str) -> Callable[[F], F]:
    """Add an option that takes one of ``choices``, the first by default."""
    return option(name, type=click.Choice(list(choices)), default=choices[0], help=help)


def _parse_classes(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> list[str] | None:
    return None if value is None else _split_labels(value)


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


def _split_labels(value: str) -> list[str]:
    """Split ``a,b,c``; an empty or repeated label is an error."""
    labels = value.split(",")
    if "" in labels:
        raise click.BadParameter(
            f"expected labels separated by commas, got an empty label in {value!r}"
        )
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise click.BadParameter(
            f"repeats the label(s) {', '.join(map(repr, repeated))} in {value!r}"
        )
    return labels


def _parse_domains(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, list[str]]:
    domains: dict[str, list[str]] = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not (sep and name and rest):
            raise click.BadParameter(f"expected COLUMN=a,b,c, got {value!r}")
        if name in domains:
            raise click.BadParameter(f"declares the column {name!r} twice")
        domains[name] = _split_labels(rest)
    return domains


def domain_option() -> Callable[[F], F]:
    """Add the repeatable ``--domain COL=a,b,c`` option, parsed into a dict."""
    return click.option(
        "--domain",
        "domains",
        multiple=True,
        metavar="COL=a,b,c",
        callback=_parse_domains,
        help="The public categories of a column (repeatable), separated by commas "
        "and written as in IN, e.g. --domain sex=Female,Male; a value outside them "
        "is an error.",
    )


@dataclass(frozen=True)
class Encoding:
    """How a command encodes its columns: the options of :func:`encoding_options`.

    Parameters
    ----------
    domains : dict
        ``--domain``: the declared categories of a column.
    bounds : dict
        ``--bounds``: the declared bounds of a numeric column, binned.
    bins : int or None
        ``--bins``: equal-width bins of every numeric column (None: the command's
        default, ``lei_bins(n, d)`` in :func:`encode_table`).
    clip : bool
        ``--clip``: a number outside its bounds goes into the nearest end bin.
    missing : list of str
        ``--missing``: the columns that may hold missing values.
    categorical : list of str
        ``--categorical``: numeric columns whose values are categories.
    """

    domains: dict[str, list[str]]
    bounds: dict[str, tuple[float, float]]
    bins: int | None
    clip: bool
    missing: list[str]
    categorical: list[str]

    @property
    def named(self) -> dict[str, Iterable[str]]:
        """The columns each option names, for :func:`check_columns`."""
        return {
            "--domain": self.domains,
            "--bounds": self.bounds,
            "--missing": self.missing,
            "--categorical": self.categorical,
        }


_ENCODING_PARAMETERS = ("domains", "bounds", "bins", "clip", "missing", "categorical")


def encoding_options(
    *,
    bins_help: str,
    bins_default: int | None = None,
    bounds_help: str = "Public bounds of a numeric column (repeatable), e.g. "
    "--bounds age=17:90.",
    clip_help: str = "Put a number outside its --bounds into the nearest end bin "
    "instead of stopping with an error.",
) -> Callable[[F], F]:
    """Add the encoding options, passed to the command as one ``encoding`` argument.

    ``--domain``, ``--bounds``, ``--bins``, ``--clip``, ``--missing`` and
    ``--categorical`` say how every column becomes codes; the command receives them
    as an :class:`Encoding` for :func:`check_columns` (``encoding.named``) and
    :func:`encode_table`, so that every command spells, checks and applies them
    the same way.
    """

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def collected(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in _ENCODING_PARAMETERS}
            return command(*args, encoding=Encoding(**values), **kwargs)

        options = [
            domain_option(),
            bounds_option(bounds_help),
            count_option("--bins", default=bins_default, help=bins_help),
            clip_option(clip_help),
            missing_option(),
            categorical_option(),
        ]
        decorated: Any = collected
        for add in reversed(options):
            decorated = add(decorated)
        return cast(F, decorated)

    return decorate


def allow_inferred_option(shows: str) -> Callable[[F], F]:
    """Add ``--allow-inferred-domains``; ``shows`` says where OUT shows the domains."""
    return click.option(
        "--allow-inferred-domains",
        "allow_inferred",
        is_flag=True,
        default=False,
        help="Take the domains not declared with --domain, --bounds or --classes "
        f"from the data, with a warning. OUT then shows them ({shows}): a value "
        "held by one record (a name) would appear in it, and no privacy guarantee "
        "covers it. Without this flag such a release is refused.",
    )


def _by_column(
    frame: Any, declared: Mapping[str, Any], option: str, what: str
) -> dict[Any, Any]:
    """Key ``declared`` (by column name as text) by the columns of ``frame``."""
    names = {str(c): c for c in frame.columns}
    unknown = sorted(set(declared) - set(names))
    if unknown:
        raise click.BadParameter(
            f"{', '.join(map(repr, unknown))} is not a {what} of IN; {what}s: "
            f"{', '.join(names)}",
            param_hint=option,
        )
    return {names[name]: value for name, value in declared.items()}


def declared_bounds(
    frame: Any, bounds: Mapping[str, tuple[float, float]], what: str = "column"
) -> dict[Any, tuple[float, float]]:
    """Return ``--bounds`` keyed by the columns of ``frame``.

    Raises
    ------
    click.BadParameter
        If a column is not in ``frame`` (``what`` says what it should be).
    """
    return _by_column(frame, bounds, "--bounds", what)


def declared_domains(
    frame: Any, domains: Mapping[str, Sequence[str]], what: str = "column"
) -> dict[Any, list[Any]]:
    """Return ``--domain`` keyed by the columns of ``frame``, values in their dtype.

    The categories are written as text on the command line; those of a numeric
    column are read as numbers (integers for an integer column), those of a
    boolean column as ``True``/``False``, so that they compare equal to the values
    read from IN.

    Raises
    ------
    click.BadParameter
        If a column is not in ``frame`` (``what`` says what it should be), or a
        category cannot be read in the column's dtype.
    """
    import pandas as pd

    declared: dict[Any, list[Any]] = {}
    for column, labels in _by_column(frame, domains, "--domain", what).items():
        dtype = frame.dtypes[column]
        parse: Callable[[str], Any] = str
        if pd.api.types.is_bool_dtype(dtype):
            parse = {"True": True, "False": False}.__getitem__
        elif pd.api.types.is_integer_dtype(dtype):
            parse = int
        elif pd.api.types.is_numeric_dtype(dtype):
            parse = float
        try:
            declared[column] = [parse(label) for label in labels]
        except (KeyError, ValueError):
            raise click.BadParameter(
                f"the column {str(column)!r} holds {dtype} values; cannot read the "
                f"categories {','.join(labels)!r} as such",
                param_hint="--domain",
            ) from None
    return declared


def refuse_inferred_domains(
    columns: Iterable[Any], allowed: bool, labels: str | None = None
) -> None:
    """Refuse a release whose OUT would show domains taken from the data.

    Call it before anything is spent. ``columns`` had no declared categories or
    bounds (the ``inferred_`` of a fitted :class:`~privtab.table.TableEncoder`);
    ``labels`` names a target whose label set was not declared with
    ``--classes``. With ``allowed`` (``--allow-inferred-domains``) the release
    goes on with a warning.

    Raises
    ------
    click.ClickException
        If something was inferred and ``allowed`` is false.
    """
    inferred = [str(c) for c in columns]
    if not inferred and labels is None:
        return
    parts, advice = [], []
    if inferred:
        parts.append(f"the domains of {', '.join(map(repr, inferred))}")
        advice.append("--domain COL=a,b,c (text) or --bounds COL=LO:HI (numbers)")
    if labels is not None:
        parts.append(f"the labels of {labels!r}")
        advice.append("--classes (the labels)")
    what = " and ".join(parts)
    if allowed:
        click.echo(
            f"warning: --allow-inferred-domains: OUT shows {what}, taken from the "
            "data; no privacy guarantee covers them",
            err=True,
        )
        return
    raise click.ClickException(
        f"{what} would be taken from the data, and OUT would show them (a value "
        "held by one record, such as a name, would appear in it). Declare them "
        f"with {' and '.join(advice)}, or pass --allow-inferred-domains."
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
    import logging

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
            # A task's error reaches the command as its one-line message; the
            # workers' logs of it would repeat it with a traceback on stderr.
            silence_logs=logging.CRITICAL,
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


def encode_table(
    frame: Any, encoding: Encoding, what: str = "column"
) -> tuple[Any, Any]:
    """Encode ``frame`` with the declared domains; return the encoder and the table.

    ``encoding`` holds the options of :func:`encoding_options` (``what`` says what
    the columns they name should be); its ``bins`` defaults to ``lei_bins(n, d)``;
    with ``clip`` a number outside its bounds goes into the nearest end bin. A column
    gets a category for missing values only if ``--missing`` names it, or its
    domain comes from the data and it holds a missing value: no other column shows
    a missing value in a release.

    How a column is encoded:

    - ``--domain`` declares its categories, ``--bounds`` its bounds (binned);
    - ``--categorical`` gives a numeric column one category per value found in
      the data;
    - an integer column none of them names whose values span at most
      :data:`INTEGER_CODES_MAX` integers (largest − smallest <
      ``INTEGER_CODES_MAX``) holds codes: its categories are the integers from its
      smallest to its largest value, so that no two codes share a bin;
    - other numeric columns are binned over the bounds found in the data, other
      columns get the categories found in the data (booleans ``False, True``).

    One line per column on stderr says which of these it got.

    For a Dask DataFrame the encoder is fitted on
    :func:`~privtab.cli._io.domain_sample` (the default bins from the whole
    table's row count), so it infers the same categories and bounds, with the same
    warning, as on the table in memory; the codes stay a Dask array, encoded
    partition by partition where they are counted.

    Raises
    ------
    click.BadParameter
        If an option names a column ``frame`` does not have, a column is named by
        both ``--bounds`` and ``--categorical``, or a column whose domain is
        declared holds a missing value and ``--missing`` does not name it.
    ValueError, TypeError, DomainError
        From :class:`~privtab.table.TableEncoder` (a value outside its domain).

    Notes
    -----
    Whether a column can be missing is part of its domain: a declared domain says
    it (``--missing``), and a missing value in a column declared without one is
    refused like a value outside its categories. Only a column whose domain is
    inferred (and warned about, or refused where OUT shows it) takes it from the
    data, so that the missing category never depends on the records unwarned.

    The categories of a ``--categorical`` column and of integer codes are taken
    from the data like inferred bounds: the encoder warns with
    :class:`~privtab.exceptions.PrivacyLeakWarning` and lists them in
    ``inferred_``, so that a command whose OUT shows them refuses them without
    ``--allow-inferred-domains``. Integer codes take every integer between the
    smallest and the largest value, which says no more about the records than the
    inferred bounds of a binned column; whether a column is read as codes depends
    on those two values only.
    """
    from privtab.engine import is_distributed
    from privtab.table import EncodedTable, TableEncoder, lei_bins

    domain_of = declared_domains(frame, encoding.domains, what)
    bounds_of = declared_bounds(frame, encoding.bounds, what)
    may_be_missing = _by_column(
        frame, dict.fromkeys(encoding.missing), "--missing", what
    )
    as_categories = _by_column(
        frame, dict.fromkeys(encoding.categorical), "--categorical", what
    )
    for column in as_categories.keys() & bounds_of.keys():
        raise click.BadParameter(
            f"the column {str(column)!r} is declared numeric by --bounds and "
            "categorical by --categorical; give one of them",
            param_hint="--categorical",
        )
    values_as_categories = {
        column: object
        for column in as_categories
        if column not in domain_of and _is_number(frame[column])
    }
    if values_as_categories:
        frame = frame.astype(values_as_categories)
    distributed = is_distributed(frame)
    if distributed:
        from privtab.cli import _io

        sample, n_rows = _io.domain_sample(frame)
    else:
        sample, n_rows = frame, len(frame)
    codes = _integer_codes(sample, [*domain_of, *bounds_of, *as_categories])
    if codes:
        frame, sample = frame.astype(codes), sample.astype(codes)
    bins = encoding.bins
    if bins is None and n_rows >= 2:
        bins = lei_bins(n_rows, frame.shape[1])
    is_missing = sample.isna()
    with_missing = []
    for column in frame.columns:
        holds_missing = bool(is_missing[column].any())
        if column in may_be_missing:
            with_missing.append(column)
        elif holds_missing and (
            column in domain_of or column in bounds_of or _is_bool(frame[column])
        ):
            where = (
                ""
                if distributed
                else f" at row {int(is_missing[column].to_numpy().argmax())}"
            )
            raise click.BadParameter(
                f"the column {str(column)!r} has a missing value{where}, and its "
                f"domain is declared without one; name it with --missing {column} "
                "if its values may be missing",
                param_hint="--missing",
            )
        elif holds_missing:
            with_missing.append(column)
    encoder = TableEncoder(
        domains=domain_of,
        bounds=bounds_of,
        bins=bins,
        missing="category" if with_missing else "raise",
        out_of_bounds="clip" if encoding.clip else "raise",
    )
    table = (
        encoder.fit(sample).transform(frame)
        if distributed
        else encoder.fit_transform(frame)
    )
    if with_missing and len(with_missing) < len(table.columns):
        # Every column got the missing category (the last code); those that may not
        # hold a missing value never take it, and lose it.
        keeps = [column in with_missing for column in frame.columns]
        table = EncodedTable(
            table.codes,
            [
                k if keep else k - 1
                for k, keep in zip(table.cardinalities, keeps, strict=True)
            ],
            table.columns,
            [
                c if keep else c[:-1]
                for c, keep in zip(table.categories, keeps, strict=True)
            ],
        )
    treated = {
        **{column: "--categorical" for column in as_categories},
        **{column: "integer codes" for column in codes},
    }
    for line in _encoding_lines(encoder, table, treated, frame):
        click.echo(line, err=True)
    return encoder, table


def _is_number(column: Any) -> bool:
    """Whether a column holds numbers (booleans are not)."""
    import pandas as pd

    dtype = column.dtype
    return bool(
        pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
    )


def _integer_codes(sample: Any, declared: Iterable[Any]) -> dict[Any, Any]:
    """Return the integer columns of ``sample`` that hold codes, with their dtype.

    A column not ``declared`` whose dtype is an integer one and whose values span
    at most :data:`INTEGER_CODES_MAX` integers gets the categorical dtype of the
    integers from its smallest to its largest value. ``sample`` holds the
    smallest and largest value of every column (the table, or
    :func:`~privtab.cli._io.domain_sample`).
    """
    import pandas as pd

    declared = set(declared)
    codes = {}
    for column in sample.columns:
        series = sample[column]
        if (
            column in declared
            or not pd.api.types.is_integer_dtype(series.dtype)
            or pd.api.types.is_bool_dtype(series.dtype)
            or series.isna().all()
        ):
            continue
        low, high = int(series.min()), int(series.max())
        if high - low < INTEGER_CODES_MAX:
            codes[column] = pd.CategoricalDtype(range(low, high + 1))
    return codes


def _encoding_lines(
    encoder: Any, table: Any, treated: Mapping[Any, str], frame: Any
) -> list[str]:
    """Say, one line per column, how ``encoder`` encoded it (for stderr).

    ``treated`` names the columns that ``--categorical`` or the integer-codes
    rule made categorical. The lines give counts, never values of the data.
    """
    inferred = set(encoder.inferred_)
    lines = []
    for j, column in enumerate(table.columns):
        n_codes = int(table.cardinalities[j])
        has_missing = n_codes > 0 and table.categories[j][-1] is None
        n_values = n_codes - 1 if has_missing else n_codes
        origin = "taken from the data" if column in inferred else "declared"
        if encoder.kinds_[j] == "numeric":
            how = f"numeric, {n_values} equal-width bins over bounds {origin}"
        elif _is_bool(frame[column]):
            how = "boolean, 2 categories"
        else:
            reason = treated.get(column)
            kind = "categorical" if reason is None else f"categorical ({reason})"
            how = f"{kind}, {n_values} categories {origin}"
        if has_missing:
            how += ", and one for missing values"
        lines.append(f"column {str(column)!r}: {how}")
    return lines


def _is_bool(column: Any) -> bool:
    """Whether a column is boolean: its domain, ``[False, True]``, is public."""
    import pandas as pd

    return bool(pd.api.types.is_bool_dtype(column.dtype))


def input_columns(input_path: str) -> list[str]:
    """Read the column names of IN (its header or schema only).

    Raises
    ------
    click.ClickException
        If IN cannot be read.
    """
    from privtab.cli import _io

    try:
        return _io.read_columns(input_path)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot read {input_path}: {exc}") from exc


def check_columns(
    input_path: str,
    target: str | None = None,
    named: Mapping[str, Iterable[str]] | None = None,
    what: str = "column",
) -> list[str]:
    """Check the columns that options name against the header of IN; return it.

    Call it before IN is read: ``target`` (``--target``) must be a column of IN,
    and every column that an option of ``named`` (``{"--domain": names}``) names
    must be a column of IN other than the target (``what`` says what it should
    be). Only the header (or the Parquet schema) of IN is read.

    Raises
    ------
    click.BadParameter
        If a column is not in IN.
    click.ClickException
        If IN cannot be read.
    """
    columns = input_columns(input_path)
    if target is not None and target not in columns:
        raise click.BadParameter(
            f"{target!r} is not a column of {input_path}; columns: "
            f"{', '.join(columns)}",
            param_hint="--target",
        )
    others = [c for c in columns if c != target]
    for option_name, names in (named or {}).items():
        unknown = sorted(set(names) - set(others))
        if unknown:
            raise click.BadParameter(
                f"{', '.join(map(repr, unknown))} is not a {what} of IN; {what}s: "
                f"{', '.join(others)}",
                param_hint=option_name,
            )
    return others


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
    "Declare domains= and bounds=": "Declare them with --domain COL=a,b,c and "
    "--bounds COL=LO:HI",
}

#: The options that set the library's parameters of the same meaning in every
#: command: ``"name"`` as the option (and its metavar, shown when the message
#: gives no value), ``"name='value'"`` as the flag that passes that value.
SHELL_TERMS = {
    "out_of_bounds='clip'": "--clip",
    "missing='category'": "--missing COL",
    "classes": "--classes LABEL,LABEL,...",
    "domains": "--domain COL=a,b,c",
    "bounds": "--bounds COL=LO:HI",
    "data_norm": "--data-norm NORM",
    "bins": "--bins N",
    "epsilon": "--epsilon ε",
    "random_state": "--seed SEED",
}

_KEYWORD = re.compile(
    r"(?<![\w\-\[.'\"])(?P<name>[A-Za-z_]\w*)="
    r"(?P<value>'[^']*'|\"[^\"]*\"|\[\.\.\.\]|\.\.\.|[\w.+\-]+)?"
)


#: A cell as the library names it, ``X[row, column] = value``.
_CELL = re.compile(r"\bX\[(\d+), ('(?:[^'\\]|\\.)*'|\d+)\] = (\S+)(?= is\b)")


def shell_terms(message: str, terms: Mapping[str, str] = SHELL_TERMS) -> str:
    """Return ``message`` with the library's parameter spellings as shell options.

    ``name=value`` becomes the option of ``terms`` with that value
    (``k=3`` → ``--min-cluster-size 3``), or its metavar when the message gives
    none (``bounds=...`` → ``--bounds COL=LO:HI``); ``"name='value'"`` entries are
    flags (``out_of_bounds='clip'`` → ``--clip``). A parameter named at the start
    of a sentence (``k must be >= 3``, ``k = 9 exceeds``) becomes its option.
    Names not in ``terms`` are left as they are.

    Examples
    --------
    >>> shell_terms("fix the bounds or pass out_of_bounds='clip'")
    'fix the bounds or pass --clip'
    >>> shell_terms("k must be <= 5, got k=9", {"k": "--min-cluster-size N"})
    '--min-cluster-size must be <= 5, got --min-cluster-size 9'
    """
    for python, shell in _SHELL_ADVICE.items():
        message = message.replace(python, shell)

    def option(match: re.Match[str]) -> str:
        name, value = match["name"], match["value"] or ""
        plain = value.strip("'\"")
        flag = terms.get(f"{name}='{plain}'")
        if flag is not None:
            return flag
        spec = terms.get(name)
        if spec is None:
            return match[0]
        if value in ("", "...", "[...]"):
            return spec
        return f"{spec.split(' ')[0]} {plain}"

    message = _KEYWORD.sub(option, message)
    message = _CELL.sub(r"row \1 of the column \2 holds \3, which", message)
    for name, spec in terms.items():
        if "=" not in name:
            start = rf"(?:^|(?<=: )|(?<=; )|(?<=\. )){re.escape(name)}"
            flag = spec.split(" ")[0]
            message = re.sub(rf"{start}(?= must\b)", flag, message)
            message = re.sub(rf"{start} = (?=\S)", f"{flag} ", message)
    return message


def _shell_advice(message: str) -> str:
    ctx = click.get_current_context(silent=True)
    terms = getattr(ctx.command, "terms", SHELL_TERMS) if ctx else SHELL_TERMS
    return shell_terms(message, terms)


class ShellCommand(click.Command):
    """A subcommand whose error messages speak in its options.

    ``terms`` extends :data:`SHELL_TERMS` with the command's own options (what
    ``k`` is, for instance); every error the command stops with, and every
    warning :func:`release` prints, has the library's parameter spellings
    rewritten by :func:`shell_terms`.
    """

    def __init__(
        self, *args: Any, terms: Mapping[str, str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.terms = {**SHELL_TERMS, **(terms or {})}

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            exc.message = shell_terms(exc.message, self.terms)  # type: ignore[misc]
            raise


def command(terms: Mapping[str, str] | None = None, **attrs: Any) -> Any:
    """``click.command`` for a subcommand: a :class:`ShellCommand` with ``terms``."""
    return click.command(cls=ShellCommand, terms=terms, **attrs)


@contextlib.contextmanager
def release() -> Iterator[list[str]]:
    """Run a release: its errors become shell errors, its warnings go to stderr.

    A :class:`~privtab.exceptions.PrivtabError`, ``ValueError``, ``TypeError`` or
    ``MemoryError`` raised inside stops the command with its message. On success each
    distinct warning is printed once to stderr, with the library's advice
    (``classes=[...]``) rewritten as the shell's (``--classes``). Yields the list the
    messages are put in (sorted); they stay out of OUT, as they may quote values
    computed from the data without noise (a data norm). Warnings raised inside Dask
    (its own deprecations, and pandas' seen from Dask) are not the release's and
    are left out, so a table read on Dask reports what it reports in memory.

    With ``--budget PATH``, the releases inside are charged to the budget file
    (:func:`privtab.accountant.use_accountant`: it is the accountant of every
    estimator given none), and what is left is printed to stderr.
    """
    from privtab.accountant import use_accountant

    ctx = click.get_current_context(silent=True)
    budget = None if ctx is None else ctx.meta.get(_BUDGET_KEY)
    notes: list[str] = []
    with (
        warnings.catch_warnings(record=True) as caught,
        contextlib.nullcontext() if budget is None else use_accountant(budget),
    ):
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", module=r"(dask|distributed)(\.|$)")
        try:
            yield notes
        except (PrivtabError, ValueError, TypeError, MemoryError) as exc:
            raise click.ClickException(str(exc)) from exc
    notes.extend(sorted({_shell_advice(str(w.message)) for w in caught}))
    for note in notes:
        click.echo(f"warning: {note}", err=True)
    if budget is not None:
        click.echo(
            f"budget {budget.path}: spent ε = {budget.spent:.6g} of "
            f"{budget.epsilon:g}, {budget.remaining:.6g} left",
            err=True,
        )


def write_output(
    output_path: str, result: Mapping[str, Any] | None, table: Any = None
) -> None:
    """Write ``result`` as JSON, or ``table`` (a DataFrame) by the extension of OUT.

    With both, a ``.json`` OUT gets the JSON and any other extension the table. A
    Dask ``table`` is computed only when it is written. OUT is checked again
    (:func:`check_output`, with the command's IN and ``--force`` from the click
    context), then written to a new file that replaces it in one step
    (:func:`privtab.cli._io.replace_file`): a failed write leaves it as it was.

    Raises
    ------
    click.BadParameter
        If OUT is IN, or exists without ``--force``.
    click.ClickException
        If OUT cannot be written.
    """
    from privtab.cli import _io

    ctx = click.get_current_context(silent=True)
    params = ctx.params if ctx is not None else {}
    check_output(output_path, params.get("input_path"), bool(params.get("force")))
    out = Path(output_path)

    def write(path: Path) -> None:
        if result is not None and (table is None or out.suffix.lower() == ".json"):
            path.write_text(json.dumps(result, indent=2) + "\n")
            return
        frame = table.compute() if hasattr(table, "compute") else table
        _io.write_table(frame, path)

    try:
        _io.replace_file(out, write)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot write {output_path}: {exc}") from exc


def ledger_pairs(ledger: Iterable[Any]) -> list[list[Any]]:
    """Return a privacy ledger as JSON pairs ``[label, epsilon]``."""
    return [[label, eps] for label, eps in ledger]


def literal(value: Any) -> str:
    """Return ``str(value)`` with rich markup escaped, so that rich prints it as is.

    Text from the data (a category, a column name) printed through rich would
    otherwise be read as markup: ``[bold red]x[/]`` would print a bold red ``x``,
    and a stray ``[/]`` would stop the output with an error.
    """
    return escape(str(value))


def json_value(value: Any) -> Any:
    """Return a category as JSON: numbers stay numbers, the rest becomes text."""
    if value is None:
        return None
    if isinstance(value, bool | int | float | str):
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)
