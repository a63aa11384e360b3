//! The incremental discernibility search: the partition of the selected attributes kept
//! as a layout of the rows of mixed classes, and every candidate's gain in one pass.

use std::borrow::Cow;
use std::ops::Range;

use rayon::prelude::*;

use super::records::{RECORD_MAX_CELLS, undiscerned_by_records};
use super::{Labels, Partition};
use crate::columns::{Code, Columns, check_table};
use crate::resources::{ZeroBits, alloc_output, check_interrupt, zeroed_vec};
use crate::{Error, Result};

/// Cells of the per-class count table above which a candidate is scored by sorting.
const SEARCH_DENSE_CELLS: u128 = 1 << 20;

/// Interleaved count tables of a large class (see `undiscerned_by`).
const LANES: usize = 4;

/// Average rows per class of the grouped layout at or below which [`Layout::Auto`]
/// scores a round through row records (see `records.rs`): in larger classes each
/// candidate's sequential scan of its copy is as fast, without making the records.
const RECORD_CLASS_ROWS: usize = 64;

/// Rows per parallel task when the class layout is rebuilt.
const REBUILD_CHUNK: usize = 1 << 16;

/// Columns that move to a new layout together, and the positions they move a block at
/// a time (see [`Codes::move_all`]).
const MOVE_COLUMNS: usize = 4;
const MOVE_ROWS: usize = 1 << 12;

/// Kept rows from which [`Layout::Auto`] copies the columns into layout order: below it a
/// column (4 bytes a row) stays in the per-core cache, so reading it through the row
/// index costs about what a sequential scan of a copy does, and moving every remaining
/// column each round would cost more than it saves.
pub(super) const COPY_MIN_ROWS: usize = 1 << 18;

/// Largest (class, value, label) table of the full passes of [`Layout::Auto`]: while
/// every candidate's table is this small (and no larger than the table has rows), a
/// pass over all rows counting into it, which needs no layout at all, is the cheapest.
/// Past it, the rounds a full pass saves cost less than moving the rows into the
/// grouped layout once the partition has more classes (a stream of writes per class).
const FULL_PASS_CELLS: u128 = 1 << 12;

/// Largest (class, label, value) table that full passes count into with packed keys
/// (larger ones, only met under [`Layout::FullPass`], are scored by
/// [`Partition::score_column`]).
const FULL_PASS_KEY_CELLS: u128 = 1 << 16;

/// Average rows per class below which a group of classes is scored a run of classes at
/// a time ([`TinyClasses`]) rather than class by class: per class, the loop overhead
/// would cost more than its rows.
const TINY_CLASS_ROWS: usize = 16;

/// Rows of a run of tiny classes, and the most cells its (class, value, label) table
/// may have.
const TINY_RUN_ROWS: usize = 1 << 10;
const TINY_RUN_CELLS: u128 = 1 << 16;

/// Most cells of the count tables of all candidates of a full pass together (per
/// thread) for them to be counted in one pass over the rows.
const FULL_PASS_ALL_CELLS: u128 = 1 << 21;

/// Cells cleared at once (by a vectorized fill) in the time of clearing one row's two
/// cells: a small class with at least 1/`SMALL_CLASS_CLEAR` as many rows as its tables
/// have cells clears them whole.
const SMALL_CLASS_CLEAR: usize = 8;

/// How a [`DiscernibilitySearch`] reads the candidate columns of the rows it keeps. The
/// choice only changes the speed: every layout gives the same gains, exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// [`FullPass`](Layout::FullPass) while the partition of S is coarse (every
    /// candidate's count table has at most min(2^12, n) cells), then
    /// [`Copied`](Layout::Copied) while at least 2^18 rows are kept, then
    /// [`Indexed`](Layout::Indexed). While copied, a round whose classes average at
    /// most 64 rows is scored as under [`Records`](Layout::Records).
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
    /// As [`Copied`](Layout::Copied), but a round turns each group of classes into row
    /// records (every candidate's byte of a row side by side, see `records.rs`) and
    /// scores all candidates in one pass over it, small classes pair by pair. Applies
    /// when every copy is one byte a row, there are at most 256 labels and the
    /// candidates' (value, label) tables have at most 2^14 cells together; otherwise
    /// the round scans the copies one candidate at a time.
    Records,
}

impl std::str::FromStr for Layout {
    type Err = Error;

    /// `"auto"`, `"full_pass"`, `"indexed"`, `"copied"` or `"records"`.
    fn from_str(name: &str) -> Result<Self> {
        match name {
            "auto" => Ok(Layout::Auto),
            "full_pass" => Ok(Layout::FullPass),
            "indexed" => Ok(Layout::Indexed),
            "copied" => Ok(Layout::Copied),
            "records" => Ok(Layout::Records),
            _ => Err(Error::parameter(
                "layout",
                format!("{name:?}"),
                "must be 'auto', 'full_pass', 'indexed', 'copied' or 'records'",
            )),
        }
    }
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
/// through the row index of the layout or from copies in layout order (see [`Layout`]),
/// each copy in the narrowest unsigned type its cardinality allows (u8, u16 or u32), so
/// that rounds and moves of the layout read and write 1 or 2 bytes a row at most
/// cardinalities.
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
    /// `remaining`, in layout order (in row order during full passes), each in the
    /// narrowest type its cardinality allows.
    copies: Vec<Codes<'a>>,
    /// Buffers of earlier copies (owned ones only), reused by the next move of the layout.
    spare: Vec<Codes<'a>>,
    /// The partition of S while rounds are full passes; the layout is unused then.
    full: Option<Partition>,
    all_labels: Labels<'a>,
}

/// The values of one candidate at the positions of the layout.
#[derive(Clone, Copy)]
enum Values<'s> {
    Direct(&'s [u32]),
    Copied(&'s Codes<'s>),
    Indexed { column: &'s [u32], rows: &'s [u32] },
}

/// Binds `$get` to a function from a range of layout positions to an iterator over the
/// candidate's values (as `u32`) at those positions, for each kind of [`Values`], and
/// evaluates `$body` with it (one monomorphic copy per storage type).
macro_rules! with_values {
    ($values:expr, |$get:ident| $body:expr) => {
        match $values {
            Values::Direct(column) => {
                let $get = |r: Range<usize>| column[r].iter().copied();
                $body
            }
            Values::Copied(Codes::U8(copy)) => {
                let $get = |r: Range<usize>| copy[r].iter().map(|&v| u32::from(v));
                $body
            }
            Values::Copied(Codes::U16(copy)) => {
                let $get = |r: Range<usize>| copy[r].iter().map(|&v| u32::from(v));
                $body
            }
            Values::Copied(Codes::U32(copy)) => {
                let $get = |r: Range<usize>| copy[r].iter().copied();
                $body
            }
            Values::Indexed { column, rows } => {
                // Rows of the layout are rows of the table, so the reads are in bounds.
                let $get = |r: Range<usize>| rows[r].iter().map(|&i| column[i as usize]);
                $body
            }
        }
    };
}

