//! Bindings of `privtab_core::correlation`: the Pearson matrix, attribute filter, degree
//! matrix, F-scores, feature importance and record correlated degrees of DPFSDR.

use privtab_core::correlation::{self, RecordDegrees};

use crate::prelude::*;

/// Binds kernels on a (n, d) float64 table `x` as `NAME(x, args…, n_threads=None)`:
/// `$kernel` runs inside [`run`] with `$x` bound to the validated row-major view of `x`;
/// an argument `[name: T]` is a 1-D array read as a `&[T]`.
macro_rules! on_table {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($([$array:ident: $element:ty],)? $($arg:ident: $ty:ty),*) -> $out:ty =
            |$x:ident| $kernel:expr;
    )*) => {$(
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (x, $($array,)? $($arg,)* n_threads=None))]
        pub(crate) fn $name(
            x: PyReadonlyArray2<'_, f64>,
            $($array: PyReadonlyArray1<'_, $element>,)?
            $($arg: $ty,)*
            n_threads: Option<usize>,
        ) -> PyResult<Numpy<$out>> {
            let (values, (n, d)) = (contiguous(&x, "x")?, (x.shape()[0], x.shape()[1]));
            let $x = &mapped(correlation::RowMatrix::new(values, n, d))?;
            $(let $array = contiguous(&$array, stringify!($array))?;)?
            run(x.py(), n_threads, || $kernel).map(Numpy)
        }
    )*};
}

on_table! {
    /// The (d, d) feature–feature Pearson matrix of a (n, d) table.
    fn pearson_matrix() -> Matrix<f64> =
        |x| correlation::pearson_matrix(x).map(|theta| Matrix(x.n_cols(), x.n_cols(), theta));

    /// The indices (int64) of the features kept by the attribute filter at `delta`.
    fn filter_correlated_features(delta: f64) -> Vec<usize> =
        |x| correlation::filter_correlated_features(x, delta);

    /// The (d, d) correlated-degree adjacency matrix M of Algorithm 1 at `delta`.
    fn correlated_degree_matrix(delta: f64) -> Matrix<f64> =
        |x| {
            let degrees = correlation::correlated_degree_matrix(x, delta);
            degrees.map(|degrees| Matrix(x.n_cols(), x.n_cols(), degrees))
        };

    /// The F-score (eq. 8) of every feature for labels `0..n_labels`.
    fn f_scores([labels: u32], n_labels: u32) -> Vec<f64> =
        |x| correlation::f_scores(x, labels, n_labels);

    /// The correlated degree and the number of correlated records of every record on the
    /// feature subset `features` at `record_delta`.
    fn correlated_degrees(features: Vec<usize>, record_delta: f64) -> RecordDegrees =
        |x| correlation::correlated_degrees(x, &features, record_delta);
}

/// The feature importance `F / ΣF` (eq. 9), a probability vector.
#[pyfunction]
pub(crate) fn feature_importance(scores: PyReadonlyArray1<'_, f64>) -> PyResult<Numpy<Vec<f64>>> {
    let values = contiguous(&scores, "scores")?;
    mapped(correlation::feature_importance(values)).map(Numpy)
}
