//! Bindings of `privtab_core::encode`: mixed-radix keys.

use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use privtab_core::encode;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::{contiguous, run};

/// Runs `$body` with `$data` bound to the slice and `$shape` to the shape of `$array` when
/// it is a 2-D array of one of the integer dtypes the core reads directly.
macro_rules! with_code_table {
    ($array:expr, |$data:ident, $shape:ident| $body:expr) => {
        with_code_table!(@each $array, |$data, $shape| $body; u32, i64, u8, u16, u64, i8, i16, i32)
    };
    (@each $array:expr, |$data:ident, $shape:ident| $body:expr; $($t:ty),*) => {{
        let mut result = None;
        $(
            if result.is_none() && let Ok(array) = $array.extract::<PyReadonlyArray2<'_, $t>>() {
                let $shape = [array.shape()[0], array.shape()[1]];
                let $data = contiguous(&array, "codes")?;
                result = Some($body);
            }
        )*
        result.unwrap_or_else(|| {
            Err(PyTypeError::new_err("codes must be a 2-D integer array"))
        })
    }};
}

/// Mixed-radix keys (first column most significant) of the column-major `columns`
/// (d × n, any integer dtype), range-checked against `cardinalities`.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, n_threads=None))]
pub(crate) fn mixed_radix_encode<'py>(
    columns: &Bound<'py, PyAny>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let keys = with_code_table!(columns, |data, shape| run(columns.py(), n_threads, || {
        encode::mixed_radix_encode_columns(data, shape[1], cards, "codes")
    }))?;
    Ok(keys.into_pyarray(columns.py()))
}

/// Mixed-radix keys of the row-major `codes` (n × d, any integer dtype), range-checked
/// against `cardinalities`.
#[pyfunction]
#[pyo3(signature = (codes, cardinalities, n_threads=None))]
pub(crate) fn mixed_radix_encode_rows<'py>(
    codes: &Bound<'py, PyAny>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let keys = with_code_table!(codes, |data, shape| run(codes.py(), n_threads, || {
        encode::mixed_radix_encode_rows(data, shape[0], cards, "codes")
    }))?;
    Ok(keys.into_pyarray(codes.py()))
}

/// Codes (n × d, uint32) of mixed-radix `keys`.
#[pyfunction]
#[pyo3(signature = (keys, cardinalities, n_threads=None))]
pub(crate) fn mixed_radix_decode<'py>(
    keys: PyReadonlyArray1<'py, u64>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let keys_slice = contiguous(&keys, "keys")?;
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let codes = run(keys.py(), n_threads, || {
        encode::mixed_radix_decode(keys_slice, cards)
    })?;
    let array = Array2::from_shape_vec((keys_slice.len(), cards.len()), codes)
        .map_err(|err| PyValueError::new_err(err.to_string()))?;
    Ok(array.into_pyarray(keys.py()))
}
