"""The test cluster of the Dask tests: 2 worker processes, started once per module."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def local_cluster() -> Iterator[Any]:
    """Start a ``distributed.LocalCluster`` of 2 single-threaded worker processes.

    Its start-up and shutdown warnings (ports, leaked sockets of closed comms) are
    not the code under test and are silenced.
    """
    import distributed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            dashboard_address=":0",
            memory_limit="2GiB",
        )
    try:
        yield cluster
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cluster.close()


@contextlib.contextmanager
def local_client() -> Iterator[Any]:
    """A ``distributed.Client`` of a :func:`local_cluster`, closed on exit."""
    import distributed

    with local_cluster() as cluster:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client = distributed.Client(cluster)
        try:
            yield client
        finally:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                client.close()
