"""OpenAI Responses (`POST /v1/responses`), as the scripted model server speaks it: output
items (reasoning, message, function_call) and the typed stream events around them."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from typing import Any

from hologram.llm.wire._base import (
    ReceivedImage,
    Turn,
    WireFormat,
    image_from_url,
    pieces,
    sse,
    text_of,
)
from hologram.llm.wire.openai_chat import _openai_error


class OpenAIResponses(WireFormat):
    name = "openai-responses"

    def matches(self, path: str) -> bool:
        return path.endswith("/responses")

    def messages(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        items = payload.get("input")
        if isinstance(items, str):
            return [{"role": "user", "content": items}]
        found: list[dict[str, Any]] = []
        if payload.get("instructions"):
            found.append({"role": "system", "content": payload["instructions"]})
        for item in items or []:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "function_call_output":
                found.append({"role": "tool", "content": str(item.get("output", ""))})
            elif "role" in item:
                found.append({"role": item["role"], "content": text_of(item.get("content"))})
        return found

    def tools(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {"name": t.get("name"), "parameters": t.get("parameters")},
            }
            for t in payload.get("tools") or []
            if isinstance(t, dict) and t.get("type") == "function"
        ]

    def images(self, payload: dict[str, Any]) -> list[ReceivedImage]:
        found: list[ReceivedImage] = []
        items = payload.get("input")
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "function_call_output":
                parts, role, call = item.get("output"), "tool", str(item.get("call_id") or "")
            else:
                parts, role, call = item.get("content"), str(item.get("role") or "user"), ""
            for part in parts if isinstance(parts, list) else []:
                if isinstance(part, dict) and part.get("type") == "input_image":
                    found.append(image_from_url(part.get("image_url"), role, call))
        return found

    # ---- the answer ------------------------------------------------------------------------

    def _items(self, turn: Turn) -> list[dict[str, Any]]:
        reply, serial = turn.reply, turn.serial
        items: list[dict[str, Any]] = []
        if reply.reasoning:
            summary = [{"type": "summary_text", "text": reply.reasoning}]
            item = {"type": "reasoning", "id": f"rs_{serial}", "summary": summary}
            if "reasoning.encrypted_content" in (turn.payload.get("include") or []):
                # Opaque to the client, as OpenAI's is: it only has to come back unchanged.
                item["encrypted_content"] = (
                    "gAAAA" + hashlib.sha256(reply.reasoning.encode()).hexdigest()
                )
            items.append(item)
        if reply.text or not reply.tool_calls:
            items.append(self._message(serial, reply.text))
        for call in reply.tool_calls:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{serial}_{call.id}",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": turn.arguments(call),
                    "status": "completed",
                }
            )
        return items

    def _message(self, serial: int, text: str) -> dict[str, Any]:
        part = {"type": "output_text", "text": text, "annotations": []}
        return {
            "type": "message",
            "id": f"msg_{serial}",
            "role": "assistant",
            "status": "completed",
            "content": [part],
        }

    def _response(self, turn: Turn, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
        completion = turn.completion_tokens
        return {
            "id": f"resp_scripted_{turn.serial}",
            "object": "response",
            "created_at": int(time.time()),
            "model": turn.model,
            "status": status,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": turn.prompt_tokens,
                "input_tokens_details": {
                    "cached_tokens": turn.reply.cached_tokens,
                    "cache_write_tokens": 0,
                },
                "output_tokens": completion,
                "output_tokens_details": {"reasoning_tokens": turn.reply.reasoning_tokens},
                "total_tokens": turn.prompt_tokens + completion,
            },
        }

    def answer(self, turn: Turn) -> dict[str, Any]:
        return self._response(turn, "completed", self._items(turn))

    # ---- the stream ------------------------------------------------------------------------

    def stream(self, turn: Turn) -> Iterator[str]:
        seq = iter(range(1_000_000))

        def event(kind: str, **fields: Any) -> str:
            return sse({"type": kind, "sequence_number": next(seq), **fields}, kind)

        started = self._response(turn, "in_progress", [])
        started.pop("usage")
        yield event("response.created", response=started)
        for index, item in enumerate(self._items(turn)):
            if item["type"] == "message":
                yield from self._stream_message(turn, item, index, event)
                if not turn.whole:
                    return
            elif item["type"] == "reasoning":
                yield event(
                    "response.output_item.added", output_index=index, item={**item, "summary": []}
                )
                for piece in pieces(turn.reply.reasoning):
                    yield event(
                        "response.reasoning_summary_text.delta",
                        item_id=item["id"],
                        output_index=index,
                        summary_index=0,
                        delta=piece,
                    )
                yield event("response.output_item.done", output_index=index, item=item)
            else:
                added = {**item, "arguments": "", "status": "in_progress"}
                yield event("response.output_item.added", output_index=index, item=added)
                arguments = item["arguments"]
                half = len(arguments) // 2
                for part in (arguments[:half], arguments[half:]):
                    yield event(
                        "response.function_call_arguments.delta",
                        item_id=item["id"],
                        output_index=index,
                        delta=part,
                    )
                yield event("response.output_item.done", output_index=index, item=item)
        yield event("response.completed", response=self.answer(turn))

    def _stream_message(
        self, turn: Turn, item: dict[str, Any], index: int, event: Any
    ) -> Iterator[str]:
        added = {**item, "status": "in_progress", "content": []}
        yield event("response.output_item.added", output_index=index, item=added)
        part = {"type": "output_text", "text": "", "annotations": []}
        place = {"item_id": item["id"], "output_index": index, "content_index": 0}
        yield event("response.content_part.added", part=part, **place)
        for piece in turn.text_pieces:
            yield event("response.output_text.delta", delta=piece, logprobs=[], **place)
        if not turn.whole:
            return
        text = turn.reply.text
        yield event("response.output_text.done", text=text, logprobs=[], **place)
        yield event("response.output_item.done", output_index=index, item=item)

    # ---- errors ----------------------------------------------------------------------------

    def error(self, kind: str, message: str, retry_after: float | None) -> tuple[int, Any]:
        return _openai_error(kind, message)

    def stream_error(self, kind: str, message: str) -> str:
        code = _openai_error(kind, message)[1]["error"]["code"] or kind
        fields = {"type": "error", "code": code, "message": message, "param": None}
        return sse({**fields, "sequence_number": 999_999}, "error")
