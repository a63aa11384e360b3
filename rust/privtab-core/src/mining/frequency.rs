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
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub max_transactions: usize,
    pub density_factor: usize,
    pub compress_factor: usize,
}

impl Default for Layout {
    /// Measured on the FIMI benchmark (`benches/bench_itemsets.py`): the times change by
    /// less than 10% between 9,000 and 70,000 transactions and factors 1 to 4.
    fn default() -> Self {
        Layout {
            max_transactions: 1 << 16,
            density_factor: 2,
            compress_factor: 2,
        }
    }
}

impl Layout {
    fn vertical(&self, n_transactions: usize, cost: usize, occurrences: usize) -> bool {
        n_transactions <= self.max_transactions
            && cost <= self.density_factor.saturating_mul(occurrences)
    }
}

/// Transactions containing `S`, restricted to the node's candidate items, duplicates merged.
#[derive(Debug, Default)]
pub struct Db {
    items: Vec<u32>,
    offsets: Vec<u32>,
    weights: Vec<u64>,
    support: u64,
    /// Occurrence lists after [`Oracle::reduce`]: for `occ_items[j]`, the transactions
    /// `occ[occ_offsets[j]..occ_offsets[j + 1]]`.
    occ_items: Vec<u32>,
    occ_offsets: Vec<u32>,
    occ: Vec<u32>,
    /// The items kept by [`Oracle::reduce`], tail first in exploration order.
    keep: Vec<u32>,
    /// Whether this is the root node, whose children are the top-level branches: they run
    /// in parallel, so their earlier siblings stay as excluded items.
    is_root: bool,
}

impl Db {
    fn transaction(&self, t: usize) -> &[u32] {
        &self.items[self.offsets[t] as usize..self.offsets[t + 1] as usize]
    }

    fn len(&self) -> usize {
        self.weights.len()
    }
}

/// A node of the search: the transactions containing `S`, as lists of items (horizontal)
/// or as bitsets (vertical), as [`Layout`] decides.
#[derive(Debug)]
pub enum Node {
    Horizontal(Db),
    Vertical(Bits),
}

/// A vertical node: the transactions of `db` that contain `S`, and their total weight.
#[derive(Debug)]
pub struct Bits {
    db: Arc<VerticalDb>,
    tids: Vec<u64>,
    support: u64,
}

/// Per-thread counters and item marks.
#[derive(Debug)]
pub struct Scratch {
    counts: Vec<u64>,
    mark: Vec<u8>,
    table: Vec<u32>,
    /// One entry per item, `u32::MAX` between uses.
    position: Vec<u32>,
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
        let mut rank: Vec<u32> = alloc_output(rows.n_features(), "item ranks")?;
        rank.fill(u32::MAX);
        for (r, &i) in frequent.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        let root = (n >= min_support).then(|| {
            let mut db = Db {
                support: n,
                offsets: vec![0],
                ..Db::default()
            };
            let mut table = Vec::new();
            table_for(&mut table, rows.n_rows());
            for u in 0..rows.n_rows() {
                let start = db.items.len();
                db.items.extend(
                    rows.row(u)
                        .iter()
                        .map(|&i| rank[i as usize])
                        .filter(|&r| r != u32::MAX),
                );
                if db.items.len() == start {
                    continue;
                }
                db.items[start..].sort_unstable();
                push_merged(&mut db, &mut table, start, 1);
            }
            db
        });
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
}

impl Frequency {
    fn count_horizontal(
        &self,
        node: &Db,
        candidates: &[u32],
        s: &mut Scratch,
        out: &mut Vec<Eval>,
    ) {
        for t in 0..node.len() {
            let w = node.weights[t];
            for &i in node.transaction(t) {
                s.counts[i as usize] += w;
            }
        }
        out.clear();
        out.extend(candidates.iter().map(|&c| {
            let count = std::mem::take(&mut s.counts[c as usize]);
            self.eval(count, node.support)
        }));
    }

