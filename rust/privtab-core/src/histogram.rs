//! Thresholded differentially private histograms over product domains of up to 2^64 cells
//! (Vinterbo 2012, "Differentially private projected histograms", §2.1).
//!
//! The released histogram adds noise `L ~ Lap(0, 2/ε)` (or the discrete Laplace of the same
//! scale) to the count of *every* cell of the declared domain and keeps the cells whose
//! noisy value exceeds a threshold τ. The domain is never enumerated:
//!
//! 1. rows become mixed-radix keys, a cache-sized block at a time, and are counted
//!    ([`count_rows`]: each block's keys split into buckets by their leading bits, each
//!    bucket counted on its own in a small hash table, all in parallel): the `n'`
//!    observed cells;
//! 2. each observed cell gets its own noise and is kept if its noisy value exceeds τ;
//! 3. every empty cell has the same chance `p = P(L > τ)` of being kept, so the number of
//!    kept empty cells is `q ~ Binomial(m − n', p)`; `q` ranks are drawn uniformly without
//!    replacement from `[0, m − n')` ([`sample_distinct`]) and mapped to the empty keys of
//!    those ranks by one merge with the sorted observed keys;
//! 4. a kept empty cell's value is `L` conditioned on `L > τ`: `⌊τ⌋ + 1 + Geometric` (the
//!    discrete Laplace tail is memoryless).
//!
//! Both noises are exact discrete Laplace noise: on the integers for [`Noise::Discrete`],
//! on a power-of-two grid of step about `2^-40 · 2/ε` for [`Noise::Laplace`]
//! ([`GridLaplace`]), so no released value carries a floating-point side channel
//! (Mironov 2012). Counts, noise and τ are compared in grid units, exactly.
//!
//! Time is O(n·d + n' + q log q) and memory O(n + n' + q), whatever the domain size `m`.

use crate::columns::{Code, Columns, check_table, check_table_shape};
use crate::counts::{
    SparseCounts, count_columns_of_rows, radix_sort, radix_sort_above, run_lengths,
};
use crate::encode::{RowEncoder, check_domain};
use crate::error::check_positive_finite;
use crate::noise::{Above, Binomial, DiscreteLaplace, GridLaplace, sample_distinct};
use crate::resources::alloc_output;
use crate::rng::{Rng, Seed, try_fill_chunked, try_filter_chunked};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// Sub-seed tags: each random step of the construction has its own key.
const TAG_OBSERVED: u64 = 1;
const TAG_BINOMIAL: u64 = 2;
const TAG_EMPTY_KEYS: u64 = 3;
const TAG_EMPTY_VALUES: u64 = 4;

/// Thresholds at or beyond this magnitude are rejected: released values must stay exact
/// integers in a `f64` under discrete noise, and `floor(τ)` must fit an `i64`.
pub const MAX_THRESHOLD: f64 = 9_007_199_254_740_992.0; // 2^53

/// The smallest ε of [`Noise::Discrete`]: the scale 2/ε is then at most 2^47.
pub const MIN_DISCRETE_EPSILON: f64 = 1.0 / 70_368_744_177_664.0; // 2^-46

/// The noise added to every cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Noise {
    /// Laplace noise `Lap(0, 2/ε)` (Proposition 1 of the paper), released without a
    /// floating-point side channel: exact discrete Laplace noise on a power-of-two grid
    /// ([`GridLaplace`]), so a released value is a multiple of the grid step `2^k ≈
    /// 2^-40 · 2/ε` and the noise scale exceeds `2/ε` by a relative `2^-39` at most.
    Laplace,
    /// The exact discrete Laplace distribution `P(Z = z) ∝ exp(−|z|·ε/2)`, sampled with
    /// integer arithmetic (Canonne, Kamath & Steinke 2020).
    Discrete,
}

impl std::str::FromStr for Noise {
    type Err = Error;

    /// `"laplace"` or `"discrete"`.
    fn from_str(name: &str) -> Result<Self> {
        match name {
            "laplace" => Ok(Noise::Laplace),
            "discrete" => Ok(Noise::Discrete),
            _ => Err(Error::parameter(
                "noise",
                format!("{name:?}"),
                "must be 'laplace' or 'discrete'",
            )),
        }
    }
}

/// A released histogram: the kept cells, sorted by key, and their noisy values.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    /// Mixed-radix keys of the kept cells (first column most significant), strictly
    /// increasing.
    pub keys: Vec<u64>,
    /// The noisy value of each kept cell, all above the threshold (integers under
    /// [`Noise::Discrete`], multiples of the grid step under [`Noise::Laplace`]).
    pub values: Vec<f64>,
}

/// The noise of one histogram, validated once. Both noises are discrete Laplace noise on a
/// grid of step `2^exponent` (the integers under [`Noise::Discrete`]); counts, noise and
/// the threshold are compared in grid units, exactly.
#[derive(Clone, Copy, Debug)]
struct Sampler {
    dist: DiscreteLaplace,
    grid: Option<GridLaplace>,
    /// `⌊τ / 2^exponent⌋`: a cell is kept iff its noisy value in units exceeds it.
    floor: i128,
}

impl Sampler {
    fn new(epsilon: f64, threshold: f64, noise: Noise) -> Result<Self> {
        check_positive_finite("epsilon", epsilon)?;
        if !(threshold.is_finite() && threshold.abs() < MAX_THRESHOLD) {
            return Err(Error::parameter(
                "threshold",
                threshold,
                "must be finite with |threshold| < 2**53",
            ));
        }
        Ok(match noise {
            Noise::Laplace => {
                // Neighbouring histograms differ in at most two cells.
                let grid = GridLaplace::new(2.0, epsilon, 2)?;
                // Thresholds and counts are compared in grid units, i128 with room for
                // 2^120 steps: only a huge ε (a tiny step) with a large |τ| leaves none.
                let floor = grid.floor_units(threshold).map_err(|_| {
                    Error::parameter(
                        "threshold",
                        threshold,
                        "must be below 2^120 steps of the noise grid (2^-40 of the scale \
                         2/epsilon); lower the threshold or epsilon",
                    )
                })?;
                Sampler {
                    dist: grid.unit_noise(),
                    grid: Some(grid),
                    floor,
                }
            }
            Noise::Discrete => {
                // Noisy counts are released as f64: a scale 2/ε ≤ 2^47 keeps them exact
                // integers (below 2^53) but with probability about exp(−64).
                if epsilon < MIN_DISCRETE_EPSILON {
                    return Err(Error::parameter(
                        "epsilon",
                        epsilon,
                        "must be >= 2**-46 with discrete noise, so that noisy counts stay \
                         exact integers in a float64",
                    ));
                }
                Sampler {
                    dist: DiscreteLaplace::new(2.0, epsilon)?,
                    grid: None,
                    // |threshold| < 2^53, so the floor is exact.
                    floor: threshold.floor() as i128,
                }
            }
        })
    }

