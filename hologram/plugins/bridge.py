"""The kernel's side of the SDK calls a plugin makes by name (spec 000: the proc bridge).

`Dispatcher.call` serves every entry of `hologram.sdk.SDK_CALLS` one way, for subprocess
plugins (over JSON-RPC) and Lua plugins (through the sandbox) alike: the capability it needs
checked against what the manifest granted, the arguments bound to the protocol's signature
and converted by their types, the `KernelSDK` method called, its answer converted back. A
transport says only how media and the plugin's own code cross it. `Bridge` (JSON-RPC) sends
bytes as base64 and binds what the plugin registers to proxies that call back over the same
connection: a tool call becomes `tool.call`, a stage run `stage.run` (the context goes out
as JSON, the changed fields come back and are written through the stage's rights), an
output send `output.send`, an event `event`, a wake-up `plugin.wake`.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence, Set
from typing import Any

from hologram.media import MediaError
from hologram.plugins.kernel_sdk import KernelSDK
from hologram.plugins.narrow import check, check_write
from hologram.plugins.rpc import (
    CAPABILITY_REFUSED,
    DEFAULT_MAX_FRAME,
    HANDLER_ERROR,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    Peer,
    RpcError,
)
from hologram.sdk import (
    SDK_CALLS,
    Capability,
    CapabilityError,
    Event,
    EventHandler,
    MediaData,
    MediaItems,
    MediaRef,
    MemItem,
    OutputHandler,
    Priority,
    SdkCall,
    StageContext,
    StageHandler,
    ToolCall,
    ToolDef,
    ToolError,
    ToolOutput,
    ToolResult,
    WakeHandler,
    to_wire,
)

log = logging.getLogger(__name__)

WITHHELD_NAMESPACES: dict[str, Capability] = {
    "sdk.tools.": Capability.TOOL_TABLE,
    "sdk.tracker.": Capability.TRACKER,
    "sdk.status.": Capability.STATUS,
    "sdk.supervisor.": Capability.SUPERVISOR,
    "sdk.adapter.": Capability.ADAPTER,
    "sdk.selftest.": Capability.SELFTEST,
}
"""Internal surfaces: any method under them is refused by name, whatever follows the dot."""

UNSUBSCRIBE = "sdk.unsubscribe"
"""The one RPC method beside the table: `subscribe`'s answer (the function that ends the
subscription) stays in the kernel, and the plugin ends it by the key it subscribed with."""

_TOOL_OPTIONS = frozenset({"no_memory", "timeout", "optional", "touches_files"})
"""What a plugin may set of its tool beyond name, description and parameters."""


class Dispatcher:
    """SDK calls by name into one plugin's `KernelSDK`, within the capabilities `granted`."""

    def __init__(self, sdk: KernelSDK, granted: Set[Capability]) -> None:
        self.sdk = sdk
        self.granted = granted

    @property
    def name(self) -> str:
        return self.sdk.name

    async def call(self, entry: SdkCall, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        """Checked before the arguments are even read: a refused call says only that."""
        if entry.capability is not None:
            check(self.name, self.granted, entry.capability)
            if entry.writes:
                check_write(self.name, entry.capability, f"sdk.{entry.name}")
        given = entry.signature.bind(*args, **kwargs).arguments
        arguments = {name: self.argument(entry.hints[name], v, given) for name, v in given.items()}
        owner = getattr(self.sdk, entry.surface) if entry.surface else self.sdk
        result = getattr(owner, entry.attr)(**arguments)
        if inspect.isawaitable(result):
            result = await result
        return self.result(entry.hints["return"], result, given)

    def argument(self, hint: Any, value: Any, given: Mapping[str, Any]) -> Any:
        """One argument as the plugin sent it, as the SDK takes it."""
        if value is None:
            return None
        if hint is Priority:
            return Priority(value)
        if hint == MediaItems:
            return self.media(value)
        return value

    def media(self, items: Any) -> list[MediaData | MediaRef]:
        return media_of_items(items)

    def result(self, hint: Any, value: Any, given: Mapping[str, Any]) -> Any:
        """The SDK's answer as it goes back to the plugin."""
        if hint == tuple[bytes, str]:
            data, mime = value
            return self.media_answer(given["digest"], data, mime)
        return value

    def media_answer(self, digest: str, data: bytes, mime: str) -> dict[str, Any]:
        return {"digest": digest, "type": mime, "size": len(data), "bytes": data}


class Bridge(Dispatcher):
    """A subprocess plugin's calls over JSON-RPC (`dispatch`), and the proxies through which
    the kernel calls what it registered."""

    def __init__(self, sdk: KernelSDK, granted: Set[Capability]) -> None:
        super().__init__(sdk, granted)
        self.peer: Peer | None = None
        self._subscriptions: dict[str, Callable[[], None]] = {}
        self._callbacks: dict[Any, Callable[[Any, Mapping[str, Any]], Any]] = {
            ToolDef: self._tool,
            StageHandler: self._stage,
            OutputHandler: self._output,
            EventHandler: self._forward,
            WakeHandler: self._wake,
        }

    def _peer(self) -> Peer:
        assert self.peer is not None
        return self.peer

    async def dispatch(self, method: str, params: dict[str, Any]) -> Any:
        try:
            if method == UNSUBSCRIBE:
                check(self.name, self.granted, Capability.EVENTS)
                return self._unsubscribe(**params)
            return await self.call(self._entry(method), (), params)
        except CapabilityError as exc:
            log.warning("plugin %s: %s refused: %s", self.name, method, exc)
            raise RpcError(CAPABILITY_REFUSED, str(exc)) from None
        except (TypeError, ValueError, PermissionError, LookupError) as exc:
            raise RpcError(INVALID_PARAMS, f"{method}: {exc}") from None
        except MediaError as exc:
            # The plugin's media was refused (type, size, digest): its mistake to fix. Bytes
            # damaged in the store are the kernel's.
            log.info("plugin %s: %s refused media: %s", self.name, method, exc)
            code = INTERNAL_ERROR if exc.status >= 500 else INVALID_PARAMS
            raise RpcError(code, f"{method}: {exc}") from None

    def _entry(self, method: str) -> SdkCall:
        """The table's entry for RPC method `method`; a withheld surface is refused naming
        its capability, anything else unknown is "method not found"."""
        entry = SDK_CALLS.get(method.removeprefix("sdk.")) if method.startswith("sdk.") else None
        if entry is not None:
            return entry
        for prefix, capability in WITHHELD_NAMESPACES.items():
            if method.startswith(prefix):
                check(self.name, self.granted, capability)  # withheld: always refused
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method!r}")

    def argument(self, hint: Any, value: Any, given: Mapping[str, Any]) -> Any:
        make = self._callbacks.get(hint)
        return super().argument(hint, value, given) if make is None else make(value, given)

    def result(self, hint: Any, value: Any, given: Mapping[str, Any]) -> Any:
        if hint == Callable[[], None]:  # a subscription, ended by its key (UNSUBSCRIBE)
            self._subscriptions[given["handler"]] = value
            return None
        return super().result(hint, value, given)

    def media_answer(self, digest: str, data: bytes, mime: str) -> dict[str, Any]:
        # The plugin's runtime reads frames up to DEFAULT_MAX_FRAME: a longer answer would
        # end its session, so it is refused here, saying why.
        encoded = 4 * ((len(data) + 2) // 3)
        if encoded + 1024 > DEFAULT_MAX_FRAME:
            raise ValueError(
                f"media {digest[:12]} has {len(data)} bytes, more than one frame to a "
                f"plugin carries ({DEFAULT_MAX_FRAME} bytes of base64)"
            )
        text = base64.b64encode(data).decode("ascii")
        return {"digest": digest, "type": mime, "size": len(data), "data": text}

    # ---- proxies for what the plugin registers: its code stays in its process ------------

    def _tool(self, fields: Any, given: Mapping[str, Any]) -> ToolDef:
        if not isinstance(fields, dict) or not isinstance(fields.get("name"), str):
            raise ValueError("'tool' is an object with a 'name', 'description' and 'parameters'")
        unknown = set(fields) - _TOOL_OPTIONS - {"name", "description", "parameters"}
        if unknown:
            raise ValueError(
                f"a tool has no field {sorted(unknown)}; it may set {sorted(_TOOL_OPTIONS)}"
            )
        name = fields["name"]

        async def call_plugin(arguments: dict[str, Any]) -> str | ToolOutput:
            params = {"name": name, "arguments": arguments, "context": self.sdk.call_context()}
            try:
                result = await self._peer().call("tool.call", params)
            except RpcError as exc:
                if exc.code == HANDLER_ERROR:
                    raise ToolError(exc.message) from None
                raise ToolError(
                    f"plugin {self.name!r} could not run {name}: {exc.message}"
                ) from None
            return tool_output_of(result)

        return ToolDef(
            name,
            str(fields.get("description", "")),
            fields.get("parameters") or {"type": "object", "properties": {}},
            handler=call_plugin,
            no_memory=bool(fields.get("no_memory", False)),
            timeout=fields.get("timeout"),
            optional=frozenset(fields.get("optional") or ()),
            touches_files=bool(fields.get("touches_files", False)),
        )

    def _stage(self, key: str, given: Mapping[str, Any]) -> StageHandler:
        peer, stage = self._peer(), given["stage"]

        async def run_in_plugin(view: Any) -> None:
            answer = await peer.call(
                "stage.run", {"handler": key, "stage": stage, "ctx": context_to_json(view)}
            )
            for field, value in ((answer or {}).get("changes") or {}).items():
                setattr(view, field, field_from_json(field, value))

        run_in_plugin.__qualname__ = str(key)  # the stage host names the handler by it
        return run_in_plugin

    def _output(self, channel: str, given: Mapping[str, Any]) -> OutputHandler:
        peer = self._peer()

        async def send(payload: str, meta: dict[str, Any], type: str) -> str:
            receipt = await peer.call(
                "output.send", {"channel": channel, "payload": payload, "meta": meta, "type": type}
            )
            return "" if receipt is None else str(receipt)

        return send

    def _forward(self, subscription: str, given: Mapping[str, Any]) -> EventHandler:
        peer = self._peer()

        def forward(event: Event) -> None:
            if peer.closed is None:
                peer.notify("event", {"subscription": subscription, "event": event_to_json(event)})

        return forward

    def _wake(self, _: str, given: Mapping[str, Any]) -> WakeHandler:
        peer = self._peer()

        def wake(key: str) -> None:
            if peer.closed is None:
                peer.notify("plugin.wake", {"key": key})

        return wake

    def _unsubscribe(self, subscription: str) -> None:
        unsubscribe = self._subscriptions.pop(subscription, None)
        if unsubscribe is not None:
            unsubscribe()

    def detach(self) -> None:
        self._subscriptions.clear()


def media_item(index: int, item: Any, *, raw: bool = False) -> MediaData | MediaRef:
    """One media item a plugin sent: `{"type": mime, "data": base64, "name": …}` (the
    type is only a claim, checked against the bytes), or `{"digest": …}` for media already
    stored. `raw` (Lua, whose strings are bytes) also takes `{"type": mime, "bytes": …}`.
    A malformed item raises `ValueError` naming it, before anything is stored."""
    if not isinstance(item, dict):
        raise ValueError(f"media item {index} must be an object with 'data' or 'digest'")
    kinds = [k for k in ("data", "bytes", "digest") if k in item]
    if len(kinds) != 1 or (kinds[0] == "bytes" and not raw):
        wanted = "'data' (base64), 'bytes' (raw) or 'digest'" if raw else "'data' or 'digest'"
        raise ValueError(f"media item {index} needs exactly one of {wanted}")
    mime, name = item.get("type", ""), item.get("name", "")
    if not isinstance(mime, str) or not isinstance(name, str):
        raise ValueError(f"media item {index}: 'type' and 'name' are strings")
    kind = kinds[0]
    value = item[kind]
    if kind == "digest":
        if not isinstance(value, str):
            raise ValueError(f"media item {index}: 'digest' is a string")
        try:
            return MediaRef(value, "", 0, name=name)
        except ValueError as exc:
            raise ValueError(f"media item {index}: {exc}") from None
    if kind == "bytes":
        # A Lua string arrives as bytes, or as text when it happened to be valid UTF-8.
        if isinstance(value, str):
            value = value.encode("utf-8", "surrogateescape")
        if not isinstance(value, bytes | bytearray):
            raise ValueError(f"media item {index}: 'bytes' is a string of bytes")
        return MediaData(bytes(value), mime, name)
    if not isinstance(value, str):
        raise ValueError(f"media item {index}: 'data' is base64 text")
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"media item {index}: 'data' is not base64") from None
    return MediaData(data, mime, name)


