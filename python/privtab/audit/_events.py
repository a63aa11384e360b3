"""Output events of an audit and the Clopper–Pearson bound on the privacy loss they show.

An audit sees the outputs of a mechanism on two neighbouring data sets. It turns them
into *features* (a real statistic, a discrete outcome, a floating-point fingerprint),
proposes events on a selection half of the runs (:func:`select_events`), and bounds
``ln(P_a[E] / P_b[E])`` from below on the held-out half (:func:`epsilon_bound`).

Core kernels called: none (NumPy and ``scipy.stats.beta``).

References
----------
.. [1] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits
   illustrated in the case of the binomial", Biometrika 26(4), 1934.
.. [2] I. Mironov, "On significance of the least significant bits for differential
   privacy", CCS 2012.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

__all__ = [
    "FAMILIES",
    "FAMILY_NAMES",
    "Event",
    "Features",
    "clopper_pearson",
    "epsilon_bound",
    "select_events",
]

#: The kinds of event an audit can search, in the order they are tried.
FAMILIES: tuple[str, ...] = ("threshold", "outcomes", "reachable")
#: What a violation found by each family is, in plain words: thresholds on the
#: statistic measure how far apart its distributions are (a noise scale too small
#: for the sensitivity), sets of outcomes the same for discrete outputs, and
#: floating-point outputs one side cannot produce the side channel of Mironov (2012).
FAMILY_NAMES: dict[str, str] = {
    "threshold": "noise scale",
    "outcomes": "outcome frequencies",
    "reachable": "floating-point side channel (Mironov 2012)",
}

#: Quantile levels of the selection half tried as thresholds: a regular grid plus both
#: tails on a log scale, where a rare event can carry a large likelihood ratio.
_TAIL = np.geomspace(1e-5, 5e-3, 24)
THRESHOLD_LEVELS = np.unique(
    np.concatenate([_TAIL, np.linspace(5e-3, 1 - 5e-3, 199), 1.0 - _TAIL])
)
#: The outcome family is searched only when the selection half has at most this many
#: distinct outcomes and at least ``OUTCOME_MIN_RUNS_PER_VALUE`` runs per outcome on
#: average; with more, the outcomes of one half rarely recur in the other.
MAX_OUTCOMES = 4096
OUTCOME_MIN_RUNS_PER_VALUE = 10
_OUTCOME_PROBE = 20_000
#: Feature value of a zero (or non-finite) output in the lowest-set-bit fingerprint.
_NO_SET_BIT = np.iinfo(np.int64).max


def clopper_pearson(
    successes: Any, trials: Any, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper–Pearson bounds of binomial proportions.

    Parameters
    ----------
    successes, trials : array-like of int
        Event counts ``k`` and run counts ``n`` (``0 <= k <= n``, ``n >= 1``).
    alpha : float
        Each bound fails with probability at most ``alpha``, in (0, 1).

    Returns
    -------
    lower, upper : ndarray of float
        ``P[p >= lower] >= 1 - alpha`` and ``P[p <= upper] >= 1 - alpha`` (exact
        binomial tail inversion, Clopper and Pearson 1934); ``lower = 0`` when
        ``k = 0`` and ``upper = 1`` when ``k = n``.

    Examples
    --------
    >>> lower, upper = clopper_pearson([0, 50], [100, 100], 0.025)
    >>> float(lower[0]), round(float(upper[0]), 4)
    (0.0, 0.0362)
    >>> round(float(lower[1]), 4), round(float(upper[1]), 4)
    (0.3983, 0.6017)
    """
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(k > 0, stats.beta.ppf(alpha, k, n - k + 1), 0.0)
        upper = np.where(k < n, stats.beta.ppf(1.0 - alpha, k + 1, n - k), 1.0)
    return np.nan_to_num(lower, nan=0.0), np.nan_to_num(upper, nan=1.0)


def epsilon_bound(
    count_num: Any, runs_num: Any, count_den: Any, runs_den: Any, alpha: float
) -> np.ndarray:
    """Lower confidence bound on ``ln(P_num[E] / P_den[E])``.

    The ratio of the Clopper–Pearson lower bound of the numerator's probability to the
    upper bound of the denominator's, each at level ``alpha``: the returned value is
    below the true log-ratio with probability at least ``1 - 2·alpha``. ``-inf`` when
    the numerator's event count is 0.
    """
    low, _ = clopper_pearson(count_num, runs_num, alpha)
    _, high = clopper_pearson(count_den, runs_den, alpha)
    with np.errstate(divide="ignore"):
        return np.log(low) - np.log(high)


