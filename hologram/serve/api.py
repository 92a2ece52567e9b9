"""The HTTP API under /api/v1, and the page, built from one kernel.

`build_app` is the only way in: it closes over the kernel, the event stream and the intake,
so nothing lives at module level. Handlers use the kernel's facade and the subsystems'
public reads; the service adds no state of its own beyond the event ring.
"""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hologram import __version__
from hologram.agent import TaskStopped, TurnResult
from hologram.config import ConfigError, is_secret, mask
from hologram.facade import Kernel
from hologram.sdk import EndedBy
from hologram.serve.bodies import ApiError, input_body, read_json, setting_body
from hologram.serve.intake import HTTP_CHANNEL, Intake
from hologram.serve.openapi import openapi_document
from hologram.serve.plugin_routes import plugin_routes
from hologram.serve.reads import read_routes
from hologram.serve.stream import EventStream

PREFIX = "/api/v1"


def static_dir() -> Path:
    return Path(str(resources.files("hologram.serve") / "static"))


def _result(ticket_id: int, result: TurnResult) -> dict[str, Any]:
    return {
        "id": ticket_id,
        "reply": result.reply,
        "ended_by": result.ended_by,
        "rounds": result.rounds,
        "channel": result.channel,
        "delivered": result.delivered,
    }


