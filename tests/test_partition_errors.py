"""An error in one partition of a Dask table says where: partition, file, column, row.

Every table here is a directory of 4 small Parquet files written in the test, one of
them bad; the error must name the partition and the file the bad row was written to,
the column by its name, the value and its row within the file, in one line, and be
raised without the traceback of the worker that found it. Each test runs on Dask's
threaded scheduler and on an in-process ``distributed.Client``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import traceback

import numpy as np
import pandas as pd
import pytest
from _dask import dask_modules, quietly
from click.testing import CliRunner

import privtab as pt
from privtab.cli import main
from privtab.exceptions import DomainError

dask, distributed, da, dd = dask_modules()
pytest.importorskip("pyarrow", reason="Parquet needs pyarrow")

pytestmark = [
    # Dask's Parquet reader calls a pandas method that pandas 3.1 deprecates.
    pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame"),
]

N_FILES = 4
ROWS_PER_FILE = 12
BAD_FILE = 2
BAD_ROW = 5


@pytest.fixture(scope="module", params=["threads", "distributed"])
def scheduler(request):
    """Dask's threaded scheduler, or an in-process ``distributed.Client``."""
    if request.param == "threads":
        with dask.config.set(scheduler="threads"):
            yield request.param
        return
    with quietly():
        client = distributed.Client(
            processes=False,
            n_workers=1,
            threads_per_worker=2,
            dashboard_address="127.0.0.1:0",
        )
    try:
        yield request.param
    finally:
        with quietly():
            client.close()


def codes_frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "sex": rng.integers(0, 2, ROWS_PER_FILE),
            "city": rng.integers(0, 4, ROWS_PER_FILE),
            "label": rng.choice(["no", "yes"], ROWS_PER_FILE),
        }
    )


def mixed_frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "colour": rng.choice(["red", "blue"], ROWS_PER_FILE),
            "age": rng.uniform(0, 90, ROWS_PER_FILE).round(1),
            "label": rng.choice(["no", "yes"], ROWS_PER_FILE),
        }
    )


def parquet_directory(path, make, spoil=None):
    """Write ``N_FILES`` Parquet files of ``make(i)``; ``spoil`` changes the bad one.

    Returns the directory and the path of every file, as the files were written.
    """
    path.mkdir()
    files = []
    for i in range(N_FILES):
        frame = make(i)
        if spoil is not None and i == BAD_FILE:
            frame = spoil(frame)
        file = path / f"part.{i}.parquet"
        frame.to_parquet(file, index=False)
        files.append(str(file))
    return path, files


def where(files, name):
    """How an error about the bad file's partition must begin."""
    return f"partition {BAD_FILE} (file {files[BAD_FILE]}) of {name}: "


def raised(call, expected=(ValueError, TypeError)):
    """The error ``call()`` raises, after checking it is one line, raised alone."""
    with pytest.raises(expected) as caught:
        call()
    error = caught.value
    message = str(error)
    assert "\n" not in message, message
    assert error.__cause__ is None
    assert error.__suppress_context__
    # Not the worker's traceback: no frame of Dask, of distributed, or of the task.
    frames = traceback.extract_tb(error.__traceback__)
    for frame in frames:
        parts = frame.filename.split(os.sep)
        assert "dask" not in parts, frame
        assert "distributed" not in parts, frame
        assert frame.name != "__call__", frame
    return error


def set_city(value):
    def spoil(frame):
        frame = frame.astype({"city": type(value)})
        frame.loc[BAD_ROW, "city"] = value
        return frame

    return spoil


# Integer codes -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "says"),
    [
        (7, f"codes[{BAD_ROW}, 1] = 7 is >= cardinality 4 of column 'city'"),
        (-1, f"codes >= 0, got -1 at row {BAD_ROW}, column 'city'"),
        (np.nan, f"found NaN at row {BAD_ROW}, column 'city'"),
    ],
    ids=["above", "negative", "nan"],
)
def test_a_bad_code_names_its_file(scheduler, tmp_path, value, says):
    path, files = parquet_directory(tmp_path / "codes", codes_frame, set_city(value))
    X = dd.read_parquet(path)[["sex", "city"]]
    error = raised(lambda: pt.count_columns(X, [2, 4]))
    message = str(error)
    assert message.startswith(where(files, "codes")), message
    assert says in message, message


