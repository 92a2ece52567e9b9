"""Clocks: the real one, and one that moves only when told (for tests and replays)."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time

SETTLE_LIMIT = 10_000
"""Yields `ManualClock.settle` gives at most: a task that never waits (it only yields)
would otherwise keep the loop busy forever and `advance` would not return."""
_BLIND_YIELDS = 50


class SystemClock:
    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ManualClock:
    """Time stands still until `advance` moves it; sleepers wake in deadline order.

    Replaying a conversation that spans weeks, or testing a two-second cooldown, then takes
    no real time and gives the same result on every run.
    """

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._elapsed = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._elapsed

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._elapsed + seconds, next(self._order), future))
        await future

    async def advance(self, seconds: float) -> None:
        """Move time forward, waking each sleeper at its own deadline in turn; after each
        wake-up the loop is settled (`settle`), so what a woken task does before it next
        waits on time or I/O has happened when this returns, and sleepers it adds before
        the target wake in the same call."""
        target = self._elapsed + seconds
        while self._sleepers and self._sleepers[0][0] <= target:
            deadline, _, future = heapq.heappop(self._sleepers)
            self._now += deadline - self._elapsed
            self._elapsed = deadline
            if not future.done():
                future.set_result(None)
            await self.settle()
        self._now += target - self._elapsed
        self._elapsed = target

    async def settle(self, limit: int = SETTLE_LIMIT) -> int:
        """Yield to the loop until nothing else is ready to run, at most `limit` times;
        returns the number of yields. Work waiting on a thread, a pipe or a socket is not
        ready, so it is not waited for: settling is about the loop, not the world."""
        loop = asyncio.get_running_loop()
        ready = getattr(loop, "_ready", None)
        yields = 0
        while yields < limit:
            await asyncio.sleep(0)
            yields += 1
            if ready is None:
                # A loop that hides its ready queue (uvloop): a fixed number of turns.
                if yields >= _BLIND_YIELDS:
                    break
            elif not ready:
                break
        return yields

    @property
    def sleepers(self) -> int:
        return sum(1 for *_, f in self._sleepers if not f.done())
