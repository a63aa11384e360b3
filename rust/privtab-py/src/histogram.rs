//! Bindings of `privtab_core::histogram`: thresholded sparse DP histograms.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use privtab_core::histogram;
use privtab_core::rng::Seed;
use pyo3::prelude::*;

use crate::columns::Table;
use crate::errors::{mapped, run};

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

/// Probability that a cell with true count 0 is kept: P(noise > threshold).
#[pyfunction]
pub(crate) fn empty_cell_probability(epsilon: f64, threshold: f64, noise: &str) -> PyResult<f64> {
    let noise = mapped(noise.parse())?;
    mapped(histogram::empty_cell_probability(epsilon, threshold, noise))
}
