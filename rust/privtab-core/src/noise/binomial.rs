//! Binomial variates for every `n < 2^64` and every `p ∈ [0, 1]`, tiny `p` included.
//!
//! `rand_distr` 0.6 is not used: it computes the mode and the variate in `f64` (so above
//! 2^53 the low bits are not random), its acceptance test takes logarithms of ratios close
//! to 1 (losing the density's accuracy when `n·p` is large), and it asserts (panics) on
//! values near 2^64. Here:
//!
//! - `p > 1/2` is reduced to `1 - p` (exact in `f64`) and the result mirrored;
//! - for a mean `n·p < 16`, waiting times: geometric gaps between successes, each drawn by
//!   inversion with `ln_1p`, so `p = 1e-18` with `n = 2^64 - 1` costs O(1) draws;
//! - otherwise BTPE (Kachitvichyanukul & Schmeiser 1988), rewritten around the mode `m`,
//!   which is computed exactly as `floor((n + 1) p)` in 128-bit integer arithmetic: every
//!   candidate is `m` plus a small offset, and the acceptance test uses `ln_1p` of exact
//!   integer differences, so it keeps ~1e-6 accuracy in the log-density even at
//!   `n·p ≈ 2^63`.
//!
//! The algorithms are exact in distribution up to the 53-bit resolution of the uniform
//! variates and double-precision evaluation of the acceptance bounds.

use super::{alloc_output, open01};
use crate::Result;
use crate::error::check_probability;
use crate::rng::{Rng, Seed, fill_chunked};

const WAITING_TIME_MAX_MEAN: f64 = 16.0;

/// A binomial distribution `B(n, p)`, with its sampling constants precomputed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Binomial {
    n: u64,
    mirrored: bool,
    method: Method,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Method {
    Constant(u64),
    WaitingTime { log_q: f64 },
    Btpe(Btpe),
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Btpe {
    p: f64,
    q: f64,
    m: u64,
    npq: f64,
    p1: f64,
    c: f64,
    lambda_l: f64,
    lambda_r: f64,
    p2: f64,
    p3: f64,
    p4: f64,
}

impl Binomial {
    /// `B(n, p)`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`](crate::Error::InvalidParameter) when `p` is NaN or outside [0, 1].
    pub fn new(n: u64, p: f64) -> Result<Self> {
        check_probability("p", p)?;
        let mirrored = p > 0.5;
        let p = if mirrored { 1.0 - p } else { p };
        let method = if p == 0.0 || n == 0 {
            Method::Constant(0)
        } else if (n as f64) * p < WAITING_TIME_MAX_MEAN {
            Method::WaitingTime {
                log_q: (-p).ln_1p(),
            }
        } else {
            Method::Btpe(Btpe::new(n, p))
        };
        Ok(Binomial {
            n,
            mirrored,
            method,
        })
    }

    /// One variate.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let k = match self.method {
            Method::Constant(k) => k,
            Method::WaitingTime { log_q } => waiting_time(rng, self.n, log_q),
            Method::Btpe(ref btpe) => btpe.sample(rng, self.n),
        };
        if self.mirrored { self.n - k } else { k }
    }
}

/// One `B(n, p)` variate.
///
/// # Errors
/// [`Error::InvalidParameter`](crate::Error::InvalidParameter) when `p` is NaN or outside [0, 1].
pub fn binomial(rng: &mut Rng, n: u64, p: f64) -> Result<u64> {
    Ok(Binomial::new(n, p)?.sample(rng))
}

/// `count` independent `B(n, p)` variates, in parallel (same output for any thread count).
///
/// # Errors
/// [`Error::InvalidParameter`](crate::Error::InvalidParameter) for a bad `p`; [`Error::OutputTooLarge`](crate::Error::OutputTooLarge) when `count`
/// values cannot be allocated.
pub fn binomial_samples(count: usize, n: u64, p: f64, seed: &Seed) -> Result<Vec<u64>> {
    let dist = Binomial::new(n, p)?;
    let mut out = alloc_output(count, "binomial samples")?;
    fill_chunked(&mut out, seed, |rng, _| dist.sample(rng))?;
    Ok(out)
}

/// Counts successes by summing geometric gaps: O(1 + n·p) draws, independent of `n`.
fn waiting_time(rng: &mut Rng, n: u64, log_q: f64) -> u64 {
    let mut trials: u128 = 0;
    let mut successes = 0u64;
    loop {
        // Failures before the next success: P(gap >= g) = q^g.
        let gap = (open01(rng).ln() / log_q).floor();
        trials = trials.saturating_add(gap as u128).saturating_add(1);
        if trials > u128::from(n) {
            return successes;
        }
        successes += 1;
    }
}

