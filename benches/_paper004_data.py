"""Data loaders for the paper-004 tables (k-anonymity by containment and its baselines).

Each loader returns ``(B, y, feature_names)``: ``B`` an n × m ``uint8`` 0/1 matrix, ``y``
a 0/1 label vector.

- Adult-19: :func:`privtab.datasets.load_adult_binary` (48,842 rows, 19 binary features
  from 8 attributes; label income > 50K).
- Semeion Handwritten Digit (UCI): 1,593 rows of 256 binary pixels (a 16 × 16 image,
  row-major) followed by a 10-column one-hot digit label; space separated, no header.
  The label is "digit ``d`` vs the rest".

The raw files are read from ``shared/data`` next to the repository (``DATA``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from privtab.datasets import load_adult_binary

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def load_adult19() -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Adult binarised into 19 features; label 1 for income > 50K."""
    adult = load_adult_binary()
    B = adult.data.to_numpy(dtype=np.uint8)
    y = adult.target.to_numpy(dtype=np.int64)
    if B.shape != (48_842, 19) or int(y.sum()) != 11_687:
        raise RuntimeError(f"unexpected Adult-19 shape {B.shape} or class counts")
    return B, y, list(adult.feature_names)


def load_semeion(digit: int = 0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Semeion: 256 binary pixels; label 1 for ``digit``, 0 for the other nine."""
    if not 0 <= digit <= 9:
        raise ValueError(f"digit must be in 0 .. 9, got {digit}")
    values = np.loadtxt(DATA / "semeion" / "semeion.data")
    if values.shape != (1593, 266):
        raise RuntimeError(f"unexpected Semeion shape {values.shape}")
    pixels, onehot = values[:, :256], values[:, 256:]
    if not np.isin(values, (0.0, 1.0)).all() or not (onehot.sum(axis=1) == 1).all():
        raise RuntimeError("Semeion pixels or labels are not 0/1 one-hot")
    B = pixels.astype(np.uint8)
    y = (onehot.argmax(axis=1) == digit).astype(np.int64)
    names = [f"px_r{r:02d}_c{c:02d}" for r in range(16) for c in range(16)]
    return B, y, names
