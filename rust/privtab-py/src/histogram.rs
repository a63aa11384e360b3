//! Bindings of `privtab_core::histogram`: thresholded sparse DP histograms.

use privtab_core::counts::SparseCounts;
use privtab_core::histogram::{self, Histogram};

use crate::args::run_on_int_arrays;
use crate::prelude::*;

/// Sorted keys and noisy values of the thresholded histogram of a (d, n) code table,
/// whose codes are checked as they are counted (no validation pass before).
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, epsilon, threshold, noise, max_cells, seed=None, n_threads=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn thresholded_histogram(
    columns: PyReadonlyArray2<'_, u32>,
    cardinalities: PyReadonlyArray1<'_, u32>,
    epsilon: f64,
    threshold: f64,
    noise: &str,
    max_cells: u64,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Histogram>> {
    let noise = mapped(noise.parse())?;
    let seed = mapped(Seed::new(seed))?;
    let data = contiguous(&columns, "columns")?;
    let n_rows = columns.shape()[1];
    let cards = contiguous(&cardinalities, "cardinalities")?;
    run(columns.py(), n_threads, || {
        histogram::thresholded_histogram_of_columns(
            data, n_rows, cards, epsilon, threshold, noise, max_cells, &seed,
        )
    })
    .map(Numpy)
}

/// Sorted keys and noisy values of the thresholded histogram of the row-major `codes`
/// (n × d, any integer dtype), read in place and range-checked against `cardinalities`.
#[pyfunction]
#[pyo3(signature = (codes, cardinalities, epsilon, threshold, noise, max_cells, seed=None, n_threads=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn thresholded_histogram_of_rows(
    codes: &Bound<'_, PyAny>,
    cardinalities: PyReadonlyArray1<'_, u32>,
    epsilon: f64,
    threshold: f64,
    noise: &str,
    max_cells: u64,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Histogram>> {
    let noise = mapped(noise.parse())?;
    let seed = mapped(Seed::new(seed))?;
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let histogram = run_on_int_arrays!(
        Ix2,
        [codes],
        n_threads,
        "codes must be a 2-D integer array",
        |shape: &[usize], data| {
            histogram::thresholded_histogram_of_rows(
                data, shape[0], cards, epsilon, threshold, noise, max_cells, &seed, "codes",
            )
        }
    );
    histogram.map(Numpy)
}

/// Probability that a cell with true count 0 is kept: P(noise > threshold).
#[pyfunction]
pub(crate) fn empty_cell_probability(epsilon: f64, threshold: f64, noise: &str) -> PyResult<f64> {
    let noise = mapped(noise.parse())?;
    mapped(histogram::empty_cell_probability(epsilon, threshold, noise))
}

/// The thresholded histogram of rows already counted: sorted keys over `cardinalities`
/// and their counts (e.g. counts of blocks of rows, merged).
#[pyfunction]
#[pyo3(signature = (keys, counts, cardinalities, epsilon, threshold, noise, max_cells, seed=None, n_threads=None))]
pub(crate) fn thresholded_histogram_of_counts(
    keys: PyReadonlyArray1<'_, u64>,
    counts: PyReadonlyArray1<'_, u64>,
    cardinalities: PyReadonlyArray1<'_, u32>,
    epsilon: f64,
    threshold: f64,
    noise: &str,
    max_cells: u64,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Histogram>> {
    let noise = mapped(noise.parse())?;
    let observed = mapped(SparseCounts::from_parts(
        contiguous(&keys, "keys")?.to_vec(),
        contiguous(&counts, "counts")?.to_vec(),
    ))?;
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let seed = mapped(Seed::new(seed))?;
    run(keys.py(), n_threads, || {
        histogram::thresholded_histogram_of_counts(
            &observed, cards, epsilon, threshold, noise, max_cells, &seed,
        )
    })
    .map(Numpy)
}

/// Checks a thresholded histogram's parameters and expected size before any row is read.
#[pyfunction]
pub(crate) fn check_histogram(
    cardinalities: PyReadonlyArray1<'_, u32>,
    epsilon: f64,
    threshold: f64,
    noise: &str,
    max_cells: u64,
) -> PyResult<()> {
    let noise = mapped(noise.parse())?;
    let cards = contiguous(&cardinalities, "cardinalities")?;
    mapped(histogram::check_histogram(
        cards, epsilon, threshold, noise, max_cells,
    ))
}
