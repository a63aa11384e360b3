//! Bindings of `privtab_core::encode`: mixed-radix keys.

use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use privtab_core::encode;
use privtab_core::resources::with_threads;
use privtab_core::table::Columns;
use pyo3::prelude::*;

use crate::errors::{contiguous, detached};

/// Reads a `(d, n)` array of column-major codes and its cardinalities as a core table view.
pub(crate) fn columns_view<'a>(
    columns: &'a PyReadonlyArray2<'_, u32>,
    cardinalities: &'a PyReadonlyArray1<'_, u32>,
) -> PyResult<(&'a [u32], usize, &'a [u32])> {
    let n_rows = columns.shape()[1];
    Ok((
        contiguous(columns, "columns")?,
        n_rows,
        contiguous(cardinalities, "cardinalities")?,
    ))
}

/// Mixed-radix keys (first column most significant) of `columns` (d × n, uint32).
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, n_threads=None))]
fn mixed_radix_encode<'py>(
    py: Python<'py>,
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let (data, n_rows, cards) = columns_view(&columns, &cardinalities)?;
    let keys = detached(py, || {
        with_threads(n_threads, || {
            encode::mixed_radix_encode(Columns::new(data, n_rows, cards)?)
        })
    })?;
    Ok(keys.into_pyarray(py))
}

/// Codes (n × d, uint32) of mixed-radix `keys`.
#[pyfunction]
#[pyo3(signature = (keys, cardinalities, n_threads=None))]
fn mixed_radix_decode<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray1<'py, u64>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let keys_slice = contiguous(&keys, "keys")?;
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let codes = detached(py, || {
        with_threads(n_threads, || encode::mixed_radix_decode(keys_slice, cards))
    })?;
    let shape = (keys_slice.len(), cards.len());
    let array = Array2::from_shape_vec(shape, codes)
        .map_err(|err| pyo3::exceptions::PyValueError::new_err(err.to_string()))?;
    Ok(array.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mixed_radix_encode, m)?)?;
    m.add_function(wrap_pyfunction!(mixed_radix_decode, m)?)?;
    Ok(())
}
