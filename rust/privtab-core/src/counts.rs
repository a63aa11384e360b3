//! Contingency tables, mergeable sparse counts and entropies (log base 2).
//!
//! Dense tables are counted over fixed blocks of rows, each into its own local table, and
//! the local tables are added: integer addition is exact, so the result is the same for any
//! number of threads. When the table would be much larger than the data, counts are kept
//! sparse ([`SparseCounts`]: sorted `u64` keys with their counts). Sparse counts of
//! disjoint row blocks [`merge`](SparseCounts::merge) into the counts of their union, which
//! lets a distributed engine count partitions separately and add noise once, centrally.

use rayon::prelude::*;

use std::sync::atomic::{AtomicBool, Ordering};

use crate::columns::{Code, Columns, check_codes, check_table_shape, first_invalid, invalid_code};
use crate::encode::{
    COLUMN_BLOCK, RowEncoder, check_domain, check_nonzero, place_values, rows_error,
};
use crate::histogram::count_blocks;
use crate::resources::{check_interrupt, zeroed};
use crate::rng::CHUNK;
use crate::{Error, Result};

/// Tables with at most this many cells (or at most twice as many cells as rows) are counted
/// densely by [`contingency`] and the entropy helpers; larger ones sparsely.
pub const DENSE_MIN_CELLS: usize = 1 << 16;

/// Rows per block of the sparse counter: each block is sorted on its own, then blocks merge.
const SORT_BLOCK: usize = 1 << 20;

/// Whether a table of `cells` cells over `n_rows` rows should be counted densely.
pub fn prefer_dense(cells: u128, n_rows: usize) -> bool {
    cells <= DENSE_MIN_CELLS.max(n_rows.saturating_mul(2)) as u128
}

/// Counts `n_rows` rows into a dense table of `cells` cells: `count_rows(table, range)` adds
/// the rows of `range`. Rows are split into fixed blocks of at least twice as many rows as
/// cells, so allocating and adding the local tables never costs more than the counting.
pub(crate) fn dense_counts<F>(
    n_rows: usize,
    cells: usize,
    what: &str,
    count_rows: F,
) -> Result<Vec<u64>>
where
    F: Fn(&mut [u64], std::ops::Range<usize>) + Sync,
{
    checked_dense_counts(n_rows, cells, what, |table, rows| {
        count_rows(table, rows);
        true
    })
    .map(|(table, _)| table)
}

/// Like [`dense_counts`] for counters that also check their rows: `count_rows` returns
/// whether every row of its range was valid, and the second value is whether all were.
/// When it is `false` the table is meaningless and the caller reports the first bad row.
fn checked_dense_counts<F>(
    n_rows: usize,
    cells: usize,
    what: &str,
    count_rows: F,
) -> Result<(Vec<u64>, bool)>
where
    F: Fn(&mut [u64], std::ops::Range<usize>) -> bool + Sync,
{
    let block = CHUNK.max(cells.saturating_mul(2));
    if n_rows <= block {
        let mut table = zeroed(cells, what)?;
        let valid = count_polled(&count_rows, &mut table, 0..n_rows)?;
        return Ok((table, valid));
    }
    let block = block.next_multiple_of(CHUNK);
    // Here cells < n_rows / 2, so the local tables are small next to the data. Each rayon
    // job reuses one local table over all the blocks it folds.
    let n_blocks = n_rows.div_ceil(block);
    let table = (0..n_blocks)
        .into_par_iter()
        .try_fold(
            || (vec![0u64; cells], true),
            |(mut local, valid), b| {
                let rows = b * block..((b + 1) * block).min(n_rows);
                let block_valid = count_polled(&count_rows, &mut local, rows)?;
                Ok((local, valid && block_valid))
            },
        )
        .try_reduce_with(|(mut a, a_valid), (b, b_valid)| {
            add_into(&mut a, &b);
            Ok((a, a_valid && b_valid))
        });
    table.unwrap_or(Ok((Vec::new(), true)))
}

/// Rows counted between two looks at the interrupt flag: a few milliseconds of counting,
/// so that a block of a large table (up to twice as many rows as cells) stops quickly.
const POLL_ROWS: usize = 1 << 20;

/// `count_rows` over `rows` in pieces of [`POLL_ROWS`], stopping when interrupted.
fn count_polled<F>(count_rows: &F, table: &mut [u64], rows: std::ops::Range<usize>) -> Result<bool>
where
    F: Fn(&mut [u64], std::ops::Range<usize>) -> bool,
{
    let mut valid = true;
    for start in rows.clone().step_by(POLL_ROWS) {
        check_interrupt()?;
        valid &= count_rows(table, start..(start + POLL_ROWS).min(rows.end));
    }
    Ok(valid)
}

fn add_into(acc: &mut [u64], other: &[u64]) {
    for (a, &b) in acc.iter_mut().zip(other) {
        // Cannot wrap: every count is bounded by the number of rows.
        *a = a.wrapping_add(b);
    }
}

fn check_same_length(x_len: usize, y_len: usize) -> Result<()> {
    if x_len == y_len {
        Ok(())
    } else {
        Err(Error::InvalidData(format!(
            "x and y must have the same length, got {x_len} and {y_len}"
        )))
    }
}

fn check_cardinality(name: &'static str, k: u32) -> Result<()> {
    if k == 0 {
        Err(Error::parameter(name, k, "must be >= 1"))
    } else {
        Ok(())
    }
}

