"""Privacy budget accounting.

Every randomized function and estimator in privtab charges its ``epsilon`` to a
:class:`BudgetAccountant`: the one passed as ``accountant=``, or the default
accountant (unlimited budget, but it keeps the ledger) returned by
:func:`default_accountant`. An accountant keeps its budget in memory
(``BudgetAccountant(epsilon)``) or in a file shared by every process and run
(``BudgetAccountant.open(path, epsilon)``); both are stores of
:mod:`privtab._budget_store` behind the same accountant.

Core kernels called: none (pure Python bookkeeping; SQLite for stores on file).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import numbers
import os
import secrets
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from privtab._budget_store import (
    RELATIVE_TOLERANCE,
    LedgerStore,
    MemoryStore,
    NewRow,
    ProcessLock,
    Row,
    RowUpdate,
    SQLiteStore,
    fits,
    read_snapshot,
)
from privtab._validation import check_positive, check_positive_int, check_real
from privtab.exceptions import BudgetExceededError

__all__ = [
    "GUARANTEES",
    "RELATIVE_TOLERANCE",
    "BudgetAccountant",
    "LedgerEntry",
    "ParallelBlock",
    "default_accountant",
    "resolve_accountant",
    "set_default_accountant",
    "split_budget",
    "use_accountant",
]


#: The kinds of guarantee a charge can carry, strongest first: ``"dp"`` (ε-differential
#: privacy: every record, against every neighbouring data set) and ``"idp"``
#: (ε-individual differential privacy, Soria-Comas et al. 2017: only neighbours of the
#: actual data set, so it is weaker). A composition carries the weakest of its parts.
GUARANTEES: tuple[str, ...] = ("dp", "idp")


def check_guarantee(guarantee: Any) -> str:
    """Return ``guarantee`` if it is one of ``GUARANTEES``."""
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
    entries are equal when all their fields are. A parallel block
    (``with acc.parallel(label) as block:``) is recorded as one entry of
    ``composition="parallel"`` whose ``parts`` are its parts, each an entry of
    ``composition="sequential"`` whose ``parts`` are the spends made inside it; a
    part's ``epsilon`` is their sum, the block's the maximum over its parts (both
    rounded up to a float when the exact value is not one), and each carries the
    weakest ``guarantee`` of what it holds.

    Attributes
    ----------
    label : str
    epsilon : float
    delta : float
    parts : tuple of LedgerEntry
    guarantee : {"dp", "idp"}
        ε-differential privacy, or ε-individual differential privacy (see
        ``GUARANTEES``).
    composition : {None, "parallel", "sequential"}
        How ``parts`` make up ``epsilon``: ``None`` for a single charge,
        ``"parallel"`` (the maximum) for a block, ``"sequential"`` (the sum) for
        one part of a block.

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
    composition: str | None = None

    def __post_init__(self) -> None:
        check_guarantee(self.guarantee)
        if self.composition not in (None, "parallel", "sequential"):
            raise ValueError(
                "composition must be None, 'parallel' or 'sequential', got "
                f"{self.composition!r}"
            )

    def _fields(self) -> tuple[object, ...]:
        return (
            self.label,
            self.epsilon,
            self.delta,
            self.parts,
            self.guarantee,
            self.composition,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the entry as JSON-serialisable values (parts included).

        Examples
        --------
        >>> LedgerEntry("counts", 0.5).to_dict()
        {'label': 'counts', 'epsilon': 0.5, 'delta': 0.0, 'guarantee': 'dp', \
'composition': None, 'parts': []}
        """
        return {
            "label": self.label,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "guarantee": self.guarantee,
            "composition": self.composition,
            "parts": [part.to_dict() for part in self.parts],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LedgerEntry:
        """Return the entry a :meth:`to_dict` describes.

        Raises
        ------
        ValueError, TypeError
            If ``data`` lacks a field or holds a value of the wrong kind.
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"a ledger entry must be a dict, got {type(data).__name__}")
        missing = [key for key in ("label", "epsilon") if key not in data]
        if missing:
            raise ValueError(f"a ledger entry needs {', '.join(missing)}, got {data!r}")
        epsilon = check_real(data["epsilon"], "epsilon")
        if not (math.isfinite(epsilon) and epsilon >= 0):
            raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
        parts = data.get("parts", [])
        if not isinstance(parts, list):
            raise TypeError(f"parts must be a list, got {type(parts).__name__}")
        return cls(
            str(data["label"]),
            epsilon,
            _check_delta(data.get("delta", 0.0)),
            tuple(cls.from_dict(part) for part in parts),
            check_guarantee(data.get("guarantee", "dp")),
            data.get("composition"),
        )

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
        defaults = {"delta": 0.0, "parts": (), "guarantee": "dp", "composition": None}
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


_COMPOSITION_SUFFIXES = {"parallel": " (max of parts)", "sequential": " (sum)"}


def ledger_lines(
    entries: Iterable[LedgerEntry], indent: str = "  "
) -> Iterator[tuple[LedgerEntry, str, str]]:
    """Yield each entry of a ledger, parts after their block, as the ledger shows it.

    Yields
    ------
    entry : LedgerEntry
    name : str
        The label, indented by ``indent`` once per level of nesting.
    suffix : str
        How its parts make up its epsilon: ``" (max of parts)"`` for a parallel
        block, ``" (sum)"`` for one of its parts, ``""`` for a single charge.
    """

    def walk(entry: LedgerEntry, depth: int) -> Iterator[tuple[LedgerEntry, str, str]]:
        composition = entry.composition or ("parallel" if entry.parts else None)
        yield (
            entry,
            indent * depth + entry.label,
            _COMPOSITION_SUFFIXES.get(composition or "", ""),
        )
        for part in entry.parts:
            yield from walk(part, depth + 1)

    for entry in entries:
        yield from walk(entry, 0)


def _round_up(value: Fraction) -> float:
    """Return the smallest float >= ``value`` (charges never round down)."""
    nearest = float(value)
    return nearest if Fraction(nearest) >= value else math.nextafter(nearest, math.inf)


# Which process may spend an in-memory ledger -----------------------------------------
_PROCESS: tuple[int, str] = (os.getpid(), secrets.token_hex(8))


def _this_process() -> tuple[int, str]:
    """Return an identity of this process that a forked child or a reused pid lack."""
    global _PROCESS
    if _PROCESS[0] != os.getpid():
        _PROCESS = (os.getpid(), secrets.token_hex(8))
    return _PROCESS


_SHARE_ADVICE = (
    "a spend here would be checked against a private copy of the budget and lost "
    "with it. To share one budget between processes, keep it in a file with "
    "BudgetAccountant.open(path, epsilon) and pass that accountant"
)

#: In-memory accountants of this process by id, so that one unpickled in the process
#: that made it is the original, not a second budget.
_LIVE: weakref.WeakValueDictionary[str, BudgetAccountant] = (
    weakref.WeakValueDictionary()
)


class _Part:
    """One part of a parallel block: the spends inside it add up."""

    def __init__(self, block: ParallelBlock, label: str) -> None:
        self.block = block
        self.label = label
        self.epsilon = Fraction(0)
        self.delta = Fraction(0)
        self.guarantee = GUARANTEES[0]
        self.row: int | None = None


class ParallelBlock:
    """An open ``with acc.parallel(label) as block:`` (parallel composition).

    Spends go into parts, ``with block.part(label):``: within a part they add up
    (sequential composition), and the block charges the maximum over its parts. Use
    one part per *disjoint* subset of the records (a region, a cluster), and make
    every release about that subset inside its part.

    The block's charge is recorded as it grows, each increase checked against the
    budget like a spend, so a spend that would take the block's charge over the
    budget raises :class:`~privtab.exceptions.BudgetExceededError` and an interrupted
    block keeps what it released. Parts may be entered from other threads (each
    thread's spends go to the part it entered); blocks nest inside parts. A block
    cannot be pickled: a worker process spends outside it.
    """

    def __init__(
        self, accountant: BudgetAccountant, label: str, enclosing: _Part | None
    ) -> None:
        self.accountant = accountant
        self.label = label
        self._enclosing = enclosing
        self._parts: list[_Part] = []
        self._value = (0.0, 0.0)
        self._guarantee = GUARANTEES[0]
        self._row: int | None = None
        self._state = "new"

    def __enter__(self) -> ParallelBlock:
        if self._state != "new":
            raise RuntimeError(f"the parallel block {self.label!r} was entered already")
        self.accountant._stack().append(self)
        self._state = "open"
        return self

    def __exit__(self, *exc_info: object) -> None:
        stack = self.accountant._stack()
        if stack and stack[-1] is self:
            stack.pop()
        self._state = "closed"

    @contextlib.contextmanager
    def part(self, label: str = "part") -> Iterator[ParallelBlock]:
        """Open one part of the block: the spends made inside it add up.

        Parameters
        ----------
        label : str, default="part"
            What the part covers (``"region north"``), for the ledger.

        Raises
        ------
        RuntimeError
            If the block is not open, or this thread is inside another block or
            part of it (parts of one block do not nest; open a block inside the
            part for a finer split).
        """
        stack = self.accountant._stack()
        if self._state != "open":
            raise RuntimeError(
                f"the parallel block {self.label!r} is not open: enter parts inside "
                f"`with acc.parallel({self.label!r}) as block:`"
            )
        if stack and stack[-1] is not self:
            raise RuntimeError(
                f"a part of the parallel block {self.label!r} must be opened directly "
                "inside it (or at the start of a worker thread), not inside one of its "
                "parts or another block"
            )
        part = _Part(self, str(label))
        with self.accountant._lock.get():
            self._parts.append(part)
        stack.append(part)
        try:
            yield self
        finally:
            if stack and stack[-1] is part:
                stack.pop()

    def __reduce__(self) -> str | tuple[Any, ...]:
        raise TypeError(
            "a parallel block cannot be pickled: a worker process cannot spend inside "
            "it; make the releases of each part in this process"
        )

    def __repr__(self) -> str:
        return (
            f"<ParallelBlock {self.label!r}: {len(self._parts)} parts, "
            f"epsilon={self._value[0]!r}, {self._state}>"
        )


@dataclass
class _Plan:
    """What one spend records: the charge, the rows to insert and update."""

    charge: tuple[Fraction, Fraction]
    parent: int | None
    chain: list[NewRow]
    owners: list[ParallelBlock | _Part | None]
    updates: list[RowUpdate] = field(default_factory=list)
    changes: list[Callable[[], None]] = field(default_factory=list)


_KIND_OF_COMPOSITION = {None: "spend", "parallel": "parallel", "sequential": "part"}
_COMPOSITION_OF_KIND = {kind: comp for comp, kind in _KIND_OF_COMPOSITION.items()}


def _entries_from_rows(rows: Iterable[Row]) -> list[LedgerEntry]:
    children: dict[int | None, list[Row]] = {}
    for row in rows:
        children.setdefault(row.parent, []).append(row)

    def build(row: Row) -> LedgerEntry:
        return LedgerEntry(
            row.label,
            row.epsilon,
            row.delta,
            tuple(build(child) for child in children.get(row.id, ())),
            row.guarantee,
            _COMPOSITION_OF_KIND[row.kind],
        )

    return [build(row) for row in children.get(None, ())]


def _rows_from_entries(entries: Iterable[LedgerEntry]) -> list[Row]:
    rows: list[Row] = []

    def add(entry: LedgerEntry, parent: int | None) -> None:
        composition = entry.composition
        if composition is None and entry.parts:
            composition = "parallel"
        row = Row(
            len(rows) + 1,
            parent,
            _KIND_OF_COMPOSITION[composition],
            entry.label,
            entry.epsilon,
            entry.delta,
            entry.guarantee,
            math.nan,
            0,
        )
        rows.append(row)
        for part in entry.parts:
            add(part, row.id)

    for entry in entries:
        add(entry, None)
    return rows


class BudgetAccountant:
    """Sequential and parallel composition of pure (and approximate) differential privacy.

    Spends add up, except inside ``with acc.parallel() as block:``, whose parts
    (``with block.part(label):``) cover disjoint subsets of the records: the block
    charges the maximum over its parts of the sum of the spends within each part
    (parallel composition). Sums are kept exactly (as fractions of the float
    inputs), so rounding never accumulates; the total may exceed the budget by at
    most ``RELATIVE_TOLERANCE`` (2^-52) of it, the rounding of the inputs
    themselves, so that ten spends of ``0.1`` fit in ``1.0`` and an eleventh does
    not. Copies (``copy.copy``, ``copy.deepcopy``, and so
    ``sklearn.base.clone`` of an estimator holding it) are the accountant itself:
    every clone charges the same ledger.

    ``BudgetAccountant(epsilon)`` keeps its budget in this process;
    :meth:`open` keeps it in a file that every thread and process shares and that
    outlives them. Both behave the same otherwise, and both are safe to spend from
    many threads at once.

    Parameters
    ----------
    epsilon : float, default=inf
        Total epsilon budget; ``math.inf`` for an accountant that only records.
    delta : float, default=0.0
        Total delta budget, in [0, 1].

    Attributes
    ----------
    epsilon, delta : float
        The budget.
    spent : float
        Epsilon spent so far (the exact sum, rounded to the nearest float).
    remaining : float
        ``epsilon - spent``.
    ledger : list of LedgerEntry
        Every charge in order; each unpacks as ``(label, epsilon)``.
    path : str or None
        The file of an accountant made by :meth:`open`; ``None`` in memory.

    Notes
    -----
    **Processes.** An in-memory accountant spends only in the process that created
    it. Copied into another process (pickled, as ``n_jobs``, joblib, multiprocessing
    and Dask do with an estimator, or inherited through ``fork``), it refuses to
    spend with :class:`~privtab.exceptions.BudgetExceededError`: the spend would be
    checked against a private copy and lost. Unpickled in the process that created
    it, it *is* the original (while the original exists; otherwise it is a copy for
    reading). The default accountant follows the same rule. An accountant made by
    :meth:`open` pickles as a reference to its file and spends from any process.

    **Parallel blocks.** The caller vouches that the parts of a block touch disjoint
    records; the accountant cannot check it. A spend inside a block but outside its
    parts is an error (it would say neither which part it belongs to nor whether it
    adds up with the others).

    Examples
    --------
    >>> acc = BudgetAccountant(2.0)
    >>> acc.spend(0.25, label="counts")
    >>> with acc.parallel("per region") as block:
    ...     for region in ("north", "south", "west"):
    ...         with block.part(region):
    ...             acc.spend(0.5, label="count")
    ...             acc.spend(0.5, label="sum")
    >>> acc.spent, acc.remaining
    (1.25, 0.75)
    >>> [tuple(entry) for entry in acc.ledger]
    [('counts', 0.25), ('per region', 1.0)]
    """

    epsilon: float
    delta: float

    def __init__(self, epsilon: float = math.inf, delta: float = 0.0) -> None:
        if epsilon != math.inf:
            epsilon = check_positive(epsilon, "epsilon")
        epsilon, delta = float(epsilon), _check_delta(delta)
        self._setup(MemoryStore(epsilon, delta), owner=_this_process())

    def _setup(
        self,
        store: LedgerStore,
        owner: tuple[int, str] | None = None,
        copy_note: str | None = None,
    ) -> None:
        self._store = store
        self.epsilon = store.epsilon
        self.delta = store.delta
        self._owner = owner
        self._copy_note = copy_note
        self._lock = ProcessLock()
        self._scopes = threading.local()
        self._id = secrets.token_hex(16)
        if owner is not None and copy_note is None:
            _LIVE[self._id] = self

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        epsilon: float | None = None,
        delta: float = 0.0,
    ) -> BudgetAccountant:
        """Create or open a budget kept in a SQLite file, shared by every process.

        Parameters
        ----------
        path : str or path-like
            The file. Created (readable and writable by its owner only, 0600) when
            ``epsilon`` is given and the file does not exist.
        epsilon : float, optional
            The budget of a new file (``math.inf`` for a shared ledger without a
            limit). Omit it to open an existing file; given for an existing file,
            it must equal the stored budget.
        delta : float, default=0.0
            The delta budget of a new file, in [0, 1]. For an existing file it must
            equal the stored one when ``epsilon`` is given (or when it is not 0).

        Returns
        -------
        BudgetAccountant
            ``spent``, ``remaining``, ``ledger`` and ``report()`` read the file, so
            every handle in every process sees the same budget.

        Raises
        ------
        FileNotFoundError
            If ``path`` does not exist and ``epsilon`` is not given.
        ValueError
            If ``epsilon`` or ``delta`` differ from the stored budget, are out of
            range, or ``path`` is not a privtab budget store.
        TypeError
            If ``path`` is not a path.

        Notes
        -----
        Every spend is one SQLite transaction (``BEGIN IMMEDIATE``, WAL mode,
        ``synchronous=FULL``): the check against the remaining budget and the ledger
        row are written together or not at all, so a process killed while spending
        leaves either the whole spend or none of it, and a spend that returned is on
        disk. A spend that raised was not recorded. Estimators holding the accountant
        pickle it as a reference to the file: fits in worker processes (``n_jobs``,
        joblib, multiprocessing, Dask workers on the same machine) spend against
        the same budget. SQLite's locking needs a local file system, not a network
        share. Anyone who can write the file can change the budget: its permissions
        are the protection.

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "adult.budget")
        >>> acc = BudgetAccountant.open(path, epsilon=1.0)
        >>> acc.spend(0.25, label="counts")
        >>> BudgetAccountant.open(path).spent
        0.25
        """
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"path must be a str or a path, got {type(path).__name__}")
        checked_delta = _check_delta(delta)
        if epsilon is not None and epsilon != math.inf:
            epsilon = check_positive(epsilon, "epsilon")
        asked_delta = (
            checked_delta if epsilon is not None or checked_delta != 0.0 else None
        )
        store = SQLiteStore.open(
            path, None if epsilon is None else float(epsilon), asked_delta
        )
        return _on_store(store)

    # Scopes of this thread -----------------------------------------------------------
    def _stack(self) -> list[ParallelBlock | _Part]:
        local = self._scopes
        if getattr(local, "pid", None) != os.getpid():
            local.pid, local.stack = os.getpid(), []
        stack: list[ParallelBlock | _Part] = local.stack
        return stack

    def _refusal(self) -> str | None:
        """Why this accountant may not spend here, or ``None`` if it may."""
        if self._copy_note is not None:
            return self._copy_note
        if self._owner is None or self._owner == _this_process():
            return None
        what = (
            "privtab's default accountant (charged when accountant=None)"
            if self is _DEFAULT
            else "this in-memory BudgetAccountant"
        )
        return (
            f"{what} was created in process {self._owner[0]} and copied into process "
            f"{os.getpid()} (by fork or by pickling, as n_jobs, joblib, multiprocessing "
            f"and Dask do): {_SHARE_ADVICE}"
        )

    # Budget arithmetic -------------------------------------------------------------
    def _plan(self, epsilon: float, delta: float, label: str, guarantee: str) -> _Plan:
        """Return what a spend here (in this thread's innermost part) would record."""
        stack = self._stack()
        scope = stack[-1] if stack else None
        leaf = NewRow("spend", label, epsilon, delta, guarantee)
        if scope is None:
            return _Plan((Fraction(epsilon), Fraction(delta)), None, [leaf], [None])
        if isinstance(scope, ParallelBlock):
            raise RuntimeError(
                f"a spend inside `with acc.parallel({scope.label!r}) as block:` must "
                "be made inside one of its parts, `with block.part(label):`. The "
                "block charges the maximum over its parts of the sum of the spends "
                "within each part: put every release about one disjoint subset of "
                "the records (a region, a cluster) in that subset's part"
            )
        return self._plan_in_part(scope, Fraction(epsilon), Fraction(delta), leaf)

    def _plan_in_part(
        self, part: _Part, eps: Fraction, dlt: Fraction, leaf: NewRow
    ) -> _Plan:
        plan = _Plan((eps, dlt), None, [leaf], [None])
        guarantee = leaf.guarantee
        node: _Part | None = part
        found_parent = False
        while node is not None:
            block = node.block
            if block._state != "open":
                raise RuntimeError(
                    f"the parallel block {block.label!r} is closed: spend inside "
                    "its parts while it is open"
                )
            part_sums = (node.epsilon + eps, node.delta + dlt)
            sums = [
                part_sums if p is node else (p.epsilon, p.delta) for p in block._parts
            ]
            block_value = (
                _round_up(max(s[0] for s in sums)),
                _round_up(max(s[1] for s in sums)),
            )
            part_guarantee = weakest_guarantee((node.guarantee, guarantee))
            block_guarantee = weakest_guarantee((block._guarantee, guarantee))
            for owner, kind, value, kept in (
                (
                    node,
                    "part",
                    (_round_up(part_sums[0]), _round_up(part_sums[1])),
                    part_guarantee,
                ),
                (block, "parallel", block_value, block_guarantee),
            ):
                row = owner.row if isinstance(owner, _Part) else owner._row
                if row is None:
                    plan.chain.insert(
                        0, NewRow(kind, owner.label, value[0], value[1], kept)
                    )
                    plan.owners.insert(0, owner)
                    continue
                if not found_parent:
                    plan.parent, found_parent = row, True
                plan.updates.append(RowUpdate(row, value[0], value[1], kept))
            plan.changes.append(
                functools.partial(_set_part, node, part_sums, part_guarantee)
            )
            plan.changes.append(
                functools.partial(_set_block, block, block_value, block_guarantee)
            )
            eps = Fraction(block_value[0]) - Fraction(block._value[0])
            dlt = Fraction(block_value[1]) - Fraction(block._value[1])
            node = block._enclosing
        plan.charge = (eps, dlt)
        return plan

    def _refuse_if_unaffordable(
        self, plan: _Plan, epsilon: float, delta: float
    ) -> None:
        if not fits((self.epsilon, self.delta), self._store.totals(), plan.charge):
            self._raise_exceeded(epsilon, delta)

    def _raise_exceeded(self, epsilon: float, delta: float) -> None:
        raise BudgetExceededError(
            f"privacy budget exceeded: spending epsilon={epsilon!r} (delta={delta!r}) "
            f"on top of spent={self.spent!r} would exceed the budget "
            f"epsilon={self.epsilon!r} (delta={self.delta!r}); "
            f"remaining={self.remaining!r}"
        )

    def _check_may_spend(self) -> None:
        refusal = self._refusal()
        if refusal is not None:
            raise BudgetExceededError(refusal)

    # Public API --------------------------------------------------------------------
    def check(self, epsilon: float, delta: float = 0.0) -> None:
        """Raise :class:`BudgetExceededError` if ``epsilon`` (and ``delta``) can't be spent.

        Nothing is reserved: with a budget shared by other threads or processes, a
        later :meth:`spend` can still be refused.

        Raises
        ------
        BudgetExceededError
            If spending would take the total above the budget, or if this accountant
            may not spend in this process (see Notes of :class:`BudgetAccountant`).
        RuntimeError
            Inside ``with acc.parallel():`` but outside its parts.
        ValueError
            If ``epsilon`` is not finite and > 0, or ``delta`` is not in [0, 1].
        """
        epsilon = check_positive(epsilon, "epsilon")
        delta = _check_delta(delta)
        self._check_may_spend()
        with self._lock.get():
            plan = self._plan(epsilon, delta, "", GUARANTEES[0])
            self._refuse_if_unaffordable(plan, epsilon, delta)

    def spend(
        self,
        epsilon: float,
        label: str = "unlabelled",
        delta: float = 0.0,
        *,
        guarantee: str = "dp",
    ) -> None:
        """Charge ``epsilon`` (and ``delta``) to the budget and record it in the ledger.

        The check against the budget and the record are one atomic step, also for a
        budget shared with other threads and processes.

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
            ``GUARANTEES``); recorded in the entry, so that ε-DP and
            ε-individual-DP releases can be told apart in the ledger.

        Raises
        ------
        BudgetExceededError
            If the budget cannot afford it, or this accountant may not spend in this
            process; nothing is recorded then.
        RuntimeError
            Inside ``with acc.parallel():`` but outside its parts.
        ValueError
            For an unknown ``guarantee``, or ``epsilon``/``delta`` out of range.
        """
        check_guarantee(guarantee)
        epsilon = check_positive(epsilon, "epsilon")
        delta = _check_delta(delta)
        self._check_may_spend()
        with self._lock.get():
            plan = self._plan(epsilon, delta, str(label), guarantee)
            ids = self._store.commit(plan.charge, plan.parent, plan.chain, plan.updates)
            if ids is None:
                self._raise_exceeded(epsilon, delta)
                return
            for owner, row in zip(plan.owners, ids, strict=True):
                if isinstance(owner, _Part):
                    owner.row = row
                elif isinstance(owner, ParallelBlock):
                    owner._row = row
            for change in plan.changes:
                change()

    def parallel(self, label: str = "parallel composition") -> ParallelBlock:
        """Open a parallel block: it charges the maximum over its parts.

        Use it as ``with acc.parallel(label) as block:`` and make each release
        inside ``with block.part(part_label):``, one part per *disjoint* subset of
        the records; within a part, spends add up. A block may be opened inside a
        part of another block. If the block raises, what was spent inside it stays
        charged: those releases happened.

        Parameters
        ----------
        label : str, default="parallel composition"

        Returns
        -------
        ParallelBlock

        Raises
        ------
        RuntimeError
            When entered inside another block but outside its parts.
        """
        stack = self._stack()
        scope = stack[-1] if stack else None
        if isinstance(scope, ParallelBlock):
            raise RuntimeError(
                f"a parallel block inside `with acc.parallel({scope.label!r}) as "
                "block:` must be opened inside one of its parts, "
                "`with block.part(label):`"
            )
        return ParallelBlock(self, str(label), scope)

    def split(self, n_or_weights: int | Sequence[float]) -> list[float]:
        """Split the remaining epsilon into parts that are guaranteed to fit.

        Parameters
        ----------
        n_or_weights : int or sequence of float
            The number of equal parts, or non-negative weights (at least one > 0)
            of parts proportional to them.

        Returns
        -------
        list of float
            Each part is the float nearest to its exact share of :attr:`remaining`,
            within a relative 2^-53 of it, so spending every part fits: the total
            then exceeds the budget by at most a relative 2^-53, within
            ``RELATIVE_TOLERANCE``. On a budget shared with other processes, the
            guarantee holds if no one else spends in between.

        Raises
        ------
        ValueError
            For an unlimited budget, or invalid ``n_or_weights``.
        BudgetExceededError
            If nothing is left.

        Examples
        --------
        >>> acc = BudgetAccountant(1.0)
        >>> parts = acc.split(3)
        >>> parts
        [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
        >>> for part in parts:
        ...     acc.spend(part)
        >>> acc.spent
        1.0
        """
        if isinstance(n_or_weights, numbers.Integral) and not isinstance(
            n_or_weights, bool
        ):
            weights = [Fraction(1)] * check_positive_int(n_or_weights, "n_or_weights")
        else:
            weights = _check_weights(n_or_weights, "n_or_weights")
        if self.epsilon == math.inf:
            raise ValueError(
                "an accountant with an unlimited budget (epsilon=inf) cannot be split"
            )
        left = Fraction(self.epsilon) - self._store.totals()[0]
        if left <= 0:
            raise BudgetExceededError(
                f"nothing left to split: spent={self.spent!r} of the budget "
                f"epsilon={self.epsilon!r}"
            )
        total = sum(weights, Fraction(0))
        return [float(left * weight / total) for weight in weights]

    @property
    def spent(self) -> float:
        """Epsilon spent so far, open parallel blocks included."""
        return float(self._store.totals()[0])

    @property
    def spent_delta(self) -> float:
        """Delta spent so far, open parallel blocks included."""
        return float(self._store.totals()[1])

    @property
    def remaining(self) -> float:
        """Epsilon still available (``inf`` for an unlimited accountant)."""
        if self.epsilon == math.inf:
            return math.inf
        return float(Fraction(self.epsilon) - self._store.totals()[0])

    @property
    def ledger(self) -> list[LedgerEntry]:
        """A copy of the ledger: one :class:`LedgerEntry` per charge."""
        return _entries_from_rows(self._store.rows())

    @property
    def path(self) -> str | None:
        """The file of an accountant made by :meth:`open`; ``None`` in memory."""
        return self._store.path if isinstance(self._store, SQLiteStore) else None

    def report(self) -> str:
        """Return the ledger as a readable table, parts indented.

        The ``guarantee`` column tells ε-DP (``dp``) from ε-individual-DP (``idp``)
        charges. A parallel block is marked ``(max of parts)``, each of its parts
        ``(sum)``.
        """
        lines = [f"{'label':<48} {'epsilon':>12} {'guarantee':>9}"]
        ledger = self.ledger
        for entry, name, suffix in ledger_lines(ledger):
            lines.append(
                f"{name:<48} {entry.epsilon:>12.6g} {entry.guarantee:>9}{suffix}"
            )
        budget = "inf" if self.epsilon == math.inf else f"{self.epsilon:.6g}"
        lines.append(f"{'spent':<48} {self.spent:>12.6g} of {budget}")
        for kind, title in (("dp", "ε-DP"), ("idp", "ε-iDP")):
            spent = math.fsum(e.epsilon for e in ledger if e.guarantee == kind)
            lines.append(f"{'  of which ' + title:<48} {spent:>12.6g}")
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
        return math.fsum(e.epsilon for e in self.ledger if e.guarantee == kind)

    # Copies, pickles and dictionaries ----------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Return the budget and the ledger as JSON-serialisable values.

        Returns
        -------
        dict
            ``"epsilon"`` (a float, or ``"inf"``), ``"delta"``, ``"spent"``,
            ``"spent_delta"`` (floats), ``"exact_spent"`` and
            ``"exact_spent_delta"`` (the exact totals as ``"numerator/denominator"``),
            ``"path"`` (the file of a store, else ``None``) and ``"ledger"`` (one
            :meth:`LedgerEntry.to_dict` per entry).

        Examples
        --------
        >>> import json
        >>> acc = BudgetAccountant(1.0)
        >>> acc.spend(0.25, label="counts")
        >>> copy = BudgetAccountant.from_dict(json.loads(json.dumps(acc.to_dict())))
        >>> copy.spent, copy.ledger == acc.ledger
        (0.25, True)
        """
        with self._lock.get():
            spent_eps, spent_delta = self._store.totals()
            ledger = self.ledger
        return {
            "epsilon": "inf" if self.epsilon == math.inf else self.epsilon,
            "delta": self.delta,
            "spent": float(spent_eps),
            "spent_delta": float(spent_delta),
            "exact_spent": f"{spent_eps.numerator}/{spent_eps.denominator}",
            "exact_spent_delta": f"{spent_delta.numerator}/{spent_delta.denominator}",
            "path": self.path,
            "ledger": [entry.to_dict() for entry in ledger],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BudgetAccountant:
        """Return an in-memory copy of an accountant's :meth:`to_dict`, for reading.

        The copy has the same budget, totals and ledger, and refuses to spend (with
        :class:`~privtab.exceptions.BudgetExceededError`): it is a record, never a
        second live budget for the same data.

        Raises
        ------
        ValueError, TypeError
            If ``data`` is not the output of :meth:`to_dict`.
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"data must be a dict, got {type(data).__name__}")
        missing = [key for key in ("epsilon", "delta", "ledger") if key not in data]
        if missing:
            raise ValueError(
                f"data is not a BudgetAccountant.to_dict(): no {', '.join(missing)}"
            )
        epsilon = math.inf if data["epsilon"] == "inf" else data["epsilon"]
        if epsilon != math.inf:
            epsilon = check_positive(epsilon, "epsilon")
        delta = _check_delta(data["delta"])
        if not isinstance(data["ledger"], list):
            raise TypeError(
                f"ledger must be a list, got {type(data['ledger']).__name__}"
            )
        entries = [LedgerEntry.from_dict(entry) for entry in data["ledger"]]
        spent = (
            _exact(
                data,
                "exact_spent",
                sum((Fraction(e.epsilon) for e in entries), Fraction(0)),
            ),
            _exact(
                data,
                "exact_spent_delta",
                sum((Fraction(e.delta) for e in entries), Fraction(0)),
            ),
        )
        copy = cls.__new__(cls)
        store = MemoryStore(float(epsilon), delta, _rows_from_entries(entries), spent)
        copy._setup(
            store,
            owner=_this_process(),
            copy_note="this BudgetAccountant is a copy for reading (made by "
            f"BudgetAccountant.from_dict): it cannot spend. {_SHARE_ADVICE}",
        )
        return copy

    def __copy__(self) -> BudgetAccountant:
        return self

    def __deepcopy__(self, memo: dict) -> BudgetAccountant:
        # An accountant is a shared ledger, not a value: scikit-learn's clone() (and
        # so GridSearchCV) deep-copies parameters, and a copy would let the clones
        # spend a budget the original never sees.
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        if self._owner is None:
            return (_on_store, (self._store,))
        return (
            _unpickle_in_memory,
            (self._id, self._owner, self.to_dict(), self._copy_note),
        )

    def __repr__(self) -> str:
        where = "" if self.path is None else f", path={self.path!r}"
        return (
            f"BudgetAccountant(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"spent={self.spent!r}{where})"
        )


