"""The memory, knowledge and social surfaces plugins see (spec 000: PluginSDK,
`sdk.Memory().Recall/Commit`, `sdk.Knowledge().Search/Create`, the SocialAPI).

Answers are plain data (dicts, lists, strings), so one surface serves a built-in plugin
directly, a subprocess plugin over JSON-RPC and a Lua plugin through its sandbox. A refusal
of the store underneath (an unknown person, a bad knowledge name) is a `ValueError` with the
store's own message; a kernel without the store raises `LookupError` naming the facility.
External plugins get the reading half of `SocialAPI` only.
"""

from __future__ import annotations

from typing import Any, Protocol, TypedDict


class Recalled(TypedDict):
    """One item of `MemoryAPI.recall`."""

    text: str
    source: str
    """``"coldcontext"`` for a cold document, ``"graph"`` for a graph fact."""
    score: float


class KnowledgeHit(TypedDict):
    name: str
    score: float
    snippet: str


class KnowledgeEntry(TypedDict):
    name: str
    content: str
    media: list[dict[str, Any]]


class Person(TypedDict):
    """What social memory holds of one person."""

    name: str
    type: str
    aliases: list[str]
    traits: dict[str, Any]
    mentions: int
    relations: list[str]
    """Current relationships, one fact line each."""


class MemoryAPI(Protocol):
    """What the agent remembers: the cold context's documents and the graph's facts. Recall
    here only reads: it changes nothing the agent's next turn sees."""

    async def recall(self, query: str, top: int = 5) -> list[Recalled]:
        """Up to `top` cold documents and up to `top` graph facts related to `query`, best
        first within each source."""
        ...

    async def commit(self, content: str) -> str:
        """Write a note to long-term memory (a cold document); returns its id."""
        ...


class KnowledgeAPI(Protocol):
    """The knowledge base: reference material, searched and added to."""

    async def search(self, query: str, top: int = 5, category: str = "") -> list[KnowledgeHit]: ...

    async def get(self, name: str) -> KnowledgeEntry: ...

    async def list(self, category: str = "") -> list[str]: ...

    async def create(self, name: str, content: str, replace: bool = False) -> str:
        """Add entry `name` (a path like `cooking/bread`); returns its normalised name."""
        ...


class SocialAPI(Protocol):
    """Social memory: people, their traits, who relates to whom."""

    async def person(self, name: str) -> Person:
        """Traits, aliases and current relationships of `name`."""
        ...

    async def trait(self, name: str, trait: str) -> Any:
        """One trait's value, or None when the person has no such trait."""
        ...

    async def relations(self, name: str) -> list[str]: ...

    async def persons(self, limit: int = 100) -> list[str]:
        """The people memory knows, most mentioned first."""
        ...

    async def set_trait(self, name: str, trait: str, value: Any) -> dict[str, Any]:
        """Built-in plugins only."""
        ...

    async def relate(self, person: str, relation: str, other: str, sentence: str = "") -> int:
        """Built-in plugins only; returns the id of the fact written or confirmed."""
        ...
