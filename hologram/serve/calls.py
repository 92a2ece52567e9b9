"""The service's API as requests: one `Call` per endpoint, its path, parameters and body
taken from the endpoint's declaration, its answer read into the endpoint's own result type;
and the event stream's state across its connections. Everything of `hologram.client` but
the I/O, which its sync and async faces do each their own way."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast
from urllib.parse import quote

import httpx

from hologram.agent import RecordRow
from hologram.llm import SSELines
from hologram.media import Upload
from hologram.sdk import convert, to_json
from hologram.serve.bodies import (
    DEFAULT_SYNC_TIMEOUT_S,
    HTTP_CHANNEL,
    InputBody,
    InterruptBody,
    InterruptLevelName,
    LevelName,
    MediaUpload,
    SettingText,
    SettingValue,
)
from hologram.serve.endpoint import Endpoint
from hologram.serve.events import get_events
from hologram.serve.inputs import (
    Ack,
    InputResult,
    Stopped,
    get_input,
    post_input,
    post_input_sync,
    post_interrupt,
    post_stop,
)
from hologram.serve.media import get_media
from hologram.serve.params import wire_name
from hologram.serve.reads.graph import Recalled, RecallQuery, get_recall
from hologram.serve.reads.knowledge import (
    KnowledgeEntry,
    KnowledgeQuery,
    KnowledgeSearch,
    get_knowledge_entry,
    get_knowledge_search,
)
from hologram.serve.settings import (
    SettingsList,
    SettingsQuery,
    StoredSetting,
    get_settings,
    put_settings,
)
from hologram.serve.status import MemoryCounts, Status, get_memory, get_status
from hologram.serve.stream import StreamEvent

T = TypeVar("T")

END_OF_STREAM = frozenset({"closing"})
RECONNECT = frozenset({"overflow"})


class HologramError(Exception):
    """The service refused a request: its status code and its message (which names the fix)."""

    def __init__(self, status: int, message: str, detail: dict[str, Any]) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request to one endpoint, and how to read its answer (a `T`)."""

    endpoint: Endpoint
    path: dict[str, str] = field(default_factory=dict)
    query: Any = None
    body: Any = None
    timeout: float | None = None

    def url(self) -> str:
        filled = {k: quote(v, safe="/") for k, v in self.path.items()}
        return self.endpoint.prefix + self.endpoint.template.format(**filled)

    def arguments(self) -> dict[str, Any]:
        given: dict[str, Any] = {"method": self.endpoint.method, "url": self.url()}
        if self.query is not None:
            given["params"] = _params(self.query)
        if self.body is not None:
            given["json"] = to_json(self.body)
        if self.timeout is not None:
            given["timeout"] = self.timeout
        return given

    def result(self, response: httpx.Response) -> T:
        if response.status_code >= 400:
            raise refusal(response)
        if self.endpoint.result is bytes:
            return cast(T, response.content)
        return cast(T, convert(response.json(), self.endpoint.result))


def _params(query: Any) -> dict[str, str]:
    """The fields of a query dataclass that differ from their defaults, as the wire has them."""
    sent = {}
    for spec in dataclasses.fields(query):
        value = getattr(query, spec.name)
        if value != spec.default:
            sent[wire_name(spec)] = (
                ("true" if value else "false") if isinstance(value, bool) else str(value)
            )
    return sent


def refusal(response: httpx.Response) -> HologramError:
    try:
        body = response.json()
    except ValueError:
        body = {"error": response.text.strip() or response.reason_phrase}
    if not isinstance(body, dict):
        body = {"error": str(body)}
    message = str(body.pop("error", response.reason_phrase))
    return HologramError(response.status_code, message, body)


# ---- the operations, once for both clients ---------------------------------------------------


