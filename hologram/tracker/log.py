"""The change log: one SQLite file, `<data>/tracker.db`, of tool calls and the file changes
each made. Contents are not here: digests name them in the kernel's content-addressed store."""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from hologram.kernel import migrate_sqlite

CHANGE_LOG_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE calls (
        call_id TEXT PRIMARY KEY,
        tool TEXT NOT NULL,
        at REAL NOT NULL,
        mechanism TEXT NOT NULL,
        undone_at REAL
    );
    CREATE TABLE changes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        call_id TEXT NOT NULL REFERENCES calls(call_id),
        path TEXT NOT NULL,
        kind TEXT NOT NULL,
        old_path TEXT,
        before_digest TEXT,
        after_digest TEXT,
        before_mode INTEGER,
        after_mode INTEGER,
        diff TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX changes_call ON changes(call_id);
    CREATE INDEX changes_path ON changes(path);
    """,
)
"""Schema steps in order (registered in hologram/update/stores.py); the version is their
count, kept in `PRAGMA user_version`."""

CHANGE_LOG_TABLES = ("calls", "changes")


class Kind(StrEnum):
    CREATE = "create"
    MODIFY = "modify"
    DELETE = "delete"
    RENAME = "rename"


@dataclass(frozen=True, slots=True)
class Change:
    """One file a call changed. `path` is where the file is after the call (for a delete,
    where it was); a rename's `old_path` is where it was before."""

    path: str
    kind: Kind
    before_digest: str | None = None
    after_digest: str | None = None
    before_mode: int | None = None
    after_mode: int | None = None
    old_path: str | None = None
    diff: str = ""
    id: int = 0
    call_id: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Call:
    call_id: str
    tool: str
    at: float
    mechanism: str
    undone_at: float | None
    changes: tuple[Change, ...]

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["changes"] = [c.as_dict() for c in self.changes]
        return data


class ChangeLog:
    """The calls and changes of one data dir. Thread-safe: the tracker writes from the loop,
    the CLI and the service read."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # No sync per commit (see shadow.keep): a crash loses at most the newest records.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._lock = threading.Lock()
        migrate_sqlite(self._db, CHANGE_LOG_MIGRATIONS, f"the change log {path}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def record(
        self, call_id: str, tool: str, at: float, mechanism: str, changes: list[Change]
    ) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            self._db.execute(
                "INSERT OR IGNORE INTO calls(call_id, tool, at, mechanism) VALUES (?,?,?,?)",
                (call_id, tool, at, mechanism),
            )
            self._db.executemany(
                "INSERT INTO changes(call_id, path, kind, old_path, before_digest, "
                "after_digest, before_mode, after_mode, diff) VALUES (?,?,?,?,?,?,?,?,?)",
                [
                    (
                        *(call_id, c.path, str(c.kind), c.old_path, c.before_digest),
                        *(c.after_digest, c.before_mode, c.after_mode, c.diff),
                    )
                    for c in changes
                ],
            )
            self._db.execute("COMMIT")

    def mark_undone(self, call_id: str, at: float) -> None:
        with self._lock:
            self._db.execute("UPDATE calls SET undone_at = ? WHERE call_id = ?", (at, call_id))

    def call(self, call_id: str) -> Call | None:
        with self._lock:
            row = self._db.execute(
                "SELECT call_id, tool, at, mechanism, undone_at FROM calls WHERE call_id = ?",
                (call_id,),
            ).fetchone()
            if row is None:
                return None
            return _call(row, self._changes(call_id))

    def calls(self, limit: int = 50) -> list[Call]:
        with self._lock:
            rows = self._db.execute(
                "SELECT call_id, tool, at, mechanism, undone_at FROM calls "
                "ORDER BY rowid DESC LIMIT ?",
                (limit,),
            ).fetchall()
            return [_call(row, self._changes(row[0])) for row in rows]

    def later(self, change: Change) -> Change | None:
        """The first change after `change` (by another call) to the file it left behind."""
        paths = {change.path} | ({change.old_path} if change.old_path else set())
        marks = ",".join("?" * len(paths))
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM changes JOIN calls USING (call_id) "
                "WHERE id > ? AND call_id != ? AND undone_at IS NULL "
                f"AND (path IN ({marks}) OR old_path IN ({marks})) ORDER BY id LIMIT 1",
                (change.id, change.call_id, *paths, *paths),
            ).fetchone()
        return None if row is None else _change(row)

    def _changes(self, call_id: str) -> list[Change]:
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM changes WHERE call_id = ? ORDER BY id",
            (call_id,),
        ).fetchall()
        return [_change(r) for r in rows]


_COLUMNS = (
    "id, call_id, path, kind, old_path, before_digest, after_digest, before_mode, after_mode, diff"
)


def _call(row: tuple[Any, ...], changes: list[Change]) -> Call:
    call_id, tool, at, mechanism, undone_at = row
    return Call(call_id, tool, at, mechanism, undone_at, tuple(changes))


def _change(row: tuple[Any, ...]) -> Change:
    cid, call_id, path, kind, old, bd, ad, bm, am, diff = row
    return Change(path, Kind(kind), bd, ad, bm, am, old, diff, cid, call_id)
