"""A channel that keeps what it is sent: the notebook's and the tests' output channels."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Delivery:
    channel: str
    payload: str
    meta: dict[str, Any]
    type: str


@dataclass(eq=False)
class CollectingChannel:
    """Records every delivery in order; `wait_for(n)` lets a caller await the n-th."""

    name: str
    deliveries: list[Delivery] = field(default_factory=list)
    listeners: list[Callable[[Delivery], None]] = field(default_factory=list)
    _arrived: asyncio.Condition | None = None

    async def __call__(self, payload: str, meta: dict[str, Any], type: str) -> str:
        delivery = Delivery(self.name, payload, meta, type)
        self.deliveries.append(delivery)
        for listener in list(self.listeners):
            listener(delivery)
        async with self._condition():
            self._condition().notify_all()
        return f"delivered to {self.name} (#{len(self.deliveries)})"

    def _condition(self) -> asyncio.Condition:
        if self._arrived is None:
            self._arrived = asyncio.Condition()
        return self._arrived

    async def wait_for(self, count: int) -> list[Delivery]:
        """Wait until at least `count` deliveries have arrived; returns them all."""
        async with self._condition():
            await self._condition().wait_for(lambda: len(self.deliveries) >= count)
        return list(self.deliveries)

    def texts(self) -> list[str]:
        return [d.payload for d in self.deliveries if d.type == "text"]

    def clear(self) -> None:
        self.deliveries.clear()
