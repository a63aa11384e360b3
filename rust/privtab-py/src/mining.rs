//! Bindings of `privtab_core::mining`: the FIMI reader and the maximal-set miners.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use privtab_core::mining::{self, Limits, MaximalSets, Progress, Rows, Transactions};

use crate::errors::run_reporting;

use crate::prelude::*;

/// (indptr, indices, item_ids) of a FIMI transaction file: one column per distinct item,
/// `item_ids[j]` the id of column `j`.
#[pyfunction]
pub(crate) fn read_transactions(py: Python<'_>, path: PathBuf) -> PyResult<Numpy<Transactions>> {
    run(py, None, || mining::read_transactions(&path)).map(Numpy)
}

/// How often a search's progress goes to its `progress` callback.
const PROGRESS_PERIOD: Duration = Duration::from_millis(500);

/// Maximal sets of a CSR binary matrix: "frequency" (threshold = min support) or
/// "containment" (threshold = k); returns (offsets, items, measures, complete).
///
/// While the search runs, `progress(seconds, found, branches_done, branches)` is called
/// every half second from the calling thread; an exception it raises stops the search and
/// is raised.
#[pyfunction]
#[pyo3(signature = (indptr, indices, n_items, predicate, threshold, max_sets=None, time_limit=None, n_threads=None, progress=None))]
pub(crate) fn maximal_sets(
    indptr: PyReadonlyArray1<'_, i64>,
    indices: PyReadonlyArray1<'_, u32>,
    n_items: usize,
    predicate: &str,
    threshold: u64,
    max_sets: Option<usize>,
    time_limit: Option<f64>,
    n_threads: Option<usize>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Numpy<MaximalSets>> {
    let (rows, items) = (
        contiguous(&indptr, "indptr")?,
        contiguous(&indices, "indices")?,
    );
    let limits = mapped(Limits::new(max_sets, time_limit))?;
    let predicate = mapped(predicate.parse())?;
    let state = Progress::new();
    let start = Instant::now();
    let mut next_report = start + PROGRESS_PERIOD;
    let report = |py: Python<'_>| {
        let now = Instant::now();
        match &progress {
            Some(callback) if now >= next_report => {
                next_report = now + PROGRESS_PERIOD;
                let (done, branches) = state.branches();
                let elapsed = (now - start).as_secs_f64();
                callback.call1(py, (elapsed, state.found(), done, branches))?;
                Ok(())
            }
            _ => Ok(()),
        }
    };
    let found = run_reporting(
        indptr.py(),
        n_threads,
        || {
            let rows = Rows::new(rows, items, n_items)?;
            mining::maximal_sets_of(predicate, rows, threshold, limits, &state)
        },
        report,
    );
    found.map(Numpy)
}
