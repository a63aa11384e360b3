//! Maximal sets of a downward-closed predicate on binary data (paper 004): maximal
//! frequent itemsets and maximal feature sets that are k-anonymous by containment.
//!
//! One depth-first enumerator ([`maximal_sets`]) serves every predicate given as an
//! [`Oracle`]. It extends a set only with items later in the node's candidate order (no
//! duplicates, no store of the results), and decides maximality by the single-item
//! extension test: at every node the oracle evaluates `S ∪ {i}` for the later items (the
//! *tail*) and for the earlier items not in `S` that are still feasible with `S` (the
//! *excluded* items). `S` is maximal iff neither list has a feasible item, which holds for
//! any downward-closed predicate. On top of that:
//! - an excluded item that is a perfect extension of `S` (see [`Eval::perfect`]) proves
//!   that nothing in the subtree is maximal, and a perfect tail item joins `S` for free;
//! - look-ahead: when `S` plus its whole tail is feasible, only that set can be maximal in
//!   the subtree;
//! - the tail is re-sorted by increasing conditional support at every node;
//! - inside a sequential search the excluded items ordered before a node are decided by
//!   the maximal sets already found ([`Cover`]), so only the top-level branches carry them;
//! - the top-level branches run on rayon, one task each (the costly ones sit anywhere in
//!   the order); each branch is sequential, except that with no cap the children of a
//!   thread's last branches are shared with idle threads ([`explore`]), and the results
//!   are sorted at the end, so the output does not depend on the thread count. With no
//!   cap, an oracle that asks for it ([`Oracle::sequential`]) is searched as one sequence
//!   from the root instead, which on several threads meets branches searched apart from
//!   the last one back ([`from_both_ends`]);
//! - a cap on the number of sets is global ([`SharedCap`]): the branches, taken in their
//!   fixed order, keep the first `max_sets` sets between them, and a branch stops as soon
//!   as the sets found by it and by the branches before it reach the cap, whichever thread
//!   runs it; a search reports its [`Progress`] while it runs.
//!
//! [`Frequency`] works on weighted transactions (duplicates merged) reduced to the
//! candidate items at every node, with occurrence lists built in one pass for all
//! children, which read their transactions in place in the parent's database. [`ContainmentAnonymity`] keeps the partition of the rows by their pattern on
//! `S` and the bitset of rows containing each pattern.

mod containment;
pub mod fimi;
mod frequency;
mod vertical;

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

pub use containment::ContainmentAnonymity;
pub use fimi::{Transactions, parse_transactions, read_transactions};
pub use frequency::{Frequency, Layout};

pub use crate::binary::BinaryCsr as Rows;
use crate::resources::{check_interrupt, interrupted};
use crate::{Error, Result};

/// What an oracle says about `S ∪ {item}` for a node of set `S`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eval {
    /// `S ∪ {item}` satisfies the predicate.
    pub feasible: bool,
    /// Perfect extension: every superset `T ⊇ S` satisfies the predicate iff `T ∪ {item}`
    /// does, and the node of `S ∪ {item}` is the node of `S` (so the item can join `S`
    /// without building a child).
    pub perfect: bool,
    /// Order key: tail items are explored by increasing key (the support for frequency).
    pub key: u64,
}

/// A downward-closed predicate on item sets, evaluated incrementally along the search.
pub trait Oracle: Sync {
    /// The state of the search at a set `S`.
    type Node: Send + Sync;
    /// Per-thread working memory.
    type Scratch: Send;

