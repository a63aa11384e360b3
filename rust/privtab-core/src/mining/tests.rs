use super::*;
use crate::binary::csr_from_rows as csr;
use crate::resources::with_pool;

fn sets(found: &MaximalSets) -> Vec<(Vec<u32>, u64)> {
    (0..found.measures.len())
        .map(|s| {
            let items =
                found.items[found.offsets[s] as usize..found.offsets[s + 1] as usize].to_vec();
            (items, found.measures[s])
        })
        .collect()
}

fn support(rows: &[Vec<u32>], set: u32) -> u64 {
    rows.iter()
        .filter(|r| r.iter().fold(0u32, |m, &i| m | 1 << i) & set == set)
        .count() as u64
}

fn anonymity(rows: &[Vec<u32>], set: u32) -> u64 {
    let masks: Vec<u32> = rows
        .iter()
        .map(|r| r.iter().fold(0u32, |m, &i| m | 1 << i) & set)
        .collect();
    masks
        .iter()
        .map(|&p| masks.iter().filter(|&&q| q & p == p).count() as u64)
        .min()
        .unwrap_or(0)
}

fn brute(m: u32, measure: impl Fn(u32) -> u64, threshold: u64) -> Vec<(Vec<u32>, u64)> {
    let values: Vec<u64> = (0..1u32 << m).map(&measure).collect();
    let measure = |s: u32| values[s as usize];
    let feasible = |s: u32| measure(s) >= threshold;
    let mut out: Vec<(Vec<u32>, u64)> = (0..1u32 << m)
        .filter(|&s| feasible(s) && (0..m).all(|i| s & 1 << i != 0 || !feasible(s | 1 << i)))
        .map(|s| ((0..m).filter(|&i| s & 1 << i != 0).collect(), measure(s)))
        .collect();
    out.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    out
}

fn random_rows(seed: u64, n: usize, m: u32, density: u64) -> Vec<Vec<u32>> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n)
        .map(|_| (0..m).filter(|_| next() % 100 < density).collect())
        .collect()
}

#[test]
fn matches_brute_force_on_random_tables() {
    for seed in 0..150u64 {
        let n = 1 + (seed as usize * 7) % 30;
        let m = 1 + (seed as u32) % 9;
        let rows = random_rows(seed, n, m, 20 + seed % 70);
        let (indptr, indices) = csr(&rows);
        let view = Rows::new(&indptr, &indices, m as usize).unwrap();
        for threshold in [1, 2, 3, 5] {
            let got = maximal_itemsets(view, threshold, Limits::default()).unwrap();
            assert!(got.complete);
            assert_eq!(
                sets(&got),
                brute(m, |s| support(&rows, s), threshold),
                "seed {seed}"
            );
            let got = maximal_kac_sets(view, threshold, Limits::default()).unwrap();
            assert_eq!(
                sets(&got),
                brute(m, |s| anonymity(&rows, s), threshold),
                "seed {seed} kac"
            );
        }
    }
}

/// Transactions never held as bitsets.
const HORIZONTAL: Layout = Layout {
    max_transactions: 0,
    max_split_transactions: 0,
    density_factor: 2,
    compress_factor: 2,
};

/// Bitsets only at the root of a split search (several threads, or a cap): on one thread
/// with no cap the same data is searched in sequence, horizontally.
const BITSETS_WHEN_SPLIT: Layout = Layout {
    max_transactions: 0,
    max_split_transactions: usize::MAX,
    density_factor: usize::MAX,
    compress_factor: 2,
};

/// Every way of holding a node's transactions: horizontal only, bitsets from the root
/// with compression at every halving, bitsets that never compress, bitsets that go back
/// to horizontal as soon as they are sparser than one word per pair, bitsets from the root
/// of a split search only, and the default.
fn layouts() -> [Layout; 6] {
    let vertical = |compress_factor| Layout {
        max_transactions: usize::MAX,
        max_split_transactions: usize::MAX,
        density_factor: usize::MAX,
        compress_factor,
    };
    [
        HORIZONTAL,
        vertical(2),
        vertical(usize::MAX),
        Layout {
            max_transactions: usize::MAX,
            max_split_transactions: usize::MAX,
            density_factor: 1,
            compress_factor: 2,
        },
        BITSETS_WHEN_SPLIT,
        Layout::default(),
    ]
}

