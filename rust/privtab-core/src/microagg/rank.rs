//! The stable ranking of one attribute: record indices sorted by value, ties by index
//! (`−0.0` and `0.0` tie, as under a stable sort with `partial_cmp`).
//!
//! A most-significant-digit radix sort of `(key, index)` records, where `key` is the
//! value's order-preserving bit pattern:
//!
//! 1. one pass validates the values, finds their range and, given declared bounds,
//!    counts the records of each of [`TOP_BUCKETS`] buckets of the bounds' range (when
//!    the data fill less than a quarter of it, or without bounds, a second pass counts
//!    the buckets of the data's own range);
//! 2. one pass scatters the records into their buckets in a spare buffer (stable: record
//!    order within a bucket);
//! 3. every bucket is then sorted into the output on its own while it is cache-resident:
//!    a bucket of up to [`LEAF`] records is split again by value, over its own range, into
//!    about one sub-bucket per record, and one insertion pass over it finishes the sort
//!    (a sub-bucket of more than [`TINY`] records, from skewed or tied data, gets a
//!    least-significant-digit radix sort on the 8-bit digits its keys do not share);
//!    larger buckets are split into [`TOP_BUCKETS`] by their own range and finished the
//!    same way.
//!
//! The buckets cut the range by *value* (`(v − min)·(B − 1)/(max − min)` rounded to an
//! integer, monotone in `v` under round-to-nearest), so data spread evenly over its range
//! gives even buckets whatever the exponents; a range whose width or scale is not a finite
//! double falls back to the top bits of `key − min`, and so does a split by value that
//! leaves more than half of a large bucket in one sub-bucket (values spread over hundreds
//! of binades, which a split by value would peel a few binades at a time). Both bucket
//! functions put `min` in bucket 0 and `max` above it, so every split makes progress.
//!
//! A least-significant-digit sort of the whole column (the textbook choice for 64-bit
//! keys) needs one full pass over memory per non-constant digit: six passes of 11-bit
//! digits for reals spread over a few binades, against one scatter here; on 10⁷ uniform
//! reals it took about 1.5 times as long (0.50 s against 0.33 s of CPU time for the
//! previous version of this sort, which bucketed by key bits and finished buckets with a
//! comparison sort). Finishing a bucket by a split by value and one insertion pass, rather
//! than by an 8-bit digit sort of its five or six varying digits, saved another tenth
//! (0.20 s against 0.22 s on one thread); the scatter into the buckets, which misses the
//! caches on nearly every write, and the two passes over the column take about half. The
//! scatter now writes whole cache lines ([`StagedSlots`]), and the bucket functions round
//! without a float-to-integer conversion ([`Scaled`]).
//!
//! With `parts > 1` the passes over the column and the buckets are split among rayon
//! tasks; the order is unique (by `(key, index)`), so the result does not depend on
//! `parts` or on the scheduling.
//!
//! [`Workspace::rank`] leaves the sorted records in a buffer; [`Workspace::rank_into`]
//! hands every sorted run to a [`Sink`] instead while it is in cache (task `t` of the
//! finishing feeds sink `t` its runs in rank order), which saves the caller a pass over
//! the sorted order and the ranking the copy into that buffer.

use rayon::prelude::*;

use super::staged::StagedSlots;
use crate::resources::{ZeroBits, check_interrupt, interrupted, zeroed_vec};
use crate::{Error, Result};

/// A value's order-preserving key and its record index, packed in 12 bytes so the sort
/// moves as little memory as possible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, packed(4))]
pub(super) struct Rec {
    pub(super) key: u64,
    pub(super) index: u32,
}

// SAFETY: `Rec` holds two integers and no padding; all-zero bytes are `key = 0, index = 0`.
unsafe impl ZeroBits for Rec {}

impl Rec {
    /// The value (`+0.0` for both zeros).
    #[inline]
    pub(super) fn value(self) -> f64 {
        value_of_key(self.key)
    }
}

/// An unsigned key whose order is the numeric order of finite doubles, with `−0.0` and
/// `0.0` mapped to the same key (so they tie and keep the record order, as a stable
/// comparison sort with `partial_cmp` keeps them).
#[inline]
pub(super) fn key_of_value(value: f64) -> u64 {
    let bits = (value + 0.0).to_bits();
    bits ^ ((((bits as i64) >> 63) as u64) | (1 << 63))
}

#[inline]
fn value_of_key(key: u64) -> f64 {
    let bits = if key >> 63 == 1 {
        key ^ (1 << 63)
    } else {
        !key
    };
    f64::from_bits(bits)
}