class Operations:
    """The API as `Call`s, each with the signature of the client method that sends it (the
    clients' methods are these, run by each face's I/O)."""

    @staticmethod
    def send(
        text: str,
        *,
        channel: str = HTTP_CHANNEL,
        level: int | str = 0,
        source: str = "http",
        media: Sequence[MediaSent] = (),
    ) -> Call[Ack]:
        """Queue an input (with `media`: bytes or `Upload`s); its journal id once it is on
        disk."""
        body = InputBody(text, channel, _level(level), source, media=uploads(media))
        return Call(post_input, body=body)

    @staticmethod
    def say(
        text: str,
        *,
        channel: str = HTTP_CHANNEL,
        level: int | str = 0,
        source: str = "http",
        wait: float = DEFAULT_SYNC_TIMEOUT_S,
        media: Sequence[MediaSent] = (),
    ) -> Call[InputResult]:
        """Queue an input and wait (at most `wait` s) for its turn to end: the reply and
        how it ended."""
        body = InputBody(text, channel, _level(level), source, wait, uploads(media))
        # The HTTP wait outlasts the service's own, so its 504 arrives rather than ours.
        return Call(post_input_sync, body=body, timeout=wait + 10)

    @staticmethod
    def interrupt(
        text: str,
        *,
        level: int | str = "L1",
        channel: str = HTTP_CHANNEL,
        source: str = "http",
        media: Sequence[MediaSent] = (),
    ) -> Call[Ack]:
        """Interrupt at `level` (L1–L3) with an input."""
        typed = cast("int | InterruptLevelName", level)  # checked by the service, as `_level` says
        body = InterruptBody(text, channel, typed, source, media=uploads(media))
        return Call(post_interrupt, body=body)

    @staticmethod
    def stop() -> Call[Stopped]:
        """Stop the running turn and what is queued."""
        return Call(post_stop)

    @staticmethod
    def input(ident: int) -> Call[RecordRow]:
        """One input as the journal has it."""
        return Call(get_input, path={"id": str(ident)})

    @staticmethod
    def media(digest: str) -> Call[bytes]:
        """The stored bytes of media by its digest."""
        return Call(get_media, path={"digest": digest})

    @staticmethod
    def status() -> Call[Status]:
        return Call(get_status)

    @staticmethod
    def memory() -> Call[MemoryCounts]:
        return Call(get_memory)

    @staticmethod
    def settings(prefix: str = "") -> Call[SettingsList]:
        return Call(get_settings, query=SettingsQuery(prefix))

    @staticmethod
    def set_setting(key: str, value: Any = None, *, text: str | None = None) -> Call[StoredSetting]:
        """Store a typed value, or `text` parsed into the key's type."""
        body = SettingText(key, text) if text is not None else SettingValue(key, value)
        return Call(put_settings, body=body)

    @staticmethod
    def recall(q: str, *, depth: int = 2) -> Call[Recalled]:
        """What the graph recalls for a text (a read: the next turn is unaffected)."""
        return Call(get_recall, query=RecallQuery(q, depth=depth))

    @staticmethod
    def knowledge_search(q: str, *, top: int = 5, category: str = "") -> Call[KnowledgeSearch]:
        return Call(get_knowledge_search, query=KnowledgeQuery(q, top, category))

    @staticmethod
    def knowledge_entry(name: str) -> Call[KnowledgeEntry]:
        return Call(get_knowledge_entry, path={"name": name})


def _level(level: int | str) -> int | LevelName:
    """A level as the body types it. The client takes any text: the service checks it, and a
    level it does not know is its refusal (400) to give, naming the levels."""
    return cast("int | LevelName", level)


# ---- the event stream ------------------------------------------------------------------------


def events_request(types: Iterable[str], last: int | None) -> dict[str, Any]:
    headers = {} if last is None else {"last-event-id": str(last)}
    params = {"types": ",".join(types)} if types else {}
    return {
        "method": get_events.method,
        "url": get_events.prefix + get_events.path,
        "params": params,
        "headers": headers,
        "timeout": httpx.Timeout(10, read=None),
    }


class Frames:
    """Server-sent event lines → `StreamEvent`s."""

    def __init__(self) -> None:
        self.fields: dict[str, str] = {}

    def feed(self, line: str) -> StreamEvent | None:
        if line.startswith(":"):
            return None
        if line:
            name, _, value = line.partition(":")
            self.fields[name] = value.removeprefix(" ")
            return None
        fields, self.fields = self.fields, {}
        if "event" not in fields or "data" not in fields:
            return None
        data = json.loads(fields["data"])
        if "id" in fields:
            return convert(data, StreamEvent)  # a bus event: its document is a StreamEvent
        return StreamEvent(fields["event"], data if isinstance(data, dict) else {"data": data})


class EventStream:
    """The event stream across its connections: what to ask for (the types, and the last id
    seen, from which a new connection resumes), and the events in a connection's bytes. The
    clients only connect, read bytes and pause; this decides the rest."""

    def __init__(
        self, types: Iterable[str], last: int | None, opened: Callable[[], None] | None
    ) -> None:
        self.types = tuple(types)
        self.last = last
        self.opened = opened
        #: The service said it is closing: the stream ends.
        self.ended = False
        #: The current connection is to be left (the service overflowed, or closed).
        self.cut = False
        self._lines = SSELines()
        self._frames = Frames()

    def request(self) -> dict[str, Any]:
        return events_request(self.types, self.last)

    def connected(self, response: httpx.Response) -> None:
        """Take a new connection's answer (its body read, when it is a refusal)."""
        if response.status_code >= 400:
            raise refusal(response)
        self.cut = False
        self._lines, self._frames = SSELines(), Frames()
        if self.opened is not None:
            self.opened()

    def feed(self, data: bytes) -> Iterator[StreamEvent]:
        """The events `data` completes. Lines end only where SSE says (LF, CRLF, CR): the
        service writes JSON with U+2028 and NEL raw, which httpx's line reader would take
        for line ends, cutting an event's data in two."""
        for line in self._lines.feed(data):
            event = self._frames.feed(line)
            if event is None:
                continue
            if event.type in END_OF_STREAM or event.type in RECONNECT:
                self.ended = event.type in END_OF_STREAM
                self.cut = True
                return
            self.last = event.seq if event.seq is not None else self.last
            yield event


MediaSent = bytes | Upload
"""Media a client sends with an input: bytes (their type is sniffed) or an `Upload`."""


def uploads(media: Sequence[MediaSent]) -> tuple[MediaUpload, ...]:
    """Media as the input body carries it: base64 with its claimed type and name."""
    items = []
    for item in media:
        upload = item if isinstance(item, Upload) else Upload(bytes(item))
        encoded = base64.b64encode(upload.data).decode("ascii")
        items.append(MediaUpload(encoded, upload.declared, upload.name))
    return tuple(items)
