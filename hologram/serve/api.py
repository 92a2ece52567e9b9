"""The HTTP API under /api/v1, the page, and the other doors (OpenAI's chat API under /v1,
the MCP server at /mcp) of one kernel.

`build_app` lists the routes; the endpoints are module-level functions, grouped by resource
(`inputs`, `status`, `settings`, `events`, `reads.*`, `plugins`, `llm`), that read the kernel, the
event stream and the intake from the app's state. Handlers use the kernel's facade and the
subsystems' public reads; the service adds no state of its own beyond the event ring.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from hologram._version import __version__
from hologram.facade import Kernel
from hologram.serve import (
    changes,
    chat_completions,
    conversation,
    events,
    health,
    inputs,
    llm,
    media,
    openapi,
    plugins,
    settings,
    status,
)
from hologram.serve.bodies import ApiError
from hologram.serve.context import ServiceContext, ServiceInfo
from hologram.serve.endpoint import PREFIX, Endpoint, Handler
from hologram.serve.intake import Intake
from hologram.serve.reads import context, graph, knowledge
from hologram.serve.stream import EventStream

ENDPOINTS: tuple[Endpoint, ...] = (
    inputs.post_input,
    inputs.post_input_sync,
    inputs.get_input,
    inputs.post_interrupt,
    inputs.post_stop,
    media.get_media,
    conversation.get_conversation,
    status.get_status,
    status.get_memory,
    health.get_health,
    settings.get_settings,
    settings.put_settings,
    events.get_events,
    context.get_context,
    context.get_coldcontext,
    context.get_coldcontext_query,
    graph.get_graph,
    graph.get_entities,
    graph.get_entity,
    graph.get_facts,
    graph.get_recall,
    knowledge.get_knowledge,
    knowledge.get_knowledge_search,
    knowledge.get_knowledge_entry,
    plugins.list_plugins,
    plugins.install_plugin,
    plugins.uninstall_plugin,
    plugins.enable_plugin,
    plugins.disable_plugin,
    plugins.reload_plugin,
    llm.get_llm_sources,
    llm.put_llm_source,
    changes.list_changes,
    changes.undo_changes,
    openapi.get_openapi,
)
"""The Hologram API, under /api/v1: routed, and described by its OpenAPI document."""

OPENAI_ENDPOINTS: tuple[Endpoint, ...] = (
    chat_completions.create_chat_completion,
    chat_completions.list_models,
)
"""OpenAI's chat API, under /v1: routed, and not in the Hologram API's document, because
its contract is OpenAI's published one (the official client's types are its test oracle),
its errors are in OpenAI's shape rather than the API's, and a client generated from the
document is a client of the Hologram API, not a second, partial OpenAI client."""


def static_dir() -> Path:
    return Path(str(resources.files("hologram.serve") / "static"))


def widgets_dir() -> Path:
    """The notebook widgets' ES modules and style sheet, which the page imports too (a
    folder of files: reading them imports nothing of the notebook package)."""
    return Path(str(resources.files("hologram"))) / "notebook" / "js"


def build_app(
    kernel: Kernel,
    stream: EventStream,
    intake: Intake,
    *,
    body_limit: int,
    service: ServiceInfo,
    mcp: ASGIApp | None = None,
) -> Starlette:
    """The ASGI app of one service. `service` is shown in /status (bind, auth, …); `mcp`,
    the MCP server's streamable HTTP transport, is served at /mcp."""
    routes: list[BaseRoute] = [
        Route("/", index, methods=["GET"]),
        Mount("/static/widgets", StaticFiles(directory=widgets_dir()), name="widgets"),
        Mount("/static", StaticFiles(directory=static_dir()), name="static"),
        *api_routes(ENDPOINTS + OPENAI_ENDPOINTS),
    ]
    if mcp is not None:
        routes.append(Route("/mcp", mcp))
    app = Starlette(
        routes=routes, exception_handlers={ApiError: api_error, HTTPException: http_error}
    )
    document = openapi.openapi_document(ENDPOINTS, version=__version__, body_limit=body_limit)
    app.state.context = ServiceContext(kernel, stream, intake, body_limit, service, document)
    return app


def api_routes(endpoints: tuple[Endpoint, ...]) -> list[BaseRoute]:
    """One route per path, whatever its methods: a method it lacks gets a 405 whose `Allow`
    names all of them."""
    by_path: dict[str, dict[str, Handler]] = {}
    for ep in endpoints:
        by_path.setdefault(ep.prefix + ep.path, {})[ep.method] = ep.handler
    return [
        Route(path, _by_method(handlers), methods=list(handlers))
        for path, handlers in by_path.items()
    ]


def _by_method(handlers: dict[str, Handler]) -> Handler:
    if len(handlers) == 1:
        return next(iter(handlers.values()))

    async def dispatch(request: Request) -> Response:
        return await handlers["GET" if request.method == "HEAD" else request.method](request)

    return dispatch


async def index(request: Request) -> Response:
    return FileResponse(static_dir() / "index.html")


async def api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return JSONResponse({"error": exc.message, **exc.detail}, status_code=exc.status)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = exc.detail
    if exc.status_code == 404:
        path = request.url.path
        message = f"no such endpoint {path}; the API is described at {PREFIX}/openapi.json"
    elif exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    return JSONResponse({"error": message}, status_code=exc.status_code, headers=exc.headers)
