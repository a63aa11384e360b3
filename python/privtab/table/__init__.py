"""Encoding tables of mixed types into categorical codes over public domains.

:class:`TableEncoder` turns a numpy array, a pandas or a polars DataFrame into an
:class:`EncodedTable`: one ``uint32`` code per cell, with the public size of every
column's domain. Categorical columns are coded in the order of their declared
categories; numeric columns are scaled into [0, 1] with declared bounds and cut into
equal-width bins. Everything the rest of privtab computes on works on these codes.

- :mod:`privtab.table._readers`: numpy, pandas and polars inputs as uniform columns;
- :mod:`privtab.table._encoded`: :class:`EncodedTable`;
- :mod:`privtab.table._encoder`: :class:`TableEncoder`;
- :mod:`privtab.table._binning`: :func:`lei_bandwidth` and :func:`lei_bins` [1]_, [2]_.

Core kernels called: none; the codes produced here are what the ``privtab._core``
counting, partition and histogram kernels read.

References
----------
.. [1] S. A. Vinterbo, "Differentially Private Projected Histograms: Construction and
   Use for Prediction", in Machine Learning and Knowledge Discovery in Databases
   (ECML PKDD 2012), Lecture Notes in Computer Science 7524, Springer, 2012.
.. [2] J. Lei, "Differentially private M-estimators", Advances in Neural Information
   Processing Systems 24 (NeurIPS 2011), 2011.
"""

from __future__ import annotations

from privtab.table._binning import lei_bandwidth, lei_bins
from privtab.table._encoded import EncodedTable
from privtab.table._encoder import TableEncoder

__all__ = ["EncodedTable", "TableEncoder", "lei_bandwidth", "lei_bins"]