    /// Fresh working memory.
    fn scratch(&self) -> Self::Scratch;
    /// Whether a search on one thread should run as one sequence from the root, deciding
    /// maximality by found sets at every level, rather than as separate top-level branches
    /// that each carry their earlier siblings: better when carrying items costs more than
    /// looking up found sets (sparse data). `n_threads` is the pool's: on several threads
    /// the root is split whatever the answer, and a sequential search meets branches
    /// searched apart ([`from_both_ends`]).
    fn sequential(&self, n_threads: usize) -> bool {
        let _ = n_threads;
        false
    }
    /// Number of items; item ids are below it.
    fn n_items(&self) -> usize;
    /// The node of the empty set, or `None` when the empty set is infeasible. `split` says
    /// whether its children are top-level branches searched apart, each keeping its earlier
    /// siblings as excluded items; otherwise they are searched in order like any node's.
    fn root(&self, split: bool) -> Option<Self::Node>;
    /// The measure reported with a maximal set (support, or AC of the projection).
    fn measure(&self, node: &Self::Node, scratch: &mut Self::Scratch) -> u64;
    /// Evaluates `S ∪ {c}` for every candidate `c`, into `out` (cleared first).
    fn evaluate(
        &self,
        node: &Self::Node,
        candidates: &[u32],
        scratch: &mut Self::Scratch,
        out: &mut Vec<Eval>,
    );
    /// Restricts the node to the items in `keep` (everything the subtree can still use);
    /// the first `n_tail` of them are the tail, the only items [`Oracle::child`] gets.
    fn reduce(
        &self,
        node: &mut Self::Node,
        keep: &[u32],
        n_tail: usize,
        scratch: &mut Self::Scratch,
    );
    /// The node of `S ∪ {item}`, for a feasible, non-perfect `item` kept by [`Oracle::reduce`]:
    /// `item` is `keep[index]` of that call, `index < n_tail`.
    fn child(
        &self,
        node: &Self::Node,
        item: u32,
        index: usize,
        scratch: &mut Self::Scratch,
    ) -> Self::Node;
    /// [`Oracle::child`] for a top-level branch of a split root that is searched in sequence
    /// with its siblings, as from a root that is not split: the child's candidates are the
    /// later items only, its earlier siblings being decided by found sets.
    fn child_in_sequence(
        &self,
        node: &Self::Node,
        item: u32,
        index: usize,
        scratch: &mut Self::Scratch,
    ) -> Self::Node {
        self.child(node, item, index, scratch)
    }
    /// Takes back a node the search is done with, so its memory can serve later nodes.
    fn release(&self, node: Self::Node, scratch: &mut Self::Scratch) {
        let _ = (node, scratch);
    }
    /// Whether the children of a reduced `node` can be searched apart from each other,
    /// each carrying its earlier siblings as excluded items: [`Oracle::child`] then
    /// leaves them as candidates the child can evaluate.
    fn children_apart(&self, node: &Self::Node) -> bool {
        let _ = node;
        false
    }
    /// Look-ahead: if `S ∪ tail` is feasible, `Some((measure, maximal))` where `maximal` says
    /// that no item of `excluded` extends it feasibly.
    fn look_ahead(
        &self,
        node: &Self::Node,
        tail: &[u32],
        excluded: &[u32],
        scratch: &mut Self::Scratch,
    ) -> Option<(u64, bool)>;
}

/// Limits of a search; both make the result incomplete when they stop it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// Stop after this many maximal sets in all. The result is the first `max_sets` sets of
    /// the top-level branches concatenated in their fixed order (each branch's sets in the
    /// order its sequential search finds them), so a truncated result is the same for any
    /// thread count; the search stops as soon as these are found (see [`SharedCap`]).
    pub max_sets: Option<usize>,
    /// Stop after this much wall-clock time; what is found by then depends on timing.
    pub time_limit: Option<Duration>,
}

impl Limits {
    /// Limits from a time limit in seconds.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `time_limit` is negative, NaN or infinite.
    pub fn new(max_sets: Option<usize>, time_limit: Option<f64>) -> Result<Self> {
        let time_limit = match time_limit {
            None => None,
            Some(t) => Some(Duration::try_from_secs_f64(t).map_err(|_| {
                Error::parameter("time_limit", t, "must be a finite number of seconds >= 0")
            })?),
        };
        Ok(Limits {
            max_sets,
            time_limit,
        })
    }
}

/// The predicates of [`maximal_sets_of`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predicate {
    /// Support at least the threshold ([`maximal_itemsets`]).
    Frequency,
    /// Containment anonymity at least the threshold ([`maximal_kac_sets`]).
    Containment,
}

impl std::str::FromStr for Predicate {
    type Err = Error;

    /// `"frequency"` or `"containment"`.
    fn from_str(name: &str) -> Result<Self> {
        match name {
            "frequency" => Ok(Predicate::Frequency),
            "containment" => Ok(Predicate::Containment),
            _ => Err(Error::parameter(
                "predicate",
                format!("{name:?}"),
                "must be 'frequency' or 'containment'",
            )),
        }
    }
}

