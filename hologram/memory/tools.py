"""The model's tools over the cold context: `coldcontext_query` and `coldcontext_commit`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hologram.memory.coldcontext import ColdContext, ColdDoc
from hologram.memory.context import ContextWindow
from hologram.memory.context_event import COLD_STORAGE_SOURCE, ContextEvent
from hologram.sdk import ToolDef, ToolError

MAX_TOP = 10


async def recall_into_context(
    context: ContextWindow, cold: ColdContext, query: str, top: int = 3
) -> list[ContextEvent]:
    """Consume the documents most related to `query` and put each back into the timeline at
    its original time, as source `cold_storage` (spec: coldcontext_query). The events are
    durable in the context before the documents are deleted."""
    hits = await cold.query(query, top)
    events = [
        await context.append(
            COLD_STORAGE_SOURCE,
            hit.doc.input,
            hit.doc.response,
            channel=hit.doc.channel,
            timestamp=hit.doc.created_at,
        )
        for hit in hits
    ]
    await cold.consume([hit.doc.id for hit in hits])
    return events


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")


def coldcontext_tools(context: ContextWindow, cold: ColdContext) -> list[ToolDef]:
    """The two ToolDefs, bound to one kernel's context window and cold context."""

    async def query(args: dict[str, Any]) -> str:
        text = args.get("query")
        if not isinstance(text, str) or not text.strip():
            raise ToolError("coldcontext_query needs 'query': the words to look for")
        top = args.get("top", 3)
        if not isinstance(top, int) or isinstance(top, bool) or not 1 <= top <= MAX_TOP:
            raise ToolError(f"'top' must be an integer from 1 to {MAX_TOP}")
        events = await recall_into_context(context, cold, text, top)
        if not events:
            return "No stored memory matches that."
        lines = [f"Recalled {len(events)} memories into the timeline at their original times:"]
        lines += [f"- ({_when(e.timestamp)}) {e.text}" for e in events]
        return "\n".join(lines)

    async def commit(args: dict[str, Any]) -> str:
        content = args.get("content")
        if not isinstance(content, str) or not content.strip():
            raise ToolError("coldcontext_commit needs 'content': the text to remember")
        doc: ColdDoc = await cold.commit(content)
        return f"Stored as memory document {doc.id}."

    return [
        ToolDef(
            name="coldcontext_query",
            description=(
                "Recall older conversation and notes from long-term memory. Matching memories "
                "are moved back into the conversation timeline at the time they happened "
                "(and leave long-term storage). Use when the user refers to something not in "
                "the recent conversation."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to look for"},
                    "top": {"type": "integer", "minimum": 1, "maximum": MAX_TOP, "default": 3},
                },
                "required": ["query"],
            },
            handler=query,
            no_memory=True,  # the recalled text re-enters the timeline as its own events
            owner="memory",
        ),
        ToolDef(
            name="coldcontext_commit",
            description="Write a note to long-term memory, to be recalled later by meaning "
            "or keywords.",
            parameters={
                "type": "object",
                "properties": {"content": {"type": "string", "description": "the note"}},
                "required": ["content"],
            },
            handler=commit,
            owner="memory",
        ),
    ]
