//! Differentially private and individually differentially private release of numerical
//! attributes by individual-ranking microaggregation (paper 002: J. Soria-Comas, D. Sánchez,
//! J. Domingo-Ferrer, S. Martínez, L. Del Vasto-Terrientes, "Conciliating privacy and
//! utility in data releases via individual differential privacy and microaggregation";
//! ε-individual DP itself is from J. Soria-Comas, J. Domingo-Ferrer, D. Sánchez, D. Megías,
//! "Individual differential privacy: a utility-preserving formulation of differential
//! privacy guarantees", IEEE TIFS 12(6), 2017).
//!
//! Each attribute is masked on its own (Algorithm 1 of the paper):
//!
//! 1. **Individual ranking.** The values are sorted stably (ties keep the record order) and
//!    cut into consecutive groups of exactly `k` ranks; the `n mod k` remaining ranks join
//!    the last group, so there are `⌊n/k⌋` clusters and the last one has `k..2k−1` records.
//! 2. **Centroid** of each cluster: the mean, or for [`Mechanism::IdpCbls`] the mean of the
//!    pre-processed cluster (one smallest value replaced by the second smallest, one largest
//!    by the second largest; duplicates count, so `{3, 3, 4}` keeps its smallest value 3).
//! 3. **Noise.** Each centroid gets Laplace noise of scale `Δ_j / ε_a` through the
//!    floating-point-safe [`GridLaplace`] and is clamped to the attribute's declared bounds
//!    (post-processing); every record of the cluster receives that released value.
//!
//! The three sensitivities `Δ_j` are in [`Mechanism`]. The ranking is a radix sort of the
//! values' order-preserving bit patterns, ties broken by record index (module `rank`).
//! Each bucket of the sort, once sorted and still in cache, gives the statistics of its
//! clusters and parks every record's cluster in the output, near the record's own cell
//! (`Parker`); after the noise, one pass over the output, window by window in the
//! second-level cache, replaces each parked cluster by its released value. No pass reads
//! the sorted order back from memory. [`mask_columns`] runs the attributes in parallel
//! when there are at least as many as threads, each worker reusing its sort buffers, and
//! otherwise one attribute after another with every pass split among the threads.
//! Attribute `a` draws its noise from stream `a` of the seed, cluster by cluster in rank
//! order, so the output does not depend on the number of threads.

mod rank;
mod staged;

use std::ops::Range;
use std::slice::IterMut;
use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;

use crate::error::check_positive_finite;
use crate::noise::grid::{GridCalibration, GridLaplace};
use crate::resources::{check_interrupt, zeroed_vec};
use crate::rng::{Rng, Seed};
use crate::{Error, Result};
use rank::{Deal, Rec, Sink, Workspace};

/// How the noise of each centroid is calibrated.
///
/// Notation: cluster `C_j` of size `m = |C_j|`, its sorted values `a_1 ≤ a_2 ≤ … ≤ a_m`
/// (duplicates counted), and the declared bounds `[lo, hi] = [min A, max A]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mechanism {
    /// DP-UM (§3.1): the global sensitivity `Δ_j = (hi − lo) / m`, from the declared bounds
    /// and the public `n` and `k` only. With `k = 1` this is the paper's plain DP baseline
    /// (Laplace noise on every record, `Δ = hi − lo`).
    Dp,
    /// iDP-LS (§3.2.1, Proposition 2): the local sensitivity of the mean,
    /// `LS_j = max(hi − a_1, a_m − lo) / m`: the largest move of the mean when one record is
    /// replaced by a value of the domain (the smallest record pushed to `hi` or the largest
    /// pulled to `lo`).
    IdpLs,
    /// iDP-CBLS (§3.2.2, Proposition 3; needs `k ≥ 3`): the centroid of the pre-processed
    /// cluster `{a_2, a_2, a_3, …, a_{m−2}, a_{m−1}, a_{m−1}}` and
    ///
    /// `LS_j = max(|a_m − a_2| + |a_3 − a_2| + |a_m − a_{m−1}|,
    ///             |a_1 − a_{m−1}| + |a_{m−2} − a_{m−1}| + |a_1 − a_2|) / m`.
    ///
    /// This is Expression (1) of the paper read with `x_min = a_1`, `x'_min = a_2`,
    /// `x''_min = a_3` (the second and third *order statistics*, not the second and third
    /// distinct values) and `x_max = a_m`, `x'_max = a_{m−1}`, `x''_max = a_{m−2}`, divided
    /// by `|P_j| = m`. Its proof reads the same way: when `a_1` moves above `a_m`, the
    /// pre-processed value of that record goes from `a_2` to `a_m` (the new second largest),
    /// the record holding `a_2` becomes the smallest and is lifted to `a_3`, and the old
    /// largest `a_m`, previously lowered to `a_{m−1}`, is now kept: the three terms of the
    /// first branch. The second branch is the mirror image (`a_m` moved below `a_1`); moving
    /// `a_2` or `a_{m−1}` past the other end gives the same sums. For `m = 3` the branches
    /// are `3·(a_3 − a_2)` and `3·(a_2 − a_1)`, so `LS_j` is the larger of the two gaps.
    /// The tests check this bound and its tightness by brute force over single-record
    /// replacements. (The paper's example `{3, 3, 3, 4, 5, 6, 6}` calls 6 the "second
    /// smallest" value: a typo for second largest.) The bounds `[lo, hi]` do not enter
    /// `LS_j`; they are still needed to clamp the output.
    IdpCbls,
}

impl Mechanism {
    /// The smallest `k` the mechanism supports (3 for iDP-CBLS, whose pre-processing needs
    /// three values per cluster; 1 otherwise).
    pub fn min_k(self) -> usize {
        match self {
            Mechanism::IdpCbls => 3,
            Mechanism::Dp | Mechanism::IdpLs => 1,
        }
    }

    /// Whether the guarantee is ε-individual DP (local sensitivity at the actual data)
    /// rather than ε-DP.
    pub fn is_individual(self) -> bool {
        !matches!(self, Mechanism::Dp)
    }
}

impl std::str::FromStr for Mechanism {
    type Err = Error;

    /// `"dp"`, `"idp_ls"` or `"idp_cbls"` (the names of `privtab.MicroaggregationMasker`).
    fn from_str(name: &str) -> Result<Self> {
        match name {
            "dp" => Ok(Mechanism::Dp),
            "idp_ls" => Ok(Mechanism::IdpLs),
            "idp_cbls" => Ok(Mechanism::IdpCbls),
            _ => Err(Error::parameter(
                "mechanism",
                format!("{name:?}"),
                "must be one of 'idp_cbls', 'idp_ls', 'dp'",
            )),
        }
    }
}

/// The non-noisy microaggregation of one attribute (for references and tests; not private).
#[derive(Clone, Debug, PartialEq)]
pub struct Microaggregation {
    /// The cluster of every record, `0 .. n_clusters`, numbered in rank order.
    pub labels: Vec<u32>,
    /// The exact centroid of every cluster (the pre-processed one for iDP-CBLS).
    pub centroids: Vec<f64>,
    /// `Δ_j` of every cluster as the paper defines it (see [`Mechanism`]).
    pub sensitivities: Vec<f64>,
}

/// One masked attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct AttributeMask {
    /// The released column: every record carries its cluster's released centroid.
    pub masked: Vec<f64>,
    /// The released (noisy, clamped) centroid of every cluster, in rank order.
    pub centroids: Vec<f64>,
    /// `Δ_j` of every cluster as the paper defines it; the noise scale is
    /// [`noise_sensitivity`]`(Δ_j, |C_j|, bounds) / ε_a`. Public for [`Mechanism::Dp`]; for
    /// the iDP mechanisms these are functions of each cluster's extreme values and are
    /// **not** covered by the guarantee: keep them private.
    pub sensitivities: Vec<f64>,
}

/// The sensitivity the noise is calibrated to: `Δ_j` widened by the worst rounding error of
/// the centroid computed in floating point, `(Δ_j + 2·γ·B)·(1 + 2^-50)` with
/// `B = max(|lo|, |hi|)` and `γ = (m + 1)·2^-53 / (1 − (m + 1)·2^-53)`.
///
/// The mean of `m` doubles in `[−B, B]` summed one by one and divided by `m` is within
/// `γ·B` of the exact mean (Higham, *Accuracy and Stability of Numerical Algorithms*,
/// §4.2), for the actual data set and for any neighbour within the bounds, so the computed
/// centroids of neighbours differ by at most `Δ_j + 2γB`; the factor `1 + 2^-50` covers the
/// rounding of the few operations that compute `Δ_j` itself. `B` comes from the declared
/// bounds, so the widening is public; it is about `m·10^-16·B`, negligible unless
/// `Δ_j` is 15 orders of magnitude below the values.
pub fn noise_sensitivity(sensitivity: f64, cluster_size: usize, bounds: (f64, f64)) -> f64 {
    widen(sensitivity, rounding_term(cluster_size, bounds))
}