/// A copy of one column in the narrowest unsigned type that holds its codes, so that
/// rounds and moves of the layout read and write 1 or 2 bytes a row rather than 4; or
/// the caller's codes in layout order, borrowed ([`grouped_round`]).
#[derive(Clone, Debug)]
pub enum Codes<'c> {
    U8(Cow<'c, [u8]>),
    U16(Cow<'c, [u16]>),
    U32(Cow<'c, [u32]>),
}

/// An unsigned code type that a [`grouped_round`] reads in place and returns its refined
/// rows in: `u8`, `u16` or `u32`.
pub trait GroupedCode: Code + ZeroBits + Default + Into<u32> + TryFrom<u32> + Ord {
    /// The codes, borrowed as a column of the search.
    fn borrowed(codes: &[Self]) -> Codes<'_>;
}

macro_rules! grouped_code {
    ($($t:ty => $variant:ident),*) => {$(
        impl GroupedCode for $t {
            fn borrowed(codes: &[Self]) -> Codes<'_> {
                Codes::$variant(Cow::Borrowed(codes))
            }
        }
    )*};
}

grouped_code!(u8 => U8, u16 => U16, u32 => U32);

impl Codes<'_> {
    /// `column[positions]` (all of `column` when `positions` is `None`) for codes below
    /// `cardinality`.
    fn narrow(column: &[u32], positions: Option<&[u32]>, cardinality: u32) -> Result<Self> {
        // The codes are < cardinality, so the casts below keep every value.
        Ok(if cardinality <= 1 << 8 {
            Codes::U8(gather_map(column, positions, |v| v as u8)?.into())
        } else if cardinality <= 1 << 16 {
            Codes::U16(gather_map(column, positions, |v| v as u16)?.into())
        } else {
            Codes::U32(gather_map(column, positions, |v| v)?.into())
        })
    }

    /// A copy of `len` zeros of the same type.
    fn zeros_like<'n>(&self, len: usize) -> Result<Codes<'n>> {
        Ok(match self {
            Codes::U8(_) => Codes::U8(zeroed_vec(len, "the layout")?.into()),
            Codes::U16(_) => Codes::U16(zeroed_vec(len, "the layout")?.into()),
            Codes::U32(_) => Codes::U32(zeroed_vec(len, "the layout")?.into()),
        })
    }

    /// Whether the values are the search's own (a buffer it may reuse).
    fn is_owned(&self) -> bool {
        matches!(
            self,
            Codes::U8(Cow::Owned(_)) | Codes::U16(Cow::Owned(_)) | Codes::U32(Cow::Owned(_))
        )
    }

    /// Moves the values of the positions `block` (of the new layout for a gather, of
    /// the old one for a scatter) into `out`, a copy of the same type.
    fn move_block(&self, out: &mut Codes<'_>, how: Move<'_>, block: Range<usize>) {
        match (self, out) {
            (Codes::U8(values), Codes::U8(out)) => move_block(values, out.to_mut(), how, block),
            (Codes::U16(values), Codes::U16(out)) => move_block(values, out.to_mut(), how, block),
            (Codes::U32(values), Codes::U32(out)) => move_block(values, out.to_mut(), how, block),
            // `out` comes from `zeros_like` or a buffer of the same type.
            _ => {}
        }
    }

    /// `copies` moved to a new layout, written into `buffers` (copies of an earlier
    /// layout, no longer needed) where one of the right type is left, so that a round
    /// reuses memory rather than faulting in fresh pages. For a gather, groups of
    /// [`MOVE_COLUMNS`] columns move in parallel, a block of [`MOVE_ROWS`] positions at
    /// a time, so that the positions are read from memory once per group rather than
    /// once per column.
    fn move_all<'n>(
        copies: &[Codes<'_>],
        how: Move<'_>,
        mut buffers: Vec<Codes<'n>>,
    ) -> Result<Vec<Codes<'n>>> {
        let (n_positions, len) = match how {
            Move::Gather(source) => (source.len(), source.len()),
            // One spare position receives the rows left out.
            Move::Scatter(target, len) => (target.len(), len + 1),
        };
        let mut moved = Vec::with_capacity(copies.len());
        for copy in copies {
            let same = buffers.iter().position(|b| b.same_type(copy));
            moved.push(match same {
                Some(b) => buffers.swap_remove(b).resized(len)?,
                None => copy.zeros_like(len)?,
            });
        }
        drop(buffers);
        // A scatter writes to one stream per class and column: one column at a time
        // keeps those streams in cache.
        let columns = match how {
            Move::Gather(_) => MOVE_COLUMNS,
            Move::Scatter(..) => 1,
        };
        moved
            .par_chunks_mut(columns)
            .zip(copies.par_chunks(columns))
            .try_for_each(|(outs, group)| {
                check_interrupt()?;
                for start in (0..n_positions).step_by(MOVE_ROWS) {
                    let block = start..(start + MOVE_ROWS).min(n_positions);
                    for (copy, out) in group.iter().zip(outs.iter_mut()) {
                        copy.move_block(out, how, block.clone());
                    }
                }
                Ok(())
            })?;
        if let Move::Scatter(_, len) = how {
            for out in &mut moved {
                out.truncate(len);
            }
        }
        Ok(moved)
    }

    fn same_type(&self, other: &Codes<'_>) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }

    /// The buffer with `len` values (the first ones kept, new ones 0).
    fn resized(mut self, len: usize) -> Result<Self> {
        fn resize<T: Clone + Default>(codes: &mut Vec<T>, len: usize) -> Result<()> {
            codes
                .try_reserve(len.saturating_sub(codes.len()))
                .map_err(|_| Error::OutputTooLarge("the layout".to_string()))?;
            codes.resize(len, T::default());
            Ok(())
        }
        match &mut self {
            Codes::U8(codes) => resize(codes.to_mut(), len)?,
            Codes::U16(codes) => resize(codes.to_mut(), len)?,
            Codes::U32(codes) => resize(codes.to_mut(), len)?,
        }
        Ok(self)
    }

    fn truncate(&mut self, len: usize) {
        match self {
            Codes::U8(codes) => codes.to_mut().truncate(len),
            Codes::U16(codes) => codes.to_mut().truncate(len),
            Codes::U32(codes) => codes.to_mut().truncate(len),
        }
    }

    /// All values as `u32`.
    fn widen(&self) -> Result<Vec<u32>> {
        match self {
            Codes::U8(codes) => gather_map(codes, None, u32::from),
            Codes::U16(codes) => gather_map(codes, None, u32::from),
            Codes::U32(codes) => gather_map(codes, None, |v| v),
        }
    }
}

/// A group of small classes as runs of consecutive classes (of at most
/// [`TINY_RUN_ROWS`] rows, or one class), each row keyed by its class's number in its run
/// and its label: `class · 2^label_bits + label`.
struct TinyClasses {
    /// The key of every position of the group.
    keys: Vec<u32>,
    /// Positions (from the group's first) and number of classes of every run.
    runs: Vec<(Range<usize>, usize)>,
    /// The most classes in a run.
    max_classes: usize,
}

