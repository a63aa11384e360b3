//! A read-only, column-major view of a categorical table.

use rayon::prelude::*;

use crate::resources::{check_interrupt, zeroed_vec};
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
    /// Wraps `data` (length `n_rows * cardinalities.len()`, column-major), checking the
    /// codes in parallel.
    ///
    /// # Errors
    /// [`Error::InvalidData`] when the length does not match, a cardinality is 0, or a code
    /// is ≥ its column's cardinality (the message names the column, row and code).
    pub fn new(data: &'a [u32], n_rows: usize, cardinalities: &'a [u32]) -> Result<Self> {
        check_table(data, n_rows, cardinalities)?;
        Ok(Columns {
            data,
            n_rows,
            cardinalities,
        })
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of attributes.
    pub fn n_cols(&self) -> usize {
        self.cardinalities.len()
    }

    /// The shape of a table whose codes a kernel holds itself, in a narrower type (the
    /// discernibility search of one partition, [`crate::partition::grouped_round`]):
    /// `n_rows` rows of attributes of `cardinalities`, and no values.
    pub(crate) fn without_values(n_rows: usize, cardinalities: &'a [u32]) -> Self {
        Columns {
            data: &[],
            n_rows,
            cardinalities,
        }
    }

    /// The codes of attribute `j` (empty for a view [`without_values`](Self::without_values)).
    pub fn column(&self, j: usize) -> &'a [u32] {
        self.data
            .get(j * self.n_rows..(j + 1) * self.n_rows)
            .unwrap_or(&[])
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

/// An integer type whose values are read as categorical codes, so kernels can take the
/// caller's array as it is instead of a converted copy.
pub trait Code: Copy + Send + Sync + std::fmt::Display + 'static {
    /// The code as a `u64`. Negative values map to values ≥ 2^63, above every cardinality
    /// (cardinalities are `u32`), so a single comparison `index() < k` rejects both
    /// negative and too large codes.
    fn index(self) -> u64;

    /// Whether the value is below 0 (only possible for signed types).
    fn is_negative(self) -> bool;

    /// The largest [`index`](Code::index) of `codes` (0 when empty): a whole block's
    /// range check as one vectorised reduction.
    fn highest_index(codes: &[Self]) -> u64
    where
        Self: Sized,
    {
        codes.iter().fold(0, |high, &code| high.max(code.index()))
    }
}

/// Implements [`Code`] for unsigned types; `$highest` takes the largest of a slice.
macro_rules! unsigned_code {
    ($($t:ty => $highest:expr),*) => {$(
        impl Code for $t {
            #[inline(always)]
            fn index(self) -> u64 {
                u64::from(self)
            }

            #[inline(always)]
            fn is_negative(self) -> bool {
                false
            }

            fn highest_index(codes: &[Self]) -> u64 {
                u64::from(($highest)(codes))
            }
        }
    )*};
}

macro_rules! signed_code {
    ($($t:ty),*) => {$(
        impl Code for $t {
            #[inline(always)]
            fn index(self) -> u64 {
                // Sign extension puts negative values at 2^63 and above.
                i64::from(self) as u64
            }

            #[inline(always)]
            fn is_negative(self) -> bool {
                self < 0
            }
        }
    )*};
}

/// The largest of `codes` (0 when empty), for the types with a vectorised portable maximum.
fn highest_of<T: Copy + Ord + Default>(codes: &[T]) -> T {
    codes.iter().copied().max().unwrap_or_default()
}

unsigned_code!(u8 => highest_of, u16 => highest_of, u32 => highest_u32, u64 => highest_of);
signed_code!(i8, i16, i32, i64);

/// Whether the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

multiversion! {
    /// The largest of `codes` (0 when empty). The portable x86-64 target has no unsigned
    /// 32-bit maximum (SSE4.1's `pmaxud`), so the reduction would emulate it at a few
    /// instructions a lane and validating a table would run at a fraction of the memory
    /// bandwidth; with AVX2 it is one `vpmaxud` per 8 codes.
    fn highest_u32(codes: &[u32]) -> u32, "avx2", has_avx2, {
        codes.iter().fold(0, |high, &code| high.max(code))
    }
}

