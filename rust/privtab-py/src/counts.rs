//! Bindings of `privtab_core::counts`: contingency tables, sparse counts, entropies.

use privtab_core::counts::{self, SparseCounts};

use crate::args::{run_on_int_arrays, table_kernels};
use crate::prelude::*;

const SAME_DTYPE: &str = "x and y must be 1-D integer arrays of the same dtype";

/// Dense (kx, ky) contingency table of codes `x` and `y` (1-D, same integer dtype).
#[pyfunction]
#[pyo3(signature = (x, kx, y, ky, n_threads=None))]
pub(crate) fn contingency_table(
    x: &Bound<'_, PyAny>,
    kx: u32,
    y: &Bound<'_, PyAny>,
    ky: u32,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Matrix<u64>>> {
    let table = run_on_int_arrays!(Ix1, [x, y], n_threads, SAME_DTYPE, |_, xs, ys| {
        counts::contingency_dense(xs, kx, ys, ky)
    });
    table.map(|cells| Numpy(Matrix(kx as usize, ky as usize, cells)))
}

/// Non-zero cells of the contingency table of `x` and `y`, keyed by `a * ky + b`.
#[pyfunction]
#[pyo3(signature = (x, kx, y, ky, n_threads=None))]
pub(crate) fn contingency_sparse(
    x: &Bound<'_, PyAny>,
    kx: u32,
    y: &Bound<'_, PyAny>,
    ky: u32,
    n_threads: Option<usize>,
) -> PyResult<Numpy<SparseCounts>> {
    let sparse = run_on_int_arrays!(Ix1, [x, y], n_threads, SAME_DTYPE, |_, xs, ys| {
        counts::contingency_sparse(xs, kx, ys, ky)
    });
    sparse.map(Numpy)
}

/// Sorted distinct keys and their counts.
#[pyfunction]
#[pyo3(signature = (keys, n_threads=None))]
pub(crate) fn count_keys(
    keys: PyReadonlyArray1<'_, u64>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<SparseCounts>> {
    let slice = contiguous(&keys, "keys")?;
    run(keys.py(), n_threads, || Ok(SparseCounts::from_keys(slice))).map(Numpy)
}

table_kernels! {
    /// Sparse k-way counts of the columns `subset` of a (d, n) code table.
    fn count_columns(subset: Vec<usize>) -> SparseCounts =
        |cols| counts::count_columns(cols, &subset);
}

/// Sparse k-way counts of the columns `subset` of the row-major `codes` (n × d, any
/// integer dtype), read in place and range-checked against `cardinalities`.
#[pyfunction]
#[pyo3(signature = (codes, cardinalities, subset, n_threads=None))]
pub(crate) fn count_columns_of_rows(
    codes: &Bound<'_, PyAny>,
    cardinalities: PyReadonlyArray1<'_, u32>,
    subset: Vec<usize>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<SparseCounts>> {
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let counts = run_on_int_arrays!(
        Ix2,
        [codes],
        n_threads,
        "codes must be a 2-D integer array",
        |shape: &[usize], data| {
            counts::count_columns_of_rows(data, shape[0], cards, &subset, "codes")
        }
    );
    counts.map(Numpy)
}

/// The sum of two sparse counts.
#[pyfunction]
pub(crate) fn merge_counts(
    keys_a: PyReadonlyArray1<'_, u64>,
    counts_a: PyReadonlyArray1<'_, u64>,
    keys_b: PyReadonlyArray1<'_, u64>,
    counts_b: PyReadonlyArray1<'_, u64>,
) -> PyResult<Numpy<SparseCounts>> {
    let a = (
        contiguous(&keys_a, "keys")?,
        contiguous(&counts_a, "counts")?,
    );
    let b = (
        contiguous(&keys_b, "keys")?,
        contiguous(&counts_b, "counts")?,
    );
    let parts =
        |(keys, counts): (&[u64], &[u64])| SparseCounts::from_parts(keys.to_vec(), counts.to_vec());
    run(keys_a.py(), None, || parts(a)?.merge(&parts(b)?)).map(Numpy)
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
