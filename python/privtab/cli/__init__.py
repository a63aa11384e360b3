"""The ``privtab`` command line, its demo and its table I/O.

- :mod:`privtab.cli._commands`: the :func:`main` click group, the method subcommands
  (``select``, ``histogram``, ``distances``, ``mask``, ``kac``, ``demo``) and their
  shared options;
- :mod:`privtab.cli._demo`: the guided tour on the bundled Adult data (``privtab demo``);
- :mod:`privtab.cli._io`: reading and writing CSV, TSV and Parquet tables.

Core kernels called: none directly; every subcommand goes through the public estimators
and functions of :mod:`privtab`, which call ``privtab._core``.
"""

from __future__ import annotations

from privtab.cli._commands import (
    classes_option,
    epsilon_option,
    main,
    seed_option,
)

__all__ = ["classes_option", "epsilon_option", "main", "seed_option"]
