"""The Dask tests' shared pieces: the extra's modules, and the test cluster of 2 worker
processes, started once per module."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

#: Why a Dask test module is skipped where the extra is not installed (CI installs it).
MISSING_EXTRA = 'the Dask engine needs the dask extra: pip install "privtab[dask]"'


def dask_modules() -> tuple[Any, Any, Any, Any]:
    """Return ``dask``, ``distributed``, ``dask.array`` and ``dask.dataframe``.

    Called at a test module's top level, it skips the whole module when one of them
    is missing.
    """
    names = ("dask", "distributed", "dask.array", "dask.dataframe")
    dask, distributed, array, dataframe = (
        pytest.importorskip(name, reason=MISSING_EXTRA) for name in names
    )
    return dask, distributed, array, dataframe


@contextlib.contextmanager
def quietly() -> Iterator[None]:
    """Silence warnings: a cluster's start-up and shutdown warnings (ports, leaked
    sockets of closed comms) are not the code under test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def local_cluster(n_workers: int = 2, security: Any = None) -> Iterator[Any]:
    """Start a ``distributed.LocalCluster`` of single-threaded worker processes on
    127.0.0.1 (2 by default; with ``security``, over TLS only)."""
    import distributed

    with quietly():
        cluster = distributed.LocalCluster(
            n_workers=n_workers,
            processes=True,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            memory_limit="2GiB",
            security=security,
        )
    try:
        yield cluster
    finally:
        with quietly():
            cluster.close()


@contextlib.contextmanager
def local_client() -> Iterator[Any]:
    """A ``distributed.Client`` of a :func:`local_cluster`, closed on exit."""
    import distributed

    with local_cluster() as cluster:
        with quietly():
            client = distributed.Client(cluster)
        try:
            yield client
        finally:
            with quietly():
                client.close()
