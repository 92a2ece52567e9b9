"""What the graph store takes and gives back: triples, entities, facts, blocks, errors."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = " \t\"'“”‘’「」『』《》()（）[]【】.,;:!?。，；：！？、"


def normalise_name(name: str) -> str:
    """The key two mentions of one entity share: NFKC (full-width letters become
    half-width), case-folded, inner whitespace collapsed, surrounding quotes and
    punctuation dropped. "「张三」" and "张三", "Alice " and "alice" are one entity."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return _SPACE.sub(" ", text).strip(_EDGE_PUNCT)


def normalise_relation(relation: str) -> str:
    """Relation types compare case-folded, words joined by "_": "Lives in" is lives_in."""
    return "_".join(normalise_name(relation).split())


class GraphError(Exception):
    """A request the graph refuses; the message says what to do instead."""


class UnknownEntity(GraphError):
    def __init__(self, name: str, suggestions: list[str] | None = None) -> None:
        hint = f"; did you mean: {', '.join(suggestions)}" if suggestions else ""
        super().__init__(f"no entity named {name!r} in memory{hint}")
        self.name = name


class UnknownBlock(GraphError):
    def __init__(self, block_id: str) -> None:
        super().__init__(
            f"no memory block {block_id!r}: give a block id (blk_media_… / blk_text_…) or its "
            "12-character digest, as listed by the graph's blocks"
        )
        self.block_id = block_id


@dataclass(frozen=True, slots=True)
class Triple:
    """One fact to commit: `source` —`relation`→ `target`.

    `exclusive` says the relation holds one value at a time (someone lives in one city):
    committing a new target closes the current one. None leaves that to the store's list
    of single-valued relation types. `media_digests` name media blocks the sentence
    refers to; the store links them and builds any marker, never the caller."""

    source: str
    relation: str
    target: str
    source_type: str = ""
    target_type: str = ""
    confidence: float = 1.0
    sentence_text: str = ""
    media_digests: tuple[str, ...] = ()
    exclusive: bool | None = None
    origin: str = ""

    @classmethod
    def from_json(cls, obj: Any, where: str = "triple") -> Triple:
        """Read a triple given as JSON (a tool argument), or raise `GraphError` naming the
        field that is wrong."""
        if not isinstance(obj, Mapping):
            raise GraphError(f"{where} must be an object with source, relation and target")
        values: dict[str, Any] = {}
        for key in ("source", "relation", "target"):
            value = obj.get(key)
            if not isinstance(value, str) or not normalise_name(value):
                raise GraphError(f"{where}.{key} must be a non-empty string")
            values[key] = value.strip()
        for key in ("source_type", "target_type", "sentence_text", "origin"):
            value = obj.get(key, "")
            if not isinstance(value, str):
                raise GraphError(f"{where}.{key} must be a string")
            values[key] = value.strip()
        confidence = obj.get("confidence", 1.0)
        if (
            isinstance(confidence, bool)
            or not isinstance(confidence, int | float)
            or not 0.0 <= confidence <= 1.0
        ):
            raise GraphError(f"{where}.confidence must be a number from 0 to 1")
        digests = obj.get("media_digests", [])
        if not isinstance(digests, list) or not all(isinstance(d, str) for d in digests):
            raise GraphError(f"{where}.media_digests must be a list of block digests")
        exclusive = obj.get("exclusive")
        if exclusive is not None and not isinstance(exclusive, bool):
            raise GraphError(f"{where}.exclusive must be true or false")
        return cls(
            confidence=float(confidence),
            media_digests=tuple(digests),
            exclusive=exclusive,
            **values,
        )


@dataclass(slots=True)
class Entity:
    id: int
    name: str
    type: str
    mention_count: int
    created_at: float
    updated_at: float
    aliases: list[str] = field(default_factory=list)
    traits: dict[str, Any] = field(default_factory=dict)
    purged: bool = False


@dataclass(slots=True)
class Fact:
    """A relation as recall shows it. `invalid_at` None means it holds now."""

    id: int
    source: str
    relation: str
    target: str
    confidence: float
    sentence_text: str
    created_at: float
    valid_at: float
    invalid_at: float | None = None
    closed_reason: str | None = None
    replaced_by: int | None = None
    blocks: list[str] = field(default_factory=list)
    markers: list[str] = field(default_factory=list)
    score: float = 0.0

    @property
    def current(self) -> bool:
        return self.invalid_at is None

    def line(self) -> str:
        """One line for a prompt or a tool result."""
        text = f"#{self.id} {self.source} —{self.relation}→ {self.target}"
        if self.confidence < 1.0:
            text += f" (confidence {self.confidence:.2f})"
        if self.invalid_at is not None:
            text += f" [no longer true: {self.closed_reason or 'closed'}]"
        if self.sentence_text:
            text += f" ← “{self.sentence_text}”"
        if self.markers:
            text += " " + " ".join(self.markers)
        return text


@dataclass(slots=True)
class EntityHit:
    id: int
    name: str
    type: str
    mention_count: int
    score: float
    depth: int
    matched: str = ""
    """How it was found: exact, alias, prefix, substring, vector, or neighbour."""


@dataclass(slots=True)
class Recall:
    entities: list[EntityHit] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)

    def names(self) -> list[str]:
        return [e.name for e in self.entities]

    def text(self, limit: int = 30) -> str:
        if not self.facts and not self.entities:
            return "Nothing in memory matches that."
        lines = [f.line() for f in self.facts[:limit]]
        lone = {e.name for e in self.entities} - {
            n for f in self.facts[:limit] for n in (f.source, f.target)
        }
        lines += [f"{name} (no relations)" for name in sorted(lone)]
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class BlockInfo:
    """A memory block without its bytes (listing and recall never read them)."""

    id: str
    kind: str
    text: str | None
    mime: str | None
    width: int | None
    height: int | None
    size: int | None
    fingerprint: str | None
    source: str
    created_at: float

    @property
    def digest(self) -> str:
        return self.id.rsplit("_", 1)[-1]

    def marker(self) -> str:
        """The reference a sentence shows for a media block; built here, never by the model."""
        return f"[{self.mime} {self.digest}]"
