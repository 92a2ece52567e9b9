"""The graph store (spec: GraphDB): entities, relations with temporal validity, memory blocks.

A fact is never deleted by being contradicted or edited: it is closed (`invalid_at`, a
reason, and the fact that replaced it), so "where did she live in May?" stays answerable
and recall shows current facts unless asked for history. Only an explicit
`delete_entity` (the user asks to be forgotten) removes rows.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hologram.kernel import TaskScope
from hologram.memory.graph.base import GraphBase, fetch_in, vector_blob
from hologram.memory.graph.blocks import BlockStore
from hologram.memory.graph.edit import GraphEditing
from hologram.memory.graph.recall import FACT_COLUMNS, FACT_JOINS, GraphRecall
from hologram.memory.graph.types import (
    Entity,
    Fact,
    GraphError,
    Triple,
    normalise_name,
    normalise_relation,
)
from hologram.memory.recall.hybrid import HybridIndex
from hologram.memory.turns import Place, TurnStore
from hologram.sdk import (
    Clock,
    Embedder,
    Emit,
    GraphCommitted,
    MemoryReembed,
)

SINGLE_VALUED = frozenset(
    {"name", "is_named", "lives_in", "age", "job", "works_as", "birthday", "spouse", "located_in"}
)
"""Relation types that hold one value at a time: a new target closes the current one."""


@dataclass(slots=True)
class CommitReport:
    added: list[int] = field(default_factory=list)
    confirmed: list[int] = field(default_factory=list)
    """Facts already current: their confidence rose to the new one if higher."""
    closed: list[int] = field(default_factory=list)
    """Facts the new ones contradicted, now closed."""
    entities: list[str] = field(default_factory=list)


class GraphStore(GraphRecall, GraphEditing, GraphBase):
    """`<data>/graph.db`. Open with `await GraphStore.open_at(path, embedder, clock)`."""

    def __init__(
        self,
        path: Path,
        embedder: Embedder,
        clock: Clock,
        *,
        emit: Emit | None = None,
        single_valued: Iterable[str] = SINGLE_VALUED,
        recall_index: HybridIndex | None = None,
        keywords: Callable[[str], list[str]] | None = None,
        tasks: TaskScope,
        turns: TurnStore | None = None,
    ) -> None:
        """`turns` holds the text blocks (the kernel's turn store, shared with the window
        and the cold context); without one the graph opens its own beside its file."""
        super().__init__(path, embedder, clock, emit=emit)
        self.single_valued = frozenset(normalise_relation(r) for r in single_valued)
        self._own_turns = turns is None
        self.blocks = BlockStore(
            self, turns, recall_index=recall_index, keywords=keywords, tasks=tasks
        )
        self._entity_listeners: list[Callable[[list[int], list[Any]], None]] = []

    @classmethod
    async def open_at(
        cls, path: Path, embedder: Embedder, clock: Clock, **options: Any
    ) -> GraphStore:
        store = cls(path, embedder, clock, **options)
        await store.open()
        return store

    async def open(self) -> list[int]:
        applied = await super().open()
        if self._own_turns:
            own = self.path.with_name(f"{self.path.stem}.turns.db")
            self.blocks.turns = await asyncio.to_thread(TurnStore, own)
        # The blocks' words and vectors load while the kernel boots on: not on its path.
        self.blocks.start()
        return applied

    async def close(self) -> None:
        await self.blocks.close()
        if self._own_turns and self.blocks.opened:
            await asyncio.to_thread(self.blocks.turns.close)
        await super().close()

    # ---- commit ------------------------------------------------------------------------

    async def commit(self, triples: Sequence[Triple], *, origin: str = "") -> CommitReport:
        """Upsert the entities and insert the relations of `triples`, in one transaction:
        after a crash either all of them are there or none is. A triple whose relation is
        single-valued closes the subject's current fact of that relation with another
        target; a triple that is already a current fact only confirms it."""
        triples = list(triples)
        report = CommitReport()
        if not triples:
            return report
        names: dict[str, tuple[str, str]] = {}
        mentions: Counter[str] = Counter()
        for t in triples:
            for name, kind in ((t.source, t.source_type), (t.target, t.target_type)):
                norm = normalise_name(name)
                if not norm:
                    raise GraphError(f"entity names must be non-empty: {t!r}")
                if norm not in names or (kind and not names[norm][1]):
                    names[norm] = (name.strip(), kind)
                mentions[norm] += 1
            if not normalise_relation(t.relation):
                raise GraphError(f"a relation type must be non-empty: {t!r}")
        async with self.write_lock():
            block_ids = {d: await self.blocks.resolve(d) for t in triples for d in t.media_digests}
            known = await self.ids_of(names, self.wdb)
            fresh = [n for n in names if n not in known]
            # One row per fresh name: the embedder's matrix, or no rows at all.
            vectors: npt.NDArray[np.float32] | list[npt.NDArray[np.float32]] = (
                await asyncio.to_thread(self.embedder.embed_texts, [names[n][0] for n in fresh])
                if fresh
                else []
            )
        async with self.transaction() as db:
            now = self.clock.now()
            fp = self.embedder.fingerprint
            await db.executemany(
                "UPDATE entities SET mention_count = mention_count + ?, updated_at = ?, "
                "purged_at = NULL, type = CASE WHEN type = '' THEN ? ELSE type END WHERE id = ?",
                [(mentions[n], now, names[n][1], i) for n, i in known.items()],
            )
            await db.executemany(
                "INSERT INTO entities (name, norm, type, mention_count, vector, fingerprint, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(norm) DO "
                "UPDATE SET mention_count = mention_count + excluded.mention_count",
                [
                    (names[n][0], n, names[n][1], mentions[n], vector_blob(v), fp, now, now)
                    for n, v in zip(fresh, vectors, strict=True)
                ],
            )
            ids = await self.ids_of(names, db)
            await self._insert_relations(db, triples, ids, block_ids, origin, now, report)
        report.entities = [names[n][0] for n in names]
        if fresh:
            self._entities_added([ids[n] for n in fresh], list(vectors))
        self.emit(
            GraphCommitted(
                added=report.added,
                closed=report.closed,
                confirmed=report.confirmed,
                entities=report.entities,
                origin=origin,
            )
        )
        return report

    async def _insert_relations(
        self,
        db: Any,
        triples: list[Triple],
        ids: dict[str, int],
        block_ids: dict[str, str],
        origin: str,
        now: float,
        report: CommitReport,
    ) -> None:
        subjects = sorted({ids[normalise_name(t.source)] for t in triples})
        current: dict[tuple[int, str], list[tuple[int, int]]] = defaultdict(list)
        for rid, s, o, r in await fetch_in(
            db.execute_fetchall,
            "SELECT id, source_id, target_id, relation_type FROM relations "
            "WHERE invalid_at IS NULL AND source_id IN ({marks})",
            subjects,
        ):
            current[(s, r)].append((rid, o))
        ((next_id,),) = await db.execute_fetchall("SELECT COALESCE(MAX(id), 0) + 1 FROM relations")
        rows, closes, confirms, links = [], [], [], []
        for t in triples:
            s, o = ids[normalise_name(t.source)], ids[normalise_name(t.target)]
            r = normalise_relation(t.relation)
            same = [rid for rid, target in current[(s, r)] if target == o]
            if same:
                confirms.append((t.confidence, same[0]))
                report.confirmed.append(same[0])
                links += [(same[0], block_ids[d]) for d in t.media_digests]
                continue
            rid, next_id = next_id, next_id + 1
            exclusive = t.exclusive if t.exclusive is not None else r in self.single_valued
            if exclusive:
                for old, _target in current[(s, r)]:
                    closes.append((now, "superseded", rid, old))
                    report.closed.append(old)
                current[(s, r)] = []
            current[(s, r)].append((rid, o))
            rows.append((rid, s, o, r, t.confidence, t.sentence_text, t.origin or origin, now, now))
            links += [(rid, block_ids[d]) for d in t.media_digests]
            report.added.append(rid)
        await db.executemany(
            "INSERT INTO relations (id, source_id, target_id, relation_type, confidence, "
            "sentence_text, origin, created_at, valid_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        await db.executemany(
            "UPDATE relations SET invalid_at = ?, closed_reason = ?, replaced_by = ? "
            "WHERE id = ? AND invalid_at IS NULL",
            closes,
        )
        await db.executemany(
            "UPDATE relations SET confidence = MAX(confidence, ?) WHERE id = ?", confirms
        )
        await db.executemany("INSERT OR IGNORE INTO relation_blocks VALUES (?, ?)", links)

    def _entities_added(self, ids: list[int], vectors: list[Any]) -> None:
        for listener in self._entity_listeners:
            listener(ids, vectors)

    def on_entities_added(self, listener: Callable[[list[int], list[Any]], None]) -> None:
        """Be told of new entities and their vectors (the indexer's vector index is)."""
        self._entity_listeners.append(listener)

    async def reembed_entities(self, batch: int = 512) -> int:
        """Recompute the vectors of entities embedded in another space (or none), and
        write them back; returns how many. Until then they are found by name only."""
        fp = self.embedder.fingerprint
        rows = await self.fetchall(
            "SELECT id, name FROM entities WHERE fingerprint IS NOT ? OR vector IS NULL", (fp,)
        )
        for start in range(0, len(rows), batch):
            chunk = rows[start : start + batch]
            vectors = await asyncio.to_thread(self.embedder.embed_texts, [r[1] for r in chunk])
            async with self.transaction() as db:
                await db.executemany(
                    "UPDATE entities SET vector = ?, fingerprint = ? WHERE id = ?",
                    [(vector_blob(v), fp, r[0]) for r, v in zip(chunk, vectors, strict=True)],
                )
            self._entities_added([r[0] for r in chunk], list(vectors))
            self.emit(
                MemoryReembed(
                    layer="graph.entities", done=start + len(chunk), total=len(rows), fingerprint=fp
                )
            )
        return len(rows)

    # ---- reading -----------------------------------------------------------------------

    async def entity(self, name: str) -> Entity:
        """Entity `name` (or one of its aliases), or `UnknownEntity`."""
        entity_id = await self.require(name)
        return (await self.entities_by_id([entity_id]))[entity_id]

    async def entities_by_id(self, ids: Sequence[int]) -> dict[int, Entity]:
        out: dict[int, Entity] = {}
        for row in await fetch_in(
            self.fetchall,
            "SELECT id, name, type, mention_count, created_at, updated_at, traits, "
            "purged_at FROM entities WHERE id IN ({marks})",
            ids,
        ):
            out[row[0]] = Entity(
                row[0],
                row[1],
                row[2],
                row[3],
                row[4],
                row[5],
                traits=json.loads(row[6] or "{}"),
                purged=row[7] is not None,
            )
        for entity_id, alias in await fetch_in(
            self.fetchall, "SELECT entity_id, alias FROM aliases WHERE entity_id IN ({marks})", ids
        ):
            out[entity_id].aliases.append(alias)
        return out

    async def mention_counts(self, names: Iterable[str]) -> dict[str, int]:
        """Mention counts of entities by display name (the widget sizes nodes by them)."""
        names = sorted(set(names))
        out: dict[str, int] = {}
        for name, count in await fetch_in(
            self.fetchall, "SELECT name, mention_count FROM entities WHERE name IN ({marks})", names
        ):
            out[name] = int(count)
        return out

    async def list_entities(self, limit: int = 1000) -> list[Entity]:
        rows = await self.fetchall(
            "SELECT id FROM entities ORDER BY mention_count DESC, id LIMIT ?", (limit,)
        )
        found = await self.entities_by_id([r[0] for r in rows])
        return [found[r[0]] for r in rows]

    async def facts(
        self,
        *,
        entity: str | None = None,
        history: bool = False,
        limit: int = 10_000,
    ) -> list[Fact]:
        """Facts (current ones unless `history`), of one entity or of the whole graph,
        newest first."""
        where, params = [], []
        if entity is not None:
            entity_id = await self.require(entity)
            where.append("(r.source_id = ? OR r.target_id = ?)")
            params += [entity_id, entity_id]
        if not history:
            where.append("r.invalid_at IS NULL")
        sql = f"SELECT {FACT_COLUMNS} FROM {FACT_JOINS}"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY r.valid_at DESC, r.id DESC LIMIT ?"
        return await self.facts_from_rows(await self.fetchall(sql, [*params, limit]))

    async def fact(self, fact_id: int) -> Fact:
        if isinstance(fact_id, bool) or not isinstance(fact_id, int):
            raise GraphError("a fact id is an integer, as recall lists it (#id)")
        rows = await self.fetchall(
            f"SELECT {FACT_COLUMNS} FROM {FACT_JOINS} WHERE r.id = ?", (fact_id,)
        )
        if not rows:
            raise GraphError(f"no fact #{fact_id}; recall the entity to see its facts' ids")
        return (await self.facts_from_rows(rows))[0]

    async def _block_counts(self) -> dict[str, int]:
        """By kind, as a listing counts them: text blocks are the turns of the graph's place."""
        (media,) = await self.fetchone("SELECT COUNT(*) FROM memory_blocks WHERE kind = 'media'")
        counts = await asyncio.to_thread(self.blocks.turns.counts)
        found = {"media": media, "text": counts.get(Place.GRAPH, 0)}
        return {kind: n for kind, n in found.items() if n}

    async def stats(self) -> dict[str, Any]:
        one = self.fetchone
        return {
            "entities": (await one("SELECT COUNT(*) FROM entities WHERE purged_at IS NULL"))[0],
            "purged_entities": (
                await one("SELECT COUNT(*) FROM entities WHERE purged_at IS NOT NULL")
            )[0],
            "aliases": (await one("SELECT COUNT(*) FROM aliases"))[0],
            "current_facts": (await one("SELECT COUNT(*) FROM relations WHERE invalid_at IS NULL"))[
                0
            ],
            "closed_facts": (
                await one("SELECT COUNT(*) FROM relations WHERE invalid_at IS NOT NULL")
            )[0],
            "blocks": await self._block_counts(),
            "media_bytes": (
                await one("SELECT COALESCE(SUM(size), 0) FROM memory_blocks WHERE kind='media'")
            )[0],
            "schema_version": (await one("PRAGMA user_version"))[0],
            "file_bytes": sum(
                p.stat().st_size
                for p in (self.path, self.path.with_name(self.path.name + "-wal"))
                if p.exists()
            ),
        }
