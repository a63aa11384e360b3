//! Vertical (bitset) form of a small weighted transaction database, for the dense
//! sub-problems of the search (MINING.md, technique 6): the transactions that contain a set
//! are a bitset, a child is one AND, and a support is a weighted popcount.

use crate::bitset::{count, count_and, count_and3, squeeze};

/// Weighted transactions as one bitset per item.
///
/// Weights are stored as bit planes: plane `b` has the bit of transaction `t` set when bit
/// `b` of its weight is, so the weight of a bitset `x` is `Σ_b popcount(x ∧ plane_b) << b`.
/// With unit weights there are no planes and the weight is a popcount.
#[derive(Debug)]
pub(super) struct VerticalDb {
    words: usize,
    /// Item ids, increasing; item `items[j]` has the bitset `bits[j * words..]`.
    items: Vec<u32>,
    bits: Vec<u64>,
    planes: Vec<u64>,
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
        let max_weight = transactions.clone().map(|(_, w)| w).max().unwrap_or(1);
        let n_planes = if max_weight <= 1 {
            0
        } else {
            (64 - max_weight.leading_zeros()) as usize
        };
        let mut planes = vec![0u64; n_planes * words];
        for (t, (row, weight)) in transactions.enumerate() {
            let (word, bit) = (t / 64, 1u64 << (t % 64));
            for &i in row {
                let j = position[i as usize];
                if j != u32::MAX {
                    bits[j as usize * words + word] |= bit;
                }
            }
            for b in 0..n_planes {
                if weight >> b & 1 != 0 {
                    planes[b * words + word] |= bit;
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
            planes,
        }
    }

    /// Word operations to evaluate every item of a database of `n_transactions` with
    /// weights up to `max_weight` and `n_items` items: the bitsets' words, times one more
    /// for each weight plane.
    pub(super) fn cost(n_transactions: usize, max_weight: u64, n_items: usize) -> usize {
        let planes = if max_weight <= 1 {
            0
        } else {
            (64 - max_weight.leading_zeros()) as usize
        };
        n_transactions.div_ceil(64).max(1) * (1 + planes) * n_items
    }

    /// [`VerticalDb::cost`] of this database.
    pub(super) fn cost_of_self(&self) -> usize {
        (self.words + self.planes.len()) * self.items.len()
    }

    /// Number of (transaction, item) pairs, weights aside.
    pub(super) fn occurrences(&self) -> usize {
        count(&self.bits) as usize
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
        if n_transactions % 64 != 0 {
            tids[self.words - 1] = (1u64 << (n_transactions % 64)) - 1;
        }
        tids
    }

    /// Total weight of the transactions in `tids`.
    pub(super) fn weight(&self, tids: &[u64]) -> u64 {
        if self.planes.is_empty() {
            return count(tids);
        }
        self.planes
            .chunks_exact(self.words)
            .enumerate()
            .map(|(b, plane)| count_and(tids, plane) << b)
            .sum()
    }

    /// Total weight of the transactions in `tids ∧ bits(item)`.
    pub(super) fn and_weight(&self, tids: &[u64], item: u32) -> u64 {
        let bits = self.item(item);
        if bits.is_empty() {
            return 0;
        }
        if self.planes.is_empty() {
            return count_and(tids, bits);
        }
        self.planes
            .chunks_exact(self.words)
            .enumerate()
            .map(|(b, plane)| count_and3(tids, bits, plane) << b)
            .sum()
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
        let (word, bit) = (t / 64, t % 64);
        if self.planes.is_empty() {
            return 1;
        }
        self.planes
            .chunks_exact(self.words)
            .enumerate()
            .map(|(b, plane)| (plane[word] >> bit & 1) << b)
            .sum()
    }

    /// The database of the transactions in `tids`, renumbered densely, with the items of
    /// `keep` only: deeper nodes then AND and count fewer words.
    pub(super) fn compress(&self, tids: &[u64], keep: &[u32]) -> (VerticalDb, Vec<u64>) {
        let mut rank = Vec::with_capacity(tids.len());
        let mut n = 0usize;
        for x in tids {
            rank.push(n);
            n += count(std::slice::from_ref(x)) as usize;
        }
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
        let mut planes = vec![0u64; self.planes.len() / self.words * words];
        for (source, target) in self
            .planes
            .chunks_exact(self.words)
            .zip(planes.chunks_exact_mut(words))
        {
            squeeze(tids, &rank, source, target);
        }
        while planes.len() >= words && planes[planes.len() - words..].iter().all(|&x| x == 0) {
            planes.truncate(planes.len() - words);
        }
        let db = VerticalDb {
            words,
            items,
            bits,
            planes,
        };
        let tids = db.all(n);
        if db.planes.len() == words && db.planes == tids {
            return (
                VerticalDb {
                    planes: Vec::new(),
                    ..db
                },
                tids,
            );
        }
        (db, tids)
    }
}
