#![allow(clippy::needless_range_loop)]

use super::search::COPY_MIN_ROWS;
use super::select::{argmax_first, log_weights};
use super::subsets::binomial;
use super::*;
use crate::noise::exponential_mechanism;
use crate::rng::Seed;
use std::collections::HashMap;

fn lcg_table(n: usize, cards: &[u32], seed: u64) -> Vec<u32> {
    let mut state = seed;
    let mut data = Vec::with_capacity(n * cards.len());
    for &card in cards {
        for _ in 0..n {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            data.push(((state >> 33) % u64::from(card)) as u32);
        }
    }
    data
}

/// Brute-force statistics of S from row tuples.
fn naive(cols: Columns<'_>, subset: &[usize], labels: &[u32]) -> (usize, u128, f64, f64) {
    let n = cols.n_rows();
    let mut class: HashMap<Vec<u32>, u64> = HashMap::new();
    let mut joint: HashMap<(Vec<u32>, u32), u64> = HashMap::new();
    for i in 0..n {
        let key: Vec<u32> = subset.iter().map(|&j| cols.column(j)[i]).collect();
        *class.entry(key.clone()).or_default() += 1;
        *joint.entry((key, labels[i])).or_default() += 1;
    }
    let h = |counts: Vec<u64>| -> f64 {
        counts
            .iter()
            .map(|&c| {
                let p = c as f64 / n as f64;
                -p * p.log2()
            })
            .sum()
    };
    let sq =
        |counts: &[u64]| -> u128 { counts.iter().map(|&c| u128::from(c) * u128::from(c)).sum() };
    let class_counts: Vec<u64> = class.values().copied().collect();
    let joint_counts: Vec<u64> = joint.values().copied().collect();
    (
        class.len(),
        sq(&class_counts) - sq(&joint_counts),
        h(class_counts),
        h(joint_counts),
    )
}

#[test]
fn dense_and_sorted_refinements_agree_and_rank_tuples() {
    let n = 5000;
    let cards = [3, 50, 7];
    let data = lcg_table(n, &cards, 1);
    let cols = Columns::new(&data, n, &cards).expect("cols");
    let mut dense = Partition::trivial(n).expect("trivial");
    let mut sorted = dense.clone();
    for j in 0..3 {
        dense = dense.refine_valid(cols.column(j), cards[j], Some(true));
        sorted = sorted.refine_valid(cols.column(j), cards[j], Some(false));
        assert_eq!(dense, sorted);
    }
    let mut tuples: Vec<(u32, u32, u32)> = (0..n)
        .map(|i| (data[i], data[n + i], data[2 * n + i]))
        .collect();
    tuples.sort_unstable();
    tuples.dedup();
    for i in (0..n).step_by(37) {
        let t = (data[i], data[n + i], data[2 * n + i]);
        let rank = tuples.binary_search(&t).expect("present");
        assert_eq!(dense.classes()[i] as usize, rank);
    }
    assert_eq!(dense.sizes().iter().sum::<u64>(), n as u64);
}

#[test]
fn candidate_scores_match_brute_force() {
    let n = 3000;
    let cards = [2, 5, 40, 1, 300];
    let data = lcg_table(n, &cards, 2);
    let cols = Columns::new(&data, n, &cards).expect("cols");
    let y = lcg_table(n, &[3], 3);
    let labels = Labels::new(&y, 3).expect("labels");
    for selected in [vec![], vec![1], vec![2, 4]] {
        let partition = Partition::from_columns(cols, &selected).expect("partition");
        let candidates = [0, 1, 2, 3, 4];
        let scores = partition
            .score_candidates(cols, &labels, &candidates)
            .expect("scores");
        for (&a, score) in candidates.iter().zip(&scores) {
            let mut subset = selected.clone();
            subset.push(a);
            let (classes, pairs, h, hy) = naive(cols, &subset, &y);
            assert_eq!(score.n_classes as usize, classes);
            assert_eq!(score.undiscerned_pairs, pairs);
            assert!((score.entropy - h).abs() < 1e-9);
            assert!((score.joint_entropy - hy).abs() < 1e-9);
            let refined = partition.refine(cols.column(a), cards[a]).expect("refine");
            let direct = refined.score(&labels).expect("score");
            assert_eq!(direct.n_classes, score.n_classes);
            assert_eq!(direct.undiscerned_pairs, score.undiscerned_pairs);
            let f = discernibility(cols, &labels, &subset).expect("F");
            assert_eq!(f, score.discernibility(&labels));
        }
        let columns = partition.score_columns(cols, &labels, &candidates);
        assert_eq!(columns, ScoreColumns::new(&scores, &labels));
    }
}