/// `2·γ·B` of [`noise_sensitivity`]: one per cluster size, computed once per attribute
/// rather than once per cluster.
fn rounding_term(cluster_size: usize, bounds: (f64, f64)) -> f64 {
    let unit = (cluster_size as f64 + 1.0) * 2f64.powi(-53);
    let gamma = unit / (1.0 - unit);
    let magnitude = bounds.0.abs().max(bounds.1.abs());
    2.0 * gamma * magnitude
}

/// [`noise_sensitivity`] given its [`rounding_term`].
#[inline]
fn widen(sensitivity: f64, rounding: f64) -> f64 {
    (sensitivity + rounding) * (1.0 + 2f64.powi(-50))
}

/// The cluster label of every record under individual-ranking microaggregation with
/// minimum cluster size `k`: label `⌊rank / k⌋`, capped at `⌊n/k⌋ − 1`, where `rank` is the
/// record's position in the stable ascending sort (ties keep the record order; `−0.0` and
/// `0.0` are equal).
///
/// # Errors
/// [`Error::InvalidParameter`] when `k` is 0 or above `n`; [`Error::InvalidData`] naming
/// the first value that is NaN or infinite, or when `n ≥ 2^32`;
/// [`Error::OutputTooLarge`] when the buffers cannot be allocated.
pub fn individual_ranking_clusters(values: &[f64], k: usize) -> Result<Vec<u32>> {
    check_k(k, values.len(), Mechanism::Dp)?;
    let mut workspace = Workspace::default();
    let sorted = workspace.rank(values, None, parts_for(values.len()))?;
    labels_of(sorted, k)
}

/// The cluster of every record, given the records in rank order.
fn labels_of(sorted: &[Rec], k: usize) -> Result<Vec<u32>> {
    let mut labels = zeroed_vec(sorted.len(), "cluster labels")?;
    for (j, range) in clusters(sorted.len(), k).enumerate() {
        if j % POLL_CLUSTERS == 0 {
            check_interrupt()?;
        }
        for rec in &sorted[range] {
            labels[rec.index as usize] = j as u32;
        }
    }
    Ok(labels)
}

/// The clusters, exact centroids and sensitivities of one attribute, without noise (the
/// reference for tests; releasing any of it is not private).
///
/// # Errors
/// As [`mask_attribute`], without the `epsilon` checks.
pub fn microaggregate(
    values: &[f64],
    k: usize,
    mechanism: Mechanism,
    bounds: (f64, f64),
) -> Result<Microaggregation> {
    check_bounds(bounds)?;
    check_k(k, values.len(), mechanism)?;
    let parts = parts_for(values.len());
    let mut workspace = Workspace::default();
    let sorted = workspace.rank(values, Some(bounds), parts)?;
    let (centroids, sensitivities) = cluster_statistics(sorted, k, mechanism, bounds, parts)?;
    Ok(Microaggregation {
        labels: labels_of(sorted, k)?,
        centroids,
        sensitivities,
    })
}

/// Masks one attribute: individual-ranking microaggregation with minimum cluster size `k`,
/// Laplace noise of scale `Δ_j / epsilon` on every centroid ([`Mechanism`] gives `Δ_j`),
/// clamping to `bounds`. Noise is drawn from `rng` cluster by cluster in rank order.
///
/// # Privacy
/// With the whole attribute budget `epsilon` spent on every centroid (parallel composition
/// over the disjoint clusters, as in the paper), the release is:
///
/// - [`Mechanism::Dp`]: `epsilon`-DP (neighbours replace one record; the bounds are
///   public). The paper's parallel-composition argument treats the clusters as fixed, but
///   they depend on the data: replacing one record can shift every later rank by one.
///   The guarantee survives because sorting is an L1 contraction (`Σ_i |y_(i) − x_(i)| ≤
///   |x − x'| ≤ hi − lo`), so `Σ_j |C_j|·|c_j − c'_j| ≤ hi − lo` and the per-cluster
///   privacy losses `ε·|c_j − c'_j| / Δ_j` sum to at most `epsilon`, up to the rounding
///   terms each changed centroid adds (about `2^-40` for the grid, and the
///   [`noise_sensitivity`] widening relative to `Δ_j`).
/// - [`Mechanism::IdpLs`] and [`Mechanism::IdpCbls`]: `epsilon`-individual DP
///   (Definition 3 of the paper) in the paper's analysis, which bounds the move of each
///   centroid when one record *of its cluster* changes. Under individual DP the noise
///   scale may depend on the actual data set — the mechanism is chosen knowing `D` and
///   judged against `D`'s neighbours — so each cluster gets its own [`GridLaplace`]; its
///   grid step `2^⌊log2(Δ_j/ε)⌋−40` is visible in the released value, which is inherent
///   to calibrating noise to local sensitivity (the returned `sensitivities`, by contrast,
///   are not part of the release).
///   **Caveat** (not in the paper): the shift of ranks above also applies here. For
///   iDP-LS, `|C_j|·LS_j ≥ (hi − lo)/2` for every cluster, so the same contraction argument
///   bounds the total loss by `2·epsilon` (it can exceed `epsilon`: clusters `{0, 0}` and
///   `{0.5, 0.5}` in `[0, 1]`, one 0 replaced by 1, lose `1.5·epsilon`). For iDP-CBLS no
///   such bound holds: moving the smallest record above the largest shifts every cluster
///   by one rank and can move each centroid by its full `LS_j`, a loss of up to
///   `⌊n/k⌋·epsilon` (see the test `reranking_moves_every_cbls_centroid`). The kernel
///   implements the paper's mechanisms as specified; callers must label the guarantee.
///
/// The centroid is computed in floating point; the noise is calibrated to
/// [`noise_sensitivity`], which covers its rounding error, and goes through
/// [`GridLaplace`] (`changed = 1`: one centroid per release), so the noisy value has no
/// floating-point side channel. If `noise_sensitivity` is 0 (only when `lo = hi = 0`) the
/// domain is a single point and the clamped centroid is released as is.
///
/// # Errors
/// [`Error::InvalidParameter`] when `k` is 0, above `n`, or below 3 for iDP-CBLS, when
/// `bounds` are not finite with `lo ≤ hi` and a finite width, or when `epsilon` is not
/// finite and > 0 (or so small that the noise scale overflows the grid);
/// [`Error::InvalidData`] naming the row and value of the first value that is NaN,
/// infinite or outside `bounds` (the Python layer decides whether to clip or raise), when
/// `n ≥ 2^32`, or naming the cluster whose centroid is too large for its noise grid
/// (`|centroid| ≥ 2^60·Δ_j/ε`, only with extreme `epsilon`);
/// [`Error::OutputTooLarge`] when the buffers cannot be allocated.
pub fn mask_attribute(
    values: &[f64],
    k: usize,
    mechanism: Mechanism,
    bounds: (f64, f64),
    epsilon: f64,
    rng: &mut Rng,
) -> Result<AttributeMask> {
    check_bounds(bounds)?;
    check_positive_finite("epsilon", epsilon)?;
    check_k(k, values.len(), mechanism)?;
    let mut masked = zeroed_vec(values.len(), "masked column")?;
    let release = mask_into(
        values,
        &Mask {
            k,
            mechanism,
            bounds,
            epsilon,
        },
        rng,
        &mut Workspace::default(),
        &mut masked,
        parts_for(values.len()),
    )?;
    Ok(AttributeMask {
        masked,
        centroids: release.centroids,
        sensitivities: release.sensitivities,
    })
}

/// A masked table: every attribute's released column and clusters.
#[derive(Clone, Debug, PartialEq)]
pub struct MaskedTable {
    /// The released columns one after another: attribute `a` is `masked[a·n .. (a+1)·n]`
    /// (a `(d, n)` row-major array, the transpose of a Fortran-ordered `(n, d)` table).
    pub masked: Vec<f64>,
    /// Every attribute's released centroids, in rank order (see [`AttributeMask`]).
    pub centroids: Vec<Vec<f64>>,
    /// Every attribute's `Δ_j` (see [`AttributeMask::sensitivities`]: keep the iDP ones
    /// private).
    pub sensitivities: Vec<Vec<f64>>,
}

