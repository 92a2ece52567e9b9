"""What the hands plugins need of the host, through a real subprocess plugin: the firewall's
word on each call (principal, network switch, sandbox roots), tools withdrawn and back, a
status report (kept, logged, published), and the owner's secrets filled into the plugin's own
settings only."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from hologram.plugins import PluginRegistry
from hologram.sdk import EventType, ToolCall

from .conftest import Recorder, of

PROBE = """
    import json
    from hologram.plugins.runtime import PluginApp

    app = PluginApp()

    @app.tool("Say what the kernel told this call.")
    def probe_context(args):
        return json.dumps(app.call_context())

    @app.tool("Add a tool and withdraw another.")
    async def probe_swap(args):
        await app.sdk.register_tool("probe_extra", "An extra tool.", {"type": "object"},
                                    lambda a: "extra")
        removed = await app.sdk.unregister_tools(["probe_context", "pluginmgr_list"])
        return json.dumps(removed)

    @app.tool("Report a status.")
    async def probe_report(args):
        await app.sdk.report_status({"servers": {"a": "restarting"}},
                                    message="server a lost; restarting", level="warning")
        return "reported"

    @app.tool("Try to plant a secret reference in its own settings.")
    async def probe_plant(args):
        await app.sdk.settings.set("headers", {"x": "@{mcp_token}"})
        return "planted"

    @app.tool("Read a setting with its secrets filled in.")
    async def probe_secret(args):
        return json.dumps([await app.sdk.settings.resolved("headers"),
                           await app.sdk.settings.get("headers")])

    app.run()
"""


@pytest.fixture
async def probe(registry: PluginRegistry, write_plugin: Callable[..., Path]) -> PluginRegistry:
    await registry.load_dir(write_plugin("probe", PROBE, capabilities=["tools", "settings"]))
    return registry


async def call(kernel: Kernel, name: str) -> str:
    result = await kernel.state.stagehost.execute(ToolCall("c", name, {}))
    assert not result.is_error, result.content
    return result.content


async def test_each_call_carries_the_principal_network_switch_and_sandbox_roots(
    probe: PluginRegistry, kernel: Kernel, model: ScriptedModelServer
) -> None:
    seen = json.loads(await call(kernel, "probe_context"))
    assert seen["principal"] == "internal" and seen["internal"] is True
    assert seen["network"] is True
    roots = [str((kernel.data_dir / name).resolve()) for name in ("workspace", "plugin-data")]
    assert seen["write_roots"] == roots
    await kernel.config.set("core.security.network", False)
    model.queue_tool_call("probe_context", {}).queue_text("ok")
    await kernel.say("probe", "test")
    [message] = [m for m in model.requests[-1].json["messages"] if m["role"] == "tool"]
    turn = json.loads(message["content"])
    assert turn["principal"] == "internal" and turn["network"] is False


async def test_a_plugin_withdraws_its_own_tools_and_never_another_plugins(
    probe: PluginRegistry, kernel: Kernel
) -> None:
    result = await kernel.state.stagehost.execute(ToolCall("c", "probe_swap", {}))
    assert result.is_error and "'pluginmgr_list'" in result.content
    assert "not plugin 'probe'" in result.content
    assert "pluginmgr_list" in kernel.state.stagehost.tools
    assert await call(kernel, "probe_extra") == "extra"
    assert "probe_context" in kernel.state.stagehost.tools  # refused as a whole


async def test_a_status_report_is_kept_logged_and_published(
    probe: PluginRegistry, kernel: Kernel, events: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    assert await call(kernel, "probe_report") == "reported"
    [event] = of(events, EventType.PLUGIN_STATUS, "probe")
    assert event.payload.status == {"servers": {"a": "restarting"}}
    assert event.payload.level == "warning"
    [row] = [r for r in probe.status() if r["name"] == "probe"]
    assert row["status"] == {"servers": {"a": "restarting"}}
    assert "plugin probe: server a lost; restarting" in caplog.text
    await probe.disable("probe")
    [row] = [r for r in probe.status() if r["name"] == "probe"]
    assert row["status"] == {}, "a stopped plugin's last report no longer holds"


async def test_secrets_are_filled_into_the_plugins_own_settings_only_on_request(
    probe: PluginRegistry, kernel: Kernel
) -> None:
    await kernel.config.set("core.security.credential.mcp_token.secret", "tok-0123456789")
    await kernel.config.set("plugin.probe.headers", {"Authorization": "Bearer @{mcp_token}"})
    resolved, plain = json.loads(
        (await kernel.state.stagehost.execute(ToolCall("c", "probe_secret", {}))).content
    )
    assert plain == {"Authorization": "Bearer @{mcp_token}"}
    # The result itself went through the firewall, which masks the value again on its way out.
    assert resolved == {"Authorization": "Bearer @{mcp_token}"}
    sdk = probe.get("probe").sdk
    assert sdk is not None
    assert sdk.settings.resolved("headers") == {"Authorization": "Bearer tok-0123456789"}
    with pytest.raises(PermissionError, match="outside this plugin's namespace"):
        sdk.settings.resolved("core.security.credential.mcp_token.secret")
    # A plugin cannot write a reference itself and have it filled in: only the owner can.
    planted = await kernel.state.stagehost.execute(ToolCall("c", "probe_plant", {}))
    assert planted.is_error and "cannot write @{alias} secret references" in planted.content
    assert kernel.config.get("plugin.probe.headers") == {"Authorization": "Bearer @{mcp_token}"}
