//! The frequency oracle: weighted transactions reduced at every node, switching to bitsets
//! once a node's database is small.

use std::sync::Arc;

use super::vertical::VerticalDb;
use super::{Eval, Oracle, Rows};
use crate::bitset::{count, ones};
use crate::resources::alloc_output;
use crate::{Error, Result};

/// `S` is feasible iff at least `min_support` rows contain it.
#[derive(Debug)]
pub struct Frequency {
    min_support: u64,
    /// Frequent items renumbered by decreasing support; `original[i]` is the column index.
    original: Vec<u32>,
    root: Option<Db>,
    layout: Layout,
}

/// When a node's database is held as bitsets (MINING.md, technique 6).
///
/// Counting the candidates of a horizontal node reads each (transaction, item) pair
/// once; a vertical node reads `words × (1 + weight planes)` per item instead. A node
/// goes vertical when it has at most `max_transactions` distinct transactions and that
/// cost is at most `density_factor` times the number of pairs (dense data: chess,
/// mushroom, connect); sparse data (retail, T10I4D100K) stays horizontal. A vertical node
/// whose transactions are at most `1 / compress_factor` of its bitsets' width compresses
/// them to its own transactions, and goes back to horizontal if it is then sparse.
///
/// The root of a split search, whose top-level branches are searched apart (on several
/// threads, or under a cap on the number of sets), goes vertical up to
/// `max_split_transactions` instead. A horizontal root would be searched in sequence on
/// the calling thread and apart from the last branch back on the others, and a branch
/// searched apart carries its earlier siblings in every transaction: on dense data that
/// costs more than bitsets twice as wide. Connect (67,557 transactions) at support 3000
/// on two threads took 2.75–2.85 s with a horizontal root and 1.91–2.08 s with bitsets;
/// on one thread, where the root is not split, the horizontal sequence stays faster at
/// supports 5000–20000.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub max_transactions: usize,
    pub max_split_transactions: usize,
    pub density_factor: usize,
    pub compress_factor: usize,
}

impl Default for Layout {
    /// Measured on the FIMI benchmark (`benches/bench_itemsets.py`): the times change by
    /// less than 10% between 9,000 and 70,000 transactions and factors 1 to 4.
    fn default() -> Self {
        Layout {
            max_transactions: 1 << 16,
            max_split_transactions: 1 << 17,
            density_factor: 2,
            compress_factor: 2,
        }
    }
}

impl Layout {
    fn vertical(
        &self,
        n_transactions: usize,
        cost: usize,
        occurrences: usize,
        split_root: bool,
    ) -> bool {
        let max_transactions = if split_root {
            self.max_split_transactions.max(self.max_transactions)
        } else {
            self.max_transactions
        };
        n_transactions <= max_transactions
            && cost <= self.density_factor.saturating_mul(occurrences)
    }
}

/// Transactions containing `S`, restricted to the node's candidate items, duplicates merged.
///
/// After [`Oracle::reduce`] the candidates are `keep` (the tail first, in exploration
/// order), every transaction lists its items in that order, and the occurrences of each
/// tail item are delivered: for `keep[r]`, `r < n_tail`, the transactions
/// `occ_rows[occ_offsets[r]..occ_offsets[r + 1]]`, with the item at `items[occ_at[..]]`.
/// A child then reads the transactions of its item where they stand, and only what
/// follows the item when its candidates are the later items (MINING.md, techniques 3
/// and 4).
#[derive(Debug, Default)]
pub struct Db {
    items: Vec<u32>,
    offsets: Vec<u32>,
    weights: Vec<u64>,
    support: u64,
    keep: Vec<u32>,
    n_tail: usize,
    occ_offsets: Vec<u32>,
    occ_rows: Vec<u32>,
    occ_at: Vec<u32>,
    reduced: bool,
    /// Whether this is the root node of a split search, whose children are top-level
    /// branches searched apart (in parallel), so their earlier siblings stay as excluded
    /// items; a child of any other node has the items after its own in `keep` as
    /// candidates.
    is_root: bool,
}

impl Db {
    fn transaction(&self, t: usize) -> &[u32] {
        &self.items[self.offsets[t] as usize..self.offsets[t + 1] as usize]
    }

    fn len(&self) -> usize {
        self.weights.len()
    }

