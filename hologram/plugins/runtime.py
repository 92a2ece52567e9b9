"""The plugin side of a subprocess plugin: a plain Python script against the SDK.

    from hologram.plugins.runtime import PluginApp

    app = PluginApp()

    @app.tool("Echo the text back.", {"type": "object", "properties": {"text": {"type": "string"}}})
    def echo_say(args):
        return args["text"]

    @app.stage("before_output")
    def sign(ctx):
        ctx["final_text"] += " -- echo"

    app.run()

`run()` speaks the kernel's protocol on stdin/stdout (so `print` goes to stderr, which the
kernel logs), registers what the decorators declared when the kernel starts the plugin, and
exits when the kernel closes stdin or dies. Inside handlers, `app.sdk` calls into the kernel,
each call within the manifest's capabilities and made from the SDK's one call table
(`hologram.sdk.SDK_CALLS`): `await app.sdk.inject(text, channel, level=2)`,
`await app.sdk.settings.get(...)`, `await app.sdk.memory.recall(...)`,
`await app.sdk.knowledge.search(...)`, `await app.sdk.social.person(...)`.
`await app.sdk.inject(text, channel, media=[png_bytes], wait=True)` starts a turn whose
model request shows the media and waits for its reply (the spec's names are there too:
`inject_input`, `inject_interrupt`, `inject_input_sync`, `inject_input_media`,
`inject_input_media_sync`, `inject_interrupt_media`); items are bytes, `(bytes, mime)` or
`{"digest": …}` and cross as base64. `await app.sdk.media_bytes(digest)` reads stored media
back as `(bytes, mime)` (capability `media_read`).
A tool handler returns text, or `tool_media(text, png_bytes, …)` for a result with media.
`app.call_context()` is what the kernel's firewall says of the tool call being handled
(its principal, the network switch, the sandbox roots), for a tool that must honour them
itself; `app.spawn(coro)` runs background work that ends when the plugin stops.

Only the standard library, `hologram.sdk` and `hologram.plugins.rpc` are imported here: a
plugin process does not load the kernel.
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import copy
import inspect
import itertools
import os
import sys
import types
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from hologram.kernel import KernelTasks, first_completed
from hologram.plugins.rpc import (
    DEFAULT_MAX_FRAME,
    HANDLER_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    PROTOCOL_VERSION,
    Peer,
    RpcError,
)
from hologram.sdk import SDK_CALLS, Injects, MediaItems, SdkCall

Handler = Callable[..., Any]


async def _call(handler: Handler, *args: Any) -> Any:
    result = handler(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


Media = bytes | tuple[bytes, str] | dict[str, Any]
"""One media item a plugin hands the kernel: bytes, `(bytes, mime)` to claim a type (the
kernel checks the claim against the bytes), or `{"digest": …}` for media already stored."""


def media_frames(media: Any) -> list[dict[str, Any]]:
    """Media items as they cross the pipe: `{"type": mime, "data": base64}` (or
    `{"digest": …}`)."""
    if isinstance(media, bytes | bytearray | str | tuple | dict):
        raise TypeError("media is a list of items: bytes, (bytes, mime) or {'digest': …}")
    items = []
    for index, item in enumerate(media):
        if isinstance(item, dict):
            items.append(item)
            continue
        data, mime = item if isinstance(item, tuple) else (item, "")
        if not isinstance(data, bytes | bytearray) or not isinstance(mime, str):
            raise TypeError(f"media item {index}: give bytes or (bytes, mime)")
        items.append({"type": mime, "data": base64.b64encode(data).decode("ascii")})
    return items


def tool_media(text: str, *media: Media) -> dict[str, Any]:
    """A tool result with media, as a tool handler returns it: `text` for the model and
    each image or file as bytes, or `(bytes, mime)` to claim a type (the kernel checks the
    claim against the bytes). The kernel stores them and shows them to the model."""
    return {"text": text, "media": media_frames(list(media))}


def tool_wire(result: Any) -> Any:
    """What goes back for `tool.call`: text, or the `{text, media}` object of `tool_media`."""
    if isinstance(result, dict) and "media" in result:
        return result
    return "" if result is None else result if isinstance(result, str) else str(result)


def _proxy(entry: SdkCall) -> Callable[..., Awaitable[Any]]:
    """The plugin side of one call of the table: bound to the protocol's signature, so a
    wrong argument fails here, with the protocol's names, before anything is sent."""

    async def call(sdk: RemoteSDK, *args: Any, **kwargs: Any) -> Any:
        try:
            given = entry.signature.bind(*args, **kwargs).arguments
        except TypeError as exc:
            raise TypeError(f"sdk.{entry.name}: {exc}") from None
        return await sdk._call(entry, given)

    me = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    # What inspect and help() show of the call; functions take the attribute at run time.
    call.__signature__ = entry.signature.replace(  # type: ignore[attr-defined]
        parameters=[me, *entry.signature.parameters.values()]
    )
    call.__name__ = call.__qualname__ = entry.attr
    call.__doc__ = entry.doc
    return call


