"""The scripted local model server: a real HTTP server on 127.0.0.1 that speaks each
provider's wire format, chosen by path as the real services choose it (hologram/llm/wire):
OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Gemini generateContent and
streamGenerateContent, and Ollama's /api/chat. It also serves `GET /v1/models` and
`/v1/models/{id}`, and `POST .../embeddings` (deterministic vectors), and answers any other
path with 404, as a real service does.

It stands in for the remote LLM, and only for it: the adapter, httpx and the socket in
between are the real ones. Two modes:

* **scripted**: a test or notebook queues replies (text, reasoning and/or tool calls, an
  optional delay, an error kind or an HTTP status with headers such as Retry-After, an error
  in the middle of a stream, or a raw body / raw stream lines); every request is recorded so
  the exact wire body can be asserted on, and the images it carried read in any format
  (`RecordedRequest.images`).
* **offline**: with nothing queued, a deterministic rule-based responder answers (see
  `offline_model`); the kernel uses it when no LLM is configured.

It also takes its script over HTTP, for when it runs as its own process
(`python -m hologram scripted-model --port N`): `POST /_scripted/replies` (a JSON list of
replies), `GET /_scripted/requests`.

Uvicorn runs inside the caller's event loop on a socket bound here, with its signal handling
turned off: the process that hosts it (a notebook, the service) owns SIGINT and SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import socket
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Self

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from hologram.kernel import KernelTasks, first_completed
from hologram.llm.budget import estimate_tokens
from hologram.llm.offline_model import OfflineResponder
from hologram.llm.wire import (
    MESSAGES,
    ReceivedImage,
    ScriptedReply,
    Turn,
    WireFormat,
    embeddings_answer,
    format_for,
    pieces,
)
from hologram.sdk import ToolCall

log = logging.getLogger(__name__)

OFFLINE_MODEL_NAME = "offline-scripted"
EMBEDDING_DIM = 64


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    received_at: float = field(default_factory=time.perf_counter)
    """When it arrived (perf_counter), for benchmarks that split a latency."""
    frames_sent_at: list[float] = field(default_factory=list, compare=False)
    """When each frame of a streamed answer was handed to the server to send
    (perf_counter): where a latency splits into the server's part and the client's."""

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def images(self) -> list[ReceivedImage]:
        """The images the request carried, read from the wire format of its path: each
        with its type, base64 data (or URL), and for a tool result's image the call."""
        wire = format_for(self.path)
        payload = self.json
        if wire is None or not isinstance(payload, dict):
            return []
        return wire.images(payload)


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the hosting process keeps its own SIGINT/SIGTERM handling


class InProcessServer:
    """Any ASGI app served by uvicorn inside the running event loop, on 127.0.0.1 unless
    another `host` is given (the caller decides who may reach it)."""

    def __init__(
        self,
        app: Any,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        **options: Any,
    ) -> None:
        """`options` go to `uvicorn.Config` (`limit_concurrency`, `timeout_graceful_shutdown`)."""
        self.app = app
        self.host = host
        self.port = port
        self.options = {"timeout_graceful_shutdown": 2, **options}
        self._tasks = KernelTasks().scope(f"http-{host}")
        self._server: _QuietServer | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def bind(self) -> socket.socket:
        """The listening socket, made now so a taken port fails here, naming the address."""
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says
        # TCP, and without it every response waits ~40 ms on Nagle and delayed ACKs.
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            raise OSError(
                exc.errno, f"cannot listen on {self.host}:{self.port}: {exc.strerror}"
            ) from None
        self.port = sock.getsockname()[1]
        return sock

    async def start(self, sock: socket.socket | None = None) -> int:
        """Serve (on `sock` when the caller bound it already, see `bind`); returns the port
        (an ephemeral one when 0 was asked for)."""
        sock = sock or self.bind()
        config = uvicorn.Config(
            self.app,
            log_config=None,  # leave the host's logging alone
            access_log=False,
            lifespan="off",
            **self.options,
        )
        self._server = _QuietServer(config)
        self._task = self._tasks.spawn(
            self._server.serve(sockets=[sock]), name=f"http-{self.host}:{self.port}", awaited=True
        )
        # uvicorn has no "started" future; its flag flips within a few loop turns.
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise RuntimeError(f"the server on port {self.port} stopped while starting")
            await asyncio.sleep(0.005)
        return self.port

    async def stop(self) -> None:
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._server = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()