/// Validates the lengths and cardinalities of a pair of code vectors and returns the number
/// of cells of their table. The codes themselves are checked by the counting pass.
fn check_pair(x_len: usize, kx: u32, y_len: usize, ky: u32) -> Result<u128> {
    check_same_length(x_len, y_len)?;
    check_cardinality("kx", kx)?;
    check_cardinality("ky", ky)?;
    Ok(u128::from(kx) * u128::from(ky))
}

/// The error naming the first invalid code of `x`, else of `y` (as if `x` were checked
/// completely before `y`), or `None` when all codes are in range.
fn pair_error<X: Code, Y: Code>(x: &[X], kx: u32, y: &[Y], ky: u32) -> Option<Error> {
    if let Some(row) = first_invalid(x, u64::from(kx)) {
        return Some(invalid_code(
            "x",
            &format!("x[{row}]"),
            x[row],
            &format!("kx = {kx}"),
        ));
    }
    first_invalid(y, u64::from(ky))
        .map(|row| invalid_code("y", &format!("y[{row}]"), y[row], &format!("ky = {ky}")))
}

/// Tables with at most this many cells are counted into [`LANES`] interleaved copies.
const LANE_CELLS: usize = 1 << 10;

/// Number of interleaved copies of a small table.
const LANES: usize = 4;

/// Adds the rows `x`, `y` to `table` (`kx · ky` cells) and returns whether every code was in
/// range.
///
/// The range check is fused into the counting pass: out-of-range codes (negative ones
/// included, see [`Code::index`]) are clamped into the table so that indexing cannot fail,
/// and the caller discards the table when `false` is returned.
fn count_pairs<X: Code, Y: Code>(x: &[X], y: &[Y], kx: u64, ky: u64, table: &mut [u64]) -> bool {
    let (x_last, y_last) = (kx - 1, ky - 1);
    let cell = |a: u64, b: u64| a.min(x_last).wrapping_mul(ky).wrapping_add(b.min(y_last)) as usize;
    let mut valid = true;
    let cells = table.len();
    if cells > LANE_CELLS || x.len() > u32::MAX as usize {
        for (&a, &b) in x.iter().zip(y) {
            let (a, b) = (a.index(), b.index());
            valid &= (a < kx) & (b < ky);
            table[cell(a, b)] += 1;
        }
        return valid;
    }
    // Neighbouring rows often fall into the same cell of a small table; counting them into
    // different copies keeps each increment from waiting for the previous one's store.
    let mut lanes = vec![0u32; LANES * cells];
    let (x_rows, y_rows) = (x.chunks_exact(LANES), y.chunks_exact(LANES));
    let (x_rest, y_rest) = (x_rows.remainder(), y_rows.remainder());
    for (xs, ys) in x_rows.zip(y_rows) {
        for lane in 0..LANES {
            let (a, b) = (xs[lane].index(), ys[lane].index());
            valid &= (a < kx) & (b < ky);
            lanes[lane * cells + cell(a, b)] += 1;
        }
    }
    for (&a, &b) in x_rest.iter().zip(y_rest) {
        let (a, b) = (a.index(), b.index());
        valid &= (a < kx) & (b < ky);
        lanes[cell(a, b)] += 1;
    }
    for lane in lanes.chunks_exact(cells) {
        for (total, &count) in table.iter_mut().zip(lane) {
            *total += u64::from(count);
        }
    }
    valid
}

/// Counts of each code `0..k` in `codes`.
///
/// # Errors
/// [`Error::InvalidParameter`] when `k` is 0; [`Error::InvalidData`] when a code is ≥ `k`;
/// [`Error::OutputTooLarge`] when `k` counts cannot be allocated.
pub fn bincount(codes: &[u32], k: u32) -> Result<Vec<u64>> {
    check_cardinality("k", k)?;
    check_codes(codes, k, "codes")?;
    dense_counts(codes.len(), k as usize, "bincount", |table, rows| {
        for &c in &codes[rows] {
            table[c as usize] += 1;
        }
    })
}

/// The dense contingency table of `x` (rows, cardinality `kx`) and `y` (columns,
/// cardinality `ky`), row-major: cell `(a, b)` is at `a * ky + b`.
///
/// The codes may be of any integer type; they are range-checked in the counting pass
/// itself, so the data is read once.
///
/// # Errors
/// [`Error::InvalidData`] for different lengths or a code that is negative or out of range
/// (naming the first such row of `x`, else of `y`); [`Error::InvalidParameter`] for a zero
/// cardinality; [`Error::OutputTooLarge`] when `kx · ky` cells cannot be allocated.
pub fn contingency_dense<X: Code, Y: Code>(x: &[X], kx: u32, y: &[Y], ky: u32) -> Result<Vec<u64>> {
    let cells = check_pair(x.len(), kx, y.len(), ky)?;
    let counted = usize::try_from(cells)
        .map_err(|_| {
            Error::OutputTooLarge(format!(
                "a {kx} x {ky} contingency table does not fit in memory"
            ))
        })
        .and_then(|cells| {
            let (kx64, ky64) = (u64::from(kx), u64::from(ky));
            checked_dense_counts(x.len(), cells, "the contingency table", |table, rows| {
                count_pairs(&x[rows.clone()], &y[rows], kx64, ky64, table)
            })
        });
    match counted {
        Ok((table, true)) => Ok(table),
        Err(Error::Interrupted) => Err(Error::Interrupted),
        // Invalid codes are reported before a table that is too large.
        Ok((_, false)) | Err(_) => match pair_error(x, kx, y, ky) {
            Some(err) => Err(err),
            None => counted.map(|(table, _)| table),
        },
    }
}

