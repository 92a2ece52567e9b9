"""The turn store: every turn memory keeps, stored once, with the place it has aged into and
the history of its moves.

A turn enters the context window, is pruned into the cold context, and is archived into the
graph. It used to be copied from store to store at each step, under a new id each time, with
its time, words, speaker and vector carried across by hand. Here it is one row whose `place`
changes: the window and the cold context are the rows of their place, loaded into memory at
start, and a move is one update in one transaction, so a crash leaves a turn in the old place
or the new one, never in both and never in neither.

Durability: the database runs in WAL mode with `synchronous=NORMAL`. A committed transaction
is in the WAL file when the call returns, so it survives the process being killed at any
point (SIGKILL included); only a power cut can take back the transactions since the last
checkpoint, and what they recorded was an input the input journal (which fsyncs) holds and
runs again. That is why no fsync is on a turn's path.

Queued changes: a turn's own writes (its input and reply stored, a pruned turn dropped) need
not hold the turn up, since the input journal already has the input and runs it again after
a crash that cut them off. A change made with `wait=False` is queued for the store's writer
thread and the call returns at once. Queued changes are written in order, in one
transaction, when someone waits for them or `WRITE_DELAY_S` after the first. Every other
call first waits for the changes queued before it, so it reads what they wrote. `flush`
waits for all of them and raises what failed: the journal marks an input done only after
its turn's memory is flushed, so a turn's writes go in at its end.

Blocking: call from a thread. One connection, serialised by a lock, serves every caller.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

import numpy as np

from hologram.kernel import migrate_sqlite
from hologram.memory.embed.registry import StoredVector
from hologram.sdk import MediaRef

__all__ = ["TURN_STORE_MIGRATIONS", "Move", "Place", "Turn", "TurnStore", "TurnStoreError"]

log = logging.getLogger(__name__)


class Place(IntEnum):
    """Where a stored turn is kept now."""

    CONTEXT = 0
    """The context window (already in the prompt whole: the turn's recall leaves it out)."""
    COLD_CONTEXT = 1
    GRAPH = 2
    """Archived into the graph: the graph's text blocks are the turns of this place."""


TURN_STORE_MIGRATIONS: tuple[str, ...] = (
    # 1: turns in their places, and every move each one made.
    """
    CREATE TABLE turns (
        id           TEXT PRIMARY KEY,
        place        INTEGER NOT NULL,
        at           REAL NOT NULL,
        source       TEXT NOT NULL,
        speaker      TEXT NOT NULL,
        channel      TEXT NOT NULL DEFAULT '',
        input        TEXT NOT NULL DEFAULT '',
        response     TEXT NOT NULL DEFAULT '',
        tools        TEXT,
        text         TEXT NOT NULL DEFAULT '',
        words        TEXT,
        fingerprint  TEXT,
        vector       BLOB,
        media        TEXT,
        stored_at    REAL NOT NULL,
        entered_at   REAL NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0,
        last_access  REAL,
        block        TEXT
    );
    CREATE INDEX turns_place ON turns(place, at);
    CREATE TABLE moves (
        seq        INTEGER PRIMARY KEY,
        turn       TEXT NOT NULL,
        at         REAL NOT NULL,
        from_place INTEGER,
        to_place   INTEGER,
        why        TEXT NOT NULL
    );
    CREATE INDEX moves_turn ON moves(turn);
    """,
    # 2: a turn archived into the graph no longer names a text block that copied it: the
    # graph's text blocks are the turns of its place.
    """
    ALTER TABLE turns DROP COLUMN block;
    """,
)
TURN_STORE_TABLES = ("turns", "moves")


class TurnStoreError(Exception):
    """The turn store cannot be opened; the message names the file."""


@dataclass(slots=True)
class Turn:
    id: str
    place: Place
    at: float
    """When it happened: a turn keeps its original time through every move."""
    source: str
    """How it shows now: a channel, 'agent', or 'cold_storage' once recalled into the window."""
    speaker: str = ""
    """Who said it, as first stored; never changed by a move ("" reads as `source`)."""
    channel: str = ""
    input: str = ""
    response: str = ""
    tools: list[tuple[str, str]] = field(default_factory=list)
    text: str = ""
    """What it is found by (the vector's text)."""
    words: list[str] | None = None
    """Its keywords as cut once; None until cut."""
    vector: StoredVector | None = None
    media: list[MediaRef] = field(default_factory=list)
    stored_at: float = 0.0
    entered_at: float = 0.0
    """When it came into its place (the cold context ages documents from it)."""
    access_count: int = 0
    last_access: float | None = None


@dataclass(frozen=True, slots=True)
class Move:
    at: float
    from_place: Place | None
    """None: first stored."""
    to_place: Place | None
    """None: dropped (a pruned terminal event, which is never archived)."""
    why: str


_COLUMNS = (
    "id, place, at, source, speaker, channel, input, response, tools, text, words, "
    "fingerprint, vector, media, stored_at, entered_at, access_count, last_access"
)


def _row(turn: Turn) -> tuple[Any, ...]:
    vector = turn.vector
    return (
        turn.id,
        int(turn.place),
        turn.at,
        turn.source,
        turn.speaker or turn.source,
        turn.channel,
        turn.input,
        turn.response,
        json.dumps(turn.tools, ensure_ascii=False) if turn.tools else None,
        turn.text,
        None if turn.words is None else json.dumps(turn.words, ensure_ascii=False),
        None if vector is None else vector.fingerprint,
        None if vector is None else np.ascontiguousarray(vector.vector, dtype="<f4").tobytes(),
        json.dumps([m.to_dict() for m in turn.media], ensure_ascii=False) if turn.media else None,
        turn.stored_at,
        turn.entered_at,
        turn.access_count,
        turn.last_access,
    )


def _turn(row: Sequence[Any]) -> Turn:
    """Raises ValueError naming the field a damaged row got wrong."""
    (id_, place, at, source, speaker, channel, input_, response, tools, text, words) = row[:11]
    (fingerprint, vector, media, stored_at, entered_at, access_count, last_access) = row[11:18]
    try:
        decoded_tools = [(str(n), str(c)) for n, c in json.loads(tools)] if tools else []
    except (ValueError, TypeError) as exc:
        raise ValueError(f"field 'tools' is not a list of [name, content]: {exc}") from None
    try:
        decoded_words = None if words is None else [str(w) for w in json.loads(words)]
    except (ValueError, TypeError) as exc:
        raise ValueError(f"field 'words' is not a list of words: {exc}") from None
    try:
        refs = [MediaRef.from_dict(m) for m in json.loads(media)] if media else []
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ValueError(f"field 'media' holds a bad media reference: {exc}") from None
    stored = None
    if isinstance(fingerprint, str) and isinstance(vector, bytes) and len(vector) % 4 == 0:
        stored = StoredVector(fingerprint, np.frombuffer(vector, dtype="<f4").astype(np.float32))
    try:
        return Turn(
            id=str(id_),
            place=Place(place),
            at=float(at),
            source=str(source),
            speaker=str(speaker),
            channel=str(channel),
            input=str(input_),
            response=str(response),
            tools=decoded_tools,
            text=str(text),
            words=decoded_words,
            vector=stored,
            media=refs,
            stored_at=float(stored_at),
            entered_at=float(entered_at),
            access_count=int(access_count),
            last_access=None if last_access is None else float(last_access),
        )
    except (ValueError, TypeError) as exc:
        raise ValueError(f"a field is of the wrong type: {exc}") from None


WRITE_DELAY_S = 0.05
"""A queued change waits this long for others to share its transaction, unless someone
waits for it (`flush`, a read): a turn's writes then go in at its end, when the journal
flushes, rather than in the middle, where the writer would hold the GIL against the turn's
own recall."""

Change = tuple[Callable[..., None], tuple[Any, ...]]
"""A queued change: one of the store's writes (run with the lock held, in a transaction)
and its arguments."""


class TurnStore:
    def __init__(self, path: Path, on_failure: Callable[[str], object] | None = None) -> None:
        self.path = path
        self.on_failure = on_failure
        """Told (from the writer thread) of each queued change that could not be written."""
        self._lock = threading.Lock()
        self._queue: deque[Change] = deque()
        self._queued = self._written = self._wanted = 0
        self._first_queued_at = 0.0
        self._failures: list[str] = []
        self._changed = threading.Condition()
        self._writer: threading.Thread | None = None
        self._closing = False
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            migrate_sqlite(self._db, TURN_STORE_MIGRATIONS, f"the turn store {path}")
        except sqlite3.DatabaseError as exc:
            raise TurnStoreError(f"{path}: the turn store cannot be opened ({exc})") from exc

    def close(self) -> None:
        """Write what is queued, then close."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        if self._writer is not None:
            self._writer.join()
        with self._lock:
            self._db.close()

    # ---- queued changes ---------------------------------------------------------------------

    @property
    def settled(self) -> bool:
        """Nothing queued is unwritten and no failure is untold (`flush` would not wait)."""
        with self._changed:
            return self._written == self._queued and not self._failures

    def flush(self) -> None:
        """Wait until every change queued so far is written. Raises TurnStoreError naming
        the queued changes that failed since the last flush (each was logged and told to
        `on_failure` when it failed)."""
        self._settle()
        with self._changed:
            failures, self._failures = self._failures, []
        if failures:
            raise TurnStoreError(f"{self.path}: queued writes failed: " + "; ".join(failures))

    async def flushed(self) -> None:
        """`flush`, from the event loop: a hop to a thread only when something is queued or
        a failure is untold."""
        if not self.settled:
            await asyncio.to_thread(self.flush)

    def _queue_change(self, change: Callable[..., None], *args: Any) -> None:
        with self._changed:
            if self._closing:
                raise TurnStoreError(f"{self.path}: the turn store is closed")
            if not self._queue:
                self._first_queued_at = time.monotonic()
            self._queue.append((change, args))
            self._queued += 1
            if self._writer is None:
                self._writer = threading.Thread(
                    target=self._write_queued, name=f"turn-store-{self.path.name}", daemon=True
                )
                self._writer.start()
            self._changed.notify_all()

    def _settle(self) -> None:
        """Wait for the changes queued before this call (the writer itself never waits)."""
        if threading.current_thread() is self._writer:
            return
        with self._changed:
            target = self._queued
            if self._written < target:
                self._wanted = max(self._wanted, target)
                self._changed.notify_all()
            while self._written < target:
                self._changed.wait()

    def _write_queued(self) -> None:
        while True:
            with self._changed:
                while not self._due():
                    wait = None if not self._queue else self._first_queued_at + WRITE_DELAY_S
                    self._changed.wait(None if wait is None else max(wait - time.monotonic(), 0))
                if not self._queue:
                    return
                batch = list(self._queue)
                self._queue.clear()
            failures = self._apply(batch)
            with self._changed:
                self._written += len(batch)
                self._failures += failures
                self._changed.notify_all()

    def _due(self) -> bool:
        """Whether to write what is queued now (called with `_changed` held)."""
        if self._closing or self._wanted > self._written:
            return True
        return bool(self._queue) and time.monotonic() >= self._first_queued_at + WRITE_DELAY_S

    def _apply(self, batch: list[Change]) -> list[str]:
        """Write `batch` in one transaction; if that fails, each change in one of its own,
        so a change that cannot be written costs no other its place."""
        try:
            self._write(batch)
            return []
        except Exception as exc:
            if len(batch) == 1:
                return [self._failed(batch[0], exc)]
        failures = []
        for change in batch:
            try:
                self._write([change])
            except Exception as exc:
                failures.append(self._failed(change, exc))
        return failures

    def _failed(self, change: Change, exc: Exception) -> str:
        what = change[0].__name__.strip("_")
        message = f"a queued {what} was not written ({type(exc).__name__}: {exc})"
        log.error("turn store %s: %s", self.path, message)
        if self.on_failure is not None:
            try:
                self.on_failure(message)
            except Exception:  # the writer goes on whatever the listener does
                log.exception("turn store %s: telling of a failed write failed", self.path)
        return message

    def _write(self, changes: Sequence[Change]) -> None:
        with self._lock, self._transaction():
            for change, args in changes:
                change(*args)

    def _change(self, wait: bool, change: Callable[..., None], *args: Any) -> None:
        if wait:
            self._settle()
            self._write([(change, args)])
        else:
            self._queue_change(change, *args)

    # ---- reading ----------------------------------------------------------------------------

    def load(self, place: Place) -> tuple[list[Turn], list[str]]:
        """Every turn in `place`, oldest first, and a line for each row that could not be
        read (left where it is, untouched, for a repair to look at). A file damaged under
        the place's rows reads as none, and says so."""
        rows, problems = self._read(
            f"SELECT {_COLUMNS} FROM turns WHERE place = ? ORDER BY at, rowid", (int(place),)
        )
        turns = []
        for row in rows:
            try:
                turns.append(_turn(row))
            except ValueError as exc:
                problems.append(f"turn {row[0]!r} in {self.path.name}: {exc}; skipped")
        return turns, problems

    def load_newest(
        self, place: Place, size: int, before: tuple[float, int] | None = None
    ) -> tuple[list[Turn], list[str], tuple[float, int] | None]:
        """`load`, `size` turns at a time from the newest back: the turns of `place` said
        before the cursor `before` (None: from the newest), oldest first, the lines of the
        rows that could not be read, and the cursor for the next batch (None after the
        last). A file damaged under a batch ends the batches there, and says so."""
        rows, problems = self._read(
            f"SELECT at, rowid, {_COLUMNS} FROM turns WHERE place = ?"
            + ("" if before is None else " AND (at, rowid) < (?, ?)")
            + " ORDER BY at DESC, rowid DESC LIMIT ?",
            (int(place), *(before or ()), size),
        )
        turns = []
        for row in reversed(rows):
            try:
                turns.append(_turn(row[2:]))
            except ValueError as exc:
                problems.append(f"turn {row[2]!r} in {self.path.name}: {exc}; skipped")
        cursor = (rows[-1][0], rows[-1][1]) if len(rows) == size else None
        return turns, problems, cursor

    def _read(self, sql: str, args: tuple[Any, ...]) -> tuple[list[Any], list[str]]:
        """The rows of a load's query, or none and the line saying the file could not be
        read past them (a damaged page): a load reports that as it reports a damaged row,
        so its reader goes on with what it has rather than failing every recall after."""
        self._settle()
        try:
            with self._lock:
                return self._db.execute(sql, args).fetchall(), []
        except sqlite3.DatabaseError as exc:
            return [], [f"{self.path.name} could not be read ({exc}); left for a repair"]

    def get(self, turn_id: str) -> Turn | None:
        self._settle()
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM turns WHERE id = ?", (turn_id,)
            ).fetchone()
        return None if row is None else _turn(row)

    def get_many(self, ids: Sequence[str]) -> list[Turn]:
        """The stored turns of `ids`, in that order (ids not stored are left out)."""
        self._settle()
        found: dict[str, Turn] = {}
        with self._lock:
            for chunk in _chunks(ids):
                marks = ", ".join("?" * len(chunk))
                for row in self._db.execute(
                    f"SELECT {_COLUMNS} FROM turns WHERE id IN ({marks})", chunk
                ):
                    found[row[0]] = _turn(row)
        return [found[i] for i in ids if i in found]

    def history(self, turn_id: str) -> list[Move]:
        self._settle()
        with self._lock:
            rows = self._db.execute(
                "SELECT at, from_place, to_place, why FROM moves WHERE turn = ? ORDER BY seq",
                (turn_id,),
            ).fetchall()
        return [
            Move(at, None if f is None else Place(f), None if t is None else Place(t), why)
            for at, f, t, why in rows
        ]

    def stale(self, place: Place, fingerprint: str) -> list[Turn]:
        """The turns of `place` without a vector of the space `fingerprint`."""
        self._settle()
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM turns WHERE place = ? AND (vector IS NULL OR "
                "fingerprint IS NULL OR fingerprint != ?) ORDER BY at, rowid",
                (int(place), fingerprint),
            ).fetchall()
        found = []
        for row in rows:
            try:
                found.append(_turn(row))
            except ValueError:
                continue  # reported by `load`, left for a repair
        return found

    def counts(self) -> dict[Place, int]:
        self._settle()
        with self._lock:
            rows = self._db.execute("SELECT place, COUNT(*) FROM turns GROUP BY place").fetchall()
        return {Place(place): count for place, count in rows}

    # ---- changing (each in one transaction; `wait=False` queues it) --------------------------

    def put(self, turns: Sequence[Turn], why: str, now: float, *, wait: bool = True) -> None:
        """Store each turn whole, in its `place`: a new one is added, one already stored is
        rewritten where it is and moved if its place changed (its speaker and first-stored
        time stay). Every change of place is recorded in its history."""
        if turns:
            self._change(wait, self._put, list(turns), why, now)

    def move(
        self, ids: Sequence[str], place: Place, why: str, now: float, *, wait: bool = True
    ) -> None:
        """Move stored turns to `place` (turns not stored are skipped)."""
        if ids:
            self._change(wait, self._move, list(ids), place, why, now)

    def drop(self, ids: Sequence[str], why: str, now: float, *, wait: bool = True) -> None:
        """Forget stored turns; their history keeps the drop."""
        if ids:
            self._change(wait, self._drop, list(ids), why, now)

    def set_vectors(
        self, vectors: Iterable[tuple[str, StoredVector]], *, wait: bool = True
    ) -> None:
        """Write re-embedded vectors back (not a move)."""
        rows = [
            (v.fingerprint, np.ascontiguousarray(v.vector, dtype="<f4").tobytes(), turn_id)
            for turn_id, v in vectors
        ]
        if rows:
            self._change(wait, self._set_vectors, rows)

    def set_access(
        self, counts: Iterable[tuple[str, int, float | None]], *, wait: bool = True
    ) -> None:
        """Write read counts and last-read times back (not a move), as they are now."""
        rows = [(count, last, turn_id) for turn_id, count, last in counts]
        if rows:
            self._change(wait, self._set_access, rows)

    # ---- inside: the changes, run with the lock held and a transaction open ------------------

    def _put(self, turns: list[Turn], why: str, now: float) -> None:
        was = self._places([t.id for t in turns])
        for turn in turns:
            if turn.id not in was:
                # A new turn may bring its own times (an import, a migration).
                turn.stored_at = turn.stored_at or now
                turn.entered_at = turn.entered_at or now
            elif was[turn.id] != turn.place:
                turn.entered_at = now
        self._db.executemany(
            f"INSERT INTO turns ({_COLUMNS}) VALUES ({', '.join('?' * 18)}) "
            "ON CONFLICT(id) DO UPDATE SET place = excluded.place, source = excluded.source, "
            "channel = excluded.channel, input = excluded.input, "
            "response = excluded.response, tools = excluded.tools, text = excluded.text, "
            "words = excluded.words, fingerprint = excluded.fingerprint, "
            "vector = excluded.vector, media = excluded.media, "
            "entered_at = excluded.entered_at, access_count = excluded.access_count, "
            "last_access = excluded.last_access",
            [_row(t) for t in turns],
        )
        moved = [t for t in turns if was.get(t.id) != t.place]
        self._record(now, ((t.id, was.get(t.id), int(t.place), why) for t in moved))

    def _move(self, ids: list[str], place: Place, why: str, now: float) -> None:
        was = self._places(ids)
        moving = [i for i in ids if i in was and was[i] != place]
        self._db.executemany(
            "UPDATE turns SET place = ?, entered_at = ? WHERE id = ?",
            [(int(place), now, i) for i in moving],
        )
        self._record(now, ((i, was[i], int(place), why) for i in moving))

    def _drop(self, ids: list[str], why: str, now: float) -> None:
        was = self._places(ids)
        self._db.executemany("DELETE FROM turns WHERE id = ?", [(i,) for i in was])
        self._record(now, ((i, place, None, why) for i, place in was.items()))

    def _set_vectors(self, rows: list[tuple[str, bytes, str]]) -> None:
        self._db.executemany("UPDATE turns SET fingerprint = ?, vector = ? WHERE id = ?", rows)

    def _set_access(self, rows: list[tuple[int, float | None, str]]) -> None:
        self._db.executemany(
            "UPDATE turns SET access_count = ?, last_access = ? WHERE id = ?", rows
        )

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _places(self, ids: Sequence[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for chunk in _chunks(ids):
            marks = ", ".join("?" * len(chunk))
            found.update(
                self._db.execute(
                    f"SELECT id, place FROM turns WHERE id IN ({marks})", chunk
                ).fetchall()
            )
        return found

    def _record(self, now: float, moves: Iterable[tuple[str, int | None, int | None, str]]) -> None:
        self._db.executemany(
            "INSERT INTO moves (turn, at, from_place, to_place, why) VALUES (?, ?, ?, ?, ?)",
            [(turn_id, now, f, t, why) for turn_id, f, t, why in moves],
        )


def _chunks(ids: Sequence[str], size: int = 500) -> Iterable[list[str]]:
    """SQLite caps the parameters of one statement; 500 stays well under every build's cap."""
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])
