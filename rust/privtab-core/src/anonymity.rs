//! Containment anonymity (paper 004): for each row u of a binary matrix projected onto a
//! feature subset S, AC(u) = |{v : C_S(u) ⊆ C_S(v)}|, where C_S(u) is the set of features of
//! S equal to 1 in row u. Also the equivalence-class size of each row (plain k-anonymity).
//!
//! The matrix is read in CSR form (sorted feature indices per row) and never densified.
//! Rows are grouped into distinct projected patterns: as bitmask keys over S counted by the
//! histogram's bucketed counter when S has at most 64 features, else by sorting the
//! projected rows; the superset count of a
//! pattern P is then the weighted size of the intersection of the pattern-id lists
//! ("tidlists") of P's features, intersected from the shortest list. The work is
//! Σ_P Σ_{f∈P} (cost of one list intersection), never O(n²) over rows, and patterns are
//! processed in parallel with results that do not depend on the thread count.

use rayon::prelude::*;

use crate::binary::BinaryCsr;
use crate::histogram::count_blocks;
use crate::resources::{check_interrupt, interrupted};
use crate::{Error, Result};

/// Most features of S whose patterns are keyed by a bitmask (one bit per feature).
const MASK_FEATURES: usize = 64;

/// Patterns up to this many are found by binary search (their keys stay in the cache).
const MASK_SEARCHED_PATTERNS: usize = 1 << 14;

/// Largest bitmask domain whose pattern ranks are looked up in a table indexed by key
/// (16 MiB of ranks) when there are more patterns than [`MASK_SEARCHED_PATTERNS`]; larger
/// ones are binary searched.
const MASK_TABLE_CELLS: u128 = 1 << 22;

/// The rows grouped by their projection onto S.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patterns {
    /// Distinct projected patterns as CSR offsets into `items`: by increasing bitmask over S
    /// (bit r for the r-th smallest feature of S) when S has at most [`MASK_FEATURES`]
    /// features, else in lexicographic order.
    offsets: Vec<usize>,
    items: Vec<u32>,
    /// Number of rows with each pattern.
    counts: Vec<u64>,
    /// The pattern id of each row.
    row_pattern: Vec<u32>,
    /// The bitmask of each pattern and the number of bits (the features of S), when the
    /// patterns are keyed by masks.
    masks: Option<(Vec<u64>, u32)>,
}

impl Patterns {
    /// Groups the rows of `matrix` by their projection onto `features` (indices may repeat
    /// and come in any order; S is the set they form).
    ///
    /// # Errors
    /// [`Error::InvalidData`] when a feature index is ≥ the number of features or when the
    /// matrix has 2^32 rows or more.
    pub fn new(matrix: BinaryCsr<'_>, features: &[usize]) -> Result<Self> {
        let n = matrix.n_rows();
        if n > u32::MAX as usize {
            return Err(Error::InvalidData(format!(
                "at most 2**32 - 1 rows are supported, got {n}"
            )));
        }
        let mut keep = vec![false; matrix.n_features()];
        for &f in features {
            match keep.get_mut(f) {
                Some(slot) => *slot = true,
                None => {
                    return Err(Error::InvalidData(format!(
                        "feature index {f} is out of range for {} features",
                        matrix.n_features()
                    )));
                }
            }
        }
        let selected: Vec<usize> = (0..keep.len()).filter(|&f| keep[f]).collect();
        if selected.len() <= MASK_FEATURES {
            Self::by_masks(matrix, &selected)
        } else {
            Ok(Self::by_sorting(matrix, &keep))
        }
    }

    /// Groups the rows by sorting their projections onto the features marked in `keep`
    /// (any number of them); patterns come in lexicographic order.
    fn by_sorting(matrix: BinaryCsr<'_>, keep: &[bool]) -> Self {
        let n = matrix.n_rows();
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0usize);
        let mut projected = Vec::new();
        for u in 0..n {
            projected.extend(matrix.row(u).iter().filter(|&&f| keep[f as usize]));
            offsets.push(projected.len());
        }
        let row = |u: usize| &projected[offsets[u]..offsets[u + 1]];
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.par_sort_unstable_by(|&a, &b| row(a as usize).cmp(row(b as usize)));

