"""Where a :class:`~privtab.BudgetAccountant` keeps its budget and ledger.

One small interface, :class:`LedgerStore`: read the budget, the exact totals spent
and the ledger rows, and :meth:`LedgerStore.commit` a spend, which checks the totals
against the budget and records the rows in one atomic step. Two implementations:

- :class:`MemoryStore`, a list in the process that created it (the accountant of
  ``BudgetAccountant(epsilon)``);
- :class:`SQLiteStore`, a SQLite file (``BudgetAccountant.open(path, ...)``) in WAL
  mode, where each commit is one ``BEGIN IMMEDIATE`` transaction, so every handle on
  the file, in any thread or process, checks against the same totals.

A store for budgets shared across machines (a server database) would be a third
implementation of the same interface; the accountant and the estimators do not change.

The ledger is a forest of rows: a ``"spend"`` row is one charge; a ``"parallel"`` row
is a parallel-composition block whose children are its ``"part"`` rows, and a part's
children are the spends (and nested blocks) made inside it. Only top-level rows count
towards the totals: a block's row holds its current charge, raised by each commit
that raises it.

Core kernels called: none (SQLite through the standard library).
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Protocol

__all__ = [
    "KINDS",
    "RELATIVE_TOLERANCE",
    "LedgerStore",
    "MemoryStore",
    "NewRow",
    "ProcessLock",
    "Row",
    "RowUpdate",
    "SQLiteStore",
    "read_snapshot",
]

#: The kinds of ledger row: one charge, a parallel block, one part of a block.
KINDS: tuple[str, ...] = ("spend", "parallel", "part")

_FORMAT = "privtab budget"
_VERSION = 1
#: Seconds a commit waits for another writer of the same file before giving up.
_BUSY_TIMEOUT = 60.0


@dataclass(frozen=True)
class Row:
    """One ledger row as stored: ``parent`` is ``None`` for a top-level row."""

    id: int
    parent: int | None
    kind: str
    label: str
    epsilon: float
    delta: float
    guarantee: str
    time: float
    pid: int


@dataclass(frozen=True)
class NewRow:
    """A row to insert; its parent is given by :meth:`LedgerStore.commit`."""

    kind: str
    label: str
    epsilon: float
    delta: float
    guarantee: str

    def stored(self, parent: int | None, now: float, pid: int) -> tuple[Any, ...]:
        """Return the stored fields after the id, in :class:`Row`'s (and the table's) order."""
        return (
            parent,
            self.kind,
            self.label,
            self.epsilon,
            self.delta,
            self.guarantee,
            now,
            pid,
        )


@dataclass(frozen=True)
class RowUpdate:
    """New charge and guarantee of an existing block or part row."""

    id: int
    epsilon: float
    delta: float
    guarantee: str


class LedgerStore(Protocol):
    """The budget, exact totals and ledger rows of one accountant."""

    epsilon: float
    delta: float

    def totals(self) -> tuple[Fraction, Fraction]:
        """Return the exact (epsilon, delta) spent: the sum of the top-level rows."""
        ...

    def rows(self) -> list[Row]:
        """Return every ledger row, in the order recorded."""
        ...

    def commit(
        self,
        charge: tuple[Fraction, Fraction],
        parent: int | None,
        chain: Sequence[NewRow],
        updates: Sequence[RowUpdate],
    ) -> list[int] | None:
        """Record a spend if the budget affords ``charge``, atomically.

        Checks that the totals plus ``charge`` stay within the budget and, if so,
        inserts ``chain`` (the first row under ``parent``, each next one under the
        row before it), applies ``updates`` and adds ``charge`` to the totals, all or
        nothing.

        Returns
        -------
        list of int or None
            The ids of the inserted rows, or ``None`` (and nothing changed) if the
            budget cannot afford ``charge``.
        """
        ...


#: How far above its budget the exact total of the spends may go, relative to the
#: budget: 2^-52. A float is within a relative 2^-53 of the real number it stands
#: for, so spends written as floats whose real values add up to the budget (ten of
#: 0.1 in 1.0, 160 of 0.025 in 4.0, ``BudgetAccountant.split`` parts) fit, while the
#: total can never exceed the budget by more than this.
RELATIVE_TOLERANCE = Fraction(1, 2**52)


def fits(
    budget: tuple[float, float],
    spent: tuple[Fraction, Fraction],
    charge: tuple[Fraction, Fraction],
) -> bool:
    """Whether ``spent + charge`` fits ``budget`` (``inf``: unlimited).

    Exactly, up to :data:`RELATIVE_TOLERANCE` of the budget.
    """
    epsilon, delta = budget
    eps_ok = epsilon == math.inf or spent[0] + charge[0] <= Fraction(epsilon) * (
        1 + RELATIVE_TOLERANCE
    )
    return eps_ok and spent[1] + charge[1] <= Fraction(delta) * (1 + RELATIVE_TOLERANCE)


class MemoryStore:
    """A ledger held in this process; thread-safe.

    Parameters
    ----------
    epsilon, delta : float
        The budget (validated by the accountant).
    rows : sequence of Row, optional
        Rows to start from (a copy being restored).
    spent : tuple of Fraction, optional
        The exact totals of ``rows``.
    """

    def __init__(
        self,
        epsilon: float,
        delta: float,
        rows: Sequence[Row] = (),
        spent: tuple[Fraction, Fraction] = (Fraction(0), Fraction(0)),
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self._rows: dict[int, Row] = {row.id: row for row in rows}
        self._next_id = max(self._rows, default=0) + 1
        self._spent = spent
        self._lock = ProcessLock()

    def totals(self) -> tuple[Fraction, Fraction]:
        return self._spent

    def rows(self) -> list[Row]:
        with self._lock.get():
            return list(self._rows.values())

    def commit(
        self,
        charge: tuple[Fraction, Fraction],
        parent: int | None,
        chain: Sequence[NewRow],
        updates: Sequence[RowUpdate],
    ) -> list[int] | None:
        with self._lock.get():
            if not fits((self.epsilon, self.delta), self._spent, charge):
                return None
            now, pid = time.time(), os.getpid()
            ids = []
            for new in chain:
                row_id, self._next_id = self._next_id, self._next_id + 1
                self._rows[row_id] = Row(row_id, *new.stored(parent, now, pid))
                ids.append(row_id)
                parent = row_id
            for update in updates:
                self._rows[update.id] = replace(
                    self._rows[update.id],
                    epsilon=update.epsilon,
                    delta=update.delta,
                    guarantee=update.guarantee,
                )
            self._spent = (self._spent[0] + charge[0], self._spent[1] + charge[1])
            return ids


_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS budget (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 0),
    format TEXT NOT NULL,
    version INTEGER NOT NULL,
    store_id TEXT NOT NULL,
    epsilon REAL,
    delta REAL NOT NULL,
    spent_epsilon TEXT NOT NULL,
    spent_delta TEXT NOT NULL,
    created REAL NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS ledger (
    id INTEGER PRIMARY KEY,
    parent INTEGER REFERENCES ledger (id),
    kind TEXT NOT NULL CHECK (kind IN ('spend', 'parallel', 'part')),
    label TEXT NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    guarantee TEXT NOT NULL,
    time REAL NOT NULL,
    pid INTEGER NOT NULL
)""",
)