def rehearsal_copy(
    source: BudgetAccountant | str | os.PathLike[str], epsilon: float | None = None
) -> BudgetAccountant:
    """Return an in-memory accountant that starts where ``source`` stands, and spends.

    For trying spends out (a plan of releases) through the accountant's own
    composition and float tolerance without touching ``source``: the copy holds the
    budget, the exact totals and the ledger rows (with the time of each charge) of
    ``source``, and what is spent on it stays in it.

    Parameters
    ----------
    source : BudgetAccountant, str or path-like
        An accountant, or the file of a budget store. A store (given by its path or
        behind an accountant made by :meth:`BudgetAccountant.open`) is read in one
        read-only transaction: never written, never locked against its writers.
    epsilon : float, optional
        The budget of the copy (finite and > 0, or ``inf``); that of ``source`` by
        default.

    Returns
    -------
    BudgetAccountant

    Raises
    ------
    TypeError
        If ``source`` is neither an accountant nor a path.
    FileNotFoundError, ValueError
        If the path holds no budget store; for an invalid ``epsilon``.

    Examples
    --------
    >>> acc = BudgetAccountant(1.0)
    >>> acc.spend(0.75, label="counts")
    >>> trial = rehearsal_copy(acc)
    >>> trial.spend(0.25, label="histogram")
    >>> trial.remaining, acc.remaining
    (0.0, 0.25)
    """
    path = source.path if isinstance(source, BudgetAccountant) else source
    if isinstance(source, BudgetAccountant) and path is None:
        with source._lock.get():
            store = MemoryStore(
                source.epsilon,
                source.delta,
                source._store.rows(),
                source._store.totals(),
            )
    elif isinstance(path, str | os.PathLike):
        store = read_snapshot(path)
    else:
        raise TypeError(
            "source must be a privtab.BudgetAccountant or the path of a budget "
            f"store, got {type(source).__name__}"
        )
    if epsilon is not None:
        store.epsilon = (
            math.inf if epsilon == math.inf else check_positive(epsilon, "epsilon")
        )
    copy = BudgetAccountant.__new__(BudgetAccountant)
    copy._setup(store, owner=_this_process())
    return copy


