"""The `events` kernel module: one bus per kernel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from hologram.config import ConfigRegistry, EventSettings, mask
from hologram.events.bus import EventBus
from hologram.kernel import KernelTasks, required
from hologram.sdk import (
    Clock,
    ConfigChanged,
    Facility,
    TaskFailed,
)


class EventsState(Protocol):
    """What the events module reads of the kernel's state, and the field it fills."""

    @property
    def config(self) -> ConfigRegistry | None: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def tasks(self) -> KernelTasks: ...

    events: EventBus | None


class EventsModule:
    name = "events"
    requires = (Facility.CONFIG,)
    provides = (Facility.EVENTS,)

    def __init__(self) -> None:
        self.bus: EventBus | None = None
        self._unwatch: Callable[[], None] | None = None
        self._unhook: Callable[[], None] | None = None

    async def init(self, state: EventsState) -> None:
        config = required(state.config, Facility.CONFIG)
        bus = EventBus(
            config.read(EventSettings).subscriber_queue,
            now=state.clock.now,
            tasks=state.tasks.scope(self.name),
        )

        def changed(key: str) -> None:
            bus.emit(ConfigChanged(key=key, value=mask(key, config.get(key))), source="config")

        def failed(task: str, owner: str, error: BaseException) -> None:
            bus.emit(TaskFailed(task=task, error=f"{type(error).__name__}: {error}"), source=owner)

        self._unwatch = config.watch(changed)
        self._unhook = state.tasks.on_failure(failed)
        self.bus = bus
        state.events = bus

    async def close(self) -> None:
        if self._unwatch is not None:
            self._unwatch()
        if self._unhook is not None:
            self._unhook()
        if self.bus is not None:
            await self.bus.close()
