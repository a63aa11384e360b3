"""privtab: privacy-preserving feature selection, distances and data release.

Differentially private (and k-anonymous) methods for tabular data, with the heavy
counting and sampling done in Rust. See the README for a tour; every public name is
listed in ``__all__``.

Core kernels called: none here beyond ``privtab._core.__version__``; each module's
docstring names the ``privtab._core`` kernels it calls.
"""

from __future__ import annotations

from privtab import audit, datasets
from privtab._core import __version__
from privtab._random import check_random_state
from privtab._threads import kernel_threads, threads
from privtab.accountant import (
    BudgetAccountant,
    LedgerEntry,
    default_accountant,
    set_default_accountant,
    use_accountant,
)
from privtab.counts import (
    SparseCounts,
    contingency_table,
    count_columns,
    count_keys,
    dp_contingency_table,
    entropy,
    mutual_information,
    symmetric_uncertainty,
)
from privtab.dilca import DILCA, DPDILCA
from privtab.discernibility import (
    PrivateKD,
    discernibility,
    greedy_discernibility,
    minimum_discerning_attributes,
)
from privtab.dpfsdr import (
    DPFS,
    DPFSDR,
    correlated_degree_matrix,
    correlated_sensitivity,
    dp_feature_importance,
    filter_correlated_features,
    fscore,
    pearson_matrix,
)
from privtab.exceptions import (
    BudgetExceededError,
    DomainError,
    LongSearchWarning,
    PrivacyLeakWarning,
    PrivtabError,
)
from privtab.histogram import SparseHistogram, thresholded_histogram
from privtab.kac import (
    CMGreedy,
    ExponentialDPRelease,
    FlippingResult,
    Itemsets,
    KACSelector,
    KAnonymityGreedy,
    LaplaceDPRelease,
    classification_metric,
    containment_anonymity,
    distcnt_utility,
    ham_utility,
    maximal_itemsets,
    maximal_kac_sets,
    randomization_flipping,
    read_transactions,
)
from privtab.linear_model import (
    DPLinearSVC,
    DPLogisticRegression,
    objective_perturbation_parameters,
    output_perturbation_l1_sensitivity,
    output_perturbation_l2_sensitivity,
)
from privtab.mechanisms import (
    discrete_laplace_mechanism,
    exponential_mechanism,
    laplace_mechanism,
)
from privtab.microagg import (
    Microaggregation,
    MicroaggregationMasker,
    individual_ranking_clusters,
    mean_sse,
    microaggregate,
    sse,
)
from privtab.mixed_radix import mixed_radix_decode, mixed_radix_encode
from privtab.projected import ProjectedHistogram
from privtab.table import EncodedTable, TableEncoder, lei_bandwidth, lei_bins

__all__ = [
    "DILCA",
    "DPDILCA",
    "DPFS",
    "DPFSDR",
    "BudgetAccountant",
    "BudgetExceededError",
    "CMGreedy",
    "DPLinearSVC",
    "DPLogisticRegression",
    "DomainError",
    "EncodedTable",
    "ExponentialDPRelease",
    "FlippingResult",
    "Itemsets",
    "KACSelector",
    "KAnonymityGreedy",
    "LaplaceDPRelease",
    "LedgerEntry",
    "LongSearchWarning",
    "Microaggregation",
    "MicroaggregationMasker",
    "PrivacyLeakWarning",
    "PrivateKD",
    "PrivtabError",
    "ProjectedHistogram",
    "SparseCounts",
    "SparseHistogram",
    "TableEncoder",
    "__version__",
    "audit",
    "check_random_state",
    "classification_metric",
    "containment_anonymity",
    "contingency_table",
    "correlated_degree_matrix",
    "correlated_sensitivity",
    "count_columns",
    "count_keys",
    "datasets",
    "default_accountant",
    "discernibility",
    "discrete_laplace_mechanism",
    "distcnt_utility",
    "dp_contingency_table",
    "dp_feature_importance",
    "entropy",
    "exponential_mechanism",
    "filter_correlated_features",
    "fscore",
    "greedy_discernibility",
    "ham_utility",
    "individual_ranking_clusters",
    "kernel_threads",
    "laplace_mechanism",
    "lei_bandwidth",
    "lei_bins",
    "maximal_itemsets",
    "maximal_kac_sets",
    "mean_sse",
    "microaggregate",
    "minimum_discerning_attributes",
    "mixed_radix_decode",
    "mixed_radix_encode",
    "mutual_information",
    "objective_perturbation_parameters",
    "output_perturbation_l1_sensitivity",
    "output_perturbation_l2_sensitivity",
    "pearson_matrix",
    "randomization_flipping",
    "read_transactions",
    "set_default_accountant",
    "sse",
    "symmetric_uncertainty",
    "threads",
    "thresholded_histogram",
    "use_accountant",
]