fn mine_with(view: Rows<'_>, threshold: u64, layout: Layout) -> MaximalSets {
    let oracle = Frequency::with_layout(view, threshold, layout).unwrap();
    maximal_sets(
        &oracle,
        oracle.original(),
        Limits::default(),
        &Progress::new(),
    )
    .unwrap()
}

/// Every layout, on all threads (top-level branches apart) and on one (one sequence from
/// the root where the root stays horizontal), sparse to dense.
#[test]
fn every_layout_matches_brute_force() {
    for seed in 0..120u64 {
        let n = 1 + (seed as usize * 37) % 300;
        let m = 1 + (seed as u32) % 10;
        let rows = random_rows(seed + 1000, n, m, 5 + seed % 90);
        let (indptr, indices) = csr(&rows);
        let view = Rows::new(&indptr, &indices, m as usize).unwrap();
        for threshold in [1, 2, 4] {
            let expected = brute(m, |s| support(&rows, s), threshold);
            for layout in layouts() {
                let one = with_pool(1, || mine_with(view, threshold, layout));
                for got in [mine_with(view, threshold, layout), one] {
                    assert_eq!(sets(&got), expected, "seed {seed} {layout:?}");
                }
            }
        }
    }
}

/// Horizontal (sequential) searches on several threads run the first branches as one
/// sequence and the last ones apart, wherever the two ends meet: the same sets as brute
/// force on 1 to 4 threads, on tables long enough for every thread to take branches.
#[test]
fn sequential_searches_from_both_ends_match_brute_force() {
    for seed in 0..4u64 {
        let rows = random_rows(seed + 300, 1500, 16, 12 + 6 * seed);
        let (indptr, indices) = csr(&rows);
        let view = Rows::new(&indptr, &indices, 16).unwrap();
        assert!(
            Frequency::with_layout(view, 2, HORIZONTAL)
                .unwrap()
                .sequential(2)
        );
        for threshold in [2, 9] {
            let expected = brute(16, |s| support(&rows, s), threshold);
            for threads in 1..=4 {
                let got = with_pool(threads, || mine_with(view, threshold, HORIZONTAL));
                assert!(got.complete);
                assert_eq!(sets(&got), expected, "seed {seed} threads {threads}");
            }
        }
    }
}

/// The children of top-level branches searched apart in parallel (bitsets or k-AC, no
/// cap, the last branches of a thread) give the sets of brute force on 2 to 4 threads,
/// for dense and sparser tables: at least some of them were searched that way.
#[test]
fn branches_shared_between_threads_match_brute_force() {
    let before = SHARED_NODES.load(Ordering::Relaxed);
    let bitsets = Layout {
        max_transactions: usize::MAX,
        max_split_transactions: usize::MAX,
        density_factor: usize::MAX,
        compress_factor: 2,
    };
    for seed in 0..12u64 {
        let m = 6 + (seed as u32) % 9;
        let rows = random_rows(seed + 500, 400, m, 40 + 4 * seed);
        let (indptr, indices) = csr(&rows);
        let view = Rows::new(&indptr, &indices, m as usize).unwrap();
        for threshold in [2, 12, 60] {
            let expected = brute(m, |s| support(&rows, s), threshold);
            // Brute-force containment anonymity is quadratic in the rows: few columns only.
            let expected_kac = (m <= 9).then(|| brute(m, |s| anonymity(&rows, s), threshold));
            for threads in 2..=4 {
                let got = with_pool(threads, || mine_with(view, threshold, bitsets));
                assert!(got.complete);
                assert_eq!(sets(&got), expected, "seed {seed} threads {threads}");
                if let Some(expected_kac) = &expected_kac {
                    let kac = with_pool(threads, || {
                        maximal_kac_sets(view, threshold, Limits::default()).unwrap()
                    });
                    assert_eq!(
                        &sets(&kac),
                        expected_kac,
                        "k-AC, seed {seed} threads {threads}"
                    );
                }
            }
        }
    }
    assert!(SHARED_NODES.load(Ordering::Relaxed) > before);
}

