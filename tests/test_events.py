"""The event bus: publish never waits, one subscriber never harms another."""

from __future__ import annotations

import asyncio

from hologram.events import EventBus
from hologram.sdk import Event, EventType


async def test_a_raising_subscriber_does_not_stop_the_others() -> None:
    bus = EventBus()
    received: list[str] = []
    errors: list[Event] = []

    def broken(event: Event) -> None:
        raise ValueError("subscriber bug")

    async def async_broken(event: Event) -> None:
        raise ValueError("async subscriber bug")

    async def async_ok(event: Event) -> None:
        received.append(f"async {event.type}")

    bus.subscribe(EventType.SYSTEM, broken)
    bus.subscribe(EventType.SYSTEM, async_broken)
    bus.subscribe(EventType.SYSTEM, lambda e: received.append(f"sync {e.type}"))
    bus.subscribe(EventType.SYSTEM, async_ok)
    bus.subscribe(EventType.SUBSCRIBER_ERROR, errors.append)

    bus.emit(EventType.SYSTEM, note="hello")
    await bus.close()
    assert sorted(received) == ["async system", "sync system"]
    assert sorted(e.payload["error"] for e in errors) == [
        "ValueError: async subscriber bug",
        "ValueError: subscriber bug",
    ]


async def test_a_slow_subscriber_does_not_block_publish() -> None:
    bus = EventBus(queue_size=4)
    release = asyncio.Event()
    fast: list[int] = []

    async def slow(event: Event) -> None:
        await release.wait()

    bus.subscribe(EventType.SYSTEM, slow)
    bus.subscribe(EventType.SYSTEM, lambda e: fast.append(e.payload["n"]))
    # publish is a plain function: if it waited for `slow`, this loop could never finish,
    # because nothing sets `release` until after it.
    for n in range(100):
        bus.emit(EventType.SYSTEM, n=n)
    assert fast == list(range(100))
    release.set()
    await bus.close()


async def test_dropped_events_are_counted_and_reported() -> None:
    bus = EventBus(queue_size=2)
    release = asyncio.Event()
    reports: list[Event] = []

    async def slow(event: Event) -> None:
        await release.wait()

    bus.subscribe(EventType.SYSTEM, slow)
    bus.subscribe(EventType.EVENTS_DROPPED, reports.append)
    for n in range(10):
        bus.emit(EventType.SYSTEM, n=n)
    # The subscriber's task has not run yet, so two events fit in its queue and eight do not.
    # The drop report is published on the next turn of the loop, once for the whole burst.
    await asyncio.sleep(0)
    assert [r.payload["dropped"] for r in reports] == [8]
    assert bus.stats()["dropped"] == {
        "test_dropped_events_are_counted_and_reported.<locals>.slow": 8
    }
    release.set()
    await bus.close()


async def test_unsubscribe_stops_delivery_and_filtering_by_type_works() -> None:
    bus = EventBus()
    seen: list[str] = []
    everything: list[str] = []
    unsubscribe = bus.subscribe(EventType.TOOL_CALL, lambda e: seen.append(e.type))
    bus.subscribe(None, lambda e: everything.append(e.type))
    bus.emit(EventType.TOOL_CALL)
    bus.emit(EventType.REASONING)
    unsubscribe()
    bus.emit(EventType.TOOL_CALL)
    assert seen == ["tool_call"]
    assert everything == ["tool_call", "reasoning", "tool_call"]
    await bus.close()


async def test_events_are_numbered_in_publish_order() -> None:
    bus = EventBus()
    first = bus.emit(EventType.SYSTEM)
    second = bus.publish(Event(type="plugin.demo.ping", source="demo"))
    assert (first.seq, second.seq) == (1, 2)
    await bus.close()


async def test_close_lets_async_subscribers_catch_up() -> None:
    bus = EventBus()
    handled: list[int] = []

    async def handler(event: Event) -> None:
        await asyncio.sleep(0)
        handled.append(event.payload["n"])

    bus.subscribe(None, handler)
    for n in range(50):
        bus.emit(EventType.SYSTEM, n=n)
    await bus.close()
    assert handled == list(range(50))


async def test_a_kernels_events_carry_its_clock_and_config_changes_are_published(
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    from hologram import Kernel
    from hologram.kernel import ManualClock

    clock = ManualClock(start=1_000_000.0)
    async with Kernel(tmp_path / "data", clock=clock) as kernel:
        seen: list[Event] = []
        kernel.events.subscribe(EventType.CONFIG_CHANGED, seen.append)
        await clock.advance(60)
        await kernel.config.set("core.agent.max_tool_rounds", 4)
        await kernel.config.set("core.llm.api_key", "sk-never-in-an-event")
        await kernel.config.delete("core.agent.max_tool_rounds")
        changes = [(e.payload["key"], e.payload["value"]) for e in seen]
        assert changes == [
            ("core.agent.max_tool_rounds", 4),
            ("core.llm.api_key", "****"),
            ("core.agent.max_tool_rounds", 10),  # deleted: the default applies again
        ]
        assert all(e.timestamp == 1_000_060.0 for e in seen), "stamped by the kernel's clock"
