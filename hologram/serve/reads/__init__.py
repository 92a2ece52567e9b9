"""Read endpoints over what the kernel holds: the context window, the cold context, the graph
and the knowledge base.

They read through each subsystem's public face and change nothing the agent relies on, with
one exception said where it happens: a cold-context query counts as an access of each hit,
because `ColdContext.query` is the only ranked search it offers. A graph recall here goes to
the store itself, not the indexer, so it neither marks entities as recalled for the next
turn nor replaces the indexer's last recall.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hologram.knowledge import KnowledgeError, check_name
from hologram.memory import ColdDoc, Entity, Fact, GraphError, UnknownEntity
from hologram.memory.indexer import with_cjk_bigrams
from hologram.serve.bodies import ApiError
from hologram.state import KernelState

MAX_GRAPH_DEPTH = 4


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"query parameter '{name}' must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise ApiError(400, f"query parameter '{name}' must be within {low}..{high}")
    return value


def bool_param(request: Request, name: str) -> bool:
    raw = request.query_params.get(name, "false").lower()
    if raw not in ("true", "false", "1", "0"):
        raise ApiError(400, f"query parameter '{name}' must be true or false, got {raw!r}")
    return raw in ("true", "1")


def text_param(request: Request, name: str) -> str:
    value = request.query_params.get(name, "").strip()
    if not value:
        raise ApiError(400, f"query parameter '{name}' is required: the text to look for")
    return value


def _doc(doc: ColdDoc) -> dict[str, Any]:
    return {
        "id": doc.id,
        "created_at": doc.created_at,
        "source": doc.source,
        "channel": doc.channel,
        "input": doc.input,
        "response": doc.response,
        "access_count": doc.access_count,
    }


def _entity(entity: Entity) -> dict[str, Any]:
    return asdict(entity)


def _fact(fact: Fact) -> dict[str, Any]:
    return {**asdict(fact), "current": fact.current, "line": fact.line()}


def read_routes(state: KernelState, prefix: str) -> list[Route]:
    """The read endpoints of one kernel, under `prefix`."""

    def memory() -> Any:
        if state.memory is None:
            raise ApiError(404, "this kernel has no memory module")
        return state.memory

    def cold() -> Any:
        if state.coldcontext is None:
            raise ApiError(404, "this kernel has no cold context")
        return state.coldcontext

    def graph() -> Any:
        if state.graph is None:
            raise ApiError(404, "this kernel has no graph memory")
        return state.graph

    def knowledge() -> Any:
        if state.knowledge is None:
            raise ApiError(404, "this kernel has no knowledge base")
        return state.knowledge

    # ---- context window and cold context -----------------------------------------------

    async def get_context(request: Request) -> Response:
        context = memory().context
        limit = int_param(request, "limit", 100, 1, 10_000)
        return JSONResponse(
            {
                "total": len(context),
                "events": [
                    {
                        "id": e.id,
                        "timestamp": e.timestamp,
                        "source": e.source,
                        "channel": e.channel,
                        "input": e.input,
                        "response": e.response,
                        "tools": [[t.name, t.content] for t in e.tool_outputs],
                    }
                    for e in context.events[-limit:]
                ],
            }
        )

    async def get_coldcontext(request: Request) -> Response:
        store = cold()
        limit = int_param(request, "limit", 50, 1, 10_000)
        needle = request.query_params.get("contains", "").lower()
        # A plain filter, not `query`: listing must not count as the agent recalling a
        # document (access counts decide what goes cold).
        docs = [
            d
            for d in store.documents()
            if not needle or needle in f"{d.input}\n{d.response}\n{d.text}".lower()
        ]
        docs.sort(key=lambda d: d.created_at, reverse=True)
        return JSONResponse(
            {
                "total": len(store),
                "matched": len(docs),
                "documents": [_doc(d) for d in docs[:limit]],
            }
        )

    async def get_coldcontext_query(request: Request) -> Response:
        store = cold()
        text = text_param(request, "q")
        top = int_param(request, "top", 5, 1, 100)
        hits = await store.query(text, top)
        return JSONResponse(
            {
                "query": text,
                "hits": [
                    {**_doc(h.doc), "score": h.score, "cosine": h.cosine, "bm25": h.bm25}
                    for h in hits
                ],
            }
        )

    # ---- graph ---------------------------------------------------------------------------

    async def get_graph(request: Request) -> Response:
        memory_graph = graph()
        return JSONResponse({"stats": await memory_graph.store.stats(), **memory_graph.status()})

    async def get_entities(request: Request) -> Response:
        limit = int_param(request, "limit", 100, 1, 10_000)
        entities = await graph().store.list_entities(limit)
        return JSONResponse({"entities": [_entity(e) for e in entities]})

    async def get_entity(request: Request) -> Response:
        store = graph().store
        name = request.path_params["name"]
        try:
            entity = await store.entity(name)
            facts = await store.facts(entity=name, history=bool_param(request, "history"))
        except UnknownEntity as exc:
            raise ApiError(404, str(exc)) from None
        return JSONResponse({"entity": _entity(entity), "facts": [_fact(f) for f in facts]})

    async def get_facts(request: Request) -> Response:
        store = graph().store
        entity = request.query_params.get("entity") or None
        limit = int_param(request, "limit", 100, 1, 10_000)
        try:
            facts = await store.facts(
                entity=entity, history=bool_param(request, "history"), limit=limit
            )
        except UnknownEntity as exc:
            raise ApiError(404, str(exc)) from None
        return JSONResponse({"facts": [_fact(f) for f in facts]})

    async def get_recall(request: Request) -> Response:
        memory_graph = graph()
        text = request.query_params.get("q", "").strip()
        listed = [k.strip() for k in request.query_params.get("keywords", "").split(",")]
        keywords = [k for k in listed if k]
        if not text and not keywords:
            raise ApiError(
                400, "give 'q' (text to recall for) or 'keywords' (comma-separated entity names)"
            )
        depth = int_param(request, "depth", 2, 0, MAX_GRAPH_DEPTH)
        limit = int_param(request, "limit", 30, 1, 500)
        indexer = memory_graph.indexer
        seeds: dict[int, tuple[float, str]] = {}
        if text:
            # The segmenter may load jieba on first use: never on the loop.
            words = await asyncio.to_thread(indexer.keywords, text)
            keywords = with_cjk_bigrams([*keywords, *words])
            seeds = await indexer.vector_seeds(text)
        try:
            result = await memory_graph.store.recall(
                keywords, depth, history=bool_param(request, "history"), limit=limit, seeds=seeds
            )
        except GraphError as exc:
            raise ApiError(400, str(exc)) from None
        return JSONResponse(
            {
                "keywords": keywords,
                "entities": [asdict(e) for e in result.entities],
                "facts": [_fact(f) for f in result.facts],
                "text": result.text(limit),
            }
        )

    # ---- knowledge -----------------------------------------------------------------------

    def category_param(request: Request) -> str:
        raw = request.query_params.get("category", "")
        try:
            return check_name(raw) if raw else ""
        except KnowledgeError as exc:
            raise ApiError(400, str(exc)) from None

    async def get_knowledge(request: Request) -> Response:
        base = knowledge()
        category = category_param(request)
        return JSONResponse(
            {
                "category": category,
                "entries": await base.list(category),
                "categories": await base.categories(category),
            }
        )

    async def get_knowledge_search(request: Request) -> Response:
        text = text_param(request, "q")
        top = int_param(request, "top", 5, 1, 100)
        hits = await knowledge().search(text, top, category_param(request))
        return JSONResponse({"query": text, "hits": [asdict(h) for h in hits]})

    async def get_knowledge_entry(request: Request) -> Response:
        base = knowledge()
        try:
            name = check_name(request.path_params["name"])
        except KnowledgeError as exc:
            raise ApiError(400, str(exc)) from None
        try:
            entry = await base.get(name)
        except KnowledgeError as exc:
            raise ApiError(404, str(exc)) from None
        return JSONResponse(
            {
                "name": entry.name,
                "category": entry.category,
                "title": entry.title,
                "content": entry.content,
                "media": entry.media,
            }
        )

    return [
        Route(f"{prefix}/context", get_context, methods=["GET"]),
        Route(f"{prefix}/coldcontext", get_coldcontext, methods=["GET"]),
        Route(f"{prefix}/coldcontext/query", get_coldcontext_query, methods=["GET"]),
        Route(f"{prefix}/graph", get_graph, methods=["GET"]),
        Route(f"{prefix}/graph/entities", get_entities, methods=["GET"]),
        Route(f"{prefix}/graph/entities/{{name:path}}", get_entity, methods=["GET"]),
        Route(f"{prefix}/graph/facts", get_facts, methods=["GET"]),
        Route(f"{prefix}/graph/recall", get_recall, methods=["GET"]),
        Route(f"{prefix}/knowledge", get_knowledge, methods=["GET"]),
        Route(f"{prefix}/knowledge/search", get_knowledge_search, methods=["GET"]),
        Route(f"{prefix}/knowledge/entries/{{name:path}}", get_knowledge_entry, methods=["GET"]),
    ]
