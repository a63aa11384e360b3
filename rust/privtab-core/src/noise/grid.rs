//! The floating-point-safe Laplace mechanism for real values: exact discrete Laplace noise
//! on a power-of-two grid.
//!
//! Textbook Laplace noise computed in binary floating point (`value + scale·Exp·sign`)
//! leaks its input: the set of doubles reachable from one input differs from the set
//! reachable from a neighbouring input, so one output can tell the two apart (Mironov 2012,
//! "On significance of the least significant bits for differential privacy"). This module
//! uses the construction of OpenDP's float Laplace mechanism instead:
//!
//! 1. a grid step `g = 2^k` is fixed from public numbers only: the largest power of two not
//!    above `scale / 2^GRID_BITS`, `scale = sensitivity / epsilon`;
//! 2. each value is rounded to the nearest multiple of `g`, exactly (integer arithmetic on
//!    the value's mantissa and exponent): `x ↦ n = round(x / g)`;
//! 3. exact discrete Laplace noise `Z ~ DLap(t)` ([`DiscreteLaplace`], integer arithmetic
//!    only) is added in units of `g`: the release is the integer `n + Z`;
//! 4. the double nearest to `(n + Z)·g` is returned. This last rounding is a function of the
//!    released integer only: post-processing, which costs no privacy.
//!
//! Rounding moves each value by at most `g/2`, so the rounded query's L1 sensitivity in
//! units of `g` is at most `D = sensitivity / g + changed`, where `changed` bounds how
//! many coordinates can differ between neighbouring inputs.
//!
//! # The noise sampler and its accounting
//! The noise magnitude `M ≥ 0` (with a fair sign, `−0` rejected) has the geometric law
//! `P(M = m) ∝ exp(−m/t)`. It is drawn as `M = w·J + L` with `w = t/32`: the offset `L` on
//! `[0, w)` with `P ∝ exp(−l/t)` exactly (a uniform draw accepted with the exact
//! Bernoulli(exp(−l/t)) of Canonne, Kamath & Steinke 2020), and the block index `J`,
//! geometric of ratio `e^{-1/32}`, from one 64-bit word compared with the table
//! `⌊2^64·e^{-j/32}⌋`, `j = 1..256` (memoryless restart beyond 256, probability `e^-8`).
//! The table was computed with 80-digit decimal arithmetic, so each of its probabilities is
//! within `2^-63` of the exact one: a relative `2^-46.5` for `J` within a table and
//! `2^-52.5` per restart. Between two neighbouring inputs the log-ratio of the sampler's
//! probabilities therefore differs from the exact geometric's by at most `2^-45` per
//! changed coordinate plus `2^-55` per unit of `D/t`. The scale in units is the smallest
//! multiple of 32 with `t ≥ (D/epsilon)·(1 + κ)`, `κ = 2^-40 + changed·2^-44/epsilon`
//! (plus a relative `2^-48` for the rounding of its own computation), which covers both
//! terms: the release is exactly `epsilon`-DP. One table look-up replaces about twenty
//! random words and as many unpredictable branches of the all-Bernoulli construction.

use super::blocks::{BLOCK_EDGES, BLOCKS, blocks_passed};
use super::discrete::bernoulli_exp_ratio;
use super::{DiscreteLaplace, Rational, alloc_output, below_u64};
use crate::error::check_positive_finite;
use crate::rng::{Rng, Seed, fill_chunked, try_fill_chunked};
use crate::{Error, Result};
use rand::Rng as _;

/// Bits of resolution of the grid below the noise scale: `g ≤ scale / 2^GRID_BITS`.
pub const GRID_BITS: i32 = 40;

/// Largest magnitude, in grid units, of a value that can be released: `|x| / g < 2^120`,
/// i.e. `|x| < 2^80 · scale`, so units and noise stay inside `i128`. (Beyond it the noise
/// is below a millionth of the value's own rounding step.)
const MAX_UNITS_BITS: u32 = 120;

