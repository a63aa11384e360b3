//! Seeding and stream splitting for every randomised kernel.
//!
//! A [`Seed`] is a 256-bit ChaCha20 key, derived from a user's `u64` (reproducibility only:
//! anyone who knows it can undo the noise) or drawn from the operating system, afresh for
//! every call (no generator state is kept in the process, so processes forked from one
//! parent draw keys of their own). Parallel loops
//! never share a generator: chunk `i` of a loop uses stream `i` of the key
//! ([`Seed::stream`]), and chunks have the fixed size [`CHUNK`], so the output does not depend
//! on how rayon schedules the chunks or how many threads it has.

use crate::resources::{check_interrupt, interrupted};
use rand::rngs::SysRng;
use rand::{SeedableRng, TryRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

/// Number of items one stream produces in a chunked parallel loop.
pub const CHUNK: usize = 1 << 16;

/// The generator used for all privacy noise.
pub type Rng = ChaCha20Rng;

/// A ChaCha20 key from which independent streams are derived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seed([u8; 32]);

impl Seed {
    /// A key expanded from `seed`, or drawn from the operating system when `seed` is
    /// `None` (the secure default).
    ///
    /// # Errors
    /// [`Error::Entropy`](crate::Error::Entropy) when `seed` is `None` and the operating
    /// system gives no random bytes.
    pub fn new(seed: Option<u64>) -> crate::Result<Self> {
        match seed {
            Some(value) => Ok(Self::from_u64(value)),
            None => Self::from_os(),
        }
    }

    /// A key expanded from a 64-bit seed, as `ChaCha20Rng::seed_from_u64` expands it.
    pub fn from_u64(seed: u64) -> Self {
        let mut key = [0u8; 32];
        let mut expander = ChaCha20Rng::seed_from_u64(seed);
        rand::Rng::fill_bytes(&mut expander, &mut key);
        Seed(key)
    }

    /// A key read from the operating system's entropy source (`getrandom`) on every call.
    ///
    /// Not from a user-space generator such as rand's `ThreadRng`: a forked child would
    /// inherit its state, and children forked from one parent would draw the same keys.
    ///
    /// # Errors
    /// [`Error::Entropy`](crate::Error::Entropy) when the operating system gives no random
    /// bytes.
    pub fn from_os() -> crate::Result<Self> {
        let mut key = [0u8; 32];
        SysRng
            .try_fill_bytes(&mut key)
            .map_err(|err| crate::Error::Entropy(err.to_string()))?;
        Ok(Seed(key))
    }

    /// The generator for stream `index` of this key; distinct indices give independent
    /// streams.
    pub fn stream(&self, index: u64) -> Rng {
        let mut rng = ChaCha20Rng::from_seed(self.0);
        rng.set_stream(index);
        rng
    }

    /// Derives the key of a sub-task (e.g. one step of a multi-step mechanism) so that the
    /// sub-task's streams never overlap with this key's.
    pub fn derive(&self, tag: u64) -> Seed {
        let mut key = [0u8; 32];
        let mut rng = self.stream(u64::MAX - tag);
        rand::Rng::fill_bytes(&mut rng, &mut key);
        Seed(key)
    }
}

/// Fills `out` in parallel: item `j` of chunk `i` (chunks of [`CHUNK`] items) is produced by
/// `produce(&mut stream_i, j_global)`, called in order within the chunk.
///
/// The result depends only on `seed`, never on the number of threads.
///
/// # Errors
/// [`Error::Interrupted`](crate::Error::Interrupted) when an interrupt is requested (checked
/// once a chunk).
pub fn fill_chunked<T, F>(out: &mut [T], seed: &Seed, produce: F) -> crate::Result<()>
where
    T: Send,
    F: Fn(&mut Rng, usize) -> T + Sync,
{
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(chunk_index, chunk)| {
            if interrupted() {
                return;
            }
            let mut rng = seed.stream(chunk_index as u64);
            let offset = chunk_index * CHUNK;
            for (j, slot) in chunk.iter_mut().enumerate() {
                *slot = produce(&mut rng, offset + j);
            }
        });
    check_interrupt()
}

