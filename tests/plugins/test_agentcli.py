"""agentcli (built in): real PTY terminals. Create, type, read; a flood is capped; an idle
terminal is closed; terminals die with the kernel; a finished program wakes the agent on the
`terminal` channel, whose context events are dropped, never archived."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from hologram import Kernel
from hologram.kernel import ManualClock
from hologram.llm import ScriptedModelServer
from hologram.sdk import EventType, TerminalOutput, ToolCall, ToolResult

from .conftest import DEADLINE, Recorder, wait_for


async def tool(kernel: Kernel, tool_name: str, /, **arguments: Any) -> ToolResult:
    return await kernel.state.stagehost.execute(ToolCall("c", tool_name, arguments))


async def ok(kernel: Kernel, tool_name: str, /, **arguments: Any) -> str:
    result = await tool(kernel, tool_name, **arguments)
    assert not result.is_error, result.content
    return result.content


async def typed(kernel: Kernel, terminal: str, text: str, expect: str) -> str:
    """What follows typing `text`, read until `expect` shows (a loaded machine may pause
    between the echo of the input and the program's answer)."""
    answer = await ok(kernel, "terminal_write", terminal=terminal, text=text)
    async with asyncio.timeout(DEADLINE):
        while expect not in answer:
            answer += await ok(kernel, "terminal_read", terminal=terminal, wait_s=0.5)
    return answer


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def terminal_events(events: Recorder, kind: str) -> list[TerminalOutput]:
    return [e.payload for e in events.of(EventType.TERMINAL_OUTPUT) if e.payload.event == kind]


async def test_a_terminal_is_a_real_pty_that_answers_what_is_typed(
    kernel: Kernel, events: Recorder
) -> None:
    opened = json.loads(await ok(kernel, "terminal_create", name="work"))
    assert opened["terminal"] == "t1" and alive(opened["pid"])
    answer = await typed(kernel, "t1", "echo hi", "\nhi\n")
    assert "hi" in answer.splitlines(), answer  # the echoed command is "echo hi", not "hi"
    answer = await typed(kernel, "t1", "tty; pwd", "workspace")
    assert "/dev/pts/" in answer
    assert str((kernel.data_dir / "workspace").resolve()) in answer
    [listed] = json.loads(await ok(kernel, "terminal_list"))
    assert listed["running"] and listed["typed"] == ["echo hi", "tty; pwd"]
    await wait_for(
        lambda: any("hi\n" in (p.data or "") for p in terminal_events(events, "output")),
        "the output reaches the views as terminal_output events",
    )
    [created] = terminal_events(events, "created")
    assert created.name == "work" and created.running is True
    closing = await ok(kernel, "terminal_close", terminal="t1")
    assert isinstance(closing, str) and not alive(opened["pid"])
    [closed] = terminal_events(events, "closed")
    assert closed.running is False
    gone = await tool(kernel, "terminal_read", terminal="t1")
    assert gone.is_error and "no terminal 't1'" in gone.content


async def test_a_program_that_floods_its_terminal_is_capped(
    kernel: Kernel, events: Recorder
) -> None:
    await kernel.config.set("plugin.agentcli.buffer_bytes", 4096)
    flood = "head -c 300000 /dev/zero | tr '\\0' x; echo; echo END"
    text = json.loads(await ok(kernel, "terminal_create", command=flood))["output"]
    async with asyncio.timeout(DEADLINE):
        while "ended with status" not in text:
            text += await ok(kernel, "terminal_read", terminal="t1", wait_s=0.5)
    assert "bytes of earlier output were dropped: the buffer is full" in text
    assert "END" in text and len(text) < 3 * 4096
    outputs = terminal_events(events, "output")
    assert outputs and all(len(p.data or "") <= 8192 for p in outputs)
    assert sum(p.dropped or 0 for p in outputs) > 0, "the views are told what they missed"


async def test_an_idle_terminal_is_closed(kernel: Kernel, events: Recorder) -> None:
    await kernel.config.set("plugin.agentcli.idle_timeout_s", 0.3)
    pid = json.loads(await ok(kernel, "terminal_create"))["pid"]
    await wait_for(lambda: terminal_events(events, "timeout"), "the idle terminal times out")
    assert not alive(pid)
    assert "no terminal" in (await tool(kernel, "terminal_read", terminal="t1")).content


async def test_with_no_terminal_open_the_idle_sweep_waits_for_one(
    data_dir: Path, model: ScriptedModelServer
) -> None:
    # A replay moves a kernel's clock through weeks: a sweep polling every second with
    # nothing to sweep was millions of wake-ups, nearly all of the replay's time.
    clock = ManualClock()
    environ = {"HOLOGRAM_LLM_BASE_URL": model.base_url}
    kernel = await Kernel(data_dir, clock=clock, environ=environ).start()
    try:
        await clock.advance(3600.0)
        assert clock.wakeups["agentcli-idle"] == 0
        await ok(kernel, "terminal_create")
        await clock.settle()  # the sweep, woken by the terminal, goes back to the clock
        await clock.advance(10.0)
        assert clock.wakeups["agentcli-idle"] >= 5, "sweeps resume while a terminal is open"
    finally:
        await kernel.shutdown()


async def test_a_working_directory_outside_the_sandbox_is_refused(kernel: Kernel) -> None:
    refused = await tool(kernel, "terminal_create", directory="/etc")
    assert refused.is_error and "refused by the security firewall" in refused.content


async def test_terminals_die_with_the_kernel(data_dir: Path, model: ScriptedModelServer) -> None:
    kernel = await Kernel(data_dir, environ={"HOLOGRAM_LLM_BASE_URL": model.base_url}).start()
    try:
        shell = json.loads(await ok(kernel, "terminal_create"))["pid"]
        answer = await typed(kernel, "t1", "sleep 300 & echo pid=$!", "\npid=")
        async with asyncio.timeout(DEADLINE):
            while not answer.split("\npid=")[-1].split():
                answer += await ok(kernel, "terminal_read", terminal="t1", wait_s=0.5)
        job = int(answer.split("\npid=")[-1].split()[0])
        assert alive(shell) and alive(job)
    finally:
        await kernel.shutdown()
    assert not alive(shell) and not alive(job), "a background job of the shell too"


async def test_a_finished_program_wakes_the_agent_on_the_terminal_channel_never_archived(
    kernel: Kernel, model: ScriptedModelServer, events: Recorder
) -> None:
    memory = kernel.state.memory
    assert memory is not None
    window = memory.context
    model.queue_text("the build is done")
    await ok(kernel, "terminal_create", command="echo built; exit 3", notify=True, name="build")
    await wait_for(lambda: terminal_events(events, "note"), "the woken turn answers")
    [note] = terminal_events(events, "note")
    assert note.data == "the build is done"
    [woken] = [m for m in model.requests[-1].json["messages"] if m["role"] == "user"]
    assert "[terminal t1 (build) ended with status 3]" in woken["content"]
    assert "built" in woken["content"]
    [source] = [e.source for e in window.events if "ended with status 3" in e.input]
    assert source == "terminal"
    window.top_k, window.protected_recent = 0, 0
    await window.prune("anything")
    cold = kernel.state.coldcontext
    assert cold is not None
    texts = [d.input + d.response for d in cold.documents()]
    assert any("the build is done" in t for t in texts), "the agent's answer is archived"
    assert not any("ended with status 3" in t for t in texts), "the terminal's input is not"


async def test_a_terminal_opened_by_the_owner_wakes_the_agent_with_the_owners_rights(
    kernel: Kernel, model: ScriptedModelServer, events: Recorder
) -> None:
    model.queue_tool_call("terminal_list", {}).queue_text("listed")
    await ok(kernel, "terminal_create", command="exit 0", notify=True)
    await wait_for(lambda: terminal_events(events, "note"), "the woken turn answers")
    [message] = [m for m in model.requests[-1].json["messages"] if m["role"] == "tool"]
    assert "private to the owner" not in message["content"]
    assert json.loads(message["content"])[0]["terminal"] == "t1"


def test_no_terminal_outlives_its_test() -> None:
    # Every pty child of this process is gone (the kernels above closed theirs).
    children = [
        p
        for p in Path("/proc").iterdir()
        if p.name.isdigit()
        and alive(int(p.name))
        and (p / "stat").read_text().rsplit(")", 1)[1].split()[1] == str(os.getpid())
        and "bash" in (p / "comm").read_text()
    ]
    if children:
        pytest.fail(f"terminals left running: {children}")
