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
//!
//! `mod.rs` holds the partition and its scores; `subsets` the walk over all size-k
//! subsets (DILCA); `search` the incremental [`DiscernibilitySearch`] with its layouts (`records` the
//! row-major one);
//! `select` the selections built on it (NonPrivateKD, PrivateKD, MDA).

mod records;
mod search;
mod select;
mod subsets;

pub use search::{
    DiscernibilitySearch, GroupedCode, GroupedRound, Layout, RowGroups, grouped_round,
};
pub use select::{
    Rule, Selection, exponential_round, minimum_discerning, minimum_discerning_in,
    select_discerning, select_discerning_in,
};
pub use subsets::{MAX_SUBSETS, SubsetEntropies, subset_entropies};

use rayon::prelude::*;

use crate::columns::{Code, Columns, all_below, check_codes};
use crate::counts::{
    Contingency, SparseCounts, contingency, dense_counts, prefer_dense, value_counts,
};
use crate::resources::{ZeroBits, check_interrupt, zeroed_vec};
use crate::{Error, Result};

/// The (class, value, label) counts of the columns `which` of a part of a table, all in
/// one pass over its rows: the tables a distributed discernibility search adds up over
/// the partitions while the classes of S span them (paper 001 §2.2), read from the
/// part's codes in their own unsigned type.
///
/// `codes` holds the part's columns one after another (`labels.codes().len()` rows each);
/// `classes` is the class of S of every row, below `n_classes`. Table `p` has
/// `n_classes · cardinalities[p] · n_labels` cells, the count of (class, value, label)
/// in cell `(class · cardinalities[p] + value) · n_labels + label`.
///
/// # Errors
/// [`Error::InvalidData`] for lengths that do not match, a column number out of range, a
/// class ≥ `n_classes` or a code ≥ its cardinality (naming the row);
/// [`Error::OutputTooLarge`] when the tables cannot be allocated.
pub fn class_value_label_counts<C: Code + Into<u32>>(
    codes: &[C],
    which: &[usize],
    cardinalities: &[u32],
    classes: &[u32],
    n_classes: usize,
    labels: &Labels<'_>,
) -> Result<Vec<Vec<u64>>> {
    let n = labels.codes().len();
    let n_cols = codes.len().checked_div(n).unwrap_or(0);
    if n_cols * n != codes.len() || classes.len() != n || which.len() != cardinalities.len() {
        return Err(Error::InvalidData(format!(
            "codes ({} values), classes ({}) and labels ({n}) must describe the same rows, \
             and which ({}) and cardinalities ({}) the same columns",
            codes.len(),
            classes.len(),
            which.len(),
            cardinalities.len()
        )));
    }
    let column = |j: usize| &codes[j * n..(j + 1) * n];
    for (&j, &card) in which.iter().zip(cardinalities) {
        if n > 0 && j >= n_cols {
            return Err(Error::InvalidData(format!(
                "which holds column {j}, but codes has {n_cols} columns"
            )));
        }
        if n > 0 && !all_below(column(j), card) {
            check_codes(column(j), card, &format!("codes column {j}"))?;
        }
    }
    if let Some(row) = classes.iter().position(|&c| c as usize >= n_classes) {
        return Err(Error::InvalidData(format!(
            "classes[{row}] = {} is >= n_classes = {n_classes}",
            classes[row]
        )));
    }
    let n_labels = labels.n_labels() as usize;
    let too_large = || Error::OutputTooLarge("the (class, value, label) tables".to_string());
    let mut offsets = vec![0usize];
    for &card in cardinalities {
        let cells = n_classes
            .checked_mul(card as usize)
            .and_then(|c| c.checked_mul(n_labels))
            .and_then(|c| c.checked_add(*offsets.last().unwrap_or(&0)))
            .ok_or_else(too_large)?;
        offsets.push(cells);
    }
    let total = *offsets.last().unwrap_or(&0);
    let label_codes = labels.codes();
    let table = dense_counts(
        n,
        total,
        "the (class, value, label) tables",
        |table, rows| {
            let (classes, labels) = (&classes[rows.clone()], &label_codes[rows.clone()]);
            for (p, (&j, &card)) in which.iter().zip(cardinalities).enumerate() {
                let counts = &mut table[offsets[p]..offsets[p + 1]];
                let values = &column(j)[rows.clone()];
                for ((&value, &class), &label) in values.iter().zip(classes).zip(labels) {
                    let cell = (class as usize * card as usize + value.into() as usize) * n_labels
                        + label as usize;
                    counts[cell] += 1;
                }
            }
        },
    )?;
    Ok(offsets
        .windows(2)
        .map(|range| table[range[0]..range[1]].to_vec())
        .collect())
}

