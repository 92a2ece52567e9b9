"""The unified request and response (spec 001: CompletionRequest / CompletionResponse).

Every adapter sees the same JSON: `CompletionRequest.to_unified()` is what
`transform_request(raw_json)` receives, and `CompletionResponse.from_unified()` reads what
`transform_response(raw_body)` returns. The unified shape is documented in
`adapters/README.md`; keeping both directions in this one file keeps them in step.

Tool calls and tool definitions reuse the SDK's `ToolCall` and `ToolDef`, so the agent hands
the model's calls to the tool table without converting them.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from hologram.llm.errors import AdapterOutputError
from hologram.sdk import MediaRef, ToolCall, ToolDef, ToolResult


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str

    def to_unified(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image, either inline (`data`, base64 without a `data:` prefix) or by `url`.
    `digest` (sha256 hex) names it in the media store, so a model that cannot see images
    can be told which one it missed."""

    media_type: str = "image/png"
    data: str = ""
    url: str = ""
    digest: str = ""
    name: str = ""

    def __post_init__(self) -> None:
        if bool(self.data) == bool(self.url):
            raise ValueError("an ImageBlock needs exactly one of data (base64) or url")

    @classmethod
    def from_media(cls, ref: MediaRef, content: bytes) -> ImageBlock:
        """The block for stored media: its bytes inline, named by the store's digest."""
        return cls(ref.mime, base64.b64encode(content).decode("ascii"), "", ref.digest, ref.name)

    @property
    def size(self) -> int:
        """Bytes of the image, read from the length of its base64 (0 for one by url)."""
        if not self.data:
            return 0
        return len(self.data) * 3 // 4 - len(self.data[-2:]) + len(self.data[-2:].rstrip("="))

    def to_unified(self) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "image", "media_type": self.media_type}
        if self.data:
            block["data"] = self.data
        else:
            block["url"] = self.url
        if self.digest:
            block["digest"] = self.digest
        if self.name:
            block["name"] = self.name
        return block


ContentBlock = TextBlock | ImageBlock


@dataclass(slots=True)
class ChatMessage:
    """One message of the conversation. `content` is text, or a list of blocks when the
    message carries images. An assistant message may carry `tool_calls`; a tool message
    answers one of them (`tool_call_id`, `name`)."""

    role: Role
    content: str | list[ContentBlock] = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str = ""
    name: str = ""
    reasoning_content: str = ""
    is_error: bool = False
    provider_data: dict[str, Any] = field(default_factory=dict)
    """What the adapter that wrote this assistant message wants back on the next request,
    opaque to the kernel: thinking signatures, redacted thinking, Gemini's thought
    signatures of its function calls."""

    @classmethod
    def system(cls, text: str) -> ChatMessage:
        return cls(Role.SYSTEM, text)

    @classmethod
    def user(cls, content: str | list[ContentBlock]) -> ChatMessage:
        return cls(Role.USER, content)

    @classmethod
    def assistant(
        cls,
        text: str = "",
        tool_calls: list[ToolCall] | None = None,
        reasoning_content: str = "",
        provider_data: dict[str, Any] | None = None,
    ) -> ChatMessage:
        return cls(
            Role.ASSISTANT,
            text,
            list(tool_calls or []),
            reasoning_content=reasoning_content,
            provider_data=dict(provider_data or {}),
        )

    @classmethod
    def tool(cls, result: ToolResult, images: Sequence[ImageBlock] = ()) -> ChatMessage:
        """The message answering one call. With `images` (what the tool returned beside
        its text, spec: SetToolBlocks) the content is a block list, the text first."""
        content: str | list[ContentBlock] = result.content
        if images:
            content = [TextBlock(result.content), *images]
        return cls(
            Role.TOOL,
            content,
            tool_call_id=result.call_id,
            name=result.name,
            is_error=result.is_error,
        )

    @property
    def images(self) -> list[ImageBlock]:
        if isinstance(self.content, str):
            return []
        return [b for b in self.content if isinstance(b, ImageBlock)]

    @property
    def text(self) -> str:
        """The text of the message, blocks joined; images left out."""
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def to_unified(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": str(self.role)}
        if isinstance(self.content, str):
            message["content"] = self.content
        else:
            message["content"] = [block.to_unified() for block in self.content]
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.role is Role.TOOL:
            message["tool_call_id"] = self.tool_call_id
            message["name"] = self.name
            message["is_error"] = self.is_error
        if self.reasoning_content:
            message["reasoning_content"] = self.reasoning_content
        if self.provider_data:
            message["provider_data"] = self.provider_data
        return message


@dataclass(slots=True)
class CompletionRequest:
    """What the agent asks a provider. An empty `model` means the source's configured one.
    `thinking` asks for the model's reasoning mode where the API has a switch (off by
    default, as the spec sets DeepSeek); `extra` is passed to the adapter untouched."""

    messages: list[ChatMessage]
    tools: list[ToolDef] = field(default_factory=list)
    model: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = False
    thinking: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    channel: str = ""
    """Who asked, for the usage ledger (the turn's channel); never sent to the model."""

    @property
    def has_images(self) -> bool:
        return any(m.images for m in self.messages)

    def to_unified(self, model: str = "", stream: bool | None = None) -> dict[str, Any]:
        unified: dict[str, Any] = {
            "model": self.model or model,
            "messages": [m.to_unified() for m in self.messages],
            "tools": [
                {"name": t.name, "description": t.description, "parameters": t.parameters}
                for t in self.tools
            ],
            "stream": self.stream if stream is None else stream,
            "thinking": self.thinking,
        }
        if self.temperature is not None:
            unified["temperature"] = self.temperature
        if self.max_tokens is not None:
            unified["max_tokens"] = self.max_tokens
        if self.extra:
            unified["extra"] = self.extra
        return unified


USAGE_FIELDS = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_tokens",
)


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens one answer cost, as the provider counted them. `prompt_tokens` is the whole
    prompt, `cached_tokens` the part of it served from the provider's cache;
    `completion_tokens` is everything generated, `reasoning_tokens` the part of it spent
    thinking."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(*(getattr(self, f) + getattr(other, f) for f in USAGE_FIELDS))

    def __bool__(self) -> bool:
        return any(getattr(self, f) for f in USAGE_FIELDS)

    def to_json(self) -> dict[str, int]:
        return {f: getattr(self, f) for f in USAGE_FIELDS}


