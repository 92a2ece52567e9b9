"""Subprocess plugins end to end: real child processes speaking NDJSON JSON-RPC."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.agent import Agent
from hologram.channels import CollectingChannel
from hologram.llm import ScriptedModelServer
from hologram.plugins import PluginLoadError, PluginRegistry, State
from hologram.sdk import EventType, Stage, ToolCall

from .conftest import Recorder, of, wait_for

ECHO = """
    from hologram.plugins.runtime import PluginApp

    app = PluginApp()

    @app.tool("Echo text back, shouted.", {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    def echo_shout(args):
        return args["text"].upper() + "!"

    @app.tool("Fail on purpose.")
    def echo_fail(args):
        raise ValueError("no such thing")

    @app.stage("before_output")
    def sign(ctx):
        ctx["final_text"] = ctx["final_text"] + " -- signed by echo"

    app.run()
"""


@pytest.fixture
async def echo(registry: PluginRegistry, write_plugin: Callable[..., Path]) -> PluginRegistry:
    await registry.load_dir(write_plugin("echo", ECHO))
    return registry


async def test_a_tool_call_from_the_model_reaches_the_plugin_and_its_result_comes_back(
    echo: PluginRegistry,
    kernel: Kernel,
    agent: Agent,
    model: ScriptedModelServer,
    notebook: CollectingChannel,
) -> None:
    model.queue_tool_call("echo_shout", {"text": "hello"}, call_id="c1")
    model.queue_text("done")

    result = await kernel.inputs.say("shout hello")

    tool_messages = [m for m in model.requests[1].json["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["HELLO!"]
    assert result.reply.startswith("done")


async def test_a_stage_handler_in_a_subprocess_modifies_the_turn(
    echo: PluginRegistry,
    kernel: Kernel,
    agent: Agent,
    model: ScriptedModelServer,
    notebook: CollectingChannel,
) -> None:
    model.queue_text("the answer")

    result = await kernel.inputs.say("question")

    assert result.reply == "the answer -- signed by echo"
    assert notebook.texts() == ["the answer -- signed by echo"]


async def test_a_plugin_tool_error_reaches_the_model_as_an_error_result(
    echo: PluginRegistry, kernel: Kernel
) -> None:
    result = await kernel.state.stagehost.execute(ToolCall("c", "echo_fail", {}))
    assert result.is_error and "ValueError: no such thing" in result.content


async def test_a_crash_detaches_the_plugin_then_restarts_it_with_growing_backoff(
    echo: PluginRegistry, kernel: Kernel, events: Recorder
) -> None:
    await kernel.config.set("core.plugins.restart_backoff_s", 0.05)
    entry = echo.get("echo")
    tools = kernel.state.stagehost.tools
    for round_ in range(2):
        pid = entry.plugin.pid
        os.kill(pid, signal.SIGKILL)
        seen = round_ + 1
        await wait_for(
            lambda seen=seen: len(of(events, EventType.PLUGIN_CRASHED, "echo")) >= seen, "crash"
        )
        crashed = of(events, EventType.PLUGIN_CRASHED, "echo")[round_]
        assert crashed.payload.returncode == -signal.SIGKILL
        assert set(crashed.payload.detail["tools"]) == {"echo_shout", "echo_fail"}
        assert "echo_shout" not in tools or entry.state is State.RUNNING
        await wait_for(lambda: entry.state is State.RUNNING, "restarted")
        assert entry.plugin.pid != pid and "echo_shout" in tools
    delays = [e.payload.delay for e in of(events, EventType.PLUGIN_RESTARTING, "echo")]
    assert delays == [0.05, 0.1]
    result = await kernel.state.stagehost.execute(ToolCall("c", "echo_shout", {"text": "back"}))
    assert result.content == "BACK!"


async def test_a_restart_is_announced_in_the_log_and_on_the_bus(
    echo: PluginRegistry, kernel: Kernel, events: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    await kernel.config.set("core.plugins.restart_backoff_s", 0.01)
    entry = echo.get("echo")
    caplog.set_level(logging.WARNING, logger="hologram.plugins")
    os.kill(entry.plugin.pid, signal.SIGKILL)
    await wait_for(lambda: entry.restarts == 1, "restarted")

    lines = [r.getMessage() for r in caplog.records if r.name.startswith("hologram.plugins")]
    assert any(line.startswith("plugin echo crashed (status -9)") for line in lines)
    assert "plugin echo: restart 1 in 0.01 s" in lines
    assert f"plugin echo restarted after a crash (attempt 1, pid {entry.plugin.pid})" in lines
    kinds = [e.type for e in events.events if getattr(e.payload, "plugin", None) == "echo"]
    assert kinds[-3:] == [
        EventType.PLUGIN_CRASHED,
        EventType.PLUGIN_RESTARTING,
        EventType.PLUGIN_STARTED,
    ]


async def test_between_crash_and_restart_the_tools_are_gone(
    echo: PluginRegistry, kernel: Kernel, events: Recorder
) -> None:
    await kernel.config.set("core.plugins.restart_backoff_s", 30.0)
    entry = echo.get("echo")
    os.kill(entry.plugin.pid, signal.SIGKILL)
    await wait_for(lambda: entry.state is State.RESTARTING, "waiting to restart")
    assert "echo_shout" not in kernel.state.stagehost.tools
    assert kernel.state.stagehost.handlers(Stage.BEFORE_OUTPUT) == []
    result = await kernel.state.stagehost.execute(ToolCall("c", "echo_shout", {"text": "x"}))
    assert result.is_error and "not available" in result.content
    await echo.enable("echo")  # an explicit enable cuts the wait short
    assert "echo_shout" in kernel.state.stagehost.tools


async def test_auto_restart_false_leaves_a_crashed_plugin_stopped(
    registry: PluginRegistry, write_plugin: Callable[..., Path], events: Recorder
) -> None:
    entry = await registry.load_dir(
        write_plugin("once", ECHO.replace("echo_", "once_"), auto_restart=False)
    )
    os.kill(entry.plugin.pid, signal.SIGKILL)
    await wait_for(lambda: entry.state is State.CRASHED, "crashed")
    assert of(events, EventType.PLUGIN_RESTARTING, "once") == []


GRANDCHILD = """
    import subprocess, sys
    from hologram.plugins.runtime import PluginApp

    app = PluginApp()

    @app.tool("Start a child that keeps stdout open, then die.")
    def holder_die(args):
        # The grandchild inherits the protocol's stdout (fd 3 here is a dup of it).
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"],
                         stdout=app.peer._writer.transport.get_extra_info("pipe"))
        import os; os._exit(3)

    app.run()
"""


async def test_the_watcher_sees_a_death_while_a_grandchild_holds_stdout_open(
    registry: PluginRegistry, kernel: Kernel, write_plugin: Callable[..., Path], events: Recorder
) -> None:
    await kernel.config.set("core.plugins.restart_backoff_s", 0.05)
    entry = await registry.load_dir(write_plugin("holder", GRANDCHILD))
    first = entry.plugin.pid
    await kernel.state.stagehost.execute(ToolCall("c", "holder_die", {}))
    await wait_for(lambda: of(events, EventType.PLUGIN_CRASHED, "holder"), "crash seen")
    assert of(events, EventType.PLUGIN_CRASHED, "holder")[0].payload.returncode == 3
    await wait_for(lambda: entry.state is State.RUNNING and entry.plugin.pid != first, "restarted")


async def test_a_handshake_with_another_protocol_version_is_refused_naming_both(
    registry: PluginRegistry, write_plugin: Callable[..., Path], events: Recorder
) -> None:
    source = """
        from hologram.plugins.runtime import PluginApp
        PluginApp(protocol=99).run()
    """
    with pytest.raises(PluginLoadError, match="speaks protocol 99; this kernel speaks protocol 1"):
        await registry.load_dir(write_plugin("future", source))
    assert registry.get("future").state is State.FAILED
    assert events.of(EventType.PLUGIN_REFUSED)


async def test_a_plugin_that_dies_before_the_handshake_fails_to_load_with_a_reason(
    registry: PluginRegistry, write_plugin: Callable[..., Path]
) -> None:
    with pytest.raises(PluginLoadError, match="failed to start"):
        await registry.load_dir(write_plugin("broken", "raise SystemExit(2)\n"))
