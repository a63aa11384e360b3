//! Binary matrices in CSR form, the input of every paper-004 kernel (containment
//! anonymity, maximal-set mining, k-member clustering): row `u` holds the sorted indices of
//! its features equal to 1. Sparse data stays sparse, and one validation serves them all.

use crate::{Error, Result};

/// A validated borrowed CSR view of an n × m binary matrix.
#[derive(Clone, Copy, Debug)]
pub struct BinaryCsr<'a> {
    indptr: &'a [i64],
    indices: &'a [u32],
    n_features: usize,
}

impl<'a> BinaryCsr<'a> {
    /// Validates a CSR structure: row u holds the features `indices[indptr[u]..indptr[u+1]]`.
    ///
    /// # Errors
    /// [`Error::InvalidData`] when `indptr` is empty, does not start at 0, decreases, or does
    /// not end at `indices.len()`, or when a row's indices are not strictly increasing or
    /// not below `n_features`, or when there are 2^32 rows or more;
    /// [`Error::InvalidParameter`] when `n_features` ≥ 2^32.
    pub fn new(indptr: &'a [i64], indices: &'a [u32], n_features: usize) -> Result<Self> {
        let (&first, &last) = match (indptr.first(), indptr.last()) {
            (Some(first), Some(last)) => (first, last),
            _ => {
                return Err(Error::InvalidData(
                    "indptr must hold n_rows + 1 offsets, got an empty array".into(),
                ));
            }
        };
        if u32::try_from(n_features).is_err() {
            return Err(Error::parameter("n_features", n_features, "must be < 2^32"));
        }
        if u32::try_from(indptr.len() - 1).is_err() {
            return Err(Error::InvalidData(format!(
                "{} rows exceed the limit of 2^32 - 1",
                indptr.len() - 1
            )));
        }
        if first != 0 || usize::try_from(last).ok() != Some(indices.len()) {
            return Err(Error::InvalidData(format!(
                "indptr must run from 0 to len(indices) = {}, got {first} .. {last}",
                indices.len()
            )));
        }
        for (u, w) in indptr.windows(2).enumerate() {
            if w[1] < w[0] {
                return Err(Error::InvalidData(format!(
                    "indptr must be non-decreasing, got {} then {} at row {u}",
                    w[0], w[1]
                )));
            }
            // In range: 0 ≤ w[0] ≤ w[1] ≤ indices.len() by the checks above and monotonicity.
            let row = &indices[w[0] as usize..w[1] as usize];
            if let Some(&f) = row.iter().find(|&&f| f as usize >= n_features) {
                return Err(Error::InvalidData(format!(
                    "feature index {f} in row {u} is out of range for {n_features} features"
                )));
            }
            if row.windows(2).any(|p| p[1] <= p[0]) {
                return Err(Error::InvalidData(format!(
                    "the feature indices of row {u} must be strictly increasing"
                )));
            }
        }
        Ok(BinaryCsr {
            indptr,
            indices,
            n_features,
        })
    }

    /// Number of rows n.
    pub fn n_rows(&self) -> usize {
        self.indptr.len() - 1
    }

    /// Every stored feature index, row after row.
    pub fn indices(&self) -> &'a [u32] {
        self.indices
    }

    /// Number of features m.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// The sorted feature indices of row `u` (panics if `u >= n_rows()`).
    pub fn row(&self, u: usize) -> &'a [u32] {
        &self.indices[self.indptr[u] as usize..self.indptr[u + 1] as usize]
    }
}

/// The CSR arrays of rows given as sorted feature lists (for the kernels' tests).
#[cfg(test)]
pub(crate) fn csr_from_rows(rows: &[Vec<u32>]) -> (Vec<i64>, Vec<u32>) {
    let mut indptr = vec![0i64];
    let mut indices = Vec::new();
    for row in rows {
        indices.extend_from_slice(row);
        indptr.push(indices.len() as i64);
    }
    (indptr, indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_malformed_csr() {
        assert!(BinaryCsr::new(&[], &[], 3).is_err());
        assert!(BinaryCsr::new(&[1, 1], &[0], 3).is_err());
        assert!(BinaryCsr::new(&[0, 2], &[0], 3).is_err());
        assert!(BinaryCsr::new(&[0, 2, 1], &[0, 1], 3).is_err());
        assert!(BinaryCsr::new(&[0, 1], &[3], 3).is_err());
        assert!(BinaryCsr::new(&[0, 2], &[1, 1], 3).is_err());
        assert!(BinaryCsr::new(&[0, 2], &[2, 1], 3).is_err());
        assert!(BinaryCsr::new(&[0, 1], &[0], 1usize << 32).is_err());
    }

    #[test]
    fn rows_are_slices_of_indices() {
        let indices = [0u32, 2, 1];
        let csr = BinaryCsr::new(&[0, 2, 2, 3], &indices, 3).unwrap();
        assert_eq!((csr.n_rows(), csr.n_features()), (3, 3));
        assert_eq!(csr.row(0), &[0, 2]);
        assert!(csr.row(1).is_empty());
        assert_eq!(csr.row(2), &[1]);
    }
}