@dataclass(frozen=True)
class Event:
    """An output event ``E`` and the side whose probability of ``E`` is the larger.

    Attributes
    ----------
    family : {"threshold", "outcomes", "reachable"}
        How the event was built.
    description : str
        The event in words, e.g. ``"statistic > 0.52"``.
    numerator : {0, 1}
        0 when the audit bounds ``ln(P_data[E] / P_neighbour[E])``, 1 for the
        reverse direction.
    feature : str
        The feature the event reads (a key of :class:`Features`).
    member : callable
        Maps the feature array of some runs to a boolean array: which runs fall in E.
    selection_bound : float
        The bound this event reached on the selection half (used to rank events).
    """

    family: str
    description: str
    numerator: int
    feature: str
    member: Callable[[np.ndarray], np.ndarray] = field(repr=False, compare=False)
    selection_bound: float = field(default=-math.inf, compare=False)

    def count(self, features: Features, runs: slice) -> int:
        """How many of the ``runs`` of one side fall in the event."""
        return int(np.count_nonzero(self.member(features.arrays[self.feature][runs])))


@dataclass
class Features:
    """The feature arrays of one side's runs (first axis: runs), by name.

    ``"scalar"``: the statistic as float64 (threshold events); ``"outcome"``: an int
    id per distinct outcome, shared by both sides; ``"fingerprint"``: the exponent of
    the lowest set bit of a float output; ``"round_trip_data"`` and
    ``"round_trip_neighbour"``: whether the output fails the round trip
    ``fl(fl(o − x) + x) == o`` through the exact value ``x`` of that data set.
    """

    arrays: dict[str, np.ndarray]
    n_runs: int
    outcome_labels: list[Any] = field(default_factory=list)


def _is_real_scalar(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating | np.bool_ | bool)


def as_column(values: Sequence[Any] | np.ndarray) -> np.ndarray | list[Any]:
    """Stack one side's statistics.

    A numeric array when they are numbers (or numeric arrays of one shape), else a list
    of hashable outcomes.
    """
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        return values
    items = list(values)
    if items and all(_is_real_scalar(v) for v in items):
        return np.asarray(items)
    if items and all(isinstance(v, np.ndarray) for v in items):
        shapes = {v.shape for v in items}
        kinds = {v.dtype.kind for v in items}
        if len(shapes) == 1 and kinds <= set("biuf"):
            return np.stack(items)
    return [_hashable(v) for v in items]


def _hashable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return (value.shape, *value.ravel().tolist())
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            "statistic must return numbers, arrays or hashable values (a discrete "
            f"outcome), got {type(value).__name__}"
        ) from None
    return value


def lowest_set_bit(values: np.ndarray) -> np.ndarray:
    """Return the exponent of the lowest set bit of each float (minimum over a row)."""
    floats = np.asarray(values, dtype=np.float64)
    flat = floats.reshape(floats.shape[0], -1)
    mantissas, exponents = np.frexp(np.abs(flat))
    finite = np.isfinite(flat) & (flat != 0)
    integers = np.where(finite, np.ldexp(mantissas, 53), 1.0).astype(np.int64)
    trailing = np.log2((integers & -integers).astype(np.float64)).astype(np.int64)
    bits = np.where(finite, exponents.astype(np.int64) - 53 + trailing, _NO_SET_BIT)
    return bits.min(axis=1)


def _fails_round_trip(values: np.ndarray, exact: Any) -> np.ndarray:
    floats = np.asarray(values, dtype=np.float64)
    flat = floats.reshape(floats.shape[0], -1)
    reference = np.broadcast_to(
        np.asarray(exact, dtype=np.float64).reshape(-1), flat.shape[1:]
    )
    with np.errstate(all="ignore"):
        back = (flat - reference) + reference
    return np.any(back != flat, axis=1)


