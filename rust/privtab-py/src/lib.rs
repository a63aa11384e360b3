//! `privtab._core`: thin PyO3 glue over `privtab-core`.
//!
//! Each binding does three things: extract numpy buffers and scalars while attached to the
//! interpreter (tables through [`args::Table`]), run the core kernel through
//! [`errors::run`] (GIL released, caller's thread count, errors mapped, Ctrl-C honoured),
//! and hand the result back through [`output::Numpy`] (vectors moved into numpy arrays).
//! Validation that needs Python types lives in `python/privtab`; validation of values and
//! any orchestration that does not touch Python live in the core. The files mirror the
//! core's modules.

mod anonymity;
mod args;
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
mod output;
mod pairwise;
mod partition;

/// What every binding file uses: PyO3's prelude, the numpy argument types, the seed, and
/// the helpers of this crate.
mod prelude {
    pub use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
    pub use privtab_core::rng::Seed;
    pub use pyo3::prelude::*;

    pub use crate::args::Table;
    pub use crate::errors::{contiguous, mapped, run};
    pub use crate::output::{Matrix, Numpy};
}

use pyo3::prelude::*;

/// The module `privtab._core`: everything the files below export.
#[pymodule]
mod _core {
    #[pymodule_export]
    use crate::{
        anonymity::{binary_csr_from_dense, class_sizes, containment_anonymity},
        clustering::randomization_flipping,
        columns::code_columns,
        columns::column_maxima,
        correlation::{
            correlated_degree_matrix, correlated_degrees, f_scores, feature_importance,
            filter_correlated_features, pearson_matrix,
        },
        counts::{
            contingency_sparse, contingency_table, count_columns, count_columns_of_rows,
            count_entropy, count_keys, entropy, merge_counts, mutual_information,
            symmetric_uncertainty,
        },
        encode::{mixed_radix_decode, mixed_radix_encode, mixed_radix_encode_rows},
        errors::{kernel_threads, set_block_threads},
        histogram::{
            check_histogram, empty_cell_probability, thresholded_histogram,
            thresholded_histogram_of_counts, thresholded_histogram_of_rows,
        },
        microagg::{individual_ranking_clusters, microaggregate, microaggregate_columns},
        mining::{maximal_sets, read_transactions},
        noise::{
            add_discrete_laplace, add_laplace, binomial_samples, discrete_laplace_samples,
            discrete_laplace_scale, discrete_laplace_tail_samples, exponential_mechanism,
            exponential_samples, gamma_samples, grid_laplace_samples, gumbel_samples,
            l2_laplace_samples, laplace_grid, laplace_samples, sample_distinct,
        },
        pairwise::pairwise_tables,
        partition::{
            Partition, class_value_label_counts, discernibility, greedy_discernibility,
            grouped_discernibility_round, minimum_discerning_attributes, private_kd,
            private_kd_round, refined_classes, score_candidates, split_rows, subset_entropies,
        },
    };
    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
