//! Scoring a round of a [`DiscernibilitySearch`] through row records: the byte codes of
//! all remaining candidates of a row side by side.
//!
//! The column copies of the grouped layout make a round one sequential scan per
//! candidate, and a class costs every candidate its own loop, which dominates once the
//! classes have a few rows each. Here each group of classes is turned into records (a
//! per-thread buffer, reused from group to group, so that no round faults in fresh
//! memory), and the group is read once for all candidates:
//!
//! - a class of at most [`PAIR_ROWS`] rows is scored pair by pair: the two records of
//!   every pair of its rows are compared at once, and when the labels differ each equal
//!   byte counts one undiscerned pair for that candidate. The work follows the
//!   undiscerned pairs of S, which shrink round after round, not the rows;
//! - a larger class counts its (value, label) cells for every candidate in one pass over
//!   its records, and reads the squares off the tables.
//!
//! Both give the same integers as the per-candidate scans.
//!
//! [`DiscernibilitySearch`]: super::DiscernibilitySearch

use rayon::prelude::*;

use crate::resources::check_interrupt;
use crate::{Error, Result};

/// Classes of at most this many rows are scored pair by pair: below it, comparing the
/// records of its differing pairs costs less than counting every candidate's cells and
/// reading its tables.
const PAIR_ROWS: usize = 40;

/// Records are padded to a multiple of this many bytes, so that comparing two records
/// is whole vector operations.
const RECORD_ALIGN: usize = 16;

/// Most records in a task's buffer: the classes of a group are turned into records this
/// many positions at a time, so that the buffer stays in the L2 cache whatever the
/// size of the classes.
const RECORD_WINDOW: usize = 1 << 12;

/// Records filled a column at a time, so that they stay in the L1 cache meanwhile.
const TILE_ROWS: usize = 1 << 8;

/// Most (value, label) cells of all candidates' tables together: a class counted by
/// table reads every cell once.
pub(super) const RECORD_MAX_CELLS: u128 = 1 << 14;

/// The buffers of the tasks of a round, back to zero between classes.
#[derive(Default)]
struct RecordScratch {
    records: Vec<u8>,
    cells: Vec<u32>,
    equal: Vec<u8>,
    pairs: Vec<u64>,
}

/// For every candidate `p` (codes `columns[p]` in layout order, each below `cards[p]` ≤
/// 256), the undiscerned pairs of the classes of the layout refined by it: class `b`
/// holds positions `bounds[b]..bounds[b + 1]` with labels `labels` (below
/// 2^`label_bits`), scored in the fixed `groups` of classes (see `ClassRows::groups`),
/// in parallel. Exact integers, so the sum depends neither on the thread count nor on
/// the grouping.
///
/// # Errors
/// [`Error::OutputTooLarge`] when a buffer cannot be allocated.
pub(super) fn undiscerned_by_records(
    columns: &[&[u8]],
    bounds: &[usize],
    labels: &[u32],
    groups: &[usize],
    cards: &[u32],
    label_bits: u32,
) -> Result<Vec<u128>> {
    let mut tables = Vec::with_capacity(cards.len());
    let mut start = 0usize;
    for &card in cards {
        let end = start + ((card as usize) << label_bits);
        tables.push(start..end);
        start = end;
    }
    let round = RoundRecords {
        columns,
        width: columns.len().div_ceil(RECORD_ALIGN).max(1) * RECORD_ALIGN,
        label_bits,
        n_cells: start,
    };
    let parts: Vec<Vec<u128>> = groups
        .par_windows(2)
        .map_init(RecordScratch::default, |scratch, g| {
            check_interrupt()?;
            let classes = &bounds[g[0]..=g[1]];
            round.undiscerned_group(classes, labels, &tables, scratch)
        })
        .collect::<Result<_>>()?;
    let mut total = vec![0u128; cards.len()];
    for part in parts {
        for (t, u) in total.iter_mut().zip(part) {
            *t += u;
        }
    }
    Ok(total)
}

/// What every group of a round shares.
struct RoundRecords<'c> {
    columns: &'c [&'c [u8]],
    /// Bytes per record.
    width: usize,
    label_bits: u32,
    /// Cells of all candidates' tables.
    n_cells: usize,
}

/// Clears `buffer` to `len` zeros, reusing its memory.
fn zeroed<T: Copy + Default>(buffer: &mut Vec<T>, len: usize) -> Result<()> {
    buffer.clear();
    buffer
        .try_reserve(len)
        .map_err(|_| Error::OutputTooLarge("the row records".to_string()))?;
    buffer.resize(len, T::default());
    Ok(())
}

