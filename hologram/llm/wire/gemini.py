"""Gemini `models/{model}:generateContent` and `:streamGenerateContent?alt=sse`, as the
scripted model server speaks them: candidates of parts (thought text, text, functionCall
with its thoughtSignature), usageMetadata, and google.rpc errors with RetryInfo."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Any

from hologram.llm.wire._base import ReceivedImage, Turn, WireFormat, dumps, text_of

_PATH = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$")
_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
_ERRORS = {
    "rate_limited": (429, "RESOURCE_EXHAUSTED"),
    "quota": (429, "RESOURCE_EXHAUSTED"),
    "context_length": (400, "INVALID_ARGUMENT"),
    "overloaded": (503, "UNAVAILABLE"),
    "auth": (400, "INVALID_ARGUMENT"),
    "bad_request": (400, "INVALID_ARGUMENT"),
    "rejected": (400, "INVALID_ARGUMENT"),
    "server": (500, "INTERNAL"),
}
_WORDS = {
    "rate_limited": "Resource has been exhausted (e.g. check quota).",
    "quota": "You exceeded your current quota, please check your plan and billing details.",
    "context_length": "The input token count (1200000) exceeds the maximum number of tokens "
    "allowed (1048576).",
    "overloaded": "The model is overloaded. Please try again later.",
    "auth": "API key not valid. Please pass a valid API key.",
}
_TYPE = "type.googleapis.com/google.rpc."


def _media(part: Any, role: str, call: str = "", tool: str = "") -> list[ReceivedImage]:
    if not isinstance(part, dict):
        return []
    inline, linked = part.get("inlineData"), part.get("fileData")
    if isinstance(inline, dict):
        mime, data = str(inline.get("mimeType") or ""), str(inline.get("data") or "")
        return [ReceivedImage(role, mime, data, call_id=call, tool=tool)]
    if isinstance(linked, dict):
        mime, url = str(linked.get("mimeType") or ""), str(linked.get("fileUri") or "")
        return [ReceivedImage(role, mime, url=url, call_id=call, tool=tool)]
    return []


class Gemini(WireFormat):
    name = "gemini"

    def matches(self, path: str) -> bool:
        return _PATH.search(path) is not None

    def wants_stream(self, path: str, payload: dict[str, Any]) -> bool:
        found = _PATH.search(path)
        return found is not None and found["method"] == "streamGenerateContent"

    def model_of(self, path: str, payload: dict[str, Any]) -> str:
        found = _PATH.search(path)
        return "" if found is None else found["model"]

    def messages(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        system = payload.get("systemInstruction")
        if isinstance(system, dict):
            found.append({"role": "system", "content": text_of(system.get("parts"))})
        for content in payload.get("contents") or []:
            if isinstance(content, dict):
                role = "assistant" if content.get("role") == "model" else "user"
                found.append({"role": role, "content": text_of(content.get("parts"))})
        return found

    def images(self, payload: dict[str, Any]) -> list[ReceivedImage]:
        found: list[ReceivedImage] = []
        for content in payload.get("contents") or []:
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else []:
                if not isinstance(part, dict):
                    continue
                response = part.get("functionResponse")
                if isinstance(response, dict):
                    call, tool = str(response.get("id") or ""), str(response.get("name") or "")
                    for inner in response.get("parts") or []:
                        found += _media(inner, "tool", call, tool)
                else:
                    found += _media(part, "user")
        return found

    def _parts(self, turn: Turn) -> list[dict[str, Any]]:
        reply = turn.reply
        parts: list[dict[str, Any]] = []
        if reply.reasoning:
            parts.append({"text": reply.reasoning, "thought": True})
        if reply.text:
            parts.append({"text": reply.text})
        for call in reply.tool_calls:
            signature = hashlib.sha256(call.id.encode()).hexdigest()[:24]
            function = {"id": call.id, "name": call.name, "args": call.arguments}
            parts.append({"functionCall": function, "thoughtSignature": signature})
        return parts

    def _usage(self, turn: Turn) -> dict[str, Any]:
        reply = turn.reply
        thoughts = reply.reasoning_tokens
        candidates = turn.completion_tokens - thoughts
        usage = {
            "promptTokenCount": turn.prompt_tokens,
            "candidatesTokenCount": candidates,
            "totalTokenCount": turn.prompt_tokens + candidates + thoughts,
        }
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        if reply.cached_tokens:
            usage["cachedContentTokenCount"] = reply.cached_tokens
        return usage

    def _response(self, turn: Turn, parts: list[dict[str, Any]], last: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        body: dict[str, Any] = {"candidates": [candidate], "modelVersion": turn.model}
        if last:
            candidate["finishReason"] = _FINISH.get(turn.reply.finish(), "STOP")
            body["usageMetadata"] = self._usage(turn)
        body["responseId"] = f"scripted-{turn.serial}"
        return body

    def answer(self, turn: Turn) -> dict[str, Any]:
        return self._response(turn, self._parts(turn), last=True)

    def stream(self, turn: Turn) -> Iterator[str]:
        reply = turn.reply
        if reply.reasoning:
            thought = [{"text": reply.reasoning, "thought": True}]
            yield f"data: {dumps(self._response(turn, thought, False))}\n\n"
        for piece in turn.text_pieces:
            yield f"data: {dumps(self._response(turn, [{'text': piece}], False))}\n\n"
        if not turn.whole:
            return
        # Calls come whole, in the last chunk, with the finish reason and the usage.
        calls = [p for p in self._parts(turn) if "functionCall" in p]
        yield f"data: {dumps(self._response(turn, calls, True))}\n\n"

    def _body(
        self, kind: str, message: str, retry_after: float | None
    ) -> tuple[int, dict[str, Any]]:
        status, code = _ERRORS.get(kind, _ERRORS["server"])
        details: list[dict[str, Any]] = []
        if kind == "quota":
            violation = {
                "quotaMetric": "generativelanguage.googleapis.com/generate_requests_per_day",
                "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
            }
            details.append({"@type": _TYPE + "QuotaFailure", "violations": [violation]})
        if kind == "auth":
            details.append(
                {
                    "@type": _TYPE + "ErrorInfo",
                    "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com",
                }
            )
        if retry_after is not None:
            details.append({"@type": _TYPE + "RetryInfo", "retryDelay": f"{retry_after:g}s"})
        error = {"code": status, "message": _WORDS.get(kind, message), "status": code}
        if details:
            error["details"] = details
        return status, {"error": error}

    def error(self, kind: str, message: str, retry_after: float | None) -> tuple[int, Any]:
        return self._body(kind, message, retry_after)

    def stream_error(self, kind: str, message: str) -> str:
        return f"data: {dumps(self._body(kind, message, None)[1])}\n\n"
