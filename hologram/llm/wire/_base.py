"""What every wire format of the scripted model server shares: the turn an answer is built
from, the format's interface, and the splitting of text into streamed pieces.

The formats, one module each, are chosen by path as the real services choose them:

    .../chat/completions                    OpenAI Chat Completions (and every compatible API)
    .../responses                           OpenAI Responses
    .../messages                            Anthropic Messages
    .../models/{model}:generateContent      Gemini (and :streamGenerateContent?alt=sse)
    /api/chat                               Ollama

Each one renders a `ScriptedReply` as that service's answer (a JSON body, or its stream of
SSE events or NDJSON lines), an error kind as that service's error status and body, and an
error inside a stream as that service's error event. What they write is checked against the
official SDKs' own types in tests/llm, so a format drifting from the real one fails a test.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from hologram.llm.budget import estimate_tokens
from hologram.sdk import ToolCall

if TYPE_CHECKING:
    from hologram.llm.wire._reply import ScriptedReply

SSE = "text/event-stream"
NDJSON = "application/x-ndjson"


@dataclass(slots=True)
class Turn:
    """What one answer is built from: the reply, the request and the numbers around them."""

    reply: ScriptedReply
    payload: dict[str, Any]
    model: str
    serial: int
    prompt_tokens: int
    stream: bool
    cut: int | None = None
    """Text pieces sent before a scripted stream error; None for a stream that ends well."""
    pieces: list[str] = field(default_factory=list)

    @property
    def completion_tokens(self) -> int:
        calls = sum(estimate_tokens(json.dumps(c.arguments)) for c in self.reply.tool_calls)
        text = estimate_tokens(self.reply.text) + estimate_tokens(self.reply.reasoning)
        return text + calls + self.reply.reasoning_tokens

    @property
    def text_pieces(self) -> list[str]:
        return self.pieces if self.cut is None else self.pieces[: self.cut]

    @property
    def whole(self) -> bool:
        return self.cut is None

    def arguments(self, call: ToolCall) -> str:
        return json.dumps(call.arguments, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class ReceivedImage:
    """One image a request carried, as read from the wire: a user's (`role` "user"), or
    one that came with a tool's result (`role` "tool", with the call's id and the tool's
    name where the format says them)."""

    role: str
    media_type: str
    data: str = ""
    """base64, as sent; "" for an image by URL."""
    url: str = ""
    call_id: str = ""
    tool: str = ""

    @property
    def content(self) -> bytes:
        """The image's bytes (empty for one by URL or with data that is not base64)."""
        try:
            return base64.b64decode(self.data, validate=True)
        except (binascii.Error, ValueError):
            return b""

    @property
    def digest(self) -> str:
        """sha256 of the bytes: the media store's name for them."""
        return hashlib.sha256(self.content).hexdigest() if self.data else ""

    def summary(self) -> dict[str, Any]:
        """What the control endpoint lists of it (no bytes)."""
        return {
            "role": self.role,
            "media_type": self.media_type,
            "size": len(self.content),
            "digest": self.digest,
            "url": self.url,
            "call_id": self.call_id,
            "tool": self.tool,
        }


_DATA_URL = re.compile(r"^data:(?P<type>[^;,]+);base64,(?P<data>.*)$", re.DOTALL)


def image_from_url(url: Any, role: str, call_id: str = "", tool: str = "") -> ReceivedImage:
    """An image given as a URL: a data: URL is read into its type and base64."""
    text = str(url or "")
    found = _DATA_URL.match(text)
    if found:
        return ReceivedImage(role, found["type"], found["data"], call_id=call_id, tool=tool)
    return ReceivedImage(role, "", url=text, call_id=call_id, tool=tool)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def sse(data: Any, event: str = "") -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {dumps(data)}\n\n"


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


# Error kinds (FailureKind values) and how each service says them: status, type/code, message.
MESSAGES = {
    "rate_limited": "Rate limit reached for requests. Please try again later.",
    "quota": "You exceeded your current quota, please check your plan and billing details.",
    "context_length": "This model's maximum context length is 128000 tokens. However, your "
    "messages resulted in 131072 tokens. Please reduce the length of the messages.",
    "overloaded": "The server is overloaded. Please try again later.",
    "auth": "Incorrect API key provided.",
    "bad_request": "Invalid request.",
    "rejected": "Invalid request.",
    "server": "The server had an error while processing your request.",
}


class WireFormat:
    """One service's format. Subclasses fill in the answers."""

    name: ClassVar[str]
    stream_media: ClassVar[str] = SSE

    def matches(self, path: str) -> bool:
        raise NotImplementedError

    def wants_stream(self, path: str, payload: dict[str, Any]) -> bool:
        return bool(payload.get("stream"))

    def model_of(self, path: str, payload: dict[str, Any]) -> str:
        return str(payload.get("model") or "")

    def messages(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """The request as OpenAI-style messages (for the offline responder and the prompt's
        token estimate)."""
        return [m for m in payload.get("messages") or [] if isinstance(m, dict)]

    def tools(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """Offered tools as OpenAI function tools ({type, function: {name, parameters}})."""
        return []

    def images(self, payload: dict[str, Any]) -> list[ReceivedImage]:
        """Every image the request carries, in order, as this format puts them."""
        return []

    def answer(self, turn: Turn) -> dict[str, Any]:
        raise NotImplementedError

    def stream(self, turn: Turn) -> Iterator[str]:
        raise NotImplementedError

    def error(self, kind: str, message: str, retry_after: float | None) -> tuple[int, Any]:
        raise NotImplementedError

    def stream_error(self, kind: str, message: str) -> str:
        raise NotImplementedError


# ---- helpers shared by the formats -------------------------------------------------------------

PIECE = re.compile(r"\S+\s*|\s+")


def pieces(text: str) -> list[str]:
    """Split text as a model streams it: a word (with its space) at a time, and CJK text a
    few characters at a time."""
    pieces: list[str] = []
    for word in PIECE.findall(text):
        if len(word) > 4 and any(ord(ch) > 0x2E7F for ch in word):
            pieces.extend(word[i : i + 3] for i in range(0, len(word), 3))
        else:
            pieces.append(word)
    return pieces
