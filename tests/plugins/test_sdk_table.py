"""The plugin SDK's one call table (`hologram.sdk.SDK_CALLS`), derived from the protocol: the
kernel's one dispatcher serves it to subprocess and Lua plugins, the plugin side's one proxy
makes its calls, and `inject` is one call with the spec's six names as aliases of it."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_type_hints

import pytest

from hologram import Kernel
from hologram.plugins import KernelSDK, PluginRegistry
from hologram.plugins.runtime import PluginApp
from hologram.sdk import SDK_CALLS, Capability, Injects, Priority, ToolCall

# ---- the table ------------------------------------------------------------------------------


def test_every_call_of_the_table_is_implemented_by_the_kernel_sdk() -> None:
    for entry in SDK_CALLS.values():
        owner: Any = KernelSDK
        if entry.surface:
            owner = get_type_hints(getattr(KernelSDK, entry.surface).fget)["return"]
        implemented = getattr(owner, entry.attr, None)
        assert implemented is not None, f"KernelSDK has no {entry.name}"
        names = set(inspect.signature(implemented).parameters)
        assert set(entry.signature.parameters) <= names, entry.name


def test_a_surface_property_puts_every_method_of_its_protocol_in_the_table_with_its_capability() -> (
    None
):
    assert SDK_CALLS["memory.recall"].capability is Capability.MEMORY
    assert SDK_CALLS["settings.resolved"].capability is Capability.SETTINGS
    assert SDK_CALLS["llm.set_source"].capability is Capability.LLM
    assert "llm.chat" not in SDK_CALLS, "asking the model is for built-ins only"
    writes = {e.name for e in SDK_CALLS.values() if e.writes}
    assert writes == {"social.set_trait", "social.relate"}
    assert SDK_CALLS["log"].capability is None and SDK_CALLS["report_status"].capability is None


def test_the_calls_that_carry_the_plugins_code_are_marked_as_callbacks() -> None:
    with_code = {e.name: e.callbacks for e in SDK_CALLS.values() if e.callbacks}
    assert with_code == {
        "register_tool": ("tool",),
        "register_stage": ("handler",),
        "subscribe": ("handler",),
        "register_output_channel": ("handler",),
        "wake_after": ("handler",),
    }


def test_the_spec_names_of_inject_are_aliases_not_calls_of_their_own() -> None:
    aliases = [name for name in vars(Injects) if name.startswith("inject_")]
    assert sorted(aliases) == [
        "inject_input",
        "inject_input_media",
        "inject_input_media_sync",
        "inject_input_sync",
        "inject_interrupt",
        "inject_interrupt_media",
    ]
    assert not [a for a in aliases if a in SDK_CALLS]
    assert all(getattr(KernelSDK, a) is getattr(Injects, a) for a in aliases)


# ---- inject --------------------------------------------------------------------------------


async def level_of(kernel: Kernel, input_id: int) -> Priority:
    assert kernel.state.scheduler is not None
    row = await kernel.state.scheduler.journal.get(input_id)
    assert row is not None
    return Priority(row["level"])


async def test_inject_without_a_level_is_queued_and_with_one_an_interrupt_a_plugins_l4_is_l3(
    kernel: Kernel, registry: PluginRegistry
) -> None:
    sdk = KernelSDK("builtin_probe", registry.parts)

    queued = await sdk.inject("later", "notebook")
    urgent = await sdk.inject("now", "notebook", level=Priority.L2)
    critical = await sdk.inject("now!", "notebook", level=4)

    assert isinstance(queued, int)
    assert await level_of(kernel, queued) is Priority.QUEUED
    assert await level_of(kernel, int(urgent)) is Priority.L2
    assert await level_of(kernel, int(critical)) is Priority.L3


async def test_an_interrupt_alias_with_the_queued_level_is_refused(
    kernel: Kernel, registry: PluginRegistry
) -> None:
    sdk = KernelSDK("builtin_probe", registry.parts)

    with pytest.raises(ValueError, match="an interrupt has a level L1-L4"):
        await sdk.inject_interrupt("x", "notebook", Priority.QUEUED)


RUNTIME_PLUGIN = """
    from hologram.plugins.runtime import PluginApp

    app = PluginApp()

    @app.tool("Call the SDK.", {"type": "object", "properties": {"how": {"type": "string"}}})
    async def table_run(args):
        try:
            if args["how"] == "inject":
                return str(await app.sdk.inject("look", "notebook", level=2))
            if args["how"] == "bogus":
                return str(await app.sdk.call("sdk.memory.recall", query="x", bogus=1))
            return str(await app.sdk.memory.recall("x", bogus=1))
        except Exception as exc:
            return f"refused: {type(exc).__name__}: {exc}"

    app.run()
"""

LUA_PLUGIN = """
sdk.register_tool("luatable_run", "Inject with a level.", nil, function(args)
  return tostring(sdk.inject("look", "notebook", {level = 2}))
end)
"""


async def test_a_subprocess_plugin_injects_an_interrupt_with_a_level(
    kernel: Kernel, registry: PluginRegistry, write_plugin: Callable[..., Path]
) -> None:
    caps = ["tools", "inject", "memory"]
    await registry.load_dir(write_plugin("table", RUNTIME_PLUGIN, capabilities=caps))

    result = await kernel.state.stagehost.execute(ToolCall("c", "table_run", {"how": "inject"}))
    bogus = await kernel.state.stagehost.execute(ToolCall("c", "table_run", {"how": "bogus"}))
    local = await kernel.state.stagehost.execute(ToolCall("c", "table_run", {"how": "local"}))

    assert await level_of(kernel, int(result.content)) is Priority.L2
    # A parameter the protocol does not name: refused by the kernel, naming the call...
    assert bogus.content.startswith("refused: RpcError: sdk.memory.recall:")
    assert "unexpected keyword argument 'bogus'" in bogus.content
    # ...and by the plugin's own proxy before anything is sent.
    assert local.content.startswith("refused: TypeError: sdk.memory.recall:")


async def test_a_lua_plugin_gives_keyword_arguments_as_a_trailing_table(
    kernel: Kernel, registry: PluginRegistry, write_plugin: Callable[..., Path]
) -> None:
    await registry.load_dir(
        write_plugin("luatable", LUA_PLUGIN, entry="main.lua", capabilities=["tools", "inject"])
    )

    result = await kernel.state.stagehost.execute(ToolCall("c", "luatable_run", {}))

    assert not result.is_error, result.content
    assert await level_of(kernel, int(float(result.content))) is Priority.L2


# ---- the plugin side's proxy ---------------------------------------------------------------


class _Peer:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        self.sent.append((method, params))
        return 1


def test_the_plugin_sides_aliases_send_one_inject_call() -> None:
    app = PluginApp()
    peer = app.peer = _Peer()  # type: ignore[assignment]

    async def calls() -> None:
        await app.sdk.inject_interrupt("a", "notebook")
        await app.sdk.inject_input_media_sync("b", "notebook", [b"png"], user_id="7")

    asyncio.run(calls())

    assert peer.sent == [
        ("sdk.inject", {"text": "a", "channel": "notebook", "level": Priority.L1}),
        (
            "sdk.inject",
            {
                "text": "b",
                "channel": "notebook",
                "media": [{"type": "", "data": "cG5n"}],
                "wait": True,
                "user_id": "7",
            },
        ),
    ]