/// Masks every attribute of a column-major table with [`mask_attribute`], in parallel:
/// attribute `a` uses `bounds[a]`, `epsilons[a]` and stream `a` of `seed`, so the result
/// depends only on the inputs and the seed, never on the number of threads.
///
/// `columns[a]` is the slice of attribute `a` (a column of a Fortran-ordered array or a
/// separate 1-d array, borrowed without copying); all columns have the same length `n`.
/// With at least as many attributes as threads, each thread masks whole attributes with
/// the sort buffers it reuses (`12·n` bytes that take the buckets of the ranking's
/// scatter, and `12·n` more that only skewed or tied data, whose buckets are split again,
/// ever touch); with fewer, the attributes are masked one after another, each with all
/// threads. The output is allocated once and written in place (it also holds the parked
/// clusters until the released values replace them): at 10 attributes and 2 threads the
/// kernel's memory is about 1.3 to 1.6 times the input's.
///
/// # Privacy
/// Attribute `a` is protected as in [`mask_attribute`] with `epsilons[a]`; by sequential
/// composition the table costs `Σ_a epsilons[a]` (ε-DP or ε-iDP as the mechanism says).
/// A fixed seed is for reproducibility and voids the guarantee against anyone who knows it.
///
/// # Errors
/// [`Error::InvalidData`] when `bounds` or `epsilons` do not have one entry per column or
/// the columns have different lengths; the parameter errors of [`mask_attribute`] (checked
/// for every attribute before any work starts) and its data errors, prefixed with
/// `attribute {a}`; the error of the lowest-indexed failing attribute wins;
/// [`Error::OutputTooLarge`] when the output or the buffers cannot be allocated;
/// [`Error::Interrupted`] when an interrupt is requested (checked between attributes).
pub fn mask_columns(
    columns: &[&[f64]],
    k: usize,
    mechanism: Mechanism,
    bounds: &[(f64, f64)],
    epsilons: &[f64],
    seed: &Seed,
) -> Result<MaskedTable> {
    let d = columns.len();
    for (name, len) in [("bounds", bounds.len()), ("epsilons", epsilons.len())] {
        if len != d {
            return Err(Error::InvalidData(format!(
                "{name} has {len} entries, expected one per column ({d})"
            )));
        }
    }
    let Some(n) = columns.first().map(|column| column.len()) else {
        return Ok(MaskedTable {
            masked: Vec::new(),
            centroids: Vec::new(),
            sensitivities: Vec::new(),
        });
    };
    for (a, column) in columns.iter().enumerate() {
        if column.len() != n {
            return Err(Error::InvalidData(format!(
                "columns[{a}] has {} values, expected {n} (the length of columns[0])",
                column.len()
            )));
        }
    }
    for a in 0..d {
        check_bounds(bounds[a]).map_err(|err| in_attribute(a, err))?;
        check_positive_finite("epsilons", epsilons[a]).map_err(|err| in_attribute(a, err))?;
    }
    check_k(k, n, mechanism)?;
    let cells = d
        .checked_mul(n)
        .ok_or_else(|| Error::OutputTooLarge(format!("a masked table of {d} × {n} values")))?;
    let mut masked = zeroed_vec(cells, "masked table")?;
    let mask_one = |a: usize, out: &mut [f64], workspace: &mut Workspace, parts: usize| {
        let mask = Mask {
            k,
            mechanism,
            bounds: bounds[a],
            epsilon: epsilons[a],
        };
        check_interrupt()
            .and_then(|()| {
                mask_into(
                    columns[a],
                    &mask,
                    &mut seed.stream(a as u64),
                    workspace,
                    out,
                    parts,
                )
            })
            .map_err(|err| in_attribute(a, err))
    };
    let threads = rayon::current_num_threads();
    let results: Vec<Result<ClusterRelease>> = if d >= threads {
        let queue = Mutex::new(masked.chunks_mut(n).enumerate());
        let mut done: Vec<(usize, Result<ClusterRelease>)> = (0..threads)
            .into_par_iter()
            .flat_map_iter(|_| {
                let mut workspace = Workspace::default();
                let mut mine = Vec::new();
                loop {
                    let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
                    let Some((a, out)) = next else { break };
                    mine.push((a, mask_one(a, out, &mut workspace, 1)));
                }
                mine
            })
            .collect();
        done.sort_unstable_by_key(|&(a, _)| a);
        done.into_iter().map(|(_, result)| result).collect()
    } else {
        let mut workspace = Workspace::default();
        masked
            .chunks_mut(n)
            .enumerate()
            .map(|(a, out)| mask_one(a, out, &mut workspace, parts_for(n)))
            .collect()
    };
    let mut centroids = Vec::with_capacity(d);
    let mut sensitivities = Vec::with_capacity(d);
    for result in results {
        let release = result?;
        centroids.push(release.centroids);
        sensitivities.push(release.sensitivities);
    }
    Ok(MaskedTable {
        masked,
        centroids,
        sensitivities,
    })
}

/// [`mask_columns`] on a row-major `(d, n)` table (attribute `a` in row `a`, read without
/// copying), the masked values returned in the same layout.
///
/// # Privacy
/// As [`mask_columns`].
///
/// # Errors
/// [`Error::InvalidData`] when `table` does not have `d · n` values; the errors of
/// [`mask_columns`].
pub fn mask_table(
    table: &[f64],
    (d, n): (usize, usize),
    k: usize,
    mechanism: Mechanism,
    bounds: &[(f64, f64)],
    epsilons: &[f64],
    seed: &Seed,
) -> Result<MaskedTable> {
    if d.checked_mul(n) != Some(table.len()) {
        return Err(Error::InvalidData(format!(
            "the table has {} values, expected {d} × {n}",
            table.len()
        )));
    }
    let columns: Vec<&[f64]> = (0..d).map(|a| &table[a * n..(a + 1) * n]).collect();
    mask_columns(&columns, k, mechanism, bounds, epsilons, seed)
}

/// Records per task, at least, when one attribute's passes are split among threads.
const MIN_PART: usize = 1 << 16;

/// Into how many tasks the passes over `n` records are split: one per thread, each of at
/// least [`MIN_PART`] records.
fn parts_for(n: usize) -> usize {
    rayon::current_num_threads().min(n / MIN_PART).max(1)
}

/// The checked parameters of one attribute's mask.
struct Mask {
    k: usize,
    mechanism: Mechanism,
    bounds: (f64, f64),
    epsilon: f64,
}

/// The released centroids and the sensitivities of one attribute's clusters.
struct ClusterRelease {
    centroids: Vec<f64>,
    sensitivities: Vec<f64>,
}

/// [`mask_attribute`] after the parameter checks, writing the released column into `out`
/// (`values.len()` long) and splitting every pass but the noise into `parts` tasks.
fn mask_into(
    values: &[f64],
    mask: &Mask,
    rng: &mut Rng,
    workspace: &mut Workspace,
    out: &mut [f64],
    parts: usize,
) -> Result<ClusterRelease> {
    let &Mask {
        k,
        mechanism,
        bounds,
        ..
    } = mask;
    let n = values.len();
    let shape = Shape {
        n,
        k,
        mechanism,
        bounds,
    };
    let cells = &mut *out;
    let parked = workspace.rank_into(values, Some(bounds), parts, Some(WINDOW_BITS), |deal| {
        shape.parkers(deal, cells)
    })?;
    check_interrupt()?;
    let (mut centroids, sensitivities) = shape.statistics(parked);
    check_interrupt()?;
    release_centroids(
        &mut centroids,
        &sensitivities,
        n - (n / k - 1) * k,
        mask,
        rng,
    )?;
    check_interrupt()?;
    release_parked(out, &centroids, parts);
    Ok(ClusterRelease {
        centroids,
        sensitivities,
    })
}

/// Clusters whose noise grids are built together before their noise is drawn.
const GRID_BATCH: usize = 64;

/// Replaces every exact centroid by its released value: Laplace noise of scale
/// [`noise_sensitivity`]`/ ε` through [`GridLaplace`], then clamping to the bounds; the
/// noise is drawn from `rng` cluster by cluster in rank order.
///
/// The grids of a batch of clusters are built first, in a loop without unpredictable
/// branches whose divisions overlap from cluster to cluster, and the noise is drawn
/// after (consecutive clusters with the same `Δ_j`, as under DP, share one grid).
fn release_centroids(
    centroids: &mut [f64],
    sensitivities: &[f64],
    last_size: usize,
    &Mask {
        k, bounds, epsilon, ..
    }: &Mask,
    rng: &mut Rng,
) -> Result<()> {
    let n_clusters = centroids.len();
    let calibration = GridCalibration::new(epsilon, 1)?;
    let (rounding, last_rounding) = (rounding_term(k, bounds), rounding_term(last_size, bounds));
    // The distinct grids of a batch, the grid of each of its clusters (an index into
    // `grids`, or `NO_NOISE` for a single-point domain), and the last grid built with its
    // calibrated sensitivity, reused while that repeats.
    const NO_NOISE: u8 = u8::MAX;
    let mut grids: Vec<GridLaplace> = Vec::with_capacity(GRID_BATCH);
    let mut uses: Vec<u8> = Vec::with_capacity(GRID_BATCH);
    let mut cached: Option<(f64, GridLaplace)> = None;
    for (batch, (centroids, sensitivities)) in centroids
        .chunks_mut(GRID_BATCH)
        .zip(sensitivities.chunks(GRID_BATCH))
        .enumerate()
    {
        let first = batch * GRID_BATCH;
        grids.clear();
        uses.clear();
        let mut failed = None;
        for (i, &sensitivity) in sensitivities.iter().enumerate() {
            let last = first + i + 1 == n_clusters;
            let calibrated = widen(sensitivity, if last { last_rounding } else { rounding });
            let positive = calibrated > 0.0;
            if !positive {
                uses.push(NO_NOISE);
                continue;
            }
            match cached {
                Some((at, grid)) if at == calibrated => {
                    if grids.is_empty() {
                        grids.push(grid);
                    }
                }
                _ => match calibration.grid(calibrated) {
                    Ok(grid) => {
                        cached = Some((calibrated, grid));
                        grids.push(grid);
                    }
                    Err(err) => {
                        failed = Some(err);
                        break;
                    }
                },
            }
            uses.push((grids.len() - 1) as u8);
        }
        for (i, (centroid, &grid)) in centroids.iter_mut().zip(&uses).enumerate() {
            if grid != NO_NOISE {
                *centroid = grids[usize::from(grid)]
                    .release(rng, *centroid)
                    .map_err(|err| in_cluster(first + i, err))?;
            }
            *centroid = centroid.clamp(bounds.0, bounds.1);
        }
        if let Some(err) = failed {
            return Err(err);
        }
    }
    Ok(())
}

