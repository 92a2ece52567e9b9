"""pluginmgr through a turn with the scripted model: the agent installs a `.hmap` from a
path in the sandbox, disables, reloads, lists with health and uninstalls it; an outsider
may not, and pluginmgr never stops itself."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from hologram.plugins import PluginRegistry, State, build_package
from tests.agent.test_turn_pipeline import offered, tool_messages

LUA = """
sdk.register_tool("pkg_ping", "Answer pong.", nil, function(args) return "pong" end)
"""


async def use(kernel: Kernel, model: ScriptedModelServer, tool: str, **args: object) -> str:
    model.queue_tool_call(tool, dict(args)).queue_text("done")
    await kernel.say(f"please use {tool}")
    return str(tool_messages(model.last_request)[-1]["content"])


async def test_the_agent_installs_disables_reloads_and_uninstalls_a_plugin(
    kernel: Kernel,
    model: ScriptedModelServer,
    registry: PluginRegistry,
    write_plugin: Callable[..., Path],
) -> None:
    package = kernel.data_dir / "workspace" / "pkg.hmap"
    package.parent.mkdir(exist_ok=True)
    package.write_bytes(build_package(write_plugin("pkg", LUA, entry="main.lua")))

    installed = await use(kernel, model, "pluginmgr_install", path=str(package))
    assert installed.startswith("installed pkg (running)") and "pkg_ping" in installed
    model.queue_tool_call("pkg_ping", {}).queue_text("it said pong")
    assert await kernel.say("ping it") == "it said pong"
    assert "pkg_ping" in offered(model.requests[-2])

    assert "pkg disabled" in await use(kernel, model, "pluginmgr_disable", name="pkg")
    assert registry.get("pkg").state is State.STOPPED
    assert "pkg_ping" not in offered(model.last_request)

    assert "pkg reloaded; state running" in await use(kernel, model, "pluginmgr_reload", name="pkg")
    listing = json.loads(await use(kernel, model, "pluginmgr_list"))
    (row,) = [r for r in listing["plugins"] if r["name"] == "pkg"]
    assert (row["state"], row["restarts"], row["error"]) == ("running", 0, "")

    assert await use(kernel, model, "pluginmgr_uninstall", name="pkg") == "pkg uninstalled"
    assert "pkg" not in registry.names()
    assert not (kernel.data_dir / "plugins" / "pkg").exists()


async def test_a_refused_package_comes_back_with_the_registrys_reason(
    kernel: Kernel, model: ScriptedModelServer, tmp_path: Path
) -> None:
    bad = kernel.data_dir / "workspace" / "bad.hmap"
    bad.parent.mkdir(exist_ok=True)
    bad.write_bytes(b"not a zip")
    outside = tmp_path / "elsewhere.hmap"
    outside.write_bytes(b"not a zip either")

    answer = await use(kernel, model, "pluginmgr_install", path=str(bad))
    refused = await use(kernel, model, "pluginmgr_install", path=str(outside))

    assert answer.startswith("package refused:")
    assert refused.startswith("refused by the security firewall")


async def test_pluginmgr_never_stops_itself(kernel: Kernel, model: ScriptedModelServer) -> None:
    answer = await use(kernel, model, "pluginmgr_disable", name="pluginmgr")

    assert "cannot change itself" in answer
    assert "pluginmgr_list" in offered(model.last_request)


async def test_pluginmgr_is_private_to_the_owner(
    kernel: Kernel, model: ScriptedModelServer, registry: PluginRegistry
) -> None:
    model.queue_tool_call("pluginmgr_disable", {"name": "seq"}).queue_text("done")

    await kernel.say("turn seq off", "qq")

    assert "private to the owner" in tool_messages(model.last_request)[-1]["content"]
    assert registry.get("seq").state is State.RUNNING
