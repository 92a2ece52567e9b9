"""The model's tools over the graph (spec: Memory Tools): recall, commit, merge, purge,
edit, delete_entity and introspect.

Arguments are checked before anything is touched; a wrong one, or an entity that does not
exist, comes back to the model as a `ToolError` saying what to send instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from hologram.memory.graph import GraphStore
from hologram.memory.graph_types import GraphError, Triple
from hologram.memory.indexer import Indexer, with_cjk_bigrams
from hologram.sdk import EventType, ToolDef, ToolError

Handler = Callable[[dict[str, Any]], Awaitable[str]]

TRIPLE_SCHEMA = {
    "type": "object",
    "properties": {
        "source": {"type": "string", "description": "the subject entity, e.g. Alice"},
        "relation": {"type": "string", "description": "e.g. lives_in, likes, works_at"},
        "target": {"type": "string", "description": "the object entity, e.g. Paris"},
        "source_type": {"type": "string", "description": "person, place, thing …"},
        "target_type": {"type": "string"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "sentence_text": {"type": "string", "description": "the sentence it came from"},
        "media_digests": {"type": "array", "items": {"type": "string"}},
        "exclusive": {
            "type": "boolean",
            "description": "true if the relation holds one value at a time (a new one "
            "replaces the old)",
        },
    },
    "required": ["source", "relation", "target"],
}


def _text(args: dict[str, Any], key: str, tool: str, what: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ToolError(f"{tool} needs {key!r}: {what}")
    return value.strip()


def _int(args: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ToolError(f"{key!r} must be an integer from {low} to {high}")
    return value


def _guarded(handler: Handler) -> Handler:
    """Graph refusals (unknown entity, bad triple) reach the model as tool errors."""

    async def run(args: dict[str, Any]) -> str:
        try:
            return await handler(args)
        except GraphError as exc:
            raise ToolError(str(exc)) from None

    return run


def parse_triples(args: dict[str, Any]) -> list[Triple]:
    raw = args.get("triples")
    if not isinstance(raw, list) or not raw:
        raise ToolError(
            "memory_commit needs 'triples': a non-empty list of "
            '{"source": …, "relation": …, "target": …}'
        )
    shared_sentence = args.get("sentence_text", "")
    shared_digests = args.get("media_digests", [])
    if not isinstance(shared_sentence, str):
        raise ToolError("'sentence_text' must be a string")
    if not isinstance(shared_digests, list) or not all(isinstance(d, str) for d in shared_digests):
        raise ToolError("'media_digests' must be a list of block digests")
    if (
        shared_digests
        and not shared_sentence
        and not all(isinstance(t, dict) and t.get("sentence_text") for t in raw)
    ):
        raise ToolError(
            "media_digests hang off a sentence: give 'sentence_text' (the sentence that "
            "refers to the media) as well"
        )
    triples = []
    for i, obj in enumerate(raw):
        triple = Triple.from_json(obj, f"triples[{i}]")
        triples.append(
            Triple(
                **{
                    **{f: getattr(triple, f) for f in Triple.__dataclass_fields__},
                    "sentence_text": triple.sentence_text or shared_sentence.strip(),
                    "media_digests": triple.media_digests + tuple(shared_digests),
                    "origin": "memory_commit",
                }
            )
        )
    return triples


def graph_tools(
    graph: GraphStore,
    indexer: Indexer,
    introspect: Callable[[], Awaitable[str]],
    emit: Callable[..., Any] | None = None,
) -> list[ToolDef]:
    """The seven ToolDefs, bound to one kernel's graph."""

    async def recall(args: dict[str, Any]) -> str:
        query = args.get("query")
        keywords = args.get("keywords")
        if keywords is None and isinstance(query, str) and query.strip():
            keywords = await _keywords(indexer, query)
        if (
            not isinstance(keywords, list)
            or not keywords
            or not all(isinstance(k, str) for k in keywords)
        ):
            raise ToolError("memory_recall needs 'query' (text) or 'keywords' (a list of names)")
        depth = _int(args, "depth", 2, 0, 4)
        history = args.get("history", False)
        if not isinstance(history, bool):
            raise ToolError("'history' must be true or false")
        seeds = await indexer.vector_seeds(query) if isinstance(query, str) and query else {}
        result = await graph.recall(keywords, depth, history=history, seeds=seeds)
        indexer.mark_recalled(e.id for e in result.entities)
        indexer.last_recall = result
        if emit is not None:
            emit(
                EventType.GRAPH_RECALLED,
                source="memory",
                via="memory_recall",
                entities=result.names(),
                facts=[f.id for f in result.facts],
            )
        return result.text()

    async def commit(args: dict[str, Any]) -> str:
        report = await graph.commit(parse_triples(args), origin="memory_commit")
        parts = [f"Stored {len(report.added)} new fact(s)"]
        if report.confirmed:
            parts.append(f"{len(report.confirmed)} already known")
        if report.closed:
            parts.append(f"closed {len(report.closed)} contradicted fact(s) (kept as history)")
        return "; ".join(parts) + "."

    async def merge(args: dict[str, Any]) -> str:
        keep = _text(args, "keep", "memory_merge", "the entity name to keep")
        drop = _text(args, "merge", "memory_merge", "the entity merged into it")
        report = await graph.merge(keep, drop)
        return (
            f"Merged {report.merged!r} into {report.kept!r}: {report.redirected} relation(s) "
            f"redirected, {report.closed} duplicate(s) closed, mentions now "
            f"{report.mention_count}; {report.merged!r} is kept as an alias."
        )

    async def purge(args: dict[str, Any]) -> str:
        name = _text(args, "entity", "memory_purge", "the entity to retire")
        closed = await graph.purge(name)
        return f"Retired {name!r}: {closed} fact(s) closed (history keeps them)."

    async def edit(args: dict[str, Any]) -> str:
        if "fact_id" in args:
            fact_id = args["fact_id"]
            if isinstance(fact_id, bool) or not isinstance(fact_id, int):
                raise ToolError("'fact_id' must be the integer shown as #id by memory_recall")
            if args.get("close"):
                reason = args.get("reason", "contradicted")
                if not isinstance(reason, str):
                    raise ToolError("'reason' must be a string")
                await graph.close_fact(fact_id, reason or "contradicted")
                return f"Fact #{fact_id} closed ({reason}); history keeps it."
            changes = {
                k: args[k]
                for k in ("relation", "target", "confidence", "sentence_text")
                if k in args
            }
            if not changes:
                raise ToolError(
                    "memory_edit of a fact needs one of relation, target, confidence, "
                    "sentence_text, or close: true"
                )
            for key in ("relation", "target", "sentence_text"):
                if key in changes and not isinstance(changes[key], str):
                    raise ToolError(f"{key!r} must be a string")
            confidence = changes.get("confidence")
            if confidence is not None and (
                isinstance(confidence, bool) or not isinstance(confidence, int | float)
            ):
                raise ToolError("'confidence' must be a number from 0 to 1")
            new_id = await graph.edit_relation(fact_id, **changes)
            return f"Fact #{fact_id} replaced by #{new_id} (the old one is kept as history)."
        if "entity" in args:
            name = _text(args, "entity", "memory_edit", "the entity to change")
            new_name, kind = args.get("new_name"), args.get("type")
            if new_name is None and kind is None:
                raise ToolError("memory_edit of an entity needs 'new_name' or 'type'")
            for key, value in (("new_name", new_name), ("type", kind)):
                if value is not None and not isinstance(value, str):
                    raise ToolError(f"{key!r} must be a string")
            now = await graph.edit_entity(name, new_name=new_name, type=kind)
            return f"Entity {name!r} updated (now {now!r})."
        raise ToolError("memory_edit needs 'fact_id' (to change a fact) or 'entity'")

    async def delete(args: dict[str, Any]) -> str:
        name = _text(args, "entity", "memory_delete_entity", "the entity to erase")
        count = await graph.delete_entity(name)
        return f"Erased {name!r} and {count} fact(s) about it, history included."

    async def introspect_tool(args: dict[str, Any]) -> str:
        return await introspect()

    entity = {"type": "string", "description": "an entity name or alias"}
    return [
        ToolDef(
            "memory_recall",
            "Recall facts from long-term graph memory: the entities matching the query and "
            "the facts around them. Facts no longer true are shown only with history: true.",
            {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to recall"},
                    "keywords": {"type": "array", "items": {"type": "string"}},
                    "depth": {"type": "integer", "minimum": 0, "maximum": 4, "default": 2},
                    "history": {"type": "boolean", "default": False},
                },
            },
            _guarded(recall),
            owner="memory",
        ),
        ToolDef(
            "memory_commit",
            "Remember facts as (source, relation, target) triples. A fact that replaces an "
            "older one (a new address) closes the old one. To attach media, give the block "
            "digests in media_digests with the sentence that mentions them.",
            {
                "type": "object",
                "properties": {
                    "triples": {"type": "array", "items": TRIPLE_SCHEMA, "minItems": 1},
                    "sentence_text": {"type": "string"},
                    "media_digests": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["triples"],
            },
            _guarded(commit),
            owner="memory",
        ),
        ToolDef(
            "memory_merge",
            "Merge two entities that are the same (e.g. 张三 and 张先生): relations are "
            "redirected to 'keep', mention counts summed, 'merge' stays as an alias.",
            {
                "type": "object",
                "properties": {"keep": entity, "merge": entity},
                "required": ["keep", "merge"],
            },
            _guarded(merge),
            owner="memory",
        ),
        ToolDef(
            "memory_purge",
            "Retire an entity: its facts stop being current (history keeps them).",
            {"type": "object", "properties": {"entity": entity}, "required": ["entity"]},
            _guarded(purge),
            owner="memory",
        ),
        ToolDef(
            "memory_edit",
            "Correct memory. A fact (by its #id from memory_recall): change relation, "
            "target, confidence or sentence_text, or close: true if it is no longer true. "
            "An entity: new_name (the old name stays an alias) or type.",
            {
                "type": "object",
                "properties": {
                    "fact_id": {"type": "integer"},
                    "relation": {"type": "string"},
                    "target": {"type": "string"},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "sentence_text": {"type": "string"},
                    "close": {"type": "boolean"},
                    "reason": {"type": "string"},
                    "entity": entity,
                    "new_name": {"type": "string"},
                    "type": {"type": "string"},
                },
            },
            _guarded(edit),
            owner="memory",
        ),
        ToolDef(
            "memory_delete_entity",
            "Erase an entity and every fact about it, history included. Only when the user "
            "asks for it to be forgotten; otherwise use memory_purge.",
            {"type": "object", "properties": {"entity": entity}, "required": ["entity"]},
            _guarded(delete),
            owner="memory",
        ),
        ToolDef(
            "memory_introspect",
            "Statistics of memory: entities, facts current and closed, blocks, and the "
            "heartbeat's model calls and tokens.",
            {"type": "object", "properties": {}},
            _guarded(introspect_tool),
            no_memory=True,
            owner="memory",
        ),
    ]


async def _keywords(indexer: Indexer, query: str) -> list[str]:
    # The whole query too: a name of several words ("Eiffel tower") is one entity.
    words = with_cjk_bigrams(await asyncio.to_thread(indexer.keywords, query))
    return [*words, query]
