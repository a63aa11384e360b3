//! The exact discrete Laplace distribution, sampled with integer arithmetic only.
//!
//! `DLap(t)` has `P(Z = z) ∝ exp(-|z| / t)` on the integers. The sampler is Algorithm 2 of
//! Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS
//! 2020), built on their Algorithm 1 (Bernoulli(exp(-γ)) for rational γ). No floating-point
//! number enters the sampling path, so the output distribution is exactly the stated one and
//! leaks nothing through rounding (the attack of Mironov 2012 on textbook Laplace noise).
//!
//! The scale `t = sensitivity / epsilon` is formed from the exact values of the two `f64`
//! arguments: every finite double is a dyadic rational `m · 2^e`, so `t` is an exact
//! fraction `num / den`, reduced and stored in 128-bit integers. Sampling uses 64-bit
//! arithmetic whenever `num` and `den` fit in 64 bits.
//!
//! When they do (every scale of a double ratio up to 2^64), the geometric magnitude is drawn
//! by splitting Algorithm 2's uniform into blocks: with `D = 32·den`, a geometric `X` of
//! ratio `exp(-1/(32·num))` gives `⌊X / D⌋` geometric of ratio `exp(-1/t)`, and
//! `X = num·J + L` with independent parts, the block index `J` geometric of ratio
//! `exp(-1/32)` (one random word and a table, exactly: [`super::blocks`]) and the offset `L`
//! on `[0, num)` with `P(L = l) ∝ exp(-l/(32·num))` (a uniform draw accepted with the exact
//! Bernoulli of Algorithm 1, with probability above `exp(-1/32)`). The sign is the spare
//! bit of the block index's word. About two random words per variate replace the ten or
//! so, and as many unpredictable branches, of the all-Bernoulli construction; many
//! variates at once ([`DiscreteLaplace::samples`]) take one word or half a word each, the
//! fields of a word deciding nearly every draw alone (`BlockTable`). A thresholded
//! release ([`DiscreteLaplace::sample_above`]) draws the offset only when the block alone
//! does not settle the comparison; bits that are never looked at do not change the law of
//! what is.

use super::blocks::{BLOCKS, block_index, block_index_from_prefix, decided_block_index};
use super::{alloc_output, below_u64, below_u128};
use crate::error::check_positive_finite;
use crate::resources::zeroed_vec;
use crate::rng::{Rng, Seed, try_fill_chunked, try_fill_chunks};
use crate::{Error, Result};
use rand::Rng as _;

/// A positive rational `num / den` in lowest terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rational {
    /// Numerator, ≥ 1.
    pub num: u128,
    /// Denominator, ≥ 1.
    pub den: u128,
}

impl Rational {
    /// `num / den` reduced to lowest terms.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `num` or `den` is 0.
    pub fn new(num: u128, den: u128) -> Result<Self> {
        if num == 0 {
            return Err(Error::parameter("numerator", num, "must be >= 1"));
        }
        if den == 0 {
            return Err(Error::parameter("denominator", den, "must be >= 1"));
        }
        let g = gcd(num, den);
        Ok(Rational {
            num: num / g,
            den: den / g,
        })
    }

    /// The exact ratio `a / b` of two finite positive doubles (`a` is the sensitivity and
    /// `b` the epsilon of a mechanism).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `sensitivity` or `epsilon` when it is not finite
    /// and positive, or naming `sensitivity / epsilon` when the reduced fraction does not
    /// fit in 128-bit integers (it always fits when the ratio lies in [2^-75, 2^75]).
    pub fn from_ratio(a: f64, b: f64) -> Result<Self> {
        check_positive_finite("sensitivity", a)?;
        check_positive_finite("epsilon", b)?;
        let (ma, ea) = dyadic(a);
        let (mb, eb) = dyadic(b);
        let g = gcd(u128::from(ma), u128::from(mb));
        let (mut num, mut den) = (u128::from(ma) / g, u128::from(mb) / g);
        let shift = ea - eb;
        let fits = |x: u128, by: i32| by < 128 && x.leading_zeros() >= by as u32;
        let unrepresentable = || {
            Error::parameter(
                "sensitivity / epsilon",
                format!("{a:e} / {b:e}"),
                "must be a ratio whose exact fraction fits in 128-bit integers",
            )
        };
        if shift >= 0 {
            if !fits(num, shift) {
                return Err(unrepresentable());
            }
            num <<= shift;
        } else {
            if !fits(den, -shift) {
                return Err(unrepresentable());
            }
            den <<= -shift;
        }
        Ok(Rational { num, den })
    }

    /// The nearest double (for display and tests; never used for sampling).
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

/// `x = m · 2^e` with `m` odd, for a finite `x > 0`.
fn dyadic(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mantissa, exponent) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    };
    let zeros = mantissa.trailing_zeros();
    (mantissa >> zeros, exponent + zeros as i32)
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Bernoulli(`num / den`) for `num ≤ den < 2^96`, exactly, from 32-bit words.
///
/// The uniform `U` in [0, 1) is compared with `num / den` one 32-bit word at a time: a word
/// decides the comparison unless the ratio falls inside the word's interval (probability
/// 2^-32), in which case the remainder of the ratio inside that interval is compared with the
/// next word. Each step is exact integer arithmetic, so the result is Bernoulli(`num / den`)
/// exactly while consuming about 32 random bits instead of the 64 of a bounded integer draw.
#[inline]
fn bernoulli_ratio(rng: &mut Rng, num: u128, den: u128) -> bool {
    debug_assert!(num <= den && den < 1 << 96);
    let mut remainder = num;
    loop {
        if remainder == 0 {
            return false;
        }
        let target = remainder << 32;
        let low = u128::from(rng.next_u32()) * den;
        if low + den <= target {
            return true;
        }
        if low >= target {
            return false;
        }
        remainder = target - low;
    }
}

/// Bernoulli(`u / (t · k)`) for `u < t < 2^96`, from 32-bit words while `t · k < 2^96`.
#[inline]
fn bernoulli_over_wide(rng: &mut Rng, u: u64, t: u128, k: u64) -> bool {
    match t.checked_mul(u128::from(k)) {
        Some(den) if den < 1 << 96 => bernoulli_ratio(rng, u128::from(u), den),
        _ => below_u128(rng, t) < u128::from(u) && below_u64(rng, k) == 0,
    }
}

/// Bernoulli(exp(-1)): Algorithm 1 of Canonne et al. with γ = 1, whose first trial
/// (probability γ / 1 = 1) always succeeds.
#[inline]
fn bernoulli_exp_minus_one(rng: &mut Rng) -> bool {
    let mut k = 2u64;
    while bernoulli_ratio(rng, 1, u128::from(k)) {
        k += 1;
    }
    k & 1 == 1
}

