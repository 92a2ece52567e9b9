"""A real graph database file per test, in a small exact embedding space."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from hologram.events import EventBus
from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import GraphStore
from hologram.memory.embed.registry import normalise
from hologram.sdk import Event, Modality
from hologram.sdk.embedding import Vectors
from tests.memory.helpers import AxisEmbedder


class ImageAxisEmbedder(AxisEmbedder):
    """The axis space with images too: an image's vector is its first byte's axis, so a
    test can tell which bytes were embedded."""

    modalities = frozenset({Modality.TEXT, Modality.IMAGE})

    def __init__(self, version: str = "v1") -> None:
        super().__init__(version)
        self.images: list[bytes] = []

    def embed_images(self, images: Sequence[bytes]) -> Vectors:
        self.images.extend(images)
        out = np.zeros((len(images), self.dim), dtype=np.float32)
        for row, data in enumerate(images):
            out[row, data[0] % self.dim] = 1.0
        return normalise(out)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=1_700_000_000.0)


@pytest.fixture
def bus(tasks: KernelTasks) -> EventBus:
    return EventBus(tasks=tasks.scope("events"))


@pytest.fixture
def published(bus: EventBus) -> list[Event]:
    seen: list[Event] = []
    bus.subscribe(None, seen.append)
    return seen


@pytest.fixture
async def graph(
    tmp_path: Path, clock: ManualClock, bus: EventBus, tasks: KernelTasks
) -> AsyncIterator[GraphStore]:
    store = await GraphStore.open_at(
        tmp_path / "graph.db", AxisEmbedder(), clock, emit=bus.emit, tasks=tasks.scope("graph")
    )
    yield store
    await store.close()
