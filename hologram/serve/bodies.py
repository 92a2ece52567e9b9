"""Request bodies: read within a size limit, parsed as JSON under limits, and checked where
they enter, into the dataclasses the OpenAPI document states them from.

JSON is read by `hologram.sdk.jsontext`: nesting, numbers and lone surrogates that Python's
`json` would take (and something later would choke on) are refused here with a 400 naming
the field. Every refusal is an `ApiError` whose message says what is wrong and what is
expected.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from starlette.requests import Request

from hologram.media import MediaLimits, Upload
from hologram.sdk import Param, Priority, jsontext

DEFAULT_BODY_LIMIT = 1 << 20
JSON_KINDS = frozenset({"application/json"})
MAX_SYNC_TIMEOUT_S = 600.0
DEFAULT_SYNC_TIMEOUT_S = 60.0
HTTP_CHANNEL = "http"
OPENAI_CHANNEL = "openai"
MCP_CHANNEL = "mcp"
LEVELS = {"queued": Priority.QUEUED, "l1": Priority.L1, "l2": Priority.L2, "l3": Priority.L3}
JSON_LIMITS = (
    f"JSON nested at most {jsontext.MAX_DEPTH} levels, numbers of at most "
    f"{jsontext.MAX_NUMBER_CHARS} characters (finite), strings of valid Unicode (a lone "
    "surrogate such as \\ud800 is refused)"
)


class ApiError(Exception):
    def __init__(self, status: int, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.detail = detail


async def read_body(
    request: Request, limit: int, kinds: frozenset[str], what: str, limit_is: str = ""
) -> bytes:
    """The raw body: 413 past `limit` bytes (declared or actually sent; `limit_is` says what
    sets the limit), 415 when its content type is not one of `kinds` (`what` names the
    expected form in the message)."""
    why = f" ({limit_is})" if limit_is else ""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"request body of {declared} bytes is over the limit of {limit}{why}")
    kind = content_kind(request)
    if kind not in kinds:
        expected = " or ".join(f"'Content-Type: {k}'" for k in sorted(kinds))
        raise ApiError(415, f"send the body as {what} with {expected} (got {kind!r})")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"request body is over the limit of {limit} bytes{why}")
        chunks.append(chunk)
    return b"".join(chunks)


def content_kind(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def read_json(request: Request, limit: int, limit_is: str = "") -> Any:
    """The body as JSON (see `read_body`); 400 when it does not parse or breaks a limit."""
    return parse_json(await read_body(request, limit, JSON_KINDS, "JSON", limit_is))


def parse_json(raw: bytes) -> Any:
    try:
        return jsontext.loads(raw)
    except jsontext.JsonRefused as exc:
        where = f"'{exc.where}'" if exc.where else "request body"
        raise ApiError(400, f"{where} {exc.reason}") from None
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"request body is not UTF-8: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ApiError(
            400,
            f"request body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
        ) from None


def media_body_limit(base: int, limits: MediaLimits | None) -> tuple[int, str]:
    """The body limit of an endpoint that takes media, and what sets it: `base` for the
    rest of the body, plus `core.media.max_items` items of `core.media.max_bytes` each as
    base64 (a multipart body carries the raw bytes, so it fits the same limit). The media
    settings decide how large an input with images may be; the media store then names the
    item that breaks them."""
    if limits is None:
        return base, ""
    per_item = 4 * -(-limits.max_bytes // 3)
    limit = base + limits.max_items * per_item
    return limit, (
        f"{base} bytes plus core.media.max_items={limits.max_items} items of "
        f"core.media.max_bytes={limits.max_bytes} bytes as base64"
    )


def object_body(body: Any, cls: type, what: str) -> dict[str, Any]:
    """`body` as an object holding only the fields of `cls`."""
    if not isinstance(body, dict):
        raise ApiError(400, f"request body must be a JSON object, not {type(body).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(body) - known)
    if unknown:
        raise ApiError(400, f"unknown field(s) {unknown}; {what} has {sorted(known)}")
    return body


def string_field(body: dict[str, Any], key: str, default: str | None = None) -> str:
    value = body.get(key, default)
    if value is None:
        raise ApiError(400, f"'{key}' is required")
    if not isinstance(value, str):
        raise ApiError(400, f"'{key}' must be a string, not {type(value).__name__}")
    return value


def _default(cls: type, name: str) -> Any:
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


# ---- input ---------------------------------------------------------------------------------

LevelName = Literal["queued", "L1", "L2", "L3", "l1", "l2", "l3"]
InterruptLevelName = Literal["L1", "L2", "L3", "l1", "l2", "l3"]


@dataclass(frozen=True, slots=True)
class MediaUpload:
    """One media item sent with an input: its bytes as base64 and the type it claims (the
    store checks the claim against the bytes)."""

    data: Annotated[str, Param("the bytes, base64 (standard alphabet)", min_length=1)]
    type: Annotated[str, Param("the claimed media type, such as image/png; may be empty")] = ""
    name: Annotated[str, Param("a file name to show with it")] = ""


@dataclass(frozen=True, slots=True)
class InputBody:
    """An input for the agent: what is said, where the reply goes, how urgent it is."""

    text: Annotated[str, Param("what is said to the agent; not blank", min_length=1, pattern=r"\S")]
    channel: Annotated[
        str, Param("the output channel for the reply: a live one (GET /status, agent.channels)")
    ] = HTTP_CHANNEL
    level: Annotated[
        Annotated[int, Param(ge=0, le=3)] | LevelName,
        Param("0-3, or 'queued', 'L1'-'L3'; L4 is kernel-exclusive"),
    ] = "queued"
    source: Annotated[str, Param("who sends it")] = "http"
    timeout: Annotated[
        float, Param("seconds POST /input/sync waits for the reply", gt=0, le=MAX_SYNC_TIMEOUT_S)
    ] = DEFAULT_SYNC_TIMEOUT_S
    media: Annotated[
        tuple[MediaUpload, ...], Param("images sent with the input (core.media.* limits)")
    ] = ()

    @property
    def priority(self) -> Priority:
        level = self.level
        return LEVELS[level.lower()] if isinstance(level, str) else Priority(level)


@dataclass(frozen=True, slots=True)
class InterruptBody(InputBody):
    """An interrupt: an input at L1-L3, which preempts a turn running at a lower level."""

    level: Annotated[
        Annotated[int, Param(ge=1, le=3)] | InterruptLevelName,
        Param("1-3 or 'L1'-'L3'; L4 is kernel-exclusive"),
    ] = "L1"


def parse_level(value: Any, *, interrupt: bool) -> Priority:
    """0-3, or 'queued', 'L1'-'L3'. L4 is the kernel's own (spec: kernel-exclusive)."""
    if isinstance(value, str) and value.lower() in LEVELS:
        level = LEVELS[value.lower()]
    elif isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3:
        level = Priority(value)
    elif value in (4, "L4", "l4"):
        raise ApiError(400, "level L4 is kernel-exclusive; an outside input may ask for L1-L3")
    else:
        raise ApiError(400, f"'level' must be 0-3 or 'queued', 'L1', 'L2', 'L3'; got {value!r}")
    if interrupt and level is Priority.QUEUED:
        raise ApiError(400, "an interrupt has a level of L1-L3; use POST /input for queued input")
    return level


