//! Bindings of `privtab_core::clustering`: k-member clustering and randomization flipping.

use privtab_core::clustering::{self, Flipped};

use crate::prelude::*;

/// Flattened flipped matrix, cluster id per row, number of clusters and flipped cells of a
/// CSR binary matrix.
#[pyfunction]
#[pyo3(signature = (indptr, indices, n_features, k, seed=None, n_threads=None))]
pub(crate) fn randomization_flipping(
    indptr: PyReadonlyArray1<'_, i64>,
    indices: PyReadonlyArray1<'_, u32>,
    n_features: usize,
    k: usize,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Flipped>> {
    let (rows, items) = (
        contiguous(&indptr, "indptr")?,
        contiguous(&indices, "indices")?,
    );
    let flipped = run(indptr.py(), n_threads, || {
        clustering::randomization_flipping(rows, items, n_features, k, &Seed::new(seed)?)
    });
    flipped.map(Numpy)
}
