"""The event bus (spec: events.Bus): publish never waits for a subscriber.

A synchronous subscriber runs inside `publish` and must be quick. An asynchronous one gets a
bounded queue and a task of its own: a slow one falls behind, and once its queue is full
further events for it are dropped, counted, and reported as an `events_dropped` event.
A subscriber that raises is logged and reported; the others still receive the event.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from hologram.kernel import TaskScope
from hologram.sdk import Event, EventsDropped, EventType, Payload, SubscriberError

log = logging.getLogger(__name__)

Handler = Callable[[Event], Awaitable[None] | None]

_REPORTS = frozenset({EventType.SUBSCRIBER_ERROR, EventType.EVENTS_DROPPED})


@dataclass(eq=False)
class _Subscriber:
    id: int
    event_type: str | None
    handler: Handler
    is_async: bool
    queue: asyncio.Queue[Event] | None = None
    worker: asyncio.Task[None] | None = None
    dropped: int = 0
    dropped_total: int = 0
    report_pending: bool = False
    name: str = field(default="")

    def wants(self, event: Event) -> bool:
        return self.event_type is None or self.event_type == event.type


class EventBus:
    def __init__(
        self,
        queue_size: int = 1000,
        now: Callable[[], float] = time.time,
        *,
        tasks: TaskScope,
    ) -> None:
        """`now` stamps the events `emit` makes: the kernel's clock, so events replayed on
        an injected clock carry the replay's time. `tasks` runs the async subscribers (the
        kernel's group)."""
        self.queue_size = queue_size
        self._now = now
        self._tasks = tasks
        self._subscribers: list[_Subscriber] = []
        self._ids = itertools.count(1)
        self._seq = itertools.count(1)
        self.published = 0
        self._filters: list[Callable[[Event], None]] = []

    def add_filter(self, change: Callable[[Event], None]) -> Callable[[], None]:
        """Run `change` on every event before any subscriber sees it (the security module
        masks secrets here). Returns the function that removes it."""
        self._filters.append(change)

        def remove() -> None:
            if change in self._filters:
                self._filters.remove(change)

        return remove

    def subscribe(self, event_type: str | None, handler: Handler) -> Callable[[], None]:
        """Call `handler` for every event of `event_type` (None: every event).
        Returns the function that unsubscribes it."""
        is_async = inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
            getattr(handler, "__call__", None)  # noqa: B004  (async callable objects)
        )
        subscriber = _Subscriber(
            id=next(self._ids),
            event_type=None if event_type is None else str(event_type),
            handler=handler,
            is_async=is_async,
            name=getattr(handler, "__qualname__", repr(handler)),
        )
        if is_async:
            subscriber.queue = asyncio.Queue(self.queue_size)
            subscriber.worker = self._tasks.spawn(
                self._drain(subscriber), name=f"event-subscriber-{subscriber.id}"
            )
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)
            if subscriber.worker is not None:
                subscriber.worker.cancel()

        return unsubscribe

    def publish(self, event: Event) -> Event:
        """Hand `event` to every subscriber that wants it, without waiting for any of them.
        Returns the event with its sequence number set."""
        event.seq = next(self._seq)
        self.published += 1
        for change in self._filters:
            change(event)
        for subscriber in list(self._subscribers):
            if not subscriber.wants(event):
                continue
            if subscriber.is_async:
                self._enqueue(subscriber, event)
            else:
                self._call(subscriber, event)
        return event

    def emit(self, payload: Payload, /, *, source: str = "kernel") -> Event:
        """Publish `payload` as an event of its type from `source`, stamped by the kernel's
        clock."""
        event = Event(payload.event_type, payload, source=source, timestamp=self._now())
        return self.publish(event)

    def _call(self, subscriber: _Subscriber, event: Event) -> None:
        try:
            result = subscriber.handler(event)
            if inspect.isawaitable(result):
                # A plain function that returned an awaitable (a lambda around a coroutine):
                # it runs as a task of the group, which reports it if it fails.
                self._tasks.spawn(_settle(result), name=f"event-handler-{subscriber.id}")
        except Exception as exc:
            self._report_error(subscriber, event, exc)

    def _enqueue(self, subscriber: _Subscriber, event: Event) -> None:
        assert subscriber.queue is not None
        try:
            subscriber.queue.put_nowait(event)
        except asyncio.QueueFull:
            if event.type in _REPORTS:
                # Reports about reports would feed back forever; the totals stay in stats().
                return
            subscriber.dropped += 1
            subscriber.dropped_total += 1
            if not subscriber.report_pending:
                subscriber.report_pending = True
                asyncio.get_running_loop().call_soon(self._report_drops, subscriber)

    def _report_drops(self, subscriber: _Subscriber) -> None:
        count, subscriber.dropped = subscriber.dropped, 0
        subscriber.report_pending = False
        log.warning("event subscriber %s is too slow: %d events dropped", subscriber.name, count)
        self.emit(
            EventsDropped(
                subscriber=subscriber.name, dropped=count, dropped_total=subscriber.dropped_total
            )
        )

    def _report_error(self, subscriber: _Subscriber, event: Event, exc: BaseException) -> None:
        log.error("event subscriber %s failed on %s", subscriber.name, event.type, exc_info=exc)
        if event.type not in _REPORTS:
            self.emit(
                SubscriberError(
                    subscriber=subscriber.name,
                    event_type_=event.type,
                    error=f"{type(exc).__name__}: {exc}",
                )
            )

    async def _drain(self, subscriber: _Subscriber) -> None:
        assert subscriber.queue is not None
        while True:
            event = await subscriber.queue.get()
            try:
                # Only an async subscriber has a queue, and its handler returns an awaitable;
                # `Handler` covers both kinds, so mypy sees a possible None.
                await subscriber.handler(event)  # type: ignore[misc]
            except Exception as exc:
                self._report_error(subscriber, event, exc)
            finally:
                subscriber.queue.task_done()

    def stats(self) -> dict[str, object]:
        return {
            "published": self.published,
            "subscribers": len(self._subscribers),
            "dropped": {s.name: s.dropped_total for s in self._subscribers if s.dropped_total},
            "backlog": {s.name: s.queue.qsize() for s in self._subscribers if s.queue},
        }

    async def close(self, grace: float = 2.0) -> None:
        """Give async subscribers `grace` seconds to catch up, then stop their tasks and
        forget every subscriber."""
        pending = [s.queue.join() for s in self._subscribers if s.queue is not None]
        if pending:
            try:
                async with asyncio.timeout(grace):
                    await asyncio.gather(*pending)
            except TimeoutError:
                log.warning("event subscribers did not catch up within %.1f s", grace)
        workers = [s.worker for s in self._subscribers if s.worker is not None]
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        self._subscribers.clear()


async def _settle(awaitable: Awaitable[object]) -> None:
    await awaitable
