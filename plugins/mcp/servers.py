"""One MCP server as the plugin keeps it: its connection and its supervision.

A `Connection` runs as long as the plugin does. It connects with the official SDK's
`Client` (stdio: the server as a child process; streamable HTTP: a URL with headers),
offers the server's tools, and keeps them in step with the server (`tools/list_changed`,
through a `subscriptions/listen` stream on 2026 servers and the session's notifications on
older ones). It checks the server's health every `health_interval_s` (a tools listing with a
deadline); a server that is gone (its connection closed: a crash, a kill) or hung (no answer
in time) has its tools withdrawn, is announced, and is connected again after a backoff that
doubles up to a bound and starts again once a connection has held.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import httpx2
import mcp.types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from settings import ServerSpec
from wire import Refused, clean_schema, tool_name

from hologram.kernel.tasks import first_completed

log = logging.getLogger("mcp")

LAUNCH = (
    "import ctypes, os, signal, sys; "
    "ctypes.CDLL(None).prctl(1, signal.SIGKILL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)
"""The SDK starts a stdio server itself; these lines in front of it make the server die with
this plugin (Linux keeps the parent-death signal across exec), so none outlives it."""
LISTEN_ERA = "2026-07-28"
"""From this protocol version on, change notifications come on `subscriptions/listen`."""
STABLE_S = 30.0
"""A connection that held this long resets the backoff."""


# ---- what a connection needs of the plugin -------------------------------------------------------


class Host(Protocol):
    health_interval_s: float
    backoff_s: float
    backoff_max_s: float
    connect_timeout_s: float
    default_cwd: str

    async def offer(self, connection: Connection, kernel_name: str, tool: Any) -> None: ...

    async def withdraw(self, names: list[str]) -> None: ...

    async def changed(self, connection: Connection, message: str = "", level: str = "info") -> None:
        """The server's state changed: report it (with `message`, logged and published)."""
        ...


class Lost(Exception):
    """The connection is gone; the message says how."""


