"""The RPC boundary: bad frames and withheld or undeclared capabilities, while the kernel
keeps serving."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from hologram.plugins import PluginRegistry, State
from hologram.sdk import (
    EventType,
    RawInput,
    ToolCall,
)

from .conftest import Recorder, of, wait_for

MISBEHAVE = """
    import json
    from hologram.plugins.runtime import PluginApp

    app = PluginApp()

    def raw(data: bytes) -> None:
        app.peer._writer.write(data)

    @app.tool("Say ok.")
    def bad_ok(args):
        return "ok"

    @app.tool("Send something bad to the kernel.", {
        "type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]})
    async def bad_send(args):
        kind = args["kind"]
        if kind == "not_json":
            raw(b"this is not json\\n")
        elif kind == "unknown_method":
            try:
                await app.sdk.call("sdk.teleport")
            except Exception as exc:
                return f"refused: {exc}"
        elif kind == "huge":
            raw(b'{"jsonrpc":"2.0","method":"sdk.log","params":{"message":"' + b"x" * (50 * 1024 * 1024) + b'"}}\\n')
        elif kind == "cut":
            raw(b'{"jsonrpc":"2.0","id":7,"res')
            await app.peer._writer.drain()
            import os; os._exit(5)
        elif kind in ("publish", "tool_table", "inject"):
            method = {"publish": "sdk.publish", "tool_table": "sdk.tools.list",
                      "inject": "sdk.inject"}[kind]
            try:
                await app.sdk.call(method, text="x", channel="test")
            except Exception as exc:
                return f"refused: {exc}"
        return "sent"

    app.run()
"""


@pytest.fixture
async def bad(
    registry: PluginRegistry, kernel: Kernel, write_plugin: Callable[..., Path]
) -> PluginRegistry:
    await kernel.config.set("core.plugins.restart_backoff_s", 0.05)
    await registry.load_dir(write_plugin("bad", MISBEHAVE, capabilities=["tools", "events"]))
    return registry


async def call(kernel: Kernel, name: str, **arguments: object) -> str:
    result = await kernel.state.stagehost.execute(ToolCall("c", name, arguments))
    return result.content


async def test_a_frame_that_is_not_json_is_reported_and_the_plugin_keeps_serving(
    bad: PluginRegistry, kernel: Kernel, events: Recorder
) -> None:
    assert await call(kernel, "bad_send", kind="not_json") == "sent"
    await wait_for(lambda: of(events, EventType.PLUGIN_RPC_ERROR, "bad"), "reported")
    assert "not JSON" in of(events, EventType.PLUGIN_RPC_ERROR, "bad")[0].payload.error
    assert await call(kernel, "bad_ok") == "ok"
    assert bad.get("bad").state is State.RUNNING


async def test_an_unknown_method_is_answered_with_method_not_found(
    bad: PluginRegistry, kernel: Kernel
) -> None:
    reply = await call(kernel, "bad_send", kind="unknown_method")
    assert reply.startswith("refused:") and "method not found: 'sdk.teleport'" in reply
    assert await call(kernel, "bad_ok") == "ok"


async def test_a_50_mb_frame_disconnects_the_plugin_and_the_kernel_keeps_serving(
    bad: PluginRegistry, kernel: Kernel, events: Recorder, model: ScriptedModelServer
) -> None:
    model.queue_text("yes")
    first = bad.get("bad").plugin.pid
    reply = await call(kernel, "bad_send", kind="huge")
    assert "could not run" in reply or "not available" in reply or reply == "sent"
    await wait_for(lambda: of(events, EventType.PLUGIN_CRASHED, "bad"), "disconnected")
    assert any(
        "longer than" in e.payload.error for e in of(events, EventType.PLUGIN_RPC_ERROR, "bad")
    )
    assert await kernel.say("still there?", channel="test") == "yes"
    await wait_for(
        lambda: bad.get("bad").state is State.RUNNING and bad.get("bad").plugin.pid != first, "back"
    )
    assert await call(kernel, "bad_ok") == "ok"


async def test_a_frame_cut_mid_way_ends_the_session_and_the_plugin_is_restarted(
    bad: PluginRegistry, kernel: Kernel, events: Recorder
) -> None:
    reply = await call(kernel, "bad_send", kind="cut")
    assert "could not run bad_send" in reply
    await wait_for(lambda: of(events, EventType.PLUGIN_CRASHED, "bad"), "crash seen")
    assert any("cut off" in e.payload.error for e in of(events, EventType.PLUGIN_RPC_ERROR, "bad"))
    await wait_for(lambda: bad.get("bad").state is State.RUNNING, "back")
    assert await call(kernel, "bad_ok") == "ok"


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("publish", "capability 'publish' is withheld from external plugins"),
        ("tool_table", "capability 'tool_table' is withheld from external plugins"),
        ("inject", "did not declare capability 'inject'"),
    ],
)
async def test_withheld_and_undeclared_capabilities_are_refused_naming_the_capability(
    bad: PluginRegistry, kernel: Kernel, kind: str, message: str
) -> None:
    reply = await call(kernel, "bad_send", kind=kind)
    assert reply.startswith("refused:") and message in reply
    assert kernel.state.scheduler.pending_inputs() == 0


async def test_an_external_plugin_subscribes_to_events(
    registry: PluginRegistry, kernel: Kernel, write_plugin: Callable[..., Path]
) -> None:
    source = """
        from hologram.plugins.runtime import PluginApp
        app = PluginApp()
        seen = []

        @app.on_start
        async def listen(sdk):
            await sdk.subscribe("raw_input", lambda event: seen.append(event["payload"]))

        @app.tool("What was seen.")
        def ears_seen(args):
            return str(len(seen))

        app.run()
    """
    await registry.load_dir(write_plugin("ears", source, capabilities=["tools", "events"]))
    kernel.events.emit(RawInput(text="hello", channel="chat", user_id=None))
    await wait_for(lambda: True, "")
    for _ in range(100):
        if await call(kernel, "ears_seen") == "1":
            break
    assert await call(kernel, "ears_seen") == "1"


PARENT = """
    import asyncio, sys, tempfile
    from hologram import Kernel

    async def main():
        async with Kernel(tempfile.mkdtemp()) as kernel:
            entry = await kernel.state.plugins.load_dir(sys.argv[1])
            print(entry.plugin.pid, flush=True)
            await asyncio.sleep(60)

    asyncio.run(main())
"""

STUBBORN = """
    import json, sys, time
    # Answers the handshake by hand, then ignores stdin: only the parent-death signal
    # can end it when the kernel is killed.
    for line in sys.stdin:
        message = json.loads(line)
        result = {"protocol": 1} if message["method"] == "handshake" else {}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\\n")
        sys.stdout.flush()
        if message["method"] == "plugin.start":
            break
    time.sleep(60)
"""


def test_a_plugin_does_not_outlive_a_sigkilled_kernel(
    write_plugin: Callable[..., Path], tmp_path: Path
) -> None:
    folder = write_plugin("stubborn", STUBBORN, capabilities=[])
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(PARENT))
    parent = subprocess.Popen(
        [sys.executable, str(script), str(folder)], stdout=subprocess.PIPE, text=True
    )
    try:
        child = int(parent.stdout.readline())
        os.kill(child, 0)  # alive while its kernel is
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        for _ in range(500):
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            import time

            time.sleep(0.01)
        else:
            os.kill(child, signal.SIGKILL)
            pytest.fail("the plugin outlived its kernel")
    finally:
        parent.kill()