        let mut patterns = Patterns {
            offsets: vec![0],
            items: Vec::new(),
            counts: Vec::new(),
            row_pattern: vec![0; n],
            masks: None,
        };
        let mut previous: Option<&[u32]> = None;
        for &u in &order {
            let current = row(u as usize);
            if previous != Some(current) {
                patterns.items.extend_from_slice(current);
                patterns.offsets.push(patterns.items.len());
                patterns.counts.push(0);
                previous = Some(current);
            }
            let id = patterns.counts.len() - 1;
            patterns.counts[id] += 1;
            // Fewer patterns than rows, and rows < 2^32.
            patterns.row_pattern[u as usize] = id as u32;
        }
        patterns
    }

    /// Groups the rows by the bitmask of their features in `selected` (increasing, at most
    /// [`MASK_FEATURES`]): the keys are counted by
    /// [`count_blocks`](crate::histogram::count_blocks), which returns them sorted, and each
    /// row finds its key's rank (in a table indexed by key for small domains, by binary
    /// search otherwise). O(n + nnz), parallel, independent of the thread count.
    fn by_masks(matrix: BinaryCsr<'_>, selected: &[usize]) -> Result<Self> {
        let n = matrix.n_rows();
        let mut bit_of = vec![0u64; matrix.n_features()];
        for (r, &f) in selected.iter().enumerate() {
            bit_of[f] = 1 << r;
        }
        let mut keys = Vec::new();
        keys.try_reserve_exact(n).map_err(|_| {
            Error::OutputTooLarge(format!("the pattern keys of {n} rows cannot be allocated"))
        })?;
        (0..n)
            .into_par_iter()
            .map(|u| {
                matrix
                    .row(u)
                    .iter()
                    .fold(0u64, |key, &f| key | bit_of[f as usize])
            })
            .collect_into_vec(&mut keys);
        check_interrupt()?;
        let domain = 1u128 << selected.len();
        let (distinct, counts) = count_blocks(n, domain, |start, out| {
            out.copy_from_slice(&keys[start..start + out.len()]);
        })?
        .into_parts();
        check_interrupt()?;
        let row_pattern = if distinct.len() > MASK_SEARCHED_PATTERNS && domain <= MASK_TABLE_CELLS {
            let mut rank = vec![0u32; domain as usize];
            for (p, &key) in distinct.iter().enumerate() {
                rank[key as usize] = p as u32;
            }
            keys.par_iter().map(|&key| rank[key as usize]).collect()
        } else {
            keys.par_iter()
                .map(|&key| distinct.partition_point(|&d| d < key) as u32)
                .collect()
        };
        let mut offsets = Vec::with_capacity(distinct.len() + 1);
        offsets.push(0usize);
        let mut items = Vec::new();
        for &key in &distinct {
            items.extend(
                selected
                    .iter()
                    .enumerate()
                    .filter(|&(r, _)| key >> r & 1 != 0)
                    .map(|(_, &f)| f as u32),
            );
            offsets.push(items.len());
        }
        Ok(Patterns {
            offsets,
            items,
            counts,
            row_pattern,
            masks: Some((distinct, selected.len() as u32)),
        })
    }

    /// Number of distinct projected patterns.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether there are no patterns (no rows).
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The features of pattern `p`, increasing.
    pub fn pattern(&self, p: usize) -> &[u32] {
        &self.items[self.offsets[p]..self.offsets[p + 1]]
    }

    /// The number of rows with each pattern.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The pattern id of each row.
    pub fn row_pattern(&self) -> &[u32] {
        &self.row_pattern
    }

    /// For every pattern P, the number of rows whose pattern contains P.
    ///
    /// # Errors
    /// [`Error::Interrupted`] when an interrupt is requested.
    pub fn superset_counts(&self) -> Result<Vec<u64>> {
        if let Some((masks, bits)) = &self.masks
            && self.sums_over_masks_are_cheaper(masks, *bits)
        {
            return self.superset_sums_over_masks(masks, *bits);
        }
        self.superset_counts_by_lists()
    }

    /// Superset counts by intersecting, for each pattern, the lists of patterns holding each
    /// of its features, shortest first.
    fn superset_counts_by_lists(&self) -> Result<Vec<u64>> {
        let mut tidlists: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
        for p in 0..self.len() {
            for &f in self.pattern(p) {
                tidlists.entry(f).or_default().push(p as u32);
            }
        }
        let total: u64 = self.counts.iter().sum();
        let counts = (0..self.len())
            .into_par_iter()
            .map(|p| {
                if interrupted() {
                    return 0;
                }
                let mut lists: Vec<&[u32]> = self
                    .pattern(p)
                    .iter()
                    .filter_map(|f| tidlists.get(f).map(Vec::as_slice))
                    .collect();
                if lists.is_empty() {
                    return total;
                }
                lists.sort_by_key(|list| list.len());
                let mut common = lists[0].to_vec();
                for list in &lists[1..] {
                    intersect_into(&mut common, list);
                    if common.len() == 1 {
                        // Only P itself is left, and P contains all its features.
                        break;
                    }
                }
                common.iter().map(|&q| self.counts[q as usize]).sum()
            })
            .collect();
        check_interrupt()?;
        Ok(counts)
    }
}

