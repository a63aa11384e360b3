//! Bindings of `privtab_core::partition`: the partition-refinement kernel and the
//! discernibility selections built on it.

use numpy::{IntoPyArray, PyArray1};
use privtab_core::partition::{
    self, Labels, RowGroups, Rule, ScoreColumns, Selection, SubsetEntropies,
};

use crate::args::{run_on_unsigned_columns, table_kernels};
use crate::prelude::*;
use pyo3::exceptions::PyValueError;

/// A selection as `(order, F of every prefix)`.
fn order_path(selection: Selection, n_rows: usize) -> (Vec<usize>, Vec<f64>) {
    let path = selection.discernibility_path(n_rows);
    (selection.order, path)
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
    fn score_candidates(
        &self,
        columns: PyReadonlyArray2<'_, u32>,
        cardinalities: PyReadonlyArray1<'_, u32>,
        labels: PyReadonlyArray1<'_, u32>,
        n_labels: u32,
        candidates: Vec<usize>,
        n_threads: Option<usize>,
    ) -> PyResult<Numpy<ScoreColumns>> {
        let table = Table::new(&columns, &cardinalities)?.with_labels(&labels, n_labels)?;
        let scores = run(columns.py(), n_threads, || {
            let (cols, labels) = (table.columns()?, table.labels()?);
            self.inner.score_columns(cols, &labels, &candidates)
        });
        scores.map(Numpy)
    }

    fn __repr__(&self) -> String {
        let (n_rows, n_classes) = (self.inner.n_rows(), self.inner.n_classes());
        format!("Partition(n_rows={n_rows}, n_classes={n_classes})")
    }
}

table_kernels! {
    /// Scores of every candidate column on the partition of `selected` ∪ {candidate}.
    fn score_candidates(selected: Vec<usize>, candidates: Vec<usize>) -> ScoreColumns =
        |cols, labels| {
            let base = partition::Partition::from_columns(cols, &selected)?;
            base.score_columns(cols, labels, &candidates)
        };

    /// F(S) of the columns `features` against `labels`.
    fn discernibility(features: Vec<usize>) -> f64 =
        |cols, labels| partition::discernibility(cols, labels, &features);

    /// H(S) and H(Y, S) for every size-`k` subset S of the columns `among`: the subsets as
    /// a (count, k) int64 array and the two entropies.
    fn subset_entropies(among: Vec<usize>, k: usize) -> SubsetEntropies =
        |cols, labels| partition::subset_entropies(cols, &among, labels, k);

    /// The non-private greedy order of `k` columns by discernibility gain, and F of each
    /// prefix.
    fn greedy_discernibility(k: usize; layout: &str = "auto") -> (Vec<usize>, Vec<f64>) =
        |cols, labels| {
            let layout = layout.parse()?;
            let selection = partition::select_discerning_in(cols, labels, k, Rule::Greedy, layout);
            selection.map(|selection| order_path(selection, cols.n_rows()))
        };

    /// MDA(sigma): the shortest greedy prefix with F(S) >= (1 - sigma) F(A), and F of each
    /// prefix.
    fn minimum_discerning_attributes(sigma: f64; layout: &str = "auto") -> (Vec<usize>, Vec<f64>) =
        |cols, labels| {
            let selection = partition::minimum_discerning_in(cols, labels, sigma, layout.parse()?);
            selection.map(|selection| order_path(selection, cols.n_rows()))
        };

    /// PrivateKD: `k` rounds, each choosing a column with probability
    /// ∝ exp(epsilon_step · (F(S ∪ {a}) − F(S))); returns the order (int64).
    fn private_kd(k: usize, epsilon_step: f64, seed: Option<u64> = None; layout: &str = "auto")
        -> Vec<usize> =
        |cols, labels| {
            let seed = Seed::new(seed)?;
            let rule = Rule::Exponential { epsilon: epsilon_step, seed: &seed };
            let selection = partition::select_discerning_in(cols, labels, k, rule, layout.parse()?);
            selection.map(|selection| selection.order)
        };
}

