"""Ollama's native `POST /api/chat`, as the scripted model server speaks it: one message
with `thinking` and whole tool calls, the counts and durations, NDJSON when streaming (which
Ollama does unless told not to)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from hologram.llm.wire._base import NDJSON, ReceivedImage, Turn, WireFormat, dumps, pieces

_STATUS = {
    "rate_limited": 429,
    "quota": 429,
    "context_length": 400,
    "overloaded": 503,
    "auth": 401,
    "bad_request": 400,
    "rejected": 400,
    "server": 500,
}


class Ollama(WireFormat):
    name = "ollama"
    stream_media = NDJSON

    def matches(self, path: str) -> bool:
        return path == "/api/chat"

    def wants_stream(self, path: str, payload: dict[str, Any]) -> bool:
        return payload.get("stream", True) is not False

    def tools(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        return [t for t in payload.get("tools") or [] if isinstance(t, dict)]

    def images(self, payload: dict[str, Any]) -> list[ReceivedImage]:
        # Ollama's images carry no type: the bytes say it (the kernel's store sniffs them).
        return [
            ReceivedImage(
                str(m.get("role") or "user"), "", str(data), tool=str(m.get("tool_name") or "")
            )
            for m in self.messages(payload)
            for data in m.get("images") or []
        ]

    def _line(self, turn: Turn, message: dict[str, Any], done: bool) -> dict[str, Any]:
        line: dict[str, Any] = {
            "model": turn.model,
            "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "message": {"role": "assistant", "content": "", **message},
            "done": done,
        }
        if done:
            line.update(
                done_reason="length" if turn.reply.finish() == "length" else "stop",
                total_duration=1_000_000,
                load_duration=100_000,
                prompt_eval_count=turn.prompt_tokens,
                prompt_eval_duration=200_000,
                eval_count=turn.completion_tokens,
                eval_duration=700_000,
            )
        return line

    def _calls(self, turn: Turn) -> list[dict[str, Any]]:
        return [
            {"function": {"name": c.name, "arguments": c.arguments}} for c in turn.reply.tool_calls
        ]

    def answer(self, turn: Turn) -> dict[str, Any]:
        reply = turn.reply
        message: dict[str, Any] = {"content": reply.text}
        if reply.reasoning:
            message["thinking"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = self._calls(turn)
        return self._line(turn, message, done=True)

    def stream(self, turn: Turn) -> Iterator[str]:
        for piece in pieces(turn.reply.reasoning):
            yield dumps(self._line(turn, {"thinking": piece}, False)) + "\n"
        for piece in turn.text_pieces:
            yield dumps(self._line(turn, {"content": piece}, False)) + "\n"
        if not turn.whole:
            return
        if turn.reply.tool_calls:
            yield dumps(self._line(turn, {"tool_calls": self._calls(turn)}, False)) + "\n"
        yield dumps(self._line(turn, {}, True)) + "\n"

    def error(self, kind: str, message: str, retry_after: float | None) -> tuple[int, Any]:
        return _STATUS.get(kind, 500), {"error": message}

    def stream_error(self, kind: str, message: str) -> str:
        return dumps({"error": message}) + "\n"
