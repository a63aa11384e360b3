//! Bindings of `privtab_core::histogram`: thresholded sparse DP histograms.

use privtab_core::histogram::{self, Histogram};

use crate::args::table_kernels;
use crate::prelude::*;

table_kernels! {
    /// Sorted keys and noisy values of the thresholded histogram of a (d, n) code table.
    fn thresholded_histogram(
        epsilon: f64,
        threshold: f64,
        noise: &str,
        max_cells: u64,
        seed: Option<u64> = None
    ) -> Histogram =
        |cols| {
            let (noise, seed) = (noise.parse()?, Seed::new(seed));
            histogram::thresholded_histogram(cols, epsilon, threshold, noise, max_cells, &seed)
        };
}

/// Probability that a cell with true count 0 is kept: P(noise > threshold).
#[pyfunction]
pub(crate) fn empty_cell_probability(epsilon: f64, threshold: f64, noise: &str) -> PyResult<f64> {
    let noise = mapped(noise.parse())?;
    mapped(histogram::empty_cell_probability(epsilon, threshold, noise))
}
