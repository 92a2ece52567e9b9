"""Lua plugins: `main.lua` in the sandboxed runtime the LLM adapters use (spec 000: Lua
script plugin loading).

The script runs once, at load. Its `sdk.register_tool(name, description, parameters, fn)`
and `sdk.register_stage(stage, fn[, scope])` calls are only buffered then (and checked
against the manifest's capabilities); `start` registers them with the kernel. A Lua error in
a handler stays in that call: the tool answers with an error, the stage host reports a
failed handler, and the plugin keeps serving.

A stage handler gets the stage context as a table and changes it in place; the fields it
changed are written back through the stage's rights.

Inside a handler the script reaches the rest of the SDK through host functions, one for each
call of `hologram.sdk.SDK_CALLS` that carries no code of the plugin's (its protocol's
arguments in order), each checked against the manifest when called: `sdk.memory.recall(query[,
top])`, `sdk.memory.commit(text)`, `sdk.knowledge.search/get/list/create`, `sdk.social.person/
trait/relations/persons` (social memory is read-only here, as for every external plugin),
`sdk.settings.get/set/list/resolved`, `sdk.report_status(status[, message, level])`,
`sdk.log(message[, level])`, `sdk.llm.list_sources/current_source/set_source` (no `chat`,
which only a built-in has: `hologram.plugins.llm_surface`). A call's keyword-only arguments
come as a trailing table: `sdk.inject(text, channel, {level = 2, media = {...}, wait = true})`,
and the spec's names for it are there too: `sdk.inject_input(text, channel)`,
`sdk.inject_interrupt(text, channel[, level])` (L1 unless given), `sdk.inject_input_sync`,
`sdk.inject_input_media(text, channel, media)`, `sdk.inject_input_media_sync` and
`sdk.inject_interrupt_media(text, channel, media[, level])`. Each media item is
`{bytes = <a Lua string>, type = "image/png"}` (Lua strings are bytes; the type is only a
claim the kernel checks), `{data = <base64>}` or `{digest = "<sha256>"}`;
`sdk.media_bytes(digest)` (capability `media_read`) answers `{bytes, type, size, digest}`;
and a tool returns media as `{text = ..., media = {<items>}}`. They run asynchronously on the
kernel's loop while the script's coroutine waits; a refusal is a Lua error the script may
`pcall`.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hologram.llm import LuaSandbox
from hologram.plugins.bridge import (
    Dispatcher,
    context_to_json,
    field_from_json,
    media_of_items,
    tool_output_of,
)
from hologram.plugins.kernel_sdk import KernelSDK
from hologram.plugins.manifest import Manifest
from hologram.plugins.narrow import check
from hologram.sdk import (
    SDK_CALLS,
    Capability,
    HandlerScope,
    MediaData,
    MediaRef,
    SdkCall,
    Stage,
    ToolDef,
    ToolError,
    ToolOutput,
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
local inject = sdk.inject
function sdk.inject(text, channel, options)
  if type(options) == "table" and options.media ~= nil then
    local copy = {}
    for k, v in pairs(options) do copy[k] = v end
    copy.media = frames(options.media)
    options = copy
  end
  return inject(text, channel, options)
end
-- The spec's names for inject (InjectInput, InjectInterrupt, ...).
function sdk.inject_input(text, channel) return sdk.inject(text, channel) end
function sdk.inject_input_sync(text, channel) return sdk.inject(text, channel, {wait = true}) end
local function interrupt_level(level)
  if level == 0 then
    error("an interrupt has a level L1-L4; leave the level out for queued input", 3)
  end
  return level or 1
end
function sdk.inject_interrupt(text, channel, level)
  return sdk.inject(text, channel, {level = interrupt_level(level)})
end
function sdk.inject_input_media(text, channel, media)
  return sdk.inject(text, channel, {media = media})
end
function sdk.inject_input_media_sync(text, channel, media)
  return sdk.inject(text, channel, {media = media, wait = true})
end
function sdk.inject_interrupt_media(text, channel, media, level)
  return sdk.inject(text, channel, {media = media, level = interrupt_level(level)})
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
        self._dispatcher: _LuaDispatcher | None = None
        surface: dict[str, Any] = {
            "register_tool": self._buffer_tool,
            "register_stage": self._buffer_stage,
            "setting": self._setting,
        }
        for entry in SDK_CALLS.values():
            if not entry.callbacks:  # a handler cannot cross: only the two buffered above
                table = surface.setdefault(entry.surface, {}) if entry.surface else surface
                table[entry.attr] = self.sandbox.host_function(f"sdk.{entry.name}")
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

    async def _host(self, name: str, args: list[Any]) -> Any:
        """One host function call from a handler, served by the one dispatcher."""
        if self._dispatcher is None:
            raise RuntimeError(f"plugin {self.name!r} is not running")
        entry = SDK_CALLS[name.removeprefix("sdk.")]
        positional, keywords = _lua_arguments(entry, args)
        return await self._dispatcher.call(entry, positional, keywords)

    # ---- the Plugin protocol ----------------------------------------------------------------

    async def start(self, sdk: KernelSDK) -> None:
        self._sdk = sdk
        self._dispatcher = _LuaDispatcher(sdk, self.manifest.capabilities)
        for tool in self._tools:
            sdk.register_tool(
                ToolDef(tool.name, tool.description, tool.parameters, handler=self._tool(tool))
            )
        for index, stage in enumerate(self._stages):
            sdk.register_stage(
                stage.stage, self._stage(stage), stage.scope, label=f"lua#{index}:{stage.stage}"
            )

    async def stop(self) -> None:
        self._sdk = self._dispatcher = None

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


class _LuaDispatcher(Dispatcher):
    """Lua's strings are bytes: media crosses raw (as hex, see _MEDIA_WRAPPERS), not base64."""

    def media(self, items: Any) -> list[MediaData | MediaRef]:
        return media_of_items(_unhex(items), raw=True)


def _lua_arguments(entry: SdkCall, args: list[Any]) -> tuple[list[Any], dict[str, Any]]:
    """A Lua call's arguments: in order, and a trailing table for the keyword-only ones."""
    kinds = [p.kind for p in entry.signature.parameters.values()]
    in_order = kinds.count(inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if inspect.Parameter.KEYWORD_ONLY in kinds and len(args) > in_order:
        *args, options = args
        if options in ({}, []):  # an empty Lua table: no options
            return args, {}
        if not isinstance(options, dict):
            raise ValueError(f"sdk.{entry.name}: its options are a table of names, not {options!r}")
        return args, options
    return args, {}


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
