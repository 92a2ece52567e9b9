"""A streamed reply's deltas reach the bus's subscribers as they come, even when the rest of
the stream is already buffered and reading it never suspends."""

from __future__ import annotations

from collections.abc import AsyncIterator

from hologram.agent.reply_stream import ReplyStream
from hologram.events.bus import EventBus
from hologram.kernel import KernelTasks
from hologram.llm import CompletionResponse, StreamChunk
from hologram.sdk import Event, EventType


async def buffered(pieces: list[str]) -> AsyncIterator[StreamChunk]:
    """A stream whose chunks are all there at once: no await between them suspends."""
    for piece in pieces:
        yield StreamChunk(content=piece)
    yield StreamChunk(done=True, response=CompletionResponse(content="".join(pieces)))


async def test_an_async_subscriber_sees_each_delta_before_the_next_chunk_is_read(
    tasks: KernelTasks,
) -> None:
    bus = EventBus(tasks=tasks.scope("events"))
    seen: list[tuple[str, int]] = []
    reply = ReplyStream(bus.emit, input_id=7, round_=1, quiet=False)

    async def on_delta(event: Event) -> None:
        # How much of the reply the turn had read when this delta reached the subscriber.
        seen.append((event.payload.text, len(reply.pieces)))

    bus.subscribe(EventType.AGENT_OUTPUT_DELTA, on_delta)
    response = await reply.read(buffered(["It ", "will ", "rain."]))
    assert response.content == "It will rain."
    assert seen == [("It ", 1), ("will ", 2), ("rain.", 3)]


async def test_a_quiet_stream_publishes_nothing(tasks: KernelTasks) -> None:
    bus = EventBus(tasks=tasks.scope("events"))
    seen: list[Event] = []
    bus.subscribe(EventType.AGENT_OUTPUT_DELTA, seen.append)
    reply = ReplyStream(bus.emit, input_id=None, round_=1, quiet=True)
    response = await reply.read(buffered(["a", "b"]))
    assert response.content == "ab" and reply.text == "ab"
    assert seen == []
