//! Bindings of `privtab_core::mining`: the FIMI reader and the maximal-set miners.

use std::path::PathBuf;

use privtab_core::mining::{self, Limits, MaximalSets, Rows, Transactions};

use crate::prelude::*;

/// (indptr, indices, item_ids) of a FIMI transaction file: one column per distinct item,
/// `item_ids[j]` the id of column `j`.
#[pyfunction]
pub(crate) fn read_transactions(py: Python<'_>, path: PathBuf) -> PyResult<Numpy<Transactions>> {
    run(py, None, || mining::read_transactions(&path)).map(Numpy)
}

/// Maximal sets of a CSR binary matrix: "frequency" (threshold = min support) or
/// "containment" (threshold = k); returns (offsets, items, measures, complete).
#[pyfunction]
#[pyo3(signature = (indptr, indices, n_items, predicate, threshold, max_sets=None, time_limit=None, n_threads=None))]
pub(crate) fn maximal_sets(
    indptr: PyReadonlyArray1<'_, i64>,
    indices: PyReadonlyArray1<'_, u32>,
    n_items: usize,
    predicate: &str,
    threshold: u64,
    max_sets: Option<usize>,
    time_limit: Option<f64>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<MaximalSets>> {
    let (rows, items) = (
        contiguous(&indptr, "indptr")?,
        contiguous(&indices, "indices")?,
    );
    let limits = mapped(Limits::new(max_sets, time_limit))?;
    let predicate = mapped(predicate.parse())?;
    let found = run(indptr.py(), n_threads, || {
        let rows = Rows::new(rows, items, n_items)?;
        mining::maximal_sets_of(predicate, rows, threshold, limits)
    });
    found.map(Numpy)
}
