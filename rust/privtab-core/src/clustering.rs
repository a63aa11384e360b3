//! k-member clustering of binary rows and randomization flipping (the RF baseline of the
//! k-anonymity-by-containment paper, after Byun, Kamra, Bertino and Li, 2007).
//!
//! Rows are bit-packed (64 features per word) and compared by popcount Hamming distance.
//! Identical rows are merged first: a distinct row carries its multiplicity, so the greedy
//! scans run over distinct rows only. Every scan is a rayon reduction under a total order
//! (distance, then row index), so the clustering depends on the seed only, never on the
//! number of threads.

use rand::RngExt;
use rayon::prelude::*;

use crate::binary::BinaryCsr;
use crate::resources::{alloc_output, check_interrupt, interrupted};
use crate::rng::Seed;
use crate::{Error, Result};

/// The output of [`randomization_flipping`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flipped {
    /// The released n × m matrix, row-major, every row equal to its cluster's pattern.
    pub data: Vec<u8>,
    /// Cluster id of every row, `0 .. n_clusters`.
    pub clusters: Vec<u32>,
    /// Number of clusters; each holds at least `k` rows.
    pub n_clusters: usize,
    /// Number of cells whose bit was flipped.
    pub flipped: u64,
}

/// Distinct rows with their multiplicities and original row indices.
struct Distinct {
    words: usize,
    rows: Vec<u64>,
    counts: Vec<usize>,
    /// Original row indices grouped by distinct row (ascending within a group).
    members: Vec<u32>,
    starts: Vec<usize>,
}

impl Distinct {
    fn row(&self, g: usize) -> &[u64] {
        &self.rows[g * self.words..(g + 1) * self.words]
    }

    fn distance(&self, a: usize, b: usize) -> u32 {
        hamming(self.row(a), self.row(b))
    }
}

fn hamming(a: &[u64], b: &[u64]) -> u32 {
    crate::bitset::count_xor(a, b) as u32
}

fn pack_and_merge(matrix: BinaryCsr<'_>) -> Result<Distinct> {
    let (n_rows, n_features) = (matrix.n_rows(), matrix.n_features());
    let words = n_features.div_ceil(64);
    let total = n_rows
        .checked_mul(words)
        .ok_or_else(|| Error::OutputTooLarge(format!("{n_rows} rows of {words} words")))?;
    let mut packed = alloc_output::<u64>(total, "bit-packed rows")?;
    packed
        .par_chunks_mut(words)
        .enumerate()
        .for_each(|(u, row)| {
            for &f in matrix.row(u) {
                row[f as usize / 64] |= 1u64 << (f % 64);
            }
        });
    let row = |u: usize| &packed[u * words..(u + 1) * words];
    let mut order: Vec<u32> = (0..n_rows as u32).collect();
    order.par_sort_unstable_by(|&a, &b| row(a as usize).cmp(row(b as usize)).then(a.cmp(&b)));
    let mut rows = Vec::new();
    let mut counts = Vec::new();
    let mut starts = Vec::new();
    for (position, &u) in order.iter().enumerate() {
        let current = row(u as usize);
        if position == 0 || row(order[position - 1] as usize) != current {
            rows.extend_from_slice(current);
            counts.push(0);
            starts.push(position);
        }
        if let Some(last) = counts.last_mut() {
            *last += 1;
        }
    }
    starts.push(n_rows);
    Ok(Distinct {
        words,
        rows,
        counts,
        members: order,
        starts,
    })
}