#[test]
fn discernibility_of_empty_and_full_sets() {
    let x = [0, 1, 2, 3];
    let y = [0, 0, 1, 1];
    let cols = Columns::new(&x, 4, &[4]).expect("cols");
    let labels = Labels::new(&y, 2).expect("labels");
    let empty = Partition::trivial(4)
        .expect("trivial")
        .score(&labels)
        .expect("score");
    assert_eq!(empty.discernibility(&labels), 0.0);
    let full = Partition::from_columns(cols, &[0])
        .expect("p")
        .score(&labels)
        .expect("s");
    // 8 ordered pairs differ on the label, all are discerned by x: F = 8 / 4.
    assert_eq!(full.discernibility(&labels), 2.0);
    assert_eq!(discernibility(cols, &labels, &[]), Ok(0.0));
    assert_eq!(discernibility(cols, &labels, &[0]), Ok(2.0));
    assert!(discernibility(cols, &labels, &[1]).is_err());
}

#[test]
fn validation_errors() {
    let p = Partition::trivial(3).expect("trivial");
    assert!(p.refine(&[0, 1], 2).is_err());
    assert!(p.refine(&[0, 1, 2], 2).is_err());
    assert!(p.refine(&[0, 0, 0], 0).is_err());
    assert!(Labels::new(&[0, 3], 3).is_err());
    assert!(Labels::new(&[0], 0).is_err());
    let labels = Labels::new(&[0, 1], 2).expect("labels");
    assert!(p.score(&labels).is_err());
    let data = [0, 1, 0];
    let cols = Columns::new(&data, 3, &[2]).expect("cols");
    let labels = Labels::new(&[0, 1, 1], 2).expect("labels");
    assert!(p.score_candidates(cols, &labels, &[1]).is_err());
    assert!(Partition::from_columns(cols, &[2]).is_err());
}

#[test]
fn subset_walk_matches_brute_force_and_threads() {
    let n = 2000;
    let cards = [3, 4, 2, 6, 5];
    let data = lcg_table(n, &cards, 4);
    let cols = Columns::new(&data, n, &cards).expect("cols");
    let y = lcg_table(n, &[4], 5);
    let labels = Labels::new(&y, 4).expect("labels");
    let among = [0, 2, 3, 4];
    let walk = subset_entropies(cols, &among, &labels, 2).expect("walk");
    assert_eq!(walk.entropy.len(), 6);
    for (s, subset) in walk.subsets.chunks_exact(2).enumerate() {
        let (_, _, h, hy) = naive(cols, subset, &y);
        assert!((walk.entropy[s] - h).abs() < 1e-9);
        assert!((walk.joint_entropy[s] - hy).abs() < 1e-9);
    }
    assert_eq!(&walk.subsets[..4], &[0, 2, 0, 3]);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool")
        .install(|| subset_entropies(cols, &among, &labels, 3).expect("walk"));
    assert_eq!(
        one,
        subset_entropies(cols, &among, &labels, 3).expect("walk")
    );
    let none = subset_entropies(cols, &among, &labels, 0).expect("k = 0");
    assert_eq!(none.entropy, vec![0.0]);
    assert!((none.joint_entropy[0] - labels.entropy()).abs() < 1e-12);
    assert!(
        subset_entropies(cols, &among, &labels, 5)
            .expect("k > m")
            .entropy
            .is_empty()
    );
    assert_eq!(binomial(60, 30), 118264581564861424);
}
/// Undiscerned pairs of `subset` by brute force over row tuples.
fn naive_undiscerned(cols: Columns<'_>, subset: &[usize], labels: &[u32]) -> u128 {
    naive(cols, subset, labels).1
}

fn search_table(n: usize, seed: u64) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    // A constant column, a huge domain (sorted scoring, comparison refinement), and
    // labels that depend on the first columns so that gains differ.
    let cards = vec![3, 1, 5, 1 << 21, 2, 40, 7];
    let mut data = lcg_table(n, &cards, seed);
    let noise = lcg_table(n, &[4], seed + 1);
    let y: Vec<u32> = (0..n)
        .map(|i| (data[i] + data[2 * n + i] / 2 + noise[i] / 3) % 3)
        .collect();
    for v in &mut data[3 * n..4 * n] {
        *v %= 1 << 12;
        *v *= 300;
    }
    (data, cards, y)
}

#[test]
fn search_gains_match_brute_force_along_the_greedy_path() {
    for (n, seed) in [(400, 7), (2500, 8), (1, 9), (2, 10)] {
        let (data, cards, y) = search_table(n, seed);
        let cols = Columns::new(&data, n, &cards).expect("cols");
        let labels = Labels::new(&y, 3).expect("labels");
        let mut search = DiscernibilitySearch::new(cols, &labels).expect("search");
        let mut chosen: Vec<usize> = Vec::new();
        while !search.remaining().is_empty() {
            let before = naive_undiscerned(cols, &chosen, &y);
            assert_eq!(search.discerned_pairs(), labels.differing_pairs() - before);
            let gains = search.gains().expect("gains");
            let mut best = (0u128, usize::MAX);
            for (&a, &gain) in search.remaining().iter().zip(&gains) {
                let mut subset = chosen.clone();
                subset.push(a);
                assert_eq!(gain, before - naive_undiscerned(cols, &subset, &y));
                if best.1 == usize::MAX || gain > best.0 {
                    best = (gain, a);
                }
            }
            search.add(best.1).expect("add");
            chosen.push(best.1);
        }
        let greedy = select_discerning(cols, &labels, cards.len(), Rule::Greedy).expect("greedy");
        assert_eq!(greedy.order, chosen);
        assert!(search.add(0).is_err());
    }
}

