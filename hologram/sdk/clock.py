"""Where the kernel gets its time from, so that tests and replays can move it by hand."""

from __future__ import annotations

import asyncio
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Wall-clock time, seconds since the epoch."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards; for durations and deadlines."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return once `seconds` have passed on this clock."""
        ...

    async def idle_until(self, event: asyncio.Event) -> None:
        """Return once `event` is set, with no deadline. The task is idle meanwhile, as in
        `sleep`: a clock moved by hand moves on without waiting for it."""
        ...