/// The non-zero cells of the contingency table of `x` and `y`, keyed by `a · ky + b`.
///
/// # Errors
/// As [`contingency_dense`], without the allocation limit (memory is O(n)).
pub fn contingency_sparse<X: Code, Y: Code>(
    x: &[X],
    kx: u32,
    y: &[Y],
    ky: u32,
) -> Result<SparseCounts> {
    check_pair(x.len(), kx, y.len(), ky)?;
    let (kx64, ky64) = (u64::from(kx), u64::from(ky));
    let mut keys = vec![0u64; x.len()];
    let valid = keys
        .par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK).zip(y.par_chunks(CHUNK)))
        .map(|(out, (xs, ys))| {
            let mut valid = true;
            for ((key, &a), &b) in out.iter_mut().zip(xs).zip(ys) {
                let (a, b) = (a.index(), b.index());
                valid &= (a < kx64) & (b < ky64);
                *key = a.wrapping_mul(ky64).wrapping_add(b);
            }
            valid
        })
        .reduce(|| true, |a, b| a && b);
    if !valid && let Some(err) = pair_error(x, kx, y, ky) {
        return Err(err);
    }
    Ok(SparseCounts::from_keys(&keys))
}

/// A contingency table in whichever layout suits its size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Contingency {
    /// All `kx · ky` cells, row-major.
    Dense(Vec<u64>),
    /// Only the non-zero cells, keyed by `a · ky + b`.
    Sparse(SparseCounts),
}

impl Contingency {
    /// The non-zero counts, in no particular order (enough for entropies).
    pub fn nonzero_counts(&self) -> Vec<u64> {
        match self {
            Contingency::Dense(cells) => cells.iter().copied().filter(|&c| c > 0).collect(),
            Contingency::Sparse(sparse) => sparse.counts().to_vec(),
        }
    }
}

/// The contingency table of `x` and `y`: dense when `kx · ky` is at most
/// `max(DENSE_MIN_CELLS, 2n)`, sparse otherwise.
///
/// # Errors
/// As [`contingency_dense`].
pub fn contingency<X: Code, Y: Code>(x: &[X], kx: u32, y: &[Y], ky: u32) -> Result<Contingency> {
    let cells = check_pair(x.len(), kx, y.len(), ky)?;
    if prefer_dense(cells, x.len()) {
        contingency_dense(x, kx, y, ky).map(Contingency::Dense)
    } else {
        contingency_sparse(x, kx, y, ky).map(Contingency::Sparse)
    }
}

/// The non-zero counts of the codes of one attribute (dense or sparse by size).
pub(crate) fn value_counts(codes: &[u32], k: u32) -> Result<Vec<u64>> {
    check_cardinality("k", k)?;
    if prefer_dense(u128::from(k), codes.len()) {
        let mut counts = bincount(codes, k)?;
        counts.retain(|&c| c > 0);
        Ok(counts)
    } else {
        check_codes(codes, k, "codes")?;
        let keys: Vec<u64> = codes.par_iter().map(|&c| u64::from(c)).collect();
        Ok(SparseCounts::from_keys(&keys).counts)
    }
}

/// Counts of the value combinations of the attributes `subset` of `cols` (a k-way
/// marginal), keyed by their mixed-radix key over the subset's cardinalities (first listed
/// attribute most significant).
///
/// A domain that [`prefer_dense`] accepts is counted in a dense table, over fixed blocks
/// of rows whose keys are made and counted a cache block at a time; a larger one as the
/// thresholded histogram counts its cells (buckets of keys by their leading bits, each
/// counted in a small hash table). Neither keeps a key per row.
///
/// # Errors
/// [`Error::InvalidData`] for an out-of-range index; [`Error::Domain`] when the product of
/// the selected cardinalities exceeds 2^64.
pub fn count_columns(cols: Columns<'_>, subset: &[usize]) -> Result<SparseCounts> {
    let encoder = RowEncoder::subset(cols, subset)?;
    count_encoded(cols.n_rows(), encoder.domain(), |start, out| {
        encoder.encode(start, out);
    })
}

/// [`count_columns`] of codes of any integer type stored row-major (`data[i * d + j]` is
/// row `i` of column `j`, as a C-ordered `(n_rows, d)` array), read in place: no
/// column-major `u32` copy is made, whose fresh memory (four bytes a code) cost more
/// than the counting. Each row's codes are read together, and every code of the row
/// (counted or not, as for a validated table) is checked against its cardinality.
///
/// # Errors
/// As [`count_columns`]; [`Error::InvalidData`] when the length is not `n_rows · d`, a
/// cardinality is 0, or a code is negative or ≥ its cardinality (naming `what`, the first
/// such row and its column, as [`mixed_radix_encode_rows`] does).
pub fn count_columns_of_rows<C: Code>(
    data: &[C],
    n_rows: usize,
    cardinalities: &[u32],
    subset: &[usize],
    what: &str,
) -> Result<SparseCounts> {
    let d = cardinalities.len();
    check_table_shape(data.len(), n_rows, d, what)?;
    check_nonzero(cardinalities)?;
    if let Some(&j) = subset.iter().find(|&&j| j >= d) {
        return Err(Error::InvalidData(format!(
            "column index {j} is out of range for a table of {d} columns"
        )));
    }
    let counted: Vec<u32> = subset.iter().map(|&j| cardinalities[j]).collect();
    let domain = check_domain(&counted)?;
    let weights = place_values(&counted);
    let radices: Vec<u64> = cardinalities.iter().map(|&k| u64::from(k)).collect();
    let invalid = AtomicBool::new(false);
    let counts = count_encoded(n_rows, domain, |start, out| {
        if d == 0 {
            out.fill(0);
            return;
        }
        let mut valid = true;
        let rows = &data[start * d..(start + out.len()) * d];
        for (key, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
            for (&code, &radix) in row.iter().zip(&radices) {
                valid &= code.index() < radix;
            }
            // Exact modulo 2^64 for valid codes (see `place_values`).
            *key = subset
                .iter()
                .zip(&weights)
                .fold(0u64, |acc, (&j, &weight)| {
                    acc.wrapping_add(row[j].index().wrapping_mul(weight))
                });
        }
        if !valid {
            // Keys of invalid codes may lie outside the domain; the counts are dropped.
            invalid.store(true, Ordering::Relaxed);
            out.fill(0);
        }
    })?;
    if invalid.load(Ordering::Relaxed) {
        return Err(rows_error(data, cardinalities, what));
    }
    Ok(counts)
}

