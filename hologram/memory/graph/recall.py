"""Recall from the graph (spec: Recall): keywords find seed entities, a breadth-first walk
collects the facts around them, and both come back ranked.

Seeds come from the `norm` index (exact names, aliases, prefixes) and from a trigram index
for substrings of three characters or more, never from a scan of the whole table, so
recall costs the same at 100k entities as at 1k. Every read here is such a bounded one and
goes through `read_now`, without a thread hop.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hologram.memory.graph.base import GraphBase, fetch_in, placeholders
from hologram.memory.graph.types import EntityHit, Fact, Recall, normalise_name

FACT_COLUMNS = (
    "r.id, s.name, r.relation_type, t.name, r.confidence, r.sentence_text, r.created_at, "
    "r.valid_at, r.invalid_at, r.closed_reason, r.replaced_by, r.source_id, r.target_id"
)
FACT_JOINS = (
    "relations r JOIN entities s ON s.id = r.source_id JOIN entities t ON t.id = r.target_id"
)

MATCH_SCORE = {"exact": 1.0, "alias": 0.95, "prefix": 0.7, "substring": 0.6}
HOP_DECAY = 0.5
"""Each hop away from a seed halves an entity's score (times the fact's confidence)."""
MAX_KEYWORDS = 32
MAX_FRONTIER = 48
MAX_EDGES_PER_HOP = 400
"""Bounds that keep one recall cheap on a hub entity with thousands of facts."""


class GraphRecall(GraphBase):
    async def find_entities(
        self, keywords: Iterable[str], per_keyword: int = 10
    ) -> dict[int, tuple[float, str]]:
        """Seed entities for `keywords`: id -> (match score, how it matched)."""
        norms = [n for n in dict.fromkeys(normalise_name(k) for k in keywords) if n]
        norms = norms[:MAX_KEYWORDS]
        seeds: dict[int, tuple[float, str]] = {}

        def offer(entity_id: int, score: float, how: str) -> None:
            if entity_id not in seeds or seeds[entity_id][0] < score:
                seeds[entity_id] = (score, how)

        if not norms:
            return seeds
        marks = placeholders(norms)
        for (entity_id,) in await self.read_now(
            f"SELECT id FROM entities WHERE norm IN ({marks}) AND purged_at IS NULL", norms
        ):
            offer(entity_id, MATCH_SCORE["exact"], "exact")
        for (entity_id,) in await self.read_now(
            "SELECT e.id FROM aliases a JOIN entities e ON e.id = a.entity_id "
            f"WHERE a.alias_norm IN ({marks}) AND e.purged_at IS NULL",
            norms,
        ):
            offer(entity_id, MATCH_SCORE["alias"], "alias")
        for norm in norms:
            for entity_id, name in await self.read_now(
                "SELECT id, norm FROM entities WHERE norm > ? AND norm < ? AND purged_at IS NULL "
                "ORDER BY mention_count DESC LIMIT ?",
                (norm, norm + "\U0010ffff", per_keyword),
            ):
                offer(entity_id, MATCH_SCORE["prefix"] * len(norm) / len(name), "prefix")
            if len(norm) >= 3:
                phrase = '"' + norm.replace('"', '""') + '"'
                for entity_id, name in await self.read_now(
                    "SELECT e.id, e.norm FROM entity_names JOIN entities e "
                    "ON e.id = entity_names.rowid WHERE entity_names MATCH ? "
                    "AND e.purged_at IS NULL LIMIT ?",
                    (phrase, per_keyword),
                ):
                    offer(entity_id, MATCH_SCORE["substring"] * len(norm) / len(name), "substring")
        return seeds

    async def recall(
        self,
        keywords: Iterable[str],
        depth: int = 2,
        *,
        history: bool = False,
        limit: int = 30,
        seeds: Mapping[int, tuple[float, str]] | None = None,
        exclude: Iterable[int] = (),
    ) -> Recall:
        """Entities matching `keywords` (plus any given `seeds`, e.g. from vector search)
        and the facts within `depth` hops of them, best first. Closed facts only when
        `history` is true; entities in `exclude` are neither seeds nor shown."""
        found = await self.find_entities(keywords)
        for entity_id, (seed_score, how) in (seeds or {}).items():
            if entity_id not in found or found[entity_id][0] < seed_score:
                found[entity_id] = (seed_score, how)
        excluded = set(exclude)
        for entity_id in excluded:
            found.pop(entity_id, None)
        if not found:
            return Recall()
        score = {i: s for i, (s, _) in found.items()}
        depth_of = dict.fromkeys(found, 0)
        how_of = {i: h for i, (_, h) in found.items()}
        facts: dict[int, Any] = {}
        frontier = sorted(found, key=lambda i: -score[i])[:MAX_FRONTIER]
        for hop in range(1, max(depth, 0) + 1):
            if not frontier:
                break
            rows = await self._edges(frontier, history)
            following: list[int] = []
            for row in rows:
                facts.setdefault(row[0], row)
                source_id, target_id, confidence = row[11], row[12], row[4]
                for here, there in ((source_id, target_id), (target_id, source_id)):
                    if here not in score or there in excluded:
                        continue
                    reach = score[here] * HOP_DECAY * confidence
                    if there not in score:
                        depth_of[there], how_of[there] = hop, "neighbour"
                        following.append(there)
                    if reach > score.get(there, 0.0):
                        score[there] = reach
            frontier = sorted(following, key=lambda i: -score[i])[:MAX_FRONTIER]
        kept = [
            row for row in facts.values() if row[11] not in excluded and row[12] not in excluded
        ]
        result = await self.facts_from_rows(kept)
        for fact, row in zip(result, kept, strict=True):
            closed = 0.5 if fact.invalid_at is not None else 1.0
            fact.score = max(score.get(row[11], 0.0), score.get(row[12], 0.0)) * fact.confidence
            fact.score *= closed
        result.sort(key=lambda f: (-f.score, -f.valid_at, -f.id))
        info = await self._entity_rows(list(score))
        hits = [
            EntityHit(
                i,
                info[i][0],
                info[i][1],
                info[i][2],
                score[i] * (1.0 + 0.1 * math.log1p(info[i][2])),
                depth_of[i],
                how_of[i],
            )
            for i in score
            if i in info
        ]
        hits.sort(key=lambda h: (-h.score, h.depth, h.name))
        return Recall(hits[: limit * 2], result[:limit])

    async def _edges(self, frontier: Sequence[int], history: bool) -> list[Any]:
        marks = placeholders(frontier)
        current = "" if history else "AND r.invalid_at IS NULL"
        return await self.read_now(
            f"SELECT {FACT_COLUMNS} FROM {FACT_JOINS} WHERE (r.source_id IN ({marks}) "
            f"OR r.target_id IN ({marks})) {current} "
            "ORDER BY r.invalid_at IS NOT NULL, r.confidence DESC, r.valid_at DESC LIMIT ?",
            [*frontier, *frontier, MAX_EDGES_PER_HOP],
        )

    async def _entity_rows(self, ids: Sequence[int]) -> dict[int, tuple[str, str, int]]:
        out: dict[int, tuple[str, str, int]] = {}
        for entity_id, name, kind, mentions in await fetch_in(
            self.read_now,
            "SELECT id, name, type, mention_count FROM entities WHERE id IN ({marks})",
            ids,
        ):
            out[entity_id] = (name, kind, mentions)
        return out

    async def facts_from_rows(self, rows: Sequence[Any]) -> list[Fact]:
        facts = [
            Fact(
                id=r[0],
                source=r[1],
                relation=r[2],
                target=r[3],
                confidence=r[4],
                sentence_text=r[5],
                created_at=r[6],
                valid_at=r[7],
                invalid_at=r[8],
                closed_reason=r[9],
                replaced_by=r[10],
            )
            for r in rows
        ]
        by_id = {f.id: f for f in facts}
        for relation_id, block_id, mime in await fetch_in(
            self.read_now,
            "SELECT rb.relation_id, rb.block_id, b.mime FROM relation_blocks rb "
            "JOIN memory_blocks b ON b.id = rb.block_id WHERE rb.relation_id IN ({marks})",
            list(by_id),
        ):
            fact = by_id[relation_id]
            fact.blocks.append(block_id)
            # The marker is built here from the stored block, never by the model.
            fact.markers.append(f"[{mime or 'text'} {block_id.rsplit('_', 1)[-1]}]")
        return facts