    fn eval(&self, count: u64, support: u64) -> Eval {
        Eval {
            feasible: count >= self.min_support,
            perfect: count == support,
            key: count,
        }
    }

    /// A merged database as a node: vertical when [`Layout`] says so, else horizontal
    /// with the occurrence lists of the first `n_tail` items of `keep`.
    fn settle(&self, mut out: Db, keep: &[u32], n_tail: usize, s: &mut Scratch) -> Node {
        let max_weight = out.weights.iter().copied().max().unwrap_or(1);
        let cost = VerticalDb::cost(out.len(), max_weight, keep.len());
        if self.layout.vertical(out.len(), cost, out.items.len()) {
            return vertical(&out, keep, s);
        }
        // Occurrence deliver: one pass fills the transaction list of every tail item.
        // Counts hold position + 1 of tail items, 0 for the others.
        let mut sorted_keep = keep[..n_tail].to_vec();
        sorted_keep.sort_unstable();
        for (j, &i) in sorted_keep.iter().enumerate() {
            s.counts[i as usize] = j as u64 + 1;
        }
        let mut sizes = vec![0u32; sorted_keep.len() + 1];
        for &i in &out.items {
            let j = s.counts[i as usize] as usize;
            if j > 0 {
                sizes[j] += 1;
            }
        }
        for j in 1..sizes.len() {
            sizes[j] += sizes[j - 1];
        }
        let mut fill = sizes.clone();
        let mut occ = vec![0; sizes[sorted_keep.len()] as usize];
        for t in 0..out.len() {
            for &i in out.transaction(t) {
                let j = s.counts[i as usize] as usize;
                if j > 0 {
                    occ[fill[j - 1] as usize] = t as u32;
                    fill[j - 1] += 1;
                }
            }
        }
        out.occ = occ;
        for &i in &sorted_keep {
            s.counts[i as usize] = 0;
        }
        out.occ_items = sorted_keep;
        out.occ_offsets = sizes;
        out.keep = keep.to_vec();
        Node::Horizontal(out)
    }

    fn child_horizontal(&self, node: &Db, item: u32, s: &mut Scratch) -> Db {
        let j = node.occ_items.binary_search(&item).unwrap_or(0);
        let occ = &node.occ[node.occ_offsets[j] as usize..node.occ_offsets[j + 1] as usize];
        let mut child = Db {
            offsets: Vec::with_capacity(occ.len() + 1),
            weights: Vec::with_capacity(occ.len()),
            ..Db::default()
        };
        child.offsets.push(0);
        // With found sets kept, the child's candidates are the items after `item` in the
        // node's order; otherwise the earlier siblings stay as excluded items.
        let first = if !node.is_root && super::cover_active(self.original.len()) {
            node.keep
                .iter()
                .position(|&i| i == item)
                .map_or(0, |p| p + 1)
        } else {
            0
        };
        let allowed = &node.keep[first..];
        for &i in allowed {
            s.mark[i as usize] = 1;
        }
        s.mark[item as usize] = 0;
        for &t in occ {
            let t = t as usize;
            child.items.extend(
                node.transaction(t)
                    .iter()
                    .copied()
                    .filter(|&i| s.mark[i as usize] != 0),
            );
            child.offsets.push(child.items.len() as u32);
            child.weights.push(node.weights[t]);
            child.support += node.weights[t];
        }
        for &i in allowed {
            s.mark[i as usize] = 0;
        }
        child
    }

