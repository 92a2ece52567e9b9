"""The kernel's memory, knowledge and social surfaces of the plugin SDK: the protocols
`hologram.sdk.MemoryAPI`, `KnowledgeAPI` and `SocialAPI` over the stores.

A refusal of the store underneath (an unknown person, a bad knowledge name) is a
`ValueError` with the store's own message, which the RPC boundary passes on as invalid
parameters; a kernel without the store raises `LookupError` naming the facility.

Recall here reads and never changes what the agent's next turn sees: it does not start a
memory turn (that would age the graph's per-turn recall marks) and does not consume cold
documents back into the timeline the way the model's `coldcontext_query` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hologram.knowledge import KnowledgeError
from hologram.memory import GraphError
from hologram.sdk import KnowledgeEntry, KnowledgeHit, Person, Recalled

if TYPE_CHECKING:
    from hologram.knowledge import KnowledgeBase
    from hologram.memory import ColdContext, GraphMemory

MAX_TOP = 20


def _top(top: Any) -> int:
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP:
        raise ValueError(f"'top' must be an integer from 1 to {MAX_TOP}, not {top!r}")
    return top


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string")
    return value


def _missing(facility: str, what: str) -> LookupError:
    return LookupError(f"this kernel has no {facility} facility, so no {what}")


@dataclass(slots=True)
class MemorySurface:
    """What the agent remembers: the cold context's documents and the graph's facts."""

    cold: ColdContext | None
    graph: GraphMemory | None
    plugin: str

    async def recall(self, query: str, top: int = 5) -> list[Recalled]:
        """Up to `top` cold documents and up to `top` graph facts related to `query`,
        each `{"text", "source", "score"}`, best first within each source."""
        query, top = _text(query, "a recall query"), _top(top)
        if self.cold is None and self.graph is None:
            raise _missing("memory", "memory to recall from")
        items: list[Recalled] = []
        if self.cold is not None:
            for hit in await self.cold.query(query, top):
                doc = hit.doc
                text = doc.input if not doc.response else f"{doc.input}\n{doc.response}"
                items.append({"text": text, "source": "coldcontext", "score": hit.score})
        if self.graph is not None:
            recall = await self.graph.indexer.recall(query)
            for fact in recall.facts[:top]:
                items.append({"text": fact.line(), "source": "graph", "score": fact.score})
        return items

    async def commit(self, content: str) -> str:
        """Write a note to long-term memory (a cold document); returns its id."""
        content = _text(content, "a memory note")
        if self.cold is None:
            raise _missing("coldcontext", "long-term memory to commit to")
        doc = await self.cold.commit(content, source=f"plugin:{self.plugin}")
        return doc.id


@dataclass(slots=True)
class KnowledgeSurface:
    """The knowledge base: reference material, searched and added to."""

    base: KnowledgeBase | None

    def _base(self) -> KnowledgeBase:
        if self.base is None:
            raise _missing("knowledge", "knowledge base")
        return self.base

    async def search(self, query: str, top: int = 5, category: str = "") -> list[KnowledgeHit]:
        query, top = _text(query, "a knowledge query"), _top(top)
        try:
            hits = await self._base().search(query, top, category)
        except KnowledgeError as exc:
            raise ValueError(str(exc)) from None
        return [{"name": h.name, "score": h.score, "snippet": h.snippet} for h in hits]

    async def get(self, name: str) -> KnowledgeEntry:
        try:
            entry = await self._base().get(name)
        except KnowledgeError as exc:
            raise ValueError(str(exc)) from None
        return {"name": entry.name, "content": entry.content, "media": entry.media}

    async def list(self, category: str = "") -> list[str]:
        try:
            return await self._base().list(category)
        except KnowledgeError as exc:
            raise ValueError(str(exc)) from None

    async def create(self, name: str, content: str, replace: bool = False) -> str:
        """Add entry `name` (a path like `cooking/bread`); returns its normalised name."""
        if not isinstance(replace, bool):
            raise ValueError("'replace' must be true or false")
        try:
            entry = await self._base().create(name, content, replace=replace)
        except KnowledgeError as exc:
            raise ValueError(str(exc)) from None
        return entry.name


@dataclass(slots=True)
class SocialSurface:
    """Social memory: people, their traits, who relates to whom. External plugins get the
    reading half only (spec 000: the restricted external plugin API)."""

    graph: GraphMemory | None

    def _graph(self) -> GraphMemory:
        if self.graph is None:
            raise _missing("graph", "social memory")
        return self.graph

    async def person(self, name: str) -> Person:
        """Traits, aliases and current relationships of `name`."""
        try:
            return await self._graph().social.person(_text(name, "a person's name"))
        except GraphError as exc:
            raise ValueError(str(exc)) from None

    async def trait(self, name: str, trait: str) -> Any:
        """One trait's value, or None when the person has no such trait."""
        info = await self.person(name)
        return info["traits"].get(_text(trait, "a trait name"))

    async def relations(self, name: str) -> list[str]:
        return list((await self.person(name))["relations"])

    async def persons(self, limit: int = 100) -> list[str]:
        """The people memory knows, most mentioned first."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"'limit' must be a positive integer, not {limit!r}")
        entities = await self._graph().store.list_entities(limit=10_000)
        return [e.name for e in entities if e.type == "person"][:limit]

    async def set_trait(self, name: str, trait: str, value: Any) -> dict[str, Any]:
        try:
            return await self._graph().social.set_trait(
                _text(name, "a person's name"), trait, value
            )
        except GraphError as exc:
            raise ValueError(str(exc)) from None

    async def relate(self, person: str, relation: str, other: str, sentence: str = "") -> int:
        try:
            return await self._graph().social.relate(person, relation, other, sentence)
        except GraphError as exc:
            raise ValueError(str(exc)) from None