/// The two integer widths of the sampler: 64 bits for the common case, 128 bits otherwise.
trait Word: Copy + PartialOrd {
    fn below(rng: &mut Rng, bound: Self) -> Self;
    /// Bernoulli(`u / (t · k)`) for `u < t`.
    fn bernoulli_over(rng: &mut Rng, u: Self, t: Self, k: u64) -> bool;
    /// `floor((u + t * v) / s)`, or `None` if `u + t * v` overflows 128 bits.
    fn scaled_quotient(u: Self, t: Self, v: u64, s: Self) -> Option<u128>;
}

impl Word for u64 {
    #[inline]
    fn below(rng: &mut Rng, bound: Self) -> Self {
        below_u64(rng, bound)
    }
    #[inline]
    fn bernoulli_over(rng: &mut Rng, u: u64, t: u64, k: u64) -> bool {
        bernoulli_over_wide(rng, u, u128::from(t), k)
    }
    #[inline]
    fn scaled_quotient(u: u64, t: u64, v: u64, s: u64) -> Option<u128> {
        match t.checked_mul(v).and_then(|tv| tv.checked_add(u)) {
            Some(x) => Some(u128::from(x / s)),
            None => Some((u128::from(u) + u128::from(t) * u128::from(v)) / u128::from(s)),
        }
    }
}

impl Word for u128 {
    #[inline]
    fn below(rng: &mut Rng, bound: Self) -> Self {
        below_u128(rng, bound)
    }
    #[inline]
    fn bernoulli_over(rng: &mut Rng, u: u128, t: u128, k: u64) -> bool {
        below_u128(rng, t) < u && below_u64(rng, k) == 0
    }
    #[inline]
    fn scaled_quotient(u: u128, t: u128, v: u64, s: u128) -> Option<u128> {
        Some(t.checked_mul(u128::from(v))?.checked_add(u)? / s)
    }
}

/// Bernoulli(exp(-u / t)) for integers `0 ≤ u < t` (Algorithm 1 of Canonne et al.: with
/// γ = u / t, count the successive successes of Bernoulli(γ / k), k = 1, 2, …, and accept
/// when their number is even).
#[inline]
fn bernoulli_exp_fraction<W: Word>(rng: &mut Rng, u: W, t: W) -> bool {
    let mut k = 1u64;
    while W::bernoulli_over(rng, u, t, k) {
        k += 1;
    }
    k & 1 == 1
}

/// Bernoulli(exp(-u / t)) for 64-bit integers `0 ≤ u < t`, exactly.
#[inline]
pub(crate) fn bernoulli_exp_ratio(rng: &mut Rng, u: u64, t: u64) -> bool {
    bernoulli_exp_fraction(rng, u, t)
}

/// `floor(X / s)` with `X` geometric of ratio exp(-1/t), i.e. a geometric variate of ratio
/// exp(-s/t) (steps 1-5 of Algorithm 2 of Canonne et al.). `None` on 128-bit overflow.
#[inline]
fn geometric<W: Word>(rng: &mut Rng, t: W, s: W) -> Option<u128> {
    loop {
        let u = W::below(rng, t);
        if !bernoulli_exp_fraction(rng, u, t) {
            continue;
        }
        let mut v = 0u64;
        while bernoulli_exp_minus_one(rng) {
            v += 1;
        }
        return W::scaled_quotient(u, t, v, s);
    }
}

/// The block construction of the geometric magnitude for a scale `num / den` with both
/// parts below 2^64 (module documentation): `⌊(num·J + L) / D⌋`, `D = 32·den`, computed as
/// `q·J + ⌊(r·J + L) / D⌋` with `num = q·D + r`, so that the division is by a power of two
/// or of 64-bit integers in all but the rarest draws.
///
/// With `r·J = a·D + b`, the magnitudes of block `J` run from `q·J + a` (offset 0) to
/// `q·J + ⌊(b + num − 1) / D⌋ + a`: a comparison that this range settles needs no offset,
/// and `L` (independent of `J`) is then never drawn ([`DiscreteLaplace::sample_above`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Blocked {
    num: u64,
    divisor: u128,
    quotient: u128,
    remainder: u128,
    /// `D` when it is below 2^64 (divisions in 64 bits).
    narrow: Option<u64>,
    /// `log2 D` when `D` is a power of two (divisions by a shift).
    shift: Option<u32>,
}

/// Block `block` before its offset is drawn: its magnitude with the offset 0 is `low`, and
/// `spans` tells whether a larger offset can raise it; `base = r·J`, from which the exact
/// value follows once the offset is drawn.
#[derive(Clone, Copy, Debug)]
struct BlockRange {
    low: u128,
    spans: bool,
    base: u128,
    block: u128,
}

impl Blocked {
    /// The quotient and remainder of `num` by `D` come from [`Blocked::div_rem`] (a shift
    /// or a 64-bit division): a 128-bit division is a library call, and iDP
    /// microaggregation builds one sampler per cluster.
    fn new(num: u64, den: u64) -> Self {
        let divisor = u128::from(den) * u128::from(BLOCKS);
        let mut blocked = Blocked {
            num,
            divisor,
            quotient: 0,
            remainder: 0,
            narrow: u64::try_from(divisor).ok(),
            shift: divisor.is_power_of_two().then(|| divisor.trailing_zeros()),
        };
        (blocked.quotient, blocked.remainder) = blocked.div_rem(u128::from(num));
        blocked
    }

    /// `(⌊x / D⌋, x mod D)`.
    #[inline]
    fn div_rem(&self, x: u128) -> (u128, u128) {
        match (self.shift, self.narrow, u64::try_from(x)) {
            (Some(shift), _, _) => (x >> shift, x & (self.divisor - 1)),
            (None, Some(divisor), Ok(x)) => (u128::from(x / divisor), u128::from(x % divisor)),
            _ => (x / self.divisor, x % self.divisor),
        }
    }

    /// Block `block` before its offset is drawn; `None` on 128-bit overflow.
    #[inline]
    fn range(&self, block: u64) -> Option<BlockRange> {
        let block = u128::from(block);
        let base = self.remainder.checked_mul(block)?;
        let (whole, rest) = self.div_rem(base);
        Some(BlockRange {
            low: self.quotient.checked_mul(block)?.checked_add(whole)?,
            spans: rest + u128::from(self.num) > self.divisor,
            base,
            block,
        })
    }

    /// The largest magnitude of a block (with the largest offset).
    #[inline]
    fn high(&self, range: BlockRange) -> Option<u128> {
        if !range.spans {
            return Some(range.low);
        }
        let top = range.base.checked_add(u128::from(self.num) - 1)?;
        self.quotient
            .checked_mul(range.block)?
            .checked_add(self.div_rem(top).0)
    }