@dataclass
class Connection:
    spec: ServerSpec
    host: Host
    state: str = "connecting"
    error: str = ""
    restarts: int = 0
    bad_frames: int = 0
    protocol: str = ""
    capabilities: types.ServerCapabilities | None = None
    tools: dict[str, str] = field(default_factory=dict)
    """The kernel's name → the server's name, for the tools offered now."""
    refused: dict[str, str] = field(default_factory=dict)
    """Tools of the server that are not offered, and why."""
    attempted: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the first connection attempt has ended either way."""
    _client: Client | None = None
    _lost: asyncio.Event = field(default_factory=asyncio.Event)
    _lost_why: str = ""
    _relist: asyncio.Event = field(default_factory=asyncio.Event)
    _shapes: dict[str, str] = field(default_factory=dict)
    """What each offered tool was offered as (description and schema), to see a change."""

    @property
    def name(self) -> str:
        return self.spec.name

    def status(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "transport": self.spec.transport,
            "protocol": self.protocol,
            "tools": sorted(self.tools),
            "refused": dict(self.refused),
            "restarts": self.restarts,
            "bad_frames": self.bad_frames,
            "error": self.error,
        }

    # ---- supervision ------------------------------------------------------------------------

    async def run(self) -> None:
        backoff = self.host.backoff_s
        loop = asyncio.get_running_loop()
        while True:
            began = loop.time()
            try:
                await self._connected()
                why = "closed its connection"
            except Exception as exc:  # the SDK raises what its transport met: report, retry
                why = _describe(exc)
            self._client = None
            if loop.time() - began > STABLE_S:
                backoff = self.host.backoff_s
            # Reported before the tools go: the kernel's status of the server is what
            # `changed` sends, so a reader who sees the tools withdrawn also sees why.
            self.state, self.error = "restarting", why
            self.restarts += 1
            await self.host.changed(
                self,
                f"MCP server {self.name!r} {why}; its tools are withdrawn, reconnecting in "
                f"{backoff:g} s",
                "warning",
            )
            await self._withdraw_all()
            self.attempted.set()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.host.backoff_max_s)

    async def _connected(self) -> None:
        self.state, self._lost_why = "connecting", ""
        self._lost.clear()
        async with contextlib.AsyncExitStack() as stack:
            # No cancel scope around entering: the client opens a task group inside, which
            # must not outlive a scope it was opened in. Its own read timeout bounds the
            # handshake instead; each later request gets its own deadline.
            client = await stack.enter_async_context(self._client_for(stack))
            self._client = client
            self.protocol = client.protocol_version
            self.capabilities = client.server_capabilities
            await self._sync_tools(client)
            self.state, self.error = "ready", ""
            self.attempted.set()
            await self.host.changed(
                self, f"MCP server {self.name!r} ready: {len(self.tools)} tools"
            )
            await first_completed(
                self._watch_health(client), self._follow_changes(client), self._lost.wait()
            )
            raise Lost(self._lost_why or "closed its connection")

    def _client_for(self, stack: contextlib.AsyncExitStack) -> Client:
        spec = self.spec
        options: dict[str, Any] = {
            "read_timeout_seconds": self.host.connect_timeout_s,
            "message_handler": self._message,
            "cache": None,  # a health check must reach the server, not a cache
            "client_info": types.Implementation(name="hologram", version="1"),
        }
        if spec.url:
            http = httpx2.AsyncClient(headers=dict(spec.headers), timeout=spec.timeout_s + 5)
            stack.push_async_callback(http.aclose)
            return Client(streamable_http_client(spec.url, http_client=http), **options)
        cwd = spec.cwd or self.host.default_cwd
        program = shutil.which(spec.command, path=os.environ.get("PATH")) or (
            spec.command if os.path.isfile(os.path.join(cwd, spec.command)) else None
        )
        if program is None:
            raise FileNotFoundError(f"there is no program {spec.command!r} to start")
        command, args = program, list(spec.args)
        if sys.platform.startswith("linux"):
            command, args = sys.executable, ["-c", LAUNCH, program, *args]
        params = StdioServerParameters(command=command, args=args, env=dict(spec.env), cwd=cwd)
        return Client(params, **options)

    def lose(self, why: str) -> None:
        """Drop the connection now (a call found it closed); the supervisor reconnects."""
        if not self._lost.is_set():
            self._lost_why = why
            self._lost.set()

    async def _watch_health(self, client: Client) -> None:
        while True:
            await asyncio.sleep(self.host.health_interval_s)
            try:
                with anyio.fail_after(self.spec.timeout_s):
                    listed = await client.list_tools()
            except TimeoutError:
                raise Lost(f"did not answer for {self.spec.timeout_s:g} s (hung)") from None
            except MCPError as exc:
                raise Lost(_describe(exc)) from None
            known = {n for n in self.tools.values() if n} | set(self.refused)
            if {t.name for t in listed.tools} != known:
                self._relist.set()  # changed without a word: follow it anyway

    async def _follow_changes(self, client: Client) -> None:
        """Re-list the tools whenever the server says (or the health check sees) they
        changed."""
        if self.protocol >= LISTEN_ERA and self._advertises_list_changed():
            await first_completed(self._listen(client), self._relist_loop(client))
        else:
            await self._relist_loop(client)

    def _advertises_list_changed(self) -> bool:
        tools = self.capabilities.tools if self.capabilities is not None else None
        return bool(tools is not None and tools.list_changed)

    async def _listen(self, client: Client) -> None:
        async with client.listen(tools_list_changed=True) as events:
            async for _ in events:
                self._relist.set()
        await asyncio.Event().wait()  # the stream ended gracefully: rely on health checks

    async def _relist_loop(self, client: Client) -> None:
        while True:
            await self._relist.wait()
            self._relist.clear()
            await self._sync_tools(client)
            await self.host.changed(self, f"MCP server {self.name!r} changed its tools")

    async def _message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.bad_frames += 1
            if self.bad_frames <= 10 or self.bad_frames % 100 == 0:  # a flood: not every one
                first = (str(message).splitlines() or [""])[0][:200]
                await self.host.changed(
                    self,
                    f"MCP server {self.name!r} sent a frame that is not MCP (ignored, "
                    f"{self.bad_frames} so far): {first}",
                    "warning",
                )
            return
        # On a 2026 connection the same notification is also teed here from the listen
        # stream, which `_listen` already follows.
        if isinstance(message, types.ToolListChangedNotification) and self.protocol < LISTEN_ERA:
            self._relist.set()

    # ---- tools ------------------------------------------------------------------------------

    async def _sync_tools(self, client: Client) -> None:
        listed = await _all_tools(client)
        wanted: dict[str, Any] = {}
        refused: dict[str, str] = {}
        for tool in listed:
            try:
                name = tool_name(self.name, tool.name)
                if name in wanted or name in self._reserved():
                    raise Refused(f"its name collides with {name}")
                clean_schema(tool.input_schema)
            except Refused as exc:
                refused[tool.name] = str(exc)
                continue
            wanted[name] = tool
        for original, why in refused.items():
            if self.refused.get(original) != why:
                log.warning("MCP server %r: tool %r not offered: %s", self.name, original, why)
        self.refused = refused
        gone = [n for n in self.tools if n not in wanted]
        await self.host.withdraw(gone)
        for name in gone:
            self.tools.pop(name, None)
            self._shapes.pop(name, None)
        for name, tool in wanted.items():
            shape = json.dumps([tool.description, tool.input_schema], sort_keys=True, default=str)
            if name in self.tools and self._shapes.get(name) == shape:
                continue
            if name in self.tools:
                await self.host.withdraw([name])  # offered again, as it is described now
                self.tools.pop(name)
            try:
                await self.host.offer(self, name, tool)
            except Exception as exc:  # the kernel refused it (an invalid schema): say why
                self.refused[tool.name] = f"the kernel refused it: {exc}"
                log.warning("MCP server %r: tool %r not offered: %s", self.name, tool.name, exc)
                continue
            self.tools[name] = tool.name
            self._shapes[name] = shape
        for extra in self._extras():
            if extra not in self.tools:
                await self.host.offer(self, extra, None)
                self.tools[extra] = ""

    def _reserved(self) -> set[str]:
        return {tool_name(self.name, "resources"), tool_name(self.name, "prompts")}

    def _extras(self) -> list[str]:
        caps = self.capabilities
        extras = []
        if caps is not None and caps.resources is not None:
            extras.append(tool_name(self.name, "resources"))
        if caps is not None and caps.prompts is not None:
            extras.append(tool_name(self.name, "prompts"))
        return extras

    async def _withdraw_all(self) -> None:
        names = list(self.tools)
        self.tools.clear()
        self._shapes.clear()
        if names:
            await self.host.withdraw(names)

    # ---- calls ------------------------------------------------------------------------------

    def client(self) -> Client:
        if self._client is None or self.state != "ready":
            raise Unavailable(
                f"MCP server {self.name!r} is {self.state}"
                + (f" ({self.error})" if self.error else "")
                + "; try again shortly"
            )
        return self._client

    async def call(self, what: str, work: Callable[[Client], Awaitable[Any]]) -> Any:
        """Run one request to the server within its timeout; a closed connection is handed
        to the supervisor at once, not left to the next health check."""
        client = self.client()
        try:
            with anyio.fail_after(self.spec.timeout_s):
                return await work(client)
        except TimeoutError:
            raise TimeoutError(
                f"MCP server {self.name!r} did not answer {what} within {self.spec.timeout_s:g} s"
            ) from None
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                self.lose("closed its connection during a call")
                raise Unavailable(
                    f"MCP server {self.name!r} went away during {what}; it is being restarted"
                ) from None
            if exc.code == types.REQUEST_TIMEOUT:
                raise TimeoutError(
                    f"MCP server {self.name!r} did not answer {what} in time"
                ) from None
            raise ServerError(f"MCP server {self.name!r}: {exc.message}") from None


class Unavailable(RuntimeError):
    """The server cannot take a call now."""


class ServerError(RuntimeError):
    """The server answered a request with an error."""


async def _all_tools(client: Client) -> list[Any]:
    tools: list[Any] = []
    cursor = None
    for _ in range(100):  # a paginator that never ends must not hang the plugin
        page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return _describe(exc.exceptions[0])
    if isinstance(exc, Lost):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return "did not finish connecting in time"
    if isinstance(exc, MCPError):
        return f"failed: {exc.message}"
    if isinstance(exc, FileNotFoundError):
        return f"could not start: {exc}"
    if isinstance(exc, OSError):
        return f"could not be reached: {exc}"
    return f"failed: {type(exc).__name__}: {exc}"