/// Buckets of the first pass over the column (2^11: the scatter writes to that many places
/// at once, which the caches and the TLB still follow).
pub(super) const TOP_BUCKETS: usize = 1 << 11;
/// Buckets up to this size (192 KiB of records, cache-resident) are finished by one more
/// split by value and an insertion pass; larger ones are split again.
pub(super) const LEAF: usize = 1 << 14;
/// Buckets and sub-buckets up to this size are finished by insertion.
const TINY: usize = 32;

/// A bucket function, monotone in the values' order, for values in `[min, max]` with
/// `min < max`: `min` falls in bucket 0 and `max` in a later one, so every split makes
/// progress. Out-of-range input (a value about to be rejected) gets some bucket below
/// the bucket count, never a panic.
trait Bucket: Copy + Send + Sync {
    fn of_value(self, value: f64) -> usize;
    fn of_key(self, key: u64) -> usize;
}

/// `(v − low)·scale` rounded to the nearest integer, where `scale = (buckets − 1) / (max −
/// min)`: even buckets for data spread evenly over its range, whatever the binades (the
/// first and the last bucket take half a width). Every operation rounds monotonically,
/// and for `v` in range the product lies in `[0, buckets − 1]` up to a rounding, so the
/// rounded value is a bucket.
///
/// The rounding adds `2^52` and reads the integer from the low bits of the sum: a
/// conversion of the double to an integer (a saturating `as` cast, a comparison and a
/// conditional move around `cvttsd2si`) took about 1.5 ns more per value here, paid in
/// three passes over every record. A value out of range (about to be rejected) gets some
/// bucket through the mask, never a panic.
#[derive(Clone, Copy, Debug)]
struct Scaled {
    low: f64,
    scale: f64,
    mask: usize,
}

/// `2^52`: a double in `[0, 2^51]` plus this has its value rounded to an integer in its
/// low bits.
const ROUNDING_BIAS: f64 = 4_503_599_627_370_496.0;

impl Bucket for Scaled {
    #[inline]
    fn of_value(self, value: f64) -> usize {
        ((value - self.low) * self.scale + ROUNDING_BIAS).to_bits() as usize & self.mask
    }

    #[inline]
    fn of_key(self, key: u64) -> usize {
        self.of_value(value_of_key(key))
    }
}

/// `(key − min) >> shift`: the top bits of the key range, for ranges whose width or scale
/// is not a finite double.
#[derive(Clone, Copy, Debug)]
struct Bits {
    min: u64,
    shift: u32,
    last: u64,
}

impl Bucket for Bits {
    #[inline]
    fn of_value(self, value: f64) -> usize {
        self.of_key(key_of_value(value))
    }

    #[inline]
    fn of_key(self, key: u64) -> usize {
        ((key.wrapping_sub(self.min) >> self.shift).min(self.last)) as usize
    }
}

#[derive(Clone, Copy, Debug)]
enum Splitter {
    Scaled(Scaled),
    Bits(Bits),
}

impl Splitter {
    /// Splits the keys `[min, max]` (`min < max`) into `buckets` buckets (a power of two,
    /// at least 2).
    fn new(min: u64, max: u64, buckets: usize) -> Self {
        let (low, high) = (value_of_key(min), value_of_key(max));
        let scale = (buckets - 1) as f64 / (high - low);
        if (high - low).is_finite() && scale.is_finite() && scale > 0.0 {
            Splitter::Scaled(Scaled {
                low,
                scale,
                mask: buckets - 1,
            })
        } else {
            Splitter::Bits(Bits::new(min, max, buckets))
        }
    }
}

impl Bits {
    /// Splits the keys `[min, max]` (`min < max`) into `buckets` buckets (a power of two,
    /// at least 2) by the top bits of `key − min`.
    fn new(min: u64, max: u64, buckets: usize) -> Self {
        Bits {
            min,
            shift: (64 - (max - min).leading_zeros()).saturating_sub(buckets.trailing_zeros()),
            last: buckets as u64 - 1,
        }
    }
}

/// What the first pass over the column learns.
struct FirstPass {
    min: f64,
    max: f64,
    /// The bucket counts of every chunk under the splitter of the declared bounds, if
    /// one was given.
    counts: Option<Vec<Vec<u32>>>,
}

/// The buffers of one ranking, kept between the attributes a worker masks so that their
/// memory is allocated (and first touched) once.
#[derive(Default)]
pub(super) struct Workspace {
    records: Vec<Rec>,
    scratch: Vec<Rec>,
}

/// Receives the sorted records of a ranking run after run, in rank order, as the buckets
/// are finished (each run still in cache).
pub(super) trait Sink: Send {
    /// Whether the ranking must also leave every sorted record in its output buffer (as
    /// [`Workspace::rank`] returns them); a sink that consumes the runs saves that pass.
    const KEEP: bool;

    /// The next run of sorted records.
    fn run(&mut self, sorted: &[Rec]);
}

/// The sink of [`Workspace::rank`]: the sorted records stay in the output buffer.
struct Keep;