    /// Empties the database, keeping its buffers.
    fn recycle(mut self) -> Self {
        self.items.clear();
        self.offsets.clear();
        self.weights.clear();
        self.keep.clear();
        self.occ_offsets.clear();
        self.occ_rows.clear();
        self.occ_at.clear();
        self.support = 0;
        self.n_tail = 0;
        self.reduced = false;
        self
    }
}

/// A node of the search: the transactions containing `S`, as lists of items (horizontal,
/// own or read in the parent's database) or as bitsets (vertical), as [`Layout`] decides.
#[derive(Debug)]
pub enum Node {
    Horizontal(Arc<Db>),
    Projected(Projection),
    Vertical(Bits),
}

/// The node of `S ∪ {keep[rank]}` before its reduction: the transactions of `parent` that
/// contain `keep[rank]`, read in place.
#[derive(Debug)]
pub struct Projection {
    parent: Arc<Db>,
    rank: usize,
    support: u64,
    /// Whether the child reads its transactions whole (a top-level branch searched apart,
    /// whose earlier siblings are excluded items) rather than after its item.
    whole: bool,
}

/// A vertical node: the transactions of `db` that contain `S`, and their total weight.
#[derive(Debug)]
pub struct Bits {
    db: Arc<VerticalDb>,
    tids: Vec<u64>,
    support: u64,
}

/// Per-thread counters, item marks and spare buffers.
#[derive(Debug)]
pub struct Scratch {
    counts: Vec<u64>,
    mark: Vec<u8>,
    table: Vec<u32>,
    /// One entry per item, `u32::MAX` between uses.
    position: Vec<u32>,
    /// One transaction's ranks while it is reordered.
    row: Vec<u32>,
    /// Databases of finished nodes, reused by new ones (MINING.md, technique 3).
    spare: Vec<Db>,
}

