//! Bindings of `privtab_core::noise`: raw samplers (for distribution tests and advanced
//! users) and the vectorised mechanisms behind `privtab.mechanisms`.
//!
//! Every function takes `seed` (`None` = operating-system entropy) and, where it runs in
//! parallel, `n_threads` (`None` = the process's whole pool); the output never depends on
//! `n_threads`.

use privtab_core::noise;

use crate::prelude::*;

/// Binds kernels `noise::NAME([array,] args…, &Seed) -> Result<OUT>` as
/// `NAME([array,] args…, seed=None, n_threads=None)`; the array (1-D, contiguous) is passed
/// as a slice.
macro_rules! seeded {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($([$array:ident: $element:ty],)? $($arg:ident: $ty:ty $(= $default:tt)?),*)
            -> $out:ty;
    )*) => {$(
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = ($($array,)? $($arg $(= $default)?,)* seed=None, n_threads=None))]
        pub(crate) fn $name(
            py: Python<'_>,
            $($array: PyReadonlyArray1<'_, $element>,)?
            $($arg: $ty,)*
            seed: Option<u64>,
            n_threads: Option<usize>,
        ) -> PyResult<Numpy<$out>> {
            $(let $array = contiguous(&$array, stringify!($array))?;)?
            run(py, n_threads, || noise::$name($($array,)? $($arg,)* &Seed::new(seed)?)).map(Numpy)
        }
    )*};
}

seeded! {
    /// `n` Laplace(0, scale) variates.
    fn laplace_samples(n: usize, scale: f64) -> Vec<f64>;
    /// `n` standard Gumbel variates.
    fn gumbel_samples(n: usize) -> Vec<f64>;
    /// `n` exponential variates of mean `mean`.
    fn exponential_samples(n: usize, mean: f64) -> Vec<f64>;
    /// `size` Binomial(`n`, `p`) variates, for any `n < 2**64`.
    fn binomial_samples(size: usize, n: u64, p: f64) -> Vec<u64>;
    /// `n` noise values of the floating-point-safe Laplace mechanism (distribution tests).
    fn grid_laplace_samples(n: usize, sensitivity: f64, epsilon: f64, changed: u64 = 1)
        -> Vec<f64>;
    /// `n` Gamma(`shape`, `scale`) variates (Marsaglia–Tsang).
    fn gamma_samples(n: usize, shape: f64, scale: f64) -> Vec<f64>;
    /// `n` discrete Laplace variates of scale `sensitivity / epsilon` (exact, integer only).
    fn discrete_laplace_samples(n: usize, sensitivity: f64, epsilon: f64) -> Vec<i64>;
    /// `n` variates of a discrete Laplace `Z` conditioned on `Z > threshold`.
    fn discrete_laplace_tail_samples(n: usize, sensitivity: f64, epsilon: f64, threshold: i64)
        -> Vec<i64>;
    /// The floating-point-safe Laplace mechanism (`noise::grid`): every value rounded to the
    /// grid, exact discrete Laplace noise of scale `sensitivity / epsilon` in grid units.
    fn add_laplace([values: f64], sensitivity: f64, epsilon: f64) -> Vec<f64>;
    /// `values + DLap(sensitivity / epsilon)` elementwise, saturating at the int64 bounds.
    fn add_discrete_laplace([values: i64], sensitivity: f64, epsilon: f64) -> Vec<i64>;
    /// `size` indices (int64) drawn ∝ `exp(log_weights)` by Gumbel-max (see the core docs).
    fn exponential_mechanism([log_weights: f64], size: usize, replace: bool) -> Vec<usize>;
}

/// The exact scale `sensitivity / epsilon` as a reduced fraction `(num, den)`.
#[pyfunction]
pub(crate) fn discrete_laplace_scale(sensitivity: f64, epsilon: f64) -> PyResult<(u128, u128)> {
    let scale = mapped(noise::Rational::from_ratio(sensitivity, epsilon))?;
    Ok((scale.num, scale.den))
}

/// A sorted uniform `k`-subset of `[0, range)`, `range ≤ 2**64`.
#[pyfunction]
#[pyo3(signature = (range, k, seed=None))]
pub(crate) fn sample_distinct(
    py: Python<'_>,
    range: u128,
    k: usize,
    seed: Option<u64>,
) -> PyResult<Numpy<Vec<u64>>> {
    let mut rng = mapped(Seed::new(seed))?.stream(0);
    run(py, None, || noise::sample_distinct(&mut rng, range, k)).map(Numpy)
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
) -> PyResult<Numpy<Matrix<f64>>> {
    let samples = run(py, n_threads, || {
        noise::l2_laplace_samples(n, d, scale, &Seed::new(seed)?)
    });
    samples.map(|rows| Numpy(Matrix(n, d, rows)))
}
