# Type stubs of the Rust extension module privtab._core (checked by mypy.stubtest).
# Arrays are numpy arrays; see the Python wrappers for the documented public API.

from collections.abc import Callable, Sequence
from os import PathLike
from typing import Any, final

import numpy as np
import numpy.typing as npt

_IntArray = npt.NDArray[np.integer]

__version__: str

# --- noise (rust/privtab-py/src/noise.rs) ---
def laplace_samples(
    n: int, scale: float, seed: int | None = None, n_threads: int | None = None
) -> npt.NDArray[np.float64]: ...
def gumbel_samples(
    n: int, seed: int | None = None, n_threads: int | None = None
) -> npt.NDArray[np.float64]: ...
def exponential_samples(
    n: int, mean: float, seed: int | None = None, n_threads: int | None = None
) -> npt.NDArray[np.float64]: ...
def discrete_laplace_scale(sensitivity: float, epsilon: float) -> tuple[int, int]: ...
def discrete_laplace_samples(
    n: int,
    sensitivity: float,
    epsilon: float,
    seed: int | None = None,
    n_threads: int | None = None,
) -> npt.NDArray[np.int64]: ...
def discrete_laplace_tail_samples(
    n: int,
    sensitivity: float,
    epsilon: float,
    threshold: int,
    seed: int | None = None,
    n_threads: int | None = None,
) -> npt.NDArray[np.int64]: ...
def binomial_samples(
    size: int, n: int, p: float, seed: int | None = None, n_threads: int | None = None
) -> npt.NDArray[np.uint64]: ...
def sample_distinct(
    range: int, k: int, seed: int | None = None
) -> npt.NDArray[np.uint64]: ...
def add_laplace(
    values: npt.NDArray[np.float64],
    sensitivity: float,
    epsilon: float,
    seed: int | None = None,
    n_threads: int | None = None,
) -> npt.NDArray[np.float64]: ...
def laplace_grid(
    sensitivity: float, epsilon: float, changed: int = 1
) -> tuple[int, int]: ...
def grid_laplace_samples(
    n: int,
    sensitivity: float,
    epsilon: float,
    changed: int = 1,
    seed: int | None = None,
    n_threads: int | None = None,
) -> npt.NDArray[np.float64]: ...
def add_discrete_laplace(
    values: npt.NDArray[np.int64],
    sensitivity: float,
    epsilon: float,
    seed: int | None = None,
    n_threads: int | None = None,
) -> npt.NDArray[np.int64]: ...
def exponential_mechanism(
    log_weights: npt.NDArray[np.float64],
    size: int,
    replace: bool,
    seed: int | None = None,
    n_threads: int | None = None,
) -> npt.NDArray[np.int64]: ...
def gamma_samples(
    n: int,
    shape: float,
    scale: float,
    seed: int | None = None,
    n_threads: int | None = None,
) -> npt.NDArray[np.float64]: ...
def l2_laplace_samples(
    n: int,
    d: int,
    scale: float,
    seed: int | None = None,
    n_threads: int | None = None,
) -> npt.NDArray[np.float64]: ...

# --- columns (rust/privtab-py/src/columns.rs) ---

def code_columns(
    codes: _IntArray,
    row_major: bool,
    n_threads: int | None = None,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]: ...
def column_maxima(
    columns: npt.NDArray[np.uint32],
    n_threads: int | None = None,
) -> npt.NDArray[np.uint32]: ...

# --- encode (rust/privtab-py/src/encode.rs) ---

def mixed_radix_encode(
    columns: _IntArray,
    cardinalities: npt.NDArray[np.uint32],
    n_threads: int | None = None,
) -> npt.NDArray[np.uint64]: ...
def mixed_radix_encode_rows(
    codes: _IntArray,
    cardinalities: npt.NDArray[np.uint32],
    n_threads: int | None = None,
) -> npt.NDArray[np.uint64]: ...
def mixed_radix_decode(
    keys: npt.NDArray[np.uint64],
    cardinalities: npt.NDArray[np.uint32],
    n_threads: int | None = None,
) -> npt.NDArray[np.uint32]: ...