/// Greedy k-member clustering of the distinct rows; returns per cluster its seed row and
/// its parts `(distinct row, copies taken)`. Stops early, with a meaningless result, when
/// an interrupt is requested (the caller checks).
fn k_member(distinct: &Distinct, k: usize, seed: &Seed) -> Vec<(usize, Vec<(usize, usize)>)> {
    let mut left = distinct.counts.clone();
    let mut clusters: Vec<(usize, Vec<(usize, usize)>)> = Vec::new();
    for (g, count) in left.iter_mut().enumerate() {
        if *count >= k {
            clusters.push((g, vec![(g, *count)]));
            *count = 0;
        }
    }
    let mut alive: Vec<usize> = (0..left.len()).filter(|&g| left[g] > 0).collect();
    let mut total: usize = alive.iter().map(|&g| left[g]).sum();
    if total >= k {
        let mut rng = seed.stream(0);
        let mut reference = alive[rng.random_range(0..alive.len())];
        while total >= k {
            if interrupted() {
                return clusters;
            }
            let far = alive
                .par_iter()
                .map(|&g| (distinct.distance(reference, g), std::cmp::Reverse(g)))
                .max()
                .map_or(reference, |(_, std::cmp::Reverse(g))| g);
            let mut parts = vec![(far, left[far])];
            let mut need = k - left[far];
            left[far] = 0;
            let mut near: Vec<(u32, usize)> = alive
                .par_iter()
                .filter(|&&g| left[g] > 0)
                .map(|&g| (distinct.distance(far, g), g))
                .collect();
            // Each distinct row has at least one copy left, so `need` of them suffice.
            let take = need.min(near.len());
            if take > 0 && take < near.len() {
                near.select_nth_unstable(take - 1);
            }
            near.truncate(take);
            near.sort_unstable();
            for &(_, g) in &near {
                if need == 0 {
                    break;
                }
                let copies = left[g].min(need);
                parts.push((g, copies));
                left[g] -= copies;
                need -= copies;
            }
            total -= k;
            clusters.push((far, parts));
            alive.retain(|&g| left[g] > 0);
            reference = far;
        }
    }
    for g in alive {
        if left[g] == 0 {
            continue;
        }
        let nearest = clusters
            .par_iter()
            .enumerate()
            .map(|(c, (seed_row, _))| (distinct.distance(*seed_row, g), c))
            .min()
            .map_or(0, |(_, c)| c);
        clusters[nearest].1.push((g, left[g]));
        left[g] = 0;
    }
    clusters
}

