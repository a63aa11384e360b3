"""The auditor: a statistically valid lower bound on the ε of a mechanism.

Core kernels called: none directly; the audited mechanism calls its own.

References
----------
.. [1] Z. Ding, Y. Wang, G. Wang, D. Zhang and D. Kifer, "Detecting violations of
   differential privacy", CCS 2018.
.. [2] M. Jagielski, J. Ullman and A. Oprea, "Auditing differentially private machine
   learning: how private is private SGD?", NeurIPS 2020.
.. [3] B. Bichsel, S. Steffen, I. Bogunovic and M. Vechev, "DP-Sniper: black-box
   discovery of differential privacy violations using classifiers", IEEE S&P 2021.
.. [4] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits
   illustrated in the case of the binomial", Biometrika 26(4), 1934.
.. [5] I. Mironov, "On significance of the least significant bits for differential
   privacy", CCS 2012.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sklearn.base import clone

from privtab._random import RandomState, check_random_state
from privtab._validation import check_bool, check_epsilon, check_positive_int
from privtab.accountant import BudgetAccountant
from privtab.audit._events import (
    FAMILIES,
    FAMILY_NAMES,
    Event,
    Features,
    as_column,
    build_features,
    clopper_pearson,
    epsilon_bound,
    select_events,
)

__all__ = ["MIN_RUNS", "AuditResult", "FamilyBound", "audit_mechanism"]

#: The fewest runs per side an audit accepts (half of them select the event).
MIN_RUNS = 200
#: Runs per task when ``batch_size`` is not given: one call of a vectorised
#: mechanism, or this many calls of a plain one.
DEFAULT_BATCH = {True: 100_000, False: 250}
_SEED_BOUND = 2**63


@dataclass(frozen=True)
class FamilyBound:
    """The bound one family of events found, within an :class:`AuditResult`.

    Attributes
    ----------
    family : str
        ``"threshold"``, ``"outcomes"`` or ``"reachable"``.
    epsilon_lower : float
        The best bound of the family's tested events, at the audit's confidence
        (jointly with the other families' bounds).
    event : str
        The event behind ``epsilon_lower``.
    counts : tuple of int
        Held-out runs in the event, on the data set and on its neighbour.

    Examples
    --------
    >>> bound = FamilyBound("reachable", 6.2, "P[lowest set bit in {2^-53}] on "
    ...                     "data / on neighbour", (812, 0))
    >>> bound.name
    'floating-point side channel (Mironov 2012)'
    >>> bound.summary(1.0)
    'floating-point side channel (Mironov 2012): ε_lower 6.2 > 1'
    """

    family: str
    epsilon_lower: float
    event: str
    counts: tuple[int, int]

    @property
    def name(self) -> str:
        """The kind of violation the family detects, in plain words."""
        return FAMILY_NAMES[self.family]

    def summary(self, epsilon_claimed: float) -> str:
        """``"<name>: ε_lower <bound> <sign> <claimed ε>"``."""
        sign = "<=" if self.epsilon_lower <= epsilon_claimed else ">"
        return (
            f"{self.name}: ε_lower {self.epsilon_lower:.3g} {sign} {epsilon_claimed:g}"
        )


@dataclass(frozen=True)
class AuditResult:
    """The outcome of :func:`audit_mechanism`.

    Attributes
    ----------
    epsilon_lower : float
        A lower bound on the ε of the mechanism that holds with probability at least
        ``confidence`` (0 when no event separates the two data sets).
    epsilon_claimed : float
        The ε the mechanism claims.
    confidence : float
        The confidence level of ``epsilon_lower``.
    runs : int
        Runs per data set (half select the event, half test it).
    event : str
        The event behind ``epsilon_lower``, and the direction of the ratio, e.g.
        ``"P[statistic > 1] on data / on neighbour"``.
    family : str
        ``"threshold"``, ``"outcomes"``, ``"reachable"``, or ``"none"``.
    counts : tuple of int
        Held-out runs in the event, on the data set and on its neighbour.
    held_out : tuple of int
        Held-out runs on the data set and on its neighbour.
    probabilities : tuple of tuple of float
        The Clopper–Pearson interval ``(lower, upper)`` of the event's probability on
        the data set and on its neighbour, each at the Bonferroni-corrected level.
    events_tested : int
        The number of events tested on the held-out runs, over every family (the
        Bonferroni factor).
    by_family : tuple of FamilyBound
        The best bound of each family that proposed an event, largest first: which
        kinds of violation the pair shows, and how large each is. ``epsilon_lower``,
        ``event`` and ``family`` are those of the first.

    Examples
    --------
    >>> result = AuditResult(0.97, 1.0, 0.95, 10_000, "P[statistic > 1] on data / "
    ...                      "on neighbour", "threshold", (2500, 950), (5000, 5000),
    ...                      ((0.48, 0.52), (0.18, 0.2)), 1)
    >>> result.passed
    True
    """

    epsilon_lower: float
    epsilon_claimed: float
    confidence: float
    runs: int
    event: str
    family: str
    counts: tuple[int, int]
    held_out: tuple[int, int]
    probabilities: tuple[tuple[float, float], tuple[float, float]]
    events_tested: int
    by_family: tuple[FamilyBound, ...] = ()

    @property
    def passed(self) -> bool:
        """Whether ``epsilon_lower <= epsilon_claimed`` (no violation found)."""
        return self.epsilon_lower <= self.epsilon_claimed

    @property
    def verdict(self) -> str:
        """One line: the bound, the claim, what it means and the bound of each kind.

        A violation names its kind (``"floating-point side channel (Mironov
        2012)"``), and every family searched gives its own bound (``"noise scale:
        ε_lower 1.96 > 1"``), so that a floating-point violation does not hide the
        size of a scale error, nor the reverse.
        """
        sign = "<=" if self.passed else ">"
        finding = "consistent with the claim"
        if not self.passed:
            finding = "VIOLATION: the privacy loss on this pair exceeds the claimed ε"
            if self.family in FAMILY_NAMES:
                finding += f" through the {FAMILY_NAMES[self.family]}"
        kinds = "; ".join(b.summary(self.epsilon_claimed) for b in self.by_family)
        return (
            f"ε_lower = {self.epsilon_lower:.4f} {sign} claimed ε = "
            f"{self.epsilon_claimed:g} at {self.confidence:.4g} confidence "
            f"({self.runs} runs per side; {self.event}): {finding}"
            + (f". By kind: {kinds}" if kinds else "")
        )

    def __str__(self) -> str:
        return self.verdict


@dataclass(frozen=True)
class _Runner:
    """Runs a batch of one side; pickled to the worker processes."""

    mechanism: Any
    statistic: Callable[[Any], Any] | None
    fit_params: dict[str, Any]
    vectorized: bool
    estimator: bool

    def run(self, data: Any, seed: np.random.SeedSequence, size: int) -> Any:
        rng = np.random.default_rng(seed)
        if self.vectorized:
            state = int(rng.integers(0, _SEED_BOUND))
            outputs = self.mechanism(data, state, size)
            if (
                self.statistic is None
                and isinstance(outputs, np.ndarray)
                and outputs.shape[:1] == (size,)
            ):
                return as_column(outputs)
            if len(outputs) != size:
                raise ValueError(
                    f"a vectorized mechanism must return size={size} outputs, got "
                    f"{len(outputs)}"
                )
            return as_column([self._statistic(o) for o in outputs])
        states = rng.integers(0, _SEED_BOUND, size=size).tolist()
        return as_column([self._statistic(self._once(data, s)) for s in states])

    def _statistic(self, output: Any) -> Any:
        return output if self.statistic is None else self.statistic(output)

    def _once(self, data: Any, state: int) -> Any:
        if not self.estimator:
            return self.mechanism(data, state)
        model = clone(self.mechanism)
        params = model.get_params(deep=False)
        updates: dict[str, Any] = {}
        if "random_state" in params:
            updates["random_state"] = state
        if "accountant" in params:
            updates["accountant"] = BudgetAccountant()
        model.set_params(**updates)
        args = data if isinstance(data, tuple) else (data,)
        fitted = model.fit(*args, **self.fit_params)
        return model if fitted is None else fitted


def _root_sequence(random_state: RandomState) -> np.random.SeedSequence:
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(
            random_state.integers(0, _SEED_BOUND, size=4).tolist()
        )
    check_random_state(random_state)  # type and sign errors name random_state
    return np.random.SeedSequence(int(random_state))


def _check_confidence(confidence: Any) -> float:
    if isinstance(confidence, bool | np.bool_) or not isinstance(
        confidence, numbers.Real
    ):
        raise TypeError(
            f"confidence must be a real number, got {type(confidence).__name__}"
        )
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(confidence)


def _check_families(events: Any) -> tuple[str, ...]:
    if isinstance(events, str):
        events = FAMILIES if events == "auto" else (events,)
    try:
        chosen = tuple(events)
    except TypeError:
        raise TypeError(
            f"events must be 'auto', a family name or a sequence of them, got "
            f"{type(events).__name__}"
        ) from None
    unknown = [e for e in chosen if e not in FAMILIES]
    if unknown or not chosen:
        raise ValueError(
            f"events must be 'auto' or among {', '.join(map(repr, FAMILIES))}, got "
            f"{events!r}"
        )
    return chosen


def _is_estimator(mechanism: Any) -> bool:
    return hasattr(mechanism, "fit") and hasattr(mechanism, "get_params")


def audit_mechanism(
    mechanism: Any,
    data: Any,
    neighbour: Any,
    *,
    epsilon: float,
    statistic: Callable[[Any], Any] | None = None,
    runs: int = 100_000,
    confidence: float = 0.95,
    events: str | Sequence[str] = "auto",
    max_events: int = 1,
    exact: tuple[Any, Any] | None = None,
    vectorized: bool = False,
    fit_params: dict[str, Any] | None = None,
    batch_size: int | None = None,
    n_jobs: int | None = None,
    random_state: RandomState = None,
) -> AuditResult:
    """Estimate a lower bound on the ε of a mechanism from two neighbouring data sets.

    The mechanism runs ``runs`` times on ``data`` and ``runs`` times on ``neighbour``.
    On the first half of the runs of each side the auditor chooses an output event
    ``E`` and a direction; on the held-out second half it bounds
    ``ln(P_data[E] / P_neighbour[E])`` (or the reverse) from below with exact
    Clopper–Pearson intervals. An ε-DP mechanism has this log-ratio at most ε for
    every event, so ``epsilon_lower > epsilon`` shows, at the stated confidence, that
    the mechanism is not ε-DP.

    Parameters
    ----------
    mechanism : callable or estimator
        Either a callable ``mechanism(data_set, random_state)`` returning one output
        (``mechanism(data_set, random_state, size)`` returning ``size`` independent
        outputs when ``vectorized=True``), or an unfitted estimator (anything with
        ``fit`` and ``get_params``): each run fits a clone with its own
        ``random_state`` and a fresh unlimited :class:`~privtab.BudgetAccountant`,
        calling ``fit(*data_set, **fit_params)`` when the data set is a tuple (e.g.
        ``(X, y)``) and ``fit(data_set, **fit_params)`` otherwise. Each run gets its
        own ``random_state``, a non-negative int below ``2**63``.
    data, neighbour : any
        The two neighbouring data sets, passed to ``mechanism`` as they are (see
        :mod:`privtab.audit.pairs`).
    epsilon : float
        The ε the mechanism claims, finite and > 0.
    statistic : callable, optional
        Maps one output (for an estimator: the fitted estimator) to what the events
        read: a real number (threshold events), a discrete outcome (an int, a str, a
        tuple; outcome-set events) or an array of floats (reachable-set events).
        Default: the output itself. It is required for estimators.
    runs : int, default=100_000
        Runs per data set, at least :data:`MIN_RUNS`.
    confidence : float, default=0.95
        The probability, in (0, 1), that ``epsilon_lower`` is below the true ε; so a
        correct mechanism is wrongly flagged with probability at most
        ``1 - confidence``.
    events : "auto", str or sequence of str, default="auto"
        The event families to search: ``"threshold"`` (``statistic > t`` and
        ``statistic <= t`` for thresholds ``t`` at quantiles of the selection half),
        ``"outcomes"`` (sets of discrete outcomes: the prefixes of the outcomes
        sorted by their likelihood ratio), ``"reachable"`` (floating-point outputs
        never producible on the other side: sets of lowest-set-bit exponents, and, with
        ``exact``, the outputs that fail the round trip ``fl(fl(o − x) + x) == o``
        through the other side's exact value ``x``). ``"auto"``: every family that
        applies to the statistic's values. Each family searched gets its own bound
        (``by_family`` of the result): a threshold bound measures the noise scale
        against the claimed ε, a reachable-set bound the floating-point side channel
        (Mironov 2012), which can be large whatever the scale.
    max_events : int, default=1
        How many of the best events of the selection half are tested on the held-out
        half, per family that proposes one; the Bonferroni correction divides
        ``1 - confidence`` by ``2·max_events·f`` (two one-sided bounds per event,
        ``f`` families tested).
    exact : (value_on_data, value_on_neighbour), optional
        The noise-free values of the statistic on both data sets, for the round-trip
        test of the reachable-set family.
    vectorized : bool, default=False
        Whether ``mechanism`` takes a third argument ``size`` and returns ``size``
        independent outputs in one call (a sequence, or an array whose first axis is
        the run).
    fit_params : dict, optional
        Keyword arguments of ``fit`` for an estimator.
    batch_size : int, optional
        Runs per task (default 100,000 for a vectorised mechanism, 250 otherwise). The
        seeds depend on it, not on ``n_jobs``.
    n_jobs : int, optional
        Worker processes (joblib); ``None`` or 1 runs in this process, -1 uses every
        core. The result does not depend on it.
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        Seeds the audit: the runs of the two sides get independent seeds spawned from
        one :class:`numpy.random.SeedSequence`, so a seed gives the same result for any
        ``n_jobs``. ``None`` draws fresh entropy.

    Returns
    -------
    AuditResult
        ``epsilon_lower`` (the largest bound of all families), the event and its
        held-out counts, the bound of each family (``by_family``), the confidence
        and a one-line ``verdict`` against ``epsilon`` that names each kind of
        violation and its bound.

    Raises
    ------
    ValueError
        If ``epsilon`` is not finite and > 0, ``runs`` < :data:`MIN_RUNS`,
        ``confidence`` is not in (0, 1), ``events`` names an unknown family, a
        vectorised mechanism returns the wrong number of outputs, or ``statistic`` is
        missing for an estimator.
    TypeError
        If ``mechanism`` is neither callable nor an estimator, ``statistic`` is not
        callable, or an argument has the wrong type.

    Notes
    -----
    **Validity.** The event is chosen on runs that are not used to bound it, so the
    held-out counts are plain binomial draws. For each tested event the lower
    Clopper–Pearson bound of the numerator's probability and the upper bound of the
    denominator's each hold with probability ``1 - α``, ``α = (1 - confidence) /
    (2·max_events·f)`` with ``f`` the number of families that proposed an event on
    the selection half; then ``ln(lower / upper)`` is below the true log-ratio, itself
    at most the true ε, for every tested event at once with probability at least
    ``confidence`` (Bonferroni). So the bound of every family, and their maximum
    ``epsilon_lower``, hold together. This is the hypothesis test of Ding et al. (2018)
    with the Clopper–Pearson bounds of Jagielski et al. (2020); the event is
    searched as in DP-Sniper (Bichsel et al. 2021: thresholds on a statistic), over
    sets of outcomes, and over the floating-point outputs one side cannot produce
    (Mironov 2012).

    **Power: how many runs.** The bound falls short of the event's true log-ratio by
    about ``z·(sqrt((1 − p_a)/(h·p_a)) + sqrt((1 − p_b)/(h·p_b)))`` for event
    probabilities ``p_a > p_b`` and ``h = runs/2`` held-out runs, ``z`` the normal
    quantile at ``α``. For ε = 1 Laplace noise on a query moved by its sensitivity,
    the best event has ``p_a = 1/2``, ``p_b = e^-1/2`` and the shortfall is about
    ``9/sqrt(runs)`` at 95 % with one family tested, ``10/sqrt(runs)`` with the two
    that apply to floating-point outputs (``22/sqrt(runs)`` at ``1 - 1e-6``).
    Measured with ``events="auto"``, mean of 5 seeds: ε_lower = 0.92 with 10^4 runs
    per side, 0.97 with 10^5 and 0.99 with 10^6 at 95 %; 0.79, 0.93 and 0.98 at
    ``1 - 1e-6``.
    An event of probability ``p`` needs
    ``runs`` well above ``1/p``; vectorised mechanisms make 10^6 runs cheap.

    **Scope.** The bound is for the two data sets given: a mechanism can pass on one
    pair and fail on another, so audit the pairs that stress it
    (:mod:`privtab.audit.pairs`). It checks pure ε-DP (δ = 0). For ε-individual DP,
    ``data`` is the actual data set and ``neighbour`` one of its neighbours, and the
    mechanism run on the neighbour must keep the calibration (noise scale) it has on
    the actual data set: a release that recalibrates on each input, such as
    :class:`~privtab.MicroaggregationMasker`, is audited faithfully only on pairs where
    both calibrations agree (:func:`privtab.audit.pairs.local_sensitivity_extremes`).

    Examples
    --------
    >>> import numpy as np
    >>> import privtab as pt
    >>> from privtab.audit import audit_mechanism
    >>> def noisy_sums(x, seed, size):
    ...     return pt.laplace_mechanism(np.full(size, x.sum()), 1.0, 1.0,
    ...                                 random_state=seed,
    ...                                 accountant=pt.BudgetAccountant())
    >>> result = audit_mechanism(noisy_sums, np.zeros(10), np.r_[np.zeros(9), 1.0],
    ...                          epsilon=1.0, runs=20_000, vectorized=True,
    ...                          random_state=0)
    >>> result.passed, 0.8 < result.epsilon_lower <= 1.0
    (True, True)
    """
    claimed = check_epsilon(epsilon)
    runs = check_positive_int(runs, "runs")
    if runs < MIN_RUNS:
        raise ValueError(f"runs must be >= {MIN_RUNS}, got {runs}")
    level = _check_confidence(confidence)
    families = _check_families(events)
    max_events = check_positive_int(max_events, "max_events")
    vectorized = check_bool(vectorized, "vectorized")
    estimator = _is_estimator(mechanism)
    if not estimator and not callable(mechanism):
        raise TypeError(
            "mechanism must be a callable or an estimator with fit and get_params, "
            f"got {type(mechanism).__name__}"
        )
    if estimator and vectorized:
        raise ValueError("vectorized=True needs a callable mechanism, not an estimator")
    if statistic is not None and not callable(statistic):
        raise TypeError(f"statistic must be callable, got {type(statistic).__name__}")
    if estimator and statistic is None:
        raise ValueError(
            "statistic is required for an estimator: it maps the fitted estimator to "
            "the output the events read"
        )
    if fit_params is not None and not isinstance(fit_params, dict):
        raise TypeError(f"fit_params must be a dict, got {type(fit_params).__name__}")
    if exact is not None and (not isinstance(exact, tuple) or len(exact) != 2):
        raise ValueError(
            f"exact must be a pair (value_on_data, value_on_neighbour), got {exact!r}"
        )
    size = DEFAULT_BATCH[vectorized] if batch_size is None else batch_size
    size = check_positive_int(size, "batch_size")
    jobs = 1 if n_jobs is None else int(n_jobs)
    if isinstance(n_jobs, bool) or jobs == 0 or jobs < -1:
        raise ValueError(f"n_jobs must be None, -1 or an int >= 1, got {n_jobs!r}")
    root = _root_sequence(random_state)

    runner = _Runner(
        mechanism, statistic, dict(fit_params or {}), vectorized, estimator
    )
    columns = _run_both(runner, (data, neighbour), runs, size, jobs, root)
    sides = build_features(columns, exact)
    half = runs // 2
    selection_alpha = (1.0 - level) / (2.0 * max_events * len(families))
    chosen = {
        family: found
        for family in families
        if (
            found := select_events(
                sides, slice(0, half), (family,), selection_alpha, max_events
            )
        )
    }
    alpha = (1.0 - level) / (2.0 * max_events * max(1, len(chosen)))
    per_family = [
        _held_out_result(sides, found, slice(half, runs), alpha, claimed, level, runs)
        for found in chosen.values()
    ]
    if not per_family:
        return _held_out_result(
            sides, [], slice(half, runs), alpha, claimed, level, runs
        )
    ranked = sorted(per_family, key=lambda r: -r.epsilon_lower)
    return replace(
        ranked[0],
        events_tested=sum(r.events_tested for r in per_family),
        by_family=tuple(
            FamilyBound(r.family, r.epsilon_lower, r.event, r.counts) for r in ranked
        ),
    )


def _run_both(
    runner: _Runner,
    data_sets: tuple[Any, Any],
    runs: int,
    size: int,
    jobs: int,
    root: np.random.SeedSequence,
) -> tuple[Any, Any]:
    sizes = [size] * (runs // size) + ([runs % size] if runs % size else [])
    tasks = []
    for side, side_seed in enumerate(root.spawn(2)):
        for batch_seed, batch in zip(side_seed.spawn(len(sizes)), sizes, strict=True):
            tasks.append((side, batch_seed, batch))
    if jobs == 1 or len(tasks) == 1:
        results = [runner.run(data_sets[side], seed, n) for side, seed, n in tasks]
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=jobs)(
            delayed(runner.run)(data_sets[side], seed, n) for side, seed, n in tasks
        )
    per_side: list[list[Any]] = [[], []]
    for (side, _, _), result in zip(tasks, results, strict=True):
        per_side[side].append(result)
    return _concatenate(per_side[0]), _concatenate(per_side[1])


def _concatenate(parts: list[Any]) -> Any:
    if all(isinstance(p, np.ndarray) for p in parts):
        shapes = {p.shape[1:] for p in parts}
        if len(shapes) == 1:
            return np.concatenate(parts)
    merged: list[Any] = []
    for part in parts:
        merged.extend(part.tolist() if isinstance(part, np.ndarray) else part)
    return as_column(merged)


def _held_out_result(
    sides: tuple[Features, Features],
    chosen: list[Event],
    runs: slice,
    alpha: float,
    claimed: float,
    level: float,
    n_runs: int,
) -> AuditResult:
    n_data = len(range(*runs.indices(sides[0].n_runs)))
    n_neighbour = len(range(*runs.indices(sides[1].n_runs)))
    best: AuditResult | None = None
    for event in chosen:
        counts = (event.count(sides[0], runs), event.count(sides[1], runs))
        sizes = (n_data, n_neighbour)
        num, den = event.numerator, 1 - event.numerator
        bound = float(
            epsilon_bound(counts[num], sizes[num], counts[den], sizes[den], alpha)
        )
        low, high = clopper_pearson(list(counts), list(sizes), alpha)
        directions = ("data", "neighbour")
        result = AuditResult(
            epsilon_lower=max(0.0, bound) if math.isfinite(bound) else 0.0,
            epsilon_claimed=claimed,
            confidence=level,
            runs=n_runs,
            event=(
                f"P[{event.description}] on {directions[num]} / on {directions[den]}"
            ),
            family=event.family,
            counts=counts,
            held_out=sizes,
            probabilities=(
                (float(low[0]), float(high[0])),
                (float(low[1]), float(high[1])),
            ),
            events_tested=len(chosen),
        )
        if best is None or result.epsilon_lower > best.epsilon_lower:
            best = result
    if best is None:
        return AuditResult(
            0.0,
            claimed,
            level,
            n_runs,
            "no event had a positive count on the selection half",
            "none",
            (0, 0),
            (n_data, n_neighbour),
            ((0.0, 1.0), (0.0, 1.0)),
            0,
        )
    return best
