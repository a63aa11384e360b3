//! Mixed-radix keys: one `u64` per row that identifies its combination of codes.
//!
//! The digit order is that of `numpy.ravel_multi_index(codes.T, cardinalities)`: the first
//! attribute is the most significant digit, so
//! `key = ((c_0 · k_1 + c_1) · k_2 + c_2) · … + c_{d−1}`. Keys are exact as long as the
//! product of the cardinalities is at most 2^64 (then every key is below 2^64); larger
//! domains are rejected with [`Error::Domain`] rather than silently wrapped.

use rayon::prelude::*;

use crate::columns::{Code, Columns, check_table_shape, first_invalid, invalid_code};
use crate::rng::CHUNK;
use crate::{Error, Result};

/// The product of `cardinalities` (the number of distinct keys), or `None` if it exceeds
/// 2^64. An empty list has product 1 (the single empty combination).
pub fn domain_size(cardinalities: &[u32]) -> Option<u128> {
    const LIMIT: u128 = 1 << 64;
    let mut product: u128 = 1;
    for &card in cardinalities {
        // Once above 2^64 the product only grows (cardinalities ≥ 1), so stop before u128
        // itself could overflow.
        product = product.checked_mul(u128::from(card))?;
        if product > LIMIT {
            return None;
        }
    }
    Some(product)
}

/// Checks that the keys of `cardinalities` fit in `u64` and returns their number.
///
/// # Errors
/// [`Error::Domain`] when the product of the cardinalities exceeds 2^64, and
/// [`Error::InvalidData`] when a cardinality is 0.
pub fn check_domain(cardinalities: &[u32]) -> Result<u128> {
    check_nonzero(cardinalities)?;
    domain_size(cardinalities).ok_or_else(|| {
        Error::Domain(format!(
            "the product of cardinalities {cardinalities:?} exceeds 2**64, so mixed-radix keys \
             do not fit in 64 bits; use fewer or coarser columns"
        ))
    })
}

/// Checks that every cardinality is at least 1.
///
/// # Errors
/// [`Error::InvalidData`] naming the first cardinality that is 0.
pub(crate) fn check_nonzero(cardinalities: &[u32]) -> Result<()> {
    match cardinalities.iter().position(|&c| c == 0) {
        Some(j) => Err(Error::InvalidData(format!(
            "cardinalities[{j}] must be >= 1, got 0"
        ))),
        None => Ok(()),
    }
}

/// Encodes every row of `cols` as a mixed-radix key (first column most significant).
///
/// Runs in parallel over fixed chunks of rows; the output does not depend on the number of
/// threads.
///
/// # Errors
/// [`Error::Domain`] when the product of the cardinalities exceeds 2^64.
pub fn mixed_radix_encode(cols: Columns<'_>) -> Result<Vec<u64>> {
    let columns: Vec<&[u32]> = (0..cols.n_cols()).map(|j| cols.column(j)).collect();
    encode_valid(&columns, cols.cardinalities(), cols.n_rows())
}

/// The mixed-radix encoder of a table, for kernels that encode rows block by block (e.g.
/// into a cache-resident buffer) instead of into one array of all keys: of a validated
/// table ([`RowEncoder::new`]), or of columns checked as they are encoded
/// ([`RowEncoder::checking`]), which spares a kernel that reads every code once anyway a
/// separate validation pass over the table.
pub(crate) struct RowEncoder<'a> {
    columns: Vec<&'a [u32]>,
    cards: Vec<u32>,
    radices: Vec<u64>,
    weights: Vec<u64>,
    domain: u128,
}

impl<'a> RowEncoder<'a> {
    /// The encoder of every column of `cols` (first column most significant).
    ///
    /// # Errors
    /// [`Error::Domain`] when the product of the cardinalities exceeds 2^64.
    pub(crate) fn new(cols: Columns<'a>) -> Result<Self> {
        let all: Vec<usize> = (0..cols.n_cols()).collect();
        Self::subset(cols, &all)
    }

