"""The kernel's side of a subprocess plugin's RPC (spec 000: the proc bridge).

`Bridge.dispatch` answers the plugin's calls into the SDK, each checked against its granted
capabilities first; what the plugin registers is bound to proxies that call back over the
same connection: a tool call becomes `tool.call`, a stage run `stage.run` (the context goes
out as JSON, the changed fields come back and are written through the stage's rights), an
output send `output.send`, an event `event`, a wake-up `plugin.wake`.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import logging
from collections.abc import Callable, Set
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
from hologram.plugins.surfaces import SocialSurface
from hologram.sdk import (
    Capability,
    CapabilityError,
    Event,
    MediaData,
    MediaRef,
    MemItem,
    Priority,
    StageContext,
    ToolCall,
    ToolDef,
    ToolError,
    ToolOutput,
    ToolResult,
)

log = logging.getLogger(__name__)

METHODS: dict[str, Capability | None] = {
    "sdk.log": None,
    "sdk.report_status": None,
    "sdk.register_tool": Capability.TOOLS,
    "sdk.unregister_tools": Capability.TOOLS,
    "sdk.register_stage": Capability.STAGES,
    "sdk.register_output_channel": Capability.OUTPUT_CHANNELS,
    "sdk.subscribe": Capability.EVENTS,
    "sdk.unsubscribe": Capability.EVENTS,
    "sdk.inject_input": Capability.INJECT,
    "sdk.inject_interrupt": Capability.INJECT,
    "sdk.inject_input_sync": Capability.INJECT,
    "sdk.inject_input_media": Capability.INJECT,
    "sdk.inject_input_media_sync": Capability.INJECT,
    "sdk.inject_interrupt_media": Capability.INJECT,
    "sdk.media_bytes": Capability.MEDIA_READ,
    "sdk.settings.get": Capability.SETTINGS,
    "sdk.settings.set": Capability.SETTINGS,
    "sdk.settings.list": Capability.SETTINGS,
    "sdk.settings.resolved": Capability.SETTINGS,
    "sdk.wake_after": Capability.TIMERS,
    "sdk.memory.recall": Capability.MEMORY,
    "sdk.memory.commit": Capability.MEMORY,
    "sdk.knowledge.search": Capability.KNOWLEDGE,
    "sdk.knowledge.get": Capability.KNOWLEDGE,
    "sdk.knowledge.list": Capability.KNOWLEDGE,
    "sdk.knowledge.create": Capability.KNOWLEDGE,
    **{f"sdk.social.{name}": Capability.SOCIAL for name in SocialSurface.READS},
    **{f"sdk.social.{name}": Capability.SOCIAL for name in SocialSurface.WRITES},
    "sdk.llm.list_sources": Capability.LLM,
    "sdk.llm.current_source": Capability.LLM,
    "sdk.llm.set_source": Capability.LLM,
    "sdk.publish": Capability.PUBLISH,
}
"""Every method a plugin may call (spec: protocol.go), with the capability it needs."""

WITHHELD_NAMESPACES: dict[str, Capability] = {
    "sdk.tools.": Capability.TOOL_TABLE,
    "sdk.tracker.": Capability.TRACKER,
    "sdk.status.": Capability.STATUS,
    "sdk.supervisor.": Capability.SUPERVISOR,
    "sdk.adapter.": Capability.ADAPTER,
    "sdk.selftest.": Capability.SELFTEST,
}
"""Internal surfaces: any method under them is refused by name, whatever follows the dot."""


def capability_of(method: str) -> Capability | None:
    if method in METHODS:
        return METHODS[method]
    for prefix, capability in WITHHELD_NAMESPACES.items():
        if method.startswith(prefix):
            return capability
    raise RpcError(METHOD_NOT_FOUND, f"method not found: {method!r}")


class Bridge:
    def __init__(self, sdk: KernelSDK, granted: Set[Capability]) -> None:
        self.sdk = sdk
        self.granted = granted
        self.peer: Peer | None = None
        self._subscriptions: dict[str, Callable[[], None]] = {}

    @property
    def name(self) -> str:
        return self.sdk.name

    def _peer(self) -> Peer:
        assert self.peer is not None
        return self.peer

    async def dispatch(self, method: str, params: dict[str, Any]) -> Any:
        capability = capability_of(method)
        if capability is not None:
            try:
                check(self.name, self.granted, capability)
                if method.removeprefix("sdk.social.") in SocialSurface.WRITES:
                    check_write(self.name, capability, method)
            except CapabilityError as exc:
                log.warning("plugin %s: %s refused: %s", self.name, method, exc)
                raise RpcError(CAPABILITY_REFUSED, str(exc)) from None
        handler = getattr(self, "_" + method.removeprefix("sdk.").replace(".", "_"))
        try:
            return await handler(**params)
        except TypeError as exc:
            raise RpcError(INVALID_PARAMS, f"{method}: {exc}") from None
        except (ValueError, PermissionError, LookupError) as exc:
            raise RpcError(INVALID_PARAMS, f"{method}: {exc}") from None
        except MediaError as exc:
            # The plugin's media was refused (type, size, digest): its mistake to fix. Bytes
            # damaged in the store are the kernel's.
            log.info("plugin %s: %s refused media: %s", self.name, method, exc)
            code = INTERNAL_ERROR if exc.status >= 500 else INVALID_PARAMS
            raise RpcError(code, f"{method}: {exc}") from None

    # ---- registration -----------------------------------------------------------------------

    async def _register_tool(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any] | None = None,
        no_memory: bool = False,
        timeout: float | None = None,  # noqa: ASYNC109  (the tool's timeout, a field)
        optional: list[str] | None = None,
        touches_files: bool = False,
    ) -> None:
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

        tool = ToolDef(
            name,
            description,
            parameters or {"type": "object", "properties": {}},
            handler=call_plugin,
            no_memory=no_memory,
            timeout=timeout,
            optional=frozenset(optional or ()),
            touches_files=bool(touches_files),
        )
        self.sdk.register_tool(tool)

    async def _unregister_tools(self, names: list[str]) -> list[str]:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError("'names' must be a list of tool names")
        return self.sdk.unregister_tools(names)

    async def _report_status(
        self, status: dict[str, Any], message: str = "", level: str = "info"
    ) -> None:
        if not isinstance(message, str):
            raise ValueError("'message' must be a string")
        self.sdk.report_status(status, message, level)

    async def _register_stage(self, stage: str, handler: str, scope: str = "global") -> None:
        peer = self._peer()

        async def run_in_plugin(view: Any) -> None:
            answer = await peer.call(
                "stage.run", {"handler": handler, "stage": stage, "ctx": context_to_json(view)}
            )
            for field, value in ((answer or {}).get("changes") or {}).items():
                setattr(view, field, field_from_json(field, value))

        self.sdk.register_stage(stage, run_in_plugin, scope, label=handler)

    async def _register_output_channel(
        self, name: str, caps: int, description: str, meta_doc: str = ""
    ) -> None:
        peer = self._peer()

        async def send(payload: str, meta: dict[str, Any], type: str) -> str:
            receipt = await peer.call(
                "output.send", {"channel": name, "payload": payload, "meta": meta, "type": type}
            )
            return "" if receipt is None else str(receipt)

        self.sdk.register_output_channel(name, caps, description, send, meta_doc=meta_doc)

    async def _subscribe(self, event_type: str | None, subscription: str) -> None:
        peer = self._peer()

        def forward(event: Event) -> None:
            if peer.closed is None:
                peer.notify("event", {"subscription": subscription, "event": event_to_json(event)})

        self._subscriptions[subscription] = self.sdk.subscribe(event_type, forward)

    async def _unsubscribe(self, subscription: str) -> None:
        unsubscribe = self._subscriptions.pop(subscription, None)
        if unsubscribe is not None:
            unsubscribe()

    async def _publish(self, **_: Any) -> None:  # refused by capability before it gets here
        raise RpcError(CAPABILITY_REFUSED, "publish is withheld")

    # ---- input, settings, clock -------------------------------------------------------------

    async def _inject_input(
        self, text: str, channel: str, user_id: str = "", security_profile: str = ""
    ) -> int:
        return await self.sdk.inject_input(
            text, channel, user_id=user_id, security_profile=security_profile
        )

    async def _inject_interrupt(
        self,
        text: str,
        channel: str,
        level: int = 1,
        user_id: str = "",
        security_profile: str = "",
    ) -> int:
        return await self.sdk.inject_interrupt(
            text, channel, Priority(level), user_id=user_id, security_profile=security_profile
        )

    async def _inject_input_sync(
        self, text: str, channel: str, user_id: str = "", security_profile: str = ""
    ) -> str:
        return await self.sdk.inject_input_sync(
            text, channel, user_id=user_id, security_profile=security_profile
        )

    async def _inject_input_media(
        self,
        text: str,
        channel: str,
        media: list[Any],
        user_id: str = "",
        security_profile: str = "",
    ) -> int:
        return await self.sdk.inject_input_media(
            text,
            channel,
            media_of_items(media),
            user_id=user_id,
            security_profile=security_profile,
        )

    async def _inject_input_media_sync(
        self,
        text: str,
        channel: str,
        media: list[Any],
        user_id: str = "",
        security_profile: str = "",
    ) -> str:
        return await self.sdk.inject_input_media_sync(
            text,
            channel,
            media_of_items(media),
            user_id=user_id,
            security_profile=security_profile,
        )

    async def _inject_interrupt_media(
        self,
        text: str,
        channel: str,
        media: list[Any],
        level: int = 1,
        user_id: str = "",
        security_profile: str = "",
    ) -> int:
        return await self.sdk.inject_interrupt_media(
            text,
            channel,
            media_of_items(media),
            Priority(level),
            user_id=user_id,
            security_profile=security_profile,
        )

    async def _media_bytes(self, digest: str) -> dict[str, Any]:
        data, mime = await self.sdk.media_bytes(digest)
        # The plugin's runtime reads frames up to DEFAULT_MAX_FRAME: a longer answer would
        # end its session, so it is refused here, saying why.
        encoded = 4 * ((len(data) + 2) // 3)
        if encoded + 1024 > DEFAULT_MAX_FRAME:
            raise ValueError(
                f"media {digest[:12]} has {len(data)} bytes, more than one frame to a "
                f"plugin carries ({DEFAULT_MAX_FRAME} bytes of base64)"
            )
        return {
            "digest": digest,
            "type": mime,
            "size": len(data),
            "data": base64.b64encode(data).decode("ascii"),
        }

    async def _settings_get(self, key: str, default: Any = None) -> Any:
        return self.sdk.settings.get(key, default)

    async def _settings_set(self, key: str, value: Any) -> None:
        await self.sdk.settings.set(key, value)

    async def _settings_list(self, prefix: str = "") -> dict[str, Any]:
        return self.sdk.settings.list(prefix)

    async def _settings_resolved(self, key: str, default: Any = None) -> Any:
        return self.sdk.settings.resolved(key, default)

    async def _wake_after(self, seconds: float, key: str) -> None:
        peer = self._peer()

        def wake(key: str) -> None:
            if peer.closed is None:
                peer.notify("plugin.wake", {"key": key})

        self.sdk.wake_after(seconds, key, wake)

    # ---- memory, knowledge, social (plain data both ways) ------------------------------------

    async def _llm_list_sources(self) -> list[dict[str, Any]]:
        return await self.sdk.llm.list_sources()

    async def _llm_current_source(self) -> str:
        return await self.sdk.llm.current_source()

    async def _llm_set_source(self, name: str) -> str:
        return await self.sdk.llm.set_source(name)

    async def _memory_recall(self, query: str, top: int = 5) -> list[dict[str, Any]]:
        return await self.sdk.memory.recall(query, top)

    async def _memory_commit(self, content: str) -> str:
        return await self.sdk.memory.commit(content)

    async def _knowledge_search(
        self, query: str, top: int = 5, category: str = ""
    ) -> list[dict[str, Any]]:
        return await self.sdk.knowledge.search(query, top, category)

    async def _knowledge_get(self, name: str) -> dict[str, Any]:
        return await self.sdk.knowledge.get(name)

    async def _knowledge_list(self, category: str = "") -> list[str]:
        return await self.sdk.knowledge.list(category)

    async def _knowledge_create(self, name: str, content: str, replace: bool = False) -> str:
        return await self.sdk.knowledge.create(name, content, replace)

    async def _social_person(self, name: str) -> dict[str, Any]:
        return await self.sdk.social.person(name)

    async def _social_trait(self, name: str, trait: str) -> Any:
        return await self.sdk.social.trait(name, trait)

    async def _social_relations(self, name: str) -> list[str]:
        return await self.sdk.social.relations(name)

    async def _social_persons(self, limit: int = 100) -> list[str]:
        return await self.sdk.social.persons(limit)

    async def _log(self, level: str, message: str) -> None:
        log.log(
            logging.getLevelName(level.upper()) if level else logging.INFO,
            "[%s] %s",
            self.name,
            message,
        )

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
        "payload": event.payload,
        "source": event.source,
        "timestamp": event.timestamp,
        "seq": event.seq,
    }
