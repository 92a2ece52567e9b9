"""`seq_run` (built in): steps in order, the calls of one step in parallel, results handed
on, a failing step stops the plan with what was done, every call with the input's rights."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from hologram.sdk import EventType, ToolCall, ToolDef, ToolResult

from .conftest import DEADLINE, Recorder


class Tools:
    """Tools that record their calls; `meet_a` and `meet_b` finish only once both run."""

    def __init__(self, kernel: Kernel) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.started = {"a": asyncio.Event(), "b": asyncio.Event()}
        host = kernel.state.stagehost
        for name in ("a", "b"):
            host.register_tool(self._tool(f"meet_{name}", self._meet(name)), owner="meet")
        host.register_tool(self._tool("text_upper", self._upper), owner="text")
        host.register_tool(self._tool("text_fail", self._fail), owner="text")
        host.register_tool(self._tool("files_write", self._upper), owner="files")

    def _tool(self, name: str, handler: Any) -> ToolDef:
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}

        async def run(args: dict[str, Any]) -> str:
            self.calls.append((name, args))
            return await handler(args)

        return ToolDef(name, f"test tool {name}", schema, run)

    def _meet(self, me: str) -> Any:
        other = "b" if me == "a" else "a"

        async def meet(args: dict[str, Any]) -> str:
            self.started[me].set()
            await asyncio.wait_for(self.started[other].wait(), DEADLINE)
            return f"{me} met {other}"

        return meet

    async def _upper(self, args: dict[str, Any]) -> str:
        return args.get("text", "").upper()

    async def _fail(self, args: dict[str, Any]) -> str:
        raise ValueError("the disk is full")


async def seq(kernel: Kernel, steps: list[list[dict[str, Any]]]) -> ToolResult:
    return await kernel.state.stagehost.runner.execute(
        ToolCall("plan", "seq_run", {"steps": steps}), kernel.state.agent.build_tool_defs()
    )


async def test_calls_of_a_step_run_together_and_later_steps_get_their_results(
    kernel: Kernel,
) -> None:
    tools = Tools(kernel)
    result = await seq(
        kernel,
        [
            [{"tool": "meet_a"}, {"tool": "meet_b"}],
            [{"tool": "text_upper", "arguments": {"text": "{{1.1}} and {{1.2}}"}}],
            [{"tool": "text_upper", "arguments": {"text": "<{{2}}>"}}],
        ],
    )
    assert not result.is_error, result.content
    report = json.loads(result.content)
    assert report["outcome"] == "all 3 steps done"
    assert report["results"][1] == [
        {"step": 2, "tool": "text_upper", "ok": True, "result": "A MET B AND B MET A"}
    ]
    assert tools.calls[-1] == ("text_upper", {"text": "<A MET B AND B MET A>"})


async def test_a_failing_step_stops_the_plan_with_the_results_so_far(kernel: Kernel) -> None:
    tools = Tools(kernel)
    result = await seq(
        kernel,
        [
            [{"tool": "text_upper", "arguments": {"text": "one"}}],
            [{"tool": "text_fail"}, {"tool": "text_upper", "arguments": {"text": "two"}}],
            [{"tool": "text_upper", "arguments": {"text": "never"}}],
        ],
    )
    assert result.is_error
    report = json.loads(result.content)
    assert report["outcome"] == "step 2 failed (text_fail): the plan stopped"
    assert [[r["ok"] for r in step] for step in report["results"]] == [[True], [False, True]]
    assert "the disk is full" in report["results"][1][0]["result"]
    assert ("text_upper", {"text": "never"}) not in tools.calls


async def test_a_plan_is_refused_whole_before_any_of_it_runs(kernel: Kernel) -> None:
    tools = Tools(kernel)
    first = [{"tool": "text_upper", "arguments": {"text": "x"}}]
    for steps, why in [
        ([first, [{"tool": "text_nothing"}]], "step 2: no tool 'text_nothing'"),
        ([first, [{"tool": "text_upper", "arguments": {"text": "{{2.1}}"}}]], "has not run"),
        ([first, [{"tool": "text_upper", "arguments": {"text": "{{1.2}}"}}]], "has 1 call(s)"),
        ([first, [{"tool": "seq_run", "arguments": {"steps": [first]}}]], "another plan"),
        ([first, []], "step 2 has no calls"),
    ]:
        result = await seq(kernel, steps)
        assert result.is_error and why in result.content
    assert tools.calls == []
    bad = await seq(kernel, [[{"arguments": {}}]])
    assert bad.is_error and "needs 'tool'" in bad.content


async def test_each_call_of_a_plan_has_the_rights_of_the_input_that_sent_it(
    kernel: Kernel, model: ScriptedModelServer, events: Recorder
) -> None:
    tools = Tools(kernel)
    kernel.state.channels.register_output_channel(
        "qq", 1, "a chat app", lambda payload, meta, kind: "ok", owner="qq"
    )
    plan = {"steps": [[{"tool": "files_write", "arguments": {"text": "pwned"}}]]}
    model.queue_tool_call("seq_run", plan).queue_text("no")
    await kernel.inputs.say("write it", "qq", user_id="stranger")
    [message] = [m for m in model.requests[-1].json["messages"] if m["role"] == "tool"]
    assert "private to the owner" in json.loads(message["content"])["results"][0][0]["result"]
    assert tools.calls == []
    model.queue_tool_call("seq_run", plan).queue_text("yes")
    await kernel.say("write it", "test")
    assert tools.calls == [("files_write", {"text": "pwned"})]
    inner = [e for e in events.of(EventType.TOOL_CALL) if e.payload.via == "seq"]
    assert [(e.source, e.payload.name, e.payload.is_error) for e in inner] == [
        ("seq", "files_write", True),
        ("seq", "files_write", False),
    ]