    /// Checks that counts up to `n_rows` (public) fit the grid units: a huge ε (a grid
    /// step below `2^-120·n`) leaves no room for them.
    fn check_counts(&self, n_rows: usize, epsilon: f64) -> Result<()> {
        match self.grid {
            Some(grid) if grid.floor_units(n_rows as f64).is_err() => Err(Error::parameter(
                "epsilon",
                epsilon,
                "is too large for Laplace noise on this many rows: counts must fit 2^120 \
                 steps of the noise grid (2^-40 of the scale 2/epsilon)",
            )),
            _ => Ok(()),
        }
    }

    /// `P(noise > τ)`: the probability that an empty cell is kept.
    fn keep_probability(&self) -> f64 {
        // P(Z ≥ k) = q^k / (1 + q) for k ≥ 1, q = exp(−1/t); Z > τ ⟺ Z ≥ floor + 1.
        let scale = self.dist.scale();
        let log_q = -(scale.den as f64 / scale.num as f64);
        let log_norm = log_q.exp().ln_1p();
        let floor = self.floor as f64;
        if self.floor >= -1 {
            ((floor + 1.0) * log_q - log_norm).exp()
        } else {
            -((-floor) * log_q - log_norm).exp_m1()
        }
    }

    /// A count in grid units (exact: a count is at most the number of rows, far below
    /// 2^53).
    fn units(&self, count: u64) -> Result<i128> {
        match self.grid {
            Some(grid) => grid.to_units(count as f64),
            None => Ok(i128::from(count)),
        }
    }

    /// The noise that lifts a cell of count `c` above τ, prepared for each count
    /// `c < counts` ([`Above`]): most observed cells have small counts, and most of their
    /// draws are then rejected after one random word and a look-up.
    fn prepared(&self, counts: u64) -> Result<Vec<Above>> {
        (0..counts)
            .map(|count| Ok(self.dist.above(self.floor - self.units(count)?)))
            .collect()
    }

    /// The noisy value of a cell with true count `count`, in grid units, or `None` when it
    /// does not exceed τ (then the exact value is never needed, and mostly never
    /// drawn: [`DiscreteLaplace::sample_above`]); `prepared` is [`Sampler::prepared`] for
    /// the small counts, which gives the same draws faster (and needs the count in grid
    /// units only for a cell it keeps).
    #[inline]
    fn noisy(&self, rng: &mut Rng, count: u64, prepared: &[Above]) -> Result<Option<i128>> {
        let noise = match usize::try_from(count).ok().and_then(|c| prepared.get(c)) {
            Some(above) => above.sample(rng)?,
            None => self
                .dist
                .sample_above(rng, self.floor - self.units(count)?)?,
        };
        noise.map(|z| Ok(self.units(count)? + z)).transpose()
    }

    /// A noise value conditioned on exceeding τ, in grid units: the value of a kept empty
    /// cell.
    #[inline]
    fn tail(&self, rng: &mut Rng) -> Result<i128> {
        self.dist.sample_tail_wide(rng, self.floor)
    }

    /// A value in grid units as the released double.
    fn value(&self, units: i128) -> f64 {
        match self.grid {
            Some(grid) => grid.from_units(units),
            None => units as f64,
        }
    }
}

/// The probability that a cell with true count 0 is kept: `P(L > threshold)` for the noise
/// of scale `2 / epsilon` (`½·exp(−ε·τ/2)` for continuous noise and τ ≥ 0;
/// `q^(⌊τ⌋+1) / (1 + q)` with `q = exp(−ε/2)` for discrete noise and τ ≥ −1).
///
/// Computed in double precision (relative error about 1e-15).
///
/// # Errors
/// [`Error::InvalidParameter`] when `epsilon` is not finite and > 0 or `threshold` is not
/// finite with magnitude below 2^53.
pub fn empty_cell_probability(epsilon: f64, threshold: f64, noise: Noise) -> Result<f64> {
    Ok(Sampler::new(epsilon, threshold, noise)?.keep_probability())
}

/// Releases the thresholded noisy histogram of the rows of `cols` over the full product
/// domain of its cardinalities, without enumerating that domain.
///
/// Every cell `x` of the domain (of size `m = Π cardinalities ≤ 2^64`) gets
/// `h(x) + noise` with `noise ~ Lap(0, 2/ε)` ([`Noise::Laplace`]) or `DLap(2/ε)`
/// ([`Noise::Discrete`]); the cells whose value exceeds `threshold` are returned. See the
/// module documentation for the construction, which takes O(n·d + output) time.
///
/// Before reading the data, the expected number of kept empty cells is bounded by `m·p`
/// (`m` cells in the domain, `p` = [`empty_cell_probability`]); when that exceeds
/// `max_cells` the call fails instead of allocating. The bound uses public numbers only,
/// so whether the call fails reveals nothing about the data; kept observed cells number
/// at most `n`, the size of the input.
///
/// The output depends only on the inputs and `seed`, never on the number of threads. It
/// equals [`thresholded_histogram_of_counts`] of the counts of the rows' keys: counting
/// is the only step that reads the rows.
///
/// # Privacy
/// Under replace-one neighbours (n public) the histogram has L1 sensitivity 2, so noise of
/// scale 2/ε makes the full noisy histogram ε-differentially private; thresholding with a τ
/// that depends only on n is post-processing (Proposition 1 of Vinterbo 2012). The size
/// check depends only on the domain, ε and τ.
///
/// # Errors
/// [`Error::InvalidParameter`] for a bad `epsilon` or `threshold` (with discrete noise,
/// `epsilon` below [`MIN_DISCRETE_EPSILON`]; with Laplace noise, above 2^16);
/// [`Error::Domain`] when the product of the
/// cardinalities exceeds 2^64 or the expected output exceeds `max_cells`;
/// [`Error::OutputTooLarge`] when the output cannot be allocated; [`Error::InvalidData`]
/// if a discrete noisy value leaves the `i64` range (probability about exp(−2^15)).
pub fn thresholded_histogram(
    cols: Columns<'_>,
    epsilon: f64,
    threshold: f64,
    noise: Noise,
    max_cells: u64,
    seed: &Seed,
) -> Result<Histogram> {
    let plan = Plan::for_rows(
        cols.cardinalities(),
        epsilon,
        threshold,
        noise,
        max_cells,
        cols.n_rows(),
    )?;
    let counts = count_rows(cols, plan.domain)?;
    plan.release(&counts, seed)
}

