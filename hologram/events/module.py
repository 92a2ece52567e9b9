"""The `events` kernel module: one bus per kernel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hologram.config import EventSettings, mask
from hologram.events.bus import EventBus
from hologram.sdk import EventType, Facility


class EventsModule:
    name = "events"
    requires = (Facility.CONFIG,)
    provides = (Facility.EVENTS,)

    def __init__(self) -> None:
        self.bus: EventBus | None = None
        self._unwatch: Callable[[], None] | None = None
        self._unhook: Callable[[], None] | None = None

    async def init(self, state: Any) -> None:
        config = state.config
        bus = EventBus(
            config.read(EventSettings).subscriber_queue,
            now=state.clock.now,
            tasks=state.tasks.scope(self.name),
        )

        def changed(key: str) -> None:
            bus.emit(
                EventType.CONFIG_CHANGED, source="config", key=key, value=mask(key, config.get(key))
            )

        def failed(task: str, owner: str, error: BaseException) -> None:
            bus.emit(
                EventType.TASK_FAILED,
                source=owner,
                task=task,
                error=f"{type(error).__name__}: {error}",
            )

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