/// Splits the rows by their class of `subset` into two parts (class parity), each grouped
/// by class and holding the columns `keep`: `(codes, labels, bounds)` per part.
fn grouped_parts(
    cols: Columns<'_>,
    subset: &[usize],
    y: &[u32],
    keep: &[usize],
) -> Vec<(Vec<u32>, Vec<u32>, Vec<usize>)> {
    let partition = Partition::from_columns(cols, subset).expect("partition");
    let classes = partition.classes();
    (0..2u32)
        .map(|parity| {
            let mut rows: Vec<usize> = (0..cols.n_rows())
                .filter(|&i| classes[i] % 2 == parity)
                .collect();
            rows.sort_by_key(|&i| classes[i]);
            let mut bounds = vec![0];
            for i in 1..=rows.len() {
                if i == rows.len() || classes[rows[i]] != classes[rows[i - 1]] {
                    bounds.push(i);
                }
            }
            let codes = keep
                .iter()
                .flat_map(|&j| rows.iter().map(move |&i| cols.column(j)[i]))
                .collect();
            (codes, rows.iter().map(|&i| y[i]).collect(), bounds)
        })
        .collect()
}

#[test]
fn grouped_rounds_add_up_to_the_whole_tables_counts() {
    for (n, seed) in [(3000, 21), (1, 22), (7, 23)] {
        let (data, cards, y) = search_table(n, seed);
        let cols = Columns::new(&data, n, &cards).expect("cols");
        let keep: Vec<usize> = (1..6).collect();
        let keep_cards: Vec<u32> = keep.iter().map(|&j| cards[j]).collect();
        let refine_by = 3usize;
        let position = keep.iter().position(|&j| j == refine_by).expect("kept");
        let others: Vec<usize> = keep.iter().copied().filter(|&a| a != refine_by).collect();
        let other_cards: Vec<u32> = others.iter().map(|&j| cards[j]).collect();
        let mut first_round = vec![0u64; keep.len()];
        let mut second_round = vec![0u64; others.len()];
        for (codes, labels, bounds) in grouped_parts(cols, &[0, 6], &y, &keep) {
            let part_labels = Labels::new(&labels, 3).expect("labels");
            let round = grouped_round(
                &codes,
                &keep_cards,
                &part_labels,
                RowGroups::Bounds(bounds.clone()),
                None,
            );
            let round = round.expect("round");
            assert!(round.refined.is_none());
            assert_eq!(round.bounds, bounds);
            for (total, pairs) in first_round.iter_mut().zip(round.undiscerned_pairs) {
                *total += pairs;
            }
            let round = grouped_round(
                &codes,
                &keep_cards,
                &part_labels,
                RowGroups::Bounds(bounds),
                Some(position),
            );
            let round = round.expect("round");
            for (total, &pairs) in second_round.iter_mut().zip(&round.undiscerned_pairs) {
                *total += pairs;
            }
            // The refined rows: classes that mix labels, which a next round counts again.
            let (codes, labels) = round.refined.expect("refined rows");
            assert_eq!(codes.len(), others.len() * labels.len());
            assert_eq!(*round.bounds.last().expect("end"), labels.len());
            for class in round.bounds.windows(2) {
                let labels = &labels[class[0]..class[1]];
                assert!(labels.iter().any(|&l| l != labels[0]));
            }
            let refined_labels = Labels::new(&labels, 3).expect("labels");
            let next = grouped_round(
                &codes,
                &other_cards,
                &refined_labels,
                RowGroups::Bounds(round.bounds),
                None,
            );
            assert_eq!(
                next.expect("next").undiscerned_pairs,
                round.undiscerned_pairs
            );
        }
        for (p, &a) in keep.iter().enumerate() {
            let expected = naive_undiscerned(cols, &[0, 6, a], &y);
            assert_eq!(u128::from(first_round[p]), expected, "n {n}, column {a}");
        }
        for (p, &a) in others.iter().enumerate() {
            let expected = naive_undiscerned(cols, &[0, 6, refine_by, a], &y);
            assert_eq!(u128::from(second_round[p]), expected, "n {n}, column {a}");
        }
    }
}

