//! Bindings of `privtab_core::partition`: the partition-refinement kernel and the
//! discernibility selections built on it.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use privtab_core::partition::{self, Labels, Rule, ScoreColumns, Selection};
use privtab_core::rng::Seed;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::columns::Table;
use crate::errors::{contiguous, mapped, run};

/// (n_classes, undiscerned_pairs, entropy, joint_entropy, discernibility) as arrays.
type Scores<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);
/// A selection: the order (int64) and F of every prefix.
type OrderPath<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>);

fn score_arrays(py: Python<'_>, s: ScoreColumns) -> Scores<'_> {
    (
        s.n_classes.into_pyarray(py),
        s.undiscerned_pairs.into_pyarray(py),
        s.entropy.into_pyarray(py),
        s.joint_entropy.into_pyarray(py),
        s.discernibility.into_pyarray(py),
    )
}

fn indices(values: &[usize]) -> Vec<i64> {
    // Column indices are below the number of columns of a numpy array, hence below 2^63.
    values.iter().map(|&j| j as i64).collect()
}

fn selection_arrays(py: Python<'_>, selection: Selection, n_rows: usize) -> OrderPath<'_> {
    let path = selection.discernibility_path(n_rows);
    (
        indices(&selection.order).into_pyarray(py),
        path.into_pyarray(py),
    )
}

/// The rows' classes under a set of attributes; refine it one attribute at a time.
#[pyclass(module = "privtab._core", frozen)]
pub(crate) struct Partition {
    inner: partition::Partition,
}

#[pymethods]
impl Partition {
    /// All `n_rows` rows in one class.
    #[new]
    fn new(n_rows: usize) -> PyResult<Self> {
        let inner = mapped(partition::Partition::trivial(n_rows))?;
        Ok(Partition { inner })
    }

    /// The partition of a (d, n) code table by the columns `subset`, in that order.
    #[staticmethod]
    #[pyo3(signature = (columns, cardinalities, subset, n_threads=None))]
    fn from_columns(
        columns: PyReadonlyArray2<'_, u32>,
        cardinalities: PyReadonlyArray1<'_, u32>,
        subset: Vec<usize>,
        n_threads: Option<usize>,
    ) -> PyResult<Self> {
        let table = Table::new(&columns, &cardinalities)?;
        let inner = run(columns.py(), n_threads, || {
            partition::Partition::from_columns(table.columns()?, &subset)
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
        column: PyReadonlyArray1<'_, u32>,
        cardinality: u32,
        n_threads: Option<usize>,
    ) -> PyResult<Self> {
        let codes = contiguous(&column, "column")?;
        let inner = run(column.py(), n_threads, || {
            self.inner.refine(codes, cardinality)
        })?;
        Ok(Partition { inner })
    }

    /// (n_classes, undiscerned_pairs, entropy, joint_entropy, discernibility) of this
    /// partition against `labels`.
    fn score(
        &self,
        labels: PyReadonlyArray1<'_, u32>,
        n_labels: u32,
    ) -> PyResult<(u64, u64, f64, f64, f64)> {
        let codes = contiguous(&labels, "labels")?;
        let s = run(labels.py(), None, || {
            let labels = Labels::new(codes, n_labels)?;
            ScoreColumns::new(&[self.inner.score(&labels)?], &labels)
        })?;
        Ok((
            s.n_classes[0],
            s.undiscerned_pairs[0],
            s.entropy[0],
            s.joint_entropy[0],
            s.discernibility[0],
        ))
    }

    /// Scores of every candidate column on this partition refined by it.
    #[pyo3(signature = (columns, cardinalities, labels, n_labels, candidates, n_threads=None))]
    fn score_candidates<'py>(
        &self,
        columns: PyReadonlyArray2<'py, u32>,
        cardinalities: PyReadonlyArray1<'py, u32>,
        labels: PyReadonlyArray1<'py, u32>,
        n_labels: u32,
        candidates: Vec<usize>,
        n_threads: Option<usize>,
    ) -> PyResult<Scores<'py>> {
        let table = Table::labelled(&columns, &cardinalities, &labels, n_labels)?;
        let scores = run(columns.py(), n_threads, || {
            let (cols, labels) = table.parts()?;
            ScoreColumns::new(
                &self.inner.score_candidates(cols, &labels, &candidates)?,
                &labels,
            )
        })?;
        Ok(score_arrays(columns.py(), scores))
    }

    fn __repr__(&self) -> String {
        let (n_rows, n_classes) = (self.inner.n_rows(), self.inner.n_classes());
        format!("Partition(n_rows={n_rows}, n_classes={n_classes})")
    }
}

/// Scores of every candidate column on the partition of `selected` ∪ {candidate}.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, selected, candidates, n_threads=None))]
pub(crate) fn score_candidates<'py>(
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    labels: PyReadonlyArray1<'py, u32>,
    n_labels: u32,
    selected: Vec<usize>,
    candidates: Vec<usize>,
    n_threads: Option<usize>,
) -> PyResult<Scores<'py>> {
    let table = Table::labelled(&columns, &cardinalities, &labels, n_labels)?;
    let scores = run(columns.py(), n_threads, || {
        let (cols, labels) = table.parts()?;
        let base = partition::Partition::from_columns(cols, &selected)?;
        ScoreColumns::new(&base.score_candidates(cols, &labels, &candidates)?, &labels)
    })?;
    Ok(score_arrays(columns.py(), scores))
}

