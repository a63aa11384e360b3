//! Floating-point samplers: Laplace, Gumbel and exponential.
//!
//! These are building blocks of randomised algorithms (the Gumbel-max trick, the noise of
//! objective perturbation, distribution tests), never added to a released value: a release
//! of real values goes through [`super::grid`] and one of integers through
//! [`super::discrete`], which have no floating-point side channel (Mironov 2012).

use super::{alloc_output, open01};
use crate::Result;
use crate::error::check_positive_finite;
use crate::rng::{Rng, Seed, fill_chunked};
use rand::Rng as _;
use rand_distr::{Distribution, Exp1};

/// One Laplace(0, `scale`) variate: a random sign times an exponential of mean `scale`.
///
/// `scale` must be finite and > 0 (checked by the vectorised forms).
#[inline]
pub fn laplace(rng: &mut Rng, scale: f64) -> f64 {
    let magnitude: f64 = Exp1.sample(rng);
    let sign = if rng.next_u32() & 1 == 0 { 1.0 } else { -1.0 };
    sign * scale * magnitude
}

/// One standard Gumbel(0, 1) variate, `-ln(-ln U)` with `U` uniform in (0, 1).
///
/// Always finite: `U` has 53 random bits and stays away from 0 and 1.
#[inline]
pub fn gumbel(rng: &mut Rng) -> f64 {
    -(-open01(rng).ln()).ln()
}

/// One exponential variate of mean `mean` (rate `1 / mean`).
#[inline]
pub fn exponential(rng: &mut Rng, mean: f64) -> f64 {
    let unit: f64 = Exp1.sample(rng);
    mean * unit
}

/// `n` Laplace(0, `scale`) variates, in parallel (same output for any thread count).
///
/// # Errors
/// [`Error::InvalidParameter`](crate::Error::InvalidParameter) when `scale` is not finite and > 0;
/// [`Error::OutputTooLarge`](crate::Error::OutputTooLarge) when `n` values cannot be allocated.
pub fn laplace_samples(n: usize, scale: f64, seed: &Seed) -> Result<Vec<f64>> {
    check_positive_finite("scale", scale)?;
    let mut out = alloc_output(n, "laplace samples")?;
    fill_chunked(&mut out, seed, |rng, _| laplace(rng, scale))?;
    Ok(out)
}

/// `n` standard Gumbel variates, in parallel.
///
/// # Errors
/// [`Error::OutputTooLarge`](crate::Error::OutputTooLarge) when `n` values cannot be allocated.
pub fn gumbel_samples(n: usize, seed: &Seed) -> Result<Vec<f64>> {
    let mut out = alloc_output(n, "gumbel samples")?;
    fill_chunked(&mut out, seed, |rng, _| gumbel(rng))?;
    Ok(out)
}

/// `n` exponential variates of mean `mean`, in parallel.
///
/// # Errors
/// [`Error::InvalidParameter`](crate::Error::InvalidParameter) when `mean` is not finite and > 0;
/// [`Error::OutputTooLarge`](crate::Error::OutputTooLarge) when `n` values cannot be allocated.
pub fn exponential_samples(n: usize, mean: f64, seed: &Seed) -> Result<Vec<f64>> {
    check_positive_finite("mean", mean)?;
    let mut out = alloc_output(n, "exponential samples")?;
    fill_chunked(&mut out, seed, |rng, _| exponential(rng, mean))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::test_util::{in_pool, moments, seed};
    use crate::rng::CHUNK;

    #[test]
    fn moments_match() {
        let lap = laplace_samples(400_000, 2.0, &seed(1)).unwrap();
        let (mean, var) = moments(lap.iter().copied());
        assert!(mean.abs() < 0.03, "{mean}");
        assert!((var / 8.0 - 1.0).abs() < 0.03, "{var}");

        let gum = gumbel_samples(400_000, &seed(2)).unwrap();
        let (mean, var) = moments(gum.iter().copied());
        let euler = 0.577_215_664_901_532_9;
        assert!((mean - euler).abs() < 0.01, "{mean}");
        let pi2_6 = std::f64::consts::PI.powi(2) / 6.0;
        assert!((var / pi2_6 - 1.0).abs() < 0.02, "{var}");

        let exp = exponential_samples(400_000, 3.0, &seed(3)).unwrap();
        let (mean, var) = moments(exp.iter().copied());
        assert!((mean / 3.0 - 1.0).abs() < 0.01, "{mean}");
        assert!((var / 9.0 - 1.0).abs() < 0.03, "{var}");
    }

    #[test]
    fn deterministic_and_thread_independent() {
        let n = 2 * CHUNK + 3;
        let one = in_pool(1, || laplace_samples(n, 1.0, &seed(9)).unwrap());
        let two = in_pool(2, || laplace_samples(n, 1.0, &seed(9)).unwrap());
        assert_eq!(one, two);
        assert_ne!(one, laplace_samples(n, 1.0, &seed(10)).unwrap());
        let g1 = in_pool(1, || gumbel_samples(n, &seed(5)).unwrap());
        assert_eq!(g1, in_pool(2, || gumbel_samples(n, &seed(5)).unwrap()));
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(laplace_samples(3, 0.0, &seed(0)).is_err());
        assert!(laplace_samples(3, f64::NAN, &seed(0)).is_err());
        assert!(exponential_samples(3, f64::INFINITY, &seed(0)).is_err());
    }
}
