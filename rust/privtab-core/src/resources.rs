//! Thread pools, fallible allocation and interruption, shared by every kernel.
//!
//! Kernels never abort the process on a failed allocation: a request for more memory than
//! the machine has becomes [`Error::OutputTooLarge`], which reaches Python as
//! `MemoryError` with the size named.
//!
//! Long kernels stop early when asked: the bindings run every call inside
//! [`interruptible`] and call [`request_interrupt`] on Ctrl-C; kernels poll
//! [`check_interrupt`] at chunk or round boundaries and return [`Error::Interrupted`]: every
//! node of the enumerator of `mining`; the rounds, candidate scans, column copies and their
//! moves of `partition`; the subset walk; pairwise tables; every million rows of a dense
//! contingency table; every row block of the correlation kernels (moments and record
//! tiles); the passes of microaggregation's ranking and its phases; chunked sampling. A
//! poll is one relaxed load, made every few milliseconds of work, so that a request stops a
//! call within a fraction of a second. As in polars, the flag is process-wide: a request
//! stops every interruptible call running at that moment, and is cleared when the last of
//! them returns. [`run_watched`] runs a kernel this way while its caller keeps watching
//! for a reason to stop (the bindings: Python's signal handlers).
//!
//! A forked child (e.g. a worker of a `multiprocessing` pool started by "fork") inherits
//! the memory of its parent but none of its threads. The calls [`run_watched`] runs go to
//! a pool that belongs to the process that built it ([`process_pool`]): a child builds its
//! own instead of waiting forever on workers that do not exist there. The interrupt state
//! likewise belongs to one process: the calls that were running in the parent at the fork
//! (on threads the child does not have) neither count nor keep a request alive in the
//! child.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use crate::{Error, Result};

/// Bit 0: an interrupt is requested; bits 1..32: the number of calls inside
/// [`interruptible`]; bits 32..: the id of the process these belong to.
static INTERRUPT: AtomicU64 = AtomicU64::new(0);

/// The low bits of [`INTERRUPT`]: the request flag and the number of calls.
const CALLS_AND_FLAG: u64 = u32::MAX as u64;

/// The number of calls inside [`interruptible`] recorded in `state`.
fn calls(state: u64) -> u64 {
    (state & CALLS_AND_FLAG) >> 1
}

/// `state` as seen by process `pid`: unchanged if it is that process's, else no call and
/// no request (it was inherited from the parent through a fork).
fn own_state(state: u64, pid: u32) -> u64 {
    let owner = u64::from(pid) << 32;
    if state & !CALLS_AND_FLAG == owner {
        state
    } else {
        owner
    }
}

/// Runs `work` as one interruptible call (see [`request_interrupt`]).
///
/// # Errors
/// The errors of `work`, including [`Error::Interrupted`] from its kernels.
pub fn interruptible<T>(work: impl FnOnce() -> Result<T>) -> Result<T> {
    /// Leaves the call even when `work` panics, clearing the flag after the last call.
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            // The closure always returns `Some`, so the update cannot fail.
            let _ = INTERRUPT.fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                let state = state - 2;
                Some(if calls(state) == 0 {
                    state & !CALLS_AND_FLAG
                } else {
                    state
                })
            });
        }
    }
    let pid = std::process::id();
    // The closure always returns `Some`, so the update cannot fail.
    let _ = INTERRUPT.fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
        Some(own_state(state, pid) + 2)
    });
    let _leave = Leave;
    work()
}

/// Asks every running [`interruptible`] call to stop; returns whether one was running.
pub fn request_interrupt() -> bool {
    let pid = std::process::id();
    INTERRUPT
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
            let state = own_state(state, pid);
            (calls(state) > 0).then_some(state | 1)
        })
        .is_ok()
}

/// Whether an interrupt is requested (one relaxed load: cheap enough for any loop).
#[inline]
pub fn interrupted() -> bool {
    INTERRUPT.load(Ordering::Relaxed) & 1 != 0
}