/// [`thresholded_histogram`] of `n_rows` rows of `u32` codes stored column after column
/// (`data[j * n_rows + i]` is row `i` of column `j`, a C-ordered `(d, n_rows)` array),
/// each code checked against its cardinality as the rows are encoded: the table is read
/// once, with no validation pass before the counting (on one thread that pass took an
/// eighth of the release of 10M rows). For the same codes and `seed`, the output is the
/// one [`thresholded_histogram`] gives on their validated [`Columns`], bit for bit.
///
/// # Privacy
/// As [`thresholded_histogram`].
///
/// # Errors
/// As [`thresholded_histogram`]; [`Error::InvalidData`] when the length is not
/// `n_rows · d` or a code is out of range (naming its column, row and code, as
/// [`Columns::new`] does).
#[allow(clippy::too_many_arguments)]
pub fn thresholded_histogram_of_columns(
    data: &[u32],
    n_rows: usize,
    cardinalities: &[u32],
    epsilon: f64,
    threshold: f64,
    noise: Noise,
    max_cells: u64,
    seed: &Seed,
) -> Result<Histogram> {
    let plan = Plan::for_rows(cardinalities, epsilon, threshold, noise, max_cells, n_rows)?;
    check_table_shape(data.len(), n_rows, cardinalities.len(), "codes")?;
    let columns = (0..cardinalities.len())
        .map(|j| &data[j * n_rows..(j + 1) * n_rows])
        .collect();
    let encoder = RowEncoder::checking(columns, cardinalities)?;
    match count_checked(&encoder, n_rows)? {
        Some(counts) => plan.release(&counts, seed),
        None => Err(check_table(data, n_rows, cardinalities)
            .err()
            .unwrap_or_else(|| Error::InvalidData("codes has a code out of range".to_string()))),
    }
}

/// [`thresholded_histogram`] of codes of any integer type stored row-major (`data[i * d
/// + j]`, a C-ordered `(n_rows, d)` array), counted in place by
/// [`count_columns_of_rows`](crate::counts::count_columns_of_rows), which checks every
/// code: no column-major `u32` copy is made. For the same rows and `seed`, the output is
/// the one [`thresholded_histogram`] gives on their columns, bit for bit.
///
/// # Privacy
/// As [`thresholded_histogram`].
///
/// # Errors
/// As [`thresholded_histogram`]; [`Error::InvalidData`] naming `what`, the first row with
/// an invalid code and its column.
#[allow(clippy::too_many_arguments)]
pub fn thresholded_histogram_of_rows<C: Code>(
    data: &[C],
    n_rows: usize,
    cardinalities: &[u32],
    epsilon: f64,
    threshold: f64,
    noise: Noise,
    max_cells: u64,
    seed: &Seed,
    what: &str,
) -> Result<Histogram> {
    let plan = Plan::for_rows(cardinalities, epsilon, threshold, noise, max_cells, n_rows)?;
    let every: Vec<usize> = (0..cardinalities.len()).collect();
    let counts = count_columns_of_rows(data, n_rows, cardinalities, &every, what)?;
    plan.release(&counts, seed)
}

/// [`thresholded_histogram`] of rows already counted: `counts` holds the mixed-radix keys
/// over `cardinalities` of the observed cells and their counts, e.g. counts of blocks of
/// rows merged after counting each block on its own (possibly on another machine).
///
/// For the counts of the same rows and the same `seed`, the output is the one
/// [`thresholded_histogram`] gives, bit for bit: noise is drawn only here, from the
/// streams of `seed`, in the order of the sorted keys.
///
/// # Privacy
/// As [`thresholded_histogram`], with `n` the total of `counts`.
///
/// # Errors
/// As [`thresholded_histogram`]; [`Error::InvalidData`] when a key is outside the domain.
pub fn thresholded_histogram_of_counts(
    counts: &SparseCounts,
    cardinalities: &[u32],
    epsilon: f64,
    threshold: f64,
    noise: Noise,
    max_cells: u64,
    seed: &Seed,
) -> Result<Histogram> {
    let n_rows = counts
        .counts()
        .iter()
        .fold(0usize, |n, &c| n.saturating_add(c as usize));
    let plan = Plan::for_rows(cardinalities, epsilon, threshold, noise, max_cells, n_rows)?;
    if let Some(&last) = counts.keys().last()
        && u128::from(last) >= plan.domain
    {
        return Err(Error::InvalidData(format!(
            "key {last} is outside the domain of {} cells of cardinalities {cardinalities:?}",
            plan.domain
        )));
    }
    plan.release(counts, seed)
}

/// Checks the parameters of a thresholded histogram over `cardinalities` and the size of
/// its expected output, as [`thresholded_histogram`] does before reading any row.
///
/// # Errors
/// As [`thresholded_histogram`], for the parameters and the domain.
pub fn check_histogram(
    cardinalities: &[u32],
    epsilon: f64,
    threshold: f64,
    noise: Noise,
    max_cells: u64,
) -> Result<()> {
    Plan::new(cardinalities, epsilon, threshold, noise, max_cells).map(|_| ())
}

/// A histogram release whose parameters and expected size were checked.
struct Plan {
    sampler: Sampler,
    domain: u128,
    p: f64,
}

impl Plan {
    fn new(
        cardinalities: &[u32],
        epsilon: f64,
        threshold: f64,
        noise: Noise,
        max_cells: u64,
    ) -> Result<Self> {
        let sampler = Sampler::new(epsilon, threshold, noise)?;
        let domain = check_domain(cardinalities)?;
        let p = sampler.keep_probability();
        let expected_empty = domain as f64 * p;
        if expected_empty > max_cells as f64 {
            return Err(Error::Domain(format!(
                "the thresholded histogram would keep about {expected_empty:.4e} empty cells \
                 in expectation (m·p with m = {domain} cells and p = {p:.4e}), more than \
                 max_cells = {max_cells}; raise the threshold, use fewer or coarser \
                 columns, or raise max_cells"
            )));
        }
        Ok(Plan { sampler, domain, p })
    }

    /// [`Plan::new`] for a release of `n_rows` rows, whose counts the noise must keep
    /// exact ([`Sampler::check_counts`]).
    fn for_rows(
        cardinalities: &[u32],
        epsilon: f64,
        threshold: f64,
        noise: Noise,
        max_cells: u64,
        n_rows: usize,
    ) -> Result<Self> {
        let plan = Plan::new(cardinalities, epsilon, threshold, noise, max_cells)?;
        plan.sampler.check_counts(n_rows, epsilon)?;
        Ok(plan)
    }

    /// Noise on the observed cells, the sampled kept empty cells, merged by key.
    fn release(&self, counts: &SparseCounts, seed: &Seed) -> Result<Histogram> {
        let sampler = &self.sampler;
        let observed = counts.len();
        let n_empty = self.domain - observed as u128;

        let (obs_keys, obs_counts) = (counts.keys(), counts.counts());
        let largest = obs_counts.iter().copied().max().unwrap_or(0);
        let prepared = sampler.prepared(largest.saturating_add(1).min(PREPARED_COUNTS))?;
        let kept = try_filter_chunked(observed, &seed.derive(TAG_OBSERVED), |rng, i| {
            let noisy = sampler.noisy(rng, obs_counts[i], &prepared)?;
            Ok(noisy.map(|value| (obs_keys[i], value)))
        })?;

        let n_kept_empty =
            sample_binomial(&mut seed.derive(TAG_BINOMIAL).stream(0), n_empty, self.p)?;
        let n_kept_empty = usize::try_from(n_kept_empty).map_err(|_| {
            Error::OutputTooLarge(format!(
                "{n_kept_empty} kept empty cells do not fit in memory"
            ))
        })?;
        let ranks = sample_distinct(
            &mut seed.derive(TAG_EMPTY_KEYS).stream(0),
            n_empty,
            n_kept_empty,
        )?;
        let empty_keys = empty_keys_of_ranks(ranks, counts.keys());
        let mut empty_values = alloc_output::<i128>(n_kept_empty, "values of kept empty cells")?;
        try_fill_chunked(
            &mut empty_values,
            &seed.derive(TAG_EMPTY_VALUES),
            |rng, _| sampler.tail(rng),
        )?;

        merge_cells(&kept, sampler, &empty_keys, &empty_values)
    }
}