class ScriptedModelServer:
    def __init__(
        self,
        *,
        offline: bool = False,
        model: str = "",
        port: int = 0,
        models: tuple[str, ...] = (),
        embedding_dim: int = EMBEDDING_DIM,
    ) -> None:
        self.offline = offline
        self.model = model or (OFFLINE_MODEL_NAME if offline else "scripted-model")
        #: What GET /v1/models lists (and /v1/models/{id} finds).
        self.models = (self.model, *models)
        self.embedding_dim = embedding_dim
        self.requests: list[RecordedRequest] = []
        self.disconnects = 0
        self._replies: deque[ScriptedReply] = deque()
        self._responder = OfflineResponder()
        self._port = port
        self._ids = itertools.count(1)
        self._http: InProcessServer | None = None
        self._closing = asyncio.Event()
        self._disconnected = asyncio.Event()
        self._received = asyncio.Condition()
        self.app = Starlette(
            routes=[
                Route("/_scripted/replies", self._control_replies, methods=["POST"]),
                Route("/_scripted/requests", self._control_requests, methods=["GET", "DELETE"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/v1/models/{model_id:path}", self._model, methods=["GET"]),
                Route("/{path:path}", self._answer, methods=["POST"]),
                Route("/{path:path}", self._unknown, methods=["GET"]),
            ]
        )

    # ---- the script --------------------------------------------------------------------------

    def queue(self, *replies: ScriptedReply) -> Self:
        self._replies.extend(replies)
        return self

    def queue_text(self, text: str, **options: Any) -> Self:
        return self.queue(ScriptedReply(text=text, **options))

    def queue_tool_call(
        self, name: str, arguments: dict[str, Any] | None = None, call_id: str = "", **options: Any
    ) -> Self:
        call = ToolCall(
            call_id or f"call_{name}_{len(self.requests) + len(self._replies)}",
            name,
            dict(arguments or {}),
        )
        return self.queue(ScriptedReply(tool_calls=[call], **options))

    @property
    def pending(self) -> int:
        return len(self._replies)

    @property
    def last_request(self) -> RecordedRequest:
        if not self.requests:
            raise LookupError("the scripted model has received no request yet")
        return self.requests[-1]

    async def wait_for_requests(self, count: int = 1) -> None:
        """Return once `count` requests in all have arrived (wrap it in `asyncio.timeout`)."""
        async with self._received:
            await self._received.wait_for(lambda: len(self.requests) >= count)

    async def wait_for_disconnect(self) -> None:
        """Return once a client closed its connection while an answer was pending (wrap it
        in `asyncio.timeout` for a deadline)."""
        await self._disconnected.wait()

    # ---- life cycle ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._http is None:
            raise RuntimeError("the scripted model server is not running; await start() first")
        return self._port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI-style source's base_url should be."""
        return self.url + "/v1"

    async def start(self) -> Self:
        self._http = InProcessServer(self.app, self._port)
        self._port = await self._http.start()
        log.info(
            "scripted model server (%s) on %s",
            "offline" if self.offline else "scripted",
            self.base_url,
        )
        return self

    async def stop(self) -> None:
        if self._http is None:
            return
        self._closing.set()  # pending delays end now instead of holding shutdown
        await self._http.stop()
        self._http = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # ---- HTTP --------------------------------------------------------------------------------

    async def _answer(self, request: Request) -> Response:
        body = await request.body()
        path = request.url.path
        recorded = RecordedRequest(
            request.method, path, request.url.query, dict(request.headers), body
        )
        self.requests.append(recorded)
        async with self._received:
            self._received.notify_all()
        try:
            payload = json.loads(body) if body else {}
        except json.JSONDecodeError:
            payload = {}
        payload = payload if isinstance(payload, dict) else {}
        wire = format_for(path)
        if wire is None:
            if path.endswith("/embeddings"):
                return JSONResponse(embeddings_answer(payload, self.model, self.embedding_dim))
            return _not_found(f"no such endpoint: POST {path}")
        reply = self._next_reply(wire, payload, recorded)
        if reply is None:
            message = (
                f"the scripted model has no reply queued for request #{len(self.requests)} ({path})"
            )
            _, error = wire.error("server", message, None)
            if isinstance(error, dict) and isinstance(error.get("error"), dict):
                error["error"]["type"] = "scripted_empty"
            return JSONResponse(error, status_code=500)
        if reply.delay and not await self._pause(request, reply.delay):
            return Response(status_code=499)
        return self._reply(wire, reply, path, payload, recorded)

    def _next_reply(
        self, wire: WireFormat, payload: dict[str, Any], recorded: RecordedRequest
    ) -> ScriptedReply | None:
        if self._replies:
            return self._replies.popleft()
        if not self.offline:
            return None
        view = {"messages": wire.messages(payload), "tools": wire.tools(payload)}
        answer = self._responder.answer(view)
        calls = [ToolCall(c["id"], c["name"], c["arguments"]) for c in answer.tool_calls]
        return ScriptedReply(text=answer.text, tool_calls=calls)

    def _reply(
        self,
        wire: WireFormat,
        reply: ScriptedReply,
        path: str,
        payload: dict[str, Any],
        recorded: RecordedRequest,
    ) -> Response:
        headers = reply.response_headers()
        if reply.lines is not None:
            return StreamingResponse(
                self._raw_lines(reply),
                status_code=reply.status,
                media_type=reply.content_type or "text/event-stream",
                headers=headers,
            )
        if reply.body is not None:
            media = reply.content_type or "application/json"
            return Response(reply.body, reply.status, headers, media)
        failure = reply.failure()
        if failure:
            message = reply.text or MESSAGES.get(failure, "scripted error")
            status, error = wire.error(failure, message, reply.retry_after)
            status = reply.status if reply.status >= 400 else status
            return JSONResponse(error, status_code=status, headers=headers)
        turn = self._turn(wire, reply, path, payload)
        if not turn.stream:
            return JSONResponse(wire.answer(turn), headers=headers)
        frames = list(wire.stream(turn))
        if reply.stream_error:
            frames.append(
                wire.stream_error(reply.stream_error, MESSAGES.get(reply.stream_error, "error"))
            )
        # The first frames go out at once; the pause is between pieces.
        paced = self._paced(frames, reply.chunk_delay, unpaced=2, sent=recorded.frames_sent_at)
        return StreamingResponse(paced, media_type=wire.stream_media, headers=headers)

    def _turn(
        self, wire: WireFormat, reply: ScriptedReply, path: str, payload: dict[str, Any]
    ) -> Turn:
        prompt = sum(
            estimate_tokens(json.dumps(m, ensure_ascii=False)) for m in wire.messages(payload)
        )
        return Turn(
            reply=reply,
            payload=payload,
            model=wire.model_of(path, payload) or self.model,
            serial=next(self._ids),
            prompt_tokens=prompt,
            stream=wire.wants_stream(path, payload),
            cut=reply.error_after if reply.stream_error else None,
            pieces=pieces(reply.text),
        )

    async def _pause(self, request: Request, seconds: float) -> bool:
        """Wait `seconds`; False if the client disconnected meanwhile (which is recorded)."""

        async def client_left() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass

        first = await first_completed(asyncio.sleep(seconds), self._closing.wait(), client_left())
        if first == 2:
            self._record_disconnect()
            return False
        return True

    def _record_disconnect(self) -> None:
        self.disconnects += 1
        self._disconnected.set()

    async def _control_replies(self, request: Request) -> Response:
        data = await request.json()
        replies = [
            ScriptedReply.from_json(item) for item in (data if isinstance(data, list) else [data])
        ]
        self.queue(*replies)
        return JSONResponse({"queued": len(replies), "pending": self.pending})

    async def _control_requests(self, request: Request) -> Response:
        if request.method == "DELETE":
            self.requests.clear()
            return JSONResponse({"cleared": True})
        return JSONResponse(
            [
                {
                    **asdict(r),
                    "body": r.body.decode("utf-8", "replace"),
                    "images": [i.summary() for i in r.images],
                }
                for r in self.requests
            ]
        )

    def _model_json(self, name: str) -> dict[str, Any]:
        return {"id": name, "object": "model", "created": 0, "owned_by": "hologram"}

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [self._model_json(m) for m in self.models]})

    async def _model(self, request: Request) -> Response:
        name = request.path_params["model_id"]
        if name not in self.models:
            return _not_found(f"The model '{name}' does not exist", code="model_not_found")
        return JSONResponse(self._model_json(name))

    async def _unknown(self, request: Request) -> Response:
        return _not_found(f"no such endpoint: GET {request.url.path}")

    async def _raw_lines(self, reply: ScriptedReply) -> AsyncIterator[str]:
        async for line in self._paced(
            [line + "\n" for line in reply.lines or []], reply.chunk_delay
        ):
            yield line

    async def _paced(
        self, items: list[str], delay: float, unpaced: int = 1, sent: list[float] | None = None
    ) -> AsyncIterator[str]:
        finished = False
        try:
            for i, item in enumerate(items):
                if delay and i >= unpaced:
                    try:
                        await asyncio.wait_for(self._closing.wait(), delay)
                        return
                    except TimeoutError:
                        pass
                if sent is not None:
                    sent.append(time.perf_counter())
                yield item
            finished = True
        finally:
            if not finished and not self._closing.is_set():
                self._record_disconnect()


def _not_found(message: str, code: str = "not_found") -> Response:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    return JSONResponse({"error": error}, status_code=404)


async def run_scripted_model(port: int = 0, offline: bool = True) -> int:
    """`python -m hologram scripted-model`: serve until SIGINT or SIGTERM."""
    import signal

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with ScriptedModelServer(offline=offline, port=port) as server:
        mode = "offline" if offline else "scripted (POST replies to /_scripted/replies)"
        print(f"scripted model, {mode}, on {server.base_url}", flush=True)
        await stop.wait()
    return 0
