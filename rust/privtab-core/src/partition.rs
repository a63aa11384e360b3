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

use std::borrow::Cow;

use rayon::prelude::*;

use crate::counts::SparseCounts;
use crate::counts::{Contingency, contingency, dense_counts, prefer_dense, value_counts};
use crate::noise::exponential_mechanism;
use crate::resources::alloc_output;
use crate::rng::Seed;
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

/// Cells of the per-class count table above which a candidate is scored by sorting.
const SEARCH_DENSE_CELLS: u128 = 1 << 20;

/// Interleaved count tables of a large class (see `undiscerned_by`).
const LANES: usize = 4;

/// Rows per parallel task when the class layout is rebuilt.
const REBUILD_CHUNK: usize = 1 << 16;

/// Kept rows from which [`Layout::Auto`] copies the columns into layout order: below it a
/// column (4 bytes a row) stays in the per-core cache, so reading it through the row
/// index costs about what a sequential scan of a copy does, and moving every remaining
/// column each round would cost more than it saves.
const COPY_MIN_ROWS: usize = 1 << 18;

/// Largest (class, value, label) table of the full passes of [`Layout::Auto`]: while
/// every candidate's table is this small (and no larger than the table has rows), a
/// pass over all rows counting into it, which needs no layout at all, is the cheapest.
const FULL_PASS_CELLS: u128 = 1 << 16;

/// How a [`DiscernibilitySearch`] reads the candidate columns of the rows it keeps. The
/// choice only changes the speed: every layout gives the same gains, exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// [`FullPass`](Layout::FullPass) while the partition of S is coarse (every
    /// candidate's count table has at most min(2^16, n) cells), then
    /// [`Copied`](Layout::Copied) while at least 2^18 rows are kept, then
    /// [`Indexed`](Layout::Indexed).
    #[default]
    Auto,
    /// No layout: every round scans all rows of the table with their class of S
    /// ([`Partition::score_candidates`]), and a new attribute refines the partition.
    FullPass,
    /// Read the table's own columns through the row index of the layout; a new attribute
    /// only moves the labels and the row index.
    Indexed,
    /// Keep a copy of every remaining column in layout order, so that a round scans
    /// memory sequentially; a new attribute moves every remaining column.
    Copied,
}

/// Incremental search for attributes that discern the labels (paper 001 §2.2).
///
/// Holds the partition of the selected set S and, for the remaining candidates, what is
/// needed to score S ∪ {a}. Only rows of *mixed* classes (rows with two or more labels)
/// are kept: a class with a single label refines into classes with a single label, so it
/// never contributes to the undiscerned pairs Σ_c (n_c² − Σ_l n_{c,l}²) again. The kept
/// rows are stored grouped by class, so that scoring a candidate is one O(rows) pass with a
/// small count table per class, and the work of a round shrinks as S separates the labels.
/// Adding an attribute refines the layout once (a stable counting sort inside each
/// class), never recomputing the partition from scratch. Candidate values are read
/// through the row index of the layout or from copies in layout order (see [`Layout`]).
///
/// All quantities are exact integers, so results depend neither on the thread count nor
/// on the layout.
#[derive(Clone, Debug)]
pub struct DiscernibilitySearch<'a> {
    cols: Columns<'a>,
    n_labels: u32,
    layout: Layout,
    differing: u128,
    undiscerned: u128,
    selected: Vec<usize>,
    remaining: Vec<usize>,
    /// Class `b` of the layout holds positions `bounds[b]..bounds[b + 1]`.
    bounds: Vec<usize>,
    labels: Cow<'a, [u32]>,
    /// The table row at each position of the layout; `None` while it is the identity.
    rows: Option<Vec<u32>>,
    /// Either empty (columns are read through `rows`) or one copy per entry of
    /// `remaining`, in layout order.
    copies: Vec<Vec<u32>>,
    /// The partition of S while rounds are full passes; the layout is unused then.
    full: Option<Partition>,
    all_labels: Labels<'a>,
}

/// The values of one candidate at the positions of the layout.
#[derive(Clone, Copy)]
enum Values<'s> {
    Direct(&'s [u32]),
    Indexed { column: &'s [u32], rows: &'s [u32] },
}

impl<'a> DiscernibilitySearch<'a> {
    /// Starts from S = ∅ with every column of `cols` as a candidate, in the
    /// [`Layout::Auto`] layout.
    ///
    /// # Errors
    /// [`Error::InvalidData`] when `labels` does not have one label per row, or there are
    /// 2^32 rows or more.
    pub fn new(cols: Columns<'a>, labels: &Labels<'a>) -> Result<Self> {
        Self::with_layout(cols, labels, Layout::Auto)
    }