/// The root's layout follows the split: searched in sequence on one thread with no cap,
/// as bitsets on several threads or under a cap, with the same sets either way.
#[test]
fn a_split_root_takes_its_own_transaction_limit() {
    let rows = random_rows(41, 1200, 14, 45);
    let (indptr, indices) = csr(&rows);
    let view = Rows::new(&indptr, &indices, 14).unwrap();
    let oracle = Frequency::with_layout(view, 3, BITSETS_WHEN_SPLIT).unwrap();
    assert!(oracle.sequential(1));
    assert!(!oracle.sequential(2));
    for threshold in [3, 40] {
        let expected = brute(14, |s| support(&rows, s), threshold);
        for threads in 1..=3 {
            let got = with_pool(threads, || mine_with(view, threshold, BITSETS_WHEN_SPLIT));
            assert!(got.complete);
            assert_eq!(
                sets(&got),
                expected,
                "threshold {threshold} threads {threads}"
            );
            let oracle = Frequency::with_layout(view, threshold, BITSETS_WHEN_SPLIT).unwrap();
            let limits = Limits {
                max_sets: Some(usize::MAX),
                time_limit: None,
            };
            let capped = with_pool(threads, || {
                maximal_sets(&oracle, oracle.original(), limits, &Progress::new()).unwrap()
            });
            assert_eq!(sets(&capped), expected, "capped, threads {threads}");
        }
    }
}

/// Hundreds of rows with duplicates (weights up to hundreds, so several weight planes)
/// and wide bitsets that compress several times down a path.
#[test]
fn layouts_agree_on_larger_tables_with_duplicates() {
    for seed in 0..6u64 {
        let distinct = random_rows(seed + 77, 40, 16, 35 + 10 * seed);
        let rows: Vec<Vec<u32>> = (0..900)
            .map(|u| distinct[(u * u + seed as usize) % distinct.len()].clone())
            .chain(random_rows(seed + 99, 300, 16, 50))
            .collect();
        let (indptr, indices) = csr(&rows);
        let view = Rows::new(&indptr, &indices, 16).unwrap();
        for threshold in [15, 60, 200] {
            let [first, rest @ ..] = layouts().map(|layout| mine_with(view, threshold, layout));
            assert!(first.complete && !first.measures.is_empty());
            for other in rest {
                assert_eq!(other, first, "seed {seed} threshold {threshold}");
            }
        }
    }
}

/// More frequent items than found sets are kept as bitsets for (they are then sorted item
/// lists): a few core items on random rows, plus thousands of items that each sit in
/// `threshold` identical rows with a random part of the core. The answer is built by hand: the core's maximal sets not
/// inside any part, and each part with its own item.
#[test]
fn many_frequent_items_match_a_constructed_answer() {
    let core = 8u32;
    let n_extra = COVER_MAX_ITEMS + 10;
    let mask = |items: &[u32]| items.iter().fold(0u32, |m, &i| m | 1 << i);
    for (seed, threshold) in [(1u64, 2u64), (2, 3)] {
        let mut rows = random_rows(seed + 4000, 60, core, 40);
        let parts = random_rows(seed + 5000, n_extra, core, 30);
        for (f, part) in parts.iter().enumerate() {
            let mut row = part.clone();
            row.push(core + f as u32);
            rows.extend(std::iter::repeat_n(row, threshold as usize));
        }
        let core_rows: Vec<Vec<u32>> = rows
            .iter()
            .map(|r| r.iter().copied().filter(|&i| i < core).collect())
            .collect();
        let part_masks: Vec<u32> = parts.iter().map(|p| mask(p)).collect();
        let mut expected: Vec<(Vec<u32>, u64)> = brute(core, |s| support(&core_rows, s), threshold)
            .into_iter()
            .filter(|(set, _)| part_masks.iter().all(|&p| mask(set) & !p != 0))
            .collect();
        for (f, part) in parts.iter().enumerate() {
            let mut set = part.clone();
            set.push(core + f as u32);
            expected.push((set, threshold));
        }
        expected.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        let (indptr, indices) = csr(&rows);
        let view = Rows::new(&indptr, &indices, core as usize + n_extra).unwrap();
        for threads in [1, 2] {
            let got = with_pool(threads, || {
                maximal_itemsets(view, threshold, Limits::default()).unwrap()
            });
            assert_eq!(sets(&got), expected, "seed {seed} threads {threads}");
        }
    }
}

