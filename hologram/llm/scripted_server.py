"""The scripted local model server: a real OpenAI-compatible HTTP server on 127.0.0.1.

It stands in for the remote LLM, and only for it: the adapter, httpx and the socket in
between are the real ones. Two modes:

* **scripted**: a test or notebook queues replies (text and/or tool calls, an optional delay,
  an HTTP status, or a raw body / raw stream lines in any provider's wire format); every
  request is recorded so the exact wire body can be asserted on.
* **offline**: with nothing queued, a deterministic rule-based responder answers (see
  `offline_model`); the kernel uses it when no LLM is configured.

Any POST path answers, so a raw reply can play Anthropic's `/v1/messages` or Gemini's
`/models/...:generateContent` as well. It also takes its script over HTTP, for when it runs
as its own process (`python -m hologram scripted-model --port N`):
`POST /_scripted/replies` (a JSON list of replies), `GET /_scripted/requests`.

Uvicorn runs inside the caller's event loop on a socket bound here, with its signal handling
turned off: the process that hosts it (a notebook, the service) owns SIGINT and SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import re
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

from hologram.kernel.tasks import KernelTasks, first_completed
from hologram.llm.budget import estimate_tokens
from hologram.llm.offline_model import OfflineResponder
from hologram.sdk import ToolCall

log = logging.getLogger(__name__)

OFFLINE_MODEL_NAME = "offline-scripted"


@dataclass(slots=True)
class ScriptedReply:
    """One queued answer.

    Built as an OpenAI chat completion (streamed when the request asks) from `text`,
    `tool_calls` and `reasoning`, unless `body` (sent as it is) or `lines` (sent as a
    stream, one per line) is given. `delay` seconds pass before the answer, `chunk_delay`
    between stream chunks; either ends early if the client leaves or the server stops."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str = ""
    delay: float = 0.0
    chunk_delay: float = 0.0
    status: int = 200
    body: str | None = None
    lines: list[str] | None = None
    content_type: str = ""
    finish_reason: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScriptedReply:
        data = dict(data)
        calls = [
            c
            if isinstance(c, ToolCall)
            else ToolCall(c.get("id", ""), c["name"], c.get("arguments", {}))
            for c in data.pop("tool_calls", [])
        ]
        return cls(tool_calls=calls, **data)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


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
    def __init__(self, *, offline: bool = False, model: str = "", port: int = 0) -> None:
        self.offline = offline
        self.model = model or (OFFLINE_MODEL_NAME if offline else "scripted-model")
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
                Route("/{path:path}", self._answer, methods=["POST"]),
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
        recorded = RecordedRequest(
            request.method, request.url.path, request.url.query, dict(request.headers), body
        )
        self.requests.append(recorded)
        async with self._received:
            self._received.notify_all()
        try:
            payload = json.loads(body) if body else {}
        except json.JSONDecodeError:
            payload = {}
        if self._replies:
            reply = self._replies.popleft()
        elif self.offline:
            answer = self._responder.answer(payload if isinstance(payload, dict) else {})
            calls = [ToolCall(c["id"], c["name"], c["arguments"]) for c in answer.tool_calls]
            reply = ScriptedReply(text=answer.text, tool_calls=calls)
        else:
            return JSONResponse(
                {
                    "error": {
                        "message": f"the scripted model has no reply queued for request "
                        f"#{len(self.requests)} ({recorded.path})",
                        "type": "scripted_empty",
                    }
                },
                status_code=500,
            )
        if reply.delay and not await self._pause(request, reply.delay):
            return Response(status_code=499)
        stream = isinstance(payload, dict) and bool(payload.get("stream"))
        if reply.lines is not None:
            return StreamingResponse(
                self._raw_lines(reply),
                status_code=reply.status,
                media_type=reply.content_type or "text/event-stream",
            )
        if reply.body is not None:
            return Response(
                reply.body,
                status_code=reply.status,
                media_type=reply.content_type or "application/json",
            )
        if reply.status >= 400:
            return JSONResponse(
                {"error": {"message": reply.text or "scripted error", "type": "scripted"}},
                status_code=reply.status,
            )
        if stream:
            return StreamingResponse(
                self._openai_stream(reply, payload), media_type="text/event-stream"
            )
        return JSONResponse(self._openai_completion(reply, payload))

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
            [{**asdict(r), "body": r.body.decode("utf-8", "replace")} for r in self.requests]
        )

    async def _models(self, request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": self.model, "object": "model", "owned_by": "hologram"}],
            }
        )

    # ---- OpenAI wire format -----------------------------------------------------------------

    def _usage(self, reply: ScriptedReply, payload: dict[str, Any]) -> dict[str, int]:
        prompt = sum(
            estimate_tokens(json.dumps(m, ensure_ascii=False))
            for m in payload.get("messages") or []
        )
        completion = estimate_tokens(reply.text) + sum(
            estimate_tokens(json.dumps(c.arguments)) for c in reply.tool_calls
        )
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    def _finish(self, reply: ScriptedReply) -> str:
        return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

    def _openai_completion(self, reply: ScriptedReply, payload: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": json.dumps(c.arguments, ensure_ascii=False),
                    },
                }
                for c in reply.tool_calls
            ]
        return {
            "id": f"chatcmpl-scripted-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": payload.get("model") or self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish(reply)}],
            "usage": self._usage(reply, payload),
        }

    async def _openai_stream(
        self, reply: ScriptedReply, payload: dict[str, Any]
    ) -> AsyncIterator[str]:
        base = {
            "id": f"chatcmpl-scripted-{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": payload.get("model") or self.model,
        }

        def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
            chunk = {
                **base,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
            return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"

        events = [event({"role": "assistant", "content": ""})]
        events += [event({"reasoning_content": piece}) for piece in _pieces(reply.reasoning)]
        events += [event({"content": piece}) for piece in _pieces(reply.text)]
        for index, call in enumerate(reply.tool_calls):
            # The arguments arrive in two fragments, as real servers split them.
            arguments = json.dumps(call.arguments, ensure_ascii=False)
            half = len(arguments) // 2
            events.append(
                event(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": arguments[:half]},
                            }
                        ]
                    }
                )
            )
            events.append(
                event(
                    {"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]}
                )
            )
        events.append(event({}, self._finish(reply)))
        if (payload.get("stream_options") or {}).get("include_usage"):
            usage = {**base, "choices": [], "usage": self._usage(reply, payload)}
            events.append(f"data: {json.dumps(usage)}\n\n")
        events.append("data: [DONE]\n\n")
        # The role chunk and the first piece go out at once; the pause is between pieces.
        async for item in self._paced(events, reply.chunk_delay, unpaced=2):
            yield item

    async def _raw_lines(self, reply: ScriptedReply) -> AsyncIterator[str]:
        async for line in self._paced(
            [line + "\n" for line in reply.lines or []], reply.chunk_delay
        ):
            yield line

    async def _paced(self, items: list[str], delay: float, unpaced: int = 1) -> AsyncIterator[str]:
        finished = False
        try:
            for i, item in enumerate(items):
                if delay and i >= unpaced:
                    try:
                        await asyncio.wait_for(self._closing.wait(), delay)
                        return
                    except TimeoutError:
                        pass
                yield item
            finished = True
        finally:
            if not finished and not self._closing.is_set():
                self._record_disconnect()


_PIECE = re.compile(r"\S+\s*|\s+")


def _pieces(text: str) -> list[str]:
    """Split text as a model streams it: a word (with its space) at a time, and CJK text a
    few characters at a time."""
    pieces: list[str] = []
    for word in _PIECE.findall(text):
        if len(word) > 4 and any(ord(ch) > 0x2E7F for ch in word):
            pieces.extend(word[i : i + 3] for i in range(0, len(word), 3))
        else:
            pieces.append(word)
    return pieces


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