    fn look_ahead_horizontal(
        &self,
        node: &Db,
        tail: &[u32],
        excluded: &[u32],
        s: &mut Scratch,
    ) -> Option<(u64, bool)> {
        for &i in tail {
            s.mark[i as usize] = 1;
        }
        let mut support = 0;
        for t in 0..node.len() {
            let row = node.transaction(t);
            if row.len() < tail.len() {
                continue;
            }
            let hits = row.iter().filter(|&&i| s.mark[i as usize] != 0).count();
            if hits == tail.len() {
                support += node.weights[t];
                for &i in row {
                    s.counts[i as usize] += node.weights[t];
                }
            }
        }
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

/// The transactions of `node` restricted to `keep`, duplicates merged.
fn restrict(node: &Db, keep: &[u32], s: &mut Scratch) -> Db {
    for &i in keep {
        s.mark[i as usize] = 1;
    }
    let mut out = Db {
        support: node.support,
        is_root: node.is_root,
        offsets: vec![0],
        ..Db::default()
    };
    out.items.reserve(node.items.len());
    table_for(&mut s.table, node.len());
    for t in 0..node.len() {
        let start = out.items.len();
        out.items.extend(
            node.transaction(t)
                .iter()
                .copied()
                .filter(|&i| s.mark[i as usize] != 0),
        );
        if out.items.len() > start {
            push_merged(&mut out, &mut s.table, start, node.weights[t]);
        }
    }
    for &i in keep {
        s.mark[i as usize] = 0;
    }
    out
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
/// horizontal database with duplicates merged: the item bitsets are read once, transposed
/// into rows.
fn horizontal(db: &VerticalDb, n: usize, support: u64, s: &mut Scratch) -> Db {
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
    let mut out = Db {
        support,
        offsets: vec![0],
        ..Db::default()
    };
    out.items.reserve(items.len());
    table_for(&mut s.table, n);
    for t in 0..n {
        let start = out.items.len();
        out.items
            .extend_from_slice(&items[offsets[t] as usize..offsets[t + 1] as usize]);
        push_merged(&mut out, &mut s.table, start, db.transaction_weight(t));
    }
    out
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
        }
    }

    fn n_items(&self) -> usize {
        self.original.len()
    }

    fn root(&self) -> Option<Node> {
        self.root.as_ref().map(|db| {
            Node::Horizontal(Db {
                items: db.items.clone(),
                offsets: db.offsets.clone(),
                weights: db.weights.clone(),
                support: db.support,
                is_root: true,
                ..Db::default()
            })
        })
    }

    fn measure(&self, node: &Node, _: &mut Scratch) -> u64 {
        match node {
            Node::Horizontal(db) => db.support,
            Node::Vertical(bits) => bits.support,
        }
    }

    fn evaluate(&self, node: &Node, candidates: &[u32], s: &mut Scratch, out: &mut Vec<Eval>) {
        match node {
            Node::Horizontal(db) => self.count_horizontal(db, candidates, s, out),
            Node::Vertical(bits) => {
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
        match node {
            Node::Horizontal(db) => *node = self.settle(restrict(db, keep, s), keep, n_tail, s),
            Node::Vertical(bits) => {
                let n = count(&bits.tids) as usize;
                let width = bits.db.words() * 64;
                if n.saturating_mul(self.layout.compress_factor) <= width && width > 64 {
                    let (db, tids) = bits.db.compress(&bits.tids, keep);
                    *node = if self.layout.vertical(0, db.cost_of_self(), db.occurrences()) {
                        Node::Vertical(Bits {
                            db: Arc::new(db),
                            tids,
                            support: bits.support,
                        })
                    } else {
                        let rows = horizontal(&db, n, bits.support, s);
                        self.settle(rows, keep, n_tail, s)
                    };
                }
            }
        }
    }

    fn child(&self, node: &Node, item: u32, s: &mut Scratch) -> Node {
        match node {
            Node::Horizontal(db) => Node::Horizontal(self.child_horizontal(db, item, s)),
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

    fn look_ahead(
        &self,
        node: &Node,
        tail: &[u32],
        excluded: &[u32],
        s: &mut Scratch,
    ) -> Option<(u64, bool)> {
        match node {
            Node::Horizontal(db) => self.look_ahead_horizontal(db, tail, excluded, s),
            Node::Vertical(bits) => {
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
    }
}
