"""Privacy budget accounting.

Every randomized function and estimator in privtab charges its ``epsilon`` to a
:class:`BudgetAccountant`: the one passed as ``accountant=``, or the process-wide
default accountant (unlimited budget, but it keeps the ledger) returned by
:func:`default_accountant`.

Core kernels called: none (pure Python bookkeeping).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from privtab._validation import check_positive, check_real
from privtab.exceptions import BudgetExceededError

__all__ = [
    "GUARANTEES",
    "BudgetAccountant",
    "LedgerEntry",
    "default_accountant",
    "resolve_accountant",
    "split_budget",
]


#: The kinds of guarantee a charge can carry, strongest first: ``"dp"`` (ε-differential
#: privacy: every record, against every neighbouring data set) and ``"idp"``
#: (ε-individual differential privacy, Soria-Comas et al. 2017: only neighbours of the
#: actual data set, so it is weaker). A composition carries the weakest of its parts.
GUARANTEES: tuple[str, ...] = ("dp", "idp")


def check_guarantee(guarantee: Any) -> str:
    """Return ``guarantee`` if it is one of :data:`GUARANTEES`."""
    if not isinstance(guarantee, str) or guarantee not in GUARANTEES:
        raise ValueError(
            f"guarantee must be one of {', '.join(map(repr, GUARANTEES))}, "
            f"got {guarantee!r}"
        )
    return guarantee


def weakest_guarantee(guarantees: Iterable[str]) -> str:
    """Return the guarantee a composition of charges of these kinds still gives."""
    return max(guarantees, key=GUARANTEES.index, default=GUARANTEES[0])


@dataclass(frozen=True, eq=False)
class LedgerEntry:
    """One charge in a ledger: what was released, what it cost, and what it guarantees.

    Unpacks, indexes and compares with tuples as the pair ``(label, epsilon)``, so
    ``for label, eps in ledger`` and ``ledger == [("histogram", 1.0)]`` work; two
    entries are equal when all their fields are. Charges made inside
    ``with acc.parallel():`` are recorded as one entry whose ``parts`` are the
    individual spends, whose ``epsilon`` is their maximum and whose ``guarantee`` is
    the weakest of theirs.

    Attributes
    ----------
    label : str
    epsilon : float
    delta : float
    parts : tuple of LedgerEntry
    guarantee : {"dp", "idp"}
        ε-differential privacy, or ε-individual differential privacy (see
        :data:`GUARANTEES`).

    Examples
    --------
    >>> entry = LedgerEntry("masked centroids", 0.5, guarantee="idp")
    >>> label, epsilon = entry
    >>> entry == ("masked centroids", 0.5), entry.guarantee
    (True, 'idp')
    >>> entry
    LedgerEntry('masked centroids', 0.5, guarantee='idp')
    """

    label: str
    epsilon: float
    delta: float = 0.0
    parts: tuple[LedgerEntry, ...] = ()
    guarantee: str = "dp"

    def __post_init__(self) -> None:
        check_guarantee(self.guarantee)

    def _fields(self) -> tuple[object, ...]:
        return (self.label, self.epsilon, self.delta, self.parts, self.guarantee)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.label, self.epsilon))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> Any:
        return (self.label, self.epsilon)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LedgerEntry):
            return self._fields() == other._fields()
        if isinstance(other, tuple):
            return (self.label, self.epsilon) == other
        return NotImplemented

    def __hash__(self) -> int:
        # Equal entries (and an entry and its equal pair) share the pair's hash.
        return hash((self.label, self.epsilon))

    def __repr__(self) -> str:
        defaults = {"delta": 0.0, "parts": (), "guarantee": "dp"}
        extra = "".join(
            f", {name}={getattr(self, name)!r}"
            for name, default in defaults.items()
            if getattr(self, name) != default
        )
        return f"LedgerEntry({self.label!r}, {self.epsilon!r}{extra})"


def _check_delta(delta: Any) -> float:
    """Return ``delta`` as a float if it is a real number in [0, 1]."""
    value = check_real(delta, "delta")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"delta must be a number in [0, 1], got {delta!r}")
    return value


class _ParallelBlock:
    def __init__(self, label: str) -> None:
        self.label = label
        self.parts: list[LedgerEntry] = []

    @property
    def epsilon(self) -> Fraction:
        return max((Fraction(p.epsilon) for p in self.parts), default=Fraction(0))

    @property
    def delta(self) -> Fraction:
        return max((Fraction(p.delta) for p in self.parts), default=Fraction(0))


class BudgetAccountant:
    """Sequential composition of pure (and approximate) differential privacy.

    Spends add up, except inside ``with accountant.parallel():``, where spends on
    disjoint subsets of the records cost only their maximum (parallel composition).
    Sums are kept exactly (as fractions of the float inputs), so spending never
    exceeds the budget through rounding. Copies (``copy.copy``, ``copy.deepcopy``,
    and so ``sklearn.base.clone`` of an estimator holding it) are the accountant
    itself: every clone charges the same ledger.

    Parameters
    ----------
    epsilon : float, default=inf
        Total epsilon budget; ``math.inf`` for an accountant that only records.
    delta : float, default=0.0
        Total delta budget, in [0, 1].

    Attributes
    ----------
    spent : float
        Epsilon spent so far (the exact sum, rounded to the nearest float).
    remaining : float
        ``epsilon - spent``.
    ledger : list of LedgerEntry
        Every charge in order; each unpacks as ``(label, epsilon)``.

    Examples
    --------
    >>> acc = BudgetAccountant(1.0)
    >>> acc.spend(0.25, label="counts")
    >>> with acc.parallel(label="per-cluster centroids"):
    ...     acc.spend(0.5, label="cluster 0")
    ...     acc.spend(0.5, label="cluster 1")
    >>> acc.spent, acc.remaining
    (0.75, 0.25)
    >>> [tuple(entry) for entry in acc.ledger]
    [('counts', 0.25), ('per-cluster centroids', 0.5)]
    """

    def __init__(self, epsilon: float = math.inf, delta: float = 0.0) -> None:
        if epsilon != math.inf:
            epsilon = check_positive(epsilon, "epsilon")
        self.epsilon = float(epsilon)
        self.delta = _check_delta(delta)
        self._entries: list[LedgerEntry] = []
        self._spent_eps = Fraction(0)
        self._spent_delta = Fraction(0)
        self._blocks: list[_ParallelBlock] = []

    # Budget arithmetic -------------------------------------------------------------
    def _charge_after(self, epsilon: float, delta: float) -> tuple[Fraction, Fraction]:
        """Total (epsilon, delta) that would be spent after one more spend."""
        eps, dlt = Fraction(epsilon), Fraction(delta)
        if not self._blocks:
            return self._spent_eps + eps, self._spent_delta + dlt
        block = self._blocks[0]
        block_eps = max(block.epsilon, self._nested_charge(eps, lambda b: b.epsilon))
        block_dlt = max(block.delta, self._nested_charge(dlt, lambda b: b.delta))
        return self._spent_eps + block_eps, self._spent_delta + block_dlt

    def _nested_charge(self, amount: Fraction, of) -> Fraction:
        # Inner blocks' charges are the max over their parts; an outer block sees the
        # inner block's running max as one part.
        charge = amount
        for block in reversed(self._blocks[1:]):
            charge = max(of(block), charge)
        return charge

    def _affordable(self, epsilon: float, delta: float) -> bool:
        eps_total, delta_total = self._charge_after(epsilon, delta)
        eps_ok = self.epsilon == math.inf or eps_total <= Fraction(self.epsilon)
        return eps_ok and delta_total <= Fraction(self.delta)

    # Public API --------------------------------------------------------------------
    def check(self, epsilon: float, delta: float = 0.0) -> None:
        """Raise :class:`BudgetExceededError` if ``epsilon`` (and ``delta``) can't be spent.

        Raises
        ------
        BudgetExceededError
            If spending would take the total above the budget.
        ValueError
            If ``epsilon`` is not finite and > 0, or ``delta`` is not in [0, 1].
        """
        epsilon = check_positive(epsilon, "epsilon")
        delta = _check_delta(delta)
        if not self._affordable(epsilon, delta):
            raise BudgetExceededError(
                f"privacy budget exceeded: spending epsilon={epsilon!r} (delta={delta!r}) "
                f"on top of spent={self.spent!r} would exceed the budget "
                f"epsilon={self.epsilon!r} (delta={self.delta!r}); "
                f"remaining={self.remaining!r}"
            )

    def spend(
        self,
        epsilon: float,
        label: str = "unlabelled",
        delta: float = 0.0,
        *,
        guarantee: str = "dp",
    ) -> None:
        """Charge ``epsilon`` (and ``delta``) to the budget and record it in the ledger.

        Parameters
        ----------
        epsilon : float
            Finite and > 0.
        label : str, default="unlabelled"
            What was released.
        delta : float, default=0.0
            In [0, 1].
        guarantee : {"dp", "idp"}, default="dp"
            The kind of guarantee the release gives for ``epsilon`` (see
            :data:`GUARANTEES`); recorded in the entry, so that ε-DP and
            ε-individual-DP releases can be told apart in the ledger.

        Raises
        ------
        BudgetExceededError
            If the budget cannot afford it; nothing is recorded then.
        ValueError
            For an unknown ``guarantee``, or ``epsilon``/``delta`` out of range.
        """
        check_guarantee(guarantee)
        self.check(epsilon, delta)
        entry = LedgerEntry(
            str(label), float(epsilon), float(delta), guarantee=guarantee
        )
        if self._blocks:
            self._blocks[-1].parts.append(entry)
            return
        self._entries.append(entry)
        self._spent_eps += Fraction(entry.epsilon)
        self._spent_delta += Fraction(entry.delta)

    @contextlib.contextmanager
    def parallel(
        self, label: str = "parallel composition"
    ) -> Iterator[BudgetAccountant]:
        """Charge the maximum, not the sum, of the spends made inside the block.

        Use it only for mechanisms applied to *disjoint* subsets of the records
        (parallel composition). Blocks may nest. If the block raises, spends made
        inside it are still charged: those releases happened.
        """
        block = _ParallelBlock(str(label))
        self._blocks.append(block)
        try:
            yield self
        finally:
            self._blocks.pop()
            if block.parts:
                entry = LedgerEntry(
                    block.label,
                    float(block.epsilon),
                    float(block.delta),
                    tuple(block.parts),
                    weakest_guarantee(p.guarantee for p in block.parts),
                )
                if self._blocks:
                    self._blocks[-1].parts.append(entry)
                else:
                    self._entries.append(entry)
                    self._spent_eps += block.epsilon
                    self._spent_delta += block.delta

    @property
    def spent(self) -> float:
        """Epsilon spent so far, outside any open parallel block."""
        return float(self._spent_eps)

    @property
    def spent_delta(self) -> float:
        """Delta spent so far, outside any open parallel block."""
        return float(self._spent_delta)

    @property
    def remaining(self) -> float:
        """Epsilon still available (``inf`` for an unlimited accountant)."""
        if self.epsilon == math.inf:
            return math.inf
        return float(Fraction(self.epsilon) - self._spent_eps)

    @property
    def ledger(self) -> list[LedgerEntry]:
        """A copy of the ledger: one :class:`LedgerEntry` per charge."""
        return list(self._entries)

    def report(self) -> str:
        """Return the ledger as a readable table, parallel parts indented.

        The ``guarantee`` column tells ε-DP (``dp``) from ε-individual-DP (``idp``)
        charges.
        """
        lines = [f"{'label':<48} {'epsilon':>12} {'guarantee':>9}"]

        def add(entry: LedgerEntry, depth: int) -> None:
            name = "  " * depth + entry.label
            suffix = " (max of parts)" if entry.parts else ""
            lines.append(
                f"{name:<48} {entry.epsilon:>12.6g} {entry.guarantee:>9}{suffix}"
            )
            for part in entry.parts:
                add(part, depth + 1)

        for entry in self._entries:
            add(entry, 0)
        budget = "inf" if self.epsilon == math.inf else f"{self.epsilon:.6g}"
        lines.append(f"{'spent':<48} {self.spent:>12.6g} of {budget}")
        for kind, title in (("dp", "ε-DP"), ("idp", "ε-iDP")):
            lines.append(f"{'  of which ' + title:<48} {self.spent_by(kind):>12.6g}")
        return "\n".join(lines)

    def spent_by(self, guarantee: str) -> float:
        """Return the part of :attr:`spent` charged under one kind of guarantee.

        Parameters
        ----------
        guarantee : {"dp", "idp"}
            ε-differential privacy or ε-individual differential privacy (a guarantee
            with respect to the actual data set only, see
            :class:`~privtab.MicroaggregationMasker`).

        Returns
        -------
        float
            The sum of the top-level ledger entries of that kind (a parallel block
            counts under the weakest guarantee of its parts).

        Examples
        --------
        >>> acc = BudgetAccountant(2.0)
        >>> acc.spend(0.5, label="a")
        >>> acc.spend(0.25, label="b", guarantee="idp")
        >>> acc.spent_by("dp"), acc.spent_by("idp")
        (0.5, 0.25)
        """
        kind = check_guarantee(guarantee)
        return math.fsum(e.epsilon for e in self._entries if e.guarantee == kind)

    def __copy__(self) -> BudgetAccountant:
        return self

    def __deepcopy__(self, memo: dict) -> BudgetAccountant:
        # An accountant is a shared ledger, not a value: scikit-learn's clone() (and
        # so GridSearchCV) deep-copies parameters, and a copy would let the clones
        # spend a budget the original never sees.
        return self

    def __repr__(self) -> str:
        return (
            f"BudgetAccountant(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"spent={self.spent!r})"
        )


_DEFAULT = BudgetAccountant()


def default_accountant() -> BudgetAccountant:
    """Return the process-wide accountant charged when ``accountant=None``.

    Its budget is unlimited; it records every spend so that ``report()`` shows what a
    session released.
    """
    return _DEFAULT


def resolve_accountant(accountant: BudgetAccountant | None) -> BudgetAccountant:
    """Return ``accountant``, or the default accountant when it is ``None``."""
    if accountant is None:
        return _DEFAULT
    if not isinstance(accountant, BudgetAccountant):
        raise TypeError(
            "accountant must be a privtab.BudgetAccountant or None, got "
            f"{type(accountant).__name__}"
        )
    return accountant


def split_budget(total: float, weights: Any) -> list[float]:
    """Split ``total`` epsilon into parts proportional to ``weights``.

    The parts are non-negative floats whose left-to-right ``sum`` equals ``total``
    *exactly*, so an estimator's ``privacy_ledger_`` adds up to its
    ``epsilon_spent_`` without rounding slack. (Estimators charge the accountant once
    with ``total``; the parts only describe where it went.)

    Parameters
    ----------
    total : float
        Finite, > 0.
    weights : sequence of float
        Non-negative, finite, at least one > 0.

    Returns
    -------
    list of float

    Examples
    --------
    >>> parts = split_budget(1.0, [1, 1, 1])
    >>> sum(parts) == 1.0
    True
    """
    total = check_positive(total, "total")
    weights = [float(w) for w in weights]
    if not weights or any(not math.isfinite(w) or w < 0 for w in weights):
        raise ValueError(f"weights must be finite and >= 0, got {weights!r}")
    weight_sum = math.fsum(weights)
    if weight_sum <= 0:
        raise ValueError(f"weights must have a positive sum, got {weights!r}")
    parts = [total * (w / weight_sum) for w in weights]
    # Rounding leaves sum(parts) a few ulps off total; absorb that into the largest
    # part, whose ulp is the closest to total's.
    for index in sorted(range(len(parts)), key=lambda i: -parts[i]):
        others = [*parts[:index], 0.0, *parts[index + 1 :]]
        parts[index] = max(total - sum(others), 0.0)
        for _ in range(8):
            excess = sum(parts) - total
            if excess == 0:
                return parts
            direction = -math.inf if excess > 0 else math.inf
            parts[index] = max(math.nextafter(parts[index], direction), 0.0)
        parts[index] = total * (weights[index] / weight_sum)
    raise ArithmeticError(f"could not split {total!r} exactly by {weights!r}")