/// [`maximal_itemsets`] or [`maximal_kac_sets`], as `predicate` says, reporting its
/// progress in `progress` while it runs.
///
/// # Errors
/// Those of the function called.
pub fn maximal_sets_of(
    predicate: Predicate,
    rows: Rows<'_>,
    threshold: u64,
    limits: Limits,
    progress: &Progress,
) -> Result<MaximalSets> {
    match predicate {
        Predicate::Frequency => {
            let oracle = Frequency::new(rows, threshold)?;
            maximal_sets(&oracle, oracle.original(), limits, progress)
        }
        Predicate::Containment => {
            let oracle = ContainmentAnonymity::new(rows, threshold)?;
            let identity: Vec<u32> = (0..rows.n_features() as u32).collect();
            maximal_sets(&oracle, &identity, limits, progress)
        }
    }
}

/// How far a running search is, for a caller watching it from another thread.
#[derive(Debug, Default)]
pub struct Progress {
    found: AtomicUsize,
    branches: AtomicUsize,
    branches_done: AtomicUsize,
}

impl Progress {
    /// A search that has not started.
    pub fn new() -> Self {
        Self::default()
    }

    /// Maximal sets found so far (with a cap, a few may be found beyond it and dropped).
    pub fn found(&self) -> usize {
        self.found.load(Ordering::Relaxed)
    }

    /// Top-level branches finished or stopped, and all of them (0 until the root's
    /// children are known).
    pub fn branches(&self) -> (usize, usize) {
        (
            self.branches_done.load(Ordering::Relaxed),
            self.branches.load(Ordering::Relaxed),
        )
    }
}

/// The cap on the number of sets, shared by the branches of one search.
///
/// Slot 0 holds the sets found at the root, slot `b + 1` those of top-level branch `b`;
/// the result is the first `cap` sets of the slots in order. A slot's sets past the cap
/// are therefore never kept once the slots before it and its own count reach `cap`: the
/// first slot where that holds is the *cutoff*, and every branch from the cutoff on stops.
/// Counts only grow, so the cutoff only moves down, and a branch stopped by it has found
/// every set of its own that the result keeps. The result is that of the uncapped search
/// truncated to `cap`, for any thread count; on one thread the branches run in order and
/// the search ends after the cap's last set.
struct SharedCap {
    cap: usize,
    /// The cutoff slot; `usize::MAX` while the sets found so far are fewer than `cap`.
    cutoff: AtomicUsize,
    counts: Mutex<SlotCounts>,
}

struct SlotCounts {
    per_slot: Vec<usize>,
    /// Sets in the slots up to the cutoff (all slots while there is none).
    kept: usize,
    cutoff: usize,
}

impl SharedCap {
    fn new(cap: usize, n_slots: usize) -> Self {
        SharedCap {
            cap,
            cutoff: AtomicUsize::new(usize::MAX),
            counts: Mutex::new(SlotCounts {
                per_slot: vec![0; n_slots],
                kept: 0,
                cutoff: usize::MAX,
            }),
        }
    }

    /// Counts a set found in `slot`, moving the cutoff down when it can.
    fn record(&self, slot: usize) {
        if self.cap == usize::MAX {
            return;
        }
        // The counts stay consistent whatever a panicking holder left undone.
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let counts = &mut *counts;
        if slot > counts.cutoff {
            return;
        }
        counts.per_slot[slot] += 1;
        counts.kept += 1;
        if counts.cutoff == usize::MAX {
            if counts.kept < self.cap {
                return;
            }
            counts.cutoff = counts.per_slot.len() - 1;
        }
        while counts.cutoff > 0 && counts.kept - counts.per_slot[counts.cutoff] >= self.cap {
            counts.kept -= counts.per_slot[counts.cutoff];
            counts.cutoff -= 1;
        }
        self.cutoff.store(counts.cutoff, Ordering::Relaxed);
    }

    /// Whether the sets of `slot` past those found are cut off.
    fn reached(&self, slot: usize) -> bool {
        slot >= self.cutoff.load(Ordering::Relaxed)
    }
}

/// Maximal sets found by [`maximal_sets`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaximalSets {
    /// Set `s` is `items[offsets[s]..offsets[s + 1]]`, increasing item ids. Sets are
    /// ordered by decreasing size, then lexicographically.
    pub offsets: Vec<i64>,
    /// Item ids of all sets, concatenated.
    pub items: Vec<u32>,
    /// The oracle's measure of each set.
    pub measures: Vec<u64>,
    /// `false` when a limit stopped the search.
    pub complete: bool,
}

