"""Events on the kernel's bus."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from hologram.sdk.event_payloads import Payload, PluginPayload, from_wire
from hologram.sdk.event_types import EventType


class Emit(Protocol):
    """What publishes a payload: a bus's `emit`, or `discard` for an object with no bus."""

    def __call__(self, payload: Payload, /, *, source: str = ...) -> object: ...


def discard(payload: Payload, /, *, source: str = "kernel") -> None:
    """The emitter of an object that publishes nowhere (built outside a kernel, in a test):
    it takes what a bus's `emit` takes, so the object never asks whether it has a bus."""
    return None


@dataclass(slots=True)
class Event:
    """One thing that happened. `seq` is assigned by the bus and grows by one per event.
    `payload` is the type's payload class; a plain mapping given instead (a frame read from
    the wire, a test's literal) is rebuilt into it, refusing a field the class lacks."""

    type: str
    payload: Payload = field(default_factory=lambda: PluginPayload(kind=""))
    source: str = "kernel"
    timestamp: float = field(default_factory=time.time)
    seq: int = 0

    def __post_init__(self) -> None:
        given: object = self.payload
        if isinstance(given, Mapping):
            self.payload = from_wire(self.type, given)
        elif isinstance(given, PluginPayload) and not given.kind:
            self.payload = from_wire(self.type, {})


__all__ = ["Emit", "Event", "EventType", "discard"]
