"""`ScriptedReply`: one answer queued on the scripted model server, which each wire format
renders as its service would (the formats read it; the server queues and serves it)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from hologram.sdk import ToolCall

_STATUS_KINDS = {401: "auth", 403: "auth", 429: "rate_limited", 529: "overloaded"}


@dataclass(slots=True)
class ScriptedReply:
    """One queued answer.

    Built in the wire format of the path it is asked on (streamed when the request asks)
    from `text`, `tool_calls` and `reasoning`, unless `body` (sent as it is) or `lines` (sent
    as a stream, one per line) is given. `delay` seconds pass before the answer,
    `chunk_delay` between stream chunks; either ends early if the client leaves or the
    server stops.

    `error` names a failure (a FailureKind value: rate_limited, quota, context_length,
    overloaded, auth, bad_request, server), answered as that service says it, with its
    status; `status` alone gives an error of that status. `retry_after` sends Retry-After
    (and Gemini's RetryInfo), `headers` any other headers. `stream_error` breaks a stream
    with the service's error event after `error_after` pieces of text. `cached_tokens` and
    `reasoning_tokens` go into the usage the answer reports; `refusal` is OpenAI's."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str = ""
    delay: float = 0.0
    chunk_delay: float = 0.0
    status: int = 200
    body: str | None = None
    lines: list[str] | None = None
    content_type: str = ""
    finish_reason: str = ""
    error: str = ""
    retry_after: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    stream_error: str = ""
    error_after: int = 1
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    refusal: str = ""

    def finish(self) -> str:
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")

    def failure(self) -> str:
        """The error kind this reply answers with, "" for none."""
        if self.error:
            return self.error
        if self.status < 400:
            return ""
        return _STATUS_KINDS.get(self.status, "server" if self.status >= 500 else "bad_request")

    def response_headers(self) -> dict[str, str]:
        headers = dict(self.headers)
        if self.retry_after is not None:
            headers.setdefault("retry-after", str(math.ceil(self.retry_after)))
            if not float(self.retry_after).is_integer():
                headers.setdefault("retry-after-ms", str(round(self.retry_after * 1000)))
        return headers

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScriptedReply:
        data = dict(data)
        calls = [
            c
            if isinstance(c, ToolCall)
            else ToolCall(c.get("id", ""), c["name"], c.get("arguments", {}))
            for c in data.pop("tool_calls", [])
        ]
        return cls(tool_calls=calls, **data)