def test_a_projection_of_many_files_names_the_files_of_its_partition(
    scheduler, tmp_path
):
    """Dask reads a cast of one of many columns several files at a time: the
    partition is named with every file it reads, the bad one among them."""

    def wide(i):
        frame = codes_frame(i)
        for j in range(12):
            frame[f"extra{j}"] = np.arange(ROWS_PER_FILE) * j
        return frame

    path = tmp_path / "wide"
    path.mkdir()
    files = []
    for i in range(8):
        frame = wide(i)
        if i == 5:
            frame.loc[BAD_ROW, "city"] = 9
        frame.to_parquet(path / f"part.{i}.parquet", index=False)
        files.append(str(path / f"part.{i}.parquet"))
    city = dd.read_parquet(path)[["city"]].astype(np.int64)
    message = str(raised(lambda: pt.count_columns(city, [4])))
    named = re.match(r"partition (\d+) \(files ([^)]*)\) of codes: ", message)
    assert named is not None, message
    listed = named.group(2).split(", ")
    assert files[5] in listed, message
    assert set(listed) <= set(files)
    assert len(listed) > 1
    assert "= 9 is >= cardinality 4 of column 'city'" in message


def test_a_bad_label_names_its_file(scheduler, tmp_path):
    def spoil(frame):
        frame.loc[BAD_ROW, "label"] = "maybe"
        return frame

    path, files = parquet_directory(tmp_path / "labels", codes_frame, spoil)
    frame = dd.read_parquet(path)
    selector = pt.PrivateKD(
        1, 1.0, classes=["no", "yes"], accountant=pt.BudgetAccountant()
    )
    error = raised(
        lambda: selector.fit(
            frame[["sex", "city"]], frame["label"], cardinalities=[2, 4]
        )
    )
    message = str(error)
    assert message.startswith(where(files, "y")), message
    assert "'maybe'" in message, message
    assert f"row {BAD_ROW}" in message, message


def test_a_frame_of_one_source_without_files_names_the_partition_only(scheduler):
    frame = pd.DataFrame({"sex": [0, 1] * 10, "city": [0, 1, 2, 3] * 5})
    frame.loc[17, "city"] = 5
    message = str(
        raised(lambda: pt.count_columns(dd.from_pandas(frame, npartitions=2), [2, 4]))
    )
    assert message.startswith("partition 1 of codes: codes[7, 1] = 5"), message


def failing_outside_privtab(block):
    raise ValueError(f"not privtab's: {len(block)} rows")


def test_an_error_raised_outside_privtab_keeps_its_traceback(scheduler):
    """Only privtab's own errors are located and raised alone: another library's
    error in a task keeps the frames that say where it came from."""
    from privtab.engine import map_blocks_1d

    frame = dd.from_pandas(pd.DataFrame({"v": range(8)}), npartitions=2)
    with pytest.raises(ValueError, match=r"^not privtab's: 4 rows$") as caught:
        map_blocks_1d(failing_outside_privtab, sum, [frame], ["v"], ndim=2)
    frames = traceback.extract_tb(caught.value.__traceback__)
    assert frames[-1].name == "failing_outside_privtab"


# TableEncoder's lazy encoding ------------------------------------------------------------
def encoder(**options):
    return pt.TableEncoder(
        domains={"colour": ["red", "blue"]},
        bounds={"age": (0, 90)},
        bins=3,
        **options,
    )


def set_cell(column, value):
    def spoil(frame):
        if isinstance(value, str) and frame[column].dtype != object:
            frame = frame.astype({column: object})
        frame.loc[BAD_ROW, column] = value
        return frame

    return spoil


@pytest.mark.parametrize(
    ("column", "value", "error", "says"),
    [
        (
            "age",
            120.0,
            DomainError,
            "column 'age' has the value 120.0 at row 5, outside",
        ),
        (
            "colour",
            "green",
            DomainError,
            "column 'colour' has the value 'green' at row 5, which is not among",
        ),
        ("age", np.nan, ValueError, "column 'age' has a missing value at row 5"),
    ],
    ids=["out-of-bounds", "unknown-category", "missing"],
)
@pytest.mark.parametrize("with_labels", [False, True], ids=["codes", "with-labels"])
def test_an_encoding_error_names_its_file(
    scheduler, tmp_path, column, value, error, says, with_labels
):
    path, files = parquet_directory(
        tmp_path / "mixed", mixed_frame, set_cell(column, value)
    )
    frame = dd.read_parquet(path)
    table = encoder().fit_transform(frame[["colour", "age"]])
    if with_labels:

        def call():
            pt.PrivateKD(
                1, 1.0, classes=["no", "yes"], accountant=pt.BudgetAccountant()
            ).fit(table, frame["label"])
    else:

        def call():
            pt.thresholded_histogram(table, None, 1.0, accountant=pt.BudgetAccountant())

    caught = raised(call, error)
    message = str(caught)
    assert message.startswith(where(files, "X")), message
    assert says in message, message