impl Patterns {
    /// Whether summing over every mask of S (`2^bits · bits` additions) costs less than
    /// intersecting pattern lists, bounded by `Σ_f (patterns containing f)²`.
    fn sums_over_masks_are_cheaper(&self, masks: &[u64], bits: u32) -> bool {
        if bits > MAX_SUMMED_BITS {
            return false;
        }
        let mut per_feature = [0u64; 64];
        for &mask in masks {
            for (b, count) in per_feature.iter_mut().enumerate().take(bits as usize) {
                *count += mask >> b & 1;
            }
        }
        let intersections: u64 = per_feature.iter().map(|c| c * c).sum();
        (1u64 << bits) * u64::from(bits.max(1)) <= intersections
    }

    /// Superset counts by the sum over supersets (the zeta transform on the subset
    /// lattice): a table of the counts of every mask of S, to which each bit in turn adds
    /// the entries with that bit set onto those without it; a pattern's count is then its
    /// mask's entry. Exact integer sums, so the order of the additions (and the thread
    /// count) does not matter.
    fn superset_sums_over_masks(&self, masks: &[u64], bits: u32) -> Result<Vec<u64>> {
        let cells = 1usize << bits;
        let mut table = Vec::new();
        table.try_reserve_exact(cells).map_err(|_| {
            Error::OutputTooLarge(format!(
                "a table of {cells} pattern counts cannot be allocated"
            ))
        })?;
        table.resize(cells, 0u64);
        for (&mask, &count) in masks.iter().zip(&self.counts) {
            table[mask as usize] = count;
        }
        for b in 0..bits {
            let half = 1usize << b;
            table
                .par_chunks_mut(2 * half)
                .with_min_len((SUM_BLOCK / (2 * half)).max(1))
                .for_each(|pair| {
                    let (without, with) = pair.split_at_mut(half);
                    for (w, &v) in without.iter_mut().zip(with.iter()) {
                        *w += v;
                    }
                });
            check_interrupt()?;
        }
        Ok(masks.iter().map(|&mask| table[mask as usize]).collect())
    }
}

/// Most features of S whose superset counts may be summed over all masks (a table of
/// `2^22` counts, 32 MiB).
const MAX_SUMMED_BITS: u32 = 22;

/// Table entries per task of a sum over masks.
const SUM_BLOCK: usize = 1 << 14;

/// Keeps the elements of `common` that also occur in the sorted `list`.
fn intersect_into(common: &mut Vec<u32>, list: &[u32]) {
    if list.len() > 16 * common.len() {
        common.retain(|x| list.binary_search(x).is_ok());
        return;
    }
    let mut j = 0;
    common.retain(|&x| {
        while j < list.len() && list[j] < x {
            j += 1;
        }
        j < list.len() && list[j] == x
    });
}

/// AC(u) for every row u of `matrix` projected onto `features`: the number of rows whose
/// projected feature set contains u's (u included).
///
/// # Errors
/// As [`Patterns::new`].
pub fn containment_anonymity(matrix: BinaryCsr<'_>, features: &[usize]) -> Result<Vec<u64>> {
    let patterns = Patterns::new(matrix, features)?;
    let supersets = patterns.superset_counts()?;
    Ok(patterns
        .row_pattern()
        .par_iter()
        .map(|&p| supersets[p as usize])
        .collect())
}

