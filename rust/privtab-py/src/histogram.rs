//! Bindings of `privtab_core::histogram`: thresholded sparse DP histograms.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use privtab_core::columns::Columns;
use privtab_core::histogram::{self, Noise};
use privtab_core::resources::with_threads;
use privtab_core::rng::Seed;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::encode::columns_view;
use crate::errors::detached;

type KeyValues<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<f64>>);

fn parse_noise(noise: &str) -> PyResult<Noise> {
    match noise {
        "laplace" => Ok(Noise::Laplace),
        "discrete" => Ok(Noise::Discrete),
        other => Err(PyValueError::new_err(format!(
            "noise must be 'laplace' or 'discrete', got {other:?}"
        ))),
    }
}

/// Sorted keys and noisy values of the thresholded histogram of a (d, n) code table.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, epsilon, threshold, noise, max_cells, seed=None, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn thresholded_histogram<'py>(
    py: Python<'py>,
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    epsilon: f64,
    threshold: f64,
    noise: &str,
    max_cells: u64,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<KeyValues<'py>> {
    let noise = parse_noise(noise)?;
    let (data, n_rows, cards) = columns_view(&columns, &cardinalities)?;
    let seed = Seed::new(seed);
    let hist = detached(py, || {
        with_threads(n_threads, || {
            histogram::thresholded_histogram(
                Columns::new(data, n_rows, cards)?,
                epsilon,
                threshold,
                noise,
                max_cells,
                &seed,
            )
        })
    })?;
    Ok((hist.keys.into_pyarray(py), hist.values.into_pyarray(py)))
}

/// Probability that a cell with true count 0 is kept: P(noise > threshold).
#[pyfunction]
fn empty_cell_probability(epsilon: f64, threshold: f64, noise: &str) -> PyResult<f64> {
    let noise = parse_noise(noise)?;
    histogram::empty_cell_probability(epsilon, threshold, noise)
        .map_err(|err| crate::errors::CoreError(err).into())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(thresholded_histogram, m)?)?;
    m.add_function(wrap_pyfunction!(empty_cell_probability, m)?)?;
    Ok(())
}