/// Laplace noise of scale `sensitivity / epsilon` (at least), exact on a power-of-two grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridLaplace {
    exponent: i32,
    dist: DiscreteLaplace,
}

impl GridLaplace {
    /// The mechanism for a query of L1 sensitivity `sensitivity` whose neighbouring answers
    /// differ in at most `changed` coordinates (`changed ≥ 1`; the number of values
    /// released is always a valid bound).
    ///
    /// # Privacy
    /// [`GridLaplace::release`] of every coordinate is `epsilon`-differentially private for
    /// such a query, with the rounding to the grid accounted for (module documentation).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `sensitivity` or `epsilon` when it is not finite
    /// and > 0, or naming `sensitivity / epsilon` when the scale in grid units is 2^56 or
    /// more (`changed / epsilon` above about 1e15), so that a variate leaves the `i64`
    /// range with probability below `exp(−128)`.
    pub fn new(sensitivity: f64, epsilon: f64, changed: u64) -> Result<Self> {
        check_positive_finite("sensitivity", sensitivity)?;
        GridCalibration::new(epsilon, changed)?.grid(sensitivity)
    }

    /// `k` of the grid step `g = 2^k`.
    pub fn grid_exponent(&self) -> i32 {
        self.exponent
    }

    /// The grid step `2^k` (0.0 if it is below the smallest subnormal double).
    pub fn grid_step(&self) -> f64 {
        scale_by_power_of_two(1.0, self.exponent)
    }

    /// The integer scale `t` of the discrete Laplace noise, in grid units.
    pub fn unit_scale(&self) -> u64 {
        self.dist.scale().num as u64
    }

    /// The exact discrete Laplace distribution of scale [`GridLaplace::unit_scale`], in grid
    /// units (for constructions that need its exact tails, such as the histogram's).
    pub fn unit_noise(&self) -> DiscreteLaplace {
        self.dist
    }

    /// `round(value / g)`, exactly (ties away from zero).
    ///
    /// # Errors
    /// [`Error::InvalidData`] when `value` is not finite or `|value| / g ≥ 2^120`.
    #[inline]
    pub fn to_units(&self, value: f64) -> Result<i128> {
        // Scaling by a power of two is exact unless the result is subnormal (then below
        // 1/2, so it rounds to 0 either way), and `round` is exact: the fast path agrees
        // with the integer arithmetic of `units` wherever it is taken.
        if (-1022..=1022).contains(&self.exponent) {
            let scaled = value * f64::from_bits(((1023 - self.exponent) as u64) << 52);
            if scaled.abs() < 4_611_686_018_427_387_904.0 {
                return Ok(i128::from(round_to_integer(scaled)));
            }
        }
        self.units(value, false)
    }

    /// `⌊value / g⌋`, exactly: a threshold in grid units.
    ///
    /// # Errors
    /// As [`GridLaplace::to_units`].
    pub fn floor_units(&self, value: f64) -> Result<i128> {
        self.units(value, true)
    }

    /// `value / g` rounded to the nearest integer, or down when `floor`, in integer
    /// arithmetic on the mantissa and exponent of `value`.
    #[inline]
    fn units(&self, value: f64, floor: bool) -> Result<i128> {
        if !value.is_finite() {
            return Err(Error::InvalidData(format!("value {value} is not finite")));
        }
        if value == 0.0 {
            return Ok(0);
        }
        let negative = value < 0.0;
        let (mantissa, exponent) = mantissa_exponent(value.abs());
        let shift = exponent - self.exponent;
        if shift >= 0 {
            let bits = 64 - mantissa.leading_zeros();
            if bits + shift as u32 > MAX_UNITS_BITS {
                return Err(Error::InvalidData(format!(
                    "value {value:e} is too large for noise of grid step 2^{}: |value| \
                     must stay below 2^{MAX_UNITS_BITS} grid steps",
                    self.exponent
                )));
            }
            let magnitude = (u128::from(mantissa) << shift) as i128;
            return Ok(if negative { -magnitude } else { magnitude });
        }
        let down = (-shift).min(65) as u32;
        let mantissa = u128::from(mantissa);
        let offset = match (floor, negative) {
            (false, _) => 1u128 << (down - 1),
            (true, false) => 0,
            (true, true) => (1u128 << down) - 1,
        };
        let magnitude = ((mantissa + offset) >> down) as i128;
        Ok(if negative { -magnitude } else { magnitude })
    }