    /// The magnitude of a block whose range is `range`, drawing the offset if it matters;
    /// `None` on 128-bit overflow.
    #[inline]
    fn resolve(&self, rng: &mut Rng, range: BlockRange) -> Option<u128> {
        if !range.spans {
            return Some(range.low);
        }
        let x = range.base.checked_add(u128::from(self.offset(rng)))?;
        self.quotient
            .checked_mul(range.block)?
            .checked_add(self.div_rem(x).0)
    }

    /// A geometric variate of ratio exp(-den/num) whose block index is drawn from the 63-bit
    /// uniform `top`; `None` on 128-bit overflow.
    #[inline]
    fn magnitude(&self, rng: &mut Rng, top: u64) -> Option<u128> {
        let block = block_index(rng, top);
        let offset = if self.num == 1 { 0 } else { self.offset(rng) };
        self.exact(block, offset)
    }

    /// `⌊(num·block + offset) / D⌋`, the magnitude of block `block` at offset `offset`;
    /// `None` on 128-bit overflow.
    #[inline]
    fn exact(&self, block: u64, offset: u64) -> Option<u128> {
        let block = u128::from(block);
        let low = self
            .remainder
            .checked_mul(block)?
            .checked_add(u128::from(offset))?;
        let low = match (self.shift, u64::try_from(low), u64::try_from(self.divisor)) {
            (Some(shift), _, _) => low >> shift,
            (None, Ok(low), Ok(divisor)) => u128::from(low / divisor),
            _ => low / self.divisor,
        };
        self.quotient.checked_mul(block)?.checked_add(low)
    }

    /// The offset `L` on `[0, num)`, `P(L = l) ∝ exp(-l / (32·num))`: a uniform draw
    /// accepted with Bernoulli(exp(-l / (32·num))) (Algorithm 1 of Canonne et al.).
    #[inline]
    fn offset(&self, rng: &mut Rng) -> u64 {
        let scaled = u128::from(self.num) * u128::from(BLOCKS);
        loop {
            let offset = below_u64(rng, self.num);
            let mut k = 1u64;
            while bernoulli_over_wide(rng, offset, scaled, k) {
                k += 1;
            }
            if k & 1 == 1 {
                return offset;
            }
        }
    }
}

/// Blocks whose first magnitude and remainder [`BlockTable`] stores: every block index the
/// table of block edges yields without a restart.
const TABLED_BLOCKS: usize = 256;

/// Bits of the uniform `U` on `[0, 32·num)` of the offset's first Bernoulli trial that a
/// try carries: `U = q·num + u` with `q` on `[0, 32)`.
const TRIAL_BITS: u32 = 5;

/// How [`BlockTable`] splits a random word into tries, each from the top of
/// `64 / TRIES` bits of the word: the leading `PREFIX` bits of the block index's uniform,
/// the sign, the `q` of the offset's first trial, and the leading bits of the offset.
trait Layout {
    const TRIES: u32;
    const PREFIX: u32;
    /// Bits of a try left for the leading bits of the offset.
    const OFFSET: u32 = 64 / Self::TRIES - Self::PREFIX - 1 - TRIAL_BITS;
}

/// One try per word: a 31-bit prefix (ties about 2^-23) and 27 bits of the offset.
struct WholeWord;

impl Layout for WholeWord {
    const TRIES: u32 = 1;
    const PREFIX: u32 = 31;
}

/// Two tries per word: a 17-bit prefix (ties about 2^-9) and 9 bits of the offset.
struct HalfWord;

impl Layout for HalfWord {
    const TRIES: u32 = 2;
    const PREFIX: u32 = 17;
}

/// Two tries per word without an offset (`num = 1`): a 26-bit prefix (ties about 2^-18).
struct HalfWordBare;

impl Layout for HalfWordBare {
    const TRIES: u32 = 2;
    const PREFIX: u32 = 26;
}

/// The batched sampler of [`Blocked`] for many variates: one random word per variate, or
/// half a word, in nearly every draw.
///
/// For the blocks `J < 256` it stores `low_J = q·J + ⌊r·J / D⌋` and `rest_J = r·J mod D`
/// (`num = q·D + r`), so that the magnitude `⌊(num·J + L) / D⌋` is
/// `low_J + ⌊(rest_J + L) / D⌋`: no multiplication, and a single comparison when
/// `num ≤ D` (scales up to 32). A word, or each half of it ([`Layout`]), is split into
/// independent uniform fields: the leading 31 (17, or 26 when `num = 1`) bits of the
/// block index's uniform
/// ([`block_index_from_prefix`]), the sign, the 5 leading bits `q` of the uniform `U` on
/// `[0, 32·num)` of the offset's first Bernoulli trial, and, when `num = 2^b`, the
/// leading `min(b, 27)` (`min(b, 9)`) bits of the offset `L` itself.
///
/// The offset is accepted when Algorithm 1 of Canonne et al. (Bernoulli(exp(-γ)),
/// `γ = L / (32·num)`) stops after its first trial, Bernoulli(γ): `U < L`. With
/// `U = q·num + u`, `q ≥ 1` gives `U ≥ num > L`, so the trial fails and `L` is accepted
/// (probability 31/32) whatever `u` and the rest of `L` are: they are not drawn. Only when
/// `q = 0` are `u` and the rest of `L` drawn, and the trials continue as in
/// [`Blocked::offset`] (a rejected `L` is replaced by a fresh accepted one). An accepted
/// `L` is uniform on `[0, num)` given its leading bits, so when those bits place
/// `rest_J + L` inside one multiple of `D` the magnitude is known without the remaining
/// bits, and they are drawn only otherwise (probability about `2^(b - 27) / D`, or
/// `2^(b - 9) / D`: half words serve the scales where this is at most 1/32). Each
/// step follows the stated law exactly; bits never looked at do not change the law of
/// what is.
#[derive(Clone, Debug)]
struct BlockTable {
    blocked: Blocked,
    divisor: u64,
    /// `⌊(2^64 - 1) / D⌋`, for the quotients by `D` of numbers below 2^63.
    reciprocal: u64,
    /// `b` when `num = 2^b`.
    offset_bits: Option<u32>,
    low: [u64; TABLED_BLOCKS],
    rest: [u64; TABLED_BLOCKS],
}

