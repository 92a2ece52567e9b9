"""Anthropic Messages (`POST /v1/messages`), as the scripted model server speaks it: content
blocks (thinking with its signature, text, tool_use) and the SSE events that stream them."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from hologram.llm.wire._base import (
    ReceivedImage,
    Turn,
    WireFormat,
    dumps,
    pieces,
    sse,
    text_of,
)

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
_ERRORS = {
    "rate_limited": (429, "rate_limit_error"),
    "quota": (400, "invalid_request_error"),
    "context_length": (400, "invalid_request_error"),
    "overloaded": (529, "overloaded_error"),
    "auth": (401, "authentication_error"),
    "bad_request": (400, "invalid_request_error"),
    "rejected": (400, "invalid_request_error"),
    "server": (500, "api_error"),
}
_WORDS = {
    "quota": "Your credit balance is too low to access the Anthropic API.",
    "context_length": "prompt is too long: 210000 tokens > 200000 maximum",
    "overloaded": "Overloaded",
}


def _signature(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _image(block: dict[str, Any], role: str, call: str = "") -> ReceivedImage:
    source = block.get("source")
    if not isinstance(source, dict):
        source = {}
    return ReceivedImage(
        role,
        str(source.get("media_type") or ""),
        str(source.get("data") or ""),
        str(source.get("url") or ""),
        call_id=call,
    )


class AnthropicMessages(WireFormat):
    name = "anthropic"

    def matches(self, path: str) -> bool:
        return path.endswith("/messages")

    def messages(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        if payload.get("system"):
            found.append({"role": "system", "content": text_of(payload["system"])})
        for message in payload.get("messages") or []:
            if isinstance(message, dict):
                found.append(
                    {"role": message.get("role"), "content": text_of(message.get("content"))}
                )
        return found

    def images(self, payload: dict[str, Any]) -> list[ReceivedImage]:
        found: list[ReceivedImage] = []
        for message in payload.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "image":
                    found.append(_image(block, str(message.get("role") or "user")))
                elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                    call = str(block.get("tool_use_id") or "")
                    found += [
                        _image(b, "tool", call)
                        for b in block["content"]
                        if isinstance(b, dict) and b.get("type") == "image"
                    ]
        return found

    def tools(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {"name": t.get("name"), "parameters": t.get("input_schema")},
            }
            for t in payload.get("tools") or []
            if isinstance(t, dict)
        ]

    def _blocks(self, turn: Turn) -> list[dict[str, Any]]:
        reply = turn.reply
        blocks: list[dict[str, Any]] = []
        if reply.reasoning:
            signature = _signature(reply.reasoning)
            blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": signature})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for call in reply.tool_calls:
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
            )
        return blocks

    def _usage(self, turn: Turn, output: int) -> dict[str, Any]:
        cached = turn.reply.cached_tokens
        return {
            # input_tokens counts what was not read from the cache.
            "input_tokens": max(turn.prompt_tokens - cached, 0),
            "output_tokens": output,
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": 0,
        }

    def _message(
        self, turn: Turn, content: list[dict[str, Any]], stop: str | None, output: int
    ) -> dict[str, Any]:
        return {
            "id": f"msg_scripted_{turn.serial}",
            "type": "message",
            "role": "assistant",
            "model": turn.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": self._usage(turn, output),
        }

    def _stop(self, turn: Turn) -> str:
        finish = turn.reply.finish()
        return _STOP.get(finish, finish)

    def answer(self, turn: Turn) -> dict[str, Any]:
        return self._message(turn, self._blocks(turn), self._stop(turn), turn.completion_tokens)

    def stream(self, turn: Turn) -> Iterator[str]:
        def event(kind: str, **fields: Any) -> str:
            return sse({"type": kind, **fields}, kind)

        yield event("message_start", message=self._message(turn, [], None, 1))
        for index, block in enumerate(self._blocks(turn)):
            if block["type"] == "text":
                yield event(
                    "content_block_start", index=index, content_block={"type": "text", "text": ""}
                )
                for piece in turn.text_pieces:
                    yield event(
                        "content_block_delta",
                        index=index,
                        delta={"type": "text_delta", "text": piece},
                    )
                if not turn.whole:
                    return
            elif block["type"] == "thinking":
                start: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
                yield event("content_block_start", index=index, content_block=start)
                for piece in pieces(block["thinking"]):
                    delta: dict[str, Any] = {"type": "thinking_delta", "thinking": piece}
                    yield event("content_block_delta", index=index, delta=delta)
                delta = {"type": "signature_delta", "signature": block["signature"]}
                yield event("content_block_delta", index=index, delta=delta)
            else:
                start = {**block, "input": {}}
                yield event("content_block_start", index=index, content_block=start)
                text = dumps(block["input"])
                half = len(text) // 2
                for part in (text[:half], text[half:]):
                    delta = {"type": "input_json_delta", "partial_json": part}
                    yield event("content_block_delta", index=index, delta=delta)
            yield event("content_block_stop", index=index)
        if not turn.whole:
            # A stream cut before any text block: the error comes after what was sent.
            return
        delta = {"stop_reason": self._stop(turn), "stop_sequence": None}
        yield event("message_delta", delta=delta, usage={"output_tokens": turn.completion_tokens})
        yield event("message_stop")

    def _body(self, kind: str, message: str) -> dict[str, Any]:
        error_type = _ERRORS.get(kind, _ERRORS["server"])[1]
        return {
            "type": "error",
            "error": {"type": error_type, "message": _WORDS.get(kind, message)},
        }

    def error(self, kind: str, message: str, retry_after: float | None) -> tuple[int, Any]:
        return _ERRORS.get(kind, _ERRORS["server"])[0], self._body(kind, message)

    def stream_error(self, kind: str, message: str) -> str:
        return sse(self._body(kind, message), "error")
