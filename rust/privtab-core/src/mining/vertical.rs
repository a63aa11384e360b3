//! Vertical (bitset) form of a small weighted transaction database, for the dense
//! sub-problems of the search (MINING.md, technique 6): the transactions that contain a set
//! are a bitset, a child is one AND, and a support is a weighted popcount.

use crate::bitset::{WeightPlanes, count, n_planes, ranks, squeeze};

/// Weighted transactions as one bitset per item, with the weights as [`WeightPlanes`].
#[derive(Debug)]
pub(super) struct VerticalDb {
    words: usize,
    /// Item ids, increasing; item `items[j]` has the bitset `bits[j * words..]`.
    items: Vec<u32>,
    bits: Vec<u64>,
    weights: WeightPlanes,
}

impl VerticalDb {
    /// The database of `transactions` (item lists and weights), keeping the items of `items`
    /// (other items are ignored). `position` is scratch of one entry per item id, all
    /// `u32::MAX`, and is left so.
    pub(super) fn new<'a>(
        transactions: impl ExactSizeIterator<Item = (&'a [u32], u64)> + Clone,
        items: &[u32],
        position: &mut [u32],
    ) -> Self {
        let words = transactions.len().div_ceil(64).max(1);
        let mut items = items.to_vec();
        items.sort_unstable();
        for (j, &i) in items.iter().enumerate() {
            position[i as usize] = j as u32;
        }
        let mut bits = vec![0u64; items.len() * words];
        let weights: Vec<u64> = transactions.clone().map(|(_, w)| w).collect();
        for (t, (row, _)) in transactions.enumerate() {
            let (word, bit) = (t / 64, 1u64 << (t % 64));
            for &i in row {
                let j = position[i as usize];
                if j != u32::MAX {
                    bits[j as usize * words + word] |= bit;
                }
            }
        }
        for &i in &items {
            position[i as usize] = u32::MAX;
        }
        VerticalDb {
            words,
            items,
            bits,
            weights: WeightPlanes::new(&weights, words),
        }
    }

    /// Word operations to evaluate every item of a database of `n_transactions` with
    /// weights up to `max_weight` and `n_items` items: the bitsets' words, times one more
    /// for each weight plane.
    pub(super) fn cost(n_transactions: usize, max_weight: u64, n_items: usize) -> usize {
        n_transactions.div_ceil(64).max(1) * (1 + n_planes(max_weight)) * n_items
    }

    /// [`VerticalDb::cost`] of this database.
    pub(super) fn cost_of_self(&self) -> usize {
        self.words * (1 + self.weights.len()) * self.items.len()
    }

    /// Number of (transaction, item) pairs, weights aside.
    pub(super) fn occurrences(&self) -> usize {
        count(&self.bits) as usize
    }

    /// The items, increasing.
    pub(super) fn items(&self) -> &[u32] {
        &self.items
    }

    /// Words per bitset.
    pub(super) fn words(&self) -> usize {
        self.words
    }

    /// The bitset of `item`, empty when the database does not hold the item.
    pub(super) fn item(&self, item: u32) -> &[u64] {
        match self.items.binary_search(&item) {
            Ok(j) => &self.bits[j * self.words..(j + 1) * self.words],
            Err(_) => &[],
        }
    }

    /// Every transaction, as a bitset.
    pub(super) fn all(&self, n_transactions: usize) -> Vec<u64> {
        let mut tids = vec![u64::MAX; self.words];
        if !n_transactions.is_multiple_of(64) {
            tids[self.words - 1] = (1u64 << (n_transactions % 64)) - 1;
        }
        tids
    }

    /// Total weight of the transactions in `tids`.
    pub(super) fn weight(&self, tids: &[u64]) -> u64 {
        self.weights.weight(tids)
    }

    /// Total weight of the transactions in `tids ∧ bits(item)`.
    pub(super) fn and_weight(&self, tids: &[u64], item: u32) -> u64 {
        let bits = self.item(item);
        if bits.is_empty() {
            return 0;
        }
        self.weights.and_weight(tids, bits)
    }

    /// `tids ∧ bits(item)`.
    pub(super) fn and(&self, tids: &[u64], item: u32) -> Vec<u64> {
        let bits = self.item(item);
        if bits.is_empty() {
            return vec![0; self.words];
        }
        tids.iter().zip(bits).map(|(x, y)| x & y).collect()
    }

    /// Weight of transaction `t`.
    pub(super) fn transaction_weight(&self, t: usize) -> u64 {
        self.weights.at(t)
    }

    /// The database of the transactions in `tids`, renumbered densely, with the items of
    /// `keep` only: deeper nodes then AND and count fewer words.
    pub(super) fn compress(&self, tids: &[u64], keep: &[u32]) -> (VerticalDb, Vec<u64>) {
        let (rank, n) = ranks(tids);
        let words = n.div_ceil(64).max(1);
        let mut items: Vec<u32> = keep
            .iter()
            .copied()
            .filter(|&i| self.items.binary_search(&i).is_ok())
            .collect();
        items.sort_unstable();
        let mut bits = vec![0u64; items.len() * words];
        for (&i, target) in items.iter().zip(bits.chunks_exact_mut(words)) {
            squeeze(tids, &rank, self.item(i), target);
        }
        let db = VerticalDb {
            words,
            items,
            bits,
            weights: self.weights.squeeze(tids, &rank, n),
        };
        let tids = db.all(n);
        (db, tids)
    }
}
