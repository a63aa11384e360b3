"""The counting commands on a directory of Parquet partitions, counted by Dask.

One ``distributed.LocalCluster`` (2 worker processes) serves the module through
``--scheduler``, and one of 1 worker that speaks only TLS serves the ``tls://`` tests;
the ``--workers 2`` tests start their own. Every test of a release runs a command on a
single Parquet file in memory and on the same rows as a directory of Parquet
partitions on Dask with the same seed, and compares the outputs exactly (the outputs,
warnings included, must be equal: counts are exact and the noise is drawn once, in
the calling process, from the same seed). The ``--workers`` cluster's own tests check
the trust boundary: loopback sockets only, no client without its certificate, no
HTTP pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import pandas as pd
import psutil
import pytest
from _dask import local_cluster, quietly
from click.testing import CliRunner

from privtab.cli import main
from privtab.cli._options import open_input

distributed = pytest.importorskip(
    "distributed",
    reason='the CLI on Dask needs the dask extra: pip install "privtab[dask]"',
)
pytest.importorskip("pyarrow", reason="Parquet needs pyarrow")

N_ROWS = 2400
N_PARTITIONS = 4
#: How long a client may try to reach a scheduler before it gives up, in seconds.
CONNECT_TIMEOUT = 3
#: Why a test that needs a TLS certificate is skipped (the dask extra installs it).
NO_CRYPTOGRAPHY = (
    'Dask\'s TLS certificates need cryptography: pip install "privtab[dask]"'
)


@pytest.fixture(scope="module")
def scheduler():
    with local_cluster() as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def tls_scheduler(tmp_path_factory):
    """The address of a cluster of 1 worker that speaks only TLS, and the Dask
    configuration that gives a client its certificate (files, as a user's would)."""
    pytest.importorskip("cryptography", reason=NO_CRYPTOGRAPHY)
    security = distributed.Security.temporary()
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_text(security.tls_client_cert)
    (folder / "key.pem").write_text(security.tls_client_key)
    config = {
        "distributed.comm.tls.ca-file": str(folder / "cert.pem"),
        "distributed.comm.tls.client.cert": str(folder / "cert.pem"),
        "distributed.comm.tls.client.key": str(folder / "key.pem"),
    }
    with local_cluster(n_workers=1, security=security) as cluster:
        yield cluster.scheduler_address, config


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """The same rows as one Parquet file and as a directory of 4 partitions.

    Categorical and numeric predictors (with missing values) correlated with a
    label; the first and the last partition each hold a category no other has.
    """
    rng = np.random.default_rng(2012)
    colour = rng.choice(["red", "green", "blue"], N_ROWS).astype(object)
    colour[0], colour[-1] = "violet", "amber"
    size = rng.choice(["S", "M", "L", "XL"], N_ROWS).astype(object)
    size[rng.random(N_ROWS) < 0.02] = None
    age = rng.uniform(18, 90, N_ROWS).round(1)
    age[rng.random(N_ROWS) < 0.02] = np.nan
    frame = pd.DataFrame(
        {
            "colour": colour,
            "size": size,
            "shape": rng.choice(["round", "square"], N_ROWS),
            "age": age,
            "noise": rng.integers(0, 5, N_ROWS),
        }
    )
    signal = (frame["colour"] == "red") ^ frame["size"].isin(["L", "XL"])
    frame["label"] = np.where(signal ^ (rng.random(N_ROWS) < 0.1), "yes", "no")
    root = tmp_path_factory.mktemp("parquet")
    single = root / "table.parquet"
    frame.to_parquet(single, index=False)
    parts = root / "parts"
    parts.mkdir()
    for i, chunk in enumerate(np.array_split(np.arange(N_ROWS), N_PARTITIONS)):
        frame.iloc[chunk].to_parquet(parts / f"part.{i:03d}.parquet", index=False)
    return single, parts


def run(*args):
    return CliRunner().invoke(main, [*map(str, args)], catch_exceptions=False)


def both(tables, tmp_path, command, out_name, *args, dask_args=()):
    """Run ``command`` in memory on the file and on Dask on the directory."""
    single, parts = tables
    outputs = []
    for where, extra in (("memory", ()), ("dask", dask_args)):
        out = tmp_path / f"{where}-{out_name}"
        source = single if where == "memory" else parts
        result = run(command, source, "-o", out, *args, *extra)
        assert result.exit_code == 0, result.output
        outputs.append((result, out))
    return outputs


def test_select_privatekd_is_the_in_memory_selection(tables, tmp_path, scheduler):
    (mem, mem_out), (dsk, dsk_out) = both(
        tables,
        tmp_path,
        "select",
        "sel.json",
        "--target", "label", "--n-features", "3", "--epsilon", "2", "--seed", "5",
        dask_args=("--scheduler", scheduler),
    )  # fmt: skip
    in_memory = json.loads(mem_out.read_text())
    on_dask = json.loads(dsk_out.read_text())
    assert on_dask == in_memory
    assert len(in_memory["selected"]) == 3
    assert "inferred the categories" in dsk.output
    assert dsk.output == mem.output


def test_select_greedy_table_output_with_declared_classes(tables, tmp_path, scheduler):
    (_, mem_out), (_, dsk_out) = both(
        tables,
        tmp_path,
        "select",
        "sel.csv",
        "--method", "greedy", "--target", "label", "--n-features", "2",
        "--classes", "no,yes", "--write-projection",
        dask_args=("--scheduler", scheduler),
    )  # fmt: skip
    in_memory = pd.read_csv(mem_out)
    pd.testing.assert_frame_equal(pd.read_csv(dsk_out), in_memory)
    assert in_memory.shape == (N_ROWS, 3)


def test_select_greedy_rejects_an_undeclared_label_on_dask(tables, tmp_path, scheduler):
    _, parts = tables
    result = run(
        "select", parts, "-o", tmp_path / "o.json", "--method", "greedy",
        "--target", "label", "--n-features", "2", "--classes", "no,maybe",
        "--scheduler", scheduler,
    )  # fmt: skip
    assert result.exit_code == 1
    assert "yes" in result.output


def test_histogram_is_the_in_memory_release(tables, tmp_path, scheduler):
    (mem, mem_out), (dsk, dsk_out) = both(
        tables,
        tmp_path,
        "histogram",
        "syn.csv",
        "--target", "label", "--epsilon", "3", "--n-features", "2",
        "--gamma", "0.5", "--classes", "no,yes", "--seed", "11",
        "--allow-inferred-domains",
        dask_args=("--scheduler", scheduler),
    )  # fmt: skip
    in_memory = pd.read_csv(mem_out)
    pd.testing.assert_frame_equal(pd.read_csv(dsk_out), in_memory)
    assert len(in_memory) > 0
    assert dsk.output == mem.output
    assert "inferred" in mem.output


@pytest.mark.parametrize("method", ["dilca_m", "max_relevance"])
def test_distances_are_the_in_memory_distances(tables, tmp_path, scheduler, method):
    (_, mem_out), (_, dsk_out) = both(
        tables,
        tmp_path,
        "distances",
        "dist.json",
        "--method", method, "--context-size", "2", "--seed", "3",
        "--allow-inferred-domains",
        dask_args=("--scheduler", scheduler),
    )  # fmt: skip
    in_memory = json.loads(mem_out.read_text())
    assert json.loads(dsk_out.read_text()) == in_memory
    assert in_memory["columns"]["colour"]["categories"][:2] == ["amber", "blue"]


def test_directory_without_cluster_uses_the_local_scheduler(tables, tmp_path):
    (_, mem_out), (_, dsk_out) = both(
        tables,
        tmp_path,
        "select",
        "sel.json",
        "--target", "label", "--n-features", "2", "--seed", "8",
    )  # fmt: skip
    assert json.loads(dsk_out.read_text()) == json.loads(mem_out.read_text())


def test_integer_codes_are_read_as_in_memory(tables, tmp_path):
    """The integer column noise (codes 0..4) gets a category per code on Dask too:
    the partitions' smallest and largest values decide it, as in memory."""
    (mem, mem_out), (dsk, dsk_out) = both(
        tables,
        tmp_path,
        "distances",
        "dist.json",
        "--method", "dilca_m", "--allow-inferred-domains",
    )  # fmt: skip
    in_memory = json.loads(mem_out.read_text())
    assert json.loads(dsk_out.read_text()) == in_memory
    assert in_memory["columns"]["noise"]["categories"] == [0, 1, 2, 3, 4]
    line = (
        "column 'noise': categorical (integer codes), 5 categories taken from the data"
    )
    assert line in mem.stderr.splitlines()
    assert dsk.stderr == mem.stderr


def test_workers_starts_a_local_cluster(tables, tmp_path):
    pytest.importorskip("cryptography", reason=NO_CRYPTOGRAPHY)
    (_, mem_out), (_, dsk_out) = both(
        tables,
        tmp_path,
        "select",
        "sel.json",
        "--target", "label", "--n-features", "2", "--seed", "9",
        dask_args=("--workers", "2"),
    )  # fmt: skip
    assert json.loads(dsk_out.read_text()) == json.loads(mem_out.read_text())


def listening_sockets():
    """The (pid, port, host) of every socket this process and its children listen on."""
    processes = [psutil.Process(), *psutil.Process().children(recursive=True)]
    sockets = set()
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            for connection in process.net_connections(kind="inet"):
                if connection.status == psutil.CONN_LISTEN:
                    host, port = connection.laddr[:2]
                    sockets.add((process.pid, port, host))
    return sockets


def port_of(address):
    return int(address.rsplit(":", 1)[1])


async def ask_identity(address, security):
    """Connect to the scheduler at ``address`` as a client with ``security``, and
    return what it says about itself (what any client that connects may ask)."""
    comm = await distributed.comm.connect(
        address, timeout=CONNECT_TIMEOUT, **security.get_connection_args("client")
    )
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        await comm.close()


@pytest.fixture(scope="class")
def workers_cluster(tables):
    """The client of the cluster ``--workers 2`` starts, and the sockets it opened."""
    pytest.importorskip("cryptography", reason=NO_CRYPTOGRAPHY)
    _, parts = tables
    before = listening_sockets()
    with open_input(str(parts), "label", workers=2):
        client = distributed.default_client()
        client.wait_for_workers(2, timeout=60)
        yield client, listening_sockets() - before


class TestWorkersClusterBoundary:
    def test_listens_on_the_loopback_only(self, workers_cluster):
        client, opened = workers_cluster
        assert {host for _, _, host in opened} == {"127.0.0.1"}
        ports = {port for _, port, _ in opened}
        workers = client.scheduler_info()["workers"]
        assert port_of(client.scheduler.address) in ports
        assert {port_of(address) for address in workers} <= ports
        assert client.scheduler.address.startswith("tls://127.0.0.1:")

    @pytest.mark.parametrize(
        "how", ["no certificate", "plain tcp", "another certificate"]
    )
    def test_refuses_a_client_without_its_certificate(self, workers_cluster, how):
        client, _ = workers_cluster
        address, security = client.scheduler.address, distributed.Security()
        if how == "plain tcp":
            address = address.replace("tls://", "tcp://", 1)
        if how == "another certificate":
            security = distributed.Security.temporary()
        started = time.perf_counter()
        with quietly(), pytest.raises((OSError, TypeError)):
            asyncio.run(ask_identity(address, security))
        assert time.perf_counter() - started < CONNECT_TIMEOUT + 10
        assert len(client.scheduler_info()["workers"]) == 2

    def test_serves_no_http_pages(self, workers_cluster):
        client, _ = workers_cluster
        scheduler_port = client.cluster.scheduler.http_server.port
        pages = [
            f"http://127.0.0.1:{scheduler_port}/{path}"
            for path in ("info/main/workers.html", "json/identity.json", "health")
        ]
        for worker in client.scheduler_info()["workers"].values():
            pages.append(f"http://127.0.0.1:{worker['services']['dashboard']}/metrics")
        for page in pages:
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(page, timeout=CONNECT_TIMEOUT).close()
            refused.value.close()
            assert refused.value.code == 404, page


def test_tls_scheduler_with_dasks_configuration(tables, tmp_path, tls_scheduler):
    import dask

    address, config = tls_scheduler
    with dask.config.set(config):
        (mem, mem_out), (dsk, dsk_out) = both(
            tables,
            tmp_path,
            "select",
            "sel.json",
            "--target", "label", "--k", "2", "--seed", "4",
            dask_args=("--scheduler", address),
        )  # fmt: skip
    assert json.loads(dsk_out.read_text()) == json.loads(mem_out.read_text())
    assert dsk.output == mem.output


def test_tls_scheduler_without_configuration_names_it(tables, tmp_path, tls_scheduler):
    _, parts = tables
    address, _ = tls_scheduler
    result = run(
        "select", parts, "-o", tmp_path / "o.json", "--target", "label", "--k", "2",
        "--scheduler", address,
    )  # fmt: skip
    assert result.exit_code == 2
    assert address in result.output
    assert "distributed.comm.tls.client.cert" in result.output


def test_help_says_the_cluster_must_be_trusted():
    result = run("select", "--help")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "see the private data" in text
    assert "127.0.0.1 only, over TLS" in text


def test_scheduler_and_workers_are_exclusive(tables, tmp_path, scheduler):
    single, _ = tables
    result = run(
        "select", single, "-o", tmp_path / "o.json", "--target", "label", "--n-features", "2",
        "--scheduler", scheduler, "--workers", "2",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "give --scheduler or --workers, not both" in result.output


def test_csv_input_on_dask_is_refused(tmp_path, scheduler):
    path = tmp_path / "in.csv"
    pd.DataFrame({"a": ["x", "y"] * 5, "label": ["p", "q"] * 5}).to_csv(path)
    result = run(
        "select", path, "-o", tmp_path / "o.json", "--target", "label", "--n-features", "1",
        "--scheduler", scheduler,
    )  # fmt: skip
    assert result.exit_code == 1
    assert "only Parquet input" in result.output
    assert "in.csv" in result.output


def test_unknown_target_in_a_directory(tables, tmp_path, scheduler):
    _, parts = tables
    result = run(
        "histogram", parts, "-o", tmp_path / "o.csv", "--target", "nope",
        "--scheduler", scheduler,
    )  # fmt: skip
    assert result.exit_code == 2
    assert "'nope' is not a column" in result.output


def test_dpfsdr_refuses_a_cluster(tables, tmp_path):
    single, _ = tables
    result = run(
        "select", single, "-o", tmp_path / "o.json", "--method", "dpfsdr",
        "--target", "label", "--epsilon-selection", "1", "--epsilon-training", "1",
        "--workers", "2",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "cannot be used with --method dpfsdr" in result.output


@pytest.mark.parametrize(
    ("missing", "option", "named"),
    [
        ("distributed", ("--workers", "2"), "--workers"),
        ("cryptography", ("--workers", "2"), "--workers"),
        ("dask.dataframe", (), "directory of Parquet partitions"),
    ],
)
def test_missing_dask_extra_names_the_install(
    tables, tmp_path, monkeypatch, missing, option, named
):
    _, parts = tables
    monkeypatch.setitem(sys.modules, missing, None)
    result = run(
        "select", parts, "-o", tmp_path / "o.json", "--target", "label", "--n-features", "2",
        *option,
    )  # fmt: skip
    assert result.exit_code == 1
    assert 'pip install "privtab[dask]"' in result.output
    assert named in result.output


def test_unreachable_scheduler_is_named(tables, tmp_path):
    _, parts = tables
    result = run(
        "select", parts, "-o", tmp_path / "o.json", "--target", "label", "--n-features", "2",
        "--scheduler", "tcp://127.0.0.1:1",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "tcp://127.0.0.1:1" in result.output


@pytest.mark.parametrize("where", ["cluster", "local scheduler"])
def test_progress_is_drawn_per_computation(scheduler, where):
    import io

    import dask.dataframe as dd
    from rich.console import Console

    from privtab.cli._progress import dask_progress

    values = np.arange(1000)
    frame = dd.from_pandas(pd.DataFrame({"v": values}), npartitions=5)
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    context = (
        distributed.Client(scheduler)
        if where == "cluster"
        else contextlib.nullcontext()
    )
    with context, dask_progress(console):
        total = frame["v"].sum().compute()
    assert total == values.sum()
    drawn = console.file.getvalue()
    assert f"counting IN ({where})" in drawn
    assert "tasks" in drawn
