//! `k` distinct values drawn uniformly from `[0, range)`, for any `range ≤ 2^64`.

use super::below_u64;
use crate::rng::Rng;
use crate::{Error, Result};
use rand::Rng as _;

/// The largest supported range, 2^64: every `u64` value.
pub const FULL_RANGE: u128 = 1 << 64;

/// A uniformly random `k`-subset of `[0, range)`, sorted increasingly.
///
/// `range` is a `u128` so that the full 64-bit domain (`range = 2^64` = [`FULL_RANGE`]) can
/// be expressed; it must be at most 2^64. Every `k`-subset is equally likely:
///
/// - when `k ≤ range / 4`: draw uniform values, sort, drop duplicates and draw the missing
///   ones again (each round removes at least 3/4 of the shortfall in expectation), so time
///   is O(k log k) and memory O(k) whatever the range;
/// - otherwise (`range < 4k`, so `range` values fit in memory): selection sampling (Knuth's
///   Algorithm S), one pass over the range with exact integer acceptance tests.
///
/// # Errors
/// [`Error::InvalidParameter`] when `range > 2^64` or `k > range`;
/// [`Error::OutputTooLarge`] when `k` values cannot be allocated.
pub fn sample_distinct(rng: &mut Rng, range: u128, k: usize) -> Result<Vec<u64>> {
    if range > FULL_RANGE {
        return Err(Error::parameter("range", range, "must be <= 2**64"));
    }
    if k as u128 > range {
        return Err(Error::InvalidParameter {
            name: "k",
            value: format!("{k} (range {range})"),
            rule: "must be <= range",
        });
    }
    let mut chosen: Vec<u64> = Vec::new();
    chosen.try_reserve_exact(k).map_err(|_| {
        Error::OutputTooLarge(format!("sample_distinct: cannot allocate k = {k} values"))
    })?;
    if k == 0 {
        return Ok(chosen);
    }
    if (k as u128) <= range / 4 {
        let draw = |rng: &mut Rng| {
            if range == FULL_RANGE {
                rng.next_u64()
            } else {
                below_u64(rng, range as u64)
            }
        };
        chosen.extend((0..k).map(|_| draw(rng)));
        chosen.sort_unstable();
        chosen.dedup();
        while chosen.len() < k {
            let mut fresh: Vec<u64> = (0..k - chosen.len()).map(|_| draw(rng)).collect();
            fresh.sort_unstable();
            fresh.dedup();
            fresh.retain(|x| chosen.binary_search(x).is_err());
            chosen.extend_from_slice(&fresh);
            // Two sorted runs: the stable sort merges them in linear time.
            chosen.sort();
        }
    } else {
        let range = range as u64;
        let mut needed = k as u64;
        for i in 0..range {
            if below_u64(rng, range - i) < needed {
                chosen.push(i);
                needed -= 1;
                if needed == 0 {
                    break;
                }
            }
        }
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::test_util::seed;
    use std::collections::HashMap;

    fn check(range: u128, k: usize, s: u64) -> Vec<u64> {
        let out = sample_distinct(&mut seed(s).stream(0), range, k).unwrap();
        assert_eq!(out.len(), k);
        assert!(out.windows(2).all(|w| w[0] < w[1]));
        assert!(out.iter().all(|&x| u128::from(x) < range));
        out
    }

    #[test]
    fn sorted_distinct_in_range() {
        check(10, 0, 1);
        check(10, 10, 1);
        check(1000, 999, 2);
        check(1000, 250, 3);
        check(FULL_RANGE, 100_000, 4);
        check(FULL_RANGE - 1, 10, 5);
        check(1, 1, 6);
    }

    #[test]
    fn every_subset_equally_likely() {
        // C(5, 2) = 10 subsets (selection sampling) and C(9, 2) = 36 (redrawing).
        for (range, draws) in [(5u128, 50_000usize), (9, 72_000)] {
            let mut rng = seed(7).stream(range as u64);
            let mut counts: HashMap<Vec<u64>, usize> = HashMap::new();
            for _ in 0..draws {
                *counts
                    .entry(sample_distinct(&mut rng, range, 2).unwrap())
                    .or_default() += 1;
            }
            let subsets = (range * (range - 1) / 2) as usize;
            assert_eq!(counts.len(), subsets);
            let expected = draws as f64 / subsets as f64;
            for (subset, &c) in &counts {
                let z = (c as f64 - expected) / expected.sqrt();
                assert!(z.abs() < 5.5, "{subset:?}: {c} vs {expected}");
            }
        }
    }

    #[test]
    fn errors() {
        let mut rng = seed(0).stream(0);
        assert!(matches!(
            sample_distinct(&mut rng, 5, 6),
            Err(Error::InvalidParameter { name: "k", .. })
        ));
        assert!(matches!(
            sample_distinct(&mut rng, FULL_RANGE + 1, 1),
            Err(Error::InvalidParameter { name: "range", .. })
        ));
        assert!(matches!(
            sample_distinct(&mut rng, FULL_RANGE, usize::MAX / 4),
            Err(Error::OutputTooLarge(_))
        ));
    }
}