def entry_times(accountant: BudgetAccountant) -> list[float]:
    """Return the time (seconds since the epoch) of each entry of ``accountant.ledger``.

    A parallel block's time is that of its first charge; ``nan`` where the time is
    not known (a copy made by :meth:`BudgetAccountant.from_dict`).
    """
    return [row.time for row in accountant._store.rows() if row.parent is None]


def _set_part(part: _Part, sums: tuple[Fraction, Fraction], guarantee: str) -> None:
    part.epsilon, part.delta = sums
    part.guarantee = guarantee


def _set_block(
    block: ParallelBlock, value: tuple[float, float], guarantee: str
) -> None:
    block._value = value
    block._guarantee = guarantee


def _exact(data: Mapping[str, Any], key: str, default: Fraction) -> Fraction:
    if key not in data:
        return default
    try:
        return Fraction(str(data[key]))
    except ValueError:
        raise ValueError(
            f"{key} must be an exact fraction 'numerator/denominator', got "
            f"{data[key]!r}"
        ) from None


def _check_weights(weights: Any, name: str) -> list[Fraction]:
    if isinstance(weights, str | bytes) or not isinstance(weights, Iterable):
        raise TypeError(
            f"{name} must be an int or a sequence of numbers, got "
            f"{type(weights).__name__}"
        )
    values = [check_real(w, name) for w in weights]
    if not values or any(not math.isfinite(w) or w < 0 for w in values):
        raise ValueError(f"{name} must be finite and >= 0, got {values!r}")
    if not any(w > 0 for w in values):
        raise ValueError(f"{name} must have a positive sum, got {values!r}")
    return [Fraction(w) for w in values]


