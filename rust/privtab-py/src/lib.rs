//! `privtab._core`: thin PyO3 glue over `privtab-core`.
//!
//! Each binding does three things: extract numpy buffers and scalars while attached to the
//! interpreter (tables through [`columns::Table`]), run the core kernel through
//! [`errors::run`] (GIL released, caller's thread count, errors mapped, Ctrl-C honoured),
//! and hand the result back as a numpy array. Validation that needs Python types lives in
//! `python/privtab`; validation of values lives in the core. The files mirror the core's
//! modules.

mod anonymity;
mod clustering;
mod columns;
mod counts;
mod encode;
mod errors;
mod histogram;
mod mining;
mod noise;
mod pairwise;
mod partition;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    noise::register(m)?;
    encode::register(m)?;
    counts::register(m)?;
    partition::register(m)?;
    histogram::register(m)?;
    clustering::register(m)?;
    anonymity::register(m)?;
    mining::register(m)?;
    pairwise::register(m)?;
    Ok(())
}
