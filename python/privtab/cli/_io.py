"""Reading and writing tables for the command line (CSV or Parquet, by extension).

Every file the command line writes goes through :func:`replace_file`: written in full
to a new file beside it, then moved over it in one step, so that a failed write leaves
the old file as it was and a symbolic link at the path is replaced, not followed. A
CSV or TSV escapes the text cells a spreadsheet would run as a formula
(:func:`write_table`).

A Parquet file or a directory of Parquet partitions can also be read lazily, as a
Dask DataFrame (:func:`read_parquet_lazily`) that the counting methods read one
partition at a time; :func:`domain_sample` gathers, in one pass, the few rows that
show every column's domain, so that a :class:`~privtab.table.TableEncoder` fitted on
them infers (and warns about) exactly what it infers from the whole table.

Core kernels called: none (pandas and Dask do the parsing).
"""

from __future__ import annotations

import csv
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "TABLE_EXTENSIONS",
    "domain_sample",
    "escape_formula",
    "read_columns",
    "read_parquet_lazily",
    "read_table",
    "replace_file",
    "table_format",
    "write_table",
]

_FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zip")

#: The extensions of a table file, as a user would be told them.
TABLE_EXTENSIONS = (
    ".csv, .tsv or .parquet (a .csv or .tsv may end in .gz, .bz2, .xz, .zst or .zip)"
)


def table_format(path: str | Path) -> str | None:
    """Return the format of a table file from its extension, or ``None`` if unknown.

    ``"csv"``, ``"tsv"`` (either possibly compressed, e.g. ``.csv.gz``) or
    ``"parquet"`` (``.parquet``, ``.pq``).

    Examples
    --------
    >>> table_format("in.csv.gz"), table_format("out.PARQUET"), table_format("out.json")
    ('csv', 'parquet', None)
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
        if suffixes and _FORMATS.get(suffixes[-1]) == "parquet":
            return None
    if suffixes and suffixes[-1] in _FORMATS:
        return _FORMATS[suffixes[-1]]
    return None


def _format(path: Path, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in ("csv", "tsv", "parquet"):
            raise ValueError(f"format must be 'csv', 'tsv' or 'parquet', got {fmt!r}")
        return fmt
    kind = table_format(path)
    if kind is None:
        raise ValueError(
            f"cannot tell the format of {str(path)!r} from its extension; the file "
            f"name must end in {TABLE_EXTENSIONS}"
        )
    return kind


def read_table(path: str | Path, fmt: str | None = None) -> pd.DataFrame:
    """Read a CSV/TSV (optionally compressed) or Parquet file into a DataFrame.

    Empty CSV fields and the usual NA markers become missing values.

    Raises
    ------
    ValueError
        If the format is unknown.
    FileNotFoundError
        If the file does not exist.
    """
    path = Path(path)
    kind = "parquet" if path.is_dir() else _format(path, fmt)
    if kind == "parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, sep="\t" if kind == "tsv" else ",")


def read_columns(path: str | Path) -> list[str]:
    """Return the column names of a table file, reading its header only.

    A CSV or TSV is read up to its first line, a Parquet file or a directory of
    Parquet partitions up to its schema.

    Raises
    ------
    ValueError
        If the format is unknown.
    OSError
        If the file cannot be read.
    """
    path = Path(path)
    kind = "parquet" if path.is_dir() else _format(path, None)
    if kind == "parquet":
        import pyarrow.dataset as ds  # type: ignore[import-untyped]

        schema = ds.dataset(path, format="parquet", partitioning="hive").schema
        metadata = schema.pandas_metadata or {}
        index = {c for c in metadata.get("index_columns", []) if isinstance(c, str)}
        return [name for name in schema.names if name not in index]
    header = pd.read_csv(path, sep="\t" if kind == "tsv" else ",", nrows=0)
    return [str(c) for c in header.columns]


def write_table(frame: pd.DataFrame, path: str | Path, fmt: str | None = None) -> None:
    """Write ``frame`` as CSV/TSV or Parquet, chosen by the file extension.

    In a CSV or TSV, a text cell or column name that a spreadsheet would read as a
    formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return,
    and is not a plain number such as ``-1.5``) is written with a leading ``'``,
    and every text cell is quoted, so that a line break inside one (a lone carriage
    return, which pandas does not quote otherwise) cannot start a row of its own.
    Numbers are written as they are; Parquet is written unchanged.

    Raises
    ------
    ValueError
        If the format is unknown.

    Notes
    -----
    The cells come from the data, and a spreadsheet opening the file would run a
    cell such as ``=HYPERLINK("http://...?"&A2, "x")`` (OWASP, "CSV Injection"):
    the quote makes it text, at the cost of one character a program reading the
    file sees.
    """
    path = Path(path)
    kind = _format(path, fmt)
    if kind == "parquet":
        frame.to_parquet(path, index=False)
    else:
        _without_formulas(frame).to_csv(
            path,
            sep="\t" if kind == "tsv" else ",",
            index=False,
            quoting=csv.QUOTE_NONNUMERIC,
        )


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def escape_formula(value: Any) -> Any:
    """Return a text ``value`` a spreadsheet would run as a formula with a ``'`` first.

    Anything else (numbers, missing values, text such as ``-1.5`` that is a plain
    number) is returned as it is.

    Examples
    --------
    >>> print(escape_formula('=HYPERLINK("http://example.com")'))
    '=HYPERLINK("http://example.com")
    >>> escape_formula("-1.5"), escape_formula(-1.5), escape_formula("plain")
    ('-1.5', -1.5, 'plain')
    """
    if (
        isinstance(value, str)
        and value.startswith(_FORMULA_START)
        and not _PLAIN_NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value


def _without_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with :func:`escape_formula` applied to its text cells and names."""
    escaped = frame.rename(columns=escape_formula)
    for i, dtype in enumerate(escaped.dtypes):
        if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            continue
        escaped.isetitem(i, escaped.iloc[:, i].map(escape_formula))
    return escaped


