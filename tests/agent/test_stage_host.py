"""The stage host: concurrency, isolation, short-circuit and per-stage write rights."""

from __future__ import annotations

import asyncio
import logging

import pytest

from hologram.sdk import (
    STAGE_WRITABLE,
    Event,
    EventType,
    HandlerScope,
    Stage,
    StageContext,
    ToolCall,
    ToolDef,
)
from hologram.stages import StageHost

DEADLINE = 10.0  # a generous bound that only a deadlock reaches


@pytest.fixture
def published() -> list[Event]:
    return []


@pytest.fixture
def host(published: list[Event]) -> StageHost:
    return StageHost(published.append, handler_timeout=lambda: DEADLINE)


def of_type(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e.type == kind]


async def test_handlers_of_one_stage_run_concurrently(host: StageHost) -> None:
    # Each handler waits for the other's signal: run one after the other, they would deadlock.
    first, second = asyncio.Event(), asyncio.Event()

    async def a(ctx: StageContext) -> None:
        first.set()
        await second.wait()
        ctx.extra["a"] = True

    async def b(ctx: StageContext) -> None:
        second.set()
        await first.wait()
        ctx.extra["b"] = True

    host.register_stage(Stage.PRE_ACTION, a)
    host.register_stage(Stage.PRE_ACTION, b)
    ctx = StageContext(raw_message="hi")
    async with asyncio.timeout(DEADLINE):
        run = await host.run_stage(Stage.PRE_ACTION, ctx)
    assert ctx.extra == {"a": True, "b": True}
    assert run.handlers == 2 and run.failed == ()


async def test_a_crashing_handler_is_isolated_logged_and_published(
    host: StageHost, published: list[Event], caplog: pytest.LogCaptureFixture
) -> None:
    def crash(ctx: StageContext) -> None:
        raise RuntimeError("plugin bug")

    async def fine(ctx: StageContext) -> None:
        await asyncio.sleep(0)
        ctx.raw_message = "rewritten"

    host.register_stage(Stage.ON_INPUT, crash, owner="buggy")
    host.register_stage(Stage.ON_INPUT, fine)
    ctx = StageContext(raw_message="hi")
    with caplog.at_level(logging.ERROR):
        run = await host.run_stage(Stage.ON_INPUT, ctx)
    assert ctx.raw_message == "rewritten"
    assert run.failed == (
        "buggy:test_a_crashing_handler_is_isolated_logged_and_published.<locals>.crash",
    )
    [event] = of_type(published, EventType.STAGE_HANDLER_ERROR)
    assert event.payload.error == "RuntimeError: plugin bug"
    assert "raise RuntimeError" in event.payload.traceback
    assert any(r.exc_info and "plugin bug" in str(r.exc_info[1]) for r in caplog.records)


async def test_a_hanging_handler_is_cut_off_by_its_timeout(published: list[Event]) -> None:
    host = StageHost(published.append, handler_timeout=lambda: 0.01)

    async def hang(ctx: StageContext) -> None:
        await asyncio.Event().wait()

    host.register_stage(Stage.PRE_ACTION, hang)
    run = await host.run_stage(Stage.PRE_ACTION, StageContext(raw_message="x"))
    assert len(run.failed) == 1
    assert "timed out" in of_type(published, EventType.STAGE_HANDLER_ERROR)[0].payload.error


async def test_setting_response_reports_a_short_circuit(host: StageHost) -> None:
    host.register_stage(Stage.ON_INPUT, lambda ctx: setattr(ctx, "response", "blocked"))
    ctx = StageContext(raw_message="spam")
    run = await host.run_stage(Stage.ON_INPUT, ctx)
    assert run.short_circuit and ctx.response == "blocked"


async def test_after_output_is_read_only(host: StageHost, published: list[Event]) -> None:
    def rewrite(ctx: StageContext) -> None:
        ctx.final_text = "changed after sending"

    host.register_stage(Stage.AFTER_OUTPUT, rewrite)
    ctx = StageContext(raw_message="hi", final_text="sent")
    run = await host.run_stage(Stage.AFTER_OUTPUT, ctx)
    assert ctx.final_text == "sent"
    assert run.refused and not run.failed
    [event] = of_type(published, EventType.STAGE_WRITE_REFUSED)
    assert "may not change 'final_text' in stage after_output" in event.payload.error