impl Sink for Keep {
    const KEEP: bool = true;

    fn run(&mut self, _sorted: &[Rec]) {}
}

/// How the sorted records are dealt out to the sinks of [`Workspace::rank_into`]: sink `t`
/// receives the ranks `starts[t] .. starts[t + 1]`, of which `blocks[t][b]` have their
/// record index in block `b` (the indices `b·2^block_bits ..`), when blocks are asked for.
pub(super) struct Deal {
    pub(super) starts: Vec<usize>,
    pub(super) blocks: Vec<Vec<u32>>,
}

impl Workspace {
    /// The records of `values` sorted by `(key, index)`, with every pass over the column
    /// split into `parts` tasks. With `bounds`, every value must lie in them; without,
    /// every value must be finite.
    ///
    /// # Errors
    /// As [`Workspace::rank_into`].
    pub(super) fn rank(
        &mut self,
        values: &[f64],
        bounds: Option<(f64, f64)>,
        parts: usize,
    ) -> Result<&[Rec]> {
        self.rank_into(values, bounds, parts, None, |deal| {
            (1..deal.starts.len()).map(|_| Keep).collect()
        })?;
        Ok(&self.records[..values.len()])
    }

    /// Ranks `values` as [`Workspace::rank`] does, handing the sorted records to sinks
    /// instead: `make` receives how the ranks are dealt out (with the record counts per
    /// block of `2^block_bits` indices when `block_bits` is given) and returns one sink per
    /// task; each task feeds its sink its runs in rank order, and the sinks are returned.
    ///
    /// With bounds, the first pass also counts the buckets of the bounds' range, which
    /// saves a pass unless the data fill less than a quarter of that range (then the
    /// buckets are recounted over the data's own range).
    ///
    /// # Errors
    /// [`Error::InvalidData`] naming the first bad value, or when `n ≥ 2^32`;
    /// [`Error::OutputTooLarge`] when the buffers cannot be allocated.
    pub(super) fn rank_into<S: Sink>(
        &mut self,
        values: &[f64],
        bounds: Option<(f64, f64)>,
        parts: usize,
        block_bits: Option<u32>,
        make: impl FnOnce(&Deal) -> Vec<S>,
    ) -> Result<Vec<S>> {
        let n = values.len();
        if u32::try_from(n).is_err() {
            return Err(Error::InvalidData(format!(
                "values has {n} records; microaggregation supports fewer than 2**32"
            )));
        }
        let chunk = n.div_ceil(parts.max(1)).max(1);
        let guess = bounds
            .map(|(lo, hi)| (key_of_value(lo), key_of_value(hi)))
            .filter(|&(lo, hi)| lo < hi && n > LEAF)
            .map(|(lo, hi)| Splitter::new(lo, hi, TOP_BUCKETS));
        let first = match guess {
            Some(Splitter::Scaled(split)) => first_pass(values, chunk, bounds, Some(split)),
            Some(Splitter::Bits(split)) => first_pass(values, chunk, bounds, Some(split)),
            None => first_pass::<Bits>(values, chunk, bounds, None),
        }?;
        check_interrupt()?;
        let (min, max) = (key_of_value(first.min), key_of_value(first.max));
        grow(&mut self.records, n)?;
        let whole_blocks = || {
            block_bits
                .map(|bits| block_sizes(n, bits))
                .into_iter()
                .collect()
        };
        if n <= LEAF || min == max {
            for (i, (rec, &value)) in self.records.iter_mut().zip(values).enumerate() {
                *rec = Rec {
                    key: key_of_value(value),
                    index: i as u32,
                };
            }
            if min != max {
                grow(&mut self.scratch, n)?;
                sort_small(&mut self.records[..n], &mut self.scratch);
            }
            let deal = Deal {
                starts: vec![0, n],
                blocks: whole_blocks(),
            };
            let mut sinks = make(&deal);
            if let Some(sink) = sinks.first_mut() {
                sink.run(&self.records[..n]);
            }
            return Ok(sinks);
        }
        let narrow = bounds.is_some_and(|(lo, hi)| first.max - first.min < 0.25 * (hi - lo));
        let (split, counts) = match (guess, first.counts) {
            (Some(split), Some(counts)) if !narrow => (split, counts),
            _ => {
                let split = Splitter::new(min, max, TOP_BUCKETS);
                let counts = match split {
                    Splitter::Scaled(split) => histograms(values, chunk, split),
                    Splitter::Bits(split) => histograms(values, chunk, split),
                };
                (split, counts)
            }
        };
        check_interrupt()?;
        // Task `t` finishes the buckets `t·per_task ..`.
        let per_task = TOP_BUCKETS.div_ceil(parts.max(1));
        let tasks = TOP_BUCKETS.div_ceil(per_task);
        grow(&mut self.scratch, n)?;
        let scattered = &mut self.scratch[..n];
        let tally = block_bits.filter(|_| tasks > 1).map(|bits| Tally {
            bits,
            per_task,
            tasks,
            blocks: n.div_ceil(1 << bits),
        });
        let blocks = match split {
            Splitter::Scaled(split) => scatter(values, chunk, split, &counts, scattered, tally),
            Splitter::Bits(split) => scatter(values, chunk, split, &counts, scattered, tally),
        };
        check_interrupt()?;
        let mut pairs = Vec::with_capacity(TOP_BUCKETS);
        let mut starts = Vec::with_capacity(tasks + 1);
        let (mut rest, mut spare) = (&mut self.records[..n], &mut self.scratch[..n]);
        let mut rank = 0;
        for b in 0..TOP_BUCKETS {
            if b % per_task == 0 {
                starts.push(rank);
            }
            let size: usize = counts.iter().map(|part| part[b] as usize).sum();
            let (to, tail) = rest.split_at_mut(size);
            let (from, tail_spare) = spare.split_at_mut(size);
            pairs.push((from, to));
            (rest, spare) = (tail, tail_spare);
            rank += size;
        }
        starts.push(n);
        let deal = Deal {
            starts,
            blocks: blocks.unwrap_or_else(whole_blocks),
        };
        let mut sinks = make(&deal);
        pairs
            .par_chunks_mut(per_task)
            .zip(sinks.par_iter_mut())
            .for_each(|(group, sink)| {
                let mut buffers = LeafBuffers::default();
                for (from, to) in group {
                    // The sinks are dropped unread when interrupted.
                    if interrupted() {
                        return;
                    }
                    finish_bucket(from, to, &mut buffers, sink);
                }
            });
        check_interrupt()?;
        Ok(sinks)
    }
}