#[test]
fn grouped_rounds_keep_the_codes_type() {
    let (data, mut cards, y) = search_table(2000, 31);
    cards[3] = 250;
    let data: Vec<u32> = data
        .iter()
        .enumerate()
        .map(|(i, &v)| if i / 2000 == 3 { v % 250 } else { v })
        .collect();
    let narrow: Vec<u8> = data.iter().map(|&v| v as u8).collect();
    let labels = Labels::new(&y, 3).expect("labels");
    let bounds = vec![0, 700, 2000];
    let wide = grouped_round(
        &data,
        &cards,
        &labels,
        RowGroups::Bounds(bounds.clone()),
        Some(2),
    )
    .expect("u32");
    let small =
        grouped_round(&narrow, &cards, &labels, RowGroups::Bounds(bounds), Some(2)).expect("u8");
    assert_eq!(wide.undiscerned_pairs, small.undiscerned_pairs);
    assert_eq!(wide.bounds, small.bounds);
    let ((wide_codes, wide_labels), (small_codes, small_labels)) =
        (wide.refined.expect("wide"), small.refined.expect("small"));
    assert_eq!(wide_labels, small_labels);
    let small_codes: Vec<u32> = small_codes.iter().map(|&v| u32::from(v)).collect();
    assert_eq!(wide_codes, small_codes);
    let bad: Vec<u8> = narrow.iter().map(|&v| v.max(5)).collect();
    let err = grouped_round(
        &bad,
        &cards,
        &labels,
        RowGroups::Bounds(vec![0, 2000]),
        None,
    );
    assert!(matches!(err, Err(Error::InvalidData(m)) if m.contains("codes column 0")));
}

#[test]
fn a_round_groups_rows_by_their_classes_as_a_stable_sort_would() {
    let n = 3000;
    let (data, cards, y) = search_table(n, 41);
    let cols = Columns::new(&data, n, &cards).expect("cols");
    // Classes of columns {0, 6} numbered in reverse, so no class's rows are contiguous.
    let partition = Partition::from_columns(cols, &[0, 6]).expect("partition");
    let n_classes = partition.n_classes();
    let classes: Vec<u32> = partition
        .classes()
        .iter()
        .map(|&c| (n_classes - 1 - c as usize) as u32)
        .collect();
    let mut rows: Vec<usize> = (0..n).collect();
    rows.sort_by_key(|&i| classes[i]);
    let mut bounds = vec![0];
    for i in 1..=n {
        if i == n || classes[rows[i]] != classes[rows[i - 1]] {
            bounds.push(i);
        }
    }
    let grouped: Vec<u32> = (0..cards.len())
        .flat_map(|j| rows.iter().map(move |&i| cols.column(j)[i]))
        .collect();
    let grouped_y: Vec<u32> = rows.iter().map(|&i| y[i]).collect();
    let labels = Labels::new(&y, 3).expect("labels");
    let grouped_labels = Labels::new(&grouped_y, 3).expect("labels");
    let by_classes = RowGroups::Classes {
        classes: &classes,
        n_classes: n_classes + 3,
    };
    for refine_by in [None, Some(2)] {
        let got =
            grouped_round(&data, &cards, &labels, by_classes.clone(), refine_by).expect("round");
        let want = grouped_round(
            &grouped,
            &cards,
            &grouped_labels,
            RowGroups::Bounds(bounds.clone()),
            refine_by,
        )
        .expect("round");
        assert_eq!(got.undiscerned_pairs, want.undiscerned_pairs);
        assert_eq!(got.bounds, want.bounds);
        match refine_by {
            Some(_) => assert_eq!(got.refined, want.refined),
            None => assert_eq!(got.refined, Some((grouped.clone(), grouped_y.clone()))),
        }
    }
    let out_of_range = RowGroups::Classes {
        classes: &classes,
        n_classes: n_classes - 1,
    };
    let err = grouped_round(&data, &cards, &labels, out_of_range, None);
    assert!(matches!(err, Err(Error::InvalidData(m)) if m.contains("n_classes")));
    let short = RowGroups::Classes {
        classes: &classes[1..],
        n_classes,
    };
    let err = grouped_round(&data, &cards, &labels, short, None);
    assert!(matches!(err, Err(Error::InvalidData(m)) if m.contains("classes has")));
}

#[test]
fn grouped_search_rejects_bounds_that_do_not_cover_the_rows() {
    let (data, cards, y) = search_table(10, 3);
    let cols = Columns::new(&data, 10, &cards).expect("cols");
    let labels = Labels::new(&y, 3).expect("labels");
    for bounds in [vec![], vec![1, 10], vec![0, 9], vec![0, 6, 4, 10]] {
        let err = DiscernibilitySearch::from_groups(cols, &labels, bounds.clone());
        assert!(matches!(err, Err(Error::InvalidData(_))), "{bounds:?}");
    }
    let err = grouped_round(
        &data,
        &cards,
        &labels,
        RowGroups::Bounds(vec![0, 10]),
        Some(cards.len()),
    );
    assert!(err.is_err());
}

