"""Random-state handling shared by every randomized function.

A fixed ``random_state`` is for reproducibility only: anyone who knows the seed can
reproduce, and so subtract, the noise. Leave it ``None`` (operating-system entropy, the
secure default) for any real release.

Core kernels called: none; the seeds drawn here are handed to the ``privtab._core``
samplers as ``Option<u64>``.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["RandomState", "check_random_state", "core_seed"]

RandomState = int | np.random.Generator | np.random.SeedSequence | None

_U64 = np.iinfo(np.uint64)


def check_random_state(random_state: RandomState) -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` draws fresh operating-system entropy; an ``int`` (>= 0) or a
        ``SeedSequence`` gives a reproducible generator; a ``Generator`` is returned as
        it is, so successive calls advance it.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    TypeError
        If ``random_state`` has another type (``bool`` included).
    ValueError
        If an integer seed is negative.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(
        random_state, bool | np.bool_
    ):
        if int(random_state) < 0:
            raise ValueError(
                f"random_state must be a non-negative int, got {random_state}"
            )
        return np.random.default_rng(int(random_state))
    raise TypeError(
        "random_state must be None, an int, a numpy.random.Generator or a "
        f"numpy.random.SeedSequence, got {type(random_state).__name__}"
    )


def core_seed(random_state: RandomState) -> int | None:
    """Draw the 64-bit seed handed to a Rust kernel, or ``None`` for OS entropy.

    ``None`` stays ``None`` so the core reads its ChaCha20 key from the operating system
    directly on every call, without passing through NumPy's generator: no generator
    state is kept, so processes forked from one parent draw keys of their own.
    """
    if random_state is None:
        return None
    generator = check_random_state(random_state)
    return int(generator.integers(0, _U64.max, dtype=np.uint64, endpoint=True))