/// Values a pass over the column reads between two looks at the interrupt flag (about a
/// millisecond).
const POLL_VALUES: usize = 1 << 16;

/// The number of indices `0 .. n` in every block of `2^bits` consecutive indices.
fn block_sizes(n: usize, bits: u32) -> Vec<u32> {
    (0..n.div_ceil(1 << bits))
        .map(|b| (n - (b << bits)).min(1 << bits) as u32)
        .collect()
}

/// Resizes `buffer` to at least `len` records; new memory comes zeroed from the allocator.
fn grow<T: ZeroBits>(buffer: &mut Vec<T>, len: usize) -> Result<()> {
    if buffer.len() < len {
        *buffer = Vec::new();
        *buffer = zeroed_vec(len, "microaggregation sort buffer")?;
    }
    Ok(())
}

/// Checks every value (inside `bounds`; finite without), finds the smallest and largest,
/// and counts the buckets of `split` when given, chunk by chunk.
///
/// # Errors
/// [`Error::InvalidData`] naming the first bad value.
fn first_pass<S: Bucket>(
    values: &[f64],
    chunk: usize,
    bounds: Option<(f64, f64)>,
    split: Option<S>,
) -> Result<FirstPass> {
    let (lo, hi) = bounds.unwrap_or((f64::MIN, f64::MAX));
    type Chunk = (f64, f64, Option<Vec<u32>>);
    let passes: Vec<std::result::Result<Chunk, usize>> = values
        .par_chunks(chunk)
        .enumerate()
        .map(|(p, part)| {
            let mut counts = split.map(|_| vec![0u32; TOP_BUCKETS]);
            // Four running minima and maxima: one chain of dependent comparisons per lane
            // instead of one per value.
            let mut mins = [f64::INFINITY; 4];
            let mut maxs = [f64::NEG_INFINITY; 4];
            let mut inside = true;
            for block in part.chunks(1 << 12) {
                // The caller reports the interrupt; what was counted is dropped.
                if interrupted() {
                    break;
                }
                let mut quads = block.chunks_exact(4);
                for quad in &mut quads {
                    for (lane, &value) in quad.iter().enumerate() {
                        // One comparison pair rejects NaN, infinities and values outside
                        // the bounds.
                        inside &= value >= lo && value <= hi;
                        mins[lane] = if value < mins[lane] {
                            value
                        } else {
                            mins[lane]
                        };
                        maxs[lane] = if value > maxs[lane] {
                            value
                        } else {
                            maxs[lane]
                        };
                    }
                }
                for &value in quads.remainder() {
                    inside &= value >= lo && value <= hi;
                    mins[0] = if value < mins[0] { value } else { mins[0] };
                    maxs[0] = if value > maxs[0] { value } else { maxs[0] };
                }
                if let (Some(split), Some(counts)) = (split, counts.as_mut()) {
                    for &value in block {
                        bump(&mut counts[split.of_value(value)]);
                    }
                }
            }
            let min = mins.iter().fold(f64::INFINITY, |low, &m| low.min(m));
            let max = maxs.iter().fold(f64::NEG_INFINITY, |high, &m| high.max(m));
            if inside {
                Ok((min, max, counts))
            } else {
                let first = part.iter().position(|&v| !(v >= lo && v <= hi));
                Err(p * chunk + first.unwrap_or(0))
            }
        })
        .collect();
    let mut total = FirstPass {
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        counts: None,
    };
    let mut counts = Vec::new();
    for pass in passes {
        match pass {
            Ok((min, max, part_counts)) => {
                total.min = total.min.min(min);
                total.max = total.max.max(max);
                counts.extend(part_counts);
            }
            Err(i) => return Err(bad_value(i, values[i], bounds)),
        }
    }
    if split.is_some() {
        total.counts = Some(counts);
    }
    Ok(total)
}
fn bad_value(i: usize, value: f64, bounds: Option<(f64, f64)>) -> Error {
    match bounds {
        Some((lo, hi)) if value.is_finite() => Error::InvalidData(format!(
            "values[{i}] = {value} lies outside the declared bounds [{lo}, {hi}]"
        )),
        _ => Error::InvalidData(format!("values[{i}] = {value} is not finite")),
    }
}