def _on_store(store: LedgerStore) -> BudgetAccountant:
    accountant = BudgetAccountant.__new__(BudgetAccountant)
    accountant._setup(store)
    return accountant


def _unpickle_in_memory(
    accountant_id: str,
    owner: tuple[int, str],
    data: dict[str, Any],
    copy_note: str | None,
) -> BudgetAccountant:
    owner = tuple(owner)  # type: ignore[assignment]
    if owner == _this_process() and copy_note is None:
        original = _LIVE.get(accountant_id)
        if original is not None:
            return original
    copy = BudgetAccountant.from_dict(data)
    if copy_note is None:
        gone = " after the original was gone" if owner == _this_process() else ""
        copy._copy_note = (
            f"this in-memory BudgetAccountant was created in process {owner[0]} and "
            f"copied into process {os.getpid()} by pickling{gone} (as n_jobs, "
            f"joblib, multiprocessing and Dask do): {_SHARE_ADVICE}"
        )
    return copy


_DEFAULT = BudgetAccountant()
_CURRENT: contextvars.ContextVar[BudgetAccountant | None] = contextvars.ContextVar(
    "privtab_default_accountant", default=None
)


_process_default = _DEFAULT


def default_accountant() -> BudgetAccountant:
    """Return the accountant charged when ``accountant=None``.

    That is the accountant of the innermost :func:`use_accountant` of the current
    thread (or asyncio task), else the process-wide default: the one given to
    :func:`set_default_accountant`, or privtab's own, whose budget is unlimited and
    which records every spend so that ``report()`` shows what a session released.
    privtab's own default spends only in the process that imported privtab:
    inherited by a forked child or unpickled elsewhere, it refuses to spend (see
    :class:`BudgetAccountant`).
    """
    current = _CURRENT.get()
    return _process_default if current is None else current


