//! Mapping of core errors to the exception classes of `privtab.exceptions`, and the one
//! helper that runs a kernel with the GIL released.

use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;

pyo3::import_exception!(privtab.exceptions, DomainError);

/// A core error on its way to Python.
pub struct CoreError(pub privtab_core::Error);

impl From<privtab_core::Error> for CoreError {
    fn from(err: privtab_core::Error) -> Self {
        CoreError(err)
    }
}

impl From<CoreError> for PyErr {
    fn from(err: CoreError) -> PyErr {
        use privtab_core::Error;
        let message = err.0.to_string();
        match err.0 {
            Error::Domain(_) => DomainError::new_err(message),
            Error::OutputTooLarge(_) => PyMemoryError::new_err(message),
            _ => PyValueError::new_err(message),
        }
    }
}

/// Runs `kernel` with the GIL released and converts its error.
pub fn detached<T, F>(py: Python<'_>, kernel: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> privtab_core::Result<T> + Send,
{
    py.detach(kernel).map_err(|err| CoreError(err).into())
}

/// Reads a contiguous numpy array as a slice, or explains which argument is not contiguous.
pub fn contiguous<'a, T: numpy::Element, D: numpy::ndarray::Dimension>(
    array: &'a numpy::PyReadonlyArray<'_, T, D>,
    name: &str,
) -> PyResult<&'a [T]> {
    array
        .as_slice()
        .map_err(|_| PyValueError::new_err(format!("{name} must be a C-contiguous array")))
}
