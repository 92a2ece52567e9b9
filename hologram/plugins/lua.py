"""Lua plugins: `main.lua` in the sandboxed runtime the LLM adapters use (spec 000: Lua
script plugin loading).

The script runs once, at load. Its `sdk.register_tool(name, description, parameters, fn)`
and `sdk.register_stage(stage, fn[, scope])` calls are only buffered then (and checked
against the manifest's capabilities); `start` registers them with the kernel. A Lua error in
a handler stays in that call: the tool answers with an error, the stage host reports a
failed handler, and the plugin keeps serving.

A stage handler gets the stage context as a table and changes it in place; the fields it
changed are written back through the stage's rights.

Inside a handler the script reaches the rest of the SDK through host functions, each
checked against the manifest when called: `sdk.memory.recall(query[, top])`,
`sdk.memory.commit(text)`, `sdk.knowledge.search/get/list/create`, `sdk.social.person/
trait/relations/persons` (social memory is read-only here, as for every external plugin),
`sdk.inject_input(text, channel)`, `sdk.inject_interrupt(text, channel[, level])` (L1
unless given), `sdk.inject_input_sync(text, channel)`, their media forms
`sdk.inject_input_media(text, channel, media)`, `sdk.inject_input_media_sync(text, channel,
media)` and `sdk.inject_interrupt_media(text, channel, media[, level])`, where each media item
is `{bytes = <a Lua string>, type = "image/png"}` (Lua strings are bytes; the type is only a
claim the kernel checks), `{data = <base64>}` or `{digest = "<sha256>"}`;
`sdk.media_bytes(digest)` (capability `media_read`) answers `{bytes, type, size, digest}`;
and a tool returns media as `{text = ..., media = {<items>}}`. The LLM surface external plugins
get (`sdk.llm.list_sources()`, `sdk.llm.current_source()`, `sdk.llm.set_source(name)`; no
`chat`, which only a built-in has: `hologram.plugins.llm_surface`). They run asynchronously
on the kernel's loop while the script's coroutine waits; a refusal is a Lua error the script
may `pcall`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hologram.llm import LuaSandbox
from hologram.plugins.bridge import (
    context_to_json,
    field_from_json,
    media_of_items,
    tool_output_of,
)
from hologram.plugins.kernel_sdk import KernelSDK
from hologram.plugins.manifest import Manifest
from hologram.plugins.narrow import check, check_write
from hologram.plugins.surfaces import SocialSurface
from hologram.sdk import (
    Capability,
    HandlerScope,
    Priority,
    Stage,
    ToolDef,
    ToolError,
    ToolOutput,
)

_HOST_CAPABILITIES: dict[str, Capability] = {
    "memory.recall": Capability.MEMORY,
    "memory.commit": Capability.MEMORY,
    **{f"knowledge.{n}": Capability.KNOWLEDGE for n in ("search", "get", "list", "create")},
    **{f"social.{n}": Capability.SOCIAL for n in (*SocialSurface.READS, *SocialSurface.WRITES)},
    "inject_input": Capability.INJECT,
    "inject_interrupt": Capability.INJECT,
    "inject_input_sync": Capability.INJECT,
    "inject_input_media": Capability.INJECT,
    "inject_input_media_sync": Capability.INJECT,
    "inject_interrupt_media": Capability.INJECT,
    "media_bytes": Capability.MEDIA_READ,
    **{f"llm.{n}": Capability.LLM for n in ("list_sources", "current_source", "set_source")},
}
"""The SDK calls a Lua handler can make (beyond registering), with the capability each needs."""

_MEDIA_CALLS = frozenset(
    {"inject_input_media", "inject_input_media_sync", "inject_interrupt_media"}
)

# A Lua string that is not UTF-8 cannot cross into Python as it is (the runtime decodes every
# string it hands over), so the `bytes` of a media item cross as hex, made by one gsub in C:
# no per-byte Lua code, so a photo costs the instruction budget next to nothing. Bytes going
# the other way (media_bytes) need no such step. The chunk returns its helpers to the host
# only; scripts see the wrapped sdk functions.
_MEDIA_WRAPPERS = """
local HEX = {}
for i = 0, 255 do HEX[string.char(i)] = string.format("%02x", i) end
local function frames(media)
  if type(media) ~= "table" then return media end
  local out = json.array({})
  for i, item in ipairs(media) do
    if type(item) == "table" and type(item.bytes) == "string" then
      local copy = {}
      for k, v in pairs(item) do copy[k] = v end
      copy.bytes = nil
      copy.hex = (item.bytes:gsub(".", HEX))
      item = copy
    end
    out[i] = item
  end
  return out
