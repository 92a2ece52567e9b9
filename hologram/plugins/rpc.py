"""NDJSON JSON-RPC 2.0 between the kernel and a subprocess plugin (spec 000: the control
plane of subprocess plugins).

One JSON object per line, UTF-8, in both directions; either side may call the other at any
time, and calls run concurrently (a plugin's stage handler may call back into the kernel
while the kernel waits for it). Both ends use this one module, so it imports only the
standard library and `hologram.sdk` (itself standard library only): the plugin-side runtime
loads it without the kernel.

A bad frame never takes the reader down: a line that is not JSON, or not a JSON-RPC
message, is answered with an error (when it carried an id) and reported; an unknown method
gets "method not found". Frames are read under the limits of `hologram.sdk.jsontext`
(nesting, number size, no NaN): a frame holding a lone surrogate, text with no UTF-8 form,
is refused with the field named (a call gets an "invalid params" error, an answer fails the
call it answers), so such text never enters the kernel. Going out, a lone surrogate from
elsewhere in the kernel is sent as U+FFFD rather than failing the frame. A frame longer than
`max_frame` or cut off by the end of the stream ends the session: there is no telling where
the next frame would start.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from hologram.kernel import TaskScope
from hologram.sdk import jsontext

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
DEFAULT_MAX_FRAME = 8 * 1024 * 1024
MAX_FRAME_DEPTH = 128
"""Deeper than the service's bodies allow: frames carry tool schemas and tool results that
other programs wrote (an MCP server's, say), nested inside the frame's own levels."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
CAPABILITY_REFUSED = -32001
"""The plugin asked for a surface it was not granted; the message names the capability."""
HANDLER_ERROR = -32002
"""The handler ran and failed in a way its caller should read (a tool's error)."""
PEER_GONE = -32003

Dispatch = Callable[[str, dict[str, Any]], Awaitable[Any]]
BadFrame = Callable[[str], None]


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SessionEnded(Exception):
    """Why reading stopped for good: end of stream, an oversize frame, a cut frame."""


class Peer:
    """One end of the conversation: calls out, answers in."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: Any,
        dispatch: Dispatch,
        *,
        name: str = "peer",
        max_frame: int = DEFAULT_MAX_FRAME,
        on_bad_frame: BadFrame | None = None,
        tasks: TaskScope,
    ) -> None:
        self.name = name
        self._scope = tasks
        self._reader = reader
        self._writer = writer
        self._dispatch = dispatch
        self._max_frame = max_frame
        self._on_bad_frame = on_bad_frame or (lambda why: log.warning("%s: %s", name, why))
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed: str | None = None

    # ---- out ---------------------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        if self.closed is not None:
            raise RpcError(PEER_GONE, f"{self.name}: the connection is closed ({self.closed})")
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str)
        try:
            data = line.encode("utf-8")
        except UnicodeEncodeError:
            log.warning("%s: a frame held lone surrogates; they are sent as U+FFFD", self.name)
            data = jsontext.replace_lone_surrogates(line).encode("utf-8")
        self._writer.write(data + b"\n")

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call `method` on the other side and wait for its result (or its RpcError)."""
        call_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        try:
            self._send({"jsonrpc": "2.0", "id": call_id, "method": method, "params": params or {}})
            await self._writer.drain()
            return await future
        finally:
            self._pending.pop(call_id, None)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send without waiting for an answer (there is none)."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params or {}})

    # ---- in ----------------------------------------------------------------------------------

    async def serve(self) -> str:
        """Read and handle frames until the session ends; returns why it ended."""
        try:
            while True:
                line = await self._read_frame()
                if line.strip():
                    self._handle(line)
        except SessionEnded as exc:
            reason = str(exc)
        except (ConnectionError, asyncio.CancelledError) as exc:
            reason = f"connection lost ({type(exc).__name__})"
            if isinstance(exc, asyncio.CancelledError):
                self.close(reason)
                raise
        self.close(reason)
        return reason

    async def _read_frame(self) -> bytes:
        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                self._on_bad_frame(
                    f"a frame was cut off by the end of the stream: {exc.partial[:80]!r}"
                )
                raise SessionEnded("frame cut off at end of stream") from None
            raise SessionEnded("end of stream") from None
        except asyncio.LimitOverrunError:
            self._on_bad_frame(f"a frame is longer than the limit of {self._max_frame} bytes")
            raise SessionEnded(f"frame longer than {self._max_frame} bytes") from None

    def _handle(self, line: bytes) -> None:
        try:
            message = jsontext.parse(line, max_depth=MAX_FRAME_DEPTH)
        except jsontext.JsonRefused as exc:
            self._on_bad_frame(f"a frame is refused: {exc}: {line[:80]!r}")
            self._reply_error(None, PARSE_ERROR, f"frame refused: {exc}")
            return
        except (ValueError, UnicodeDecodeError) as exc:
            self._on_bad_frame(f"a frame is not JSON ({exc}): {line[:80]!r}")
            self._reply_error(None, PARSE_ERROR, f"frame is not JSON: {exc}")
            return
        if not isinstance(message, dict):
            self._on_bad_frame(f"a frame is not a JSON-RPC object: {line[:80]!r}")
            self._reply_error(None, INVALID_REQUEST, "a frame must be a JSON object")
            return
        try:
            jsontext.check(message, line, max_depth=MAX_FRAME_DEPTH)
        except jsontext.JsonRefused as exc:
            self._refuse(message, exc)
            return
        if "method" in message:
            self._start_request(message)
        elif "id" in message:
            self._resolve(message)
        else:
            self._on_bad_frame(f"a frame is neither a call nor an answer: {line[:80]!r}")
            self._reply_error(None, INVALID_REQUEST, "a frame needs 'method' or 'id'")

    def _refuse(self, message: dict[str, Any], exc: jsontext.JsonRefused) -> None:
        """A well-formed frame whose content the kernel does not take: the call it makes
        gets an error, or the call it answers fails."""
        self._on_bad_frame(f"a frame is refused: {exc}")
        call_id = message.get("id")
        if "method" in message:
            self._reply_error(call_id, INVALID_PARAMS, f"frame refused: {exc}")
            return
        future = self._pending.get(call_id) if isinstance(call_id, int) else None
        if future is None:
            self._reply_error(None, INVALID_REQUEST, f"frame refused: {exc}")
        elif not future.done():
            future.set_exception(RpcError(INVALID_PARAMS, f"the answer was refused: {exc}"))

    def _start_request(self, message: dict[str, Any]) -> None:
        call_id = message.get("id")
        method = message["method"]
        params = message.get("params", {})
        if not isinstance(method, str) or not isinstance(params, dict):
            self._on_bad_frame(f"malformed call {str(message)[:80]}")
            self._reply_error(
                call_id, INVALID_REQUEST, "'method' must be a string, 'params' an object"
            )
            return
        task = self._scope.spawn(self._run(call_id, method, params), name=f"{self.name}-{method}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, call_id: Any, method: str, params: dict[str, Any]) -> None:
        try:
            result = await self._dispatch(method, params)
        except RpcError as exc:
            if exc.code == METHOD_NOT_FOUND:
                self._on_bad_frame(f"unknown method {method!r}")
            self._reply_error(call_id, exc.code, exc.message)
            return
        except Exception as exc:
            log.debug("%s: %s failed", self.name, method, exc_info=True)
            self._reply_error(
                call_id, INTERNAL_ERROR, f"{method} failed: {type(exc).__name__}: {exc}"
            )
            return
        if call_id is not None and self.closed is None:
            self._send({"jsonrpc": "2.0", "id": call_id, "result": result})

    def _reply_error(self, call_id: Any, code: int, message: str) -> None:
        if self.closed is None and (call_id is not None or code in (PARSE_ERROR, INVALID_REQUEST)):
            with contextlib.suppress(RpcError, ConnectionError, RuntimeError):
                self._send(
                    {"jsonrpc": "2.0", "id": call_id, "error": {"code": code, "message": message}}
                )

    def _resolve(self, message: dict[str, Any]) -> None:
        future = self._pending.get(message["id"]) if isinstance(message["id"], int) else None
        if future is None:
            if message["id"] is not None:
                self._on_bad_frame(f"an answer to no pending call: {str(message)[:80]}")
            else:
                error = message.get("error") or {}
                self._on_bad_frame(f"the other side refused a frame: {error.get('message')}")
            return
        if future.done():
            return
        error = message.get("error")
        if error is not None:
            code = error.get("code", INTERNAL_ERROR) if isinstance(error, dict) else INTERNAL_ERROR
            text = error.get("message", str(error)) if isinstance(error, dict) else str(error)
            future.set_exception(RpcError(code, str(text)))
        else:
            future.set_result(message.get("result"))

    def close(self, reason: str) -> None:
        """Fail every pending call with `reason`; later calls fail at once."""
        if self.closed is None:
            self.closed = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RpcError(PEER_GONE, f"{self.name}: {reason}"))
        for task in list(self._tasks):
            task.cancel()
