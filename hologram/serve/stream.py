"""The live event stream: every bus event as a server-sent event, resumable.

Each event is serialised once, when it is published, into a bounded ring (by count and by
bytes). A client that reconnects with `Last-Event-ID: N` first gets every event after N still
in the ring, then the live ones; if some were already dropped from the ring it is told so
with a `gap` event before the rest; an id from an earlier run of the service (sequence numbers
start again at each boot) gets a `reset` event and everything the ring holds. A client that
cannot keep up is not allowed to hold the ring back: its queue is bounded, and when it
overflows the stream ends with an `overflow` event, so the client reconnects and resumes
from where it was.

Each event carries `input`: the journal id of the input the scheduler was running when the
event was published (null when none), a view built from the scheduler's own events, so a
client can tell which of its inputs a model round or a reply belongs to.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from hologram.sdk import Event, Payload, SchedulerDecision, from_wire, to_json, to_wire

KEEPALIVE_S = 15.0
_CLOSE = None


@dataclass(frozen=True, slots=True)
class Frame:
    seq: int
    type: str
    text: str
    """The whole SSE frame, ready to send."""


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One event of the stream, as its `data` reads: a bus event (its `seq` is the SSE id),
    or the stream's own notice (`gap`, `reset`, `overflow`, `closing`), which has no seq
    and carries its facts as the payload."""

    type: str
    payload: dict[str, Any]
    seq: int | None = None
    source: str = ""
    timestamp: float = 0.0
    input: int | None = None
    """The journal id of the input the event belongs to: the one its payload names (every
    event of a turn does), else the input running when it was published."""

    def typed_payload(self) -> Payload:
        """The payload as its event type's class (a stream notice, or a type this side does
        not know, as a `PluginPayload`); a field the class lacks is refused by name."""
        return from_wire(self.type, self.payload)


class StreamStats(TypedDict):
    """The event ring and its clients."""

    clients: int
    ring_events: int
    ring_bytes: int
    oldest_seq: int | None
    overflows: int


@dataclass(eq=False)
class _Listener:
    types: frozenset[str] | None
    queue: asyncio.Queue[Frame | None] = field(default_factory=lambda: asyncio.Queue(1000))
    overflowed: bool = False

    def wants(self, frame: Frame) -> bool:
        return self.types is None or frame.type in self.types


def _jsonable(value: Any) -> Any:
    return str(value)


def sse(event: str, data: Any, seq: int | None = None) -> str:
    head = f"id: {seq}\n" if seq is not None else ""
    body = json.dumps(data, ensure_ascii=False, default=_jsonable)
    return f"{head}event: {event}\ndata: {body}\n\n"


class EventStream:
    """Subscribes to the bus once; fans out to any number of SSE clients."""

    def __init__(self, max_events: int = 2000, max_bytes: int = 8 << 20) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._ring: deque[Frame] = deque()
        self._bytes = 0
        self._listeners: list[_Listener] = []
        self._running: int | None = None
        self._closed = False
        self.overflows = 0

    # ---- in: the bus ------------------------------------------------------------------------

    def attach(self, subscribe: Callable[[None, Callable[[Event], None]], Callable[[], None]]):
        """Subscribe to every event of a bus (`bus.subscribe`); returns the unsubscriber."""
        return subscribe(None, self.publish)

    def publish(self, event: Event) -> None:
        self._follow_scheduler(event)
        named = event.payload.input_id
        belongs_to = named if named is not None else self._running
        document = StreamEvent(
            event.type, to_wire(event.payload), event.seq, event.source, event.timestamp, belongs_to
        )
        frame = Frame(event.seq, event.type, sse(event.type, to_json(document), event.seq))
        self._ring.append(frame)
        self._bytes += len(frame.text)
        while self._ring and (len(self._ring) > self.max_events or self._bytes > self.max_bytes):
            self._bytes -= len(self._ring.popleft().text)
        for listener in self._listeners:
            if listener.wants(frame) and not listener.overflowed:
                self._offer(listener, frame)

    def _follow_scheduler(self, event: Event) -> None:
        if not isinstance(event.payload, SchedulerDecision):
            return
        action, task = event.payload.action, event.payload.task
        if action in ("start", "resume"):
            self._running = task
        elif action in ("preempt", "finish", "stop") and task == self._running:
            self._running = None

    def _offer(self, listener: _Listener, frame: Frame | None) -> None:
        try:
            listener.queue.put_nowait(frame)
        except asyncio.QueueFull:
            listener.overflowed = True
            self.overflows += 1

    # ---- out: the clients -------------------------------------------------------------------

    def open(self, last_seq: int | None, types: frozenset[str] | None) -> AsyncIterator[str]:
        """A client's stream. Replay and registration happen in one step, so nothing is
        sent twice or missed between the two."""
        listener = _Listener(types)
        backlog: list[str] = []
        if last_seq is not None:
            oldest = self._ring[0].seq if self._ring else None
            newest = self._ring[-1].seq if self._ring else 0
            if last_seq > newest:
                # An id from an earlier run of the service (sequence numbers start again at
                # each boot): everything kept from this run is new to the client.
                backlog.append(sse("reset", {"last_event_id": last_seq, "newest": newest}))
                last_seq = 0
            if oldest is not None and last_seq < oldest - 1:
                missed = {"after": last_seq, "oldest": oldest, "missed": oldest - last_seq - 1}
                backlog.append(sse("gap", missed))
            backlog.extend(f.text for f in self._ring if f.seq > last_seq and listener.wants(f))
        if self._closed:
            listener.queue.put_nowait(_CLOSE)
        self._listeners.append(listener)
        return self._frames(listener, backlog)

    async def _frames(self, listener: _Listener, backlog: list[str]) -> AsyncIterator[str]:
        try:
            yield ": hologram event stream\n\n"
            for text in backlog:
                yield text
            while True:
                try:
                    frame = await asyncio.wait_for(listener.queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    yield ": keepalive\n\n"
                    continue
                if frame is _CLOSE:
                    yield sse("closing", {"reason": "the service is stopping"})
                    return
                yield frame.text
                if listener.overflowed and listener.queue.empty():
                    yield sse("overflow", {"resume_after": frame.seq})
                    return
        finally:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def close(self) -> None:
        """End every client's stream (the service is stopping)."""
        self._closed = True
        for listener in self._listeners:
            # What a client has not read yet it cannot get from this service any more; the
            # `closing` event goes first rather than waiting behind it.
            while not listener.queue.empty():
                listener.queue.get_nowait()
            listener.overflowed = False
            listener.queue.put_nowait(_CLOSE)

    def stats(self) -> StreamStats:
        return StreamStats(
            clients=len(self._listeners),
            ring_events=len(self._ring),
            ring_bytes=self._bytes,
            oldest_seq=self._ring[0].seq if self._ring else None,
            overflows=self.overflows,
        )