    /// The double nearest to `units · g` (post-processing of a released integer).
    #[inline]
    pub fn from_units(&self, units: i128) -> f64 {
        let value = match i64::try_from(units) {
            Ok(narrow) => narrow as f64,
            Err(_) => wide_to_f64(units),
        };
        if (-1022..=1023).contains(&self.exponent) {
            value * f64::from_bits(((self.exponent + 1023) as u64) << 52)
        } else {
            scale_by_power_of_two(value, self.exponent)
        }
    }

    /// `round(value / g) + Z` with `Z ~ DLap(t)`: the released integer, in grid units.
    ///
    /// # Errors
    /// As [`GridLaplace::to_units`].
    #[inline]
    pub fn release_units(&self, rng: &mut Rng, value: f64) -> Result<i128> {
        Ok(self.to_units(value)? + self.sample_units(rng))
    }

    /// One noise value in grid units (see the module documentation for the sampler).
    #[inline]
    pub fn sample_units(&self, rng: &mut Rng) -> i128 {
        let t = self.unit_scale();
        let width = t / BLOCKS;
        loop {
            let mut block = 0u64;
            let word = loop {
                let word = rng.next_u64();
                if word >= BLOCK_EDGES[BLOCK_EDGES.len() - 1] {
                    break word;
                }
                block += BLOCK_EDGES.len() as u64;
            };
            block += blocks_passed(word) as u64;
            let (l, negative) = loop {
                let draw = below_u64(rng, width << 1);
                if bernoulli_exp_ratio(rng, draw >> 1, t) {
                    break (draw >> 1, draw & 1 == 1);
                }
            };
            let magnitude = i128::from(width) * i128::from(block) + i128::from(l);
            if negative && magnitude == 0 {
                continue;
            }
            return if negative { -magnitude } else { magnitude };
        }
    }

    /// One noisy value: the double nearest to `(round(value / g) + Z)·g`.
    ///
    /// # Errors
    /// As [`GridLaplace::to_units`]; [`Error::InvalidData`] when the noisy value overflows
    /// a double (a function of the release only).
    #[inline]
    pub fn release(&self, rng: &mut Rng, value: f64) -> Result<f64> {
        let noisy = self.from_units(self.release_units(rng, value)?);
        if noisy.is_finite() {
            Ok(noisy)
        } else {
            Err(Error::InvalidData(format!(
                "the noisy version of {value:e} overflows float64"
            )))
        }
    }
}

/// [`GridLaplace::new`] for one `epsilon` and `changed` and many sensitivities: the part
/// of the calibration that depends only on those two is computed once (iDP
/// microaggregation builds one grid per cluster), and every grid equals the one
/// [`GridLaplace::new`] builds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridCalibration {
    epsilon: f64,
    changed: f64,
    /// `1 + κ`, `κ = 2^-40 + changed·2^-44/epsilon` (module documentation).
    widening: f64,
}

impl GridCalibration {
    /// The calibration of [`GridLaplace::new`]`(·, epsilon, changed)`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `epsilon` when it is not finite and > 0.
    pub fn new(epsilon: f64, changed: u64) -> Result<Self> {
        check_positive_finite("epsilon", epsilon)?;
        let changed = changed.max(1) as f64;
        let kappa = 2f64.powi(-40) + changed * 2f64.powi(-44) / epsilon;
        Ok(GridCalibration {
            epsilon,
            changed,
            widening: 1.0 + kappa,
        })
    }