/// F(S) of the columns `features` against `labels`.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, features, n_threads=None))]
pub(crate) fn discernibility(
    columns: PyReadonlyArray2<'_, u32>,
    cardinalities: PyReadonlyArray1<'_, u32>,
    labels: PyReadonlyArray1<'_, u32>,
    n_labels: u32,
    features: Vec<usize>,
    n_threads: Option<usize>,
) -> PyResult<f64> {
    let table = Table::labelled(&columns, &cardinalities, &labels, n_labels)?;
    run(columns.py(), n_threads, || {
        let (cols, labels) = table.parts()?;
        let partition = partition::Partition::from_columns(cols, &features)?;
        Ok(partition.score(&labels)?.discernibility(&labels))
    })
}

/// H(S) and H(Y, S) for every size-`k` subset S of the columns `among`.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, among, k, n_threads=None))]
#[allow(clippy::type_complexity)]
pub(crate) fn subset_entropies<'py>(
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
    let py = columns.py();
    let table = Table::labelled(&columns, &cardinalities, &labels, n_labels)?;
    let walk = run(py, n_threads, || {
        let (cols, labels) = table.parts()?;
        partition::subset_entropies(cols, &among, &labels, k)
    })?;
    let subsets = Array2::from_shape_vec((walk.entropy.len(), k), indices(&walk.subsets))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((
        subsets.into_pyarray(py),
        walk.entropy.into_pyarray(py),
        walk.joint_entropy.into_pyarray(py),
    ))
}

/// The non-private greedy order of `k` columns by discernibility gain, and F of each
/// prefix.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, k, n_threads=None, layout="auto"))]
pub(crate) fn greedy_discernibility<'py>(
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    labels: PyReadonlyArray1<'py, u32>,
    n_labels: u32,
    k: usize,
    n_threads: Option<usize>,
    layout: &str,
) -> PyResult<OrderPath<'py>> {
    let layout = mapped(layout.parse())?;
    let table = Table::labelled(&columns, &cardinalities, &labels, n_labels)?;
    let selection = run(columns.py(), n_threads, || {
        let (cols, labels) = table.parts()?;
        partition::select_discerning_in(cols, &labels, k, Rule::Greedy, layout)
    })?;
    Ok(selection_arrays(columns.py(), selection, table.n_rows()))
}

/// MDA(sigma): the shortest greedy prefix with F(S) >= (1 - sigma) F(A), and F of each
/// prefix.
#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, sigma, n_threads=None, layout="auto"))]
pub(crate) fn minimum_discerning_attributes<'py>(
    columns: PyReadonlyArray2<'py, u32>,
    cardinalities: PyReadonlyArray1<'py, u32>,
    labels: PyReadonlyArray1<'py, u32>,
    n_labels: u32,
    sigma: f64,
    n_threads: Option<usize>,
    layout: &str,
) -> PyResult<OrderPath<'py>> {
    let layout = mapped(layout.parse())?;
    let table = Table::labelled(&columns, &cardinalities, &labels, n_labels)?;
    let selection = run(columns.py(), n_threads, || {
        let (cols, labels) = table.parts()?;
        partition::minimum_discerning_in(cols, &labels, sigma, layout)
    })?;
    Ok(selection_arrays(columns.py(), selection, table.n_rows()))
}

/// PrivateKD: `k` rounds, each choosing a column with probability
/// ∝ exp(epsilon_step · (F(S ∪ {a}) − F(S))); returns the order (int64).
/// The attribute PrivateKD's round `round` picks (a position in `gains`), given every
/// remaining candidate's gain n·(F(S ∪ {a}) − F(S)).
#[pyfunction]
#[pyo3(signature = (gains, epsilon_step, n_rows, round, seed=None))]
pub(crate) fn private_kd_round(
    gains: PyReadonlyArray1<'_, u64>,
    epsilon_step: f64,
    n_rows: usize,
    round: u64,
    seed: Option<u64>,
) -> PyResult<usize> {
    let wide: Vec<u128> = contiguous(&gains, "gains")?
        .iter()
        .map(|&g| u128::from(g))
        .collect();
    let seed = Seed::new(seed);
    run(gains.py(), None, || {
        partition::exponential_round(&wide, epsilon_step, n_rows, &seed, round)
    })
}

#[pyfunction]
#[pyo3(signature = (columns, cardinalities, labels, n_labels, k, epsilon_step, seed=None, n_threads=None, layout="auto"))]
pub(crate) fn private_kd<'py>(
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
    let layout = mapped(layout.parse())?;
    let table = Table::labelled(&columns, &cardinalities, &labels, n_labels)?;
    let seed = Seed::new(seed);
    let rule = Rule::Exponential {
        epsilon: epsilon_step,
        seed: &seed,
    };
    let selection = run(columns.py(), n_threads, || {
        let (cols, labels) = table.parts()?;
        partition::select_discerning_in(cols, &labels, k, rule, layout)
    })?;
    Ok(indices(&selection.order).into_pyarray(columns.py()))
}