#[test]
fn layouts_give_identical_gains_and_selections() {
    // 300,000 rows start above COPY_MIN_ROWS, so Auto copies and later reads through
    // the row index once the kept rows fall below it.
    for (n, seed) in [(2500, 21), (300_000, 22)] {
        let (data, cards, y) = search_table(n, seed);
        let cols = Columns::new(&data, n, &cards).expect("cols");
        let labels = Labels::new(&y, 3).expect("labels");
        let layouts = [
            Layout::Indexed,
            Layout::Copied,
            Layout::Auto,
            Layout::FullPass,
            Layout::Records,
        ];
        let mut searches: Vec<DiscernibilitySearch<'_>> = layouts
            .iter()
            .map(|&l| DiscernibilitySearch::with_layout(cols, &labels, l).expect("search"))
            .collect();
        let mut auto_copied = Vec::new();
        let mut full_pass = Vec::new();
        while !searches[0].remaining().is_empty() {
            let gains = searches[0].gains().expect("gains");
            for search in &searches[1..] {
                assert_eq!(search.gains().expect("gains"), gains);
                if !search.in_full_pass() {
                    assert_eq!(search.active_rows(), searches[0].active_rows());
                }
            }
            full_pass.push(searches[2].in_full_pass());
            auto_copied.push(searches[2].holds_copies());
            // Not the greedy pick, so that the path differs from the other tests.
            let pick = searches[0].remaining()[gains.len() / 2];
            for search in &mut searches {
                search.add(pick).expect("add");
            }
        }
        assert!(!searches[0].holds_copies());
        // A column of 2^21 values makes Auto group the rows from the start.
        assert!(!full_pass.iter().any(|&f| f), "{full_pass:?}");
        assert!(searches[3].in_full_pass());
        if n > COPY_MIN_ROWS {
            assert!(auto_copied.iter().any(|&c| c), "{auto_copied:?}");
            assert!(!auto_copied.last().expect("rounds"), "{auto_copied:?}");
        }
        let seed = Seed::from_u64(5);
        let rule = Rule::Exponential {
            epsilon: 0.01,
            seed: &seed,
        };
        let reference = select_discerning_in(cols, &labels, 5, rule, Layout::Indexed);
        for layout in layouts {
            for threads in [1, 2] {
                let got = crate::noise::test_util::in_pool(threads, || {
                    select_discerning_in(cols, &labels, 5, rule, layout).expect("select")
                });
                assert_eq!(&got, reference.as_ref().expect("reference"));
            }
            let mda = minimum_discerning_in(cols, &labels, 0.2, layout).expect("mda");
            assert_eq!(
                mda,
                minimum_discerning_in(cols, &labels, 0.2, Layout::Indexed).expect("mda")
            );
        }
    }
}

/// Every gain of `search` (whose S is `chosen`) against the undiscerned pairs counted
/// from row tuples.
fn assert_gains_match_brute_force(
    search: &DiscernibilitySearch<'_>,
    cols: Columns<'_>,
    chosen: &[usize],
    y: &[u32],
) {
    let before = naive_undiscerned(cols, chosen, y);
    let gains = search.gains().expect("gains");
    for (&a, &gain) in search.remaining().iter().zip(&gains) {
        let subset = [chosen, &[a]].concat();
        let after = naive_undiscerned(cols, &subset, y);
        assert_eq!(gain, before - after, "{chosen:?} + {a}");
    }
}

#[test]
fn row_records_match_brute_force_in_small_and_large_classes() {
    // 19 candidates (records padded to 32 bytes), codes up to 255, five labels: the
    // first picks leave classes of hundreds of rows (counted by table), the later ones
    // classes of a few rows (scored pair by pair), 255 pairs and more per group so that
    // the byte counters are flushed.
    let n = 6000;
    let cards = [3, 256, 7, 5, 2, 4, 9, 2, 3, 6, 2, 2, 11, 3, 5, 2, 4, 8, 3];
    let data = lcg_table(n, &cards, 51);
    let y = lcg_table(n, &[5], 52);
    let cols = Columns::new(&data, n, &cards).expect("cols");
    let labels = Labels::new(&y, 5).expect("labels");
    let mut search =
        DiscernibilitySearch::with_layout(cols, &labels, Layout::Records).expect("search");
    let mut chosen: Vec<usize> = Vec::new();
    for pick in [4, 0, 2, 3, 5, 9, 1] {
        assert_gains_match_brute_force(&search, cols, &chosen, &y);
        search.add(pick).expect("add");
        chosen.push(pick);
        assert_eq!(
            search.undiscerned_pairs(),
            naive_undiscerned(cols, &chosen, &y)
        );
        assert!(search.scores_by_records());
    }
}

#[test]
fn auto_layout_scores_small_classes_by_row_records() {
    // Above COPY_MIN_ROWS with every code below 256: once the classes are small, Auto
    // scores through row records, and agrees with the indexed layout on every gain.
    let n = COPY_MIN_ROWS + 20_000;
    let cards = [16, 16, 15, 2, 200, 6, 9, 3];
    let data = lcg_table(n, &cards, 61);
    let y = lcg_table(n, &[3], 62);
    let cols = Columns::new(&data, n, &cards).expect("cols");
    let labels = Labels::new(&y, 3).expect("labels");
    let mut auto = DiscernibilitySearch::new(cols, &labels).expect("auto");
    let mut indexed =
        DiscernibilitySearch::with_layout(cols, &labels, Layout::Indexed).expect("indexed");
    let mut held = Vec::new();
    for pick in [0, 1, 5, 6, 2] {
        held.push(auto.scores_by_records());
        assert_eq!(
            auto.gains().expect("gains"),
            indexed.gains().expect("gains")
        );
        auto.add(pick).expect("add");
        indexed.add(pick).expect("add");
        assert_eq!(auto.discerned_pairs(), indexed.discerned_pairs());
    }
    // Classes average 171 rows after three picks and 19 after four.
    assert_eq!(held, [false, false, false, false, true]);
}