def build_app(
    kernel: Kernel,
    stream: EventStream,
    intake: Intake,
    *,
    body_limit: int,
    service: dict[str, Any],
) -> Starlette:
    """The ASGI app of one service. `service` is shown in /status (bind, auth, …)."""

    state = kernel.state

    # ---- input ---------------------------------------------------------------------------

    async def post_input(request: Request) -> Response:
        body = input_body(
            await read_json(request, body_limit),
            channels=intake.channels(),
            default_channel=HTTP_CHANNEL,
        )
        ticket = await intake.submit(body)
        return JSONResponse({"id": ticket.id, "level": int(ticket.level)}, status_code=202)

    async def post_input_sync(request: Request) -> Response:
        body = input_body(
            await read_json(request, body_limit),
            channels=intake.channels(),
            default_channel=HTTP_CHANNEL,
        )
        ticket = await intake.submit(body)
        try:
            async with asyncio.timeout(body.timeout):
                result: TurnResult = await asyncio.shield(ticket.outcome)
        except TimeoutError:
            raise ApiError(
                504,
                f"no reply within {body.timeout:g} s; the input is still queued or running "
                f"(GET {PREFIX}/inputs/{ticket.id}, or watch {PREFIX}/events)",
                id=ticket.id,
            ) from None
        except TaskStopped as exc:
            if not intake.accepting:
                raise ApiError(
                    503,
                    "the service stopped before this input finished; it is kept in the "
                    "journal and runs when the service starts again",
                    id=ticket.id,
                ) from None
            return JSONResponse(
                {
                    "id": ticket.id,
                    "reply": "",
                    "ended_by": EndedBy.STOPPED.value,
                    "detail": str(exc),
                }
            )
        except Exception as exc:
            raise ApiError(
                500, f"the turn failed: {type(exc).__name__}: {exc}", id=ticket.id
            ) from exc
        return JSONResponse(_result(ticket.id, result))

    async def post_interrupt(request: Request) -> Response:
        body = input_body(
            await read_json(request, body_limit),
            channels=intake.channels(),
            default_channel=HTTP_CHANNEL,
            interrupt=True,
        )
        ticket = await intake.submit(body)
        return JSONResponse({"id": ticket.id, "level": int(ticket.level)}, status_code=202)

    async def post_stop(request: Request) -> Response:
        return JSONResponse({"stopped": kernel.stop_turn()})

    async def get_input(request: Request) -> Response:
        raw = request.path_params["id"]
        record = await kernel.inputs.journal.get(int(raw))
        if record is None:
            raise ApiError(404, f"no input {raw} in the journal")
        return JSONResponse(record)

    # ---- state ---------------------------------------------------------------------------

    def memory_counts() -> dict[str, Any]:
        memory = state.memory
        return {
            "context_events": None if memory is None else len(memory.context),
            "cold_documents": None if state.coldcontext is None else len(state.coldcontext),
            "text_log_files": None if state.text_memory is None else len(state.text_memory.files()),
        }

    async def get_status(request: Request) -> Response:
        sources = [] if state.llm is None else state.llm.status()
        plugins = getattr(state, "plugins", None)
        return JSONResponse(
            {
                "version": __version__,
                "service": {
                    **service,
                    "accepting_input": intake.accepting,
                    "events": stream.stats(),
                },
                "kernel": kernel.status(),
                "scheduler": kernel.inputs.status(),
                "inputs": await kernel.inputs.journal.counts(),
                "llm": {
                    "offline": bool(sources) and bool(sources[0]["offline"]),
                    "sources": sources,
                    "usage": None if state.llm is None else state.llm.usage.summary(),
                },
                "agent": None if state.agent is None else state.agent.describe(),
                "memory": memory_counts(),
                "plugins": None if plugins is None else _describe(plugins),
            },
            # numbers and strings only, but some payloads carry paths or enums
        )

    async def get_memory(request: Request) -> Response:
        return JSONResponse(memory_counts())

    # ---- settings ------------------------------------------------------------------------

    def entry_json(key: str) -> dict[str, Any]:
        entry = next(e for e in kernel.config.entries(key) if e.key == key)
        return {
            "key": entry.key,
            "value": mask(entry.key, entry.value),
            "default": mask(entry.key, entry.default),
            "source": entry.source,
            "doc": entry.doc,
            "secret": is_secret(entry.key),
        }

    async def get_settings(request: Request) -> Response:
        prefix = request.query_params.get("prefix", "")
        entries = [entry_json(e.key) for e in kernel.config.entries(prefix)]
        plugins = sorted({e.key.split(".")[1] for e in kernel.config.entries("plugin.")})
        return JSONResponse({"prefix": prefix, "settings": entries, "plugins": plugins})

    async def put_settings(request: Request) -> Response:
        key, value, as_text = setting_body(await read_json(request, body_limit))
        config = kernel.config
        try:
            if as_text:
                value = config.set_text(key, value)
            if is_secret(key) and value == mask(key, "x"):
                raise ApiError(400, f"{key} is a secret: send its real value, not the mask")
            await config.set(key, value)
        except ConfigError as exc:
            raise ApiError(400, str(exc)) from None
        shown = entry_json(key)
        if shown["source"] == "env":
            shown["warning"] = "stored, but an environment variable overrides it for this run"
        return JSONResponse(shown)

    # ---- events --------------------------------------------------------------------------

    async def get_events(request: Request) -> Response:
        raw = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
        last: int | None = None
        if raw is not None:
            if not raw.strip().isdigit():
                raise ApiError(400, f"Last-Event-ID must be an event's seq (a number), not {raw!r}")
            last = int(raw)
        types_param = request.query_params.get("types")
        types = frozenset(t for t in types_param.split(",") if t) if types_param else None
        return StreamingResponse(
            stream.open(last, types),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    async def get_openapi(request: Request) -> Response:
        return JSONResponse(openapi_document(__version__))

    async def index(request: Request) -> Response:
        return FileResponse(static_dir() / "index.html")

    routes = [
        Route("/", index, methods=["GET"]),
        Mount("/static", StaticFiles(directory=static_dir()), name="static"),
        Route(f"{PREFIX}/openapi.json", get_openapi, methods=["GET"]),
        Route(f"{PREFIX}/input", post_input, methods=["POST"]),
        Route(f"{PREFIX}/input/sync", post_input_sync, methods=["POST"]),
        Route(f"{PREFIX}/inputs/{{id:int}}", get_input, methods=["GET"]),
        Route(f"{PREFIX}/interrupt", post_interrupt, methods=["POST"]),
        Route(f"{PREFIX}/stop", post_stop, methods=["POST"]),
        Route(f"{PREFIX}/status", get_status, methods=["GET"]),
        Route(f"{PREFIX}/settings", get_settings, methods=["GET"]),
        Route(f"{PREFIX}/settings", put_settings, methods=["PUT"]),
        Route(f"{PREFIX}/events", get_events, methods=["GET"]),
        Route(f"{PREFIX}/memory", get_memory, methods=["GET"]),
        *read_routes(state, PREFIX),
        *plugin_routes(state, PREFIX),
    ]

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
        return JSONResponse({"error": message}, status_code=exc.status_code)

    return Starlette(
        routes=routes,
        exception_handlers={ApiError: api_error, HTTPException: http_error},
    )


def _describe(plugins: Any) -> Any:
    describe = getattr(plugins, "status", None) or getattr(plugins, "describe", None)
    return describe() if callable(describe) else str(plugins)