# --- threads (rust/privtab-py/src/errors.rs) ---

def set_block_threads(n_threads: int | None = None) -> int | None: ...
def kernel_threads() -> int: ...

# --- counts (rust/privtab-py/src/counts.rs) ---

_KeyCounts = tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]

def contingency_table(
    x: _IntArray,
    kx: int,
    y: _IntArray,
    ky: int,
    n_threads: int | None = None,
) -> npt.NDArray[np.uint64]: ...
def contingency_sparse(
    x: _IntArray,
    kx: int,
    y: _IntArray,
    ky: int,
    n_threads: int | None = None,
) -> _KeyCounts: ...
def count_keys(
    keys: npt.NDArray[np.uint64], n_threads: int | None = None
) -> _KeyCounts: ...
def count_columns(
    columns: npt.NDArray[np.uint32],
    cardinalities: npt.NDArray[np.uint32],
    subset: list[int],
    n_threads: int | None = None,
) -> _KeyCounts: ...
def count_columns_of_rows(
    codes: _IntArray,
    cardinalities: npt.NDArray[np.uint32],
    subset: list[int],
    n_threads: int | None = None,
) -> _KeyCounts: ...
def merge_counts(
    keys_a: npt.NDArray[np.uint64],
    counts_a: npt.NDArray[np.uint64],
    keys_b: npt.NDArray[np.uint64],
    counts_b: npt.NDArray[np.uint64],
) -> _KeyCounts: ...
def entropy(counts: npt.NDArray[np.float64]) -> float: ...
def count_entropy(counts: npt.NDArray[np.uint64]) -> float: ...
def mutual_information(
    x: npt.NDArray[np.uint32],
    kx: int,
    y: npt.NDArray[np.uint32],
    ky: int,
    n_threads: int | None = None,
) -> float: ...
def symmetric_uncertainty(
    x: npt.NDArray[np.uint32],
    kx: int,
    y: npt.NDArray[np.uint32],
    ky: int,
    n_threads: int | None = None,
) -> float: ...

# --- partition (rust/privtab-py/src/partition.rs) ---

_Scores = tuple[
    npt.NDArray[np.uint64],
    npt.NDArray[np.uint64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
]

@final
class Partition:
    def __new__(cls, n_rows: int) -> Partition: ...
    @staticmethod
    def from_columns(
        columns: npt.NDArray[np.uint32],
        cardinalities: npt.NDArray[np.uint32],
        subset: list[int],
        n_threads: int | None = None,
    ) -> Partition: ...
    @property
    def n_rows(self) -> int: ...
    @property
    def n_classes(self) -> int: ...
    def classes(self) -> npt.NDArray[np.uint32]: ...
    def sizes(self) -> npt.NDArray[np.uint64]: ...
    def entropy(self) -> float: ...
    def refine(
        self,
        column: npt.NDArray[np.uint32],
        cardinality: int,
        n_threads: int | None = None,
    ) -> Partition: ...
    def score(
        self, labels: npt.NDArray[np.uint32], n_labels: int
    ) -> tuple[int, int, float, float, float]: ...
    def score_candidates(
        self,
        columns: npt.NDArray[np.uint32],
        cardinalities: npt.NDArray[np.uint32],
        labels: npt.NDArray[np.uint32],
        n_labels: int,
        candidates: list[int],
        n_threads: int | None = None,
    ) -> _Scores: ...

def score_candidates(
    columns: npt.NDArray[np.uint32],
    cardinalities: npt.NDArray[np.uint32],
    labels: npt.NDArray[np.uint32],
    n_labels: int,
    selected: list[int],
    candidates: list[int],
    n_threads: int | None = None,
) -> _Scores: ...
def discernibility(
    columns: npt.NDArray[np.uint32],
    cardinalities: npt.NDArray[np.uint32],
    labels: npt.NDArray[np.uint32],
    n_labels: int,
    features: list[int],
    n_threads: int | None = None,
) -> float: ...
def subset_entropies(
    columns: npt.NDArray[np.uint32],
    cardinalities: npt.NDArray[np.uint32],
    labels: npt.NDArray[np.uint32],
    n_labels: int,
    among: list[int],
    k: int,
    n_threads: int | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...

# --- histogram (rust/privtab-py/src/histogram.rs) ---

def thresholded_histogram(
    columns: npt.NDArray[np.uint32],
    cardinalities: npt.NDArray[np.uint32],
    epsilon: float,
    threshold: float,
    noise: str,
    max_cells: int,
    seed: int | None = None,
    n_threads: int | None = None,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64]]: ...
def thresholded_histogram_of_counts(
    keys: npt.NDArray[np.uint64],
    counts: npt.NDArray[np.uint64],
    cardinalities: npt.NDArray[np.uint32],
    epsilon: float,
    threshold: float,
    noise: str,
    max_cells: int,
    seed: int | None = None,
    n_threads: int | None = None,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64]]: ...
