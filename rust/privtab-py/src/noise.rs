//! Bindings of `privtab_core::noise`: raw samplers (for distribution tests and advanced
//! users) and the vectorised mechanisms behind `privtab.mechanisms`.
//!
//! Every function takes `seed` (`None` = operating-system entropy) and, where it runs in
//! parallel, `n_threads` (`None` = the global pool); the output never depends on
//! `n_threads`.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use privtab_core::noise;
use privtab_core::rng::Seed;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{contiguous, mapped, run};

/// Binds samplers `noise::NAME(args…, &Seed) -> Result<Vec<T>>` as
/// `NAME(args…, seed=None, n_threads=None)` returning a 1-D array of `T`.
macro_rules! samplers {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty $(= $default:tt)?),*) -> $out:ty;)*) => {$(
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = ($($arg $(= $default)?,)* seed=None, n_threads=None))]
        pub(crate) fn $name(
            py: Python<'_>,
            $($arg: $ty,)*
            seed: Option<u64>,
            n_threads: Option<usize>,
        ) -> PyResult<Bound<'_, PyArray1<$out>>> {
            let out = run(py, n_threads, || noise::$name($($arg,)* &Seed::new(seed)))?;
            Ok(out.into_pyarray(py))
        }
    )*};
}

samplers! {
    /// `n` Laplace(0, scale) variates.
    fn laplace_samples(n: usize, scale: f64) -> f64;
    /// `n` standard Gumbel variates.
    fn gumbel_samples(n: usize) -> f64;
    /// `n` exponential variates of mean `mean`.
    fn exponential_samples(n: usize, mean: f64) -> f64;
    /// `size` Binomial(`n`, `p`) variates, for any `n < 2**64`.
    fn binomial_samples(size: usize, n: u64, p: f64) -> u64;
    /// `n` noise values of the floating-point-safe Laplace mechanism (distribution tests).
    fn grid_laplace_samples(n: usize, sensitivity: f64, epsilon: f64, changed: u64 = 1) -> f64;
    /// `n` Gamma(`shape`, `scale`) variates (Marsaglia–Tsang).
    fn gamma_samples(n: usize, shape: f64, scale: f64) -> f64;
}

/// The exact scale `sensitivity / epsilon` as a reduced fraction `(num, den)`.
#[pyfunction]
pub(crate) fn discrete_laplace_scale(sensitivity: f64, epsilon: f64) -> PyResult<(u128, u128)> {
    let scale = mapped(noise::Rational::from_ratio(sensitivity, epsilon))?;
    Ok((scale.num, scale.den))
}

/// `n` discrete Laplace variates of scale `sensitivity / epsilon` (exact, integer only).
#[pyfunction]
#[pyo3(signature = (n, sensitivity, epsilon, seed=None, n_threads=None))]
pub(crate) fn discrete_laplace_samples(
    py: Python<'_>,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'_, PyArray1<i64>>> {
    let dist = mapped(noise::DiscreteLaplace::new(sensitivity, epsilon))?;
    let out = run(py, n_threads, || dist.samples(n, &Seed::new(seed)))?;
    Ok(out.into_pyarray(py))
}

/// `n` variates of a discrete Laplace `Z` conditioned on `Z > threshold`.
#[pyfunction]
#[pyo3(signature = (n, sensitivity, epsilon, threshold, seed=None, n_threads=None))]
pub(crate) fn discrete_laplace_tail_samples(
    py: Python<'_>,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    threshold: i64,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'_, PyArray1<i64>>> {
    let dist = mapped(noise::DiscreteLaplace::new(sensitivity, epsilon))?;
    let out = run(py, n_threads, || {
        dist.tail_samples(n, threshold, &Seed::new(seed))
    })?;
    Ok(out.into_pyarray(py))
}

/// A sorted uniform `k`-subset of `[0, range)`, `range ≤ 2**64`.
#[pyfunction]
#[pyo3(signature = (range, k, seed=None))]
pub(crate) fn sample_distinct(
    py: Python<'_>,
    range: u128,
    k: usize,
    seed: Option<u64>,
) -> PyResult<Bound<'_, PyArray1<u64>>> {
    let out = run(py, None, || {
        noise::sample_distinct(&mut Seed::new(seed).stream(0), range, k)
    })?;
    Ok(out.into_pyarray(py))
}

/// The floating-point-safe Laplace mechanism (`noise::grid`): every value rounded to the
/// grid, exact discrete Laplace noise of scale `sensitivity / epsilon` in grid units.
#[pyfunction]
#[pyo3(signature = (values, sensitivity, epsilon, seed=None, n_threads=None))]
pub(crate) fn add_laplace<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
    sensitivity: f64,
    epsilon: f64,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let values = contiguous(&values, "values")?;
    let out = run(py, n_threads, || {
        noise::add_laplace(values, sensitivity, epsilon, &Seed::new(seed))
    })?;
    Ok(out.into_pyarray(py))
}

