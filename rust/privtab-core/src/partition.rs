//! Partition refinement: the one kernel behind discernibility (PrivateKD, MDA), DistCnt,
//! equivalence classes (k-anonymity, CM) and the joint entropies of DILCA.
//!
//! A [`Partition`] groups the rows that agree on a set of attributes S. Refining it by an
//! attribute `a` maps each (class, value) pair to a new class, in O(n). Class ids are the
//! ranks of the (class, value) pairs in lexicographic order, so refining the trivial
//! partition by attributes `s_1, …, s_k` numbers the classes exactly as
//! `numpy.unique(codes[:, [s_1, …, s_k]], axis=0, return_inverse=True)` does, whatever the
//! layout (dense table or sort) or the number of threads used.
//!
//! Greedy selectors score every remaining candidate against the current partition in one
//! parallel pass ([`Partition::score_candidates`]): for each candidate `a` they get, on the
//! partition of S ∪ {a}, the number of classes, the undiscerned label pairs
//! Σ_c (n_c² − Σ_l n_{c,l}²), H(S ∪ {a}) and H(Y, S ∪ {a}), without materialising the refined
//! partition. [`subset_entropies`] walks all size-k subsets depth first, refining the
//! prefix partition once per prefix.

use rayon::prelude::*;

use crate::counts::SparseCounts;
use crate::counts::{Contingency, contingency, dense_counts, prefer_dense, value_counts};
use crate::table::{Columns, check_codes};
use crate::{Error, Result};

/// Label codes `0..n_labels` of every row, with their counts.
#[derive(Clone, Debug)]
pub struct Labels<'a> {
    codes: &'a [u32],
    n_labels: u32,
    sum_of_squares: u128,
    entropy: f64,
}

impl<'a> Labels<'a> {
    /// Validates `codes` against `n_labels`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `n_labels` is 0; [`Error::InvalidData`] when a label
    /// is ≥ `n_labels`.
    pub fn new(codes: &'a [u32], n_labels: u32) -> Result<Self> {
        if n_labels == 0 {
            return Err(Error::parameter("n_labels", 0, "must be >= 1"));
        }
        check_codes(codes, n_labels, "labels")?;
        let counts = value_counts(codes, n_labels)?;
        Ok(Labels {
            codes,
            n_labels,
            sum_of_squares: counts.iter().map(|&c| u128::from(c) * u128::from(c)).sum(),
            entropy: crate::counts::entropy(&counts),
        })
    }

    /// The label of each row.
    pub fn codes(&self) -> &'a [u32] {
        self.codes
    }

    /// The number of distinct labels allowed.
    pub fn n_labels(&self) -> u32 {
        self.n_labels
    }

    /// Ordered pairs of rows with different labels: n² − Σ_l n_l².
    pub fn differing_pairs(&self) -> u128 {
        let n = self.codes.len() as u128;
        n * n - self.sum_of_squares
    }

    /// H(Y) in bits.
    pub fn entropy(&self) -> f64 {
        self.entropy
    }
}

/// Statistics of one partition (usually S ∪ {a} for a candidate a) against the labels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    /// Number of non-empty classes.
    pub n_classes: u64,
    /// Ordered pairs in the same class with different labels: Σ_c (n_c² − Σ_l n_{c,l}²).
    pub undiscerned_pairs: u128,
    /// H(S) in bits: −Σ_c (n_c/n) log2(n_c/n).
    pub entropy: f64,
    /// H(Y, S) in bits: −Σ_{c,l} (n_{c,l}/n) log2(n_{c,l}/n).
    pub joint_entropy: f64,
}

impl Score {
    /// Discernibility F(S) = [(n² − Σ_l n_l²) − Σ_c (n_c² − Σ_l n_{c,l}²)] / n: ordered pairs
    /// that differ both on S and on the label, per row (0 when there are no rows).
    pub fn discernibility(&self, labels: &Labels<'_>) -> f64 {
        let n = labels.codes().len();
        if n == 0 {
            return 0.0;
        }
        (labels.differing_pairs() - self.undiscerned_pairs) as f64 / n as f64
    }
}

/// Accumulates a [`Score`] from class counts n_c and joint counts n_{c,l}.
#[derive(Default)]
struct Accumulator {
    n_classes: u64,
    class_squares: u128,
    joint_squares: u128,
    class_plogp: f64,
    joint_plogp: f64,
}

