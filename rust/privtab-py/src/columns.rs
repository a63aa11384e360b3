//! Bindings of `privtab_core::columns`: code tables in the core's column-major layout.

use privtab_core::columns;

use crate::args::run_on_int_arrays;
use crate::prelude::*;

/// The core's `(d, n)` uint32 columns and the largest code of each.
type ColumnsAndMaxima = (Numpy<Matrix<u32>>, Numpy<Vec<u32>>);

/// The codes of a 2-D integer array as a `(d, n)` uint32 array, column after column:
/// `codes` is the `(n, d)` table itself when `row_major`, else its `(d, n)` transpose.
/// Returns the columns and the largest code of each (read in the same pass).
#[pyfunction]
#[pyo3(signature = (codes, row_major, n_threads=None))]
pub(crate) fn code_columns(
    codes: &Bound<'_, PyAny>,
    row_major: bool,
    n_threads: Option<usize>,
) -> PyResult<ColumnsAndMaxima> {
    let mut shape = (0, 0);
    let converted = run_on_int_arrays!(
        Ix2,
        [codes],
        n_threads,
        "codes must be a 2-D integer array",
        |dims: &[usize], data| {
            let (n_rows, n_cols) = if row_major {
                (dims[0], dims[1])
            } else {
                (dims[1], dims[0])
            };
            shape = (n_cols, n_rows);
            columns::code_columns(data, n_rows, n_cols, row_major)
        }
    );
    converted.map(|(values, highest)| (Numpy(Matrix(shape.0, shape.1, values)), Numpy(highest)))
}

/// The largest code of every column of a `(d, n)` uint32 array in the core's layout.
#[pyfunction]
#[pyo3(signature = (columns, n_threads=None))]
pub(crate) fn column_maxima(
    columns: PyReadonlyArray2<'_, u32>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Vec<u32>>> {
    let (n_cols, n_rows) = (columns.shape()[0], columns.shape()[1]);
    let data = contiguous(&columns, "columns")?;
    run(columns.py(), n_threads, || {
        columns::column_maxima(data, n_rows, n_cols)
    })
    .map(Numpy)
}
