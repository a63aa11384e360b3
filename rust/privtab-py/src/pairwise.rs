//! Bindings of `privtab_core::pairwise`: every pairwise contingency table and entropy.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use privtab_core::pairwise;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::columns::Table;
use crate::errors::run;

type PairwiseArrays<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray2<f64>>,
);

/// The tables (flat, pairs `i < j` in lexicographic order), their offsets and the m×m
/// entropies (H(X_i) on the diagonal, H(X_i, X_j) off it) of a (m, n) code table.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, with_tables=true, n_threads=None))]
pub(crate) fn pairwise_tables<'py>(
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    with_tables: bool,
    n_threads: Option<usize>,
) -> PyResult<PairwiseArrays<'py>> {
    let (py, table) = (columns.py(), Table::new(&columns, &cardinalities)?);
    let counts = run(py, n_threads, || {
        pairwise::pairwise_counts(table.columns()?, with_tables)
    })?;
    let entropies = Array2::from_shape_vec((counts.n_cols, counts.n_cols), counts.entropies)
        .map_err(|err| PyValueError::new_err(err.to_string()))?;
    Ok((
        counts.tables.into_pyarray(py),
        counts.offsets.into_pyarray(py),
        entropies.into_pyarray(py),
    ))
}