impl BlockTable {
    /// The table of `blocked`, or `None` when its numbers do not fit the 64-bit fast path
    /// (`D` or `num` above 2^62, or a magnitude of the tabled blocks beyond `i64`).
    fn new(blocked: &Blocked) -> Option<Self> {
        let divisor = u64::try_from(blocked.divisor).ok()?;
        if divisor > 1 << 62 || blocked.num > 1 << 62 {
            return None;
        }
        let quotient = u64::try_from(blocked.quotient).ok()?;
        let remainder = u64::try_from(blocked.remainder).ok()?;
        let mut low = [0u64; TABLED_BLOCKS];
        let mut rest = [0u64; TABLED_BLOCKS];
        let (mut block_low, mut block_rest) = (0u64, 0u64);
        for (low, rest) in low.iter_mut().zip(&mut rest) {
            (*low, *rest) = (block_low, block_rest);
            block_low = block_low.checked_add(quotient)?;
            block_rest += remainder;
            if block_rest >= divisor {
                block_rest -= divisor;
                block_low = block_low.checked_add(1)?;
            }
        }
        let last = TABLED_BLOCKS - 1;
        let largest = low[last].checked_add((rest[last] + blocked.num - 1) / divisor)?;
        i64::try_from(largest).ok()?;
        Some(BlockTable {
            blocked: *blocked,
            divisor,
            reciprocal: u64::MAX / divisor,
            offset_bits: blocked
                .num
                .is_power_of_two()
                .then(|| blocked.num.trailing_zeros()),
            low,
            rest,
        })
    }

    /// `(⌊x / D⌋, x mod D)` for `x < D + num ≤ 2^63`: one comparison when `num ≤ D`;
    /// otherwise the high word of `x` times [`BlockTable::reciprocal`], which is the
    /// quotient or one less (it errs by less than `x / 2^63 < 1`), and one correction.
    #[inline]
    fn div_rem(&self, x: u64) -> (u64, u64) {
        let whole = if self.blocked.num <= self.divisor {
            0
        } else {
            ((u128::from(x) * u128::from(self.reciprocal)) >> 64) as u64
        };
        let part = x - whole * self.divisor;
        let carry = u64::from(part >= self.divisor);
        (whole + carry, part - carry * self.divisor)
    }

    /// The offset bits a try of layout `L` holds: `(mask, unknown)`, its leading bits
    /// `try & mask` followed by `unknown` bits (`num = 2^b`; `None` otherwise).
    fn split<L: Layout>(&self) -> Option<(u64, u32)> {
        self.offset_bits.map(|bits| {
            let leading = bits.min(L::OFFSET);
            ((1 << leading) - 1, bits - leading)
        })
    }

    /// The magnitude (at most `i64::MAX`) of the try at the top of `word` (layout `L`,
    /// offset bits `split`), further words (rare) from `rng`.
    #[inline(always)]
    fn magnitude<L: Layout>(
        &self,
        rng: &mut Rng,
        word: u64,
        split: Option<(u64, u32)>,
    ) -> Result<u64> {
        let block = block_index_from_prefix(rng, word >> (64 - L::PREFIX), L::PREFIX);
        let (known, width) = match split {
            Some((mask, unknown)) => (
                ((word >> (64 - 64 / L::TRIES)) & mask) << unknown,
                1u64 << unknown,
            ),
            None => (below_u64(rng, self.blocked.num), 1),
        };
        let trial = (word >> (64 - L::PREFIX - 1 - TRIAL_BITS)) & ((1 << TRIAL_BITS) - 1);
        let accepted = self.blocked.num == 1 || trial != 0;
        if let Some((&low, &rest)) = self
            .low
            .get(block as usize)
            .zip(self.rest.get(block as usize))
            && accepted
        {
            let (whole, part) = self.div_rem(rest + known);
            if part + width <= self.divisor {
                return Ok(low + whole);
            }
        }
        self.complete(rng, block, known, width, accepted)
    }

    /// The magnitude once the rest of the offset matters: the offset's remaining bits, the
    /// remainder of its first trial when `accepted` is false, and blocks past the table.
    #[cold]
    #[inline(never)]
    fn complete(
        &self,
        rng: &mut Rng,
        block: u64,
        known: u64,
        width: u64,
        accepted: bool,
    ) -> Result<u64> {
        let mut offset = known;
        if width > 1 {
            offset |= rng.next_u64() & (width - 1);
        }
        if !accepted && !self.rest_of_trials(rng, offset) {
            offset = self.blocked.offset(rng);
        }
        let magnitude = self.blocked.exact(block, offset).ok_or_else(too_large)?;
        u64::try_from(magnitude)
            .ok()
            .filter(|&magnitude| magnitude <= i64::MAX as u64)
            .ok_or_else(too_large)
    }

    /// Whether Algorithm 1 accepts the offset `offset` after a first trial with `q = 0`.
    fn rest_of_trials(&self, rng: &mut Rng, offset: u64) -> bool {
        let num = self.blocked.num;
        let u = match self.offset_bits {
            Some(_) => rng.next_u64() & (num - 1),
            None => below_u64(rng, num),
        };
        if u >= offset {
            return true;
        }
        let scaled = u128::from(num) * u128::from(BLOCKS);
        let mut k = 2u64;
        while bernoulli_over_wide(rng, offset, scaled, k) {
            k += 1;
        }
        k & 1 == 1
    }

    /// Fills `out` with `DLap(num/den)` variates: the words of a batch are drawn first and
    /// the rare further words after each of them; a negative zero is rejected by writing
    /// its slot again, so no branch depends on the sign. Half words serve the scales whose
    /// offset is drawn whole (`num` not a power of two), or whose 9 leading offset bits
    /// settle the magnitude in all but at most 1/32 of the draws.
    fn fill(&self, rng: &mut Rng, out: &mut [i64]) -> Result<()> {
        let halves = match self.offset_bits {
            None => true,
            Some(bits) => {
                bits <= HalfWord::OFFSET
                    || (1u128 << (bits - HalfWord::OFFSET)) * u128::from(BLOCKS)
                        <= u128::from(self.divisor)
            }
        };
        if self.blocked.num == 1 {
            self.fill_from::<HalfWordBare>(rng, out)
        } else if halves {
            self.fill_from::<HalfWord>(rng, out)
        } else {
            self.fill_from::<WholeWord>(rng, out)
        }
    }