/// The row of the first code of `codes` that is negative or ≥ `cardinality`, if any.
///
/// Kernels only call this on their error path, to name the offending row after a fused
/// range check has failed; the scan is parallel but its answer (the lowest row) does not
/// depend on the number of threads.
pub fn first_invalid<C: Code>(codes: &[C], cardinality: u64) -> Option<usize> {
    codes
        .par_iter()
        .position_first(|&c| c.index() >= cardinality)
}

/// The error for an invalid code `code` found at `at` (e.g. `"x[3]"`) of argument `what`;
/// `bound` describes the cardinality it exceeds (e.g. `"kx = 4"`).
pub fn invalid_code<C: Code>(what: &str, at: &str, code: C, bound: &str) -> Error {
    if code.is_negative() {
        Error::InvalidData(format!("{what} must hold codes >= 0, got {at} = {code}"))
    } else {
        Error::InvalidData(format!("{at} = {code} is >= {bound}"))
    }
}

/// Rows per task of [`code_columns`] (a poll for Ctrl-C every few million codes).
const CONVERT_ROWS: usize = 1 << 14;

/// Bytes of a row that one task of [`code_columns`] reads: one cache line.
const CONVERT_ROW_BYTES: usize = 64;

/// The codes of an `n_rows` × `n_cols` table of any integer type as `u32`, column after
/// column (the layout of [`Columns`]): transposed from a row-major table when
/// `row_major`, else converted in place order; with the largest code of every column
/// (0 for an empty table), read in the same pass, so that callers check codes against
/// their cardinalities (or infer them) without another pass over the table.
///
/// Tasks convert a block of [`CONVERT_ROWS`] rows of the columns that share a cache line
/// of a row, in parallel, and poll for an interrupt before each block, so a table of
/// hundreds of millions of codes stops within milliseconds of Ctrl-C.
///
/// # Errors
/// [`Error::InvalidData`] when `data` does not hold `n_rows * n_cols` values, or a code is
/// negative or does not fit in `u32` (naming the first such cell); [`Error::OutputTooLarge`]
/// when the columns cannot be allocated; [`Error::Interrupted`].
pub fn code_columns<C: Code>(
    data: &[C],
    n_rows: usize,
    n_cols: usize,
    row_major: bool,
) -> Result<(Vec<u32>, Vec<u32>)> {
    check_table_shape(data.len(), n_rows, n_cols, "codes")?;
    let mut out = zeroed_vec::<u32>(data.len(), "the code columns")?;
    if data.is_empty() {
        return Ok((out, vec![0; n_cols]));
    }
    let width = if row_major {
        (CONVERT_ROW_BYTES / std::mem::size_of::<C>()).clamp(1, n_cols)
    } else {
        1
    };
    let n_blocks = n_rows.div_ceil(CONVERT_ROWS);
    // Task (g, b) writes rows b·CONVERT_ROWS.. of the columns g·width..: disjoint pieces
    // of the output, handed out as slices so that the tasks need no shared writes.
    let mut tasks: Vec<Vec<&mut [u32]>> = (0..n_cols.div_ceil(width) * n_blocks)
        .map(|_| Vec::with_capacity(width))
        .collect();
    for (j, column) in out.chunks_exact_mut(n_rows).enumerate() {
        for (b, piece) in column.chunks_mut(CONVERT_ROWS).enumerate() {
            tasks[j / width * n_blocks + b].push(piece);
        }
    }
    let highs = tasks
        .into_par_iter()
        .enumerate()
        .map(|(task, mut pieces)| {
            check_interrupt()?;
            let (first_column, first_row) =
                (task / n_blocks * width, task % n_blocks * CONVERT_ROWS);
            let mut high = vec![0u64; pieces.len()];
            if row_major {
                let rows = data[first_row * n_cols..].chunks(n_cols);
                for (i, row) in rows.take(pieces[0].len()).enumerate() {
                    for ((piece, high), &code) in
                        pieces.iter_mut().zip(&mut high).zip(&row[first_column..])
                    {
                        *high = (*high).max(code.index());
                        piece[i] = code.index() as u32;
                    }
                }
            } else {
                let column = &data[first_column * n_rows + first_row..];
                let mut column_high = 0u64;
                for (slot, &code) in pieces[0].iter_mut().zip(column) {
                    column_high = column_high.max(code.index());
                    *slot = code.index() as u32;
                }
                high[0] = column_high;
            }
            Ok((first_column, high))
        })
        .collect::<Result<Vec<(usize, Vec<u64>)>>>()?;
    let mut column_high = vec![0u64; n_cols];
    for (first_column, high) in highs {
        for (slot, value) in column_high[first_column..].iter_mut().zip(high) {
            *slot = (*slot).max(value);
        }
    }
    if column_high.iter().all(|&high| high <= u64::from(u32::MAX)) {
        let column_high = column_high.into_iter().map(|high| high as u32).collect();
        return Ok((out, column_high));
    }
    let bad = first_invalid(data, 1 << 32).unwrap_or(0);
    let (row, column) = if row_major {
        (bad / n_cols, bad % n_cols)
    } else {
        (bad % n_rows, bad / n_rows)
    };
    Err(invalid_code(
        "codes",
        &format!("codes[{row}, {column}]"),
        data[bad],
        "2**32",
    ))
}