struct Found<'s> {
    sets: Vec<(Vec<u32>, u64)>,
    slot: usize,
    shared: &'s SharedCap,
    progress: &'s Progress,
    deadline: Option<Instant>,
    /// The time limit or an interrupt stopped the search.
    stopped: bool,
    cover: Cover,
}

/// The maximal sets found so far by one sequential search, as bitsets (or sorted item
/// lists when there are many items). A node whose set plus tail is a subset of a found
/// maximal set `M` has no maximal set in its subtree (every set there is a subset of `M`,
/// and depth-first search without duplicates cannot reach `M` twice), so the subtree is
/// skipped. The found sets also decide maximality against the items ordered before a node
/// (its earlier siblings and theirs), which are therefore not candidates of the node: any
/// maximal superset using one of them was found in that sibling's subtree.
///
/// Only found sets containing the node's set can cover it, so the search keeps, for every
/// node on the current path, the list of found sets that contain its set (MAFIA's
/// progressive focusing): a child filters its parent's list by its new items, and a set
/// found below a node joins the lists of the whole path.
struct Cover {
    /// Words per found set as a bitset; 0 when found sets are sorted item lists.
    words: usize,
    bits: Vec<u64>,
    /// Found set `m` is `members[starts[m]..starts[m + 1]]` when `words` is 0.
    members: Vec<u32>,
    starts: Vec<u32>,
    n_sets: u32,
    /// For each item, the found sets containing it, in a search from the root (empty in a
    /// top-level branch, whose found sets all hold its item): a child of the root starts
    /// from its item's list instead of filtering every found set.
    by_item: Vec<Vec<u32>>,
    /// For each node of the current path: the found sets containing `set[..verified]`, and
    /// `verified`.
    focus: Vec<(Vec<u32>, usize)>,
}

/// Bitsets cost `n_items / 64` words per found set; above this found sets are item lists.
const COVER_MAX_ITEMS: usize = 4096;

impl Cover {
    fn new(n_items: usize, from_root: bool) -> Self {
        Cover {
            words: if n_items <= COVER_MAX_ITEMS {
                n_items.div_ceil(64).max(1)
            } else {
                0
            },
            bits: Vec::new(),
            members: Vec::new(),
            starts: vec![0],
            n_sets: 0,
            by_item: if from_root {
                vec![Vec::new(); n_items]
            } else {
                Vec::new()
            },
            focus: vec![(Vec::new(), 0)],
        }
    }

    fn insert(&mut self, set: &[u32]) {
        let index = self.n_sets;
        self.n_sets += 1;
        if self.words > 0 {
            let start = self.bits.len();
            self.bits.resize(start + self.words, 0);
            for &i in set {
                self.bits[start + i as usize / 64] |= 1 << (i % 64);
            }
        } else {
            let start = self.members.len();
            self.members.extend_from_slice(set);
            self.members[start..].sort_unstable();
            self.starts.push(self.members.len() as u32);
        }
        if !self.by_item.is_empty() {
            for &i in set {
                self.by_item[i as usize].push(index);
            }
        }
        for (list, _) in &mut self.focus {
            list.push(index);
        }
    }

    fn contains(&self, m: u32, items: &[u32]) -> bool {
        let m = m as usize;
        if self.words > 0 {
            let m = &self.bits[m * self.words..(m + 1) * self.words];
            items
                .iter()
                .all(|&i| m[i as usize / 64] >> (i % 64) & 1 != 0)
        } else {
            let m = &self.members[self.starts[m] as usize..self.starts[m + 1] as usize];
            items.len() <= m.len() && items.iter().all(|i| m.binary_search(i).is_ok())
        }
    }

    /// The found sets of the current node's list that contain `set`.
    fn focused(&self, set: &[u32]) -> (Vec<u32>, usize) {
        let (list, verified) = self.focus.last().expect("the root's list is never left");
        let mut new = &set[(*verified).min(set.len())..];
        let mut list = list.as_slice();
        if *verified == 0
            && !self.by_item.is_empty()
            && let Some((&first, rest)) = new.split_first()
        {
            list = &self.by_item[first as usize];
            new = rest;
        }
        let list = list
            .iter()
            .copied()
            .filter(|&m| self.contains(m, new))
            .collect();
        (list, set.len())
    }

    /// Opens the list of a child node whose set is `set`.
    fn enter(&mut self, set: &[u32]) {
        let focused = self.focused(set);
        self.focus.push(focused);
    }

