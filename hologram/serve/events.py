"""The event stream over HTTP: every bus event as a server-sent event, resumable from the
`Last-Event-ID` header (or `?last_event_id=`, for clients that cannot set headers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from hologram.sdk import Param
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint
from hologram.serve.params import SQLITE_MAX_INT, read_params

Seq = Annotated[int | None, Param("resume after this event's seq", ge=0, le=SQLITE_MAX_INT)]


@dataclass(frozen=True, slots=True)
class EventsQuery:
    types: Annotated[str, Param("comma-separated event types to keep (default: all)")] = ""
    last_event_id: Seq = None


@dataclass(frozen=True, slots=True)
class EventsHeaders:
    last_event_id: Seq = field(default=None, metadata={"name": "Last-Event-ID"})


@endpoint(
    "GET",
    "/events",
    tag="events",
    result=str,
    result_media="text/event-stream",
    query=EventsQuery,
    headers=EventsHeaders,
)
async def get_events(request: Request) -> Response:
    """Server-sent events: every bus event (agent_llm_chain included); an event's id is its
    seq; resume with Last-Event-ID (or ?last_event_id=)."""
    headers = read_params(EventsHeaders, request.headers, "header")
    query = read_params(EventsQuery, request.query_params, "query parameter")
    last = query.last_event_id if headers.last_event_id is None else headers.last_event_id
    types = frozenset(t for t in query.types.split(",") if t) or None
    return StreamingResponse(
        context(request).stream.open(last, types),
        media_type="text/event-stream",
        headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
    )
