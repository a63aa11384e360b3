//! Correlation kernels of DPFSDR: C. Wang, Q. Zhang & Y. Yan, "Differentially Private
//! Feature Selection Based on Dynamic Relevance for Correlated Data", Journal of Computers
//! 34(1):157–173, 2023, doi:10.53106/199115992023023401012 (paper 003 of `shared/papers`).
//!
//! The method needs three non-private statistics of a real-valued table `X` (n records × d
//! features), all computed here:
//! - the feature–feature Pearson matrix θ (eq. 6), the correlated-degree adjacency matrix
//!   `M` of Algorithm 1 (eq. 7) and the attribute filter built on it (PAPERS.md, "003");
//! - the multi-class F-score of every feature (eq. 8) and the feature importance
//!   `fim = F / ΣF` (eq. 9);
//! - the record–record correlated degrees on a feature subset, whose maximum is the
//!   correlated sensitivity (eq. 4, with the record threshold of §5.4).
//!
//! Input is the row-major (C-contiguous) `n × d` buffer a NumPy `float64` array already has,
//! wrapped in [`RowMatrix`]; nothing is transposed. Column statistics stream over fixed
//! blocks of [`CHUNK_ROWS`] rows: each block is read contiguously, its statistics are
//! vectorised across features, and block summaries are merged with the pairwise-update
//! formulas of Chan, Golub & LeVeque (exact centring within a block, no one-pass
//! `Σx² − n·x̄²`). A one-time transpose would double the memory for no gain, and strided
//! column reads would touch every cache line d times.
//!
//! Every result is independent of the rayon thread count: work is split into blocks whose
//! size depends only on the input shape, block summaries are merged by a fixed binary tree,
//! and the record degrees add per-tile partial sums as fixed-point integers, whose sum does
//! not depend on the order of the additions. The inner products run in an FMA kernel with
//! AVX2 and AVX-512 builds chosen at run time; every accumulator sees the same sequence of
//! fused multiply-adds, and every total the same sequence of additions, on every path, so
//! results are also the same on every CPU.
//!
//! Nothing here is private: the caller adds the noise (Laplace on `fim` with Δ = 1, eq. 12;
//! output perturbation of the SVM weights scaled by the correlated sensitivity, eq. 5).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::columns::{check_codes, check_table_shape};
use crate::resources::{alloc_output, check_interrupt, interrupted};
use crate::{Error, Result};

/// Rows per block of the column statistics (Pearson matrix, F-scores).
pub const CHUNK_ROWS: usize = 1024;

/// Records per block of the record–record tiles: two blocks of normalised records (`BLOCK·k`
/// values each) stay in the L2 cache while their `BLOCK × BLOCK` correlations are formed.
pub const BLOCK: usize = 256;

/// Columns of one micro-tile of the inner-product kernel (four AVX2 or two AVX-512 registers
/// of `f64`), and records per strip of the packed record blocks.
const NC: usize = 16;

/// Records of block bi visited against all of block bj before the next ones: their packed
/// values and row totals stay in the L1 cache while block bj streams past.
const ROW_CHUNK: usize = 64;

/// Block summaries held at once while merging, in `f64` values (bounds the memory of the
/// fixed reduction tree to about 64 MiB; the group size depends on the shape only).
const GROUP_VALUES: usize = 1 << 23;

/// Fewest and most blocks whose summaries are computed in parallel and merged as one group.
const GROUP_BLOCKS: (usize, usize) = (4, 64);

// ---------------------------------------------------------------------------------------------
// Input

/// A validated row-major `n_rows × n_cols` matrix of finite `f64` values.
///
/// Record `r` is `data[r·n_cols .. (r + 1)·n_cols]`, the layout of a C-contiguous NumPy
/// array, so the binding can lend the array's buffer without copying.
#[derive(Clone, Copy, Debug)]
pub struct RowMatrix<'a> {
    data: &'a [f64],
    n_rows: usize,
    n_cols: usize,
}

impl<'a> RowMatrix<'a> {
    /// Checks the shape and that every value is finite.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `n_rows` or `n_cols` is 0; [`Error::InvalidData`] when
    /// `data.len() != n_rows·n_cols` or a value is NaN or infinite (the first one is named).
    pub fn new(data: &'a [f64], n_rows: usize, n_cols: usize) -> Result<Self> {
        if n_rows == 0 {
            return Err(Error::parameter("n_rows", 0, "must be >= 1"));
        }
        if n_cols == 0 {
            return Err(Error::parameter("n_cols", 0, "must be >= 1"));
        }
        check_table_shape(data.len(), n_rows, n_cols, "x")?;
        if let Some(pos) = first_non_finite(data) {
            return Err(Error::InvalidData(format!(
                "x has the non-finite value {} at row {}, column {}; values must be finite",
                data[pos],
                pos / n_cols,
                pos % n_cols
            )));
        }
        Ok(RowMatrix {
            data,
            n_rows,
            n_cols,
        })
    }

    /// Number of records n.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of features d.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Record `r`.
    fn row(&self, r: usize) -> &'a [f64] {
        &self.data[r * self.n_cols..(r + 1) * self.n_cols]
    }
}

/// Values per chunk of the finiteness scan.
const FINITE_CHUNK: usize = 1 << 14;

/// Inputs of up to this many values (8 MiB, a fraction of a millisecond) are scanned on the
/// calling thread.
const FINITE_SERIAL: usize = 1 << 20;

/// The position of the first NaN or infinite value of `data`. Chunks are scanned with a
/// branch-free reduction (vectorised) and only a chunk that holds one is searched.
fn first_non_finite(data: &[f64]) -> Option<usize> {
    let has_bad = |chunk: &[f64]| chunk.iter().fold(false, |bad, v| bad | !v.is_finite());
    let chunk = if data.len() <= FINITE_SERIAL {
        data.chunks(FINITE_CHUNK).position(has_bad)
    } else {
        data.par_chunks(FINITE_CHUNK).position_first(has_bad)
    }?;
    let start = chunk * FINITE_CHUNK;
    data[start..]
        .iter()
        .position(|v| !v.is_finite())
        .map(|i| start + i)
}

/// Checks a correlation threshold δ ∈ (0, 1]. Zero is excluded so that uncorrelated pairs
/// (θ = 0, which includes every pair with a constant column or record) never count.
fn check_threshold(name: &'static str, value: f64) -> Result<f64> {
    if value > 0.0 && value <= 1.0 {
        Ok(value)
    } else {
        Err(Error::parameter(name, value, "must be in (0, 1]"))
    }
}

/// The factor 2^−e, where 2^e is the smallest power of two above `max_abs` (e clamped to
/// ±1000 so the factor is a normal number). Multiplying by it is exact and brings values
/// into [−1, 1], so no square or product can overflow; Pearson and F-scores are
/// scale-invariant, so results are unchanged.
fn pow2_inv_scale(max_abs: f64) -> f64 {
    if max_abs == 0.0 {
        return 1.0;
    }
    let biased = i32::try_from((max_abs.to_bits() >> 52) & 0x7ff).unwrap_or(0);
    let e = (biased - 1022).clamp(-1000, 1000);
    f64::from_bits(u64::from((1023 - e).unsigned_abs()) << 52)
}

// ---------------------------------------------------------------------------------------------
// Fixed-shape parallel reduction

/// Merges `items` pairwise, level by level: the tree depends only on `items.len()`.
fn tree_reduce<T>(mut items: Vec<T>, merge: &impl Fn(T, T) -> T) -> Option<T> {
    while items.len() > 1 {
        let mut next = Vec::with_capacity(items.len().div_ceil(2));
        let mut it = items.into_iter();
        while let Some(a) = it.next() {
            next.push(match it.next() {
                Some(b) => merge(a, b),
                None => a,
            });
        }
        items = next;
    }
    items.pop()
}

/// Summarises rows `0..n_rows` in blocks of `chunk_rows` rows (in parallel) and merges the
/// summaries in a fixed order: groups of consecutive blocks by [`tree_reduce`], groups left
/// to right. `summary_len` (values per summary) sets the group size, so at most about
/// [`GROUP_VALUES`] values of summaries are alive at once. An interrupt request stops it
/// between blocks, leaving a partial summary: callers return [`check_interrupt`]'s error.
fn reduce_row_blocks<T: Send>(
    n_rows: usize,
    chunk_rows: usize,
    summary_len: usize,
    summarise: impl Fn(Range<usize>) -> T + Sync,
    merge: impl Fn(T, T) -> T,
) -> Option<T> {
    let n_blocks = n_rows.div_ceil(chunk_rows);
    let group = (GROUP_VALUES / summary_len.max(1)).clamp(GROUP_BLOCKS.0, GROUP_BLOCKS.1);
    let mut total: Option<T> = None;
    for g0 in (0..n_blocks).step_by(group) {
        let parts: Option<Vec<T>> = (g0..(g0 + group).min(n_blocks))
            .into_par_iter()
            .map(|b| {
                (!interrupted())
                    .then(|| summarise(b * chunk_rows..((b + 1) * chunk_rows).min(n_rows)))
            })
            .collect();
        let Some(parts) = parts else {
            break;
        };
        if let Some(part) = tree_reduce(parts, &merge) {
            total = Some(match total {
                None => part,
                Some(t) => merge(t, part),
            });
        }
    }
    total
}

/// Per-column minimum and maximum (exact, so any merge order gives the same result).
fn column_ranges(x: &RowMatrix<'_>) -> (Vec<f64>, Vec<f64>) {
    let d = x.n_cols;
    let summarise = |rows: Range<usize>| {
        let mut lo = x.row(rows.start).to_vec();
        let mut hi = lo.clone();
        for r in rows {
            for ((l, h), &v) in lo.iter_mut().zip(hi.iter_mut()).zip(x.row(r)) {
                *l = l.min(v);
                *h = h.max(v);
            }
        }
        (lo, hi)
    };
    let merge = |(mut lo, mut hi): (Vec<f64>, Vec<f64>), (lo2, hi2): (Vec<f64>, Vec<f64>)| {
        for (a, b) in lo.iter_mut().zip(lo2) {
            *a = a.min(b);
        }
        for (a, b) in hi.iter_mut().zip(hi2) {
            *a = a.max(b);
        }
        (lo, hi)
    };
    reduce_row_blocks(x.n_rows, 8 * CHUNK_ROWS, 2 * d, summarise, merge)
        .unwrap_or_else(|| (vec![0.0; d], vec![0.0; d]))
}

/// The per-column scale factors of [`pow2_inv_scale`] and the zero-variance flags.
fn column_scales(x: &RowMatrix<'_>) -> (Vec<f64>, Vec<bool>) {
    let (lo, hi) = column_ranges(x);
    let scale = lo
        .iter()
        .zip(&hi)
        .map(|(l, h)| pow2_inv_scale(l.abs().max(h.abs())))
        .collect();
    let constant = lo.iter().zip(&hi).map(|(l, h)| l == h).collect();
    (scale, constant)
}

// ---------------------------------------------------------------------------------------------
// Inner-product kernel

/// The instruction sets the kernels are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// The instruction sets this CPU runs, the portable build first and the best last: AVX2 with
/// FMA when present (any x86-64 since 2013), then AVX-512 (`avx512f`: Intel server CPUs
/// since 2017, AMD since Zen 4). The portable build's `mul_add` gives the same results (as a
/// library call where the CPU has no FMA, so slowly). A value other than `Portable` is only
/// ever made here, after its features were detected: the dispatch below relies on it.
fn isas() -> &'static [Isa] {
    use std::sync::OnceLock;
    static ISAS: OnceLock<Vec<Isa>> = OnceLock::new();
    ISAS.get_or_init(|| {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut found = vec![Isa::Portable];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            found.push(Isa::Avx2);
            if std::arch::is_x86_feature_detected!("avx512f") {
                found.push(Isa::Avx512);
            }
        }
        found
    })
}