    /// As [`new`](Self::new), in the given layout.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_layout(cols: Columns<'a>, labels: &Labels<'a>, layout: Layout) -> Result<Self> {
        let n = cols.n_rows();
        if labels.codes().len() != n {
            return Err(Error::InvalidData(format!(
                "labels has {} rows, expected {} (the table's rows)",
                labels.codes().len(),
                n
            )));
        }
        if n > u32::MAX as usize {
            return Err(Error::InvalidData(format!(
                "a discernibility search holds at most 2**32 - 1 rows, got {n}"
            )));
        }
        let differing = labels.differing_pairs();
        let mixed = differing > 0;
        let mut search = DiscernibilitySearch {
            cols,
            n_labels: labels.n_labels(),
            layout,
            differing,
            undiscerned: differing,
            selected: Vec::new(),
            remaining: (0..cols.n_cols()).collect(),
            bounds: if mixed { vec![0, n] } else { vec![0] },
            labels: Cow::Borrowed(if mixed { labels.codes() } else { &[][..] }),
            rows: None,
            copies: Vec::new(),
            full: None,
            all_labels: labels.clone(),
        };
        if mixed && matches!(layout, Layout::Auto | Layout::FullPass) {
            search.full = Some(Partition::trivial(n)?);
            search.leave_full_pass()?;
        }
        Ok(search)
    }

    /// Under [`Layout::Auto`], trades the full passes for the grouped layout once the
    /// partition is too fine for them: the rows of the mixed classes, grouped by class
    /// (in row order inside a class).
    fn leave_full_pass(&mut self) -> Result<()> {
        let Some(partition) = &self.full else {
            return Ok(());
        };
        let n = self.n_rows();
        let max_card = self
            .remaining
            .iter()
            .map(|&j| self.cardinalities()[j])
            .max()
            .unwrap_or(1);
        let cells =
            partition.n_classes() as u128 * u128::from(max_card) * u128::from(self.n_labels);
        if self.layout == Layout::FullPass || cells <= FULL_PASS_CELLS.min(n as u128) {
            return Ok(());
        }
        let classes = partition.classes();
        let n_classes = partition.n_classes();
        let labels = self.all_labels.codes();
        let mut first = alloc_output::<u32>(n_classes, "the class table")?;
        first.fill(u32::MAX);
        let mut mixed = alloc_output::<bool>(n_classes, "the class table")?;
        for (&c, &l) in classes.iter().zip(labels) {
            let slot = &mut first[c as usize];
            if *slot == u32::MAX {
                *slot = l;
            } else if *slot != l {
                mixed[c as usize] = true;
            }
        }
        // Start of every mixed class in the layout (unused for pure classes).
        let mut starts = alloc_output::<usize>(n_classes, "the class table")?;
        let mut bounds = vec![0usize];
        for (c, &size) in partition.sizes().iter().enumerate() {
            if mixed[c] {
                let start = *bounds.last().unwrap_or(&0);
                starts[c] = start;
                bounds.push(start + size as usize);
            }
        }
        let kept = *bounds.last().unwrap_or(&0);
        let mut rows = alloc_output::<u32>(kept, "the layout")?;
        for (i, &c) in classes.iter().enumerate() {
            if mixed[c as usize] {
                let slot = &mut starts[c as usize];
                // Rows are < n < 2^32 (checked by `with_layout`).
                rows[*slot] = i as u32;
                *slot += 1;
            }
        }
        self.labels = Cow::Owned(gather(labels, &rows)?);
        self.copies = if rows.len() >= COPY_MIN_ROWS {
            self.gather_all(|p| (self.cols.column(self.remaining[p]), &rows[..]))?
        } else {
            Vec::new()
        };
        self.rows = Some(rows);
        self.bounds = bounds;
        self.full = None;
        Ok(())
    }

    /// Number of rows of the table.
    pub fn n_rows(&self) -> usize {
        self.cols.n_rows()
    }

    /// The attributes selected so far, in the order added.
    pub fn selected(&self) -> &[usize] {
        &self.selected
    }

    /// The candidates not selected yet, in increasing order.
    pub fn remaining(&self) -> &[usize] {
        &self.remaining
    }

    /// Ordered pairs of rows with different labels: n·F(A) can be at most this.
    pub fn differing_pairs(&self) -> u128 {
        self.differing
    }

    /// n·F(S) for the selected set S: ordered pairs that differ on S and on the label.
    pub fn discerned_pairs(&self) -> u128 {
        self.differing - self.undiscerned
    }

    /// The rows a round has to scan: all rows during full passes, else the rows still
    /// in mixed classes.
    pub fn active_rows(&self) -> usize {
        self.labels.len()
    }

    /// Whether rounds are currently full passes over all rows.
    pub fn in_full_pass(&self) -> bool {
        self.full.is_some()
    }

    /// Whether the remaining columns are currently held as copies in layout order.
    pub fn holds_copies(&self) -> bool {
        !self.copies.is_empty()
    }

    /// n·(F(S ∪ {a}) − F(S)) for every remaining candidate `a` (in the order of
    /// [`remaining`](Self::remaining)), in one parallel pass over the candidates.
    ///
    /// # Errors
    /// [`Error::OutputTooLarge`] when a count table cannot be allocated.
    pub fn gains(&self) -> Result<Vec<u128>> {
        let undiscerned: Vec<Result<u128>> = (0..self.remaining.len())
            .into_par_iter()
            .map(|p| self.undiscerned_with(p))
            .collect();
        undiscerned
            .into_iter()
            .map(|u| Ok(self.undiscerned.saturating_sub(u?)))
            .collect()
    }

    fn values(&self, p: usize) -> Values<'_> {
        if let Some(copy) = self.copies.get(p) {
            return Values::Direct(copy);
        }
        let column = self.cols.column(self.remaining[p]);
        match &self.rows {
            None => Values::Direct(column),
            Some(rows) => Values::Indexed { column, rows },
        }
    }

    /// Σ over mixed classes c of S of the undiscerned pairs of c refined by candidate `p`.
    fn undiscerned_with(&self, p: usize) -> Result<u128> {
        if self.labels.is_empty() {
            return Ok(0);
        }
        if let Some(partition) = &self.full {
            // Pure classes add no undiscerned pairs, so summing over all classes gives
            // the same integer as the grouped layout's sum over the mixed ones.
            let a = self.remaining[p];
            let score = partition.score_column(
                self.cols.column(a),
                self.cardinalities()[a],
                &self.all_labels,
            )?;
            return Ok(score.undiscerned_pairs);
        }
        let card = self.cardinalities()[self.remaining[p]];
        match self.values(p) {
            Values::Direct(column) => self.undiscerned_by(card, |r| column[r].iter().copied()),
            Values::Indexed { column, rows } => self.undiscerned_by(card, |r| {
                // Rows of the layout are rows of the table, so the reads are in bounds.
                rows[r].iter().map(|&i| column[i as usize])
            }),
        }
    }

    fn cardinalities(&self) -> &'a [u32] {
        self.cols.cardinalities()
    }

    /// [`undiscerned_with`](Self::undiscerned_with) for a candidate of cardinality `card`
    /// whose values at the positions `r` of the layout are `values(r)`.
    fn undiscerned_by<I, F>(&self, card: u32, values: F) -> Result<u128>
    where
        F: Fn(std::ops::Range<usize>) -> I,
        I: Iterator<Item = u32> + Clone,
    {
        let n_labels = self.n_labels as usize;
        let cells = u128::from(card) * n_labels as u128;
        if cells > SEARCH_DENSE_CELLS {
            return Ok(self.undiscerned_sorted(values, n_labels));
        }
        let card = card as usize;
        let mut totals = alloc_output::<u32>(card, "the class count table")?;
        let cells = cells as usize;
        // LANES interleaved tables for large classes, so that rows hitting the same cell
        // in a row do not wait for each other's increments.
        let mut lanes = alloc_output::<u32>(LANES * cells, "the class count table")?;
        let mut total: u128 = 0;
        for block in self.bounds.windows(2) {
            let rows = block[0]..block[1];
            let labels = &self.labels[rows.clone()];
            let values = values(rows);
            if labels.len() >= lanes.len() {
                // A large class: count, then read the squares off the table.
                for (i, (v, &l)) in values.zip(labels).enumerate() {
                    lanes[(i % LANES) * cells + v as usize * n_labels + l as usize] += 1;
                }
                let (joint, others) = lanes.split_at_mut(cells);
                for lane in others.chunks_exact_mut(cells) {
                    for (count, extra) in joint.iter_mut().zip(lane.iter_mut()) {
                        *count += *extra;
                        *extra = 0;
                    }
                }
                let (mut value_sq, mut joint_sq) = (0u128, 0u128);
                for counts in joint.chunks_exact_mut(n_labels) {
                    let mut size = 0u64;
                    for count in counts.iter_mut() {
                        size += u64::from(*count);
                        joint_sq += u128::from(*count) * u128::from(*count);
                        *count = 0;
                    }
                    value_sq += u128::from(size) * u128::from(size);
                }
                total += value_sq - joint_sq;
                continue;
            }
            // A small class: each row adds 2 × (earlier rows with its value and another
            // label), which sums to Σ_v (m_v² − Σ_l m_{v,l}²) with no pass over the
            // table; the touched cells are reset through the same rows.
            let mut half: u64 = 0;
            for (v, &l) in values.clone().zip(labels) {
                let (v, cell) = (v as usize, v as usize * n_labels + l as usize);
                half += u64::from(totals[v] - lanes[cell]);
                totals[v] += 1;
                lanes[cell] += 1;
            }
            for (v, &l) in values.zip(labels) {
                totals[v as usize] = 0;
                lanes[v as usize * n_labels + l as usize] = 0;
            }
            total += 2 * u128::from(half);
        }
        Ok(total)
    }

    /// As [`undiscerned_by`](Self::undiscerned_by) for huge value × label domains: each
    /// class's (value, label) pairs are sorted and counted in runs.
    fn undiscerned_sorted<I, F>(&self, values: F, n_labels: usize) -> u128
    where
        F: Fn(std::ops::Range<usize>) -> I,
        I: Iterator<Item = u32>,
    {
        let mut keys: Vec<u64> = Vec::new();
        let mut total: u128 = 0;
        for block in self.bounds.windows(2) {
            let rows = block[0]..block[1];
            keys.clear();
            keys.extend(
                values(rows.clone())
                    .zip(&self.labels[rows])
                    .map(|(v, &l)| u64::from(v) * n_labels as u64 + u64::from(l)),
            );
            keys.sort_unstable();
            let (mut value_sq, mut joint_sq) = (0u128, 0u128);
            for run in keys.chunk_by(|a, b| a / n_labels as u64 == b / n_labels as u64) {
                value_sq += (run.len() as u128).pow(2);
                for joint in run.chunk_by(|a, b| a == b) {
                    joint_sq += (joint.len() as u128).pow(2);
                }
            }
            total += value_sq - joint_sq;
        }
        total
    }

    /// Adds the candidate `attribute` to S and refines the layout by it.
    ///
    /// # Errors
    /// [`Error::InvalidData`] when `attribute` is not a remaining candidate;
    /// [`Error::OutputTooLarge`] when the refined layout cannot be allocated.
    pub fn add(&mut self, attribute: usize) -> Result<()> {
        let Ok(p) = self.remaining.binary_search(&attribute) else {
            return Err(Error::InvalidData(format!(
                "attribute {attribute} is not a remaining candidate (selected: {:?}, \
                 columns: {})",
                self.selected,
                self.cardinalities().len()
            )));
        };
        let undiscerned = self.undiscerned_with(p)?;
        if let Some(partition) = &self.full {
            let card = self.cardinalities()[attribute];
            let refined = partition.refine_valid(self.cols.column(attribute), card, None);
            self.full = Some(refined);
            self.remaining.remove(p);
            self.selected.push(attribute);
            self.undiscerned = undiscerned;
            return self.leave_full_pass();
        }
        let column: Cow<'_, [u32]> = match self.values(p) {
            Values::Direct(column) => Cow::Borrowed(column),
            Values::Indexed { column, rows } => Cow::Owned(gather(column, rows)?),
        };
        let card = self.cardinalities()[attribute];
        let refined = if self.labels.is_empty() {
            None
        } else {
            Some(self.refined_layout(&column, card)?)
        };
        drop(column);
        if !self.copies.is_empty() {
            self.copies.remove(p);
        }
        self.remaining.remove(p);
        self.selected.push(attribute);
        self.undiscerned = undiscerned;
        let Some((source, bounds)) = refined else {
            return Ok(());
        };
        self.labels = Cow::Owned(gather(&self.labels, &source)?);
        let rows = match &self.rows {
            None => source.clone(),
            Some(rows) => gather(rows, &source)?,
        };
        let copy = match self.layout {
            Layout::Auto | Layout::FullPass => rows.len() >= COPY_MIN_ROWS,
            Layout::Indexed => false,
            Layout::Copied => true,
        };
        self.copies = if !copy {
            Vec::new()
        } else if self.copies.is_empty() {
            // Straight from the table: its rows in layout order.
            self.gather_all(|p| (self.cols.column(self.remaining[p]), &rows[..]))?
        } else {
            // From the previous copies, whose positions `source` points into: each
            // new class reads from inside its parent class, which keeps reads local.
            self.gather_all(|p| (&self.copies[p][..], &source[..]))?
        };
        self.rows = Some(rows);
        self.bounds = bounds;
        Ok(())
    }

    /// One gathered copy per remaining candidate: `values[positions]` from `from(p)`.
    fn gather_all<'s, F>(&'s self, from: F) -> Result<Vec<Vec<u32>>>
    where
        F: Fn(usize) -> (&'s [u32], &'s [u32]) + Sync,
    {
        (0..self.remaining.len())
            .into_par_iter()
            .map(|p| {
                let (values, positions) = from(p);
                gather(values, positions)
            })
            .collect()
    }

    /// The positions (in the current layout) of the rows of the mixed classes of S ∪ {a},
    /// grouped by class in (class, value) order, with the new class bounds. Parallel over
    /// fixed groups of classes, so the layout does not depend on the thread count.
    fn refined_layout(&self, column: &[u32], card: u32) -> Result<(Vec<u32>, Vec<usize>)> {
        let mut groups = vec![0usize];
        for (b, block) in self.bounds.windows(2).enumerate() {
            if block[1] - self.bounds[*groups.last().unwrap_or(&0)] >= REBUILD_CHUNK {
                groups.push(b + 1);
            }
        }
        let n_blocks = self.bounds.len() - 1;
        if *groups.last().unwrap_or(&0) != n_blocks {
            groups.push(n_blocks);
        }
        let parts: Vec<Result<(Vec<u32>, Vec<usize>)>> = groups
            .par_windows(2)
            .map(|g| self.refine_blocks(column, card, g[0]..g[1]))
            .collect();
        let mut source = Vec::new();
        let mut bounds = vec![0usize];
        for part in parts {
            let (src, sizes) = part?;
            source
                .try_reserve(src.len())
                .map_err(|_| Error::OutputTooLarge("the refined layout".to_string()))?;
            source.extend_from_slice(&src);
            for size in sizes {
                bounds.push(bounds.last().unwrap_or(&0) + size);
            }
        }
        Ok((source, bounds))
    }

    fn refine_blocks(
        &self,
        column: &[u32],
        card: u32,
        blocks: std::ops::Range<usize>,
    ) -> Result<(Vec<u32>, Vec<usize>)> {
        let card = card as usize;
        let mut starts: Vec<u32> = Vec::new();
        let mut sorted: Vec<u32> = Vec::new();
        let mut source = Vec::new();
        let mut sizes = Vec::new();
        for b in blocks {
            let (start, end) = (self.bounds[b], self.bounds[b + 1]);
            let values = &column[start..end];
            sorted.clear();
            // A counting sort costs O(card) per class, so it is used for classes at
            // least that large; smaller classes are sorted by comparison (stable).
            if values.len() >= card {
                if starts.is_empty() {
                    starts = alloc_output::<u32>(card, "the refinement table")?;
                }
                starts.fill(0);
                for &v in values {
                    starts[v as usize] += 1;
                }
                let mut offset = 0u32;
                for slot in starts.iter_mut() {
                    let count = *slot;
                    *slot = offset;
                    offset += count;
                }
                sorted.resize(values.len(), 0);
                for (i, &v) in values.iter().enumerate() {
                    let slot = &mut starts[v as usize];
                    sorted[*slot as usize] = (start + i) as u32;
                    *slot += 1;
                }
            } else {
                sorted.extend((start..end).map(|pos| pos as u32));
                sorted.sort_by_key(|&pos| column[pos as usize]);
            }
            for class in sorted.chunk_by(|&a, &b| column[a as usize] == column[b as usize]) {
                let first = self.labels[class[0] as usize];
                if class.iter().any(|&pos| self.labels[pos as usize] != first) {
                    source.extend_from_slice(class);
                    sizes.push(class.len());
                }
            }
        }
        Ok((source, sizes))
    }
}