impl TinyClasses {
    /// Whether a candidate of cardinality `card` has a small enough table per run.
    fn fits(&self, card: u32, n_labels: u32) -> bool {
        let label_cells = u128::from(n_labels.next_power_of_two());
        self.max_classes as u128 * u128::from(card) * label_cells <= TINY_RUN_CELLS
    }
}

/// Count tables reused by the tasks of a round: every cell is back to 0 between uses.
#[derive(Default)]
struct Scratch {
    totals: Vec<u32>,
    lanes: Vec<u32>,
}

impl Scratch {
    /// Zeroed tables of `totals` and `lanes` cells.
    fn tables(&mut self, totals: usize, lanes: usize) -> Result<(&mut [u32], &mut [u32])> {
        for (table, len) in [(&mut self.totals, totals), (&mut self.lanes, lanes)] {
            if table.len() < len {
                table
                    .try_reserve_exact(len - table.len())
                    .map_err(|_| Error::OutputTooLarge("the class count table".to_string()))?;
                table.resize(len, 0);
            }
        }
        Ok((&mut self.totals[..totals], &mut self.lanes[..lanes]))
    }
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
            spare: Vec::new(),
            full: None,
            all_labels: labels.clone(),
        };
        if !mixed {
            return Ok(search);
        }
        // Narrow copies in row order: full passes and the first layout read them.
        if matches!(layout, Layout::Copied | Layout::Records)
            || (layout != Layout::Indexed && n >= COPY_MIN_ROWS)
        {
            search.copies = search.collect_copies(|p| {
                let j = search.remaining[p];
                Codes::narrow(cols.column(j), None, cols.cardinality(j))
            })?;
        }
        if matches!(layout, Layout::Auto | Layout::FullPass) {
            search.full = Some(Partition::trivial(n)?);
            search.leave_full_pass()?;
        }
        Ok(search)
    }

    /// Starts from the partition whose class `b` is the rows `bounds[b]..bounds[b + 1]` of
    /// `cols` (rows already grouped by class, as the grouped layout keeps them), with every
    /// column a candidate, read in place ([`Layout::Indexed`] from the identity layout).
    ///
    /// This is the search of one partition of a distributed table once every class of S
    /// lies in one partition: the undiscerned pairs of the partitions add up to the
    /// table's. [`selected`](Self::selected) starts empty although S is not.
    ///
    /// # Errors
    /// [`Error::InvalidData`] as for [`new`](Self::new), and when `bounds` does not start
    /// at 0, decreases, or does not end at the number of rows.
    pub fn from_groups(cols: Columns<'a>, labels: &Labels<'a>, bounds: Vec<usize>) -> Result<Self> {
        let mut search = Self::with_layout(cols, labels, Layout::Indexed)?;
        check_class_bounds(&bounds, cols.n_rows())?;
        let codes = labels.codes();
        let mut counts = vec![0u64; labels.n_labels() as usize];
        let mut undiscerned = 0u128;
        for class in bounds.windows(2) {
            let class_labels = &codes[class[0]..class[1]];
            let size = class_labels.len() as u128;
            let mut same_label = 0u128;
            for &label in class_labels {
                let count = &mut counts[label as usize];
                same_label += 2 * u128::from(*count) + 1;
                *count += 1;
            }
            for &label in class_labels {
                counts[label as usize] = 0;
            }
            undiscerned += size * size - same_label;
        }
        search.labels = Cow::Borrowed(codes);
        search.bounds = bounds;
        search.undiscerned = undiscerned;
        Ok(search)
    }

    /// Ordered pairs of rows with different labels that S leaves undiscerned (rows equal
    /// on S): [`differing_pairs`](Self::differing_pairs) − n·F(S).
    pub fn undiscerned_pairs(&self) -> u128 {
        self.undiscerned
    }

    /// Under [`Layout::Auto`], trades the full passes for the grouped layout once the
    /// partition is too fine for them: the rows of the mixed classes, grouped by class
    /// (in row order inside a class).
    fn leave_full_pass(&mut self) -> Result<()> {
        let Some(partition) = &self.full else {
            return Ok(());
        };
        let n = self.n_rows();
        let max_card = self.largest_cardinality();
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
        // The position of every row in the layout; `kept` for the rows left out.
        let mut positions = zeroed_vec::<u32>(n, "the layout")?;
        for (i, (&c, position)) in classes.iter().zip(positions.iter_mut()).enumerate() {
            if mixed[c as usize] {
                let slot = &mut starts[c as usize];
                // Rows and positions are < n < 2^32 (checked by `with_layout`).
                rows[*slot] = i as u32;
                *position = *slot as u32;
                *slot += 1;
            } else {
                *position = kept as u32;
            }
        }
        self.labels = Cow::Owned(gather(labels, &rows)?);
        // The copies are in row order (and exist from the start whenever this many rows
        // are kept): each is scattered to the layout in one sequential read, its writes
        // going to one stream per class.
        if rows.len() < COPY_MIN_ROWS {
            self.copies = Vec::new();
        } else {
            self.move_copies(Move::Scatter(&positions, kept))?;
        }
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

    /// Whether the next round is scored through row records (see [`Layout::Records`]).
    pub fn scores_by_records(&self) -> bool {
        self.record_columns().is_some()
    }

    /// The copies as bytes, when the current round is scored through row records:
    /// every copy is one byte a row, at most 256 labels, the candidates' (value,
    /// label) tables at most [`RECORD_MAX_CELLS`] cells together, and (under
    /// [`Layout::Auto`]) classes averaging at most [`RECORD_CLASS_ROWS`] rows.
    fn record_columns(&self) -> Option<Vec<&[u8]>> {
        let wanted = match self.layout {
            Layout::Records => true,
            Layout::Auto => self.labels.len() <= RECORD_CLASS_ROWS * (self.bounds.len() - 1),
            _ => false,
        };
        let label_bits = self.label_bits();
        let cells: u128 = self
            .remaining
            .iter()
            .map(|&j| u128::from(self.cardinalities()[j]) << label_bits)
            .sum();
        if !wanted || self.full.is_some() || label_bits > 8 || cells > RECORD_MAX_CELLS {
            return None;
        }
        self.copies
            .iter()
            .map(|copy| match copy {
                Codes::U8(bytes) => Some(&bytes[..]),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .filter(|columns| !columns.is_empty())
    }

    /// Bits of a label in a packed (value, label) cell (computed in `usize`, where the
    /// next power of two of any `u32` count fits).
    fn label_bits(&self) -> u32 {
        (self.n_labels as usize)
            .next_power_of_two()
            .trailing_zeros()
    }

    /// n·(F(S ∪ {a}) − F(S)) for every remaining candidate `a` (in the order of
    /// [`remaining`](Self::remaining)), in one parallel pass. During full passes the
    /// class and label of every row are packed into one small key first, and each
    /// candidate counts its values against the keys; in the grouped layout the work is
    /// split into groups of classes × candidates, so a thread scores the candidates of a
    /// group one after another while the group's labels stay in cache.
    ///
    /// # Errors
    /// [`Error::OutputTooLarge`] when a count table cannot be allocated.
    pub fn gains(&self) -> Result<Vec<u128>> {
        let m = self.remaining.len();
        let undiscerned: Vec<u128> = if self.labels.is_empty() {
            vec![0; m]
        } else if let Some(partition) = &self.full {
            let keys = self.full_pass_keys(partition)?;
            match keys.as_deref().map(|keys| self.full_pass_all(keys)) {
                Some(Some(undiscerned)) => undiscerned?,
                _ => (0..m)
                    .into_par_iter()
                    .map(|p| {
                        check_interrupt()?;
                        self.undiscerned_full_pass(p, keys.as_deref())
                    })
                    .collect::<Result<_>>()?,
            }
        } else if let Some(columns) = self.record_columns() {
            let cards: Vec<u32> = self
                .remaining
                .iter()
                .map(|&j| self.cardinalities()[j])
                .collect();
            let groups = self.class_groups();
            let label_bits = self.label_bits();
            undiscerned_by_records(
                &columns,
                &self.bounds,
                &self.labels,
                &groups,
                &cards,
                label_bits,
            )?
        } else {
            let groups = self.class_groups();
            let n_groups = groups.len() - 1;
            let tiny: Vec<Option<TinyClasses>> = groups
                .par_windows(2)
                .map(|g| self.tiny_classes(g[0]..g[1]))
                .collect::<Result<_>>()?;
            let parts: Vec<u128> = (0..n_groups * m)
                .into_par_iter()
                .map_init(Scratch::default, |scratch, task| {
                    check_interrupt()?;
                    let (g, p) = (task / m, task % m);
                    let card = self.cardinalities()[self.remaining[p]];
                    match &tiny[g] {
                        Some(tiny) if tiny.fits(card, self.n_labels) => {
                            let start = self.bounds[groups[g]];
                            with_values!(self.values(p), |values| self
                                .undiscerned_tiny(card, values, tiny, start, scratch))
                        }
                        _ => self.undiscerned_in(p, groups[g]..groups[g + 1], scratch),
                    }
                })
                .collect::<Result<_>>()?;
            (0..m)
                .map(|p| (0..n_groups).map(|g| parts[g * m + p]).sum())
                .collect()
        };
        Ok(undiscerned
            .into_iter()
            .map(|u| self.undiscerned.saturating_sub(u))
            .collect())
    }

    fn values(&self, p: usize) -> Values<'_> {
        if let Some(copy) = self.copies.get(p) {
            return Values::Copied(copy);
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
            let keys = self.full_pass_keys(partition)?;
            return self.undiscerned_full_pass(p, keys.as_deref());
        }
        self.undiscerned_in(p, 0..self.bounds.len() - 1, &mut Scratch::default())
    }

    /// class · n_labels + label of every row, when the keys and every candidate's
    /// (key, value) table are small enough for [`undiscerned_full_pass`]
    /// (always so in the full passes of [`Layout::Auto`]).
    ///
    /// [`undiscerned_full_pass`]: Self::undiscerned_full_pass
    fn full_pass_keys(&self, partition: &Partition) -> Result<Option<Vec<u16>>> {
        let n_keys = partition.n_classes() as u128 * u128::from(self.n_labels);
        let max_card = self.largest_cardinality();
        if n_keys > 1 << 16 || n_keys * u128::from(max_card) > FULL_PASS_KEY_CELLS {
            return Ok(None);
        }
        let n_labels = self.n_labels;
        // Keys are < n_keys ≤ 2^16 by the test above.
        gather_map(partition.classes(), None, |c| c * n_labels)
            .and_then(|mut keys| {
                keys.par_iter_mut()
                    .zip(self.all_labels.codes().par_iter())
                    .for_each(|(key, &l)| *key += l);
                gather_map(&keys, None, |key| key as u16)
            })
            .map(Some)
    }

    /// [`undiscerned_with`](Self::undiscerned_with) during full passes: the candidate's
    /// values are counted against the row `keys` (class · n_labels + label) into a
    /// (class, label, value) table, or, without keys, by [`Partition::score_column`].
    /// Pure classes add no undiscerned pairs, so summing over all classes gives the same
    /// integer as the grouped layout's sum over the mixed ones.
    fn undiscerned_full_pass(&self, p: usize, keys: Option<&[u16]>) -> Result<u128> {
        let a = self.remaining[p];
        let card = self.cardinalities()[a] as usize;
        let (Some(keys), Some(partition)) = (keys, &self.full) else {
            let partition = self.full.as_ref().ok_or_else(|| {
                Error::InvalidData("full-pass scoring outside the full passes".to_string())
            })?;
            let score = partition.score_column(
                self.cols.column(a),
                self.cardinalities()[a],
                &self.all_labels,
            )?;
            return Ok(score.undiscerned_pairs);
        };
        let n_labels = self.n_labels as usize;
        // Cell (key, v) is key · 2^value_bits + v, with LANES interleaved counters each
        // (see `undiscerned_by`); counts stay below n < 2^32, so no increment wraps.
        let value_bits = card.next_power_of_two().trailing_zeros();
        let cells = (partition.n_classes() * n_labels) << value_bits;
        let mut table = alloc_output::<u32>(LANES * cells, "the class count table")?;
        let stride = LANES << value_bits;
        with_values!(self.values(p), |values| {
            for (i, (&key, v)) in keys.iter().zip(values(0..keys.len())).enumerate() {
                let cell = lane_cell(key.into(), stride, v, i);
                table[cell] = table[cell].wrapping_add(1);
            }
        });
        Ok(full_pass_undiscerned(&table, n_labels, value_bits))
    }

    /// [`undiscerned_full_pass`](Self::undiscerned_full_pass) for every candidate in one
    /// pass over the rows: each block of [`REBUILD_CHUNK`] rows is counted for all
    /// candidates while its keys are in cache, into one table per thread, and the
    /// tables are added up (exact integers, so the sum does not depend on how the
    /// blocks were shared out). `None` when the tables of all candidates would take more
    /// than [`FULL_PASS_ALL_CELLS`] cells.
    fn full_pass_all(&self, keys: &[u16]) -> Option<Result<Vec<u128>>> {
        let partition = self.full.as_ref()?;
        let n_labels = self.n_labels as usize;
        let n_keys = partition.n_classes() * n_labels;
        let bits: Vec<u32> = self
            .remaining
            .iter()
            .map(|&j| {
                (self.cardinalities()[j] as usize)
                    .next_power_of_two()
                    .trailing_zeros()
            })
            .collect();
        let mut offsets = vec![0usize];
        for &b in &bits {
            offsets.push(offsets.last().unwrap_or(&0) + LANES * (n_keys << b));
        }
        let cells = *offsets.last().unwrap_or(&0);
        if cells as u128 > FULL_PASS_ALL_CELLS {
            return None;
        }
        let add = |mut a: Vec<u32>, b: Vec<u32>| -> Result<Vec<u32>> {
            if a.is_empty() {
                return Ok(b);
            }
            for (x, &y) in a.iter_mut().zip(&b) {
                *x = x.wrapping_add(y);
            }
            Ok(a)
        };
        let table = keys
            .par_chunks(REBUILD_CHUNK)
            .enumerate()
            .try_fold(Vec::new, |mut table: Vec<u32>, (b, block)| {
                check_interrupt()?;
                if table.is_empty() {
                    table = alloc_output::<u32>(cells, "the class count tables")?;
                }
                let rows = b * REBUILD_CHUNK..b * REBUILD_CHUNK + block.len();
                for (p, &value_bits) in bits.iter().enumerate() {
                    let counts = &mut table[offsets[p]..offsets[p + 1]];
                    // Counts stay below n < 2^32, so no increment wraps.
                    let stride = LANES << value_bits;
                    with_values!(self.values(p), |values| {
                        for (i, (&key, v)) in block.iter().zip(values(rows.clone())).enumerate() {
                            let cell = lane_cell(key.into(), stride, v, i);
                            counts[cell] = counts[cell].wrapping_add(1);
                        }
                    });
                }
                Ok::<_, Error>(table)
            })
            .try_reduce(Vec::new, add);
        Some(table.map(|table| {
            bits.iter()
                .enumerate()
                .map(|(p, &value_bits)| {
                    full_pass_undiscerned(&table[offsets[p]..offsets[p + 1]], n_labels, value_bits)
                })
                .collect()
        }))
    }

    /// [`ClassRows::groups`] of the layout.
    fn class_groups(&self) -> Vec<usize> {
        self.class_rows().groups()
    }

    /// The layout's classes and labels.
    fn class_rows(&self) -> ClassRows<'_> {
        ClassRows {
            bounds: &self.bounds,
            labels: &self.labels,
        }
    }

    /// The undiscerned pairs of the classes `blocks` of the layout refined by candidate
    /// `p`.
    fn undiscerned_in(
        &self,
        p: usize,
        blocks: Range<usize>,
        scratch: &mut Scratch,
    ) -> Result<u128> {
        let card = self.cardinalities()[self.remaining[p]];
        with_values!(self.values(p), |values| self
            .undiscerned_by(card, values, blocks, scratch))
    }

    fn cardinalities(&self) -> &'a [u32] {
        self.cols.cardinalities()
    }

    /// The largest cardinality of a remaining candidate (1 when none is left).
    fn largest_cardinality(&self) -> u32 {
        self.remaining
            .iter()
            .map(|&j| self.cardinalities()[j])
            .max()
            .unwrap_or(1)
    }

    /// For a group of classes averaging fewer than [`TINY_CLASS_ROWS`] rows, the keys
    /// that let [`undiscerned_tiny`](Self::undiscerned_tiny) score it in one loop over
    /// its rows; `None` for other groups.
    fn tiny_classes(&self, blocks: Range<usize>) -> Result<Option<TinyClasses>> {
        let (start, end) = (self.bounds[blocks.start], self.bounds[blocks.end]);
        let label_bits = self.label_bits();
        if end - start >= TINY_CLASS_ROWS * blocks.len() || label_bits > 16 {
            return Ok(None);
        }
        let mut keys = alloc_output::<u32>(end - start, "the class keys")?;
        let mut runs = Vec::new();
        let (mut run_start, mut run_classes) = (start, 0usize);
        for block in self.bounds[blocks.start..=blocks.end].windows(2) {
            if block[1] - run_start > TINY_RUN_ROWS && run_classes > 0 {
                runs.push((run_start - start..block[0] - start, run_classes));
                (run_start, run_classes) = (block[0], 0);
            }
            // Classes of a run are numbered from 0; fewer than 2^32 / 2^label_bits,
            // since a run has at most TINY_RUN_ROWS rows or a single class.
            let class = (run_classes as u32) << label_bits;
            for (key, &l) in keys[block[0] - start..block[1] - start]
                .iter_mut()
                .zip(&self.labels[block[0]..block[1]])
            {
                *key = class | l;
            }
            run_classes += 1;
        }
        if run_classes > 0 {
            runs.push((run_start - start..end - start, run_classes));
        }
        let max_classes = runs.iter().map(|r| r.1).max().unwrap_or(0);
        Ok(Some(TinyClasses {
            keys,
            runs,
            max_classes,
        }))
    }

    /// The undiscerned pairs of a group of tiny classes (see [`TinyClasses`]) refined by
    /// a candidate of cardinality `card` whose values at the positions `r` of the
    /// layout are `values(r)`; `start` is the group's first position. The half-sum of
    /// `undiscerned_by`'s small classes, over a run of classes at once: cell
    /// (class, v) counts the earlier rows of the run with value v in that class.
    fn undiscerned_tiny<I, F>(
        &self,
        card: u32,
        values: F,
        tiny: &TinyClasses,
        start: usize,
        scratch: &mut Scratch,
    ) -> Result<u128>
    where
        F: Fn(Range<usize>) -> I,
        I: Iterator<Item = u32> + Clone,
    {
        let label_bits = self.label_bits();
        let label_mask = (1u32 << label_bits) - 1;
        let card = card as usize;
        let slots = tiny.max_classes * card;
        let (totals, joint) = scratch.tables(slots, slots << label_bits)?;
        let mut total: u128 = 0;
        // Counts stay below n < 2^32, so no increment below wraps.
        for (run, _) in &tiny.runs {
            let keys = &tiny.keys[run.clone()];
            let values = values(start + run.start..start + run.end);
            let mut half: u64 = 0;
            for (&key, v) in keys.iter().zip(values.clone()) {
                let slot = (key >> label_bits) as usize * card + v as usize;
                let cell = slot << label_bits | (key & label_mask) as usize;
                half += u64::from(totals[slot].wrapping_sub(joint[cell]));
                totals[slot] = totals[slot].wrapping_add(1);
                joint[cell] = joint[cell].wrapping_add(1);
            }
            for (&key, v) in keys.iter().zip(values) {
                let slot = (key >> label_bits) as usize * card + v as usize;
                totals[slot] = 0;
                joint[slot << label_bits | (key & label_mask) as usize] = 0;
            }
            total += 2 * u128::from(half);
        }
        Ok(total)
    }

    /// [`undiscerned_in`](Self::undiscerned_in) for a candidate of cardinality `card`
    /// whose values at the positions `r` of the layout are `values(r)`.
    fn undiscerned_by<I, F>(
        &self,
        card: u32,
        values: F,
        blocks: Range<usize>,
        scratch: &mut Scratch,
    ) -> Result<u128>
    where
        F: Fn(Range<usize>) -> I,
        I: Iterator<Item = u32> + Clone,
    {
        let n_labels = self.n_labels as usize;
        if u128::from(card) * n_labels as u128 > SEARCH_DENSE_CELLS {
            return Ok(self.undiscerned_sorted(values, n_labels, blocks));
        }
        // Cell (v, l) is v · 2^label_bits + l: a shift per row rather than a product.
        let label_bits = self.label_bits();
        let card = card as usize;
        let cells = card << label_bits;
        let (totals, lanes) = scratch.tables(card, LANES * cells)?;
        let mut total: u128 = 0;
        // Counts stay below n < 2^32, so no increment below wraps.
        for block in self.bounds[blocks.start..=blocks.end].windows(2) {
            let rows = block[0]..block[1];
            let labels = &self.labels[rows.clone()];
            let values = values(rows);
            if labels.len() >= lanes.len() {
                // A large class: count into LANES interleaved counters per cell, so that
                // rows hitting the same cell in a row do not wait for each other's
                // increments, then read the squares off the table.
                let stride = LANES << label_bits;
                for (i, (v, &l)) in values.zip(labels).enumerate() {
                    let cell = lane_cell(v, stride, l, i);
                    lanes[cell] = lanes[cell].wrapping_add(1);
                }
                let (mut value_sq, mut joint_sq) = (0u128, 0u128);
                for value in lanes.chunks_exact_mut(LANES << label_bits) {
                    let mut size = 0u64;
                    for cell in value.chunks_exact_mut(LANES) {
                        let count: u64 = cell.iter().map(|&c| u64::from(c)).sum();
                        cell.fill(0);
                        size += count;
                        joint_sq += u128::from(count) * u128::from(count);
                    }
                    value_sq += u128::from(size) * u128::from(size);
                }
                total += value_sq - joint_sq;
                continue;
            }
            // A small class: each row adds 2 × (earlier rows with its value and another
            // label), which sums to Σ_v (m_v² − Σ_l m_{v,l}²) with no pass over the
            // table.
            let mut half: u64 = 0;
            for (v, &l) in values.clone().zip(labels) {
                let (v, cell) = (v as usize, (v as usize) << label_bits | l as usize);
                // totals[v] counts the earlier rows of value v, lanes[cell] those among
                // them with label l.
                half += u64::from(totals[v].wrapping_sub(lanes[cell]));
                totals[v] = totals[v].wrapping_add(1);
                lanes[cell] = lanes[cell].wrapping_add(1);
            }
            // The touched cells are reset through the same rows, or all at once when the
            // class has more rows than the tables have cells to clear per row.
            if labels.len() * SMALL_CLASS_CLEAR >= card + cells {
                totals.fill(0);
                lanes[..cells].fill(0);
            } else {
                for (v, &l) in values.zip(labels) {
                    totals[v as usize] = 0;
                    lanes[(v as usize) << label_bits | l as usize] = 0;
                }
            }
            total += 2 * u128::from(half);
        }
        Ok(total)
    }

    /// As [`undiscerned_by`](Self::undiscerned_by) for huge value × label domains: each
    /// class's (value, label) pairs are sorted and counted in runs.
    fn undiscerned_sorted<I, F>(&self, values: F, n_labels: usize, blocks: Range<usize>) -> u128
    where
        F: Fn(Range<usize>) -> I,
        I: Iterator<Item = u32>,
    {
        let mut keys: Vec<u64> = Vec::new();
        let mut total: u128 = 0;
        for block in self.bounds[blocks.start..=blocks.end].windows(2) {
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
        self.add_scored(attribute, None)
    }

    /// [`add`](Self::add) for a candidate whose gain the caller has from
    /// [`gains`](Self::gains) of the current S, which spares scoring it again.
    ///
    /// # Errors
    /// As [`add`](Self::add).
    pub(super) fn add_with_gain(&mut self, attribute: usize, gain: u128) -> Result<()> {
        self.add_scored(attribute, Some(gain))
    }

    fn add_scored(&mut self, attribute: usize, gain: Option<u128>) -> Result<()> {
        let Ok(p) = self.remaining.binary_search(&attribute) else {
            return Err(Error::InvalidData(format!(
                "attribute {attribute} is not a remaining candidate (selected: {:?}, \
                 columns: {})",
                self.selected,
                self.cardinalities().len()
            )));
        };
        let undiscerned = match gain {
            Some(gain) => self.undiscerned - gain,
            None => self.undiscerned_with(p)?,
        };
        if let Some(partition) = &self.full {
            let card = self.cardinalities()[attribute];
            let refined = partition.refine_valid(self.cols.column(attribute), card, None);
            self.full = Some(refined);
            if !self.copies.is_empty() {
                let copy = self.copies.remove(p);
                self.spare.extend(copy.is_owned().then_some(copy));
            }
            self.remaining.remove(p);
            self.selected.push(attribute);
            self.undiscerned = undiscerned;
            return self.leave_full_pass();
        }
        let column: Cow<'_, [u32]> = match self.values(p) {
            Values::Direct(column) => Cow::Borrowed(column),
            Values::Copied(codes) => Cow::Owned(codes.widen()?),
            Values::Indexed { column, rows } => Cow::Owned(gather(column, rows)?),
        };
        let card = self.cardinalities()[attribute];
        let refined = if self.labels.is_empty() {
            None
        } else {
            Some(self.class_rows().refined(&column, card)?)
        };
        drop(column);
        if !self.copies.is_empty() {
            let copy = self.copies.remove(p);
            self.spare.extend(copy.is_owned().then_some(copy));
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
            Layout::Copied | Layout::Records => true,
        };
        if !copy {
            self.copies = Vec::new();
            self.spare = Vec::new();
        } else if self.copies.is_empty() {
            // Straight from the table: its rows in layout order.
            self.copies = self.collect_copies(|p| {
                let j = self.remaining[p];
                Codes::narrow(self.cols.column(j), Some(&rows), self.cardinalities()[j])
            })?;
        } else {
            // From the previous copies, whose positions `source` points into: each
            // new class reads from inside its parent class, which keeps reads local.
            self.move_copies(Move::Gather(&source))?;
        }
        self.rows = Some(rows);
        self.bounds = bounds;
        Ok(())
    }

    /// Moves the copies to a new layout; their old buffers are kept for the next move.
    fn move_copies(&mut self, how: Move<'_>) -> Result<()> {
        let buffers = std::mem::take(&mut self.spare);
        let moved = Codes::move_all(&self.copies, how, buffers)?;
        let old = std::mem::replace(&mut self.copies, moved);
        self.spare = old.into_iter().filter(Codes::is_owned).collect();
        Ok(())
    }

    /// One copy per remaining candidate `p`, made by `copy(p)`.
    fn collect_copies<F>(&self, copy: F) -> Result<Vec<Codes<'a>>>
    where
        F: Fn(usize) -> Result<Codes<'a>> + Sync + Send,
    {
        (0..self.remaining.len())
            .into_par_iter()
            .map(|p| check_interrupt().and_then(|()| copy(p)))
            .collect()
    }
}