def input_body(body: Any, *, channels: list[str], kind: type[InputBody] = InputBody) -> InputBody:
    """`body` as an input (`kind` InterruptBody for an interrupt), or a 400 saying why not."""
    body = object_body(body, kind, "an input")
    text = string_field(body, "text")
    if not text.strip():
        raise ApiError(400, "'text' is empty")
    channel = string_field(body, "channel", HTTP_CHANNEL)
    if channel not in channels:
        raise ApiError(
            400, f"no output channel {channel!r} for the reply; live channels: {channels}"
        )
    level = body.get("level", _default(kind, "level"))
    parse_level(level, interrupt=kind is InterruptBody)
    source = string_field(body, "source", _default(kind, "source"))
    timeout = body.get("timeout", DEFAULT_SYNC_TIMEOUT_S)
    if (
        not isinstance(timeout, int | float)
        or isinstance(timeout, bool)
        or not 0 < timeout <= MAX_SYNC_TIMEOUT_S
    ):
        raise ApiError(400, f"'timeout' must be seconds in (0, {MAX_SYNC_TIMEOUT_S:g}]")
    media = media_field(body.get("media", []))
    return kind(text, channel, level, source, float(timeout), media)


FORM_FIELDS = frozenset(f.name for f in dataclasses.fields(InputBody) if f.name != "media")
"""The text parts of an input sent as multipart/form-data (its media are the file parts)."""