/// Records per window of the output: 128 KiB of it, resident in the second-level cache,
/// and few enough windows (`n / 2^14`, about 600 at `n = 10^7`) for the records of a
/// sorted bucket to be parked in all of them at once without thrashing the first-level
/// cache.
const WINDOW_BITS: u32 = 14;

/// A record's place in its window (the low [`WINDOW_BITS`] bits of its index).
const IN_WINDOW: u64 = (1 << WINDOW_BITS) - 1;

/// What the tasks of one attribute's ranking need to know of it.
#[derive(Clone, Copy, Debug)]
struct Shape {
    n: usize,
    k: usize,
    mechanism: Mechanism,
    bounds: (f64, f64),
}

/// One task's share of a masked attribute, fed the sorted records run by run while they
/// are in cache ([`Sink`]): it summarizes the clusters that lie within its ranks and parks
/// every record in the output, in the window of `2^WINDOW_BITS` cells that holds the
/// record's own cell, as the pair (cluster, place in the window) packed into the cell's
/// 64 bits. [`release_parked`] later replaces every pair by its cluster's released value.
///
/// Writing each record's value straight to its cell would touch a random cache line of
/// the output per record; the parked pairs are written to about 600 places at a time, and
/// unpacked window by window in the second-level cache.
struct Parker<'a> {
    shape: Shape,
    /// The task's first rank.
    first: usize,
    /// The rank of the next record.
    next: usize,
    /// The exact centroids and `Δ_j` of the clusters that start at or after `first` and
    /// end within the task's ranks, in rank order.
    centroids: Vec<f64>,
    sensitivities: Vec<f64>,
    /// The task's records of a cluster that starts before `first` and ends within the task.
    head: Vec<Rec>,
    /// The task's records of the cluster in progress.
    open: Vec<Rec>,
    /// The task's free cells of every window.
    windows: Vec<IterMut<'a, f64>>,
}

impl Parker<'_> {
    fn push(&mut self, (centroid, sensitivity): (f64, f64)) {
        self.centroids.push(centroid);
        self.sensitivities.push(sensitivity);
    }
}

impl Sink for Parker<'_> {
    const KEEP: bool = false;

    fn run(&mut self, sorted: &[Rec]) {
        let Shape {
            n,
            k,
            mechanism,
            bounds,
        } = self.shape;
        let mut rest = sorted;
        while !rest.is_empty() {
            let j = (self.next / k).min(n / k - 1);
            let range = cluster(n, k, j);
            let (part, tail) = rest.split_at((range.end - self.next).min(rest.len()));
            let label = (j as u64) << 32;
            for rec in part {
                if let Some(cell) = self.windows[(rec.index >> WINDOW_BITS) as usize].next() {
                    *cell = f64::from_bits(label | (u64::from(rec.index) & IN_WINDOW));
                }
            }
            let ends = self.next + part.len() == range.end;
            if ends && range.start == self.next {
                self.push(summarize(part, mechanism, bounds));
            } else {
                self.open.extend_from_slice(part);
                if ends && range.start < self.first {
                    self.head = std::mem::take(&mut self.open);
                } else if ends {
                    self.push(summarize(&self.open, mechanism, bounds));
                    self.open.clear();
                }
            }
            self.next += part.len();
            rest = tail;
        }
    }
}

impl Shape {
    /// One [`Parker`] per task of `deal`, each given its share of every window of `out`.
    fn parkers<'a>(self, deal: &Deal, out: &'a mut [f64]) -> Vec<Parker<'a>> {
        let tasks = deal.starts.len() - 1;
        let mut windows: Vec<Vec<IterMut<'a, f64>>> = (0..tasks)
            .map(|_| Vec::with_capacity(deal.blocks.first().map_or(0, Vec::len)))
            .collect();
        for (w, window) in out.chunks_mut(1 << WINDOW_BITS).enumerate() {
            let mut rest = window;
            for (blocks, task_windows) in deal.blocks.iter().zip(&mut windows) {
                let (cells, tail) = std::mem::take(&mut rest).split_at_mut(blocks[w] as usize);
                task_windows.push(cells.iter_mut());
                rest = tail;
            }
        }
        windows
            .into_iter()
            .zip(&deal.starts)
            .map(|(windows, &first)| Parker {
                shape: self,
                first,
                next: first,
                centroids: Vec::new(),
                sensitivities: Vec::new(),
                head: Vec::new(),
                open: Vec::new(),
                windows,
            })
            .collect()
    }

    /// The exact centroid and `Δ_j` of every cluster, in rank order, from the parkers of
    /// all tasks in order: a cluster that spans tasks is summarized from their records of
    /// it, joined in rank order.
    fn statistics(self, parkers: Vec<Parker<'_>>) -> (Vec<f64>, Vec<f64>) {
        let mut parkers = parkers.into_iter();
        let Some(first) = parkers.next() else {
            return (Vec::new(), Vec::new());
        };
        // The first task has no cluster begun before it.
        let (mut centroids, mut sensitivities) = (first.centroids, first.sensitivities);
        let mut spanning = first.open;
        for parker in parkers {
            if !parker.head.is_empty() {
                spanning.extend_from_slice(&parker.head);
                let (centroid, sensitivity) = summarize(&spanning, self.mechanism, self.bounds);
                centroids.push(centroid);
                sensitivities.push(sensitivity);
                spanning.clear();
            }
            centroids.extend_from_slice(&parker.centroids);
            sensitivities.extend_from_slice(&parker.sensitivities);
            spanning.extend_from_slice(&parker.open);
        }
        (centroids, sensitivities)
    }
}

/// Replaces every parked pair of `out` ([`Parker`]) by the released value of its cluster,
/// window by window: a window's pairs are copied aside (they overwrite one another's
/// cells), then each cell of the window gets its value; `parts` tasks take runs of
/// windows.
fn release_parked(out: &mut [f64], released: &[f64], parts: usize) {
    let window = 1usize << WINDOW_BITS;
    let per_part = out.len().div_ceil(window).div_ceil(parts.max(1)).max(1) * window;
    out.par_chunks_mut(per_part).for_each(|part| {
        let mut parked = vec![0.0; window.min(part.len())];
        for cells in part.chunks_mut(window) {
            let parked = &mut parked[..cells.len()];
            parked.copy_from_slice(cells);
            for pair in parked.iter().map(|pair| pair.to_bits()) {
                cells[(pair & IN_WINDOW) as usize] = released[(pair >> 32) as usize];
            }
        }
    });
}

/// Clusters summarized or labelled between two looks at the interrupt flag.
const POLL_CLUSTERS: usize = 1 << 14;

/// The exact centroid and `Δ_j` of every cluster, in rank order.
///
/// # Errors
/// [`Error::Interrupted`].
fn cluster_statistics(
    sorted: &[Rec],
    k: usize,
    mechanism: Mechanism,
    bounds: (f64, f64),
    parts: usize,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let n = sorted.len();
    let n_clusters = n / k;
    let mut centroids = zeroed_vec::<f64>(n_clusters, "cluster centroids")?;
    let mut sensitivities = zeroed_vec::<f64>(n_clusters, "cluster sensitivities")?;
    let per_task = n_clusters.div_ceil(parts.max(1)).clamp(1, POLL_CLUSTERS);
    centroids
        .par_chunks_mut(per_task)
        .zip(sensitivities.par_chunks_mut(per_task))
        .enumerate()
        .try_for_each(|(t, (centroids, sensitivities))| {
            check_interrupt()?;
            let first = t * per_task;
            for (j, (centroid, sensitivity)) in
                (first..).zip(centroids.iter_mut().zip(sensitivities.iter_mut()))
            {
                (*centroid, *sensitivity) = summarize(&sorted[cluster(n, k, j)], mechanism, bounds);
            }
            Ok(())
        })?;
    Ok((centroids, sensitivities))
}

