//! Interruption of long kernels. The flag is process-wide, so these checks live in their
//! own test binary (one test), away from the unit tests that run in parallel.

use std::time::{Duration, Instant};

use privtab_core::binary::BinaryCsr;
use privtab_core::columns::{self, Columns};
use privtab_core::microagg::{self, Mechanism};
use privtab_core::mining::{self, Limits, Rows};
use privtab_core::partition::{self, Labels, Rule};
use privtab_core::resources::{
    check_interrupt, interrupted, interruptible, process_pool, request_interrupt, run_watched,
};
use privtab_core::rng::Seed;
use privtab_core::{Error, Result, anonymity, clustering, noise, pairwise};

/// `kernel` run as an interruptible call that was asked to stop before it began.
fn stopped<T: std::fmt::Debug>(kernel: impl FnOnce() -> Result<T>) -> Result<T> {
    interruptible(|| {
        assert!(request_interrupt());
        kernel()
    })
}

/// A dense random binary matrix in CSR form.
fn dense_csr(n_rows: usize, n_features: usize) -> (Vec<i64>, Vec<u32>) {
    let (mut indptr, mut indices, mut state) = (vec![0i64], Vec::new(), 7u64);
    for _ in 0..n_rows {
        for f in 0..n_features as u32 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            if state >> 62 != 0 {
                indices.push(f);
            }
        }
        indptr.push(indices.len() as i64);
    }
    (indptr, indices)
}

#[test]
fn every_long_kernel_stops_on_request_and_the_flag_clears() {
    assert!(!request_interrupt(), "no call is running");
    let seed = Seed::from_u64(1);
    let (n, cards) = (2_000, vec![3u32; 8]);
    let data: Vec<u32> = (0..n * cards.len())
        .map(|i| (i * 7 % 11 % 3) as u32)
        .collect();
    let label_codes: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let cols = Columns::new(&data, n, &cards).unwrap();
    let values: Vec<f64> = (0..100_000).map(|i| f64::from(i % 997) / 997.0).collect();
    let labels = Labels::new(&label_codes, 2).unwrap();
    let (indptr, indices) = dense_csr(300, 40);
    let rows = Rows::new(&indptr, &indices, 40).unwrap();
    let matrix = BinaryCsr::new(&indptr, &indices, 40).unwrap();

    let results = [
        stopped(|| noise::laplace_samples(100_000, 1.0, &seed)).map(|_| ()),
        stopped(|| noise::add_discrete_laplace(&[1; 100_000], 1.0, 1.0, &seed)).map(|_| ()),
        stopped(|| mining::maximal_itemsets(rows, 2, Limits::default())).map(|_| ()),
        stopped(|| mining::maximal_kac_sets(rows, 2, Limits::default())).map(|_| ()),
        stopped(|| partition::select_discerning(cols, &labels, 3, Rule::Greedy)).map(|_| ()),
        stopped(|| partition::subset_entropies(cols, &[0, 1, 2, 3], &labels, 2)).map(|_| ()),
        stopped(|| pairwise::pairwise_counts(cols, true)).map(|_| ()),
        stopped(|| anonymity::containment_anonymity(matrix, &[0, 1, 2])).map(|_| ()),
        stopped(|| clustering::randomization_flipping(&indptr, &indices, 40, 3, &seed)).map(|_| ()),
        stopped(|| columns::code_columns(&data, n, cards.len(), true)).map(|_| ()),
        stopped(|| microagg::microaggregate(&values, 3, Mechanism::Dp, (0.0, 1.0))).map(|_| ()),
    ];
    for (i, result) in results.into_iter().enumerate() {
        assert_eq!(result, Err(Error::Interrupted), "kernel {i}");
    }
    assert!(!interrupted(), "the flag clears when the last call returns");
    assert!(interruptible(|| noise::laplace_samples(10, 1.0, &seed)).is_ok());

    // A request from another thread stops a search that would otherwise run for long.
    let (indptr, indices) = dense_csr(2_000, 120);
    let rows = Rows::new(&indptr, &indices, 120).unwrap();
    let start = Instant::now();
    let result = std::thread::scope(|scope| {
        let search =
            scope.spawn(|| interruptible(|| mining::maximal_itemsets(rows, 1, Limits::default())));
        while !request_interrupt() {
            std::thread::yield_now();
        }
        search.join().unwrap()
    });
    assert_eq!(result.map(|_| ()), Err(Error::Interrupted));
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert!(!interrupted());

    // A watched kernel: a failing watch stops it and wins, a quiet one leaves its result.
    let period = Duration::from_millis(1);
    let spin = || {
        while !interrupted() {
            std::thread::yield_now();
        }
        check_interrupt().map(|()| 0)
    };
    let mut watches = 0;
    let watched = run_watched(Some(2), period, spin, || {
        watches += 1;
        Err("stop")
    });
    assert_eq!((watched, watches), (Err("stop"), 1));
    assert!(!interrupted());

    // A stop asked for before the job has started (every thread of the pool is busy)
    // finds no call to stop: it is repeated until it lands.
    let pool = process_pool().unwrap();
    for _ in 0..pool.current_num_threads() {
        pool.spawn(|| std::thread::sleep(Duration::from_millis(200)));
    }
    let start = Instant::now();
    let bounded_spin = || {
        while !interrupted() && start.elapsed() < Duration::from_secs(5) {
            std::thread::yield_now();
        }
        check_interrupt().map(|()| 0)
    };
    let watched = run_watched(Some(2), period, bounded_spin, || Err("stop"));
    assert_eq!(watched, Err("stop"));
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "the request was lost: {:?}",
        start.elapsed()
    );
    assert!(!interrupted());

    let quiet = || Ok::<(), ()>(());
    assert_eq!(run_watched(None, period, || Ok(3), quiet), Ok(Ok(3)));
    let no_threads = run_watched(Some(0), period, || Ok(3), quiet);
    assert!(matches!(
        no_threads,
        Ok(Err(Error::InvalidParameter { .. }))
    ));
}
