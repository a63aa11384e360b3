//! Bindings of `privtab_core::counts`: contingency tables, sparse counts, entropies.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use privtab_core::counts::{self, SparseCounts};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::columns::Table;
use crate::errors::{contiguous, run};

type KeyCounts<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>);

fn key_counts(py: Python<'_>, sparse: SparseCounts) -> KeyCounts<'_> {
    let (keys, counts) = sparse.into_parts();
    (keys.into_pyarray(py), counts.into_pyarray(py))
}

/// Runs `$body` with `$xs` and `$ys` bound to the slices of `$x` and `$y` when both are
/// 1-D arrays of one of the integer dtypes the core reads directly (the same for both).
macro_rules! with_code_pair {
    ($x:expr, $y:expr, |$xs:ident, $ys:ident| $body:expr) => {
        with_code_pair!(@each $x, $y, |$xs, $ys| $body; u32, i64, u8, u16, u64, i8, i16, i32)
    };
    (@each $x:expr, $y:expr, |$xs:ident, $ys:ident| $body:expr; $($t:ty),*) => {{
        let mut result = None;
        $(
            if result.is_none()
                && let (Ok(xa), Ok(ya)) = (
                    $x.extract::<PyReadonlyArray1<'_, $t>>(),
                    $y.extract::<PyReadonlyArray1<'_, $t>>(),
                )
            {
                let ($xs, $ys) = (contiguous(&xa, "x")?, contiguous(&ya, "y")?);
                result = Some($body);
            }
        )*
        result.unwrap_or_else(|| {
            Err(PyTypeError::new_err(
                "x and y must be 1-D integer arrays of the same dtype",
            ))
        })
    }};
}

/// Dense (kx, ky) contingency table of codes `x` and `y` (1-D, same integer dtype).
#[pyfunction]
#[pyo3(signature = (x, kx, y, ky, n_threads=None))]
pub(crate) fn contingency_table<'py>(
    x: &Bound<'py, PyAny>,
    kx: u32,
    y: &Bound<'py, PyAny>,
    ky: u32,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<u64>>> {
    let py = x.py();
    let table = with_code_pair!(x, y, |xs, ys| run(py, n_threads, || {
        counts::contingency_dense(xs, kx, ys, ky)
    }))?;
    let array = Array2::from_shape_vec((kx as usize, ky as usize), table)
        .map_err(|err| PyValueError::new_err(err.to_string()))?;
    Ok(array.into_pyarray(py))
}

/// Non-zero cells of the contingency table of `x` and `y`, keyed by `a * ky + b`.
#[pyfunction]
#[pyo3(signature = (x, kx, y, ky, n_threads=None))]
pub(crate) fn contingency_sparse<'py>(
    x: &Bound<'py, PyAny>,
    kx: u32,
    y: &Bound<'py, PyAny>,
    ky: u32,
    n_threads: Option<usize>,
) -> PyResult<KeyCounts<'py>> {
    let py = x.py();
    let sparse = with_code_pair!(x, y, |xs, ys| run(py, n_threads, || {
        counts::contingency_sparse(xs, kx, ys, ky)
    }))?;
    Ok(key_counts(py, sparse))
}

/// Sorted distinct keys and their counts.
#[pyfunction]
#[pyo3(signature = (keys, n_threads=None))]
pub(crate) fn count_keys<'py>(
    keys: PyReadonlyArray1<'py, u64>,
    n_threads: Option<usize>,
) -> PyResult<KeyCounts<'py>> {
    let slice = contiguous(&keys, "keys")?;
    let sparse = run(keys.py(), n_threads, || Ok(SparseCounts::from_keys(slice)))?;
    Ok(key_counts(keys.py(), sparse))
}

/// Sparse k-way counts of the columns `subset` of a (d, n) code table.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, subset, n_threads=None))]
pub(crate) fn count_columns<'py>(
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    subset: Vec<usize>,
    n_threads: Option<usize>,
) -> PyResult<KeyCounts<'py>> {
    let table = Table::new(&columns, &cardinalities)?;
    let sparse = run(columns.py(), n_threads, || {
        counts::count_columns(table.columns()?, &subset)
    })?;
    Ok(key_counts(columns.py(), sparse))
}

/// The sum of two sparse counts.
#[pyfunction]
pub(crate) fn merge_counts<'py>(
    keys_a: PyReadonlyArray1<'py, u64>,
    counts_a: PyReadonlyArray1<'py, u64>,
    keys_b: PyReadonlyArray1<'py, u64>,
    counts_b: PyReadonlyArray1<'py, u64>,
) -> PyResult<KeyCounts<'py>> {
    let parts = [
        (
            contiguous(&keys_a, "keys")?,
            contiguous(&counts_a, "counts")?,
        ),
        (
            contiguous(&keys_b, "keys")?,
            contiguous(&counts_b, "counts")?,
        ),
    ];
    let merged = run(keys_a.py(), None, || {
        let a = SparseCounts::from_parts(parts[0].0.to_vec(), parts[0].1.to_vec())?;
        let b = SparseCounts::from_parts(parts[1].0.to_vec(), parts[1].1.to_vec())?;
        a.merge(&b)
    })?;
    Ok(key_counts(keys_a.py(), merged))
}

/// Entropy in bits of non-negative finite weights.
#[pyfunction]
pub(crate) fn entropy(counts: PyReadonlyArray1<'_, f64>) -> PyResult<f64> {
    let weights = contiguous(&counts, "counts")?;
    run(counts.py(), None, || counts::entropy_of_weights(weights))
}

/// Entropy in bits of exact counts, summed in the order given (as the core's counting
/// kernels sum the counts they produce).
#[pyfunction]
pub(crate) fn count_entropy(counts: PyReadonlyArray1<'_, u64>) -> PyResult<f64> {
    let values = contiguous(&counts, "counts")?;
    run(counts.py(), None, || Ok(counts::entropy(values)))
}

/// Mutual information in bits of codes `x` and `y`.
#[pyfunction]
#[pyo3(signature = (x, kx, y, ky, n_threads=None))]
pub(crate) fn mutual_information(
    x: PyReadonlyArray1<'_, u32>,
    kx: u32,
    y: PyReadonlyArray1<'_, u32>,
    ky: u32,
    n_threads: Option<usize>,
) -> PyResult<f64> {
    let (xs, ys) = (contiguous(&x, "x")?, contiguous(&y, "y")?);
    run(x.py(), n_threads, || {
        counts::mutual_information(xs, kx, ys, ky)
    })
}

/// Symmetric uncertainty of codes `x` and `y`.
#[pyfunction]
#[pyo3(signature = (x, kx, y, ky, n_threads=None))]
pub(crate) fn symmetric_uncertainty(
    x: PyReadonlyArray1<'_, u32>,
    kx: u32,
    y: PyReadonlyArray1<'_, u32>,
    ky: u32,
    n_threads: Option<usize>,
) -> PyResult<f64> {
    let (xs, ys) = (contiguous(&x, "x")?, contiguous(&y, "y")?);
    run(x.py(), n_threads, || {
        counts::symmetric_uncertainty(xs, kx, ys, ky)
    })
}
