//! Bindings of `privtab_core::encode`: mixed-radix keys.

use privtab_core::encode;

use crate::args::run_on_int_arrays;
use crate::prelude::*;

const NOT_CODES: &str = "codes must be a 2-D integer array";

/// Mixed-radix keys (first column most significant) of the column-major `columns`
/// (d × n, any integer dtype), range-checked against `cardinalities`.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, n_threads=None))]
pub(crate) fn mixed_radix_encode(
    columns: &Bound<'_, PyAny>,
    cardinalities: PyReadonlyArray1<'_, u32>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Vec<u64>>> {
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let keys = run_on_int_arrays!(
        Ix2,
        [columns],
        n_threads,
        NOT_CODES,
        |shape: &[usize], data| {
            encode::mixed_radix_encode_columns(data, shape[1], cards, "codes")
        }
    );
    keys.map(Numpy)
}

/// Mixed-radix keys of the row-major `codes` (n × d, any integer dtype), range-checked
/// against `cardinalities`.
#[pyfunction]
#[pyo3(signature = (codes, cardinalities, n_threads=None))]
pub(crate) fn mixed_radix_encode_rows(
    codes: &Bound<'_, PyAny>,
    cardinalities: PyReadonlyArray1<'_, u32>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Vec<u64>>> {
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let keys = run_on_int_arrays!(
        Ix2,
        [codes],
        n_threads,
        NOT_CODES,
        |shape: &[usize], data| { encode::mixed_radix_encode_rows(data, shape[0], cards, "codes") }
    );
    keys.map(Numpy)
}

/// Codes (n × d, uint32) of mixed-radix `keys`.
#[pyfunction]
#[pyo3(signature = (keys, cardinalities, n_threads=None))]
pub(crate) fn mixed_radix_decode(
    keys: PyReadonlyArray1<'_, u64>,
    cardinalities: PyReadonlyArray1<'_, u32>,
    n_threads: Option<usize>,
) -> PyResult<Numpy<Matrix<u32>>> {
    let (values, cards) = (
        contiguous(&keys, "keys")?,
        contiguous(&cardinalities, "cardinalities")?,
    );
    let codes = run(keys.py(), n_threads, || {
        encode::mixed_radix_decode(values, cards)
    });
    codes.map(|codes| Numpy(Matrix(values.len(), cards.len(), codes)))
}