#: Connections inherited through ``fork``: never used nor closed in the child, where
#: SQLite's state for them is the parent's.
_INHERITED: list[sqlite3.Connection] = []


class ProcessLock:
    """A re-entrant lock that a forked child gets afresh.

    A lock copied by ``fork`` while another thread of the parent held it would stay
    held for ever in the child, where that thread does not exist.
    """

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._lock = threading.RLock()

    def get(self) -> threading.RLock:
        """Return the lock of this process."""
        if self._pid != os.getpid():
            self._pid, self._lock = os.getpid(), threading.RLock()
        return self._lock


def _reopen(path: str, store_id: str) -> SQLiteStore:
    return SQLiteStore.open(path, store_id=store_id)


def _fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


class SQLiteStore:
    """A ledger kept in a SQLite file, shared by every handle on the file.

    Use :meth:`open`. The file is created readable and writable by its owner only
    (0600); SQLite gives its ``-wal`` and ``-shm`` companions the same permissions.
    Each commit is one ``BEGIN IMMEDIATE`` transaction with ``synchronous=FULL``: the
    check, the rows and the new totals are written together, and a commit that
    returned survives a crash of the process (and, the file system permitting, of the
    machine). Each process opens its own connection (after ``fork`` too); threads
    share it under a lock.

    Attributes
    ----------
    path : str
        Absolute path of the file.
    store_id : str
        Random identifier written at creation, so that a handle sent to another
        process reopens this store and not another one made at the same path.
    epsilon, delta : float
        The budget (``inf`` epsilon: unlimited).
    """

    def __init__(self, path: str, store_id: str, epsilon: float, delta: float):
        self.path = path
        self.store_id = store_id
        self.epsilon = epsilon
        self.delta = delta
        self._lock = ProcessLock()
        self._connection: sqlite3.Connection | None = None
        self._pid = os.getpid()

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        # A reference, not a copy: unpickled (in any process), it reopens the file.
        return (_reopen, (self.path, self.store_id))

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        epsilon: float | None = None,
        delta: float | None = None,
        store_id: str | None = None,
    ) -> SQLiteStore:
        """Create (``epsilon`` given) or open the store at ``path``.

        Parameters
        ----------
        path : str or path-like
        epsilon : float, optional
            The budget of a new store; for an existing one it must equal the stored
            budget.
        delta : float, optional
            Likewise; ``None`` is 0 for a new store and "any" for an existing one.
        store_id : str, optional
            The identifier the existing store must have.

        Raises
        ------
        FileNotFoundError
            If there is no file at ``path`` and ``epsilon`` is not given.
        ValueError
            If the file is not a privtab budget store, or holds another budget or
            another store than asked for.
        """
        absolute = os.path.abspath(os.fspath(path))
        if epsilon is not None:
            with contextlib.suppress(FileExistsError):
                os.close(os.open(absolute, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        elif not os.path.exists(absolute):
            raise FileNotFoundError(
                f"no budget store at {absolute!r}; create one with "
                "BudgetAccountant.open(path, epsilon=...) or privtab budget init "
                "PATH --epsilon E"
            )
        connection = _connect(absolute)
        try:
            found = _initialise(connection, absolute, epsilon, delta)
        finally:
            connection.close()
        if store_id is not None and found.store_id != store_id:
            raise ValueError(
                f"the budget store at {absolute!r} is not the one this accountant "
                f"was opened on (store id {found.store_id}, expected {store_id}): "
                "it was replaced"
            )
        return found

    # The connection of this process ------------------------------------------------
    @contextlib.contextmanager
    def _connected(self) -> Iterator[sqlite3.Connection]:
        with self._lock.get():
            if self._pid != os.getpid():
                if self._connection is not None:
                    _INHERITED.append(self._connection)
                self._connection, self._pid = None, os.getpid()
            if self._connection is None:
                self._connection = _connect(self.path)
            yield self._connection

    def close(self) -> None:
        """Close this process's connection (reopened on the next use)."""
        with self._lock.get():
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
                self._connection = None

    # LedgerStore ---------------------------------------------------------------------
    def totals(self) -> tuple[Fraction, Fraction]:
        with self._connected() as connection:
            row = connection.execute(
                "SELECT spent_epsilon, spent_delta FROM budget"
            ).fetchone()
        return Fraction(row[0]), Fraction(row[1])

    def rows(self) -> list[Row]:
        with self._connected() as connection:
            found = connection.execute(
                "SELECT id, parent, kind, label, epsilon, delta, guarantee, time, pid "
                "FROM ledger ORDER BY id"
            )
            return [Row(*values) for values in found]

    def commit(
        self,
        charge: tuple[Fraction, Fraction],
        parent: int | None,
        chain: Sequence[NewRow],
        updates: Sequence[RowUpdate],
    ) -> list[int] | None:
        with self._connected() as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                ids = self._commit_in(connection, charge, parent, chain, updates)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            if ids is None:
                connection.execute("ROLLBACK")
                return None
            connection.execute("COMMIT")
            return ids

    def _commit_in(
        self,
        connection: sqlite3.Connection,
        charge: tuple[Fraction, Fraction],
        parent: int | None,
        chain: Sequence[NewRow],
        updates: Sequence[RowUpdate],
    ) -> list[int] | None:
        spent_eps, spent_delta = connection.execute(
            "SELECT spent_epsilon, spent_delta FROM budget"
        ).fetchone()
        spent = (Fraction(spent_eps), Fraction(spent_delta))
        if not fits((self.epsilon, self.delta), spent, charge):
            return None
        now, pid = time.time(), os.getpid()
        ids = []
        for new in chain:
            cursor = connection.execute(
                "INSERT INTO ledger (parent, kind, label, epsilon, delta, guarantee, "
                "time, pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                new.stored(parent, now, pid),
            )
            parent = cursor.lastrowid
            assert parent is not None
            ids.append(parent)
        connection.executemany(
            "UPDATE ledger SET epsilon = ?, delta = ?, guarantee = ? WHERE id = ?",
            [(u.epsilon, u.delta, u.guarantee, u.id) for u in updates],
        )
        connection.execute(
            "UPDATE budget SET spent_epsilon = ?, spent_delta = ?",
            (
                _fraction_text(spent[0] + charge[0]),
                _fraction_text(spent[1] + charge[1]),
            ),
        )
        return ids


def _connect(path: str) -> sqlite3.Connection:
    """Open ``path`` (which must exist) for reading and writing, in WAL mode."""
    try:
        connection = sqlite3.connect(
            f"file:{_uri_path(path)}?mode=rw",
            uri=True,
            timeout=_BUSY_TIMEOUT,
            isolation_level=None,
            check_same_thread=False,
        )
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")
    except sqlite3.DatabaseError as exc:
        raise ValueError(
            f"{path!r} is not a privtab budget store (SQLite: {exc})"
        ) from exc
    return connection


def _uri_path(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/")


def _initialise(
    connection: sqlite3.Connection,
    path: str,
    epsilon: float | None,
    delta: float | None,
) -> SQLiteStore:
    """Create the tables and the budget if new; check the budget asked for."""
    try:
        connection.execute("BEGIN IMMEDIATE")
        try:
            found = _initialise_in(connection, path, epsilon, delta)
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise ValueError(
            f"{path!r} is not a privtab budget store (SQLite: {exc})"
        ) from exc
    return found


def _initialise_in(
    connection: sqlite3.Connection,
    path: str,
    epsilon: float | None,
    delta: float | None,
) -> SQLiteStore:
    tables = {
        name
        for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
        )
    }
    _check_tables(tables, path)
    for statement in _SCHEMA:
        connection.execute(statement)
    row = connection.execute(
        "SELECT format, version, store_id, epsilon, delta FROM budget"
    ).fetchone()
    if row is None:
        if epsilon is None:
            raise ValueError(
                f"the budget store at {path!r} holds no budget yet; give epsilon "
                "to create it"
            )
        store_id = secrets.token_hex(16)
        new_delta = 0.0 if delta is None else delta
        connection.execute(
            "INSERT INTO budget VALUES (0, ?, ?, ?, ?, ?, '0/1', '0/1', ?)",
            (
                _FORMAT,
                _VERSION,
                store_id,
                None if epsilon == math.inf else epsilon,
                new_delta,
                time.time(),
            ),
        )
        return SQLiteStore(path, store_id, epsilon, new_delta)
    stored_format, version, store_id, stored_eps, stored_delta = row
    _check_version(stored_format, version, path)
    stored_eps = math.inf if stored_eps is None else float(stored_eps)
    if epsilon is not None and epsilon != stored_eps:
        raise ValueError(
            f"the budget store at {path!r} holds a budget of epsilon={stored_eps!r}, "
            f"not epsilon={epsilon!r}; omit epsilon to open it"
        )
    if delta is not None and delta != stored_delta:
        raise ValueError(
            f"the budget store at {path!r} holds a budget of delta="
            f"{stored_delta!r}, not delta={delta!r}"
        )
    return SQLiteStore(path, store_id, stored_eps, float(stored_delta))


def _check_tables(tables: set[str], path: str) -> None:
    if tables - {"budget", "ledger"}:
        raise ValueError(
            f"{path!r} is a SQLite database but not a privtab budget store "
            f"(tables {', '.join(sorted(tables))})"
        )


def _check_version(stored_format: object, version: object, path: str) -> None:
    if stored_format != _FORMAT or version != _VERSION:
        raise ValueError(
            f"{path!r} is not a privtab budget store of version {_VERSION} "
            f"(format {stored_format!r}, version {version!r})"
        )


def read_snapshot(path: str | os.PathLike[str]) -> MemoryStore:
    """Return the budget, totals and ledger of the store at ``path``, in memory.

    The file is read in one read transaction on a read-only connection: nothing is
    written to it, and a writer is never held off (in WAL mode readers do not block
    writers). SQLite may leave the empty ``-wal`` and ``-shm`` companions next to
    the file, as any reader of a WAL database does.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ValueError
        If the file is not a privtab budget store, or holds no budget yet.
    """
    absolute = os.path.abspath(os.fspath(path))
    if not os.path.exists(absolute):
        raise FileNotFoundError(
            f"no budget store at {absolute!r}; create one with "
            "BudgetAccountant.open(path, epsilon=...) or privtab budget init "
            "PATH --epsilon E"
        )
    try:
        connection = sqlite3.connect(
            f"file:{_uri_path(absolute)}?mode=ro",
            uri=True,
            timeout=_BUSY_TIMEOUT,
            isolation_level=None,
        )
        try:
            connection.execute("BEGIN")
            tables = {
                name
                for (name,) in connection.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                )
            }
            _check_tables(tables, absolute)
            if "budget" not in tables:
                raise ValueError(f"{absolute!r} holds no privtab budget")
            budget = connection.execute(
                "SELECT format, version, epsilon, delta, spent_epsilon, spent_delta "
                "FROM budget"
            ).fetchone()
            if budget is None:
                raise ValueError(f"the budget store at {absolute!r} holds no budget")
            found = connection.execute(
                "SELECT id, parent, kind, label, epsilon, delta, guarantee, time, pid "
                "FROM ledger ORDER BY id"
            )
            rows = [Row(*values) for values in found]
            connection.execute("COMMIT")
        finally:
            connection.close()
    except sqlite3.DatabaseError as exc:
        raise ValueError(
            f"{absolute!r} is not a privtab budget store (SQLite: {exc})"
        ) from exc
    stored_format, version, epsilon, delta, spent_eps, spent_delta = budget
    _check_version(stored_format, version, absolute)
    return MemoryStore(
        math.inf if epsilon is None else float(epsilon),
        float(delta),
        rows,
        (Fraction(spent_eps), Fraction(spent_delta)),
    )