/// The best instruction set of this CPU.
fn isa() -> Isa {
    isas().last().copied().unwrap_or(Isa::Portable)
}

/// Thresholded sums and counts of the rows of a micro-tile, `NC` lanes per row (summed by
/// [`lane_sum`] once the block row is done).
type RowTotals<'a> = (&'a mut [[f64; NC]], &'a mut [[f64; NC]]);

/// Thresholded sums and counts of the `NC` columns of a micro-tile.
type ColumnTotals<'a> = (&'a mut [f64; NC], &'a mut [f64; NC]);

/// Sum of the `NC` lanes by a fixed pairwise tree.
fn lane_sum(v: &[f64; NC]) -> f64 {
    let mut w = *v;
    let mut width = NC;
    while width > 1 {
        width /= 2;
        for i in 0..width {
            w[i] += w[i + width];
        }
    }
    w[0]
}

/// The loops over micro-tiles, compiled once per instruction set (`$feature`) around that
/// set's `micro`, `tile` and (if `SCREEN`) `screen`, for micro-tiles of `$mr × NC` pairs and
/// screened groups of `$screen_rows × NC` pairs. Every total is accumulated in the same order
/// whatever the kernel and the tile shape (a record's row lanes strip by strip, a column total
/// record by record), and the screen skips only groups that would add nothing, so all
/// instruction sets give identical bits.
macro_rules! drivers {
    (mr = $mr:expr, screen_rows = $screen_rows:expr; $(#[$feature:meta])*) => {
        /// Rows per micro-tile.
        const MR: usize = $mr;

        /// Rows of one screened group (whole micro-tiles within one strip).
        const SCREEN_ROWS: usize = $screen_rows;

        const _: () = assert!(NC % SCREEN_ROWS == 0 && SCREEN_ROWS % MR == 0);

        /// One micro-tile of inner products.
        type Acc = [[f64; NC]; MR];

        /// `gram[i·dp + j] = Σ_t z[t·dp + i]·z[t·dp + j]` for every `i ≤ j` (and some
        /// `i > j` near the diagonal), over the `rows × dp` row-major block `z`.
        $(#[$feature])*
        pub(super) fn gram(z: &[f64], rows: usize, dp: usize, gram: &mut [f64]) {
            for i0 in (0..dp).step_by(MR) {
                for j0 in ((i0 / NC) * NC..dp).step_by(NC) {
                    let acc = micro(&z[i0..], dp, &z[j0..], dp, rows);
                    for (i, row) in acc.iter().enumerate() {
                        let at = (i0 + i) * dp + j0;
                        gram[at..at + NC].copy_from_slice(row);
                    }
                }
            }
        }

        /// Tiles (bi, bj) for every bj ≥ bi: thresholded sums for the records of block bi
        /// (added once at the end) and of block bj (added per tile, off the diagonal).
        $(#[$feature])*
        pub(super) fn block_row(tiles: &Tiles<'_>, bi: usize, delta: f64, out: &Totals<'_>) {
            let k = tiles.k;
            let strip = NC * k;
            let (pa, pa32) = (tiles.panel(bi), tiles.panel32(bi));
            let mut row_sum = vec![[0.0; NC]; BLOCK];
            let mut row_cnt = vec![[0.0; NC]; BLOCK];
            let mut screening = SCREEN;
            for bj in bi..tiles.n_blocks {
                // The caller reports the interrupt; the totals are then discarded.
                if crate::resources::interrupted() {
                    return;
                }
                let (pb, pb32) = (tiles.panel(bj), tiles.panel32(bj));
                let diagonal = bi == bj;
                let mut with_hits = 0;
                let mut col_sum = [[0.0; NC]; BLOCK / NC];
                let mut col_cnt = [[0.0; NC]; BLOCK / NC];
                for rows_from in (0..BLOCK).step_by(ROW_CHUNK) {
                    for (s, (cs, cc)) in col_sum.iter_mut().zip(&mut col_cnt).enumerate() {
                        let b = &pb[s * strip..(s + 1) * strip];
                        let b32 = &pb32[s * strip..(s + 1) * strip];
                        for g0 in (rows_from..rows_from + ROW_CHUNK).step_by(SCREEN_ROWS) {
                            let a32 = &pa32[g0 / NC * strip + g0 % NC..];
                            if screening && !screen(a32, b32, k, tiles.screen_bound) {
                                continue;
                            }
                            for i0 in (g0..g0 + SCREEN_ROWS).step_by(MR) {
                                // θ_rr is added once at the end, not from the kernel.
                                let self_lane = (diagonal && i0 / NC == s).then_some(i0 % NC);
                                let rows = i0..i0 + MR;
                                let a = &pa[i0 / NC * strip + i0 % NC..];
                                let row_totals = (&mut row_sum[rows.clone()], &mut row_cnt[rows]);
                                if tile(a, b, k, delta, self_lane, row_totals, (&mut *cs, &mut *cc)) {
                                    with_hits += 1;
                                }
                            }
                        }
                    }
                }
                // The screen only pays off when most micro-tiles hold no correlated pair;
                // whether it runs changes the speed, never the result.
                screening = SCREEN && with_hits * 3 < (BLOCK / MR) * (BLOCK / NC);
                // A diagonal tile's row sums already hold both (r, s) and (s, r).
                if !diagonal {
                    let (sums, counts) = (col_sum.as_flattened(), col_cnt.as_flattened());
                    for j in 0..BLOCK.min(tiles.n_rows - bj * BLOCK) {
                        out.add(bj * BLOCK + j, sums[j], counts[j]);
                    }
                }
            }
            for i in 0..BLOCK.min(tiles.n_rows - bi * BLOCK) {
                out.add(bi * BLOCK + i, lane_sum(&row_sum[i]), lane_sum(&row_cnt[i]));
            }
        }
    };
}

/// A `tile` made of an instruction set's `micro`, `any_reaches` and `threshold`, which see
/// the micro-tile as an `Acc` in memory.
macro_rules! tile_from_parts {
    ($(#[$feature:meta])*) => {
        /// One micro-tile of record correlations: records `0..MR` of the strip `a` against
        /// the `NC` records of the strip `b` (`depth` features); with `self_lane =
        /// Some(l)`, record `i` of `a` is record `l + i` of `b` and that pair (θ_rr) is left
        /// out. Adds `w = min(|θ|, 1)·[|θ| ≥ δ]` and `[|θ| ≥ δ]` to the lanes of the rows'
        /// totals and to the columns' totals, row by row; returns whether a pair counted.
        $(#[$feature])*
        #[inline]
        fn tile(
            a: &[f64],
            b: &[f64],
            depth: usize,
            delta: f64,
            self_lane: Option<usize>,
            rows: RowTotals<'_>,
            cols: ColumnTotals<'_>,
        ) -> bool {
            let mut acc = micro(a, NC, b, NC, depth);
            if let Some(lane) = self_lane {
                for (i, row) in acc.iter_mut().enumerate() {
                    if let Some(v) = row.get_mut(lane + i) {
                        *v = 0.0;
                    }
                }
            }
            let hits = any_reaches(&acc, delta);
            if hits {
                threshold(&acc, delta, rows, cols);
            }
            hits
        }
    };
}

/// The reference kernels, in plain Rust.
mod portable {
    use super::*;

    /// The portable build computes every micro-tile in `f64`.
    const SCREEN: bool = false;

    /// Never called (see [`SCREEN`]).
    fn screen(_: &[f32], _: &[f32], _: usize, _: f32) -> bool {
        true
    }

    /// `acc[i][j] = Σ_t a[t·lda + i]·b[t·ldb + j]` over `t < depth`: one chain of fused
    /// multiply-adds per accumulator, in increasing `t`.
    fn micro(a: &[f64], lda: usize, b: &[f64], ldb: usize, depth: usize) -> Acc {
        let mut acc = [[0.0; NC]; MR];
        for (ca, cb) in a.chunks(lda).zip(b.chunks(ldb)).take(depth) {
            for (row, &ai) in acc.iter_mut().zip(&ca[..MR]) {
                for (c, &bj) in row.iter_mut().zip(&cb[..NC]) {
                    *c = ai.mul_add(bj, *c);
                }
            }
        }
        acc
    }

    /// Whether some `|acc|` reaches `delta`.
    fn any_reaches(acc: &Acc, delta: f64) -> bool {
        acc.iter().flatten().any(|v| v.abs() >= delta)
    }

    /// Adds `w = min(|θ|, 1)·[|θ| ≥ δ]` and `[|θ| ≥ δ]` to the row lanes and the column
    /// totals, row by row.
    fn threshold(
        acc: &Acc,
        delta: f64,
        (row_sum, row_cnt): RowTotals<'_>,
        (col_sum, col_cnt): ColumnTotals<'_>,
    ) {
        for ((row, rs), rc) in acc.iter().zip(row_sum).zip(row_cnt) {
            for j in 0..NC {
                let v = row[j].abs().min(1.0);
                let hit = v >= delta;
                let w = if hit { v } else { 0.0 };
                let h = if hit { 1.0 } else { 0.0 };
                rs[j] += w;
                rc[j] += h;
                col_sum[j] += w;
                col_cnt[j] += h;
            }
        }
    }

    tile_from_parts!();
    drivers!(mr = 2, screen_rows = 4;);
}

/// The same kernels with AVX2 and FMA intrinsics (four lanes per register, `NC = 16`
/// columns in four registers per row, micro-tiles of 2 × 16 pairs in eight registers).
/// Written with intrinsics because the compiler does not vectorise the portable loops
/// reliably under fat LTO.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;
    use std::arch::x86_64::{
        __m256d, _CMP_GE_OQ, _mm256_add_pd, _mm256_and_pd, _mm256_andnot_pd, _mm256_andnot_ps,
        _mm256_cmp_pd, _mm256_cmp_ps, _mm256_fmadd_pd, _mm256_fmadd_ps, _mm256_loadu_pd,
        _mm256_loadu_ps, _mm256_max_pd, _mm256_max_ps, _mm256_min_pd, _mm256_movemask_pd,
        _mm256_movemask_ps, _mm256_set1_pd, _mm256_set1_ps, _mm256_setzero_pd, _mm256_setzero_ps,
        _mm256_storeu_pd,
    };

    /// Micro-tiles are screened in `f32` first.
    const SCREEN: bool = true;

    /// Whether some `f32` inner product of records `0..SCREEN_ROWS` of `a` with records
    /// `0..NC` of `b` (strip layout, lda = ldb = NC) reaches `bound` in absolute value:
    /// eight lanes per register, so twice the pairs per instruction of the `f64` kernel.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn screen(a: &[f32], b: &[f32], depth: usize, bound: f32) -> bool {
        let mut c = [_mm256_setzero_ps(); 2 * SCREEN_ROWS];
        if depth > 0 {
            // One bounds check for the whole loop (the slicing panics if a row is missing):
            // the loop is then loads and fused multiply-adds only.
            let a = &a[..(depth - 1) * NC + SCREEN_ROWS];
            let b = &b[..depth * NC];
            for t in 0..depth {
                // SAFETY: for t < depth, a[t·NC .. t·NC + SCREEN_ROWS] and
                // b[t·NC .. t·NC + 16] lie within the slices above.
                let (row_a, row_b) = unsafe { (a.as_ptr().add(t * NC), b.as_ptr().add(t * NC)) };
                // SAFETY: as above; the loads are unaligned.
                let (b0, b1) = unsafe { (_mm256_loadu_ps(row_b), _mm256_loadu_ps(row_b.add(8))) };
                for i in 0..SCREEN_ROWS {
                    // SAFETY: i < SCREEN_ROWS, as above.
                    let ai = _mm256_set1_ps(unsafe { *row_a.add(i) });
                    c[2 * i] = _mm256_fmadd_ps(ai, b0, c[2 * i]);
                    c[2 * i + 1] = _mm256_fmadd_ps(ai, b1, c[2 * i + 1]);
                }
            }
        }
        let sign = _mm256_set1_ps(-0.0);
        let mut peak = _mm256_setzero_ps();
        for v in c {
            peak = _mm256_max_ps(peak, _mm256_andnot_ps(sign, v));
        }
        _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GE_OQ>(peak, _mm256_set1_ps(bound))) != 0
    }

    /// Four lanes of `s` from `at`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn load(s: &[f64], at: usize) -> __m256d {
        let lanes = &s[at..at + 4];
        // SAFETY: `lanes` holds 4 values; the load is unaligned.
        unsafe { _mm256_loadu_pd(lanes.as_ptr()) }
    }

    /// Stores four lanes into `s` at `at`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn store(s: &mut [f64], at: usize, v: __m256d) {
        let lanes = &mut s[at..at + 4];
        // SAFETY: `lanes` holds 4 values; the store is unaligned.
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), v) }
    }

    /// Adds four lanes to `s` at `at`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn add_to(s: &mut [f64], at: usize, v: __m256d) {
        let sum = _mm256_add_pd(load(s, at), v);
        store(s, at, sum);
    }

    /// As `portable::micro`: the fused multiply-add `_mm256_fmadd_pd` rounds once per
    /// lane, like `f64::mul_add`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn micro(a: &[f64], lda: usize, b: &[f64], ldb: usize, depth: usize) -> Acc {
        let mut c = [_mm256_setzero_pd(); 2 * NC / 4];
        if depth > 0 {
            // As in `screen`: one bounds check, then loads and fused multiply-adds only.
            let a = &a[..(depth - 1) * lda + MR];
            let b = &b[..(depth - 1) * ldb + NC];
            for t in 0..depth {
                // SAFETY: for t < depth, a[t·lda .. t·lda + MR] and b[t·ldb .. t·ldb + 16]
                // lie within the slices above; the loads are unaligned.
                let (a0, a1, bv) = unsafe {
                    let (row_a, row_b) = (a.as_ptr().add(t * lda), b.as_ptr().add(t * ldb));
                    (
                        _mm256_set1_pd(*row_a),
                        _mm256_set1_pd(*row_a.add(1)),
                        [
                            _mm256_loadu_pd(row_b),
                            _mm256_loadu_pd(row_b.add(4)),
                            _mm256_loadu_pd(row_b.add(8)),
                            _mm256_loadu_pd(row_b.add(12)),
                        ],
                    )
                };
                for q in 0..4 {
                    c[q] = _mm256_fmadd_pd(a0, bv[q], c[q]);
                    c[q + 4] = _mm256_fmadd_pd(a1, bv[q], c[q + 4]);
                }
            }
        }
        let mut acc = [[0.0; NC]; MR];
        for q in 0..4 {
            store(&mut acc[0], 4 * q, c[q]);
            store(&mut acc[1], 4 * q, c[q + 4]);
        }
        acc
    }

    /// `|v|` (clears the sign bit).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn abs(v: __m256d) -> __m256d {
        _mm256_andnot_pd(_mm256_set1_pd(-0.0), v)
    }

    /// As `portable::any_reaches`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn any_reaches(acc: &Acc, delta: f64) -> bool {
        let mut peak = _mm256_setzero_pd();
        for row in acc {
            for q in 0..4 {
                peak = _mm256_max_pd(peak, abs(load(row, 4 * q)));
            }
        }
        _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_GE_OQ>(peak, _mm256_set1_pd(delta))) != 0
    }

    /// As `portable::threshold`, four lanes at a time (same additions in the same order).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn threshold(
        acc: &Acc,
        delta: f64,
        (row_sum, row_cnt): RowTotals<'_>,
        (col_sum, col_cnt): ColumnTotals<'_>,
    ) {
        let (one, d) = (_mm256_set1_pd(1.0), _mm256_set1_pd(delta));
        for ((row, rs), rc) in acc.iter().zip(row_sum).zip(row_cnt) {
            for at in (0..NC).step_by(4) {
                let v = _mm256_min_pd(abs(load(row, at)), one);
                let hit = _mm256_cmp_pd::<_CMP_GE_OQ>(v, d);
                let (w, h) = (_mm256_and_pd(hit, v), _mm256_and_pd(hit, one));
                add_to(rs, at, w);
                add_to(rc, at, h);
                add_to(col_sum, at, w);
                add_to(col_cnt, at, h);
            }
        }
    }

    tile_from_parts!(#[target_feature(enable = "avx2,fma")]);
    drivers!(mr = 2, screen_rows = 4; #[target_feature(enable = "avx2,fma")]);
}

/// The kernels with AVX-512 intrinsics: eight `f64` lanes per register, so a row of `NC =
/// 16` columns is two registers and a micro-tile of 8 × 16 pairs sixteen, enough
/// independent chains to keep both FMA units busy; thresholds leave their comparisons in
/// mask registers and add with masked additions. The `f32` screen takes a whole strip of
/// 16 × 16 pairs, one register per record.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::*;
    use std::arch::x86_64::{
        __m512d, _CMP_GE_OQ, _CMP_NEQ_UQ, _mm512_abs_pd, _mm512_abs_ps, _mm512_cmp_pd_mask,
        _mm512_cmp_ps_mask, _mm512_fmadd_pd, _mm512_fmadd_ps, _mm512_loadu_pd, _mm512_loadu_ps,
        _mm512_mask_add_pd, _mm512_maskz_mov_pd, _mm512_max_ps, _mm512_min_pd, _mm512_set1_pd,
        _mm512_set1_ps, _mm512_setzero_pd, _mm512_setzero_ps, _mm512_storeu_pd,
    };

    /// Micro-tiles are screened in `f32` first.
    const SCREEN: bool = true;

    /// Two registers: one row of a micro-tile.
    type Row = [__m512d; 2];

    /// As `avx2::screen`, sixteen lanes per register.
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[inline]
    fn screen(a: &[f32], b: &[f32], depth: usize, bound: f32) -> bool {
        let mut c = [_mm512_setzero_ps(); SCREEN_ROWS];
        if depth > 0 {
            // One bounds check for the whole loop, as in `avx2::screen`.
            let a = &a[..(depth - 1) * NC + SCREEN_ROWS];
            let b = &b[..depth * NC];
            for t in 0..depth {
                // SAFETY: for t < depth, a[t·NC .. t·NC + SCREEN_ROWS] and
                // b[t·NC .. t·NC + 16] lie within the slices above; the load is unaligned.
                let (row_a, bv) = unsafe {
                    let row_a = a.as_ptr().add(t * NC);
                    (row_a, _mm512_loadu_ps(b.as_ptr().add(t * NC)))
                };
                for (i, ci) in c.iter_mut().enumerate() {
                    // SAFETY: i < SCREEN_ROWS, as above.
                    let ai = _mm512_set1_ps(unsafe { *row_a.add(i) });
                    *ci = _mm512_fmadd_ps(ai, bv, *ci);
                }
            }
        }
        let mut peak = _mm512_setzero_ps();
        for v in c {
            peak = _mm512_max_ps(peak, _mm512_abs_ps(v));
        }
        _mm512_cmp_ps_mask::<_CMP_GE_OQ>(peak, _mm512_set1_ps(bound)) != 0
    }

    /// Lanes `8·half .. 8·half + 8` of `s`.
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[inline]
    fn load(s: &[f64; NC], half: usize) -> __m512d {
        let lanes = &s[8 * half..8 * half + 8];
        // SAFETY: `lanes` holds 8 values; the load is unaligned.
        unsafe { _mm512_loadu_pd(lanes.as_ptr()) }
    }

    /// Stores `v` into lanes `8·half .. 8·half + 8` of `s`.
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[inline]
    fn store(s: &mut [f64; NC], half: usize, v: __m512d) {
        let lanes = &mut s[8 * half..8 * half + 8];
        // SAFETY: `lanes` holds 8 values; the store is unaligned.
        unsafe { _mm512_storeu_pd(lanes.as_mut_ptr(), v) }
    }

    /// `portable::micro` in registers: the fused multiply-add `_mm512_fmadd_pd` rounds once
    /// per lane, like `f64::mul_add`.
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[inline]
    fn micro_registers(a: &[f64], lda: usize, b: &[f64], ldb: usize, depth: usize) -> [Row; MR] {
        let mut c = [[_mm512_setzero_pd(); 2]; MR];
        if depth > 0 {
            // One bounds check for the whole loop, as in `avx2::micro`.
            let a = &a[..(depth - 1) * lda + MR];
            let b = &b[..(depth - 1) * ldb + NC];
            for t in 0..depth {
                // SAFETY: for t < depth, a[t·lda .. t·lda + MR] and b[t·ldb .. t·ldb + 16]
                // lie within the slices above; the loads are unaligned.
                let (row_a, b0, b1) = unsafe {
                    let row_b = b.as_ptr().add(t * ldb);
                    (
                        a.as_ptr().add(t * lda),
                        _mm512_loadu_pd(row_b),
                        _mm512_loadu_pd(row_b.add(8)),
                    )
                };
                for (i, ci) in c.iter_mut().enumerate() {
                    // SAFETY: i < MR, as above.
                    let ai = _mm512_set1_pd(unsafe { *row_a.add(i) });
                    ci[0] = _mm512_fmadd_pd(ai, b0, ci[0]);
                    ci[1] = _mm512_fmadd_pd(ai, b1, ci[1]);
                }
            }
        }
        c
    }

    /// As `portable::micro`.
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[inline]
    fn micro(a: &[f64], lda: usize, b: &[f64], ldb: usize, depth: usize) -> Acc {
        let mut acc = [[0.0; NC]; MR];
        for (row, c) in acc.iter_mut().zip(micro_registers(a, lda, b, ldb, depth)) {
            store(row, 0, c[0]);
            store(row, 1, c[1]);
        }
        acc
    }

    /// As the `tile` of `portable` (the same additions in the same order), with the
    /// micro-tile kept in registers: `[|θ| ≥ δ]` is a mask, and masked additions leave the
    /// totals of the other lanes as they are (adding `w = 0` would too: totals are ≥ +0).
    /// Every row is thresholded (no test for a tile without pairs first); whether a pair
    /// counted is read off the column counts.
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[inline]
    fn tile(
        a: &[f64],
        b: &[f64],
        depth: usize,
        delta: f64,
        self_lane: Option<usize>,
        (row_sum, row_cnt): RowTotals<'_>,
        (col_sum, col_cnt): ColumnTotals<'_>,
    ) -> bool {
        let mut c = micro_registers(a, NC, b, NC, depth);
        if let Some(lane) = self_lane {
            for (i, ci) in c.iter_mut().enumerate() {
                let own = 1_u32 << (lane + i);
                for (h, v) in ci.iter_mut().enumerate() {
                    let keep = !((own >> (8 * h)) as u8);
                    *v = _mm512_maskz_mov_pd(keep, *v);
                }
            }
        }
        let (one, d) = (_mm512_set1_pd(1.0), _mm512_set1_pd(delta));
        let mut cs = [load(col_sum, 0), load(col_sum, 1)];
        let mut cc = [load(col_cnt, 0), load(col_cnt, 1)];
        let before = cc;
        for ((rs, rc), ci) in row_sum.iter_mut().zip(row_cnt).zip(&c) {
            for h in 0..2 {
                let w = _mm512_min_pd(_mm512_abs_pd(ci[h]), one);
                let hit = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(w, d);
                let (sum, count) = (load(rs, h), load(rc, h));
                store(rs, h, _mm512_mask_add_pd(sum, hit, sum, w));
                store(rc, h, _mm512_mask_add_pd(count, hit, count, one));
                cs[h] = _mm512_mask_add_pd(cs[h], hit, cs[h], w);
                cc[h] = _mm512_mask_add_pd(cc[h], hit, cc[h], one);
            }
        }
        for h in 0..2 {
            store(col_sum, h, cs[h]);
            store(col_cnt, h, cc[h]);
        }
        (_mm512_cmp_pd_mask::<_CMP_NEQ_UQ>(cc[0], before[0])
            | _mm512_cmp_pd_mask::<_CMP_NEQ_UQ>(cc[1], before[1]))
            != 0
    }

    drivers!(mr = 8, screen_rows = NC; #[target_feature(enable = "avx512f,avx2,fma")]);
}

/// `gram[i·dp + j] = Σ_t z[t·dp + i]·z[t·dp + j]` for `i ≤ j`, over `rows` rows of the
/// `dp`-wide row-major block `z` (`dp` a multiple of [`NC`]).
fn gram_upper(isa: Isa, z: &[f64], rows: usize, dp: usize, gram: &mut [f64]) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an Avx512 value is only made after avx512f, avx2 and fma were detected.
        Isa::Avx512 => unsafe { avx512::gram(z, rows, dp, gram) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an Avx2 value is only made after avx2 and fma were detected.
        Isa::Avx2 => unsafe { avx2::gram(z, rows, dp, gram) },
        Isa::Portable => portable::gram(z, rows, dp, gram),
    }
}