class _Surface:
    """One surface of the kernel's SDK (`app.sdk.memory`, `.settings`…): its calls."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<sdk.{self.name}: {', '.join(k for k in vars(self) if k != 'name')}>"

    if TYPE_CHECKING:
        # Its calls are set from the table at run time; to a checker each is a coroutine.
        def __getattr__(self, name: str) -> Callable[..., Coroutine[Any, Any, Any]]: ...


class RemoteSDK(Injects):
    """The kernel's SDK, reached over the connection; every method is a coroutine. Each call
    of `hologram.sdk.SDK_CALLS` that carries no code of the plugin's is made from the table
    (`inject` and its spec names, `media_bytes`, `report_status`, `log`, the `settings`,
    `memory`, `knowledge`, `social` and `llm` surfaces); those that register a handler are
    written here, since the handler stays in this process and the kernel calls it back."""

    inject: Callable[..., Coroutine[Any, Any, int | str]]
    """Made from the table like the other calls; declared for the aliases of `Injects`."""
    # The rest of the table's calls and surfaces, declared for a checker of plugin code.
    media_bytes: Callable[..., Coroutine[Any, Any, tuple[bytes, str]]]
    report_status: Callable[..., Coroutine[Any, Any, None]]
    log: Callable[..., Coroutine[Any, Any, None]]
    settings: _Surface
    memory: _Surface
    knowledge: _Surface
    social: _Surface
    llm: _Surface

    def __init__(self, app: PluginApp) -> None:
        self._app = app
        self._ids = itertools.count(1)
        for entry in SDK_CALLS.values():
            if entry.callbacks or (not entry.surface and entry.attr in vars(RemoteSDK)):
                continue
            owner: Any = self
            if entry.surface:
                owner = vars(self).get(entry.surface) or _Surface(entry.surface)
                setattr(self, entry.surface, owner)
            setattr(owner, entry.attr, types.MethodType(_proxy(entry), self))

    async def call(self, method: str, **params: Any) -> Any:
        """Any RPC method by its name (`sdk.memory.recall`), with its parameters as sent."""
        return await self._app.peer.call(method, params)

    async def _call(self, entry: SdkCall, given: dict[str, Any]) -> Any:
        params = {
            name: self._frames(entry, value) if entry.hints[name] == MediaItems else value
            for name, value in given.items()
        }
        answer = await self.call(f"sdk.{entry.name}", **params)
        if entry.hints["return"] == tuple[bytes, str]:
            return base64.b64decode(answer["data"]), str(answer["type"])
        return answer

    def _frames(self, entry: SdkCall, media: Any) -> list[dict[str, Any]]:
        frames = media_frames(media)
        # A frame past the kernel's limit would end this plugin's session: refused here,
        # before it is sent, so the plugin keeps its connection.
        size = sum(len(f.get("data", "")) for f in frames)
        limit = self._app.max_frame
        if size + 1024 > limit:
            raise ValueError(
                f"sdk.{entry.name}: {size} bytes of base64 media is more than one frame to "
                f"the kernel carries ({limit} bytes, core.plugins.max_frame_bytes)"
            )
        return frames

    async def register_tool(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        handler: Handler,
        **options: Any,
    ) -> None:
        """`options`: `no_memory`, `timeout`, `optional`, `touches_files` (see ToolDef)."""
        self._app.tools[name] = handler
        tool = {"name": name, "description": description, "parameters": parameters, **options}
        await self.call("sdk.register_tool", tool=tool)

    async def unregister_tools(self, names: list[str]) -> list[str]:
        """Withdraw tools this plugin registered; returns the names that were removed."""
        for name in names:
            self._app.tools.pop(name, None)
        return await self.call("sdk.unregister_tools", names=list(names))

    async def register_stage(self, stage: str, handler: Handler, scope: str = "global") -> None:
        key = f"{getattr(handler, '__name__', 'handler')}#{next(self._ids)}"
        self._app.stages[key] = handler
        await self.call("sdk.register_stage", stage=stage, handler=key, scope=scope)

    async def register_output_channel(
        self, name: str, caps: int, description: str, handler: Handler, meta_doc: str = ""
    ) -> None:
        self._app.channels[name] = handler
        await self.call(
            "sdk.register_output_channel",
            name=name,
            caps=caps,
            description=description,
            handler=name,
            meta_doc=meta_doc,
        )

    async def subscribe(self, event_type: str | None, handler: Handler) -> str:
        """Returns the subscription's key; `call("sdk.unsubscribe", subscription=key)` ends it."""
        key = f"sub#{next(self._ids)}"
        self._app.subscriptions[key] = handler
        await self.call("sdk.subscribe", event_type=event_type, handler=key)
        return key

    async def wake_after(self, seconds: float, key: str, handler: Handler) -> None:
        """`handler(key)` runs once `seconds` have passed on the kernel's clock."""
        self._app.wakes[key] = handler
        await self.call("sdk.wake_after", seconds=seconds, key=key, handler=key)