def replace_file(path: str | Path, write: Callable[[Path], object]) -> None:
    """Write a file at ``path`` through ``write``, replacing what was there at once.

    ``write`` receives a new file in the directory of ``path``, whose name ends with
    the name of ``path`` (so its extension chooses the format); once it returns, the
    new file is moved over ``path`` with :func:`os.replace`. If ``write`` fails, the
    new file is removed and ``path`` is left as it was; a symbolic link at ``path``
    is replaced by the file, its target left untouched. The file gets the mode a
    new file gets under the process's umask.

    Raises
    ------
    OSError
        If the file cannot be created, written or moved (whatever ``write`` raises
        is raised too).
    """
    path = Path(path)
    while True:
        temporary = path.with_name(f".{secrets.token_hex(8)}.{path.name}")
        try:
            os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:
            continue
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def read_parquet_lazily(path: str | Path) -> Any:
    """Open a Parquet file or directory of partitions as a Dask DataFrame.

    Nothing is read but the schema; each partition is read where it is counted.
    Strings keep the dtype :func:`read_table` gives them (``object``), so the
    lazy and the in-memory table encode alike. Every column of a partition is read
    together: Dask would otherwise fuse the partitions of a projection on few
    columns (the labels), which the counting methods could not align with the
    partitions of the other columns.

    Raises
    ------
    ValueError
        If ``path`` is a file without a Parquet extension.
    ImportError
        If Dask is not installed.
    """
    path = Path(path)
    if not path.is_dir() and _format(path, None) != "parquet":
        raise ValueError(
            f"only Parquet input (a .parquet file or a directory of Parquet "
            f"partitions) is read with Dask, got {str(path)!r}"
        )
    import dask
    import dask.dataframe as dd

    with dask.config.set({"dataframe.convert-string": False}):
        frame = dd.read_parquet(str(path))
    return frame.map_partitions(_whole_partition, meta=frame._meta)


def _whole_partition(frame: pd.DataFrame) -> pd.DataFrame:
    return frame


def _partition_domain(
    frame: pd.DataFrame, schema: pd.Series
) -> tuple[pd.DataFrame, int]:
    """Rows of ``frame`` that hold every column's domain as the encoder infers it.

    A categorical column keeps its distinct values in order of first appearance; a
    numeric one its smallest and largest value and, if it has one, a missing value.
    Columns are padded to the same length by repeating their own rows. Returned
    with the number of rows of ``frame``, after its columns are checked against
    the DataFrame's ``schema``
    (:func:`~privtab.table._readers.check_partition_schema`).
    """
    from privtab.table._readers import _read_columns, check_partition_schema

    if len(frame) == 0:
        return frame.iloc[:0], 0
    check_partition_schema(frame, schema)
    n_rows = len(frame)
    frame = frame.reset_index(drop=True)
    _, columns = _read_columns(frame)
    kept: list[pd.Series] = []
    for name, column in zip(frame.columns, columns, strict=True):
        series = frame[name]
        if column.kind == "numeric":
            missing = series.isna()
            rows = [int(missing.to_numpy().argmax())] if missing.any() else []
            if not missing.all():
                rows += [int(series.idxmin()), int(series.idxmax())]
            kept.append(series.iloc[sorted(set(rows))])
        else:
            kept.append(series.drop_duplicates())
    length = max(len(s) for s in kept)
    sample = pd.DataFrame(
        {
            name: s.iloc[np.arange(length) % len(s)].to_numpy()
            for name, s in zip(frame.columns, kept, strict=True)
        }
    ).astype(frame.dtypes.to_dict())
    return sample, n_rows


def _joined_domains(*parts: tuple[pd.DataFrame, int]) -> tuple[pd.DataFrame, int]:
    """Join the domain rows of consecutive partitions, in order, and add their rows.

    Joined as Dask joins the partitions of a computed DataFrame (the categories of
    ``category`` columns united), empty ones left out.
    """
    from dask.dataframe.methods import concat

    frames = [rows for rows, n in parts if n > 0] or [parts[0][0]]
    joined = concat(frames, uniform=True).reset_index(drop=True)
    return joined, sum(n for _, n in parts)


def domain_sample(frame: Any) -> tuple[pd.DataFrame, int]:
    """Return the rows of a Dask DataFrame that show its domains, and its row count.

    One pass over the partitions. Fitting a :class:`~privtab.table.TableEncoder` on
    the sample infers the categories (in order of first appearance, then sorted when
    comparable) and the bounds it infers from the whole table, with the same
    warning; only the default number of bins, which depends on the row count, must
    be given from the returned count.

    Raises
    ------
    TypeError
        If a partition's column holds another kind of value than the DataFrame's
        dtype says (strings in one file, numbers in the others), naming the
        partition and the file it is read from (as every error about one partition
        does, through :func:`privtab.engine.map_blocks_1d`).
    """
    from privtab.engine import map_blocks_1d

    sample, n_rows = map_blocks_1d(
        _partition_domain, _joined_domains, [frame], ["X"], frame._meta.dtypes, ndim=2
    )
    return sample, int(n_rows)