/// The tiles of block row `bi` of the record correlations.
fn block_row(isa: Isa, tiles: &Tiles<'_>, bi: usize, delta: f64, out: &Totals<'_>) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an Avx512 value is only made after avx512f, avx2 and fma were detected.
        Isa::Avx512 => unsafe { avx512::block_row(tiles, bi, delta, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an Avx2 value is only made after avx2 and fma were detected.
        Isa::Avx2 => unsafe { avx2::block_row(tiles, bi, delta, out) },
        Isa::Portable => portable::block_row(tiles, bi, delta, out),
    }
}

// ---------------------------------------------------------------------------------------------
// Feature–feature Pearson matrix (eq. 6), Algorithm 1 and the attribute filter

/// Count, mean and centred cross-product matrix (upper triangle) of a block of rows, in the
/// scaled units of [`pow2_inv_scale`].
struct CoMoments {
    count: usize,
    mean: Vec<f64>,
    /// `d × d` row-major; only `i ≤ j` is kept.
    cross: Vec<f64>,
}

impl CoMoments {
    fn of_rows(x: &RowMatrix<'_>, rows: Range<usize>, scale: &[f64], isa: Isa) -> Self {
        let d = x.n_cols;
        let dp = d.next_multiple_of(NC);
        let count = rows.len();
        let mut mean = vec![0.0; d];
        for r in rows.clone() {
            for ((m, &v), &s) in mean.iter_mut().zip(x.row(r)).zip(scale) {
                *m += v * s;
            }
        }
        let inv = 1.0 / count as f64;
        mean.iter_mut().for_each(|m| *m *= inv);
        // Centred block, padded to `dp` columns of zeros for the kernel.
        let mut z = vec![0.0; count * dp];
        for (zr, r) in z.chunks_exact_mut(dp).zip(rows) {
            for (((zv, &v), &s), &m) in zr.iter_mut().zip(x.row(r)).zip(scale).zip(&mean) {
                *zv = v * s - m;
            }
        }
        let mut gram = vec![0.0; dp * dp];
        gram_upper(isa, &z, count, dp, &mut gram);
        let mut cross = vec![0.0; d * d];
        for i in 0..d {
            cross[i * d + i..(i + 1) * d].copy_from_slice(&gram[i * dp + i..i * dp + d]);
        }
        CoMoments { count, mean, cross }
    }

