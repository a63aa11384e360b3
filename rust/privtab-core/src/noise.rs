//! Noise samplers and differentially private mechanisms.
//!
//! Every sampler has a scalar form taking `&mut` [`Rng`] and, where a mechanism needs many
//! values, a vectorised form built on [`rng::fill_chunked`] / [`rng::try_fill_chunked`]: a
//! given [`Seed`] gives the same output whatever the number of threads.
//!
//! - [`grid`]: the floating-point-safe Laplace mechanism for real values: exact discrete
//!   Laplace noise on a power-of-two grid (the construction of OpenDP).
//! - [`continuous`]: Laplace, Gumbel and exponential variates (floating point), for
//!   randomised algorithms and tests, never for adding to a released value.
//! - [`discrete`]: the exact discrete Laplace distribution and its tails, sampled with
//!   integer arithmetic only (Canonne, Kamath & Steinke 2020).
//! - [`binomial`](mod@binomial): binomial variates for any `n < 2^64` and any `p`, including tiny `p`.
//! - [`distinct`]: `k` distinct uniform values from `[0, range)`, `range ≤ 2^64`.
//! - [`selection`]: the exponential mechanism by the Gumbel-max trick on log-weights.
//! - [`l2_laplace`](mod@l2_laplace): Gamma variates and vectors with density ∝ `exp(-‖b‖₂ / scale)` (the noise of
//!   Chaudhuri et al.'s output and objective perturbation).
//!
//! Every release goes through [`discrete`] (integers) or [`grid`] (reals): textbook
//! floating-point Laplace noise leaks the secret through the pattern of representable
//! doubles (Mironov 2012).
//!
//! [`rng::fill_chunked`]: crate::rng::fill_chunked
//! [`rng::try_fill_chunked`]: crate::rng::try_fill_chunked
//! [`Rng`]: crate::rng::Rng
//! [`Seed`]: crate::rng::Seed

pub mod binomial;
mod blocks;
pub mod continuous;
pub mod discrete;
pub mod distinct;
pub mod grid;
pub mod l2_laplace;
pub mod selection;

pub use binomial::{Binomial, binomial, binomial_samples};
pub use continuous::{
    exponential, exponential_samples, gumbel, gumbel_samples, laplace, laplace_samples,
};
pub use discrete::{
    Above, DiscreteLaplace, Rational, add_discrete_laplace, discrete_laplace_samples,
    discrete_laplace_tail_samples,
};
pub use distinct::{FULL_RANGE, sample_distinct};
pub use grid::{GridLaplace, add_laplace, grid_laplace_samples};
pub use l2_laplace::{gamma, gamma_samples, l2_laplace, l2_laplace_samples};
pub use selection::exponential_mechanism;

pub(crate) use crate::resources::alloc_output;

use crate::rng::Rng;
use rand::Rng as _;

/// A uniform integer in `[0, bound)` for `bound ≥ 1`, without bias (Lemire 2019, with the
/// rejection step that `rand`'s single-sample method leaves out).
#[inline]
pub(crate) fn below_u64(rng: &mut Rng, bound: u64) -> u64 {
    debug_assert!(bound > 0);
    let mut product = u128::from(rng.next_u64()) * u128::from(bound);
    let mut low = product as u64;
    if low < bound {
        let threshold = bound.wrapping_neg() % bound;
        while low < threshold {
            product = u128::from(rng.next_u64()) * u128::from(bound);
            low = product as u64;
        }
    }
    (product >> 64) as u64
}

/// A uniform integer in `[0, bound)` for any `bound ≥ 1`, without bias.
#[inline]
pub(crate) fn below_u128(rng: &mut Rng, bound: u128) -> u128 {
    debug_assert!(bound > 0);
    if let Ok(small) = u64::try_from(bound) {
        return u128::from(below_u64(rng, small));
    }
    // Rejection from the smallest power of two covering `bound`: fewer than 2 draws on
    // average, and no 256-bit multiplication.
    let mask = u128::MAX >> (bound - 1).leading_zeros();
    loop {
        let draw = ((u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())) & mask;
        if draw < bound {
            return draw;
        }
    }
}

/// A uniform double in the open interval (0, 1): 53 random bits, offset by half a step.
#[inline]
pub(crate) fn open01(rng: &mut Rng) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
pub(crate) mod test_util {
    use crate::rng::Seed;

    /// Runs `f` on a local pool of `threads` threads.
    pub fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool")
            .install(f)
    }

    /// Mean and (unbiased) variance.
    pub fn moments(values: impl Iterator<Item = f64>) -> (f64, f64) {
        let data: Vec<f64> = values.collect();
        let n = data.len() as f64;
        let mean = data.iter().sum::<f64>() / n;
        let var = data.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var)
    }

    pub fn seed(value: u64) -> Seed {
        Seed::from_u64(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Seed;

    #[test]
    fn bounded_integers_are_in_range_and_roughly_uniform() {
        let mut rng = Seed::from_u64(3).stream(0);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[below_u64(&mut rng, 7) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
        let big = (1u128 << 100) + 12345;
        for _ in 0..1000 {
            assert!(below_u128(&mut rng, big) < big);
            let x = open01(&mut rng);
            assert!(x > 0.0 && x < 1.0);
        }
        assert_eq!(below_u64(&mut rng, 1), 0);
    }
}
