//! Bindings of `privtab_core::mining`: the FIMI reader and the maximal-set miners.

use std::path::PathBuf;
use std::time::Duration;

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use privtab_core::mining::{self, Limits, MaximalSets, Rows};
use privtab_core::resources::with_threads;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{contiguous, detached};

type Csr<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<u32>>, usize);
type Found<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u64>>,
    bool,
);

/// (indptr, indices, n_items) of a FIMI transaction file.
#[pyfunction]
fn read_transactions(py: Python<'_>, path: PathBuf) -> PyResult<Csr<'_>> {
    let t = detached(py, || mining::read_transactions(&path))?;
    Ok((
        t.indptr.into_pyarray(py),
        t.indices.into_pyarray(py),
        t.n_items,
    ))
}

fn limits(max_sets: Option<usize>, time_limit: Option<f64>) -> PyResult<Limits> {
    let time_limit = match time_limit {
        None => None,
        Some(t) => Some(Duration::try_from_secs_f64(t).map_err(|_| {
            PyValueError::new_err(format!(
                "time_limit must be a finite number of seconds >= 0, got {t}"
            ))
        })?),
    };
    Ok(Limits {
        max_sets,
        time_limit,
    })
}

fn into_arrays(py: Python<'_>, found: MaximalSets) -> Found<'_> {
    (
        found.offsets.into_pyarray(py),
        found.items.into_pyarray(py),
        found.measures.into_pyarray(py),
        found.complete,
    )
}

/// Maximal sets of a CSR binary matrix: "frequency" (threshold = min support) or
/// "containment" (threshold = k); returns (offsets, items, measures, complete).
#[pyfunction]
#[pyo3(signature = (indptr, indices, n_items, predicate, threshold, max_sets=None, time_limit=None, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn maximal_sets<'py>(
    py: Python<'py>,
    indptr: PyReadonlyArray1<'py, i64>,
    indices: PyReadonlyArray1<'py, u32>,
    n_items: usize,
    predicate: &str,
    threshold: u64,
    max_sets: Option<usize>,
    time_limit: Option<f64>,
    n_threads: Option<usize>,
) -> PyResult<Found<'py>> {
    let indptr = contiguous(&indptr, "indptr")?;
    let indices = contiguous(&indices, "indices")?;
    let limits = limits(max_sets, time_limit)?;
    let frequency = match predicate {
        "frequency" => true,
        "containment" => false,
        other => {
            return Err(PyValueError::new_err(format!(
                "predicate must be 'frequency' or 'containment', got {other:?}"
            )));
        }
    };
    let found = detached(py, || {
        with_threads(n_threads, || {
            let rows = Rows::new(indptr, indices, n_items)?;
            if frequency {
                mining::maximal_itemsets(rows, threshold, limits)
            } else {
                mining::maximal_kac_sets(rows, threshold, limits)
            }
        })
    })?;
    Ok(into_arrays(py, found))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_transactions, m)?)?;
    m.add_function(wrap_pyfunction!(maximal_sets, m)?)?;
    Ok(())
}
