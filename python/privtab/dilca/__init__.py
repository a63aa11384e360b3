"""DILCA and DP-DILCA: learned distances between the values of categorical attributes.

DILCA [1]_ measures how differently two values ``y_i, y_j`` of an attribute ``Y`` are
co-distributed with the values of a few other attributes, its *context*:

    d(y_i, y_j) = sqrt( Σ_{X ∈ ctx} Σ_{x ∈ X} (P(y_i | x) − P(y_j | x))² / Σ_{X ∈ ctx} |X| )

with ``|X|`` the declared cardinality of ``X``. DP-DILCA [2]_ makes both the context
choice and the contingency tables differentially private. The distances of all
attributes combine into an object distance ``sqrt(Σ_j d_j(a_j, b_j)²)``, usable as a
precomputed metric (k-NN, Ward clustering).

- :mod:`privtab.dilca._contexts`: pairwise tables and the context searches
  (:func:`max_relevance_context`, :func:`max_dependency_context`);
- :mod:`privtab.dilca._distances`: :func:`dilca_distance_matrix`,
  :func:`classical_mds`;
- :mod:`privtab.dilca._estimators`: :class:`DILCA`, :class:`DPDILCA`.

Core kernels called: ``privtab._core.pairwise_tables`` and
``privtab._core.subset_entropies``, plus the counting kernels and samplers behind
:mod:`privtab.counts` and :mod:`privtab.mechanisms`.

References
----------
.. [1] D. Ienco, R. G. Pensa and R. Meo, "From context to distance: learning
   dissimilarity for categorical data clustering", ACM Transactions on Knowledge
   Discovery from Data 6(1), 2012.
.. [2] E. Battaglia, S. Celano and R. G. Pensa, "Differentially private distance
   learning in categorical data", Data Mining and Knowledge Discovery 35, 2021.
"""

from __future__ import annotations

from privtab.dilca._contexts import max_dependency_context, max_relevance_context
from privtab.dilca._distances import classical_mds, dilca_distance_matrix
from privtab.dilca._estimators import DILCA, DPDILCA

__all__ = [
    "DILCA",
    "DPDILCA",
    "classical_mds",
    "dilca_distance_matrix",
    "max_dependency_context",
    "max_relevance_context",
]