#[test]
fn narrow_copies_and_tiny_classes_match_brute_force() {
    // Cardinalities stored in u8, u16 and u32 copies; five labels (cells padded to
    // eight); classes that shrink to a few rows, scored a run of classes at a time.
    let n = 3000;
    let cards = [3, 1000, 7, 5, 70_000, 2, 300, 4];
    let data = lcg_table(n, &cards, 41);
    let y = lcg_table(n, &[5], 42);
    let cols = Columns::new(&data, n, &cards).expect("cols");
    let labels = Labels::new(&y, 5).expect("labels");
    for layout in [Layout::Copied, Layout::Auto, Layout::Indexed] {
        let mut search = DiscernibilitySearch::with_layout(cols, &labels, layout).expect("search");
        let mut chosen: Vec<usize> = Vec::new();
        for pick in [0, 3, 5, 7, 2, 1] {
            assert_gains_match_brute_force(&search, cols, &chosen, &y);
            search.add(pick).expect("add");
            chosen.push(pick);
        }
    }
}

#[test]
fn auto_layout_leaves_full_passes_for_the_grouped_layout() {
    let n = 20_000;
    let cards = [3, 5, 2, 4, 6, 30, 30, 30];
    let data = lcg_table(n, &cards, 31);
    let y = lcg_table(n, &[2], 32);
    let cols = Columns::new(&data, n, &cards).expect("cols");
    let labels = Labels::new(&y, 2).expect("labels");
    let mut auto = DiscernibilitySearch::new(cols, &labels).expect("auto");
    let mut indexed =
        DiscernibilitySearch::with_layout(cols, &labels, Layout::Indexed).expect("indexed");
    let mut path = Vec::new();
    while !auto.remaining().is_empty() {
        path.push(auto.in_full_pass());
        let gains = auto.gains().expect("gains");
        assert_eq!(gains, indexed.gains().expect("gains"));
        let pick = auto.remaining()[argmax_first(&gains)];
        auto.add(pick).expect("add");
        indexed.add(pick).expect("add");
        assert_eq!(auto.discerned_pairs(), indexed.discerned_pairs());
    }
    assert!(path[0] && !path[path.len() - 1], "{path:?}");
}

#[test]
fn exponential_rounds_match_a_loop_over_the_partition_kernel() {
    let n = 3000;
    let (data, cards, y) = search_table(n, 11);
    let cols = Columns::new(&data, n, &cards).expect("cols");
    let labels = Labels::new(&y, 3).expect("labels");
    let seed = Seed::from_u64(42);
    for epsilon in [1e-3, 0.05, 1e6] {
        let rule = Rule::Exponential {
            epsilon,
            seed: &seed,
        };
        let one = crate::noise::test_util::in_pool(1, || {
            select_discerning(cols, &labels, 5, rule).expect("one thread")
        });
        let two = crate::noise::test_util::in_pool(2, || {
            select_discerning(cols, &labels, 5, rule).expect("two threads")
        });
        assert_eq!(one, two);
        let mut partition = Partition::trivial(n).expect("trivial");
        let mut remaining: Vec<usize> = (0..cards.len()).collect();
        let mut current = labels.differing_pairs();
        for round in 0..5 {
            let scores = partition
                .score_candidates(cols, &labels, &remaining)
                .expect("scores");
            let gains: Vec<u128> = scores
                .iter()
                .map(|s| current - s.undiscerned_pairs)
                .collect();
            let weights = log_weights(&gains, epsilon, n);
            let pick =
                exponential_mechanism(&weights, 1, false, &seed.derive(round)).expect("draw")[0];
            let a = remaining.remove(pick);
            assert_eq!(one.order[round as usize], a);
            current = scores[pick].undiscerned_pairs;
            partition = partition.refine(cols.column(a), cards[a]).expect("refine");
        }
    }
}

#[test]
fn minimum_discerning_is_the_shortest_greedy_prefix() {
    let n = 1500;
    let (data, cards, y) = search_table(n, 12);
    let cols = Columns::new(&data, n, &cards).expect("cols");
    let labels = Labels::new(&y, 3).expect("labels");
    let greedy = select_discerning(cols, &labels, cards.len(), Rule::Greedy).expect("g");
    let all: Vec<usize> = (0..cards.len()).collect();
    let full = labels.differing_pairs() - naive_undiscerned(cols, &all, &y);
    for sigma in [0.0, 0.1, 0.5, 0.99] {
        let mda = minimum_discerning(cols, &labels, sigma).expect("mda");
        let target = (1.0 - sigma) * full as f64;
        let len = greedy
            .discerned_pairs
            .iter()
            .position(|&d| d as f64 >= target)
            .expect("reached")
            + 1;
        assert_eq!(mda.order, greedy.order[..len]);
    }
    let same = vec![1u32; n];
    let pure = Labels::new(&same, 3).expect("labels");
    assert!(
        minimum_discerning(cols, &pure, 0.1)
            .expect("mda")
            .order
            .is_empty()
    );
    let greedy = select_discerning(cols, &pure, 3, Rule::Greedy).expect("g");
    assert_eq!(greedy.order, vec![0, 1, 2]);
}