/// Observed counts below this have their noise prepared before it is drawn
/// ([`Sampler::prepared`]); larger counts are rare and take the general path.
const PREPARED_COUNTS: u64 = 256;

/// Rows per block of the bucket pass of [`count_rows`] (fixed, so that nothing depends on
/// the number of threads): a block's keys stay in the L2 cache between their encoding and
/// their split into buckets.
const BUCKET_BLOCK: usize = 1 << 17;

/// Average keys per bucket aimed at by [`count_rows`]: few enough buckets that splitting a
/// block writes to few places at once, small enough that a bucket's table of distinct keys
/// stays in the L2 cache. (2^13 took 25% longer on 10M rows of 1M distinct cells.)
const BUCKET_KEYS: usize = 1 << 15;

/// Buckets of more keys than this are sorted rather than hashed, so that a table of
/// distinct keys never outgrows the L2 cache (one hot leading digit puts most rows in one
/// bucket).
const HASHED_BUCKET: usize = 1 << 18;

/// The distinct keys of the rows of `cols` and their counts, sorted by key.
///
/// # Errors
/// As [`count_blocks`]; [`Error::Domain`] when the product of the cardinalities exceeds
/// 2^64.
fn count_rows(cols: Columns<'_>, domain: u128) -> Result<SparseCounts> {
    let encoder = RowEncoder::new(cols)?;
    count_blocks(cols.n_rows(), domain, |start, out| {
        encoder.encode(start, out)
    })
}

/// The distinct keys of the `n_rows` rows `encoder` encodes and their counts, sorted by
/// key, or `None` when some code is out of range: a block with such a code is left
/// uncounted (its keys may lie outside the domain), so the caller reports the error.
///
/// # Errors
/// As [`count_blocks`].
fn count_checked(encoder: &RowEncoder<'_>, n_rows: usize) -> Result<Option<SparseCounts>> {
    let invalid = AtomicBool::new(false);
    let counts = count_blocks(n_rows, encoder.domain(), |start, out| {
        if !encoder.encode_checked(start, out) {
            invalid.store(true, Ordering::Relaxed);
            out.fill(0);
        }
    })?;
    Ok((!invalid.load(Ordering::Relaxed)).then_some(counts))
}

/// The distinct values of `keys` (all below `domain`) and their counts, sorted.
#[cfg(test)]
fn count_keys(keys: &[u64], domain: u128) -> Result<SparseCounts> {
    count_blocks(keys.len(), domain, |start, out| {
        out.copy_from_slice(&keys[start..start + out.len()]);
    })
}

/// The distinct values of `n` keys below `domain` and their counts, sorted; `encode(start,
/// out)` writes keys `start..start + out.len()`.
///
/// Blocks of keys are encoded into a cache-resident buffer and split in parallel into
/// buckets by their leading bits (a counting sort on one digit of up to 12 bits); then
/// each bucket counts its keys from the pieces of every block, in parallel: in a small
/// hash table, whose distinct keys are then sorted, or by radix sort when the bucket is
/// large. Buckets are ranges of keys, so their results concatenate into the sorted counts.
/// A bucket's keys share their leading bits, so only the bits below them are stored: in
/// 32 bits when they fit (and counts fit too), which halves the memory the split writes
/// and the size of the hash tables. The codes are read once and the keys written once,
/// with no array of all keys. The sparse k-way counts
/// ([`count_columns`](crate::counts::count_columns)) count the same way.
///
/// # Errors
/// [`Error::OutputTooLarge`] when the counts cannot be allocated.
pub(crate) fn count_blocks<F>(n: usize, domain: u128, encode: F) -> Result<SparseCounts>
where
    F: Fn(usize, &mut [u64]) + Sync,
{
    let bits = 128 - (domain.max(1) - 1).leading_zeros();
    let wanted = (n / BUCKET_KEYS).max(1).ilog2().clamp(1, 12);
    let bucket_bits = wanted.min(bits);
    let shift = bits - bucket_bits;
    if shift <= u32::BITS && u32::try_from(n).is_ok() {
        count_split::<u32, F>(n, bucket_bits, shift, encode)
    } else {
        count_split::<u64, F>(n, bucket_bits, shift, encode)
    }
}

/// The bits of a key below its bucket's leading bits, and a count within one bucket, in
/// the narrowest type that holds both ([`count_blocks`]).
trait Suffix: Copy + Default + Eq + Ord + Send + Sync {
    /// The low bits of `key` (already masked to the bits below the bucket's).
    fn of_key(key: u64) -> Self;
    fn widen(self) -> u64;
    fn plus_one(self) -> Self;
    /// Sorts the cells `(low bits, count)` of a bucket by their low bits (distinct).
    fn sort_cells(cells: &mut [(Self, Self)]);
}