def thresholded_histogram_of_rows(
    codes: _IntArray,
    cardinalities: npt.NDArray[np.uint32],
    epsilon: float,
    threshold: float,
    noise: str,
    max_cells: int,
    seed: int | None = None,
    n_threads: int | None = None,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64]]: ...
def check_histogram(
    cardinalities: npt.NDArray[np.uint32],
    epsilon: float,
    threshold: float,
    noise: str,
    max_cells: int,
) -> None: ...
def empty_cell_probability(epsilon: float, threshold: float, noise: str) -> float: ...

# --- partition: discernibility search (rust/privtab-py/src/partition.rs) ---

def greedy_discernibility(
    columns: npt.NDArray[np.uint32],
    cardinalities: npt.NDArray[np.uint32],
    labels: npt.NDArray[np.uint32],
    n_labels: int,
    k: int,
    n_threads: int | None = None,
    layout: str = "auto",
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def minimum_discerning_attributes(
    columns: npt.NDArray[np.uint32],
    cardinalities: npt.NDArray[np.uint32],
    labels: npt.NDArray[np.uint32],
    n_labels: int,
    sigma: float,
    n_threads: int | None = None,
    layout: str = "auto",
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def grouped_discernibility_round(
    columns: npt.NDArray[np.uint8] | npt.NDArray[np.uint16] | npt.NDArray[np.uint32],
    cardinalities: npt.NDArray[np.uint32],
    labels: npt.NDArray[np.uint32],
    n_labels: int,
    bounds: npt.NDArray[np.uint64] | None,
    refine_by: int | None,
    n_threads: int | None = None,
    classes: npt.NDArray[np.uint32] | None = None,
    n_classes: int = 0,
) -> tuple[
    npt.NDArray[np.uint64],
    tuple[npt.NDArray[Any], npt.NDArray[np.uint32]] | None,
    npt.NDArray[np.int64],
]: ...
def class_value_label_counts(
    columns: npt.NDArray[np.uint8] | npt.NDArray[np.uint16] | npt.NDArray[np.uint32],
    which: list[int],
    cardinalities: npt.NDArray[np.uint32],
    classes: npt.NDArray[np.uint32],
    n_classes: int,
    labels: npt.NDArray[np.uint32],
    n_labels: int,
    n_threads: int | None = None,
) -> list[npt.NDArray[np.uint64]]: ...
def refined_classes(
    columns: npt.NDArray[np.uint8] | npt.NDArray[np.uint16] | npt.NDArray[np.uint32],
    column: int,
    card: int,
    classes: npt.NDArray[np.uint32],
    n_classes: int,
    groups: npt.NDArray[np.uint64],
    new_ids: npt.NDArray[np.uint32],
    n_threads: int | None = None,
) -> npt.NDArray[np.uint32]: ...
def split_rows(
    columns: npt.NDArray[np.uint8] | npt.NDArray[np.uint16] | npt.NDArray[np.uint32],
    which: list[int],
    labels: npt.NDArray[np.uint32],
    classes: npt.NDArray[np.uint32],
    destination: npt.NDArray[np.uint32],
    local_ids: npt.NDArray[np.uint32],
    n_parts: int,
    n_threads: int | None = None,
) -> list[tuple[npt.NDArray[Any], npt.NDArray[np.uint32], npt.NDArray[np.uint32]]]: ...
def private_kd_round(
    gains: npt.NDArray[np.uint64],
    epsilon_step: float,
    n_rows: int,
    round: int,
    seed: int | None = None,
) -> int: ...
def private_kd(
    columns: npt.NDArray[np.uint32],
    cardinalities: npt.NDArray[np.uint32],
    labels: npt.NDArray[np.uint32],
    n_labels: int,
    k: int,
    epsilon_step: float,
    seed: int | None = None,
    n_threads: int | None = None,
    layout: str = "auto",
) -> npt.NDArray[np.int64]: ...

# --- clustering (rust/privtab-py/src/clustering.rs) ---

def randomization_flipping(
    indptr: npt.NDArray[np.int64],
    indices: npt.NDArray[np.uint32],
    n_features: int,
    k: int,
    seed: int | None = None,
    n_threads: int | None = None,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint32], int, int]: ...

# --- anonymity (rust/privtab-py/src/anonymity.rs) ---
def containment_anonymity(
    indptr: npt.NDArray[np.int64],
    indices: npt.NDArray[np.uint32],
    n_features: int,
    features: list[int],
    n_threads: int | None = None,
) -> npt.NDArray[np.int64]: ...
def class_sizes(
    indptr: npt.NDArray[np.int64],
    indices: npt.NDArray[np.uint32],
    n_features: int,
    features: list[int],
    n_threads: int | None = None,
) -> npt.NDArray[np.int64]: ...
def binary_csr_from_dense(
    values: npt.NDArray[np.uint8],
    n_threads: int | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32]] | None: ...