/// Rows grouped by class, class `b` at positions `bounds[b]..bounds[b + 1]`, with their
/// labels: what refining the classes by one more column needs of a layout.
#[derive(Clone, Copy)]
struct ClassRows<'c> {
    bounds: &'c [usize],
    labels: &'c [u32],
}

impl ClassRows<'_> {
    /// The classes in consecutive groups of at least [`REBUILD_CHUNK`] rows (the last
    /// may be smaller): group `g` is classes `groups[g]..groups[g + 1]`. The groups
    /// depend on the layout only, never on the thread count.
    fn groups(&self) -> Vec<usize> {
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
        groups
    }

    /// The positions (in the current layout) of the rows of the mixed classes of S ∪ {a},
    /// grouped by class in (class, value) order, with the new class bounds. Parallel over
    /// fixed groups of classes, so the layout does not depend on the thread count.
    fn refined<T>(&self, column: &[T], card: u32) -> Result<(Vec<u32>, Vec<usize>)>
    where
        T: Copy + Ord + Into<u32> + Sync,
    {
        let groups = self.groups();
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

    fn refine_blocks<T>(
        &self,
        column: &[T],
        card: u32,
        blocks: std::ops::Range<usize>,
    ) -> Result<(Vec<u32>, Vec<usize>)>
    where
        T: Copy + Ord + Into<u32>,
    {
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
                    starts[v.into() as usize] += 1;
                }
                let mut offset = 0u32;
                for slot in starts.iter_mut() {
                    let count = *slot;
                    *slot = offset;
                    offset += count;
                }
                sorted.resize(values.len(), 0);
                for (i, &v) in values.iter().enumerate() {
                    let slot = &mut starts[v.into() as usize];
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

/// Checks that class bounds rise from 0 to the number of rows `n`.
fn check_class_bounds(bounds: &[usize], n: usize) -> Result<()> {
    let ordered = bounds.windows(2).all(|pair| pair[0] <= pair[1]);
    if bounds.first() != Some(&0) || bounds.last() != Some(&n) || !ordered {
        return Err(Error::InvalidData(format!(
            "bounds must rise from 0 to the number of rows ({n}), got {} values from {:?} \
             to {:?}",
            bounds.len(),
            bounds.first(),
            bounds.last()
        )));
    }
    Ok(())
}

/// A round of [`grouped_round`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupedRound<C> {
    /// Undiscerned pairs of S ∪ {a} for every column `a` but the one refined by, in column
    /// order.
    pub undiscerned_pairs: Vec<u64>,
    /// After a refinement, the rows of its mixed classes grouped by class: the codes of
    /// every column but the one refined by (column-major, the input's type) and the labels;
    /// without one, the rows grouped by [`RowGroups::Classes`] (every column).
    pub refined: Option<(Vec<C>, Vec<u32>)>,
    /// Where each class starts in the rows, then the end.
    pub bounds: Vec<usize>,
}

/// How the rows of a [`grouped_round`] fall into the classes of S.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowGroups<'g> {
    /// Rows already grouped by class: class `b` is the rows `bounds[b]..bounds[b + 1]`.
    Bounds(Vec<usize>),
    /// The class of every row, below `n_classes`, rows in any order: the round groups
    /// them (rows of a class keep their order).
    Classes {
        classes: &'g [u32],
        n_classes: usize,
    },
}

