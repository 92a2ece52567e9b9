"""The input journal: every acknowledged input, on disk before it is acknowledged.

An input is written (and committed) before its id goes back to whoever sent it, and marked
done when its turn ends. After a crash, whatever is not marked done is handed to the scheduler
again: acknowledged inputs are never lost, and a finished one never runs twice.

Writes are group-committed: those that arrive while a commit is in flight wait for the next
one, which takes them all in one transaction, one fsync and one hop to the journal's thread.
Fifty clients sending at once then cost a few commits, not fifty queued one behind another.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, TypedDict, TypeVar

from hologram.kernel.schema import SchemaTooNew, migrate_sqlite
from hologram.kernel.tasks import KernelTasks, TaskScope
from hologram.sdk import MediaRef

T = TypeVar("T")

MIGRATIONS: tuple[str, ...] = (
    # 1: the inputs. IF NOT EXISTS: journals shipped before versions existed have it already.
    """
CREATE TABLE IF NOT EXISTS inputs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    text TEXT NOT NULL,
    channel TEXT NOT NULL,
    level INTEGER NOT NULL,
    source TEXT NOT NULL,
    user_id TEXT NOT NULL,
    extra TEXT NOT NULL,
    state TEXT NOT NULL,
    reply TEXT,
    created_at REAL NOT NULL,
    finished_at REAL
)
""",
    # 2: how many times each input has started running, so a re-run after a crash is known
    # as one (memory keys its writes by input and attempt).
    "ALTER TABLE inputs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
    # 3: the media that came with each input (JSON list of `MediaRef.to_dict()`; the bytes
    # are in the media store), so a re-run after a restart shows the model the same images.
    "ALTER TABLE inputs ADD COLUMN media TEXT NOT NULL DEFAULT '[]'",
)
"""The input journal's schema steps (see `hologram.kernel.schema`)."""


class InputState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    STOPPED = "stopped"
    FAILED = "failed"


UNFINISHED = (InputState.QUEUED, InputState.RUNNING)


@dataclass(frozen=True, slots=True)
class InputRecord:
    id: int
    text: str
    channel: str
    level: int
    source: str
    user_id: str = ""
    extra: dict[str, Any] | None = None
    attempts: int = 0
    """Times it has started running before (a re-run after a crash has 1 or more)."""
    media: tuple[MediaRef, ...] = ()
    """Media that came with the input, already in the media store."""


class RecordRow(TypedDict):
    """One input as the journal has it (`InputJournal.get`)."""

    id: int
    text: str
    channel: str
    level: int
    source: str
    state: InputState
    reply: str | None
    created: float
    finished: float | None


_ROW_COLUMNS = "id, text, channel, level, source, state, reply, created_at, finished_at"


def _record_row(row: tuple[Any, ...]) -> RecordRow:
    ident, text, channel, level, source, state, reply, created, finished = row
    return RecordRow(
        id=ident,
        text=text,
        channel=channel,
        level=level,
        source=source,
        state=InputState(state),
        reply=reply,
        created=created,
        finished=finished,
    )


class JournalError(Exception):
    pass


