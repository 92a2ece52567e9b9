"""Request bodies: read within a size limit, parsed, and checked where they enter.

Every refusal is an `ApiError` whose message says what is wrong and what is expected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from hologram.sdk import Priority

DEFAULT_BODY_LIMIT = 1 << 20
JSON_KINDS = frozenset({"application/json"})
MAX_SYNC_TIMEOUT_S = 600.0
DEFAULT_SYNC_TIMEOUT_S = 60.0
LEVELS = {"queued": Priority.QUEUED, "l1": Priority.L1, "l2": Priority.L2, "l3": Priority.L3}


class ApiError(Exception):
    def __init__(self, status: int, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.detail = detail


async def read_body(request: Request, limit: int, kinds: frozenset[str], what: str) -> bytes:
    """The raw body: 413 past `limit` bytes (declared or actually sent), 415 when its
    content type is not one of `kinds` (`what` names the expected form in the message)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"request body of {declared} bytes is over the limit of {limit}")
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in kinds:
        expected = " or ".join(f"'Content-Type: {k}'" for k in sorted(kinds))
        raise ApiError(415, f"send the body as {what} with {expected} (got {kind!r})")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"request body is over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: Request, limit: int) -> Any:
    """The body as JSON (see `read_body`); 400 when it does not parse."""
    raw = await read_body(request, limit, JSON_KINDS, "JSON")
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"request body is not UTF-8: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ApiError(
            400,
            f"request body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
        ) from None


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ApiError(400, f"request body must be a JSON object, not {type(body).__name__}")
    return body


def _string(body: dict[str, Any], key: str, default: str | None = None) -> str:
    value = body.get(key, default)
    if value is None:
        raise ApiError(400, f"'{key}' is required")
    if not isinstance(value, str):
        raise ApiError(400, f"'{key}' must be a string, not {type(value).__name__}")
    return value


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


@dataclass(frozen=True, slots=True)
class InputBody:
    text: str
    channel: str
    level: Priority
    source: str
    timeout: float


def input_body(
    body: Any, *, channels: list[str], default_channel: str, interrupt: bool = False
) -> InputBody:
    body = _object(body)
    known = {"text", "channel", "level", "source", "timeout"}
    unknown = sorted(set(body) - known)
    if unknown:
        raise ApiError(400, f"unknown field(s) {unknown}; an input has {sorted(known)}")
    text = _string(body, "text")
    if not text.strip():
        raise ApiError(400, "'text' is empty")
    channel = _string(body, "channel", default_channel)
    if channel not in channels:
        raise ApiError(
            400, f"no output channel {channel!r} for the reply; live channels: {channels}"
        )
    default_level = "L1" if interrupt else "queued"
    level = parse_level(body.get("level", default_level), interrupt=interrupt)
    source = _string(body, "source", "http")
    timeout = body.get("timeout", DEFAULT_SYNC_TIMEOUT_S)
    if (
        not isinstance(timeout, int | float)
        or isinstance(timeout, bool)
        or not 0 < timeout <= MAX_SYNC_TIMEOUT_S
    ):
        raise ApiError(400, f"'timeout' must be seconds in (0, {MAX_SYNC_TIMEOUT_S:g}]")
    return InputBody(text, channel, level, source, float(timeout))


def setting_body(body: Any) -> tuple[str, Any, bool]:
    """(key, value, as_text): `{"key", "value"}` stores the JSON value as it is;
    `{"key", "text"}` parses text typed by a person into the key's type."""
    body = _object(body)
    key = _string(body, "key")
    if ("value" in body) == ("text" in body):
        raise ApiError(400, "send exactly one of 'value' (typed JSON) or 'text' (to be parsed)")
    if "text" in body:
        return key, _string(body, "text"), True
    return key, body["value"], False