    /// [`BlockTable::fill`] with the tries of layout `L`.
    #[inline(always)]
    fn fill_from<L: Layout>(&self, rng: &mut Rng, out: &mut [i64]) -> Result<()> {
        const BATCH: usize = 64;
        let split = self.split::<L>();
        let mut words = [0u64; BATCH];
        let mut filled = 0;
        while filled < out.len() {
            words.iter_mut().for_each(|word| *word = rng.next_u64());
            for &word in &words {
                for index in 0..L::TRIES {
                    let word = word << (64 / L::TRIES * index);
                    let magnitude = self.magnitude::<L>(rng, word, split)?;
                    let negative = (word >> (63 - L::PREFIX)) & 1;
                    let flip = 0u64.wrapping_sub(negative);
                    out[filled] = (magnitude ^ flip).wrapping_add(negative) as i64;
                    filled += usize::from((negative == 0) | (magnitude != 0));
                    if filled == out.len() {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }
}

/// A discrete Laplace distribution of exact rational scale, ready to sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiscreteLaplace {
    scale: Rational,
    blocked: Option<Blocked>,
}

/// The number of block indices that one random word can decide (the half edges).
const DECIDED_BLOCKS: u64 = 256;

/// The block indices that [`DiscreteLaplace::sample_above`] rejects for one threshold
/// without looking further.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rejections {
    /// Positive draws of a block below this index are rejected.
    positive_below: u64,
    /// Negative draws of a block at or above this index (below [`DECIDED_BLOCKS`]) are
    /// rejected.
    negative_from: u64,
}

impl Rejections {
    /// No block is known to be rejected.
    const NONE: Rejections = Rejections {
        positive_below: 0,
        negative_from: DECIDED_BLOCKS,
    };
}

/// [`DiscreteLaplace::sample_above`] for one threshold, prepared by
/// [`DiscreteLaplace::above`]: a sampler that compares many draws with one threshold
/// (the cells of one count in a thresholded histogram) finds once the blocks that the
/// threshold rejects outright, and a draw whose first word alone decides its block
/// (nearly all) and falls in one of them is rejected after a table look-up.
#[derive(Clone, Copy, Debug)]
pub struct Above {
    dist: DiscreteLaplace,
    threshold: i128,
    rejections: Rejections,
}

impl Above {
    /// As [`DiscreteLaplace::sample_above`] with this threshold: every draw consumes the
    /// same random words and gives the same value.
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the variate does not fit in an `i128`.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> Result<Option<i128>> {
        self.dist
            .sample_above_with(rng, self.threshold, &self.rejections)
    }
}

fn too_large() -> Error {
    Error::InvalidData("a discrete Laplace variate exceeds the int64 range".to_string())
}

impl DiscreteLaplace {
    /// `DLap(sensitivity / epsilon)`: `P(Z = z) ∝ exp(-|z| · epsilon / sensitivity)`, with
    /// the exact values of the two doubles.
    ///
    /// # Errors
    /// See [`Rational::from_ratio`].
    pub fn new(sensitivity: f64, epsilon: f64) -> Result<Self> {
        Ok(Self::from_scale(Rational::from_ratio(
            sensitivity,
            epsilon,
        )?))
    }

    /// `DLap(scale)` for an exact rational scale.
    pub fn from_scale(scale: Rational) -> Self {
        let blocked = match (u64::try_from(scale.num), u64::try_from(scale.den)) {
            (Ok(num), Ok(den)) => Some(Blocked::new(num, den)),
            _ => None,
        };
        DiscreteLaplace { scale, blocked }
    }

    /// The exact scale `t`.
    pub fn scale(&self) -> Rational {
        self.scale
    }

    /// A geometric variate `Y ≥ 0` with `P(Y = y) ∝ exp(-y / t)`.
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the variate does not fit in 128 bits (probability below
    /// exp(-2^64) for any scale that fits in 64 bits).
    #[inline]
    pub fn geometric(&self, rng: &mut Rng) -> Result<u128> {
        let Rational { num, den } = self.scale;
        let value = match &self.blocked {
            Some(blocked) => {
                let top = rng.next_u64() >> 1;
                blocked.magnitude(rng, top)
            }
            None => geometric::<u128>(rng, num, den),
        };
        value.ok_or_else(too_large)
    }

    /// One `DLap(t)` variate (Algorithm 2 of Canonne et al.: a fair sign and a geometric
    /// magnitude, a negative zero rejected).
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the variate does not fit in an `i64`.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> Result<i64> {
        loop {
            let (magnitude, negative) = match &self.blocked {
                Some(blocked) => {
                    let word = rng.next_u64();
                    let magnitude = blocked.magnitude(rng, word >> 1).ok_or_else(too_large)?;
                    (magnitude, word & 1 == 1)
                }
                None => (self.geometric(rng)?, rng.next_u32() & 1 == 1),
            };
            if negative && magnitude == 0 {
                continue;
            }
            let magnitude = i64::try_from(magnitude).map_err(|_| too_large())?;
            return Ok(if negative { -magnitude } else { magnitude });
        }
    }

    /// A variate `Z` of `DLap(t)` if `Z > threshold`, else `None`.
    ///
    /// The output is a function of one [`DiscreteLaplace::sample`] draw, but the offset
    /// inside a block is drawn only when the block alone does not decide the comparison
    /// (most draws when `threshold` is many scales away from 0): a thresholded release
    /// pays about one random word for a cell it does not keep.
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the variate does not fit in an `i128`.
    #[inline]
    pub fn sample_above(&self, rng: &mut Rng, threshold: i128) -> Result<Option<i128>> {
        self.sample_above_with(rng, threshold, &Rejections::NONE)
    }

    /// [`DiscreteLaplace::sample_above`] prepared for one `threshold` ([`Above`]).
    pub fn above(&self, threshold: i128) -> Above {
        Above {
            dist: *self,
            threshold,
            rejections: self.rejections(threshold),
        }
    }

    /// The blocks whose every value is at or below `threshold`.
    fn rejections(&self, threshold: i128) -> Rejections {
        let Some(blocked) = &self.blocked else {
            return Rejections::NONE;
        };
        let at_most = |magnitude: u128, negative: bool| {
            i128::try_from(magnitude).is_ok_and(|m| (if negative { -m } else { m }) <= threshold)
        };
        // A positive block's largest value grows with its index, and so does the smallest
        // magnitude of a negative block: both tests change once over the indices.
        let positive = |block: u64| {
            blocked
                .range(block)
                .and_then(|range| blocked.high(range))
                .is_some_and(|high| at_most(high, false))
        };
        let negative = |block: u64| {
            blocked
                .range(block)
                .is_some_and(|range| range.low > 0 && at_most(range.low, true))
        };
        let last = DECIDED_BLOCKS - 1;
        let first_not = |test: &dyn Fn(u64) -> bool| {
            let (mut low, mut high) = (0u64, DECIDED_BLOCKS);
            while low < high {
                let mid = (low + high) / 2;
                if test(mid) {
                    low = mid + 1;
                } else {
                    high = mid;
                }
            }
            low
        };
        Rejections {
            positive_below: first_not(&positive),
            negative_from: if negative(last) {
                first_not(&|block| !negative(block))
            } else {
                DECIDED_BLOCKS
            },
        }
    }

    /// [`DiscreteLaplace::sample_above`] with `rejections`, the blocks that `threshold`
    /// rejects outright (or fewer).
    #[inline]
    fn sample_above_with(
        &self,
        rng: &mut Rng,
        threshold: i128,
        rejections: &Rejections,
    ) -> Result<Option<i128>> {
        let Some(blocked) = &self.blocked else {
            let z = i128::from(self.sample(rng)?);
            return Ok((z > threshold).then_some(z));
        };
        loop {
            let word = rng.next_u64();
            if let Some(block) = decided_block_index(word >> 1) {
                let rejected = if word & 1 == 1 {
                    block >= rejections.negative_from
                } else {
                    block < rejections.positive_below
                };
                if rejected {
                    return Ok(None);
                }
            }
            let range = blocked
                .range(block_index(rng, word >> 1))
                .ok_or_else(too_large)?;
            let negative = word & 1 == 1;
            let signed = |magnitude: u128| {
                let magnitude = i128::try_from(magnitude).map_err(|_| too_large())?;
                Ok::<_, Error>(if negative { -magnitude } else { magnitude })
            };
            // A negative block with magnitudes above 0 cannot be rejected, so its largest
            // value is that of its smallest magnitude.
            let best = if negative {
                range.low
            } else {
                blocked.high(range).ok_or_else(too_large)?
            };
            if (range.low > 0 || !negative) && signed(best)? <= threshold {
                return Ok(None);
            }
            let magnitude = blocked.resolve(rng, range).ok_or_else(too_large)?;
            if negative && magnitude == 0 {
                continue;
            }
            let z = signed(magnitude)?;
            return Ok((z > threshold).then_some(z));
        }
    }

    /// One variate of `Z ~ DLap(t)` conditioned on `Z > threshold`.
    ///
    /// For `threshold ≥ -1` this is `threshold + 1 + Y` with `Y` geometric of ratio
    /// exp(-1/t) (the tail is memoryless); below that, rejection from `DLap(t)`, which
    /// accepts with probability > 1/2.
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the variate does not fit in an `i64`.
    #[inline]
    pub fn sample_tail(&self, rng: &mut Rng, threshold: i64) -> Result<i64> {
        i64::try_from(self.sample_tail_wide(rng, i128::from(threshold))?).map_err(|_| too_large())
    }

    /// As [`DiscreteLaplace::sample_tail`] for a threshold and result in 128 bits (the
    /// thresholds of a grid in units).
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the variate does not fit in an `i128`.
    #[inline]
    pub fn sample_tail_wide(&self, rng: &mut Rng, threshold: i128) -> Result<i128> {
        if threshold >= -1 {
            let excess = i128::try_from(self.geometric(rng)?).map_err(|_| too_large())?;
            return threshold
                .checked_add(1)
                .and_then(|start| start.checked_add(excess))
                .ok_or_else(too_large);
        }
        loop {
            let z = i128::from(self.sample(rng)?);
            if z > threshold {
                return Ok(z);
            }
        }
    }

    /// `n` variates in parallel (same output for any thread count).
    ///
    /// # Errors
    /// [`Error::OutputTooLarge`] when the output cannot be allocated; [`Error::InvalidData`]
    /// when a variate does not fit in an `i64`.
    pub fn samples(&self, n: usize, seed: &Seed) -> Result<Vec<i64>> {
        let mut out = zeroed_vec(n, "discrete laplace samples")?;
        self.fill(&mut out, seed)?;
        Ok(out)
    }

    /// Fills `out` with variates in parallel (same output for any thread count): chunk
    /// `i` of [`CHUNK`](crate::rng::CHUNK) values from stream `i` of `seed`.
    ///
    /// Scales `1/den` (no offset to draw, and a negative zero rejected in nearly a third of
    /// the draws or more) go through the batched, branch-free [`Blocked::fill`]; larger
    /// scales measured faster one variate at a time.
    fn fill(&self, out: &mut [i64], seed: &Seed) -> Result<()> {
        match self.blocked.as_ref().and_then(BlockTable::new) {
            Some(table) => try_fill_chunks(out, seed, |rng, _, chunk| table.fill(rng, chunk)),
            None => try_fill_chunked(out, seed, |rng, _| self.sample(rng)),
        }
    }

    /// `values[i]` plus the variate [`DiscreteLaplace::samples`] draws at `i` for the same
    /// seed, saturating at the bounds of `i64`, in parallel: each chunk's noise is added
    /// while it is in the cache.
    ///
    /// # Errors
    /// As [`DiscreteLaplace::samples`].
    pub fn add_to(&self, values: &[i64], seed: &Seed) -> Result<Vec<i64>> {
        let mut out = zeroed_vec(values.len(), "discrete laplace noisy values")?;
        match self.blocked.as_ref().and_then(BlockTable::new) {
            Some(table) => try_fill_chunks(&mut out, seed, |rng, start, chunk| {
                table.fill(rng, chunk)?;
                for (noisy, &value) in chunk.iter_mut().zip(&values[start..]) {
                    *noisy = value.saturating_add(*noisy);
                }
                Ok(())
            }),
            None => try_fill_chunked(&mut out, seed, |rng, i| {
                Ok(values[i].saturating_add(self.sample(rng)?))
            }),
        }?;
        Ok(out)
    }

    /// `n` variates of the tail `Z > threshold`, in parallel.
    ///
    /// # Errors
    /// As [`DiscreteLaplace::samples`].
    pub fn tail_samples(&self, n: usize, threshold: i64, seed: &Seed) -> Result<Vec<i64>> {
        let mut out = alloc_output(n, "discrete laplace tail samples")?;
        try_fill_chunked(&mut out, seed, |rng, _| self.sample_tail(rng, threshold))?;
        Ok(out)
    }
}

/// `n` variates of `DLap(sensitivity / epsilon)`, in parallel (see [`DiscreteLaplace`]).
///
/// # Errors
/// The errors of [`DiscreteLaplace::new`] and [`DiscreteLaplace::samples`].
pub fn discrete_laplace_samples(
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    seed: &Seed,
) -> Result<Vec<i64>> {
    DiscreteLaplace::new(sensitivity, epsilon)?.samples(n, seed)
}

/// `n` variates of `DLap(sensitivity / epsilon)` conditioned on `Z > threshold`.
///
/// # Errors
/// The errors of [`DiscreteLaplace::new`] and [`DiscreteLaplace::tail_samples`].
pub fn discrete_laplace_tail_samples(
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    threshold: i64,
    seed: &Seed,
) -> Result<Vec<i64>> {
    DiscreteLaplace::new(sensitivity, epsilon)?.tail_samples(n, threshold, seed)
}

/// The discrete Laplace mechanism: `values[i] + DLap(sensitivity / epsilon)` for every `i`,
/// each sum beyond the `i64` range set to the bound it passed.
///
/// The noise of value `i` is that of [`discrete_laplace_samples`] at index `i` for the
/// same seed, added in parallel chunks (a serial numpy addition with its overflow checks
/// took a third of the mechanism's time on two threads).
///
/// # Privacy
/// When `values` is an integer query of L1 sensitivity `sensitivity`, the output is
/// `epsilon`-differentially private: `P(Z = z) ∝ exp(-|z| · epsilon / sensitivity)` holds
/// exactly (integer sampling, Canonne, Kamath & Steinke 2020), so no floating-point
/// artefact weakens the guarantee (Mironov 2012). Saturating at the bounds is a function
/// of the noisy value alone (post-processing).
///
/// # Errors
/// [`Error::InvalidParameter`] for a bad `sensitivity`/`epsilon` (see
/// [`Rational::from_ratio`]); [`Error::OutputTooLarge`]; [`Error::Interrupted`].
pub fn add_discrete_laplace(
    values: &[i64],
    sensitivity: f64,
    epsilon: f64,
    seed: &Seed,
) -> Result<Vec<i64>> {
    DiscreteLaplace::new(sensitivity, epsilon)?.add_to(values, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_above_the_largest_threshold_is_an_error_not_a_panic() {
        let dist = DiscreteLaplace::new(1.0, 1.0).expect("valid scale");
        let mut rng = Seed::from_u64(3).stream(0);
        assert!(matches!(
            dist.sample_tail(&mut rng, i64::MAX),
            Err(Error::InvalidData(_))
        ));
        assert!(dist.sample_tail(&mut rng, i64::MAX - 1_000_000).is_ok());
    }
    use crate::noise::test_util::{in_pool, moments, seed};
    use crate::rng::CHUNK;

    /// The shift and 64-bit paths of the block split equal the 128-bit division, for
    /// divisors that are powers of two or not, below and above `2^64`.
    #[test]
    fn block_split_equals_the_wide_division() {
        let mut rng = seed(41).stream(0);
        let dens = [
            1,
            2,
            3,
            7,
            1 << 20,
            (1 << 20) + 1,
            1 << 58,
            (1 << 58) + 3,
            1 << 59,
        ]
        .into_iter()
        .chain([u64::MAX, u64::MAX - 1, (1 << 63) + 5]);
        for den in dens {
            for num in [
                0,
                1,
                31,
                32,
                33,
                u64::MAX,
                rng.next_u64(),
                rng.next_u64() >> 30,
            ] {
                let blocked = Blocked::new(num, den);
                let divisor = u128::from(den) * u128::from(BLOCKS);
                assert_eq!(blocked.divisor, divisor);
                assert_eq!(blocked.quotient, u128::from(num) / divisor, "{num} / {den}");
                assert_eq!(
                    blocked.remainder,
                    u128::from(num) % divisor,
                    "{num} % {den}"
                );
            }
        }
    }

    #[test]
    fn scale_is_the_exact_ratio() {
        assert_eq!(
            Rational::from_ratio(1.0, 0.5).unwrap(),
            Rational { num: 2, den: 1 }
        );
        assert_eq!(
            Rational::from_ratio(3.0, 0.75).unwrap(),
            Rational { num: 4, den: 1 }
        );
        // 0.1 is 3602879701896397 / 2^55.
        assert_eq!(
            Rational::from_ratio(1.0, 0.1).unwrap(),
            Rational {
                num: 1 << 55,
                den: 3_602_879_701_896_397
            }
        );
        let r = Rational::from_ratio(2.0, 3.0).unwrap();
        assert_eq!((r.num, r.den), (2, 3));
        assert!(Rational::from_ratio(1e300, 1e-300).is_err());
        assert!(Rational::from_ratio(f64::MIN_POSITIVE, 1.0).is_err());
        assert!(Rational::from_ratio(1.0, 0.0).is_err());
        assert!(Rational::from_ratio(-1.0, 1.0).is_err());
        assert_eq!(Rational::new(6, 4).unwrap(), Rational { num: 3, den: 2 });
        assert!(Rational::new(0, 4).is_err());
    }

    /// Frequencies of `z` in `0..=4` against the exact pmf (exp computed here in f64).
    fn check_pmf(samples: &[i64], t: f64) {
        let n = samples.len() as f64;
        let q = (-1.0 / t).exp();
        let norm = (1.0 - q) / (1.0 + q);
        for z in -3i64..=3 {
            let p = norm * q.powi(z.unsigned_abs() as i32);
            let observed = samples.iter().filter(|&&s| s == z).count() as f64 / n;
            let sd = (p * (1.0 - p) / n).sqrt();
            assert!(
                (observed - p).abs() <= 6.0 * sd,
                "z={z} t={t} {observed} vs {p}"
            );
        }
    }

    #[test]
    fn pmf_matches_for_several_scales() {
        for (sens, eps) in [(1.0, 1.0), (1.0, 0.3), (2.0, 5.0), (1.0, 1e-3), (3.0, 1e3)] {
            let dist = DiscreteLaplace::new(sens, eps).unwrap();
            let samples = dist.samples(200_000, &seed(11)).unwrap();
            check_pmf(&samples, sens / eps);
        }
    }

    #[test]
    fn prepared_rejections_change_no_draw_and_no_word_consumed() {
        // Scales with and without a power-of-two divisor, a unit scale and the grid noise's
        // 2^40 + 1; thresholds far above and below 0, near it, and inside block 0.
        let scales = [
            Rational::new(2, 1).unwrap(),
            Rational::new(7, 3).unwrap(),
            Rational::new(1, 1).unwrap(),
            Rational::new(1000, 7).unwrap(),
            Rational::new((1 << 40) + 1, 1).unwrap(),
        ];
        for scale in scales {
            let dist = DiscreteLaplace::from_scale(scale);
            let t = scale.to_f64();
            for multiple in [-40.0, -3.0, -0.02, 0.0, 0.01, 0.5, 2.0, 13.0, 40.0] {
                let threshold = (multiple * t) as i128;
                let above = dist.above(threshold);
                let (mut plain, mut prepared) = (seed(5).stream(1), seed(5).stream(1));
                let mut kept = 0;
                for _ in 0..20_000 {
                    let expected = dist.sample_above(&mut plain, threshold).unwrap();
                    let got = above.sample(&mut prepared).unwrap();
                    assert_eq!(got, expected, "scale {t}, threshold {threshold}");
                    kept += usize::from(got.is_some());
                }
                assert_eq!(plain.next_u64(), prepared.next_u64(), "same words consumed");
                if multiple >= 2.0 {
                    assert!(
                        kept < 20_000 / 4,
                        "scale {t}, threshold {threshold}: {kept}"
                    );
                    assert_ne!(above.rejections, Rejections::NONE, "scale {t}");
                }
            }
        }
    }

    #[test]
    fn sample_above_keeps_the_law_of_the_tail() {
        // P(Z ≥ k) = q^k / (1 + q) for k ≥ 1: the kept fraction and the pmf of the first
        // kept values, with and without a lazily drawn offset (t = 10 and 0.7 are below
        // 32, t = 200 above; 1 + 2^40 needs the offset in every block).
        let scales = [
            (1.0, 0.1, 3),
            (0.7, 1.0, 0),
            (2.0, 0.01, 40),
            (1.0, 0.1, -4),
        ];
        for (sens, eps, threshold) in scales {
            let dist = DiscreteLaplace::new(sens, eps).unwrap();
            check_tail(&dist, sens / eps, threshold);
        }
        let huge = DiscreteLaplace::from_scale(Rational::new((1 << 40) + 1, 1).unwrap());
        check_tail(&huge, huge.scale().to_f64(), 1 << 41);
    }

    fn check_tail(dist: &DiscreteLaplace, t: f64, threshold: i64) {
        let n = 200_000;
        let mut rng = seed(21).stream(0);
        let kept: Vec<i128> = (0..n)
            .filter_map(|_| dist.sample_above(&mut rng, i128::from(threshold)).unwrap())
            .collect();
        assert!(kept.iter().all(|&z| z > i128::from(threshold)));
        let q = (-1.0 / t).exp();
        let at_least = |k: i64| {
            if k >= 1 {
                q.powi(k as i32) / (1.0 + q)
            } else {
                1.0 - q.powi(1 - k as i32) / (1.0 + q)
            }
        };
        // Six standard deviations: a false failure has probability below 1e-8 per check.
        let within = |observed: usize, p: f64| {
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            (observed as f64 - n as f64 * p).abs() <= 6.0 * sd + 1.0
        };
        let p_kept = if t > 1e6 {
            0.5 * (-(threshold as f64) / t).exp()
        } else {
            at_least(threshold + 1)
        };
        assert!(
            within(kept.len(), p_kept),
            "t={t} {} vs {p_kept}",
            kept.len()
        );
        if t < 1e6 {
            for z in threshold + 1..=threshold + 3 {
                let p = at_least(z) - at_least(z + 1);
                let observed = kept.iter().filter(|&&v| v == i128::from(z)).count();
                assert!(within(observed, p), "t={t} z={z} {observed} vs {p}");
            }
        }
    }

    #[test]
    fn wide_scale_uses_128_bits_and_keeps_moments() {
        // A scale whose fraction needs more than 64 bits: (2^70 + 1) / (3 · 2^60).
        let dist = DiscreteLaplace::from_scale(Rational::new((1 << 70) + 1, 3 << 60).unwrap());
        assert!(dist.blocked.is_none());
        let samples = dist.samples(100_000, &seed(12)).unwrap();
        let t = dist.scale().to_f64();
        let (mean, var) = moments(samples.iter().map(|&s| s as f64));
        assert!(mean.abs() < 0.05 * t, "{mean}");
        // Var of DLap(t) is 2q/(1-q)^2, about 2t^2 for large t.
        assert!((var / (2.0 * t * t) - 1.0).abs() < 0.05, "{var} {t}");
    }

    #[test]
    fn tail_is_shifted_geometric() {
        let dist = DiscreteLaplace::new(1.0, 0.5).unwrap();
        let tail = dist.tail_samples(200_000, 5, &seed(13)).unwrap();
        assert!(tail.iter().all(|&z| z > 5));
        let q = (-0.5f64).exp();
        let mean = tail.iter().map(|&z| (z - 6) as f64).sum::<f64>() / tail.len() as f64;
        let expected = q / (1.0 - q);
        assert!((mean / expected - 1.0).abs() < 0.02, "{mean} {expected}");
        let below = dist.tail_samples(50_000, -3, &seed(14)).unwrap();
        assert!(below.iter().all(|&z| z > -3));
        assert!(below.contains(&-2));
        let overflow = dist.tail_samples(10, i64::MAX - 1, &seed(15));
        assert!(matches!(overflow, Err(Error::InvalidData(_))));
    }

    #[test]
    fn deterministic_and_thread_independent() {
        let values: Vec<i64> = (0..(2 * CHUNK as i64 + 9)).collect();
        let a = in_pool(1, || {
            add_discrete_laplace(&values, 1.0, 0.7, &seed(3)).unwrap()
        });
        let b = in_pool(2, || {
            add_discrete_laplace(&values, 1.0, 0.7, &seed(3)).unwrap()
        });
        assert_eq!(a, b);
        assert_ne!(
            a,
            add_discrete_laplace(&values, 1.0, 0.7, &seed(4)).unwrap()
        );
    }

    #[test]
    fn sums_beyond_the_int64_range_saturate_and_equal_the_samples_added() {
        // Scale 10^12 draws one variate at a time, scale 1 by blocks; several chunks, so
        // each chunk's values must meet its own noise.
        for (sensitivity, epsilon) in [(1e6, 1e-6), (1.0, 1.0)] {
            let values: Vec<i64> = (0..3 * CHUNK as i64 + 5)
                .map(|i| match i % 4 {
                    0 => i64::MAX,
                    1 => i64::MIN,
                    2 => i,
                    _ => -i,
                })
                .collect();
            let out = add_discrete_laplace(&values, sensitivity, epsilon, &seed(1)).expect("added");
            let noise = discrete_laplace_samples(values.len(), sensitivity, epsilon, &seed(1))
                .expect("noise");
            for ((&value, &noise), &got) in values.iter().zip(&noise).zip(&out) {
                let exact = (i128::from(value) + i128::from(noise))
                    .clamp(i128::from(i64::MIN), i128::from(i64::MAX));
                assert_eq!(i128::from(got), exact, "{value} + {noise}");
            }
            assert!(out.contains(&i64::MAX) && out.contains(&i64::MIN));
        }
    }

    #[test]
    fn seeded_samplers_are_the_distribution_s_samples() {
        let dist = DiscreteLaplace::new(2.0, 0.5).unwrap();
        assert_eq!(
            discrete_laplace_samples(100, 2.0, 0.5, &seed(4)),
            dist.samples(100, &seed(4))
        );
        assert_eq!(
            discrete_laplace_tail_samples(100, 2.0, 0.5, 3, &seed(4)),
            dist.tail_samples(100, 3, &seed(4))
        );
        for epsilon in [0.0, f64::NAN] {
            assert!(matches!(
                discrete_laplace_samples(1, 1.0, epsilon, &seed(4)),
                Err(Error::InvalidParameter { .. })
            ));
            assert!(discrete_laplace_tail_samples(1, 1.0, epsilon, 0, &seed(4)).is_err());
        }
    }
}
