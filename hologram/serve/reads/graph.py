"""The graph memory: its counts, entities, facts, and what it recalls for a text."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict, cast

from starlette.requests import Request
from starlette.responses import Response

from hologram.memory import (
    Entity,
    EntityHit,
    Fact,
    GraphError,
    GraphMemory,
    UnknownEntity,
    normalise_name,
    with_cjk_bigrams,
)
from hologram.sdk import Param
from hologram.serve.bodies import ApiError
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint, reply
from hologram.serve.params import not_blank, read_params
from hologram.serve.reads.params import History, Limit

MAX_GRAPH_DEPTH = 4


def graph(request: Request) -> GraphMemory:
    found = context(request).kernel.state.graph
    if found is None:
        raise ApiError(404, "this kernel has no graph memory")
    return found


@dataclass(slots=True)
class FactView(Fact):
    """A fact, with whether it holds now and the line the model is shown for it."""

    current: bool = True
    # The API's name for the line shown to the model: as data it takes the place of
    # `Fact.line()`, the method that computed it (`of` below).
    line: str = ""  # type: ignore[assignment]

    @classmethod
    def of(cls, fact: Fact) -> FactView:
        given = {f.name: getattr(fact, f.name) for f in dataclasses.fields(Fact)}
        return cls(**given, current=fact.current, line=fact.line())


class HeartbeatLoop(TypedDict):
    """One heartbeat loop's work so far."""

    ticks: int
    model_calls: int
    tokens_sent: int
    tokens_received: int


class GraphOverview(TypedDict):
    """The graph's counts and its heartbeat loops."""

    stats: Annotated[dict[str, Any], Param("entities, facts (current and closed), blocks")]
    heartbeat: dict[str, HeartbeatLoop]
    heartbeat_totals: dict[str, Any]
    consolidation_connected: bool


@endpoint("GET", "/graph", tag="graph", result=GraphOverview, errors=(404,))
async def get_graph(request: Request) -> Response:
    """Graph counts (entities, facts, blocks) and heartbeat token use."""
    memory = graph(request)
    overview = {"stats": await memory.store.stats(), **memory.status()}
    return reply(cast(GraphOverview, overview))


@dataclass(frozen=True, slots=True)
class Entities:
    """Entities of the graph."""

    entities: Annotated[list[Entity], Param("most mentioned first")]


@dataclass(frozen=True, slots=True)
class EntitiesQuery:
    limit: Limit = 100


@endpoint(
    "GET", "/graph/entities", tag="graph", result=Entities, query=EntitiesQuery, errors=(404,)
)
async def get_entities(request: Request) -> Response:
    """Entities, most mentioned first."""
    limit = read_params(EntitiesQuery, request.query_params, "query parameter").limit
    return reply(Entities(await graph(request).store.list_entities(limit)))


@dataclass(frozen=True, slots=True)
class EntityFacts:
    """One entity and its facts."""

    entity: Entity
    facts: Annotated[list[FactView], Param("newest first")]


@dataclass(frozen=True, slots=True)
class EntityPath:
    name: Annotated[str, not_blank("an entity's name or alias")]


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    history: History = False


def _refused(exc: GraphError) -> ApiError:
    """An unknown entity is not found; any other refusal of the graph is a bad request."""
    return ApiError(404 if isinstance(exc, UnknownEntity) else 400, str(exc))


def _known(name: str) -> str:
    """`name`, or a 404: a name of only punctuation and blanks names no entity (the graph
    compares names without them)."""
    if not normalise_name(name):
        raise ApiError(404, f"no entity named {name!r} in memory: it has no letters or digits")
    return name


@endpoint(
    "GET",
    "/graph/entities/{name:path}",
    tag="graph",
    result=EntityFacts,
    path_params=EntityPath,
    query=HistoryQuery,
    errors=(404,),
)
async def get_entity(request: Request) -> Response:
    """One entity (by name or alias) and its facts."""
    store = graph(request).store
    name = _known(read_params(EntityPath, request.path_params, "path parameter").name)
    history = read_params(HistoryQuery, request.query_params, "query parameter").history
    try:
        entity = await store.entity(name)
        facts = await store.facts(entity=name, history=history)
    except GraphError as exc:
        raise _refused(exc) from None
    return reply(EntityFacts(entity, [FactView.of(f) for f in facts]))


@dataclass(frozen=True, slots=True)
class Facts:
    """Facts of the graph or of one entity."""

    facts: Annotated[list[FactView], Param("newest first")]


@dataclass(frozen=True, slots=True)
class FactsQuery:
    entity: Annotated[
        str | None,
        not_blank("only this entity's facts (by name or alias)"),
    ] = None
    history: History = False
    limit: Limit = 100


@endpoint("GET", "/graph/facts", tag="graph", result=Facts, query=FactsQuery, errors=(404,))
async def get_facts(request: Request) -> Response:
    """Facts, newest first, of the whole graph or of one entity."""
    store = graph(request).store
    query = read_params(FactsQuery, request.query_params, "query parameter")
    try:
        facts = await store.facts(entity=query.entity, history=query.history, limit=query.limit)
    except GraphError as exc:
        raise _refused(exc) from None
    return reply(Facts([FactView.of(f) for f in facts]))


@dataclass(frozen=True, slots=True)
class Recalled:
    """What the graph recalls: entities, facts, and their text."""

    keywords: Annotated[list[str], Param("the names recall started from")]
    entities: Annotated[list[EntityHit], Param("best first")]
    facts: Annotated[list[FactView], Param("best first")]
    text: Annotated[str, Param("the facts as the model would be shown them")]


@dataclass(frozen=True, slots=True)
class RecallQuery:
    q: Annotated[str, Param("text to recall for (this or keywords)")] = ""
    keywords: Annotated[
        str, Param("comma-separated entity names (this or q), without NUL", pattern=r"^[^\x00]*$")
    ] = ""
    depth: Annotated[int, Param("hops from the matched entities", ge=0, le=MAX_GRAPH_DEPTH)] = 2
    history: History = False
    limit: Annotated[int, Param("at most this many facts", ge=1, le=500)] = 30


@endpoint("GET", "/graph/recall", tag="graph", result=Recalled, query=RecallQuery, errors=(404,))
async def get_recall(request: Request) -> Response:
    """What the graph recalls for a text or for entity names (does not mark them recalled
    for the agent's next turn)."""
    memory = graph(request)
    query = read_params(RecallQuery, request.query_params, "query parameter")
    text = query.q.strip()
    keywords = [k for k in (k.strip() for k in query.keywords.split(",")) if k]
    if not text and not keywords:
        raise ApiError(
            400, "give 'q' (text to recall for) or 'keywords' (comma-separated entity names)"
        )
    indexer = memory.indexer
    seeds: dict[int, tuple[float, str]] = {}
    if text:
        # The segmenter may load jieba on first use: never on the loop.
        words = await asyncio.to_thread(indexer.keywords, text)
        keywords = with_cjk_bigrams([*keywords, *words])
        seeds = await indexer.vector_seeds(text)
    try:
        found = await memory.store.recall(
            keywords, query.depth, history=query.history, limit=query.limit, seeds=seeds
        )
    except GraphError as exc:
        raise _refused(exc) from None
    facts = [FactView.of(f) for f in found.facts]
    return reply(Recalled(keywords, found.entities, facts, found.text(query.limit)))
