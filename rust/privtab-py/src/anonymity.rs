//! Bindings of `privtab_core::anonymity`: containment anonymity and class sizes of a binary
//! matrix in CSR form, projected onto a feature subset; and the CSR form of a dense 0/1
//! matrix of bytes, the input of every binary-matrix kernel.

use privtab_core::anonymity;
use privtab_core::binary::BinaryCsr;

use crate::prelude::*;

/// Per-row counts (int64; at most the number of rows) of a kernel of the anonymity module
/// on a validated CSR view.
fn per_row(
    indptr: &PyReadonlyArray1<'_, i64>,
    indices: &PyReadonlyArray1<'_, u32>,
    n_features: usize,
    n_threads: Option<usize>,
    kernel: impl FnOnce(BinaryCsr<'_>) -> privtab_core::Result<Vec<u64>> + Send,
) -> PyResult<Numpy<Vec<i64>>> {
    let (rows, items) = (
        contiguous(indptr, "indptr")?,
        contiguous(indices, "indices")?,
    );
    let counts = run(indptr.py(), n_threads, || {
        kernel(BinaryCsr::new(rows, items, n_features)?)
    });
    counts.map(|counts| Numpy(counts.into_iter().map(|c| c as i64).collect()))
}

/// Per-row AC(u) of the projection onto `features` (int64).
#[pyfunction]
#[pyo3(signature = (indptr, indices, n_features, features, n_threads=None))]
pub(crate) fn containment_anonymity(
    indptr: PyReadonlyArray1<'_, i64>,
    indices: PyReadonlyArray1<'_, u32>,
    n_features: usize,
    features: Vec<usize>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Vec<i64>>> {
    per_row(&indptr, &indices, n_features, n_threads, |matrix| {
        anonymity::containment_anonymity(matrix, &features)
    })
}

/// Per-row size of the equivalence class of the projection onto `features` (int64).
#[pyfunction]
#[pyo3(signature = (indptr, indices, n_features, features, n_threads=None))]
pub(crate) fn class_sizes(
    indptr: PyReadonlyArray1<'_, i64>,
    indices: PyReadonlyArray1<'_, u32>,
    n_features: usize,
    features: Vec<usize>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Vec<i64>>> {
    per_row(&indptr, &indices, n_features, n_threads, |matrix| {
        anonymity::class_sizes(matrix, &features)
    })
}

/// CSR arrays: `indptr` (int64) and `indices` (uint32).
type Csr = (Numpy<Vec<i64>>, Numpy<Vec<u32>>);

/// `(indptr, indices)` (int64, uint32) of a C-contiguous 2-D array of 0/1 bytes, or `None`
/// when a byte is neither 0 nor 1 (the caller names the cell).
#[pyfunction]
#[pyo3(signature = (values, n_threads=None))]
pub(crate) fn binary_csr_from_dense(
    values: PyReadonlyArray2<'_, u8>,
    n_threads: Option<usize>,
) -> PyResult<Option<Csr>> {
    let shape = values.shape();
    let (n_rows, n_features) = (shape[0], shape[1]);
    let bytes = contiguous(&values, "values")?;
    let csr = run(values.py(), n_threads, || {
        privtab_core::binary::csr_from_dense(bytes, n_rows, n_features)
    })?;
    Ok(csr.map(|(indptr, indices)| (Numpy(indptr), Numpy(indices))))
}
