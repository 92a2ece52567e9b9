"""Child agents, and the prompt-layering rule checked on what actually goes over the wire."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from hologram import Kernel
from hologram.agent import SKILL_INFO, SPAWN_CHILD, Agent, Skill
from hologram.llm import ScriptedModelServer, ScriptedReply
from hologram.sdk import EventType, OutputCap, Stage, ToolCall, ToolDef

from .conftest import Recorder, within_deadline
from .test_turn_pipeline import offered, system_prompt, tool_messages


def spawn(call_id: str, task: str) -> ToolCall:
    return ToolCall(call_id, SPAWN_CHILD, {"task": task})


async def test_children_spawned_in_one_round_run_concurrently(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer, events: Recorder
) -> None:
    # A gate channel holds each send until both children have sent: one child at a time
    # would wait forever.
    arrived: list[str] = []
    both = asyncio.Event()

    async def gate(payload: str, meta: dict[str, Any], type: str) -> str:
        arrived.append(payload)
        if len(arrived) == 2:
            both.set()
        await both.wait()
        return "through"

    kernel.state.channels.register_output_channel("gate", OutputCap.TEXT, "a gate", gate)
    model.queue(ScriptedReply(tool_calls=[spawn("s1", "say hi"), spawn("s2", "say bye")]))
    for _ in range(2):  # each child's first round: one send through the gate
        model.queue_tool_call("output_send__gate", {"payload": "child here"})
    model.queue_text("child result")
    model.queue_text("child result")
    model.queue_text("Both children reported.")

    result = await within_deadline(kernel.inputs.say("split the work"))

    assert result.reply == "Both children reported." and arrived == ["child here"] * 2
    parent_last = model.requests[-1]
    assert [m["content"] for m in tool_messages(parent_last)] == ["child result"] * 2
    child_requests = model.requests[1:-1]
    assert len(child_requests) == 4
    for request in child_requests:
        assert offered(request) and all(n.startswith("output_send__") for n in offered(request))
    briefs = {system_prompt(r) for r in child_requests}
    assert any("say hi" in b for b in briefs) and any("say bye" in b for b in briefs)
    assert not any("companion agent running in the Hologram" in b for b in briefs)  # no persona
    assert {e.source for e in events.of(EventType.AGENT_LLM_CHAIN)} >= {"child-1", "child-2"}


async def test_a_child_skips_the_stage_pipeline_and_stops_at_its_round_cap(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    await kernel.config.set("core.agent.child_max_tool_rounds", 2)
    stages: list[str] = []
    agent.stagehost.register_stage(Stage.BEFORE_TOOLCALL, lambda ctx: stages.append("tool"))
    await kernel.config.set("core.agent.max_tool_rounds", 1)
    model.queue(ScriptedReply(tool_calls=[spawn("s", "count to three")]))
    model.queue_tool_call("output_send__test", {"payload": "1"})
    model.queue_tool_call("output_send__test", {"payload": "2"})
    model.queue_text("stopped at two")  # the child's answer without tools
    model.queue_text("The child stopped at two.")  # the parent's answer at its own cap

    result = await kernel.inputs.say("count")

    child_last = model.requests[3]
    assert offered(child_last) == [] and "count to three" in system_prompt(child_last)
    assert result.tool_results[0].content == "stopped at two"
    assert stages == ["tool"]  # the parent's spawn_child call only: children have no stages


async def test_spawn_child_can_be_called_from_python(
    agent: Agent, model: ScriptedModelServer
) -> None:
    model.queue_text("42")
    assert await agent.spawn_child("What is six times seven?") == "42"


KNOWN_TOOL_NAMES = {
    # Names the spec's kernel and plugins use: none may be in a prompt unless offered.
    "cmd_run",
    "files_write",
    "memory_recall",
    "memory_commit",
    "coldcontext_query",
    "knowledge_search",
    SPAWN_CHILD,
    SKILL_INFO,
}


def names_in(text: str, names: set[str]) -> set[str]:
    return {
        n for n in names if re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", text)
    }


async def test_no_tool_name_is_in_the_system_prompt_unless_offered_that_turn(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer, data_dir: Path
) -> None:
    agent.stagehost.register_tool(ToolDef("cmd_run", "Run a shell command.", handler=str))
    agent.skills.add(Skill("deploy", "ship a release", "1. cmd_run the tests"))
    model.queue_text("turn one")
    await kernel.inputs.say("first")
    agent.stagehost.unregister_plugin_tools("cmd")
    agent.skills.remove("deploy")
    kernel.state.channels.unregister("test")
    model.queue_text("turn two")
    await kernel.inputs.say("second")

    universe = KNOWN_TOOL_NAMES | {n for r in model.requests for n in offered(r)}
    universe |= {"output_send__test", "output_send__test_help"}
    for request in model.requests:
        mentioned = names_in(system_prompt(request), universe)
        assert mentioned <= set(offered(request)), mentioned - set(offered(request))
    first, second = model.requests
    assert {"cmd_run", SKILL_INFO} <= set(offered(first))
    assert SKILL_INFO in system_prompt(first) and "output_send__test" in system_prompt(first)
    assert SKILL_INFO not in system_prompt(second)
    assert "output_send__test" not in system_prompt(second)
    assert "cmd_run" not in offered(second)


async def test_the_persona_comes_from_personal_md(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer, data_dir: Path
) -> None:
    await kernel.config.set("core.agent.personal_prompt", "You are Holo.")
    model.queue_text("a")
    await kernel.inputs.say("x")
    assert system_prompt(model.last_request).startswith("You are Holo.")
    (data_dir / "personal").mkdir()
    (data_dir / "personal" / "personal.md").write_text("You are Mira.", encoding="utf-8")
    model.queue_text("b")
    await kernel.inputs.say("y")
    assert system_prompt(model.last_request).startswith("You are Mira.")
