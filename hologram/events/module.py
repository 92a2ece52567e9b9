"""The `events` kernel module: one bus per kernel."""

from __future__ import annotations

from typing import Any

from hologram.events.bus import EventBus
from hologram.sdk import Facility


class EventsModule:
    name = "events"
    requires = (Facility.CONFIG,)
    provides = (Facility.EVENTS,)

    def __init__(self) -> None:
        self.bus: EventBus | None = None

    async def init(self, state: Any) -> None:
        self.bus = EventBus(queue_size=state.config.get_int("core.events.subscriber_queue"))
        state.events = self.bus

    async def close(self) -> None:
        if self.bus is not None:
            await self.bus.close()
