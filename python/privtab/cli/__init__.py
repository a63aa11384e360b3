"""The ``privtab`` command line, its demo and its table I/O.

- :mod:`privtab.cli._main`: the :func:`main` click group and ``privtab demo``;
- one module per family of subcommands: :mod:`~privtab.cli._select` (``select``:
  PrivateKD, the greedy order, DPFSDR and DPFS), :mod:`~privtab.cli._histogram`
  (``histogram``), :mod:`~privtab.cli._distances` (``distances``: DILCA, DP-DILCA),
  :mod:`~privtab.cli._mask` (``mask``: microaggregation) and :mod:`~privtab.cli._kac`
  (``kac``: k-anonymity by containment);
- :mod:`privtab.cli._options`: the options, input, warning, error and output handling
  the subcommands share;
- :mod:`privtab.cli._demo`: the guided tour on bundled data (``privtab demo``);
- :mod:`privtab.cli._io`: reading and writing CSV, TSV and Parquet tables.

Core kernels called: none directly; every subcommand goes through the public estimators
and functions of :mod:`privtab`, which call ``privtab._core``.
"""

from __future__ import annotations

from privtab.cli._main import main
from privtab.cli._options import classes_option, epsilon_option, seed_option

__all__ = ["classes_option", "epsilon_option", "main", "seed_option"]
