//! Bindings of `privtab_core::microagg`: individual-ranking microaggregation and its ε-DP
//! and ε-iDP masks.

use privtab_core::microagg::{self, Microaggregation};
use pyo3::exceptions::PyValueError;

use crate::prelude::*;

/// The masked (d, n) table and every attribute's cluster sensitivities.
type Masked = Numpy<(Matrix<f64>, Vec<Vec<f64>>)>;

/// The cluster of every value under individual-ranking microaggregation.
#[pyfunction]
pub(crate) fn individual_ranking_clusters(
    values: PyReadonlyArray1<'_, f64>,
    k: usize,
) -> PyResult<Numpy<Vec<u32>>> {
    let data = contiguous(&values, "values")?;
    run(values.py(), None, || {
        microagg::individual_ranking_clusters(data, k)
    })
    .map(Numpy)
}

/// The exact (non-private) clusters, centroids and sensitivities of one attribute.
#[pyfunction]
pub(crate) fn microaggregate(
    values: PyReadonlyArray1<'_, f64>,
    k: usize,
    mechanism: &str,
    lo: f64,
    hi: f64,
) -> PyResult<Numpy<Microaggregation>> {
    let (data, mechanism) = (contiguous(&values, "values")?, mapped(mechanism.parse())?);
    let exact = run(values.py(), None, || {
        microagg::microaggregate(data, k, mechanism, (lo, hi))
    });
    exact.map(Numpy)
}

/// Masks the rows of a (d, n) table (one attribute per row): the masked (d, n) table and
/// the sensitivities of every attribute's clusters.
#[pyfunction]
#[pyo3(signature = (columns, k, mechanism, bounds, epsilons, seed=None, n_threads=None))]
pub(crate) fn microaggregate_columns(
    columns: PyReadonlyArray2<'_, f64>,
    k: usize,
    mechanism: &str,
    bounds: PyReadonlyArray2<'_, f64>,
    epsilons: PyReadonlyArray1<'_, f64>,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<Masked> {
    let (d, n) = (columns.shape()[0], columns.shape()[1]);
    if bounds.shape() != [d, 2] {
        let shape = bounds.shape();
        return Err(PyValueError::new_err(format!(
            "bounds must have shape ({d}, 2), got {shape:?}"
        )));
    }
    let (data, epsilons) = (
        contiguous(&columns, "columns")?,
        contiguous(&epsilons, "epsilons")?,
    );
    let pairs: Vec<(f64, f64)> = contiguous(&bounds, "bounds")?
        .chunks_exact(2)
        .map(|pair| (pair[0], pair[1]))
        .collect();
    let mechanism = mapped(mechanism.parse())?;
    let table = run(columns.py(), n_threads, || {
        microagg::mask_table(
            data,
            (d, n),
            k,
            mechanism,
            &pairs,
            epsilons,
            &Seed::new(seed)?,
        )
    });
    table.map(|table| Numpy((Matrix(d, n, table.masked), table.sensitivities)))
}