    /// The encoder of the columns `subset` of `cols`, in the order given (the first listed
    /// is the most significant digit).
    ///
    /// # Errors
    /// [`Error::InvalidData`] when an index is out of range; [`Error::Domain`] when the
    /// product of the selected cardinalities exceeds 2^64.
    pub(crate) fn subset(cols: Columns<'a>, subset: &[usize]) -> Result<Self> {
        let mut columns = Vec::with_capacity(subset.len());
        let mut cards = Vec::with_capacity(subset.len());
        for &j in subset {
            if j >= cols.n_cols() {
                return Err(Error::InvalidData(format!(
                    "column index {j} is out of range for a table of {} columns",
                    cols.n_cols()
                )));
            }
            columns.push(cols.column(j));
            cards.push(cols.cardinality(j));
        }
        let domain = check_domain(&cards)?;
        Ok(RowEncoder {
            columns,
            radices: cards.iter().map(|&k| u64::from(k)).collect(),
            weights: place_values(&cards),
            cards,
            domain,
        })
    }

    /// The encoder of `columns` (of equal length, the first most significant) whose codes
    /// are not validated yet: [`RowEncoder::encode_checked`] tells whether a block's codes
    /// are below `cardinalities`.
    ///
    /// # Errors
    /// [`Error::InvalidData`] when the number of columns differs from that of
    /// `cardinalities` or their lengths differ; [`Error::Domain`] when the product of the
    /// cardinalities exceeds 2^64.
    pub(crate) fn checking(columns: Vec<&'a [u32]>, cardinalities: &[u32]) -> Result<Self> {
        if columns.len() != cardinalities.len() {
            return Err(Error::InvalidData(format!(
                "{} columns for {} cardinalities",
                columns.len(),
                cardinalities.len()
            )));
        }
        if let Some(j) = columns.iter().position(|c| c.len() != columns[0].len()) {
            return Err(Error::InvalidData(format!(
                "column {j} has {} codes, column 0 has {}",
                columns[j].len(),
                columns[0].len()
            )));
        }
        let domain = check_domain(cardinalities)?;
        Ok(RowEncoder {
            columns,
            radices: cardinalities.iter().map(|&k| u64::from(k)).collect(),
            weights: place_values(cardinalities),
            cards: cardinalities.to_vec(),
            domain,
        })
    }

    /// The number of distinct keys: the product of the cardinalities.
    pub(crate) fn domain(&self) -> u128 {
        self.domain
    }

    /// Writes the keys of rows `start..start + out.len()` of a validated table into `out`.
    pub(crate) fn encode(&self, start: usize, out: &mut [u64]) {
        self.encode_checked(start, out);
    }

    /// Writes the keys of rows `start..start + out.len()` into `out` and returns whether
    /// every code of these rows is below its cardinality; when not, some keys may lie
    /// outside the domain and must not be used.
    pub(crate) fn encode_checked(&self, start: usize, out: &mut [u64]) -> bool {
        out.fill(0);
        let mut valid = true;
        for (block, keys) in out.chunks_mut(COLUMN_BLOCK).enumerate() {
            valid &= fold_columns(
                &self.columns,
                &self.radices,
                &self.weights,
                start + block * COLUMN_BLOCK,
                keys,
            );
        }
        valid
    }
}

/// Encodes the attributes `subset` of `cols`, in the order given (the first listed is the
/// most significant digit).
///
/// # Errors
/// [`Error::InvalidData`] when an index in `subset` is out of range; [`Error::Domain`] when
/// the product of the selected cardinalities exceeds 2^64.
pub fn mixed_radix_encode_subset(cols: Columns<'_>, subset: &[usize]) -> Result<Vec<u64>> {
    let encoder = RowEncoder::subset(cols, subset)?;
    encode_valid(&encoder.columns, &encoder.cards, cols.n_rows())
}

/// The place value of each digit: `weights[j]` is the product of the cardinalities after
/// `j`, modulo 2^64.
///
/// A key is then `Σ c_j · weights[j]`, whose products are independent of each other (no
/// chain of multiply-adds per row). Modulo 2^64 is exact: every valid key is below 2^64,
/// and a weight that wraps to 0 (only possible when the cardinalities before it are all 1)
/// multiplies a code that must be 0.
pub(crate) fn place_values(cardinalities: &[u32]) -> Vec<u64> {
    let mut weights = vec![1u64; cardinalities.len()];
    for j in (0..cardinalities.len().saturating_sub(1)).rev() {
        weights[j] = weights[j + 1].wrapping_mul(u64::from(cardinalities[j + 1]));
    }
    weights
}

/// Rows per cache block of the column-major encoder: the block's keys (32 KiB) stay in
/// the L1 cache while every column is folded into them.
pub(crate) const COLUMN_BLOCK: usize = 1 << 12;

