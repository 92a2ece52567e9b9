"""Fixtures for the provider layer: a scripted model server on loopback, real config and bus."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from hologram.config import CORE_DEFAULTS, ConfigRegistry
from hologram.events import EventBus
from hologram.kernel import KernelTasks, ManualClock
from hologram.llm import (
    AdapterLibrary,
    LuaAdaptedProvider,
    ProviderManager,
    ScriptedModelServer,
    SourceConfig,
)
from hologram.sdk import Event


@pytest.fixture
async def server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as running:
        yield running


@pytest.fixture
async def second_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as running:
        yield running


@pytest.fixture
def library() -> AdapterLibrary:
    return AdapterLibrary()


@pytest.fixture
async def make_provider(
    library: AdapterLibrary,
) -> AsyncIterator[Callable[..., LuaAdaptedProvider]]:
    """Build a provider for one adapter against a base URL; closed after the test."""
    made: list[LuaAdaptedProvider] = []

    def make(adapter: str, base_url: str, **source: object) -> LuaAdaptedProvider:
        options: dict[str, object] = {"api_key": "sk-test", "model": "test-model"}
        options.update(source)
        config = SourceConfig(
            name=f"{adapter}-source", adapter=adapter, base_url=base_url, **options
        )  # type: ignore[arg-type]
        provider = LuaAdaptedProvider(config, library.load(adapter))
        made.append(provider)
        return provider

    yield make
    for provider in made:
        await provider.aclose()


@pytest.fixture
async def config(tmp_path: Path) -> AsyncIterator[ConfigRegistry]:
    registry = await ConfigRegistry.open(tmp_path / "config.db", environ={})
    registry.register(CORE_DEFAULTS)
    yield registry
    await registry.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


class Recorder:
    """Every event published on a bus, in order."""

    def __init__(self, bus: EventBus) -> None:
        self.events: list[Event] = []
        self._arrived = asyncio.Event()
        bus.subscribe(None, self._take)

    def _take(self, event: Event) -> None:
        self.events.append(event)
        self._arrived.set()

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.type == kind]

    async def nth(self, kind: str, count: int) -> Event:
        """The `count`-th event of `kind`, once it is published (within five seconds)."""
        async with asyncio.timeout(5):
            while len(self.of(kind)) < count:
                self._arrived.clear()
                await self._arrived.wait()
        return self.of(kind)[count - 1]


@pytest.fixture
async def bus(tasks: KernelTasks) -> AsyncIterator[EventBus]:
    events = EventBus(tasks=tasks.scope("events"))
    yield events
    await events.close()


@pytest.fixture
def recorder(bus: EventBus) -> Recorder:
    return Recorder(bus)


@pytest.fixture
async def manager(
    config: ConfigRegistry, bus: EventBus, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[ProviderManager]:
    built = ProviderManager(config, bus, clock, AdapterLibrary(user_dir=tmp_path / "adapters"))
    yield built
    await built.close()


async def add_source(
    config: ConfigRegistry,
    name: str,
    base_url: str,
    adapter: str = "openai",
    **fields: object,
) -> None:
    """Configure a source the way an operator would, key by key."""
    await config.set(f"core.llm.sources.{name}.adapter", adapter)
    await config.set(f"core.llm.sources.{name}.base_url", base_url)
    await config.set(f"core.llm.sources.{name}.api_key", fields.pop("api_key", f"key-{name}"))
    await config.set(f"core.llm.sources.{name}.model", fields.pop("model", f"model-{name}"))
    for key, value in fields.items():
        await config.set(f"core.llm.sources.{name}.{key}", value)
