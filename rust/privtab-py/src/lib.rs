//! `privtab._core`: thin PyO3 glue over `privtab-core`.
//!
//! Each binding does three things: extract numpy buffers and scalars while attached to the
//! interpreter (tables through [`columns::Table`]), run the core kernel through
//! [`errors::run`] (GIL released, caller's thread count, errors mapped, Ctrl-C honoured),
//! and hand the result back as a numpy array. Validation that needs Python types lives in
//! `python/privtab`; validation of values lives in the core. The files mirror the core's
//! modules.

mod anonymity;
mod clustering;
mod columns;
mod correlation;
mod counts;
mod encode;
mod errors;
mod histogram;
mod microagg;
mod mining;
mod noise;
mod pairwise;
mod partition;

use pyo3::prelude::*;

/// The module `privtab._core`: everything the files below export.
#[pymodule]
mod _core {
    #[pymodule_export]
    use crate::anonymity::{class_sizes, containment_anonymity};
    #[pymodule_export]
    use crate::clustering::randomization_flipping;
    #[pymodule_export]
    use crate::correlation::{
        correlated_degree_matrix, correlated_degrees, f_scores, feature_importance,
        filter_correlated_features, pearson_matrix,
    };
    #[pymodule_export]
    use crate::counts::{
        contingency_sparse, contingency_table, count_columns, count_entropy, count_keys, entropy,
        merge_counts, mutual_information, symmetric_uncertainty,
    };
    #[pymodule_export]
    use crate::encode::{mixed_radix_decode, mixed_radix_encode, mixed_radix_encode_rows};
    #[pymodule_export]
    use crate::histogram::{
        check_histogram, empty_cell_probability, thresholded_histogram,
        thresholded_histogram_of_counts,
    };
    #[pymodule_export]
    use crate::microagg::{individual_ranking_clusters, microaggregate, microaggregate_columns};
    #[pymodule_export]
    use crate::mining::{maximal_sets, read_transactions};
    #[pymodule_export]
    use crate::noise::{
        add_discrete_laplace, add_laplace, binomial_samples, discrete_laplace_samples,
        discrete_laplace_scale, discrete_laplace_tail_samples, exponential_mechanism,
        exponential_samples, gamma_samples, grid_laplace_samples, gumbel_samples,
        l2_laplace_samples, laplace_grid, laplace_samples, sample_distinct,
    };
    #[pymodule_export]
    use crate::pairwise::pairwise_tables;
    #[pymodule_export]
    use crate::partition::{
        Partition, discernibility, greedy_discernibility, minimum_discerning_attributes,
        private_kd, private_kd_round, score_candidates, subset_entropies,
    };
    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