/// [`Error::Interrupted`] when an interrupt is requested.
///
/// # Errors
/// [`Error::Interrupted`] when [`request_interrupt`] was called during this call.
#[inline]
pub fn check_interrupt() -> Result<()> {
    if interrupted() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

/// Runs `work` on a pool of `n_threads` threads, or on the caller's pool (in
/// [`run_watched`], this process's pool) when `n_threads` is `None` or is the size of the
/// caller's pool.
///
/// Pools of up to [`MAX_CACHED_THREADS`] threads are built once per process and kept
/// ([`sized_pool`]): starting and joining a pool's threads at every call cost more than a
/// small kernel's whole work (a 100-row contingency table took 1.48 ms a call on a fresh
/// one-thread pool, 0.13 ms on a kept one).
///
/// Results of the chunked kernels do not depend on the thread count; this exists so that
/// callers can bound the threads a call uses (and tests can show the independence).
///
/// # Errors
/// [`Error::InvalidParameter`] when `n_threads` is `Some(0)`, [`Error::OutputTooLarge`]
/// when the pool cannot be created, and any error of `work`.
pub fn with_threads<T, F>(n_threads: Option<usize>, work: F) -> Result<T>
where
    T: Send,
    F: FnOnce() -> Result<T> + Send,
{
    match n_threads {
        None => work(),
        Some(0) => Err(Error::parameter("n_threads", 0, "must be >= 1")),
        Some(threads) if threads == rayon::current_num_threads() => work(),
        Some(threads) if threads <= MAX_CACHED_THREADS => sized_pool(threads)?.install(work),
        Some(threads) => build_pool(Some(threads))?.install(work),
    }
}

/// Largest thread count whose pool [`with_threads`] keeps for later calls.
pub const MAX_CACHED_THREADS: usize = 64;

/// The kept pool of each size 1..=[`MAX_CACHED_THREADS`] (slot `n - 1`), as [`POOL`].
static SIZED_POOLS: [AtomicPtr<ProcessPool>; MAX_CACHED_THREADS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_CACHED_THREADS];

/// This process's pool of `threads` threads (1..=[`MAX_CACHED_THREADS`]), built on first
/// use and kept, as [`process_pool`] keeps the default one.
fn sized_pool(threads: usize) -> Result<&'static rayon::ThreadPool> {
    kept_pool(&SIZED_POOLS[threads - 1], Some(threads))
}

/// A rayon pool of `threads` threads (rayon's default when `None`).
fn build_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    let builder = rayon::ThreadPoolBuilder::new().thread_name(|index| format!("privtab-{index}"));
    builder
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|err| {
            let what = threads.map_or("the thread pool".to_string(), |n| format!("{n} threads"));
            Error::OutputTooLarge(format!("cannot start {what}: {err}"))
        })
}

/// The thread pool of one process, and the process.
struct ProcessPool {
    pid: u32,
    pool: rayon::ThreadPool,
}

/// The pool [`process_pool`] hands out: null until the first call, then a leaked
/// [`ProcessPool`], replaced only when a forked child finds its parent's.
static POOL: AtomicPtr<ProcessPool> = AtomicPtr::new(std::ptr::null_mut());

/// The rayon pool of this process (rayon's default number of threads), built on first use
/// and built anew in a forked child, whose copy of the parent's pool has no threads.
///
/// The parent's pool is left in the child as it is: dropping it would signal threads that
/// do not exist, under locks that may have been held at the fork. Its memory is all a fork
/// costs.
///
/// # Errors
/// [`Error::OutputTooLarge`] when the pool's threads cannot be started.
pub fn process_pool() -> Result<&'static rayon::ThreadPool> {
    kept_pool(&POOL, None)
}

