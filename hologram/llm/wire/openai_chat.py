"""OpenAI Chat Completions, as the scripted model server speaks it (and every compatible API:
DeepSeek, Azure OpenAI, OpenRouter, DashScope, Moonshot)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

from hologram.llm.wire._base import ReceivedImage, Turn, WireFormat, dumps, image_from_url, pieces

# How our adapters name, in the user message after a run of tool messages, the call whose
# result the images that follow came with (a tool message itself takes no image).
_NAMED_CALL = re.compile(r"returned by (?P<tool>.+) \(call (?P<call>[^)]*)\)\]$")

_OPENAI_ERRORS = {
    "rate_limited": (429, "requests", "rate_limit_exceeded"),
    "quota": (429, "insufficient_quota", "insufficient_quota"),
    "context_length": (400, "invalid_request_error", "context_length_exceeded"),
    "overloaded": (503, "server_error", "server_overloaded"),
    "auth": (401, "invalid_request_error", "invalid_api_key"),
    "bad_request": (400, "invalid_request_error", None),
    "rejected": (400, "invalid_request_error", None),
    "server": (500, "server_error", None),
}


def _openai_error(kind: str, message: str) -> tuple[int, dict[str, Any]]:
    status, kind_type, code = _OPENAI_ERRORS.get(kind, _OPENAI_ERRORS["server"])
    return status, {"error": {"message": message, "type": kind_type, "param": None, "code": code}}


class OpenAIChat(WireFormat):
    name = "openai"

    def matches(self, path: str) -> bool:
        return path.endswith("/chat/completions")

    def tools(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        return [t for t in payload.get("tools") or [] if isinstance(t, dict)]

    def images(self, payload: dict[str, Any]) -> list[ReceivedImage]:
        found: list[ReceivedImage] = []
        after_tools = False
        for message in self.messages(payload):
            content = message.get("content")
            call = tool = ""
            for part in content if isinstance(content, list) else []:
                if not isinstance(part, dict):
                    continue
                named = _NAMED_CALL.search(str(part.get("text", ""))) if after_tools else None
                if named:
                    call, tool = named["call"], named["tool"]
                elif part.get("type") == "image_url":
                    url = (part.get("image_url") or {}).get("url")
                    found.append(image_from_url(url, "tool" if call else "user", call, tool))
            after_tools = message.get("role") == "tool"
        return found

    def _usage(self, turn: Turn) -> dict[str, Any]:
        reply, completion = turn.reply, turn.completion_tokens
        return {
            "prompt_tokens": turn.prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": turn.prompt_tokens + completion,
            "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
        }

    def _calls(self, turn: Turn) -> list[dict[str, Any]]:
        return [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": turn.arguments(c)},
            }
            for c in turn.reply.tool_calls
        ]

    def answer(self, turn: Turn) -> dict[str, Any]:
        reply = turn.reply
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text or None,
            "refusal": reply.refusal or None,
        }
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = self._calls(turn)
        return {
            "id": f"chatcmpl-scripted-{turn.serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": turn.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": reply.finish(),
                    "logprobs": None,
                }
            ],
            "usage": self._usage(turn),
        }

    def stream(self, turn: Turn) -> Iterator[str]:
        base = {
            "id": f"chatcmpl-scripted-{turn.serial}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": turn.model,
        }

        def event(delta: dict[str, Any], finish: str | None = None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return f"data: {dumps({**base, 'choices': [choice]})}\n\n"

        reply = turn.reply
        yield event({"role": "assistant", "content": ""})
        for piece in pieces(reply.reasoning):
            yield event({"reasoning_content": piece})
        for piece in turn.text_pieces:
            yield event({"content": piece})
        if not turn.whole:
            return
        if reply.refusal:
            yield event({"refusal": reply.refusal})
        for index, call in enumerate(reply.tool_calls):
            # The arguments arrive in two fragments, as real servers split them.
            arguments = turn.arguments(call)
            half = len(arguments) // 2
            first = {"name": call.name, "arguments": arguments[:half]}
            head = {"index": index, "id": call.id, "type": "function", "function": first}
            yield event({"tool_calls": [head]})
            rest = {"index": index, "function": {"arguments": arguments[half:]}}
            yield event({"tool_calls": [rest]})
        yield event({}, reply.finish())
        if (turn.payload.get("stream_options") or {}).get("include_usage"):
            yield f"data: {dumps({**base, 'choices': [], 'usage': self._usage(turn)})}\n\n"
        yield "data: [DONE]\n\n"

    def error(self, kind: str, message: str, retry_after: float | None) -> tuple[int, Any]:
        return _openai_error(kind, message)

    def stream_error(self, kind: str, message: str) -> str:
        return f"data: {dumps(_openai_error(kind, message)[1])}\n\n"