/// The counts of the `n` keys `encode(start, out)` writes (keys `start..start +
/// out.len()`, all below `domain`): in a dense table when [`prefer_dense`] accepts the
/// domain, over fixed blocks of rows whose keys are made and counted a cache block at a
/// time; otherwise by [`count_blocks`].
fn count_encoded<F>(n: usize, domain: u128, encode: F) -> Result<SparseCounts>
where
    F: Fn(usize, &mut [u64]) + Sync,
{
    if !prefer_dense(domain, n) {
        return count_blocks(n, domain, encode);
    }
    let table = dense_counts(n, domain as usize, "the counts", |table, rows| {
        let mut keys = [0u64; COLUMN_BLOCK];
        for start in rows.clone().step_by(COLUMN_BLOCK) {
            let block = &mut keys[..COLUMN_BLOCK.min(rows.end - start)];
            encode(start, block);
            for &key in block.iter() {
                table[key as usize] += 1;
            }
        }
    })?;
    Ok(SparseCounts::from_dense(&table))
}

/// Counts of distinct `u64` keys, sorted by key; mergeable across blocks of rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseCounts {
    keys: Vec<u64>,
    counts: Vec<u64>,
}

impl SparseCounts {
    /// Counts the distinct values of `keys` in O(n) per radix pass: blocks of rows are radix
    /// sorted in parallel (only the bytes that vary are sorted on), run-length encoded and
    /// merged pairwise. The result does not depend on the number of threads.
    pub fn from_keys(keys: &[u64]) -> Self {
        keys.par_chunks(SORT_BLOCK)
            .map(|block| {
                let mut sorted = block.to_vec();
                radix_sort(&mut sorted);
                run_lengths(&sorted)
            })
            .reduce_with(|a, b| a.merge_saturating(&b))
            .unwrap_or_default()
    }

    /// The non-zero cells of a dense table, keyed by their index.
    fn from_dense(table: &[u64]) -> Self {
        let (keys, counts) = table
            .iter()
            .enumerate()
            .filter(|&(_, &count)| count > 0)
            .map(|(key, &count)| (key as u64, count))
            .unzip();
        SparseCounts { keys, counts }
    }

    /// Wraps keys and counts computed elsewhere (e.g. on another machine).
    ///
    /// # Errors
    /// [`Error::InvalidData`] when the lengths differ, the keys are not strictly increasing,
    /// or a count is 0.
    pub fn from_parts(keys: Vec<u64>, counts: Vec<u64>) -> Result<Self> {
        if keys.len() != counts.len() {
            return Err(Error::InvalidData(format!(
                "keys and counts must have the same length, got {} and {}",
                keys.len(),
                counts.len()
            )));
        }
        if let Some(i) = keys.windows(2).position(|w| w[0] >= w[1]) {
            return Err(Error::InvalidData(format!(
                "keys must be strictly increasing, but keys[{}] = {} >= keys[{}] = {}",
                i,
                keys[i],
                i + 1,
                keys[i + 1]
            )));
        }
        if let Some(i) = counts.iter().position(|&c| c == 0) {
            return Err(Error::InvalidData(format!(
                "counts must be >= 1, got 0 at index {i}"
            )));
        }
        Ok(SparseCounts { keys, counts })
    }

    /// The distinct keys, strictly increasing.
    pub fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// The count of each key (all ≥ 1).
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The number of distinct keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key was counted.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The sum of the counts (the number of rows counted).
    pub fn total(&self) -> u128 {
        self.counts.iter().map(|&c| u128::from(c)).sum()
    }

    /// Splits into `(keys, counts)`.
    pub fn into_parts(self) -> (Vec<u64>, Vec<u64>) {
        (self.keys, self.counts)
    }

    /// The counts of the union of the rows counted by `self` and by `other`: keys present in
    /// both get the sum of their counts.
    ///
    /// # Errors
    /// [`Error::InvalidData`] when a summed count would exceed 2^64 − 1.
    pub fn merge(&self, other: &SparseCounts) -> Result<SparseCounts> {
        let merged = self.merge_saturating(other);
        if merged.total() == self.total() + other.total() {
            Ok(merged)
        } else {
            Err(Error::InvalidData(
                "merged counts exceed 2**64 - 1".to_string(),
            ))
        }
    }