def build_features(
    columns: tuple[np.ndarray | list[Any], np.ndarray | list[Any]],
    exact: tuple[Any, Any] | None,
) -> tuple[Features, Features]:
    """Build the feature arrays of both sides (outcome ids shared between them)."""
    sides: list[dict[str, np.ndarray]] = [{}, {}]
    labels: list[Any] = []
    numeric = all(isinstance(c, np.ndarray) for c in columns)
    if numeric:
        arrays = [np.asarray(c) for c in columns]
        if all(a.ndim == 1 for a in arrays):
            for side, array in zip(sides, arrays, strict=True):
                side["scalar"] = array.astype(np.float64)
        if all(a.dtype.kind == "f" for a in arrays):
            for side, array in zip(sides, arrays, strict=True):
                side["fingerprint"] = lowest_set_bit(array)
                if exact is not None:
                    side["round_trip_data"] = _fails_round_trip(array, exact[0])
                    side["round_trip_neighbour"] = _fails_round_trip(array, exact[1])
        if _few_outcomes(arrays):
            flat = [a.reshape(a.shape[0], -1) for a in arrays]
            pooled = np.concatenate(flat)
            if pooled.shape[1] == 1:
                values, ids = np.unique(pooled[:, 0], return_inverse=True)
                labels = values.tolist()
            else:
                values, ids = np.unique(pooled, axis=0, return_inverse=True)
                labels = [tuple(row) for row in values.tolist()]
            ids = ids.reshape(-1)
            sides[0]["outcome"] = ids[: flat[0].shape[0]]
            sides[1]["outcome"] = ids[flat[0].shape[0] :]
    else:
        lookup: dict[Any, int] = {}
        for side, column in zip(sides, columns, strict=True):
            items = column.tolist() if isinstance(column, np.ndarray) else column
            side["outcome"] = np.fromiter(
                (lookup.setdefault(_hashable(v), len(lookup)) for v in items),
                dtype=np.int64,
                count=len(items),
            )
        labels = list(lookup)
    return (
        Features(sides[0], len(columns[0]), labels),
        Features(sides[1], len(columns[1]), labels),
    )


def _few_outcomes(arrays: list[np.ndarray]) -> bool:
    """Tell whether numeric outputs can be outcomes.

    They can when their rows have one shape and the first runs of each side hold at
    most :data:`MAX_OUTCOMES` distinct values.
    """
    if arrays[0].shape[1:] != arrays[1].shape[1:]:
        return False
    head = np.concatenate([a[:_OUTCOME_PROBE].reshape(-1) for a in arrays])
    return bool(np.unique(head).size <= MAX_OUTCOMES)


def _best(
    bounds: np.ndarray, make: Callable[[int], Event], how_many: int
) -> list[Event]:
    finite = np.flatnonzero(np.isfinite(bounds))
    order = finite[np.argsort(-bounds[finite], kind="stable")][:how_many]
    return [make(int(i)) for i in order]


def _threshold_events(
    a: np.ndarray, b: np.ndarray, alpha: float, how_many: int
) -> list[Event]:
    pooled = np.sort(np.concatenate([a, b]))
    distinct = pooled[np.r_[True, pooled[1:] != pooled[:-1]]]
    if distinct.size <= THRESHOLD_LEVELS.size:
        thresholds = distinct
    else:
        at = (THRESHOLD_LEVELS * (pooled.size - 1)).astype(np.int64)
        thresholds = np.unique(pooled[at])
    sorted_a, sorted_b = np.sort(a), np.sort(b)
    above_a = a.size - np.searchsorted(sorted_a, thresholds, side="right")
    above_b = b.size - np.searchsorted(sorted_b, thresholds, side="right")
    counts = [  # (count in E on data, on neighbour, E is "above", numerator)
        (above_a, above_b, True, 0),
        (above_b, above_a, True, 1),
        (a.size - above_a, b.size - above_b, False, 0),
        (b.size - above_b, a.size - above_a, False, 1),
    ]
    alpha = alpha / (len(counts) * thresholds.size)
    bounds = np.concatenate(
        [
            epsilon_bound(
                num,
                a.size if side == 0 else b.size,
                den,
                b.size if side == 0 else a.size,
                alpha,
            )
            for num, den, _, side in counts
        ]
    )
    m = thresholds.size

    def make(index: int) -> Event:
        kind, at = divmod(index, m)
        above, numerator = counts[kind][2], counts[kind][3]
        t = float(thresholds[at])
        member = (lambda x, t=t: x > t) if above else (lambda x, t=t: x <= t)
        sign = ">" if above else "<="
        return Event(
            "threshold",
            f"statistic {sign} {t:.6g}",
            numerator,
            "scalar",
            member,
            float(bounds[index]),
        )

    return _best(bounds, make, how_many)


