"""Basic differentially private mechanisms: Laplace, discrete Laplace, exponential.

All noise is sampled in the Rust core from ChaCha20 streams. A fixed ``random_state``
is for reproducibility only: anyone who knows it can regenerate, and so subtract, the
noise, which voids the privacy guarantee against them. Leave it ``None`` (fresh
operating-system entropy) for any real release.

Core kernels called: ``privtab._core.laplace_grid`` and ``privtab._core.add_laplace``
(the grid Laplace),
``privtab._core.discrete_laplace_scale`` and ``privtab._core.add_discrete_laplace``
(the discrete Laplace, added with saturation) and
``privtab._core.exponential_mechanism`` (Gumbel-max on log-weights).

References
----------
.. [1] C. Dwork, F. McSherry, K. Nissim and A. Smith, "Calibrating noise to sensitivity
   in private data analysis", TCC 2006.
.. [2] I. Mironov, "On significance of the least significant bits for differential
   privacy", CCS 2012.
.. [3] C. Canonne, G. Kamath and T. Steinke, "The discrete Gaussian for differential
   privacy", NeurIPS 2020.
.. [4] F. McSherry and K. Talwar, "Mechanism design via differential privacy", FOCS 2007.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privtab import _core
from privtab._estimator import PrivateRun
from privtab._random import RandomState, core_seed
from privtab._validation import (
    as_float_array,
    as_int_array,
    check_bool,
    check_epsilon,
    check_positive,
    check_positive_int,
)
from privtab.accountant import BudgetAccountant

__all__ = [
    "discrete_laplace_mechanism",
    "exponential_mechanism",
    "laplace_mechanism",
]


def laplace_mechanism(
    values: Any,
    sensitivity: float,
    epsilon: float,
    *,
    random_state: RandomState = None,
    accountant: BudgetAccountant | None = None,
    label: str | None = None,
) -> Any:
    """Add Laplace noise of scale ``sensitivity / epsilon`` to real values, safely.

    Parameters
    ----------
    values : float or array-like of float, any shape
        The exact answer of a query. Must be finite.
    sensitivity : float
        L1 sensitivity of the query: the largest L1 distance between its answers on
        two neighbouring data sets. Finite and > 0.
    epsilon : float
        Privacy parameter, finite and > 0.
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (the secure default) uses operating-system entropy. A fixed seed makes
        the output reproducible and voids privacy against anyone who knows it.
    accountant : BudgetAccountant, optional
        Charged ``epsilon`` after success (the default accountant when ``None``).
    label : str, optional
        The label of the accountant's ledger entry (default
        ``"laplace_mechanism"``).

    Returns
    -------
    float or numpy.ndarray of float64
        ``values + Laplace(0, sensitivity / epsilon)`` elementwise, on a power-of-two
        grid (see Notes), with the shape of ``values``; a float when ``values`` is a
        scalar.

    Raises
    ------
    BudgetExceededError
        If ``accountant`` cannot afford ``epsilon`` (raised before reading ``values``).
    ValueError
        If ``sensitivity`` or ``epsilon`` is not finite and > 0, or ``values`` holds
        NaN, infinities or a magnitude beyond ``2**80`` times the noise scale (all
        checked before any draw); or, after charging ``epsilon``, if a noisy value
        overflows float64 (values or scales near ``1.8e308``).
    TypeError
        If ``values`` is not numeric, or ``label`` not a str.

    Notes
    -----
    Privacy: ``epsilon``-differential privacy when ``sensitivity`` bounds the query's L1
    sensitivity (Dwork et al. 2006), with no floating-point side channel.
    Textbook noise ``value + scale·Exp·sign`` computed in binary floating point leaks
    the input through the set of reachable doubles (Mironov 2012). privtab
    follows OpenDP's construction instead: the grid step ``g = 2**k`` is the largest
    power of two not above ``scale / 2**40`` (public: it depends on ``sensitivity`` and
    ``epsilon`` only); each value is rounded exactly to the nearest multiple of ``g``;
    exact discrete Laplace noise (integer sampling, Canonne et al. 2020) is added
    in units of ``g``; the double nearest to the result is returned, which is
    post-processing of the released integer. Rounding moves each of the ``m`` values
    by at most ``g/2``, so the noise scale in units is the smallest integer
    ``t ≥ (sensitivity/g + m)/epsilon`` (plus a relative ``2**-48`` margin for its
    own rounding): the release is exactly ``epsilon``-DP, and the noise is larger than
    textbook Laplace by a relative ``m·2**-40`` at most (``1e-5`` for ten million
    values). Outputs are multiples of ``g``. The accountant is charged ``epsilon``.
    For integer-valued queries, :func:`discrete_laplace_mechanism` releases integers.
    The only refusal after the noise is drawn, a noisy value beyond the largest
    double, charges ``epsilon`` and quotes no value.

    Examples
    --------
    >>> import numpy as np
    >>> from privtab import BudgetAccountant, laplace_mechanism
    >>> acc = BudgetAccountant(1.0)
    >>> noisy = laplace_mechanism(
    ...     np.array([10.0, 20.0]), 1.0, 0.5, random_state=0, accountant=acc
    ... )
    >>> noisy.shape, acc.spent
    ((2,), 0.5)
    >>> type(laplace_mechanism(3.0, 1.0, 1.0, random_state=0))
    <class 'float'>
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    run = PrivateRun.start(epsilon, random_state, accountant, label=label)
    array = as_float_array(values, "values")
    flat = array.reshape(-1)
    grid_exponent, _ = _core.laplace_grid(sensitivity, run.epsilon, flat.shape[0])
    _check_on_grid(flat, grid_exponent)
    with run.charged_on_failure("laplace_mechanism"):
        try:
            noisy = _core.add_laplace(flat, sensitivity, run.epsilon, run.seed())
        except ValueError:
            # After the checks above only the noisy values can fail; the core's
            # message would quote the exact value.
            raise ValueError(
                "a noisy value overflows float64 (epsilon was charged): the values "
                "or the noise scale are too close to the largest double"
            ) from None
    run.spend("laplace_mechanism")
    if array.ndim == 0:
        return float(noisy[0])
    return noisy.reshape(array.shape)


