"""The graph database's connections: one writer, one reader, SQLite in WAL mode.

Writes go through `transaction()`, one `BEGIN IMMEDIATE … COMMIT` under an asyncio lock, so a
commit is all or nothing even when the process is killed half-way (WAL replays only whole
transactions). Reads use their own connection: WAL lets them run while a write is open,
and they never see a transaction that has not committed.

A third connection, plain sqlite3, answers `read_now`: the small reads of a recall (names
through an index, a frontier's edges under a LIMIT, rows by id), tens of microseconds each,
run on the caller's thread. Through aiosqlite each such read is a hop to its thread and
back, about 0.08 ms when the machine is idle but 1.5 ms at p95 when it is busy
(benchmarks/memory_scale.py, issue 22), and a recall makes eight of them. Scans and
anything unbounded stay on the aiosqlite reader.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from collections.abc import Collection as Sized
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
import numpy as np

from hologram.kernel import connect_sqlite
from hologram.memory.graph.schema import migrate
from hologram.memory.graph.types import GraphError, UnknownEntity, normalise_name
from hologram.sdk import (
    Clock,
    Embedder,
    Emit,
    Payload,
    discard,
)

log = logging.getLogger(__name__)


def vector_blob(vector: Any) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def blob_vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def placeholders(values: Sized[Any]) -> str:
    return ",".join("?" * len(values))


MAX_VARIABLES = 500
"""Values bound in one `IN (…)` list: well under SQLite's limit on host parameters."""

Fetch = Callable[[str, Sequence[Any]], Awaitable[Iterable[Any]]]


async def fetch_in(fetch: Fetch, sql: str, values: Sequence[Any]) -> list[Any]:
    """The rows of `sql` for every value of `values`, whatever their number: `sql` holds
    one `{marks}` where the `IN (…)` list goes, and runs once per `MAX_VARIABLES` values."""
    rows: list[Any] = []
    values = list(values)
    for start in range(0, len(values), MAX_VARIABLES):
        chunk = values[start : start + MAX_VARIABLES]
        rows += await fetch(sql.format(marks=placeholders(chunk)), chunk)
    return rows


class CorruptGraph(GraphError):
    """The database file is not a readable graph: it is left untouched for inspection."""