/// The rows of one part of a distributed table bound for another part: for the columns
/// `which`, their codes (column-major, the input's type), labels and classes there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowPiece<C> {
    /// Number of columns of `codes`.
    pub n_columns: usize,
    pub codes: Vec<C>,
    pub labels: Vec<u32>,
    pub classes: Vec<u32>,
}

/// Splits the rows of a part by destination: row `r` of class `classes[r]` goes to part
/// `destination[classes[r]]`, as a row of class `local_ids[classes[r]]` there; rows of
/// class [`DROPPED`] go nowhere. Rows keep their order within a piece (a stable counting
/// sort), and each column moves in one pass. This is the move of a distributed
/// discernibility search after which every class of S lies in one partition (paper 001
/// §2.2).
///
/// # Errors
/// [`Error::InvalidData`] for lengths that do not match, a column of `which` out of
/// range, a class (other than [`DROPPED`]) without a destination, or a destination
/// ≥ `n_parts`; [`Error::OutputTooLarge`] when the pieces cannot be allocated.
pub fn split_rows<C: Copy + Send + Sync + ZeroBits>(
    codes: &[C],
    which: &[usize],
    labels: &[u32],
    classes: &[u32],
    destination: &[u32],
    local_ids: &[u32],
    n_parts: usize,
) -> Result<Vec<RowPiece<C>>> {
    let n = labels.len();
    let n_cols = codes.len().checked_div(n).unwrap_or(0);
    if n_cols * n != codes.len() || classes.len() != n || destination.len() != local_ids.len() {
        return Err(Error::InvalidData(format!(
            "codes ({} values), labels ({n}) and classes ({}) must describe the same rows, \
             and destination ({}) and local_ids ({}) the same classes",
            codes.len(),
            classes.len(),
            destination.len(),
            local_ids.len()
        )));
    }
    if let Some(&j) = which.iter().find(|&&j| n > 0 && j >= n_cols) {
        return Err(Error::InvalidData(format!(
            "which holds column {j}, but codes has {n_cols} columns"
        )));
    }
    if let Some(p) = destination.iter().position(|&d| d as usize >= n_parts) {
        return Err(Error::InvalidData(format!(
            "destination[{p}] = {} is >= n_parts = {n_parts}",
            destination[p]
        )));
    }
    // Dropped rows are moved too, all to one scratch cell of every column (part
    // `n_parts`), so that moving a column takes no branch on its rows' destinations.
    let scratch_part = u32::try_from(n_parts)
        .map_err(|_| Error::parameter("n_parts", n_parts, "must be below 2**32"))?;
    let mut sizes = vec![0usize; n_parts];
    let mut slot = zeroed_vec::<u32>(n, "the row slots")?;
    let mut part_of = zeroed_vec::<u32>(n, "the row destinations")?;
    for (row, &class) in classes.iter().enumerate() {
        if class == DROPPED {
            part_of[row] = scratch_part;
            continue;
        }
        let Some(&part) = destination.get(class as usize) else {
            return Err(Error::InvalidData(format!(
                "classes[{row}] = {class} has no destination ({} classes)",
                destination.len()
            )));
        };
        part_of[row] = part;
        slot[row] = sizes[part as usize] as u32;
        sizes[part as usize] += 1;
    }
    let mut pieces = Vec::with_capacity(n_parts);
    for &size in &sizes {
        pieces.push(RowPiece {
            n_columns: which.len(),
            codes: zeroed_vec::<C>(size * which.len(), "the moved rows")?,
            labels: zeroed_vec::<u32>(size, "the moved labels")?,
            classes: zeroed_vec::<u32>(size, "the moved classes")?,
        });
    }
    let mut targets: Vec<Vec<&mut [C]>> = (0..which.len()).map(|_| Vec::new()).collect();
    for (piece, &size) in pieces.iter_mut().zip(&sizes) {
        let mut chunks = piece.codes.chunks_mut(size.max(1));
        for target in &mut targets {
            target.push(chunks.next().unwrap_or(&mut []));
        }
    }
    let mut scratch = zeroed_vec::<C>(which.len(), "the scratch cells")?;
    for (target, cell) in targets.iter_mut().zip(scratch.chunks_mut(1)) {
        target.push(cell);
    }
    let moves = |rows: std::ops::Range<usize>, values: &[C], outs: &mut [&mut [C]]| {
        let routes = part_of[rows.clone()].iter().zip(&slot[rows.clone()]);
        for (&value, (&part, &at)) in values[rows].iter().zip(routes) {
            outs[part as usize][at as usize] = value;
        }
    };
    // Each task moves a group of columns a tile of rows at a time, so that the routes of
    // a tile are read from the cache for every column but the first.
    let group = which.len().div_ceil(rayon::current_num_threads()).max(1);
    targets
        .par_chunks_mut(group)
        .zip(which.par_chunks(group))
        .for_each(|(outs, columns)| {
            for start in (0..n).step_by(SPLIT_TILE) {
                let rows = start..(start + SPLIT_TILE).min(n);
                for (outs, &j) in outs.iter_mut().zip(columns) {
                    moves(rows.clone(), &codes[j * n..(j + 1) * n], outs);
                }
            }
        });
    for (row, (&part, &at)) in part_of.iter().zip(&slot).enumerate() {
        if let Some(piece) = pieces.get_mut(part as usize) {
            piece.labels[at as usize] = labels[row];
            piece.classes[at as usize] = local_ids[classes[row] as usize];
        }
    }
    Ok(pieces)
}