def discrete_laplace_mechanism(
    values: Any,
    sensitivity: float,
    epsilon: float,
    *,
    random_state: RandomState = None,
    accountant: BudgetAccountant | None = None,
    label: str | None = None,
) -> Any:
    """Add exact discrete Laplace noise to integer values.

    The noise ``Z`` has ``P(Z = z) ∝ exp(-|z| · epsilon / sensitivity)`` on the
    integers, where ``sensitivity / epsilon`` is the exact ratio of the two floats
    given (every float is a dyadic rational, so the ratio is an exact fraction).

    Parameters
    ----------
    values : int or array-like of int, any shape
        The exact answer of an integer query (counts, histograms). Whole-number floats
        are accepted; the output is int64.
    sensitivity : float
        L1 sensitivity of the query, finite and > 0 (need not be an integer).
    epsilon : float
        Privacy parameter, finite and > 0.
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (the secure default) uses operating-system entropy. A fixed seed makes
        the output reproducible and voids privacy against anyone who knows it.
    accountant : BudgetAccountant, optional
        Charged ``epsilon`` after success (the default accountant when ``None``).
    label : str, optional
        The label of the accountant's ledger entry (default
        ``"discrete_laplace_mechanism"``).

    Returns
    -------
    int or numpy.ndarray of int64
        ``values + Z`` elementwise, saturated to the int64 range (a sum beyond it is
        returned as the nearest int64 bound), with the shape of ``values``; an int when
        ``values`` is a scalar.

    Raises
    ------
    BudgetExceededError
        If ``accountant`` cannot afford ``epsilon`` (raised before reading ``values``).
    ValueError
        If ``sensitivity`` or ``epsilon`` is not finite and > 0 or their exact ratio
        does not fit in 128-bit integers (all raised before the budget check), or
        ``values`` is outside the int64 range; or, after charging ``epsilon``, if a
        noise variate itself leaves the int64 range (scales near ``2**63`` only).
    TypeError
        If ``values`` does not hold integers, or ``label`` is not a str.

    Notes
    -----
    Privacy: ``epsilon``-differential privacy when ``sensitivity`` bounds the query's L1
    sensitivity. Why exact integer sampling: textbook Laplace noise computed in floating
    point leaves gaps and uneven densities among the representable outputs, and Mironov
    (2012) showed that these reveal the true value, breaking differential privacy
    outright. Here the sampler is Algorithm 2 of Canonne, Kamath and Steinke (2020):
    only integer arithmetic, exact Bernoulli(exp(-γ)) trials for rational γ, so the
    output distribution is exactly the stated one.

    No refusal depends on the data and the noise together: the sum ``values + Z`` is
    exact in the integers and saturated to the int64 range afterwards, which is
    post-processing of an ``epsilon``-DP release. Whether a refusal happens otherwise
    depends on the public parameters alone (before the budget check), on ``values``
    alone (its validation, which quotes the offending value), or on the noise alone,
    which is charged.

    Examples
    --------
    >>> from privtab import discrete_laplace_mechanism
    >>> noisy = discrete_laplace_mechanism([5, 0, 12], 1.0, 1.0, random_state=1)
    >>> noisy.dtype, noisy.shape
    (dtype('int64'), (3,))
    >>> type(discrete_laplace_mechanism(7, 1.0, 1.0, random_state=1))
    <class 'int'>
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    # The exact scale depends on the two parameters only: refused before the budget.
    _core.discrete_laplace_scale(sensitivity, check_epsilon(epsilon))
    run = PrivateRun.start(epsilon, random_state, accountant, label=label)
    array = as_int_array(values, "values")
    return add_discrete_laplace(run, array, sensitivity, "discrete_laplace_mechanism")


def add_discrete_laplace(
    run: PrivateRun, values: np.ndarray, sensitivity: float, label: str
) -> Any:
    """Add the noise of :func:`discrete_laplace_mechanism` in a run cleared already.

    ``values`` are int64 (validated); the run is charged under ``label`` (or the
    caller's own). For releases that compute their integer query themselves after
    :meth:`PrivateRun.start` (the query's sensitivity and scale checked before it).
    """
    flat = np.ascontiguousarray(values.reshape(-1))
    with run.charged_on_failure(label):
        # Each sum beyond the int64 range saturates at its bound, in the core's pass.
        noisy = _core.add_discrete_laplace(flat, sensitivity, run.epsilon, run.seed())
    run.spend(label)
    if values.ndim == 0:
        return int(noisy[0])
    return noisy.reshape(values.shape)


def exponential_mechanism(
    scores: Any,
    sensitivity: float,
    epsilon: float,
    *,
    size: int = 1,
    replace: bool = False,
    random_state: RandomState = None,
    accountant: BudgetAccountant | None = None,
    label: str | None = None,
) -> np.ndarray:
    """Choose indices with probability ∝ ``exp(epsilon · score / (2 · sensitivity))``.

    Parameters
    ----------
    scores : array-like of float, shape (n_candidates,)
        Utility of each candidate; finite, any magnitude (``±1e300`` works).
    sensitivity : float
        Sensitivity of the utility: the largest change of any candidate's score between
        neighbouring data sets. Finite and > 0.
    epsilon : float
        Privacy parameter of one draw, finite and > 0.
    size : int, default=1
        Number of indices to draw.
    replace : bool, default=False
        ``False``: ``size`` distinct indices, as successive draws each ∝ the weights of
        the candidates not yet chosen, listed in the order drawn. ``True``: ``size``
        independent draws.
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` (the secure default) uses operating-system entropy. A fixed seed makes
        the output reproducible and voids privacy against anyone who knows it.
    accountant : BudgetAccountant, optional
        Charged ``size * epsilon`` after success (the default accountant when ``None``).
    label : str, optional
        The label of the accountant's ledger entry (default
        ``"exponential_mechanism"``, with the number of draws when ``size > 1``).

    Returns
    -------
    numpy.ndarray of int64, shape (size,)
        The chosen indices into ``scores``.

    Raises
    ------
    BudgetExceededError
        If ``accountant`` cannot afford ``size * epsilon`` (raised before reading
        ``scores``).
    ValueError
        If ``sensitivity`` or ``epsilon`` is not finite and > 0, ``size`` < 1,
        ``scores`` is empty, not 1-D or not finite, or ``size`` exceeds the number of
        candidates without replacement.
    TypeError
        If ``size`` is not an int, ``replace`` not a bool, ``scores`` not numeric or
        ``label`` not a str.

    Notes
    -----
    Privacy: each draw is ``epsilon``-differentially private (McSherry and Talwar 2007);
    ``size`` draws cost ``size * epsilon`` by sequential composition, with or without
    replacement.

    Implementation: the Gumbel-max trick. With log-weights
    ``w_i = (s_i - max(s)) · epsilon / (2 · sensitivity)`` and independent standard
    Gumbel variates ``G_i``, ``argmax_i (w_i + G_i)`` is a draw ∝ ``exp(w_i)``, and the
    ``size`` largest ``w_i + G_i`` in decreasing order are ``size`` successive draws
    without replacement. No exponential is evaluated, so no score range overflows.
    A candidate whose log-weight is more than about 40 below the best one (relative
    weight below 3e-18) is never drawn before it.

    Examples
    --------
    >>> from privtab import exponential_mechanism
    >>> chosen = exponential_mechanism([1.0, 5.0, 2.0], 1.0, 1.0, size=2, random_state=0)
    >>> chosen.dtype, chosen.shape, len(set(chosen.tolist()))
    (dtype('int64'), (2,), 2)
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    size = check_positive_int(size, "size")
    replace = check_bool(replace, "replace")
    run = PrivateRun.start(size * epsilon, random_state, accountant, label=label)
    array = as_float_array(scores, "scores")
    if array.ndim != 1:
        raise ValueError(f"scores must be 1-dimensional, got {array.ndim} dimension(s)")
    if array.shape[0] == 0:
        raise ValueError("scores must be non-empty")
    if not replace and size > array.shape[0]:
        raise ValueError(
            f"size must be <= the number of candidates ({array.shape[0]}) when "
            f"replace=False, got {size}"
        )
    factor = epsilon / (2.0 * sensitivity)
    generator = run.random_state
    if replace:
        try:
            chosen = _core.exponential_mechanism(
                _log_weights(array, factor), size, True, _next_seed(generator)
            )
        except (MemoryError, OverflowError) as exc:
            raise MemoryError(f"size = {size} draws cannot be allocated") from exc
    else:
        chosen = _successive_draws(array, factor, size, generator)
    draws = "draw" if size == 1 else "draws"
    how = "with" if replace else "without"
    default_label = "exponential_mechanism"
    if size > 1:
        default_label += f" ({size} {draws} {how} replacement)"
    run.spend(default_label)
    return chosen


#: The core's grid Laplace takes values below 2**120 grid steps (the integer it adds
#: its noise to stays far inside 128 bits).
_MAX_GRID_UNITS_BITS = 120


def _check_on_grid(values: np.ndarray, grid_exponent: int) -> None:
    """Refuse, before any draw, values of 2**120 grid steps ``2**grid_exponent`` or more."""
    if values.size == 0:
        return
    largest = max(-float(values.min()), float(values.max()))
    if math.frexp(largest)[1] > grid_exponent + _MAX_GRID_UNITS_BITS:
        raise ValueError(
            f"values has a value of magnitude {largest:e}, too large for noise of grid "
            f"step 2^{grid_exponent}: |value| must stay below "
            f"2^{_MAX_GRID_UNITS_BITS} grid steps"
        )


def _log_weights(scores: np.ndarray, factor: float) -> np.ndarray:
    """``(scores - max) * factor``: the best candidates get log-weight 0.

    Overflow only pushes hopeless candidates to ``-inf``; ``0 * inf`` (an infinite
    factor) is a best candidate's 0.
    """
    with np.errstate(all="ignore"):
        log_weights = (scores - scores.max()) * factor
    log_weights[np.isnan(log_weights)] = 0.0
    return log_weights


def _next_seed(generator: np.random.Generator | None) -> int | None:
    return None if generator is None else core_seed(generator)


def _successive_draws(
    scores: np.ndarray, factor: float, size: int, generator: np.random.Generator | None
) -> np.ndarray:
    """``size`` draws without replacement.

    One Gumbel top-k call suffices unless some log-weights are ``-inf`` relative to the
    best candidate; those can only come after every finite one, and are then drawn by
    the same mechanism on the candidates left (with their own maximum as reference).
    """
    remaining = np.arange(scores.shape[0])
    parts = []
    needed = size
    while needed:
        log_weights = _log_weights(scores[remaining], factor)
        take = min(needed, int(np.isfinite(log_weights).sum()))
        picked = _core.exponential_mechanism(
            log_weights, take, False, _next_seed(generator)
        )
        parts.append(remaining[picked])
        remaining = np.delete(remaining, picked)
        needed -= take
    return np.concatenate(parts).astype(np.int64, copy=False)