/// Where every row goes in class order (stable: a counting sort of `classes`), and the
/// bounds of the classes that have rows.
fn class_targets(
    classes: &[u32],
    n_classes: usize,
    n_rows: usize,
) -> Result<(Vec<u32>, Vec<usize>)> {
    if classes.len() != n_rows {
        return Err(Error::InvalidData(format!(
            "classes has {} rows, expected {n_rows} (the labels' rows)",
            classes.len()
        )));
    }
    let mut next = zeroed_vec::<u64>(n_classes + 1, "the class table")?;
    for (row, &class) in classes.iter().enumerate() {
        if class as usize >= n_classes {
            return Err(Error::InvalidData(format!(
                "classes[{row}] = {class} is >= n_classes = {n_classes}"
            )));
        }
        next[class as usize + 1] += 1;
    }
    for b in 1..=n_classes {
        next[b] += next[b - 1];
    }
    let mut bounds: Vec<usize> = next.iter().map(|&b| b as usize).collect();
    bounds.dedup();
    let mut target = zeroed_vec::<u32>(n_rows, "the class order")?;
    for (slot, &class) in target.iter_mut().zip(classes) {
        let next = &mut next[class as usize];
        *slot = *next as u32;
        *next += 1;
    }
    Ok((target, bounds))
}