fn lambda(a: f64) -> f64 {
    a * (1.0 + 0.5 * a)
}

fn stirling(a: f64) -> f64 {
    let a2 = a * a;
    (13860. - (462. - (132. - (99. - 140. / a2) / a2) / a2) / a2) / a / 166_320.
}

impl Btpe {
    /// Constants of BTPE for `0 < p ≤ 1/2` and `n·p ≥ 16`.
    fn new(n: u64, p: f64) -> Self {
        let q = 1.0 - p;
        // p = mantissa · 2^-shift exactly; (n + 1)·mantissa < 2^117.
        let (mantissa, shift) = {
            let bits = p.to_bits();
            let biased = ((bits >> 52) & 0x7ff) as i32;
            let fraction = bits & ((1u64 << 52) - 1);
            if biased == 0 {
                (fraction, 1074)
            } else {
                (fraction | (1u64 << 52), 1075 - biased)
            }
        };
        let product = (u128::from(n) + 1) * u128::from(mantissa);
        let (m, frac) = if shift >= 128 {
            (0, product as f64 * 2f64.powi(-shift))
        } else {
            let low = product & ((1u128 << shift) - 1);
            ((product >> shift) as u64, low as f64 * 2f64.powi(-shift))
        };
        let np = n as f64 * p;
        let npq = np * q;
        let p1 = (2.195 * npq.sqrt() - 4.6 * q).floor() + 0.5;
        let mf = m as f64;
        let c = 0.134 + 20.5 / (15.3 + mf);
        let p2 = p1 * (1.0 + 2.0 * c);
        // f_M - x_L and x_R - f_M, with f_M = m + frac and x_{L,R} = m + 1/2 ∓ p1.
        let fm = mf + frac;
        let x_l = mf + 0.5 - p1;
        let x_r = mf + 0.5 + p1;
        let lambda_l = lambda((frac - 0.5 + p1) / (fm - x_l * p));
        let lambda_r = lambda((0.5 + p1 - frac) / (x_r * q));
        let p3 = p2 + c / lambda_l;
        let p4 = p3 + c / lambda_r;
        Btpe {
            p,
            q,
            m,
            npq,
            p1,
            c,
            lambda_l,
            lambda_r,
            p2,
            p3,
            p4,
        }
    }

    fn sample(&self, rng: &mut Rng, n: u64) -> u64 {
        let Btpe {
            m,
            p1,
            c,
            lambda_l,
            lambda_r,
            p2,
            p3,
            p4,
            ..
        } = *self;
        let (mi, ni) = (i128::from(m), i128::from(n));
        loop {
            let u = open01(rng) * p4;
            let mut v = open01(rng);
            // Offsets are relative to m, so they are exact in f64 for any n.
            let offset = if u <= p1 {
                let y = mi + (0.5 - p1 * v + u).floor() as i128;
                if (0..=ni).contains(&y) {
                    return y as u64;
                }
                continue;
            } else if u <= p2 {
                let x = 0.5 - p1 + (u - p1) / c;
                v = v * c + 1.0 - (x - 0.5).abs() / p1;
                if v > 1.0 {
                    continue;
                }
                x.floor() as i128
            } else if u <= p3 {
                let x = 0.5 - p1 + v.ln() / lambda_l;
                v *= (u - p2) * lambda_l;
                x.floor() as i128
            } else {
                let x = 0.5 + p1 - v.ln() / lambda_r;
                v *= (u - p3) * lambda_r;
                x.floor() as i128
            };
            let y = mi + offset;
            if y < 0 || y > ni {
                continue;
            }
            if self.accept(v, y, mi, ni) {
                return y as u64;
            }
        }
    }