    fn merge_saturating(&self, other: &SparseCounts) -> SparseCounts {
        let (a, b) = (self, other);
        let mut keys = Vec::with_capacity(a.len() + b.len());
        let mut counts = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a.keys[i].cmp(&b.keys[j]) {
                std::cmp::Ordering::Less => {
                    keys.push(a.keys[i]);
                    counts.push(a.counts[i]);
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    keys.push(b.keys[j]);
                    counts.push(b.counts[j]);
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    keys.push(a.keys[i]);
                    counts.push(a.counts[i].saturating_add(b.counts[j]));
                    i += 1;
                    j += 1;
                }
            }
        }
        keys.extend_from_slice(&a.keys[i..]);
        counts.extend_from_slice(&a.counts[i..]);
        keys.extend_from_slice(&b.keys[j..]);
        counts.extend_from_slice(&b.counts[j..]);
        SparseCounts { keys, counts }
    }
}

pub(crate) fn run_lengths(sorted: &[u64]) -> SparseCounts {
    let mut keys = Vec::new();
    let mut counts: Vec<u64> = Vec::new();
    for &key in sorted {
        match (keys.last(), counts.last_mut()) {
            (Some(&last), Some(count)) if last == key => *count += 1,
            _ => {
                keys.push(key);
                counts.push(1);
            }
        }
    }
    SparseCounts { keys, counts }
}

/// LSD radix sort on bytes, skipping the bytes on which all keys agree (so keys from a
/// small domain take one or two passes).
pub(crate) fn radix_sort(keys: &mut Vec<u64>) {
    radix_sort_above(keys, 0);
}

/// Sorts `keys` by their bits from `low_bit` up (a multiple of 8), as [`radix_sort`]: the
/// bits below ride along (a count packed under its key), in the order stability gives.
pub(crate) fn radix_sort_above(keys: &mut Vec<u64>, low_bit: u32) {
    debug_assert!(low_bit.is_multiple_of(8) && low_bit < 64);
    if keys.len() <= 64 {
        keys.sort_unstable_by_key(|&k| k >> low_bit);
        return;
    }
    let (any, all) = keys
        .iter()
        .fold((0u64, u64::MAX), |(any, all), &k| (any | k, all & k));
    let varying = any ^ all;
    let mut buffer = vec![0u64; keys.len()];
    for shift in (low_bit..64).step_by(8) {
        if (varying >> shift) & 0xff == 0 {
            continue;
        }
        let mut offsets = [0usize; 256];
        for &k in keys.iter() {
            offsets[((k >> shift) & 0xff) as usize] += 1;
        }
        let mut sum = 0;
        for slot in offsets.iter_mut() {
            let count = *slot;
            *slot = sum;
            sum += count;
        }
        for &k in keys.iter() {
            let digit = ((k >> shift) & 0xff) as usize;
            buffer[offsets[digit]] = k;
            offsets[digit] += 1;
        }
        std::mem::swap(keys, &mut buffer);
    }
}

/// Shannon entropy in bits of the distribution given by `counts` (0 · log 0 = 0); 0 when all
/// counts are 0.
pub fn entropy(counts: &[u64]) -> f64 {
    let total: f64 = counts.iter().map(|&c| c as f64).sum();
    if total == 0.0 {
        return 0.0;
    }
    let h: f64 = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / total;
            -p * p.log2()
        })
        .sum();
    h.max(0.0)
}

/// Shannon entropy in bits of non-negative real weights (e.g. noisy counts clamped at 0);
/// 0 when all weights are 0.
///
/// # Errors
/// [`Error::InvalidData`] naming the first weight that is negative, NaN or infinite.
pub fn entropy_of_weights(weights: &[f64]) -> Result<f64> {
    if let Some(i) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
        return Err(Error::InvalidData(format!(
            "counts must be finite and >= 0, got {} at index {i}",
            weights[i]
        )));
    }
    // Scaling by the largest weight keeps the total finite for weights near f64::MAX.
    let max = weights.iter().copied().fold(0.0f64, f64::max);
    if max == 0.0 {
        return Ok(0.0);
    }
    let total: f64 = weights.iter().map(|w| w / max).sum();
    let h: f64 = weights
        .iter()
        .filter(|&&w| w > 0.0)
        .map(|w| {
            let p = w / max / total;
            if p > 0.0 { -p * p.log2() } else { 0.0 }
        })
        .sum();
    Ok(h.max(0.0))
}

/// H(X) in bits of the codes of one attribute.
///
/// # Errors
/// As [`bincount`].
pub fn column_entropy(codes: &[u32], k: u32) -> Result<f64> {
    Ok(entropy(&value_counts(codes, k)?))
}

/// H(X, Y) in bits.
///
/// # Errors
/// As [`contingency`].
pub fn joint_entropy(x: &[u32], kx: u32, y: &[u32], ky: u32) -> Result<f64> {
    Ok(entropy(&contingency(x, kx, y, ky)?.nonzero_counts()))
}

/// The three entropies H(X), H(Y), H(X, Y) in bits.
fn entropies(x: &[u32], kx: u32, y: &[u32], ky: u32) -> Result<(f64, f64, f64)> {
    let hxy = joint_entropy(x, kx, y, ky)?;
    Ok((column_entropy(x, kx)?, column_entropy(y, ky)?, hxy))
}

/// Mutual information I(X; Y) = H(X) + H(Y) − H(X, Y) in bits (clamped at 0 against
/// rounding).
///
/// # Errors
/// As [`contingency`].
pub fn mutual_information(x: &[u32], kx: u32, y: &[u32], ky: u32) -> Result<f64> {
    let (hx, hy, hxy) = entropies(x, kx, y, ky)?;
    Ok((hx + hy - hxy).max(0.0))
}

