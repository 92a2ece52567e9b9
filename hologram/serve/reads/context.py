"""The context window and the cold context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from starlette.requests import Request
from starlette.responses import Response

from hologram.memory import ColdContext, ColdDoc, ColdHit, ContextEvent, Memory
from hologram.sdk import Param
from hologram.serve.bodies import ApiError
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint, reply
from hologram.serve.params import read_params
from hologram.serve.reads.params import Limit, SearchText, Top


def memory(request: Request) -> Memory:
    found = context(request).kernel.state.memory
    if found is None:
        raise ApiError(404, "this kernel has no memory module")
    return found


def cold(request: Request) -> ColdContext:
    found = context(request).kernel.state.coldcontext
    if found is None:
        raise ApiError(404, "this kernel has no cold context")
    return found


@dataclass(frozen=True, slots=True)
class WindowEvent:
    """One event of the context window: an input, its response and the tools it called."""

    id: str
    timestamp: float
    source: str
    channel: str
    input: str
    response: str
    tools: Annotated[list[tuple[str, str]], Param("[tool name, what it returned] per call")]

    @classmethod
    def of(cls, e: ContextEvent) -> WindowEvent:
        tools = [(t.name, t.content) for t in e.tool_outputs]
        return cls(e.id, e.timestamp, e.source, e.channel, e.input, e.response, tools)


@dataclass(frozen=True, slots=True)
class Window:
    """The context window's newest events, and how many it holds."""

    total: int
    events: Annotated[list[WindowEvent], Param("the newest, oldest first")]


@dataclass(frozen=True, slots=True)
class WindowQuery:
    limit: Annotated[int, Param("at most this many (the newest)", ge=1, le=10_000)] = 100


@endpoint("GET", "/context", tag="memory", result=Window, query=WindowQuery, errors=(404,))
async def get_context(request: Request) -> Response:
    """The context window, newest last."""
    window = memory(request).context
    limit = read_params(WindowQuery, request.query_params, "query parameter").limit
    return reply(Window(len(window), [WindowEvent.of(e) for e in window.events[-limit:]]))


@dataclass(frozen=True, slots=True)
class ColdDocument:
    """A cold-context document: what happened, and how often it was recalled."""

    id: str
    created_at: float
    source: str
    channel: str
    input: str
    response: str
    access_count: int

    @classmethod
    def of(cls, d: ColdDoc) -> ColdDocument:
        return cls(d.id, d.created_at, d.source, d.channel, d.input, d.response, d.access_count)


@dataclass(frozen=True, slots=True)
class ColdListing:
    """Cold-context documents: how many there are, how many matched, the newest of them."""

    total: int
    matched: int
    documents: Annotated[list[ColdDocument], Param("newest first")]


@dataclass(frozen=True, slots=True)
class ColdListQuery:
    contains: Annotated[str, Param("case-insensitive text filter")] = ""
    limit: Limit = 50


@endpoint(
    "GET", "/coldcontext", tag="memory", result=ColdListing, query=ColdListQuery, errors=(404,)
)
async def get_coldcontext(request: Request) -> Response:
    """Cold-context documents, newest first (reading does not count as recall)."""
    store = cold(request)
    query = read_params(ColdListQuery, request.query_params, "query parameter")
    needle = query.contains.lower()
    # A plain filter, not `query`: listing must not count as the agent recalling a
    # document (access counts decide what goes cold).
    docs = [
        d
        for d in store.documents()
        if not needle or needle in f"{d.input}\n{d.response}\n{d.text}".lower()
    ]
    docs.sort(key=lambda d: d.created_at, reverse=True)
    shown = [ColdDocument.of(d) for d in docs[: query.limit]]
    return reply(ColdListing(len(store), len(docs), shown))


@dataclass(frozen=True, slots=True)
class ColdMatch(ColdDocument):
    """A document a query found, with its scores."""

    score: float = 0.0
    cosine: float | None = None
    bm25: float | None = None

    @classmethod
    def of_hit(cls, hit: ColdHit) -> ColdMatch:
        document = ColdDocument.of(hit.doc)
        fields = {name: getattr(document, name) for name in ColdDocument.__dataclass_fields__}
        return cls(**fields, score=hit.score, cosine=hit.cosine, bm25=hit.bm25)


@dataclass(frozen=True, slots=True)
class ColdQueryResult:
    """What a cold-context query found."""

    query: str
    hits: Annotated[list[ColdMatch], Param("best first")]


@dataclass(frozen=True, slots=True)
class ColdQuery:
    q: SearchText
    top: Top = 5


@endpoint(
    "GET",
    "/coldcontext/query",
    tag="memory",
    result=ColdQueryResult,
    query=ColdQuery,
    errors=(404,),
)
async def get_coldcontext_query(request: Request) -> Response:
    """Cold-context documents most related to a text (the agent's own ranked search; each
    hit's access count goes up, as when the agent recalls it)."""
    store = cold(request)
    query = read_params(ColdQuery, request.query_params, "query parameter")
    hits = await store.query(query.q, query.top)
    return reply(ColdQueryResult(query.q, [ColdMatch.of_hit(h) for h in hits]))
