//! The buckets of the ranking's scatter written a whole cache line at a time.
//!
//! The scatter writes every record to one of [`TOP_BUCKETS`](super::rank::TOP_BUCKETS)
//! places at once. Stored directly, each 12-byte record is a partial write to a line that
//! the processor must first read from memory. Here every bucket assembles its next line in
//! a staging buffer; a line that lies wholly in the bucket's slots is written out with
//! non-temporal stores (no read of the old line, no cache pollution), and the line at
//! either end of a bucket, shared with its neighbours, by a plain copy of the bucket's own
//! bytes. In a stand-alone test of the scatter (10⁷ uniform reals, 2^11 buckets, one
//! thread) this took it from 77 to 63 ms, and reading the buckets back afterwards cost no
//! more. The same staging for the parking of the sorted records in the output's windows
//! (about 600 places at once, in memory touched for the first time) gained nothing.

use std::marker::PhantomData;
use std::mem::size_of;

use super::rank::Rec;

/// Bytes per cache line.
const LINE: usize = 64;
/// Bytes per record.
const REC: usize = size_of::<Rec>();

/// A bucket's line in the making: its bytes at their offsets within the line, and the
/// first bytes of the next line when a record straddles the two.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Stage([u8; 2 * LINE]);

/// One bucket's slots: the next free byte, the first byte and the end.
#[derive(Clone, Copy)]
struct Slots {
    next: *mut u8,
    start: *mut u8,
    end: *mut u8,
}

/// The slots of every bucket of one scatter task (each a `&mut [Rec]` of its own, as long
/// as this lives), filled in order.
pub(super) struct StagedSlots<'a> {
    slots: Vec<Slots>,
    stages: Vec<Stage>,
    _buckets: PhantomData<&'a mut [Rec]>,
}

impl<'a> StagedSlots<'a> {
    /// The slots `buckets[b]` of every bucket `b`.
    pub(super) fn new(buckets: Vec<&'a mut [Rec]>) -> Self {
        let slots = buckets
            .into_iter()
            .map(|bucket| {
                let range = bucket.as_mut_ptr_range();
                let start = range.start.cast::<u8>();
                Slots {
                    next: start,
                    start,
                    end: range.end.cast::<u8>(),
                }
            })
            .collect::<Vec<_>>();
        let stages = vec![Stage([0; 2 * LINE]); slots.len()];
        StagedSlots {
            slots,
            stages,
            _buckets: PhantomData,
        }
    }

    /// Writes `rec` to the next slot of `bucket` (nothing if they are all taken).
    #[inline]
    pub(super) fn push(&mut self, bucket: usize, rec: Rec) {
        let (Some(slots), Some(stage)) = (self.slots.get_mut(bucket), self.stages.get_mut(bucket))
        else {
            return;
        };
        let next = slots.next;
        if next == slots.end {
            return;
        }
        let offset = next.addr() % LINE;
        // SAFETY: `offset + REC ≤ 63 + 12`, inside the stage's 128 bytes.
        unsafe {
            stage
                .0
                .as_mut_ptr()
                .add(offset)
                .cast::<Rec>()
                .write_unaligned(rec);
        }
        // The bucket's slots are whole records from `start`, so `after ≤ end`.
        let after = next.wrapping_add(REC);
        if offset + REC >= LINE {
            let line = next.wrapping_sub(offset);
            // SAFETY: the line `line .. line + LINE` ends at or before `after ≤ end`, and
            // `start ≤ next` lies inside it or before it: the bytes written are the
            // bucket's own.
            unsafe { write_line(stage, line, slots.start) };
            stage.0.copy_within(LINE..LINE + offset + REC - LINE, 0);
        }
        slots.next = after;
    }
}

impl Drop for StagedSlots<'_> {
    /// Writes the part of every bucket's last line that is still staged, then orders the
    /// non-temporal stores before anything that follows the task.
    fn drop(&mut self) {
        for (slots, stage) in self.slots.iter().zip(&self.stages) {
            let offset = slots.next.addr() % LINE;
            let line = slots.next.wrapping_sub(offset);
            let from = line.max(slots.start);
            let len = slots.next.addr() - from.addr();
            if len > 0 {
                // SAFETY: `from .. next` is the bucket's own (`start ≤ from ≤ next ≤ end`),
                // and the stage holds these bytes at the same offsets within the line.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        stage.0.as_ptr().add(from.addr() % LINE),
                        from,
                        len,
                    );
                }
            }
        }
        fence();
    }
}

