"""Reading and writing tables for the command line (CSV or Parquet, by extension).

Core kernels called: none (pandas does the parsing).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["read_table", "write_table"]

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
    kind = _format(path, fmt)
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
