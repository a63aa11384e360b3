//! The containment-anonymity oracle (paper 004): `S` is feasible iff AC(D_S) ≥ k.

use std::collections::HashMap;

use super::{Eval, Oracle, Rows};
use crate::bitset::{WeightPlanes, count_and_reaches};
use crate::resources::alloc_output;
use crate::{Error, Result};

/// `S` is feasible iff for every row `u` at least `k` rows `v` have `C_S(u) ⊆ C_S(v)`.
///
/// Equal rows are merged first, with their multiplicity as weight (Adult on 19 binary
/// features has 1,580 distinct rows out of 48,842), and the search works on the distinct
/// rows. A node holds the classes of rows with equal pattern `P = C_S(u)` and, per class,
/// the bitset `T_P` of rows containing `P`. Adding item `a` keeps the classes of rows with
/// `a = 0` and their counts; a class whose rows have `a = 1` becomes `P ∪ {a}`, contained
/// in the rows `T_P ∧ T_a`, so the test is one AND and a weighted popcount per touched
/// class, cut short once `k` distinct rows are seen.
#[derive(Debug)]
pub struct ContainmentAnonymity {
    k: u64,
    /// Distinct rows.
    n_rows: usize,
    /// Rows, duplicates included.
    n_total: u64,
    words: usize,
    /// Row bitset of each item, `words` words per item.
    bits: Vec<u64>,
    /// Distinct rows holding each item (CSC).
    col_ptr: Vec<usize>,
    col_rows: Vec<u32>,
    /// Number of rows (duplicates included) holding each item: the search order.
    item_weight: Vec<u64>,
    weights: WeightPlanes,
}

/// Classes of rows with the same pattern on `S`.
#[derive(Debug)]
pub struct Classes {
    class_of: Vec<u32>,
    /// `T_P` of each class, `words` words per class.
    bits: Vec<u64>,
    /// |T_P| of each class, duplicates included.
    contained: Vec<u64>,
    /// Distinct rows of each class.
    size: Vec<u64>,
}

/// Per-thread counters.
#[derive(Debug)]
pub struct Scratch {
    hits: Vec<u64>,
    touched: Vec<u32>,
}

impl ContainmentAnonymity {
    /// Merges equal rows and builds the row bitsets and column lists.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `k` is 0; [`Error::OutputTooLarge`] when the
    /// bitsets (`n_items × n_distinct_rows` bits) cannot be allocated.
    pub fn new(rows: Rows<'_>, k: u64) -> Result<Self> {
        if k == 0 {
            return Err(Error::parameter("k", 0, "must be >= 1"));
        }
        let mut index: HashMap<&[u32], u32> = HashMap::with_capacity(rows.n_rows());
        let mut distinct: Vec<u32> = Vec::new();
        let mut weights: Vec<u64> = Vec::new();
        for u in 0..rows.n_rows() {
            let next = distinct.len() as u32;
            let d = *index.entry(rows.row(u)).or_insert(next);
            if d == next {
                distinct.push(u as u32);
                weights.push(0);
            }
            weights[d as usize] += 1;
        }
        let n_rows = distinct.len();
        let n_features = rows.n_features();
        let words = n_rows.div_ceil(64).max(1);
        let size = words.checked_mul(n_features).ok_or_else(|| {
            Error::OutputTooLarge(format!(
                "row bitsets of {n_features} items and {n_rows} distinct rows"
            ))
        })?;
        let mut bits: Vec<u64> = alloc_output(size, "row bitsets of the features")?;
        let mut col_ptr: Vec<usize> = alloc_output(n_features + 1, "feature columns")?;
        let mut item_weight: Vec<u64> = alloc_output(n_features, "feature supports")?;
        for (&u, &w) in distinct.iter().zip(&weights) {
            for &i in rows.row(u as usize) {
                col_ptr[i as usize + 1] += 1;
                item_weight[i as usize] += w;
            }
        }
        for j in 1..col_ptr.len() {
            col_ptr[j] += col_ptr[j - 1];
        }
        let mut fill = col_ptr.clone();
        let mut col_rows = vec![0u32; col_ptr[n_features]];
        for (d, &u) in distinct.iter().enumerate() {
            for &i in rows.row(u as usize) {
                let i = i as usize;
                bits[i * words + d / 64] |= 1 << (d % 64);
                col_rows[fill[i]] = d as u32;
                fill[i] += 1;
            }
        }
        Ok(ContainmentAnonymity {
            k,
            n_rows,
            n_total: rows.n_rows() as u64,
            words,
            bits,
            col_ptr,
            col_rows,
            item_weight,
            weights: WeightPlanes::new(&weights, words),
        })
    }