/// The transactions of a horizontal node with their weights: all of a database, or those
/// of a projection (then only the part after the projected item when the child's
/// candidates are the later items; otherwise whole, the item included).
#[derive(Clone, Copy)]
enum NodeRows<'a> {
    All(&'a Db),
    Containing(&'a Projection),
}

impl<'a> NodeRows<'a> {
    fn of(node: &'a Node) -> Option<Self> {
        match node {
            Node::Horizontal(db) => Some(NodeRows::All(db)),
            Node::Projected(p) => Some(NodeRows::Containing(p)),
            Node::Vertical(_) => None,
        }
    }

    fn len(self) -> usize {
        match self {
            NodeRows::All(db) => db.len(),
            NodeRows::Containing(p) => {
                (p.parent.occ_offsets[p.rank + 1] - p.parent.occ_offsets[p.rank]) as usize
            }
        }
    }

    fn for_each(self, mut f: impl FnMut(&'a [u32], u64)) {
        match self {
            NodeRows::All(db) => {
                for t in 0..db.len() {
                    f(db.transaction(t), db.weights[t]);
                }
            }
            NodeRows::Containing(p) => {
                let (db, r) = (&*p.parent, p.rank);
                let range = db.occ_offsets[r] as usize..db.occ_offsets[r + 1] as usize;
                for (&t, &at) in db.occ_rows[range.clone()].iter().zip(&db.occ_at[range]) {
                    let t = t as usize;
                    let end = db.offsets[t + 1] as usize;
                    let start = if !p.whole {
                        at as usize + 1
                    } else {
                        db.offsets[t] as usize
                    };
                    f(&db.items[start..end], db.weights[t]);
                }
            }
        }
    }
}

fn hash(items: &[u32]) -> u64 {
    let mut h: u64 = items.len() as u64;
    for &i in items {
        h = (h.rotate_left(5) ^ u64::from(i)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    h ^ (h >> 29)
}

/// Appends `row` (already filtered) to `out` unless an equal transaction is there, in which
/// case its weight grows. `table` is an open-addressing index of `out`'s transactions.
fn push_merged(out: &mut Db, table: &mut [u32], row_start: usize, weight: u64) {
    let mask = table.len() - 1;
    let row_end = out.items.len();
    let mut slot = hash(&out.items[row_start..row_end]) as usize & mask;
    loop {
        let entry = table[slot];
        if entry == u32::MAX {
            table[slot] = out.weights.len() as u32;
            out.weights.push(weight);
            out.offsets.push(row_end as u32);
            return;
        }
        let t = entry as usize;
        if out.items[out.offsets[t] as usize..out.offsets[t + 1] as usize]
            == out.items[row_start..row_end]
        {
            out.weights[t] += weight;
            out.items.truncate(row_start);
            return;
        }
        slot = (slot + 1) & mask;
    }
}

fn table_for(table: &mut Vec<u32>, n: usize) {
    let size = (2 * n.max(1)).next_power_of_two();
    table.clear();
    table.resize(size, u32::MAX);
}

impl Frequency {
    /// Prepares the oracle: drops infrequent items, renumbers the others by decreasing
    /// support and merges identical transactions.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `min_support` is 0; [`Error::OutputTooLarge`] when
    /// the database has 2^32 or more item occurrences or the per-item tables cannot be
    /// allocated.
    pub fn new(rows: Rows<'_>, min_support: u64) -> Result<Self> {
        Self::with_layout(rows, min_support, Layout::default())
    }

    /// [`Frequency::new`] with the given choice of bitsets.
    ///
    /// # Errors
    /// As [`Frequency::new`].
    pub fn with_layout(rows: Rows<'_>, min_support: u64, layout: Layout) -> Result<Self> {
        if min_support == 0 {
            return Err(Error::parameter("min_support", 0, "must be >= 1"));
        }
        if u32::try_from(rows.indices().len()).is_err() {
            return Err(Error::OutputTooLarge(format!(
                "{} item occurrences exceed the limit of 2^32 - 1",
                rows.indices().len()
            )));
        }
        let n = rows.n_rows() as u64;
        let mut support: Vec<u64> = alloc_output(rows.n_features(), "item supports")?;
        for &i in rows.indices() {
            support[i as usize] += 1;
        }
        let mut frequent: Vec<u32> = (0..rows.n_features() as u32)
            .filter(|&i| support[i as usize] >= min_support)
            .collect();
        frequent.sort_by_key(|&i| (std::cmp::Reverse(support[i as usize]), i));
        let root = if n >= min_support {
            Some(root_db(rows, &frequent, &support)?)
        } else {
            None
        };
        Ok(Frequency {
            min_support,
            original: frequent,
            root,
            layout,
        })
    }

    /// Column index of each renumbered item.
    pub fn original(&self) -> &[u32] {
        &self.original
    }

    fn eval(&self, count: u64, support: u64) -> Eval {
        Eval {
            feasible: count >= self.min_support,
            perfect: count == support,
            key: count,
        }
    }

    /// Counts every item of `rows` in one pass and evaluates the candidates.
    fn count(
        &self,
        rows: NodeRows<'_>,
        support: u64,
        candidates: &[u32],
        s: &mut Scratch,
        out: &mut Vec<Eval>,
    ) {
        let counts = &mut s.counts;
        rows.for_each(|row, w| {
            for &i in row {
                counts[i as usize] += w;
            }
        });
        out.clear();
        out.extend(candidates.iter().map(|&c| {
            let count = std::mem::take(&mut counts[c as usize]);
            self.eval(count, support)
        }));
        if let NodeRows::Containing(p) = rows {
            counts[p.parent.keep[p.rank] as usize] = 0;
        }
    }

    /// Database reduction: the transactions of `rows` restricted to `keep`, each listing its
    /// items in `keep`'s order, identical ones merged; then bitsets when [`Layout`] says so,
    /// else a horizontal node whose tail items (the first `n_tail` of `keep`) have their
    /// occurrences delivered in one pass. Buffers come from the scratch's spare databases.
    fn build(
        &self,
        rows: NodeRows<'_>,
        support: u64,
        is_root: bool,
        keep: &[u32],
        n_tail: usize,
        s: &mut Scratch,
    ) -> Node {
        let mut out = s.spare.pop().unwrap_or_default();
        out.support = support;
        out.is_root = is_root;
        out.reduced = true;
        out.n_tail = n_tail;
        out.keep.extend_from_slice(keep);
        out.offsets.push(0);
        for (r, &i) in keep.iter().enumerate() {
            s.position[i as usize] = r as u32;
        }
        table_for(&mut s.table, rows.len());
        let (position, row, table) = (&s.position, &mut s.row, &mut s.table);
        rows.for_each(|items, weight| {
            row.clear();
            row.extend(
                items
                    .iter()
                    .map(|&i| position[i as usize])
                    .filter(|&r| r != u32::MAX),
            );
            if row.is_empty() {
                return;
            }
            row.sort_unstable();
            let start = out.items.len();
            out.items.extend(row.iter().map(|&r| keep[r as usize]));
            push_merged(&mut out, table, start, weight);
        });
        let max_weight = out.weights.iter().copied().max().unwrap_or(1);
        let cost = VerticalDb::cost(out.len(), max_weight, keep.len());
        if self
            .layout
            .vertical(out.len(), cost, out.items.len(), is_root)
        {
            for &i in keep {
                s.position[i as usize] = u32::MAX;
            }
            let node = vertical(&out, keep, s);
            s.spare.push(out.recycle());
            return node;
        }
        // Tail items lead every transaction, so each scan stops at the first other item.
        out.occ_offsets.resize(n_tail + 1, 0);
        for t in 0..out.len() {
            let row = &out.items[out.offsets[t] as usize..out.offsets[t + 1] as usize];
            for &i in row {
                let r = s.position[i as usize] as usize;
                if r >= n_tail {
                    break;
                }
                out.occ_offsets[r + 1] += 1;
            }
        }
        for r in 1..=n_tail {
            out.occ_offsets[r] += out.occ_offsets[r - 1];
        }
        let total = out.occ_offsets[n_tail] as usize;
        out.occ_rows.resize(total, 0);
        out.occ_at.resize(total, 0);
        let fill = &mut s.row;
        fill.clear();
        fill.extend_from_slice(&out.occ_offsets[..n_tail]);
        for t in 0..out.len() {
            for at in out.offsets[t]..out.offsets[t + 1] {
                let r = s.position[out.items[at as usize] as usize] as usize;
                if r >= n_tail {
                    break;
                }
                let k = fill[r] as usize;
                out.occ_rows[k] = t as u32;
                out.occ_at[k] = at;
                fill[r] += 1;
            }
        }
        for &i in keep {
            s.position[i as usize] = u32::MAX;
        }
        Node::Horizontal(Arc::new(out))
    }

    fn look_ahead_horizontal(
        &self,
        rows: NodeRows<'_>,
        tail: &[u32],
        excluded: &[u32],
        s: &mut Scratch,
    ) -> Option<(u64, bool)> {
        for &i in tail {
            s.mark[i as usize] = 1;
        }
        let mut support = 0;
        let (mark, counts) = (&s.mark, &mut s.counts);
        rows.for_each(|row, weight| {
            if row.len() < tail.len() {
                return;
            }
            let hits = row.iter().filter(|&&i| mark[i as usize] != 0).count();
            if hits == tail.len() {
                support += weight;
                for &i in row {
                    counts[i as usize] += weight;
                }
            }
        });
        for &i in tail {
            s.mark[i as usize] = 0;
            s.counts[i as usize] = 0;
        }
        let mut maximal = true;
        for &i in excluded {
            maximal &= std::mem::take(&mut s.counts[i as usize]) < self.min_support;
        }
        (support >= self.min_support).then_some((support, maximal))
    }
}

/// The root database: the transactions over the frequent items (renumbered by rank),
/// identical ones merged. Each transaction comes out sorted by a counting-sort
/// transposition (the rows of each item are listed, then read back in rank order) instead
/// of a sort per row.
fn root_db(rows: Rows<'_>, frequent: &[u32], support: &[u64]) -> Result<Db> {
    let n = rows.n_rows();
    let mut rank: Vec<u32> = alloc_output(rows.n_features(), "item ranks")?;
    rank.fill(u32::MAX);
    let mut column_start = Vec::with_capacity(frequent.len() + 1);
    column_start.push(0usize);
    for (r, &i) in frequent.iter().enumerate() {
        rank[i as usize] = r as u32;
        column_start.push(column_start[r] + support[i as usize] as usize);
    }
    let total = column_start[frequent.len()];
    let mut column_fill = column_start.clone();
    let mut columns: Vec<u32> = alloc_output(total, "item occurrences")?;
    let mut row_start = vec![0usize; n + 1];
    for u in 0..n {
        for &i in rows.row(u) {
            let r = rank[i as usize];
            if r != u32::MAX {
                columns[column_fill[r as usize]] = u as u32;
                column_fill[r as usize] += 1;
                row_start[u + 1] += 1;
            }
        }
    }
    for u in 1..=n {
        row_start[u] += row_start[u - 1];
    }
    let mut row_fill = row_start.clone();
    let mut sorted: Vec<u32> = alloc_output(total, "item occurrences")?;
    for r in 0..frequent.len() {
        for &u in &columns[column_start[r]..column_start[r + 1]] {
            sorted[row_fill[u as usize]] = r as u32;
            row_fill[u as usize] += 1;
        }
    }
    drop(columns);
    let mut db = Db {
        support: n as u64,
        offsets: vec![0],
        ..Db::default()
    };
    db.items.reserve(total);
    let mut table = Vec::new();
    table_for(&mut table, n);
    for u in 0..n {
        let row = &sorted[row_start[u]..row_start[u + 1]];
        if row.is_empty() {
            continue;
        }
        let start = db.items.len();
        db.items.extend_from_slice(row);
        push_merged(&mut db, &mut table, start, 1);
    }
    Ok(db)
}

/// The vertical node of the (merged, reduced) transactions of `db`.
fn vertical(db: &Db, keep: &[u32], s: &mut Scratch) -> Node {
    let transactions = (0..db.len()).map(|t| (db.transaction(t), db.weights[t]));
    let vertical = VerticalDb::new(transactions, keep, &mut s.position);
    let tids = vertical.all(db.len());
    Node::Vertical(Bits {
        db: Arc::new(vertical),
        tids,
        support: db.support,
    })
}

/// The `n` transactions of a compressed vertical database (every bit a transaction), as a
/// horizontal database (duplicates not merged): the item bitsets are read once,
/// transposed into rows.
fn horizontal(db: &VerticalDb, n: usize) -> Db {
    let mut offsets = vec![0u32; n + 1];
    for &i in db.items() {
        for t in ones(db.item(i)) {
            offsets[t + 1] += 1;
        }
    }
    for t in 1..=n {
        offsets[t] += offsets[t - 1];
    }
    let mut fill = offsets.clone();
    let mut items = vec![0u32; offsets[n] as usize];
    for &i in db.items() {
        for t in ones(db.item(i)) {
            items[fill[t] as usize] = i;
            fill[t] += 1;
        }
    }
    Db {
        items,
        offsets,
        weights: (0..n).map(|t| db.transaction_weight(t)).collect(),
        ..Db::default()
    }
}

impl Oracle for Frequency {
    type Node = Node;
    type Scratch = Scratch;

    fn scratch(&self) -> Scratch {
        Scratch {
            counts: vec![0; self.original.len()],
            mark: vec![0; self.original.len()],
            table: Vec::new(),
            position: vec![u32::MAX; self.original.len()],
            row: Vec::new(),
            spare: Vec::new(),
        }
    }

    fn n_items(&self) -> usize {
        self.original.len()
    }

    /// When the root's transactions stay horizontal ([`Layout`]; on several threads, as the
    /// root of a split search): sparse data, where the top-level branches' carried items
    /// cost more than found-set look-ups.
    fn sequential(&self, n_threads: usize) -> bool {
        self.root.as_ref().is_some_and(|db| {
            let max_weight = db.weights.iter().copied().max().unwrap_or(1);
            let cost = VerticalDb::cost(db.len(), max_weight, self.original.len());
            !self
                .layout
                .vertical(db.len(), cost, db.items.len(), n_threads > 1)
        })
    }

    fn root(&self, split: bool) -> Option<Node> {
        self.root.as_ref().map(|db| {
            Node::Horizontal(Arc::new(Db {
                items: db.items.clone(),
                offsets: db.offsets.clone(),
                weights: db.weights.clone(),
                support: db.support,
                is_root: split,
                ..Db::default()
            }))
        })
    }

    fn measure(&self, node: &Node, _: &mut Scratch) -> u64 {
        match node {
            Node::Horizontal(db) => db.support,
            Node::Projected(p) => p.support,
            Node::Vertical(bits) => bits.support,
        }
    }

    fn evaluate(&self, node: &Node, candidates: &[u32], s: &mut Scratch, out: &mut Vec<Eval>) {
        match NodeRows::of(node) {
            Some(rows) => self.count(rows, self.measure(node, s), candidates, s, out),
            None => {
                let Node::Vertical(bits) = node else { return };
                out.clear();
                out.extend(
                    candidates
                        .iter()
                        .map(|&c| self.eval(bits.db.and_weight(&bits.tids, c), bits.support)),
                );
            }
        }
    }

    fn reduce(&self, node: &mut Node, keep: &[u32], n_tail: usize, s: &mut Scratch) {
        let reduced = match &*node {
            Node::Horizontal(db) => {
                self.build(NodeRows::All(db), db.support, db.is_root, keep, n_tail, s)
            }
            Node::Projected(p) => {
                self.build(NodeRows::Containing(p), p.support, false, keep, n_tail, s)
            }
            Node::Vertical(bits) => {
                let n = count(&bits.tids) as usize;
                let width = bits.db.words() * 64;
                if n.saturating_mul(self.layout.compress_factor) > width || width <= 64 {
                    return;
                }
                let (db, tids) = bits.db.compress(&bits.tids, keep);
                if self
                    .layout
                    .vertical(0, db.cost_of_self(), db.occurrences(), false)
                {
                    Node::Vertical(Bits {
                        db: Arc::new(db),
                        tids,
                        support: bits.support,
                    })
                } else {
                    let rows = horizontal(&db, n);
                    self.build(NodeRows::All(&rows), bits.support, false, keep, n_tail, s)
                }
            }
        };
        let old = std::mem::replace(node, reduced);
        self.release(old, s);
    }

    fn child(&self, node: &Node, item: u32, index: usize, _: &mut Scratch) -> Node {
        match node {
            Node::Horizontal(db) => {
                debug_assert!(db.reduced && db.keep.get(index) == Some(&item));
                let range = db.occ_offsets[index] as usize..db.occ_offsets[index + 1] as usize;
                let support = db.occ_rows[range]
                    .iter()
                    .map(|&t| db.weights[t as usize])
                    .sum();
                Node::Projected(Projection {
                    parent: Arc::clone(db),
                    rank: index,
                    support,
                    whole: db.is_root,
                })
            }
            Node::Projected(_) => unreachable!("children come from reduced nodes"),
            Node::Vertical(bits) => {
                let tids = bits.db.and(&bits.tids, item);
                let support = bits.db.weight(&tids);
                Node::Vertical(Bits {
                    db: Arc::clone(&bits.db),
                    tids,
                    support,
                })
            }
        }
    }

    fn child_in_sequence(&self, node: &Node, item: u32, index: usize, s: &mut Scratch) -> Node {
        let mut child = self.child(node, item, index, s);
        if let Node::Projected(p) = &mut child {
            p.whole = false;
        }
        child
    }

    fn release(&self, node: Node, s: &mut Scratch) {
        if let Node::Horizontal(db) = node
            && let Ok(db) = Arc::try_unwrap(db)
        {
            s.spare.push(db.recycle());
        }
    }

    /// Vertical nodes: a child's bitsets are its parent's database, which holds every item
    /// the parent kept. A horizontal child reads only the items after its own.
    fn children_apart(&self, node: &Node) -> bool {
        matches!(node, Node::Vertical(_))
    }

    fn look_ahead(
        &self,
        node: &Node,
        tail: &[u32],
        excluded: &[u32],
        s: &mut Scratch,
    ) -> Option<(u64, bool)> {
        if let Some(rows) = NodeRows::of(node) {
            return self.look_ahead_horizontal(rows, tail, excluded, s);
        }
        let Node::Vertical(bits) = node else {
            return None;
        };
        let mut tids = bits.tids.clone();
        for &i in tail {
            let item = bits.db.item(i);
            if item.is_empty() {
                return None;
            }
            for (x, y) in tids.iter_mut().zip(item) {
                *x &= y;
            }
        }
        let support = bits.db.weight(&tids);
        if support < self.min_support {
            return None;
        }
        let maximal = excluded
            .iter()
            .all(|&i| bits.db.and_weight(&tids, i) < self.min_support);
        Some((support, maximal))
    }
}