impl Suffix for u32 {
    #[inline(always)]
    fn of_key(key: u64) -> Self {
        key as u32
    }
    #[inline(always)]
    fn widen(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn plus_one(self) -> Self {
        self + 1
    }
    fn sort_cells(cells: &mut [(Self, Self)]) {
        let mut packed: Vec<u64> = cells
            .iter()
            .map(|&(low, count)| (u64::from(low) << 32) | u64::from(count))
            .collect();
        radix_sort_above(&mut packed, 32);
        for (cell, &both) in cells.iter_mut().zip(&packed) {
            *cell = ((both >> 32) as u32, both as u32);
        }
    }
}

impl Suffix for u64 {
    #[inline(always)]
    fn of_key(key: u64) -> Self {
        key
    }
    #[inline(always)]
    fn widen(self) -> u64 {
        self
    }
    #[inline(always)]
    fn plus_one(self) -> Self {
        self + 1
    }
    fn sort_cells(cells: &mut [(Self, Self)]) {
        cells.sort_unstable_by_key(|&(low, _)| low);
    }
}

/// [`count_blocks`] with `2^bucket_bits` buckets of the keys' bits from `shift` up, each
/// key stored as its bits below `shift` in an `S`.
fn count_split<S: Suffix, F>(
    n: usize,
    bucket_bits: u32,
    shift: u32,
    encode: F,
) -> Result<SparseCounts>
where
    F: Fn(usize, &mut [u64]) + Sync,
{
    let n_buckets = 1usize << bucket_bits;
    let low_bits = (1u64 << shift) - 1;
    let blocks: Vec<(Vec<S>, Vec<usize>)> = (0..n.div_ceil(BUCKET_BLOCK))
        .into_par_iter()
        .map_init(Vec::new, |keys: &mut Vec<u64>, b| {
            let start = b * BUCKET_BLOCK;
            keys.resize(BUCKET_BLOCK.min(n - start), 0);
            encode(start, keys);
            split_block(keys, n_buckets, shift, low_bits)
        })
        .collect();
    let pieces = |b: usize| {
        blocks
            .iter()
            .map(move |(split, starts)| &split[starts[b]..starts[b + 1]])
    };
    let parts: Vec<(Vec<u64>, Vec<u64>)> = (0..n_buckets)
        .into_par_iter()
        .map_init(KeyTable::<S>::default, |table, b| {
            let leading = (b as u64) << shift;
            let size: usize = pieces(b).map(<[S]>::len).sum();
            if size > HASHED_BUCKET {
                let mut gathered = Vec::with_capacity(size);
                pieces(b).for_each(|piece| {
                    gathered.extend(piece.iter().map(|&low| leading | low.widen()));
                });
                radix_sort(&mut gathered);
                return run_lengths(&gathered).into_parts();
            }
            table.clear(size);
            for piece in pieces(b) {
                for &low in piece {
                    table.add(low);
                }
            }
            table.sorted_parts(leading)
        })
        .collect();
    drop(blocks);
    let total = parts.iter().map(|(k, _)| k.len()).sum();
    let mut distinct = alloc_output::<u64>(total, "observed cells")?;
    let mut counts = alloc_output::<u64>(total, "observed cell counts")?;
    let mut at = 0;
    for (part_keys, part_counts) in &parts {
        distinct[at..at + part_keys.len()].copy_from_slice(part_keys);
        counts[at..at + part_keys.len()].copy_from_slice(part_counts);
        at += part_keys.len();
    }
    SparseCounts::from_parts(distinct, counts)
}

/// Interleaved streams of rows in the bucket split of a block ([`split_block`]).
const SPLIT_STREAMS: usize = 4;

/// The keys of one block split into `n_buckets` buckets by their bits from `shift` up, in
/// row order within each bucket, each stored as its bits `low_bits` in an `S`; and the
/// start of each bucket (`n_buckets + 1` offsets).
///
/// The block is read as [`SPLIT_STREAMS`] runs of rows at once, each counted and moved
/// with its own cursors: skewed keys send runs of rows to one bucket, and with a single
/// cursor each move waited for the previous one to the same bucket. The runs are
/// contiguous and placed in order within each bucket, so the output is that of one cursor.
fn split_block<S: Suffix>(
    keys: &[u64],
    n_buckets: usize,
    shift: u32,
    low_bits: u64,
) -> (Vec<S>, Vec<usize>) {
    let bucket = |key: u64| (key >> shift) as usize;
    let run = keys.len() / SPLIT_STREAMS;
    let (interleaved, tail) = keys.split_at(SPLIT_STREAMS * run);
    let last = SPLIT_STREAMS - 1;
    let mut next = vec![0usize; SPLIT_STREAMS * n_buckets];
    for i in 0..run {
        for s in 0..SPLIT_STREAMS {
            next[s * n_buckets + bucket(interleaved[s * run + i])] += 1;
        }
    }
    for &key in tail {
        next[last * n_buckets + bucket(key)] += 1;
    }
    let mut starts = vec![0usize; n_buckets + 1];
    let mut at = 0;
    for b in 0..n_buckets {
        starts[b] = at;
        for s in 0..SPLIT_STREAMS {
            let count = next[s * n_buckets + b];
            next[s * n_buckets + b] = at;
            at += count;
        }
    }
    starts[n_buckets] = at;
    let mut split: Vec<S> = Vec::with_capacity(keys.len());
    let slots = split.spare_capacity_mut();
    let mut put = |s: usize, key: u64| {
        let slot = &mut next[s * n_buckets + bucket(key)];
        slots[*slot].write(S::of_key(key & low_bits));
        *slot += 1;
    };
    for i in 0..run {
        for s in 0..SPLIT_STREAMS {
            put(s, interleaved[s * run + i]);
        }
    }
    for &key in tail {
        put(last, key);
    }
    // SAFETY: the cursors of stream `s` in bucket `b` start after the bucket's keys of
    // the streams before `s`, and each bucket after the keys of the buckets before it, so
    // the slots visited are 0..keys.len(), each written once above.
    unsafe { split.set_len(keys.len()) };
    (split, starts)
}

/// An open-addressing table counting the distinct keys of one bucket by their low bits
/// (linear probing; a slot with count 0 is empty), grown by doubling at a quarter load:
/// at that load most keys are found at their first probe, so few branches mispredict.
#[derive(Default)]
struct KeyTable<S> {
    slots: Vec<(S, S)>,
    /// The slots taken, in the order their keys came: emptied and read without a scan of
    /// every slot.
    taken: Vec<usize>,
    /// The number of distinct keys above which the table grows.
    limit: usize,
    shift: u32,
    /// The distinct keys of the bucket counted last: buckets are ranges of similar
    /// width, so the next one is sized for as many and seldom grows.
    last_len: usize,
}

impl<S: Suffix> KeyTable<S> {
    /// Distinct keys a fresh table is sized for.
    const INITIAL: usize = 1 << 7;

    /// Slots per distinct key at the most: the table grows beyond a quarter load.
    const SLOTS_PER_KEY: usize = 4;

    /// Empties the table for a bucket of `size` keys.
    fn clear(&mut self, size: usize) {
        let expected = size.min(self.last_len.max(Self::INITIAL));
        let capacity = (Self::SLOTS_PER_KEY * expected).next_power_of_two().max(2);
        let empty = (S::default(), S::default());
        if capacity == self.slots.len() {
            for &at in &self.taken {
                self.slots[at] = empty;
            }
        } else {
            self.slots.clear();
            self.slots.resize(capacity, empty);
        }
        self.taken.clear();
        self.shift = 64 - capacity.trailing_zeros();
        self.limit = capacity / Self::SLOTS_PER_KEY;
    }