/// The grid of the floating-point-safe Laplace mechanism for a query of L1 sensitivity
/// `sensitivity` changing at most `changed` coordinates: `(k, t)`, the grid step `2**k`
/// and the integer noise scale `t` in grid units.
#[pyfunction]
#[pyo3(signature = (sensitivity, epsilon, changed=1))]
pub(crate) fn laplace_grid(sensitivity: f64, epsilon: f64, changed: u64) -> PyResult<(i32, u64)> {
    let mechanism = mapped(noise::GridLaplace::new(sensitivity, epsilon, changed))?;
    Ok((mechanism.grid_exponent(), mechanism.unit_scale()))
}

/// `values + DLap(sensitivity / epsilon)` elementwise, with checked int64 overflow.
#[pyfunction]
#[pyo3(signature = (values, sensitivity, epsilon, seed=None, n_threads=None))]
pub(crate) fn add_discrete_laplace<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, i64>,
    sensitivity: f64,
    epsilon: f64,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let values = contiguous(&values, "values")?;
    let out = run(py, n_threads, || {
        noise::add_discrete_laplace(values, sensitivity, epsilon, &Seed::new(seed))
    })?;
    Ok(out.into_pyarray(py))
}

/// `size` indices drawn ∝ `exp(log_weights)` by Gumbel-max (see the core docs).
#[pyfunction]
#[pyo3(signature = (log_weights, size, replace, seed=None, n_threads=None))]
pub(crate) fn exponential_mechanism<'py>(
    log_weights: PyReadonlyArray1<'py, f64>,
    size: usize,
    replace: bool,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let (py, weights) = (log_weights.py(), contiguous(&log_weights, "log_weights")?);
    let chosen = run(py, n_threads, || {
        noise::exponential_mechanism(weights, size, replace, &Seed::new(seed))
    })?;
    // Indices are below the length of a numpy array, hence below 2^63.
    let out: Vec<i64> = chosen.into_iter().map(|i| i as i64).collect();
    Ok(out.into_pyarray(py))
}

/// An `(n, d)` array whose rows have density ∝ `exp(-‖b‖₂ / scale)`: the noise of
/// Chaudhuri et al.'s output and objective perturbation.
#[pyfunction]
#[pyo3(signature = (n, d, scale, seed=None, n_threads=None))]
pub(crate) fn l2_laplace_samples(
    py: Python<'_>,
    n: usize,
    d: usize,
    scale: f64,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'_, PyArray2<f64>>> {
    let out = run(py, n_threads, || {
        noise::l2_laplace_samples(n, d, scale, &Seed::new(seed))
    })?;
    let rows = Array2::from_shape_vec((n, d), out)
        .map_err(|err| PyValueError::new_err(format!("l2 laplace samples: {err}")))?;
    Ok(rows.into_pyarray(py))
}
