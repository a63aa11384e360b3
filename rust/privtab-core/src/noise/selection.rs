//! The exponential mechanism by the Gumbel-max trick on log-weights.

use super::alloc_output;
use super::continuous::gumbel;
use crate::rng::{Seed, fill_chunked};
use crate::{Error, Result};
use std::cmp::Ordering;

/// Draws `size` indices with probability proportional to `exp(log_weights[i])`.
///
/// `argmax_i (log_weights[i] + G_i)` with independent standard Gumbel `G_i` is an index
/// drawn with probability ∝ `exp(log_weights[i])` (Gumbel-max trick), and the indices of
/// the `size` largest perturbed values, in decreasing order, are distributed as `size`
/// successive draws without replacement, each ∝ the weights of the remaining items. No
/// exponential is ever evaluated and the log-weights are first shifted by their maximum, so
/// any range of scores works (±1e300 included). The Gumbel variates come from 53-bit
/// uniforms and lie in [-3.6, 36.8], so an item whose log-weight is more than 40.4 below
/// the maximum (relative weight < 3e-18) is never chosen.
///
/// - `replace = false`: the `size` indices of largest `log_weights + G`, in decreasing order
///   of the perturbed value (ties broken by lower index, which has probability 0).
/// - `replace = true`: `size` independent draws, in parallel over draws (chunked streams,
///   so the output does not depend on the thread count).
///
/// `-inf` log-weights are allowed and never chosen.
///
/// # Privacy
/// With `log_weights[i] = ε · u(x, i) / (2Δu)` for a utility `u` of sensitivity `Δu`, one
/// draw is ε-differentially private (McSherry & Talwar 2007); `size` draws with or without
/// replacement cost `size · ε` by sequential composition.
///
/// # Errors
/// [`Error::InvalidData`] when `log_weights` is empty, holds NaN or `+inf`, or holds only
/// `-inf`; [`Error::InvalidParameter`] when `replace` is false and `size` exceeds the
/// number of finite log-weights; [`Error::OutputTooLarge`] when `size` indices cannot be
/// allocated.
pub fn exponential_mechanism(
    log_weights: &[f64],
    size: usize,
    replace: bool,
    seed: &Seed,
) -> Result<Vec<usize>> {
    if log_weights.is_empty() {
        return Err(Error::InvalidData(
            "log_weights must be non-empty".to_string(),
        ));
    }
    if let Some(i) = log_weights
        .iter()
        .position(|w| w.is_nan() || *w == f64::INFINITY)
    {
        return Err(Error::InvalidData(format!(
            "log_weights must be finite or -inf, got log_weights[{i}] = {}",
            log_weights[i]
        )));
    }
    let finite: Vec<usize> = (0..log_weights.len())
        .filter(|&i| log_weights[i].is_finite())
        .collect();
    if finite.is_empty() {
        return Err(Error::InvalidData(
            "log_weights must have at least one finite entry, got only -inf".to_string(),
        ));
    }
    if !replace && size > finite.len() {
        return Err(Error::InvalidParameter {
            name: "size",
            value: format!("{size} ({} finite log-weights)", finite.len()),
            rule: "must be <= the number of finite log-weights when replace is false",
        });
    }
    let top = finite
        .iter()
        .map(|&i| log_weights[i])
        .fold(f64::NEG_INFINITY, f64::max);
    // Shifting by the maximum keeps the best items' perturbed values near 0, where the
    // Gumbel noise is not absorbed by rounding.
    let shifted: Vec<f64> = finite.iter().map(|&i| log_weights[i] - top).collect();
    let mut out = alloc_output::<usize>(size, "exponential mechanism output")?;
    if size == 0 {
        return Ok(out);
    }
    if replace {
        fill_chunked(&mut out, seed, |rng, _| {
            let mut best = (f64::NEG_INFINITY, 0usize);
            for (slot, &w) in shifted.iter().enumerate() {
                let key = w + gumbel(rng);
                if key > best.0 {
                    best = (key, slot);
                }
            }
            finite[best.1]
        })?;
        return Ok(out);
    }
    let mut keys = alloc_output::<f64>(shifted.len(), "exponential mechanism keys")?;
    fill_chunked(&mut keys, seed, |rng, j| shifted[j] + gumbel(rng))?;
    let mut order: Vec<usize> = (0..keys.len()).collect();
    let by_key =
        |a: &usize, b: &usize| -> Ordering { keys[*b].total_cmp(&keys[*a]).then(a.cmp(b)) };
    if size < order.len() {
        order.select_nth_unstable_by(size - 1, by_key);
        order.truncate(size);
    }
    order.sort_unstable_by(by_key);
    for (slot, j) in out.iter_mut().zip(order) {
        *slot = finite[j];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::test_util::{in_pool, seed};
    use crate::rng::CHUNK;

    fn frequencies(log_weights: &[f64], replace: bool, draws: usize) -> Vec<f64> {
        let mut counts = vec![0usize; log_weights.len()];
        if replace {
            for i in exponential_mechanism(log_weights, draws, true, &seed(1)).unwrap() {
                counts[i] += 1;
            }
        } else {
            for d in 0..draws {
                let first =
                    exponential_mechanism(log_weights, 1, false, &seed(d as u64)).unwrap()[0];
                counts[first] += 1;
            }
        }
        counts.iter().map(|&c| c as f64 / draws as f64).collect()
    }

    #[test]
    fn frequencies_follow_weights() {
        let lw = [0.0, 1.0, 2.0, f64::NEG_INFINITY, 0.5];
        let norm: f64 = lw.iter().map(|w| w.exp()).sum();
        for replace in [true, false] {
            let draws = if replace { 200_000 } else { 40_000 };
            let freq = frequencies(&lw, replace, draws);
            for (w, f) in lw.iter().zip(&freq) {
                let p = w.exp() / norm;
                let sd = (p * (1.0 - p) / draws as f64).sqrt();
                assert!((f - p).abs() <= 6.0 * sd, "replace={replace}: {f} vs {p}");
            }
        }
    }

    #[test]
    fn huge_scores_are_stable() {
        // Two equal, enormous log-weights must split evenly; a far smaller one never wins.
        let lw = [1e300, -1e300, 1e300];
        let draws = exponential_mechanism(&lw, 10_000, true, &seed(3)).unwrap();
        let first = draws.iter().filter(|&&i| i == 0).count();
        assert!(draws.iter().all(|&i| i != 1));
        assert!((4_500..5_500).contains(&first), "{first}");
        let all = exponential_mechanism(&[f64::MAX, -f64::MAX, 0.0], 3, false, &seed(4));
        assert_eq!(all.unwrap()[0], 0);
    }

    #[test]
    fn without_replacement_is_a_permutation_prefix() {
        let lw: Vec<f64> = (0..50).map(|i| (i % 7) as f64).collect();
        let out = exponential_mechanism(&lw, 50, false, &seed(5)).unwrap();
        let mut sorted = out.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        let prefix = exponential_mechanism(&lw, 10, false, &seed(5)).unwrap();
        assert_eq!(prefix, out[..10]);
    }

    #[test]
    fn thread_independent() {
        let lw = vec![0.0; 7];
        let a = in_pool(1, || {
            exponential_mechanism(&lw, CHUNK + 3, true, &seed(6)).unwrap()
        });
        let b = in_pool(2, || {
            exponential_mechanism(&lw, CHUNK + 3, true, &seed(6)).unwrap()
        });
        assert_eq!(a, b);
    }

    #[test]
    fn errors() {
        let s = seed(0);
        assert!(exponential_mechanism(&[], 1, false, &s).is_err());
        assert!(exponential_mechanism(&[0.0, f64::NAN], 1, false, &s).is_err());
        assert!(exponential_mechanism(&[0.0, f64::INFINITY], 1, false, &s).is_err());
        assert!(exponential_mechanism(&[f64::NEG_INFINITY], 1, true, &s).is_err());
        let err = exponential_mechanism(&[0.0, f64::NEG_INFINITY], 2, false, &s).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "size", .. }));
        assert_eq!(
            exponential_mechanism(&[0.0, f64::NEG_INFINITY], 3, true, &s).unwrap(),
            vec![0, 0, 0]
        );
        assert!(
            exponential_mechanism(&[0.0], 0, false, &s)
                .unwrap()
                .is_empty()
        );
    }
}