/// The pool kept in `slot` for this process, built (with `threads` threads) when the slot
/// is empty or holds a forked parent's pool.
fn kept_pool(
    slot: &'static AtomicPtr<ProcessPool>,
    threads: Option<usize>,
) -> Result<&'static rayon::ThreadPool> {
    let pid = std::process::id();
    let current = slot.load(Ordering::Acquire);
    // SAFETY: the slot holds null or a pointer from `Box::into_raw` that is never freed.
    if let Some(entry) = unsafe { current.as_ref() }
        && entry.pid == pid
    {
        return Ok(&entry.pool);
    }
    let pool = build_pool(threads)?;
    let fresh = Box::into_raw(Box::new(ProcessPool { pid, pool }));
    match slot.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
        // SAFETY: `fresh` came from `Box::into_raw` and is never freed once published.
        Ok(_) => Ok(unsafe { &(*fresh).pool }),
        Err(winner) => {
            // SAFETY: `fresh` came from `Box::into_raw` and was not published.
            drop(unsafe { Box::from_raw(fresh) });
            // SAFETY: another thread of this process published `winner` (so for this
            // pid) after `current` was loaded; it is never freed.
            Ok(unsafe { &(*winner).pool })
        }
    }
}

/// Runs `kernel` as an [`interruptible`] job of this process's pool ([`process_pool`]) on
/// `n_threads` threads (see [`with_threads`]) while the calling thread waits, calling
/// `watch` every `period`.
///
/// No thread is started per call. When `watch` fails, the kernel is asked to stop
/// ([`request_interrupt`], repeated every `period` until the request is up, since one
/// made before the job has started finds no call to stop), the call waits for it and
/// returns `watch`'s error; `watch` is not called again. Kernels poll [`check_interrupt`] at chunk or round boundaries, so the
/// wait is one chunk or one round of work. A panic of the kernel resumes in the caller.
///
/// # Errors
/// The outer error is `watch`'s; the inner result is the kernel's (including the errors
/// of [`with_threads`] and [`process_pool`]).
pub fn run_watched<T, E, F>(
    n_threads: Option<usize>,
    period: Duration,
    kernel: F,
    mut watch: impl FnMut() -> std::result::Result<(), E>,
) -> std::result::Result<Result<T>, E>
where
    T: Send,
    F: FnOnce() -> Result<T> + Send,
{
    let pool = match process_pool() {
        Ok(pool) => pool,
        Err(err) => return Ok(Err(err)),
    };
    let (done, finished) = mpsc::channel();
    let (mut outcome, mut stop) = (None, None);
    // The scope returns when the job has; a panic of the kernel resumes there.
    pool.in_place_scope(|scope| {
        scope.spawn(move |_| {
            // The receiver lives until the scope ends.
            let _ = done.send(interruptible(|| with_threads(n_threads, kernel)));
        });
        while outcome.is_none() {
            match finished.recv_timeout(period) {
                Ok(result) => outcome = Some(result),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    if stop.is_none()
                        && let Err(err) = watch()
                    {
                        stop = Some(err);
                    }
                    // A request made before the job has entered its interruptible call
                    // (or after another call cleared the flag) finds no call and is
                    // lost: repeat it every period until the flag is up.
                    if stop.is_some() && !interrupted() {
                        request_interrupt();
                    }
                }
            }
        }
    });
    match (stop, outcome) {
        (Some(err), _) => Err(err),
        (None, Some(result)) => Ok(result),
        // Unreachable: without an outcome the kernel panicked and the scope resumed it.
        (None, None) => Ok(Err(Error::Interrupted)),
    }
}

/// A zero-filled vector of length `len`, or [`Error::OutputTooLarge`] instead of aborting
/// when the allocation fails.
///
/// # Errors
/// [`Error::OutputTooLarge`] naming `what` when `len` values cannot be allocated.
pub fn alloc_output<T: Clone + Default>(len: usize, what: &str) -> Result<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| {
        Error::OutputTooLarge(format!(
            "{what}: cannot allocate {len} values of {} bytes",
            std::mem::size_of::<T>()
        ))
    })?;
    out.resize(len, T::default());
    Ok(out)
}

/// Element types whose all-zero bit pattern is a valid value (`0`, `0.0`), so that memory
/// from [`std::alloc::alloc_zeroed`] is a ready vector of them.
///
/// # Safety
/// Every implementor must be valid when all its bytes are zero.
pub unsafe trait ZeroBits: Copy {}

