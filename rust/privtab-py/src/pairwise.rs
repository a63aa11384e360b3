//! Bindings of `privtab_core::pairwise`: every pairwise contingency table and entropy.

use privtab_core::pairwise::{self, PairwiseCounts};

use crate::args::table_kernels;

table_kernels! {
    /// The tables (flat, pairs `i < j` in lexicographic order), their offsets and the m×m
    /// entropies (H(X_i) on the diagonal, H(X_i, X_j) off it) of a (m, n) code table.
    fn pairwise_tables(with_tables: bool = true) -> PairwiseCounts =
        |cols| pairwise::pairwise_counts(cols, with_tables);
}