def set_default_accountant(accountant: BudgetAccountant | None) -> BudgetAccountant:
    """Make ``accountant`` the process-wide default, charged when ``accountant=None``.

    Gives every call that names no accountant a budget: a limited in-memory one
    (``BudgetAccountant(1.0)``) or a durable one shared with other processes
    (``BudgetAccountant.open(path)``). :func:`use_accountant` blocks still take
    precedence in their context.

    Parameters
    ----------
    accountant : BudgetAccountant or None
        The new default; ``None`` restores privtab's own (unlimited, recording).

    Returns
    -------
    BudgetAccountant
        The previous process-wide default, to restore it later.

    Raises
    ------
    TypeError
        If ``accountant`` is neither a ``BudgetAccountant`` nor ``None``.

    Examples
    --------
    >>> import privtab as pt
    >>> previous = pt.set_default_accountant(pt.BudgetAccountant(1.0))
    >>> pt.default_accountant().epsilon
    1.0
    >>> _ = pt.set_default_accountant(previous)
    """
    global _process_default
    if accountant is not None and not isinstance(accountant, BudgetAccountant):
        raise TypeError(
            "accountant must be a privtab.BudgetAccountant or None, got "
            f"{type(accountant).__name__}"
        )
    previous = _process_default
    _process_default = _DEFAULT if accountant is None else accountant
    return previous


@contextlib.contextmanager
def use_accountant(accountant: BudgetAccountant) -> Iterator[BudgetAccountant]:
    """Make ``accountant`` the one charged when ``accountant=None``, in this context.

    The setting is a :mod:`contextvars` variable: it holds in the current thread
    (or asyncio task) until the block ends, and threads started inside the block do
    not see it (pass the accountant to them). Blocks nest. The command line's
    ``--budget PATH`` uses it.

    Examples
    --------
    >>> acc = BudgetAccountant(1.0)
    >>> with use_accountant(acc):
    ...     default_accountant() is acc
    True
    >>> default_accountant() is acc
    False
    """
    if not isinstance(accountant, BudgetAccountant):
        raise TypeError(
            "accountant must be a privtab.BudgetAccountant, got "
            f"{type(accountant).__name__}"
        )
    token = _CURRENT.set(accountant)
    try:
        yield accountant
    finally:
        _CURRENT.reset(token)


def resolve_accountant(accountant: BudgetAccountant | None) -> BudgetAccountant:
    """Return ``accountant``, or :func:`default_accountant` when it is ``None``."""
    if accountant is None:
        return default_accountant()
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