/// The centroid and `Δ_j` of one cluster, given in ascending order.
fn summarize(cluster: &[Rec], mechanism: Mechanism, (lo, hi): (f64, f64)) -> (f64, f64) {
    let m = cluster.len();
    let size = m as f64;
    let at = |i: usize| cluster[i].value();
    let (first, last) = (at(0), at(m - 1));
    match mechanism {
        Mechanism::Dp | Mechanism::IdpLs => {
            let centroid = cluster.iter().map(|rec| rec.value()).sum::<f64>() / size;
            let sensitivity = match mechanism {
                Mechanism::Dp => (hi - lo) / size,
                _ => (hi - first).max(last - lo) / size,
            };
            (centroid, sensitivity)
        }
        Mechanism::IdpCbls => {
            let (second, third) = (at(1), at(2));
            let (penultimate, antepenultimate) = (at(m - 2), at(m - 3));
            let inner: f64 = cluster[1..m - 1].iter().map(|rec| rec.value()).sum();
            let centroid = (second + inner + penultimate) / size;
            let up = (last - second).abs() + (third - second).abs() + (last - penultimate).abs();
            let down = (first - penultimate).abs()
                + (antepenultimate - penultimate).abs()
                + (first - second).abs();
            (centroid, up.max(down) / size)
        }
    }
}

/// The rank ranges of the `⌊n/k⌋` clusters (`1 ≤ k ≤ n`): groups of `k`, the remainder in
/// the last.
fn clusters(n: usize, k: usize) -> impl Iterator<Item = Range<usize>> {
    (0..n / k).map(move |j| cluster(n, k, j))
}

/// The rank range of cluster `j` of [`clusters`].
fn cluster(n: usize, k: usize, j: usize) -> Range<usize> {
    j * k..if j + 1 == n / k { n } else { (j + 1) * k }
}

fn check_k(k: usize, n: usize, mechanism: Mechanism) -> Result<()> {
    if k == 0 {
        return Err(Error::parameter("k", k, "must be >= 1"));
    }
    if k < mechanism.min_k() {
        return Err(Error::parameter(
            "k",
            k,
            "must be >= 3 for iDP-CBLS (its pre-processing needs three values per cluster)",
        ));
    }
    if k > n {
        return Err(Error::parameter(
            "k",
            format!("{k} with n = {n} records"),
            "must not exceed the number of records",
        ));
    }
    Ok(())
}

fn check_bounds((lo, hi): (f64, f64)) -> Result<()> {
    if lo.is_finite() && hi.is_finite() && lo <= hi && (hi - lo).is_finite() {
        Ok(())
    } else {
        Err(Error::parameter(
            "bounds",
            format!("({lo}, {hi})"),
            "must be finite (lower, upper) with lower <= upper and a finite width",
        ))
    }
}

/// Names the attribute in an error of [`mask_columns`].
fn in_attribute(a: usize, err: Error) -> Error {
    match err {
        Error::InvalidParameter { name, value, rule } => Error::InvalidParameter {
            name,
            value: format!("{value} (attribute {a})"),
            rule,
        },
        Error::InvalidData(message) => Error::InvalidData(format!("attribute {a}: {message}")),
        Error::Domain(message) => Error::Domain(format!("attribute {a}: {message}")),
        Error::OutputTooLarge(message) => {
            Error::OutputTooLarge(format!("attribute {a}: {message}"))
        }
        other => other,
    }
}

