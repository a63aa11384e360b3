//! Bindings of `privtab_core::mining`: the FIMI reader and the maximal-set miners.

use std::path::PathBuf;

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use privtab_core::mining::{self, Limits, Rows};
use pyo3::prelude::*;

use crate::errors::{contiguous, mapped, run};

type Csr<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<u32>>, usize);
type Found<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u64>>,
    bool,
);

/// (indptr, indices, n_items) of a FIMI transaction file.
#[pyfunction]
pub(crate) fn read_transactions(py: Python<'_>, path: PathBuf) -> PyResult<Csr<'_>> {
    let t = run(py, None, || mining::read_transactions(&path))?;
    Ok((
        t.indptr.into_pyarray(py),
        t.indices.into_pyarray(py),
        t.n_items,
    ))
}

/// Maximal sets of a CSR binary matrix: "frequency" (threshold = min support) or
/// "containment" (threshold = k); returns (offsets, items, measures, complete).
#[pyfunction]
#[pyo3(signature = (indptr, indices, n_items, predicate, threshold, max_sets=None, time_limit=None, n_threads=None))]
pub(crate) fn maximal_sets<'py>(
    indptr: PyReadonlyArray1<'py, i64>,
    indices: PyReadonlyArray1<'py, u32>,
    n_items: usize,
    predicate: &str,
    threshold: u64,
    max_sets: Option<usize>,
    time_limit: Option<f64>,
    n_threads: Option<usize>,
) -> PyResult<Found<'py>> {
    let py = indptr.py();
    let (indptr, indices) = (
        contiguous(&indptr, "indptr")?,
        contiguous(&indices, "indices")?,
    );
    let limits = mapped(Limits::new(max_sets, time_limit))?;
    let predicate = mapped(predicate.parse())?;
    let found = run(py, n_threads, || {
        let rows = Rows::new(indptr, indices, n_items)?;
        mining::maximal_sets_of(predicate, rows, threshold, limits)
    })?;
    Ok((
        found.offsets.into_pyarray(py),
        found.items.into_pyarray(py),
        found.measures.into_pyarray(py),
        found.complete,
    ))
}