    /// Chan–Golub–LeVeque merge: `C = C_a + C_b + δδᵀ·n_a·n_b/n` with `δ = x̄_b − x̄_a`.
    fn merge(mut self, other: CoMoments) -> CoMoments {
        let d = self.mean.len();
        let n = self.count + other.count;
        let (na, nb) = (self.count as f64, other.count as f64);
        let weight = na * nb / n as f64;
        let delta: Vec<f64> = other
            .mean
            .iter()
            .zip(&self.mean)
            .map(|(b, a)| b - a)
            .collect();
        for (i, &di) in delta.iter().enumerate() {
            let wi = di * weight;
            let cells = i * d + i..(i + 1) * d;
            for ((c, &o), &dj) in self.cross[cells.clone()]
                .iter_mut()
                .zip(&other.cross[cells])
                .zip(&delta[i..])
            {
                *c += o + wi * dj;
            }
        }
        let share = nb / n as f64;
        for (m, dl) in self.mean.iter_mut().zip(&delta) {
            *m += dl * share;
        }
        self.count = n;
        self
    }
}

/// The Pearson matrix θ of the features of a table, with the flags of the zero-variance
/// (constant) features.
///
/// θ_ij = Σ_r (x_ri − x̄_i)(x_rj − x̄_j) / √(Σ_r (x_ri − x̄_i)² · Σ_r (x_rj − x̄_j)²)
/// (eq. 6 of Wang, Zhang & Yan), clamped to [−1, 1]. A feature whose values are all equal
/// has no defined correlation; here it has θ = 0 with every other feature (it carries no
/// information about them, and "0 = no relationship" is how Corollary 1 reads θ) and, like
/// every feature, θ_ii = 1 on the diagonal, so the matrix is never NaN. Constancy is decided
/// exactly (min = max), not from a rounded variance. Two identical non-constant features get
/// exactly θ = 1.
#[derive(Clone, Debug, PartialEq)]
pub struct FeatureCorrelation {
    n_cols: usize,
    matrix: Vec<f64>,
    zero_variance: Vec<bool>,
}

impl FeatureCorrelation {
    /// Computes θ in one pass over the rows after a pass for the column ranges.
    ///
    /// Time O(n·d²/2) in a vectorised kernel; memory O(d²) for the result plus one block
    /// summary (O(d² + [`CHUNK_ROWS`]·d)) per block of a merge group.
    ///
    /// # Errors
    /// [`Error::OutputTooLarge`] when the `d × d` matrix cannot be allocated.
    pub fn new(x: &RowMatrix<'_>) -> Result<Self> {
        let d = x.n_cols;
        let mut matrix: Vec<f64> = alloc_output(d * d, "the Pearson matrix")?;
        let (scale, zero_variance) = column_scales(x);
        let isa = isa();
        let moments = reduce_row_blocks(
            x.n_rows,
            CHUNK_ROWS,
            d * d + d,
            |rows| CoMoments::of_rows(x, rows, &scale, isa),
            CoMoments::merge,
        );
        check_interrupt()?;
        let cross = moments.map(|m| m.cross).unwrap_or_default();
        let sd: Vec<f64> = (0..d).map(|i| cross[i * d + i].sqrt()).collect();
        let varies = |i: usize| !zero_variance[i] && sd[i] > 0.0;
        for i in 0..d {
            matrix[i * d + i] = 1.0;
            if !varies(i) {
                continue;
            }
            for j in i + 1..d {
                if !varies(j) {
                    continue;
                }
                // One square root of the product (exact for equal variances, so duplicated
                // columns give exactly 1); the product of the roots if it under/overflows.
                let product = cross[i * d + i] * cross[j * d + j];
                let denom = if product > 0.0 && product.is_finite() {
                    product.sqrt()
                } else {
                    sd[i] * sd[j]
                };
                let r = (cross[i * d + j] / denom).clamp(-1.0, 1.0);
                matrix[i * d + j] = r;
                matrix[j * d + i] = r;
            }
        }
        Ok(FeatureCorrelation {
            n_cols: d,
            matrix,
            zero_variance,
        })
    }

    /// Number of features d.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// θ as a `d × d` row-major matrix.
    pub fn matrix(&self) -> &[f64] {
        &self.matrix
    }

    /// θ, consuming `self`.
    pub fn into_matrix(self) -> Vec<f64> {
        self.matrix
    }

    /// Whether each feature is constant (zero variance).
    pub fn zero_variance(&self) -> &[bool] {
        &self.zero_variance
    }

    /// The attribute filter of DPFSDR §4.1 as PAPERS.md fixes it: drop the zero-variance
    /// features; then for every pair i < j with θ_ij ≥ δ (signed θ, as in eq. 7 and
    /// Algorithm 1), drop j, even if i was itself dropped. Returns the kept feature indices
    /// in increasing order.
    ///
    /// This reproduces the paper's Table 1: WDBC 30 → 23 at δ = 0.95, Semeion 256 → 196 at
    /// 0.7, Dermatology 34 → 29 at 0.9 (rows with `?` removed), Ionosphere 34 → 33 at 0.95
    /// (no θ lies within 5·10⁻⁴ of its δ, so rounding cannot change these counts). Letting
    /// only kept features drop others would give 24, 218, 30 and 33 instead. The four data
    /// sets have no θ ≤ −δ, so they cannot tell θ ≥ δ from |θ| ≥ δ; the signed comparison is
    /// the one eq. 7 and Algorithm 1 write.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `delta` is not in (0, 1].
    pub fn filter(&self, delta: f64) -> Result<Vec<usize>> {
        check_threshold("delta", delta)?;
        let d = self.n_cols;
        let mut dropped = self.zero_variance.clone();
        for (i, row) in self.matrix.chunks_exact(d).enumerate() {
            for (drop, &theta) in dropped[i + 1..].iter_mut().zip(&row[i + 1..]) {
                *drop |= theta >= delta;
            }
        }
        Ok((0..d).filter(|&j| !dropped[j]).collect())
    }

    /// The correlated-degree adjacency matrix `M` of Definition 6 / Algorithm 1 (eq. 7):
    /// `M_ij = θ_ij` when `θ_ij < δ` and 0 when `θ_ij ≥ δ` (signed θ, as in the paper), so
    /// the diagonal (θ_ii = 1 ≥ δ) is 0 and pairs with a constant feature are 0. `d × d`
    /// row-major, symmetric.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `delta` is not in (0, 1]; [`Error::OutputTooLarge`]
    /// when the matrix cannot be allocated.
    pub fn degree_matrix(&self, delta: f64) -> Result<Vec<f64>> {
        check_threshold("delta", delta)?;
        let mut out: Vec<f64> = alloc_output(self.matrix.len(), "the correlated-degree matrix")?;
        for (m, &t) in out.iter_mut().zip(&self.matrix) {
            *m = if t < delta { t } else { 0.0 };
        }
        Ok(out)
    }
}

/// The `d × d` feature–feature Pearson matrix (row-major); see [`FeatureCorrelation`].
///
/// # Errors
/// [`Error::OutputTooLarge`] when the matrix cannot be allocated.
pub fn pearson_matrix(x: &RowMatrix<'_>) -> Result<Vec<f64>> {
    Ok(FeatureCorrelation::new(x)?.into_matrix())
}

/// The indices of the features kept by the DPFSDR attribute filter at threshold `delta`; see
/// [`FeatureCorrelation::filter`].
///
/// # Errors
/// [`Error::InvalidParameter`] when `delta` is not in (0, 1]; [`Error::OutputTooLarge`] when
/// the Pearson matrix cannot be allocated.
pub fn filter_correlated_features(x: &RowMatrix<'_>, delta: f64) -> Result<Vec<usize>> {
    check_threshold("delta", delta)?;
    FeatureCorrelation::new(x)?.filter(delta)
}