    /// Narrows the current node's list to the sets containing `set` (after its perfect
    /// extensions joined it).
    fn refine(&mut self, set: &[u32]) {
        if self.focus.last().is_some_and(|(_, v)| *v < set.len()) {
            let focused = self.focused(set);
            *self.focus.last_mut().expect("checked above") = focused;
        }
    }

    /// Closes the list opened by [`Cover::enter`].
    fn leave(&mut self) {
        self.focus.pop();
    }

    /// Whether `set ∪ tail` is a subset of a found set, `set` being the current node's set.
    fn covers(&self, set: &[u32], tail: &[u32]) -> bool {
        let (list, verified) = self.focus.last().expect("the root's list is never left");
        let new = &set[(*verified).min(set.len())..];
        list.iter()
            .rev()
            .any(|&m| self.contains(m, new) && self.contains(m, tail))
    }
}

impl Found<'_> {
    fn push(&mut self, set: Vec<u32>, measure: u64) {
        self.cover.insert(&set);
        self.sets.push((set, measure));
        self.shared.record(self.slot);
        self.progress.found.fetch_add(1, Ordering::Relaxed);
    }

    fn full(&mut self) -> bool {
        if self.stopped || self.shared.reached(self.slot) {
            return true;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) || interrupted() {
            self.stopped = true;
        }
        self.stopped
    }
}

/// A node whose candidates are known: the feasible tail (in exploration order) and the
/// feasible excluded items. Perfect tail items are already in `set`.
enum Prepared<N> {
    Done,
    Branch {
        node: N,
        tail: Vec<u32>,
        excluded: Vec<u32>,
    },
}

fn prepare<O: Oracle>(
    oracle: &O,
    mut node: O::Node,
    set: &mut Vec<u32>,
    tail: &[u32],
    excluded: &[u32],
    scratch: &mut O::Scratch,
    found: &mut Found,
) -> Prepared<O::Node> {
    let mut evals = Vec::new();
    let candidates: Vec<u32> = tail.iter().chain(excluded).copied().collect();
    oracle.evaluate(&node, &candidates, scratch, &mut evals);
    let (tail_evals, excluded_evals) = evals.split_at(tail.len());
    let mut next_excluded = Vec::new();
    for (&item, e) in excluded.iter().zip(excluded_evals) {
        if e.perfect {
            return Prepared::Done;
        }
        if e.feasible {
            next_excluded.push(item);
        }
    }
    let mut next_tail: Vec<(u64, u32)> = Vec::new();
    for (&item, e) in tail.iter().zip(tail_evals) {
        if e.perfect {
            set.push(item);
        } else if e.feasible {
            next_tail.push((e.key, item));
        }
    }
    found.cover.refine(set);
    if next_tail.is_empty() {
        if next_excluded.is_empty() && !found.cover.covers(set, &[]) {
            let measure = oracle.measure(&node, scratch);
            found.push(set.clone(), measure);
        }
        return Prepared::Done;
    }
    next_tail.sort_unstable();
    let next_tail: Vec<u32> = next_tail.into_iter().map(|(_, item)| item).collect();
    if found.cover.covers(set, &next_tail) {
        return Prepared::Done;
    }
    let keep: Vec<u32> = next_tail.iter().chain(&next_excluded).copied().collect();
    oracle.reduce(&mut node, &keep, next_tail.len(), scratch);
    if next_tail.len() > 1
        && let Some((measure, maximal)) =
            oracle.look_ahead(&node, &next_tail, &next_excluded, scratch)
    {
        if maximal && !found.cover.covers(set, &next_tail) {
            let mut full = set.clone();
            full.extend_from_slice(&next_tail);
            found.push(full, measure);
        }
        oracle.release(node, scratch);
        return Prepared::Done;
    }
    Prepared::Branch {
        node,
        tail: next_tail,
        excluded: next_excluded,
    }
}

