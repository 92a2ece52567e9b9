"""Resident sub-agents: created, sent tasks and reclaimed through the `resident_agents` tool,
each with its own scheduler and notes, reporting back into the main agent's queue."""

from __future__ import annotations

import asyncio
import logging

import pytest

from hologram import Kernel
from hologram.agent.resident import Residents
from hologram.channels import CollectingChannel
from hologram.llm import ScriptedModelServer, ScriptedReply
from hologram.sdk import Priority, ToolCall, ToolError
from tests.agent.conftest import SlowNote, within_deadline

SLOW = 30.0


def residents_of(kernel: Kernel) -> Residents:
    residents = kernel.inputs.residents
    assert residents is not None
    return residents


def system_text(request) -> str:  # type: ignore[no-untyped-def]
    return request.json["messages"][0]["content"]


async def wait_until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(10):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.005)


async def test_the_main_agent_creates_a_resident_sends_it_a_task_and_hears_back_at_l3(
    kernel: Kernel, model: ScriptedModelServer, notebook: CollectingChannel
) -> None:
    brief = {"action": "create", "name": "scout", "brief": "Look things up for me."}
    task = {"action": "send", "name": "scout", "text": "find the answer"}
    model.queue(ScriptedReply(tool_calls=[ToolCall("c1", "resident_agents", brief)]))
    model.queue(ScriptedReply(tool_calls=[ToolCall("c2", "resident_agents", task)]))
    # The main turn's last call and the resident's first race for the next reply; both
    # get the same text, so the outcome does not depend on which comes first.
    model.queue_text("42").queue_text("42")
    model.queue_text("the scout says 42")
    # Asked at L3, so the report (L3 too) waits for this turn instead of preempting it.
    await within_deadline(kernel.inject("ask the scout", level=Priority.L3))
    await wait_until(lambda: "the scout says 42" in notebook.texts(), "the report answered")

    scout = next(r for r in model.requests if "You are 'scout'" in system_text(r))
    assert "Look things up for me." in system_text(scout)
    assert scout.json["messages"][-1] == {"role": "user", "content": "find the answer"}
    tools = {t["function"]["name"] for t in scout.json.get("tools", [])}
    assert "resident_agents" not in tools and "spawn_child" not in tools
    assert any(name.startswith("output_send__") for name in tools), "it shares the channels"

    journal = kernel.inputs.journal
    report = await journal.get(2)
    assert report is not None
    assert report["text"] == "[resident scout] task 1 done:\n42"
    assert (report["level"], report["source"], report["channel"]) == (
        3,
        "resident:scout",
        "notebook",
    )
    assert notebook.texts() == ["42", "the scout says 42"]
    (status,) = residents_of(kernel).status()
    assert status["done"] == 1 and status["memory_messages"] == 2 and not status["busy"]


