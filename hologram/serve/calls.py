"""The service's API as requests: one `Call` per endpoint, its path, parameters and body
taken from the endpoint's declaration, its answer read into the endpoint's own result type.
Shared by the sync and async clients of `hologram.client`, which only send them."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from hologram.media import Upload
from hologram.sdk.schema import convert, to_json
from hologram.serve import inputs, settings
from hologram.serve.bodies import (
    InputBody,
    InterruptBody,
    MediaUpload,
    SettingText,
    SettingValue,
)
from hologram.serve.endpoint import Endpoint
from hologram.serve.events import get_events
from hologram.serve.params import wire_name
from hologram.serve.stream import StreamEvent

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
class Call:
    """One request to one endpoint, and how to read its answer."""

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

    def result(self, response: httpx.Response) -> Any:
        if response.status_code >= 400:
            raise refusal(response)
        if self.endpoint.result is bytes:
            return response.content
        return convert(response.json(), self.endpoint.result)


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
    """The API as `Call`s; the two clients only run them."""

    @staticmethod
    def send(
        text: str, channel: str, level: int | str, source: str, media: Sequence[MediaSent] = ()
    ) -> Call:
        body = InputBody(text, channel, level, source, media=uploads(media))
        return Call(inputs.post_input, body=body)

    @staticmethod
    def say(
        text: str,
        channel: str,
        level: int | str,
        source: str,
        timeout: float,
        media: Sequence[MediaSent] = (),
    ) -> Call:
        body = InputBody(text, channel, level, source, timeout, uploads(media))
        # The HTTP wait outlasts the service's own, so its 504 arrives rather than ours.
        return Call(inputs.post_input_sync, body=body, timeout=timeout + 10)

    @staticmethod
    def interrupt(
        text: str, channel: str, level: int | str, source: str, media: Sequence[MediaSent] = ()
    ) -> Call:
        body = InterruptBody(text, channel, level, source, media=uploads(media))
        return Call(inputs.post_interrupt, body=body)

    @staticmethod
    def setting(key: str, value: Any, text: str | None) -> Call:
        body = SettingText(key, text) if text is not None else SettingValue(key, value)
        return Call(settings.put_settings, body=body)


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