/// The bucket counts of every chunk of `values`.
fn histograms<S: Bucket>(values: &[f64], chunk: usize, split: S) -> Vec<Vec<u32>> {
    values
        .par_chunks(chunk)
        .map(|part| {
            let mut counts = vec![0u32; TOP_BUCKETS];
            for block in part.chunks(POLL_VALUES) {
                // The caller reports the interrupt; the counts are dropped.
                if interrupted() {
                    break;
                }
                for &value in block {
                    bump(&mut counts[split.of_value(value)]);
                }
            }
            counts
        })
        .collect()
}

/// What [`scatter`] counts besides: for every task finishing the buckets
/// `t·per_task ..`, how many of its records fall in each block of `2^bits` indices.
#[derive(Clone, Copy, Debug)]
struct Tally {
    bits: u32,
    per_task: usize,
    tasks: usize,
    blocks: usize,
}

/// Writes the records of `values` into their buckets, stably: chunk `p` of `values`
/// (`counts[p]` its bucket counts) fills, in every bucket, the slots after those of the
/// earlier chunks. With a `tally`, also returns its counts, `[task][block]`.
fn scatter<S: Bucket>(
    values: &[f64],
    chunk: usize,
    split: S,
    counts: &[Vec<u32>],
    out: &mut [Rec],
    tally: Option<Tally>,
) -> Option<Vec<Vec<u32>>> {
    let mut slots: Vec<Vec<&mut [Rec]>> = counts
        .iter()
        .map(|_| Vec::with_capacity(TOP_BUCKETS))
        .collect();
    let mut rest = out;
    for b in 0..TOP_BUCKETS {
        for (part, part_slots) in counts.iter().zip(&mut slots) {
            let (slice, tail) = std::mem::take(&mut rest).split_at_mut(part[b] as usize);
            part_slots.push(slice);
            rest = tail;
        }
    }
    let tallies: Vec<Vec<u32>> = values
        .par_chunks(chunk)
        .zip(slots)
        .enumerate()
        .map(|(p, (part, part_slots))| {
            let start = p * chunk;
            let mut slots = StagedSlots::new(part_slots);
            let Some(tally) = tally else {
                for (i, &value) in part.iter().enumerate() {
                    // The caller reports the interrupt; the records are dropped.
                    if i % POLL_VALUES == 0 && interrupted() {
                        break;
                    }
                    let rec = Rec {
                        key: key_of_value(value),
                        index: start.wrapping_add(i) as u32,
                    };
                    slots.push(split.of_value(value), rec);
                }
                return Vec::new();
            };
            let task_of: Vec<usize> = (0..TOP_BUCKETS)
                .map(|b| b / tally.per_task * tally.blocks)
                .collect();
            let mut local = vec![0u32; tally.tasks * tally.blocks];
            for (i, &value) in part.iter().enumerate() {
                if i % POLL_VALUES == 0 && interrupted() {
                    break;
                }
                let bucket = split.of_value(value);
                let index = start.wrapping_add(i);
                let rec = Rec {
                    key: key_of_value(value),
                    index: index as u32,
                };
                slots.push(bucket, rec);
                bump(&mut local[task_of[bucket].wrapping_add(index >> tally.bits)]);
            }
            local
        })
        .collect();
    let tally = tally?;
    let mut totals = vec![vec![0u32; tally.blocks]; tally.tasks];
    for local in &tallies {
        for (task, counts) in totals.iter_mut().zip(local.chunks_exact(tally.blocks)) {
            for (total, &count) in task.iter_mut().zip(counts) {
                *total += count;
            }
        }
    }
    Some(totals)
}