    /// [`GridLaplace::new`]`(sensitivity, epsilon, changed)`.
    ///
    /// # Errors
    /// As [`GridLaplace::new`].
    #[inline]
    pub fn grid(&self, sensitivity: f64) -> Result<GridLaplace> {
        let GridCalibration {
            epsilon,
            changed,
            widening,
        } = *self;
        check_positive_finite("sensitivity", sensitivity)?;
        let scale = sensitivity / epsilon;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::parameter(
                "sensitivity / epsilon",
                format!("{sensitivity:e} / {epsilon:e}"),
                "must be a finite, non-zero double",
            ));
        }
        let exponent = binary_exponent(scale) - GRID_BITS;
        let needed = (scale_by_power_of_two(sensitivity, -exponent) + changed) / epsilon * widening;
        let units = ceil(needed) + ceil(needed * 2f64.powi(-48)) + 1.0;
        let units = ceil(units / BLOCKS as f64) * BLOCKS as f64;
        // Variates are i64: below 2^56 the scale leaves them a margin of 2^7 scales.
        if !(units.is_finite() && units < 2f64.powi(56)) {
            return Err(Error::parameter(
                "sensitivity / epsilon",
                format!("{sensitivity:e} / {epsilon:e}"),
                "gives a grid-unit noise scale of 2**56 or more (too many changed \
                 coordinates for this epsilon)",
            ));
        }
        // A whole number of at least BLOCKS, so already in lowest terms: no reduction
        // (its three 128-bit divisions were most of the cost of a construction, which
        // iDP microaggregation pays once per cluster). Below 2^56, so exact in a `u64`.
        let dist = DiscreteLaplace::from_scale(Rational {
            num: u128::from(units as u64),
            den: 1,
        });
        Ok(GridLaplace { exponent, dist })
    }
}

/// The floating-point-safe Laplace mechanism: every `values[i]` released with
/// [`GridLaplace`] noise of scale `sensitivity / epsilon` (at least), in parallel; the
/// output depends only on the inputs and `seed`, never on the number of threads.
///
/// # Privacy
/// `epsilon`-differentially private when `sensitivity` bounds the L1 sensitivity of the
/// query that produced `values`. The rounding to the grid is charged for any number of
/// changed coordinates up to `values.len()`, and no floating-point artefact weakens the
/// guarantee: the noise is exact discrete Laplace in units of the grid, and the returned
/// doubles are a function of the released integers (module documentation).
///
/// # Errors
/// [`Error::InvalidParameter`] for a bad `sensitivity` or `epsilon`; [`Error::InvalidData`]
/// naming the first value that is not finite or too large for the grid;
/// [`Error::OutputTooLarge`] when the output cannot be allocated.
pub fn add_laplace(
    values: &[f64],
    sensitivity: f64,
    epsilon: f64,
    seed: &Seed,
) -> Result<Vec<f64>> {
    let mechanism = GridLaplace::new(sensitivity, epsilon, values.len() as u64)?;
    let mut out = alloc_output(values.len(), "laplace mechanism output")?;
    try_fill_chunked(&mut out, seed, |rng, i| {
        mechanism.release(rng, values[i]).map_err(|err| match err {
            Error::InvalidData(message) => Error::InvalidData(format!("values[{i}]: {message}")),
            other => other,
        })
    })?;
    Ok(out)
}

/// `n` noise values of [`GridLaplace`] (for distribution tests): `Z·g`, `Z ~ DLap(t)`.
///
/// # Errors
/// As [`GridLaplace::new`]; [`Error::OutputTooLarge`] when the output cannot be allocated.
pub fn grid_laplace_samples(
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    changed: u64,
    seed: &Seed,
) -> Result<Vec<f64>> {
    let mechanism = GridLaplace::new(sensitivity, epsilon, changed)?;
    let mut out = alloc_output(n, "grid laplace samples")?;
    fill_chunked(&mut out, seed, |rng, _| {
        mechanism.from_units(mechanism.sample_units(rng))
    })?;
    Ok(out)
}

