//! Results as Python objects, so a binding hands back what its kernel returned: vectors
//! become 1-D numpy arrays (moved, not copied; indices as int64), [`Matrix`] a 2-D array,
//! tuples and the core's result structs a tuple of their parts, scalars themselves.

use numpy::ndarray::Array2;
use numpy::{Element, IntoPyArray};
use privtab_core::clustering::Flipped;
use privtab_core::correlation::RecordDegrees;
use privtab_core::counts::SparseCounts;
use privtab_core::histogram::Histogram;
use privtab_core::microagg::Microaggregation;
use privtab_core::mining::{MaximalSets, Transactions};
use privtab_core::pairwise::PairwiseCounts;
use privtab_core::partition::{GroupedRound, RowPiece, ScoreColumns, SubsetEntropies};
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A value a binding returns (see the module docs).
pub trait IntoNumpy {
    fn into_numpy(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>>;
}

/// A binding's result, converted to Python by [`IntoNumpy`].
pub struct Numpy<T>(pub T);

impl<'py, T: IntoNumpy> IntoPyObject<'py> for Numpy<T> {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.0.into_numpy(py)
    }
}

impl<C: Element> IntoNumpy for GroupedRound<C> {
    fn into_numpy(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        let n_columns = self.undiscerned_pairs.len();
        let refined = self.refined.map(|(codes, labels)| {
            let n_rows = labels.len();
            (Matrix(n_columns, n_rows, codes), labels)
        });
        (self.undiscerned_pairs, refined, self.bounds).into_numpy(py)
    }
}

impl<C: Element> IntoNumpy for Vec<RowPiece<C>> {
    fn into_numpy(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        let pieces: PyResult<Vec<_>> = self
            .into_iter()
            .map(|piece| {
                let n_rows = piece.labels.len();
                let codes = Matrix(piece.n_columns, n_rows, piece.codes);
                (codes, piece.labels, piece.classes).into_numpy(py)
            })
            .collect();
        pieces?.into_bound_py_any(py)
    }
}

/// A row-major `(rows, cols)` matrix.
pub struct Matrix<T>(pub usize, pub usize, pub Vec<T>);

impl<T: Element> IntoNumpy for Matrix<T> {
    fn into_numpy(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        let Matrix(rows, cols, values) = self;
        let matrix = Array2::from_shape_vec((rows, cols), values)
            .map_err(|err| PyValueError::new_err(err.to_string()))?;
        Ok(matrix.into_pyarray(py).into_any())
    }
}

/// Indices as int64, numpy's index type: they are below the length of an array, so below
/// 2^63.
fn indices(values: Vec<usize>) -> Vec<i64> {
    values.into_iter().map(|i| i as i64).collect()
}

/// Implements [`IntoNumpy`] for each `$type` by `$convert`, with `$value` bound to the
/// value and `$py` to the interpreter.
macro_rules! into_numpy {
    ($($type:ty => |$value:ident, $py:ident| $convert:expr;)*) => {$(
        impl IntoNumpy for $type {
            fn into_numpy(self, $py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
                let $value = self;
                $convert
            }
        }
    )*};
}

into_numpy! {
    Vec<u8> => |v, py| Ok(v.into_pyarray(py).into_any());
    Vec<u32> => |v, py| Ok(v.into_pyarray(py).into_any());
    Vec<u64> => |v, py| Ok(v.into_pyarray(py).into_any());
    Vec<i64> => |v, py| Ok(v.into_pyarray(py).into_any());
    Vec<f64> => |v, py| Ok(v.into_pyarray(py).into_any());
    Vec<usize> => |v, py| indices(v).into_numpy(py);
    Vec<Vec<f64>> => |v, py| {
        let arrays: PyResult<Vec<_>> = v.into_iter().map(|a| a.into_numpy(py)).collect();
        arrays?.into_bound_py_any(py)
    };
    Vec<Vec<u64>> => |v, py| {
        let arrays: PyResult<Vec<_>> = v.into_iter().map(|a| a.into_numpy(py)).collect();
        arrays?.into_bound_py_any(py)
    };
    bool => |x, py| x.into_bound_py_any(py);
    f64 => |x, py| x.into_bound_py_any(py);
    u64 => |x, py| x.into_bound_py_any(py);
    usize => |x, py| x.into_bound_py_any(py);
}

macro_rules! tuples {
    ($(($($part:ident),+))*) => {$(
        impl<$($part: IntoNumpy),+> IntoNumpy for ($($part,)+) {
            #[allow(non_snake_case)]
            fn into_numpy(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
                let ($($part,)+) = self;
                Ok(PyTuple::new(py, [$($part.into_numpy(py)?),+])?.into_any())
            }
        }
    )*};
}

tuples!((A, B)(A, B, C)(A, B, C, D)(A, B, C, D, E));

impl<T: IntoNumpy> IntoNumpy for Option<T> {
    fn into_numpy(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        match self {
            Some(value) => value.into_numpy(py),
            None => Ok(py.None().into_bound(py)),
        }
    }
}

// The core's result structs as the tuples `_core.pyi` declares.
into_numpy! {
    SparseCounts => |s, py| s.into_parts().into_numpy(py);
    ScoreColumns => |s, py| {
        (s.n_classes, s.undiscerned_pairs, s.entropy, s.joint_entropy, s.discernibility)
            .into_numpy(py)
    };
    PairwiseCounts => |p, py| {
        (p.tables, p.offsets, Matrix(p.n_cols, p.n_cols, p.entropies)).into_numpy(py)
    };
    Histogram => |h, py| (h.keys, h.values).into_numpy(py);
    Transactions => |t, py| (t.indptr, t.indices, t.item_ids).into_numpy(py);
    MaximalSets => |m, py| (m.offsets, m.items, m.measures, m.complete).into_numpy(py);
    Flipped => |f, py| (f.data, f.clusters, f.n_clusters, f.flipped).into_numpy(py);
    RecordDegrees => |r, py| (r.degree, r.count).into_numpy(py);
    Microaggregation => |m, py| (m.labels, m.centroids, m.sensitivities).into_numpy(py);
    SubsetEntropies => |s, py| {
        (Matrix(s.entropy.len(), s.k, indices(s.subsets)), s.entropy, s.joint_entropy)
            .into_numpy(py)
    };
}