/// Searches the subtree of `node` depth-first. With `share` (the node of a top-level
/// branch searched apart, with no cap), its children are searched apart from each other
/// on the pool when the oracle allows it and the calling thread has no queued work that
/// an idle thread could take instead: each carries its earlier siblings as excluded items
/// and collects its sets in a part made by `share`. The branch's maximal sets are the same
/// either way: a child searched apart decides its earlier siblings by carrying them rather
/// than by the sets found in them.
#[allow(clippy::too_many_arguments)]
fn explore<'s, O: Oracle>(
    oracle: &O,
    node: O::Node,
    set: &mut Vec<u32>,
    tail: &[u32],
    excluded: &[u32],
    scratch: &mut O::Scratch,
    found: &mut Found<'s>,
    share: Option<&NewPart<'_, 's>>,
) {
    if found.full() {
        return;
    }
    let depth = set.len();
    if let Prepared::Branch {
        node,
        tail,
        excluded,
    } = prepare(oracle, node, set, tail, excluded, scratch, found)
    {
        let shared = share.filter(|_| {
            tail.len() > 1
                && rayon_core::current_thread_has_pending_tasks() == Some(false)
                && oracle.children_apart(&node)
        });
        if let Some(part) = shared {
            share_children(oracle, &node, set, &tail, &excluded, found, part);
        } else {
            for (index, &item) in tail.iter().enumerate() {
                if found.full() {
                    break;
                }
                set.push(item);
                found.cover.enter(set);
                if found.cover.covers(set, &tail[index + 1..]) {
                    found.cover.leave();
                    set.pop();
                    continue;
                }
                let child = oracle.child(&node, item, index, scratch);
                let later = &tail[index + 1..];
                explore(oracle, child, set, later, &excluded, scratch, found, None);
                found.cover.leave();
                set.pop();
            }
        }
        oracle.release(node, scratch);
    }
    set.truncate(depth);
}

/// Nodes whose children [`share_children`] searched apart, for tests to see that it did.
#[cfg(test)]
static SHARED_NODES: AtomicUsize = AtomicUsize::new(0);

/// Makes the found sets of a part of a branch searched on another thread.
type NewPart<'a, 's> = dyn Fn() -> Found<'s> + Sync + 'a;

/// The children of a prepared node searched apart from each other in parallel (see
/// [`explore`]), their sets added to `found`.
fn share_children<'s, O: Oracle>(
    oracle: &O,
    node: &O::Node,
    set: &[u32],
    tail: &[u32],
    excluded: &[u32],
    found: &mut Found<'s>,
    part: &NewPart<'_, 's>,
) {
    #[cfg(test)]
    SHARED_NODES.fetch_add(1, Ordering::Relaxed);
    let branches = Root {
        node,
        set,
        tail,
        excluded,
    };
    let parts: Vec<Found<'s>> = (0..tail.len())
        .into_par_iter()
        .with_max_len(1)
        .map(|index| {
            let mut found = part();
            let mut scratch = oracle.scratch();
            branches.search_apart(oracle, index, &mut scratch, &mut found, None);
            found
        })
        .collect();
    for part in parts {
        found.stopped |= part.stopped;
        found.sets.extend(part.sets);
    }
}

/// A prepared node and its branches, each searched apart from the others: the root of a
/// split search, or a node whose children are shared between threads
/// ([`share_children`]).
struct Root<'r, N> {
    node: &'r N,
    set: &'r [u32],
    tail: &'r [u32],
    excluded: &'r [u32],
}

impl<N> Root<'_, N> {
    /// Searches branch `index` apart from the others: its earlier siblings are excluded
    /// items of every node below it. With `share`, which makes the found sets of
    /// a part of the branch, the branch's own children are searched apart in parallel
    /// when the calling thread has no other work queued (its last branches, which would
    /// otherwise keep one thread busy while the others wait; see [`explore`]).
    fn search_apart<'s, O: Oracle<Node = N>>(
        &self,
        oracle: &O,
        index: usize,
        scratch: &mut O::Scratch,
        found: &mut Found<'s>,
        share: Option<&NewPart<'_, 's>>,
    ) {
        let item = self.tail[index];
        let mut excluded = self.excluded.to_vec();
        excluded.extend_from_slice(&self.tail[..index]);
        let child = oracle.child(self.node, item, index, scratch);
        let mut set = self.set.to_vec();
        set.push(item);
        let tail = &self.tail[index + 1..];
        explore(
            oracle, child, &mut set, tail, &excluded, scratch, found, share,
        );
    }
}