def media_of_items(items: Any, *, raw: bool = False) -> list[MediaData | MediaRef]:
    """A plugin's list of media items (see `media_item`), all decoded before any is
    stored."""
    if not isinstance(items, list):
        raise ValueError("'media' must be a list of {type, data} objects")
    return [media_item(index, item, raw=raw) for index, item in enumerate(items)]


def tool_output_of(result: Any, *, raw: bool = False) -> str | ToolOutput:
    """A plugin's `tool.call` result: text, or `{"text": …, "media": [{"type": mime,
    "data": base64, "name": …}]}` for a result with media (spec: SetToolBlocks). Media that
    is not that shape is refused here, before anything is stored."""
    if isinstance(result, str):
        return result
    if not isinstance(result, dict) or "media" not in result:
        return str(result)
    try:
        media = media_of_items(result["media"], raw=raw)
    except ValueError as exc:
        raise ToolError(f"the plugin's result: {exc}") from None
    return ToolOutput(str(result.get("text", "")), tuple(media))


# ---- the stage context as JSON ----------------------------------------------------------------

_CONTEXT_FIELDS = [f.name for f in dataclasses.fields(StageContext)]


def _plain(value: Any) -> Any:
    if isinstance(value, ToolCall | ToolResult | MemItem):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def context_to_json(view: Any) -> dict[str, Any]:
    return {name: _plain(getattr(view, name)) for name in _CONTEXT_FIELDS}


def field_from_json(field: str, value: Any) -> Any:
    """A changed field as it came back from a plugin, as the context holds it."""
    if field not in _CONTEXT_FIELDS:
        raise ValueError(f"StageContext has no field {field!r}")
    if value is None:
        return None
    if field == "tool_call":
        return ToolCall(**value)
    if field == "tool_calls":
        return [ToolCall(**v) for v in value]
    if field == "tool_result":
        return _tool_result(value)
    if field == "tool_results":
        return [_tool_result(v) for v in value]
    return value


def _tool_result(value: dict[str, Any]) -> ToolResult:
    media = tuple(MediaRef.from_dict(m) for m in value.get("media") or ())
    return ToolResult(**{**value, "media": media})


def event_to_json(event: Event) -> dict[str, Any]:
    return {
        "type": str(event.type),
        "payload": to_wire(event.payload),
        "source": event.source,
        "timestamp": event.timestamp,
        "seq": event.seq,
    }
