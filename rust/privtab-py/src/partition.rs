//! Bindings of `privtab_core::partition`: the partition-refinement kernel.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use privtab_core::Error;
use privtab_core::columns::Columns;
use privtab_core::partition::{self, Labels, Layout, Rule, Score, Selection};
use privtab_core::resources::with_threads;
use privtab_core::rng::Seed;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::encode::columns_view;
use crate::errors::{contiguous, detached};

/// Scores as numpy arrays: (n_classes, undiscerned_pairs, entropy, joint_entropy,
/// discernibility).
type Scores<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

struct ScoreColumns {
    n_classes: Vec<u64>,
    undiscerned: Vec<u64>,
    entropy: Vec<f64>,
    joint_entropy: Vec<f64>,
    discernibility: Vec<f64>,
}

fn collect_scores(scores: &[Score], labels: &Labels<'_>) -> privtab_core::Result<ScoreColumns> {
    let mut out = ScoreColumns {
        n_classes: Vec::with_capacity(scores.len()),
        undiscerned: Vec::with_capacity(scores.len()),
        entropy: Vec::with_capacity(scores.len()),
        joint_entropy: Vec::with_capacity(scores.len()),
        discernibility: Vec::with_capacity(scores.len()),
    };
    for score in scores {
        // Below 2^64 whenever n < 2^32, which the partition guarantees except at n = 2^32 − 1
        // with pathological labels; checked rather than truncated.
        let pairs = u64::try_from(score.undiscerned_pairs).map_err(|_| {
            Error::OutputTooLarge(format!(
                "{} undiscerned pairs do not fit in 64 bits",
                score.undiscerned_pairs
            ))
        })?;
        out.n_classes.push(score.n_classes);
        out.undiscerned.push(pairs);
        out.entropy.push(score.entropy);
        out.joint_entropy.push(score.joint_entropy);
        out.discernibility.push(score.discernibility(labels));
    }
    Ok(out)
}

fn into_arrays(py: Python<'_>, s: ScoreColumns) -> Scores<'_> {
    (
        s.n_classes.into_pyarray(py),
        s.undiscerned.into_pyarray(py),
        s.entropy.into_pyarray(py),
        s.joint_entropy.into_pyarray(py),
        s.discernibility.into_pyarray(py),
    )
}

/// The rows' classes under a set of attributes; refine it one attribute at a time.
#[pyclass(module = "privtab._core", frozen)]
struct Partition {
    inner: partition::Partition,
}

#[pymethods]
impl Partition {
    /// All `n_rows` rows in one class.
    #[new]
    fn new(n_rows: usize) -> PyResult<Self> {
        let inner = partition::Partition::trivial(n_rows).map_err(crate::errors::CoreError)?;
        Ok(Partition { inner })
    }

    /// The partition of a (d, n) code table by the columns `subset`, in that order.
    #[staticmethod]
    #[pyo3(signature = (columns, cardinalities, subset, n_threads=None))]
    fn from_columns(
        py: Python<'_>,
        columns: PyReadonlyArray2<'_, u32>,
        cardinalities: PyReadonlyArray1<'_, u32>,
        subset: Vec<usize>,
        n_threads: Option<usize>,
    ) -> PyResult<Self> {
        let (data, n_rows, cards) = columns_view(&columns, &cardinalities)?;
        let inner = detached(py, || {
            with_threads(n_threads, || {
                partition::Partition::from_columns(Columns::new(data, n_rows, cards)?, &subset)
            })
        })?;
        Ok(Partition { inner })
    }

    #[getter]
    fn n_rows(&self) -> usize {
        self.inner.n_rows()
    }

    #[getter]
    fn n_classes(&self) -> usize {
        self.inner.n_classes()
    }

    /// Class id of each row (uint32).
    fn classes<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        self.inner.classes().to_vec().into_pyarray(py)
    }

    /// Number of rows in each class (uint64).
    fn sizes<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.inner.sizes().to_vec().into_pyarray(py)
    }

    /// H(S) in bits.
    fn entropy(&self) -> f64 {
        self.inner.entropy()
    }

    /// The partition refined by one column of codes.
    #[pyo3(signature = (column, cardinality, n_threads=None))]
    fn refine(
        &self,
        py: Python<'_>,
        column: PyReadonlyArray1<'_, u32>,
        cardinality: u32,
        n_threads: Option<usize>,
    ) -> PyResult<Self> {
        let codes = contiguous(&column, "column")?;
        let inner = detached(py, || {
            with_threads(n_threads, || self.inner.refine(codes, cardinality))
        })?;
        Ok(Partition { inner })
    }

    /// (n_classes, undiscerned_pairs, entropy, joint_entropy, discernibility) of this
    /// partition against `labels`.
    fn score(
        &self,
        py: Python<'_>,
        labels: PyReadonlyArray1<'_, u32>,
        n_labels: u32,
    ) -> PyResult<(u64, u64, f64, f64, f64)> {
        let codes = contiguous(&labels, "labels")?;
        let s = detached(py, || {
            let labels = Labels::new(codes, n_labels)?;
            let score = self.inner.score(&labels)?;
            collect_scores(&[score], &labels)
        })?;
        Ok((
            s.n_classes[0],
            s.undiscerned[0],
            s.entropy[0],
            s.joint_entropy[0],
            s.discernibility[0],
        ))
    }

    /// Scores of every candidate column on this partition refined by it.
    #[pyo3(signature = (columns, cardinalities, labels, n_labels, candidates, n_threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn score_candidates<'py>(
        &self,
        py: Python<'py>,
        columns: PyReadonlyArray2<'py, u32>,
        cardinalities: PyReadonlyArray1<'py, u32>,
        labels: PyReadonlyArray1<'py, u32>,
        n_labels: u32,
        candidates: Vec<usize>,
        n_threads: Option<usize>,
    ) -> PyResult<Scores<'py>> {
        let (data, n_rows, cards) = columns_view(&columns, &cardinalities)?;
        let codes = contiguous(&labels, "labels")?;
        let s = detached(py, || {
            with_threads(n_threads, || {
                let cols = Columns::new(data, n_rows, cards)?;
                let labels = Labels::new(codes, n_labels)?;
                let scores = self.inner.score_candidates(cols, &labels, &candidates)?;
                collect_scores(&scores, &labels)
            })
        })?;
        Ok(into_arrays(py, s))
    }

    fn __repr__(&self) -> String {
        format!(
            "Partition(n_rows={}, n_classes={})",
            self.inner.n_rows(),
            self.inner.n_classes()
        )
    }
}

