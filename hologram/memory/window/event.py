"""One event of the context window, and the text its vector is computed from."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hologram.memory.embed.registry import StoredVector
from hologram.memory.text import clean_text
from hologram.memory.turns import Place, Turn
from hologram.sdk import MediaRef, ToolDef

log = logging.getLogger(__name__)

AGENT_SOURCE = "agent"
COLD_STORAGE_SOURCE = "cold_storage"
NEVER_ARCHIVED = frozenset({"agentcli", "terminal"})
"""Sources whose pruned events are dropped, not archived: the terminal is the operator's
console (spec: agentcli owns the terminal), not the companion's conversation."""

ToolLookup = Callable[[str], ToolDef | None]


@dataclass(slots=True)
class ToolOutput:
    """What one tool call returned, as the model saw it. Stored unchanged; only the vector
    text passes through the tool's `no_memory` and `cleaner`."""

    name: str
    content: str


@dataclass(slots=True)
class ContextEvent:
    """One entry of the timeline: an input, an answer, or a document recalled from cold
    storage (then `timestamp` is the original time it happened)."""

    timestamp: float
    source: str
    input: str = ""
    response: str = ""
    channel: str = ""
    tool_outputs: list[ToolOutput] = field(default_factory=list)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    vector_text: str = ""
    vector: StoredVector | None = None
    media: list[MediaRef] = field(default_factory=list)
    """Media that came with the input or with the tools' results: references only, the
    bytes stay in the media store (resolved again whenever a request is built)."""
    speaker: str = ""
    """Who said it, when that is not `source`: a turn recalled from the cold context shows
    as `cold_storage` and keeps who said it."""
    words: list[str] | None = field(default=None, compare=False)
    """Its keywords as cut once (None until cut), stored with it and never cut again; not
    part of its JSON."""

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "id": self.id,
            "ts": self.timestamp,
            "source": self.source,
            "channel": self.channel,
            "input": self.input,
            "response": self.response,
            "vector_text": self.vector_text,
        }
        if self.tool_outputs:
            obj["tools"] = [[t.name, t.content] for t in self.tool_outputs]
        if self.media:
            obj["media"] = [m.to_dict() for m in self.media]
        if self.speaker:
            obj["speaker"] = self.speaker
        if self.vector is not None:
            obj.update(self.vector.to_json())
        return obj

    @classmethod
    def from_json(cls, obj: Any) -> ContextEvent:
        """Raises ValueError naming what is wrong with a stored event."""
        if not isinstance(obj, Mapping):
            raise ValueError(f"an event is a JSON object, not {type(obj).__name__}")
        for key, kind in (("id", str), ("source", str), ("ts", (int, float))):
            if not isinstance(obj.get(key), kind) or isinstance(obj.get(key), bool):
                raise ValueError(f"event field {key!r} missing or of the wrong type")
        texts = {k: obj.get(k, "") for k in ("channel", "input", "response", "vector_text")}
        if not all(isinstance(v, str) for v in texts.values()):
            raise ValueError("event text fields must be strings")
        speaker = obj.get("speaker", "")
        if not isinstance(speaker, str):
            raise ValueError("event field 'speaker' must be a string")
        tools = obj.get("tools", [])
        if not isinstance(tools, list) or not all(
            isinstance(t, list) and len(t) == 2 and all(isinstance(x, str) for x in t)
            for t in tools
        ):
            raise ValueError("event field 'tools' must be a list of [name, content]")
        media = obj.get("media", [])
        if not isinstance(media, list):
            raise ValueError("event field 'media' must be a list of media references")
        try:
            refs = [MediaRef.from_dict(m) for m in media]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"event field 'media' holds a bad media reference: {exc}") from None
        return cls(
            timestamp=float(obj["ts"]),
            source=obj["source"],
            tool_outputs=[ToolOutput(name, content) for name, content in tools],
            id=obj["id"],
            vector=StoredVector.from_json(obj),
            media=refs,
            speaker=speaker,
            **texts,
        )

    @property
    def text(self) -> str:
        """The event as one line of text for a prompt or a display (media by its label)."""
        parts = [p for p in (self.input, self.response) if p]
        return " → ".join(parts) + media_labels(self.media)


def media_labels(media: Sequence[MediaRef]) -> str:
    """Media named in text, after what was said: " [image/png 64x64 …]"."""
    return "".join(f" {m.label()}" for m in media)


def _tool_text(output: ToolOutput, lookup: ToolLookup | None) -> str | None:
    tool = lookup(output.name) if lookup is not None else None
    if tool is None:
        return output.content
    if tool.no_memory:
        return None
    if tool.cleaner is None:
        return output.content
    try:
        return tool.cleaner(output.content)
    except Exception:
        # Indexing the raw text would put into memory exactly what the cleaner exists to
        # remove; leaving it out is the safe side.
        log.warning("cleaner of tool %s failed; its output is kept out of the vector", output.name)
        return None


def text_for_vector(
    source: str,
    input: str,
    response: str = "",
    tool_outputs: Sequence[ToolOutput] = (),
    tools: ToolLookup | None = None,
) -> str:
    """The text an event's vector is computed from (spec: textForVector).

    Three branches by source: the agent's events are what it said (`response`), recalled
    cold-storage documents are both sides, every other source is what came in (`input`).
    Tool outputs follow, each through its tool's `no_memory` (skipped) and `cleaner`;
    whitespace is normalised last (spec: CleanText)."""
    if source == AGENT_SOURCE:
        parts = [response]
    elif source == COLD_STORAGE_SOURCE:
        parts = [input, response]
    else:
        parts = [input]
    for output in tool_outputs:
        text = _tool_text(output, tools)
        if text:
            parts.append(text)
    return clean_text(" ".join(p for p in parts if p))


def turn_of_event(event: ContextEvent, place: Place) -> Turn:
    return Turn(
        id=event.id,
        place=place,
        at=event.timestamp,
        source=event.source,
        speaker=event.speaker,
        channel=event.channel,
        input=event.input,
        response=event.response,
        tools=[(t.name, t.content) for t in event.tool_outputs],
        text=event.vector_text,
        words=event.words,
        vector=event.vector,
        media=list(event.media),
    )


def event_of_turn(turn: Turn) -> ContextEvent:
    return ContextEvent(
        timestamp=turn.at,
        source=turn.source,
        input=turn.input,
        response=turn.response,
        channel=turn.channel,
        tool_outputs=[ToolOutput(name, content) for name, content in turn.tools],
        id=turn.id,
        vector_text=turn.text,
        vector=turn.vector,
        media=list(turn.media),
        speaker=turn.speaker if turn.speaker != turn.source else "",
        words=turn.words,
    )
