"""The typed Python client of the service (`python -m hologram serve`), sync and async.

    with Client("http://127.0.0.1:8787") as hologram:
        result = hologram.say("hello")            # an InputResult: reply, ended_by, …
        for event in hologram.events(types=["agent_output"]):
            ...

    async with AsyncClient(url) as hologram:
        ack = await hologram.send("hello")        # an Ack: the journal id
        async for event in hologram.events():
            ...

Every method is one endpoint of the API: its path, its parameters and the type of its
answer are read from the endpoint's own declaration (`hologram.serve.endpoint`), and the
answer is built into the very dataclass the endpoint returns, so the client cannot drift
from the service. A refusal raises `HologramError` with the service's message. A request
whose keep-alive connection the server had just closed (`httpx.RemoteProtocolError`) is
sent once more: uvicorn closes only idle connections, so the first attempt was never read.
The event stream is an iterator that resumes from the last id it saw when the connection
breaks or the service reports an overflow, and ends when the service says it is closing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Any

import httpx

from hologram.agent.journal import RecordRow
from hologram.llm.streaming import SSELines
from hologram.serve import inputs, media, settings, status
from hologram.serve.bodies import DEFAULT_SYNC_TIMEOUT_S, HTTP_CHANNEL
from hologram.serve.calls import (
    END_OF_STREAM,
    RECONNECT,
    Call,
    Frames,
    HologramError,
    MediaSent,
    Operations,
    events_request,
    refusal,
)
from hologram.serve.inputs import Ack, InputResult, Stopped
from hologram.serve.reads import graph, knowledge
from hologram.serve.reads.graph import Recalled, RecallQuery
from hologram.serve.reads.knowledge import KnowledgeEntry, KnowledgeQuery, KnowledgeSearch
from hologram.serve.settings import SettingsList, SettingsQuery, StoredSetting
from hologram.serve.status import MemoryCounts, Status
from hologram.serve.stream import StreamEvent

DEFAULT_URL = "http://127.0.0.1:8787"
RESUME_PAUSE_S = 0.5


# ---- the sync client -------------------------------------------------------------------------


class Client:
    """The service's API over a blocking `httpx.Client` (see the module docstring)."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self.url = url.rstrip("/")
        self.http = httpx.Client(
            base_url=self.url, headers=headers, timeout=timeout, transport=transport
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def call(self, call: Call) -> Any:
        try:
            response = self.http.request(**call.arguments())
        except httpx.RemoteProtocolError:
            response = self.http.request(**call.arguments())
        return call.result(response)

    # ---- inputs

    def send(
        self,
        text: str,
        *,
        channel: str = HTTP_CHANNEL,
        level: int | str = 0,
        source: str = "http",
        media: Sequence[MediaSent] = (),
    ) -> Ack:
        """Queue an input (with `media`: bytes or `Upload`s); its journal id once it is on
        disk."""
        return self.call(Operations.send(text, channel, level, source, media))

    def say(
        self,
        text: str,
        *,
        channel: str = HTTP_CHANNEL,
        level: int | str = 0,
        source: str = "http",
        wait: float = DEFAULT_SYNC_TIMEOUT_S,
        media: Sequence[MediaSent] = (),
    ) -> InputResult:
        """Queue an input and wait (at most `wait` s) for its turn to end: the reply and
        how it ended."""
        return self.call(Operations.say(text, channel, level, source, wait, media))

    def interrupt(
        self,
        text: str,
        *,
        level: int | str = "L1",
        channel: str = HTTP_CHANNEL,
        source: str = "http",
        media: Sequence[MediaSent] = (),
    ) -> Ack:
        return self.call(Operations.interrupt(text, channel, level, source, media))

    def stop(self) -> Stopped:
        return self.call(Call(inputs.post_stop))

    def input(self, ident: int) -> RecordRow:
        """One input as the journal has it."""
        return self.call(Call(inputs.get_input, path={"id": str(ident)}))

    def media(self, digest: str) -> bytes:
        """The stored bytes of media by its digest."""
        return self.call(Call(media.get_media, path={"digest": digest}))

    # ---- reads

    def status(self) -> Status:
        return self.call(Call(status.get_status))

    def memory(self) -> MemoryCounts:
        return self.call(Call(status.get_memory))

    def settings(self, prefix: str = "") -> SettingsList:
        return self.call(Call(settings.get_settings, query=SettingsQuery(prefix)))

    def set_setting(self, key: str, value: Any = None, *, text: str | None = None) -> StoredSetting:
        """Store a typed value, or `text` parsed into the key's type."""
        return self.call(Operations.setting(key, value, text))

    def recall(self, q: str, *, depth: int = 2) -> Recalled:
        """What the graph recalls for a text (a read: the next turn is unaffected)."""
        return self.call(Call(graph.get_recall, query=RecallQuery(q, depth=depth)))

    def knowledge_search(self, q: str, *, top: int = 5, category: str = "") -> KnowledgeSearch:
        query = KnowledgeQuery(q, top, category)
        return self.call(Call(knowledge.get_knowledge_search, query=query))

    def knowledge_entry(self, name: str) -> KnowledgeEntry:
        call = Call(knowledge.get_knowledge_entry, path={"name": name})
        return self.call(call)

    # ---- the event stream

    def events(
        self,
        types: Iterable[str] = (),
        *,
        last_event_id: int | None = None,
        opened: Callable[[], None] | None = None,
    ) -> Iterator[StreamEvent]:
        """Every event (or those of `types`) from after `last_event_id`, as they happen;
        resumes after a broken connection or an overflow, ends when the service closes.
        `opened` is called each time the stream is connected (from then on nothing is
        missed)."""
        wanted, last = tuple(types), last_event_id
        while True:
            try:
                with self.http.stream(**events_request(wanted, last)) as response:
                    if response.status_code >= 400:
                        response.read()
                        raise refusal(response)
                    if opened is not None:
                        opened()
                    frames = Frames()
                    for event in _events_in(response, frames):
                        if event.type in END_OF_STREAM:
                            return
                        if event.type in RECONNECT:
                            break
                        last = event.seq if event.seq is not None else last
                        yield event
            except (httpx.RemoteProtocolError, httpx.ReadError):
                pass  # the connection broke mid-stream: resume from the last id seen
            time.sleep(RESUME_PAUSE_S)


# ---- the async client ------------------------------------------------------------------------


class AsyncClient:
    """The service's API over an `httpx.AsyncClient` (see the module docstring)."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self.url = url.rstrip("/")
        self.http = httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def call(self, call: Call) -> Any:
        try:
            response = await self.http.request(**call.arguments())
        except httpx.RemoteProtocolError:
            response = await self.http.request(**call.arguments())
        return call.result(response)

    # ---- inputs

    async def send(
        self,
        text: str,
        *,
        channel: str = HTTP_CHANNEL,
        level: int | str = 0,
        source: str = "http",
        media: Sequence[MediaSent] = (),
    ) -> Ack:
        return await self.call(Operations.send(text, channel, level, source, media))

    async def say(
        self,
        text: str,
        *,
        channel: str = HTTP_CHANNEL,
        level: int | str = 0,
        source: str = "http",
        wait: float = DEFAULT_SYNC_TIMEOUT_S,
        media: Sequence[MediaSent] = (),
    ) -> InputResult:
        return await self.call(Operations.say(text, channel, level, source, wait, media))

    async def interrupt(
        self,
        text: str,
        *,
        level: int | str = "L1",
        channel: str = HTTP_CHANNEL,
        source: str = "http",
        media: Sequence[MediaSent] = (),
    ) -> Ack:
        return await self.call(Operations.interrupt(text, channel, level, source, media))

    async def stop(self) -> Stopped:
        return await self.call(Call(inputs.post_stop))

    async def input(self, ident: int) -> RecordRow:
        return await self.call(Call(inputs.get_input, path={"id": str(ident)}))

    async def media(self, digest: str) -> bytes:
        return await self.call(Call(media.get_media, path={"digest": digest}))

    # ---- reads

    async def status(self) -> Status:
        return await self.call(Call(status.get_status))

    async def memory(self) -> MemoryCounts:
        return await self.call(Call(status.get_memory))

    async def settings(self, prefix: str = "") -> SettingsList:
        return await self.call(Call(settings.get_settings, query=SettingsQuery(prefix)))

    async def set_setting(
        self, key: str, value: Any = None, *, text: str | None = None
    ) -> StoredSetting:
        return await self.call(Operations.setting(key, value, text))

    async def recall(self, q: str, *, depth: int = 2) -> Recalled:
        return await self.call(Call(graph.get_recall, query=RecallQuery(q, depth=depth)))

    async def knowledge_search(
        self, q: str, *, top: int = 5, category: str = ""
    ) -> KnowledgeSearch:
        query = KnowledgeQuery(q, top, category)
        return await self.call(Call(knowledge.get_knowledge_search, query=query))

    async def knowledge_entry(self, name: str) -> KnowledgeEntry:
        call = Call(knowledge.get_knowledge_entry, path={"name": name})
        return await self.call(call)

    # ---- the event stream

    async def events(
        self,
        types: Iterable[str] = (),
        *,
        last_event_id: int | None = None,
        opened: Callable[[], None] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """As `Client.events`."""
        wanted, last = tuple(types), last_event_id
        while True:
            try:
                async with self.http.stream(**events_request(wanted, last)) as response:
                    if response.status_code >= 400:
                        await response.aread()
                        raise refusal(response)
                    if opened is not None:
                        opened()
                    frames = Frames()
                    async for event in _events_of(response, frames):
                        if event.type in END_OF_STREAM:
                            return
                        if event.type in RECONNECT:
                            break
                        last = event.seq if event.seq is not None else last
                        yield event
            except (httpx.RemoteProtocolError, httpx.ReadError):
                pass
            await asyncio.sleep(RESUME_PAUSE_S)


def _events_in(response: httpx.Response, frames: Frames) -> Iterator[StreamEvent]:
    """The stream's events as its bytes arrive. Lines end only where SSE says (LF, CRLF,
    CR): the service writes JSON with U+2028 and NEL raw, which httpx's line reader would
    take for line ends, cutting an event's data in two."""
    lines = SSELines()
    for data in response.iter_bytes():
        for line in lines.feed(data):
            if (event := frames.feed(line)) is not None:
                yield event


async def _events_of(response: httpx.Response, frames: Frames) -> AsyncIterator[StreamEvent]:
    """As `_events_in`, read asynchronously."""
    lines = SSELines()
    async for data in response.aiter_bytes():
        for line in lines.feed(data):
            if (event := frames.feed(line)) is not None:
                yield event


__all__ = ["DEFAULT_URL", "AsyncClient", "Call", "Client", "HologramError", "StreamEvent"]