/// Searches the top-level branches of a sequential oracle from both ends.
///
/// The calling thread takes the branches from the first on as one search from the root
/// (`found`, whose found sets decide every earlier branch's items, as on one thread); the
/// other threads take the last branches left, each searched apart (`search_apart`, which
/// carries its earlier siblings as excluded items). The two ends meet wherever the work
/// does, so the costly first branches stay on the cheaper sequential search, and a search
/// too small to share ends on the calling thread after few branches were taken from the
/// back. A branch's maximal sets have no superset in a later branch, so each end finds
/// exactly the maximal sets of its own branches, whichever thread took them; the result
/// does not depend on the thread count once sorted. Returns the branches searched apart.
fn from_both_ends<'s, O: Oracle>(
    oracle: &O,
    root: &Root<'_, O::Node>,
    n_threads: usize,
    scratch: &mut O::Scratch,
    found: &mut Found<'s>,
    search_apart: impl Fn(usize, &mut O::Scratch) -> Found<'s> + Sync,
) -> Vec<Found<'s>> {
    // The next branch from the front, and the end of those not taken yet.
    let unclaimed = Mutex::new((0usize, root.tail.len()));
    let claim = |from_front: bool| {
        let mut range = unclaimed.lock().unwrap_or_else(|e| e.into_inner());
        if range.0 >= range.1 {
            return None;
        }
        if from_front {
            range.0 += 1;
            Some(range.0 - 1)
        } else {
            range.1 -= 1;
            Some(range.1)
        }
    };
    let apart = Mutex::new(Vec::new());
    rayon::scope(|s| {
        for _ in 1..n_threads {
            s.spawn(|_| {
                let mut scratch = oracle.scratch();
                while let Some(index) = claim(false) {
                    let branch = search_apart(index, &mut scratch);
                    apart.lock().unwrap_or_else(|e| e.into_inner()).push(branch);
                }
            });
        }
        let mut set = root.set.to_vec();
        while !found.full()
            && let Some(index) = claim(true)
        {
            set.push(root.tail[index]);
            found.cover.enter(&set);
            if !found.cover.covers(&set, &root.tail[index + 1..]) {
                let child = oracle.child_in_sequence(root.node, root.tail[index], index, scratch);
                explore(
                    oracle,
                    child,
                    &mut set,
                    &root.tail[index + 1..],
                    root.excluded,
                    scratch,
                    found,
                    None,
                );
            }
            found.cover.leave();
            set.pop();
            found.progress.branches_done.fetch_add(1, Ordering::Relaxed);
        }
    });
    apart.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Enumerates the maximal sets of a downward-closed predicate, reporting its progress in
