"""One turn through the whole pipeline, driven by the scripted model over real HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hologram import Kernel
from hologram.agent import Agent
from hologram.channels import CollectingChannel
from hologram.llm import RecordedRequest, ScriptedModelServer, ScriptedReply
from hologram.sdk import EventType, Stage, StageContext, ToolCall, ToolDef

from .conftest import Recorder, within_deadline

ADD = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}


def system_prompt(request: RecordedRequest) -> str:
    first = request.json["messages"][0]
    assert first["role"] == "system"
    return first["content"]


def offered(request: RecordedRequest) -> list[str]:
    return [t["function"]["name"] for t in request.json.get("tools") or []]


def tool_messages(request: RecordedRequest) -> list[dict[str, Any]]:
    return [m for m in request.json["messages"] if m["role"] == "tool"]


def register_add(agent: Agent, calls: list[dict[str, Any]]) -> None:
    def add(args: dict[str, Any]) -> str:
        calls.append(args)
        return str(args["a"] + args["b"])

    agent.stagehost.register_tool(ToolDef("calc_add", "Add two integers.", ADD, handler=add))


async def test_a_three_round_tool_loop_feeds_each_result_back(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer, notebook: CollectingChannel
) -> None:
    calls: list[dict[str, Any]] = []
    register_add(agent, calls)
    model.queue_tool_call("calc_add", {"a": 1, "b": 2}, call_id="c1")
    model.queue_tool_call("calc_add", {"a": 3, "b": 4}, call_id="c2")
    model.queue_text("1+2 is 3 and 3+4 is 7.")

    result = await kernel.inputs.say("add things", channel="notebook")

    assert result.reply == "1+2 is 3 and 3+4 is 7." and result.rounds == 3
    assert result.ended_by == "answer" and result.delivered
    assert calls == [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    first, second, third = model.requests
    assert tool_messages(first) == []
    assert [m["content"] for m in tool_messages(second)] == ["3"]
    assert [m["content"] for m in tool_messages(third)] == ["3", "7"]
    assert notebook.texts() == ["1+2 is 3 and 3+4 is 7."]


async def test_max_tool_rounds_caps_the_loop_and_asks_for_an_answer(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer, events: Recorder
) -> None:
    await kernel.config.set("core.agent.max_tool_rounds", 3)
    calls: list[dict[str, Any]] = []
    register_add(agent, calls)
    for i in range(3):
        model.queue_tool_call("calc_add", {"a": i, "b": i}, call_id=f"c{i}")
    model.queue_text("I stopped adding.")

    result = await kernel.inputs.say("keep adding")

    assert len(calls) == 3 and len(model.requests) == 4
    assert all("calc_add" in offered(r) for r in model.requests[:3])
    assert offered(model.requests[3]) == []  # the last call offers no tools at all
    assert result.reply == "I stopped adding." and result.ended_by == "max_tool_rounds"
    [cap] = events.of(EventType.SYSTEM)
    assert (cap.payload.kind, cap.payload.detail["rounds"]) == ("max_tool_rounds", 3)
    assert result.rounds == 4  # the answer at the cap is a model call, and a round, of its own


async def test_a_crashing_stage_handler_is_isolated_and_the_turn_goes_on(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer, events: Recorder
) -> None:
    def crash(ctx: StageContext) -> None:
        raise ValueError("plugin bug")

    def inject(ctx: StageContext) -> None:
        ctx.context_messages.append({"role": "system", "content": "Today is Tuesday."})

    agent.stagehost.register_stage(Stage.PRE_ACTION, crash, owner="buggy")
    agent.stagehost.register_stage(Stage.PRE_ACTION, inject, owner="calendar")
    model.queue_text("It is Tuesday.")

    assert (await kernel.inputs.say("what day is it?")).reply == "It is Tuesday."
    [error] = events.of(EventType.STAGE_HANDLER_ERROR)
    assert error.payload.handler.startswith("buggy:") and "ValueError" in error.payload.error
    sent = model.last_request.json["messages"]
    assert {"role": "system", "content": "Today is Tuesday."} in sent


async def test_invalid_tool_arguments_go_back_and_the_model_corrects_them(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    calls: list[dict[str, Any]] = []
    register_add(agent, calls)
    model.queue_tool_call("calc_add", {"a": "one", "b": 2}, call_id="bad")
    model.queue_tool_call("calc_add", {"a": 1, "b": 2}, call_id="good")
    model.queue_text("3")

    result = await kernel.inputs.say("add one and two")

    assert calls == [{"a": 1, "b": 2}] and result.reply == "3"
    [error] = tool_messages(model.requests[1])
    assert 'a: "one" is not of type "integer"' in error["content"]
    assert [r.is_error for r in result.tool_results] == [True, False]


async def test_calls_of_one_round_run_concurrently(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    # Each tool waits for the other's signal: executed one after the other, they deadlock.
    ping, pong = asyncio.Event(), asyncio.Event()

    async def left(args: dict[str, Any]) -> str:
        ping.set()
        await pong.wait()
        return "left done"

    async def right(args: dict[str, Any]) -> str:
        pong.set()
        await ping.wait()
        return "right done"

    agent.stagehost.register_tool(ToolDef("pair_left", "x", handler=left))
    agent.stagehost.register_tool(ToolDef("pair_right", "x", handler=right))
    model.queue(ScriptedReply(tool_calls=[ToolCall("l", "pair_left"), ToolCall("r", "pair_right")]))
    model.queue_text("both done")

    result = await within_deadline(kernel.inputs.say("run both"))

    assert result.reply == "both done"
    assert sorted(m["content"] for m in tool_messages(model.last_request)) == [
        "left done",
        "right done",
    ]


async def test_before_toolcall_can_deny_and_a_round_all_denied_ends_the_loop(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    ran: list[dict[str, Any]] = []
    agent.stagehost.register_tool(ToolDef("danger_rm", "Delete a path.", handler=ran.append))
    agent.stagehost.register_stage(
        Stage.BEFORE_TOOLCALL,
        lambda ctx: setattr(ctx, "deny", ctx.tool_call.name == "danger_rm"),
    )
    model.queue(ScriptedReply(text="Deleting.", tool_calls=[ToolCall("d", "danger_rm")]))

    result = await kernel.inputs.say("delete everything")

    assert ran == [] and len(model.requests) == 1
    assert result.ended_by == "all_denied" and result.reply == "Deleting."
    assert result.tool_results[0].denied


async def test_before_toolcall_can_modify_the_arguments(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    calls: list[dict[str, Any]] = []
    register_add(agent, calls)

    def clamp(ctx: StageContext) -> None:
        ctx.tool_call = ToolCall(ctx.tool_call.id, ctx.tool_call.name, {"a": 0, "b": 0})

    agent.stagehost.register_stage(Stage.BEFORE_TOOLCALL, clamp)
    model.queue_tool_call("calc_add", {"a": 5, "b": 5})
    model.queue_text("zero")
    await kernel.inputs.say("add")
    assert calls == [{"a": 0, "b": 0}]


async def test_after_toolcall_can_rewrite_the_result_the_model_sees(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    register_add(agent, [])

    def redact(ctx: StageContext) -> None:
        ctx.tool_result.content = "[redacted]"

    agent.stagehost.register_stage(Stage.AFTER_TOOLCALL, redact)
    model.queue_tool_call("calc_add", {"a": 1, "b": 1})
    model.queue_text("ok")
    await kernel.inputs.say("add")
    assert [m["content"] for m in tool_messages(model.last_request)] == ["[redacted]"]


async def test_a_short_circuit_at_on_input_skips_to_after_output(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer, notebook: CollectingChannel
) -> None:
    reached: list[str] = []
    agent.stagehost.register_stage(
        Stage.ON_INPUT, lambda ctx: setattr(ctx, "response", "You are muted.")
    )
    for stage in (Stage.PRE_ACTION, Stage.BEFORE_OUTPUT, Stage.AFTER_OUTPUT):
        agent.stagehost.register_stage(stage, lambda ctx, s=stage: reached.append(s.value))

    result = await kernel.inputs.say("spam")

    assert result.reply == "You are muted." and result.ended_by == "short_circuit:on_input"
    assert model.requests == [] and reached == ["after_output"]
    assert notebook.texts() == ["You are muted."]


async def test_before_output_rewrites_the_reply_and_after_output_only_reads_it(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer, notebook: CollectingChannel
) -> None:
    seen: list[str] = []

    def sign(ctx: StageContext) -> None:
        ctx.final_text += " ~holo"

    def rewrite_late(ctx: StageContext) -> None:
        seen.append(ctx.final_text)
        ctx.final_text = "too late"

    agent.stagehost.register_stage(Stage.BEFORE_OUTPUT, sign)
    agent.stagehost.register_stage(Stage.AFTER_OUTPUT, rewrite_late)
    model.queue_text("hello")

    result = await kernel.inputs.say("hi")

    assert notebook.texts() == ["hello ~holo"] and seen == ["hello ~holo"]
    assert result.reply == "hello ~holo"


async def test_post_action_sees_the_model_output_and_can_drop_calls(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    ran: list[dict[str, Any]] = []
    agent.stagehost.register_tool(ToolDef("danger_rm", "x", handler=ran.append))

    def drop(ctx: StageContext) -> None:
        ctx.tool_calls = [c for c in ctx.tool_calls if c.name != "danger_rm"]
        ctx.llm_text = ctx.llm_text.replace("darn", "d**n")

    agent.stagehost.register_stage(Stage.POST_ACTION, drop)
    model.queue(ScriptedReply(text="darn", tool_calls=[ToolCall("d", "danger_rm")]))
    result = await kernel.inputs.say("x")
    assert ran == [] and result.reply == "d**n" and len(model.requests) == 1


async def test_output_caps_are_enforced_on_the_models_sends(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    test_channel = kernel.state.channels.get("test").handler
    model.queue_tool_call("output_send__test", {"payload": "cat.png", "type": "image"})
    model.queue(
        ScriptedReply(
            tool_calls=[
                ToolCall("a", "output_send__test", {"payload": "first"}),
                ToolCall("b", "output_send__test", {"payload": "second"}),
            ]
        )
    )
    model.queue_text("sent")

    await kernel.inputs.say("send things", channel="notebook")

    [refused] = tool_messages(model.requests[1])
    assert '"image" is not one of "text"' in refused["content"]
    assert sorted(test_channel.texts()) == ["first", "second"]  # two sends in one round


async def test_every_step_is_published(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer, events: Recorder
) -> None:
    register_add(agent, [])
    model.queue(
        ScriptedReply(
            reasoning="I should add.", tool_calls=[ToolCall("c", "calc_add", {"a": 1, "b": 1})]
        )
    )
    model.queue_text("2")
    await kernel.inputs.say("1+1?")
    await asyncio.sleep(0)
    assert events.of(EventType.RAW_INPUT)[0].payload.text == "1+1?"
    chain = events.of(EventType.AGENT_LLM_CHAIN)
    assert [c.payload.round for c in chain] == [1, 2]
    assert chain[0].payload.tool_calls[0]["name"] == "calc_add"
    assert events.of(EventType.REASONING)[0].payload.text == "I should add."
    assert events.of(EventType.TOOL_CALL)[0].payload.result == "2"
    assert events.of(EventType.AGENT_OUTPUT)[0].payload.text == "2"
    assert {e.payload.stage for e in events.of(EventType.STAGE)} == {s.value for s in Stage}
    # The scheduler's decisions around the turn (start, finish) are the scheduler's words.
    kinds = [e.type for e in events.events if e.type != EventType.SCHEDULER]
    assert kinds.index(EventType.TURN_STARTED) < kinds.index(EventType.AGENT_LLM_CHAIN)
    assert kinds[-1] == EventType.TURN_FINISHED, "the turn's last word"
    finished = events.of(EventType.TURN_FINISHED)[0].payload
    assert (finished.ended_by, finished.rounds, finished.channel) == (
        "answer",
        2,
        "notebook",
    )
    assert finished.model_ms > 0 and finished.kernel_ms >= 0


async def test_kernel_say_returns_the_reply(kernel: Kernel, model: ScriptedModelServer) -> None:
    model.queue_text("Hello from the model.")
    assert await kernel.say("hello") == "Hello from the model."
    assert model.last_request.json["messages"][-1] == {"role": "user", "content": "hello"}


async def test_a_turn_that_fails_or_is_stopped_still_publishes_turn_finished(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer, events: Recorder
) -> None:
    # No recoverydiag: a model that fails ends the turn in error.
    assert agent.without_model is not None
    agent.unmount_without_model(agent.without_model)
    with pytest.raises(Exception, match="no LLM source answered"):
        await kernel.inputs.say("nothing is queued, so the model fails")  # scripted: empty
    (failed,) = events.of(EventType.TURN_FINISHED)
    assert (
        failed.payload.ended_by == "error"
        and "AllProvidersFailed" in failed.payload.detail["error"]
    )

    model.queue(ScriptedReply(text="never", delay=30))
    running = await kernel.inject("a long one")
    await within_deadline(model.wait_for_requests(2))
    kernel.stop_turn()
    await asyncio.gather(running, return_exceptions=True)
    async with asyncio.timeout(10):  # the stop is written down after the ticket ends
        while len(events.of(EventType.TURN_FINISHED)) < 2:  # noqa: ASYNC110
            await asyncio.sleep(0.005)
    started = events.of(EventType.TURN_STARTED)
    finished = events.of(EventType.TURN_FINISHED)
    assert len(started) == len(finished) == 2
    assert finished[1].payload.ended_by == "stopped"


async def test_every_event_of_a_turn_names_the_input_it_belongs_to(
    kernel: Kernel, model: ScriptedModelServer, events: Recorder
) -> None:
    assert kernel.state.scheduler is not None
    model.queue_text("hello back")

    ticket = await kernel.state.scheduler.submit("hello", "notebook")
    await ticket

    from_the_turn = [e for e in events.events if e.source == "agent"]
    kinds = {e.type for e in from_the_turn}
    assert {EventType.TURN_STARTED, EventType.AGENT_OUTPUT, EventType.TURN_FINISHED} <= kinds
    assert {e.payload.input_id for e in from_the_turn} == {ticket.id}
