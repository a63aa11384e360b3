"""Data loaders for the DILCA / DP-DILCA benchmarks (paper 000).

Every loader returns a :class:`CategoricalData`: the *predictors* as categorical codes
(``codes``, n x m, uint32) with their cardinalities, and the class attribute as a
separate array of labels (``labels``). The class is never part of ``codes``: the paper
learns the metric on the predictors only (its Table 1 counts 34 attributes for
Dermatology, 35 for Soybean, 22 for Mushroom, 14 for Adult, 9 for CMC), and evaluates
Ward clustering / k-NN against the class.

Preprocessing, as in the paper's experiments except where noted:

- categorical columns: one code per distinct value seen in the file, in sorted order;
- missing values (``?``) are a category of their own (the last code of the column);
- numeric columns are cut into 5 equal-width bins between the minimum and maximum of
  the column. The bounds are read off the data (acceptable for a benchmark, not a
  private release); the paper used k-means discretisation into 5 bins, available here
  with ``binning="kmeans"`` (scikit-learn ``KBinsDiscretizer``);
- Soybean (Large) concatenates the training and test files (683 rows).

The data sets are read from ``shared/data`` next to the repository (``DATA``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
N_BINS = 5
MISSING = "?"


@dataclass
class CategoricalData:
    """Predictors as categorical codes plus the class labels."""

    name: str
    codes: np.ndarray  # (n, m) uint32, C-contiguous
    cardinalities: np.ndarray  # (m,) int64
    columns: list[str]
    labels: np.ndarray  # (n,) class labels (strings)
    categories: list[list[str]] = field(default_factory=list)

    @property
    def n_classes(self) -> int:
        return int(np.unique(self.labels).size)

    def summary(self) -> str:
        n, m = self.codes.shape
        return (
            f"{self.name}: {n} rows, {m} attributes, "
            f"{int(self.cardinalities.sum())} values, {self.n_classes} classes"
        )


def _columns_file(folder: str) -> list[tuple[int, str, str]]:
    rows = []
    for line in (DATA / folder / "columns.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        index, name, kind = line.split("\t", 2)
        rows.append((int(index), name.strip(), kind.strip()))
    return rows


def _encode_categorical(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    values = values.astype(str).str.strip()
    present = sorted(v for v in values.unique() if v != MISSING)
    if (values == MISSING).any():
        present.append(MISSING)
    lookup = {v: i for i, v in enumerate(present)}
    return values.map(lookup).to_numpy(dtype=np.uint32), present


def _encode_numeric(values: pd.Series, binning: str) -> tuple[np.ndarray, list[str]]:
    text = values.astype(str).str.strip()
    missing = (text == MISSING).to_numpy()
    x = pd.to_numeric(text.where(~missing), errors="raise").to_numpy(dtype=np.float64)
    observed = x[~missing]
    if binning == "uniform":
        lo, hi = float(observed.min()), float(observed.max())
        edges = np.linspace(lo, hi, N_BINS + 1)
        bins = np.clip(
            np.searchsorted(edges, observed, side="right") - 1, 0, N_BINS - 1
        )
        labels = [f"[{edges[b]:g}, {edges[b + 1]:g}]" for b in range(N_BINS)]
    elif binning == "kmeans":
        from sklearn.preprocessing import KBinsDiscretizer

        disc = KBinsDiscretizer(n_bins=N_BINS, encode="ordinal", strategy="kmeans")
        with warnings.catch_warnings():
            # Columns with fewer distinct values than bins get fewer bins.
            warnings.simplefilter("ignore")
            bins = disc.fit_transform(observed[:, None])[:, 0].astype(np.int64)
        edges = disc.bin_edges_[0]
        labels = [f"[{edges[b]:g}, {edges[b + 1]:g}]" for b in range(len(edges) - 1)]
    else:
        raise ValueError(f"binning must be 'uniform' or 'kmeans', got {binning!r}")
    codes = np.empty(len(x), dtype=np.uint32)
    codes[~missing] = bins
    if missing.any():
        codes[missing] = len(labels)
        labels.append(MISSING)
    return codes, labels


def _build(
    name: str,
    frame: pd.DataFrame,
    class_column: str,
    numeric: set[str],
    binning: str,
) -> CategoricalData:
    columns = [c for c in frame.columns if c != class_column]
    codes, categories = [], []
    for column in columns:
        if column in numeric:
            c, cats = _encode_numeric(frame[column], binning)
        else:
            c, cats = _encode_categorical(frame[column])
        codes.append(c)
        categories.append(cats)
    labels = frame[class_column].astype(str).str.strip().str.rstrip(".").to_numpy()
    return CategoricalData(
        name=name,
        codes=np.ascontiguousarray(np.column_stack(codes), dtype=np.uint32),
        cardinalities=np.array([len(c) for c in categories], dtype=np.int64),
        columns=columns,
        labels=labels.astype(str),
        categories=categories,
    )


def _read(folder: str, files: list[str], **kwargs) -> pd.DataFrame:
    spec = _columns_file(folder)
    names = [name for _, name, _ in spec]
    parts = [
        pd.read_csv(DATA / folder / f, header=None, names=names, dtype=str, **kwargs)
        for f in files
    ]
    return pd.concat(parts, ignore_index=True).dropna(how="all")


def load_mushroom(binning: str = "uniform") -> CategoricalData:
    """Mushroom: 8124 x 22 categorical predictors; the class is the first column."""
    frame = _read("mushroom", ["agaricus-lepiota.data"])
    return _build("mushroom", frame, "class", set(), binning)


def load_adult(binning: str = "uniform") -> CategoricalData:
    """Adult, train + test (48842 rows x 14 predictors); 6 numeric columns binned."""
    spec = _columns_file("adult")
    frame = pd.concat(
        [
            _read("adult", ["adult.data"], skipinitialspace=True),
            _read("adult", ["adult.test"], skipinitialspace=True, skiprows=1),
        ],
        ignore_index=True,
    )
    numeric = {name for _, name, kind in spec if kind == "continuous"}
    return _build("adult", frame, "income", numeric, binning)


def load_dermatology(binning: str = "uniform") -> CategoricalData:
    """Dermatology: 366 x 34 (33 ordinal clinical/histopathological, age binned)."""
    frame = _read("dermatology", ["dermatology.data"])
    return _build("dermatology", frame, "class", {"age"}, binning)


def load_soybean(binning: str = "uniform") -> CategoricalData:
    """Soybean (Large), training and test files concatenated: 683 x 35, 19 classes."""
    frame = _read("soybean_large", ["soybean-large.data", "soybean-large.test"])
    return _build("soybean", frame, "class", set(), binning)


def load_cmc(binning: str = "uniform") -> CategoricalData:
    """CMC: 1473 x 9 (wife_age and children_ever_born binned), 3 classes."""
    frame = _read("cmc", ["cmc.data"])
    numeric = {name for _, name, kind in _columns_file("cmc") if kind == "numerical"}
    return _build("cmc", frame, "contraceptive_method", numeric, binning)


LOADERS = {
    "mushroom": load_mushroom,
    "adult": load_adult,
    "dermatology": load_dermatology,
    "soybean": load_soybean,
    "cmc": load_cmc,
}


#: (rows, predictors, classes) published by UCI (see shared/data/SOURCES.md).
EXPECTED = {
    "mushroom": (8124, 22, 2),
    "adult": (48842, 14, 2),
    "dermatology": (366, 34, 6),
    "soybean": (683, 35, 19),
    "cmc": (1473, 9, 3),
}


def load(name: str, binning: str = "uniform") -> CategoricalData:
    """Load a data set by name (a key of ``LOADERS``), checked against UCI's counts."""
    data = LOADERS[name](binning)
    got = (*data.codes.shape, data.n_classes)
    if got != EXPECTED[name]:
        raise RuntimeError(f"{name}: expected {EXPECTED[name]}, read {got}")
    return data


if __name__ == "__main__":
    for key in LOADERS:
        print(load(key).summary())