fn gather(values: &[u32], positions: &[u32]) -> Result<Vec<u32>> {
    let mut out = alloc_output::<u32>(positions.len(), "the refined layout")?;
    out.par_chunks_mut(REBUILD_CHUNK)
        .zip(positions.par_chunks(REBUILD_CHUNK))
        .for_each(|(out, pos)| {
            for (slot, &p) in out.iter_mut().zip(pos) {
                *slot = values[p as usize];
            }
        });
    Ok(out)
}

/// How each round of a discernibility selection picks its attribute.
#[derive(Clone, Copy, Debug)]
pub enum Rule<'s> {
    /// The largest gain F(S ∪ {a}) − F(S), ties to the lowest index (NonPrivateKD).
    Greedy,
    /// P(a) ∝ exp(`epsilon` · (F(S ∪ {a}) − F(S))) by Gumbel-max, round `r` drawing from
    /// `seed.derive(r)` (PrivateKD with ε' = `epsilon`).
    Exponential {
        /// ε' of one round.
        epsilon: f64,
        /// The key of the whole selection.
        seed: &'s Seed,
    },
}

/// The attributes chosen by a selection, in order, with n·F of every prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// Column indices in the order chosen.
    pub order: Vec<usize>,
    /// n·F(S_i) after step i: ordered pairs discerned by the first i + 1 attributes.
    pub discerned_pairs: Vec<u128>,
}

