//! All pairwise contingency tables and entropies of a categorical table in one pass.
//!
//! DILCA and DP-DILCA need, for every pair of attributes `(i, j)`, the `|V_i| × |V_j|`
//! contingency table and the joint entropy `H(X_i, X_j)`, plus every marginal entropy
//! `H(X_i)`. Counting them pair by pair from Python re-enters the interpreter `m(m − 1)/2`
//! times; here each column pair is read once, the pairs are spread over the rayon pool, and
//! every pair counts into its own slice of one flat output. Counts are exact integers and
//! each table is counted by one task, so the output does not depend on the thread count.

use rayon::prelude::*;

use crate::columns::Columns;
use crate::counts::{self, entropy};
use crate::resources::{check_interrupt, interrupted, zeroed};
use crate::{Error, Result};

/// The tables and entropies of every unordered attribute pair `i < j`.
#[derive(Clone, Debug, PartialEq)]
pub struct PairwiseCounts {
    /// Number of attributes `m`.
    pub n_cols: usize,
    /// The tables of the pairs in lexicographic order `(0, 1), (0, 2), …, (m − 2, m − 1)`,
    /// each row-major with `|V_i|` rows and `|V_j|` columns, concatenated; empty when the
    /// tables were not requested.
    pub tables: Vec<u64>,
    /// `m(m − 1)/2 + 1` offsets: the table of pair `p` is `tables[offsets[p]..offsets[p + 1]]`
    /// (computed even when the tables were not requested).
    pub offsets: Vec<u64>,
    /// `m × m` row-major entropies in bits: `H(X_i)` on the diagonal, `H(X_i, X_j)` off it
    /// (symmetric).
    pub entropies: Vec<f64>,
}

/// Position of the unordered pair `(i, j)`, `i < j < m`, in the lexicographic pair order.
pub fn pair_index(m: usize, i: usize, j: usize) -> usize {
    i * (2 * m - i - 1) / 2 + (j - i - 1)
}

/// The offsets of the pair tables and their total number of cells, or
/// [`Error::OutputTooLarge`] when `Σ_{i<j} |V_i|·|V_j|` does not fit in memory indices.
fn table_offsets(cardinalities: &[u32]) -> Result<Vec<u64>> {
    let m = cardinalities.len();
    let mut offsets = Vec::with_capacity(m * m.saturating_sub(1) / 2 + 1);
    let mut total: u128 = 0;
    offsets.push(0);
    for i in 0..m {
        for j in i + 1..m {
            total += u128::from(cardinalities[i]) * u128::from(cardinalities[j]);
            let end = u64::try_from(total)
                .ok()
                .filter(|&t| usize::try_from(t).is_ok())
                .ok_or_else(|| {
                    Error::OutputTooLarge(format!(
                        "the pairwise contingency tables need more than {total} cells, \
                         which cannot be addressed"
                    ))
                })?;
            offsets.push(end);
        }
    }
    Ok(offsets)
}

/// Adds the rows of `x` (rows of the table) and `y` (its `ky` columns) to `table`.
/// The codes were validated by [`Columns::new`], so every cell index is in range.
fn count_into(x: &[u32], y: &[u32], ky: usize, table: &mut [u64]) {
    for (&a, &b) in x.iter().zip(y) {
        table[a as usize * ky + b as usize] += 1;
    }
}

