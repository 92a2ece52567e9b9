"""ManualClock: time moves only when told, and what it wakes has run when `advance` returns."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from hologram.kernel import ManualClock
from hologram.kernel.clock import SETTLE_LIMIT

DEADLINE = 10.0
"""Only a hang reaches it."""


async def test_a_task_woken_by_advance_has_finished_its_chain_of_awaits_when_advance_returns() -> (
    None
):
    clock = ManualClock()
    done: list[str] = []

    async def step(depth: int) -> None:
        # Each level is a task of its own: waking it and finishing it take loop turns, far
        # more than the three the clock used to give.
        if depth:
            await asyncio.create_task(step(depth - 1))
        await asyncio.sleep(0)

    async def reminder() -> None:
        await clock.sleep(5)
        await step(20)
        done.append("reminder")

    task = asyncio.create_task(reminder())
    await asyncio.sleep(0)
    assert clock.sleepers == 1

    await clock.advance(5)

    assert done == ["reminder"] and task.done()


async def test_sleepers_added_by_a_woken_task_wake_within_the_same_advance() -> None:
    clock = ManualClock()
    ticks: list[float] = []

    async def every_minute() -> None:
        while True:
            await clock.sleep(60)
            await asyncio.sleep(0)  # some work between ticks
            ticks.append(clock.monotonic())

    task = asyncio.create_task(every_minute())
    await asyncio.sleep(0)
    await clock.advance(300)

    assert ticks == [60.0, 120.0, 180.0, 240.0, 300.0]
    assert clock.monotonic() == 300.0
    task.cancel()


async def test_advance_returns_even_beside_a_task_that_never_waits() -> None:
    clock = ManualClock()
    woken: list[bool] = []

    async def spin() -> None:
        while True:  # noqa: ASYNC110  (the point: a task that only ever yields)
            await asyncio.sleep(0)

    async def sleeper() -> None:
        await clock.sleep(1)
        woken.append(True)

    spinner = asyncio.create_task(spin())
    sleeping = asyncio.create_task(sleeper())
    await asyncio.sleep(0)

    async with asyncio.timeout(DEADLINE):
        await clock.advance(1)
        yields = await clock.settle()

    assert woken == [True] and sleeping.done()
    assert yields == SETTLE_LIMIT  # the bound, not an idle loop, ended the settling
    spinner.cancel()


async def test_settle_on_an_idle_loop_yields_once() -> None:
    assert await ManualClock().settle() == 1


async def test_with_a_rest_timeout_a_tick_that_waits_on_a_thread_finishes_before_time_moves_on() -> (
    None
):
    clock = ManualClock()
    ticks: list[float] = []

    async def every_minute() -> None:
        while True:
            await clock.sleep(60)
            # A tick's SQLite write: real time in a thread, which settling the loop alone
            # does not wait for.
            await asyncio.to_thread(time.sleep, 0.02)
            ticks.append(clock.monotonic())

    task = asyncio.create_task(every_minute())
    await asyncio.sleep(0)
    restless = await clock.advance(300, rest_timeout_s=DEADLINE)

    assert restless == 0
    assert ticks == [60.0, 120.0, 180.0, 240.0, 300.0]
    task.cancel()


async def test_a_woken_task_that_never_sleeps_again_is_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    never = asyncio.Event()

    async def wakes_then_waits_elsewhere() -> None:
        await clock.sleep(1)
        await never.wait()

    task = asyncio.create_task(wakes_then_waits_elsewhere(), name="elsewhere")
    await asyncio.sleep(0)
    with caplog.at_level(logging.WARNING, logger="hologram.kernel.clock"):
        restless = await clock.advance(5, rest_timeout_s=0.05)

    assert restless == 1 and clock.monotonic() == 5.0
    assert "elsewhere" in caplog.text
    task.cancel()
