//! Property-based fuzz targets of the mixed-radix encoder, the thresholded histogram
//! sampler and the maximal-set miner: arbitrary (often malformed) input must give `Ok` with
//! the documented invariants or an `Err`, never a panic, and `Ok` must agree with a direct
//! reference computation.
//!
//! `cargo test` runs each target for `PROPTEST_CASES` cases (1000 by default), so the time
//! is bounded in CI, from a fixed seed so that CI is reproducible; `PRIVTAB_FUZZ_RANDOM=1`
//! draws a fresh seed. A longer fuzzing run:
//! `PROPTEST_CASES=20000 PRIVTAB_FUZZ_RANDOM=1 cargo test -p privtab-core --release --test
//! properties -- --nocapture`, which prints the number of cases each target ran (shrinking
//! included). Inputs stay small (at most 60 rows, 12 items for the miner) so that the
//! brute-force references stay cheap.

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};

use privtab_core::Error;
use privtab_core::binary::BinaryCsr;
use privtab_core::columns::Columns;
use privtab_core::encode::{
    domain_size, mixed_radix_decode, mixed_radix_encode_columns, mixed_radix_encode_rows,
};
use privtab_core::histogram::{Noise, empty_cell_probability, thresholded_histogram};
use privtab_core::mining::{
    Limits, MaximalSets, Rows, maximal_itemsets, maximal_kac_sets, parse_transactions,
};
use privtab_core::rng::Seed;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// Runs `check` on `PROPTEST_CASES` values of `strategy` (see the module documentation),
/// prints how many calls it made and how many of them got an answer rather than an error,
/// and panics with the shrunk input of a failure. `check` returns whether the kernel
/// answered.
fn fuzz<S>(name: &str, strategy: S, check: impl Fn(S::Value) -> Result<bool, TestCaseError>)
where
    S: Strategy,
    S::Value: Debug,
{
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = if std::env::var_os("PRIVTAB_FUZZ_RANDOM").is_some() {
        TestRng::from_seed(RngAlgorithm::ChaCha, &rand_seed())
    } else {
        TestRng::deterministic_rng(RngAlgorithm::ChaCha)
    };
    let (calls, answered) = (AtomicU64::new(0), AtomicU64::new(0));
    let outcome = TestRunner::new_with_rng(config, rng).run(&strategy, |value| {
        calls.fetch_add(1, Ordering::Relaxed);
        if check(value)? {
            answered.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    });
    let (calls, answered) = (calls.into_inner(), answered.into_inner());
    eprintln!(
        "fuzz target {name}: {calls} calls ({cases} cases), {answered} answered, {} refused",
        calls - answered
    );
    if let Err(error) = outcome {
        panic!("fuzz target {name} failed: {error}");
    }
}

/// 32 bytes from the clock and the process id, for `PRIVTAB_FUZZ_RANDOM` runs.
fn rand_seed() -> [u8; 32] {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut seed = [0u8; 32];
    seed[..16].copy_from_slice(&nanos.to_le_bytes());
    seed[16..20].copy_from_slice(&std::process::id().to_le_bytes());
    eprintln!("fuzz seed: {seed:?}");
    seed
}

// The mixed-radix encoder -------------------------------------------------------------------

/// Cardinalities that reach every branch: 0, 1, small, and 2^32 − 1 (whose products pass
/// 2^64 after three columns).
fn cardinality() -> impl Strategy<Value = u32> {
    prop_oneof![
        6 => 1u32..6,
        1 => Just(0u32),
        1 => Just(u32::MAX),
        1 => (1u32 << 16)..=(1u32 << 16) + 1,
        1 => any::<u32>(),
    ]
}

/// What is wrong with a generated table, if anything: most tables are valid, so that the
/// answers are checked as often as the refusals.
#[derive(Clone, Copy, Debug)]
enum Defect {
    None,
    /// One code replaced by this value (negative, equal to its cardinality, or any).
    Code(usize, i64),
    /// One code missing: the length is not `n · d`.
    Length,
}

fn defect(n: usize, d: usize) -> impl Strategy<Value = Defect> {
    let cells = (n * d).max(1);
    prop_oneof![
        6 => Just(Defect::None),
        1 => (0..cells, prop_oneof![Just(-1i64), Just(i64::MIN), any::<i64>()])
            .prop_map(|(at, value)| Defect::Code(at, value)),
        1 => (0..cells).prop_map(|at| Defect::Code(at, i64::MAX)),
        1 => Just(Defect::Length),
    ]
}

/// A column-major table of `i64` codes over `cards`, valid except for its [`Defect`].
fn code_table() -> impl Strategy<Value = (Vec<i64>, usize, Vec<u32>)> {
    (prop::collection::vec(cardinality(), 0..5), 0usize..40).prop_flat_map(|(cards, n)| {
        let d = cards.len();
        let columns: Vec<_> = cards
            .iter()
            .map(|&card| prop::collection::vec(0..i64::from(card.max(1)), n))
            .collect();
        (columns, Just(cards), defect(n, d)).prop_map(move |(columns, cards, defect)| {
            let mut data: Vec<i64> = columns.concat();
            match defect {
                Defect::Code(at, value) if at < data.len() => {
                    // i64::MAX stands for "the column's cardinality", a code just too large.
                    data[at] = if value == i64::MAX {
                        i64::from(cards[at / n])
                    } else {
                        value
                    };
                }
                Defect::Length if !data.is_empty() => {
                    data.pop();
                }
                _ => {}
            }
            (data, n, cards)
        })
    })
}

/// Cardinalities and keys, mostly below the product of the cardinalities.
fn key_list() -> impl Strategy<Value = (Vec<u32>, Vec<u64>)> {
    prop::collection::vec(cardinality(), 0..5).prop_flat_map(|cards| {
        let key = match reference_product(&cards) {
            Some(size) if size > 0 && size < 1 << 64 => {
                prop_oneof![8 => 0..size as u64, 1 => any::<u64>()].boxed()
            }
            _ => any::<u64>().boxed(),
        };
        (Just(cards), prop::collection::vec(key, 0..30))
    })
}

/// `Σ c_j · Π_{l > j} k_l` in u128, or `None` when a code is out of range.
fn reference_key(row: &[i64], cards: &[u32]) -> Option<u128> {
    let mut key: u128 = 0;
    for (&code, &card) in row.iter().zip(cards) {
        let code = u128::try_from(code).ok()?;
        if code >= u128::from(card) {
            return None;
        }
        key = key * u128::from(card) + code;
    }
    Some(key)
}

fn reference_product(cards: &[u32]) -> Option<u128> {
    cards.iter().try_fold(1u128, |p, &k| {
        p.checked_mul(u128::from(k)).filter(|&p| p <= 1 << 64)
    })
}

fn check_encode(data: &[i64], n: usize, cards: &[u32]) -> Result<bool, TestCaseError> {
    let d = cards.len();
    let by_columns = mixed_radix_encode_columns(data, n, cards, "codes");
    let row_major: Vec<i64> = if data.len() == n * d {
        (0..n)
            .flat_map(|i| (0..d).map(move |j| data[j * n + i]))
            .collect()
    } else {
        data.to_vec()
    };
    let by_rows = mixed_radix_encode_rows(&row_major, n, cards, "codes");
    prop_assert_eq!(domain_size(cards), reference_product(cards));

    let shape_ok = data.len() == n * d;
    let domain_ok = cards.iter().all(|&k| k > 0) && reference_product(cards).is_some();
    let expected: Option<Vec<u64>> = if shape_ok && domain_ok {
        (0..n)
            .map(|i| {
                let row: Vec<i64> = (0..d).map(|j| data[j * n + i]).collect();
                reference_key(&row, cards).map(|k| k as u64)
            })
            .collect()
    } else {
        None
    };
    match (&expected, &by_columns) {
        (Some(keys), Ok(got)) => prop_assert_eq!(keys, got),
        (None, Err(Error::InvalidData(_) | Error::Domain(_))) => {}
        _ => prop_assert!(false, "expected {expected:?}, got {by_columns:?}"),
    }
    // The row-major encoder agrees, errors included (they may name another bad code).
    prop_assert_eq!(by_columns.is_ok(), by_rows.is_ok());
    if let (Ok(a), Ok(b)) = (&by_columns, &by_rows) {
        prop_assert_eq!(a, b);
    }
    if let Ok(keys) = &by_columns {
        // Decoding gives the rows back (row-major).
        let decoded =
            mixed_radix_decode(keys, cards).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back: Vec<i64> = decoded.iter().map(|&c| i64::from(c)).collect();
        prop_assert_eq!(back, row_major);
    }
    Ok(by_columns.is_ok())
}

fn check_decode(keys: &[u64], cards: &[u32]) -> Result<bool, TestCaseError> {
    let decoded = mixed_radix_decode(keys, cards);
    let size = reference_product(cards).filter(|_| cards.iter().all(|&k| k > 0));
    let valid = size.is_some_and(|m| keys.iter().all(|&k| u128::from(k) < m));
    match &decoded {
        Ok(codes) => {
            prop_assert!(valid, "decoded {keys:?} over {cards:?}");
            prop_assert_eq!(codes.len(), keys.len() * cards.len());
            let columns: Vec<i64> = (0..cards.len())
                .flat_map(|j| (0..keys.len()).map(move |i| (i, j)))
                .map(|(i, j)| i64::from(codes[i * cards.len() + j]))
                .collect();
            let again = mixed_radix_encode_columns(&columns, keys.len(), cards, "codes")
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(again, keys.to_vec());
        }
        Err(_) => prop_assert!(!valid, "{keys:?} over {cards:?} refused: {decoded:?}"),
    }
    Ok(decoded.is_ok())
}

#[test]
fn encoder_matches_the_reference_or_refuses() {
    fuzz("mixed_radix_encode", code_table(), |(data, n, cards)| {
        check_encode(&data, n, &cards)
    });
}

#[test]
fn decoder_inverts_the_encoder_or_refuses() {
    fuzz("mixed_radix_decode", key_list(), |(cards, keys)| {
        check_decode(&keys, &cards)
    });
}

// The thresholded histogram sampler ------------------------------------------------------------

/// Privacy parameters and thresholds including the extremes a caller could pass.
fn epsilon() -> impl Strategy<Value = f64> {
    prop_oneof![
        16 => 0.05f64..20.0,
        1 => Just(0.0),
        1 => Just(-1.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::MIN_POSITIVE),
        1 => Just(5e-324),
        1 => Just(1e300),
        1 => any::<f64>(),
    ]
}

fn threshold() -> impl Strategy<Value = f64> {
    prop_oneof![
        12 => -20.0f64..60.0,
        1 => Just(f64::NAN),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(9_007_199_254_740_992.0),
        1 => Just(-9.0e15),
        1 => Just(1e-310),
        1 => any::<f64>(),
    ]
}

#[allow(clippy::too_many_arguments)]
fn check_histogram(
    data: &[u32],
    n: usize,
    cards: &[u32],
    epsilon: f64,
    threshold: f64,
    noise: Noise,
    max_cells: u64,
    seed: u64,
) -> Result<bool, TestCaseError> {
    // Keep the output small enough for a debug build: a domain of more than 10^5 cells
    // gets a cap of 10^5 expected empty cells (the refusals above it are still reached).
    let max_cells = match domain_size(cards) {
        Some(size) if size <= 100_000 => max_cells,
        _ => max_cells.min(100_000),
    };
    let p = empty_cell_probability(epsilon, threshold, noise);
    if let Ok(p) = p {
        prop_assert!((0.0..=1.0).contains(&p), "P(keep) = {p}");
    }
    let Ok(cols) = Columns::new(data, n, cards) else {
        return Ok(false);
    };
    let release = |seed: u64| {
        thresholded_histogram(
            cols,
            epsilon,
            threshold,
            noise,
            max_cells,
            &Seed::from_u64(seed),
        )
    };
    let hist = release(seed);
    let parameters_ok = epsilon.is_finite()
        && epsilon > 0.0
        && threshold.is_finite()
        && threshold.abs() < 9_007_199_254_740_992.0;
    match &hist {
        // Valid alone, ε and τ can still be extreme (a noise scale or τ beyond the grid).
        Err(Error::InvalidParameter { name, .. }) => prop_assert!(
            !parameters_ok || name.contains("epsilon") || *name == "threshold",
            "{hist:?}"
        ),
        Err(Error::Domain(_) | Error::OutputTooLarge(_)) => prop_assert!(parameters_ok),
        Err(other) => prop_assert!(false, "unexpected error {other:?}"),
        Ok(hist) => {
            prop_assert!(parameters_ok);
            let size = domain_size(cards).ok_or_else(|| TestCaseError::fail("domain"))?;
            prop_assert_eq!(hist.keys.len(), hist.values.len());
            prop_assert!(
                hist.keys.windows(2).all(|w| w[0] < w[1]),
                "keys not increasing"
            );
            prop_assert!(hist.keys.iter().all(|&k| u128::from(k) < size));
            prop_assert!(
                hist.values.iter().all(|&v| v.is_finite() && v > threshold),
                "a value at or below the threshold {threshold}: {:?}",
                hist.values
            );
            if noise == Noise::Discrete {
                prop_assert!(hist.values.iter().all(|&v| v == v.round()));
            }
            // Deterministic for a seed.
            prop_assert_eq!(Ok(hist.clone()), release(seed));
        }
    }
    Ok(hist.is_ok())
}

fn histogram_input() -> impl Strategy<Value = (Vec<u32>, usize, Vec<u32>)> {
    let cardinality = prop_oneof![
        6 => 1u32..5,
        1 => Just(0u32),
        1 => 1u32..200,
        1 => Just(u32::MAX),
    ];
    (prop::collection::vec(cardinality, 0..4), 0usize..60)
        .prop_flat_map(|(cards, n)| {
            let columns: Vec<_> = cards
                .iter()
                .map(|&k| prop::collection::vec(0..k.max(1), n))
                .collect();
            (columns, Just(n), Just(cards), 0usize..8, any::<usize>())
        })
        .prop_map(|(columns, n, cards, defect, at)| {
            let mut data = columns.concat();
            // One table in eight has a code equal to its column's cardinality.
            if defect == 0 && !data.is_empty() {
                let at = at % data.len();
                data[at] = cards[at / n];
            }
            (data, n, cards)
        })
}

#[test]
fn histogram_is_sorted_above_threshold_in_domain_or_refuses() {
    let input = (
        histogram_input(),
        (epsilon(), threshold(), any::<bool>()),
        prop_oneof![Just(u64::MAX), 0u64..5_000, Just(0u64)],
        any::<u64>(),
    );
    fuzz(
        "thresholded_histogram",
        input,
        |((data, n, cards), (epsilon, threshold, discrete), max_cells, seed)| {
            let noise = if discrete {
                Noise::Discrete
            } else {
                Noise::Laplace
            };
            check_histogram(&data, n, &cards, epsilon, threshold, noise, max_cells, seed)
        },
    );
}

// The maximal-set miner ---------------------------------------------------------------------

/// A CSR structure: usually valid rows over `m ≤ 12` items, sometimes broken (unsorted or
/// out-of-range indices, bad offsets) and sometimes changed but still valid (two indices
/// swapped across rows).
fn csr() -> impl Strategy<Value = (Vec<i64>, Vec<u32>, usize)> {
    (1usize..=12, 0usize..25).prop_flat_map(|(m, n)| {
        (
            prop::collection::vec(0u32..(1 << m), n),
            Just(m),
            0usize..10,
            any::<u32>(),
        )
            .prop_map(|(masks, m, broken, noise)| {
                let mut indptr = vec![0i64];
                let mut indices = Vec::new();
                for &mask in &masks {
                    indices.extend((0..m as u32).filter(|&i| mask >> i & 1 == 1));
                    indptr.push(indices.len() as i64);
                }
                match broken {
                    0 if !indices.is_empty() => {
                        let at = noise as usize % indices.len();
                        indices[at] = m as u32 + noise % 3;
                    }
                    1 if indices.len() > 1 => indices.swap(0, 1),
                    2 => *indptr.last_mut().unwrap_or(&mut 0) += 1,
                    3 => indptr.clear(),
                    _ => {}
                }
                (indptr, indices, m)
            })
    })
}

fn support(masks: &[u32], set: u32) -> u64 {
    masks.iter().filter(|&&r| r & set == set).count() as u64
}

fn anonymity(masks: &[u32], set: u32) -> u64 {
    let projected: Vec<u32> = masks.iter().map(|&r| r & set).collect();
    projected
        .iter()
        .map(|&p| projected.iter().filter(|&&q| q & p == p).count() as u64)
        .min()
        .unwrap_or(0)
}

/// All maximal sets of a downward-closed `measure ≥ threshold`, by enumeration, in the
/// miner's order (decreasing size, then lexicographic).
fn brute(m: usize, measure: impl Fn(u32) -> u64, threshold: u64) -> Vec<(Vec<u32>, u64)> {
    let feasible = |s: u32| measure(s) >= threshold;
    let mut out: Vec<(Vec<u32>, u64)> = (0..1u32 << m)
        .filter(|&s| feasible(s) && (0..m).all(|i| s >> i & 1 == 1 || !feasible(s | 1 << i)))
        .map(|s| {
            (
                (0..m as u32).filter(|&i| s >> i & 1 == 1).collect(),
                measure(s),
            )
        })
        .collect();
    out.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    out
}

/// [`maximal_itemsets`] or [`maximal_kac_sets`].
type Miner = fn(Rows<'_>, u64, Limits) -> privtab_core::Result<MaximalSets>;

fn sets(found: &MaximalSets) -> Vec<(Vec<u32>, u64)> {
    (0..found.measures.len())
        .map(|s| {
            let range = found.offsets[s] as usize..found.offsets[s + 1] as usize;
            (found.items[range].to_vec(), found.measures[s])
        })
        .collect()
}

fn check_miner(
    indptr: &[i64],
    indices: &[u32],
    m: usize,
    threshold: u64,
    max_sets: Option<usize>,
) -> Result<bool, TestCaseError> {
    let Ok(rows) = BinaryCsr::new(indptr, indices, m) else {
        return Ok(false);
    };
    let masks: Vec<u32> = (0..rows.n_rows())
        .map(|u| rows.row(u).iter().fold(0u32, |mask, &i| mask | 1 << i))
        .collect();
    let masks = masks.as_slice();
    let limits = Limits {
        max_sets,
        time_limit: None,
    };
    let miners: [(Miner, &dyn Fn(u32) -> u64); 2] = [
        (maximal_itemsets, &|s| support(masks, s)),
        (maximal_kac_sets, &|s| anonymity(masks, s)),
    ];
    for (mine, measure) in miners {
        let found = mine(rows, threshold, limits);
        if threshold == 0 || max_sets == Some(0) {
            prop_assert!(
                matches!(found, Err(Error::InvalidParameter { .. })),
                "{found:?}"
            );
            return Ok(false);
        }
        let found = found.map_err(|e| TestCaseError::fail(e.to_string()))?;
        let expected = brute(m, measure, threshold);
        let got = sets(&found);
        match max_sets {
            // A search stopped at exactly `cap` sets cannot know that none is left, so
            // it may say incomplete when `cap` equals the number of maximal sets.
            Some(cap) if cap <= expected.len() => {
                prop_assert!(found.complete == (cap == expected.len()) || !found.complete);
                prop_assert_eq!(got.len(), cap);
                prop_assert!(
                    got.iter().all(|set| expected.contains(set)),
                    "not maximal: {got:?}"
                );
            }
            _ => {
                prop_assert!(found.complete);
                prop_assert_eq!(got, expected);
            }
        }
    }
    Ok(true)
}

#[test]
fn miner_finds_exactly_the_maximal_sets_or_refuses() {
    let input = (
        csr(),
        prop_oneof![4 => 1u64..6, 1 => Just(0u64), 1 => 6u64..40],
        prop_oneof![3 => Just(None), 1 => (0usize..4).prop_map(Some)],
    );
    fuzz(
        "maximal_sets",
        input,
        |((indptr, indices, m), threshold, max_sets)| {
            check_miner(&indptr, &indices, m, threshold, max_sets)
        },
    );
}

#[test]
fn transaction_parser_gives_valid_rows_or_refuses() {
    let byte = prop_oneof![
        400 => prop::sample::select(b"0123456789 \n".to_vec()),
        1 => prop::sample::select(b"\t\r-x.+".to_vec()),
        1 => any::<u8>(),
    ];
    fuzz(
        "parse_transactions",
        prop::collection::vec(byte, 0..80),
        |text| {
            let Ok(parsed) = parse_transactions(&text, "input") else {
                return Ok(false);
            };
            let rows = BinaryCsr::new(&parsed.indptr, &parsed.indices, parsed.n_items());
            prop_assert!(rows.is_ok(), "{rows:?}");
            prop_assert!(parsed.item_ids.is_sorted_by(|a, b| a < b));
            let mut used = vec![false; parsed.n_items()];
            parsed
                .indices
                .iter()
                .for_each(|&column| used[column as usize] = true);
            prop_assert!(used.iter().all(|&u| u), "a column without its item");
            let body = text.strip_suffix(b"\n").unwrap_or(&text);
            let lines = body.split(|&b| b == b'\n').count();
            let expected = if text.is_empty() { 0 } else { lines };
            prop_assert_eq!(parsed.indptr.len() - 1, expected);
            Ok(true)
        },
    );
}