/// The buffers of one task finishing buckets, reused from bucket to bucket.
struct LeafBuffers {
    /// A bucket of at most [`LEAF`] records is split into this buffer and sorted there.
    sorted: Vec<Rec>,
    /// The sub-bucket of every record of a leaf, computed once for both passes.
    ids: Vec<u16>,
    /// Per sub-bucket: its size, then its next free slot (its end once distributed).
    cursors: Vec<u32>,
}

impl Default for LeafBuffers {
    fn default() -> Self {
        Self {
            sorted: vec![Rec::default(); LEAF],
            ids: vec![0; LEAF],
            cursors: vec![0; TOP_BUCKETS.max(LEAF)],
        }
    }
}

/// Sorts the bucket `from` (given in index order within equal keys) by `(key, index)`
/// and hands it to `sink` in runs; with [`Sink::KEEP`] the sorted bucket is also left in
/// `to` (of the same length). `from` is left in an unspecified order, and so is `to`
/// without `KEEP`.
///
/// The bucket is split by value, over its own key range, into about one sub-bucket per
/// record (a leaf of at most [`LEAF`] records) or into [`TOP_BUCKETS`] sub-buckets (a
/// larger one, finished recursively). The sub-buckets of a leaf then hold a few records
/// each: one insertion pass over the whole leaf sorts them, unless one holds more than
/// [`TINY`] records (skewed or tied data), which then has the digit sort.
fn finish_bucket<S: Sink>(
    from: &mut [Rec],
    to: &mut [Rec],
    buffers: &mut LeafBuffers,
    sink: &mut S,
) {
    let m = from.len();
    if m <= TINY {
        insertion(from);
        if S::KEEP {
            to.copy_from_slice(from);
        }
        sink.run(from);
        return;
    }
    let (min, max) = from.iter().fold((u64::MAX, 0u64), |(lo, hi), rec| {
        (lo.min(rec.key), hi.max(rec.key))
    });
    if min == max {
        if S::KEEP {
            to.copy_from_slice(from);
        }
        sink.run(from);
        return;
    }
    let LeafBuffers {
        sorted,
        ids,
        cursors,
    } = buffers;
    if m > LEAF {
        let cursors = &mut cursors[..TOP_BUCKETS];
        let largest = match Splitter::new(min, max, TOP_BUCKETS) {
            Splitter::Scaled(split) => distribute(from, to, split, ids, cursors),
            Splitter::Bits(split) => distribute(from, to, split, ids, cursors),
        };
        if largest > m / 2 {
            // Values spread over many binades crowd into the lowest buckets of their range;
            // the top bits of the keys cut the binades apart.
            distribute(from, to, Bits::new(min, max, TOP_BUCKETS), ids, cursors);
        }
        let ends = cursors[..TOP_BUCKETS].to_vec();
        let mut start = 0;
        for end in ends {
            let end = end as usize;
            from[start..end].copy_from_slice(&to[start..end]);
            finish_bucket(&mut from[start..end], &mut to[start..end], buffers, sink);
            start = end;
        }
        return;
    }
    let buckets = m.next_power_of_two();
    let sorted = &mut sorted[..m];
    let cursors = &mut cursors[..buckets];
    let largest = match Splitter::new(min, max, buckets) {
        Splitter::Scaled(split) => distribute(from, sorted, split, ids, cursors),
        Splitter::Bits(split) => distribute(from, sorted, split, ids, cursors),
    };
    if largest > TINY {
        let mut start = 0;
        for &end in cursors.iter() {
            let end = end as usize;
            if end - start > TINY {
                sort_small(&mut sorted[start..end], from);
            } else {
                insertion(&mut sorted[start..end]);
            }
            start = end;
        }
    } else {
        insertion(sorted);
    }
    if S::KEEP {
        to.copy_from_slice(sorted);
    }
    sink.run(sorted);
}

/// Adds one to a counter or cursor (wrapping: the callers' counts stay below `2^32`, and
/// the overflow check of release builds would cost a branch in the hottest loops).
#[inline]
fn bump(counter: &mut u32) {
    *counter = counter.wrapping_add(1);
}

/// Sorts `records` by key, stably, by insertion (few records, or records each already
/// within a few places of its own).
fn insertion(records: &mut [Rec]) {
    for i in 1..records.len() {
        let current = records[i];
        if records[i - 1].key <= current.key {
            continue;
        }
        let mut j = i;
        while j > 0 && records[j - 1].key > current.key {
            records[j] = records[j - 1];
            j -= 1;
        }
        records[j] = current;
    }
}

