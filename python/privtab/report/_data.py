"""The table a report measures: split, encoded and described once for every family.

:func:`prepare` reads the data owner's table, splits it into a training part and a
held-out part (stratified by the target, with a seed of the report), and encodes it
with the declared domains and bounds; what is not declared is taken from the data.
Every family then reads the same :class:`ReportData`, which is never modified.

Core kernels called: none directly (:class:`~privtab.table.TableEncoder` encodes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privtab._validation import check_positive_int

__all__ = ["ReportData", "prepare"]

#: The share of the rows held out to measure every model of the report.
TEST_SIZE = 0.3


@dataclass(frozen=True)
class ReportData:
    """The encoded table every family of a report reads.

    Attributes
    ----------
    frame : pandas.DataFrame
        The table as given (the target included).
    target : str
        The name of the target column.
    categorical, numeric : tuple of str
        The predictors read as categories, and those read as numbers.
    bounds : dict
        The bounds of every numeric predictor (declared, or the data's minimum and
        maximum).
    inferred : tuple of str
        The columns whose categories or bounds were taken from the data.
    codes_train, codes_test : numpy.ndarray
        The predictors' codes (numbers binned), rows of the training and held-out
        parts, in the order of ``predictors``.
    cardinalities : numpy.ndarray
        The number of codes of each predictor.
    y_train, y_test : numpy.ndarray
        The target's codes ``0 .. n_classes - 1``.
    classes : tuple
        The target's labels, in the order of its codes.
    train_rows, test_rows : numpy.ndarray
        The positions in ``frame`` of the training and held-out rows.
    """

    frame: pd.DataFrame
    target: str
    categorical: tuple[str, ...]
    numeric: tuple[str, ...]
    bounds: dict[str, tuple[float, float]]
    inferred: tuple[str, ...]
    codes_train: np.ndarray
    codes_test: np.ndarray
    cardinalities: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    classes: tuple[Any, ...]
    train_rows: np.ndarray
    test_rows: np.ndarray

    @property
    def predictors(self) -> tuple[str, ...]:
        """Every column but the target, in the order of the table."""
        return tuple(c for c in self.frame.columns if c != self.target)

    @property
    def n_classes(self) -> int:
        """The number of labels of the target."""
        return len(self.classes)

    def numeric_values(self, rows: np.ndarray) -> np.ndarray:
        """Return the numeric predictors of ``rows`` as floats (n x len(numeric))."""
        return self.frame[list(self.numeric)].iloc[rows].to_numpy(dtype=float)


def _is_numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(
        column
    )


def prepare(
    data: Any,
    target: str,
    *,
    domains: Mapping[Any, Sequence[Any]] | None = None,
    bounds: Mapping[Any, tuple[float, float]] | None = None,
    categorical: Sequence[str] = (),
    bins: int | None = None,
    seed: int = 0,
) -> ReportData:
    """Split and encode ``data`` for the families of a report.

    Parameters
    ----------
    data : pandas or polars DataFrame
        The table, with the target column.
    target : str
        The column every family predicts or selects for.
    domains, bounds : dict, optional
        Declared categories of columns (the target's included) and bounds of numeric
        columns; the others are taken from the data (recorded in ``inferred``).
    categorical : sequence of str
        Numeric columns to read as categories.
    bins : int, optional
        Equal-width bins of each numeric predictor; default ``lei_bins(n, d)``.
    seed : int
        Seeds the split into training and held-out rows.

    Raises
    ------
    TypeError
        If ``data`` is not a DataFrame.
    ValueError
        If ``target`` is not a column, the table has no predictor, or the target has
        fewer than 2 labels.
    """
    from sklearn.model_selection import train_test_split

    from privtab.table import TableEncoder, lei_bins

    if hasattr(data, "to_pandas") and not isinstance(data, pd.DataFrame):
        data = data.to_pandas()
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"data must be a pandas or polars DataFrame, got {type(data).__name__}"
        )
    if target not in data.columns:
        raise ValueError(
            f"target {target!r} is not a column of data; columns: "
            f"{', '.join(map(str, data.columns))}"
        )
    frame = data.reset_index(drop=True)
    predictors = [c for c in frame.columns if c != target]
    if not predictors:
        raise ValueError("data must have at least one column besides the target")
    domains = dict(domains or {})
    bounds = {k: (float(lo), float(hi)) for k, (lo, hi) in (bounds or {}).items()}
    named = set(domains) | set(bounds) | set(categorical)
    unknown = sorted(map(str, named - set(frame.columns)))
    if unknown:
        raise ValueError(
            f"domains, bounds or categorical name columns data does not have: "
            f"{', '.join(map(repr, unknown))}"
        )
    numeric = [
        c
        for c in predictors
        if c not in categorical and c not in domains and _is_numeric(frame[c])
    ]
    for c in categorical:
        frame[c] = frame[c].astype(str).where(frame[c].notna())
    inferred = [c for c in frame.columns if c not in domains and c not in bounds]
    all_bounds = dict(bounds)
    for c in numeric:
        if c not in all_bounds:
            values = frame[c].dropna()
            low = float(values.min()) if len(values) else 0.0
            high = float(values.max()) if len(values) else 1.0
            all_bounds[c] = (low, high if high > low else low + 1.0)

    labels = frame[target]
    if labels.isna().any():
        raise ValueError(f"the target {target!r} has missing values; drop those rows")
    target_domain = domains.get(target)
    if target_domain is None:
        target_domain = sorted(pd.unique(labels.astype(str)))
    classes = tuple(target_domain)
    if len(classes) < 2:
        raise ValueError(f"the target {target!r} must have at least 2 labels")
    # Labels are matched as text, so that 1 read from a file matches a declared "1".
    position = {str(label): i for i, label in enumerate(classes)}
    try:
        y = np.fromiter(
            (position[str(v)] for v in labels), dtype=np.int64, count=len(labels)
        )
    except KeyError as exc:
        raise ValueError(
            f"the target {target!r} holds '{exc.args[0]}', not one of its declared "
            f"labels {list(classes)!r}"
        ) from None

    counts = np.bincount(y, minlength=len(classes))
    stratify = y if counts[counts > 0].min() >= 2 else None
    rows = np.arange(len(frame))
    train_rows, test_rows = train_test_split(
        rows, test_size=TEST_SIZE, random_state=seed, stratify=stratify
    )
    train_rows, test_rows = np.sort(train_rows), np.sort(test_rows)
    if bins is None:
        bins = lei_bins(len(train_rows), len(predictors))
    else:
        bins = check_positive_int(bins, "bins")
    encoder = TableEncoder(
        domains={c: v for c, v in domains.items() if c in predictors},
        bounds={c: all_bounds[c] for c in numeric},
        bins=bins,
        missing="category",
        out_of_bounds="clip",
    )
    table = encoder.fit_transform(frame[predictors])
    codes = np.asarray(table.codes)
    return ReportData(
        frame=frame,
        target=target,
        categorical=tuple(c for c in predictors if c not in numeric),
        numeric=tuple(numeric),
        bounds={c: all_bounds[c] for c in numeric},
        inferred=tuple(map(str, inferred)),
        codes_train=codes[train_rows],
        codes_test=codes[test_rows],
        cardinalities=np.asarray(table.cardinalities, dtype=np.int64),
        y_train=y[train_rows],
        y_test=y[test_rows],
        classes=classes,
        train_rows=train_rows,
        test_rows=test_rows,
    )