/// Adds the digits `columns[j][start..start + out.len()]` of every column, times their
/// place values, into `out`, and returns whether every code was below its radix.
///
/// Columns are added four at a time, so the keys are loaded and stored a quarter as often
/// as with one pass per column.
fn fold_columns<C: Code>(
    columns: &[&[C]],
    radices: &[u64],
    weights: &[u64],
    start: usize,
    out: &mut [u64],
) -> bool {
    if weights.iter().all(|&w| w >> 32 == 0) {
        fold_columns_by::<C, false>(columns, radices, weights, start, out)
    } else {
        fold_columns_by::<C, true>(columns, radices, weights, start, out)
    }
}

/// `code · weight` modulo 2^64 for a code below 2^32 (every valid code: cardinalities are
/// `u32`), from 32 × 32-bit products, which vectorize on every x86-64 (a 64-bit vector
/// product needs AVX-512); `WIDE` when the weight may exceed 2^32.
#[inline(always)]
fn digit_value<const WIDE: bool>(code: u64, weight: u64) -> u64 {
    let code = code & 0xffff_ffff;
    let low = code.wrapping_mul(weight & 0xffff_ffff);
    if WIDE {
        low.wrapping_add(code.wrapping_mul(weight >> 32) << 32)
    } else {
        low
    }
}

/// [`fold_columns`], with place values below 2^32 unless `WIDE`.
#[inline(always)]
fn fold_columns_by<C: Code, const WIDE: bool>(
    columns: &[&[C]],
    radices: &[u64],
    weights: &[u64],
    start: usize,
    out: &mut [u64],
) -> bool {
    let rows = start..start + out.len();
    let mut valid = true;
    // Wrapping arithmetic is exact modulo 2^64 (see `place_values`) and avoids the overflow
    // check in the hot loop; an invalid code's product is discarded with its table.
    let mut digit = |code: C, radix: u64, weight: u64| {
        let code = code.index();
        valid &= code < radix;
        digit_value::<WIDE>(code, weight)
    };
    let groups = columns
        .chunks_exact(4)
        .zip(radices.chunks_exact(4))
        .zip(weights.chunks_exact(4));
    for ((cols, r), w) in groups {
        let (c0, c1) = (&cols[0][rows.clone()], &cols[1][rows.clone()]);
        let (c2, c3) = (&cols[2][rows.clone()], &cols[3][rows.clone()]);
        for ((((key, &a), &b), &c), &d) in out.iter_mut().zip(c0).zip(c1).zip(c2).zip(c3) {
            let ab = digit(a, r[0], w[0]).wrapping_add(digit(b, r[1], w[1]));
            let cd = digit(c, r[2], w[2]).wrapping_add(digit(d, r[3], w[3]));
            *key = key.wrapping_add(ab.wrapping_add(cd));
        }
    }
    let rest = columns.len() - columns.len() % 4;
    for ((column, &radix), &weight) in columns[rest..]
        .iter()
        .zip(&radices[rest..])
        .zip(&weights[rest..])
    {
        for (key, &code) in out.iter_mut().zip(&column[rows.clone()]) {
            *key = key.wrapping_add(digit(code, radix, weight));
        }
    }
    valid
}

/// Mixed-radix keys of `n_rows` rows stored column by column, with the range check fused
/// into the encoding pass; `Ok(None)` when some code is out of range.
fn encode_slices<C: Code>(
    columns: &[&[C]],
    cards: &[u32],
    n_rows: usize,
) -> Result<Option<Vec<u64>>> {
    check_domain(cards)?;
    let radices: Vec<u64> = cards.iter().map(|&k| u64::from(k)).collect();
    let weights = place_values(cards);
    let mut keys = vec![0u64; n_rows];
    let valid = keys
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(chunk, out)| {
            let start = chunk * CHUNK;
            let mut valid = true;
            for (block, keys) in out.chunks_mut(COLUMN_BLOCK).enumerate() {
                valid &= fold_columns(
                    columns,
                    &radices,
                    &weights,
                    start + block * COLUMN_BLOCK,
                    keys,
                );
            }
            valid
        })
        .reduce(|| true, |a, b| a && b);
    Ok(valid.then_some(keys))
}

