"""Through a whole kernel, its model the scripted server over real HTTP: the provider's delay
is honoured, a spent quota falls back at once, a prompt too long is pruned and asked again,
an overloaded stream is retried, replies stream as deltas and a stop keeps the partial."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.agent import TaskStopped
from hologram.llm import ScriptedModelServer, ScriptedReply
from hologram.sdk import Event, EventType, Priority, ToolCall

DEADLINE = 20.0


@pytest.fixture
async def kernel(data_dir: Path, server: ScriptedModelServer) -> AsyncIterator[Kernel]:
    environ = {
        "HOLOGRAM_LLM_BASE_URL": server.base_url,
        "HOLOGRAM_LLM_MODEL": "scripted-model",
        "HOLOGRAM_LLM_API_KEY": "sk-test",
    }
    async with Kernel(data_dir, environ=environ) as running:
        yield running


def recorded(kernel: Kernel) -> list[Event]:
    seen: list[Event] = []
    kernel.events.subscribe(None, seen.append)
    return seen


def of(seen: list[Event], kind: EventType) -> list[Event]:
    return [e for e in seen if e.type == kind]


async def test_a_429_with_retry_after_is_retried_after_that_delay_and_the_turn_succeeds(
    kernel: Kernel, server: ScriptedModelServer
) -> None:
    seen = recorded(kernel)
    server.queue(ScriptedReply(error="rate_limited", retry_after=1), ScriptedReply(text="ok now"))
    async with asyncio.timeout(DEADLINE):
        reply = await kernel.say("hello")
    assert reply == "ok now" and len(server.requests) == 2
    [retry] = of(seen, EventType.PROVIDER_RETRY)
    assert retry.payload.kind == "rate_limited" and retry.payload.provider_delay == 1.0
    assert 1.0 <= retry.payload.wait <= 1.1  # the provider's delay, plus at most 10 % jitter
    first, again = server.requests
    assert again.received_at - first.received_at >= 1.0  # and the kernel did wait it out
    assert of(seen, EventType.PROVIDER_UNAVAILABLE) == []


async def test_a_spent_quota_falls_back_to_the_next_source_at_once_and_stays_aside(
    kernel: Kernel, server: ScriptedModelServer, second_server: ScriptedModelServer
) -> None:
    seen = recorded(kernel)
    config = kernel.config
    await config.set("core.llm.sources.backup.base_url", second_server.base_url)
    await config.set("core.llm.sources.backup.model", "backup-model")
    await config.set("core.llm.source_order", ["default", "backup"])
    server.queue(ScriptedReply(error="quota"))
    second_server.queue_text("from the backup").queue_text("backup again")
    async with asyncio.timeout(DEADLINE):
        first = await kernel.say("hello")
        second = await kernel.say("and again")
    assert (first, second) == ("from the backup", "backup again")
    assert len(server.requests) == 1  # no retry, and not asked again while it cools down
    assert of(seen, EventType.PROVIDER_RETRY) == []
    [aside] = of(seen, EventType.PROVIDER_UNAVAILABLE)
    assert aside.payload.kind == "quota" and aside.payload.retry_in == 3600.0
    assert any(e.payload.llm_source == "default" for e in of(seen, EventType.PROVIDER_SKIPPED))


async def test_a_prompt_too_long_is_pruned_harder_and_asked_once_more(
    kernel: Kernel, server: ScriptedModelServer
) -> None:
    seen = recorded(kernel)
    # A small window, so the conversation so far fills the prompt's context budget.
    await kernel.config.set("core.llm.sources.default.context_window", 2000)
    for n in range(8):
        server.queue_text(f"noted {n}")
        async with asyncio.timeout(DEADLINE):
            await kernel.say(f"turn {n}: " + "a long sentence about the garden and the sea " * 8)
    server.queue(ScriptedReply(error="context_length"), ScriptedReply(text="it fits now"))
    async with asyncio.timeout(DEADLINE):
        reply = await kernel.say("what did I say?")
    assert reply == "it fits now"
    too_long, shorter = (r.json["messages"][0]["content"] for r in server.requests[-2:])
    assert len(shorter) < len(too_long)
    [retry] = of(seen, EventType.PROVIDER_RETRY)
    assert retry.payload.kind == "context_length" and retry.payload.squeeze == 0.5


async def test_a_stream_cut_by_an_overloaded_event_is_retried_and_begins_again(
    kernel: Kernel, server: ScriptedModelServer
) -> None:
    seen = recorded(kernel)
    await kernel.config.set("core.llm.overloaded_delay_s", 0.05)
    server.queue(
        ScriptedReply(text="half of an answer", stream_error="overloaded", error_after=2),
        ScriptedReply(text="the whole answer"),
    )
    async with asyncio.timeout(DEADLINE):
        reply = await kernel.say("hello")
    assert reply == "the whole answer"
    [retry] = of(seen, EventType.PROVIDER_RETRY)
    assert retry.payload.kind == "overloaded"
    deltas = of(seen, EventType.AGENT_OUTPUT_DELTA)
    restart = next(i for i, e in enumerate(deltas) if e.payload.restart)
    # What came before the restart (the firewall may hold the last letters back) is void.
    assert "half of ".startswith("".join(e.payload.text for e in deltas[:restart]))
    assert "".join(e.payload.text for e in deltas[restart + 1 :]) == "the whole answer"


async def test_deltas_carry_the_turns_input_id_and_turn_finished_carries_its_usage(
    kernel: Kernel, server: ScriptedModelServer
) -> None:
    seen = recorded(kernel)
    await kernel.config.set("core.llm.prices", {"scripted": {"input": 2.0, "output": 8.0}})
    server.queue(ScriptedReply(text="three small words", cached_tokens=2, reasoning_tokens=3))
    ticket = await kernel.inject("hello")
    async with asyncio.timeout(DEADLINE):
        await ticket
    deltas = of(seen, EventType.AGENT_OUTPUT_DELTA)
    assert "".join(e.payload.text for e in deltas) == "three small words"
    assert len(deltas) >= 2  # piece by piece, as it streamed (the firewall may regroup them)
    assert {e.payload.input_id for e in deltas} == {ticket.id}
    [finished] = of(seen, EventType.TURN_FINISHED)
    usage = finished.payload.usage
    assert usage["cached_tokens"] == 2 and usage["reasoning_tokens"] == 3
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 3
    assert finished.payload.input_id == ticket.id and finished.payload.cost > 0
    assert kernel.state.llm is not None
    summary = kernel.state.llm.usage.summary()
    assert summary["by_channel"]["notebook"]["cached_tokens"] == 2
    assert summary["by_source"]["default"]["calls"] == 1


async def test_a_stop_mid_stream_cuts_it_and_records_the_partial_reply_as_stopped(
    kernel: Kernel, server: ScriptedModelServer
) -> None:
    seen = recorded(kernel)
    first_delta, finished = asyncio.Event(), asyncio.Event()
    kernel.events.subscribe(EventType.AGENT_OUTPUT_DELTA, lambda e: first_delta.set())
    kernel.events.subscribe(EventType.TURN_FINISHED, lambda e: finished.set())
    server.queue(ScriptedReply(text="alpha beta gamma delta", chunk_delay=2))
    ticket = await kernel.inject("tell me slowly")
    async with asyncio.timeout(DEADLINE):
        await first_delta.wait()
        kernel.stop_turn()
        with pytest.raises(TaskStopped):
            await ticket
        await server.wait_for_disconnect()  # the stream was cut, not read to its end
        await finished.wait()  # the stop is written down
    assert kernel.state.memory is not None
    assert any("(stopped) alpha" in line for line in kernel.state.memory.timeline())
    [finished] = of(seen, EventType.TURN_FINISHED)
    assert finished.payload.ended_by == "stopped"


def shown(seen: list[Event], input_id: int) -> str:
    """The reply of `input_id` as a reader of its deltas shows it: the pieces since the last
    restart (a restart says the text so far is void)."""
    pieces: list[str] = []
    for event in of(seen, EventType.AGENT_OUTPUT_DELTA):
        if event.payload.input_id != input_id or event.payload.reasoning:
            continue
        if event.payload.restart:
            pieces.clear()
        pieces.append(event.payload.text)
    return "".join(pieces)


async def test_a_preemption_mid_stream_cuts_it_at_once_and_the_resumed_turn_answers_afresh(
    kernel: Kernel, server: ScriptedModelServer
) -> None:
    seen = recorded(kernel)
    first_delta = asyncio.Event()
    kernel.events.subscribe(EventType.AGENT_OUTPUT_DELTA, lambda e: first_delta.set())
    server.queue(ScriptedReply(text="alpha beta gamma delta", chunk_delay=60))
    ticket = await kernel.inject("tell me slowly")
    async with asyncio.timeout(DEADLINE):
        await first_delta.wait()
        server.queue(ScriptedReply(text="I will mind the kettle"))
        server.queue(ScriptedReply(text="alpha once more, whole"))
        urgent = await kernel.inject("the kettle boils", level=Priority.L3)
        # Cut at once: the stream's frames after the first piece were held back a minute.
        await server.wait_for_disconnect()
        assert (await urgent).reply == "I will mind the kettle"
        # The preempted turn resumes after the interrupt and asks the model again.
        assert (await ticket).reply == "alpha once more, whole"
    assert len(server.requests[0].frames_sent_at) == 2  # the role's frame and "alpha"
    assert [r.json["messages"][-1]["content"] for r in server.requests][1] == "the kettle boils"
    # Whoever typed the first answer's pieces is told to start over, and shows the new one.
    assert shown(seen, ticket.id) == "alpha once more, whole"
    assert shown(seen, urgent.id) == "I will mind the kettle"


async def test_the_answer_at_the_round_cap_streams_as_a_round_of_its_own_with_no_restart(
    kernel: Kernel, server: ScriptedModelServer
) -> None:
    seen = recorded(kernel)
    await kernel.config.set("core.agent.max_tool_rounds", 1)
    check = ToolCall("c1", "coldcontext_commit", {"content": "the clock says five"})
    server.queue(ScriptedReply(text="Let me check.", tool_calls=[check]))
    server.queue(ScriptedReply(text="It is five."))
    ticket = await kernel.inject("what time is it?")
    async with asyncio.timeout(DEADLINE):
        result = await ticket
    assert result.reply == "It is five." and result.rounds == 2
    deltas = [e.payload for e in of(seen, EventType.AGENT_OUTPUT_DELTA)]
    assert not any(d.restart for d in deltas)  # nothing shown was void
    by_round: dict[int, str] = {}
    for delta in deltas:
        by_round[delta.round] = by_round.get(delta.round, "") + delta.text
    assert by_round == {1: "Let me check.", 2: "It is five."}


async def test_a_gemini_tool_loop_through_the_kernel_sends_each_calls_signature_back(
    data_dir: Path, server: ScriptedModelServer
) -> None:
    environ = {
        "HOLOGRAM_LLM_ADAPTER": "gemini",
        "HOLOGRAM_LLM_BASE_URL": server.url + "/v1beta",
        "HOLOGRAM_LLM_MODEL": "gemini-3-pro",
        "HOLOGRAM_LLM_API_KEY": "gm-key",
    }
    server.queue_tool_call("coldcontext_commit", {"content": "lives in Paris"}, call_id="g-1")
    server.queue_text("Noted.")
    async with Kernel(data_dir, environ=environ) as kernel, asyncio.timeout(DEADLINE):
        reply = await kernel.say("remember that I live in Paris")
    assert reply == "Noted." and len(server.requests) == 2
    parts = [p for c in server.last_request.json["contents"] for p in c["parts"]]
    [call] = [p for p in parts if "functionCall" in p]
    [answer] = [p["functionResponse"] for p in parts if "functionResponse" in p]
    assert call["functionCall"]["id"] == answer["id"] == "g-1"
    assert call["thoughtSignature"] == hashlib.sha256(b"g-1").hexdigest()[:24]


async def test_the_first_delta_is_published_before_the_server_sends_the_next_frame(
    kernel: Kernel, server: ScriptedModelServer
) -> None:
    # The server sends the role's frame and the first piece's at once and holds every
    # frame after them back for a minute: the first delta must not wait for any of them.
    frames_sent_then: list[int] = []
    first_delta = asyncio.Event()

    def on_delta(event: Event) -> None:
        frames_sent_then.append(len(server.last_request.frames_sent_at))
        first_delta.set()

    kernel.events.subscribe(EventType.AGENT_OUTPUT_DELTA, on_delta)
    server.queue(ScriptedReply(text="alpha beta gamma", chunk_delay=60))
    ticket = await kernel.inject("tell me slowly")
    async with asyncio.timeout(DEADLINE):
        await first_delta.wait()
        kernel.stop_turn()
        with pytest.raises(TaskStopped):
            await ticket
    assert frames_sent_then[0] == 2
