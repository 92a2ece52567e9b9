"""The companion's recent conversation, as a page opens on it: the journal's newest inputs
with their replies, and what the context window holds besides (a document recalled from
the cold store, a note no input of the journal said)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from starlette.requests import Request
from starlette.responses import Response

from hologram.agent import RecordRow
from hologram.memory import AGENT_SOURCE, ContextEvent
from hologram.sdk import CONSOLIDATION_CHANNEL, Param
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint, reply
from hologram.serve.params import read_params


@dataclass(frozen=True, slots=True)
class ConversationLine:
    """An input with its reply (from the journal), or an event of the context window that
    no input of the journal accounts for (`input` null)."""

    at: Annotated[float, Param("when it was said (seconds since the epoch)")]
    text: str
    channel: str
    source: str
    input: Annotated[int | None, Param("the input's journal id")]
    state: Annotated[str | None, Param("the input's journal state")]
    reply: str | None
    in_window: Annotated[bool, Param("whether the context window still holds it")]


@dataclass(frozen=True, slots=True)
class Conversation:
    """The recent conversation, oldest first."""

    lines: list[ConversationLine]
    window_events: Annotated[int, Param("how many events the context window holds")]


@dataclass(frozen=True, slots=True)
class ConversationQuery:
    limit: Annotated[int, Param("at most this many inputs (the newest)", ge=1, le=500)] = 50


def merge(records: list[RecordRow], events: list[ContextEvent]) -> list[ConversationLine]:
    """Each input is matched with the window's event of the same channel and text (the
    window keeps the input as the journal does: masked), its reply with the agent's event
    that says it; the window's events left over join as lines of their own."""
    waiting: dict[tuple[str, str], list[ContextEvent]] = {}
    for event in events:
        if event.source != AGENT_SOURCE and event.input:
            waiting.setdefault((event.channel, event.input), []).append(event)
    replies: dict[str, list[ContextEvent]] = {}
    for event in events:
        if event.source == AGENT_SOURCE and event.response:
            replies.setdefault(event.response, []).append(event)
    used: set[str] = set()
    lines = []
    for record in records:
        matched = waiting.get((record["channel"], record["text"]), [])
        seen = matched.pop(0) if matched else None
        if seen is not None:
            used.add(seen.id)
            said = replies.get(record["reply"] or "", [])
            if said:
                used.add(said.pop(0).id)
        lines.append(
            ConversationLine(
                record["created"],
                record["text"],
                record["channel"],
                record["source"],
                record["id"],
                str(record["state"]),
                record["reply"],
                seen is not None,
            )
        )
    for event in events:
        if event.id not in used:
            lines.append(
                ConversationLine(
                    event.timestamp, event.text, event.channel, event.source, None, None, None, True
                )
            )
    lines.sort(key=lambda line: line.at)
    return lines


@endpoint("GET", "/conversation", tag="inputs", result=Conversation, query=ConversationQuery)
async def get_conversation(request: Request) -> Response:
    """The recent conversation, oldest first: the journal's newest inputs with their replies,
    and the context window's events that no input accounts for."""
    kernel = context(request).kernel
    limit = read_params(ConversationQuery, request.query_params, "query parameter").limit
    records = await kernel.inputs.journal.recent(limit, leave_out=(CONSOLIDATION_CHANNEL,))
    memory = kernel.state.memory
    # An input and its reply are two events of the window.
    window = [] if memory is None else memory.context.events[-2 * limit :]
    total = 0 if memory is None else len(memory.context)
    return reply(Conversation(merge(records, window), total))