/// Symmetric uncertainty SU = 2·(H(X) + H(Y) − H(X, Y)) / (H(X) + H(Y)), in [0, 1]; 0 when
/// H(X) + H(Y) = 0 (both attributes constant).
///
/// # Errors
/// As [`contingency`].
pub fn symmetric_uncertainty(x: &[u32], kx: u32, y: &[u32], ky: u32) -> Result<f64> {
    let (hx, hy, hxy) = entropies(x, kx, y, ky)?;
    let denominator = hx + hy;
    if denominator <= 0.0 {
        return Ok(0.0);
    }
    Ok((2.0 * (hx + hy - hxy) / denominator).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg_codes(n: usize, k: u32, seed: u64) -> Vec<u32> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 33) % u64::from(k)) as u32
            })
            .collect()
    }

    fn naive_table(x: &[u32], y: &[u32], ky: u32) -> std::collections::BTreeMap<u64, u64> {
        let mut map = std::collections::BTreeMap::new();
        for (&a, &b) in x.iter().zip(y) {
            *map.entry(u64::from(a) * u64::from(ky) + u64::from(b))
                .or_insert(0) += 1;
        }
        map
    }

    /// A naive count of the mixed-radix keys of the rows of a row-major table over
    /// `subset` (first listed most significant).
    fn naive_subset_counts(
        rows: &[i64],
        cards: &[u32],
        subset: &[usize],
    ) -> std::collections::BTreeMap<u64, u64> {
        let mut map = std::collections::BTreeMap::new();
        for row in rows.chunks_exact(cards.len()) {
            let key = subset
                .iter()
                .fold(0u64, |key, &j| key * u64::from(cards[j]) + row[j] as u64);
            *map.entry(key).or_insert(0) += 1;
        }
        map
    }

    #[test]
    fn row_major_counts_match_a_naive_count_on_any_thread_count() {
        let n = 2 * CHUNK + 17;
        let cards = [3u32, 200, 7, 250, 2];
        let columns: Vec<Vec<u32>> = cards
            .iter()
            .zip(1u64..)
            .map(|(&k, seed)| lcg_codes(n, k, seed))
            .collect();
        let rows: Vec<i64> = (0..n)
            .flat_map(|i| columns.iter().map(move |c| i64::from(c[i])))
            .collect();
        let narrow: Vec<u8> = rows.iter().map(|&c| c as u8).collect();
        // Dense (21 cells), sparse (7 · 200 · 250 cells > 2n), a repeated column, none.
        for subset in [vec![2, 0], vec![2, 1, 3], vec![4, 4, 0], vec![]] {
            let naive = naive_subset_counts(&rows, &cards, &subset);
            for threads in [1, 2] {
                let (wide, bytes) = crate::resources::with_pool(threads, || {
                    (
                        count_columns_of_rows(&rows, n, &cards, &subset, "codes"),
                        count_columns_of_rows(&narrow, n, &cards, &subset, "codes"),
                    )
                });
                let wide = wide.expect("i64 rows");
                assert_eq!(bytes.expect("u8 rows"), wide);
                let got: std::collections::BTreeMap<u64, u64> = wide
                    .keys()
                    .iter()
                    .copied()
                    .zip(wide.counts().iter().copied())
                    .collect();
                assert_eq!(got, naive, "subset {subset:?} on {threads} thread(s)");
            }
        }
    }

    #[test]
    fn row_major_counts_name_the_first_bad_code_of_any_column() {
        let cards = [3u32, 5, 4];
        let mut rows: Vec<i64> = (0..3 * CHUNK as i64 * 3).map(|i| i % 3).collect();
        let n = rows.len() / 3;
        // A code of a column that is not counted is still checked; the first bad row wins.
        rows[3 * (n - 5) + 2] = 4;
        rows[3 * (CHUNK + 1)] = -2;
        for threads in [1, 2] {
            let err = crate::resources::with_pool(threads, || {
                count_columns_of_rows(&rows, n, &cards, &[1], "codes")
            })
            .expect_err("bad codes");
            let expected = crate::encode::mixed_radix_encode_rows(&rows, n, &cards, "codes")
                .expect_err("bad codes");
            assert_eq!(err.to_string(), expected.to_string());
            assert!(
                err.to_string()
                    .contains(&format!("codes[{}, 0]", CHUNK + 1)),
                "{err}"
            );
        }
        assert!(count_columns_of_rows(&rows[..5], 2, &cards, &[0], "codes").is_err());
        assert!(count_columns_of_rows(&rows[..6], 2, &[3, 0, 4], &[0], "codes").is_err());
        assert!(count_columns_of_rows(&rows[..6], 2, &cards, &[3], "codes").is_err());
    }

    #[test]
    fn dense_and_sparse_tables_agree_with_a_naive_count() {
        let n = 3 * CHUNK + 5;
        let (kx, ky) = (7, 13);
        let x = lcg_codes(n, kx, 1);
        let y = lcg_codes(n, ky, 2);
        let naive = naive_table(&x, &y, ky);
        let dense = contingency_dense(&x, kx, &y, ky).expect("dense");
        assert_eq!(dense.iter().sum::<u64>(), n as u64);
        for (&key, &count) in &naive {
            assert_eq!(dense[key as usize], count);
        }
        let sparse = contingency_sparse(&x, kx, &y, ky).expect("sparse");
        assert_eq!(sparse.keys(), naive.keys().copied().collect::<Vec<_>>());
        assert_eq!(sparse.counts(), naive.values().copied().collect::<Vec<_>>());
        assert!(matches!(
            contingency(&x, kx, &y, ky),
            Ok(Contingency::Dense(_))
        ));
        let big = u32::MAX;
        assert!(matches!(
            contingency(&x, big, &y, big),
            Ok(Contingency::Sparse(_))
        ));
    }

    #[test]
    fn same_table_for_one_and_two_threads() {
        let n = 5 * CHUNK + 3;
        let x = lcg_codes(n, 300, 3);
        let y = lcg_codes(n, 200, 4);
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool")
                .install(|| {
                    (
                        contingency_dense(&x, 300, &y, 200).expect("dense"),
                        contingency_sparse(&x, 300, &y, 200).expect("sparse"),
                    )
                })
        };
        assert_eq!(run(1), run(2));
    }

    #[test]
    fn validation_errors_name_the_argument() {
        let err = contingency_dense(&[0, 1], 2, &[0], 2).unwrap_err();
        assert_eq!(
            err.to_string(),
            "x and y must have the same length, got 2 and 1"
        );
        let err = contingency_dense(&[0u32, 2], 2, &[0u32, 0], 2).unwrap_err();
        assert_eq!(err.to_string(), "x[1] = 2 is >= kx = 2");
        let err = contingency_dense(&[0], 0, &[0], 2).unwrap_err();
        assert_eq!(err.to_string(), "kx must be >= 1, got 0");
        assert!(matches!(
            contingency_dense(&[0], u32::MAX, &[0], u32::MAX),
            Err(Error::OutputTooLarge(_))
        ));
    }

    macro_rules! generic_pair_tests {
        ($($name:ident: $t:ty),*) => {$(
            #[test]
            fn $name() {
                let n = 3 * CHUNK + 7;
                let (kx, ky) = (7u32, 5u32);
                let x32 = lcg_codes(n, kx, 11);
                let y32 = lcg_codes(n, ky, 12);
                let expect = contingency_dense(&x32, kx, &y32, ky).expect("u32 table");
                let naive = naive_table(&x32, &y32, ky);
                for (&key, &count) in &naive {
                    assert_eq!(expect[key as usize], count);
                }
                let x: Vec<$t> = x32.iter().map(|&c| c as $t).collect();
                let y: Vec<$t> = y32.iter().map(|&c| c as $t).collect();
                for threads in [1, 3] {
                    let (dense, sparse) = crate::resources::with_pool(threads, || {
                        (
                            contingency_dense(&x, kx, &y, ky).expect("dense"),
                            contingency_sparse(&x, kx, &y, ky).expect("sparse"),
                        )
                    });
                    assert_eq!(dense, expect);
                    assert_eq!(sparse.keys(), naive.keys().copied().collect::<Vec<_>>());
                }
                let mut bad = x.clone();
                bad[CHUNK + 3] = 7 as $t;
                bad[2 * CHUNK] = 9 as $t;
                for threads in [1, 3] {
                    let err = crate::resources::with_pool(threads, || contingency_dense(&bad, kx, &y, ky))
                        .unwrap_err();
                    assert_eq!(err.to_string(), format!("x[{}] = 7 is >= kx = 7", CHUNK + 3));
                    let err = contingency_sparse(&y, ky, &bad, kx).unwrap_err();
                    assert_eq!(err.to_string(), format!("y[{}] = 7 is >= ky = 7", CHUNK + 3));
                }
                if <$t>::MIN != 0 {
                    let mut negative = y.clone();
                    negative[n - 1] = (0 as $t).wrapping_sub(1);
                    let message = format!("y must hold codes >= 0, got y[{}] = -1", n - 1);
                    let err = contingency_dense(&x, kx, &negative, ky).unwrap_err();
                    assert_eq!(err.to_string(), message);
                    let err = contingency_sparse(&x, kx, &negative, ky).unwrap_err();
                    assert_eq!(err.to_string(), message);
                }
            }
        )*};
    }

    generic_pair_tests!(
        pairs_of_u8: u8,
        pairs_of_u16: u16,
        pairs_of_u64: u64,
        pairs_of_i8: i8,
        pairs_of_i16: i16,
        pairs_of_i32: i32,
        pairs_of_i64: i64
    );

    #[test]
    fn large_tables_count_without_lanes_and_flag_bad_codes() {
        let n = 4 * CHUNK + 1;
        let x: Vec<i64> = lcg_codes(n, 3000, 21).into_iter().map(i64::from).collect();
        let y: Vec<u32> = lcg_codes(n, 40, 22);
        let dense =
            crate::resources::with_pool(2, || contingency_dense(&x, 3000, &y, 40)).expect("dense");
        let x32: Vec<u32> = x.iter().map(|&c| c as u32).collect();
        assert_eq!(dense, contingency_dense(&x32, 3000, &y, 40).expect("u32"));
        let mut bad = x.clone();
        bad[5] = i64::MIN;
        let err = contingency_dense(&bad, 3000, &y, 40).unwrap_err();
        assert!(
            err.to_string().ends_with("got x[5] = -9223372036854775808"),
            "{err}"
        );
        // An invalid code is reported even when the table could not be allocated.
        let err = contingency_dense(&[u64::MAX], u32::MAX, &[0u8], u32::MAX).unwrap_err();
        assert!(matches!(err, Error::InvalidData(_)), "{err}");
    }

    #[test]
    fn sparse_counts_merge_like_the_whole() {
        let keys: Vec<u64> = lcg_codes(3 * SORT_BLOCK / 2, 1 << 30, 5)
            .into_iter()
            .map(|k| u64::from(k) << 20)
            .collect();
        let whole = SparseCounts::from_keys(&keys);
        let (left, right) = keys.split_at(1234);
        let merged = SparseCounts::from_keys(left)
            .merge(&SparseCounts::from_keys(right))
            .expect("merge");
        assert_eq!(whole, merged);
        assert_eq!(whole.total(), keys.len() as u128);
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(whole.keys(), sorted);
    }

    #[test]
    fn merge_checks_overflow_and_parts_are_validated() {
        let a = SparseCounts::from_parts(vec![1, 5], vec![u64::MAX, 1]).expect("parts");
        let b = SparseCounts::from_parts(vec![1], vec![1]).expect("parts");
        assert!(a.merge(&b).is_err());
        assert!(SparseCounts::from_parts(vec![2, 2], vec![1, 1]).is_err());
        assert!(SparseCounts::from_parts(vec![2], vec![0]).is_err());
        assert!(SparseCounts::from_parts(vec![2], vec![]).is_err());
        assert!(SparseCounts::from_keys(&[]).is_empty());
    }

    #[test]
    fn radix_sort_sorts_any_keys() {
        let mut keys: Vec<u64> = lcg_codes(10_000, u32::MAX, 9)
            .into_iter()
            .map(|k| u64::from(k).wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mut expect = keys.clone();
        expect.sort_unstable();
        radix_sort(&mut keys);
        assert_eq!(keys, expect);
    }

    #[test]
    fn entropies_of_known_distributions() {
        assert_eq!(entropy(&[0, 0]), 0.0);
        assert_eq!(entropy(&[]), 0.0);
        assert!((entropy(&[1, 1, 1, 1]) - 2.0).abs() < 1e-12);
        assert!((entropy(&[5, 0, 5]) - 1.0).abs() < 1e-12);
        let h = entropy_of_weights(&[1.0, 3.0, 0.0]).expect("weights");
        let expect = -(0.25f64 * 0.25f64.log2() + 0.75 * 0.75f64.log2());
        assert!((h - expect).abs() < 1e-12);
        assert!(entropy_of_weights(&[1.0, f64::NAN]).is_err());
        assert!(entropy_of_weights(&[-1.0]).is_err());
        let big = entropy_of_weights(&[f64::MAX, f64::MAX]).expect("big");
        assert!((big - 1.0).abs() < 1e-12);
    }

    #[test]
    fn mutual_information_and_su_of_extreme_cases() {
        let x = [0, 1, 2, 3, 0, 1, 2, 3];
        assert!((mutual_information(&x, 4, &x, 4).expect("mi") - 2.0).abs() < 1e-12);
        assert!((symmetric_uncertainty(&x, 4, &x, 4).expect("su") - 1.0).abs() < 1e-12);
        let y = [0, 0, 0, 0, 1, 1, 1, 1];
        assert!(mutual_information(&x, 4, &y, 2).expect("mi").abs() < 1e-12);
        let constant = [0u32; 8];
        assert_eq!(
            symmetric_uncertainty(&constant, 1, &constant, 3).expect("su"),
            0.0
        );
        let big = symmetric_uncertainty(&x, u32::MAX, &y, u32::MAX).expect("sparse su");
        assert!(big.abs() < 1e-12);
    }

    #[test]
    fn k_way_counts_use_mixed_radix_keys() {
        let data = [0, 1, 1, 1, 2, 0, 2, 2, 0, 0, 0, 0];
        let cards = [2, 3, 4];
        let cols = Columns::new(&data, 4, &cards).expect("columns");
        let counts = count_columns(cols, &[1, 0]).expect("counts");
        // rows (col1, col0): (2,0), (0,1), (2,1), (2,1) → keys 4, 1, 5, 5 (radix 2)
        assert_eq!(counts.keys(), &[1, 4, 5]);
        assert_eq!(counts.counts(), &[1, 1, 2]);
        assert!(count_columns(cols, &[3]).is_err());
    }

    #[test]
    fn k_way_counts_agree_with_a_map_when_dense_and_when_sparse() {
        // Small domains are counted in a dense table, large ones by buckets of keys; row
        // counts straddle the encoder's blocks and the dense counter's row blocks.
        for (n_rows, cards) in [
            (3 * CHUNK + 17, vec![7u32, 5, 3]),
            (5_000, vec![1 << 20, 1 << 20, 3]),
            (1, vec![2, 2]),
        ] {
            let data: Vec<u32> = cards
                .iter()
                .enumerate()
                .flat_map(|(j, &k)| lcg_codes(n_rows, k, j as u64 + 1))
                .collect();
            let cols = Columns::new(&data, n_rows, &cards).expect("columns");
            let subset: Vec<usize> = if cards.len() == 3 {
                vec![2, 0, 1]
            } else {
                vec![1, 0]
            };
            let mut expected = std::collections::BTreeMap::new();
            for i in 0..n_rows {
                let key = subset.iter().fold(0u64, |key, &j| {
                    key * u64::from(cards[j]) + u64::from(data[j * n_rows + i])
                });
                *expected.entry(key).or_insert(0u64) += 1;
            }
            let counts = count_columns(cols, &subset).expect("counts");
            let keys: Vec<u64> = expected.keys().copied().collect();
            let values: Vec<u64> = expected.values().copied().collect();
            assert_eq!(counts.keys(), keys.as_slice(), "{n_rows} rows, {cards:?}");
            assert_eq!(
                counts.counts(),
                values.as_slice(),
                "{n_rows} rows, {cards:?}"
            );
        }
    }
}
