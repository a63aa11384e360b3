//! Pure-Rust kernels of privtab.
//!
//! Everything here takes plain slices and returns owned data and [`Result`]; the PyO3 glue in
//! `privtab-py` releases the GIL around these calls. Categorical tables are passed
//! column-major: one contiguous `u32` slice of codes per attribute (see [`columns::Columns`]).
//!
//! Randomised kernels take an [`rng::Seed`] and split their work into fixed-size chunks, each
//! with its own ChaCha20 stream, so a given seed gives the same output for any thread count.

/// Defines `pub fn $name` that runs `$body` compiled with `$feature` when the CPU has it
/// (as decided by `$check`), and the portable build of the same body otherwise.
macro_rules! multiversion {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty, $feature:literal, $check:ident, $body:block) => {
        $(#[$doc])*
        pub fn $name($($arg: $ty),*) -> $ret {
            #[inline(always)]
            fn body($($arg: $ty),*) -> $ret $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = $feature)]
                fn fast($($arg: $ty),*) -> $ret {
                    body($($arg),*)
                }
                if $check() {
                    // SAFETY: the CPU has the feature `fast` is compiled for (checked above).
                    return unsafe { fast($($arg),*) };
                }
            }
            body($($arg),*)
        }
    };
}

pub mod anonymity;
pub mod binary;
pub mod bitset;
pub mod clustering;
pub mod columns;
pub mod correlation;
pub mod counts;
pub mod encode;
pub mod error;
pub mod histogram;
pub mod microagg;
pub mod mining;
pub mod noise;
pub mod pairwise;
pub mod partition;
pub mod resources;
pub mod rng;

pub use error::{Error, Result};
