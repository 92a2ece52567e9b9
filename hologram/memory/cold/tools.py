"""The model's tools over the cold context: `coldcontext_query` and `coldcontext_commit`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Annotated

from hologram.media import MediaStore
from hologram.memory.cold.store import ColdContext, ColdDoc
from hologram.memory.turns import Place
from hologram.memory.window.context import ContextWindow
from hologram.memory.window.event import COLD_STORAGE_SOURCE, ContextEvent
from hologram.sdk import NOT_BLANK, MediaRef, Param, ToolDef, ToolError

MAX_TOP = 10


async def recall_into_context(
    context: ContextWindow, cold: ColdContext, query: str, top: int = 3
) -> list[ContextEvent]:
    """Consume the documents most related to `query` and put each back into the timeline at
    its original time, as source `cold_storage` (spec: coldcontext_query). Each is the same
    turn moved back (its id and speaker stay); the window stores it before the cold
    context lets it go."""
    hits = await cold.query(query, top)
    events = [
        await context.append(
            COLD_STORAGE_SOURCE,
            hit.doc.input,
            hit.doc.response,
            channel=hit.doc.channel,
            timestamp=hit.doc.created_at,
            event_id=hit.doc.id,
            media=hit.doc.media,
            speaker=hit.doc.speaker or hit.doc.source,
            why="recalled",
        )
        for hit in hits
    ]
    await cold.consume([hit.doc.id for hit in hits], Place.CONTEXT, "recalled")
    return events


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")


def stored_media(media: MediaStore | None, digests: Sequence[str]) -> list[MediaRef]:
    """The stored references of `digests` (a label's 12-digit prefix will do); an unknown
    one is refused, naming it, before anything is written."""
    if not digests:
        return []
    if media is None:
        raise ToolError("this kernel has no media store: commit the note without media")
    refs: list[MediaRef] = []
    for digest in digests:
        wanted = digest.strip().lower().removeprefix("sha256:")
        found = [d for d in media.digests() if d.startswith(wanted)] if len(wanted) >= 8 else []
        if len(found) != 1:
            raise ToolError(f"no single stored media has digest {digest!r}; nothing was stored")
        refs.append(media.ref(found[0]))
    return refs


def coldcontext_tools(
    context: ContextWindow,
    cold: ColdContext,
    media: Callable[[], MediaStore | None] = lambda: None,
) -> list[ToolDef]:
    """The two ToolDefs, bound to one kernel's context window, cold context and media
    store (asked for when called: it is wired after the tools are first built)."""

    async def coldcontext_query(
        query: Annotated[str, Param("what to look for", pattern=NOT_BLANK)],
        top: Annotated[int, Param(ge=1, le=MAX_TOP)] = 3,
    ) -> str:
        """Recall older conversation and notes from long-term memory. Matching memories
        are moved back into the conversation timeline at the time they happened (and leave
        long-term storage). Use when the user refers to something not in the recent
        conversation."""
        events = await recall_into_context(context, cold, query, top)
        if not events:
            return "No stored memory matches that."
        lines = [f"Recalled {len(events)} memories into the timeline at their original times:"]
        lines += [f"- ({_when(e.timestamp)}) {e.text}" for e in events]
        return "\n".join(lines)

    async def coldcontext_commit(
        content: Annotated[str, Param("the note", pattern=NOT_BLANK)],
        media_digests: Annotated[
            tuple[str, ...], Param("digests of media to keep with the note (from their labels)")
        ] = (),
    ) -> str:
        """Write a note to long-term memory, to be recalled later by meaning or keywords.
        Media named by digest is kept with it and comes back when the note is recalled."""
        refs = stored_media(media(), media_digests)
        doc: ColdDoc = await cold.commit(content, media=refs)
        kept = "".join(f" {r.label()}" for r in refs)
        return f"Stored as memory document {doc.id}.{kept}"

    return [
        # The recalled text re-enters the timeline as events of its own: indexing the tool's
        # output as well would count it twice.
        ToolDef.from_function(coldcontext_query, no_memory=True, owner="memory"),
        ToolDef.from_function(coldcontext_commit, owner="memory"),
    ]
