from __future__ import annotations

from pathlib import Path

import pytest

from hologram.events import EventBus
from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import ColdContext, ContextWindow, Segmenter
from hologram.memory.turns import TurnStore
from hologram.sdk import Event
from tests.memory.helpers import AxisEmbedder


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=1_700_000_000.0)


@pytest.fixture
def embedder() -> AxisEmbedder:
    return AxisEmbedder()


@pytest.fixture
def bus(tasks: KernelTasks) -> EventBus:
    return EventBus(tasks=tasks.scope("events"))


@pytest.fixture
def published(bus: EventBus) -> list[Event]:
    seen: list[Event] = []
    bus.subscribe(None, seen.append)
    return seen


@pytest.fixture
async def cold(
    tmp_path: Path, embedder: AxisEmbedder, clock: ManualClock, bus: EventBus, tasks: KernelTasks
):
    store = ColdContext(
        TurnStore(tmp_path / "cold" / "turns.db"),
        embedder,
        Segmenter().keywords,
        clock,
        emit=bus.emit,
        tasks=tasks.scope("coldcontext"),
    )
    await store.wait_ready()
    yield store
    await store.close()


@pytest.fixture
async def window(
    tmp_path: Path,
    embedder: AxisEmbedder,
    clock: ManualClock,
    cold: ColdContext,
    bus: EventBus,
    tasks: KernelTasks,
):
    ctx = ContextWindow(
        cold.turns,
        embedder,
        clock,
        top_k=14,
        protected_recent=10,
        cold=cold,
        emit=bus.emit,
        tasks=tasks.scope("memory"),
    )
    await ctx.open()
    yield ctx
    await ctx.close()
