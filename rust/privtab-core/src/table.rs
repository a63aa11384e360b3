//! A read-only, column-major view of a categorical table.

use crate::{Error, Result};

/// `n_cols` attributes of `n_rows` codes each, stored column after column in one slice, with
/// each attribute's public cardinality. Construction validates every code once, so kernels
/// may index count arrays by code without further checks.
#[derive(Clone, Copy, Debug)]
pub struct Columns<'a> {
    data: &'a [u32],
    n_rows: usize,
    cardinalities: &'a [u32],
}

impl<'a> Columns<'a> {
    /// Wraps `data` (length `n_rows * cardinalities.len()`, column-major).
    ///
    /// # Errors
    /// [`Error::InvalidData`] when the length does not match, a cardinality is 0, or a code
    /// is ≥ its column's cardinality (the message names the column, row and code).
    pub fn new(data: &'a [u32], n_rows: usize, cardinalities: &'a [u32]) -> Result<Self> {
        let n_cols = cardinalities.len();
        if n_rows.checked_mul(n_cols) != Some(data.len()) {
            return Err(Error::InvalidData(format!(
                "codes has {} values, expected n_rows * n_columns = {n_rows} * {n_cols}",
                data.len()
            )));
        }
        let view = Columns {
            data,
            n_rows,
            cardinalities,
        };
        for (j, &card) in cardinalities.iter().enumerate() {
            if card == 0 {
                return Err(Error::InvalidData(format!(
                    "cardinalities[{j}] must be >= 1, got 0"
                )));
            }
            check_codes(view.column(j), card, &format!("codes column {j}"))?;
        }
        Ok(view)
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of attributes.
    pub fn n_cols(&self) -> usize {
        self.cardinalities.len()
    }

    /// The codes of attribute `j`.
    pub fn column(&self, j: usize) -> &'a [u32] {
        &self.data[j * self.n_rows..(j + 1) * self.n_rows]
    }

    /// The public cardinality of attribute `j`.
    pub fn cardinality(&self, j: usize) -> u32 {
        self.cardinalities[j]
    }

    /// All cardinalities.
    pub fn cardinalities(&self) -> &'a [u32] {
        self.cardinalities
    }
}

/// Checks that every code in `codes` is below `cardinality`.
///
/// # Errors
/// [`Error::InvalidData`] naming `what`, the first offending row and its code.
pub fn check_codes(codes: &[u32], cardinality: u32, what: &str) -> Result<()> {
    match codes.iter().position(|&c| c >= cardinality) {
        None => Ok(()),
        Some(row) => Err(Error::InvalidData(format!(
            "{what} has code {} at row {row}, which is >= its cardinality {cardinality}",
            codes[row]
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_contiguous_slices() {
        let data = [0, 1, 2, 1, 0, 0];
        let cards = [3, 2];
        let view = Columns::new(&data, 3, &cards).expect("valid");
        assert_eq!(view.column(0), &[0, 1, 2]);
        assert_eq!(view.column(1), &[1, 0, 0]);
        assert_eq!(view.n_cols(), 2);
    }

    #[test]
    fn rejects_bad_shapes_and_codes() {
        assert!(Columns::new(&[0, 1, 2], 2, &[3, 3]).is_err());
        let err = Columns::new(&[0, 3, 0, 0], 2, &[3, 3]).unwrap_err();
        assert!(err.to_string().contains("code 3 at row 1"), "{err}");
        assert!(Columns::new(&[0, 0], 2, &[0]).is_err());
    }
}