end
local input, sync, interrupt =
  sdk.inject_input_media, sdk.inject_input_media_sync, sdk.inject_interrupt_media
sdk.inject_input_media = function(text, channel, media, ...)
  return input(text, channel, frames(media), ...)
end
sdk.inject_input_media_sync = function(text, channel, media, ...)
  return sync(text, channel, frames(media), ...)
end
sdk.inject_interrupt_media = function(text, channel, media, ...)
  return interrupt(text, channel, frames(media), ...)
end
local function tool(fn)
  return function(...)
    local result = fn(...)
    if type(result) == "table" and type(result.media) == "table" then
      local copy = {}
      for k, v in pairs(result) do copy[k] = v end
      copy.media = frames(result.media)
      result = copy
    end
    return result
  end
end
return tool
"""


@dataclass(slots=True)
class _Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    fn: Any


@dataclass(slots=True)
class _Stage:
    stage: Stage
    fn: Any
    scope: HandlerScope


class LuaPlugin:
    def __init__(self, manifest: Manifest, folder: Path) -> None:
        self.manifest = manifest
        self.folder = folder
        self.sandbox = LuaSandbox(f"plugin.{manifest.name}")
        self._tools: list[_Tool] = []
        self._stages: list[_Stage] = []
        self._sdk: KernelSDK | None = None
        surface: dict[str, Any] = {
            "register_tool": self._buffer_tool,
            "register_stage": self._buffer_stage,
            "setting": self._setting,
            "publish": self._publish,
        }
        for name in _HOST_CAPABILITIES:
            space, _, method = name.rpartition(".")
            table = surface.setdefault(space, {}) if space else surface
            table[method] = self.sandbox.host_function(f"sdk.{name}")
        self.sandbox.set_global("sdk", surface)
        self._media_tool = self.sandbox.load(_MEDIA_WRAPPERS, "hologram/sdk-media")
        source = (folder / manifest.entry).read_text(encoding="utf-8")
        self.sandbox.load(source, f"{manifest.name}/{manifest.entry}")

    @property
    def name(self) -> str:
        return self.manifest.name

    # ---- what the script calls --------------------------------------------------------------

    def _check(self, capability: Capability) -> None:
        check(self.name, self.manifest.capabilities, capability)

    def _buffer_tool(self, name: str, description: str, parameters: Any, fn: Any) -> None:
        self._check(Capability.TOOLS)
        schema = self.sandbox.to_python(parameters) if parameters is not None else {}
        if not schema:
            schema = {"type": "object", "properties": {}}
        ToolDef(str(name), str(description), schema)  # checks the name and schema now
        self._tools.append(_Tool(str(name), str(description), schema, fn))

    def _buffer_stage(self, stage: str, fn: Any, scope: str | None = None) -> None:
        self._check(Capability.STAGES)
        self._stages.append(_Stage(Stage(stage), fn, HandlerScope(scope or "global")))

    def _setting(self, key: str) -> Any:
        self._check(Capability.SETTINGS)
        if self._sdk is None:
            raise RuntimeError("settings are readable once the plugin has started")
        return self.sandbox.to_lua(self._sdk.settings.get(str(key)))

    def _publish(self, *_: Any) -> None:
        self._check(Capability.PUBLISH)

    async def _host(self, name: str, args: list[Any]) -> Any:
        """One host function call from a handler: checked, then run on the kernel's SDK."""
        method = name.removeprefix("sdk.")
        capability = _HOST_CAPABILITIES[method]
        self._check(capability)
        if method.removeprefix("social.") in SocialSurface.WRITES:
            check_write(self.name, capability, name)
        sdk = self._sdk
        if sdk is None:
            raise RuntimeError(f"plugin {self.name!r} is not running")
        space, _, call = method.rpartition(".")
        if space:
            return await getattr(getattr(sdk, space), call)(*args)
        if call == "inject_interrupt":
            text, channel, *rest = args
            return await sdk.inject_interrupt(text, channel, Priority(rest[0] if rest else 1))
        if call in _MEDIA_CALLS:
            text, channel, media, *rest = args
            items = media_of_items(_unhex(media), raw=True)
            if call == "inject_interrupt_media":
                level = Priority(rest[0] if rest else 1)
                return await sdk.inject_interrupt_media(text, channel, items, level)
            return await getattr(sdk, call)(text, channel, items)
        if call == "media_bytes":
            (digest,) = args
            data, mime = await sdk.media_bytes(digest)
            return {"digest": digest, "type": mime, "size": len(data), "bytes": data}
        return await getattr(sdk, call)(*args)

    # ---- the Plugin protocol ----------------------------------------------------------------

    async def start(self, sdk: KernelSDK) -> None:
        self._sdk = sdk
        for tool in self._tools:
            sdk.register_tool(
                ToolDef(tool.name, tool.description, tool.parameters, handler=self._tool(tool))
            )
        for index, stage in enumerate(self._stages):
            sdk.register_stage(
                stage.stage, self._stage(stage), stage.scope, label=f"lua#{index}:{stage.stage}"
            )

    async def stop(self) -> None:
        self._sdk = None

    def _tool(self, tool: _Tool) -> Any:
        sandbox = self.sandbox

        fn = self._media_tool(tool.fn)

        async def run(arguments: dict[str, Any]) -> str | ToolOutput:
            result = sandbox.to_python(
                await sandbox.call(fn, sandbox.to_lua(arguments), host=self._host)
            )
            if result is None or isinstance(result, str):
                return result or ""
            if isinstance(result, dict) and "media" in result:
                # {text = ..., media = {{type = "image/png", bytes = <bytes>}}}: the shape
                # of a subprocess plugin's result with media, raw bytes allowed.
                try:
                    return tool_output_of(_unhex(result), raw=True)
                except ValueError as exc:
                    raise ToolError(f"the plugin's result: {exc}") from None
            return json.dumps(result, ensure_ascii=False)

        return run

    def _stage(self, stage: _Stage) -> Any:
        sandbox = self.sandbox

        async def run(view: Any) -> None:
            before = context_to_json(view)
            table = sandbox.to_lua(before)
            await sandbox.call(stage.fn, table, host=self._host)
            after = sandbox.to_python(table)
            for field, value in after.items():
                if (
                    field in before
                    and value != before[field]
                    and not _empty_alike(value, before[field])
                ):
                    setattr(view, field, field_from_json(field, value))

        return run


def _unhex(value: Any) -> Any:
    """Media items (or a tool result holding them) with the `hex` the wrappers made turned
    back into `bytes`."""
    if isinstance(value, dict) and isinstance(value.get("media"), list):
        return {**value, "media": _unhex(value["media"])}
    if not isinstance(value, list):
        return value
    items = []
    for index, item in enumerate(value):
        if isinstance(item, dict) and "hex" in item:
            try:
                data = bytes.fromhex(item["hex"])
            except (TypeError, ValueError):
                raise ValueError(f"media item {index}: 'hex' is not hex digits") from None
            item = {k: v for k, v in item.items() if k != "hex"} | {"bytes": data}
        items.append(item)
    return items


def _empty_alike(a: Any, b: Any) -> bool:
    # An empty Lua table cannot say whether it was [] or {}: treat the two as unchanged.
    return a in ({}, []) and b in ({}, [])
