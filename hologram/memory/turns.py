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

Blocking: call from a thread. One connection, serialised by a lock, serves every caller.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

import numpy as np

from hologram.kernel.schema import migrate_sqlite
from hologram.memory.embed.registry import StoredVector
from hologram.sdk import MediaRef

__all__ = ["MIGRATIONS", "Move", "Place", "Turn", "TurnStore", "TurnStoreError"]


class Place(IntEnum):
    """Where a stored turn is kept now."""

    CONTEXT = 0
    """The context window (already in the prompt whole: the turn's recall leaves it out)."""
    COLD_CONTEXT = 1
    GRAPH = 2
    """Archived into the graph: the graph's text blocks are the turns of this place."""


MIGRATIONS: tuple[str, ...] = (
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
TABLES = ("turns", "moves")


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


class TurnStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            migrate_sqlite(self._db, MIGRATIONS, f"the turn store {path}")
        except sqlite3.DatabaseError as exc:
            raise TurnStoreError(f"{path}: the turn store cannot be opened ({exc})") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ---- reading ----------------------------------------------------------------------------

    def load(self, place: Place) -> tuple[list[Turn], list[str]]:
        """Every turn in `place`, oldest first, and a line for each row that could not be
        read (left where it is, untouched, for a repair to look at)."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM turns WHERE place = ? ORDER BY at, rowid", (int(place),)
            ).fetchall()
        turns, problems = [], []
        for row in rows:
            try:
                turns.append(_turn(row))
            except ValueError as exc:
                problems.append(f"turn {row[0]!r} in {self.path.name}: {exc}; skipped")
        return turns, problems

    def get(self, turn_id: str) -> Turn | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM turns WHERE id = ?", (turn_id,)
            ).fetchone()
        return None if row is None else _turn(row)

    def get_many(self, ids: Sequence[str]) -> list[Turn]:
        """The stored turns of `ids`, in that order (ids not stored are left out)."""
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
        with self._lock:
            rows = self._db.execute("SELECT place, COUNT(*) FROM turns GROUP BY place").fetchall()
        return {Place(place): count for place, count in rows}

    # ---- changing ---------------------------------------------------------------------------

    def put(self, turns: Sequence[Turn], why: str, now: float) -> None:
        """Store each turn whole, in its `place`: a new one is added, one already stored is
        rewritten where it is and moved if its place changed (its speaker and first-stored
        time stay). One transaction; every change of place is recorded in its history."""
        if not turns:
            return
        with self._lock, self._transaction():
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

    def move(self, ids: Sequence[str], place: Place, why: str, now: float) -> None:
        """Move stored turns to `place` (turns not stored are skipped), in one transaction."""
        with self._lock, self._transaction():
            was = self._places(ids)
            moving = [i for i in ids if i in was and was[i] != place]
            self._db.executemany(
                "UPDATE turns SET place = ?, entered_at = ? WHERE id = ?",
                [(int(place), now, i) for i in moving],
            )
            self._record(now, ((i, was[i], int(place), why) for i in moving))

    def drop(self, ids: Sequence[str], why: str, now: float) -> None:
        """Forget stored turns; their history keeps the drop."""
        with self._lock, self._transaction():
            was = self._places(ids)
            self._db.executemany("DELETE FROM turns WHERE id = ?", [(i,) for i in was])
            self._record(now, ((i, place, None, why) for i, place in was.items()))

    def set_vectors(self, vectors: Iterable[tuple[str, StoredVector]]) -> None:
        """Write re-embedded vectors back (not a move)."""
        rows = [
            (v.fingerprint, np.ascontiguousarray(v.vector, dtype="<f4").tobytes(), turn_id)
            for turn_id, v in vectors
        ]
        with self._lock, self._transaction():
            self._db.executemany("UPDATE turns SET fingerprint = ?, vector = ? WHERE id = ?", rows)

    def set_access(self, counts: Iterable[tuple[str, int, float | None]]) -> None:
        """Write read counts and last-read times back (not a move)."""
        rows = [(count, last, turn_id) for turn_id, count, last in counts]
        with self._lock, self._transaction():
            self._db.executemany(
                "UPDATE turns SET access_count = ?, last_access = ? WHERE id = ?", rows
            )

    # ---- inside -----------------------------------------------------------------------------

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