class PluginApp:
    def __init__(self, protocol: int = PROTOCOL_VERSION) -> None:
        self.protocol = protocol
        self.name = ""
        self.settings: dict[str, Any] = {}
        self.data_dir = ""
        """A folder of this plugin's own under the kernel's data dir (set at init)."""
        self.max_frame = DEFAULT_MAX_FRAME
        """The longest frame the kernel reads from this plugin (set at init)."""
        self.tools: dict[str, Handler] = {}
        self.stages: dict[str, Handler] = {}
        self.channels: dict[str, Handler] = {}
        self.subscriptions: dict[str, Handler] = {}
        self.wakes: dict[str, Handler] = {}
        self.sdk = RemoteSDK(self)
        self.tasks = KernelTasks().scope("plugin")
        self._call_context: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar(
            "hologram_plugin_call_context"
        )
        self._declared: list[Callable[[], Any]] = []
        self._on_start: list[Handler] = []
        self._on_stop: list[Handler] = []
        self._done = asyncio.Event()
        # Connected by run() before the kernel can make any call that reaches it.
        self.peer: Peer = None  # type: ignore[assignment]

    # ---- declaring --------------------------------------------------------------------------

    def tool(
        self, description: str, parameters: dict[str, Any] | None = None, **options: Any
    ) -> Callable[[Handler], Handler]:
        """Register the decorated function (its name is the tool's) when the plugin starts."""

        def declare(handler: Handler) -> Handler:
            schema = parameters or {"type": "object", "properties": {}}
            self._declared.append(
                lambda: self.sdk.register_tool(
                    handler.__name__, description, schema, handler, **options
                )
            )
            return handler

        return declare

    def stage(self, stage: str, scope: str = "global") -> Callable[[Handler], Handler]:
        """The decorated function gets the stage context as a dict; what it changes in the
        dict is sent back (the kernel applies what the stage's rights allow)."""

        def declare(handler: Handler) -> Handler:
            self._declared.append(lambda: self.sdk.register_stage(stage, handler, scope))
            return handler

        return declare

    def on_start(self, handler: Handler) -> Handler:
        self._on_start.append(handler)
        return handler

    def on_stop(self, handler: Handler) -> Handler:
        self._on_stop.append(handler)
        return handler

    def spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        """Background work of this plugin; cancelled when the plugin stops. A failure is
        logged (to stderr, which the kernel's log keeps)."""
        return self.tasks.spawn(coro, name=name)

    def call_context(self) -> dict[str, Any]:
        """The kernel's word on the tool call being handled: `principal`, `internal`,
        `network` (the switch for this input) and `read_roots` / `write_roots` (the
        sandbox). Empty outside a tool call."""
        return self._call_context.get({})

    # ---- answering the kernel ---------------------------------------------------------------

    async def dispatch(self, method: str, params: dict[str, Any]) -> Any:
        if method == "handshake":
            return {"protocol": self.protocol, "pid": os.getpid()}
        if method == "plugin.init":
            self.name = params.get("name", "")
            self.settings = params.get("settings", {})
            self.data_dir = params.get("data_dir", "")
            self.max_frame = int(params.get("max_frame", DEFAULT_MAX_FRAME))
            return {}
        if method == "plugin.start":
            for declare in self._declared:
                await declare()
            for handler in self._on_start:
                await _call(handler, self.sdk)
            return {}
        if method == "plugin.stop":
            for handler in self._on_stop:
                await _call(handler)
            await self.tasks.close()
            asyncio.get_running_loop().call_later(0.05, self._done.set)
            return {}
        if method == "tool.call":
            self._call_context.set(params.get("context") or {})
            result = await self._handled(
                self.tools, params["name"], params.get("arguments", {}), raw=True
            )
            return tool_wire(result)
        if method == "stage.run":
            return await self._run_stage(params)
        if method == "output.send":
            return await self._handled(
                self.channels, params["channel"], params["payload"], params["meta"], params["type"]
            )
        if method == "event":
            subscriber = self.subscriptions.get(params.get("subscription", ""))
            if subscriber is not None:
                await _call(subscriber, params["event"])
            return None
        if method == "plugin.wake":
            woken = self.wakes.pop(params.get("key", ""), None)
            if woken is not None:
                await _call(woken, params["key"])
            return None
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method!r}")

    async def _handled(
        self, table: dict[str, Handler], key: str, *args: Any, raw: bool = False
    ) -> Any:
        handler = table.get(key)
        if handler is None:
            raise RpcError(INVALID_PARAMS, f"{self.name}: nothing registered as {key!r}")
        try:
            result = await _call(handler, *args)
        except RpcError:
            raise
        except Exception as exc:
            raise RpcError(HANDLER_ERROR, f"{type(exc).__name__}: {exc}") from None
        if raw:
            return result
        return "" if result is None else result if isinstance(result, str) else str(result)

    async def _run_stage(self, params: dict[str, Any]) -> dict[str, Any]:
        handler = self.stages.get(params["handler"])
        if handler is None:
            raise RpcError(INVALID_PARAMS, f"no stage handler {params['handler']!r}")
        ctx = params["ctx"]
        before = copy.deepcopy(ctx)
        try:
            await _call(handler, ctx)
        except Exception as exc:
            raise RpcError(HANDLER_ERROR, f"{type(exc).__name__}: {exc}") from None
        return {"changes": {k: v for k, v in ctx.items() if before.get(k) != v}}

    # ---- running ----------------------------------------------------------------------------

    def run(self) -> None:
        asyncio.run(self.serve())

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        # The protocol owns the real stdout; anything the plugin prints goes to stderr.
        protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        reader = asyncio.StreamReader(limit=DEFAULT_MAX_FRAME)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, protocol_out
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        self.peer = Peer(
            reader, writer, self.dispatch, name=f"plugin {self.name or '?'}", tasks=self.tasks
        )
        # Stdin at end (the kernel closed it or died) or a stop: this process is finished.
        await first_completed(self.peer.serve(), self._done.wait())
        transport.close()