/// Writes the staged line to `line`, of which the bytes from `start` on are the bucket's
/// (all of them when `start ≤ line`).
///
/// # Safety
/// `line .. line + LINE` must be writable from `max(line, start)` on, with no other
/// reference to those bytes, and `start < line + LINE`.
#[inline]
unsafe fn write_line(stage: &Stage, line: *mut u8, start: *mut u8) {
    if start <= line {
        // SAFETY: the whole line is writable (caller), and `line` is 64-byte aligned.
        unsafe { stream_line(stage, line) };
    } else {
        let from = start.addr() - line.addr();
        // SAFETY: `start .. line + LINE` is writable (caller).
        unsafe { std::ptr::copy_nonoverlapping(stage.0.as_ptr().add(from), start, LINE - from) };
    }
}

/// Stores a whole line with non-temporal stores.
///
/// # Safety
/// `line` is 64-byte aligned and its 64 bytes writable.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline]
unsafe fn stream_line(stage: &Stage, line: *mut u8) {
    use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_stream_si128};
    let from = stage.0.as_ptr().cast::<__m128i>();
    let to = line.cast::<__m128i>();
    for i in 0..LINE / 16 {
        // SAFETY: SSE2 is part of x86-64; both addresses are 16-byte aligned (the stage by
        // its type, the line by the caller) and 64 bytes long.
        unsafe { _mm_stream_si128(to.add(i), _mm_load_si128(from.add(i))) };
    }
}

#[cfg(any(not(target_arch = "x86_64"), miri))]
#[inline]
unsafe fn stream_line(stage: &Stage, line: *mut u8) {
    // SAFETY: the line's 64 bytes are writable (caller).
    unsafe { std::ptr::copy_nonoverlapping(stage.0.as_ptr(), line, LINE) };
}

/// Orders the non-temporal stores before later stores (and so before the task's end).
#[cfg(all(target_arch = "x86_64", not(miri)))]
fn fence() {
    // SAFETY: SSE is part of x86-64.
    unsafe { std::arch::x86_64::_mm_sfence() };
}

#[cfg(any(not(target_arch = "x86_64"), miri))]
fn fence() {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::test_util::seed;
    use rand::RngExt;

    /// Buckets of every size from 0 up, starting at every offset within a line (records
    /// are 4-byte aligned), filled in random order: each holds its records in push order,
    /// and the records around the buckets are untouched. Also checked under Miri
    /// (`cargo +nightly miri test -p privtab-core --lib staged`, about 12 minutes), where
    /// the non-temporal stores, inline assembly, are plain copies.
    #[test]
    fn staged_buckets_equal_direct_writes() {
        let mut rng = seed(11).stream(0);
        let sentinel = Rec {
            key: u64::MAX,
            index: u32::MAX,
        };
        for skip in 0..16 {
            let sizes: Vec<usize> = (0..40)
                .map(|b| match b % 4 {
                    0 => rng.random_range(0..3),
                    1 => rng.random_range(0..12),
                    _ => rng.random_range(0..200),
                })
                .collect();
            let total: usize = sizes.iter().sum();
            let mut buffer = vec![sentinel; skip + total + 7];
            let mut expected = buffer.clone();
            let mut order: Vec<usize> = sizes
                .iter()
                .enumerate()
                .flat_map(|(b, &size)| std::iter::repeat_n(b, size))
                .collect();
            for i in (1..order.len()).rev() {
                order.swap(i, rng.random_range(0..=i));
            }
            let mut starts = vec![skip; sizes.len()];
            for b in 1..sizes.len() {
                starts[b] = starts[b - 1] + sizes[b - 1];
            }
            let mut filled = vec![0; sizes.len()];
            for (i, &b) in order.iter().enumerate() {
                expected[starts[b] + filled[b]] = Rec {
                    key: rng.random(),
                    index: i as u32,
                };
                filled[b] += 1;
            }
            {
                let mut rest = &mut buffer[skip..skip + total];
                let mut buckets = Vec::new();
                for &size in &sizes {
                    let (bucket, tail) = std::mem::take(&mut rest).split_at_mut(size);
                    buckets.push(bucket);
                    rest = tail;
                }
                let mut slots = StagedSlots::new(buckets);
                let mut pushed = vec![0; sizes.len()];
                for &b in &order {
                    slots.push(b, expected[starts[b] + pushed[b]]);
                    pushed[b] += 1;
                }
                // A bucket already full, and one that does not exist, take nothing.
                slots.push(0, sentinel);
                slots.push(sizes.len(), sentinel);
            }
            assert!(buffer == expected, "skip {skip}");
        }
    }
}
