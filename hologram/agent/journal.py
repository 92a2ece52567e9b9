"""The input journal: every acknowledged input, on disk before it is acknowledged.

An input is written (and committed) before its id goes back to whoever sent it, and marked
done when its turn ends. After a crash, whatever is not marked done is handed to the scheduler
again: acknowledged inputs are never lost, and a finished one never runs twice.

Writes are group-committed: those that arrive while a commit is in flight wait for the next
one, which takes them all in one transaction and one fsync. Fifty clients sending at once
then cost a few commits, not fifty queued one behind another. The commits are driven by the
journal's own thread, not by the event loop: a write goes on disk while the loop is busy with
a turn, and an acknowledgement waits for its fsync and one wake-up of the loop, nothing else.

What waits for the disk and what does not: the record (the acknowledgement) and the marks that
end an input (done, stopped, failed) are awaited until they are on disk (fsync'd). The running
mark is not (`started`): its turn begins while it commits, and its commit does not fsync (the
next synced commit takes it to the disk). It decides nothing at a restart, where a
queued input and a running one both run again; what it carries, the count of attempts, is
read by the re-run's memory check, and an input found unfinished at a restart is checked as
a re-run whatever its count says (`InputRecord.recovered`), so a running mark the crash took
away cannot make that run record the input a second time.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, TypedDict, TypeVar

from hologram.kernel import SchemaTooNew, migrate_sqlite
from hologram.sdk import MediaRef

T = TypeVar("T")

log = logging.getLogger(__name__)

JOURNAL_MIGRATIONS: tuple[str, ...] = (
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


_COLUMNS = "text, channel, level, source, user_id, extra, state, created_at, media"
_INSERT = f"INSERT INTO inputs({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
"""One input (`InputJournal.record`)."""
_INSERT_ALL = (
    f"INSERT INTO inputs({_COLUMNS}) SELECT value->>0, value->>1, value->>2, value->>3, "
    "value->>4, value->>5, value->>6, value->>7, value->>8 FROM json_each(?) ORDER BY key"
)
"""Several inputs at once, from a JSON array of `_INSERT`'s parameter rows: one statement
whatever their number, so one prepared statement serves every batch."""


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
    recovered: bool = False
    """Found unfinished at a start (`InputJournal.unfinished`): it may have begun running
    before the crash even where `attempts` says not (`InputJournal.started` does not wait)."""

    @property
    def attempt(self) -> int:
        """The attempt its next run is: one more than those counted, and at least a second
        one for a recovered input, so memory looks for what a cut-off run recorded."""
        counted = self.attempts + 1
        return max(counted, 2) if self.recovered else counted


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


def _unfinished_record(row: tuple[Any, ...]) -> InputRecord:
    ident, text, channel, level, source, user_id, extra, attempts, media = row
    return InputRecord(
        ident,
        text,
        channel,
        level,
        source,
        user_id,
        extra=json.loads(extra),
        attempts=attempts,
        media=tuple(MediaRef.from_dict(m) for m in json.loads(media)),
        recovered=True,
    )


class JournalError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class _Write:
    sql: str
    params: tuple[Any, ...]
    done: asyncio.Future[int | None]
    #: Whether its commit waits for the disk (fsync): a power cut cannot take it back. One
    #: that does not is still in the WAL file when its commit returns (a SIGKILL keeps it),
    #: and on disk with the next commit that syncs.
    synced: bool = True


@dataclass(frozen=True, slots=True)
class _Call:
    """Anything else the journal's thread runs (a read, the connect, the close), in turn
    with the writes: what was written before it is in what it reads."""

    work: Callable[[], Any]
    done: asyncio.Future[Any]


_Work = _Write | _Call


class InputJournal:
    """The journal's connection lives in a thread of its own, which does nothing else.

    That thread takes work from a queue: a run of writes waiting there becomes one group
    commit, and the next run is taken as soon as a commit is on disk. The event loop only
    puts work on the queue and is told, in one callback per commit, which writes are on
    disk; a loop busy with a turn delays the telling, never the next commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._queue: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._loop = asyncio.get_running_loop()
        # A daemon: a journal never closed must not keep the process from exiting, and
        # whatever it acknowledged is committed already.
        self._thread = threading.Thread(
            target=self._serve, name=f"input-journal-{path.name}", daemon=True
        )
        self.commits = 0
        self.writes = 0
        #: Commits that waited for the disk (fsync), and the seconds the journal's thread
        #: spent committing (the fsync's share of a write).
        self.synced_commits = 0
        self.commit_s = 0.0
        #: The connection's `PRAGMA synchronous`: FULL (True) unless a batch asked otherwise.
        self._synced = True
        self._closed = False

    @classmethod
    async def open(cls, path: Path) -> InputJournal:
        journal = cls(path)
        journal._thread.start()

        def connect() -> sqlite3.Connection:
            db = sqlite3.connect(path)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
                db.isolation_level = None  # the schema steps manage their own transactions
                migrate_sqlite(db, JOURNAL_MIGRATIONS, f"the input journal {path}")
                # Python's implicit transactions again (a bare BEGIN is a deferred one).
                db.isolation_level = "DEFERRED"
            except (sqlite3.DatabaseError, SchemaTooNew):
                db.close()
                raise
            journal._db = db
            return db

        try:
            await journal._call(connect)
        except (sqlite3.DatabaseError, SchemaTooNew) as exc:
            journal._stop_thread()
            raise JournalError(
                f"the input journal {path} cannot be read ({exc}); it was left untouched: "
                "move it aside to start with an empty journal"
            ) from exc
        return journal

    # ---- the journal's thread -------------------------------------------------------------

    def _serve(self) -> None:
        held: _Work | None = None
        while True:
            work = held if held is not None else self._queue.get()
            held = None
            if work is None:
                return
            if isinstance(work, _Call):
                self._run_call(work)
                continue
            batch = [work]
            # Everything written meanwhile joins this commit, up to the first other work,
            # which runs after it (so a read sees what was written before it was asked).
            while True:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if isinstance(more, _Write):
                    batch.append(more)
                else:
                    held = more
                    break
            self._commit(batch)

    def _run_call(self, call: _Call) -> None:
        try:
            outcome: Any = call.work()
        except Exception as exc:
            outcome = exc
        self._tell([(call.done, outcome)])

    def _commit(self, batch: list[_Write]) -> None:
        statements = [(w.sql, w.params) for w in batch]
        try:
            outcomes: list[Any] = self._apply(statements, synced=any(w.synced for w in batch))
        except Exception as exc:
            outcomes = [exc] * len(batch)
        self._tell([(w.done, o) for w, o in zip(batch, outcomes, strict=True)])

    def _tell(self, settled: list[tuple[asyncio.Future[Any], Any]]) -> None:
        """Hand outcomes to their awaiting tasks: one wake-up of the loop for all of them."""
        # A loop that is gone (RuntimeError) has nobody waiting for these any more.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(_settle, settled)

    def _apply(
        self, statements: list[tuple[str, tuple[Any, ...]]], *, synced: bool = True
    ) -> list[int | Exception | None]:
        """In the journal's thread: every statement, then one commit. A statement that fails
        fails alone and leaves nothing behind; a commit that fails fails them all (nothing of
        the batch is stored). So a write is reported done exactly when it is on disk.

        `synced=False` (only when no write of the batch needs it) commits without the fsync:
        WAL with synchronous=NORMAL, whose commit is in the WAL file, so it survives the
        process's death, and which the fsync of the next synced commit (or of a checkpoint)
        takes to the disk with it, the WAL being one file written in order.

        Inputs recorded one after another go in as one statement: each statement lets go of
        the GIL and has to win it back, which behind a busy event loop costs up to the
        interpreter's switch interval (5 ms) every time."""
        db = self._db
        assert db is not None
        if synced != self._synced:
            # Outside any transaction (each batch ends in its commit): it holds from the next.
            db.execute(f"PRAGMA synchronous={'FULL' if synced else 'NORMAL'}")
            self._synced = synced
        outcomes: list[int | Exception | None] = []
        start = 0
        while start < len(statements):
            end = start
            while end < len(statements) and statements[end][0] == _INSERT:
                end += 1
            if end - start > 1:
                outcomes += self._insert_all(db, [p for _, p in statements[start:end]], outcomes)
            else:
                end = start + 1
                sql, params = statements[start]
                outcomes.append(self._execute(db, sql, params, outcomes))
            start = end
        committing = time.perf_counter()
        try:
            db.commit()
        except Exception:
            db.rollback()
            raise
        self.commit_s += time.perf_counter() - committing
        self.commits += 1
        self.synced_commits += int(synced)
        self.writes += len(statements)
        return outcomes

    @staticmethod
    def _execute(
        db: sqlite3.Connection,
        sql: str,
        params: tuple[Any, ...],
        before: list[int | Exception | None],
    ) -> int | Exception | None:
        try:
            return db.execute(sql, params).lastrowid
        except Exception as exc:
            # Not only sqlite3.Error: a value the driver cannot bind (a string with a lone
            # surrogate has no UTF-8 form) fails before SQLite sees it, as UnicodeEncodeError.
            if not db.in_transaction and any(not isinstance(o, Exception) for o in before):
                # Some errors (disk full, I/O) make SQLite roll the whole transaction
                # back: the statements before this one are gone too.
                raise
            return exc

    def _insert_all(
        self,
        db: sqlite3.Connection,
        rows: list[tuple[Any, ...]],
        before: list[int | Exception | None],
    ) -> list[int | Exception | None]:
        """Several inputs in one INSERT, each row's id in order. A row that cannot be stored
        fails alone: one with no UTF-8 form is left out before the statement, and should
        the statement fail anyway, the rows go in one by one to find which."""
        outcomes: list[int | Exception | None] = []
        encoded: list[str] = []
        for row in rows:
            try:
                text = json.dumps(row, ensure_ascii=False)
                text.encode("utf-8")
            except (UnicodeEncodeError, TypeError, ValueError) as exc:
                outcomes.append(exc)
            else:
                outcomes.append(None)
                encoded.append(text)
        if len(encoded) < 2:
            return [
                outcome
                if isinstance(outcome, Exception)
                else self._execute(db, _INSERT, row, before)
                for row, outcome in zip(rows, outcomes, strict=True)
            ]
        try:
            cursor = db.execute(_INSERT_ALL, ("[" + ",".join(encoded) + "]",))
        except Exception:
            if not db.in_transaction and any(not isinstance(o, Exception) for o in before):
                raise
            return [
                outcome
                if isinstance(outcome, Exception)
                else self._execute(db, _INSERT, row, before)
                for row, outcome in zip(rows, outcomes, strict=True)
            ]
        # One statement's rows take consecutive ids in the order json_each gives them (by
        # key): nothing else writes this table meanwhile.
        assert cursor.lastrowid is not None and cursor.rowcount == len(encoded)
        ids = iter(range(cursor.lastrowid - len(encoded) + 1, cursor.lastrowid + 1))
        return [outcome if isinstance(outcome, Exception) else next(ids) for outcome in outcomes]

    def _stop_thread(self) -> None:
        self._queue.put(None)
        self._thread.join()

    # ---- from the loop --------------------------------------------------------------------

    async def _write(self, sql: str, params: tuple[Any, ...]) -> int | None:
        """Run one statement in the next commit; returns its row id once that commit is on
        disk."""
        if self._closed:
            raise JournalError(f"the input journal {self.path} is closed")
        done: asyncio.Future[int | None] = self._loop.create_future()
        self._queue.put(_Write(sql, params, done))
        # Shielded: a writer cancelled meanwhile leaves its write to complete (or not) as
        # it would have; it is the thread's, not the writer's.
        return await asyncio.shield(done)

    async def _call(self, work: Callable[[], T]) -> T:
        done: asyncio.Future[T] = self._loop.create_future()
        self._queue.put(_Call(work, done))
        return await done

    async def _read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        def read() -> T:
            assert self._db is not None
            return query(self._db)

        return await self._call(read)

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
            _INSERT,
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
        """Record a change of state; RUNNING counts one more attempt. Returns once it is on
        disk."""
        await self._write(*_mark(input_id, state, reply))

    def started(self, input_id: int) -> None:
        """Mark an input running (one more attempt) without waiting for the commit: its
        turn goes on meanwhile. Later writes and reads are queued behind it, so they commit
        after it and read it. Its commit does not fsync: the mark that ends the input does,
        and takes it along. A crash before it is on disk loses only the count, which a
        restart makes up for (`InputRecord.attempt`)."""
        if self._closed:
            raise JournalError(f"the input journal {self.path} is closed")
        done: asyncio.Future[int | None] = self._loop.create_future()
        done.add_done_callback(functools.partial(_told_started, self.path, input_id))
        self._queue.put(_Write(*_mark(input_id, InputState.RUNNING, None), done, synced=False))

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
        return [_unfinished_record(row) for row in rows]

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
        if self._closed:
            return
        self._closed = True

        def finish(db: sqlite3.Connection) -> None:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.close()

        # Behind every write already queued: they are committed before the connection closes.
        try:
            await self._read(finish)
        finally:
            self._stop_thread()


def _mark(input_id: int, state: InputState, reply: str | None) -> tuple[str, tuple[Any, ...]]:
    finished = None if state in UNFINISHED else time.time()
    started = 1 if state is InputState.RUNNING else 0
    return (
        "UPDATE inputs SET state = ?, reply = COALESCE(?, reply), finished_at = ?, "
        "attempts = attempts + ? WHERE id = ?",
        (state.value, reply, finished, started, input_id),
    )


def _told_started(path: Path, input_id: int, done: asyncio.Future[int | None]) -> None:
    """Nobody awaits a running mark: a failure to store it is logged (the turn runs on;
    the mark that ends it is awaited and fails on its own if the journal cannot write)."""
    if not done.cancelled() and (error := done.exception()) is not None:
        log.warning(
            "the input journal %s could not mark input %s running: %s", path, input_id, error
        )


def _settle(settled: list[tuple[asyncio.Future[Any], Any]]) -> None:
    for done, outcome in settled:
        if done.done():
            continue
        if isinstance(outcome, Exception):
            done.set_exception(outcome)
        else:
            done.set_result(outcome)