/// The error for the first row (then first column) of a table with an invalid code;
/// `code_at(i, j)` reads row `i`, column `j`, and `first_bad_row(j)` is the first invalid
/// row of column `j`.
fn table_error<C: Code>(
    what: &str,
    cards: &[u32],
    first_bad_row: impl Fn(usize) -> Option<usize>,
    code_at: impl Fn(usize, usize) -> C,
) -> Option<Error> {
    let row = (0..cards.len()).filter_map(&first_bad_row).min()?;
    let col = (0..cards.len()).find(|&j| code_at(row, j).index() >= u64::from(cards[j]))?;
    Some(invalid_code(
        what,
        &format!("{what}[{row}, {col}]"),
        code_at(row, col),
        &format!("cardinality {} of column {col}", cards[col]),
    ))
}

/// Encodes `n_rows` rows of codes of any integer type stored column-major (`data[j *
/// n_rows + i]` is row `i` of column `j`), checking every code against its cardinality
/// in the same pass.
///
/// The output does not depend on the number of threads.
///
/// # Errors
/// [`Error::InvalidData`] when the length is not `n_rows · cardinalities.len()`, a
/// cardinality is 0, or a code is negative or ≥ its cardinality (naming `what`, the first
/// such row and its column); [`Error::Domain`] when the product of the cardinalities
/// exceeds 2^64.
pub fn mixed_radix_encode_columns<C: Code>(
    data: &[C],
    n_rows: usize,
    cardinalities: &[u32],
    what: &str,
) -> Result<Vec<u64>> {
    check_table_shape(data.len(), n_rows, cardinalities.len(), what)?;
    let columns: Vec<&[C]> = (0..cardinalities.len())
        .map(|j| &data[j * n_rows..(j + 1) * n_rows])
        .collect();
    if let Some(keys) = encode_slices(&columns, cardinalities, n_rows)? {
        return Ok(keys);
    }
    Err(table_error(
        what,
        cardinalities,
        |j| first_invalid(columns[j], u64::from(cardinalities[j])),
        |i, j| columns[j][i],
    )
    .unwrap_or_else(|| Error::InvalidData(format!("{what} has an invalid code"))))
}

/// Encodes `n_rows` rows of codes of any integer type stored row-major (`data[i * d + j]`
/// is row `i` of column `j`, as a C-ordered `(n_rows, d)` array), checking every code
/// against its cardinality in the same pass. Reading each row's `d` codes together is
/// cache-friendly, so C-ordered input needs no transposed copy.
///
/// The output does not depend on the number of threads.
///
/// # Errors
/// As [`mixed_radix_encode_columns`].
pub fn mixed_radix_encode_rows<C: Code>(
    data: &[C],
    n_rows: usize,
    cardinalities: &[u32],
    what: &str,
) -> Result<Vec<u64>> {
    let d = cardinalities.len();
    check_table_shape(data.len(), n_rows, d, what)?;
    check_domain(cardinalities)?;
    let mut keys = vec![0u64; n_rows];
    if d == 0 {
        return Ok(keys);
    }
    let radices: Vec<u64> = cardinalities.iter().map(|&k| u64::from(k)).collect();
    let weights = place_values(cardinalities);
    let valid = keys
        .par_chunks_mut(CHUNK)
        .zip(data.par_chunks(CHUNK * d))
        .map(|(out, rows)| {
            let mut valid = true;
            for (key, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
                let mut acc = 0u64;
                for ((&code, &radix), &weight) in row.iter().zip(&radices).zip(&weights) {
                    let code = code.index();
                    valid &= code < radix;
                    // Exact modulo 2^64, see `place_values`.
                    acc = acc.wrapping_add(code.wrapping_mul(weight));
                }
                *key = acc;
            }
            valid
        })
        .reduce(|| true, |a, b| a && b);
    if valid {
        return Ok(keys);
    }
    Err(rows_error(data, cardinalities, what))
}

/// The error for the first row (then first column) with an invalid code of row-major
/// `data` (`cardinalities.len()` codes a row, at least one).
pub(crate) fn rows_error<C: Code>(data: &[C], cardinalities: &[u32], what: &str) -> Error {
    let d = cardinalities.len();
    table_error(
        what,
        cardinalities,
        |j| {
            data.par_chunks(d)
                .position_first(|row| row[j].index() >= u64::from(cardinalities[j]))
        },
        |i, j| data[i * d + j],
    )
    .unwrap_or_else(|| Error::InvalidData(format!("{what} has an invalid code")))
}