impl Accumulator {
    fn class(&mut self, count: u64, n: f64) {
        if count > 0 {
            self.n_classes += 1;
            self.class_squares += u128::from(count) * u128::from(count);
            self.class_plogp += plogp(count, n);
        }
    }

    fn joint(&mut self, count: u64, n: f64) {
        if count > 0 {
            self.joint_squares += u128::from(count) * u128::from(count);
            self.joint_plogp += plogp(count, n);
        }
    }

    fn finish(self) -> Score {
        Score {
            n_classes: self.n_classes,
            undiscerned_pairs: self.class_squares - self.joint_squares,
            entropy: (-self.class_plogp).max(0.0),
            joint_entropy: (-self.joint_plogp).max(0.0),
        }
    }
}

fn plogp(count: u64, n: f64) -> f64 {
    let p = count as f64 / n;
    p * p.log2()
}

/// The classes of rows that agree on a set of attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    classes: Vec<u32>,
    sizes: Vec<u64>,
}

impl Partition {
    /// All `n_rows` rows in one class (no class when `n_rows` is 0): the partition of S = ∅.
    ///
    /// # Errors
    /// [`Error::InvalidData`] when `n_rows` ≥ 2^32 (class ids are `u32`).
    pub fn trivial(n_rows: usize) -> Result<Self> {
        if n_rows > u32::MAX as usize {
            return Err(Error::InvalidData(format!(
                "a partition holds at most 2**32 - 1 rows, got {n_rows}"
            )));
        }
        let sizes = if n_rows == 0 {
            vec![]
        } else {
            vec![n_rows as u64]
        };
        Ok(Partition {
            classes: vec![0; n_rows],
            sizes,
        })
    }

    /// The partition by the attributes `subset` of `cols` (refined in the order given).
    ///
    /// # Errors
    /// As [`Partition::trivial`]; [`Error::InvalidData`] for an out-of-range index.
    pub fn from_columns(cols: Columns<'_>, subset: &[usize]) -> Result<Self> {
        let mut partition = Partition::trivial(cols.n_rows())?;
        for &j in subset {
            check_index(cols, j)?;
            partition = partition.refine_valid(cols.column(j), cols.cardinality(j), None);
        }
        Ok(partition)
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.classes.len()
    }

    /// Number of (non-empty) classes.
    pub fn n_classes(&self) -> usize {
        self.sizes.len()
    }

    /// The class id of each row, in `0..n_classes`.
    pub fn classes(&self) -> &[u32] {
        &self.classes
    }

    /// The number of rows of each class.
    pub fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// H(S) in bits: the entropy of the class sizes.
    pub fn entropy(&self) -> f64 {
        crate::counts::entropy(&self.sizes)
    }

    /// The partition of S ∪ {a}, where `column` holds the codes of a (cardinality
    /// `cardinality`). New ids are the ranks of the (class, value) pairs; a dense lookup
    /// table is used when n_classes · cardinality is small, a sort of the pairs otherwise.
    ///
    /// # Errors
    /// [`Error::InvalidData`] when `column` has the wrong length or a code ≥ `cardinality`;
    /// [`Error::InvalidParameter`] when `cardinality` is 0.
    pub fn refine(&self, column: &[u32], cardinality: u32) -> Result<Partition> {
        self.check_column(column, cardinality)?;
        Ok(self.refine_valid(column, cardinality, None))
    }

    fn check_column(&self, column: &[u32], cardinality: u32) -> Result<()> {
        if column.len() != self.n_rows() {
            return Err(Error::InvalidData(format!(
                "column has {} rows, expected {} (the partition's rows)",
                column.len(),
                self.n_rows()
            )));
        }
        if cardinality == 0 {
            return Err(Error::parameter("cardinality", 0, "must be >= 1"));
        }
        check_codes(column, cardinality, "column")
    }

