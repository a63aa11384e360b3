//! The arguments every table binding starts with: a `(d, n)` array of column-major codes,
//! its public cardinalities and, for the label-aware kernels, the labels of the rows.
//! The slices are read while attached; the core validates them inside [`run`].
//!
//! [`run`]: crate::errors::run

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use privtab_core::columns::Columns;
use privtab_core::partition::Labels;
use pyo3::prelude::*;

use crate::errors::contiguous;

/// A code table as slices.
#[derive(Clone, Copy)]
pub struct Table<'a> {
    data: &'a [u32],
    n_rows: usize,
    cardinalities: &'a [u32],
    labels: &'a [u32],
    n_labels: u32,
}

impl<'a> Table<'a> {
    /// The table `columns` (d × n) with its `cardinalities`.
    pub fn new(
        columns: &'a PyReadonlyArray2<'_, u32>,
        cardinalities: &'a PyReadonlyArray1<'_, u32>,
    ) -> PyResult<Self> {
        Ok(Table {
            data: contiguous(columns, "columns")?,
            n_rows: columns.shape()[1],
            cardinalities: contiguous(cardinalities, "cardinalities")?,
            labels: &[],
            n_labels: 0,
        })
    }

    /// The table with the labels `0..n_labels` of its rows.
    pub fn labelled(
        columns: &'a PyReadonlyArray2<'_, u32>,
        cardinalities: &'a PyReadonlyArray1<'_, u32>,
        labels: &'a PyReadonlyArray1<'_, u32>,
        n_labels: u32,
    ) -> PyResult<Self> {
        let labels = contiguous(labels, "labels")?;
        Ok(Table {
            labels,
            n_labels,
            ..Table::new(columns, cardinalities)?
        })
    }

    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// The validated core view (O(n·d): call it inside `run`).
    pub fn columns(&self) -> privtab_core::Result<Columns<'a>> {
        Columns::new(self.data, self.n_rows, self.cardinalities)
    }

    /// The validated columns and labels (of a [`Table::labelled`]).
    pub fn parts(&self) -> privtab_core::Result<(Columns<'a>, Labels<'a>)> {
        Ok((self.columns()?, Labels::new(self.labels, self.n_labels)?))
    }
}
