"""Rebuild ``data/adult.csv.gz`` from the UCI files ``adult.data`` and ``adult.test``.

Usage::

    python -m privtab.datasets._make_adult SOURCE_DIR [OUTPUT]

``SOURCE_DIR`` holds the unmodified UCI files (md5 of adult.data
``5d7c39d7b8804f071cdd1f2a7c460872``, of adult.test ``35238206dfdf7f1fe215bbb874adecdc``).
The output is a gzip-compressed CSV with a header row: the 32,561 rows of adult.data,
then the 16,281 rows of adult.test; fields stripped of whitespace, ``?`` written as an
empty field (missing), and the trailing ``.`` of the test labels removed. The gzip
header carries no file name or time stamp, so the output is byte-for-byte reproducible.

Core kernels called: none (gzip and csv from the standard library).
"""

from __future__ import annotations

import csv
import gzip
import io
import sys
from pathlib import Path

COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]


def read_rows(path: Path, *, test: bool) -> list[list[str]]:
    """Parse one UCI file into rows of 15 cleaned fields."""
    rows = []
    with path.open(encoding="ascii") as handle:
        for number, line in enumerate(handle, start=1):
            line = line.strip()
            if not line or line.startswith("|"):
                continue
            fields = [f.strip() for f in line.split(",")]
            if len(fields) != len(COLUMNS):
                raise ValueError(
                    f"{path}:{number}: expected 15 fields, got {len(fields)}"
                )
            fields = ["" if f == "?" else f for f in fields]
            if test:
                fields[-1] = fields[-1].removesuffix(".")
            rows.append(fields)
    return rows


def convert(source: Path, output: Path) -> int:
    """Write the combined, cleaned table to ``output``; return the number of rows."""
    rows = read_rows(source / "adult.data", test=False)
    rows += read_rows(source / "adult.test", test=True)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    output.parent.mkdir(parents=True, exist_ok=True)
    with (
        output.open("wb") as raw,
        gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0
        ) as gz,
    ):
        gz.write(text.getvalue().encode("ascii"))
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: ``SOURCE_DIR [OUTPUT]``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print(__doc__, file=sys.stderr)
        return 2
    output = (
        Path(args[1])
        if len(args) == 2
        else Path(__file__).resolve().parent / "data" / "adult.csv.gz"
    )
    n = convert(Path(args[0]), output)
    print(f"wrote {n} rows to {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