    /// Refines by a validated column; `force_dense` overrides the layout choice (tests).
    fn refine_valid(&self, column: &[u32], cardinality: u32, force_dense: Option<bool>) -> Self {
        let n = self.n_rows();
        let card = cardinality as usize;
        let cells = self.n_classes() as u128 * u128::from(cardinality);
        if force_dense.unwrap_or_else(|| prefer_dense(cells, n)) {
            // cells ≤ max(2^16, 2n) here, so it fits in usize and the table is O(n).
            let cells = cells as usize;
            let counts = dense_counts(n, cells, "the refinement table", |table, rows| {
                for (&c, &v) in self.classes[rows.clone()].iter().zip(&column[rows]) {
                    table[c as usize * card + v as usize] += 1;
                }
            });
            // Allocating O(n) cells only fails when the rows themselves barely fit; fall
            // back to the sort, which needs no table.
            if let Ok(mut table) = counts {
                let mut sizes = Vec::new();
                for cell in table.iter_mut() {
                    if *cell > 0 {
                        sizes.push(*cell);
                        *cell = (sizes.len() - 1) as u64;
                    }
                }
                let classes = self
                    .classes
                    .par_iter()
                    .zip(column.par_iter())
                    // Ids are < n_classes ≤ n_rows < 2^32.
                    .map(|(&c, &v)| table[c as usize * card + v as usize] as u32)
                    .collect();
                return Partition { classes, sizes };
            }
        }
        let keys: Vec<u64> = self
            .classes
            .par_iter()
            .zip(column.par_iter())
            .map(|(&c, &v)| u64::from(c) * u64::from(cardinality) + u64::from(v))
            .collect();
        let pairs = SparseCounts::from_keys(&keys);
        let classes = keys
            .par_iter()
            .map(|key| pairs.keys().partition_point(|k| k < key) as u32)
            .collect();
        let (_, sizes) = pairs.into_parts();
        Partition { classes, sizes }
    }

    /// The per-class label counts n_{c,l}: a contingency table with the classes as rows.
    ///
    /// # Errors
    /// [`Error::InvalidData`] when `labels` does not have one label per row.
    pub fn label_counts(&self, labels: &Labels<'_>) -> Result<Contingency> {
        self.check_labels(labels)?;
        contingency(
            &self.classes,
            self.n_classes().max(1) as u32,
            labels.codes(),
            labels.n_labels(),
        )
    }

    fn check_labels(&self, labels: &Labels<'_>) -> Result<()> {
        if labels.codes().len() == self.n_rows() {
            Ok(())
        } else {
            Err(Error::InvalidData(format!(
                "labels has {} rows, expected {} (the partition's rows)",
                labels.codes().len(),
                self.n_rows()
            )))
        }
    }

    /// The [`Score`] of this partition itself.
    ///
    /// # Errors
    /// [`Error::InvalidData`] when `labels` does not have one label per row.
    pub fn score(&self, labels: &Labels<'_>) -> Result<Score> {
        let joint = self.label_counts(labels)?;
        let n = self.n_rows() as f64;
        let mut acc = Accumulator::default();
        for &size in &self.sizes {
            acc.class(size, n);
        }
        for count in joint.nonzero_counts() {
            acc.joint(count, n);
        }
        Ok(acc.finish())
    }

    /// Scores every candidate attribute `a` of `cols` on the partition of S ∪ {a}, in
    /// parallel over candidates (each O(n) when n_classes · |a| · n_labels = O(n), else
    /// O(n log n) through a refinement by sorting). Candidates may repeat or already belong
    /// to S (their gain is then 0).
    ///
    /// # Errors
    /// [`Error::InvalidData`] when `cols` or `labels` do not have this partition's rows, or a
    /// candidate index is out of range.
    pub fn score_candidates(
        &self,
        cols: Columns<'_>,
        labels: &Labels<'_>,
        candidates: &[usize],
    ) -> Result<Vec<Score>> {
        self.check_labels(labels)?;
        if cols.n_rows() != self.n_rows() {
            return Err(Error::InvalidData(format!(
                "the table has {} rows, expected {} (the partition's rows)",
                cols.n_rows(),
                self.n_rows()
            )));
        }
        for &a in candidates {
            check_index(cols, a)?;
        }
        candidates
            .par_iter()
            .map(|&a| self.score_column(cols.column(a), cols.cardinality(a), labels))
            .collect()
    }

