"""The input journal: every acknowledged input, on disk before it is acknowledged.

An input is written (and committed) before its id goes back to whoever sent it, and marked
done when its turn ends. After a crash, whatever is not marked done is handed to the scheduler
again: acknowledged inputs are never lost, and a finished one never runs twice.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import aiosqlite

_SCHEMA = """
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
"""


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


class JournalError(Exception):
    pass


class InputJournal:
    def __init__(self, db: aiosqlite.Connection, path: Path) -> None:
        self._db = db
        self.path = path

    @classmethod
    async def open(cls, path: Path) -> InputJournal:
        db = await aiosqlite.connect(path)
        try:
            await db.execute("PRAGMA journal_mode=WAL")
            await db.execute("PRAGMA synchronous=FULL")
            await db.execute(_SCHEMA)
            await db.commit()
        except sqlite3.DatabaseError as exc:
            await db.close()
            raise JournalError(
                f"the input journal {path} cannot be read ({exc}); it was left untouched: "
                "move it aside to start with an empty journal"
            ) from exc
        return cls(db, path)

    async def record(
        self,
        text: str,
        channel: str,
        level: int,
        source: str,
        user_id: str = "",
        extra: dict[str, Any] | None = None,
    ) -> InputRecord:
        """Write an input durably; return it with its id."""
        async with self._db.execute(
            "INSERT INTO inputs(text, channel, level, source, user_id, extra, state, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                text,
                channel,
                int(level),
                source,
                user_id,
                json.dumps(extra or {}, ensure_ascii=False),
                InputState.QUEUED.value,
                time.time(),
            ),
        ) as cursor:
            input_id = cursor.lastrowid
        await self._db.commit()
        assert input_id is not None
        return InputRecord(input_id, text, channel, int(level), source, user_id, extra)

    async def mark(self, input_id: int, state: InputState, reply: str | None = None) -> None:
        finished = None if state in UNFINISHED else time.time()
        async with self._db.execute(
            "UPDATE inputs SET state = ?, reply = COALESCE(?, reply), finished_at = ? WHERE id = ?",
            (state.value, reply, finished, input_id),
        ):
            pass
        await self._db.commit()

    async def unfinished(self) -> list[InputRecord]:
        """Inputs acknowledged but not finished, oldest first (what a restart runs again)."""
        placeholders = ", ".join("?" for _ in UNFINISHED)
        async with self._db.execute(
            "SELECT id, text, channel, level, source, user_id, extra FROM inputs "
            f"WHERE state IN ({placeholders}) ORDER BY id",
            [s.value for s in UNFINISHED],
        ) as cursor:
            rows = await cursor.fetchall()
        return [
            InputRecord(row[0], row[1], row[2], row[3], row[4], row[5], json.loads(row[6]))
            for row in rows
        ]

    async def get(self, input_id: int) -> dict[str, Any] | None:
        async with self._db.execute(
            "SELECT id, text, channel, level, source, state, reply, created_at, finished_at "
            "FROM inputs WHERE id = ?",
            (input_id,),
        ) as cursor:
            row = await cursor.fetchone()
        if row is None:
            return None
        keys = ("id", "text", "channel", "level", "source", "state", "reply", "created", "finished")
        return dict(zip(keys, row, strict=True))

    async def counts(self) -> dict[str, int]:
        async with self._db.execute("SELECT state, count(*) FROM inputs GROUP BY state") as cur:
            return {state: count async for state, count in cur}

    async def close(self) -> None:
        await self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        await self._db.close()