async def test_a_residents_task_is_preempted_by_a_higher_one_and_its_tool_runs_once(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    note = SlowNote(kernel)
    residents = residents_of(kernel)
    residents.create("clerk", "Keep notes.")
    model.queue(ScriptedReply(tool_calls=[ToolCall("n1", "notes_add", {"text": "milk"})]))
    model.queue_text("urgent handled")
    model.queue_text("noted the milk")
    model.queue_text("ok").queue_text("ok")  # the main agent reading the two reports
    residents.send("clerk", "note milk", "notebook", report=False)
    await within_deadline(note.running.wait())
    residents.send("clerk", "urgent!", "notebook", Priority.L3, report=False)
    await wait_until(lambda: residents.get("clerk").done == 1, "the L3 task ran first")
    assert residents.get("clerk").memory[1].content == "urgent handled"
    note.release.set()
    await wait_until(lambda: residents.get("clerk").done == 2, "the first task resumed")
    assert note.runs == ["milk"], "the tool call ran once, across the preemption"
    assert residents.get("clerk").memory[3].content == "noted the milk"
    last = model.requests[-1].json["messages"]
    assert any(m["role"] == "tool" and m["content"] == "noted" for m in last)


async def test_reclaim_returns_unfinished_tasks_to_the_main_queue_and_the_notes_to_the_agent(
    kernel: Kernel, model: ScriptedModelServer, notebook: CollectingChannel
) -> None:
    residents = residents_of(kernel)
    residents.create("slowpoke", "Think slowly.")
    model.queue(ScriptedReply(text="never", delay=SLOW))
    residents.send("slowpoke", "first job", "notebook")
    await within_deadline(model.wait_for_requests(1))
    residents.send("slowpoke", "second job", "notebook")
    model.queue_text("did the first").queue_text("did the second")
    outcome = await residents.remove("slowpoke", "keep", keep_memory=True)
    assert outcome == {"name": "slowpoke", "residual": "keep", "unfinished": 2, "memory": []}
    await within_deadline(model.wait_for_disconnect())  # its running model call was cut off
    await wait_until(lambda: len(notebook.texts()) == 2, "the main agent ran both")
    journal = kernel.inputs.journal
    returned = [await journal.get(i) for i in (1, 2)]
    assert [(r["text"], r["source"], r["level"]) for r in returned] == [
        ("first job", "resident:slowpoke", 0),
        ("second job", "resident:slowpoke", 0),
    ]
    assert notebook.texts() == ["did the first", "did the second"]
    assert residents.names() == []


async def test_destroy_with_drop_logs_each_dropped_task_and_hands_nothing_back(
    kernel: Kernel, model: ScriptedModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    residents = residents_of(kernel)
    residents.create("temp", "Do chores.")
    model.queue(ScriptedReply(text="never", delay=SLOW))
    residents.send("temp", "wash up", "notebook")
    await within_deadline(model.wait_for_requests(1))
    residents.send("temp", "sweep", "notebook")
    with caplog.at_level(logging.WARNING, "hologram.agent.resident"):
        outcome = await residents.remove("temp", "drop", keep_memory=False)
    assert outcome == {"name": "temp", "residual": "drop", "unfinished": 2}
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert dropped == [
        "resident temp: dropped an unfinished task: wash up",
        "resident temp: dropped an unfinished task: sweep",
    ]
    assert (await kernel.inputs.journal.counts()) == {}, "nothing reached the main queue"


async def test_compress_folds_a_residents_notes_into_the_models_summary(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    residents = residents_of(kernel)
    residents.create("scribe", "Summarise articles.")
    model.queue_text("article one is about tea").queue_text("article two is about rain")
    residents.send("scribe", "read article one", "notebook", report=False)
    residents.send("scribe", "read article two", "notebook", report=False)
    await wait_until(lambda: residents.get("scribe").done == 2, "both read")
    assert len(residents.get("scribe").memory) == 4
    model.queue_text("Read two articles: tea, rain.")
    assert await residents.compress("scribe") == "Read two articles: tea, rain."
    (note,) = residents.get("scribe").memory
    assert note.content == "(summary of earlier work) Read two articles: tea, rain."
    asked = model.requests[-1].json["messages"]
    assert (
        asked[1]["content"] == "read article one" and "Summarise your work" in asked[-1]["content"]
    )


async def test_the_tool_refuses_bad_requests_saying_why(kernel: Kernel) -> None:
    tool = kernel.state.stagehost.tools.get("resident_agents")
    assert tool is not None and tool.handler is not None
    call = tool.handler

    await call({"action": "create", "name": "a1", "brief": "x"})
    cases = [
        ({"action": "create", "name": "Bad Name", "brief": "x"}, "is not allowed"),
        ({"action": "create", "name": "a1", "brief": "x"}, "exists already"),
        ({"action": "create", "name": "a2", "brief": "  "}, "needs 'brief'"),
        ({"action": "create", "brief": "x"}, "needs 'name'"),
        ({"action": "send", "name": "nobody", "text": "hi"}, "no resident named 'nobody'"),
        ({"action": "send", "name": "a1"}, "needs 'text'"),
        ({"action": "destroy", "name": "a1", "residual": "maybe"}, "'keep' or 'drop'"),
    ]
    for args, reason in cases:
        with pytest.raises(ToolError, match=reason):
            await call(args)
    with pytest.raises(ToolError, match="L4 is the kernel's own level"):
        residents_of(kernel).send("a1", "hi", "notebook", Priority.L4)
    await kernel.config.set("core.agent.max_residents", 1)
    with pytest.raises(ToolError, match="the most allowed"):
        await call({"action": "create", "name": "a3", "brief": "x"})
    assert [r["name"] for r in await call({"action": "list"})] == ["a1"]