/// The correlated-degree adjacency matrix `M` of Algorithm 1 (eq. 7) for the features of
/// `x`; see [`FeatureCorrelation::degree_matrix`].
///
/// # Errors
/// [`Error::InvalidParameter`] when `delta` is not in (0, 1]; [`Error::OutputTooLarge`] when
/// a `d × d` matrix cannot be allocated.
pub fn correlated_degree_matrix(x: &RowMatrix<'_>, delta: f64) -> Result<Vec<f64>> {
    check_threshold("delta", delta)?;
    FeatureCorrelation::new(x)?.degree_matrix(delta)
}

// ---------------------------------------------------------------------------------------------
// F-score (eq. 8) and feature importance (eq. 9)

/// Per class and feature: count, mean, centred sum of squares, minimum and maximum of a block
/// of rows, in scaled units. `q × d` row-major (class-major).
struct ClassMoments {
    d: usize,
    count: Vec<usize>,
    mean: Vec<f64>,
    m2: Vec<f64>,
    min: Vec<f64>,
    max: Vec<f64>,
}

impl ClassMoments {
    fn of_rows(
        x: &RowMatrix<'_>,
        labels: &[u32],
        q: usize,
        rows: Range<usize>,
        scale: &[f64],
    ) -> Self {
        let d = x.n_cols;
        let mut count = vec![0usize; q];
        let mut sum = vec![0.0; q * d];
        let mut min = vec![f64::INFINITY; q * d];
        let mut max = vec![f64::NEG_INFINITY; q * d];
        for r in rows.clone() {
            let c = labels[r] as usize;
            count[c] += 1;
            let cells = c * d..(c + 1) * d;
            for ((((s, lo), hi), &v), &f) in sum[cells.clone()]
                .iter_mut()
                .zip(&mut min[cells.clone()])
                .zip(&mut max[cells])
                .zip(x.row(r))
                .zip(scale)
            {
                let v = v * f;
                *s += v;
                *lo = lo.min(v);
                *hi = hi.max(v);
            }
        }
        let mut mean = sum;
        for (c, &n_c) in count.iter().enumerate() {
            if n_c > 0 {
                let inv = 1.0 / n_c as f64;
                mean[c * d..(c + 1) * d].iter_mut().for_each(|m| *m *= inv);
            }
        }
        let mut m2 = vec![0.0; q * d];
        for r in rows {
            let c = labels[r] as usize;
            let cells = c * d..(c + 1) * d;
            for (((acc, &m), &v), &f) in m2[cells.clone()]
                .iter_mut()
                .zip(&mean[cells])
                .zip(x.row(r))
                .zip(scale)
            {
                let e = v * f - m;
                *acc += e * e;
            }
        }
        ClassMoments {
            d,
            count,
            mean,
            m2,
            min,
            max,
        }
    }

    /// Per-class Chan–Golub–LeVeque merge.
    fn merge(mut self, other: ClassMoments) -> ClassMoments {
        let d = self.d;
        for (c, &nb) in other.count.iter().enumerate() {
            let na = self.count[c];
            if nb == 0 {
                continue;
            }
            let cells = c * d..(c + 1) * d;
            if na == 0 {
                self.mean[cells.clone()].copy_from_slice(&other.mean[cells.clone()]);
                self.m2[cells.clone()].copy_from_slice(&other.m2[cells.clone()]);
            } else {
                let n = (na + nb) as f64;
                let (fa, fb) = (na as f64, nb as f64);
                for k in cells.clone() {
                    let delta = other.mean[k] - self.mean[k];
                    self.m2[k] += other.m2[k] + delta * delta * (fa * fb / n);
                    self.mean[k] += delta * (fb / n);
                }
            }
            for k in cells {
                self.min[k] = self.min[k].min(other.min[k]);
                self.max[k] = self.max[k].max(other.max[k]);
            }
            self.count[c] = na + nb;
        }
        self
    }
}

/// The F-score of every feature for labels `0..n_labels` (eq. 8 of Wang, Zhang & Yan, the
/// multi-class F-score of Xie & Wang 2011):
///
/// ```text
///         Σ_{j=1..l} (x̄_i^(j) − x̄_i)²
/// F_i = ─────────────────────────────────────────────────
///        Σ_{j=1..l} 1/(n_j − 1) · Σ_{k=1..n_j} (x_{k,i}^(j) − x̄_i^(j))²
/// ```
///
/// where the sums run over the l classes that occur (`n_j ≥ 1`; declared labels without
/// records are skipped), x̄_i is the mean of feature i over all n records and x̄_i^(j) its
/// mean in class j. The numerator is unweighted by class size, as in the paper.
///
/// Guards (no NaN, no division by zero):
/// - a class with one record has no sample variance (0/0); it adds 0 to the denominator;
/// - numerator 0 (a constant feature, a single class, n = 1, equal class means) → F = 0;
/// - denominator 0 with numerator > 0 (every class constant on the feature, yet the class
///   means differ: the feature separates the classes perfectly; e.g. n = 2 with two classes)
///   → F = +∞, the limit of the ratio. [`feature_importance`] turns these into a finite
///   importance.
///
/// Constant classes are detected exactly (min = max), so rounding cannot turn a perfect
/// separator into a large finite score.
///
/// # Errors
/// [`Error::InvalidParameter`] when `n_labels` is 0; [`Error::InvalidData`] when
/// `labels.len() != n_rows` or a label is ≥ `n_labels`.
pub fn f_scores(x: &RowMatrix<'_>, labels: &[u32], n_labels: u32) -> Result<Vec<f64>> {
    if n_labels == 0 {
        return Err(Error::parameter("n_labels", 0, "must be >= 1"));
    }
    if labels.len() != x.n_rows {
        return Err(Error::InvalidData(format!(
            "labels has {} entries but x has {} rows",
            labels.len(),
            x.n_rows
        )));
    }
    check_codes(labels, n_labels, "labels")?;
    let d = x.n_cols;
    let q = n_labels as usize;
    let (scale, constant) = column_scales(x);
    let moments = reduce_row_blocks(
        x.n_rows,
        CHUNK_ROWS,
        4 * q * d,
        |rows| ClassMoments::of_rows(x, labels, q, rows, &scale),
        ClassMoments::merge,
    );
    check_interrupt()?;
    let Some(m) = moments else {
        return Ok(vec![0.0; d]);
    };
    let n = x.n_rows as f64;
    let mut scores = Vec::with_capacity(d);
    for (i, &constant) in constant.iter().enumerate() {
        if constant {
            scores.push(0.0);
            continue;
        }
        let class_mean = |c: usize| {
            let k = c * d + i;
            // A constant class has exactly its value as mean.
            if m.min[k] == m.max[k] {
                m.min[k]
            } else {
                m.mean[k]
            }
        };
        let present = || (0..q).filter(|&c| m.count[c] > 0);
        let overall = present()
            .map(|c| m.count[c] as f64 * class_mean(c))
            .sum::<f64>()
            / n;
        let between: f64 = present().map(|c| (class_mean(c) - overall).powi(2)).sum();
        let within: f64 = present()
            .filter(|&c| m.count[c] > 1 && m.min[c * d + i] != m.max[c * d + i])
            .map(|c| m.m2[c * d + i] / (m.count[c] - 1) as f64)
            .sum();
        scores.push(if between == 0.0 {
            0.0
        } else if within == 0.0 {
            f64::INFINITY
        } else {
            between / within
        });
    }
    Ok(scores)
}

/// Feature importance `fim_i = F_i / Σ_j F_j` (eq. 9), always a probability vector:
/// - if some scores are +∞ (perfect separators), they share the importance equally and the
///   others get 0 (the limit of eq. 9 as their within-class variances shrink together);
/// - if every score is 0 (no feature separates the classes, e.g. a single class), every
///   feature gets 1/d;
/// - otherwise eq. 9, computed after dividing by the largest score so the sum cannot
///   overflow.
///
/// # Errors
/// [`Error::InvalidParameter`] when `scores` is empty; [`Error::InvalidData`] when a score is
/// NaN or negative.
pub fn feature_importance(scores: &[f64]) -> Result<Vec<f64>> {
    if scores.is_empty() {
        return Err(Error::parameter("scores", "[]", "must not be empty"));
    }
    if let Some(pos) = scores.iter().position(|s| s.is_nan() || *s < 0.0) {
        return Err(Error::InvalidData(format!(
            "scores has {} at index {pos}; F-scores must be >= 0 (+inf allowed)",
            scores[pos]
        )));
    }
    let infinite = scores.iter().filter(|s| s.is_infinite()).count();
    if infinite > 0 {
        let share = 1.0 / infinite as f64;
        return Ok(scores
            .iter()
            .map(|s| if s.is_infinite() { share } else { 0.0 })
            .collect());
    }
    let top = scores.iter().copied().fold(0.0, f64::max);
    if top == 0.0 {
        return Ok(vec![1.0 / scores.len() as f64; scores.len()]);
    }
    let total: f64 = scores.iter().map(|s| s / top).sum();
    Ok(scores.iter().map(|s| s / top / total).collect())
}

// ---------------------------------------------------------------------------------------------
// Record–record correlation and correlated sensitivity (eq. 4, §5.4)

/// The records of a table restricted to a feature subset, each centred and scaled to unit
/// length, so that the Pearson correlation of records r and s is the inner product of their
/// vectors. Build it once per subset and ask for [`degrees`](Self::degrees) at any threshold.
///
/// A record whose values on the subset are all equal (always the case with one feature) has
/// no defined correlation: it is stored as the zero vector, so its correlation with every
/// other record is 0 (never counted, since thresholds are > 0), and θ_rr = 1 still counts.
///
/// Records are stored in blocks of [`BLOCK`], each in strips of 16 records, feature-major
/// within a strip (feature t of record i of a block at `(i / 16)·16k + 16t + i % 16`): the
/// packed layout of the tile kernel, which then reads both operands contiguously. The last
/// block is padded with zero vectors. A rounded `f32` copy in the same layout feeds the
/// screen of [`degrees`](Self::degrees). Memory: `n_blocks·BLOCK·k` values of each
/// (≈ 12·n·k bytes).
#[derive(Clone, Debug)]
pub struct RecordCorrelation {
    n_rows: usize,
    n_features: usize,
    n_blocks: usize,
    constant_rows: usize,
    panels: Vec<f64>,
    panels32: Vec<f32>,
}

/// Correlated degrees of every record; see [`RecordCorrelation::degrees`].
#[derive(Clone, Debug, PartialEq)]
pub struct RecordDegrees {
    /// `Σ_{s: |θ_rs| ≥ δ} |θ_rs|` per record r, with θ_rr = 1 included (so every degree ≥ 1).
    pub degree: Vec<f64>,
    /// `|{s : |θ_rs| ≥ δ}|` per record r, r itself included (the number of records
    /// correlated with r, §5.2, Fig. 2).
    pub count: Vec<u64>,
}

impl RecordDegrees {
    /// The correlated-sensitivity factor `max_r degree_r` (≥ 1).
    pub fn max_degree(&self) -> f64 {
        self.degree.iter().copied().fold(1.0, f64::max)
    }
}