# --- mining (rust/privtab-py/src/mining.rs) ---

def read_transactions(
    path: str | PathLike[str],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.uint32]]: ...
def maximal_sets(
    indptr: npt.NDArray[np.int64],
    indices: npt.NDArray[np.uint32],
    n_items: int,
    predicate: str,
    threshold: int,
    max_sets: int | None = None,
    time_limit: float | None = None,
    n_threads: int | None = None,
    progress: Callable[[float, int, int, int], object] | None = None,
) -> tuple[
    npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.uint64], bool
]: ...

# --- pairwise (rust/privtab-py/src/pairwise.rs) ---

def pairwise_tables(
    columns: npt.NDArray[np.uint32],
    cardinalities: npt.NDArray[np.uint32],
    with_tables: bool = True,
    n_threads: int | None = None,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.float64]]: ...

# Microaggregation ---------------------------------------------------------------------
def individual_ranking_clusters(
    values: npt.NDArray[np.float64], k: int
) -> npt.NDArray[np.uint32]: ...
def microaggregate(
    values: npt.NDArray[np.float64], k: int, mechanism: str, lo: float, hi: float
) -> tuple[
    npt.NDArray[np.uint32], npt.NDArray[np.float64], npt.NDArray[np.float64]
]: ...
def microaggregate_columns(
    columns: npt.NDArray[np.float64],
    k: int,
    mechanism: str,
    bounds: npt.NDArray[np.float64],
    epsilons: npt.NDArray[np.float64],
    seed: int | None = None,
    n_threads: int | None = None,
) -> tuple[npt.NDArray[np.float64], list[npt.NDArray[np.float64]]]: ...

# --- correlation (rust/privtab-py/src/correlation.rs) ---

def pearson_matrix(
    x: npt.NDArray[np.float64], n_threads: int | None = None
) -> npt.NDArray[np.float64]: ...
def filter_correlated_features(
    x: npt.NDArray[np.float64], delta: float, n_threads: int | None = None
) -> npt.NDArray[np.int64]: ...
def correlated_degree_matrix(
    x: npt.NDArray[np.float64], delta: float, n_threads: int | None = None
) -> npt.NDArray[np.float64]: ...
def f_scores(
    x: npt.NDArray[np.float64],
    labels: npt.NDArray[np.uint32],
    n_labels: int,
    n_threads: int | None = None,
) -> npt.NDArray[np.float64]: ...
def feature_importance(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]: ...
def correlated_degrees(
    x: npt.NDArray[np.float64],
    features: Sequence[int],
    record_delta: float,
    n_threads: int | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.uint64]]: ...
