//! Bindings of `privtab_core::microagg`: individual-ranking microaggregation and its ε-DP
//! and ε-iDP masks.

use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use privtab_core::microagg::{self, Mechanism};
use privtab_core::rng::Seed;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{contiguous, run};

/// The masked (d, n) table and every attribute's cluster sensitivities.
type MaskArrays<'py> = (Bound<'py, PyArray2<f64>>, Vec<Bound<'py, PyArray1<f64>>>);

type ClusterArrays<'py> = (
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

fn parse_mechanism(name: &str) -> PyResult<Mechanism> {
    match name {
        "dp" => Ok(Mechanism::Dp),
        "idp_ls" => Ok(Mechanism::IdpLs),
        "idp_cbls" => Ok(Mechanism::IdpCbls),
        other => Err(PyValueError::new_err(format!(
            "mechanism must be one of 'idp_cbls', 'idp_ls', 'dp', got {other:?}"
        ))),
    }
}

/// The cluster of every value under individual-ranking microaggregation.
#[pyfunction]
pub(crate) fn individual_ranking_clusters<'py>(
    values: PyReadonlyArray1<'py, f64>,
    k: usize,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let (py, data) = (values.py(), contiguous(&values, "values")?);
    let labels = run(py, None, || microagg::individual_ranking_clusters(data, k))?;
    Ok(labels.into_pyarray(py))
}

/// The exact (non-private) clusters, centroids and sensitivities of one attribute.
#[pyfunction]
pub(crate) fn microaggregate<'py>(
    values: PyReadonlyArray1<'py, f64>,
    k: usize,
    mechanism: &str,
    lo: f64,
    hi: f64,
) -> PyResult<ClusterArrays<'py>> {
    let (py, data) = (values.py(), contiguous(&values, "values")?);
    let mechanism = parse_mechanism(mechanism)?;
    let result = run(py, None, || {
        microagg::microaggregate(data, k, mechanism, (lo, hi))
    })?;
    Ok((
        result.labels.into_pyarray(py),
        result.centroids.into_pyarray(py),
        result.sensitivities.into_pyarray(py),
    ))
}

/// Masks the rows of a (d, n) table (one attribute per row): the masked (d, n) table and
/// the sensitivities of every attribute's clusters.
#[pyfunction]
#[pyo3(signature = (columns, k, mechanism, bounds, epsilons, seed=None, n_threads=None))]
pub(crate) fn microaggregate_columns<'py>(
    columns: PyReadonlyArray2<'py, f64>,
    k: usize,
    mechanism: &str,
    bounds: PyReadonlyArray2<'py, f64>,
    epsilons: PyReadonlyArray1<'py, f64>,
    seed: Option<u64>,
    n_threads: Option<usize>,
) -> PyResult<MaskArrays<'py>> {
    let py = columns.py();
    let (d, n) = (columns.shape()[0], columns.shape()[1]);
    let data = contiguous(&columns, "columns")?;
    let pairs = contiguous(&bounds, "bounds")?;
    if bounds.shape() != [d, 2] {
        return Err(PyValueError::new_err(format!(
            "bounds must have shape ({d}, 2), got {:?}",
            bounds.shape()
        )));
    }
    let epsilons = contiguous(&epsilons, "epsilons")?;
    let mechanism = parse_mechanism(mechanism)?;
    let table = run(py, n_threads, || {
        let views: Vec<&[f64]> = (0..d).map(|a| &data[a * n..(a + 1) * n]).collect();
        let ranges: Vec<(f64, f64)> = pairs.chunks_exact(2).map(|p| (p[0], p[1])).collect();
        microagg::mask_columns(&views, k, mechanism, &ranges, epsilons, &Seed::new(seed))
    })?;
    let sensitivities = table.sensitivities;
    let masked = Array2::from_shape_vec((d, n), table.masked)
        .map_err(|err| PyValueError::new_err(err.to_string()))?;
    Ok((
        masked.into_pyarray(py),
        sensitivities
            .into_iter()
            .map(|s| s.into_pyarray(py))
            .collect(),
    ))
}