def test_a_column_of_another_type_in_one_file_is_named_as_such(scheduler, tmp_path):
    """Strings in one file where the others hold numbers: the error says so, not
    that a value is outside the bounds or the categories."""

    def spoil(frame):
        return frame.astype({"age": str})

    path, files = parquet_directory(tmp_path / "typed", mixed_frame, spoil)
    table = encoder().fit_transform(dd.read_parquet(path)[["colour", "age"]])
    error = raised(
        lambda: pt.thresholded_histogram(
            table, None, 1.0, accountant=pt.BudgetAccountant()
        ),
        TypeError,
    )
    message = str(error)
    assert message.startswith(where(files, "X")), message
    assert re.search(
        r"column 'age' is string( \(\w+\))? in this partition but numeric \(float64\) "
        r"in the schema",
        message,
    ), message


def test_integers_and_floats_with_missing_values_are_one_type(scheduler, tmp_path):
    """A file whose integer codes hold a missing value is read as floats: not a
    change of type. With ``missing="category"`` it encodes as the same rows in
    memory; with ``missing="raise"`` the error is the missing value's."""

    def make(i):
        frame = mixed_frame(i)
        frame["size"] = np.arange(ROWS_PER_FILE) % 3
        return frame

    def spoil(frame):
        frame = frame.astype({"size": float})
        frame.loc[BAD_ROW, "size"] = np.nan
        return frame

    path, files = parquet_directory(tmp_path / "sizes", make, spoil)
    columns = ["colour", "age", "size"]
    frame = dd.read_parquet(path)[columns]
    assert frame.dtypes["size"] == np.int64
    options = {"domains": {"colour": ["red", "blue"], "size": [0, 1, 2]}}
    lazy = pt.TableEncoder(
        bounds={"age": (0, 90)}, bins=3, missing="category", **options
    ).fit_transform(frame)
    memory = pt.TableEncoder(
        bounds={"age": (0, 90)}, bins=3, missing="category", **options
    ).fit_transform(pd.concat([pd.read_parquet(f)[columns] for f in files]))
    np.testing.assert_array_equal(np.asarray(lazy.codes.compute()), memory.codes)
    strict = pt.TableEncoder(bounds={"age": (0, 90)}, bins=3, **options)
    table = strict.fit_transform(frame)
    message = str(
        raised(
            lambda: pt.thresholded_histogram(
                table, None, 1.0, accountant=pt.BudgetAccountant()
            )
        )
    )
    assert message.startswith(where(files, "X")), message
    assert f"column 'size' has a missing value at row {BAD_ROW}" in message, message


# The command line ------------------------------------------------------------------------
SELECT = (
    "select", "--target", "label", "--n-features", "1", "--seed", "1",
    "--domain", "colour=red,blue", "--bounds", "age=0:90", "--classes", "no,yes",
)  # fmt: skip


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        (set_cell("age", 120.0), "column 'age' has the value 120.0 at row 5, outside"),
        (lambda frame: frame.astype({"age": str}), "column 'age' is string"),
    ],
    ids=["out-of-bounds", "string-column"],
)
def test_the_command_line_names_the_file(tmp_path, spoil, says):
    path, files = parquet_directory(tmp_path / "in", mixed_frame, spoil)
    result = CliRunner().invoke(
        main, [*SELECT, str(path), "-o", str(tmp_path / "out.json")]
    )
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if "rror" in line]
    assert len(errors) == 1, result.output
    assert errors[0].startswith(f"Error: {where(files, 'X')}"), result.output
    assert says in errors[0], result.output
    assert "Traceback" not in result.output


@pytest.mark.slow  # starts a cluster of worker processes
def test_the_command_line_on_workers_prints_one_line(tmp_path):
    pytest.importorskip("cryptography", reason="--workers needs cryptography")
    path, files = parquet_directory(
        tmp_path / "in", mixed_frame, set_cell("age", 120.0)
    )
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "from privtab.cli import main; main()",
            *SELECT,
            str(path),
            "-o",
            str(tmp_path / "out.json"),
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    lines = run.stderr.splitlines()
    # The lines that say how each column is encoded, then the error alone.
    assert [line for line in lines if not line.startswith("column ")] == [lines[-1]], (
        run.stderr
    )
    assert lines[-1].startswith(f"Error: {where(files, 'X')}"), run.stderr
    assert "column 'age' has the value 120.0 at row 5" in lines[-1]
