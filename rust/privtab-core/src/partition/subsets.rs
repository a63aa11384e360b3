//! H(S) and H(Y, S) of every size-k subset by a depth-first walk over prefix partitions
//! (the attribute dependencies of DP-DILCA).

use rayon::prelude::*;

use super::{Labels, Partition, check_index};
use crate::columns::Columns;
use crate::resources::check_interrupt;
use crate::{Error, Result};

/// H(S) and H(Y, S) for every size-`k` subset S of `among` (indices into `cols`).
#[derive(Clone, Debug, PartialEq)]
pub struct SubsetEntropies {
    /// Subset size.
    pub k: usize,
    /// The subsets, `k` indices each, flattened; subsets in lexicographic order of their
    /// positions in `among`.
    pub subsets: Vec<usize>,
    /// H(S) in bits, one per subset.
    pub entropy: Vec<f64>,
    /// H(Y, S) in bits, one per subset.
    pub joint_entropy: Vec<f64>,
}

/// Largest number of subsets [`subset_entropies`] enumerates.
pub const MAX_SUBSETS: u128 = 50_000_000;

/// H(S) and H(Y, S) for every size-`k` subset S of the attributes `among`, by a depth-first
/// walk that refines the prefix partition once per prefix (never recounting from scratch)
/// and scores the last attribute of each subset without building its partition. Parallel
/// over the first attribute of the subsets; the output order is fixed.
///
/// # Errors
/// [`Error::InvalidData`] for an out-of-range index or labels of the wrong length;
/// [`Error::OutputTooLarge`] when there are more than [`MAX_SUBSETS`] subsets.
pub fn subset_entropies(
    cols: Columns<'_>,
    among: &[usize],
    labels: &Labels<'_>,
    k: usize,
) -> Result<SubsetEntropies> {
    for &j in among {
        check_index(cols, j)?;
    }
    let total = binomial(among.len(), k);
    if total > MAX_SUBSETS {
        return Err(Error::OutputTooLarge(format!(
            "there are {total} subsets of size {k} of {} attributes, more than {MAX_SUBSETS}",
            among.len()
        )));
    }
    let root = Partition::trivial(cols.n_rows())?;
    root.check_labels(labels)?;
    let mut out = SubsetEntropies {
        k,
        subsets: Vec::new(),
        entropy: Vec::new(),
        joint_entropy: Vec::new(),
    };
    if k == 0 {
        let score = root.score(labels)?;
        out.entropy.push(score.entropy);
        out.joint_entropy.push(score.joint_entropy);
        return Ok(out);
    }
    if k > among.len() {
        return Ok(out);
    }
    let walk = Walk {
        cols,
        among,
        labels,
        k,
    };
    let parts: Vec<Result<SubsetEntropies>> = (0..=among.len() - k)
        .into_par_iter()
        .map(|first| {
            let mut part = SubsetEntropies {
                k,
                subsets: Vec::new(),
                entropy: Vec::new(),
                joint_entropy: Vec::new(),
            };
            let mut prefix = vec![first];
            walk.descend(&root, &mut prefix, &mut part)?;
            Ok(part)
        })
        .collect();
    for part in parts {
        let part = part?;
        out.subsets.extend(part.subsets);
        out.entropy.extend(part.entropy);
        out.joint_entropy.extend(part.joint_entropy);
    }
    Ok(out)
}

struct Walk<'a, 'b> {
    cols: Columns<'a>,
    among: &'b [usize],
    labels: &'b Labels<'a>,
    k: usize,
}

impl Walk<'_, '_> {
    /// `prefix` holds positions in `among`; `parent` is the partition of all but its last.
    fn descend(
        &self,
        parent: &Partition,
        prefix: &mut Vec<usize>,
        out: &mut SubsetEntropies,
    ) -> Result<()> {
        check_interrupt()?;
        let last = *prefix.last().unwrap_or(&0);
        let column = self.among[last];
        let (col, card) = (self.cols.column(column), self.cols.cardinality(column));
        if prefix.len() == self.k {
            let score = parent.score_column(col, card, self.labels)?;
            out.subsets.extend(prefix.iter().map(|&p| self.among[p]));
            out.entropy.push(score.entropy);
            out.joint_entropy.push(score.joint_entropy);
            return Ok(());
        }
        let refined = parent.refine_valid(col, card, None);
        let remaining = self.k - prefix.len();
        for next in last + 1..=self.among.len() - remaining {
            prefix.push(next);
            self.descend(&refined, prefix, out)?;
            prefix.pop();
        }
        Ok(())
    }
}

/// C(n, k), saturating at `u128::MAX`.
pub(super) fn binomial(n: usize, k: usize) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut result: u128 = 1;
    for i in 0..k {
        result = match result.checked_mul((n - i) as u128) {
            Some(product) => product / (i as u128 + 1),
            None => return u128::MAX,
        };
    }
    result
}