/// One round of a discernibility search on rows grouped by class (class `b` is rows
/// `bounds[b]..bounds[b + 1]`), or in any order with the class of every row (`classes`,
/// below `n_classes`; `bounds` None): refine by column `refine_by` if given, then every
/// other column's undiscerned pairs. `columns` is a uint8, uint16 or uint32 array; returns
/// `(pairs, refined, bounds)`, `refined` the refined (or grouped) rows' `(codes, labels)`
/// (codes in the dtype of `columns`), None when rows were neither refined nor grouped.
#[pyfunction]
#[pyo3(signature = (
    columns, cardinalities, labels, n_labels, bounds, refine_by, n_threads=None,
    classes=None, n_classes=0,
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn grouped_discernibility_round<'py>(
    columns: &Bound<'py, PyAny>,
    cardinalities: PyReadonlyArray1<'_, u32>,
    labels: PyReadonlyArray1<'_, u32>,
    n_labels: u32,
    bounds: Option<PyReadonlyArray1<'_, u64>>,
    refine_by: Option<usize>,
    n_threads: Option<usize>,
    classes: Option<PyReadonlyArray1<'_, u32>>,
    n_classes: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let labels = contiguous(&labels, "labels")?;
    let classes = classes
        .as_ref()
        .map(|c| contiguous(c, "classes"))
        .transpose()?;
    let groups = match (&bounds, classes) {
        (Some(bounds), None) => RowGroups::Bounds(
            contiguous(bounds, "bounds")?
                .iter()
                .map(|&b| b as usize)
                .collect(),
        ),
        (None, Some(classes)) => RowGroups::Classes { classes, n_classes },
        _ => {
            return Err(PyValueError::new_err(
                "give exactly one of bounds and classes",
            ));
        }
    };
    run_on_unsigned_columns!(columns, n_threads, |codes| {
        let labels = Labels::new(labels, n_labels)?;
        partition::grouped_round(codes, cards, &labels, groups.clone(), refine_by)
    })
}

/// The (class, value, label) counts of the columns `which` of a part (a 2-D uint8,
/// uint16 or uint32 array, a column per row), classes of S `classes` below `n_classes`:
/// one dense table per column, cell `(class · cardinality + value) · n_labels + label`.
#[pyfunction]
#[pyo3(signature = (
    columns, which, cardinalities, classes, n_classes, labels, n_labels, n_threads=None,
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn class_value_label_counts<'py>(
    columns: &Bound<'py, PyAny>,
    which: Vec<usize>,
    cardinalities: PyReadonlyArray1<'_, u32>,
    classes: PyReadonlyArray1<'_, u32>,
    n_classes: usize,
    labels: PyReadonlyArray1<'_, u32>,
    n_labels: u32,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let cards = contiguous(&cardinalities, "cardinalities")?;
    let classes = contiguous(&classes, "classes")?;
    let labels = contiguous(&labels, "labels")?;
    run_on_unsigned_columns!(columns, n_threads, |codes| {
        let labels = Labels::new(labels, n_labels)?;
        partition::class_value_label_counts(codes, &which, cards, classes, n_classes, &labels)
    })
}

/// The class of every row of a part refined by its column `column` (a row of the 2-D
/// uint8, uint16 or uint32 array `columns`): `new_ids[i]` for the rows whose key
/// `class · card + value` is `groups[i]` (sorted), u32::MAX for the others.
#[pyfunction]
#[pyo3(signature = (columns, column, card, classes, n_classes, groups, new_ids, n_threads=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn refined_classes<'py>(
    columns: &Bound<'py, PyAny>,
    column: usize,
    card: u32,
    classes: PyReadonlyArray1<'_, u32>,
    n_classes: usize,
    groups: PyReadonlyArray1<'_, u64>,
    new_ids: PyReadonlyArray1<'_, u32>,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let classes = contiguous(&classes, "classes")?;
    let groups = contiguous(&groups, "groups")?;
    let new_ids = contiguous(&new_ids, "new_ids")?;
    run_on_unsigned_columns!(columns, n_threads, |codes| {
        partition::refined_classes(codes, column, card, classes, n_classes, groups, new_ids)
    })
}

/// Splits the rows of a part by destination (the move of the distributed search): row
/// `r` of class `classes[r]` (u32::MAX: dropped) goes to part `destination[class]` as
/// class `local_ids[class]`; returns one `(codes, labels, classes)` per part, codes of
/// the columns `which` (rows of `columns`) in the dtype of `columns`.
#[pyfunction]
#[pyo3(signature = (
    columns, which, labels, classes, destination, local_ids, n_parts, n_threads=None,
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn split_rows<'py>(
    columns: &Bound<'py, PyAny>,
    which: Vec<usize>,
    labels: PyReadonlyArray1<'_, u32>,
    classes: PyReadonlyArray1<'_, u32>,
    destination: PyReadonlyArray1<'_, u32>,
    local_ids: PyReadonlyArray1<'_, u32>,
    n_parts: usize,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let labels = contiguous(&labels, "labels")?;
    let classes = contiguous(&classes, "classes")?;
    let destination = contiguous(&destination, "destination")?;
    let local_ids = contiguous(&local_ids, "local_ids")?;
    run_on_unsigned_columns!(columns, n_threads, |codes| {
        partition::split_rows(
            codes,
            &which,
            labels,
            classes,
            destination,
            local_ids,
            n_parts,
        )
    })
}

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
    let seed = mapped(Seed::new(seed))?;
    run(gains.py(), None, || {
        partition::exponential_round(&wide, epsilon_step, n_rows, &seed, round)
    })
}