/// `units as f64` out of line: the conversion of a 128-bit integer is a library call,
/// needed only beyond the `i64` range.
#[cold]
#[inline(never)]
fn wide_to_f64(units: i128) -> f64 {
    units as f64
}

/// `x.ceil()` for `x ≥ 0` (or NaN), without the library call that `ceil` is on x86-64
/// without SSE4.1: a double of at least 2^52 is an integer already, and below it the
/// truncation to `u64` is exact. (`GridLaplace::new` runs once per cluster in iDP
/// microaggregation.)
#[inline]
fn ceil(x: f64) -> f64 {
    if x < 4_503_599_627_370_496.0 {
        let whole = x as u64 as f64;
        if whole < x { whole + 1.0 } else { whole }
    } else {
        x
    }
}

/// `x.round() as i64` (ties away from zero) for `|x| < 2^63`, without a library call: the
/// truncation is exact, and so is the fraction `x − trunc(x)` (0 when `|x| ≥ 2^52`).
#[inline]
fn round_to_integer(x: f64) -> i64 {
    let whole = x as i64;
    let fraction = x - whole as f64;
    whole + i64::from(fraction >= 0.5) - i64::from(fraction <= -0.5)
}

/// `⌊log2 x⌋` for a finite `x > 0`.
fn binary_exponent(x: f64) -> i32 {
    let (mantissa, exponent) = mantissa_exponent(x);
    exponent + 63 - mantissa.leading_zeros() as i32
}

/// `x = mantissa · 2^exponent` exactly, for a finite `x > 0`.
fn mantissa_exponent(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    }
}