fn in_cluster(j: usize, err: Error) -> Error {
    match err {
        Error::InvalidData(message) => Error::InvalidData(format!("cluster {j}: {message}")),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::rank::LEAF;
    use super::*;
    use crate::noise::test_util::{in_pool, seed};
    use rand::RngExt;

    const ALL: [Mechanism; 3] = [Mechanism::Dp, Mechanism::IdpLs, Mechanism::IdpCbls];

    /// Record indices in stable ascending order of value (the reference ranking).
    fn stable_order(values: &[f64]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| values[a].partial_cmp(&values[b]).unwrap());
        order
    }

    /// Labels, centroids and sensitivities computed the slow, obvious way.
    fn reference(
        values: &[f64],
        k: usize,
        mechanism: Mechanism,
        (lo, hi): (f64, f64),
    ) -> (Vec<u32>, Vec<f64>, Vec<f64>) {
        let order = stable_order(values);
        let n = values.len();
        let p = n / k;
        let mut labels = vec![0u32; n];
        let mut members: Vec<Vec<f64>> = vec![Vec::new(); p];
        for (rank, &i) in order.iter().enumerate() {
            let j = (rank / k).min(p - 1);
            labels[i] = j as u32;
            members[j].push(values[i]);
        }
        let mut centroids = Vec::new();
        let mut sensitivities = Vec::new();
        for cluster in members {
            let (c, s) = reference_cluster(&cluster, mechanism, (lo, hi));
            centroids.push(c);
            sensitivities.push(s);
        }
        (labels, centroids, sensitivities)
    }

    fn mean(values: &[f64]) -> f64 {
        values.iter().sum::<f64>() / values.len() as f64
    }

    /// The pre-processing of §3.2.2: one smallest value becomes the second smallest, one
    /// largest becomes the second largest.
    fn preprocess(cluster: &[f64]) -> Vec<f64> {
        let mut sorted = cluster.to_vec();
        sorted.sort_by(f64::total_cmp);
        let m = sorted.len();
        sorted[0] = sorted[1];
        sorted[m - 1] = sorted[m - 2];
        sorted
    }

    fn reference_cluster(
        cluster: &[f64],
        mechanism: Mechanism,
        (lo, hi): (f64, f64),
    ) -> (f64, f64) {
        let mut s = cluster.to_vec();
        s.sort_by(f64::total_cmp);
        let m = s.len();
        let size = m as f64;
        match mechanism {
            Mechanism::Dp => (mean(&s), (hi - lo) / size),
            Mechanism::IdpLs => (mean(&s), f64::max(hi - s[0], s[m - 1] - lo) / size),
            Mechanism::IdpCbls => {
                let (x_min, x1_min, x2_min) = (s[0], s[1], s[2]);
                let (x_max, x1_max, x2_max) = (s[m - 1], s[m - 2], s[m - 3]);
                let up = (x_max - x1_min).abs() + (x2_min - x1_min).abs() + (x_max - x1_max).abs();
                let down =
                    (x_min - x1_max).abs() + (x2_max - x1_max).abs() + (x_min - x1_min).abs();
                (mean(&preprocess(&s)), up.max(down) / size)
            }
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs()))
    }

    /// Small inputs with many ties, negative values and both zeros.
    fn tied_values(rng: &mut Rng, n: usize, levels: u64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let level = rng.random_range(0..levels) as f64;
                match level as u64 % 5 {
                    0 => -0.0,
                    1 => 0.0,
                    _ => level * 0.25 - 1.0,
                }
            })
            .collect()
    }

    #[test]
    fn clusters_follow_the_stable_ranking() {
        let mut rng = seed(1).stream(0);
        for n in 1..40 {
            for k in 1..=n {
                let values = tied_values(&mut rng, n, 7);
                let labels = individual_ranking_clusters(&values, k).unwrap();
                let (expected, _, _) = reference(&values, k, Mechanism::Dp, (-1.0, 1.0));
                assert_eq!(labels, expected, "n = {n}, k = {k}, {values:?}");
                let p = n / k;
                let mut sizes = vec![0usize; p];
                for &label in &labels {
                    sizes[label as usize] += 1;
                }
                assert!(sizes[..p - 1].iter().all(|&s| s == k));
                assert!((k..2 * k).contains(&sizes[p - 1]), "{sizes:?}");
            }
        }
    }

    #[test]
    fn cluster_shapes_at_the_edges() {
        let values = [5.0, 1.0, 4.0, 1.0, 3.0, 2.0, 9.0];
        // n = k: one cluster.
        assert_eq!(individual_ranking_clusters(&values, 7).unwrap(), vec![0; 7]);
        // n < 2k: one cluster.
        assert_eq!(individual_ranking_clusters(&values, 4).unwrap(), vec![0; 7]);
        // n not divisible by k: 7 = 3 + 4; the tie 1.0, 1.0 keeps the record order.
        assert_eq!(
            individual_ranking_clusters(&values, 3).unwrap(),
            vec![1, 0, 1, 0, 1, 0, 1]
        );
        // k = 1: every record alone, labelled by rank.
        assert_eq!(
            individual_ranking_clusters(&values, 1).unwrap(),
            vec![5, 0, 4, 1, 3, 2, 6]
        );
        // −0.0 and 0.0 tie.
        assert_eq!(
            individual_ranking_clusters(&[0.0, -0.0, 0.0, -0.0], 1).unwrap(),
            vec![0, 1, 2, 3]
        );
    }

    #[test]
    fn centroids_and_sensitivities_match_the_reference() {
        let mut rng = seed(3).stream(0);
        let bounds = (-1.5, 2.0);
        for mechanism in ALL {
            for n in 3..30 {
                for k in mechanism.min_k()..=n {
                    let values = tied_values(&mut rng, n, 9);
                    let got = microaggregate(&values, k, mechanism, bounds).unwrap();
                    let (labels, centroids, sensitivities) =
                        reference(&values, k, mechanism, bounds);
                    assert_eq!(got.labels, labels);
                    for j in 0..centroids.len() {
                        assert!(close(got.centroids[j], centroids[j]), "{mechanism:?}");
                        assert!(
                            close(got.sensitivities[j], sensitivities[j]),
                            "{mechanism:?}"
                        );
                    }
                }
            }
        }
        // The larger inputs go through the radix sort.
        let values: Vec<f64> = (0..LEAF + 5)
            .map(|_| rng.random_range(0..50) as f64 / 25.0 - 1.0)
            .collect();
        for mechanism in ALL {
            let got = microaggregate(&values, 7, mechanism, bounds).unwrap();
            let (labels, centroids, sensitivities) = reference(&values, 7, mechanism, bounds);
            assert_eq!(got.labels, labels);
            assert!(
                got.centroids
                    .iter()
                    .zip(&centroids)
                    .all(|(&a, &b)| close(a, b))
            );
            assert!(
                got.sensitivities
                    .iter()
                    .zip(&sensitivities)
                    .all(|(&a, &b)| close(a, b))
            );
        }
    }

    #[test]
    fn cbls_preprocessing_counts_duplicates() {
        let bounds = (0.0, 10.0);
        // The paper's example: one 3 becomes 3, one 6 becomes 6; nothing changes.
        let values = [3.0, 6.0, 3.0, 4.0, 5.0, 3.0, 6.0];
        let got = microaggregate(&values, 7, Mechanism::IdpCbls, bounds).unwrap();
        assert_eq!(got.centroids, vec![30.0 / 7.0]);
        // up = |6 − 3| + |3 − 3| + |6 − 6|, down = |3 − 6| + |5 − 6| + |3 − 3|.
        assert_eq!(got.sensitivities, vec![4.0 / 7.0]);
        // Distinct extremes: {1, 2, 3, 4, 10} → {2, 2, 3, 4, 4}.
        let got =
            microaggregate(&[10.0, 2.0, 1.0, 4.0, 3.0], 5, Mechanism::IdpCbls, bounds).unwrap();
        assert_eq!(got.centroids, vec![3.0]);
        // up = 8 + 1 + 6, down = 3 + 1 + 1.
        assert_eq!(got.sensitivities, vec![3.0]);
        // Duplicates at both extremes: {0, 0, 0, 7, 7, 7} keeps its values.
        let got = microaggregate(
            &[0.0, 7.0, 0.0, 7.0, 0.0, 7.0],
            3,
            Mechanism::IdpCbls,
            bounds,
        )
        .unwrap();
        assert_eq!(got.centroids, vec![0.0, 7.0]);
        assert_eq!(got.sensitivities, vec![0.0, 0.0]);
        // k = 3: LS is the larger gap.
        let got = microaggregate(&[1.0, 2.0, 5.0], 3, Mechanism::IdpCbls, bounds).unwrap();
        assert_eq!((got.centroids[0], got.sensitivities[0]), (2.0, 3.0));
    }

    /// Propositions 2 and 3 with the cluster fixed: replacing any one record by any value
    /// of the domain moves the centroid by at most `LS_j`, and some replacement attains it.
    #[test]
    fn local_sensitivities_bound_every_single_record_change_and_are_tight() {
        let mut rng = seed(4).stream(0);
        let (lo, hi) = (-2.0, 3.0);
        let mut candidates: Vec<f64> = (0..=50).map(|i| lo + (hi - lo) * i as f64 / 50.0).collect();
        for _ in 0..300 {
            let m = rng.random_range(3..9);
            let cluster: Vec<f64> = (0..m)
                .map(|_| (rng.random_range(0..12) as f64) * 0.25 - 1.0)
                .collect();
            candidates.extend(&cluster);
            for mechanism in [Mechanism::IdpLs, Mechanism::IdpCbls] {
                let (centroid, ls) = reference_cluster(&cluster, mechanism, (lo, hi));
                let mut largest = 0.0f64;
                for i in 0..m {
                    for &replacement in &candidates {
                        let mut neighbour = cluster.clone();
                        neighbour[i] = replacement;
                        let (moved, _) = reference_cluster(&neighbour, mechanism, (lo, hi));
                        largest = largest.max((moved - centroid).abs());
                    }
                }
                assert!(
                    largest <= ls + 1e-12,
                    "{mechanism:?} {cluster:?}: {largest} > {ls}"
                );
                assert!(
                    largest >= ls - 1e-12,
                    "{mechanism:?} {cluster:?}: {largest} < {ls}"
                );
            }
            candidates.truncate(51);
        }
    }

    /// Documents the caveat of [`mask_attribute`]: the clusters depend on the data, so one
    /// replaced record can move every iDP-CBLS centroid by its whole sensitivity.
    #[test]
    fn reranking_moves_every_cbls_centroid() {
        let bounds = (0.0, 20.0);
        let data = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let mut neighbour = data;
        neighbour[0] = 10.0;
        let before = microaggregate(&data, 3, Mechanism::IdpCbls, bounds).unwrap();
        let after = microaggregate(&neighbour, 3, Mechanism::IdpCbls, bounds).unwrap();
        for j in 0..3 {
            let moved = (after.centroids[j] - before.centroids[j]).abs();
            assert_eq!(moved, before.sensitivities[j], "cluster {j}");
        }
        // Under DP the total move, weighted by cluster size, stays within hi − lo.
        let before = microaggregate(&data, 3, Mechanism::Dp, bounds).unwrap();
        let after = microaggregate(&neighbour, 3, Mechanism::Dp, bounds).unwrap();
        let total: f64 = (0..3)
            .map(|j| 3.0 * (after.centroids[j] - before.centroids[j]).abs())
            .sum();
        assert!(total <= bounds.1 - bounds.0);
    }

    #[test]
    fn noise_sensitivity_covers_the_rounding_of_the_mean() {
        let bounds = (-4.0, 1e6);
        let widened = noise_sensitivity(1.0, 5, bounds);
        assert!(widened > 1.0 && widened < 1.0 + 1e-8, "{widened}");
        assert_eq!(noise_sensitivity(0.0, 5, (0.0, 0.0)), 0.0);
        assert!(noise_sensitivity(0.0, 5, (2.0, 2.0)) > 0.0);
        // The computed mean of values in [−B, B] stays within γ·B of the exact one.
        let mut rng = seed(9).stream(0);
        for _ in 0..1000 {
            let m = rng.random_range(1..50);
            let values: Vec<f64> = (0..m).map(|_| rng.random_range(-4.0..1e6)).collect();
            let computed = values.iter().sum::<f64>() / m as f64;
            // Neumaier's compensated sum: within about one rounding of the exact mean.
            let (mut sum, mut carry) = (0.0f64, 0.0f64);
            for &v in &values {
                let t = sum + v;
                carry += if sum.abs() >= v.abs() {
                    (sum - t) + v
                } else {
                    (v - t) + sum
                };
                sum = t;
            }
            let exact = (sum + carry) / m as f64;
            let bound = (noise_sensitivity(0.0, m, bounds) / 2.0) * (1.0 - 1e-15);
            assert!((computed - exact).abs() <= bound + exact.abs() * 2f64.powi(-52));
        }
    }

    #[test]
    fn huge_epsilon_releases_the_clamped_centroids() {
        let mut rng = seed(5).stream(0);
        let values: Vec<f64> = (0..1000).map(|_| rng.random_range(0.0..10.0)).collect();
        let bounds = (0.0, 10.0);
        for mechanism in ALL {
            let exact = microaggregate(&values, 5, mechanism, bounds).unwrap();
            let epsilon = 1e9;
            let out = mask_attribute(
                &values,
                5,
                mechanism,
                bounds,
                epsilon,
                &mut seed(6).stream(0),
            )
            .unwrap();
            assert_eq!(out.sensitivities, exact.sensitivities);
            for (j, (&released, &centroid)) in
                out.centroids.iter().zip(&exact.centroids).enumerate()
            {
                let scale = noise_sensitivity(exact.sensitivities[j], 5, bounds) / epsilon;
                let grid = GridLaplace::new(scale * epsilon, epsilon, 1)
                    .unwrap()
                    .grid_step();
                let tolerance = 40.0 * scale + grid;
                assert!(
                    (released - centroid.clamp(0.0, 10.0)).abs() <= tolerance,
                    "{mechanism:?} {j}"
                );
            }
            for (i, &label) in exact.labels.iter().enumerate() {
                assert_eq!(out.masked[i], out.centroids[label as usize]);
            }
        }
    }

    #[test]
    fn released_values_are_clamped_grid_points_shared_by_each_cluster() {
        let mut rng = seed(7).stream(0);
        let values: Vec<f64> = (0..5000).map(|_| rng.random_range(0.0..1.0)).collect();
        let bounds = (0.0, 1.0);
        for mechanism in ALL {
            let exact = microaggregate(&values, 4, mechanism, bounds).unwrap();
            let out =
                mask_attribute(&values, 4, mechanism, bounds, 0.1, &mut seed(8).stream(0)).unwrap();
            assert_eq!(out.centroids.len(), 1250);
            assert!(out.masked.iter().all(|&x| (0.0..=1.0).contains(&x)));
            // Small epsilon on [0, 1]: the DP noise pushes many centroids to the bounds.
            if mechanism == Mechanism::Dp {
                assert!(out.centroids.iter().any(|&c| c == 0.0 || c == 1.0));
            }
            for (j, &released) in out.centroids.iter().enumerate() {
                if released > 0.0 && released < 1.0 {
                    let calibrated = noise_sensitivity(exact.sensitivities[j], 4, bounds);
                    let g = GridLaplace::new(calibrated, 0.1, 1).unwrap().grid_step();
                    assert_eq!((released / g).fract(), 0.0);
                }
            }
            for (i, &label) in exact.labels.iter().enumerate() {
                assert_eq!(out.masked[i], out.centroids[label as usize]);
            }
        }
    }

    #[test]
    fn noise_has_the_calibrated_laplace_scale() {
        // Clusters of 10 records at the middle of [0, 1]: clamping is rare at this scale.
        let n = 200_000;
        let values: Vec<f64> = (0..n)
            .map(|i| 0.45 + 0.1 * (i % 97) as f64 / 97.0)
            .collect();
        let bounds = (0.0, 1.0);
        for mechanism in [Mechanism::Dp, Mechanism::IdpLs] {
            let exact = microaggregate(&values, 10, mechanism, bounds).unwrap();
            let epsilon = 2.0;
            let out = mask_attribute(
                &values,
                10,
                mechanism,
                bounds,
                epsilon,
                &mut seed(10).stream(0),
            )
            .unwrap();
            // E|Laplace(b)| = b, with relative standard error 1/sqrt(20000).
            let ratio: f64 = out
                .centroids
                .iter()
                .zip(&exact.centroids)
                .zip(&exact.sensitivities)
                .map(|((&r, &c), &s)| (r - c).abs() / (noise_sensitivity(s, 10, bounds) / epsilon))
                .sum::<f64>()
                / out.centroids.len() as f64;
            assert!((ratio - 1.0).abs() < 0.05, "{mechanism:?}: {ratio}");
        }
    }

    #[test]
    fn parked_clusters_equal_the_ranking_for_any_split() {
        // Clusters within a bucket, across buckets and across tasks (k up to n), on the
        // small path (n <= LEAF) and the bucketed one, with ties and skew.
        let mut rng = seed(16).stream(0);
        let bounds = (0.0, 1e6);
        for n in [LEAF / 2 + 3, 3 * MIN_PART + 333] {
            let cases: [Vec<f64>; 3] = [
                (0..n).map(|_| rng.random_range(0.0..1e6)).collect(),
                (0..n).map(|_| rng.random_range(0..50) as f64).collect(),
                (0..n)
                    .map(|_| rng.random_range(1e-6..1.0f64).powi(-2).min(1e6))
                    .collect(),
            ];
            for values in &cases {
                let mut workspace = Workspace::default();
                let labels =
                    labels_of(workspace.rank(values, Some(bounds), 1).unwrap(), 1).unwrap();
                let ranks: Vec<usize> = {
                    let mut ranks = vec![0; n];
                    for (rank, &i) in stable_order(values).iter().enumerate() {
                        ranks[i] = rank;
                    }
                    ranks
                };
                assert!(labels.iter().zip(&ranks).all(|(&l, &r)| l as usize == r));
                for k in [1, 3, 7, n / 3 + 1, n / 2 + 1, n] {
                    for mechanism in ALL {
                        if k < mechanism.min_k() {
                            continue;
                        }
                        let sorted = workspace.rank(values, Some(bounds), 1).unwrap();
                        let expected = cluster_statistics(sorted, k, mechanism, bounds, 1).unwrap();
                        for parts in [1, 2, 3, 5] {
                            let shape = Shape {
                                n,
                                k,
                                mechanism,
                                bounds,
                            };
                            let mut out = vec![f64::NAN; n];
                            let cells = &mut out[..];
                            let parked = workspace
                                .rank_into(values, Some(bounds), parts, Some(WINDOW_BITS), |deal| {
                                    shape.parkers(deal, cells)
                                })
                                .unwrap();
                            let (centroids, sensitivities) = shape.statistics(parked);
                            assert_eq!(centroids, expected.0, "n = {n}, k = {k}, {parts} parts");
                            assert_eq!(sensitivities, expected.1);
                            let released: Vec<f64> = (0..n / k).map(|j| j as f64).collect();
                            release_parked(&mut out, &released, parts);
                            for (i, &rank) in ranks.iter().enumerate() {
                                assert_eq!(out[i], (rank / k).min(n / k - 1) as f64);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn columns_are_deterministic_for_any_thread_count() {
        // Large enough for every pass of one attribute to be split among threads.
        let mut rng = seed(11).stream(0);
        let n = 3 * MIN_PART + 333;
        let data: Vec<Vec<f64>> = (0..5)
            .map(|a| {
                (0..n)
                    .map(|_| match a {
                        0 | 1 => rng.random_range(0..40) as f64,
                        _ => rng.random_range(0.0..60.0),
                    })
                    .collect()
            })
            .collect();
        let columns: Vec<&[f64]> = data.iter().map(Vec::as_slice).collect();
        let bounds = vec![(0.0, 60.0); 5];
        let epsilons = [0.1, 0.5, 1.0, 2.0, 0.01];
        for mechanism in ALL {
            let run = |threads| {
                in_pool(threads, || {
                    mask_columns(&columns, 5, mechanism, &bounds, &epsilons, &seed(12)).unwrap()
                })
            };
            // Whole attributes per thread (1 to 5 threads), and attributes in turn with
            // every pass split (8 threads).
            let one = run(1);
            assert_eq!(one, run(2));
            assert_eq!(one, run(3));
            assert_eq!(one, run(8));
            for a in 0..5 {
                let alone = mask_attribute(
                    columns[a],
                    5,
                    mechanism,
                    bounds[a],
                    epsilons[a],
                    &mut seed(12).stream(a as u64),
                )
                .unwrap();
                assert_eq!(one.masked[a * n..(a + 1) * n], alone.masked);
                assert_eq!(one.centroids[a], alone.centroids);
                assert_eq!(one.sensitivities[a], alone.sensitivities);
                let split = in_pool(4, || {
                    mask_attribute(
                        columns[a],
                        5,
                        mechanism,
                        bounds[a],
                        epsilons[a],
                        &mut seed(12).stream(a as u64),
                    )
                    .unwrap()
                });
                assert_eq!(split, alone);
            }
            let other =
                mask_columns(&columns, 5, mechanism, &bounds, &epsilons, &seed(13)).unwrap();
            assert_ne!(one, other);
        }
        let empty = mask_columns(&[], 3, Mechanism::Dp, &[], &[], &seed(0)).unwrap();
        assert!(empty.masked.is_empty() && empty.centroids.is_empty());
    }

    #[test]
    fn a_row_major_table_is_masked_as_its_columns() {
        let mut rng = seed(14).stream(0);
        let (d, n) = (3, 50);
        let table: Vec<f64> = (0..d * n).map(|_| rng.random_range(0..20) as f64).collect();
        let (bounds, epsilons) = (vec![(0.0, 30.0); d], [0.5, 1.0, 2.0]);
        for mechanism in ALL {
            let out = mask_table(&table, (d, n), 4, mechanism, &bounds, &epsilons, &seed(15));
            let out = out.unwrap();
            for a in 0..d {
                let column = &table[a * n..(a + 1) * n];
                let one = mask_attribute(
                    column,
                    4,
                    mechanism,
                    bounds[a],
                    epsilons[a],
                    &mut seed(15).stream(a as u64),
                )
                .unwrap();
                assert_eq!(out.masked[a * n..(a + 1) * n], one.masked[..]);
                assert_eq!(out.sensitivities[a], one.sensitivities);
            }
        }
        let short = mask_table(
            &table[1..],
            (d, n),
            4,
            Mechanism::Dp,
            &bounds,
            &epsilons,
            &seed(0),
        );
        assert!(matches!(short, Err(Error::InvalidData(_))));
        let names = ["dp", "idp_ls", "idp_cbls"].map(|name| name.parse::<Mechanism>().unwrap());
        assert_eq!(names, [Mechanism::Dp, Mechanism::IdpLs, Mechanism::IdpCbls]);
        let unknown = "idp".parse::<Mechanism>().unwrap_err().to_string();
        assert_eq!(
            unknown,
            "mechanism must be one of 'idp_cbls', 'idp_ls', 'dp', got \"idp\""
        );
    }

    #[test]
    fn single_point_domain_releases_the_point() {
        for bounds in [(0.0, 0.0), (2.5, 2.5)] {
            let values = [bounds.0; 7];
            for mechanism in ALL {
                let out =
                    mask_attribute(&values, 3, mechanism, bounds, 1.0, &mut seed(1).stream(0))
                        .unwrap();
                assert_eq!(out.masked, values.to_vec());
            }
        }
    }

    #[test]
    fn bad_inputs_are_errors_that_name_the_problem() {
        let rng = &mut seed(0).stream(0);
        let ok = [0.5, 0.25, 1.0, 0.0];
        let b = (0.0, 1.0);
        let message = |r: Result<AttributeMask>| r.unwrap_err().to_string();
        assert_eq!(
            message(mask_attribute(&ok, 0, Mechanism::Dp, b, 1.0, rng)),
            "k must be >= 1, got 0"
        );
        assert_eq!(
            message(mask_attribute(&ok, 5, Mechanism::Dp, b, 1.0, rng)),
            "k must not exceed the number of records, got 5 with n = 4 records"
        );
        assert!(
            message(mask_attribute(&ok, 2, Mechanism::IdpCbls, b, 1.0, rng)).contains("iDP-CBLS")
        );
        assert!(mask_attribute(&[], 1, Mechanism::Dp, b, 1.0, rng).is_err());
        for bad in [f64::NAN, f64::INFINITY, -f64::INFINITY] {
            let values = [0.5, bad, 0.5];
            let err = message(mask_attribute(&values, 1, Mechanism::Dp, b, 1.0, rng));
            assert!(
                err.contains("values[1]") && err.contains("not finite"),
                "{err}"
            );
            assert!(individual_ranking_clusters(&values, 1).is_err());
            assert!(microaggregate(&values, 1, Mechanism::IdpLs, b).is_err());
        }
        let err = message(mask_attribute(
            &[0.5, 0.2, 1.5],
            1,
            Mechanism::IdpLs,
            b,
            1.0,
            rng,
        ));
        assert_eq!(
            err,
            "values[2] = 1.5 lies outside the declared bounds [0, 1]"
        );
        for bounds in [
            (1.0, 0.0),
            (f64::NAN, 1.0),
            (0.0, f64::INFINITY),
            (-f64::MAX, f64::MAX),
        ] {
            let err = message(mask_attribute(&ok, 1, Mechanism::Dp, bounds, 1.0, rng));
            assert!(err.starts_with("bounds must be finite"), "{err}");
        }
        for epsilon in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = message(mask_attribute(&ok, 1, Mechanism::Dp, b, epsilon, rng));
            assert!(err.starts_with("epsilon must be finite and > 0"), "{err}");
        }
        // Tables: lengths, per-attribute parameters and data errors name the attribute.
        let col: &[f64] = &ok;
        let short: &[f64] = &ok[..3];
        let s = &seed(0);
        let table = |r: Result<MaskedTable>| r.unwrap_err().to_string();
        assert!(
            table(mask_columns(
                &[col, short],
                1,
                Mechanism::Dp,
                &[b, b],
                &[1.0, 1.0],
                s
            ))
            .contains("columns[1]")
        );
        assert!(
            table(mask_columns(&[col], 1, Mechanism::Dp, &[b, b], &[1.0], s))
                .starts_with("bounds has 2")
        );
        assert!(
            table(mask_columns(&[col], 1, Mechanism::Dp, &[b], &[], s))
                .starts_with("epsilons has 0")
        );
        assert_eq!(
            table(mask_columns(
                &[col, col],
                1,
                Mechanism::Dp,
                &[b, b],
                &[1.0, -2.0],
                s
            )),
            "epsilons must be finite and > 0, got -2 (attribute 1)"
        );
        assert!(
            table(mask_columns(
                &[col, col],
                1,
                Mechanism::Dp,
                &[b, (2.0, 1.0)],
                &[1.0, 1.0],
                s
            ))
            .contains("(attribute 1)")
        );
        let outside: &[f64] = &[0.5, 0.5, -0.5, 0.5];
        let also: &[f64] = &[0.5, 7.0, 0.5, 0.5];
        assert_eq!(
            table(mask_columns(
                &[col, outside, also],
                2,
                Mechanism::Dp,
                &[b; 3],
                &[1.0; 3],
                s
            )),
            "attribute 1: values[2] = -0.5 lies outside the declared bounds [0, 1]"
        );
        // An epsilon so small that the grid-unit scale overflows is an error, not a panic.
        assert!(mask_attribute(&ok, 1, Mechanism::Dp, b, 1e-300, rng).is_err());
    }

    /// Timing of 10M records × 1 attribute against plain sorts, best of 3 (run with
    /// `cargo test --release -p privtab-core microagg::tests::timing -- --ignored
    /// --nocapture`). Prints only; no assertion.
    #[test]
    #[ignore]
    fn timing() {
        use std::time::{Duration, Instant};
        fn best<T>(mut f: impl FnMut() -> T) -> Duration {
            (0..3)
                .map(|_| {
                    let start = Instant::now();
                    std::hint::black_box(f());
                    start.elapsed()
                })
                .min()
                .unwrap()
        }
        let n = 10_000_000;
        let bounds = (0.0, 100.0);
        let mut rng = seed(99).stream(0);
        let reals: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..100.0)).collect();
        let integers: Vec<f64> = (0..n).map(|_| rng.random_range(0..100) as f64).collect();
        let grids = best(|| {
            (0..1_000_000)
                .map(|i| {
                    GridLaplace::new(1.0 + i as f64 * 1e-6, 0.5, 1)
                        .unwrap()
                        .unit_scale()
                })
                .sum::<u64>()
        });
        println!("GridLaplace::new: {:?} per construction", grids / 1_000_000);
        let fixed = GridLaplace::new(4.0, 1.0, 1).unwrap();
        let draws = best(|| {
            let mut rng = seed(2).stream(0);
            (0..1_000_000)
                .map(|i| fixed.release(&mut rng, i as f64 * 1e-4).unwrap())
                .sum::<f64>()
        });
        let fresh = best(|| {
            let mut rng = seed(2).stream(0);
            (0..1_000_000)
                .map(|i| {
                    let grid = GridLaplace::new(4.0 + i as f64 * 1e-7, 1.0, 1).unwrap();
                    grid.release(&mut rng, i as f64 * 1e-4).unwrap()
                })
                .sum::<f64>()
        });
        println!(
            "GridLaplace::release: {:?} per draw (fixed grid), {:?} (new grid each draw)",
            draws / 1_000_000,
            fresh / 1_000_000
        );
        let exact: Vec<f64> = (0..1_000_000)
            .map(|_| rng.random_range(0.0..100.0))
            .collect();
        let varying: Vec<f64> = (0..1_000_000)
            .map(|_| rng.random_range(5.0..10.0))
            .collect();
        for (what, sensitivities) in [("varying", varying), ("one", vec![10.0; 1_000_000])] {
            let mask = Mask {
                k: 10,
                mechanism: Mechanism::IdpLs,
                bounds,
                epsilon: 0.5,
            };
            let released = best(|| {
                let mut centroids = exact.clone();
                release_centroids(
                    &mut centroids,
                    &sensitivities,
                    10,
                    &mask,
                    &mut seed(6).stream(0),
                )
                .unwrap();
                centroids
            });
            println!(
                "release_centroids, {what} Δ_j: {:?} per cluster (with a copy of the centroids)",
                released / 1_000_000
            );
        }
        for (name, data) in [("uniform reals", &reals), ("integers 0..100", &integers)] {
            let argsort = best(|| {
                let mut order: Vec<u32> = (0..n as u32).collect();
                order.sort_unstable_by(|&a, &b| data[a as usize].total_cmp(&data[b as usize]));
                order
            });
            let sort = best(|| {
                let mut copy = data.clone();
                copy.sort_unstable_by(f64::total_cmp);
                copy
            });
            let mut workspace = Workspace::default();
            let radix = best(|| workspace.rank(data, Some(bounds), 1).unwrap().len());
            println!(
                "{name}, n = {n}: rank (reused buffers) {radix:?} | index sort_unstable_by {argsort:?} \
                 | value sort_unstable {sort:?}"
            );
            for (mechanism, k) in [
                (Mechanism::Dp, 5),
                (Mechanism::IdpLs, 5),
                (Mechanism::IdpCbls, 5),
                (Mechanism::IdpCbls, 100),
            ] {
                let plain = best(|| microaggregate(data, k, mechanism, bounds).unwrap());
                let masked = best(|| {
                    mask_attribute(data, k, mechanism, bounds, 1.0, &mut seed(1).stream(0)).unwrap()
                });
                println!(
                    "  {mechanism:?} k = {k}: microaggregate {plain:?} | mask_attribute {masked:?}"
                );
            }
        }
        let table: Vec<Vec<f64>> = (0..10)
            .map(|a| (0..n).map(|i| reals[(i + a * 7919) % n]).collect())
            .collect();
        let columns: Vec<&[f64]> = table.iter().map(Vec::as_slice).collect();
        for mechanism in [Mechanism::Dp, Mechanism::IdpCbls] {
            let start = Instant::now();
            let out = mask_columns(&columns, 5, mechanism, &[bounds; 10], &[0.1; 10], &seed(3));
            println!(
                "mask_columns 10 x {n} uniform reals, {mechanism:?} k = 5, {} threads: {:?}",
                rayon::current_num_threads(),
                start.elapsed()
            );
            drop(out);
        }
    }
}