#[test]
fn selection_validation_errors() {
    let data = [0, 1, 0, 1];
    let cols = Columns::new(&data, 4, &[2]).expect("cols");
    let labels = Labels::new(&[0, 1, 1, 0], 2).expect("labels");
    let seed = Seed::from_u64(1);
    assert!(select_discerning(cols, &labels, 2, Rule::Greedy).is_err());
    for epsilon in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let rule = Rule::Exponential {
            epsilon,
            seed: &seed,
        };
        assert!(select_discerning(cols, &labels, 1, rule).is_err());
    }
    for sigma in [-0.1, 1.0, f64::NAN] {
        assert!(minimum_discerning(cols, &labels, sigma).is_err());
    }
    let short = Labels::new(&[0, 1], 2).expect("labels");
    assert!(DiscernibilitySearch::new(cols, &short).is_err());
    let rule = Rule::Exponential {
        epsilon: f64::MAX,
        seed: &seed,
    };
    assert_eq!(
        select_discerning(cols, &labels, 1, rule)
            .expect("huge")
            .order,
        vec![0]
    );
}

#[test]
fn names_parse_and_scores_become_columns() {
    assert_eq!("copied".parse::<Layout>(), Ok(Layout::Copied));
    assert_eq!("records".parse::<Layout>(), Ok(Layout::Records));
    let err = "fast".parse::<Layout>().unwrap_err().to_string();
    assert_eq!(
        err,
        "layout must be 'auto', 'full_pass', 'indexed', 'copied' or 'records', got \"fast\""
    );
    let codes = [0u32, 1, 1, 0];
    let labels = Labels::new(&codes, 2).unwrap();
    let score = Partition::trivial(4).unwrap().score(&labels).unwrap();
    let columns = ScoreColumns::new(&[score, score], &labels).unwrap();
    assert_eq!(columns.n_classes, vec![1, 1]);
    assert_eq!(columns.undiscerned_pairs, vec![8, 8]);
    assert_eq!(columns.discernibility, vec![0.0, 0.0]);
    let selection = Selection {
        order: vec![2],
        discerned_pairs: vec![6],
    };
    assert_eq!(selection.discernibility_path(4), vec![1.5]);
}

#[test]
fn class_value_label_counts_match_brute_force() {
    for (n, seed) in [(3000, 51), (1, 52), (0, 53), (200_000, 54)] {
        let (data, cards, y) = search_table(n, seed);
        let narrow: Vec<u16> = data.iter().map(|&v| (v % 40_000) as u16).collect();
        let cols = Columns::new(&data, n, &cards).expect("cols");
        let classes = Partition::from_columns(cols, &[0, 2]).expect("partition");
        let n_classes = classes.n_classes() + 1;
        let labels = Labels::new(&y, 3).expect("labels");
        let which = [5usize, 1, 6];
        let which_cards: Vec<u32> = which.iter().map(|&j| cards[j]).collect();
        let tables = class_value_label_counts(
            &narrow,
            &which,
            &which_cards,
            classes.classes(),
            n_classes,
            &labels,
        )
        .expect("tables");
        for (p, &j) in which.iter().enumerate() {
            let card = cards[j] as usize;
            let mut want = vec![0u64; n_classes * card * 3];
            for i in 0..n {
                let class = classes.classes()[i] as usize;
                let value = data[j * n + i] as usize;
                want[(class * card + value) * 3 + y[i] as usize] += 1;
            }
            assert_eq!(tables[p], want, "n {n}, column {j}");
        }
    }
    let (data, cards, y) = search_table(50, 55);
    let labels = Labels::new(&y, 3).expect("labels");
    let classes = vec![0u32; 50];
    let err = class_value_label_counts(&data, &[2], &[2], &classes, 1, &labels);
    assert!(matches!(err, Err(Error::InvalidData(m)) if m.contains("codes column 2")));
    let err = class_value_label_counts(&data, &[2], &[cards[2]], &classes, 0, &labels);
    assert!(matches!(err, Err(Error::InvalidData(m)) if m.contains("n_classes")));
    let err = class_value_label_counts(&data, &[9], &[5], &classes, 1, &labels);
    assert!(matches!(err, Err(Error::InvalidData(m)) if m.contains("column 9")));
}