/// Scores of every candidate column on the partition of `selected` ∪ {candidate}.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, selected, candidates, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn score_candidates<'py>(
    py: Python<'py>,
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    labels: PyReadonlyArray1<'py, u32>,
    n_labels: u32,
    selected: Vec<usize>,
    candidates: Vec<usize>,
    n_threads: Option<usize>,
) -> PyResult<Scores<'py>> {
    let (data, n_rows, cards) = columns_view(&columns, &cardinalities)?;
    let codes = contiguous(&labels, "labels")?;
    let s = detached(py, || {
        with_threads(n_threads, || {
            let cols = Columns::new(data, n_rows, cards)?;
            let labels = Labels::new(codes, n_labels)?;
            let base = partition::Partition::from_columns(cols, &selected)?;
            let scores = base.score_candidates(cols, &labels, &candidates)?;
            collect_scores(&scores, &labels)
        })
    })?;
    Ok(into_arrays(py, s))
}

/// F(S) of the columns `features` against `labels`.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, features, n_threads=None))]
fn discernibility(
    py: Python<'_>,
    columns: PyReadonlyArray2<'_, u32>,
    cardinalities: PyReadonlyArray1<'_, u32>,
    labels: PyReadonlyArray1<'_, u32>,
    n_labels: u32,
    features: Vec<usize>,
    n_threads: Option<usize>,
) -> PyResult<f64> {
    let (data, n_rows, cards) = columns_view(&columns, &cardinalities)?;
    let codes = contiguous(&labels, "labels")?;
    detached(py, || {
        with_threads(n_threads, || {
            let cols = Columns::new(data, n_rows, cards)?;
            let labels = Labels::new(codes, n_labels)?;
            let partition = partition::Partition::from_columns(cols, &features)?;
            Ok(partition.score(&labels)?.discernibility(&labels))
        })
    })
}

/// H(S) and H(Y, S) for every size-`k` subset S of the columns `among`.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, among, k, n_threads=None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn subset_entropies<'py>(
    py: Python<'py>,
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    labels: PyReadonlyArray1<'py, u32>,
    n_labels: u32,
    among: Vec<usize>,
    k: usize,
    n_threads: Option<usize>,
) -> PyResult<(
    Bound<'py, PyArray2<i64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
)> {
    let (data, n_rows, cards) = columns_view(&columns, &cardinalities)?;
    let codes = contiguous(&labels, "labels")?;
    let walk = detached(py, || {
        with_threads(n_threads, || {
            let cols = Columns::new(data, n_rows, cards)?;
            let labels = Labels::new(codes, n_labels)?;
            partition::subset_entropies(cols, &among, &labels, k)
        })
    })?;
    let subsets: Vec<i64> = walk.subsets.iter().map(|&j| j as i64).collect();
    let shape = (walk.entropy.len(), k);
    let subsets =
        Array2::from_shape_vec(shape, subsets).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((
        subsets.into_pyarray(py),
        walk.entropy.into_pyarray(py),
        walk.joint_entropy.into_pyarray(py),
    ))
}