async def test_in_place_edits_of_a_read_only_field_are_refused(
    host: StageHost, published: list[Event]
) -> None:
    # on_input may rewrite the raw message but not the context messages: editing the list in
    # place must neither reach the shared context nor pass unnoticed.
    def sneak(ctx: StageContext) -> None:
        ctx.context_messages.append({"role": "system", "content": "injected"})
        ctx.raw_message = "allowed"

    host.register_stage(Stage.ON_INPUT, sneak)
    ctx = StageContext(raw_message="hi")
    run = await host.run_stage(Stage.ON_INPUT, ctx)
    assert ctx.context_messages == [] and ctx.raw_message == "allowed"
    assert run.refused
    assert (
        "'context_messages'" in of_type(published, EventType.STAGE_WRITE_REFUSED)[0].payload.error
    )


@pytest.mark.parametrize("stage", list(Stage))
async def test_each_stage_lets_handlers_write_exactly_its_fields(
    host: StageHost, stage: Stage
) -> None:
    tried: dict[str, bool] = {}
    values = {
        "raw_message": "x",
        "context_messages": [{"role": "system", "content": "x"}],
        "llm_text": "x",
        "tool_calls": [ToolCall("c", "t")],
        "tool_call": ToolCall("c", "t"),
        "deny": True,
        "tool_result": None,
        "tool_results": [],
        "final_text": "x",
        "skip_output": True,
        "response": None,
        "extra": {"k": 1},
        "memory": [],
        "user_id": "u",
    }

    def probe(ctx: StageContext) -> None:
        for name, value in values.items():
            try:
                setattr(ctx, name, value)
                tried[name] = True
            except PermissionError:
                tried[name] = False

    host.register_stage(stage, probe)
    await host.run_stage(stage, StageContext(raw_message="hi"))
    assert {name for name, ok in tried.items() if ok} == STAGE_WRITABLE[stage] & set(values)


async def test_own_tools_handlers_see_only_calls_to_their_plugins_tools(host: StageHost) -> None:
    seen: list[str] = []
    host.register_tool(ToolDef("weather_today", "today's weather", handler=lambda a: "sun"))
    host.register_tool(ToolDef("news_top", "top news", handler=lambda a: "none"))
    host.register_stage(
        Stage.BEFORE_TOOLCALL,
        lambda ctx: seen.append(ctx.tool_call.name),
        scope=HandlerScope.OWN_TOOLS,
        owner="weather",
    )
    for name in ("weather_today", "news_top"):
        await host.run_stage(
            Stage.BEFORE_TOOLCALL, StageContext(raw_message="", tool_call=ToolCall("1", name))
        )
    assert seen == ["weather_today"]


def test_own_tools_scope_outside_the_tool_stages_is_refused(host: StageHost) -> None:
    with pytest.raises(ValueError, match="only applies to before_toolcall"):
        host.register_stage(
            Stage.ON_INPUT, lambda ctx: None, scope=HandlerScope.OWN_TOOLS, owner="p"
        )


async def test_unregistering_a_plugin_removes_its_handlers_and_tools(host: StageHost) -> None:
    calls: list[str] = []
    host.register_stage(Stage.PRE_ACTION, lambda ctx: calls.append("p"), owner="p")
    host.register_tool(ToolDef("p_tool", "x", handler=lambda a: "x"))
    host.unregister_plugin("p")
    await host.run_stage(Stage.PRE_ACTION, StageContext(raw_message=""))
    assert calls == [] and "p_tool" not in host.tools


async def test_every_stage_run_is_published_with_its_duration(
    host: StageHost, published: list[Event]
) -> None:
    await host.run_stage(Stage.PRE_ACTION, StageContext(raw_message=""))
    [event] = of_type(published, EventType.STAGE)
    assert event.payload.stage == "pre_action" and event.payload.ms >= 0
