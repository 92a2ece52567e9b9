"""Changing what the graph holds: merge, edit, close, purge, delete, traits.

Every change that makes a fact untrue closes it (with a reason and its replacement), so
history keeps what was believed and when. `delete_entity` alone removes rows: it is what a
user asking to be forgotten gets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hologram.memory.graph.base import GraphBase
from hologram.memory.graph.types import Fact, GraphError, normalise_name, normalise_relation
from hologram.sdk import (
    GraphEntityDeleted,
    GraphFactClosed,
    GraphMerged,
)


@dataclass(frozen=True, slots=True)
class MergeReport:
    kept: str
    merged: str
    redirected: int
    closed: int
    mention_count: int


class GraphEditing(GraphBase):
    if TYPE_CHECKING:
        # Defined by `GraphStore`, which this mixin is part of.
        async def fact(self, fact_id: int) -> Fact: ...

    async def merge(self, keep: str, drop: str) -> MergeReport:
        """Merge entity `drop` into `keep` (spec: memory_merge): its relations are
        redirected, mention counts summed, its name and aliases become aliases of `keep`.
        Facts the merge turns into self-references or duplicates are closed, not lost."""
        keep_id, drop_id = await self.require(keep), await self.require(drop)
        if keep_id == drop_id:
            raise GraphError(f"{keep!r} and {drop!r} are already the same entity")
        async with self.transaction() as db:
            now = self.clock.now()
            ((keep_name, keep_traits),) = await db.execute_fetchall(
                "SELECT name, traits FROM entities WHERE id = ?", (keep_id,)
            )
            (
                (drop_name, drop_norm, drop_type, drop_mentions, drop_traits),
            ) = await db.execute_fetchall(
                "SELECT name, norm, type, mention_count, traits FROM entities WHERE id = ?",
                (drop_id,),
            )
            cursor = await db.execute(
                "UPDATE relations SET source_id = ? WHERE source_id = ?", (keep_id, drop_id)
            )
            redirected = cursor.rowcount
            cursor = await db.execute(
                "UPDATE relations SET target_id = ? WHERE target_id = ?", (keep_id, drop_id)
            )
            redirected += cursor.rowcount
            cursor = await db.execute(
                "UPDATE relations SET invalid_at = ?, closed_reason = 'merged: self-reference' "
                "WHERE source_id = ? AND target_id = ? AND invalid_at IS NULL",
                (now, keep_id, keep_id),
            )
            closed = cursor.rowcount
            closed += await self._close_duplicates(db, keep_id, now)
            traits = {**json.loads(drop_traits or "{}"), **json.loads(keep_traits or "{}")}
            await db.execute(
                "UPDATE entities SET mention_count = mention_count + ?, updated_at = ?, "
                "traits = ?, type = CASE WHEN type = '' THEN ? ELSE type END WHERE id = ?",
                (drop_mentions, now, json.dumps(traits, ensure_ascii=False), drop_type, keep_id),
            )
            await db.execute(
                "UPDATE aliases SET entity_id = ? WHERE entity_id = ?", (keep_id, drop_id)
            )
            await db.execute("DELETE FROM entities WHERE id = ?", (drop_id,))
            await db.execute(
                "INSERT OR REPLACE INTO aliases (alias_norm, alias, entity_id) VALUES (?, ?, ?)",
                (drop_norm, drop_name, keep_id),
            )
            ((mentions,),) = await db.execute_fetchall(
                "SELECT mention_count FROM entities WHERE id = ?", (keep_id,)
            )
        report = MergeReport(keep_name, drop_name, redirected, closed, mentions)
        self.emit(
            GraphMerged(kept=keep_name, merged=drop_name, redirected=redirected, closed=closed)
        )
        return report

    async def _close_duplicates(self, db: Any, entity_id: int, now: float) -> int:
        rows = await db.execute_fetchall(
            "SELECT id, source_id, relation_type, target_id FROM relations "
            "WHERE invalid_at IS NULL AND (source_id = ? OR target_id = ?) ORDER BY id",
            (entity_id, entity_id),
        )
        first: dict[tuple[int, str, int], int] = {}
        closes = []
        for rid, s, r, o in rows:
            key = (s, r, o)
            if key in first:
                closes.append((now, first[key], rid))
            else:
                first[key] = rid
        await db.executemany(
            "UPDATE relations SET invalid_at = ?, closed_reason = 'merged: duplicate', "
            "replaced_by = ? WHERE id = ?",
            closes,
        )
        return len(closes)

    async def close_fact(self, fact_id: int, reason: str = "contradicted") -> None:
        """Mark a current fact as no longer true (kept for history)."""
        fact = await self.fact(fact_id)
        if fact.invalid_at is not None:
            raise GraphError(f"fact #{fact_id} is already closed ({fact.closed_reason})")
        async with self.transaction() as db:
            await db.execute(
                "UPDATE relations SET invalid_at = ?, closed_reason = ? WHERE id = ?",
                (self.clock.now(), reason, fact_id),
            )
        self.emit(GraphFactClosed(ids=[fact_id], reason=reason))

    async def edit_relation(
        self,
        fact_id: int,
        *,
        relation: str | None = None,
        target: str | None = None,
        confidence: float | None = None,
        sentence_text: str | None = None,
    ) -> int:
        """Correct a current fact: the old one is closed as "edited" and points to the new
        one, which is returned. A `target` not yet in the graph is created."""
        old = await self.fact(fact_id)
        if old.invalid_at is not None:
            raise GraphError(f"fact #{fact_id} is closed ({old.closed_reason}); edit a current one")
        if confidence is not None and not 0.0 <= confidence <= 1.0:
            raise GraphError("confidence must be from 0 to 1")
        new_relation = normalise_relation(relation) if relation is not None else old.relation
        if not new_relation:
            raise GraphError("a relation type must be non-empty")
        target_name = old.target if target is None else target.strip()
        if not normalise_name(target_name):
            raise GraphError("the new target must be a non-empty entity name")
        target_id = await self.ensure_entity(target_name)
        async with self.transaction() as db:
            now = self.clock.now()
            ((source_id,),) = await db.execute_fetchall(
                "SELECT source_id FROM relations WHERE id = ?", (fact_id,)
            )
            cursor = await db.execute(
                "INSERT INTO relations (source_id, target_id, relation_type, confidence, "
                "sentence_text, origin, created_at, valid_at) VALUES (?, ?, ?, ?, ?, 'edit', ?, ?)",
                (
                    source_id,
                    target_id,
                    new_relation,
                    old.confidence if confidence is None else confidence,
                    old.sentence_text if sentence_text is None else sentence_text,
                    now,
                    now,
                ),
            )
            new_id = cursor.lastrowid
            await db.execute(
                "UPDATE relations SET invalid_at = ?, closed_reason = 'edited', replaced_by = ? "
                "WHERE id = ?",
                (now, new_id, fact_id),
            )
            await db.execute(
                "INSERT INTO relation_blocks SELECT ?, block_id FROM relation_blocks "
                "WHERE relation_id = ?",
                (new_id, fact_id),
            )
        self.emit(GraphFactClosed(ids=[fact_id], reason="edited", replaced_by=new_id))
        assert new_id is not None
        return new_id

    async def edit_entity(
        self, name: str, *, new_name: str | None = None, type: str | None = None
    ) -> str:
        """Rename an entity (the old name stays as an alias) or change its type."""
        entity_id = await self.require(name)
        new_norm = normalise_name(new_name) if new_name is not None else None
        if new_name is not None and not new_norm:
            raise GraphError("the new name must be non-empty")
        if new_norm is not None:
            other = (await self.ids_of([new_norm])).get(new_norm)
            if other is not None and other != entity_id:
                raise GraphError(
                    f"{new_name!r} is already another entity: use memory_merge to join them"
                )
        async with self.transaction() as db:
            ((old_name, old_norm),) = await db.execute_fetchall(
                "SELECT name, norm FROM entities WHERE id = ?", (entity_id,)
            )
            now = self.clock.now()
            if new_name is not None and new_norm is not None:
                await db.execute("DELETE FROM aliases WHERE alias_norm = ?", (new_norm,))
                await db.execute(
                    "UPDATE entities SET name = ?, norm = ?, updated_at = ? WHERE id = ?",
                    (new_name.strip(), new_norm, now, entity_id),
                )
                if new_norm != old_norm:
                    await db.execute(
                        "INSERT OR REPLACE INTO aliases VALUES (?, ?, ?)",
                        (old_norm, old_name, entity_id),
                    )
            if type is not None:
                await db.execute(
                    "UPDATE entities SET type = ?, updated_at = ? WHERE id = ?",
                    (type.strip(), now, entity_id),
                )
        return new_name.strip() if new_name is not None else old_name

    async def purge(self, name: str) -> int:
        """Retire an entity (spec: memory_purge): its current facts are closed as
        "purged" and it stops being recalled; history still shows it. Returns the
        number of facts closed. A later mention brings it back."""
        entity_id = await self.require(name)
        async with self.transaction() as db:
            now = self.clock.now()
            cursor = await db.execute(
                "UPDATE relations SET invalid_at = ?, closed_reason = 'purged' "
                "WHERE (source_id = ? OR target_id = ?) AND invalid_at IS NULL",
                (now, entity_id, entity_id),
            )
            await db.execute("UPDATE entities SET purged_at = ? WHERE id = ?", (now, entity_id))
        self.emit(GraphFactClosed(entity=name, reason="purged", count=cursor.rowcount))
        return cursor.rowcount

    async def delete_entity(self, name: str) -> int:
        """Erase an entity and every fact it is part of, history included (the user asks
        to be forgotten). Returns the number of facts removed."""
        entity_id = await self.require(name)
        async with self.transaction() as db:
            ((count,),) = await db.execute_fetchall(
                "SELECT COUNT(*) FROM relations WHERE source_id = ? OR target_id = ?",
                (entity_id, entity_id),
            )
            await db.execute("DELETE FROM entities WHERE id = ?", (entity_id,))
        self.emit(GraphEntityDeleted(entity=name, facts=count))
        return int(count)

    async def set_traits(self, name: str, traits: dict[str, Any], type: str = "") -> dict[str, Any]:
        """Merge `traits` into an entity's traits (a value of None removes the key); the
        entity is created when new. Returns the traits now held."""
        entity_id = await self.ensure_entity(name, type)
        async with self.transaction() as db:
            ((raw,),) = await db.execute_fetchall(
                "SELECT traits FROM entities WHERE id = ?", (entity_id,)
            )
            held = json.loads(raw or "{}")
            for key, value in traits.items():
                if value is None:
                    held.pop(key, None)
                else:
                    held[key] = value
            await db.execute(
                "UPDATE entities SET traits = ?, updated_at = ?, "
                "type = CASE WHEN type = '' THEN ? ELSE type END WHERE id = ?",
                (json.dumps(held, ensure_ascii=False), self.clock.now(), type, entity_id),
            )
        return held