    fn item_bits(&self, item: u32) -> &[u64] {
        let i = item as usize;
        &self.bits[i * self.words..(i + 1) * self.words]
    }

    fn item_rows(&self, item: u32) -> &[u32] {
        let i = item as usize;
        &self.col_rows[self.col_ptr[i]..self.col_ptr[i + 1]]
    }

    fn eval(&self, node: &Classes, item: u32, s: &mut Scratch) -> Eval {
        for &u in self.item_rows(item) {
            let c = node.class_of[u as usize] as usize;
            if s.hits[c] == 0 {
                s.touched.push(c as u32);
            }
            s.hits[c] += 1;
        }
        let a = self.item_bits(item);
        let mut feasible = true;
        let mut perfect = true;
        for &c in &s.touched {
            let c = c as usize;
            if feasible {
                let t = &node.bits[c * self.words..(c + 1) * self.words];
                if perfect && s.hits[c] == node.size[c] {
                    let count = self.weights.and_weight(t, a);
                    feasible = count >= self.k;
                    perfect = count == node.contained[c];
                } else {
                    perfect = false;
                    feasible =
                        count_and_reaches(t, a, self.k) || self.weights.and_weight(t, a) >= self.k;
                }
            }
            s.hits[c] = 0;
        }
        s.touched.clear();
        Eval {
            feasible,
            perfect: feasible && perfect,
            key: self.item_weight[item as usize],
        }
    }
}

impl Oracle for ContainmentAnonymity {
    type Node = Classes;
    type Scratch = Scratch;

    fn scratch(&self) -> Scratch {
        Scratch {
            hits: vec![0; self.n_rows],
            touched: Vec::new(),
        }
    }

    fn n_items(&self) -> usize {
        self.col_ptr.len() - 1
    }

    fn root(&self, _: bool) -> Option<Classes> {
        if self.n_total < self.k {
            return None;
        }
        let mut bits = vec![u64::MAX; self.words];
        if !self.n_rows.is_multiple_of(64)
            && let Some(last) = bits.last_mut()
        {
            *last = (1u64 << (self.n_rows % 64)) - 1;
        }
        Some(Classes {
            class_of: vec![0; self.n_rows],
            bits,
            contained: vec![self.n_total],
            size: vec![self.n_rows as u64],
        })
    }

    fn measure(&self, node: &Classes, _: &mut Scratch) -> u64 {
        node.contained.iter().copied().min().unwrap_or(0)
    }

    fn evaluate(&self, node: &Classes, candidates: &[u32], s: &mut Scratch, out: &mut Vec<Eval>) {
        out.clear();
        out.extend(candidates.iter().map(|&c| self.eval(node, c, s)));
    }

    fn reduce(&self, _: &mut Classes, _: &[u32], _: usize, _: &mut Scratch) {}

    /// Always: a node's classes refine by any item, and every item's bitset is kept.
    fn children_apart(&self, _: &Classes) -> bool {
        true
    }

    fn child(&self, node: &Classes, item: u32, _: usize, _: &mut Scratch) -> Classes {
        let a = self.item_bits(item);
        let mut map = vec![u32::MAX; 2 * node.size.len()];
        let mut child = Classes {
            class_of: Vec::with_capacity(self.n_rows),
            bits: Vec::new(),
            contained: Vec::new(),
            size: Vec::new(),
        };
        for u in 0..self.n_rows {
            let c = node.class_of[u] as usize;
            let bit = (a[u / 64] >> (u % 64)) & 1;
            let key = 2 * c + bit as usize;
            if map[key] == u32::MAX {
                map[key] = child.size.len() as u32;
                let t = &node.bits[c * self.words..(c + 1) * self.words];
                if bit == 0 {
                    child.bits.extend_from_slice(t);
                    child.contained.push(node.contained[c]);
                } else {
                    child.bits.extend(t.iter().zip(a).map(|(x, y)| x & y));
                    child.contained.push(self.weights.and_weight(t, a));
                }
                child.size.push(0);
            }
            let id = map[key];
            child.size[id as usize] += 1;
            child.class_of.push(id);
        }
        child
    }

    fn look_ahead(
        &self,
        node: &Classes,
        tail: &[u32],
        excluded: &[u32],
        s: &mut Scratch,
    ) -> Option<(u64, bool)> {
        let mut current: Option<Classes> = None;
        for &item in tail {
            let here = current.as_ref().unwrap_or(node);
            if !self.eval(here, item, s).feasible {
                return None;
            }
            current = Some(self.child(here, item, 0, s));
        }
        let last = current.as_ref().unwrap_or(node);
        let maximal = excluded.iter().all(|&j| !self.eval(last, j, s).feasible);
        Some((self.measure(last, s), maximal))
    }
}
