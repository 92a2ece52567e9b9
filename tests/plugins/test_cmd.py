"""`cmd_run` (the shipped cmd plugin, a real subprocess): it runs in the sandbox, dies at its
timeout with its process group, is capped, keeps secrets out of its environment and its
output, honours the network switch, and is the owner's alone unless a profile grants it."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from hologram.plugins import PluginRegistry
from hologram.sdk import ToolCall, ToolResult

SECRET = "deploy-key-5f3a9c2e"


@pytest.fixture
async def cmd(registry: PluginRegistry, kernel: Kernel) -> PluginRegistry:
    await kernel.config.set("plugin.cmd.max_output_bytes", 2000)
    await registry.enable("cmd")
    return registry


async def run(kernel: Kernel, **arguments: object) -> ToolResult:
    return await kernel.state.stagehost.execute(ToolCall("c", "cmd_run", dict(arguments)))


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def test_a_command_runs_in_the_sandbox_and_answers_with_output_and_status(
    cmd: PluginRegistry, kernel: Kernel
) -> None:
    result = await run(kernel, command="pwd; echo hi >&2; exit 3")
    workspace = (kernel.data_dir / "workspace").resolve()
    assert result.content == f"{workspace}\nhi\n[exit status 3]"
    (workspace / "sub").mkdir()
    result = await run(kernel, command="pwd", directory="sub")
    assert result.content.startswith(f"{workspace / 'sub'}\n")


async def test_a_working_directory_outside_the_sandbox_is_refused(
    cmd: PluginRegistry, kernel: Kernel, tmp_path: Path
) -> None:
    refused = await run(kernel, command="touch x", directory="/etc")
    assert refused.is_error and "refused by the security firewall" in refused.content
    # A read root passes the firewall (the path is readable), but a command may write where
    # it runs: the plugin itself holds it to the write roots.
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    await kernel.config.set("core.security.read_roots", [str(shelf)])
    await kernel.config.set("core.security.write_roots", [str(kernel.data_dir / "workspace")])
    refused = await run(kernel, command="touch x", directory=str(shelf))
    assert refused.is_error and "outside the sandbox roots" in refused.content
    (kernel.data_dir / "workspace").mkdir(exist_ok=True)
    (kernel.data_dir / "workspace" / "out").symlink_to(shelf)
    await kernel.config.set("core.security.enabled", False)  # the plugin's check alone
    refused = await run(kernel, command="touch x", directory="out")
    assert refused.is_error and "outside the sandbox roots" in refused.content
    assert not (shelf / "x").exists()


async def test_a_command_past_its_timeout_is_killed_with_its_process_group(
    cmd: PluginRegistry, kernel: Kernel
) -> None:
    script = "sleep 30 & echo $!; sleep 30"
    result = await run(kernel, command=script, timeout_s=0.5)
    assert result.is_error and "past its timeout of 0.5 s and was killed" in result.content
    background = int(result.content.rsplit("Output so far:\n", 1)[1].split()[0])
    async with asyncio.timeout(5):
        while alive(background):  # noqa: ASYNC110  (the kill is asynchronous)
            await asyncio.sleep(0.01)


async def test_a_command_that_floods_its_output_is_cut_and_stopped(
    cmd: PluginRegistry, kernel: Kernel
) -> None:
    result = await run(kernel, command="yes", timeout_s=30)
    assert not result.is_error, "stopped at the cap, not at the timeout"
    assert "[output cut at 2000 bytes: the command was stopped]" in result.content
    assert len(result.content) < 2200


async def test_no_secret_reaches_a_commands_environment_or_shows_in_its_output(
    registry: PluginRegistry, kernel: Kernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HANDS_DEPLOY_TOKEN", SECRET)  # in the plugin's own environment
    await kernel.config.set("core.security.credential.deploy.secret", SECRET)
    await registry.enable("cmd")
    result = await run(kernel, command="env; echo @{deploy} > used.txt; cat used.txt")
    assert SECRET not in result.content and "HANDS_DEPLOY_TOKEN" not in result.content
    assert "PATH=" in result.content and "@{deploy}" in result.content
    used = (kernel.data_dir / "workspace" / "used.txt").read_text()
    assert used == SECRET + "\n", "the command itself got the real value"


@pytest.fixture
async def listener() -> AsyncIterator[int]:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


async def test_with_the_network_switched_off_a_command_has_no_network(
    cmd: PluginRegistry, kernel: Kernel, listener: int
) -> None:
    probe = (
        f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', "
        f"{listener}), timeout=2); print('connected')\""
    )
    assert "connected" in (await run(kernel, command=probe)).content
    await kernel.config.set("core.security.network", False)
    result = await run(kernel, command=probe)
    if os.geteuid() != 0 and "cannot start a process without network" in result.content:
        pytest.skip("this user gets no network namespace; the command was refused instead")
    assert "connected" not in result.content and "exit status 1" in result.content
    assert "Network is unreachable" in result.content or "refused" in result.content
    socket.create_connection(("127.0.0.1", listener), timeout=2).close()  # still up for us


async def test_cmd_run_is_refused_to_an_outsider_unless_a_profile_grants_it(
    cmd: PluginRegistry, kernel: Kernel, model: ScriptedModelServer
) -> None:
    kernel.state.channels.register_output_channel(
        "qq", 1, "a chat app", lambda payload, meta, kind: "ok", owner="qq"
    )
    model.queue_tool_call("cmd_run", {"command": "echo ran"}).queue_text("no")
    await kernel.inputs.say("run it", "qq", user_id="stranger")
    [message] = [m for m in model.requests[-1].json["messages"] if m["role"] == "tool"]
    assert "private to the owner" in message["content"]
    model.queue_tool_call("cmd_run", {"command": "echo ran"}).queue_text("yes")
    await kernel.say("run it", "test")
    [message] = [m for m in model.requests[-1].json["messages"] if m["role"] == "tool"]
    assert message["content"] == "ran\n[exit status 0]"
