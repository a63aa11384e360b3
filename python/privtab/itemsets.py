"""Maximal-set mining on binary data (moved to :mod:`privtab.kac`).

Kept so that ``from privtab.itemsets import ...`` still works; the implementation lives
in :mod:`privtab.kac._itemsets`. Core kernels called (there):
``privtab._core.maximal_sets`` and ``privtab._core.read_transactions``.
"""

from __future__ import annotations

from privtab.kac._itemsets import (
    Itemsets,
    maximal_itemsets,
    maximal_kac_sets,
    read_transactions,
)

__all__ = ["Itemsets", "maximal_itemsets", "maximal_kac_sets", "read_transactions"]