/// Few distinct rows repeated many times: the k-AC oracle merges them, and weights up to
/// dozens need several weight planes.
#[test]
fn kac_sets_of_heavily_duplicated_rows_match_brute_force() {
    for seed in 0..8u64 {
        let distinct = random_rows(seed + 500, 12, 8, 30 + 8 * seed);
        let rows: Vec<Vec<u32>> = (0..300)
            .map(|u| distinct[(u * u * 7 + u + seed as usize) % distinct.len()].clone())
            .collect();
        let (indptr, indices) = csr(&rows);
        let view = Rows::new(&indptr, &indices, 8).unwrap();
        for k in [1, 30, 70, 150] {
            let got = maximal_kac_sets(view, k, Limits::default()).unwrap();
            assert_eq!(
                sets(&got),
                brute(8, |s| anonymity(&rows, s), k),
                "seed {seed} k {k}"
            );
        }
    }
}

#[test]
fn same_result_for_any_thread_count_and_deterministic_truncation() {
    let rows = random_rows(7, 200, 14, 55);
    let (indptr, indices) = csr(&rows);
    let view = Rows::new(&indptr, &indices, 14).unwrap();
    for max_sets in [None, Some(3)] {
        let limits = Limits {
            max_sets,
            time_limit: None,
        };
        let one = with_pool(1, || maximal_itemsets(view, 20, limits).unwrap());
        let two = with_pool(2, || maximal_itemsets(view, 20, limits).unwrap());
        assert_eq!(one, two);
        let one = with_pool(1, || maximal_kac_sets(view, 4, limits).unwrap());
        let two = with_pool(2, || maximal_kac_sets(view, 4, limits).unwrap());
        assert_eq!(one, two);
    }
    let all = maximal_itemsets(view, 20, Limits::default()).unwrap();
    let some = maximal_itemsets(
        view,
        20,
        Limits {
            max_sets: Some(3),
            time_limit: None,
        },
    )
    .unwrap();
    assert!(all.complete && !some.complete);
    assert_eq!(some.measures.len(), 3);
    let all = sets(&all);
    assert!(sets(&some).iter().all(|s| all.contains(s)));
}

#[test]
fn edge_cases_and_errors() {
    let (indptr, indices) = csr(&[vec![0, 1], vec![1]]);
    let view = Rows::new(&indptr, &indices, 3).unwrap();
    assert_eq!(
        sets(&maximal_itemsets(view, 3, Limits::default()).unwrap()),
        vec![]
    );
    assert_eq!(
        sets(&maximal_itemsets(view, 2, Limits::default()).unwrap()),
        vec![(vec![1], 2)]
    );
    assert_eq!(
        sets(&maximal_kac_sets(view, 2, Limits::default()).unwrap()),
        vec![(vec![1, 2], 2)]
    );
    assert!(maximal_itemsets(view, 0, Limits::default()).is_err());
    assert!(maximal_kac_sets(view, 0, Limits::default()).is_err());
    assert!(
        maximal_itemsets(
            view,
            1,
            Limits {
                max_sets: Some(0),
                time_limit: None
            }
        )
        .is_err()
    );
    assert!(Rows::new(&[0, 2], &[1, 1], 3).is_err());
    assert!(Rows::new(&[0, 1], &[3], 3).is_err());
    assert!(Rows::new(&[1, 1], &[3], 3).is_err());
    assert!(Rows::new(&[0, 2, 1], &[0, 1], 3).is_err());
    assert!(Rows::new(&[], &[], 3).is_err());
}