#[test]
fn split_rows_routes_every_row_in_order() {
    // Rows over three tiles, the last one partial.
    let n = 2 * SPLIT_TILE + 5000;
    let (data, _, y) = search_table(n, 61);
    let codes: Vec<u8> = data.iter().map(|&v| (v % 256) as u8).collect();
    let n_classes = 50usize;
    let classes: Vec<u32> = (0..n)
        .map(|i| {
            if i % 7 == 3 {
                DROPPED
            } else {
                (i * 31 % n_classes) as u32
            }
        })
        .collect();
    // Classes 0..50 to parts 0, 2, 3 (part 1 gets none), numbered 100 + class there.
    let destination: Vec<u32> = (0..n_classes as u32)
        .map(|c| [0, 2, 3][c as usize % 3])
        .collect();
    let local_ids: Vec<u32> = (0..n_classes as u32).map(|c| 100 + c).collect();
    let which = [4usize, 0, 6];
    let pieces =
        split_rows(&codes, &which, &y, &classes, &destination, &local_ids, 4).expect("split");
    assert_eq!(pieces.len(), 4);
    for (part, piece) in pieces.iter().enumerate() {
        let rows: Vec<usize> = (0..n)
            .filter(|&i| classes[i] != DROPPED && destination[classes[i] as usize] as usize == part)
            .collect();
        let codes = &codes;
        let want: Vec<u8> = which
            .iter()
            .flat_map(|&j| rows.iter().map(move |&i| codes[j * n + i]))
            .collect();
        assert_eq!(piece.codes, want, "part {part}");
        let labels: Vec<u32> = rows.iter().map(|&i| y[i]).collect();
        assert_eq!(piece.labels, labels);
        let local: Vec<u32> = rows.iter().map(|&i| 100 + classes[i]).collect();
        assert_eq!(piece.classes, local);
    }
    assert!(pieces[1].codes.is_empty());
    let bad = split_rows(
        &codes,
        &which,
        &y,
        &classes,
        &destination[..10],
        &local_ids[..10],
        4,
    );
    assert!(matches!(bad, Err(Error::InvalidData(m)) if m.contains("no destination")));
    let bad = split_rows(&codes, &which, &y, &classes, &destination, &local_ids, 3);
    assert!(matches!(bad, Err(Error::InvalidData(m)) if m.contains("n_parts")));
}

#[test]
fn refined_classes_match_a_map_of_the_groups_dense_and_sparse_on_any_thread_count() {
    let n = 200_000;
    let (data, cards, _) = search_table(n, 67);
    let codes: Vec<u16> = data.iter().map(|&v| v as u16).collect();
    let column = 5;
    let card = cards[column];
    // Many classes make the keys too many for a dense table; few keep it dense.
    for n_classes in [40usize, 3_000_000] {
        let classes: Vec<u32> = (0..n)
            .map(|i| ((i as u64 * 2_654_435_761) % n_classes as u64) as u32)
            .collect();
        // Keys of a row in three, less those divisible by 5: some rows are dropped.
        let mut groups: Vec<u64> = (0..n)
            .step_by(3)
            .map(|i| u64::from(classes[i]) * u64::from(card) + u64::from(codes[column * n + i]))
            .filter(|key| key % 5 != 0)
            .collect();
        groups.sort_unstable();
        groups.dedup();
        let new_ids: Vec<u32> = (0..groups.len() as u32).map(|g| g * 7 % 1000).collect();
        let id_of: HashMap<u64, u32> = groups.iter().copied().zip(new_ids.clone()).collect();
        let want: Vec<u32> = (0..n)
            .map(|i| {
                let key =
                    u64::from(classes[i]) * u64::from(card) + u64::from(codes[column * n + i]);
                id_of.get(&key).copied().unwrap_or(DROPPED)
            })
            .collect();
        assert!(want.contains(&DROPPED), "some rows are dropped");
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            let got = pool
                .install(|| {
                    refined_classes(&codes, column, card, &classes, n_classes, &groups, &new_ids)
                })
                .expect("refined");
            assert_eq!(got, want, "{n_classes} classes, {threads} threads");
        }
    }
}

#[test]
fn refined_classes_name_what_is_wrong() {
    let n = 100;
    let (data, cards, _) = search_table(n, 71);
    let classes = vec![1u32; n];
    let refine = |column: usize, card: u32, n_classes: usize, groups: &[u64], ids: &[u32]| {
        refined_classes(&data, column, card, &classes, n_classes, groups, ids)
    };
    let message = |result: Result<Vec<u32>>| match result {
        Err(Error::InvalidData(m)) => m,
        other => panic!("expected InvalidData, got {other:?}"),
    };
    assert!(message(refine(99, 5, 2, &[], &[])).contains("column 99"));
    assert!(message(refine(2, 1, 2, &[], &[])).contains("codes column 2"));
    assert!(message(refine(2, cards[2], 1, &[], &[])).contains("classes[0] = 1"));
    assert!(message(refine(2, cards[2], 2, &[3, 3], &[0, 1])).contains("strictly increasing"));
    let beyond = 2 * u64::from(cards[2]);
    assert!(message(refine(2, cards[2], 2, &[beyond], &[0])).contains("beyond"));
    assert!(message(refine(2, cards[2], 2, &[1], &[DROPPED])).contains("dropped"));
    assert!(message(refine(2, cards[2], 2, &[1], &[])).contains("new_ids"));
}
