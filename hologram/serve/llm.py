"""The model sources over HTTP: list them with their state and the one in use, switch to
another (the page's source control). Both go through the plugin LLM surface
(`hologram.plugins.llm_surface`), the code the agent's llmsource tools and external plugins
use, so a switch from the page is the same switch: stored as `core.llm.active_source`,
published as `provider_switched`, in force from the next model call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypedDict, cast

from starlette.requests import Request
from starlette.responses import Response

from hologram.plugins import LLMAPI
from hologram.sdk import Param
from hologram.serve.bodies import ApiError, object_body, read_json, string_field
from hologram.serve.context import context
from hologram.serve.endpoint import endpoint, reply


class SourceRow(TypedDict):
    """One model source, as the provider manager reports it."""

    source: str
    adapter: str
    offline: Annotated[bool, Param("the offline scripted model, which stands in for none")]
    state: Annotated[str, Param("ready, or why it is backing off or blocked")]
    failures: int
    max_context_tokens: int


@dataclass(frozen=True, slots=True)
class SourceList:
    """The model sources in the order a call tries them; `current` is the one tried first."""

    current: Annotated[str | None, Param("the source tried first; null when there is none")]
    sources: list[SourceRow]


@dataclass(frozen=True, slots=True)
class SourceChoice:
    """The source to try first from the next model call on."""

    source: Annotated[str, Param("a source's name, as GET /llm/sources lists it", min_length=1)]


def surface(request: Request) -> LLMAPI:
    llm = context(request).kernel.state.llm
    if llm is None:
        raise ApiError(404, "this kernel has no model sources (facility 'llm')")
    return LLMAPI(llm)


async def listing(llm: LLMAPI) -> SourceList:
    sources = cast(list[SourceRow], await llm.list_sources())
    return SourceList(sources[0]["source"] if sources else None, sources)


@endpoint("GET", "/llm/sources", tag="llm", result=SourceList, errors=(404,))
async def get_llm_sources(request: Request) -> Response:
    """The model sources in the order a call tries them, each with its state."""
    return reply(await listing(surface(request)))


@endpoint("PUT", "/llm/source", tag="llm", result=SourceList, body=SourceChoice, errors=(404,))
async def put_llm_source(request: Request) -> Response:
    """Make a source the one tried first, from the next model call on; an unknown name is
    refused, naming the sources."""
    ctx = context(request)
    llm = surface(request)
    choice = source_choice(await read_json(request, ctx.body_limit))
    try:
        await llm.set_source(choice.source)
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None
    return reply(await listing(llm))


def source_choice(body: Any) -> SourceChoice:
    body = object_body(body, SourceChoice, "a source choice")
    source = string_field(body, "source")
    if not source.strip():
        raise ApiError(400, "'source' is empty: name a source, as GET /llm/sources lists it")
    return SourceChoice(source)