/// k-member clustering followed by flipping every cluster to its per-feature majority.
///
/// The rows (CSR: row `u` has ones at `indices[indptr[u]..indptr[u + 1]]`) are clustered
/// greedily (Byun et al. 2007): a distinct row with at least `k` copies is a cluster on
/// its own (no flips needed); over the other rows, start from a uniformly drawn row, take
/// the row furthest from it (Hamming distance; ties → lowest index in the sorted order of
/// distinct rows) as the seed of a cluster, add its `k − 1` nearest rows (identical copies
/// first, ties by that order), and repeat from the row furthest from the last seed while
/// at least `k` rows remain. The fewer than `k` rows left each join the cluster whose seed
/// is nearest. Each cluster's rows are then replaced by its majority pattern (a bit is 1
/// when more than half of the cluster has it; ties → 0), so every released row is shared
/// by at least `k` rows: the output is k-anonymous.
///
/// # Privacy
/// Not differentially private: the clustering depends on every record. The guarantee is
/// k-anonymity of the released matrix (and so k-anonymity by containment).
///
/// # Errors
/// [`Error::InvalidParameter`] when `k` is 0 or larger than the number of rows, or
/// `n_features` is 0; [`Error::InvalidData`] for malformed CSR arrays;
/// [`Error::OutputTooLarge`] when the n × m output cannot be allocated.
pub fn randomization_flipping(
    indptr: &[i64],
    indices: &[u32],
    n_features: usize,
    k: usize,
    seed: &Seed,
) -> Result<Flipped> {
    if n_features == 0 {
        return Err(Error::parameter("n_features", 0, "must be >= 1"));
    }
    let matrix = BinaryCsr::new(indptr, indices, n_features)?;
    let n_rows = matrix.n_rows();
    if k == 0 || k > n_rows {
        return Err(Error::InvalidParameter {
            name: "k",
            value: k.to_string(),
            rule: "must be >= 1 and <= the number of rows",
        });
    }
    let distinct = pack_and_merge(matrix)?;
    let clusters = k_member(&distinct, k, seed);
    check_interrupt()?;
    let words = distinct.words;
    let cell_count = n_rows
        .checked_mul(n_features)
        .ok_or_else(|| Error::OutputTooLarge(format!("{n_rows} × {n_features} cells")))?;
    let mut data = alloc_output::<u8>(cell_count, "flipped matrix")?;
    let mut labels = alloc_output::<u32>(n_rows, "cluster ids")?;
    let mut next_member = distinct.starts[..distinct.starts.len() - 1].to_vec();
    let mut flipped = 0u64;
    for (c, (_, parts)) in clusters.iter().enumerate() {
        let size: usize = parts.iter().map(|&(_, copies)| copies).sum();
        let mut pattern = vec![0u64; words];
        for f in 0..n_features {
            let ones: usize = parts
                .iter()
                .filter(|&&(g, _)| distinct.row(g)[f / 64] >> (f % 64) & 1 == 1)
                .map(|&(_, copies)| copies)
                .sum();
            if 2 * ones > size {
                pattern[f / 64] |= 1u64 << (f % 64);
            }
        }
        for &(g, copies) in parts {
            flipped += hamming(distinct.row(g), &pattern) as u64 * copies as u64;
            let start = next_member[g];
            for &u in &distinct.members[start..start + copies] {
                let u = u as usize;
                labels[u] = c as u32;
                let out = &mut data[u * n_features..(u + 1) * n_features];
                for (f, cell) in out.iter_mut().enumerate() {
                    *cell = (pattern[f / 64] >> (f % 64) & 1) as u8;
                }
            }
            next_member[g] += copies;
        }
    }
    Ok(Flipped {
        data,
        clusters: labels,
        n_clusters: clusters.len(),
        flipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::with_pool;

    fn to_csr(dense: &[Vec<u8>]) -> (Vec<i64>, Vec<u32>, usize) {
        let m = dense.first().map_or(0, Vec::len);
        let mut indptr = vec![0i64];
        let mut indices = Vec::new();
        for row in dense {
            indices.extend(
                row.iter()
                    .enumerate()
                    .filter(|&(_, &b)| b == 1)
                    .map(|(f, _)| f as u32),
            );
            indptr.push(indices.len() as i64);
        }
        (indptr, indices, m)
    }

    fn random_rows(n: usize, m: usize, seed: u64) -> Vec<Vec<u8>> {
        let mut rng = Seed::from_u64(seed).stream(0);
        (0..n)
            .map(|_| {
                (0..m)
                    .map(|_| u8::from(rng.random_range(0..4) == 0))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn clusters_have_k_rows_and_identical_released_rows() {
        for (n, m, k) in [(50, 7, 3), (200, 70, 5), (11, 3, 11), (30, 130, 4)] {
            let rows = random_rows(n, m, n as u64);
            let (indptr, indices, m) = to_csr(&rows);
            let out = randomization_flipping(&indptr, &indices, m, k, &Seed::from_u64(1)).unwrap();
            let mut sizes = vec![0usize; out.n_clusters];
            for &c in &out.clusters {
                sizes[c as usize] += 1;
            }
            assert!(sizes.iter().all(|&s| s >= k), "{sizes:?}");
            let mut flips = 0u64;
            for (u, row) in rows.iter().enumerate() {
                let c = out.clusters[u] as usize;
                let first = out.clusters.iter().position(|&x| x as usize == c).unwrap();
                assert_eq!(
                    out.data[u * m..(u + 1) * m],
                    out.data[first * m..(first + 1) * m]
                );
                flips += row
                    .iter()
                    .zip(&out.data[u * m..(u + 1) * m])
                    .filter(|(a, b)| a != b)
                    .count() as u64;
            }
            assert_eq!(flips, out.flipped);
        }
    }

    #[test]
    fn same_seed_same_clusters_for_any_thread_count() {
        let rows = random_rows(300, 40, 9);
        let (indptr, indices, m) = to_csr(&rows);
        let run = |threads| {
            with_pool(threads, || {
                randomization_flipping(&indptr, &indices, m, 4, &Seed::from_u64(3)).unwrap()
            })
        };
        assert_eq!(run(1), run(2));
        assert_eq!(run(1), run(4));
    }

    #[test]
    fn identical_rows_need_no_flips() {
        let rows = vec![vec![1, 0, 1]; 6];
        let (indptr, indices, m) = to_csr(&rows);
        let out = randomization_flipping(&indptr, &indices, m, 3, &Seed::from_u64(0)).unwrap();
        assert_eq!(out.flipped, 0);
        assert_eq!(out.n_clusters, 1);
    }

    #[test]
    fn invalid_inputs_are_errors() {
        let seed = Seed::from_u64(0);
        assert!(randomization_flipping(&[], &[], 3, 1, &seed).is_err());
        assert!(randomization_flipping(&[0, 1], &[5], 3, 1, &seed).is_err());
        assert!(randomization_flipping(&[0, 2], &[0], 3, 1, &seed).is_err());
        assert!(randomization_flipping(&[0, 1, 0], &[0], 3, 1, &seed).is_err());
        assert!(randomization_flipping(&[0, 0], &[], 0, 1, &seed).is_err());
        assert!(randomization_flipping(&[0, 0], &[], 3, 0, &seed).is_err());
        assert!(randomization_flipping(&[0, 0], &[], 3, 2, &seed).is_err());
    }
}