    /// Whether `v ≤ f(y) / f(m)`, the acceptance test of BTPE (steps 5.1-5.3).
    fn accept(&self, v: f64, y: i128, m: i128, n: i128) -> bool {
        let Btpe { p, q, npq, .. } = *self;
        let k = (y - m).unsigned_abs() as f64;
        if k <= 20.0 || k >= 0.5 * npq - 1.0 {
            // f(i) / f(i - 1) = (n + 1 - i) p / (i q).
            let s = p / q;
            let ratio = |i: i128| s * ((n + 1 - i) as f64) / (i as f64);
            let mut f = 1.0;
            if y > m {
                for i in (m + 1)..=y {
                    f *= ratio(i);
                    if f < v {
                        return false;
                    }
                }
            } else {
                for i in (y + 1)..=m {
                    f /= ratio(i);
                    if f < v {
                        return false;
                    }
                }
            }
            return v <= f;
        }
        let alpha = v.ln();
        let rho = (k / npq) * ((k * (k / 3.0 + 0.625) + 1.0 / 6.0) / npq + 0.5);
        let t = -0.5 * k * k / npq;
        if alpha < t - rho {
            return true;
        }
        if alpha > t + rho {
            return false;
        }
        let diff = (y - m) as f64;
        let x1 = (y + 1) as f64;
        let f1 = (m + 1) as f64;
        let z = (n - m + 1) as f64;
        let w = (n - y + 1) as f64;
        let bound = (m as f64 + 0.5) * (-diff / x1).ln_1p()
            + ((n - m) as f64 + 0.5) * (diff / w).ln_1p()
            + diff * (w * p / (x1 * q)).ln()
            + stirling(f1)
            + stirling(z)
            - stirling(x1)
            - stirling(w);
        alpha <= bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::test_util::{in_pool, moments, seed};
    use crate::rng::CHUNK;

    fn check_moments(n: u64, p: f64) {
        let samples = binomial_samples(100_000, n, p, &seed(n ^ p.to_bits())).unwrap();
        let (mean, var) = moments(samples.iter().map(|&k| k as f64));
        let (em, ev) = (n as f64 * p, n as f64 * p * (1.0 - p));
        let tol_mean = 6.0 * (ev / samples.len() as f64).sqrt() + 1e-12 * em;
        assert!(
            (mean - em).abs() <= tol_mean,
            "n={n} p={p} mean {mean} vs {em}"
        );
        assert!(
            (var / ev - 1.0).abs() < 0.05,
            "n={n} p={p} var {var} vs {ev}"
        );
    }

    #[test]
    fn moments_over_regimes() {
        check_moments(100, 0.05);
        check_moments(1000, 0.3);
        check_moments(1000, 0.93);
        check_moments(u64::MAX, 1e-18);
        check_moments(u64::MAX, 4e-17);
        check_moments(1 << 40, 0.5);
    }

    #[test]
    fn huge_mean_keeps_low_bits_random() {
        let samples = binomial_samples(20_000, u64::MAX, 0.5, &seed(5)).unwrap();
        let (mean, var) = moments(samples.iter().map(|&k| (k as i128 - (1i128 << 63)) as f64));
        let sd = 2f64.powf(31.0);
        assert!(mean.abs() < 6.0 * sd / (20_000f64).sqrt(), "{mean}");
        assert!((var / (sd * sd) - 1.0).abs() < 0.05, "{var}");
        let odd = samples.iter().filter(|&&k| k & 1 == 1).count();
        assert!((9_000..11_000).contains(&odd), "{odd}");
    }

    #[test]
    fn edge_cases() {
        let mut rng = seed(1).stream(0);
        assert_eq!(binomial(&mut rng, 10, 0.0), Ok(0));
        assert_eq!(binomial(&mut rng, 10, 1.0), Ok(10));
        assert_eq!(binomial(&mut rng, u64::MAX, 1.0), Ok(u64::MAX));
        assert_eq!(binomial(&mut rng, 0, 0.3), Ok(0));
        assert!(binomial(&mut rng, 1, f64::NAN).is_err());
        assert!(binomial(&mut rng, 1, 1.5).is_err());
        assert!(binomial(&mut rng, 1, -0.5).is_err());
        for _ in 0..1000 {
            assert!(binomial(&mut rng, u64::MAX, 1.0 - 1e-16).unwrap() > u64::MAX - 20_000);
            assert!(binomial(&mut rng, 3, 0.7).unwrap() <= 3);
        }
    }

    #[test]
    fn exact_small_pmf() {
        // B(4, 0.3) by waiting times: frequencies within 6 sd of the exact pmf.
        let samples = binomial_samples(200_000, 4, 0.3, &seed(2)).unwrap();
        let pmf = [0.2401, 0.4116, 0.2646, 0.0756, 0.0081];
        for (k, &pk) in pmf.iter().enumerate() {
            let freq = samples.iter().filter(|&&s| s == k as u64).count() as f64 / 2e5;
            assert!(
                (freq - pk).abs() < 6.0 * (pk * (1.0 - pk) / 2e5).sqrt(),
                "{k}"
            );
        }
    }

    #[test]
    fn thread_independent() {
        let n = CHUNK + 5;
        let a = in_pool(1, || binomial_samples(n, 1 << 50, 0.25, &seed(3)).unwrap());
        let b = in_pool(2, || binomial_samples(n, 1 << 50, 0.25, &seed(3)).unwrap());
        assert_eq!(a, b);
    }
}
