//! Bindings of `privtab_core::correlation`: the Pearson matrix, attribute filter, degree
//! matrix, F-scores, feature importance and record correlated degrees of DPFSDR.

use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use privtab_core::correlation::{self, RowMatrix};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{contiguous, mapped, run};

/// Every record's correlated degree and number of correlated records.
type DegreeArrays<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<u64>>);

/// The validated row-major view of a (n, d) float64 array.
fn row_matrix<'a>(x: &'a PyReadonlyArray2<'_, f64>) -> PyResult<RowMatrix<'a>> {
    let (n, d) = (x.shape()[0], x.shape()[1]);
    mapped(RowMatrix::new(contiguous(x, "x")?, n, d))
}

/// A (d, d) array from a row-major vector.
fn square<'py>(py: Python<'py>, d: usize, values: Vec<f64>) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let matrix = Array2::from_shape_vec((d, d), values)
        .map_err(|err| PyValueError::new_err(err.to_string()))?;
    Ok(matrix.into_pyarray(py))
}

/// The (d, d) feature–feature Pearson matrix of a (n, d) table.
#[pyfunction]
#[pyo3(signature = (x, n_threads=None))]
pub(crate) fn pearson_matrix<'py>(
    x: PyReadonlyArray2<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (py, d) = (x.py(), x.shape()[1]);
    let m = row_matrix(&x)?;
    let theta = run(py, n_threads, || correlation::pearson_matrix(&m))?;
    square(py, d, theta)
}

/// The indices of the features kept by the attribute filter at `delta`.
#[pyfunction]
#[pyo3(signature = (x, delta, n_threads=None))]
pub(crate) fn filter_correlated_features<'py>(
    x: PyReadonlyArray2<'py, f64>,
    delta: f64,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let py = x.py();
    let m = row_matrix(&x)?;
    let kept = run(py, n_threads, || {
        correlation::filter_correlated_features(&m, delta)
    })?;
    Ok(kept
        .into_iter()
        .map(|i| i as u64)
        .collect::<Vec<u64>>()
        .into_pyarray(py))
}

/// The (d, d) correlated-degree adjacency matrix M of Algorithm 1 at `delta`.
#[pyfunction]
#[pyo3(signature = (x, delta, n_threads=None))]
pub(crate) fn correlated_degree_matrix<'py>(
    x: PyReadonlyArray2<'py, f64>,
    delta: f64,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (py, d) = (x.py(), x.shape()[1]);
    let m = row_matrix(&x)?;
    let degrees = run(py, n_threads, || {
        correlation::correlated_degree_matrix(&m, delta)
    })?;
    square(py, d, degrees)
}

/// The F-score (eq. 8) of every feature for labels `0..n_labels`.
#[pyfunction]
#[pyo3(signature = (x, labels, n_labels, n_threads=None))]
pub(crate) fn f_scores<'py>(
    x: PyReadonlyArray2<'py, f64>,
    labels: PyReadonlyArray1<'py, u32>,
    n_labels: u32,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let py = x.py();
    let m = row_matrix(&x)?;
    let labels = contiguous(&labels, "labels")?;
    let scores = run(py, n_threads, || {
        correlation::f_scores(&m, labels, n_labels)
    })?;
    Ok(scores.into_pyarray(py))
}

/// The feature importance `F / ΣF` (eq. 9), a probability vector.
#[pyfunction]
pub(crate) fn feature_importance<'py>(
    scores: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let py = scores.py();
    let values = contiguous(&scores, "scores")?;
    Ok(mapped(correlation::feature_importance(values))?.into_pyarray(py))
}

/// The correlated degree and the number of correlated records of every record on the
/// feature subset `features` at `record_delta`.
#[pyfunction]
#[pyo3(signature = (x, features, record_delta, n_threads=None))]
pub(crate) fn correlated_degrees<'py>(
    x: PyReadonlyArray2<'py, f64>,
    features: Vec<usize>,
    record_delta: f64,
    n_threads: Option<usize>,
) -> PyResult<DegreeArrays<'py>> {
    let py = x.py();
    let m = row_matrix(&x)?;
    let degrees = run(py, n_threads, || {
        correlation::correlated_degrees(&m, &features, record_delta)
    })?;
    Ok((
        degrees.degree.into_pyarray(py),
        degrees.count.into_pyarray(py),
    ))
}