#[test]
fn predicates_and_limits_from_python_values() {
    assert_eq!(
        "containment".parse::<Predicate>(),
        Ok(Predicate::Containment)
    );
    assert!("support".parse::<Predicate>().is_err());
    let limits = Limits::new(Some(3), Some(1.5)).unwrap();
    assert_eq!(limits.time_limit, Some(Duration::from_millis(1500)));
    let err = Limits::new(None, Some(-1.0)).unwrap_err().to_string();
    assert_eq!(
        err,
        "time_limit must be a finite number of seconds >= 0, got -1"
    );
    let rows = [vec![0u32, 1], vec![0]];
    let (indptr, indices) = csr(&rows);
    let rows = Rows::new(&indptr, &indices, 2).unwrap();
    let found = maximal_sets_of(
        Predicate::Frequency,
        rows,
        2,
        Limits::default(),
        &Progress::new(),
    )
    .unwrap();
    assert_eq!(found.items, vec![0]);
}

fn capped(view: Rows<'_>, threshold: u64, kac: bool, cap: usize, threads: usize) -> MaximalSets {
    let limits = Limits {
        max_sets: Some(cap),
        time_limit: None,
    };
    let predicate = if kac {
        Predicate::Containment
    } else {
        Predicate::Frequency
    };
    with_pool(threads, || {
        maximal_sets_of(predicate, view, threshold, limits, &Progress::new()).unwrap()
    })
}

#[test]
fn max_sets_truncates_one_sequence_of_sets_for_any_thread_count() {
    let rows = random_rows(11, 120, 12, 50);
    let (indptr, indices) = csr(&rows);
    let view = Rows::new(&indptr, &indices, 12).unwrap();
    for (kac, threshold) in [(false, 6), (true, 3)] {
        let all = sets(&if kac {
            maximal_kac_sets(view, threshold, Limits::default()).unwrap()
        } else {
            maximal_itemsets(view, threshold, Limits::default()).unwrap()
        });
        assert!(all.len() > 20, "{}", all.len());
        let mut previous: Vec<(Vec<u32>, u64)> = Vec::new();
        for cap in 1..=all.len() + 1 {
            let one = capped(view, threshold, kac, cap, 1);
            for threads in [2, 3] {
                assert_eq!(capped(view, threshold, kac, cap, threads), one, "cap {cap}");
            }
            let got = sets(&one);
            // Truncations of one sequence: each cap adds one set to the previous result.
            assert_eq!(got.len(), cap.min(all.len()));
            assert!(previous.iter().all(|s| got.contains(s)), "cap {cap}");
            assert!(got.iter().all(|s| all.contains(s)));
            assert_eq!(one.complete, cap > all.len(), "cap {cap}");
            previous = got;
        }
        assert_eq!(previous, all);
    }
}

#[test]
fn a_capped_search_on_one_thread_stops_at_the_cap() {
    let rows = random_rows(5, 400, 20, 55);
    let (indptr, indices) = csr(&rows);
    let view = Rows::new(&indptr, &indices, 20).unwrap();
    let all = maximal_itemsets(view, 4, Limits::default()).unwrap();
    let limits = Limits {
        max_sets: Some(10),
        time_limit: None,
    };
    for predicate in [Predicate::Frequency, Predicate::Containment] {
        let progress = Progress::new();
        let threshold = if predicate == Predicate::Frequency {
            4
        } else {
            2
        };
        let found = with_pool(1, || {
            maximal_sets_of(predicate, view, threshold, limits, &progress).unwrap()
        });
        assert_eq!(found.measures.len(), 10);
        // Every branch searched past the cap would find more sets than the result holds.
        assert_eq!(progress.found(), 10, "{predicate:?}");
        let (done, branches) = progress.branches();
        assert!(done == branches && branches > 1, "{done} of {branches}");
    }
    assert!(all.measures.len() > 100, "{}", all.measures.len());
}