/// The largest code of every column of a column-major `u32` table of `n_rows` rows
/// (0 for a column without rows), for callers whose codes are already in the core's
/// layout and so need no [`code_columns`] copy.
///
/// Tasks take a block of [`CONVERT_ROWS`] codes of one column each, in parallel, and poll
/// for an interrupt before each block.
///
/// # Errors
/// [`Error::InvalidData`] when `data` does not hold `n_rows * n_cols` values;
/// [`Error::Interrupted`].
pub fn column_maxima(data: &[u32], n_rows: usize, n_cols: usize) -> Result<Vec<u32>> {
    check_table_shape(data.len(), n_rows, n_cols, "codes")?;
    if n_rows == 0 {
        return Ok(vec![0; n_cols]);
    }
    let n_blocks = n_rows.div_ceil(CONVERT_ROWS);
    let block_highs = (0..n_cols * n_blocks)
        .into_par_iter()
        .map(|task| {
            check_interrupt()?;
            let (column, block) = (task / n_blocks, task % n_blocks);
            let start = column * n_rows + block * CONVERT_ROWS;
            let end = column * n_rows + ((block + 1) * CONVERT_ROWS).min(n_rows);
            Ok(highest_u32(&data[start..end]))
        })
        .collect::<Result<Vec<u32>>>()?;
    Ok(block_highs
        .chunks_exact(n_blocks)
        .map(|highs| highs.iter().copied().max().unwrap_or(0))
        .collect())
}

/// Codes per task of [`all_below`].
const CHECK_BLOCK: usize = 1 << 16;

/// Whether every code is below `cardinality`: the maximum of each block (a vectorised
/// reduction), blocks in parallel.
pub(crate) fn all_below<C: Code>(codes: &[C], cardinality: u32) -> bool {
    codes
        .par_chunks(CHECK_BLOCK)
        .all(|block| C::highest_index(block) < u64::from(cardinality))
}

/// Checks a column-major table of unsigned codes as [`Columns::new`] does: `n_rows` codes
/// of every column, each below its column's cardinality.
///
/// # Errors
/// As [`Columns::new`].
pub(crate) fn check_table<C: Code + Into<u32>>(
    data: &[C],
    n_rows: usize,
    cardinalities: &[u32],
) -> Result<()> {
    let n_cols = cardinalities.len();
    check_table_shape(data.len(), n_rows, n_cols, "codes")?;
    let column = |j: usize| &data[j * n_rows..(j + 1) * n_rows];
    // Columns are checked in parallel by a branch-free test; the first failing column
    // (the lowest index, whatever the threads) is then checked again for the message.
    let failing = (0..n_cols)
        .into_par_iter()
        .find_first(|&j| cardinalities[j] == 0 || !all_below(column(j), cardinalities[j]));
    match failing {
        None => Ok(()),
        Some(j) if cardinalities[j] == 0 => Err(Error::InvalidData(format!(
            "cardinalities[{j}] must be >= 1, got 0"
        ))),
        Some(j) => check_codes(column(j), cardinalities[j], &format!("codes column {j}")),
    }
}

