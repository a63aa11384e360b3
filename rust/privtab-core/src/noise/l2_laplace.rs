//! The "L2 Laplace" vector of the objective- and output-perturbation mechanisms of
//! Chaudhuri, Monteleoni & Sarwate (2011): a vector `b` in R^d with density proportional to
//! `exp(-‖b‖₂ / scale)`.
//!
//! In polar coordinates that density factors into a norm with density ∝ `r^(d-1) e^(-r/scale)`
//! — a Gamma(d, scale) variate — and an independent direction uniform on the unit sphere,
//! drawn as normalised standard normals (Muller 1959). The Gamma variate comes from the
//! Marsaglia–Tsang (2000) squeeze-rejection method, which is exact up to the floating-point
//! evaluation of its acceptance test.

use super::{alloc_output, open01};
use crate::error::check_positive_finite;
use crate::rng::{CHUNK, Rng, Seed};
use crate::{Error, Result};
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;

/// One Gamma(`shape`, `scale`) variate (mean `shape · scale`) by Marsaglia & Tsang (2000).
///
/// For `shape < 1` it uses the boost `Gamma(shape) = Gamma(shape + 1) · U^(1/shape)`.
/// Arguments must be finite and > 0 (checked by [`gamma_samples`]).
pub fn gamma(rng: &mut Rng, shape: f64, scale: f64) -> f64 {
    if shape < 1.0 {
        let boost = open01(rng).powf(1.0 / shape);
        return gamma(rng, shape + 1.0, scale) * boost;
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let z: f64 = StandardNormal.sample(rng);
        let t = 1.0 + c * z;
        if t <= 0.0 {
            continue;
        }
        let v = t * t * t;
        let u = open01(rng);
        let z2 = z * z;
        // The squeeze accepts ~98 % of proposals without evaluating a logarithm.
        if u < 1.0 - 0.0331 * z2 * z2 || u.ln() < 0.5 * z2 + d * (1.0 - v + v.ln()) {
            return d * v * scale;
        }
    }
}

/// Fills `out` with a vector of density ∝ `exp(-‖b‖₂ / scale)` (see the module docs).
///
/// `scale` must be finite and > 0 and `out` non-empty (checked by [`l2_laplace_samples`]).
pub fn l2_laplace(rng: &mut Rng, scale: f64, out: &mut [f64]) {
    let norm = gamma(rng, out.len() as f64, scale);
    loop {
        let mut squares = 0.0;
        for slot in out.iter_mut() {
            let z: f64 = StandardNormal.sample(rng);
            *slot = z;
            squares += z * z;
        }
        // An all-zero draw has probability zero but would have no direction.
        if squares > 0.0 {
            let factor = norm / squares.sqrt();
            out.iter_mut().for_each(|slot| *slot *= factor);
            return;
        }
    }
}

/// `n` Gamma(`shape`, `scale`) variates, in parallel (same output for any thread count).
///
/// # Errors
/// [`Error::InvalidParameter`] when `shape` or `scale` is not finite and > 0;
/// [`Error::OutputTooLarge`] when `n` values cannot be allocated.
pub fn gamma_samples(n: usize, shape: f64, scale: f64, seed: &Seed) -> Result<Vec<f64>> {
    check_positive_finite("shape", shape)?;
    check_positive_finite("scale", scale)?;
    let mut out = alloc_output(n, "gamma samples")?;
    crate::rng::fill_chunked(&mut out, seed, |rng, _| gamma(rng, shape, scale))?;
    Ok(out)
}

