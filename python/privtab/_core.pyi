# Type stubs of the Rust extension module privtab._core (checked by mypy.stubtest).
# Arrays are numpy arrays; see the Python wrappers for the documented public API.

import numpy as np
import numpy.typing as npt

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
    scale: float,
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

# --- encode (rust/privtab-py/src/encode.rs) ---

# --- counts (rust/privtab-py/src/counts.rs) ---

# --- partition (rust/privtab-py/src/partition.rs) ---
