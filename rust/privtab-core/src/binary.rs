//! Binary matrices in CSR form, the input of every paper-004 kernel (containment
//! anonymity, maximal-set mining, k-member clustering): row `u` holds the sorted indices of
//! its features equal to 1. Sparse data stays sparse, and one validation serves them all.

use rayon::prelude::*;

use crate::resources::zeroed_vec;
use crate::{Error, Result};

/// Rows a task of [`BinaryCsr::new`] checks: enough that the pool costs little next to
/// them.
const CHECKED_ROWS_PER_TASK: usize = 1 << 14;

/// Why row `u`, the indices `start..end`, is not a row of a CSR matrix of `n_features`
/// features, if it is not. Each row checks its own offsets against `indices`, so rows
/// are checked in any order and the first invalid one is named whatever the thread
/// count.
fn invalid_row(
    u: usize,
    start: i64,
    end: i64,
    indices: &[u32],
    n_features: usize,
) -> Option<Error> {
    if end < start {
        return Some(Error::InvalidData(format!(
            "indptr must be non-decreasing, got {start} then {end} at row {u}"
        )));
    }
    let row = usize::try_from(start)
        .ok()
        .zip(usize::try_from(end).ok())
        .and_then(|(start, end)| indices.get(start..end));
    let Some(row) = row else {
        return Some(Error::InvalidData(format!(
            "indptr must run from 0 to len(indices) = {}, got {start} .. {end} at row {u}",
            indices.len()
        )));
    };
    if let Some(&f) = row.iter().find(|&&f| f as usize >= n_features) {
        return Some(Error::InvalidData(format!(
            "feature index {f} in row {u} is out of range for {n_features} features"
        )));
    }
    if row.windows(2).any(|p| p[1] <= p[0]) {
        return Some(Error::InvalidData(format!(
            "the feature indices of row {u} must be strictly increasing"
        )));
    }
    None
}

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
        let n_rows = indptr.len() - 1;
        let invalid = (0..n_rows.div_ceil(CHECKED_ROWS_PER_TASK))
            .into_par_iter()
            .find_map_first(|task| {
                let start = task * CHECKED_ROWS_PER_TASK;
                let end = (start + CHECKED_ROWS_PER_TASK).min(n_rows);
                (start..end)
                    .zip(indptr[start..=end].windows(2))
                    .find_map(|(u, w)| invalid_row(u, w[0], w[1], indices, n_features))
            });
        if let Some(error) = invalid {
            return Err(error);
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

/// Rows per task of [`csr_from_dense`].
const DENSE_ROWS_BLOCK: usize = 1 << 14;

/// The CSR arrays (`indptr`, `indices`) of a dense row-major `n_rows × n_features` matrix
/// of 0/1 bytes (numpy `bool` or `uint8`), or `None` when a byte is neither 0 nor 1 (the
/// caller names the cell). Two parallel passes over blocks of rows, counting then filling,
/// so the indices are written once and as `u32`; the result does not depend on the
/// thread count.
///
/// # Errors
/// [`Error::InvalidData`] when `values` does not hold `n_rows × n_features` bytes, or when
/// there are 2^32 rows or features or more; [`Error::OutputTooLarge`] when the arrays
/// cannot be allocated.
pub fn csr_from_dense(
    values: &[u8],
    n_rows: usize,
    n_features: usize,
) -> Result<Option<(Vec<i64>, Vec<u32>)>> {
    if n_rows.checked_mul(n_features) != Some(values.len()) {
        return Err(Error::InvalidData(format!(
            "a dense matrix of {n_rows} x {n_features} must hold {} values, got {}",
            n_rows.saturating_mul(n_features),
            values.len()
        )));
    }
    if u32::try_from(n_rows).is_err() || u32::try_from(n_features).is_err() {
        return Err(Error::InvalidData(format!(
            "a binary matrix of {n_rows} x {n_features} exceeds the limit of 2^32 - 1 rows \
             and features"
        )));
    }
    let width = n_features.max(1);
    let block_values = DENSE_ROWS_BLOCK * n_features;
    let mut indptr = zeroed_vec::<i64>(n_rows + 1, "indptr")?;
    let valid = indptr[1..]
        .par_chunks_mut(DENSE_ROWS_BLOCK)
        .zip(values.par_chunks(block_values.max(1)))
        .map(|(lengths, block)| {
            let mut seen = 0u8;
            for (length, row) in lengths.iter_mut().zip(block.chunks(width)) {
                seen |= row.iter().fold(0u8, |a, &v| a | v);
                *length = row.iter().filter(|&&v| v != 0).count() as i64;
            }
            seen <= 1
        })
        .reduce(|| true, |a, b| a && b);
    if !valid {
        return Ok(None);
    }
    for u in 0..n_rows {
        indptr[u + 1] += indptr[u];
    }
    let total = indptr[n_rows] as usize;
    let mut indices = zeroed_vec::<u32>(total, "indices")?;
    let mut pieces = Vec::with_capacity(n_rows.div_ceil(DENSE_ROWS_BLOCK));
    let mut rest = indices.as_mut_slice();
    for start in (0..n_rows).step_by(DENSE_ROWS_BLOCK) {
        let end = (start + DENSE_ROWS_BLOCK).min(n_rows);
        let (piece, tail) = rest.split_at_mut((indptr[end] - indptr[start]) as usize);
        pieces.push((start..end, piece));
        rest = tail;
    }
    pieces.into_par_iter().for_each(|(rows, piece)| {
        let block = &values[rows.start * n_features..rows.end * n_features];
        // Branch-free compaction: every byte writes its feature at the next free slot,
        // which only a 1 keeps (a 0 is overwritten by the next write). A branch per
        // byte would be mispredicted at every other byte of a matrix of mixed 0s and
        // 1s; the bounds test below fails only after the block's last 1.
        let mut at = 0;
        for row in block.chunks(width) {
            for (j, &v) in row.iter().enumerate() {
                if let Some(slot) = piece.get_mut(at) {
                    *slot = j as u32;
                }
                at += usize::from(v != 0);
            }
        }
    });
    Ok(Some((indptr, indices)))
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

    /// Dense bytes against the row lists they hold, on any thread count; a byte above 1
    /// gives no matrix, and a wrong size is an error.
    #[test]
    fn dense_bytes_give_the_csr_of_their_ones() {
        use crate::resources::with_threads;
        let (n, m) = (DENSE_ROWS_BLOCK * 2 + 37, 11);
        let values: Vec<u8> = (0..n * m)
            .map(|i| u8::from((i * 7919 + i / 13) % 5 < 2))
            .collect();
        let rows: Vec<Vec<u32>> = values
            .chunks(m)
            .map(|row| (0..m as u32).filter(|&j| row[j as usize] == 1).collect())
            .collect();
        let expected = csr_from_rows(&rows);
        for threads in [1, 2, 3] {
            let got = with_threads(Some(threads), || csr_from_dense(&values, n, m)).unwrap();
            assert_eq!(got, Some(expected.clone()));
        }
        let mut bad = values.clone();
        bad[n * m - 1] = 2;
        assert_eq!(csr_from_dense(&bad, n, m).unwrap(), None);
        assert!(csr_from_dense(&values, n, m + 1).is_err());
        assert_eq!(
            csr_from_dense(&[], 3, 0).unwrap(),
            Some((vec![0i64; 4], Vec::new()))
        );
        assert_eq!(
            csr_from_dense(&[], 0, 5).unwrap(),
            Some((vec![0i64], Vec::new()))
        );
    }

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

    /// An offset beyond `indices` before a decrease is an error naming its row, not a
    /// slice out of range; and the first invalid row is named on any thread count,
    /// from far apart invalid rows checked by different tasks.
    #[test]
    fn names_the_first_invalid_row_on_any_thread_count() {
        use crate::resources::with_threads;
        let err = BinaryCsr::new(&[0, 100, 5, 10], &[0; 10], 3).unwrap_err();
        assert!(err.to_string().contains("0 .. 100 at row 0"), "{err}");
        let n = CHECKED_ROWS_PER_TASK * 6;
        let indptr: Vec<i64> = (0..=n as i64).map(|u| 2 * u).collect();
        let mut indices: Vec<u32> = (0..2 * n).map(|i| (i % 2) as u32).collect();
        let late = CHECKED_ROWS_PER_TASK * 5 + 7;
        let early = CHECKED_ROWS_PER_TASK * 2 + 3;
        indices[2 * late] = 9;
        indices[2 * early + 1] = 0;
        for threads in [1, 2, 4] {
            let err =
                with_threads(Some(threads), || BinaryCsr::new(&indptr, &indices, 3)).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("the feature indices of row {early} must be strictly increasing"),
            );
        }
        indices[2 * early + 1] = 1;
        let err = BinaryCsr::new(&indptr, &indices, 3).unwrap_err();
        assert!(
            err.to_string().contains(&format!("9 in row {late}")),
            "{err}"
        );
        indices[2 * late] = 0;
        assert!(BinaryCsr::new(&indptr, &indices, 3).is_ok());
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