impl RecordCorrelation {
    /// Normalises every record on `features` (in parallel over blocks, each record once).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `features` is empty; [`Error::InvalidData`] when a
    /// feature index is ≥ `n_cols` or repeated; [`Error::OutputTooLarge`] when the
    /// normalised records cannot be allocated.
    pub fn new(x: &RowMatrix<'_>, features: &[usize]) -> Result<Self> {
        if features.is_empty() {
            return Err(Error::parameter("features", "[]", "must not be empty"));
        }
        let mut seen = vec![false; x.n_cols];
        for &f in features {
            if f >= x.n_cols {
                return Err(Error::InvalidData(format!(
                    "features has index {f}, which is >= n_cols = {}",
                    x.n_cols
                )));
            }
            if std::mem::replace(&mut seen[f], true) {
                return Err(Error::InvalidData(format!(
                    "features has index {f} twice; a feature subset has distinct indices"
                )));
            }
        }
        let k = features.len();
        let n_blocks = x.n_rows.div_ceil(BLOCK);
        let panel_len = k * BLOCK;
        let len = n_blocks
            .checked_mul(panel_len)
            .ok_or_else(|| Error::OutputTooLarge("the normalised records".into()))?;
        let mut panels: Vec<f64> = alloc_output(len, "the normalised records")?;
        let mut panels32: Vec<f32> = alloc_output(len, "the normalised records (f32)")?;
        let constant_rows = panels
            .par_chunks_mut(panel_len)
            .zip(panels32.par_chunks_mut(panel_len))
            .enumerate()
            .map(|(b, (panel, panel32))| {
                let mut v = vec![0.0; k];
                let mut constant = 0;
                for i in 0..BLOCK.min(x.n_rows - b * BLOCK) {
                    let row = x.row(b * BLOCK + i);
                    for (vt, &f) in v.iter_mut().zip(features) {
                        *vt = row[f];
                    }
                    if normalise(&mut v) {
                        let at = i / NC * NC * k + i % NC;
                        for (t, &vt) in v.iter().enumerate() {
                            panel[at + t * NC] = vt;
                            panel32[at + t * NC] = vt as f32;
                        }
                    } else {
                        constant += 1;
                    }
                }
                constant
            })
            .sum();
        Ok(RecordCorrelation {
            n_rows: x.n_rows,
            n_features: k,
            n_blocks,
            constant_rows,
            panels,
            panels32,
        })
    }

    /// Number of records n.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of features in the subset k.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Number of records that are constant on the subset (stored as zero vectors).
    pub fn constant_rows(&self) -> usize {
        self.constant_rows
    }

    /// The correlated degree of every record at threshold `record_delta` (0.8 in §5.4):
    /// records r and s are correlated when |θ_rs| ≥ δ, θ being the Pearson correlation of
    /// their values on the feature subset; `degree_r = Σ_{s correlated with r} |θ_rs|` with
    /// θ_rr = 1 counted. The correlated sensitivity of eq. 4 is `max_r degree_r` times the
    /// sensitivity of the released query ([`RecordDegrees::max_degree`]).
    ///
    /// The n × n matrix is never formed: the records are visited in [`BLOCK`] × [`BLOCK`]
    /// tiles of the upper triangle (each pair once), each tile's inner products come from
    /// the FMA micro-kernel, and a tile adds its thresholded row and column sums to the
    /// records' totals. With AVX2 (AVX-512), each 4 × 16 (16 × 16) group of pairs is first
    /// screened in `f32` (twice the pairs per instruction): a group is skipped only if no
    /// `f32` value reaches δ minus a proven bound on the `f32` error, i.e. only if it holds
    /// no correlated pair, so the result is bit-for-bit that of the plain `f64` kernel (the
    /// screen is switched off while most groups hold correlated pairs). Totals are
    /// fixed-point integers (2^−f units, f = 63 − ⌈log2(n + 1)⌉, i.e. 2^−43 for n = 10^6),
    /// so their sum is exact and independent of the order in which threads finish tiles;
    /// each addend is a float partial sum of at most one tile row or column, or of one
    /// block's row, rounded once.
    /// Time O(n²·k/2); memory O(n) beyond `self` plus O(BLOCK·16) per thread.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `record_delta` is not in (0, 1].
    pub fn degrees(&self, record_delta: f64) -> Result<RecordDegrees> {
        check_threshold("record_delta", record_delta)?;
        let degrees = self.degrees_with(isa(), record_delta);
        check_interrupt()?;
        Ok(degrees)
    }

    /// The correlated-sensitivity factor `max_r degree_r` at `record_delta` (≥ 1).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `record_delta` is not in (0, 1].
    pub fn max_degree(&self, record_delta: f64) -> Result<f64> {
        Ok(self.degrees(record_delta)?.max_degree())
    }

    fn degrees_with(&self, isa: Isa, delta: f64) -> RecordDegrees {
        let n = self.n_rows;
        let frac_bits = 63 - (usize::BITS - n.leading_zeros());
        let one = f64::from_bits(u64::from(1023 + frac_bits) << 52);
        let sums: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
        let counts: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
        let out = Totals {
            sums: &sums,
            counts: &counts,
            one,
        };
        let tiles = Tiles {
            panels: &self.panels,
            panels32: &self.panels32,
            screen_bound: (delta - screen_margin(self.n_features)) as f32,
            k: self.n_features,
            n_rows: self.n_rows,
            n_blocks: self.n_blocks,
        };
        (0..self.n_blocks)
            .into_par_iter()
            .for_each(|bi| block_row(isa, &tiles, bi, delta, &out));
        // Every record is correlated with itself: θ_rr = 1.
        let degree = sums
            .into_iter()
            .map(|s| (s.into_inner() as f64) / one + 1.0)
            .collect();
        let count = counts.into_iter().map(|c| c.into_inner() + 1).collect();
        RecordDegrees { degree, count }
    }
}

/// Centres `v`, scales it to unit length and returns true; returns false (leaving `v`
/// unspecified) when its values are all equal.
fn normalise(v: &mut [f64]) -> bool {
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    if lo == hi {
        return false;
    }
    let s = pow2_inv_scale(lo.abs().max(hi.abs()));
    let mean = v.iter().map(|x| x * s).sum::<f64>() / v.len() as f64;
    v.iter_mut().for_each(|x| *x = *x * s - mean);
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm == 0.0 {
        return false;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    true
}

/// The records' fixed-point totals shared by all tiles.
struct Totals<'a> {
    sums: &'a [AtomicU64],
    counts: &'a [AtomicU64],
    /// 2^f: the fixed-point unit is 1/one.
    one: f64,
}

impl Totals<'_> {
    fn add(&self, r: usize, sum: f64, count: f64) {
        if count > 0.0 {
            // `sum ≤ n` and `one ≤ 2^63 / n`, so the rounded value fits; totals stay below
            // 2^63 + (number of addends).
            self.sums[r].fetch_add((sum * self.one).round() as u64, Ordering::Relaxed);
            self.counts[r].fetch_add(count as u64, Ordering::Relaxed);
        }
    }
}

/// The packed records seen by the tile kernel.
struct Tiles<'a> {
    panels: &'a [f64],
    panels32: &'a [f32],
    /// `δ` minus the largest error of an `f32` inner product (see [`screen_margin`]).
    screen_bound: f32,
    k: usize,
    n_rows: usize,
    n_blocks: usize,
}

impl Tiles<'_> {
    fn panel(&self, b: usize) -> &[f64] {
        let len = self.k * BLOCK;
        &self.panels[b * len..(b + 1) * len]
    }

    fn panel32(&self, b: usize) -> &[f32] {
        let len = self.k * BLOCK;
        &self.panels32[b * len..(b + 1) * len]
    }
}

/// A bound on `|θ32 − θ|` for the `f32` inner product θ32 of two unit vectors of length `k`
/// (rounded to `f32`, then summed by `k` fused multiply-adds): with u = 2^−24, rounding the
/// inputs costs at most (2u + u²)·Σ|z_r z_s| and the sum at most k·u/(1 − k·u)·Σ|z_r z_s|,
/// where Σ|z_r z_s| ≤ 1 (Cauchy–Schwarz); the `f64` value is off by far less. The margin is
/// twice (k + 4)·u, which also covers rounding `δ − margin` to `f32`. A micro-tile whose
/// `f32` values all stay below `δ − margin` has no pair with `|θ| ≥ δ`.
fn screen_margin(k: usize) -> f64 {
    (k as f64 + 4.0) * f64::from(f32::EPSILON)
}