def _set_events(
    a: np.ndarray,
    b: np.ndarray,
    alpha: float,
    how_many: int,
    family: str,
    feature: str,
    describe: Callable[[np.ndarray, list[Any]], str],
    labels: list[Any],
) -> list[Event]:
    """Propose sets of discrete values as events.

    The prefixes of the values sorted by their likelihood ratio on the selection half,
    in both directions.
    """
    values, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    inverse = inverse.reshape(-1)
    count_a = np.bincount(inverse[: a.size], minlength=values.size)
    count_b = np.bincount(inverse[a.size :], minlength=values.size)
    alpha = alpha / (2 * values.size)
    events: list[Event] = []
    for numerator in (0, 1):
        num, den = (count_a, count_b) if numerator == 0 else (count_b, count_a)
        n_num, n_den = (a.size, b.size) if numerator == 0 else (b.size, a.size)
        ratio = ((num + 0.5) / n_num) / ((den + 0.5) / n_den)
        order = np.argsort(-ratio, kind="stable")
        bounds = epsilon_bound(
            np.cumsum(num[order]), n_num, np.cumsum(den[order]), n_den, alpha
        )

        def make(index: int, order=order, bounds=bounds, numerator=numerator) -> Event:
            chosen = values[order[: index + 1]]
            return Event(
                family,
                describe(chosen, labels),
                numerator,
                feature,
                _member_of(chosen),
                float(bounds[index]),
            )

        events.extend(_best(bounds, make, how_many))
    return events


def _member_of(chosen: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    def member(values: np.ndarray) -> np.ndarray:
        return np.isin(values, chosen)

    return member


def _describe_outcomes(chosen: np.ndarray, labels: list[Any]) -> str:
    shown = ", ".join(repr(labels[v]) for v in chosen[:5].tolist())
    more = f", … ({chosen.size} in all)" if chosen.size > 5 else ""
    return f"outcome in {{{shown}{more}}}"


def _describe_fingerprints(chosen: np.ndarray, labels: list[Any]) -> str:
    shown = ", ".join(
        "zero" if v == _NO_SET_BIT else f"2^{v}" for v in chosen[:5].tolist()
    )
    more = f", … ({chosen.size} in all)" if chosen.size > 5 else ""
    return f"lowest set bit in {{{shown}{more}}}"


def _round_trip_events(
    sides: tuple[Features, Features], runs: slice, alpha: float
) -> list[Event]:
    events = []
    for numerator, feature, other in (
        (0, "round_trip_neighbour", "neighbour"),
        (1, "round_trip_data", "data"),
    ):
        num, den = sides[numerator], sides[1 - numerator]
        count_num = int(np.count_nonzero(num.arrays[feature][runs]))
        count_den = int(np.count_nonzero(den.arrays[feature][runs]))
        n_num = len(num.arrays[feature][runs])
        n_den = len(den.arrays[feature][runs])
        bound = float(epsilon_bound(count_num, n_num, count_den, n_den, alpha))
        events.append(
            Event(
                "reachable",
                f"output not reachable by additive noise from the {other}'s exact value",
                numerator,
                feature,
                lambda x: x.astype(bool),
                bound,
            )
        )
    return events


def select_events(
    sides: tuple[Features, Features],
    runs: slice,
    families: Sequence[str],
    alpha: float,
    how_many: int,
) -> list[Event]:
    """Return the ``how_many`` events with the best bound on the ``runs`` of both sides.

    Every family in ``families`` whose features exist is searched; events are ranked by
    the bound they reach on these runs at the level ``alpha`` of the final test divided
    by the number of events the family proposes. The stricter level keeps the rare
    events, whose bounds vary most, from winning on a lucky selection half (a winner's
    curse that would leave a wide interval on the held-out half).
    """
    data, neighbour = sides
    candidates: list[Event] = []

    def feature(name: str) -> tuple[np.ndarray, np.ndarray] | None:
        if name not in data.arrays or name not in neighbour.arrays:
            return None
        return data.arrays[name][runs], neighbour.arrays[name][runs]

    if "threshold" in families and (pair := feature("scalar")) is not None:
        candidates += _threshold_events(*pair, alpha, how_many)
    if "outcomes" in families and (pair := feature("outcome")) is not None:
        n_values = np.unique(np.concatenate(pair)).size
        n_runs = min(pair[0].size, pair[1].size)
        if n_values <= min(MAX_OUTCOMES, n_runs // OUTCOME_MIN_RUNS_PER_VALUE):
            candidates += _set_events(
                *pair,
                alpha,
                how_many,
                "outcomes",
                "outcome",
                _describe_outcomes,
                data.outcome_labels,
            )
    if "reachable" in families:
        if (pair := feature("fingerprint")) is not None:
            candidates += _set_events(
                *pair,
                alpha,
                how_many,
                "reachable",
                "fingerprint",
                _describe_fingerprints,
                [],
            )
        if feature("round_trip_data") is not None:
            candidates += _round_trip_events(sides, runs, alpha)
    ranked = sorted(
        (e for e in candidates if math.isfinite(e.selection_bound)),
        key=lambda e: -e.selection_bound,
    )
    return ranked[:how_many]
