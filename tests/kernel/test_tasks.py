"""The kernel's one task group: owners, the start/ready protocol, failures that are never
lost, and shutdown in reverse layer order."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from hologram import Kernel
from hologram.kernel import (
    Assembly,
    KernelTasks,
    Once,
    Ready,
    ServiceFailed,
    first_completed,
    plan,
)
from hologram.sdk import (
    Event,
    EventType,
    to_wire,
)
from tests.kernel.helpers import Mod, state_for


async def test_a_failed_background_task_is_logged_and_published(
    data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with Kernel(data_dir) as kernel:
        seen: list[Event] = []
        kernel.events.subscribe(EventType.TASK_FAILED, seen.append)

        async def broken() -> None:
            raise ValueError("the index file is gone")

        with caplog.at_level(logging.ERROR, logger="hologram.kernel.tasks"):
            task = kernel.state.tasks.scope("memory").spawn(broken(), name="memory-reindex")
            await asyncio.gather(task, return_exceptions=True)
            await asyncio.sleep(0)
        assert kernel.state.tasks.failures == 1
        (event,) = seen
        assert event.source == "memory"
        assert to_wire(event.payload) == {
            "task": "memory-reindex",
            "error": "ValueError: the index file is gone",
        }
        assert "background task memory-reindex of memory failed" in caplog.text
        assert "the index file is gone" in caplog.text


async def test_an_awaited_task_is_its_callers_to_report() -> None:
    tasks = KernelTasks()
    reported: list[str] = []
    tasks.on_failure(lambda name, owner, error: reported.append(name))

    async def broken() -> None:
        raise ValueError("mine to handle")

    task = tasks.scope("agent").spawn(broken(), name="tool-call", awaited=True)
    with pytest.raises(ValueError, match="mine to handle"):
        await task
    assert reported == [] and tasks.failures == 0


async def test_a_service_is_started_when_it_says_it_is_ready() -> None:
    scope = KernelTasks().scope("scheduler")
    loaded = asyncio.Event()

    async def service(ready: Ready[int]) -> None:
        await loaded.wait()
        ready(42)
        await asyncio.Event().wait()

    starting = asyncio.ensure_future(scope.start(service, name="loop"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not starting.done(), "start returned before the service was ready"
    loaded.set()
    task, value = await starting
    assert value == 42 and not task.done()
    assert await scope.close() == 1 and task.cancelled()


async def test_a_service_that_fails_before_it_is_ready_raises_where_it_was_started() -> None:
    tasks = KernelTasks()
    reported: list[str] = []
    tasks.on_failure(lambda name, owner, error: reported.append(name))

    async def service(ready: Ready[None]) -> None:
        raise OSError("port taken")

    with pytest.raises(ServiceFailed, match="http ended before it was ready") as caught:
        await tasks.scope("serve").start(service, name="http")
    assert isinstance(caught.value.__cause__, OSError)
    assert reported == [], "raised to the starter, not reported a second time"


async def test_a_ready_service_that_fails_later_is_reported() -> None:
    tasks = KernelTasks()
    reported: list[tuple[str, str]] = []
    tasks.on_failure(lambda name, owner, error: reported.append((name, owner)))
    crash = asyncio.Event()

    async def service(ready: Ready[None]) -> None:
        ready()
        await crash.wait()
        raise RuntimeError("lost the socket")

    task, _ = await tasks.scope("serve").start(service, name="http")
    crash.set()
    await asyncio.gather(task, return_exceptions=True)
    await asyncio.sleep(0)
    assert reported == [("http", "serve")]


async def test_shutdown_cancels_each_modules_tasks_right_after_its_close() -> None:
    journal: list[str] = []
    tasks = KernelTasks()

    def module(name: str, requires: tuple[str, ...]) -> Mod:
        async def init(state: Any) -> None:
            async def work() -> None:
                try:
                    await asyncio.Event().wait()
                finally:
                    journal.append(f"cancelled {name}")

            tasks.scope(name).spawn(work(), name=f"{name}-work")
            setattr(state, name, name)

        return Mod(name, requires=requires, provides=(name,), init=init, journal=journal)

    modules = [module("a", ()), module("b", ("a",)), module("c", ("b",))]
    assembly = Assembly(plan(modules), state_for("a", "b", "c"), tasks=tasks)
    await assembly.boot()
    assert await assembly.shutdown() == ["c", "b", "a"]
    assert journal == [
        *("init a", "init b", "init c"),
        *("close c", "cancelled c", "close b", "cancelled b", "close a", "cancelled a"),
    ]
    assert tasks.running() == []


async def test_the_kernel_leaves_no_task_behind_but_spares_the_caller_of_shutdown(
    data_dir: Path,
) -> None:
    kernel = await Kernel(data_dir).start()
    stray = kernel.state.tasks.scope("notebook").spawn(asyncio.Event().wait(), name="stray")
    # A notebook's handle: a task of the kernel's own, awaiting the shutdown it started.
    handle = kernel.spawn(kernel.shutdown(), name="kernel-shutdown")
    closed = await handle
    assert "events" in closed and stray.cancelled()
    assert kernel.state.tasks.running() == []


async def test_first_completed_cancels_the_others() -> None:
    cancelled: list[str] = []

    async def slow(name: str) -> None:
        try:
            await asyncio.sleep(10)
        finally:
            cancelled.append(name)

    async def quick() -> None:
        await asyncio.sleep(0)

    assert await first_completed(slow("a"), quick(), slow("b")) == 1
    assert sorted(cancelled) == ["a", "b"]

    async def fails() -> None:
        raise KeyError("gone")

    with pytest.raises(KeyError):
        await first_completed(slow("c"), fails())
    assert "c" in cancelled


async def test_once_runs_its_work_once_and_reports_a_failure_to_who_waits(
    tasks: KernelTasks,
) -> None:
    runs: list[int] = []

    async def load() -> None:
        runs.append(1)

    loading = Once(tasks.scope("knowledge"), load, "knowledge-load")
    assert not loading.started
    await loading.wait()
    await loading.wait()
    assert runs == [1] and loading.done

    async def broken() -> None:
        raise OSError("disk")

    failing = Once(tasks.scope("broken"), broken, "broken-load")
    with pytest.raises(OSError, match="disk"):
        await failing.wait()
