"""An interrupt that declares no level is L1 (spec: "explicit is a privilege"), whichever way
a plugin raises it: a subprocess plugin through its runtime, a Lua plugin through its
sandbox, a built-in through the kernel SDK. The journal keeps the level the input runs at."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hologram import Kernel
from hologram.plugins import KernelSDK, PluginRegistry
from hologram.sdk import Priority, ToolCall

RUNTIME_PLUGIN = """
    from hologram.plugins.runtime import PluginApp

    app = PluginApp()

    @app.tool("Raise an interrupt.", {"type": "object", "properties": {}})
    async def nudge_raise(args):
        return str(await app.sdk.inject_interrupt("look at this", "notebook"))

    app.run()
"""

LUA_PLUGIN = """
sdk.register_tool("luanudge_raise", "Raise an interrupt.", nil, function(args)
  return tostring(sdk.inject_interrupt("look at this", "notebook"))
end)
"""


async def level_of(kernel: Kernel, input_id: int) -> Priority:
    assert kernel.state.scheduler is not None
    row = await kernel.state.scheduler.journal.get(input_id)
    assert row is not None
    return Priority(row["level"])


async def test_a_subprocess_plugins_undeclared_interrupt_level_is_l1(
    kernel: Kernel, registry: PluginRegistry, write_plugin: Callable[..., Path]
) -> None:
    await registry.load_dir(write_plugin("nudge", RUNTIME_PLUGIN, capabilities=["tools", "inject"]))

    result = await kernel.state.stagehost.execute(ToolCall("c", "nudge_raise", {}))

    assert not result.is_error, result.content
    assert await level_of(kernel, int(result.content)) is Priority.L1


async def test_a_lua_plugins_undeclared_interrupt_level_is_l1(
    kernel: Kernel, registry: PluginRegistry, write_plugin: Callable[..., Path]
) -> None:
    await registry.load_dir(
        write_plugin("luanudge", LUA_PLUGIN, entry="main.lua", capabilities=["tools", "inject"])
    )

    result = await kernel.state.stagehost.execute(ToolCall("c", "luanudge_raise", {}))

    assert not result.is_error, result.content
    assert await level_of(kernel, int(float(result.content))) is Priority.L1


async def test_a_built_in_plugins_undeclared_interrupt_level_is_l1(
    kernel: Kernel, registry: PluginRegistry
) -> None:
    sdk = KernelSDK("builtin_probe", registry.parts)

    input_id = await sdk.inject_interrupt("look at this", "notebook")

    assert await level_of(kernel, input_id) is Priority.L1


LUA_QUEUED_INTERRUPT = """
sdk.register_tool("luaqueued_raise", "Raise an interrupt at the queued level.", nil, function(args)
  return tostring(sdk.inject_interrupt("look at this", "notebook", 0))
end)
"""


async def test_a_lua_plugins_interrupt_at_the_queued_level_is_refused(
    kernel: Kernel, registry: PluginRegistry, write_plugin: Callable[..., Path]
) -> None:
    await registry.load_dir(
        write_plugin(
            "luaqueued", LUA_QUEUED_INTERRUPT, entry="main.lua", capabilities=["tools", "inject"]
        )
    )

    result = await kernel.state.stagehost.execute(ToolCall("c", "luaqueued_raise", {}))

    assert result.is_error and "an interrupt has a level L1-L4" in result.content