/// Mixed-radix keys of `n_rows` rows whose codes are already validated against `cards`.
fn encode_valid(columns: &[&[u32]], cards: &[u32], n_rows: usize) -> Result<Vec<u64>> {
    encode_slices(columns, cards, n_rows)?
        .ok_or_else(|| Error::InvalidData("a validated table has a code out of range".to_string()))
}

/// Decodes mixed-radix `keys` into codes, returned **row-major** (`keys.len()` rows of
/// `cardinalities.len()` codes), the layout users index as `codes[i, j]`.
///
/// # Errors
/// [`Error::Domain`] when the product of the cardinalities exceeds 2^64;
/// [`Error::InvalidData`] when a cardinality is 0 or a key is not below the product (the
/// message names the first such row).
pub fn mixed_radix_decode(keys: &[u64], cardinalities: &[u32]) -> Result<Vec<u32>> {
    let size = check_domain(cardinalities)?;
    if let Ok(size) = u64::try_from(size)
        && let Some(row) = keys.par_iter().position_first(|&key| key >= size)
    {
        return Err(Error::InvalidData(format!(
            "keys[{row}] = {} is >= the product of cardinalities {size}",
            keys[row]
        )));
    }
    let d = cardinalities.len();
    let mut codes = vec![0u32; keys.len() * d];
    if d == 0 {
        return Ok(codes);
    }
    codes
        .par_chunks_mut(CHUNK * d)
        .zip(keys.par_chunks(CHUNK))
        .for_each(|(out, keys)| {
            for (row, &key) in out.chunks_exact_mut(d).zip(keys) {
                let mut rest = key;
                for (slot, &card) in row.iter_mut().zip(cardinalities).rev() {
                    let radix = u64::from(card);
                    // The remainder is below `card`, a u32, so the cast is exact.
                    *slot = (rest % radix) as u32;
                    rest /= radix;
                }
            }
        });
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns_of<'a>(data: &'a [u32], n: usize, cards: &'a [u32]) -> Columns<'a> {
        Columns::new(data, n, cards).expect("valid columns")
    }

    #[test]
    fn a_checking_encoder_tells_bad_codes_and_refuses_other_shapes() {
        let (a, b) = ([0u32, 1, 2], [0u32, 1]);
        let ragged = RowEncoder::checking(vec![&a, &b], &[3, 2])
            .err()
            .expect("ragged");
        assert!(
            ragged.to_string().contains("column 1 has 2 codes"),
            "{ragged}"
        );
        assert!(RowEncoder::checking(vec![&a], &[3, 2]).is_err());
        let mut out = [0u64; 3];
        let too_small = RowEncoder::checking(vec![&a, &a], &[3, 2]).expect("shapes");
        assert!(!too_small.encode_checked(0, &mut out));
        let fitting = RowEncoder::checking(vec![&a, &a], &[3, 3]).expect("shapes");
        assert!(fitting.encode_checked(0, &mut out));
        assert_eq!(out, [0, 4, 8]);
    }

    #[test]
    fn first_column_is_most_significant() {
        // rows (1, 2), (0, 0), (2, 1) with cardinalities (3, 4)
        let data = [1, 0, 2, 2, 0, 1];
        let cards = [3, 4];
        let keys = mixed_radix_encode(columns_of(&data, 3, &cards)).expect("encode");
        assert_eq!(keys, vec![6, 0, 9]);
        let codes = mixed_radix_decode(&keys, &cards).expect("decode");
        assert_eq!(codes, vec![1, 2, 0, 0, 2, 1]);
    }

    #[test]
    fn product_of_exactly_two_to_the_64_is_allowed() {
        let cards = [1 << 16, 1 << 16, 1 << 16, 1 << 16];
        assert_eq!(check_domain(&cards), Ok(1u128 << 64));
        let max = (1u32 << 16) - 1;
        let data = [max, max, max, max];
        let keys = mixed_radix_encode(columns_of(&data, 1, &cards)).expect("encode");
        assert_eq!(keys, vec![u64::MAX]);
        assert_eq!(mixed_radix_decode(&keys, &cards).expect("decode"), data);
    }

    #[test]
    fn larger_products_are_domain_errors() {
        let cards = [1 << 16, 1 << 16, 1 << 16, (1 << 16) + 1];
        assert!(matches!(check_domain(&cards), Err(Error::Domain(_))));
        let many = [u32::MAX; 40];
        assert!(matches!(check_domain(&many), Err(Error::Domain(_))));
        let data = [0u32; 4];
        assert!(matches!(
            mixed_radix_encode(columns_of(&data, 1, &cards)),
            Err(Error::Domain(_))
        ));
        assert!(matches!(
            mixed_radix_decode(&[0], &cards),
            Err(Error::Domain(_))
        ));
    }

    #[test]
    fn decode_rejects_keys_outside_the_domain() {
        let err = mixed_radix_decode(&[3, 12, 13], &[3, 4]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "keys[1] = 12 is >= the product of cardinalities 12"
        );
        assert!(mixed_radix_decode(&[0], &[2, 0]).is_err());
    }

    #[test]
    fn place_values_above_two_to_the_32_encode_exactly() {
        // The leading weights exceed 2^32, so each digit is two 32-bit products; a code of
        // 2^33 is still reported, not truncated.
        let cards = [3u32, 1 << 20, 1 << 20, 1000, 77, 5];
        let n = 3 * COLUMN_BLOCK + 7;
        let mut rng = crate::rng::Seed::from_u64(4).stream(0);
        let data: Vec<u64> = cards
            .iter()
            .flat_map(|&card| {
                (0..n)
                    .map(|_| rand::Rng::next_u64(&mut rng) % u64::from(card))
                    .collect::<Vec<_>>()
            })
            .collect();
        let keys = mixed_radix_encode_columns(&data, n, &cards, "codes").expect("encode");
        for (i, &key) in keys.iter().enumerate() {
            let expect = (0..cards.len()).fold(0u128, |key, j| {
                key * u128::from(cards[j]) + u128::from(data[j * n + i])
            });
            assert_eq!(u128::from(key), expect, "row {i}");
        }
        let mut bad = data.clone();
        bad[n + 5] = 1 << 33;
        let err = mixed_radix_encode_columns(&bad, n, &cards, "codes").unwrap_err();
        assert_eq!(
            err.to_string(),
            "codes[5, 1] = 8589934592 is >= cardinality 1048576 of column 1"
        );
    }

    #[test]
    fn round_trip_over_several_chunks() {
        let n = 2 * CHUNK + 11;
        let cards = [7u32, 1, 300, 5];
        let mut data = Vec::with_capacity(n * cards.len());
        for (j, &card) in cards.iter().enumerate() {
            data.extend((0..n).map(|i| ((i * 31 + j * 17) % card as usize) as u32));
        }
        let keys = mixed_radix_encode(columns_of(&data, n, &cards)).expect("encode");
        for (i, &key) in keys.iter().enumerate().step_by(997) {
            let mut expect = 0u64;
            for (j, &card) in cards.iter().enumerate() {
                expect = expect * u64::from(card) + u64::from(data[j * n + i]);
            }
            assert_eq!(key, expect);
        }
        let codes = mixed_radix_decode(&keys, &cards).expect("decode");
        for i in (0..n).step_by(991) {
            for j in 0..cards.len() {
                assert_eq!(codes[i * cards.len() + j], data[j * n + i]);
            }
        }
    }

    macro_rules! generic_encode_tests {
        ($($name:ident: $t:ty),*) => {$(
            #[test]
            fn $name() {
                let n = 2 * CHUNK + 13;
                let cards = [7u32, 1, 100, 5, 3, 11];
                let d = cards.len();
                let code = |i: usize, j: usize| ((i * 31 + j * 17) % cards[j] as usize) as $t;
                let column_major: Vec<$t> =
                    (0..d).flat_map(|j| (0..n).map(move |i| code(i, j))).collect();
                let row_major: Vec<$t> =
                    (0..n).flat_map(|i| (0..d).map(move |j| code(i, j))).collect();
                let expect: Vec<u64> = (0..n)
                    .map(|i| (0..d).fold(0, |key, j| key * u64::from(cards[j]) + code(i, j) as u64))
                    .collect();
                for threads in [1, 3] {
                    let (cols, rows) = crate::resources::with_pool(threads, || {
                        (
                            mixed_radix_encode_columns(&column_major, n, &cards, "codes"),
                            mixed_radix_encode_rows(&row_major, n, &cards, "codes"),
                        )
                    });
                    assert_eq!(cols.expect("columns"), expect);
                    assert_eq!(rows.expect("rows"), expect);
                }
                // Two bad codes in one row and a later one: the first row, then column.
                let bad_row = CHUNK + 5;
                let mut cols = column_major.clone();
                let mut rows = row_major.clone();
                for (i, j, value) in [(bad_row, 3, 9), (bad_row, 2, 100), (bad_row + 1, 0, 7)] {
                    cols[j * n + i] = value as $t;
                    rows[i * d + j] = value as $t;
                }
                let message = format!(
                    "codes[{bad_row}, 2] = 100 is >= cardinality 100 of column 2"
                );
                for threads in [1, 3] {
                    let (c, r) = crate::resources::with_pool(threads, || {
                        (
                            mixed_radix_encode_columns(&cols, n, &cards, "codes"),
                            mixed_radix_encode_rows(&rows, n, &cards, "codes"),
                        )
                    });
                    assert_eq!(c.unwrap_err().to_string(), message);
                    assert_eq!(r.unwrap_err().to_string(), message);
                }
                if <$t>::MIN != 0 {
                    let mut cols = column_major.clone();
                    let mut rows = row_major.clone();
                    cols[4 * n + 9] = (0 as $t).wrapping_sub(2);
                    rows[9 * d + 4] = (0 as $t).wrapping_sub(2);
                    let message = "codes must hold codes >= 0, got codes[9, 4] = -2";
                    let err = mixed_radix_encode_columns(&cols, n, &cards, "codes").unwrap_err();
                    assert_eq!(err.to_string(), message);
                    let err = mixed_radix_encode_rows(&rows, n, &cards, "codes").unwrap_err();
                    assert_eq!(err.to_string(), message);
                }
            }
        )*};
    }

    generic_encode_tests!(
        encode_u8: u8,
        encode_u16: u16,
        encode_u32: u32,
        encode_u64: u64,
        encode_i8: i8,
        encode_i16: i16,
        encode_i32: i32,
        encode_i64: i64
    );

    #[test]
    fn place_values_wrap_only_behind_unit_cardinalities() {
        assert_eq!(place_values(&[3, 4, 5]), vec![20, 5, 1]);
        let cards = [1, 1 << 16, 1 << 16, 1 << 16, 1 << 16];
        assert_eq!(place_values(&cards)[0], 0);
        let max = u32::from(u16::MAX);
        let data = [0, max, max, max, max];
        assert_eq!(
            mixed_radix_encode_rows(&data, 1, &cards, "codes").expect("rows"),
            vec![u64::MAX]
        );
        assert_eq!(
            mixed_radix_encode_columns(&data, 1, &cards, "codes").expect("columns"),
            vec![u64::MAX]
        );
        assert!(mixed_radix_encode_rows(&[1, 0, 0, 0, 0], 1, &cards, "codes").is_err());
    }

    #[test]
    fn generic_encoders_check_shape_and_domain() {
        let err = mixed_radix_encode_rows(&[0i64; 5], 2, &[3, 3], "codes").unwrap_err();
        assert!(err.to_string().starts_with("codes has 5 values"), "{err}");
        assert!(mixed_radix_encode_columns(&[0u8; 3], 2, &[3, 3], "codes").is_err());
        let huge = [1 << 16, 1 << 16, 1 << 16, (1 << 16) + 1];
        assert!(matches!(
            mixed_radix_encode_rows(&[0u32; 4], 1, &huge, "codes"),
            Err(Error::Domain(_))
        ));
        assert!(mixed_radix_encode_rows(&[0u32; 2], 1, &[2, 0], "codes").is_err());
        assert_eq!(
            mixed_radix_encode_rows::<u8>(&[], 3, &[], "codes").expect("empty"),
            vec![0, 0, 0]
        );
        let max = [u64::from(u16::MAX); 4];
        let cards = [1 << 16; 4];
        assert_eq!(
            mixed_radix_encode_columns(&max, 1, &cards, "codes").expect("max"),
            vec![u64::MAX]
        );
    }

    #[test]
    fn no_columns_gives_zero_keys() {
        let keys = mixed_radix_encode(columns_of(&[], 3, &[])).expect("encode");
        assert_eq!(keys, vec![0, 0, 0]);
        assert!(mixed_radix_decode(&[0, 0], &[]).expect("decode").is_empty());
        assert!(mixed_radix_decode(&[1], &[]).is_err());
    }
}
