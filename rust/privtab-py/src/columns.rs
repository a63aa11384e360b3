//! Bindings of `privtab_core::columns`: code tables in the core's column-major layout.

use privtab_core::columns;

use crate::args::run_on_int_arrays;
use crate::prelude::*;

/// The codes of a 2-D integer array as a `(d, n)` uint32 array, column after column:
/// `codes` is the `(n, d)` table itself when `row_major`, else its `(d, n)` transpose.
#[pyfunction]
#[pyo3(signature = (codes, row_major, n_threads=None))]
pub(crate) fn code_columns(
    codes: &Bound<'_, PyAny>,
    row_major: bool,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Matrix<u32>>> {
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
    converted.map(|values| Numpy(Matrix(shape.0, shape.1, values)))
}
