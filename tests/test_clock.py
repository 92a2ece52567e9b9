"""The manual clock: time moves only when a test moves it."""

from __future__ import annotations

import asyncio

from hologram.kernel import ManualClock


async def test_sleepers_wake_at_their_deadlines_in_order() -> None:
    clock = ManualClock(start=1000.0)
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append((name, clock.monotonic()))

    tasks = [asyncio.create_task(sleeper("late", 60)), asyncio.create_task(sleeper("early", 30))]
    await asyncio.sleep(0)
    assert clock.sleepers == 2
    await clock.advance(45)
    assert woke == [("early", 30.0)]
    assert clock.now() == 1045.0
    await clock.advance(15)
    assert woke == [("early", 30.0), ("late", 60.0)]
    await asyncio.gather(*tasks)


async def test_a_periodic_loop_ticks_once_per_interval() -> None:
    clock = ManualClock()
    ticks: list[float] = []

    async def loop() -> None:
        while True:
            await clock.sleep(30 * 60)
            ticks.append(clock.monotonic())

    task = asyncio.create_task(loop())
    await asyncio.sleep(0)
    await clock.advance(2 * 3600)
    assert ticks == [1800.0, 3600.0, 5400.0, 7200.0]
    task.cancel()
