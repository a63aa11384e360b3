//! Bindings of `privtab_core::anonymity`: containment anonymity and class sizes of a binary
//! matrix in CSR form, projected onto a feature subset.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use privtab_core::anonymity;
use privtab_core::binary::BinaryCsr;
use pyo3::prelude::*;

use crate::errors::{contiguous, run};

/// Runs a per-row kernel of the anonymity module on a validated CSR view.
fn per_row<'py>(
    indptr: &PyReadonlyArray1<'py, i64>,
    indices: &PyReadonlyArray1<'py, u32>,
    n_features: usize,
    n_threads: Option<usize>,
    kernel: impl FnOnce(BinaryCsr<'_>) -> privtab_core::Result<Vec<u64>> + Send,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let (rows, items) = (
        contiguous(indptr, "indptr")?,
        contiguous(indices, "indices")?,
    );
    let counts = run(indptr.py(), n_threads, || {
        kernel(BinaryCsr::new(rows, items, n_features)?)
    })?;
    // Counts are at most the number of rows, below 2^32.
    let out: Vec<i64> = counts.into_iter().map(|c| c as i64).collect();
    Ok(out.into_pyarray(indptr.py()))
}

/// Per-row AC(u) of the projection onto `features` (int64).
#[pyfunction]
#[pyo3(signature = (indptr, indices, n_features, features, n_threads=None))]
pub(crate) fn containment_anonymity<'py>(
    indptr: PyReadonlyArray1<'py, i64>,
    indices: PyReadonlyArray1<'py, u32>,
    n_features: usize,
    features: Vec<usize>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    per_row(&indptr, &indices, n_features, n_threads, |matrix| {
        anonymity::containment_anonymity(matrix, &features)
    })
}

/// Per-row size of the equivalence class of the projection onto `features` (int64).
#[pyfunction]
#[pyo3(signature = (indptr, indices, n_features, features, n_threads=None))]
pub(crate) fn class_sizes<'py>(
    indptr: PyReadonlyArray1<'py, i64>,
    indices: PyReadonlyArray1<'py, u32>,
    n_features: usize,
    features: Vec<usize>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    per_row(&indptr, &indices, n_features, n_threads, |matrix| {
        anonymity::class_sizes(matrix, &features)
    })
}
