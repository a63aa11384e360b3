//! The frequency oracle: weighted transactions reduced at every node.

use super::{Eval, Oracle, Rows};
use crate::resources::alloc_output;
use crate::{Error, Result};

/// `S` is feasible iff at least `min_support` rows contain it.
#[derive(Debug)]
pub struct Frequency {
    min_support: u64,
    /// Frequent items renumbered by decreasing support; `original[i]` is the column index.
    original: Vec<u32>,
    root: Option<Db>,
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

/// Per-thread counters and item marks.
#[derive(Debug)]
pub struct Scratch {
    counts: Vec<u64>,
    mark: Vec<u8>,
    table: Vec<u32>,
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
        })
    }

    /// Column index of each renumbered item.
    pub fn original(&self) -> &[u32] {
        &self.original
    }
}

impl Oracle for Frequency {
    type Node = Db;
    type Scratch = Scratch;

    fn scratch(&self) -> Scratch {
        Scratch {
            counts: vec![0; self.original.len()],
            mark: vec![0; self.original.len()],
            table: Vec::new(),
        }
    }

    fn n_items(&self) -> usize {
        self.original.len()
    }

    fn root(&self) -> Option<Db> {
        self.root.as_ref().map(|db| Db {
            items: db.items.clone(),
            offsets: db.offsets.clone(),
            weights: db.weights.clone(),
            support: db.support,
            is_root: true,
            ..Db::default()
        })
    }

    fn measure(&self, node: &Db, _: &mut Scratch) -> u64 {
        node.support
    }

    fn evaluate(&self, node: &Db, candidates: &[u32], s: &mut Scratch, out: &mut Vec<Eval>) {
        for t in 0..node.len() {
            let w = node.weights[t];
            for &i in node.transaction(t) {
                s.counts[i as usize] += w;
            }
        }
        out.clear();
        out.extend(candidates.iter().map(|&c| {
            let count = std::mem::take(&mut s.counts[c as usize]);
            Eval {
                feasible: count >= self.min_support,
                perfect: count == node.support,
                key: count,
            }
        }));
    }

    fn reduce(&self, node: &mut Db, keep: &[u32], n_tail: usize, s: &mut Scratch) {
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
        *node = out;
    }

    fn child(&self, node: &Db, item: u32, s: &mut Scratch) -> Db {
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

    fn look_ahead(
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