/// The class of every row of a part refined by one of its columns: row `r`, of class
/// `classes[r]` (below `n_classes`) and value `v` in column `column` of `codes`, goes to
/// class `new_ids[i]`, `i` the position of its key `classes[r] · card + v` in `groups`
/// (sorted, distinct), or to [`DROPPED`] when its key is not there. This is the refinement
/// of a distributed discernibility search by the attribute its last round chose (paper
/// 001 §2.2), with `groups` the (class, value) groups that still mix labels over the whole
/// table: one pass over the rows, through a dense table of the keys where it is small
/// (at most `max(2^20, 2n)` cells), by binary search in `groups` otherwise.
///
/// # Errors
/// [`Error::InvalidData`] for lengths that do not match, a column out of range, a code
/// ≥ `card` or a class ≥ `n_classes` (naming the row), `groups` not strictly increasing
/// or holding a key ≥ `n_classes · card`, or an id equal to [`DROPPED`];
/// [`Error::OutputTooLarge`] when the classes cannot be allocated.
pub fn refined_classes<C: Code + Into<u32>>(
    codes: &[C],
    column: usize,
    card: u32,
    classes: &[u32],
    n_classes: usize,
    groups: &[u64],
    new_ids: &[u32],
) -> Result<Vec<u32>> {
    let n = classes.len();
    let n_cols = codes.len().checked_div(n).unwrap_or(0);
    if n_cols * n != codes.len() || groups.len() != new_ids.len() {
        return Err(Error::InvalidData(format!(
            "codes ({} values) and classes ({n}) must describe the same rows, and groups \
             ({}) and new_ids ({}) the same groups",
            codes.len(),
            groups.len(),
            new_ids.len()
        )));
    }
    if n > 0 && column >= n_cols {
        return Err(Error::InvalidData(format!(
            "column {column} is out of range: codes has {n_cols} columns"
        )));
    }
    let values = if n > 0 {
        &codes[column * n..(column + 1) * n]
    } else {
        &[][..]
    };
    if !all_below(values, card) {
        check_codes(values, card, &format!("codes column {column}"))?;
    }
    if let Some(row) = classes.iter().position(|&c| c as usize >= n_classes) {
        return Err(Error::InvalidData(format!(
            "classes[{row}] = {} is >= n_classes = {n_classes}",
            classes[row]
        )));
    }
    let domain = n_classes as u128 * u128::from(card);
    if let Some(at) = groups.windows(2).position(|pair| pair[0] >= pair[1]) {
        return Err(Error::InvalidData(format!(
            "groups must be strictly increasing, got groups[{at}] = {} then {}",
            groups[at],
            groups[at + 1]
        )));
    }
    if let Some(&last) = groups.last()
        && u128::from(last) >= domain
    {
        return Err(Error::InvalidData(format!(
            "groups holds key {last}, beyond the {domain} (class, value) keys of \
             {n_classes} classes and cardinality {card}"
        )));
    }
    if let Some(at) = new_ids.iter().position(|&id| id == DROPPED) {
        return Err(Error::InvalidData(format!(
            "new_ids[{at}] = {DROPPED} is the id of a dropped row"
        )));
    }
    let mut refined = zeroed_vec::<u32>(n, "the refined classes")?;
    let card = u64::from(card);
    let key = |class: u32, value: C| u64::from(class) * card + value.index();
    let mut fill = |lookup: &(dyn Fn(u64) -> u32 + Sync)| {
        refined
            .par_chunks_mut(REFINE_CHUNK)
            .zip(classes.par_chunks(REFINE_CHUNK))
            .zip(values.par_chunks(REFINE_CHUNK))
            .for_each(|((out, classes), values)| {
                for ((slot, &class), &value) in out.iter_mut().zip(classes).zip(values) {
                    *slot = lookup(key(class, value));
                }
            });
    };
    if domain <= (1u128 << 20).max(2 * n as u128) {
        // Cell `key` holds its new id + 1, so that a zeroed cell means dropped.
        let mut ids = zeroed_vec::<u32>(domain as usize, "the table of refined classes")?;
        for (&group, &id) in groups.iter().zip(new_ids) {
            ids[group as usize] = id + 1;
        }
        fill(&|key| ids[key as usize].wrapping_sub(1));
    } else {
        fill(&|key| match groups.binary_search(&key) {
            Ok(at) => new_ids[at],
            Err(_) => DROPPED,
        });
    }
    Ok(refined)
}