    /// The score of S ∪ {a} for a validated column, without building the refinement when
    /// the (class, value, label) table is small.
    fn score_column(&self, column: &[u32], cardinality: u32, labels: &Labels<'_>) -> Result<Score> {
        let n = self.n_rows();
        let n_labels = labels.n_labels() as usize;
        let card = cardinality as usize;
        let cells = self.n_classes() as u128 * u128::from(cardinality) * n_labels as u128;
        if !prefer_dense(cells, n) {
            return self.refine_valid(column, cardinality, None).score(labels);
        }
        // Counts fit in u32 (n < 2^32); the table is O(n) cells by the test above.
        let mut table = vec![0u32; cells as usize];
        for ((&c, &v), &l) in self.classes.iter().zip(column).zip(labels.codes()) {
            table[(c as usize * card + v as usize) * n_labels + l as usize] += 1;
        }
        let nf = n as f64;
        let mut acc = Accumulator::default();
        for group in table.chunks_exact(n_labels) {
            let mut size = 0u64;
            for &count in group {
                size += u64::from(count);
                acc.joint(u64::from(count), nf);
            }
            acc.class(size, nf);
        }
        Ok(acc.finish())
    }
}

fn check_index(cols: Columns<'_>, j: usize) -> Result<()> {
    if j < cols.n_cols() {
        Ok(())
    } else {
        Err(Error::InvalidData(format!(
            "column index {j} is out of range for a table of {} columns",
            cols.n_cols()
        )))
    }
}

/// H(S) and H(Y, S) for every size-`k` subset S of `among` (indices into `cols`).
#[derive(Clone, Debug, PartialEq)]
pub struct SubsetEntropies {
    /// Subset size.
    pub k: usize,
    /// The subsets, `k` indices each, flattened; subsets in lexicographic order of their
    /// positions in `among`.
    pub subsets: Vec<usize>,
    /// H(S) in bits, one per subset.
    pub entropy: Vec<f64>,
    /// H(Y, S) in bits, one per subset.
    pub joint_entropy: Vec<f64>,
}

/// Largest number of subsets [`subset_entropies`] enumerates.
pub const MAX_SUBSETS: u128 = 50_000_000;

/// H(S) and H(Y, S) for every size-`k` subset S of the attributes `among`, by a depth-first
/// walk that refines the prefix partition once per prefix (never recounting from scratch)
/// and scores the last attribute of each subset without building its partition. Parallel
/// over the first attribute of the subsets; the output order is fixed.
///
/// # Errors
/// [`Error::InvalidData`] for an out-of-range index or labels of the wrong length;
/// [`Error::OutputTooLarge`] when there are more than [`MAX_SUBSETS`] subsets.
pub fn subset_entropies(
    cols: Columns<'_>,
    among: &[usize],
    labels: &Labels<'_>,
    k: usize,
) -> Result<SubsetEntropies> {
    for &j in among {
        check_index(cols, j)?;
    }
    let total = binomial(among.len(), k);
    if total > MAX_SUBSETS {
        return Err(Error::OutputTooLarge(format!(
            "there are {total} subsets of size {k} of {} attributes, more than {MAX_SUBSETS}",
            among.len()
        )));
    }
    let root = Partition::trivial(cols.n_rows())?;
    root.check_labels(labels)?;
    let mut out = SubsetEntropies {
        k,
        subsets: Vec::new(),
        entropy: Vec::new(),
        joint_entropy: Vec::new(),
    };
    if k == 0 {
        let score = root.score(labels)?;
        out.entropy.push(score.entropy);
        out.joint_entropy.push(score.joint_entropy);
        return Ok(out);
    }
    if k > among.len() {
        return Ok(out);
    }
    let walk = Walk {
        cols,
        among,
        labels,
        k,
    };
    let parts: Vec<Result<SubsetEntropies>> = (0..=among.len() - k)
        .into_par_iter()
        .map(|first| {
            let mut part = SubsetEntropies {
                k,
                subsets: Vec::new(),
                entropy: Vec::new(),
                joint_entropy: Vec::new(),
            };
            let mut prefix = vec![first];
            walk.descend(&root, &mut prefix, &mut part)?;
            Ok(part)
        })
        .collect();
    for part in parts {
        let part = part?;
        out.subsets.extend(part.subsets);
        out.entropy.extend(part.entropy);
        out.joint_entropy.extend(part.joint_entropy);
    }
    Ok(out)
}

struct Walk<'a, 'b> {
    cols: Columns<'a>,
    among: &'b [usize],
    labels: &'b Labels<'a>,
    k: usize,
}

