//! The one way a binding runs a kernel ([`run`]), and the mapping of core errors to the
//! exception classes Python users catch.

use std::cell::Cell;
use std::time::Duration;

use privtab_core::Error;
use privtab_core::resources::run_watched;
use pyo3::exceptions::{
    PyFileNotFoundError, PyKeyboardInterrupt, PyMemoryError, PyOSError, PyValueError,
};
use pyo3::prelude::*;

pyo3::import_exception!(privtab.exceptions, DomainError);

/// How often a waiting call looks for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

thread_local! {
    /// The thread count of the calling thread's current `privtab.threads(n)` block.
    static BLOCK_THREADS: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Sets the thread count that calls from this thread use when they are given none, and
/// returns the one it replaces (`privtab.threads`: `None` is every thread of the pool).
///
/// The setting belongs to the calling OS thread, as Python's `with privtab.threads(n):`
/// block does: other threads (a thread pool's workers, Dask's) keep their own.
///
/// # Errors
/// `ValueError` when `n_threads` is 0.
#[pyfunction]
#[pyo3(signature = (n_threads=None))]
pub(crate) fn set_block_threads(n_threads: Option<usize>) -> PyResult<Option<usize>> {
    if n_threads == Some(0) {
        return Err(PyValueError::new_err("n_threads must be >= 1, got 0"));
    }
    Ok(BLOCK_THREADS.with(|block| block.replace(n_threads)))
}

/// The number of threads a kernel called from this thread with no `n_threads` runs on
/// (the block's, else the process pool's): what `privtab.threads` promises, observed
/// through [`run`] itself.
#[pyfunction]
pub(crate) fn kernel_threads(py: Python<'_>) -> PyResult<usize> {
    run(py, None, || Ok(rayon::current_num_threads()))
}

/// A core error on its way to Python.
pub struct CoreError(pub Error);

impl From<CoreError> for PyErr {
    fn from(CoreError(err): CoreError) -> PyErr {
        let message = err.to_string();
        match err {
            Error::Domain(_) => DomainError::new_err(message),
            Error::OutputTooLarge(_) => PyMemoryError::new_err(message),
            Error::Io {
                kind: std::io::ErrorKind::NotFound,
                ..
            } => PyFileNotFoundError::new_err(message),
            Error::Io { .. } | Error::Entropy(_) => PyOSError::new_err(message),
            // Another thread's Ctrl-C stopped this call too (the flag is process-wide).
            Error::Interrupted => PyKeyboardInterrupt::new_err(message),
            _ => PyValueError::new_err(message),
        }
    }
}

/// Converts a core result (for the few bindings that are too cheap to [`run`]).
pub fn mapped<T>(result: privtab_core::Result<T>) -> PyResult<T> {
    result.map_err(|err| CoreError(err).into())
}

/// Runs a core kernel for Python: with the GIL released, on `n_threads` threads (`None`:
/// those of the calling thread's `privtab.threads` block, else every thread of the
/// process's pool), with core errors mapped, and interruptible by Ctrl-C.
///
/// The kernel runs as a job of the process's pool ([`run_watched`], built anew in a forked
/// child) while the calling thread waits, re-attaching every [`SIGNAL_POLL`] to let Python
/// run its signal handlers. When a handler raises (`KeyboardInterrupt` for Ctrl-C), the
/// kernel is asked to stop and the call raises the handler's exception once it has. Signal
/// handlers only run on Python's main thread, so calls from other threads are not
/// interrupted by Ctrl-C.
///
/// The hand-over to the pool costs a few microseconds a call (0.1 µs before), which only
/// shows in Python loops over tiny inputs.
pub fn run<T, F>(py: Python<'_>, n_threads: Option<usize>, kernel: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> privtab_core::Result<T> + Send,
{
    run_reporting(py, n_threads, kernel, |_| Ok(()))
}

/// [`run`], calling `report` after the signal handlers every [`SIGNAL_POLL`] while the
/// kernel runs (attached, so it may call Python); an error of `report` stops the kernel
/// as a signal handler's does.
pub fn run_reporting<T, F>(
    py: Python<'_>,
    n_threads: Option<usize>,
    kernel: F,
    mut report: impl FnMut(Python<'_>) -> PyResult<()> + Send,
) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> privtab_core::Result<T> + Send,
{
    let n_threads = n_threads.or_else(|| BLOCK_THREADS.with(Cell::get));
    let watch = || {
        Python::attach(|py| {
            py.check_signals()?;
            report(py)
        })
    };
    mapped(py.detach(|| run_watched(n_threads, SIGNAL_POLL, kernel, watch))?)
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
