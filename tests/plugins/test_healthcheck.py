"""The `health_check` tool through a turn with the scripted model: the agent gets the
doctor's report, made by the code GET /api/v1/health runs, and a failing check names its
cause; only the owner may ask."""

from __future__ import annotations

import socket

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from tests.agent.test_turn_pipeline import offered, tool_messages


async def ask(
    kernel: Kernel, model: ScriptedModelServer, channel: str = "test", **args: object
) -> str:
    model.queue_tool_call("health_check", dict(args)).queue_text("checked")
    await kernel.say("are you healthy?", channel)
    return str(tool_messages(model.last_request)[-1]["content"])


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_the_agent_gets_the_readiness_report_with_its_self_test(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    report = await ask(kernel, model)

    assert "health_check" in offered(model.requests[0])
    # The content review may put a note before a result that names a source beside its URL
    # ("llm:default ... http://..."): the report is the lines that follow any such note.
    lines = [line for line in report.splitlines() if not line.startswith("[security note")]
    assert lines[0] == "ok   selftest: a virtual kernel booted and answered one turn"
    assert lines[-1] == "healthy"
    # The same checks, by the same code, as the service's readiness answer (the kernel's
    # phase aside: the tool is asked from inside a turn).
    expected = await kernel.health(with_selftest=False)
    named = [c.name for c in expected.checks if c.name != "kernel"]
    assert [line[5:].split(": ")[0] for line in lines[1:-1]] == named
    assert "ok   plugin:healthcheck: running" in report


async def test_a_failing_check_names_its_cause(kernel: Kernel, model: ScriptedModelServer) -> None:
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    await kernel.config.set("core.llm.sources.dead.base_url", dead)
    await kernel.config.set("core.llm.sources.dead.model", "gone")
    await kernel.config.set("core.health.min_free_bytes", 1 << 62)

    report = await ask(kernel, model, selftest=False)

    assert "selftest" not in report
    assert f"FAIL llm:dead: unreachable at {dead}" in report
    assert "FAIL disk:" in report
    assert report.splitlines()[-1] == "2 check(s) failed"


async def test_health_check_is_private_to_the_owner(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    answer = await ask(kernel, model, "qq", selftest=False)

    assert "private to the owner" in answer