impl RoundRecords<'_> {
    /// The records of the positions `rows`, into the start of `records` (grown if
    /// needed). The padding bytes of a record are left as they were: they are never
    /// read as a candidate's code.
    fn fill(&self, rows: std::ops::Range<usize>, records: &mut Vec<u8>) -> Result<()> {
        let width = self.width;
        let len = rows.len() * width;
        if records.len() < len {
            records
                .try_reserve(len - records.len())
                .map_err(|_| Error::OutputTooLarge("the row records".to_string()))?;
            records.resize(len, 0);
        }
        for (t, tile) in records[..len].chunks_mut(width * TILE_ROWS).enumerate() {
            let start = rows.start + t * TILE_ROWS;
            for (p, column) in self.columns.iter().enumerate() {
                let codes = &column[start..start + tile.len() / width];
                for (record, &code) in tile.chunks_exact_mut(width).zip(codes) {
                    record[p] = code;
                }
            }
        }
        Ok(())
    }

    /// [`undiscerned_by_records`] of the classes with bounds `classes`, candidate `p`'s
    /// table at cells `tables[p]`.
    fn undiscerned_group(
        &self,
        classes: &[usize],
        labels: &[u32],
        tables: &[std::ops::Range<usize>],
        scratch: &mut RecordScratch,
    ) -> Result<Vec<u128>> {
        let (width, label_bits) = (self.width, self.label_bits);
        let RecordScratch {
            records,
            cells,
            equal,
            pairs,
        } = scratch;
        let end = classes[classes.len() - 1];
        zeroed(cells, self.n_cells)?;
        zeroed(equal, width)?;
        zeroed(pairs, width)?;
        let mut out = vec![0u128; tables.len()];
        let mut counted = 0u32;
        // The positions whose records are in the buffer.
        let mut window = 0..0;
        for class in classes.windows(2) {
            let (start, stop) = (class[0], class[1]);
            if stop > window.end && stop - start <= RECORD_WINDOW {
                window = start..end.min(start + RECORD_WINDOW);
                self.fill(window.clone(), records)?;
            }
            if stop - start <= PAIR_ROWS {
                let offset = start - window.start;
                let records = &records[offset * width..(offset + stop - start) * width];
                let labels = &labels[start..stop];
                for (i, (one, &label)) in records.chunks_exact(width).zip(labels).enumerate() {
                    let later = records[(i + 1) * width..].chunks_exact(width);
                    for (other, &other_label) in later.zip(&labels[i + 1..]) {
                        count_equal_bytes(equal, one, other, u8::from(label != other_label));
                        counted += 1;
                        if counted == u32::from(u8::MAX) {
                            flush(equal, pairs);
                            counted = 0;
                        }
                    }
                }
                continue;
            }
            // A class inside the window is counted from it, a larger one a window at a
            // time.
            for chunk in (start..stop).step_by(RECORD_WINDOW) {
                let rows = chunk..stop.min(chunk + RECORD_WINDOW);
                if rows.end > window.end {
                    window = rows.clone();
                    self.fill(window.clone(), records)?;
                }
                let offset = rows.start - window.start;
                let records = &records[offset * width..(offset + rows.len()) * width];
                for (record, &label) in records.chunks_exact(width).zip(&labels[rows]) {
                    for (&code, table) in record.iter().zip(tables) {
                        let cell = table.start + ((code as usize) << label_bits | label as usize);
                        // Counts stay below n < 2^32, so no increment wraps.
                        cells[cell] = cells[cell].wrapping_add(1);
                    }
                }
            }
            for (table, out) in tables.iter().zip(&mut out) {
                let (mut value_sq, mut joint_sq) = (0u128, 0u128);
                for value in cells[table.clone()].chunks_exact_mut(1 << label_bits) {
                    let mut size = 0u64;
                    for count in value.iter_mut() {
                        let c = u64::from(*count);
                        size += c;
                        joint_sq += u128::from(c * c);
                        *count = 0;
                    }
                    value_sq += u128::from(size) * u128::from(size);
                }
                *out += value_sq - joint_sq;
            }
        }
        flush(equal, pairs);
        for (out, &count) in out.iter_mut().zip(pairs.iter()) {
            // Each unordered pair stands for the two ordered ones.
            *out += 2 * u128::from(count);
        }
        Ok(out)
    }
}

/// `equal[t] += differ` where `first[t] == second[t]` (`differ` is 0 or 1).
#[inline]
fn count_equal_bytes(equal: &mut [u8], first: &[u8], second: &[u8], differ: u8) {
    for ((count, chunk_a), chunk_b) in equal
        .chunks_exact_mut(RECORD_ALIGN)
        .zip(first.chunks_exact(RECORD_ALIGN))
        .zip(second.chunks_exact(RECORD_ALIGN))
    {
        for ((c, &x), &y) in count.iter_mut().zip(chunk_a).zip(chunk_b) {
            *c = c.wrapping_add(u8::from(x == y) & differ);
        }
    }
}

/// Adds the byte counters into the wide ones and clears them.
fn flush(equal: &mut [u8], pairs: &mut [u64]) {
    for (count, total) in equal.iter_mut().zip(pairs.iter_mut()) {
        *total += u64::from(*count);
        *count = 0;
    }
}