/// `progress` while it runs.
///
/// Item ids in the result are the oracle's; `original[i]` maps id `i` back to the caller's
/// item index before sorting (pass the identity when there is no renumbering). With
/// `max_sets`, the result is complete only when fewer sets exist: when it holds exactly
/// `max_sets` sets it is marked incomplete, whether or not more exist, so that the flag
/// does not depend on the thread count either.
///
/// # Errors
/// [`Error::InvalidParameter`] when `max_sets` is `Some(0)`; [`Error::OutputTooLarge`] when
/// the result cannot be allocated; [`Error::Interrupted`] when an interrupt is requested.
pub fn maximal_sets<O: Oracle>(
    oracle: &O,
    original: &[u32],
    limits: Limits,
    progress: &Progress,
) -> Result<MaximalSets> {
    if limits.max_sets == Some(0) {
        return Err(Error::parameter("max_sets", 0, "must be >= 1"));
    }
    let cap = limits.max_sets.unwrap_or(usize::MAX);
    let deadline = limits.time_limit.map(|d| Instant::now() + d);
    // With no cap, a sequential oracle is searched as one sequence from the root, which
    // keeps every found set, so its nodes carry none of the earlier top-level branches'
    // items; on several threads that sequence meets branches searched apart
    // ([`from_both_ends`]). The sets are the same either way and sorted at the end.
    let n_threads = rayon::current_num_threads();
    let sequential = limits.max_sets.is_none() && oracle.sequential(n_threads);
    let split = !sequential || n_threads > 1;
    let shared = SharedCap::new(cap, oracle.n_items() + 1);
    let new_found = |slot, from_root| Found {
        sets: Vec::new(),
        slot,
        shared: &shared,
        progress,
        deadline,
        stopped: false,
        cover: Cover::new(oracle.n_items(), from_root),
    };
    let mut found = new_found(0, true);
    let mut branches: Vec<Found> = Vec::new();
    if let Some(root) = oracle.root(split) {
        let mut scratch = oracle.scratch();
        let all: Vec<u32> = (0..oracle.n_items() as u32).collect();
        let mut set = Vec::new();
        if !split {
            explore(
                oracle,
                root,
                &mut set,
                &all,
                &[],
                &mut scratch,
                &mut found,
                None,
            );
        } else if let Prepared::Branch {
            node,
            tail,
            excluded,
        } = prepare(oracle, root, &mut set, &all, &[], &mut scratch, &mut found)
        {
            progress.branches.store(tail.len(), Ordering::Relaxed);
            let root = Root {
                node: &node,
                set: &set,
                tail: &tail,
                excluded: &excluded,
            };
            // Without a cap, the sets of a branch may come in any order, so its children
            // can be shared between threads.
            let share = limits.max_sets.is_none() && n_threads > 1;
            let search_apart = |index: usize, scratch: &mut O::Scratch| {
                let mut found = new_found(index + 1, false);
                let part = move || new_found(index + 1, false);
                let share: Option<&NewPart<'_, '_>> = share.then_some(&part);
                root.search_apart(oracle, index, scratch, &mut found, share);
                progress.branches_done.fetch_add(1, Ordering::Relaxed);
                found
            };
            branches = if sequential {
                from_both_ends(
                    oracle,
                    &root,
                    n_threads,
                    &mut scratch,
                    &mut found,
                    search_apart,
                )
            } else {
                // One task per branch (the costly branches sit anywhere in the order), and
                // one scratch per pool thread: `map_init` would make one per task, losing
                // the spare databases a thread's earlier branches left. A task that finds
                // its thread's scratch in use (a branch waiting on nested work) takes a
                // fresh one rather than wait.
                let scratches: Vec<Mutex<O::Scratch>> = (0..n_threads)
                    .map(|_| Mutex::new(oracle.scratch()))
                    .collect();
                (0..tail.len())
                    .into_par_iter()
                    .with_max_len(1)
                    .map(|index| {
                        let thread = rayon::current_thread_index().unwrap_or(0) % n_threads;
                        match scratches[thread].try_lock() {
                            Ok(mut scratch) => search_apart(index, &mut scratch),
                            Err(_) => search_apart(index, &mut oracle.scratch()),
                        }
                    })
                    .collect()
            };
        }
    }
    check_interrupt()?;
    let mut complete = !found.stopped;
    let mut sets = found.sets;
    for branch in branches {
        complete &= !branch.stopped;
        sets.extend(branch.sets);
    }
    if sets.len() >= cap {
        sets.truncate(cap);
        complete = false;
    }
    sets.par_iter_mut().for_each(|(items, _)| {
        for item in items.iter_mut() {
            *item = original[*item as usize];
        }
        items.sort_unstable();
    });
    sets.par_sort_unstable_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    let total: usize = sets.iter().map(|s| s.0.len()).sum();
    let mut items = Vec::new();
    items.try_reserve_exact(total).map_err(|_| {
        Error::OutputTooLarge(format!("{total} items of maximal sets cannot be allocated"))
    })?;
    let mut offsets = Vec::with_capacity(sets.len() + 1);
    let mut measures = Vec::with_capacity(sets.len());
    offsets.push(0i64);
    for (set, measure) in sets {
        items.extend_from_slice(&set);
        offsets.push(items.len() as i64);
        measures.push(measure);
    }
    Ok(MaximalSets {
        offsets,
        items,
        measures,
        complete,
    })
}

/// Maximal frequent itemsets of `rows` with absolute minimum support `min_support` (rows).
///
/// # Errors
/// [`Error::InvalidParameter`] when `min_support` is 0 or `max_sets` is `Some(0)`, and
/// [`Error::OutputTooLarge`] when memory runs out.
pub fn maximal_itemsets(rows: Rows<'_>, min_support: u64, limits: Limits) -> Result<MaximalSets> {
    maximal_sets_of(
        Predicate::Frequency,
        rows,
        min_support,
        limits,
        &Progress::new(),
    )
}

/// Maximal feature sets `S` whose projection is k-anonymous by containment (AC(D_S) ≥ k).
///
/// # Errors
/// [`Error::InvalidParameter`] when `k` is 0 or `max_sets` is `Some(0)`, and
/// [`Error::OutputTooLarge`] when the row bitsets cannot be allocated.
pub fn maximal_kac_sets(rows: Rows<'_>, k: u64, limits: Limits) -> Result<MaximalSets> {
    maximal_sets_of(Predicate::Containment, rows, k, limits, &Progress::new())
}

#[cfg(test)]
mod tests;