/// A selection as numpy arrays: (order as int64, F of every prefix).
fn selection_arrays(
    py: Python<'_>,
    selection: Selection,
    n_rows: usize,
) -> (Bound<'_, PyArray1<i64>>, Bound<'_, PyArray1<f64>>) {
    let n = n_rows.max(1) as f64;
    let order: Vec<i64> = selection.order.iter().map(|&j| j as i64).collect();
    let path: Vec<f64> = selection
        .discerned_pairs
        .iter()
        .map(|&pairs| pairs as f64 / n)
        .collect();
    (order.into_pyarray(py), path.into_pyarray(py))
}

/// The search layout named `layout` ("auto", "full_pass", "indexed" or "copied").
fn parse_layout(layout: &str) -> PyResult<Layout> {
    match layout {
        "auto" => Ok(Layout::Auto),
        "full_pass" => Ok(Layout::FullPass),
        "indexed" => Ok(Layout::Indexed),
        "copied" => Ok(Layout::Copied),
        other => Err(PyValueError::new_err(format!(
            "layout must be 'auto', 'indexed' or 'copied', got {other:?}"
        ))),
    }
}

/// The non-private greedy order of `k` columns by discernibility gain, and F of each
/// prefix.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, k, n_threads=None, layout="auto"))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn greedy_discernibility<'py>(
    py: Python<'py>,
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    labels: PyReadonlyArray1<'py, u32>,
    n_labels: u32,
    k: usize,
    n_threads: Option<usize>,
    layout: &str,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>)> {
    let layout = parse_layout(layout)?;
    let (data, n_rows, cards) = columns_view(&columns, &cardinalities)?;
    let codes = contiguous(&labels, "labels")?;
    let selection = detached(py, || {
        with_threads(n_threads, || {
            let cols = Columns::new(data, n_rows, cards)?;
            let labels = Labels::new(codes, n_labels)?;
            partition::select_discerning_in(cols, &labels, k, Rule::Greedy, layout)
        })
    })?;
    Ok(selection_arrays(py, selection, n_rows))
}

/// MDA(sigma): the shortest greedy prefix with F(S) >= (1 - sigma) F(A), and F of each
/// prefix.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, sigma, n_threads=None, layout="auto"))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn minimum_discerning_attributes<'py>(
    py: Python<'py>,
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    labels: PyReadonlyArray1<'py, u32>,
    n_labels: u32,
    sigma: f64,
    n_threads: Option<usize>,
    layout: &str,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>)> {
    let layout = parse_layout(layout)?;
    let (data, n_rows, cards) = columns_view(&columns, &cardinalities)?;
    let codes = contiguous(&labels, "labels")?;
    let selection = detached(py, || {
        with_threads(n_threads, || {
            let cols = Columns::new(data, n_rows, cards)?;
            let labels = Labels::new(codes, n_labels)?;
            partition::minimum_discerning_in(cols, &labels, sigma, layout)
        })
    })?;
    Ok(selection_arrays(py, selection, n_rows))
}

/// PrivateKD: `k` rounds, each choosing a column with probability
/// ∝ exp(epsilon_step · (F(S ∪ {a}) − F(S))); returns the order (int64).
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, k, epsilon_step, seed=None, n_threads=None, layout="auto"))]
#[allow(clippy::too_many_arguments)]
fn private_kd<'py>(
    py: Python<'py>,
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    labels: PyReadonlyArray1<'py, u32>,
    n_labels: u32,
    k: usize,
    epsilon_step: f64,
    seed: Option<u64>,
    n_threads: Option<usize>,
    layout: &str,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let layout = parse_layout(layout)?;
    let (data, n_rows, cards) = columns_view(&columns, &cardinalities)?;
    let codes = contiguous(&labels, "labels")?;
    let selection = detached(py, || {
        with_threads(n_threads, || {
            let cols = Columns::new(data, n_rows, cards)?;
            let labels = Labels::new(codes, n_labels)?;
            let seed = Seed::new(seed);
            let rule = Rule::Exponential {
                epsilon: epsilon_step,
                seed: &seed,
            };
            partition::select_discerning_in(cols, &labels, k, rule, layout)
        })
    })?;
    let order: Vec<i64> = selection.order.iter().map(|&j| j as i64).collect();
    Ok(order.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Partition>()?;
    m.add_function(wrap_pyfunction!(score_candidates, m)?)?;
    m.add_function(wrap_pyfunction!(discernibility, m)?)?;
    m.add_function(wrap_pyfunction!(subset_entropies, m)?)?;
    m.add_function(wrap_pyfunction!(greedy_discernibility, m)?)?;
    m.add_function(wrap_pyfunction!(minimum_discerning_attributes, m)?)?;
    m.add_function(wrap_pyfunction!(private_kd, m)?)?;
    Ok(())
}