/// Checks that every code in `codes` is in `0..cardinality`.
///
/// # Errors
/// [`Error::InvalidData`] naming `what`, the first offending row and its code.
pub fn check_codes<C: Code>(codes: &[C], cardinality: u32, what: &str) -> Result<()> {
    let k = u64::from(cardinality);
    match codes.iter().position(|&c| c.index() >= k) {
        None => Ok(()),
        Some(row) if codes[row].is_negative() => Err(Error::InvalidData(format!(
            "{what} has code {} at row {row}, which must be >= 0",
            codes[row]
        ))),
        Some(row) => Err(Error::InvalidData(format!(
            "{what} has code {} at row {row}, which is >= its cardinality {cardinality}",
            codes[row]
        ))),
    }
}

/// Checks that a table of `n_rows` rows and `n_cols` columns stored flat holds `len`
/// values.
///
/// # Errors
/// [`Error::InvalidData`] naming `what` and both sizes.
pub(crate) fn check_table_shape(
    len: usize,
    n_rows: usize,
    n_cols: usize,
    what: &str,
) -> Result<()> {
    if n_rows.checked_mul(n_cols) == Some(len) {
        Ok(())
    } else {
        Err(Error::InvalidData(format!(
            "{what} has {len} values, expected n_rows * n_columns = {n_rows} * {n_cols}"
        )))
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

    /// Column `j` of the `n_rows` × `n_cols` row-major `data`, read one cell at a time.
    fn column_of<C: Code>(data: &[C], n_cols: usize, j: usize) -> Vec<u32> {
        data.iter()
            .skip(j)
            .step_by(n_cols)
            .map(|&c| c.index() as u32)
            .collect()
    }

    #[test]
    fn code_columns_transpose_rows_and_convert_columns() {
        // Shapes around the cache-line groups (64 u8, 8 i64 per line) and the row blocks.
        for (n_rows, n_cols) in [(3, 1), (5, 70), (CONVERT_ROWS + 3, 9), (0, 4), (4, 0)] {
            let narrow: Vec<u8> = (0..n_rows * n_cols).map(|i| (i * 7 % 251) as u8).collect();
            let wide: Vec<i64> = narrow.iter().map(|&c| i64::from(c) << 20).collect();
            let (columns, highest) = code_columns(&narrow, n_rows, n_cols, true).expect("valid");
            let (wide_columns, wide_highest) =
                code_columns(&wide, n_rows, n_cols, true).expect("valid");
            let expected: Vec<u32> = (0..n_cols)
                .flat_map(|j| column_of(&narrow, n_cols, j))
                .collect();
            let expected_highest: Vec<u32> = (0..n_cols)
                .map(|j| column_of(&narrow, n_cols, j).into_iter().max().unwrap_or(0))
                .collect();
            assert_eq!(columns, expected, "{n_rows} x {n_cols}");
            assert_eq!(highest, expected_highest, "{n_rows} x {n_cols}");
            let shifted: Vec<u32> = expected.iter().map(|&c| c << 20).collect();
            assert_eq!(wide_columns, shifted, "{n_rows} x {n_cols}");
            let shifted_highest: Vec<u32> = expected_highest.iter().map(|&c| c << 20).collect();
            assert_eq!(wide_highest, shifted_highest, "{n_rows} x {n_cols}");
            // Column-major input: the same values in the same order; the maxima are those
            // of the `n_rows` columns of `n_cols` values each.
            let (converted, converted_highest) =
                code_columns(&wide, n_cols, n_rows, false).expect("valid");
            assert_eq!(
                converted,
                wide.iter().map(|&c| c as u32).collect::<Vec<_>>()
            );
            let by_column: Vec<u32> = (0..n_rows)
                .map(|j| {
                    wide[j * n_cols..(j + 1) * n_cols]
                        .iter()
                        .map(|&c| c as u32)
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            assert_eq!(converted_highest, by_column, "{n_rows} x {n_cols}");
        }
    }

    #[test]
    fn the_highest_index_is_found_at_every_position_and_above_the_sign_bit() {
        for len in 0..40usize {
            for at in 0..len {
                for high in [1u32, 255, 1 << 31, u32::MAX] {
                    let mut codes: Vec<u32> = (0..len as u32).map(|i| i % 3 * (high / 4)).collect();
                    codes[at] = high;
                    assert_eq!(highest_u32(&codes), high, "{len} {at} {high}");
                    assert_eq!(u32::highest_index(&codes), u64::from(high));
                    assert!(!all_below(&codes, high));
                    let bytes: Vec<u8> = codes.iter().map(|&c| (c >> 24) as u8).collect();
                    assert_eq!(u8::highest_index(&bytes), u64::from(high >> 24));
                }
                let mut signed = vec![3i32; len];
                signed[at] = -1;
                assert!(i32::highest_index(&signed) >= 1 << 63, "{len} {at}");
                assert!(!all_below(&signed, u32::MAX));
            }
            assert_eq!(highest_u32(&vec![7; len]), if len == 0 { 0 } else { 7 });
            assert!(all_below(&vec![7u16; len], 8));
        }
    }

    #[test]
    fn column_maxima_are_those_of_each_column() {
        for (n_rows, n_cols) in [(3, 1), (CONVERT_ROWS * 2 + 5, 3), (0, 2), (4, 0)] {
            let data: Vec<u32> = (0..n_rows * n_cols)
                .map(|i| (i as u32).wrapping_mul(2_654_435_761) >> 7)
                .collect();
            let expected: Vec<u32> = (0..n_cols)
                .map(|j| {
                    data[j * n_rows..(j + 1) * n_rows]
                        .iter()
                        .copied()
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let highest = column_maxima(&data, n_rows, n_cols).expect("valid");
            assert_eq!(highest, expected, "{n_rows} x {n_cols}");
        }
        assert!(column_maxima(&[0; 5], 2, 3).is_err());
    }

    #[test]
    fn code_columns_name_the_first_code_that_is_not_a_u32() {
        let mut data = vec![1i64; 6 * 70];
        data[3 * 70 + 65] = -2;
        data[4 * 70 + 1] = 1 << 32;
        let err = code_columns(&data, 6, 70, true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "codes must hold codes >= 0, got codes[3, 65] = -2"
        );
        let err = code_columns(&data, 70, 6, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "codes must hold codes >= 0, got codes[65, 3] = -2"
        );
        data[3 * 70 + 65] = 0;
        let err = code_columns(&data, 6, 70, true).unwrap_err();
        assert_eq!(err.to_string(), "codes[4, 1] = 4294967296 is >= 2**32");
        let err = code_columns(&[0u8; 5], 2, 3, true).unwrap_err();
        assert!(
            err.to_string()
                .contains("expected n_rows * n_columns = 2 * 3"),
            "{err}"
        );
    }

    #[test]
    fn rejects_bad_shapes_and_codes() {
        assert!(Columns::new(&[0, 1, 2], 2, &[3, 3]).is_err());
        let err = Columns::new(&[0, 3, 0, 0], 2, &[3, 3]).unwrap_err();
        assert!(err.to_string().contains("code 3 at row 1"), "{err}");
        assert!(Columns::new(&[0, 0], 2, &[0]).is_err());
    }

    #[test]
    fn negative_codes_map_above_every_cardinality() {
        assert_eq!((-1i8).index(), u64::MAX);
        assert_eq!(i64::MIN.index(), 1 << 63);
        assert!((-1i32).index() >= u64::from(u32::MAX));
        assert_eq!(200u8.index(), 200);
        assert_eq!(u64::MAX.index(), u64::MAX);
        assert_eq!(first_invalid(&[0i16, 1, -3, 9], 5), Some(2));
        assert_eq!(first_invalid(&[0u64, 4, 1 << 40], 5), Some(2));
        assert_eq!(first_invalid(&[0i64, 4], 5), None);
        let err = check_codes(&[0i32, -2], 3, "labels").unwrap_err();
        assert!(
            err.to_string()
                .contains("code -2 at row 1, which must be >= 0")
        );
        let err = check_codes(&[0u8, 7], 3, "labels").unwrap_err();
        assert!(err.to_string().contains("code 7 at row 1, which is >= its"));
    }

    #[test]
    fn invalid_code_messages_name_the_place_and_value() {
        let err = invalid_code("x", "x[4]", -7i64, "kx = 3");
        assert_eq!(err.to_string(), "x must hold codes >= 0, got x[4] = -7");
        let err = invalid_code("x", "x[4]", 9u16, "kx = 3");
        assert_eq!(err.to_string(), "x[4] = 9 is >= kx = 3");
    }
}