class InputJournal:
    def __init__(
        self,
        db: sqlite3.Connection,
        path: Path,
        thread: ThreadPoolExecutor,
        tasks: TaskScope | None = None,
    ) -> None:
        self._tasks = tasks or KernelTasks().scope("journal")
        self._db = db
        self.path = path
        self._thread = thread
        """The one thread that touches the connection: writes and reads stay in order."""
        self._pending: list[tuple[str, tuple[Any, ...], asyncio.Future[int | None]]] = []
        self._committing: asyncio.Task[None] | None = None
        self.commits = 0
        self.writes = 0
        self._closed = False

    @classmethod
    async def open(cls, path: Path, tasks: TaskScope | None = None) -> InputJournal:
        thread = ThreadPoolExecutor(1, thread_name_prefix="input-journal")

        def connect() -> sqlite3.Connection:
            db = sqlite3.connect(path, check_same_thread=False)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
                db.isolation_level = None  # the schema steps manage their own transactions
                migrate_sqlite(db, MIGRATIONS, f"the input journal {path}")
                db.isolation_level = ""
            except (sqlite3.DatabaseError, SchemaTooNew):
                db.close()
                raise
            return db

        try:
            db = await asyncio.get_running_loop().run_in_executor(thread, connect)
        except (sqlite3.DatabaseError, SchemaTooNew) as exc:
            thread.shutdown()
            raise JournalError(
                f"the input journal {path} cannot be read ({exc}); it was left untouched: "
                "move it aside to start with an empty journal"
            ) from exc
        return cls(db, path, thread, tasks)

    # ---- group commit ---------------------------------------------------------------------

    async def _write(self, sql: str, params: tuple[Any, ...]) -> int | None:
        """Run one statement in the next commit; returns its row id once that commit is on
        disk."""
        if self._closed:
            raise JournalError(f"the input journal {self.path} is closed")
        done = asyncio.get_running_loop().create_future()
        self._pending.append((sql, params, done))
        if self._committing is None or self._committing.done():
            # Awaited: every record's future carries the commit's outcome to its writer.
            self._committing = self._tasks.spawn(
                self._commit_pending(), name="journal-commit", awaited=True
            )
        return await asyncio.shield(done)

    async def _commit_pending(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            batch, self._pending = self._pending, []
            statements = [(sql, params) for sql, params, _ in batch]
            try:
                outcomes = await loop.run_in_executor(self._thread, self._apply, statements)
            except Exception as exc:
                outcomes = [exc] * len(batch)
            for (_, _, done), outcome in zip(batch, outcomes, strict=True):
                if done.done():
                    continue
                if isinstance(outcome, Exception):
                    done.set_exception(outcome)
                else:
                    done.set_result(outcome)

    def _apply(self, statements: list[tuple[str, tuple[Any, ...]]]) -> list[int | Exception | None]:
        """In the journal's thread: every statement, then one commit. A statement that fails
        fails alone and leaves nothing behind; a commit that fails fails them all (nothing of
        the batch is stored). So a write is reported done exactly when it is on disk."""
        outcomes: list[int | Exception | None] = []
        for sql, params in statements:
            try:
                outcomes.append(self._db.execute(sql, params).lastrowid)
            except Exception as exc:
                # Not only sqlite3.Error: a value the driver cannot bind (a string with a lone
                # surrogate has no UTF-8 form) fails before SQLite sees it, as UnicodeEncodeError.
                outcomes.append(exc)
                if not self._db.in_transaction and any(
                    not isinstance(o, Exception) for o in outcomes[:-1]
                ):
                    # Some errors (disk full, I/O) make SQLite roll the whole transaction
                    # back: the statements before this one are gone too.
                    raise
        try:
            self._db.commit()
        except Exception:
            self._db.rollback()
            raise
        self.commits += 1
        self.writes += len(statements)
        return outcomes

    async def _read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, query, self._db)

    # ---- the journal ----------------------------------------------------------------------

    async def record(
        self,
        text: str,
        channel: str,
        level: int,
        source: str,
        user_id: str = "",
        extra: dict[str, Any] | None = None,
        media: tuple[MediaRef, ...] = (),
    ) -> InputRecord:
        """Write an input durably; return it with its id."""
        media = tuple(media)
        input_id = await self._write(
            "INSERT INTO inputs(text, channel, level, source, user_id, extra, state, created_at,"
            " media) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                text,
                channel,
                int(level),
                source,
                user_id,
                json.dumps(extra or {}, ensure_ascii=False),
                InputState.QUEUED.value,
                time.time(),
                json.dumps([m.to_dict() for m in media], ensure_ascii=False),
            ),
        )
        assert input_id is not None
        return InputRecord(input_id, text, channel, int(level), source, user_id, extra, media=media)

    async def restore(self, row: RecordRow) -> int:
        """Write an input as another journal had it (`python -m hologram import`): its id,
        state, reply and times kept, so what names it there (a chat completion's id, the
        context window's `input-N`) names it here. One left unfinished runs at the next
        start, as it would have on its own data dir."""
        input_id = await self._write(
            "INSERT INTO inputs(id, text, channel, level, source, user_id, extra, state, reply, "
            "created_at, finished_at) VALUES (?, ?, ?, ?, ?, '', '{}', ?, ?, ?, ?)",
            (
                int(row["id"]),
                row["text"],
                row["channel"],
                int(row["level"]),
                row["source"],
                InputState(row["state"]).value,
                row["reply"],
                float(row["created"]),
                None if row["finished"] is None else float(row["finished"]),
            ),
        )
        assert input_id is not None
        return input_id

    async def all(self) -> list[RecordRow]:
        """Every input, oldest first."""
        rows = await self._read(
            lambda db: db.execute(f"SELECT {_ROW_COLUMNS} FROM inputs ORDER BY id").fetchall()
        )
        return [_record_row(row) for row in rows]

    async def mark(self, input_id: int, state: InputState, reply: str | None = None) -> None:
        """Record a change of state; RUNNING counts one more attempt."""
        finished = None if state in UNFINISHED else time.time()
        started = 1 if state is InputState.RUNNING else 0
        await self._write(
            "UPDATE inputs SET state = ?, reply = COALESCE(?, reply), finished_at = ?, "
            "attempts = attempts + ? WHERE id = ?",
            (state.value, reply, finished, started, input_id),
        )

    async def unfinished(self) -> list[InputRecord]:
        """Inputs acknowledged but not finished, oldest first (what a restart runs again)."""
        placeholders = ", ".join("?" for _ in UNFINISHED)
        rows = await self._read(
            lambda db: db.execute(
                "SELECT id, text, channel, level, source, user_id, extra, attempts, media "
                "FROM inputs "
                f"WHERE state IN ({placeholders}) ORDER BY id",
                [s.value for s in UNFINISHED],
            ).fetchall()
        )
        return [
            InputRecord(
                *row[:6],
                extra=json.loads(row[6]),
                attempts=row[7],
                media=tuple(MediaRef.from_dict(m) for m in json.loads(row[8])),
            )
            for row in rows
        ]

    async def get(self, input_id: int) -> RecordRow | None:
        row = await self._read(
            lambda db: db.execute(
                f"SELECT {_ROW_COLUMNS} FROM inputs WHERE id = ?", (input_id,)
            ).fetchone()
        )
        return None if row is None else _record_row(row)

    async def recent(self, limit: int, *, leave_out: tuple[str, ...] = ()) -> list[RecordRow]:
        """The newest `limit` inputs, oldest first, but those on the channels `leave_out`."""
        marks = ", ".join("?" for _ in leave_out) or "''"
        rows = await self._read(
            lambda db: db.execute(
                f"SELECT {_ROW_COLUMNS} FROM inputs WHERE channel NOT IN ({marks}) "
                "ORDER BY id DESC LIMIT ?",
                (*leave_out, limit),
            ).fetchall()
        )
        return [_record_row(row) for row in reversed(rows)]

    async def counts(self) -> dict[str, int]:
        rows = await self._read(
            lambda db: db.execute("SELECT state, count(*) FROM inputs GROUP BY state").fetchall()
        )
        return dict(rows)

    async def close(self) -> None:
        self._closed = True
        if self._committing is not None:
            await asyncio.gather(self._committing, return_exceptions=True)

        def finish(db: sqlite3.Connection) -> None:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.close()

        await self._read(finish)
        self._thread.shutdown()