/// Counts every pairwise contingency table of `cols` (when `with_tables`) and every
/// marginal and pairwise joint entropy (log2), in one parallel pass per column pair.
///
/// With `with_tables = false` only the entropies are kept: each pair is then counted into
/// a temporary (dense or sparse, whichever is smaller), so memory stays bounded by the
/// largest single table or the number of rows.
///
/// # Errors
/// [`Error::OutputTooLarge`] when the `Σ_{i<j} |V_i|·|V_j|` cells of all tables cannot be
/// addressed or allocated (only with `with_tables`), or a temporary table cannot be
/// allocated.
pub fn pairwise_counts(cols: Columns<'_>, with_tables: bool) -> Result<PairwiseCounts> {
    let m = cols.n_cols();
    let cards = cols.cardinalities();
    let offsets = table_offsets(cards)?;
    let pairs: Vec<(usize, usize)> = (0..m)
        .flat_map(|i| (i + 1..m).map(move |j| (i, j)))
        .collect();
    let marginals: Vec<f64> = (0..m)
        .into_par_iter()
        .map(|j| counts::column_entropy(cols.column(j), cols.cardinality(j)))
        .collect::<Result<_>>()?;
    let mut tables = Vec::new();
    let joints: Vec<f64> = if with_tables {
        let total = offsets.last().copied().unwrap_or(0) as usize;
        tables = zeroed(total, "the pairwise contingency tables")?;
        let mut slices = Vec::with_capacity(pairs.len());
        let mut rest = tables.as_mut_slice();
        for window in offsets.windows(2) {
            let (head, tail) = rest.split_at_mut((window[1] - window[0]) as usize);
            slices.push(head);
            rest = tail;
        }
        pairs
            .par_iter()
            .zip(slices.into_par_iter())
            .map(|(&(i, j), table)| {
                if interrupted() {
                    return 0.0;
                }
                count_into(
                    cols.column(i),
                    cols.column(j),
                    cols.cardinality(j) as usize,
                    table,
                );
                entropy(table)
            })
            .collect()
    } else {
        pairs
            .par_iter()
            .map(|&(i, j)| {
                check_interrupt()?;
                counts::joint_entropy(
                    cols.column(i),
                    cols.cardinality(i),
                    cols.column(j),
                    cols.cardinality(j),
                )
            })
            .collect::<Result<_>>()?
    };
    check_interrupt()?;
    let mut entropies = vec![0.0; m * m];
    for (i, &h) in marginals.iter().enumerate() {
        entropies[i * m + i] = h;
    }
    for (&(i, j), &h) in pairs.iter().zip(&joints) {
        entropies[i * m + j] = h;
        entropies[j * m + i] = h;
    }
    Ok(PairwiseCounts {
        n_cols: m,
        tables,
        offsets,
        entropies,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::{contingency_dense, joint_entropy};
    use crate::resources::with_pool;
    use rand::RngExt;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn random_table(n: usize, cards: &[u32], seed: u64) -> Vec<u32> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        cards
            .iter()
            .flat_map(|&k| (0..n).map(|_| rng.random_range(0..k)).collect::<Vec<_>>())
            .collect()
    }

    #[test]
    fn pair_index_is_lexicographic() {
        let m = 5;
        let mut p = 0;
        for i in 0..m {
            for j in i + 1..m {
                assert_eq!(pair_index(m, i, j), p);
                p += 1;
            }
        }
    }

    #[test]
    fn every_pair_matches_the_single_pair_kernel() {
        let cards = [3u32, 1, 7, 2, 5];
        let n = 1000;
        let data = random_table(n, &cards, 7);
        let cols = Columns::new(&data, n, &cards).unwrap();
        let out = pairwise_counts(cols, true).unwrap();
        let m = cards.len();
        for i in 0..m {
            let h = counts::column_entropy(cols.column(i), cards[i]).unwrap();
            assert_eq!(out.entropies[i * m + i], h);
            for j in i + 1..m {
                let p = pair_index(m, i, j);
                let (start, end) = (out.offsets[p] as usize, out.offsets[p + 1] as usize);
                let expected =
                    contingency_dense(cols.column(i), cards[i], cols.column(j), cards[j]).unwrap();
                assert_eq!(&out.tables[start..end], expected.as_slice());
                let h = joint_entropy(cols.column(i), cards[i], cols.column(j), cards[j]).unwrap();
                assert!((out.entropies[i * m + j] - h).abs() < 1e-12);
                assert_eq!(out.entropies[i * m + j], out.entropies[j * m + i]);
            }
        }
        let light = pairwise_counts(cols, false).unwrap();
        assert!(light.tables.is_empty());
        assert_eq!(light.offsets, out.offsets);
        for (a, b) in light.entropies.iter().zip(&out.entropies) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn thread_count_does_not_change_the_output() {
        let cards = [4u32, 6, 2, 9];
        let n = 5000;
        let data = random_table(n, &cards, 11);
        let cols = Columns::new(&data, n, &cards).unwrap();
        let one = with_pool(1, || pairwise_counts(cols, true)).unwrap();
        let two = with_pool(2, || pairwise_counts(cols, true)).unwrap();
        assert_eq!(one, two);
    }

    #[test]
    fn degenerate_tables() {
        let cards = [3u32];
        let data = [0u32, 1, 2];
        let out = pairwise_counts(Columns::new(&data, 3, &cards).unwrap(), true).unwrap();
        assert_eq!(out.offsets, vec![0]);
        assert!(out.tables.is_empty());
        assert!((out.entropies[0] - 3f64.log2()).abs() < 1e-12);
        let cards = [2u32, 2];
        let empty: [u32; 0] = [];
        let out = pairwise_counts(Columns::new(&empty, 0, &cards).unwrap(), true).unwrap();
        assert_eq!(out.tables, vec![0; 4]);
        assert_eq!(out.entropies, vec![0.0; 4]);
    }

    #[test]
    fn too_many_cells_is_an_error() {
        let cards = [u32::MAX; 40];
        assert!(matches!(
            table_offsets(&cards),
            Err(Error::OutputTooLarge(_))
        ));
        let cards = [u32::MAX, 2, 2];
        let offsets = table_offsets(&cards).unwrap();
        assert_eq!(offsets.len(), 4);
    }
}