/// Like [`fill_chunked`], for producers that can fail; the first error in index order wins.
///
/// # Errors
/// The error of the lowest-indexed chunk whose producer failed.
pub fn try_fill_chunked<T, F>(out: &mut [T], seed: &Seed, produce: F) -> crate::Result<()>
where
    T: Send,
    F: Fn(&mut Rng, usize) -> crate::Result<T> + Sync,
{
    let results: Vec<crate::Result<()>> = out
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(chunk_index, chunk)| {
            check_interrupt()?;
            let mut rng = seed.stream(chunk_index as u64);
            let offset = chunk_index * CHUNK;
            for (j, slot) in chunk.iter_mut().enumerate() {
                *slot = produce(&mut rng, offset + j)?;
            }
            Ok(())
        })
        .collect();
    results.into_iter().collect()
}

/// The items that `produce` keeps, in index order: item `j` of chunk `i` (chunks of
/// [`CHUNK`] of the indices `0..n`) is `produce(&mut stream_i, j_global)`, drawn from the
/// same streams as [`try_fill_chunked`] would, and kept when it is `Some`. For producers
/// that keep few of many items, without an array of all of them.
///
/// The result depends only on `seed`, never on the number of threads.
///
/// # Errors
/// The error of the lowest-indexed chunk whose producer failed.
pub fn try_filter_chunked<T, F>(n: usize, seed: &Seed, produce: F) -> crate::Result<Vec<T>>
where
    T: Send,
    F: Fn(&mut Rng, usize) -> crate::Result<Option<T>> + Sync,
{
    let chunks: Vec<crate::Result<Vec<T>>> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|chunk_index| {
            check_interrupt()?;
            let mut rng = seed.stream(chunk_index as u64);
            let offset = chunk_index * CHUNK;
            let mut kept = Vec::new();
            for i in offset..n.min(offset + CHUNK) {
                if let Some(item) = produce(&mut rng, i)? {
                    kept.push(item);
                }
            }
            Ok(kept)
        })
        .collect();
    let mut kept = Vec::new();
    for chunk in chunks {
        kept.extend(chunk?);
    }
    Ok(kept)
}

/// Like [`try_fill_chunked`], for producers that fill a whole chunk at once (e.g. from a
/// batch of random words): chunk `i` of [`CHUNK`] items is filled by
/// `fill(&mut stream_i, i * CHUNK, chunk)`, the middle argument the index of its first item.
///
/// # Errors
/// The error of the lowest-indexed chunk whose producer failed.
pub fn try_fill_chunks<T, F>(out: &mut [T], seed: &Seed, fill: F) -> crate::Result<()>
where
    T: Send,
    F: Fn(&mut Rng, usize, &mut [T]) -> crate::Result<()> + Sync,
{
    let results: Vec<crate::Result<()>> = out
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(chunk_index, chunk)| {
            check_interrupt()?;
            fill(
                &mut seed.stream(chunk_index as u64),
                chunk_index * CHUNK,
                chunk,
            )
        })
        .collect();
    results.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    fn fill_with_threads(threads: usize, seed: &Seed, n: usize) -> Vec<u64> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        let mut out = vec![0u64; n];
        pool.install(|| fill_chunked(&mut out, seed, |rng, _| rng.random::<u64>()))
            .unwrap();
        out
    }

    #[test]
    fn same_seed_same_output_for_any_thread_count() {
        let seed = Seed::from_u64(42);
        let n = 3 * CHUNK + 17;
        let one = fill_with_threads(1, &seed, n);
        assert_eq!(one, fill_with_threads(2, &seed, n));
        assert_eq!(one, fill_with_threads(4, &seed, n));
        assert_ne!(one, fill_with_threads(1, &Seed::from_u64(43), n));
    }

    #[test]
    fn streams_and_derived_keys_differ() {
        let seed = Seed::from_u64(7);
        let a: u64 = seed.stream(0).random();
        let b: u64 = seed.stream(1).random();
        let c: u64 = seed.derive(0).stream(0).random();
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_ne!(Seed::from_os().unwrap(), Seed::from_os().unwrap());
    }

    #[test]
    fn first_error_in_index_order_wins() {
        let seed = Seed::from_u64(1);
        let mut out = vec![0usize; 3 * CHUNK];
        let err = try_fill_chunked(&mut out, &seed, |_, j| {
            if j == CHUNK + 5 || j == 2 * CHUNK + 1 {
                Err(crate::Error::InvalidData(format!("bad {j}")))
            } else {
                Ok(j)
            }
        })
        .unwrap_err();
        assert_eq!(err, crate::Error::InvalidData(format!("bad {}", CHUNK + 5)));
    }
}