@dataclass(slots=True)
class CompletionResponse:
    """The unified answer: {content, reasoning_content, finish_reason, token_usage,
    tool_calls}, plus which source and model produced it."""

    content: str = ""
    reasoning_content: str = ""
    finish_reason: str = "stop"
    token_usage: TokenUsage = field(default_factory=TokenUsage)
    tool_calls: list[ToolCall] = field(default_factory=list)
    model: str = ""
    source: str = ""
    provider_data: dict[str, Any] = field(default_factory=dict)
    cost: float | None = None
    """What the answer cost by the price table (`core.llm.prices`), None when the model
    has no price there."""

    def to_message(self) -> ChatMessage:
        """The assistant message to append to the conversation."""
        return ChatMessage.assistant(
            self.content, self.tool_calls, self.reasoning_content, self.provider_data
        )

    @classmethod
    def from_unified(cls, value: Any, adapter: str) -> CompletionResponse:
        """Read what an adapter's transform_response returned; a wrong shape is an
        `AdapterOutputError` naming the adapter and the field."""
        where = "transform_response"
        obj = _expect_object(value, adapter, where, "")
        calls = _expect_list(obj.get("tool_calls"), adapter, where, "tool_calls")
        return cls(
            content=_text(obj.get("content"), adapter, where, "content"),
            reasoning_content=_text(
                obj.get("reasoning_content"), adapter, where, "reasoning_content"
            ),
            finish_reason=_text(obj.get("finish_reason"), adapter, where, "finish_reason")
            or ("tool_calls" if calls else "stop"),
            token_usage=read_usage(obj.get("token_usage"), adapter, where),
            tool_calls=[
                read_tool_call(c, adapter, where, f"tool_calls[{i}]", i)
                for i, c in enumerate(calls)
            ],
            model=_text(obj.get("model"), adapter, where, "model"),
            provider_data=read_provider_data(obj.get("provider_data"), adapter, where),
        )


# ---- reading adapter output -----------------------------------------------------------------


def _expect_object(value: Any, adapter: str, where: str, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise AdapterOutputError(adapter, where, path or "(result)", "an object", value)
    return value


def _expect_list(value: Any, adapter: str, where: str, path: str) -> list[Any]:
    if value is None or value == {}:  # an empty Lua table: "no tool calls"
        return []
    if not isinstance(value, list):
        raise AdapterOutputError(adapter, where, path, "an array", value)
    return value


def _text(value: Any, adapter: str, where: str, path: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise AdapterOutputError(adapter, where, path, "a string", value)
    return value


def _count(value: Any, adapter: str, where: str, path: str) -> int:
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise AdapterOutputError(adapter, where, path, "a non-negative integer", value)
    return value


def read_usage(value: Any, adapter: str, where: str) -> TokenUsage:
    if value is None or value == []:
        return TokenUsage()
    obj = _expect_object(value, adapter, where, "token_usage")
    counts = {f: _count(obj.get(f), adapter, where, f"token_usage.{f}") for f in USAGE_FIELDS}
    if not counts["total_tokens"]:
        counts["total_tokens"] = counts["prompt_tokens"] + counts["completion_tokens"]
    return TokenUsage(**counts)


def read_provider_data(value: Any, adapter: str, where: str) -> dict[str, Any]:
    if value is None or value == []:
        return {}
    return _expect_object(value, adapter, where, "provider_data")


def read_arguments(value: Any) -> tuple[dict[str, Any], str | None]:
    """Tool arguments arrive as an object or as JSON text (OpenAI sends text). Arguments that
    are not a JSON object are the model's mistake, not the adapter's: they come back as an
    error text for the agent to answer the call with, so the model can try again."""
    if value is None or value == "" or value == []:
        return {}, None
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError as exc:
            return {}, f"the arguments are not valid JSON ({exc.msg} at {exc.pos}): {value[:200]}"
        value = decoded
    if not isinstance(value, dict):
        return {}, f"the arguments must be a JSON object, got {json.dumps(value)[:200]}"
    return value, None


def read_tool_call(value: Any, adapter: str, where: str, path: str, position: int) -> ToolCall:
    obj = _expect_object(value, adapter, where, path)
    name = _text(obj.get("name"), adapter, where, f"{path}.name")
    if not name:
        raise AdapterOutputError(adapter, where, f"{path}.name", "a non-empty string", name)
    # A made-up id is unique, so a later turn's call never answers to an earlier one's.
    call_id = _text(obj.get("id"), adapter, where, f"{path}.id") or f"call_{secrets.token_hex(8)}"
    arguments, error = read_arguments(obj.get("arguments"))
    return ToolCall(id=call_id, name=name, arguments=arguments, arguments_error=error)