// SAFETY: zero bytes are the integer 0.
unsafe impl ZeroBits for u8 {}
// SAFETY: zero bytes are the integer 0.
unsafe impl ZeroBits for u16 {}
// SAFETY: zero bytes are the integer 0.
unsafe impl ZeroBits for u32 {}
// SAFETY: zero bytes are the integer 0.
unsafe impl ZeroBits for u64 {}
// SAFETY: zero bytes are the integer 0.
unsafe impl ZeroBits for i64 {}
// SAFETY: zero bytes are the double +0.0.
unsafe impl ZeroBits for f64 {}

/// A zero-filled vector of `len` counts, or [`Error::OutputTooLarge`] if it cannot be
/// allocated (instead of aborting the process). The memory comes zeroed from the allocator,
/// so pages of a large, sparse table are only touched when counted into.
pub fn zeroed(len: usize, what: &str) -> Result<Vec<u64>> {
    zeroed_vec(len, what)
}

/// A vector of `len` zeros of any [`ZeroBits`] type, straight from the allocator's zeroed
/// memory: no pass writes the zeros, and a page is first touched by whoever fills it (a
/// kernel that overwrites every element pays for the memory once).
///
/// # Errors
/// [`Error::OutputTooLarge`] naming `what` when `len` values cannot be allocated.
pub fn zeroed_vec<T: ZeroBits>(len: usize, what: &str) -> Result<Vec<T>> {
    let too_large = || {
        Error::OutputTooLarge(format!(
            "{what} needs {len} cells of {} bytes, which cannot be allocated",
            std::mem::size_of::<T>()
        ))
    };
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| too_large())?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: `layout` has a non-zero size (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return Err(too_large());
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `[T; len]`,
    // every byte is zero (a valid `T` by the `ZeroBits` contract), and length and capacity
    // are both `len`.
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// Runs `f` on a fresh pool of `threads` threads (tests comparing thread counts).
#[cfg(test)]
pub(crate) fn with_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool")
        .install(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_pools_and_allocation_errors() {
        assert!(with_threads(Some(0), || Ok(1)).is_err());
        assert_eq!(
            with_threads(Some(2), || Ok(rayon::current_num_threads())),
            Ok(2)
        );
        assert!(matches!(
            alloc_output::<u64>(usize::MAX / 2, "samples"),
            Err(Error::OutputTooLarge(_))
        ));
    }

    #[test]
    fn interrupt_state_of_another_process_counts_no_call() {
        let pid = std::process::id();
        let other = pid.wrapping_add(1);
        let inherited = (u64::from(other) << 32) | (3 << 1) | 1;
        assert_eq!(own_state(inherited, pid), u64::from(pid) << 32);
        let mine = (u64::from(pid) << 32) | (2 << 1) | 1;
        assert_eq!(own_state(mine, pid), mine);
        assert_eq!((calls(inherited), calls(mine)), (3, 2));
    }

    #[test]
    fn the_process_pool_is_built_once() {
        let first = process_pool().unwrap();
        assert!(std::ptr::eq(first, process_pool().unwrap()));
        assert_eq!(
            first.current_num_threads(),
            rayon::ThreadPoolBuilder::new()
                .build()
                .unwrap()
                .current_num_threads()
        );
    }

    #[test]
    fn zeroed_tables_start_at_zero() {
        assert_eq!(zeroed(4, "table"), Ok(vec![0u64; 4]));
        assert_eq!(zeroed(0, "table"), Ok(Vec::new()));
        assert!(matches!(
            zeroed(usize::MAX / 8, "table"),
            Err(Error::OutputTooLarge(_))
        ));
        assert_eq!(zeroed_vec::<f64>(3, "column"), Ok(vec![0.0; 3]));
        assert!(zeroed_vec::<f64>(3, "column").unwrap()[0].is_sign_positive());
        assert!(matches!(
            zeroed_vec::<u32>(usize::MAX / 2, "labels"),
            Err(Error::OutputTooLarge(_))
        ));
    }
}