def form_input(values: dict[str, str]) -> dict[str, Any]:
    """An input's form fields (all text) as the values a JSON body carries: a level of
    digits is the number, a timeout is seconds."""
    body: dict[str, Any] = dict(values)
    level = body.get("level")
    if isinstance(level, str) and level.strip().isdigit():
        body["level"] = int(level)
    if "timeout" in body:
        try:
            body["timeout"] = float(body["timeout"])
        except ValueError:
            raise ApiError(
                400, f"'timeout' must be seconds in (0, {MAX_SYNC_TIMEOUT_S:g}]"
            ) from None
    return body


def media_field(value: Any) -> tuple[MediaUpload, ...]:
    """`media` as uploads still in base64 (decoded where they are stored)."""
    if not isinstance(value, list):
        raise ApiError(400, f"'media' must be a list of objects, not {type(value).__name__}")
    items = []
    for index, item in enumerate(value):
        item = object_body(item, MediaUpload, f"media item {index}")
        items.append(
            MediaUpload(
                string_field(item, "data"),
                string_field(item, "type", ""),
                string_field(item, "name", ""),
            )
        )
    return tuple(items)


def decode_media(items: tuple[MediaUpload, ...]) -> list[Upload]:
    """The uploads as bytes; a 400 naming the item whose base64 does not decode."""
    uploads = []
    for index, item in enumerate(items):
        try:
            data = base64.b64decode(item.data, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ApiError(400, f"media item {index}: 'data' is not base64 ({exc})") from None
        uploads.append(Upload(data, item.type, item.name))
    return uploads


# ---- settings ------------------------------------------------------------------------------

SettingKey = Annotated[
    str, Param("'core.<name>[.<name>…]' or 'plugin.<plugin>.<name>[.<name>…]'", min_length=1)
]


@dataclass(frozen=True, slots=True)
class SettingValue:
    """Store a typed JSON value, of the key's type, for a key."""

    key: SettingKey
    value: Annotated[Any, Param("the value as typed JSON")]


@dataclass(frozen=True, slots=True)
class SettingText:
    """Store text typed by a person, parsed into the key's type."""

    key: SettingKey
    text: Annotated[str, Param("text parsed into the key's type ('3', 'true', '[1, 2]')")]


def setting_body(body: Any) -> SettingValue | SettingText:
    """`{"key", "value"}` stores the JSON value as it is; `{"key", "text"}` parses text
    typed by a person into the key's type."""
    if isinstance(body, dict) and "text" in body and "value" not in body:
        body = object_body(body, SettingText, "a setting sent as text")
        return SettingText(string_field(body, "key"), string_field(body, "text"))
    if isinstance(body, dict) and "text" in body:
        raise ApiError(400, "send exactly one of 'value' (typed JSON) or 'text' (to be parsed)")
    body = object_body(body, SettingValue, "a setting")
    key = string_field(body, "key")
    if "value" not in body:
        raise ApiError(400, "send exactly one of 'value' (typed JSON) or 'text' (to be parsed)")
    return SettingValue(key, body["value"])
