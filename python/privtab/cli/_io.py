"""Reading and writing tables for the command line (CSV or Parquet, by extension).

A Parquet file or a directory of Parquet partitions can also be read lazily, as a
Dask DataFrame (:func:`read_parquet_lazily`) that the counting methods read one
partition at a time; :func:`domain_sample` gathers, in one pass, the few rows that
show every column's domain, so that a :class:`~privtab.table.TableEncoder` fitted on
them infers (and warns about) exactly what it infers from the whole table.

Core kernels called: none (pandas and Dask do the parsing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["domain_sample", "read_parquet_lazily", "read_table", "write_table"]

_FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}


def _format(path: Path, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in ("csv", "tsv", "parquet"):
            raise ValueError(f"format must be 'csv', 'tsv' or 'parquet', got {fmt!r}")
        return fmt
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2", ".xz", ".zst", ".zip"):
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _FORMATS:
        return _FORMATS[suffixes[-1]]
    raise ValueError(
        f"cannot tell the format of {str(path)!r} from its extension; "
        "use .csv, .tsv or .parquet (or pass the format)"
    )


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


def write_table(frame: pd.DataFrame, path: str | Path, fmt: str | None = None) -> None:
    """Write ``frame`` as CSV/TSV or Parquet, chosen by the file extension.

    Raises
    ------
    ValueError
        If the format is unknown.
    """
    path = Path(path)
    kind = _format(path, fmt)
    if kind == "parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, sep="\t" if kind == "tsv" else ",", index=False)


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


def _partition_domain(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``frame`` that hold every column's domain as the encoder infers it.

    A categorical column keeps its distinct values in order of first appearance; a
    numeric one its smallest and largest value and, if it has one, a missing value.
    Columns are padded to the same length by repeating their own rows.
    """
    from privtab.table._readers import _read_columns

    if len(frame) == 0:
        return frame.iloc[:0]
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
    return pd.DataFrame(
        {
            name: s.iloc[np.arange(length) % len(s)].to_numpy()
            for name, s in zip(frame.columns, kept, strict=True)
        }
    ).astype(frame.dtypes.to_dict())


def domain_sample(frame: Any) -> tuple[pd.DataFrame, int]:
    """Return the rows of a Dask DataFrame that show its domains, and its row count.

    One pass over the partitions. Fitting a :class:`~privtab.table.TableEncoder` on
    the sample infers the categories (in order of first appearance, then sorted when
    comparable) and the bounds it infers from the whole table, with the same
    warning; only the default number of bins, which depends on the row count, must
    be given from the returned count.
    """
    import dask

    parts, lengths = dask.compute(
        frame.map_partitions(_partition_domain, meta=frame._meta),
        frame.map_partitions(len),
    )
    return parts.reset_index(drop=True), int(np.sum(lengths))
