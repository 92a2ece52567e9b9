"""The kernel's event bus."""

from hologram.events.bus import EventBus, Handler
from hologram.events.module import EventsModule

__all__ = ["EventBus", "EventsModule", "Handler"]