/// `x · 2^exponent`, rounded once to the nearest double in the normal range (two steps when
/// `2^exponent` itself is not a normal double).
fn scale_by_power_of_two(x: f64, exponent: i32) -> f64 {
    let power = |e: i32| f64::from_bits(((e + 1023) as u64) << 52);
    let mut result = x;
    let mut left = exponent;
    while left != 0 {
        let step = left.clamp(-1022, 1023);
        result *= power(step);
        left -= step;
        if result == 0.0 || !result.is_finite() {
            break;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::test_util::{in_pool, moments, seed};
    use crate::rng::CHUNK;

    #[test]
    fn grid_is_a_power_of_two_below_the_scale() {
        for (sens, eps) in [
            (1.0, 1.0),
            (2.0, 0.1),
            (1e-9, 3.0),
            (1e12, 1e-3),
            (0.3, 7.0),
        ] {
            let m = GridLaplace::new(sens, eps, 1).unwrap();
            let scale = sens / eps;
            let g = m.grid_step();
            assert_eq!(g, 2f64.powi(m.grid_exponent()));
            assert!(g <= scale * 2f64.powi(-GRID_BITS + 1), "{g} {scale}");
            assert!(g > scale * 2f64.powi(-GRID_BITS - 1), "{g} {scale}");
            let t = m.unit_scale() as f64 * g;
            assert!(t >= scale && t <= scale * (1.0 + 1e-9), "{t} {scale}");
        }
    }

    #[test]
    fn unit_scales_leave_room_in_i64() {
        // Found by tests/properties.rs: a unit scale near 2^62 (a tiny epsilon) made a
        // variate leave the i64 range now and then, an InvalidData error at random.
        assert!(GridLaplace::new(2.0, 1e-15, 2).is_err());
        let small = GridLaplace::new(2.0, 1e-13, 2).unwrap();
        assert!(small.unit_scale() < 1 << 56);
    }

    #[test]
    fn unit_scale_covers_the_rounding_of_changed_coordinates() {
        let one = GridLaplace::new(1.0, 0.5, 1).unwrap();
        let many = GridLaplace::new(1.0, 0.5, 1_000_000).unwrap();
        assert_eq!(one.grid_exponent(), many.grid_exponent());
        let g = one.grid_step();
        let needed = (1.0 / g + 1_000_000.0) / 0.5;
        let kappa = 2f64.powi(-40) + 1_000_000.0 * 2f64.powi(-44) / 0.5;
        let units = many.unit_scale() as f64;
        assert!(units >= needed * (1.0 + kappa));
        assert!(units < needed * (1.0 + kappa) * (1.0 + 1e-12) + 2.0 * BLOCKS as f64);
        assert_eq!(many.unit_scale() % BLOCKS, 0);
    }

    #[test]
    fn values_round_to_the_nearest_grid_point_exactly() {
        let m = GridLaplace::new(1.0, 1.0, 1).unwrap();
        let g = m.grid_step();
        assert_eq!(m.to_units(0.0).unwrap(), 0);
        assert_eq!(m.to_units(1.0).unwrap(), 1i128 << GRID_BITS);
        assert_eq!(m.to_units(-3.0 * g).unwrap(), -3);
        assert_eq!(m.to_units(2.5 * g).unwrap(), 3);
        assert_eq!(m.to_units(-2.5 * g).unwrap(), -3);
        assert_eq!(m.to_units(2.4 * g).unwrap(), 2);
        assert_eq!(m.to_units(1e-300).unwrap(), 0);
        assert_eq!(m.to_units(f64::MIN_POSITIVE / 4.0).unwrap(), 0);
        assert!(m.to_units(1e40).is_err());
        assert!(m.to_units(1e20).is_ok());
        assert!(m.to_units(f64::NAN).is_err());
        assert_eq!(m.from_units(m.to_units(0.75).unwrap()), 0.75);
        let mut rng = seed(6).stream(0);
        for _ in 0..100_000 {
            let x = f64::from_bits(rand::Rng::next_u64(&mut rng) >> 2);
            let exact = m.units(x, false);
            assert_eq!(m.to_units(x).ok(), exact.ok(), "{x:e}");
        }
        assert_eq!(m.floor_units(2.9 * g).unwrap(), 2);
        assert_eq!(m.floor_units(-2.1 * g).unwrap(), -3);
        assert_eq!(m.floor_units(-3.0 * g).unwrap(), -3);
        assert_eq!(m.floor_units(1e-300).unwrap(), 0);
        assert_eq!(m.floor_units(-1e-300).unwrap(), -1);
    }

    #[test]
    fn inline_ceil_and_round_equal_the_library_functions() {
        let mut rng = seed(7).stream(0);
        let special = [
            0.0,
            0.5,
            1.0,
            1.5,
            2.5,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9_007_199_254_740_993.0,
            2f64.powi(62) - 1024.0,
            f64::MIN_POSITIVE,
        ];
        // Every magnitude from 2^-60 to 2^62, and exact halves.
        let random = (0..200_000).map(|i| {
            let mantissa = (rand::Rng::next_u64(&mut rng) >> 2) as f64;
            let x = mantissa * 2f64.powi(-(i % 122));
            if i % 5 == 0 { x.floor() + 0.5 } else { x }
        });
        for x in special.into_iter().chain(random) {
            assert_eq!(ceil(x).to_bits(), x.ceil().to_bits(), "{x:e}");
            assert_eq!(round_to_integer(x), x.round() as i64, "{x:e}");
            assert_eq!(round_to_integer(-x), (-x).round() as i64, "{x:e}");
        }
        assert!(ceil(f64::NAN).is_nan());
    }

    #[test]
    fn every_output_is_a_grid_point_reachable_from_any_input() {
        let m = GridLaplace::new(1.0, 1.0, 2).unwrap();
        let g = m.grid_step();
        let mut rng = seed(5).stream(0);
        for value in [0.0, 1.0, 0.1, -7.3, 123.456] {
            for _ in 0..10_000 {
                let out = m.release(&mut rng, value).unwrap();
                let units = out / g;
                assert_eq!(units, units.round(), "{out} is off the grid");
            }
        }
    }

    #[test]
    fn block_edges_are_the_exact_thresholds() {
        for (j, &edge) in BLOCK_EDGES.iter().enumerate() {
            let expected = (-(j as f64 + 1.0) / 32.0).exp() * 2f64.powi(64);
            assert!((edge as f64 - expected).abs() <= expected * 1e-14, "{j}");
        }
        assert!(BLOCK_EDGES.windows(2).all(|pair| pair[0] > pair[1]));
        for &at in &BLOCK_EDGES[..BLOCK_EDGES.len() - 1] {
            let above = at + 1;
            let count = |word: u64| BLOCK_EDGES[..255].iter().filter(|&&e| word < e).count();
            assert_eq!(blocks_passed(above), count(above));
            assert_eq!(blocks_passed(at), count(at));
            assert_eq!(blocks_passed(at - 1), count(at - 1));
        }
        assert_eq!(blocks_passed(u64::MAX), 0);
    }

    #[test]
    fn block_index_and_offset_follow_the_geometric_law() {
        // M / w is geometric of ratio e^{-1/32}: check P(J = j) for small j and the mean.
        let m = GridLaplace::new(1.0, 1.0, 1).unwrap();
        let width = (m.unit_scale() / BLOCKS) as i128;
        let mut rng = seed(21).stream(0);
        let n = 400_000;
        let mut counts = [0u32; 8];
        let mut offsets = 0.0;
        for _ in 0..n {
            let magnitude = m.sample_units(&mut rng).abs();
            let j = (magnitude / width) as usize;
            if j < counts.len() {
                counts[j] += 1;
            }
            offsets += (magnitude % width) as f64 / width as f64;
        }
        let q = (-1.0f64 / 32.0).exp();
        for (j, &count) in counts.iter().enumerate() {
            let p = (1.0 - q) * q.powi(j as i32);
            let observed = f64::from(count) / n as f64;
            let sd = (p * (1.0 - p) / n as f64).sqrt();
            assert!((observed - p).abs() < 6.0 * sd, "{j}: {observed} vs {p}");
        }
        // The offset within a block has density ∝ e^{-x/32} on [0, 1): mean just below 1/2.
        let mean = offsets / n as f64;
        let expected = 0.5 - 1.0 / 12.0 / 32.0;
        assert!(
            (mean - expected).abs() < 6.0 * (1.0 / 12.0 / n as f64).sqrt(),
            "{mean}"
        );
    }

    #[test]
    fn noise_has_the_laplace_moments() {
        let samples = grid_laplace_samples(400_000, 2.0, 1.0, 1, &seed(1)).unwrap();
        let (mean, var) = moments(samples.iter().copied());
        assert!(mean.abs() < 0.03, "{mean}");
        assert!((var / 8.0 - 1.0).abs() < 0.03, "{var}");
    }

    #[test]
    fn deterministic_and_thread_independent() {
        let values: Vec<f64> = (0..(2 * CHUNK + 7)).map(|i| i as f64 * 0.37).collect();
        let a = in_pool(1, || add_laplace(&values, 1.0, 0.5, &seed(4)).unwrap());
        let b = in_pool(2, || add_laplace(&values, 1.0, 0.5, &seed(4)).unwrap());
        assert_eq!(a, b);
        assert_ne!(a, add_laplace(&values, 1.0, 0.5, &seed(5)).unwrap());
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(GridLaplace::new(0.0, 1.0, 1).is_err());
        assert!(GridLaplace::new(1.0, f64::NAN, 1).is_err());
        assert!(GridLaplace::new(f64::MAX, f64::MIN_POSITIVE, 1).is_err());
        assert!(GridLaplace::new(1.0, 1e-30, u64::MAX).is_err());
        let err = add_laplace(&[1.0, f64::INFINITY], 1.0, 1.0, &seed(0)).unwrap_err();
        assert!(err.to_string().contains("values[1]"), "{err}");
        let err = add_laplace(&[1e300], 1.0, 1.0, &seed(0)).unwrap_err();
        assert!(err.to_string().contains("values[0]"), "{err}");
        assert_eq!(
            add_laplace(&[], 1.0, 1.0, &seed(0)).unwrap(),
            Vec::<f64>::new()
        );
    }
}