/// One round of a discernibility search on rows grouped by class (`bounds`, as
/// [`DiscernibilitySearch::from_groups`] takes them): refine by column `refine_by` if
/// given, keeping the rows of the classes that still mix labels, then count every other
/// column's undiscerned pairs in one pass over the candidates.
///
/// The round a partition of a distributed table runs once each class of S lies in one
/// partition (paper 001 §2.2; the partitions' counts add up to the table's). State
/// travels between rounds as plain arrays: `codes` (`cardinalities.len()` columns of
/// `labels.codes().len()` rows, column-major) in the caller's unsigned type, which the
/// refined rows keep. Every column is moved at most once a round, straight into the
/// refined rows it returns (in grouped order, by [`RowGroups::Classes`], then into the
/// refinement's layout), and the candidates are scored where they lie: the caller's
/// codes, or the refined rows, are the search's copies ([`Layout::Copied`]), read 1 or
/// 2 bytes a row where the codes are narrow.
///
/// # Errors
/// As [`Columns::new`], [`DiscernibilitySearch::from_groups`] and
/// [`DiscernibilitySearch::add`]; a count of 2^64 pairs or more.
pub fn grouped_round<C: GroupedCode>(
    codes: &[C],
    cardinalities: &[u32],
    labels: &Labels<'_>,
    groups: RowGroups<'_>,
    refine_by: Option<usize>,
) -> Result<GroupedRound<C>> {
    let n = labels.codes().len();
    let n_labels = labels.n_labels();
    check_table(codes, n, cardinalities)?;
    let d = cardinalities.len();
    if let Some(attribute) = refine_by.filter(|&a| a >= d) {
        return Err(Error::InvalidData(format!(
            "attribute {attribute} is not a remaining candidate (columns: {d})"
        )));
    }
    let (mut codes, mut labels, mut bounds, changed): (Cow<'_, [C]>, Cow<'_, [u32]>, _, _) =
        match groups {
            RowGroups::Bounds(bounds) => (codes.into(), labels.codes().into(), bounds, false),
            RowGroups::Classes { classes, n_classes } => {
                let (target, bounds) = class_targets(classes, n_classes, n)?;
                let grouped = scatter_columns(codes, &target)?;
                let grouped_labels = scatter_columns(labels.codes(), &target)?;
                (grouped.into(), grouped_labels.into(), bounds, true)
            }
        };
    let mut cards: Cow<'_, [u32]> = cardinalities.into();
    if let Some(attribute) = refine_by {
        let rows = labels.len();
        let (source, refined) = if rows == 0 {
            (Vec::new(), bounds.clone())
        } else {
            check_class_bounds(&bounds, rows)?;
            let column = &codes[attribute * rows..(attribute + 1) * rows];
            let classes = ClassRows {
                bounds: &bounds,
                labels: &labels,
            };
            classes.refined(column, cardinalities[attribute])?
        };
        let others: Vec<usize> = (0..d).filter(|&j| j != attribute).collect();
        codes = gather_columns(&codes, rows, &others, &source)?.into();
        labels = gather(&labels, &source)?.into();
        cards = others.iter().map(|&j| cardinalities[j]).collect();
        bounds = refined;
    }
    let rows = labels.len();
    let grouped = Labels::new(&labels, n_labels)?;
    let cols = Columns::without_values(rows, &cards);
    let mut search = DiscernibilitySearch::from_groups(cols, &grouped, bounds)?;
    search.copies = codes.chunks(rows.max(1)).map(C::borrowed).collect();
    search.copies.resize_with(cards.len(), || C::borrowed(&[]));
    search.layout = Layout::Copied;
    let undiscerned = search.undiscerned_pairs();
    let undiscerned_pairs = search
        .gains()?
        .into_iter()
        .map(|gain| {
            u64::try_from(undiscerned - gain).map_err(|_| {
                Error::InvalidData(format!(
                    "{} undiscerned pairs exceed 2**64",
                    undiscerned - gain
                ))
            })
        })
        .collect::<Result<Vec<u64>>>()?;
    let bounds = std::mem::take(&mut search.bounds);
    drop(search);
    let refined =
        (changed || refine_by.is_some()).then(|| (codes.into_owned(), labels.into_owned()));
    Ok(GroupedRound {
        undiscerned_pairs,
        refined,
        bounds,
    })
}