/// k rounds of discernibility selection over the columns of `cols` (paper 001,
/// Algorithm 1): each round scores every remaining candidate in one parallel pass
/// ([`DiscernibilitySearch::gains`]) and picks one by `rule`. O(k·d·n) overall.
///
/// # Privacy
/// With [`Rule::Exponential`] and `epsilon` = ε', one round is 4ε'-differentially private
/// under replace-one neighbours (F has sensitivity 2, and the mechanism uses exp(ε'·u)
/// rather than exp(ε'·u/(2Δ))), and the k rounds 4kε' (Theorem 1 of the paper).
///
/// # Errors
/// [`Error::InvalidParameter`] when `k` exceeds the number of columns or `epsilon` is not
/// finite and > 0; errors of [`DiscernibilitySearch::new`].
pub fn select_discerning(
    cols: Columns<'_>,
    labels: &Labels<'_>,
    k: usize,
    rule: Rule<'_>,
) -> Result<Selection> {
    select_discerning_in(cols, labels, k, rule, Layout::Auto)
}

/// [`select_discerning`] with the search in the given [`Layout`] (the result does not
/// depend on it).
///
/// # Privacy
/// As [`select_discerning`].
///
/// # Errors
/// As [`select_discerning`].
pub fn select_discerning_in(
    cols: Columns<'_>,
    labels: &Labels<'_>,
    k: usize,
    rule: Rule<'_>,
    layout: Layout,
) -> Result<Selection> {
    if k > cols.n_cols() {
        return Err(Error::InvalidParameter {
            name: "n_features",
            value: format!("{k} ({} columns)", cols.n_cols()),
            rule: "must be <= the number of columns",
        });
    }
    if let Rule::Exponential { epsilon, .. } = rule {
        crate::error::check_positive_finite("epsilon", epsilon)?;
    }
    let mut search = DiscernibilitySearch::with_layout(cols, labels, layout)?;
    let mut out = Selection {
        order: Vec::with_capacity(k),
        discerned_pairs: Vec::with_capacity(k),
    };
    for round in 0..k {
        let gains = search.gains()?;
        let pick = match rule {
            Rule::Greedy => argmax_first(&gains),
            Rule::Exponential { epsilon, seed } => {
                let weights = log_weights(&gains, epsilon, search.n_rows());
                exponential_mechanism(&weights, 1, false, &seed.derive(round as u64))?[0]
            }
        };
        let attribute = search.remaining()[pick];
        search.add(attribute)?;
        out.order.push(attribute);
        out.discerned_pairs.push(search.discerned_pairs());
    }
    Ok(out)
}

