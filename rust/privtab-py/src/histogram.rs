//! Bindings of `privtab_core::histogram`: thresholded sparse DP histograms.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use privtab_core::counts::SparseCounts;
use privtab_core::histogram;
use privtab_core::rng::Seed;
use pyo3::prelude::*;

use crate::columns::Table;
use crate::errors::{contiguous, mapped, run};

type KeyValues<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<f64>>);

/// Sorted keys and noisy values of the thresholded histogram of a (d, n) code table.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, epsilon, threshold, noise, max_cells, seed=None, n_threads=None))]
pub(crate) fn thresholded_histogram<'py>(
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    epsilon: f64,
    threshold: f64,
    noise: &str,
    max_cells: u64,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<KeyValues<'py>> {
    let (py, noise) = (columns.py(), mapped(noise.parse())?);
    let table = Table::new(&columns, &cardinalities)?;
    let seed = Seed::new(seed);
    let hist = run(py, n_threads, || {
        let cols = table.columns()?;
        histogram::thresholded_histogram(cols, epsilon, threshold, noise, max_cells, &seed)
    })?;
    Ok((hist.keys.into_pyarray(py), hist.values.into_pyarray(py)))
}

/// The thresholded histogram of rows already counted: sorted keys over `cardinalities`
/// and their counts (e.g. counts of blocks of rows, merged).
#[pyfunction]
#[pyo3(signature = (keys, counts, cardinalities, epsilon, threshold, noise, max_cells, seed=None, n_threads=None))]
pub(crate) fn thresholded_histogram_of_counts<'py>(
    keys: PyReadonlyArray1<'py, u64>,
    counts: PyReadonlyArray1<'py, u64>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    epsilon: f64,
    threshold: f64,
    noise: &str,
    max_cells: u64,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<KeyValues<'py>> {
    let (py, noise) = (keys.py(), mapped(noise.parse())?);
    let observed = mapped(SparseCounts::from_parts(
        contiguous(&keys, "keys")?.to_vec(),
        contiguous(&counts, "counts")?.to_vec(),
    ))?;
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let seed = Seed::new(seed);
    let hist = run(py, n_threads, || {
        histogram::thresholded_histogram_of_counts(
            &observed, cards, epsilon, threshold, noise, max_cells, &seed,
        )
    })?;
    Ok((hist.keys.into_pyarray(py), hist.values.into_pyarray(py)))
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

/// Probability that a cell with true count 0 is kept: P(noise > threshold).
#[pyfunction]
pub(crate) fn empty_cell_probability(epsilon: f64, threshold: f64, noise: &str) -> PyResult<f64> {
    let noise = mapped(noise.parse())?;
    mapped(histogram::empty_cell_probability(epsilon, threshold, noise))
}
