"""Feature selection and data release under k-anonymity by containment (k-AC).

A subset S of the binary features of a two-class data set is *k-anonymous by
containment* when every row's set of 1-features within S is contained in the
1-features of at least k rows (itself included). This package holds everything
built on that notion [1]_:

- :mod:`privtab.kac._selection`: the measures (:func:`containment_anonymity`,
  :func:`ham_utility`, :func:`distcnt_utility`, :func:`classification_metric`) and
  the k-AC selector :class:`KACSelector`;
- :mod:`privtab.kac._baselines`: the greedy baselines under plain k-anonymity
  (:class:`KAnonymityGreedy`, :class:`CMGreedy`);
- :mod:`privtab.kac._dp_release`: the differentially private releases
  (:func:`randomization_flipping`, :class:`LaplaceDPRelease`,
  :class:`ExponentialDPRelease`);
- :mod:`privtab.kac._itemsets`: the maximal-set miner front-end
  (:func:`maximal_itemsets`, :func:`maximal_kac_sets`, :func:`read_transactions`);
- :mod:`privtab.kac._binary`: 0/1 matrices and Ham scores shared by the above.

Core kernels called: ``privtab._core.containment_anonymity``,
``privtab._core.class_sizes``, ``privtab._core.Partition``,
``privtab._core.maximal_sets``, ``privtab._core.read_transactions`` and
``privtab._core.randomization_flipping`` (plus the samplers behind
:mod:`privtab.mechanisms`).

References
----------
.. [1] B. Zhang, N. Mohammed, V. S. Dave and M. Al Hasan, "Feature Selection for
   Classification under Anonymity Constraint", Transactions on Data Privacy, 2017.
"""

from __future__ import annotations

from privtab.kac._baselines import CMGreedy, KAnonymityGreedy
from privtab.kac._dp_release import (
    ExponentialDPRelease,
    FlippingResult,
    LaplaceDPRelease,
    randomization_flipping,
)
from privtab.kac._itemsets import (
    LONG_SEARCH_SECONDS,
    Itemsets,
    maximal_itemsets,
    maximal_kac_sets,
    read_transactions,
)
from privtab.kac._selection import (
    KACSelector,
    classification_metric,
    containment_anonymity,
    distcnt_utility,
    ham_utility,
)

__all__ = [
    "LONG_SEARCH_SECONDS",
    "CMGreedy",
    "ExponentialDPRelease",
    "FlippingResult",
    "Itemsets",
    "KACSelector",
    "KAnonymityGreedy",
    "LaplaceDPRelease",
    "classification_metric",
    "containment_anonymity",
    "distcnt_utility",
    "ham_utility",
    "maximal_itemsets",
    "maximal_kac_sets",
    "randomization_flipping",
    "read_transactions",
]