/// MDA(σ): the shortest prefix S of the greedy order with F(S) ≥ (1 − σ)·F(A), compared
/// as n·F(S) ≥ (1 − σ)·n·F(A) in floating point; empty when F(A) = 0.
///
/// # Errors
/// [`Error::InvalidParameter`] when `sigma` is not in [0, 1); errors of
/// [`DiscernibilitySearch::new`].
pub fn minimum_discerning(cols: Columns<'_>, labels: &Labels<'_>, sigma: f64) -> Result<Selection> {
    minimum_discerning_in(cols, labels, sigma, Layout::Auto)
}

/// [`minimum_discerning`] with the search in the given [`Layout`] (the result does not
/// depend on it).
///
/// # Errors
/// As [`minimum_discerning`].
pub fn minimum_discerning_in(
    cols: Columns<'_>,
    labels: &Labels<'_>,
    sigma: f64,
    layout: Layout,
) -> Result<Selection> {
    if !(0.0..1.0).contains(&sigma) {
        return Err(Error::parameter("sigma", sigma, "must be in [0, 1)"));
    }
    let mut search = DiscernibilitySearch::with_layout(cols, labels, layout)?;
    let all: Vec<usize> = (0..cols.n_cols()).collect();
    let full = Partition::from_columns(cols, &all)?.score(labels)?;
    let target = (1.0 - sigma) * (search.differing_pairs() - full.undiscerned_pairs) as f64;
    let mut out = Selection {
        order: Vec::new(),
        discerned_pairs: Vec::new(),
    };
    if target == 0.0 {
        return Ok(out);
    }
    while (search.discerned_pairs() as f64) < target && !search.remaining().is_empty() {
        let gains = search.gains()?;
        let attribute = search.remaining()[argmax_first(&gains)];
        search.add(attribute)?;
        out.order.push(attribute);
        out.discerned_pairs.push(search.discerned_pairs());
    }
    Ok(out)
}