/// The correlated degrees of the records of `x` on `features` at `record_delta`; see
/// [`RecordCorrelation::degrees`].
///
/// # Errors
/// As [`RecordCorrelation::new`] and [`RecordCorrelation::degrees`].
pub fn correlated_degrees(
    x: &RowMatrix<'_>,
    features: &[usize],
    record_delta: f64,
) -> Result<RecordDegrees> {
    check_threshold("record_delta", record_delta)?;
    RecordCorrelation::new(x, features)?.degrees(record_delta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::with_pool;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    fn view(data: &[f64], n: usize, d: usize) -> RowMatrix<'_> {
        RowMatrix::new(data, n, d).expect("valid matrix")
    }

    /// Records drawn around four latent directions (so that many records and features are
    /// strongly correlated, in both signs), with three noise levels, plus: a duplicated row
    /// (1 = 0), a negated row (2 = −3), a constant row (4) and a constant last column.
    fn correlated_table(n: usize, d: usize, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let bases: Vec<Vec<f64>> = (0..4)
            .map(|_| (0..d).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect())
            .collect();
        let mut x = Vec::with_capacity(n * d);
        for r in 0..n {
            let base = &bases[rng.random_range(0..4)];
            let a = rng.random::<f64>() * 4.0 - 2.0;
            let offset = rng.random::<f64>() * 10.0;
            let noise = [0.05, 0.3, 1.0][r % 3];
            for &b in base {
                x.push(a * b + offset + noise * (rng.random::<f64>() - 0.5));
            }
        }
        if n > 4 {
            x.copy_within(0..d, d);
            for j in 0..d {
                x[2 * d + j] = -x[3 * d + j];
                x[4 * d + j] = 7.25;
            }
        }
        if d > 2 {
            for r in 0..n {
                x[r * d + d - 1] = 7.25;
            }
        }
        x
    }

    fn is_constant(v: &[f64]) -> bool {
        v.iter().all(|&a| a == v[0])
    }

    /// Textbook two-pass Pearson of two vectors; 0 when either is constant.
    fn naive_corr(a: &[f64], b: &[f64]) -> f64 {
        if is_constant(a) || is_constant(b) {
            return 0.0;
        }
        let n = a.len() as f64;
        let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
        let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
        for (x, y) in a.iter().zip(b) {
            sab += (x - ma) * (y - mb);
            saa += (x - ma) * (x - ma);
            sbb += (y - mb) * (y - mb);
        }
        sab / (saa * sbb).sqrt()
    }

    fn column(x: &[f64], d: usize, j: usize) -> Vec<f64> {
        x.iter().skip(j).step_by(d).copied().collect()
    }

    fn naive_pearson(x: &[f64], d: usize) -> Vec<f64> {
        let cols: Vec<Vec<f64>> = (0..d).map(|j| column(x, d, j)).collect();
        let mut out = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                out[i * d + j] = if i == j {
                    1.0
                } else {
                    naive_corr(&cols[i], &cols[j])
                };
            }
        }
        out
    }

    /// The full n × n record correlation matrix on `features` and the degrees from it.
    fn naive_degrees(x: &[f64], d: usize, features: &[usize], delta: f64) -> RecordDegrees {
        let n = x.len() / d;
        let rows: Vec<Vec<f64>> = (0..n)
            .map(|r| features.iter().map(|&f| x[r * d + f]).collect())
            .collect();
        let mut degree = vec![0.0; n];
        let mut count = vec![0; n];
        for r in 0..n {
            for s in 0..n {
                let t: f64 = if r == s {
                    1.0
                } else {
                    naive_corr(&rows[r], &rows[s])
                };
                if t.abs() >= delta {
                    degree[r] += t.abs().min(1.0);
                    count[r] += 1;
                }
            }
        }
        RecordDegrees { degree, count }
    }

    fn naive_f(x: &[f64], d: usize, labels: &[u32], q: usize) -> Vec<f64> {
        let n = labels.len();
        (0..d)
            .map(|i| {
                let col = column(x, d, i);
                if is_constant(&col) {
                    return 0.0;
                }
                let mean = col.iter().sum::<f64>() / n as f64;
                let (mut between, mut within) = (0.0, 0.0);
                for c in 0..q {
                    let vals: Vec<f64> = (0..n)
                        .filter(|&r| labels[r] as usize == c)
                        .map(|r| col[r])
                        .collect();
                    if vals.is_empty() {
                        continue;
                    }
                    let m = vals.iter().sum::<f64>() / vals.len() as f64;
                    let m = if is_constant(&vals) { vals[0] } else { m };
                    between += (m - mean) * (m - mean);
                    if vals.len() > 1 && !is_constant(&vals) {
                        within += vals.iter().map(|v| (v - m) * (v - m)).sum::<f64>()
                            / (vals.len() - 1) as f64;
                    }
                }
                if between == 0.0 {
                    0.0
                } else if within == 0.0 {
                    f64::INFINITY
                } else {
                    between / within
                }
            })
            .collect()
    }

    fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
        assert_eq!(got.len(), want.len(), "{what}: length");
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            let ok = if w.is_infinite() {
                g == w
            } else {
                (g - w).abs() <= tol * w.abs().max(1.0)
            };
            assert!(ok, "{what}[{k}]: got {g}, want {w}");
        }
    }

    #[test]
    fn pearson_matches_naive_with_constant_and_duplicated_columns() {
        for (n, d, seed) in [(300, 9, 1), (2_500, 21, 2), (CHUNK_ROWS + 1, 3, 3)] {
            let mut x = correlated_table(n, d, seed);
            // Column 1 duplicates column 0; column 2 is its negation.
            for r in 0..n {
                x[r * d + 1] = x[r * d];
                x[r * d + 2] = -x[r * d];
            }
            let fc = FeatureCorrelation::new(&view(&x, n, d)).expect("pearson");
            assert_close(fc.matrix(), &naive_pearson(&x, d), 1e-12, "pearson");
            assert_eq!(fc.matrix()[1], 1.0, "duplicated columns are exactly 1");
            assert!(fc.matrix().iter().all(|v| v.is_finite() && v.abs() <= 1.0));
            let constant: Vec<bool> = (0..d).map(|j| d > 3 && j == d - 1).collect();
            assert_eq!(fc.zero_variance(), &constant[..]);
        }
    }

    #[test]
    fn pearson_of_one_or_two_rows_and_extreme_scales() {
        let one = [3.0, -1.0, 2.0];
        assert_eq!(
            pearson_matrix(&view(&one, 1, 3)).expect("n = 1"),
            vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        );
        let two = [1.0, 5.0, 2.0, 2.0, 4.0, 2.0];
        assert_close(
            &pearson_matrix(&view(&two, 2, 3)).expect("n = 2"),
            &[1.0, -1.0, 0.0, -1.0, 1.0, 0.0, 0.0, 0.0, 1.0],
            1e-15,
            "n = 2",
        );
        // Values whose squares overflow or underflow in f64; a constant 0.1 column, whose
        // mean is not exactly 0.1 when summed.
        let n = 50;
        let mut x = Vec::new();
        for r in 0..n {
            let t = (r as f64 * 0.37).sin();
            x.extend([t * 1e300, (t + 0.1 * (r % 3) as f64) * 1e-300, 0.1, t]);
        }
        let m = pearson_matrix(&view(&x, n, 4)).expect("extreme");
        assert!(m.iter().all(|v| v.is_finite()));
        assert_eq!(
            m[3], 1.0,
            "a column times 1e300 is perfectly correlated with it"
        );
        assert!((m[1] - m[7]).abs() < 1e-12);
        assert_eq!((m[2], m[6], m[11], m[10]), (0.0, 0.0, 0.0, 1.0));
    }

    #[test]
    fn filter_drops_later_feature_of_each_pair_even_if_the_earlier_was_dropped() {
        // θ_01 = 0.97, θ_12 = 0.96, θ_02 = 0.9, θ_03 = −0.99, feature 4 constant.
        let mut matrix = vec![0.0; 25];
        for (i, j, t) in [(0, 1, 0.97), (1, 2, 0.96), (0, 2, 0.9), (0, 3, -0.99)] {
            matrix[i * 5 + j] = t;
            matrix[j * 5 + i] = t;
        }
        for i in 0..5 {
            matrix[i * 5 + i] = 1.0;
        }
        let fc = FeatureCorrelation {
            n_cols: 5,
            matrix,
            zero_variance: vec![false, false, false, false, true],
        };
        assert_eq!(fc.filter(0.95).expect("filter"), vec![0, 3]);
        assert_eq!(fc.filter(0.965).expect("filter"), vec![0, 2, 3]);
        assert_eq!(fc.filter(1.0).expect("filter"), vec![0, 1, 2, 3]);
        let m = fc.degree_matrix(0.95).expect("eq. 7");
        assert_eq!(m[1], 0.0, "θ_01 ≥ δ → 0");
        assert_eq!(m[2], 0.9);
        assert_eq!(m[3], -0.99, "negative θ < δ is kept, signed");
        assert!((0..5).all(|i| m[i * 5 + i] == 0.0), "diagonal is 0");
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            let err = fc.filter(bad).unwrap_err().to_string();
            assert!(err.starts_with("delta must be in (0, 1]"), "{err}");
        }
    }

    /// Reads a UCI file of `shared/data` as rows of numbers; `None` if the data is absent.
    fn read_uci(
        path: &str,
        keep: impl Fn(&[&str]) -> Option<Vec<f64>>,
    ) -> Option<(Vec<f64>, usize)> {
        let root = std::env::var("PRIVTAB_SHARED_DATA").unwrap_or_else(|_| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data").to_string()
        });
        let text = std::fs::read_to_string(format!("{root}/{path}")).ok()?;
        let mut x = Vec::new();
        let mut n = 0;
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let fields: Vec<&str> = if line.contains(',') {
                line.split(',').map(str::trim).collect()
            } else {
                line.split_whitespace().collect()
            };
            if let Some(row) = keep(&fields) {
                x.extend(row);
                n += 1;
            }
        }
        Some((x, n))
    }

    fn numbers(fields: &[&str]) -> Option<Vec<f64>> {
        fields.iter().map(|f| f.parse().ok()).collect()
    }

    #[test]
    fn filter_reproduces_table_1_of_the_paper() {
        type Parse = fn(&[&str]) -> Option<Vec<f64>>;
        let cases: [(&str, usize, f64, usize, Parse); 4] = [
            ("wdbc/wdbc.data", 30, 0.95, 23, |f| numbers(&f[2..32])),
            ("semeion/semeion.data", 256, 0.7, 196, |f| {
                numbers(&f[..256])
            }),
            // Rows with '?' (age) do not parse and are removed: 358 rows.
            ("dermatology/dermatology.data", 34, 0.9, 29, |f| {
                numbers(&f[..34])
            }),
            ("ionosphere/ionosphere.data", 34, 0.95, 33, |f| {
                numbers(&f[..34])
            }),
        ];
        for (path, d, delta, kept, parse) in cases {
            let Some((x, n)) = read_uci(path, parse) else {
                eprintln!("skipping {path}: shared/data not found (set PRIVTAB_SHARED_DATA)");
                continue;
            };
            let fc = FeatureCorrelation::new(&view(&x, n, d)).expect("pearson");
            assert_close(fc.matrix(), &naive_pearson(&x, d), 1e-12, path);
            let signed = fc.filter(delta).expect("filter");
            let absolute = {
                let mut dropped = fc.zero_variance().to_vec();
                for (i, row) in fc.matrix().chunks_exact(d).enumerate() {
                    for (drop, t) in dropped[i + 1..].iter_mut().zip(&row[i + 1..]) {
                        *drop |= t.abs() >= delta;
                    }
                }
                dropped.iter().filter(|&&x| !x).count()
            };
            let greedy = {
                let mut dropped = fc.zero_variance().to_vec();
                for i in 0..d {
                    for j in i + 1..d {
                        if !dropped[i] && fc.matrix()[i * d + j] >= delta {
                            dropped[j] = true;
                        }
                    }
                }
                dropped.iter().filter(|&&x| !x).count()
            };
            let margin = fc
                .matrix()
                .iter()
                .map(|t| (t - delta).abs())
                .fold(f64::INFINITY, f64::min);
            eprintln!(
                "{path}: n = {n}, kept {} (θ ≥ δ), {absolute} (|θ| ≥ δ), {greedy} (only kept i \
                 drop j); closest |θ − δ| = {margin:.2e}",
                signed.len()
            );
            assert_eq!(signed.len(), kept, "{path}");
        }
    }

    #[test]
    fn f_scores_match_naive() {
        for (n, d, q, seed) in [(500, 6, 4, 5), (3_000, 11, 3, 6), (40, 3, 2, 7)] {
            let x = correlated_table(n, d, seed);
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            // Label q − 1 is declared but never used.
            let labels: Vec<u32> = (0..n)
                .map(|r| {
                    if r % 5 == 0 {
                        0
                    } else {
                        rng.random_range(0..(q as u32 - 1))
                    }
                })
                .collect();
            let got = f_scores(&view(&x, n, d), &labels, q as u32).expect("f");
            assert_close(&got, &naive_f(&x, d, &labels, q), 1e-10, "F");
            assert_eq!(got[d - 1], 0.0, "constant feature");
        }
    }

    #[test]
    fn f_score_edge_cases_give_no_nan() {
        // A single class: all zero.
        let x = [1.0, 2.0, 3.0, 5.0, 4.0, 4.0];
        assert_eq!(
            f_scores(&view(&x, 3, 2), &[0, 0, 0], 1).expect("f"),
            vec![0.0, 0.0]
        );
        // n = 1.
        assert_eq!(
            f_scores(&view(&x[..2], 1, 2), &[1], 2).expect("f"),
            vec![0.0, 0.0]
        );
        // n = 2 in one class, and in two classes (a perfect separation of each feature
        // that differs).
        let two = [1.0, 2.0, 3.0, 1.0, 4.0, 5.0];
        assert_eq!(
            f_scores(&view(&two, 2, 3), &[0, 0], 2).expect("f"),
            vec![0.0; 3]
        );
        assert_eq!(
            f_scores(&view(&two, 2, 3), &[0, 1], 2).expect("f"),
            vec![0.0, f64::INFINITY, f64::INFINITY]
        );
        // Each class constant at 0.1 / 0.3 (means not exact when summed): +∞; a class of
        // one record adds no within-class variance.
        let x = [0.1, 0.0, 0.1, 1.0, 0.1, 2.0, 0.3, 7.0, 0.3, 9.0, 0.5, 4.0];
        let labels = [0, 0, 0, 1, 1, 2];
        let f = f_scores(&view(&x, 6, 2), &labels, 3).expect("f");
        assert_eq!(f[0], f64::INFINITY);
        assert_close(&f, &naive_f(&x, 2, &labels, 3), 1e-12, "F");
        assert!(f[1].is_finite() && f[1] > 0.0);
    }

    #[test]
    fn feature_importance_is_a_probability_vector() {
        let fim = feature_importance(&[1.0, 3.0, 0.0]).expect("fim");
        assert_eq!(fim, vec![0.25, 0.75, 0.0]);
        let fim = feature_importance(&[1.0, f64::INFINITY, 5.0, f64::INFINITY]).expect("fim");
        assert_eq!(fim, vec![0.0, 0.5, 0.0, 0.5]);
        assert_eq!(feature_importance(&[0.0; 4]).expect("fim"), vec![0.25; 4]);
        let fim = feature_importance(&[f64::MAX, f64::MAX]).expect("fim");
        assert_eq!(fim, vec![0.5, 0.5]);
        assert!(feature_importance(&[]).is_err());
        let err = feature_importance(&[1.0, f64::NAN])
            .unwrap_err()
            .to_string();
        assert!(err.contains("NaN at index 1"), "{err}");
        assert!(feature_importance(&[-1.0]).is_err());
    }

    #[test]
    fn record_degrees_match_the_full_matrix() {
        // 600 rows: three blocks, the last partial, so diagonal and off-diagonal tiles and
        // padding are all exercised.
        let (n, d) = (600, 8);
        let x = correlated_table(n, d, 11);
        let m = view(&x, n, d);
        for features in [
            vec![0, 1, 2, 3, 4, 5, 6, 7],
            vec![6, 0, 3],
            vec![2, 5],
            vec![4],
        ] {
            let rc = RecordCorrelation::new(&m, &features).expect("records");
            for delta in [0.8, 0.5, 0.999] {
                let got = rc.degrees(delta).expect("degrees");
                let want = naive_degrees(&x, d, &features, delta);
                assert_eq!(got.count, want.count, "{features:?} at {delta}");
                assert_close(&got.degree, &want.degree, 1e-11, "degree");
                assert!(got.degree.iter().all(|&g| g >= 1.0));
            }
            if features.len() == 1 {
                assert_eq!(rc.constant_rows(), n);
                assert_eq!(rc.max_degree(0.5).expect("cs"), 1.0);
            }
        }
        // Rows 0 and 1 are equal, rows 2 and 3 opposite: each counts the other.
        let all: Vec<usize> = (0..d).collect();
        let deg = correlated_degrees(&m, &all, 0.99).expect("degrees");
        assert!(deg.count[0] >= 2 && deg.count[2] >= 2);
        assert_eq!(
            deg.count[4], 1,
            "the constant row is only correlated with itself"
        );
        assert_eq!(deg.degree[4], 1.0);
    }

    #[test]
    fn record_degrees_of_one_and_two_records() {
        let x = [1.0, 2.0, 3.0, 2.0, 4.0, 6.5];
        let one = correlated_degrees(&view(&x[..3], 1, 3), &[0, 1, 2], 0.8).expect("n = 1");
        assert_eq!((one.degree, one.count), (vec![1.0], vec![1]));
        let two = correlated_degrees(&view(&x, 2, 3), &[0, 1, 2], 0.8).expect("n = 2");
        let t = naive_corr(&x[..3], &x[3..]);
        assert_close(&two.degree, &[1.0 + t, 1.0 + t], 1e-15, "n = 2");
        assert_eq!(two.count, vec![2, 2]);
        assert_eq!(two.max_degree(), two.degree[0]);
    }

    #[test]
    fn results_do_not_depend_on_thread_count() {
        let (n, d) = (5_000, 12);
        let x = correlated_table(n, d, 21);
        let m = view(&x, n, d);
        let labels: Vec<u32> = (0..n as u32).map(|r| (r * 7 + r / 3) % 5).collect();
        let run = || {
            let rc = RecordCorrelation::new(&view(&x[..1_500 * d], 1_500, d), &[0, 2, 4, 5, 7, 9])
                .expect("records");
            (
                pearson_matrix(&m).expect("pearson"),
                f_scores(&m, &labels, 5).expect("f"),
                rc.degrees(0.8).expect("degrees"),
            )
        };
        let one = with_pool(1, run);
        for threads in [2, 3, 5] {
            assert_eq!(with_pool(threads, run), one, "{threads} threads");
        }
    }

    #[test]
    fn every_instruction_set_gives_the_same_bits() {
        let (n, d) = (700, 10);
        let x = correlated_table(n, d, 31);
        let m = view(&x, n, d);
        let rc = RecordCorrelation::new(&m, &[0, 1, 2, 3, 5, 8]).expect("records");
        let (scale, _) = column_scales(&m);
        let want = rc.degrees_with(Isa::Portable, 0.8);
        let want_cross = CoMoments::of_rows(&m, 0..n, &scale, Isa::Portable).cross;
        eprintln!("instruction sets compared: {:?}", isas());
        for &isa in isas() {
            assert_eq!(rc.degrees_with(isa, 0.8), want, "{isa:?}");
            let cross = CoMoments::of_rows(&m, 0..n, &scale, isa).cross;
            assert_eq!(cross, want_cross, "{isa:?}");
        }
    }

    #[test]
    fn f32_screen_never_changes_the_degrees() {
        // Weakly correlated records (so the screen skips most groups), with planted pairs
        // r, r + 1 at a range of correlations; thresholds placed exactly on some of them.
        let (n, d) = (1_300, 12);
        let mut rng = ChaCha20Rng::seed_from_u64(41);
        let mut x: Vec<f64> = (0..n * d).map(|_| rng.random::<f64>()).collect();
        for r in (0..n).step_by(40) {
            let mix = 0.05 + 0.02 * (r / 40) as f64;
            for j in 0..d {
                x[(r + 1) * d + j] = x[r * d + j] + mix * (x[(r + 1) * d + j] - 0.5);
            }
        }
        let m = view(&x, n, d);
        let features: Vec<usize> = (0..d).collect();
        let rc = RecordCorrelation::new(&m, &features).expect("records");
        let rows: Vec<&[f64]> = (0..n).map(|r| &x[r * d..(r + 1) * d]).collect();
        let mut deltas: Vec<f64> = (0..n)
            .step_by(160)
            .map(|r| naive_corr(rows[r], rows[r + 1]).abs())
            .collect();
        deltas.extend([0.8, 0.5, 0.3]);
        for delta in deltas {
            let plain = rc.degrees_with(Isa::Portable, delta);
            for &isa in isas() {
                assert_eq!(rc.degrees_with(isa, delta), plain, "{isa:?}, δ = {delta}");
            }
            if delta == 0.8 {
                let want = naive_degrees(&x, d, &features, delta);
                assert_eq!(plain.count, want.count);
                assert_close(&plain.degree, &want.degree, 1e-11, "degree");
            }
        }
    }

    #[test]
    fn the_first_non_finite_value_is_found_in_any_chunk() {
        for len in [1, FINITE_CHUNK + 5, FINITE_SERIAL + 3 * FINITE_CHUNK + 7] {
            let mut data = vec![0.5; len];
            assert_eq!(first_non_finite(&data), None);
            for (bad, at) in [
                (f64::NAN, len - 1),
                (f64::INFINITY, len / 2),
                (f64::NEG_INFINITY, 0),
            ] {
                data[at] = bad;
                assert_eq!(
                    first_non_finite(&data),
                    Some(at),
                    "{len} values, {bad} at {at}"
                );
            }
        }
        let chunk_edge = FINITE_SERIAL + FINITE_CHUNK;
        let mut data = vec![1.0; FINITE_SERIAL + 2 * FINITE_CHUNK];
        data[chunk_edge] = f64::NAN;
        data[chunk_edge - 1] = f64::INFINITY;
        assert_eq!(first_non_finite(&data), Some(chunk_edge - 1));
    }

    #[test]
    fn invalid_input_is_rejected_with_named_parameters() {
        let msg = |r: Result<RowMatrix<'_>>| r.unwrap_err().to_string();
        assert_eq!(
            msg(RowMatrix::new(&[1.0, f64::NAN], 1, 2)),
            "x has the non-finite value NaN at row 0, column 1; values must be finite"
        );
        assert!(
            msg(RowMatrix::new(&[1.0, 2.0, f64::INFINITY, 0.0], 2, 2)).contains("row 1, column 0")
        );
        assert!(
            msg(RowMatrix::new(&[1.0, 2.0, 3.0], 2, 2))
                .contains("expected n_rows * n_columns = 2 * 2")
        );
        assert_eq!(msg(RowMatrix::new(&[], 0, 2)), "n_rows must be >= 1, got 0");
        assert_eq!(msg(RowMatrix::new(&[], 2, 0)), "n_cols must be >= 1, got 0");

        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 7.0];
        let m = view(&x, 3, 2);
        let err = |e: Error| e.to_string();
        assert_eq!(
            err(filter_correlated_features(&m, 1.5).unwrap_err()),
            "delta must be in (0, 1], got 1.5"
        );
        assert!(correlated_degree_matrix(&m, 0.0).is_err());
        assert_eq!(
            err(correlated_degrees(&m, &[0, 1], f64::NAN).unwrap_err()),
            "record_delta must be in (0, 1], got NaN"
        );
        assert_eq!(
            err(f_scores(&m, &[0, 2, 1], 2).unwrap_err()),
            "labels has code 2 at row 1, which is >= its cardinality 2"
        );
        assert!(err(f_scores(&m, &[0, 1], 2).unwrap_err()).contains("labels has 2 entries"));
        assert_eq!(
            err(f_scores(&m, &[0, 0, 0], 0).unwrap_err()),
            "n_labels must be >= 1, got 0"
        );
        assert!(err(RecordCorrelation::new(&m, &[]).unwrap_err()).starts_with("features"));
        assert!(err(RecordCorrelation::new(&m, &[2]).unwrap_err()).contains("index 2"));
        assert!(err(RecordCorrelation::new(&m, &[1, 1]).unwrap_err()).contains("twice"));
    }

    /// Timings (run with `cargo test --release -p privtab-core correlation::tests::timing
    /// -- --ignored --nocapture`; `PRIVTAB_TIMING_ROWS=1000000,51` for other shapes; the
    /// record degrees use the first d − 1 features).
    #[test]
    #[ignore = "timing, run on purpose"]
    fn timing() {
        let shapes = std::env::var("PRIVTAB_TIMING_ROWS").unwrap_or("100000,30".into());
        let v: Vec<usize> = shapes.split(',').map(|s| s.parse().expect("n,d")).collect();
        let (n, d) = (v[0], v[1]);
        // Uniform values (few correlated records), or `PRIVTAB_TIMING_DATA=correlated`.
        let x: Vec<f64> = if std::env::var("PRIVTAB_TIMING_DATA").is_ok_and(|v| v == "correlated") {
            correlated_table(n, d, 1)
        } else {
            let mut rng = ChaCha20Rng::seed_from_u64(1);
            (0..n * d).map(|_| rng.random::<f64>()).collect()
        };
        let m = view(&x, n, d);
        let features: Vec<usize> = (0..d - 1).collect();
        let start = std::time::Instant::now();
        let rc = RecordCorrelation::new(&m, &features).expect("records");
        let t_norm = start.elapsed();
        let deg = rc.degrees(0.8).expect("degrees");
        let t_all = start.elapsed();
        let start = std::time::Instant::now();
        let _ = pearson_matrix(&m).expect("pearson");
        let t_pearson = start.elapsed();
        let labels: Vec<u32> = (0..n as u32).map(|r| r % 3).collect();
        let start = std::time::Instant::now();
        let _ = f_scores(&m, &labels, 3).expect("f");
        let t_f = start.elapsed();
        eprintln!(
            "{n} × {d} on {} threads ({:?}): normalise {t_norm:?}, degrees total {t_all:?} \
             (max degree {}), pearson {t_pearson:?}, f-scores {t_f:?}",
            rayon::current_num_threads(),
            isa(),
            deg.max_degree()
        );
    }
}