/// Every column of the column-major `codes` (`target.len()` rows each) with row `r`
/// moved to `target[r]` (a permutation), one column at a time: the rows are read in
/// order and written to one stream per class, which stay in cache, where gathering
/// them by class would read every column at random.
fn scatter_columns<C: Code + ZeroBits>(codes: &[C], target: &[u32]) -> Result<Vec<C>> {
    let n = target.len();
    let mut out = zeroed_vec::<C>(codes.len(), "the grouped codes")?;
    if n == 0 {
        return Ok(out);
    }
    out.par_chunks_mut(n)
        .zip(codes.par_chunks(n))
        .for_each(|(out, column)| {
            for (&value, &to) in column.iter().zip(target) {
                out[to as usize] = value;
            }
        });
    Ok(out)
}

/// The columns `which` of the column-major `codes` (`n` rows each) at the rows
/// `source`, column-major: groups of [`MOVE_COLUMNS`] columns in parallel, a block of
/// [`MOVE_ROWS`] positions at a time, so that `source` is read once per group.
fn gather_columns<C: Code + ZeroBits>(
    codes: &[C],
    n: usize,
    which: &[usize],
    source: &[u32],
) -> Result<Vec<C>> {
    let rows = source.len();
    let cells = rows
        .checked_mul(which.len())
        .ok_or_else(|| Error::OutputTooLarge("the refined codes".to_string()))?;
    let mut out = zeroed_vec::<C>(cells, "the refined codes")?;
    if cells == 0 {
        return Ok(out);
    }
    out.par_chunks_mut(rows * MOVE_COLUMNS)
        .zip(which.par_chunks(MOVE_COLUMNS))
        .for_each(|(outs, group)| {
            for start in (0..rows).step_by(MOVE_ROWS) {
                let block = start..(start + MOVE_ROWS).min(rows);
                for (out, &j) in outs.chunks_mut(rows).zip(group) {
                    let column = &codes[j * n..(j + 1) * n];
                    for (slot, &from) in out[block.clone()].iter_mut().zip(&source[block.clone()]) {
                        *slot = column[from as usize];
                    }
                }
            }
        });
    Ok(out)
}

