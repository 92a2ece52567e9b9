"""The scheduler driving real turns against the scripted model over real HTTP."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.agent import InputJournal, InputState, TaskStopped
from hologram.channels import CollectingChannel
from hologram.llm import ScriptedModelServer, ScriptedReply
from hologram.memory import TurnStoreError
from hologram.sdk import EventType, Priority, SchedulerDecision, ToolCall, ToolDef
from tests.agent.conftest import Recorder, SlowNote, within_deadline

SLOW = 30.0  # seconds the model "thinks": far longer than any test waits


def user_text(request) -> str:  # type: ignore[no-untyped-def]
    return next(m["content"] for m in reversed(request.json["messages"]) if m["role"] == "user")


async def test_an_l3_interrupt_aborts_the_model_call_and_runs_before_the_turn_resumes(
    kernel: Kernel, model: ScriptedModelServer, notebook: CollectingChannel
) -> None:
    model.queue(ScriptedReply(text="the slow story", delay=SLOW))
    model.queue_text("the timer answer")
    model.queue_text("the story, at last")
    story = await kernel.inject("tell me a long story")
    await within_deadline(model.wait_for_requests(1))
    timer = await kernel.inject("the timer rang", level=Priority.L3)
    await within_deadline(model.wait_for_disconnect())  # the in-flight request was aborted
    assert (await within_deadline(timer)).reply == "the timer answer"
    assert (await within_deadline(story)).reply == "the story, at last"
    assert [user_text(r) for r in model.requests] == [
        "tell me a long story",
        "the timer rang",
        "tell me a long story",  # the cancelled call, made again on resume
    ]
    assert notebook.texts() == ["the timer answer", "the story, at last"]


async def test_a_resumed_turn_does_not_run_a_tool_call_again(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    note = SlowNote(kernel)
    model.queue(ScriptedReply(tool_calls=[ToolCall("c1", "notes_add", {"text": "milk"})]))
    model.queue_text("interrupt handled")
    model.queue_text("noted the milk")
    work = await kernel.inject("note milk")
    await within_deadline(model.wait_for_requests(1))
    await within_deadline(note.running.wait())  # the tool is running now
    urgent = await kernel.inject("urgent!", level=Priority.L3)
    assert (await within_deadline(urgent)).reply == "interrupt handled"
    note.release.set()
    result = await within_deadline(work)
    assert result.reply == "noted the milk"
    assert note.runs == ["milk"], "the tool call ran once, across the preemption"
    last = model.requests[-1].json["messages"]
    assert any(m["role"] == "tool" and m["content"] == "noted" for m in last)


async def test_stop_short_circuits_exactly_the_inputs_waiting_at_that_moment(
    kernel: Kernel, model: ScriptedModelServer, notebook: CollectingChannel
) -> None:
    model.queue(ScriptedReply(text="never sent", delay=SLOW))
    model.queue_text("after the stop")
    running = await kernel.inject("a long question")
    await within_deadline(model.wait_for_requests(1))
    queued = await kernel.inject("second")
    await asyncio.sleep(0)
    in_inbox = await kernel.inject("third")  # not yet pumped: nothing yielded since
    assert kernel.inputs.pending_inputs() == 2
    covered = kernel.stop_turn()
    assert covered == [running.id, queued.id, in_inbox.id]
    after = await kernel.inject("after")

    with pytest.raises(TaskStopped):
        await within_deadline(running)
    for ticket in (queued, in_inbox):
        result = await within_deadline(ticket)
        assert result.ended_by == "stopped" and result.reply == ""
    assert (await within_deadline(after)).reply == "after the stop"
    assert [user_text(r) for r in model.requests] == ["a long question", "after"]
    assert notebook.texts() == ["after the stop"], "nothing of the stopped inputs is sent"
    timeline = "\n".join(kernel.state.memory.timeline())
    assert "a long question" in timeline and "(stopped)" in timeline
    journal = kernel.inputs.journal
    assert (await journal.get(running.id))["state"] == InputState.STOPPED


async def test_a_waiting_interrupt_is_told_to_the_running_turn_before_its_next_model_call(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    release = asyncio.Event()

    async def wait_a_bit(args: dict) -> str:
        await release.wait()
        return "waited"

    kernel.state.stagehost.register_tool(ToolDef("clock_wait", "Wait.", handler=wait_a_bit))
    model.queue(ScriptedReply(tool_calls=[ToolCall("w1", "clock_wait", {})]))
    model.queue_text("done waiting")
    model.queue_text("about the message")
    first = await kernel.inject("wait for me", level=Priority.L2)
    await within_deadline(model.wait_for_requests(1))
    second = await kernel.inject("a friend wrote", level=Priority.L2)  # same level: waits
    await asyncio.sleep(0.05)
    release.set()
    assert (await within_deadline(first)).reply == "done waiting"
    told = [m for m in model.requests[1].json["messages"] if m["role"] == "system"]
    assert any(m["content"] == "[interrupt] a friend wrote" for m in told)
    assert (await within_deadline(second)).reply == "about the message"


async def test_a_plugins_l4_is_clamped_to_l3(kernel: Kernel, model: ScriptedModelServer) -> None:
    model.queue_text("ok")
    ticket = await kernel.inputs.submit("from a plugin", level=Priority.L4, from_plugin=True)
    await within_deadline(ticket)
    assert ticket.task is not None and ticket.task.level is Priority.L3
    row = await kernel.inputs.journal.get(ticket.id)
    assert row is not None and row["level"] == 3, "a restart must not raise it back to L4"


async def test_consolidation_replies_write_memory_and_reach_no_channel(
    kernel: Kernel, model: ScriptedModelServer, notebook: CollectingChannel
) -> None:
    model.queue_text("merge them: same person")
    reply = await within_deadline(kernel.inputs.consolidate("Are 'Ann' and 'Anne' the same?"))
    assert reply == "merge them: same person"
    assert notebook.texts() == []
    assert "merge them: same person" in "\n".join(kernel.state.memory.timeline())


async def test_inputs_left_unfinished_by_a_crash_run_again_and_finished_ones_do_not(
    data_dir: Path, model: ScriptedModelServer
) -> None:
    journal = await InputJournal.open(data_dir / "inputs.db")
    done = await journal.record("already answered", "notebook", 0, "test")
    await journal.mark(done.id, InputState.DONE, "yes")
    running = await journal.record("was running when killed", "notebook", 0, "test")
    await journal.mark(running.id, InputState.RUNNING)
    queued = await journal.record("was waiting", "notebook", 0, "test")
    await journal.close()

    model.queue_text("answer one").queue_text("answer two")
    environ = {"HOLOGRAM_LLM_BASE_URL": model.base_url, "HOLOGRAM_LLM_MODEL": "m"}
    async with Kernel(data_dir, environ=environ) as kernel:
        await within_deadline(model.wait_for_requests(2))
        for _ in range(100):
            if (await kernel.inputs.journal.counts()).get("done") == 3:
                break
            await asyncio.sleep(0.02)
        assert (await kernel.inputs.journal.get(running.id))["reply"] == "answer one"
        assert (await kernel.inputs.journal.get(queued.id))["reply"] == "answer two"
    assert [user_text(r) for r in model.requests] == ["was running when killed", "was waiting"]


async def test_triage_answers_simple_waiting_inputs_and_tells_the_rest_to_wait(
    data_dir: Path, model: ScriptedModelServer
) -> None:
    from hologram.kernel import ManualClock

    clock = ManualClock()
    environ = {"HOLOGRAM_LLM_BASE_URL": model.base_url, "HOLOGRAM_LLM_MODEL": "m"}
    model.queue(ScriptedReply(text="the long job, done", delay=SLOW))
    model.queue_text("Hi! All is well here.")  # triage answers the greeting itself
    model.queue(ScriptedReply(tool_calls=[ToolCall("d1", "triage_defer", {"reason": "work"})]))
    async with Kernel(data_dir, environ=environ, clock=clock) as kernel:
        notebook = kernel.state.channels.get("notebook").handler
        offloads: list[SchedulerDecision] = []
        kernel.events.subscribe(
            "scheduler",
            lambda e: offloads.append(e.payload) if e.payload.action == "offload" else None,
        )
        long_job = await kernel.inject("do the long job")
        await within_deadline(model.wait_for_requests(1))
        greeting = await kernel.inject("hello there")
        plan = await kernel.inject("帮我规划下个月的旅行")
        await clock.advance(299)
        assert len(model.requests) == 1, "nothing is triaged before the threshold"
        await clock.advance(31)
        await within_deadline(model.wait_for_requests(3))
        result = await within_deadline(greeting)
        assert (result.reply, result.ended_by) == ("Hi! All is well here.", "triage")
        assert notebook.texts()[0] == "Hi! All is well here."
        await within_deadline(notebook.wait_for(2))
        assert "忙完马上回复你" in notebook.texts()[1]
        assert not plan.outcome.done() and kernel.inputs.pending_inputs() == 1
        triage_request = model.requests[1].json
        assert [t["function"]["name"] for t in triage_request["tools"]] == ["triage_defer"]
        assert "triage assistant" in triage_request["messages"][0]["content"]
        assert [(o.task, o.detail["answered"]) for o in offloads] == [
            (greeting.id, True),
            (plan.id, False),
        ]
        assert kernel.stop_turn() == [long_job.id, plan.id]
        await asyncio.gather(long_job, plan, return_exceptions=True)


async def test_an_idle_kernel_wakes_on_its_clock_only_for_its_heartbeat(
    data_dir: Path, model: ScriptedModelServer
) -> None:
    # A replay moves the clock through weeks: every other wake-up of an idle kernel is
    # a check with nothing to check, and they were nearly all of a replay's time.
    from hologram.kernel import ManualClock

    clock = ManualClock()
    environ = {"HOLOGRAM_LLM_BASE_URL": model.base_url, "HOLOGRAM_LLM_MODEL": "m"}
    async with Kernel(data_dir, environ=environ, clock=clock):
        await clock.settle()  # the heartbeat starts when the kernel says it is ready
        await clock.advance(86400.0)
    assert clock.wakeups, "the heartbeat ticks through a day"
    assert {name for name in clock.wakeups if not name.startswith("memory-heartbeat-")} == set()


async def test_a_watcher_woken_by_the_clock_that_goes_idle_is_at_rest(
    data_dir: Path, model: ScriptedModelServer
) -> None:
    # The backlog watcher sleeps on the clock while an input waits, and idles once none
    # does: a replay's `advance` waits for each woken task to rest, and an idle one must
    # count, or time stands still for the whole rest timeout (30 s in the eval).
    from hologram.kernel import ManualClock

    clock = ManualClock()
    environ = {"HOLOGRAM_LLM_BASE_URL": model.base_url, "HOLOGRAM_LLM_MODEL": "m"}
    async with Kernel(data_dir, environ=environ, clock=clock) as kernel:
        await clock.settle()
        model.queue_text("hi")
        await within_deadline(kernel.say("hello"))
        assert await clock.advance(60.0, rest_timeout_s=5.0) == 0
        assert clock.wakeups["backlog-triage"] == 1


@pytest.mark.parametrize("seed", range(4))
async def test_a_random_mix_of_inputs_interrupts_and_stops_leaves_no_input_unfinished(
    data_dir: Path, model: ScriptedModelServer, seed: int
) -> None:
    """Every acknowledged input ends (answered or stopped), in its ticket and in the journal,
    however stops fall on running, waiting, preempted and resuming turns."""
    import random

    rng = random.Random(seed)
    environ = {"HOLOGRAM_LLM_BASE_URL": model.base_url, "HOLOGRAM_LLM_MODEL": "m"}
    async with Kernel(data_dir, environ=environ) as kernel:
        await kernel.config.set("core.scheduler.preempt_cooldown_s", 0.01)
    for n in range(200):
        model.queue_text(f"answer {n}", delay=rng.choice((0.0, 0.005, 0.02)))
    async with Kernel(data_dir, environ=environ) as kernel:
        tickets = []
        for _ in range(60):
            roll = rng.random()
            if roll < 0.1:
                kernel.stop_turn()
            else:
                level = rng.choice(list(Priority)) if roll < 0.4 else Priority.QUEUED
                tickets.append(await kernel.inject(f"input {len(tickets)}", level=level))
            await asyncio.sleep(rng.choice((0.0, 0.0, 0.003, 0.01)))
        settled = asyncio.gather(*tickets, return_exceptions=True)
        try:
            outcomes = await within_deadline(asyncio.shield(settled))
        except TimeoutError:
            unsettled = [t.id for t in tickets if not t.outcome.done()]
            pytest.fail(f"inputs {unsettled} never ended; {kernel.inputs.status()}")
        journal = kernel.inputs.journal
        for ticket, outcome in zip(tickets, outcomes, strict=True):
            row = await journal.get(ticket.id)
            assert row is not None
            if isinstance(outcome, TaskStopped) or outcome.ended_by == "stopped":
                assert row["state"] == InputState.STOPPED, (ticket.id, row)
            else:
                assert not isinstance(outcome, BaseException), outcome
                assert row["state"] == InputState.DONE and row["reply"] == outcome.reply
        status = kernel.inputs.status()
        assert status["running"] is None and status["stack"] == [] and status["queue"] == []


async def test_an_input_is_marked_done_only_once_its_memory_is_stored(
    kernel: Kernel, model: ScriptedModelServer, data_dir: Path, events: Recorder
) -> None:
    """A turn's memory writes are queued, not awaited mid-turn; the journal marks the input
    done only after they are written, so a crash before then runs it again. A write that
    fails fails its input (reply or not), and only its input."""
    with sqlite3.connect(data_dir / "memory" / "turns.db") as db:
        db.execute(
            "CREATE TRIGGER poison BEFORE INSERT ON turns WHEN NEW.input = 'poison pill' "
            "BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
        )
    model.queue_text("swallowed")
    model.queue_text("fine")
    poisoned = await kernel.inject("poison pill")
    good = await kernel.inject("a good input")
    with pytest.raises(TurnStoreError, match="poisoned row"):
        await within_deadline(poisoned)
    assert (await within_deadline(good)).reply == "fine"
    journal = kernel.inputs.journal
    assert (await journal.get(poisoned.id))["state"] == InputState.FAILED
    assert (await journal.get(good.id))["state"] == InputState.DONE
    with sqlite3.connect(data_dir / "memory" / "turns.db") as db:
        stored = {row[0] for row in db.execute("SELECT input FROM turns")}
    assert "a good input" in stored and "poison pill" not in stored
    degraded = [e.payload for e in events.of(EventType.MEMORY_DEGRADED)]
    assert [p.layer for p in degraded] == ["turns"]
    assert "poisoned row" in degraded[0].problems[0]


async def test_an_input_has_one_id_the_journals_from_ticket_to_scheduler_to_its_events(
    kernel: Kernel, model: ScriptedModelServer, events: Recorder
) -> None:
    model.queue_text("first").queue_text("second")
    first = await kernel.inject("one")
    second = await kernel.inject("two")
    await within_deadline(second)
    await first
    journal = kernel.inputs.journal
    for ticket, text in ((first, "one"), (second, "two")):
        row = await journal.get(ticket.id)
        assert row is not None and row["text"] == text
        assert ticket.task is not None and ticket.task.id == ticket.id
        assert ticket.task.payload.record.id == ticket.id
    decided = {e.payload.task for e in events.of(EventType.SCHEDULER)}
    turns = {e.payload.input_id for e in events.of(EventType.TURN_FINISHED)}
    assert {first.id, second.id} <= decided & turns
