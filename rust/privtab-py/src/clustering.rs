//! Bindings of `privtab_core::clustering`: k-member clustering and randomization flipping.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use privtab_core::clustering;
use privtab_core::rng::Seed;
use pyo3::prelude::*;

use crate::errors::{contiguous, run};

type Flipped<'py> = (
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<u32>>,
    usize,
    u64,
);

/// Flattened flipped matrix, cluster id per row, number of clusters and flipped cells of a
/// CSR binary matrix.
#[pyfunction]
#[pyo3(signature = (indptr, indices, n_features, k, seed=None, n_threads=None))]
pub(crate) fn randomization_flipping<'py>(
    indptr: PyReadonlyArray1<'py, i64>,
    indices: PyReadonlyArray1<'py, u32>,
    n_features: usize,
    k: usize,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Flipped<'py>> {
    let py = indptr.py();
    let (indptr, indices) = (
        contiguous(&indptr, "indptr")?,
        contiguous(&indices, "indices")?,
    );
    let seed = Seed::new(seed);
    let out = run(py, n_threads, || {
        clustering::randomization_flipping(indptr, indices, n_features, k, &seed)
    })?;
    Ok((
        out.data.into_pyarray(py),
        out.clusters.into_pyarray(py),
        out.n_clusters,
        out.flipped,
    ))
}
