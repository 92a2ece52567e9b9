"""Clocks: the real one, and one that moves only when told (for tests and replays)."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from collections import Counter

log = logging.getLogger(__name__)

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

    async def idle_until(self, event: asyncio.Event) -> None:
        await event.wait()


_Sleeper = tuple[float, int, asyncio.Future[None], asyncio.Task[object] | None]
"""(deadline, order of arrival, the future that wakes it, the task that sleeps)."""


class ManualClock:
    """Time stands still until `advance` moves it; sleepers wake in deadline order.

    Replaying a conversation that spans weeks, or testing a two-second cooldown, then takes
    no real time and gives the same result on every run.
    """

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._elapsed = 0.0
        self._sleepers: list[_Sleeper] = []
        self._order = itertools.count()
        self._resting: dict[asyncio.Task[object], asyncio.Future[None]] = {}
        """Woken tasks `advance` waits on to sleep again, each with the future that says so."""
        #: Tasks waiting in `idle_until`: at rest, like sleepers, but with no deadline.
        self._idle: set[asyncio.Task[object] | None] = set()
        #: Sleepers `advance` has woken, by task name: what moving time costs, and who spends it.
        self.wakeups: Counter[str] = Counter()

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._elapsed

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (self._elapsed + seconds, next(self._order), future, asyncio.current_task())
        heapq.heappush(self._sleepers, entry)
        self._rest(entry[3])
        await future

    async def idle_until(self, event: asyncio.Event) -> None:
        task = asyncio.current_task()
        self._idle.add(task)
        self._rest(task)
        try:
            await event.wait()
        finally:
            self._idle.discard(task)

    def _rest(self, task: asyncio.Task[object] | None) -> None:
        """`task` waits on this clock now: an `advance` waiting for it to rest goes on."""
        rested = None if task is None else self._resting.get(task)
        if rested is not None and not rested.done():
            rested.set_result(None)

    async def advance(self, seconds: float, rest_timeout_s: float = 0.0) -> int:
        """Move time forward, waking each sleeper at its own deadline in turn; after each
        wake-up the loop is settled (`settle`), so what a woken task does before it next
        waits on time or I/O has happened when this returns, and sleepers it adds before
        the target wake in the same call.

        With `rest_timeout_s`, each woken task is also waited for in real time (up to that
        long) until it sleeps on this clock again, idles on it (`idle_until`) or ends, before
        time moves on: a tick that waits on a thread (SQLite, an embedder) then finishes
        before the next deadline, and the order of wake-ups and their effects no longer
        depends on how busy the machine is. Returns how many woken tasks did not rest in
        time (each is logged)."""
        target = self._elapsed + seconds
        restless = 0
        while self._sleepers and self._sleepers[0][0] <= target:
            deadline, _, future, task = heapq.heappop(self._sleepers)
            self._now += deadline - self._elapsed
            self._elapsed = deadline
            if future.done():
                continue
            future.set_result(None)
            self.wakeups[task.get_name() if task is not None else ""] += 1
            await self.settle()
            if (
                rest_timeout_s > 0
                and task is not None
                and not await self._rested(task, rest_timeout_s)
            ):
                restless += 1
                log.warning(
                    "task %s, woken at clock time %.3f, did not sleep again within %.1f s; "
                    "time moves on without it",
                    task.get_name(),
                    self._now,
                    rest_timeout_s,
                )
        self._now += target - self._elapsed
        self._elapsed = target
        return restless

    async def _rested(self, task: asyncio.Task[object], timeout_s: float) -> bool:
        if task.done() or task in self._idle or self._sleeping(task):
            return True
        # `sleep` and the task's end resolve this at once: no polling, whose timer
        # granularity would cost more than most ticks over the thousands of wake-ups a
        # replay of weeks makes.
        rested: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_done(_: asyncio.Task[object]) -> None:
            if not rested.done():
                rested.set_result(None)

        self._resting[task] = rested
        task.add_done_callback(on_done)
        try:
            done, _ = await asyncio.wait([rested], timeout=timeout_s)
            return bool(done)
        finally:
            self._resting.pop(task, None)
            task.remove_done_callback(on_done)
            rested.cancel()

    def _sleeping(self, task: asyncio.Task[object]) -> bool:
        return any(t is task and not f.done() for *_, f, t in self._sleepers)

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
        return sum(1 for _, _, f, _ in self._sleepers if not f.done())
