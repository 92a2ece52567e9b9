"""The model's tools over the graph (spec: Memory Tools): recall, commit, merge, purge,
edit, delete_entity and introspect.

Each tool is a typed function: the runner checks its arguments against the derived schema
before it runs, and a refusal of the graph's (an entity that does not exist) comes back to
the model as a `ToolError` saying what to send instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated

from hologram.memory.graph.indexer import Indexer, with_cjk_bigrams
from hologram.memory.graph.store import GraphStore
from hologram.memory.graph.types import GraphError, Triple
from hologram.sdk import (
    NOT_BLANK,
    Emit,
    GraphRecalled,
    Param,
    ToolDef,
    ToolError,
    discard,
)

Entity = Annotated[str, Param("an entity name or alias", pattern=NOT_BLANK)]


@dataclass(frozen=True)
class NewFact:
    """One fact to remember."""

    source: Annotated[str, Param("the subject entity, e.g. Alice", pattern=NOT_BLANK)]
    relation: Annotated[str, Param("e.g. lives_in, likes, works_at", pattern=NOT_BLANK)]
    target: Annotated[str, Param("the object entity, e.g. Paris", pattern=NOT_BLANK)]
    source_type: Annotated[str, Param("person, place, thing …")] = ""
    target_type: str = ""
    confidence: Annotated[float, Param(ge=0, le=1)] = 1.0
    sentence_text: Annotated[str, Param("the sentence it came from")] = ""
    media_digests: list[str] = field(default_factory=list)
    exclusive: Annotated[
        bool | None,
        Param("true if the relation holds one value at a time (a new one replaces the old)"),
    ] = None

    def triple(self, sentence: str, digests: list[str]) -> Triple:
        return Triple(
            source=self.source.strip(),
            relation=self.relation.strip(),
            target=self.target.strip(),
            source_type=self.source_type.strip(),
            target_type=self.target_type.strip(),
            confidence=self.confidence,
            sentence_text=self.sentence_text.strip() or sentence.strip(),
            media_digests=(*self.media_digests, *digests),
            exclusive=self.exclusive,
            origin="memory_commit",
        )


def new_triples(facts: list[NewFact], sentence_text: str, media_digests: list[str]) -> list[Triple]:
    """The triples of one memory_commit; media hang off a sentence, so digests without one
    are refused."""
    if media_digests and not sentence_text and not all(f.sentence_text for f in facts):
        raise ToolError(
            "media_digests hang off a sentence: give 'sentence_text' (the sentence that "
            "refers to the media) as well"
        )
    return [fact.triple(sentence_text, media_digests) for fact in facts]


class GraphTools:
    """The seven tools, bound to one kernel's graph."""

    def __init__(
        self,
        graph: GraphStore,
        indexer: Indexer,
        introspect: Callable[[], Awaitable[str]],
        emit: Emit | None = None,
    ) -> None:
        self.graph = graph
        self.indexer = indexer
        self.introspect = introspect
        self.emit = emit or discard

    async def memory_recall(
        self,
        query: Annotated[str | None, Param("what to recall")] = None,
        keywords: list[str] | None = None,
        depth: Annotated[int, Param("relations to follow from each match", ge=0, le=4)] = 2,
        history: bool = False,
    ) -> str:
        """Recall facts from long-term graph memory: the entities matching the query and
        the facts around them. Facts no longer true are shown only with history: true."""
        query = query.strip() if query else ""
        if not keywords and query:
            keywords = await _keywords(self.indexer, query)
        if not keywords:
            raise ToolError("memory_recall needs 'query' (text) or 'keywords' (a list of names)")
        seeds = await self.indexer.vector_seeds(query) if query else {}
        result = await self.graph.recall(keywords, depth, history=history, seeds=seeds)
        self.indexer.mark_recalled(e.id for e in result.entities)
        self.indexer.last_recall = result
        self.emit(
            GraphRecalled(
                via="memory_recall", entities=result.names(), facts=[f.id for f in result.facts]
            ),
            source="memory",
        )
        return result.text()

    async def memory_commit(
        self,
        triples: Annotated[list[NewFact], Param(min_length=1)],
        sentence_text: str = "",
        media_digests: list[str] | None = None,
    ) -> str:
        """Remember facts as (source, relation, target) triples. A fact that replaces an
        older one (a new address) closes the old one. To attach media, give the block
        digests in media_digests with the sentence that mentions them."""
        facts = new_triples(triples, sentence_text, media_digests or [])
        report = await self.graph.commit(facts, origin="memory_commit")
        parts = [f"Stored {len(report.added)} new fact(s)"]
        if report.confirmed:
            parts.append(f"{len(report.confirmed)} already known")
        if report.closed:
            parts.append(f"closed {len(report.closed)} contradicted fact(s) (kept as history)")
        return "; ".join(parts) + "."

    async def memory_merge(self, keep: Entity, merge: Entity) -> str:
        """Merge two entities that are the same (e.g. 张三 and 张先生): relations are
        redirected to 'keep', mention counts summed, 'merge' stays as an alias."""
        report = await self.graph.merge(keep.strip(), merge.strip())
        return (
            f"Merged {report.merged!r} into {report.kept!r}: {report.redirected} relation(s) "
            f"redirected, {report.closed} duplicate(s) closed, mentions now "
            f"{report.mention_count}; {report.merged!r} is kept as an alias."
        )

    async def memory_purge(self, entity: Entity) -> str:
        """Retire an entity: its facts stop being current (history keeps them)."""
        closed = await self.graph.purge(entity.strip())
        return f"Retired {entity.strip()!r}: {closed} fact(s) closed (history keeps them)."

    async def memory_edit(
        self,
        fact_id: Annotated[int | None, Param("the #id memory_recall shows")] = None,
        relation: str | None = None,
        target: str | None = None,
        confidence: Annotated[float | None, Param(ge=0, le=1)] = None,
        sentence_text: str | None = None,
        close: bool = False,
        reason: str = "contradicted",
        entity: Annotated[str | None, Param("an entity name or alias", pattern=NOT_BLANK)] = None,
        new_name: str | None = None,
        type: str | None = None,
    ) -> str:
        """Correct memory. A fact (by its #id from memory_recall): change relation,
        target, confidence or sentence_text, or close: true if it is no longer true.
        An entity: new_name (the old name stays an alias) or type."""
        if fact_id is not None:
            if close:
                await self.graph.close_fact(fact_id, reason or "contradicted")
                return f"Fact #{fact_id} closed ({reason}); history keeps it."
            if relation is None and target is None and confidence is None and sentence_text is None:
                raise ToolError(
                    "memory_edit of a fact needs one of relation, target, confidence, "
                    "sentence_text, or close: true"
                )
            new_id = await self.graph.edit_relation(
                fact_id,
                relation=relation,
                target=target,
                confidence=confidence,
                sentence_text=sentence_text,
            )
            return f"Fact #{fact_id} replaced by #{new_id} (the old one is kept as history)."
        if entity is not None:
            if new_name is None and type is None:
                raise ToolError("memory_edit of an entity needs 'new_name' or 'type'")
            now = await self.graph.edit_entity(entity.strip(), new_name=new_name, type=type)
            return f"Entity {entity.strip()!r} updated (now {now!r})."
        raise ToolError("memory_edit needs 'fact_id' (to change a fact) or 'entity'")

    async def memory_delete_entity(self, entity: Entity) -> str:
        """Erase an entity and every fact about it, history included. Only when the user
        asks for it to be forgotten; otherwise use memory_purge."""
        count = await self.graph.delete_entity(entity.strip())
        return f"Erased {entity.strip()!r} and {count} fact(s) about it, history included."

    async def memory_introspect(self) -> str:
        """Statistics of memory: entities, facts current and closed, blocks, and the
        heartbeat's model calls and tokens."""
        return await self.introspect()

    def tools(self) -> list[ToolDef]:
        refusals = (GraphError,)
        editing: list[Callable[..., Awaitable[str]]] = [
            self.memory_recall,
            self.memory_commit,
            self.memory_merge,
            self.memory_purge,
            self.memory_edit,
            self.memory_delete_entity,
        ]
        return [
            *(ToolDef.from_function(t, owner="memory", refusals=refusals) for t in editing),
            ToolDef.from_function(self.memory_introspect, no_memory=True, owner="memory"),
        ]


def graph_tools(
    graph: GraphStore,
    indexer: Indexer,
    introspect: Callable[[], Awaitable[str]],
    emit: Emit | None = None,
) -> list[ToolDef]:
    """The seven ToolDefs, bound to one kernel's graph."""
    return GraphTools(graph, indexer, introspect, emit).tools()


async def _keywords(indexer: Indexer, query: str) -> list[str]:
    # The whole query too: a name of several words ("Eiffel tower") is one entity.
    words = with_cjk_bigrams(await asyncio.to_thread(indexer.keywords, query))
    return [*words, query]