/// Cell `(major · 2^b + minor) · LANES + i mod LANES` of a table of [`LANES`]
/// interleaved counters per cell, for `stride` = `LANES · 2^b` and `minor` < 2^b. Written
/// as a product and an or, it costs the counting loops no variable shift and no overflow
/// check (every table is far below 2^64 cells): the full passes of 10M × 50 codes ran
/// 20 % faster than with `((major << b | minor) * LANES + i % LANES)`.
#[inline(always)]
fn lane_cell(major: u32, stride: usize, minor: u32, i: usize) -> usize {
    (major as usize)
        .wrapping_mul(stride)
        .wrapping_add((minor as usize * LANES) | (i % LANES))
}

/// The undiscerned pairs from the (key, value) counts of a full pass, `LANES` counters
/// per cell, key = class · `n_labels` + label and cell = key · 2^`value_bits` + value.
fn full_pass_undiscerned(table: &[u32], n_labels: usize, value_bits: u32) -> u128 {
    let joint: Vec<u64> = table
        .chunks_exact(LANES)
        .map(|cell| cell.iter().map(|&c| u64::from(c)).sum())
        .collect();
    let mut sizes = vec![0u64; 1 << value_bits];
    let (mut value_sq, mut joint_sq) = (0u128, 0u128);
    for class in joint.chunks_exact(n_labels << value_bits) {
        sizes.fill(0);
        for label in class.chunks_exact(1 << value_bits) {
            for (size, &count) in sizes.iter_mut().zip(label) {
                *size += count;
                joint_sq += u128::from(count) * u128::from(count);
            }
        }
        value_sq += sizes
            .iter()
            .map(|&s| u128::from(s) * u128::from(s))
            .sum::<u128>();
    }
    value_sq - joint_sq
}

/// How copies move from one layout to the next.
#[derive(Clone, Copy)]
enum Move<'p> {
    /// New position `q` takes the value of old position `source[q]`.
    Gather(&'p [u32]),
    /// Old position `i` goes to new position `target[i]`, of `len` positions; rows
    /// left out have the target `len`.
    Scatter(&'p [u32], usize),
}

/// [`Codes::move_block`] on one type.
fn move_block<T: Copy>(values: &[T], out: &mut [T], how: Move<'_>, block: Range<usize>) {
    match how {
        Move::Gather(source) => {
            for (slot, &from) in out[block.clone()].iter_mut().zip(&source[block]) {
                *slot = values[from as usize];
            }
        }
        Move::Scatter(target, _) => {
            for (&value, &to) in values[block.clone()].iter().zip(&target[block]) {
                out[to as usize] = value;
            }
        }
    }
}

/// `values[positions]`.
fn gather<T: ZeroBits + Send + Sync>(values: &[T], positions: &[u32]) -> Result<Vec<T>> {
    gather_map(values, Some(positions), |v| v)
}

/// `map(values[positions])`, or `map(values)` when `positions` is `None`.
fn gather_map<T, U, F>(values: &[T], positions: Option<&[u32]>, map: F) -> Result<Vec<U>>
where
    T: Copy + Sync,
    U: ZeroBits + Send,
    F: Fn(T) -> U + Sync,
{
    let len = positions.map_or(values.len(), <[u32]>::len);
    let mut out = zeroed_vec::<U>(len, "the refined layout")?;
    match positions {
        Some(positions) => out
            .par_chunks_mut(REBUILD_CHUNK)
            .zip(positions.par_chunks(REBUILD_CHUNK))
            .for_each(|(out, pos)| {
                for (slot, &p) in out.iter_mut().zip(pos) {
                    *slot = map(values[p as usize]);
                }
            }),
        None => out
            .par_chunks_mut(REBUILD_CHUNK)
            .zip(values.par_chunks(REBUILD_CHUNK))
            .for_each(|(out, values)| {
                for (slot, &v) in out.iter_mut().zip(values) {
                    *slot = map(v);
                }
            }),
    }
    Ok(out)
}