class GraphBase:
    def __init__(
        self,
        path: Path,
        embedder: Embedder,
        clock: Clock,
        *,
        emit: Emit | None = None,
    ) -> None:
        self.path = path
        self.embedder = embedder
        self.clock = clock
        self._emit = emit or discard
        self._wdb: aiosqlite.Connection | None = None
        self._rdb: aiosqlite.Connection | None = None
        self._now: sqlite3.Connection | None = None
        self._now_lock = threading.Lock()
        self._lock_obj = asyncio.Lock()
        #: Write transactions committed since open: a reader that found nothing to do can
        #: tell that nothing has changed since without reading.
        self.writes = 0

    async def open(self) -> list[int]:
        """Open (creating) the database and bring its schema up to date; returns the
        migrations applied. A file that is not SQLite is an error naming it, never
        overwritten."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._wdb = await connect_sqlite(self.path, isolation_level=None)
            await self._wdb.execute("PRAGMA journal_mode=WAL")
            # FULL: an acknowledged commit survives a power cut, not only a killed process.
            await self._wdb.execute("PRAGMA synchronous=FULL")
            await self._wdb.execute("PRAGMA foreign_keys=ON")
            await self._wdb.execute("PRAGMA busy_timeout=5000")
            applied = await migrate(self._wdb)
        except aiosqlite.DatabaseError as exc:
            await self.close()
            raise CorruptGraph(
                f"{self.path} is not a readable graph database ({exc}); it was left as it "
                "is: move it aside to start an empty graph, or restore a backup"
            ) from exc
        self._rdb = await connect_sqlite(self.path, isolation_level=None)
        await self._rdb.execute("PRAGMA foreign_keys=ON")
        await self._rdb.execute("PRAGMA query_only=ON")
        # Checked by the lock below, not by thread: a tool may read from a worker thread.
        self._now = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._now.execute("PRAGMA query_only=ON")
        # A WAL reader waits only while the writer resets the log: briefly, never a commit.
        self._now.execute("PRAGMA busy_timeout=1000")
        if applied:
            log.info("graph %s migrated to schema %s", self.path, applied[-1])
        return applied

    async def wal_checkpoint(self) -> None:
        """Fold the write-ahead log into the database file (for measuring its size)."""
        await self.wdb.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    async def close(self) -> None:
        if self._now is not None:
            with self._now_lock:
                self._now.close()
            self._now = None
        for db in (self._rdb, self._wdb):
            if db is not None:
                await db.close()
        self._rdb = self._wdb = None

    @property
    def wdb(self) -> aiosqlite.Connection:
        if self._wdb is None:
            raise GraphError("the graph is not open; await open() first")
        return self._wdb

    @property
    def rdb(self) -> aiosqlite.Connection:
        if self._rdb is None:
            raise GraphError("the graph is not open; await open() first")
        return self._rdb

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock_obj:
            db = self.wdb
            await db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                await db.execute("ROLLBACK")
                raise
            await db.execute("COMMIT")
            self.writes += 1

    @asynccontextmanager
    async def write_lock(self) -> AsyncIterator[None]:
        """Hold the writer without a transaction (to prepare one: embed, resolve)."""
        async with self._lock_obj:
            yield

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        return list(await self.rdb.execute_fetchall(sql, tuple(params)))

    async def read_now(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        """The rows of a small read (an index lookup, a LIMIT), run where it is called:
        no thread hop. Awaitable like `fetchall`, so the two trade places freely; give it
        nothing that scans a table."""
        if self._now is None:
            raise GraphError("the graph is not open; await open() first")
        with self._now_lock:
            return self._now.execute(sql, tuple(params)).fetchall()

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> Any:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    def emit(self, payload: Payload) -> None:
        self._emit(payload, source="memory")

    # ---- names -------------------------------------------------------------------------

    async def ids_of(
        self, norms: Iterable[str], db: aiosqlite.Connection | None = None
    ) -> dict[str, int]:
        """Entity ids by normalised name or alias (a name wins over an alias)."""
        norms = list(dict.fromkeys(norms))
        found: dict[str, int] = {}
        fetch = (db or self.rdb).execute_fetchall
        for norm, entity_id in await fetch_in(
            fetch, "SELECT alias_norm, entity_id FROM aliases WHERE alias_norm IN ({marks})", norms
        ):
            found[norm] = entity_id
        for norm, entity_id in await fetch_in(
            fetch, "SELECT norm, id FROM entities WHERE norm IN ({marks})", norms
        ):
            found[norm] = entity_id
        return found

    async def require(self, name: str) -> int:
        """The id of entity `name` (or an alias of it), or `UnknownEntity` with the
        closest names as suggestions."""
        norm = normalise_name(name) if isinstance(name, str) else ""
        if not norm:
            raise GraphError("an entity name must be a non-empty string")
        found = await self.ids_of([norm])
        if norm in found:
            return found[norm]
        rows = await self.fetchall(
            "SELECT name FROM entities WHERE norm >= ? AND norm < ? ORDER BY mention_count DESC "
            "LIMIT 5",
            (norm[:1], norm[:1] + "\U0010ffff"),
        )
        raise UnknownEntity(name, [r[0] for r in rows])

    async def ensure_entity(self, name: str, type: str = "") -> int:
        """The id of entity `name`, created (with its vector) when it does not exist."""
        norm = normalise_name(name) if isinstance(name, str) else ""
        if not norm:
            raise GraphError("an entity name must be a non-empty string")
        found = await self.ids_of([norm])
        if norm in found:
            return found[norm]
        vector = (await asyncio.to_thread(self.embedder.embed_texts, [name.strip()]))[0]
        async with self.transaction() as db:
            now = self.clock.now()
            await db.execute(
                "INSERT INTO entities (name, norm, type, mention_count, vector, fingerprint, "
                "created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?, ?, ?) "
                "ON CONFLICT(norm) DO NOTHING",
                (
                    name.strip(),
                    norm,
                    type,
                    vector_blob(vector),
                    self.embedder.fingerprint,
                    now,
                    now,
                ),
            )
            entity_id = (await self.ids_of([norm], db))[norm]
        self._entities_added([entity_id], [vector])
        return entity_id

    def _entities_added(self, ids: list[int], vectors: list[Any]) -> None:
        """Overridden by the store to tell the indexer's vector index."""