/// `n` independent vectors of dimension `d`, each with density ∝ `exp(-‖b‖₂ / scale)`,
/// returned row-major (`n × d`).
///
/// Rows are generated in chunks of `max(1, CHUNK / d)` rows, chunk `i` from stream `i` of
/// `seed`, so the output depends only on `seed`, `n`, `d` and `scale`, never on the number
/// of threads. Row `0` is the same for every `n`.
///
/// # Privacy
/// Adding one such vector with `scale = Δ₂ / ε` to a vector-valued query of L2 sensitivity
/// `Δ₂` is ε-differentially private (Chaudhuri, Monteleoni & Sarwate 2011, Theorem 6):
/// the density ratio at any point is at most `exp(Δ₂ / scale)`. The same vector with
/// `scale = 2 / ε'` is the linear term of their objective perturbation (Algorithm 2).
///
/// # Errors
/// [`Error::InvalidParameter`] when `d` is 0 or `scale` is not finite and > 0;
/// [`Error::OutputTooLarge`] when `n · d` values cannot be allocated.
pub fn l2_laplace_samples(n: usize, d: usize, scale: f64, seed: &Seed) -> Result<Vec<f64>> {
    if d == 0 {
        return Err(Error::parameter("d", d, "must be >= 1"));
    }
    check_positive_finite("scale", scale)?;
    let len = n.checked_mul(d).ok_or_else(|| {
        Error::OutputTooLarge(format!("l2 laplace samples: {n} × {d} values overflow"))
    })?;
    let mut out = alloc_output(len, "l2 laplace samples")?;
    let rows_per_chunk = (CHUNK / d).max(1);
    out.par_chunks_mut(rows_per_chunk * d)
        .enumerate()
        .for_each(|(chunk_index, chunk)| {
            let mut rng = seed.stream(chunk_index as u64);
            for row in chunk.chunks_exact_mut(d) {
                l2_laplace(&mut rng, scale, row);
            }
        });
    if out.iter().any(|x| !x.is_finite()) {
        return Err(Error::parameter(
            "scale",
            scale,
            "is too large: the noise vector overflows",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::test_util::{in_pool, moments, seed};

    #[test]
    fn gamma_moments_match() {
        for &(shape, scale) in &[
            (0.3, 2.0),
            (1.0, 1.0),
            (2.0, 0.5),
            (7.0, 3.0),
            (250.0, 0.01),
        ] {
            let draws = gamma_samples(200_000, shape, scale, &seed(1)).unwrap();
            assert!(draws.iter().all(|&x| x > 0.0 && x.is_finite()));
            let (mean, var) = moments(draws.iter().copied());
            let (m, v) = (shape * scale, shape * scale * scale);
            // Five standard errors of the mean and (roughly) of the variance.
            let se_mean = (v / 200_000.0).sqrt();
            assert!(
                (mean - m).abs() < 5.0 * se_mean,
                "{shape} {scale}: {mean} vs {m}"
            );
            let kurt = 6.0 / shape + 2.0;
            let se_var = v * (kurt / 200_000.0).sqrt();
            assert!(
                (var - v).abs() < 5.0 * se_var,
                "{shape} {scale}: {var} vs {v}"
            );
        }
    }

    #[test]
    fn gamma_cdf_at_the_median_of_an_exponential() {
        // Gamma(1, s) is Exponential(s): P(X ≤ s ln 2) = 1/2 exactly.
        let draws = gamma_samples(100_000, 1.0, 4.0, &seed(2)).unwrap();
        let below = draws.iter().filter(|&&x| x <= 4.0 * 2f64.ln()).count() as f64;
        // Binomial(1e5, 1/2): standard deviation ≈ 158.
        assert!((below - 50_000.0).abs() < 5.0 * 158.2, "{below}");
    }

    #[test]
    fn vectors_have_gamma_norms_and_isotropic_directions() {
        let (n, d, scale) = (50_000, 3, 0.7);
        let rows = l2_laplace_samples(n, d, scale, &seed(3)).unwrap();
        let norms: Vec<f64> = rows
            .chunks_exact(d)
            .map(|r| r.iter().map(|x| x * x).sum::<f64>().sqrt())
            .collect();
        let (mean, var) = moments(norms.iter().copied());
        let (m, v) = (d as f64 * scale, d as f64 * scale * scale);
        assert!(
            (mean - m).abs() < 5.0 * (v / n as f64).sqrt(),
            "{mean} vs {m}"
        );
        assert!((var / v - 1.0).abs() < 0.05, "{var} vs {v}");
        // Each coordinate of a uniform direction has mean 0 and E[u_j²] = 1/d.
        for j in 0..d {
            let (mean_u, _) = moments(
                rows.chunks_exact(d)
                    .zip(&norms)
                    .map(|(r, &norm)| r[j] / norm),
            );
            assert!(mean_u.abs() < 5.0 * (1.0 / (d as f64 * n as f64)).sqrt());
            let (sq, _) = moments(
                rows.chunks_exact(d)
                    .zip(&norms)
                    .map(|(r, &norm)| (r[j] / norm).powi(2)),
            );
            assert!((sq * d as f64 - 1.0).abs() < 0.03, "{sq}");
        }
    }

    #[test]
    fn deterministic_and_thread_independent() {
        let (n, d) = (3 * CHUNK / 5 + 7, 5);
        let one = in_pool(1, || l2_laplace_samples(n, d, 1.0, &seed(9)).unwrap());
        let two = in_pool(2, || l2_laplace_samples(n, d, 1.0, &seed(9)).unwrap());
        assert_eq!(one, two);
        assert_ne!(one, l2_laplace_samples(n, d, 1.0, &seed(10)).unwrap());
        let single = l2_laplace_samples(1, d, 1.0, &seed(9)).unwrap();
        assert_eq!(single[..], one[..d]);
        let wide = l2_laplace_samples(3, CHUNK + 1, 2.0, &seed(4)).unwrap();
        assert_eq!(wide.len(), 3 * (CHUNK + 1));
        assert!(wide.iter().all(|x| x.is_finite()));
        let g1 = in_pool(1, || gamma_samples(CHUNK + 9, 2.5, 1.0, &seed(5)).unwrap());
        assert_eq!(
            g1,
            in_pool(3, || gamma_samples(CHUNK + 9, 2.5, 1.0, &seed(5)).unwrap())
        );
    }

    #[test]
    fn rejects_bad_arguments() {
        let err = l2_laplace_samples(2, 0, 1.0, &seed(0)).unwrap_err();
        assert_eq!(err.to_string(), "d must be >= 1, got 0");
        assert!(l2_laplace_samples(2, 3, 0.0, &seed(0)).is_err());
        assert!(l2_laplace_samples(2, 3, f64::NAN, &seed(0)).is_err());
        assert!(l2_laplace_samples(2, 3, f64::INFINITY, &seed(0)).is_err());
        assert!(matches!(
            l2_laplace_samples(usize::MAX, 2, 1.0, &seed(0)),
            Err(Error::OutputTooLarge(_))
        ));
        assert_eq!(
            l2_laplace_samples(0, 3, 1.0, &seed(0)).unwrap(),
            Vec::<f64>::new()
        );
        assert!(l2_laplace_samples(4, 10, 1e308, &seed(0)).is_err());
        assert!(gamma_samples(2, 0.0, 1.0, &seed(0)).is_err());
        assert!(gamma_samples(2, 1.0, -1.0, &seed(0)).is_err());
    }
}