/// Rows per parallel task of [`refined_classes`].
const REFINE_CHUNK: usize = 1 << 16;

/// Rows per tile of [`split_rows`]: their routes (8 bytes a row) stay in the L2 cache
/// while every column of a task moves them.
const SPLIT_TILE: usize = 1 << 14;

/// The class of a row that [`split_rows`] moves nowhere.
pub const DROPPED: u32 = u32::MAX;

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

/// Scores of several partitions as columns, the shape in which callers hand them on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScoreColumns {
    /// [`Score::n_classes`] of each partition.
    pub n_classes: Vec<u64>,
    /// [`Score::undiscerned_pairs`] of each partition.
    pub undiscerned_pairs: Vec<u64>,
    /// [`Score::entropy`] of each partition.
    pub entropy: Vec<f64>,
    /// [`Score::joint_entropy`] of each partition.
    pub joint_entropy: Vec<f64>,
    /// [`Score::discernibility`] of each partition.
    pub discernibility: Vec<f64>,
}

impl ScoreColumns {
    /// The columns of `scores` against `labels`.
    ///
    /// # Errors
    /// [`Error::OutputTooLarge`] when a count of undiscerned pairs does not fit in 64 bits
    /// (possible only for n close to 2^32 rows).
    pub fn new(scores: &[Score], labels: &Labels<'_>) -> Result<Self> {
        let mut out = ScoreColumns::default();
        for score in scores {
            let pairs = u64::try_from(score.undiscerned_pairs).map_err(|_| {
                Error::OutputTooLarge(format!(
                    "{} undiscerned pairs do not fit in 64 bits",
                    score.undiscerned_pairs
                ))
            })?;
            out.n_classes.push(score.n_classes);
            out.undiscerned_pairs.push(pairs);
            out.entropy.push(score.entropy);
            out.joint_entropy.push(score.joint_entropy);
            out.discernibility.push(score.discernibility(labels));
        }
        Ok(out)
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
        check_interrupt()?;
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

    /// [`Partition::score_candidates`] as [`ScoreColumns`].
    ///
    /// # Errors
    /// The errors of [`Partition::score_candidates`] and [`ScoreColumns::new`].
    pub fn score_columns(
        &self,
        cols: Columns<'_>,
        labels: &Labels<'_>,
        candidates: &[usize],
    ) -> Result<ScoreColumns> {
        ScoreColumns::new(&self.score_candidates(cols, labels, candidates)?, labels)
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

/// F(S) of the attributes `features` of `cols` against `labels` (see
/// [`Score::discernibility`]).
///
/// # Errors
/// The errors of [`Partition::from_columns`] and [`Partition::score`].
pub fn discernibility(cols: Columns<'_>, labels: &Labels<'_>, features: &[usize]) -> Result<f64> {
    Ok(Partition::from_columns(cols, features)?
        .score(labels)?
        .discernibility(labels))
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

#[cfg(test)]
mod tests;