/// The size of every row's equivalence class under the projection onto `features` (rows
/// equal on all of S); the minimum is the k of plain k-anonymity.
///
/// # Errors
/// As [`Patterns::new`].
pub fn class_sizes(matrix: BinaryCsr<'_>, features: &[usize]) -> Result<Vec<u64>> {
    let patterns = Patterns::new(matrix, features)?;
    Ok(patterns
        .row_pattern()
        .iter()
        .map(|&p| patterns.counts()[p as usize])
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::csr_from_rows as to_csr;
    use crate::resources::with_threads;
    use crate::rng::Seed;
    use rand::RngExt;

    fn brute(rows: &[Vec<u32>], keep: &[usize]) -> (Vec<u64>, Vec<u64>) {
        let proj: Vec<Vec<u32>> = rows
            .iter()
            .map(|r| {
                r.iter()
                    .copied()
                    .filter(|f| keep.contains(&(*f as usize)))
                    .collect()
            })
            .collect();
        let ac = proj
            .iter()
            .map(|p| {
                proj.iter()
                    .filter(|q| p.iter().all(|f| q.contains(f)))
                    .count() as u64
            })
            .collect();
        let eq = proj
            .iter()
            .map(|p| proj.iter().filter(|q| *q == p).count() as u64)
            .collect();
        (ac, eq)
    }

    fn random_rows(seed: u64, n: usize, m: u32, density: f64) -> Vec<Vec<u32>> {
        let mut rng = Seed::from_u64(seed).stream(0);
        (0..n)
            .map(|_| (0..m).filter(|_| rng.random::<f64>() < density).collect())
            .collect()
    }

    #[test]
    fn matches_brute_force_on_random_matrices() {
        for seed in 0..40 {
            let m = 1 + (seed % 9) as u32;
            let rows = random_rows(
                seed,
                1 + (seed as usize * 7) % 60,
                m,
                0.2 + 0.015 * seed as f64,
            );
            let (indptr, indices) = to_csr(&rows);
            let csr = BinaryCsr::new(&indptr, &indices, m as usize).unwrap();
            let all: Vec<usize> = (0..m as usize).collect();
            let some: Vec<usize> = all.iter().copied().filter(|f| f % 2 == 0).collect();
            for keep in [all.clone(), some, vec![]] {
                let (ac, eq) = brute(&rows, &keep);
                assert_eq!(containment_anonymity(csr, &keep).unwrap(), ac);
                assert_eq!(class_sizes(csr, &keep).unwrap(), eq);
            }
        }
    }

    fn grouping(patterns: &Patterns) -> Vec<Vec<u32>> {
        patterns
            .row_pattern()
            .iter()
            .map(|&p| patterns.pattern(p as usize).to_vec())
            .collect()
    }

    /// Bitmask keys and sorting group the rows alike, through every rank look-up: few
    /// patterns (binary search), many in a small domain (table), many in a large one.
    #[test]
    fn masks_and_sorting_group_rows_alike() {
        for (seed, n, m, density) in [
            (1, 500, 12, 0.3),
            (2, 40_000, 20, 0.5),
            (3, 40_000, 40, 0.3),
        ] {
            let rows = random_rows(seed, n, m, density);
            let (indptr, indices) = to_csr(&rows);
            let csr = BinaryCsr::new(&indptr, &indices, m as usize).unwrap();
            let selected: Vec<usize> = (0..m as usize).collect();
            let masks = Patterns::by_masks(csr, &selected).unwrap();
            let sorted = Patterns::by_sorting(csr, &vec![true; m as usize]);
            assert_eq!(grouping(&masks), grouping(&sorted));
            let (keys, bits) = masks.masks.as_ref().unwrap();
            if *bits <= MAX_SUMMED_BITS {
                assert_eq!(
                    masks.superset_sums_over_masks(keys, *bits).unwrap(),
                    masks.superset_counts_by_lists().unwrap()
                );
            }
            assert_eq!(masks.len(), sorted.len());
            let mut a = masks.counts().to_vec();
            let mut b = sorted.counts().to_vec();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b);
        }
    }

    /// S of more than 64 features is grouped by sorting; masks take its subsets.
    #[test]
    fn more_than_64_features_match_brute_force() {
        for seed in 0..3 {
            let rows = random_rows(seed + 50, 60, 70, 0.6);
            let (indptr, indices) = to_csr(&rows);
            let csr = BinaryCsr::new(&indptr, &indices, 70).unwrap();
            let all: Vec<usize> = (0..70).collect();
            let some: Vec<usize> = (0..70).step_by(3).collect();
            for keep in [all, some] {
                let (ac, eq) = brute(&rows, &keep);
                assert_eq!(containment_anonymity(csr, &keep).unwrap(), ac);
                assert_eq!(class_sizes(csr, &keep).unwrap(), eq);
            }
        }
    }

    #[test]
    fn same_result_for_any_thread_count() {
        let rows = random_rows(7, 3000, 30, 0.1);
        let (indptr, indices) = to_csr(&rows);
        let csr = BinaryCsr::new(&indptr, &indices, 30).unwrap();
        let all: Vec<usize> = (0..30).collect();
        let one = with_threads(Some(1), || containment_anonymity(csr, &all)).unwrap();
        let two = with_threads(Some(2), || containment_anonymity(csr, &all)).unwrap();
        assert_eq!(one, two);
    }

    #[test]
    fn rejects_out_of_range_features() {
        let indices = [0u32, 2];
        let csr = BinaryCsr::new(&[0, 2], &indices, 3).unwrap();
        let err = containment_anonymity(csr, &[5]).unwrap_err();
        assert!(err.to_string().contains("feature index 5"));
        assert_eq!(containment_anonymity(csr, &[0, 0, 2]).unwrap(), vec![1]);
    }

    #[test]
    fn empty_matrix_has_no_rows() {
        let csr = BinaryCsr::new(&[0], &[], 0).unwrap();
        assert!(containment_anonymity(csr, &[]).unwrap().is_empty());
    }
}