    /// The first slot to probe for `key` (Fibonacci hashing: the leading bits of a
    /// product, so keys that differ only in their low bits spread out).
    #[inline]
    fn home(&self, key: S) -> usize {
        (key.widen().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Counts one occurrence of `key`.
    #[inline(always)]
    fn add(&mut self, key: S) {
        let mask = self.slots.len() - 1;
        let mut at = self.home(key);
        loop {
            let slot = &mut self.slots[at];
            if slot.0 == key && slot.1 != S::default() {
                slot.1 = slot.1.plus_one();
                return;
            }
            if slot.1 == S::default() {
                *slot = (key, S::default().plus_one());
                self.taken.push(at);
                if self.taken.len() > self.limit {
                    self.grow();
                }
                return;
            }
            at = (at + 1) & mask;
        }
    }

    /// Doubles the number of slots and reinserts the counted keys.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let empty = (S::default(), S::default());
        let doubled = vec![empty; 2 * self.slots.len()];
        let old = std::mem::replace(&mut self.slots, doubled);
        self.shift -= 1;
        self.limit = self.slots.len() / Self::SLOTS_PER_KEY;
        let mask = self.slots.len() - 1;
        for i in 0..self.taken.len() {
            let (key, count) = old[self.taken[i]];
            let mut at = self.home(key);
            while self.slots[at].1 != S::default() {
                at = (at + 1) & mask;
            }
            self.slots[at] = (key, count);
            self.taken[i] = at;
        }
    }

    /// The counted keys, each `leading | low bits`, in increasing order, and their counts.
    fn sorted_parts(&mut self, leading: u64) -> (Vec<u64>, Vec<u64>) {
        self.last_len = self.taken.len();
        let mut cells: Vec<(S, S)> = self.taken.iter().map(|&at| self.slots[at]).collect();
        S::sort_cells(&mut cells);
        cells
            .into_iter()
            .map(|(low, count)| (leading | low.widen(), count.widen()))
            .unzip()
    }
}

/// A `Binomial(trials, p)` variate for `trials ≤ 2^64` (the binomial sampler takes `u64`
/// trials, so 2^64 is split into two halves).
fn sample_binomial(rng: &mut Rng, trials: u128, p: f64) -> Result<u64> {
    match u64::try_from(trials) {
        Ok(trials) => Ok(Binomial::new(trials, p)?.sample(rng)),
        Err(_) => {
            let half = Binomial::new(1 << 63, p)?;
            let (a, b) = (half.sample(rng), half.sample(rng));
            a.checked_add(b).ok_or_else(|| {
                Error::OutputTooLarge("more than 2**64 kept empty cells".to_string())
            })
        }
    }
}

/// Maps sorted ranks among the keys *not* in `observed` (sorted, distinct) to those keys, in
/// place, by one merge: the key of rank `r` is `r + j`, `j` the number of observed keys
/// below it.
fn empty_keys_of_ranks(mut ranks: Vec<u64>, observed: &[u64]) -> Vec<u64> {
    let mut below = 0usize;
    for slot in ranks.iter_mut() {
        // Cannot overflow: rank + below is a key of the domain, so it is < m ≤ 2^64.
        while below < observed.len() && observed[below] <= *slot + below as u64 {
            below += 1;
        }
        *slot += below as u64;
    }
    ranks
}

/// Merges the kept observed cells (key, noisy value), sorted by key, with the kept empty
/// cells into one key-sorted histogram.
fn merge_cells(
    kept: &[(u64, i128)],
    sampler: &Sampler,
    empty_keys: &[u64],
    empty_values: &[i128],
) -> Result<Histogram> {
    let total = kept.len() + empty_keys.len();
    let mut keys = Vec::new();
    let mut values = Vec::new();
    keys.try_reserve_exact(total)
        .and_then(|()| values.try_reserve_exact(total))
        .map_err(|_| {
            Error::OutputTooLarge(format!("the histogram's {total} cells cannot be allocated"))
        })?;
    let mut kept = kept.iter().map(|(key, value)| (key, value)).peekable();
    let mut empty = empty_keys.iter().zip(empty_values).peekable();
    loop {
        let take_observed = match (kept.peek(), empty.peek()) {
            (Some(&(a, _)), Some(&(b, _))) => a < b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let next = if take_observed {
            kept.next()
        } else {
            empty.next()
        };
        if let Some((&key, &value)) = next {
            keys.push(key);
            values.push(sampler.value(value));
        }
    }
    Ok(Histogram { keys, values })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::mixed_radix_encode;
    use crate::noise::test_util::in_pool;
    use crate::rng::CHUNK;

    fn release(
        data: &[u32],
        n: usize,
        cards: &[u32],
        threshold: f64,
        noise: Noise,
        seed: u64,
    ) -> Result<Histogram> {
        let cols = Columns::new(data, n, cards)?;
        thresholded_histogram(cols, 1.0, threshold, noise, u64::MAX, &Seed::from_u64(seed))
    }

    #[test]
    fn bucketed_counts_match_a_map_of_the_keys() {
        let mut rng = Seed::from_u64(8).stream(0);
        let n = 3 * BUCKET_BLOCK + 5;
        // 2^35 keeps 32 bits below 3 bucket bits, the widest that are stored in 32 bits.
        let domains = [1u128, 2, 1000, 1 << 35, 1 << 36, 1 << 40, 1 << 64];
        // One row in three, or three in four, among 97 small keys: the second puts more
        // than HASHED_BUCKET keys in the first bucket, which is then radix-sorted.
        for (domain, hot) in domains.into_iter().flat_map(|d| [(d, false), (d, true)]) {
            let keys: Vec<u64> = (0..n)
                .map(|i| {
                    let word = rand::Rng::next_u64(&mut rng);
                    let small = if hot { i % 4 != 0 } else { i % 3 == 0 };
                    let key = if small { word % 97 } else { word };
                    (u128::from(key) % domain) as u64
                })
                .collect();
            if hot {
                assert!(keys.iter().filter(|&&key| key < 97).count() > HASHED_BUCKET);
            }
            let mut expected = std::collections::BTreeMap::new();
            for &key in &keys {
                *expected.entry(key).or_insert(0u64) += 1;
            }
            let counts = count_keys(&keys, domain).unwrap();
            assert!(counts.keys().iter().copied().eq(expected.keys().copied()));
            assert!(
                counts
                    .counts()
                    .iter()
                    .copied()
                    .eq(expected.values().copied())
            );
        }
    }

    #[test]
    fn a_block_splits_into_its_buckets_in_row_order() {
        let mut rng = Seed::from_u64(3).stream(0);
        // Lengths around multiples of the streams, and runs of one bucket (skewed keys).
        for len in (0..=2 * SPLIT_STREAMS + 1).chain([1000, 4099]) {
            let keys: Vec<u64> = (0..len)
                .map(|i| {
                    let word = rand::Rng::next_u64(&mut rng);
                    let bucket = if i % 7 < 4 { 5 } else { word >> 61 };
                    (bucket << 20) | (word & 0xf_ffff)
                })
                .collect();
            let (split, starts) = split_block::<u32>(&keys, 8, 20, 0xf_ffff);
            assert_eq!(starts.len(), 9);
            assert_eq!(starts[8], len);
            for b in 0..8u64 {
                let expected: Vec<u32> = keys
                    .iter()
                    .filter(|&&key| key >> 20 == b)
                    .map(|&key| (key & 0xf_ffff) as u32)
                    .collect();
                let b = b as usize;
                assert_eq!(&split[starts[b]..starts[b + 1]], &expected[..], "len {len}");
            }
        }
    }

    #[test]
    fn a_reused_key_table_counts_every_bucket_afresh() {
        // Keys with equal low halves test the 64-bit table; the 32-bit one holds keys below
        // the bucket bits.
        check_reused_table::<u64>(|word, distinct| word % distinct * 0x1_0000_0001);
        check_reused_table::<u32>(|word, distinct| word % distinct * 0x1_0001 % (1 << 32));
    }

    fn check_reused_table<S: Suffix>(key_of: impl Fn(u64, u64) -> u64) {
        let mut rng = Seed::from_u64(3).stream(0);
        let mut table = KeyTable::<S>::default();
        // Bucket sizes that keep the table's size, shrink it and make it grow.
        for (size, distinct) in [(5_000, 900), (5_000, 900), (40, 7), (20_000, 9_000), (1, 1)] {
            let keys: Vec<u64> = (0..size)
                .map(|_| key_of(rand::Rng::next_u64(&mut rng), distinct))
                .collect();
            let mut expected = std::collections::BTreeMap::new();
            for &key in &keys {
                *expected.entry(key).or_insert(0u64) += 1;
            }
            table.clear(keys.len());
            keys.iter().for_each(|&key| table.add(S::of_key(key)));
            let leading = 1 << 50; // above every test key, as bucket bits are
            let (got_keys, got_counts) = table.sorted_parts(leading);
            assert!(
                got_keys
                    .iter()
                    .copied()
                    .eq(expected.keys().map(|&k| leading | k))
            );
            assert!(got_counts.iter().copied().eq(expected.values().copied()));
        }
    }

    #[test]
    fn ranks_map_to_the_empty_keys_in_order() {
        let observed = [0u64, 2, 3, 7];
        let empty: Vec<u64> = (0..10).filter(|k| !observed.contains(k)).collect();
        let ranks: Vec<u64> = (0..empty.len() as u64).collect();
        assert_eq!(empty_keys_of_ranks(ranks, &observed), empty);
        assert_eq!(empty_keys_of_ranks(vec![0, 3], &[]), vec![0, 3]);
        assert_eq!(
            empty_keys_of_ranks(vec![0, 1], &[0, 1, 2]),
            vec![3, 4],
            "ranks after a run of observed keys"
        );
    }

    #[test]
    fn keep_probabilities_follow_the_laplace_tails() {
        // The grid noise is the continuous Laplace law up to its grid step (2^-40 of the
        // scale) and a scale larger by at most 2^-39.
        assert_eq!("discrete".parse::<Noise>(), Ok(Noise::Discrete));
        let err = "gaussian".parse::<Noise>().unwrap_err().to_string();
        assert_eq!(
            err,
            "noise must be 'laplace' or 'discrete', got \"gaussian\""
        );
        let p = empty_cell_probability(1.0, 4.0, Noise::Laplace).unwrap();
        assert!((p / (0.5 * (-2.0f64).exp()) - 1.0).abs() < 1e-9);
        let p = empty_cell_probability(1.0, -4.0, Noise::Laplace).unwrap();
        assert!((p / (1.0 - 0.5 * (-2.0f64).exp()) - 1.0).abs() < 1e-9);
        // Discrete, ε = 1: q = exp(−1/2), P(Z > 3.5) = P(Z ≥ 4) = q^4 / (1 + q).
        let q = (-0.5f64).exp();
        let p = empty_cell_probability(1.0, 3.5, Noise::Discrete).unwrap();
        assert!((p / (q.powi(4) / (1.0 + q)) - 1.0).abs() < 1e-12);
        let p = empty_cell_probability(1.0, -2.5, Noise::Discrete).unwrap();
        assert!((p - (1.0 - q.powi(3) / (1.0 + q))).abs() < 1e-12);
        assert!(empty_cell_probability(0.0, 1.0, Noise::Laplace).is_err());
        assert!(empty_cell_probability(1.0, f64::NAN, Noise::Laplace).is_err());
        assert!(empty_cell_probability(1.0, 1e300, Noise::Discrete).is_err());
    }

    #[test]
    fn extreme_epsilons_are_named() {
        // Found by tests/properties.rs: a huge ε makes the grid step tiny, and a large
        // |τ| or count then has more than 2^120 steps; the errors named neither. A tiny
        // ε with discrete noise let variates leave the int64 range.
        let named = |result: Result<f64>, name: &str| matches!(result, Err(Error::InvalidParameter { name: n, .. }) if n == name);
        assert!(named(
            empty_cell_probability(1e79, -9e15, Noise::Laplace),
            "threshold"
        ));
        assert!(named(
            empty_cell_probability(1e-300, 3.0, Noise::Discrete),
            "epsilon"
        ));
        assert!(empty_cell_probability(MIN_DISCRETE_EPSILON, 3.0, Noise::Discrete).is_ok());
        let data = [0u32, 1, 1, 0, 1];
        let release_with = |epsilon: f64| {
            let cols = Columns::new(&data, 5, &[2])?;
            thresholded_histogram(cols, epsilon, 0.0, Noise::Laplace, 100, &Seed::from_u64(0))
        };
        let counts_too_large = release_with(1e30);
        assert!(
            matches!(
                counts_too_large,
                Err(Error::InvalidParameter {
                    name: "epsilon",
                    ..
                })
            ),
            "{counts_too_large:?}"
        );
        assert!(release_with(5e6).is_ok());
    }

    /// `n` rows of codes below `cards`, stored column after column, with many distinct
    /// cells of varied counts.
    fn patterned_columns(n: usize, cards: &[u32]) -> Vec<u32> {
        cards
            .iter()
            .enumerate()
            .flat_map(|(j, &card)| {
                (0..n).map(move |i| ((i * (7 + j) + i / 3) % card as usize) as u32)
            })
            .collect()
    }

    #[test]
    fn row_major_codes_give_the_release_of_their_columns() {
        let n = 2 * CHUNK + 5;
        let cards = [50u32, 40, 30];
        let columns = patterned_columns(n, &cards);
        let rows: Vec<u8> = (0..n)
            .flat_map(|i| {
                (0..cards.len())
                    .map(|j| columns[j * n + i] as u8)
                    .collect::<Vec<_>>()
            })
            .collect();
        for noise in [Noise::Laplace, Noise::Discrete] {
            for seed in [9, 10] {
                let expected = release(&columns, n, &cards, 3.0, noise, seed).unwrap();
                let of_rows = in_pool(2, || {
                    thresholded_histogram_of_rows(
                        &rows,
                        n,
                        &cards,
                        1.0,
                        3.0,
                        noise,
                        u64::MAX,
                        &Seed::from_u64(seed),
                        "codes",
                    )
                })
                .unwrap();
                assert_eq!(of_rows, expected);
                assert!(of_rows.keys.len() > 100);
            }
        }
        let mut bad = rows.clone();
        bad[3 * 7 + 1] = 40;
        let err = thresholded_histogram_of_rows(
            &bad,
            n,
            &cards,
            1.0,
            3.0,
            Noise::Laplace,
            u64::MAX,
            &Seed::from_u64(1),
            "codes",
        )
        .unwrap_err();
        assert!(err.to_string().contains("codes[7, 1]"), "{err}");
    }

    #[test]
    fn columns_checked_as_counted_give_the_release_of_validated_columns() {
        let n = 2 * BUCKET_BLOCK + 5;
        let cards = [50u32, 40, 30];
        let columns = patterned_columns(n, &cards);
        let checked = |data: &[u32], noise, seed, threads| {
            in_pool(threads, || {
                thresholded_histogram_of_columns(
                    data,
                    n,
                    &cards,
                    1.0,
                    3.0,
                    noise,
                    u64::MAX,
                    &Seed::from_u64(seed),
                )
            })
        };
        for noise in [Noise::Laplace, Noise::Discrete] {
            for seed in [9, 10] {
                let expected = release(&columns, n, &cards, 3.0, noise, seed).unwrap();
                for threads in [1, 3] {
                    assert_eq!(checked(&columns, noise, seed, threads).unwrap(), expected);
                }
                assert!(expected.keys.len() > 100);
            }
        }
        // A bad code in the last, partial block, and one in a middle block: the message
        // is that of the validating view, naming the first bad row of the first column.
        for (column, row) in [(2, n - 1), (1, BUCKET_BLOCK + 7)] {
            let mut bad = columns.clone();
            bad[column * n + row] = cards[column];
            let err = checked(&bad, Noise::Laplace, 1, 2).unwrap_err();
            let expected = Columns::new(&bad, n, &cards).unwrap_err();
            assert_eq!(err.to_string(), expected.to_string());
            assert!(err.to_string().contains(&format!("at row {row}")), "{err}");
        }
        let short = checked(&columns[1..], Noise::Laplace, 1, 1).unwrap_err();
        assert!(
            short.to_string().contains("expected n_rows * n_columns"),
            "{short}"
        );
    }

    #[test]
    fn output_is_sorted_above_threshold_and_thread_independent() {
        let n = 2 * CHUNK + 5;
        let cards = [50u32, 40, 30];
        let mut data = Vec::new();
        for (j, &card) in cards.iter().enumerate() {
            data.extend((0..n).map(|i| ((i * (7 + j) + i / 3) % card as usize) as u32));
        }
        for noise in [Noise::Laplace, Noise::Discrete] {
            let one = in_pool(1, || release(&data, n, &cards, 3.0, noise, 9).unwrap());
            let two = in_pool(2, || release(&data, n, &cards, 3.0, noise, 9).unwrap());
            assert_eq!(one, two);
            assert!(one.keys.windows(2).all(|w| w[0] < w[1]));
            assert!(one.values.iter().all(|&v| v > 3.0));
            assert!(one.keys.iter().all(|&k| k < 60_000));
            if noise == Noise::Discrete {
                assert!(one.values.iter().all(|&v| v == v.round()));
            }
            assert_ne!(one, release(&data, n, &cards, 3.0, noise, 10).unwrap());
        }
    }

    #[test]
    fn merged_block_counts_release_the_same_histogram() {
        let n = CHUNK + 11;
        let cards = [7u32, 5, 3];
        let mut data = Vec::new();
        for (j, &card) in cards.iter().enumerate() {
            data.extend((0..n).map(|i| ((i * (3 + j) + i / 5) % card as usize) as u32));
        }
        let half = n / 2;
        let block_counts = |rows: std::ops::Range<usize>| {
            let block: Vec<u32> = (0..cards.len())
                .flat_map(|j| data[j * n + rows.start..j * n + rows.end].to_vec())
                .collect();
            let cols = Columns::new(&block, rows.len(), &cards).unwrap();
            SparseCounts::from_keys(&mixed_radix_encode(cols).unwrap())
        };
        let merged = block_counts(0..half).merge(&block_counts(half..n)).unwrap();
        for noise in [Noise::Laplace, Noise::Discrete] {
            let whole = release(&data, n, &cards, 2.0, noise, 5).unwrap();
            let seed = Seed::from_u64(5);
            let counted =
                thresholded_histogram_of_counts(&merged, &cards, 1.0, 2.0, noise, u64::MAX, &seed)
                    .unwrap();
            assert_eq!(whole, counted);
        }
        let outside = SparseCounts::from_parts(vec![105], vec![1]).unwrap();
        let err = thresholded_histogram_of_counts(
            &outside,
            &cards,
            1.0,
            2.0,
            Noise::Laplace,
            u64::MAX,
            &Seed::from_u64(0),
        )
        .unwrap_err();
        assert!(matches!(err, Error::InvalidData(_)), "{err}");
        assert!(check_histogram(&cards, 1.0, 2.0, Noise::Laplace, 1).is_err());
        assert!(check_histogram(&cards, 1.0, 2.0, Noise::Laplace, 1000).is_ok());
    }

    #[test]
    fn huge_domains_are_not_enumerated() {
        let cards = [1u32 << 16; 4];
        let data: Vec<u32> = (0..4 * 1000).map(|i| (i * 7919 % 65_536) as u32).collect();
        // p = ½·e^(−30) ≈ 4.7e-14, so about 8.6e5 empty cells are expected over 2^64.
        let hist = release(&data, 1000, &cards, 60.0, Noise::Laplace, 1).unwrap();
        let expected = 2f64.powi(64) * 0.5 * (-30f64).exp();
        let sd = expected.sqrt();
        assert!(
            (hist.keys.len() as f64 - expected).abs() < 6.0 * sd,
            "{} vs {expected}",
            hist.keys.len()
        );
        let err = thresholded_histogram(
            Columns::new(&data, 1000, &cards).unwrap(),
            1.0,
            60.0,
            Noise::Laplace,
            100_000,
            &Seed::from_u64(1),
        )
        .unwrap_err();
        assert!(matches!(err, Error::Domain(_)));
        assert!(err.to_string().contains("max_cells = 100000"), "{err}");
    }

    #[test]
    fn domains_above_two_to_the_64_are_rejected() {
        let cards = [1u32 << 16, 1 << 16, 1 << 16, (1 << 16) + 1];
        let err = release(&[0, 0, 0, 0], 1, &cards, 5.0, Noise::Laplace, 0).unwrap_err();
        assert!(matches!(err, Error::Domain(_)));
    }

    #[test]
    fn no_rows_and_negative_thresholds() {
        let hist = release(&[], 0, &[4, 4], 0.5, Noise::Laplace, 3).unwrap();
        assert!(hist.values.iter().all(|&v| v > 0.5));
        let hist = release(&[0, 1, 2, 3], 2, &[4, 4], -3.0, Noise::Discrete, 3).unwrap();
        assert!(hist.keys.len() > 8);
        assert!(hist.values.iter().all(|&v| v > -3.0));
        let hist = release(&[0, 1, 2, 3], 2, &[4, 4], -3.0, Noise::Laplace, 3).unwrap();
        assert!(hist.values.iter().all(|&v| v > -3.0));
        let two64 = [1u32 << 16; 4];
        let p_tiny = release(&[], 0, &two64, 90.0, Noise::Laplace, 4).unwrap();
        assert!(p_tiny.keys.len() < 10);
    }
}
