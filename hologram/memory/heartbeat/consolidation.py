"""What the merge and review heartbeats ask the model, and how they find it cheaply.

Candidates are found without the model: pairs of entities whose names are equal once
spaces and punctuation are gone, or one of whose aliases is the other's name ("exact"), or
whose character bigrams overlap by a Jaccard index over the threshold. Embedding-only
candidates miss short exact names, so vectors play no part here. A pair already put to the
model is not asked again, so an idle graph costs no model calls.

Relations are reviewed against the sentence they came from by a plain check first (does
the sentence name the target, and the subject unless the speaker is "I"?); only facts that
fail it become tasks.
"""

from __future__ import annotations

import asyncio
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from hologram.memory.graph.store import GraphStore
from hologram.memory.graph.types import Fact, normalise_name

FIRST_PERSON_ORIGINS = frozenset({"distill", "archive"})
"""Facts distilled from "I …" sentences: their subject is the speaker, not named in them."""


def loose_key(name: str) -> str:
    """A name with case, spaces and punctuation gone: "New-York" and "new york" match."""
    return "".join(ch for ch in normalise_name(name) if unicodedata.category(ch)[0] in "LN")


def bigram_set(name: str) -> frozenset[str]:
    key = loose_key(name)
    if len(key) < 2:
        return frozenset({key}) if key else frozenset()
    return frozenset(key[i : i + 2] for i in range(len(key) - 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True, slots=True)
class MergeCandidate:
    a: str
    b: str
    score: float
    why: str  # "exact name", "alias", or "bigram jaccard"

    @property
    def key(self) -> str:
        return "\0".join(sorted((normalise_name(self.a), normalise_name(self.b))))


def _pairs(rows: list[Any], aliases: list[Any], threshold: float) -> list[MergeCandidate]:
    """All candidate pairs, best first (pure CPU: run it off the loop)."""
    name_of = {r[0]: r[1] for r in rows}
    type_of = {r[0]: r[2] for r in rows}
    found: dict[tuple[int, int], MergeCandidate] = {}

    def offer(i: int, j: int, score: float, why: str) -> None:
        if i == j or (type_of[i] and type_of[j] and type_of[i] != type_of[j]):
            return
        key = (min(i, j), max(i, j))
        if key not in found or found[key].score < score:
            found[key] = MergeCandidate(name_of[key[0]], name_of[key[1]], score, why)

    by_loose: dict[str, list[int]] = defaultdict(list)
    for entity_id, name, *_ in rows:
        by_loose[loose_key(name)].append(entity_id)
    for ids in by_loose.values():
        for i in ids:
            for j in ids:
                if i < j:
                    offer(i, j, 1.0, "exact name")
    for alias_norm, owner in aliases:
        for other in by_loose.get(loose_key(alias_norm), []):
            if owner in name_of:
                offer(owner, other, 1.0, "alias")
    grams = {r[0]: bigram_set(r[1]) for r in rows}
    postings: dict[str, list[int]] = defaultdict(list)
    for entity_id, gs in grams.items():
        for g in gs:
            postings[g].append(entity_id)
    for entity_id, gs in grams.items():
        seen: set[int] = set()
        for g in gs:
            if len(postings[g]) > 200:
                continue  # a bigram in hundreds of names says nothing about identity
            for other in postings[g]:
                if other > entity_id and other not in seen:
                    seen.add(other)
                    score = jaccard(gs, grams[other])
                    if score >= threshold:
                        offer(entity_id, other, score, "bigram jaccard")
    return sorted(found.values(), key=lambda c: (-c.score, c.a, c.b))


async def merge_candidates(
    graph: GraphStore, threshold: float, asked: set[str] | None = None
) -> list[MergeCandidate]:
    rows = await graph.fetchall("SELECT id, name, type FROM entities WHERE purged_at IS NULL")
    aliases = await graph.fetchall("SELECT alias_norm, entity_id FROM aliases")
    pairs = await asyncio.to_thread(_pairs, rows, aliases, threshold)
    return [p for p in pairs if asked is None or p.key not in asked]


async def asked_keys(graph: GraphStore, kind: str) -> set[str]:
    rows = await graph.fetchall("SELECT key FROM consolidation_log WHERE kind = ?", (kind,))
    return {r[0] for r in rows}


async def remember_asked(graph: GraphStore, kind: str, key: str, reply: str) -> None:
    async with graph.transaction() as db:
        await db.execute(
            "INSERT OR REPLACE INTO consolidation_log (kind, key, asked_at, reply) "
            "VALUES (?, ?, ?, ?)",
            (kind, key, graph.clock.now(), reply[:2000]),
        )


async def merge_task(graph: GraphStore, pair: MergeCandidate) -> str:
    """The whole context the model gets for one pair: the two entities and a few facts."""
    lines = [
        "[memory consolidation: merge]",
        "Two entities in long-term memory may be the same. Decide from what memory holds:",
    ]
    for label, name in (("A", pair.a), ("B", pair.b)):
        entity = await graph.entity(name)
        facts = await graph.facts(entity=name, limit=5)
        kind = f"{entity.type}, " if entity.type else ""
        lines.append(f"{label}: {entity.name} ({kind}{entity.mention_count} mentions)")
        lines += [f"   {f.line()}" for f in facts]
    lines += [
        f"Why they were paired: {pair.why} (similarity {pair.score:.2f}).",
        "If they are the same, call memory_merge with keep = the better name and merge = the "
        'other. If they are different, reply "skip". If unsure, reply "undecided".',
    ]
    return "\n".join(lines)


_WORDS = re.compile(r"\s+")


def supported(fact: Fact, names: dict[str, list[str]], origin: str) -> bool:
    """Does the fact's sentence name its target (and its subject, unless first person)?"""
    sentence = _WORDS.sub(" ", normalise_name(fact.sentence_text))
    if not sentence:
        return True

    def named(entity: str) -> bool:
        return any(n and n in sentence for n in names.get(entity, [normalise_name(entity)]))

    return named(fact.target) and (origin in FIRST_PERSON_ORIGINS or named(fact.source))


def review_task(fact: Fact) -> str:
    return "\n".join(
        [
            "[memory consolidation: review]",
            f"Fact #{fact.id}: {fact.source} —{fact.relation}→ {fact.target}",
            f"It was taken from the sentence: “{fact.sentence_text}”",
            "The sentence does not seem to name both sides. If the fact is wrong, correct it "
            f"with memory_edit (fact_id {fact.id}: relation or target, or close: true). "
            'If it is right, reply "ok".',
        ]
    )