/// Distributes `from` into the buckets of `split`, stably, in `to` (of the same length);
/// `cursors` has one entry per bucket and is left holding the end of every bucket.
/// `ids` keeps the bucket of every record between the two passes when it is long enough.
/// Returns the size of the largest bucket.
fn distribute<S: Bucket>(
    from: &[Rec],
    to: &mut [Rec],
    split: S,
    ids: &mut [u16],
    cursors: &mut [u32],
) -> usize {
    cursors.fill(0);
    let stored = from.len() <= ids.len();
    if stored {
        for (id, rec) in ids.iter_mut().zip(from) {
            let bucket = split.of_key(rec.key);
            // At most `LEAF` buckets when the ids are stored.
            *id = bucket as u16;
            bump(&mut cursors[bucket]);
        }
    } else {
        for rec in from {
            bump(&mut cursors[split.of_key(rec.key)]);
        }
    }
    let mut sum = 0u32;
    let mut largest = 0u32;
    for cursor in cursors.iter_mut() {
        let size = *cursor;
        largest = largest.max(size);
        *cursor = sum;
        sum += size;
    }
    if stored {
        for (&id, rec) in ids.iter().zip(from) {
            let slot = &mut cursors[id as usize];
            to[*slot as usize] = *rec;
            bump(slot);
        }
    } else {
        for rec in from {
            let slot = &mut cursors[split.of_key(rec.key)];
            to[*slot as usize] = *rec;
            bump(slot);
        }
    }
    largest as usize
}

