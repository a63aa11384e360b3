//! Mixed-radix keys: one `u64` per row that identifies its combination of codes.
//!
//! The digit order is that of `numpy.ravel_multi_index(codes.T, cardinalities)`: the first
//! attribute is the most significant digit, so
//! `key = ((c_0 · k_1 + c_1) · k_2 + c_2) · … + c_{d−1}`. Keys are exact as long as the
//! product of the cardinalities is at most 2^64 (then every key is below 2^64); larger
//! domains are rejected with [`Error::Domain`] rather than silently wrapped.

use rayon::prelude::*;

use crate::rng::CHUNK;
use crate::table::Columns;
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
    if let Some(j) = cardinalities.iter().position(|&c| c == 0) {
        return Err(Error::InvalidData(format!(
            "cardinalities[{j}] must be >= 1, got 0"
        )));
    }
    domain_size(cardinalities).ok_or_else(|| {
        Error::Domain(format!(
            "the product of cardinalities {cardinalities:?} exceeds 2**64, so mixed-radix keys \
             do not fit in 64 bits; use fewer or coarser columns"
        ))
    })
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
    encode_slices(&columns, cols.cardinalities(), cols.n_rows())
}

/// Encodes the attributes `subset` of `cols`, in the order given (the first listed is the
/// most significant digit).
///
/// # Errors
/// [`Error::InvalidData`] when an index in `subset` is out of range; [`Error::Domain`] when
/// the product of the selected cardinalities exceeds 2^64.
pub fn mixed_radix_encode_subset(cols: Columns<'_>, subset: &[usize]) -> Result<Vec<u64>> {
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
    encode_slices(&columns, &cards, cols.n_rows())
}

/// Mixed-radix keys of `n_rows` rows whose codes are already validated against `cards`.
fn encode_slices(columns: &[&[u32]], cards: &[u32], n_rows: usize) -> Result<Vec<u64>> {
    check_domain(cards)?;
    let mut keys = vec![0u64; n_rows];
    keys.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(chunk, out)| {
            let start = chunk * CHUNK;
            for (column, &card) in columns.iter().zip(cards) {
                let radix = u64::from(card);
                let codes = &column[start..start + out.len()];
                for (key, &code) in out.iter_mut().zip(codes) {
                    // Never wraps: the running key is below the product of the cardinalities
                    // seen so far, P, so key·k + c ≤ (P − 1)·k + k − 1 < P·k ≤ 2^64. Wrapping
                    // arithmetic only avoids the overflow check in the hot loop.
                    *key = key.wrapping_mul(radix).wrapping_add(u64::from(code));
                }
            }
        });
    Ok(keys)
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

    #[test]
    fn no_columns_gives_zero_keys() {
        let keys = mixed_radix_encode(columns_of(&[], 3, &[])).expect("encode");
        assert_eq!(keys, vec![0, 0, 0]);
        assert!(mixed_radix_decode(&[0, 0], &[]).expect("decode").is_empty());
        assert!(mixed_radix_decode(&[1], &[]).is_err());
    }
}
