"""The preemption widget draws what the scheduler's trace events say happened."""

from __future__ import annotations

import asyncio

import pytest

from hologram.agent import TaskStopped
from hologram.events import EventBus
from hologram.kernel import KernelTasks, ManualClock
from hologram.notebook.scheduler_widget import SchedulerWidget
from hologram.sdk import (
    AgentOutputDelta,
    Priority,
    SchedulerDecision,
)
from tests.scheduler.test_dispatcher import DEADLINE, Script, Scripted, wait_for


async def test_the_timeline_shows_runs_per_lane_preempt_resume_and_the_stack(
    tasks: KernelTasks,
) -> None:
    bus = EventBus(tasks=tasks.scope("events"))
    clock = ManualClock()
    script = Script()
    loop = Scripted(script, clock, tasks=tasks, observe=lambda d, _: bus.emit(d.as_payload()))
    loop.start()
    widget = SchedulerWidget(bus.subscribe)
    try:
        work = loop.give("work")
        await wait_for(script.began("work"))
        await clock.advance(1.0)
        loop.give("timer", Priority.L3)
        await wait_for(script.began("timer"))
        # Live: while the interrupt runs, the preempted input sits on the stack.
        assert f"interrupt stack (bottom → top): #{work.id}" in widget.svg
        assert 'data-mark="preempt"' in widget.svg
        await clock.advance(0.5)
        script.gate("timer").set()
        script.gate("work").set()
        await asyncio.wait_for(work.outcome, DEADLINE)
        await asyncio.sleep(0)
        svg = widget.svg
        assert svg.count('class="run"') == 3  # work, timer, work again
        assert svg.count(f'data-task="{work.id}" data-level="0"') == 2
        assert 'data-level="3" data-ended="finish"' in svg
        assert 'data-mark="resume"' in svg
        assert "interrupt stack (bottom → top): empty" in svg
    finally:
        widget.close()
        await loop.close()
        await bus.close()


async def test_a_stop_is_marked(tasks: KernelTasks) -> None:
    bus = EventBus(tasks=tasks.scope("events"))
    script = Script()
    loop = Scripted(
        script, ManualClock(), tasks=tasks, observe=lambda d, _: bus.emit(d.as_payload())
    )
    loop.start()
    widget = SchedulerWidget(bus.subscribe)
    try:
        long = loop.give("long")
        await wait_for(script.began("long"))
        loop.stop()
        with pytest.raises(TaskStopped):
            await asyncio.wait_for(long.outcome, DEADLINE)
        assert 'data-mark="stop"' in widget.svg and 'data-ended="stop"' in widget.svg
    finally:
        widget.close()
        await loop.close()
        await bus.close()


async def test_a_streamed_reply_is_one_entry_that_grows_and_a_restart_begins_again(
    tasks: KernelTasks,
) -> None:
    bus = EventBus(tasks=tasks.scope("events"))
    widget = SchedulerWidget(bus.subscribe)
    try:
        bus.emit(SchedulerDecision(action="start", task=7, at=0.0, level=0))
        for piece in ["Once ", "upon ", "a time"]:
            bus.emit(AgentOutputDelta(input_id=7, round=0, text=piece))
        bus.emit(AgentOutputDelta(input_id=7, round=0, text="hmm", reasoning=True))
        streamed = [e for e in widget.events if e["type"] == "agent_output_delta"]
        assert len(streamed) == 1 and streamed[0]["payload"]["chars"] == len("Once upon a time")
        assert streamed[0]["payload"]["since"] <= streamed[0]["timestamp"]
        bus.emit(AgentOutputDelta(input_id=7, round=1, text="", restart=True))
        bus.emit(AgentOutputDelta(input_id=7, round=1, text="Again"))
        streamed = [e["payload"] for e in widget.events if e["type"] == "agent_output_delta"]
        assert [(p["chars"], p.get("restart", False)) for p in streamed] == [(16, False), (5, True)]
    finally:
        widget.close()
        await bus.close()