impl Walk<'_, '_> {
    /// `prefix` holds positions in `among`; `parent` is the partition of all but its last.
    fn descend(
        &self,
        parent: &Partition,
        prefix: &mut Vec<usize>,
        out: &mut SubsetEntropies,
    ) -> Result<()> {
        let last = *prefix.last().unwrap_or(&0);
        let column = self.among[last];
        let (col, card) = (self.cols.column(column), self.cols.cardinality(column));
        if prefix.len() == self.k {
            let score = parent.score_column(col, card, self.labels)?;
            out.subsets.extend(prefix.iter().map(|&p| self.among[p]));
            out.entropy.push(score.entropy);
            out.joint_entropy.push(score.joint_entropy);
            return Ok(());
        }
        let refined = parent.refine_valid(col, card, None);
        let remaining = self.k - prefix.len();
        for next in last + 1..=self.among.len() - remaining {
            prefix.push(next);
            self.descend(&refined, prefix, out)?;
            prefix.pop();
        }
        Ok(())
    }
}

/// C(n, k), saturating at `u128::MAX`.
fn binomial(n: usize, k: usize) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut result: u128 = 1;
    for i in 0..k {
        result = match result.checked_mul((n - i) as u128) {
            Some(product) => product / (i as u128 + 1),
            None => return u128::MAX,
        };
    }
    result
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lcg_table(n: usize, cards: &[u32], seed: u64) -> Vec<u32> {
        let mut state = seed;
        let mut data = Vec::with_capacity(n * cards.len());
        for &card in cards {
            for _ in 0..n {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                data.push(((state >> 33) % u64::from(card)) as u32);
            }
        }
        data
    }

    /// Brute-force statistics of S from row tuples.
    fn naive(cols: Columns<'_>, subset: &[usize], labels: &[u32]) -> (usize, u128, f64, f64) {
        let n = cols.n_rows();
        let mut class: HashMap<Vec<u32>, u64> = HashMap::new();
        let mut joint: HashMap<(Vec<u32>, u32), u64> = HashMap::new();
        for i in 0..n {
            let key: Vec<u32> = subset.iter().map(|&j| cols.column(j)[i]).collect();
            *class.entry(key.clone()).or_default() += 1;
            *joint.entry((key, labels[i])).or_default() += 1;
        }
        let h = |counts: Vec<u64>| -> f64 {
            counts
                .iter()
                .map(|&c| {
                    let p = c as f64 / n as f64;
                    -p * p.log2()
                })
                .sum()
        };
        let sq = |counts: &[u64]| -> u128 {
            counts.iter().map(|&c| u128::from(c) * u128::from(c)).sum()
        };
        let class_counts: Vec<u64> = class.values().copied().collect();
        let joint_counts: Vec<u64> = joint.values().copied().collect();
        (
            class.len(),
            sq(&class_counts) - sq(&joint_counts),
            h(class_counts),
            h(joint_counts),
        )
    }

    #[test]
    fn dense_and_sorted_refinements_agree_and_rank_tuples() {
        let n = 5000;
        let cards = [3, 50, 7];
        let data = lcg_table(n, &cards, 1);
        let cols = Columns::new(&data, n, &cards).expect("cols");
        let mut dense = Partition::trivial(n).expect("trivial");
        let mut sorted = dense.clone();
        for j in 0..3 {
            dense = dense.refine_valid(cols.column(j), cards[j], Some(true));
            sorted = sorted.refine_valid(cols.column(j), cards[j], Some(false));
            assert_eq!(dense, sorted);
        }
        let mut tuples: Vec<(u32, u32, u32)> = (0..n)
            .map(|i| (data[i], data[n + i], data[2 * n + i]))
            .collect();
        tuples.sort_unstable();
        tuples.dedup();
        for i in (0..n).step_by(37) {
            let t = (data[i], data[n + i], data[2 * n + i]);
            let rank = tuples.binary_search(&t).expect("present");
            assert_eq!(dense.classes()[i] as usize, rank);
        }
        assert_eq!(dense.sizes().iter().sum::<u64>(), n as u64);
    }

    #[test]
    fn candidate_scores_match_brute_force() {
        let n = 3000;
        let cards = [2, 5, 40, 1, 300];
        let data = lcg_table(n, &cards, 2);
        let cols = Columns::new(&data, n, &cards).expect("cols");
        let y = lcg_table(n, &[3], 3);
        let labels = Labels::new(&y, 3).expect("labels");
        for selected in [vec![], vec![1], vec![2, 4]] {
            let partition = Partition::from_columns(cols, &selected).expect("partition");
            let candidates = [0, 1, 2, 3, 4];
            let scores = partition
                .score_candidates(cols, &labels, &candidates)
                .expect("scores");
            for (&a, score) in candidates.iter().zip(&scores) {
                let mut subset = selected.clone();
                subset.push(a);
                let (classes, pairs, h, hy) = naive(cols, &subset, &y);
                assert_eq!(score.n_classes as usize, classes);
                assert_eq!(score.undiscerned_pairs, pairs);
                assert!((score.entropy - h).abs() < 1e-9);
                assert!((score.joint_entropy - hy).abs() < 1e-9);
                let refined = partition.refine(cols.column(a), cards[a]).expect("refine");
                let direct = refined.score(&labels).expect("score");
                assert_eq!(direct.n_classes, score.n_classes);
                assert_eq!(direct.undiscerned_pairs, score.undiscerned_pairs);
            }
        }
    }

    #[test]
    fn discernibility_of_empty_and_full_sets() {
        let x = [0, 1, 2, 3];
        let y = [0, 0, 1, 1];
        let cols = Columns::new(&x, 4, &[4]).expect("cols");
        let labels = Labels::new(&y, 2).expect("labels");
        let empty = Partition::trivial(4)
            .expect("trivial")
            .score(&labels)
            .expect("score");
        assert_eq!(empty.discernibility(&labels), 0.0);
        let full = Partition::from_columns(cols, &[0])
            .expect("p")
            .score(&labels)
            .expect("s");
        // 8 ordered pairs differ on the label, all are discerned by x: F = 8 / 4.
        assert_eq!(full.discernibility(&labels), 2.0);
    }

    #[test]
    fn validation_errors() {
        let p = Partition::trivial(3).expect("trivial");
        assert!(p.refine(&[0, 1], 2).is_err());
        assert!(p.refine(&[0, 1, 2], 2).is_err());
        assert!(p.refine(&[0, 0, 0], 0).is_err());
        assert!(Labels::new(&[0, 3], 3).is_err());
        assert!(Labels::new(&[0], 0).is_err());
        let labels = Labels::new(&[0, 1], 2).expect("labels");
        assert!(p.score(&labels).is_err());
        let data = [0, 1, 0];
        let cols = Columns::new(&data, 3, &[2]).expect("cols");
        let labels = Labels::new(&[0, 1, 1], 2).expect("labels");
        assert!(p.score_candidates(cols, &labels, &[1]).is_err());
        assert!(Partition::from_columns(cols, &[2]).is_err());
    }

    #[test]
    fn subset_walk_matches_brute_force_and_threads() {
        let n = 2000;
        let cards = [3, 4, 2, 6, 5];
        let data = lcg_table(n, &cards, 4);
        let cols = Columns::new(&data, n, &cards).expect("cols");
        let y = lcg_table(n, &[4], 5);
        let labels = Labels::new(&y, 4).expect("labels");
        let among = [0, 2, 3, 4];
        let walk = subset_entropies(cols, &among, &labels, 2).expect("walk");
        assert_eq!(walk.entropy.len(), 6);
        for (s, subset) in walk.subsets.chunks_exact(2).enumerate() {
            let (_, _, h, hy) = naive(cols, subset, &y);
            assert!((walk.entropy[s] - h).abs() < 1e-9);
            assert!((walk.joint_entropy[s] - hy).abs() < 1e-9);
        }
        assert_eq!(&walk.subsets[..4], &[0, 2, 0, 3]);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool")
            .install(|| subset_entropies(cols, &among, &labels, 3).expect("walk"));
        assert_eq!(
            one,
            subset_entropies(cols, &among, &labels, 3).expect("walk")
        );
        let none = subset_entropies(cols, &among, &labels, 0).expect("k = 0");
        assert_eq!(none.entropy, vec![0.0]);
        assert!((none.joint_entropy[0] - labels.entropy()).abs() < 1e-12);
        assert!(
            subset_entropies(cols, &among, &labels, 5)
                .expect("k > m")
                .entropy
                .is_empty()
        );
        assert_eq!(binomial(60, 30), 118264581564861424);
    }
}
