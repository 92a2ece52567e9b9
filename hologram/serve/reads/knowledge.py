"""The knowledge base: its entries and categories, a search, and one entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from starlette.requests import Request
from starlette.responses import Response

from hologram.knowledge import KnowledgeBase, KnowledgeError, check_name
from hologram.sdk import Param
from hologram.serve.bodies import ApiError
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint, reply
from hologram.serve.params import not_blank, read_params
from hologram.serve.reads.params import SearchText, Top

NAME_RULES = (
    "a path like 'cooking/bread': each part 1-80 characters, not starting with '.', "
    'none of \\ < > : " | ? * or control characters'
)
Category = Annotated[str, Param(f"a category, {NAME_RULES} (empty: all)")]


def knowledge(request: Request) -> KnowledgeBase:
    found = context(request).kernel.state.knowledge
    if found is None:
        raise ApiError(404, "this kernel has no knowledge base")
    return found


def _category(raw: str) -> str:
    try:
        return check_name(raw) if raw else ""
    except KnowledgeError as exc:
        raise ApiError(400, str(exc)) from None


@dataclass(frozen=True, slots=True)
class KnowledgeListing:
    """Knowledge entries and categories under a category."""

    category: str
    entries: Annotated[list[str], Param("entry names, sorted")]
    categories: Annotated[dict[str, int], Param("category -> entries in its subtree")]


@dataclass(frozen=True, slots=True)
class CategoryQuery:
    category: Category = ""


@endpoint(
    "GET",
    "/knowledge",
    tag="knowledge",
    result=KnowledgeListing,
    query=CategoryQuery,
    errors=(404,),
)
async def get_knowledge(request: Request) -> Response:
    """Knowledge entries and categories, all or under one category."""
    base = knowledge(request)
    query = read_params(CategoryQuery, request.query_params, "query parameter")
    category = _category(query.category)
    listing = KnowledgeListing(category, await base.list(category), await base.categories(category))
    return reply(listing)


@dataclass(frozen=True, slots=True)
class KnowledgeHit:
    """An entry a search found."""

    name: str
    score: float
    snippet: Annotated[str, Param("the entry's start, whitespace collapsed")]


@dataclass(frozen=True, slots=True)
class KnowledgeSearch:
    """What a knowledge search found."""

    query: str
    hits: Annotated[list[KnowledgeHit], Param("best first")]


@dataclass(frozen=True, slots=True)
class KnowledgeQuery:
    q: SearchText
    top: Top = 5
    category: Annotated[str, Param(f"only within this category, {NAME_RULES}")] = ""


@endpoint(
    "GET",
    "/knowledge/search",
    tag="knowledge",
    result=KnowledgeSearch,
    query=KnowledgeQuery,
    errors=(404,),
)
async def get_knowledge_search(request: Request) -> Response:
    """Knowledge entries best matching a text."""
    base = knowledge(request)
    query = read_params(KnowledgeQuery, request.query_params, "query parameter")
    hits = await base.search(query.q, query.top, _category(query.category))
    shown = [KnowledgeHit(h.name, h.score, h.snippet) for h in hits]
    return reply(KnowledgeSearch(query.q, shown))


@dataclass(frozen=True, slots=True)
class KnowledgeEntry:
    """One knowledge entry."""

    name: str
    category: str
    title: str
    content: Annotated[str, Param("the entry's content.md")]
    media: Annotated[list[dict[str, Any]], Param("the media files the entry carries")]


@dataclass(frozen=True, slots=True)
class EntryPath:
    name: Annotated[str, not_blank(f"the entry's name, {NAME_RULES}")]


@endpoint(
    "GET",
    "/knowledge/entries/{name:path}",
    tag="knowledge",
    result=KnowledgeEntry,
    path_params=EntryPath,
    errors=(404,),
)
async def get_knowledge_entry(request: Request) -> Response:
    """One knowledge entry: its content and media list."""
    base = knowledge(request)
    raw = read_params(EntryPath, request.path_params, "path parameter").name
    try:
        name = check_name(raw)
    except KnowledgeError as exc:
        raise ApiError(400, str(exc)) from None
    try:
        entry = await base.get(name)
    except KnowledgeError as exc:
        raise ApiError(404, str(exc)) from None
    shown = KnowledgeEntry(entry.name, entry.category, entry.title, entry.content, entry.media)
    return reply(shown)