/// Sorts at most [`LEAF`] records (given in index order within equal keys) by
/// `(key, index)`: an LSD radix sort on 8-bit digits, skipping the digits every key
/// shares; insertion below [`TINY`] records. `scratch` holds at least `records.len()`.
fn sort_small(records: &mut [Rec], scratch: &mut [Rec]) {
    let n = records.len();
    if n <= TINY {
        insertion(records);
        return;
    }
    let first = records[0].key;
    let differ = records
        .iter()
        .fold(0u64, |bits, rec| bits | (rec.key ^ first));
    if differ == 0 {
        return;
    }
    let mut counts = [[0u32; 256]; 8];
    for rec in records.iter() {
        let key = rec.key;
        for (digit, count) in counts.iter_mut().enumerate() {
            bump(&mut count[((key >> (8 * digit)) & 255) as usize]);
        }
    }
    let scratch = &mut scratch[..n];
    let mut in_records = true;
    for (digit, count) in counts.iter().enumerate() {
        let shift = 8 * digit as u32;
        if (differ >> shift) & 255 == 0 {
            continue;
        }
        let mut next = [0u32; 256];
        let mut sum = 0u32;
        for (slot, &c) in next.iter_mut().zip(count) {
            *slot = sum;
            sum += c;
        }
        let (from, to): (&[Rec], &mut [Rec]) = if in_records {
            (&*records, &mut *scratch)
        } else {
            (&*scratch, &mut *records)
        };
        for rec in from {
            let slot = &mut next[((rec.key >> shift) & 255) as usize];
            to[*slot as usize] = *rec;
            bump(slot);
        }
        in_records = !in_records;
    }
    if !in_records {
        records.copy_from_slice(scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::test_util::seed;
    use crate::rng::Rng;
    use rand::{Rng as _, RngExt};

    /// Record indices in stable ascending order of value: the reference ranking.
    fn stable_order(values: &[f64]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| values[a].partial_cmp(&values[b]).unwrap());
        order
    }

    fn check(values: &[f64], what: &str) {
        let expected = stable_order(values);
        for parts in [1, 2, 3, 8] {
            let mut workspace = Workspace::default();
            let sorted = workspace.rank(values, None, parts).unwrap();
            let order: Vec<usize> = sorted.iter().map(|r| r.index as usize).collect();
            assert!(
                order == expected,
                "{what}, n = {}, parts = {parts}",
                values.len()
            );
            for (rec, &i) in sorted.iter().zip(&order) {
                assert_eq!(rec.value().to_bits(), (values[i] + 0.0).to_bits(), "{what}");
            }
        }
    }

    fn finite_bits(rng: &mut Rng) -> f64 {
        loop {
            let x = f64::from_bits(rng.next_u64());
            if x.is_finite() {
                break x;
            }
        }
    }

    /// Inputs that reach every path: ties, both zeros, subnormals, the extreme doubles
    /// (a range whose width overflows), widths too small for a finite bucket scale,
    /// shared low digits (skipped passes), skewed and clustered data (buckets split
    /// again), for sizes around the leaf and the top-level thresholds.
    #[test]
    fn radix_ranking_equals_the_stable_comparison_sort() {
        let mut rng = seed(2).stream(0);
        let tiny = f64::from_bits(1);
        for n in [
            1,
            2,
            5,
            TINY,
            TINY + 1,
            300,
            LEAF,
            LEAF + 1,
            3 * LEAF + 17,
            40 * LEAF,
        ] {
            let ties: Vec<f64> = (0..n)
                .map(|_| match rng.random_range(0..6) {
                    0 => -0.0,
                    1 => 0.0,
                    2 => -1.5,
                    3 => 2.0,
                    4 => tiny,
                    _ => -tiny,
                })
                .collect();
            let wild: Vec<f64> = (0..n).map(|_| finite_bits(&mut rng)).collect();
            let extremes: Vec<f64> = (0..n)
                .map(|i| match i % 7 {
                    0 => f64::MAX,
                    1 => -f64::MAX,
                    2 => f64::MIN_POSITIVE,
                    3 => -0.0,
                    _ => rng.random_range(-1e300..1e300),
                })
                .collect();
            let subnormal: Vec<f64> = (0..n)
                .map(|_| {
                    f64::from_bits(rng.random_range(0..64u64)) * [1.0, -1.0][rng.random_range(0..2)]
                })
                .collect();
            let ulps: Vec<f64> = (0..n)
                .map(|_| f64::from_bits(1.0f64.to_bits() + rng.random_range(0..1000u64)))
                .collect();
            let integers: Vec<f64> = (0..n).map(|_| rng.random_range(0..100) as f64).collect();
            let skewed: Vec<f64> = (0..n)
                .map(|_| (-rng.random_range(1e-12..1.0f64).ln()).powi(6))
                .collect();
            let clustered: Vec<f64> = (0..n)
                .map(|i| match i % 1000 {
                    0 => -1e300,
                    1 => 1e300,
                    _ => 1.0 + rng.random_range(0..1u64 << 30) as f64 * 2f64.powi(-52),
                })
                .collect();
            let uniform: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..100.0)).collect();
            let cases = [
                ("ties", ties),
                ("wild", wild),
                ("extremes", extremes),
                ("subnormal", subnormal),
                ("ulps", ulps),
                ("integers", integers),
                ("skewed", skewed),
                ("clustered", clustered),
                ("uniform", uniform),
            ];
            for (what, values) in &cases {
                check(values, what);
            }
        }
    }

    #[test]
    fn sorted_records_keep_their_order_descending_and_constant() {
        let n = 5 * LEAF;
        let descending: Vec<f64> = (0..n).map(|i| (n - i) as f64).collect();
        check(&descending, "descending");
        let constant = vec![-0.0; n];
        check(&constant, "constant");
        let two = (0..n).map(|i| (i % 2) as f64).collect::<Vec<_>>();
        check(&two, "two values");
    }

    #[test]
    fn bucket_functions_are_monotone_and_make_progress() {
        let mut rng = seed(3).stream(0);
        for _ in 0..2000 {
            let mut pair = [finite_bits(&mut rng), finite_bits(&mut rng)];
            if rng.random_range(0..3) == 0 {
                pair[1] = f64::from_bits(pair[0].to_bits() ^ rng.random_range(1..16u64));
            }
            let (min, max) = (key_of_value(pair[0]), key_of_value(pair[1]));
            let (min, max) = (min.min(max), min.max(max));
            if min == max {
                continue;
            }
            for buckets in [2, 64, TOP_BUCKETS] {
                let split = Splitter::new(min, max, buckets);
                let bucket = |key: u64| match split {
                    Splitter::Scaled(s) => {
                        assert_eq!(s.of_key(key), s.of_value(value_of_key(key)));
                        s.of_key(key)
                    }
                    Splitter::Bits(s) => {
                        assert_eq!(s.of_key(key), s.of_value(value_of_key(key)));
                        s.of_key(key)
                    }
                };
                assert_eq!(bucket(min), 0, "{split:?}");
                assert!(bucket(max) > 0 && bucket(max) < buckets, "{split:?}");
                let mut keys: Vec<u64> = (0..50).map(|_| rng.random_range(min..=max)).collect();
                keys.sort_unstable();
                assert!(keys.windows(2).all(|w| bucket(w[0]) <= bucket(w[1])));
            }
        }
    }

    #[test]
    fn bad_values_are_named() {
        let mut workspace = Workspace::default();
        let mut values = vec![0.5; 3 * LEAF];
        values[2 * LEAF + 3] = f64::NAN;
        values[2 * LEAF + 9] = 7.0;
        for parts in [1, 4] {
            let err = workspace
                .rank(&values, None, parts)
                .unwrap_err()
                .to_string();
            assert_eq!(err, format!("values[{}] = NaN is not finite", 2 * LEAF + 3));
            let err = workspace
                .rank(&values[2 * LEAF + 4..], Some((0.0, 1.0)), parts)
                .unwrap_err()
                .to_string();
            assert_eq!(err, "values[5] = 7 lies outside the declared bounds [0, 1]");
        }
    }
}