/// ε'·(gain − max gain)/n: the log-weights of exp(ε'·ΔF) shifted by their maximum, so that
/// no product overflows (an underflow to −inf only drops a weight below e^−700).
fn log_weights(gains: &[u128], epsilon: f64, n_rows: usize) -> Vec<f64> {
    let top = gains.iter().copied().max().unwrap_or(0);
    let n = n_rows.max(1) as f64;
    gains
        .iter()
        .map(|&g| -(epsilon * ((top - g) as f64 / n)))
        .collect()
}

fn argmax_first(values: &[u128]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best
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
    /// Undiscerned pairs of `subset` by brute force over row tuples.
    fn naive_undiscerned(cols: Columns<'_>, subset: &[usize], labels: &[u32]) -> u128 {
        naive(cols, subset, labels).1
    }

    fn search_table(n: usize, seed: u64) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        // A constant column, a huge domain (sorted scoring, comparison refinement), and
        // labels that depend on the first columns so that gains differ.
        let cards = vec![3, 1, 5, 1 << 21, 2, 40, 7];
        let mut data = lcg_table(n, &cards, seed);
        let noise = lcg_table(n, &[4], seed + 1);
        let y: Vec<u32> = (0..n)
            .map(|i| (data[i] + data[2 * n + i] / 2 + noise[i] / 3) % 3)
            .collect();
        for v in &mut data[3 * n..4 * n] {
            *v %= 1 << 12;
            *v *= 300;
        }
        (data, cards, y)
    }

    #[test]
    fn search_gains_match_brute_force_along_the_greedy_path() {
        for (n, seed) in [(400, 7), (2500, 8), (1, 9), (2, 10)] {
            let (data, cards, y) = search_table(n, seed);
            let cols = Columns::new(&data, n, &cards).expect("cols");
            let labels = Labels::new(&y, 3).expect("labels");
            let mut search = DiscernibilitySearch::new(cols, &labels).expect("search");
            let mut chosen: Vec<usize> = Vec::new();
            while !search.remaining().is_empty() {
                let before = naive_undiscerned(cols, &chosen, &y);
                assert_eq!(search.discerned_pairs(), labels.differing_pairs() - before);
                let gains = search.gains().expect("gains");
                let mut best = (0u128, usize::MAX);
                for (&a, &gain) in search.remaining().iter().zip(&gains) {
                    let mut subset = chosen.clone();
                    subset.push(a);
                    assert_eq!(gain, before - naive_undiscerned(cols, &subset, &y));
                    if best.1 == usize::MAX || gain > best.0 {
                        best = (gain, a);
                    }
                }
                search.add(best.1).expect("add");
                chosen.push(best.1);
            }
            let greedy =
                select_discerning(cols, &labels, cards.len(), Rule::Greedy).expect("greedy");
            assert_eq!(greedy.order, chosen);
            assert!(search.add(0).is_err());
        }
    }

    #[test]
    fn layouts_give_identical_gains_and_selections() {
        // 300,000 rows start above COPY_MIN_ROWS, so Auto copies and later reads through
        // the row index once the kept rows fall below it.
        for (n, seed) in [(2500, 21), (300_000, 22)] {
            let (data, cards, y) = search_table(n, seed);
            let cols = Columns::new(&data, n, &cards).expect("cols");
            let labels = Labels::new(&y, 3).expect("labels");
            let layouts = [
                Layout::Indexed,
                Layout::Copied,
                Layout::Auto,
                Layout::FullPass,
            ];
            let mut searches: Vec<DiscernibilitySearch<'_>> = layouts
                .iter()
                .map(|&l| DiscernibilitySearch::with_layout(cols, &labels, l).expect("search"))
                .collect();
            let mut auto_copied = Vec::new();
            let mut full_pass = Vec::new();
            while !searches[0].remaining().is_empty() {
                let gains = searches[0].gains().expect("gains");
                for search in &searches[1..] {
                    assert_eq!(search.gains().expect("gains"), gains);
                    if !search.in_full_pass() {
                        assert_eq!(search.active_rows(), searches[0].active_rows());
                    }
                }
                full_pass.push(searches[2].in_full_pass());
                auto_copied.push(searches[2].holds_copies());
                // Not the greedy pick, so that the path differs from the other tests.
                let pick = searches[0].remaining()[gains.len() / 2];
                for search in &mut searches {
                    search.add(pick).expect("add");
                }
            }
            assert!(!searches[0].holds_copies());
            // A column of 2^21 values makes Auto group the rows from the start.
            assert!(!full_pass.iter().any(|&f| f), "{full_pass:?}");
            assert!(searches[3].in_full_pass());
            if n > COPY_MIN_ROWS {
                assert!(auto_copied.iter().any(|&c| c), "{auto_copied:?}");
                assert!(!auto_copied.last().expect("rounds"), "{auto_copied:?}");
            }
            let seed = Seed::from_u64(5);
            let rule = Rule::Exponential {
                epsilon: 0.01,
                seed: &seed,
            };
            let reference = select_discerning_in(cols, &labels, 5, rule, Layout::Indexed);
            for layout in layouts {
                for threads in [1, 2] {
                    let got = crate::noise::test_util::in_pool(threads, || {
                        select_discerning_in(cols, &labels, 5, rule, layout).expect("select")
                    });
                    assert_eq!(&got, reference.as_ref().expect("reference"));
                }
                let mda = minimum_discerning_in(cols, &labels, 0.2, layout).expect("mda");
                assert_eq!(
                    mda,
                    minimum_discerning_in(cols, &labels, 0.2, Layout::Indexed).expect("mda")
                );
            }
        }
    }

    #[test]
    fn auto_layout_leaves_full_passes_for_the_grouped_layout() {
        let n = 20_000;
        let cards = [3, 5, 2, 4, 6, 30, 30, 30];
        let data = lcg_table(n, &cards, 31);
        let y = lcg_table(n, &[2], 32);
        let cols = Columns::new(&data, n, &cards).expect("cols");
        let labels = Labels::new(&y, 2).expect("labels");
        let mut auto = DiscernibilitySearch::new(cols, &labels).expect("auto");
        let mut indexed =
            DiscernibilitySearch::with_layout(cols, &labels, Layout::Indexed).expect("indexed");
        let mut path = Vec::new();
        while !auto.remaining().is_empty() {
            path.push(auto.in_full_pass());
            let gains = auto.gains().expect("gains");
            assert_eq!(gains, indexed.gains().expect("gains"));
            let pick = auto.remaining()[argmax_first(&gains)];
            auto.add(pick).expect("add");
            indexed.add(pick).expect("add");
            assert_eq!(auto.discerned_pairs(), indexed.discerned_pairs());
        }
        assert!(path[0] && !path[path.len() - 1], "{path:?}");
    }

    #[test]
    fn exponential_rounds_match_a_loop_over_the_partition_kernel() {
        let n = 3000;
        let (data, cards, y) = search_table(n, 11);
        let cols = Columns::new(&data, n, &cards).expect("cols");
        let labels = Labels::new(&y, 3).expect("labels");
        let seed = Seed::from_u64(42);
        for epsilon in [1e-3, 0.05, 1e6] {
            let rule = Rule::Exponential {
                epsilon,
                seed: &seed,
            };
            let one = crate::noise::test_util::in_pool(1, || {
                select_discerning(cols, &labels, 5, rule).expect("one thread")
            });
            let two = crate::noise::test_util::in_pool(2, || {
                select_discerning(cols, &labels, 5, rule).expect("two threads")
            });
            assert_eq!(one, two);
            let mut partition = Partition::trivial(n).expect("trivial");
            let mut remaining: Vec<usize> = (0..cards.len()).collect();
            let mut current = labels.differing_pairs();
            for round in 0..5 {
                let scores = partition
                    .score_candidates(cols, &labels, &remaining)
                    .expect("scores");
                let gains: Vec<u128> = scores
                    .iter()
                    .map(|s| current - s.undiscerned_pairs)
                    .collect();
                let weights = log_weights(&gains, epsilon, n);
                let pick = exponential_mechanism(&weights, 1, false, &seed.derive(round))
                    .expect("draw")[0];
                let a = remaining.remove(pick);
                assert_eq!(one.order[round as usize], a);
                current = scores[pick].undiscerned_pairs;
                partition = partition.refine(cols.column(a), cards[a]).expect("refine");
            }
        }
    }

    #[test]
    fn minimum_discerning_is_the_shortest_greedy_prefix() {
        let n = 1500;
        let (data, cards, y) = search_table(n, 12);
        let cols = Columns::new(&data, n, &cards).expect("cols");
        let labels = Labels::new(&y, 3).expect("labels");
        let greedy = select_discerning(cols, &labels, cards.len(), Rule::Greedy).expect("g");
        let all: Vec<usize> = (0..cards.len()).collect();
        let full = labels.differing_pairs() - naive_undiscerned(cols, &all, &y);
        for sigma in [0.0, 0.1, 0.5, 0.99] {
            let mda = minimum_discerning(cols, &labels, sigma).expect("mda");
            let target = (1.0 - sigma) * full as f64;
            let len = greedy
                .discerned_pairs
                .iter()
                .position(|&d| d as f64 >= target)
                .expect("reached")
                + 1;
            assert_eq!(mda.order, greedy.order[..len]);
        }
        let same = vec![1u32; n];
        let pure = Labels::new(&same, 3).expect("labels");
        assert!(
            minimum_discerning(cols, &pure, 0.1)
                .expect("mda")
                .order
                .is_empty()
        );
        let greedy = select_discerning(cols, &pure, 3, Rule::Greedy).expect("g");
        assert_eq!(greedy.order, vec![0, 1, 2]);
    }

    #[test]
    fn selection_validation_errors() {
        let data = [0, 1, 0, 1];
        let cols = Columns::new(&data, 4, &[2]).expect("cols");
        let labels = Labels::new(&[0, 1, 1, 0], 2).expect("labels");
        let seed = Seed::from_u64(1);
        assert!(select_discerning(cols, &labels, 2, Rule::Greedy).is_err());
        for epsilon in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let rule = Rule::Exponential {
                epsilon,
                seed: &seed,
            };
            assert!(select_discerning(cols, &labels, 1, rule).is_err());
        }
        for sigma in [-0.1, 1.0, f64::NAN] {
            assert!(minimum_discerning(cols, &labels, sigma).is_err());
        }
        let short = Labels::new(&[0, 1], 2).expect("labels");
        assert!(DiscernibilitySearch::new(cols, &short).is_err());
        let rule = Rule::Exponential {
            epsilon: f64::MAX,
            seed: &seed,
        };
        assert_eq!(
            select_discerning(cols, &labels, 1, rule)
                .expect("huge")
                .order,
            vec![0]
        );
    }
}
