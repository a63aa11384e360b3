//! Containment anonymity (paper 004): for each row u of a binary matrix projected onto a
//! feature subset S, AC(u) = |{v : C_S(u) ⊆ C_S(v)}|, where C_S(u) is the set of features of
//! S equal to 1 in row u. Also the equivalence-class size of each row (plain k-anonymity).
//!
//! The matrix is read in CSR form (sorted feature indices per row) and never densified.
//! Rows are grouped into distinct projected patterns by sorting; the superset count of a
//! pattern P is then the weighted size of the intersection of the pattern-id lists
//! ("tidlists") of P's features, intersected from the shortest list. The work is
//! Σ_P Σ_{f∈P} (cost of one list intersection), never O(n²) over rows, and patterns are
//! processed in parallel with results that do not depend on the thread count.

use rayon::prelude::*;

use crate::binary::BinaryCsr;
use crate::resources::{check_interrupt, interrupted};
use crate::{Error, Result};

/// The rows grouped by their projection onto S.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patterns {
    /// Distinct projected patterns in lexicographic order, as CSR offsets into `items`.
    offsets: Vec<usize>,
    items: Vec<u32>,
    /// Number of rows with each pattern.
    counts: Vec<u64>,
    /// The pattern id of each row.
    row_pattern: Vec<u32>,
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
        Ok(patterns)
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
