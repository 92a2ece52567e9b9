"""Streaming: chunks, the framing of SSE and NDJSON bodies, and assembling tool-call deltas.

An adapter's `transform_stream_chunk` returns a chunk table (or nil to skip the line):

    {content, reasoning_content, finish_reason, token_usage, done, model, provider_data,
     tool_calls = {{index, id, name, arguments, fragment}, ...},
     error = {kind, message, retry_after}}

A tool-call delta with an `index` is a piece of the call at that index: its `arguments`
text is appended to what came before (OpenAI and Anthropic stream the JSON in fragments).
A delta marked `fragment` but without an index (compatible servers that leave the index
out) starts a new call when it has an id or a name, and continues the last call otherwise.
Any other delta without an index is a whole call (Ollama and Gemini send calls whole).

An `error` is the provider telling, inside the stream, that the answer failed (Anthropic's
`overloaded_error` event, an OpenAI error chunk): its kind decides what happens next, as
an HTTP error status would.

`provider_data` pieces are merged: a list of tables with an `index` merges the tables of
one index (their strings joined), other lists are extended, tables updated, values replaced.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hologram.llm.errors import AdapterOutputError, FailureKind
from hologram.llm.messages import (
    USAGE_FIELDS,
    CompletionResponse,
    TokenUsage,
    read_provider_data,
    read_tool_call,
    read_usage,
)
from hologram.sdk import ToolCall

_WHERE = "transform_stream_chunk"


@dataclass(slots=True)
class ToolCallDelta:
    index: int | None
    id: str = ""
    name: str = ""
    arguments: str | dict[str, Any] = ""
    fragment: bool = False


@dataclass(frozen=True, slots=True)
class ChunkError:
    """An error the provider reported inside a stream."""

    kind: FailureKind
    message: str
    retry_after: float | None = None


@dataclass(slots=True)
class StreamChunk:
    """One piece of a streamed answer. The last chunk of a stream has `done` set and carries
    the whole assembled `response` (text joined, tool calls complete)."""

    content: str = ""
    reasoning_content: str = ""
    tool_calls: list[ToolCallDelta] = field(default_factory=list)
    finish_reason: str = ""
    token_usage: TokenUsage | None = None
    done: bool = False
    model: str = ""
    response: CompletionResponse | None = None
    provider_data: dict[str, Any] = field(default_factory=dict)
    error: ChunkError | None = None
    restart: bool = False
    """Set by the provider manager on a chunk that begins the answer again after a retry:
    whatever was received before it is void (a consumer clears the text it showed)."""

    @property
    def empty(self) -> bool:
        return not (
            self.content
            or self.reasoning_content
            or self.tool_calls
            or self.finish_reason
            or self.token_usage
            or self.done
            or self.provider_data
            or self.restart
        )


def _opt_text(obj: dict[str, Any], key: str, adapter: str) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise AdapterOutputError(adapter, _WHERE, key, "a string", value)
    return value


def read_error(value: Any, adapter: str, where: str) -> ChunkError:
    """An `error` table of a transform: {kind, message, retry_after}."""
    if isinstance(value, str):
        return ChunkError(FailureKind.SERVER, value)
    if not isinstance(value, dict):
        raise AdapterOutputError(adapter, where, "error", "a table or a message", value)
    kind = FailureKind.named(value.get("kind", "server"))
    if kind is None:
        raise AdapterOutputError(
            adapter, where, "error.kind", f"one of {', '.join(FailureKind)}", value.get("kind")
        )
    message = value.get("message")
    delay = value.get("retry_after")
    if delay is not None and (not isinstance(delay, int | float) or isinstance(delay, bool)):
        raise AdapterOutputError(adapter, where, "error.retry_after", "seconds", delay)
    return ChunkError(kind, str(message or kind), None if delay is None else float(delay))


def read_chunk(value: Any, adapter: str) -> StreamChunk | None:
    """Check what `transform_stream_chunk` returned; None means "skip this line"."""
    if value is None:
        return None
    if not isinstance(value, dict):
        if value == []:
            return None
        raise AdapterOutputError(adapter, _WHERE, "(result)", "an object or nil", value)
    if value.get("error") is not None:
        return StreamChunk(error=read_error(value["error"], adapter, _WHERE))
    deltas: list[ToolCallDelta] = []
    raw_calls = value.get("tool_calls")
    if raw_calls not in (None, [], {}):
        if not isinstance(raw_calls, list):
            raise AdapterOutputError(adapter, _WHERE, "tool_calls", "an array", raw_calls)
        for i, raw in enumerate(raw_calls):
            path = f"tool_calls[{i}]"
            if not isinstance(raw, dict):
                raise AdapterOutputError(adapter, _WHERE, path, "an object", raw)
            index = raw.get("index")
            if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
                raise AdapterOutputError(adapter, _WHERE, f"{path}.index", "an integer", index)
            arguments = raw.get("arguments")
            if arguments is None or arguments == []:
                arguments = ""
            if not isinstance(arguments, str | dict):
                raise AdapterOutputError(
                    adapter, _WHERE, f"{path}.arguments", "a string or an object", arguments
                )
            deltas.append(
                ToolCallDelta(
                    index=index,
                    id=_opt_text(raw, "id", adapter),
                    name=_opt_text(raw, "name", adapter),
                    arguments=arguments,
                    fragment=bool(raw.get("fragment")),
                )
            )
    usage = value.get("token_usage")
    return StreamChunk(
        content=_opt_text(value, "content", adapter),
        reasoning_content=_opt_text(value, "reasoning_content", adapter),
        tool_calls=deltas,
        finish_reason=_opt_text(value, "finish_reason", adapter),
        token_usage=None if usage in (None, {}, []) else read_usage(usage, adapter, _WHERE),
        done=bool(value.get("done")),
        model=_opt_text(value, "model", adapter),
        provider_data=read_provider_data(value.get("provider_data"), adapter, _WHERE),
    )


def merge_provider_data(into: dict[str, Any], piece: dict[str, Any]) -> None:
    """Fold one chunk's provider_data into what came before (rules in the module doc)."""
    for key, value in piece.items():
        old = into.get(key)
        if isinstance(value, list) and isinstance(old, list):
            for item in value:
                index = item.get("index") if isinstance(item, dict) else None
                same = next(
                    (
                        o
                        for o in old
                        if isinstance(o, dict) and index is not None and o.get("index") == index
                    ),
                    None,
                )
                if same is None:
                    old.append(dict(item) if isinstance(item, dict) else item)
                    continue
                for field_name, part in item.items():
                    before = same.get(field_name)
                    joined = isinstance(part, str) and isinstance(before, str)
                    same[field_name] = before + part if joined else part
        elif isinstance(value, dict) and isinstance(old, dict):
            old.update(value)
        elif isinstance(value, list):
            into[key] = [dict(v) if isinstance(v, dict) else v for v in value]
        else:
            into[key] = value


class StreamAssembler:
    """Folds chunks into one `CompletionResponse`."""

    def __init__(self, adapter: str) -> None:
        self.adapter = adapter
        self._content: list[str] = []
        self._reasoning: list[str] = []
        # Calls in the order they first appeared; indexed ones are looked up by index.
        self._calls: list[dict[str, Any]] = []
        self._whole_calls: list[ToolCall] = []
        self._by_index: dict[int, dict[str, Any]] = {}
        self._finish = ""
        self._usage: dict[str, int] = {}
        self._data: dict[str, Any] = {}
        self.model = ""

    def feed(self, chunk: StreamChunk) -> None:
        self._content.append(chunk.content)
        self._reasoning.append(chunk.reasoning_content)
        for delta in chunk.tool_calls:
            self._feed_call(delta)
        if chunk.finish_reason:
            self._finish = chunk.finish_reason
        if chunk.token_usage is not None:
            # Usage arrives in parts (Anthropic: input at the start, output at the end).
            for key in USAGE_FIELDS:
                number = getattr(chunk.token_usage, key)
                if number:
                    self._usage[key] = number
        if chunk.model:
            self.model = chunk.model
        if chunk.provider_data:
            merge_provider_data(self._data, chunk.provider_data)

    def take(self, whole: CompletionResponse) -> None:
        """A whole answer, when the server did not stream after all."""
        self._content.append(whole.content)
        self._reasoning.append(whole.reasoning_content)
        # Kept as read: re-reading them would lose an `arguments_error` (arguments that
        # were not JSON arrive as {} with the error beside them).
        self._whole_calls += whole.tool_calls
        self._finish = whole.finish_reason
        self._usage.update(whole.token_usage.to_json())
        self._data.update(whole.provider_data)
        self.model = whole.model

    def _feed_call(self, delta: ToolCallDelta) -> None:
        if delta.index is None and not delta.fragment:
            self._calls.append({"id": delta.id, "name": delta.name, "arguments": delta.arguments})
            return
        if delta.index is None:
            starts = bool(delta.id or delta.name) or not self._calls
            if starts:
                call: dict[str, Any] = {"id": "", "name": "", "arguments": ""}
                self._calls.append(call)
            else:
                call = self._calls[-1]
        else:
            found = self._by_index.get(delta.index)
            if found is None:
                found = {"id": "", "name": "", "arguments": ""}
                self._by_index[delta.index] = found
                self._calls.append(found)
            call = found
        call["id"] = call["id"] or delta.id
        call["name"] = call["name"] or delta.name
        piece = delta.arguments
        call["arguments"] += piece if isinstance(piece, str) else json.dumps(piece)

    def response(self, source: str = "") -> CompletionResponse:
        calls: list[ToolCall] = [
            *self._whole_calls,
            *(
                read_tool_call(c, self.adapter, _WHERE, f"tool_calls[{i}]", i)
                for i, c in enumerate(self._calls)
            ),
        ]
        finish = self._finish or "stop"
        if calls and finish == "stop":
            # The last chunk of Ollama and Gemini streams says "stop" after a call came whole.
            finish = "tool_calls"
        counts = {key: self._usage.get(key, 0) for key in USAGE_FIELDS}
        if not counts["total_tokens"]:
            counts["total_tokens"] = counts["prompt_tokens"] + counts["completion_tokens"]
        return CompletionResponse(
            content="".join(self._content),
            reasoning_content="".join(self._reasoning),
            finish_reason=finish,
            token_usage=TokenUsage(**counts),
            tool_calls=calls,
            model=self.model,
            source=source,
            provider_data=self._data,
        )


class SSELines:
    """Complete lines out of a body's bytes as they arrive. Lines end at \\n, \\r\\n or \\r
    (as SSE allows), and nowhere else: a payload's text may hold U+2028 or NEL raw (a JSON
    encoder with ensure_ascii off writes them so), and a splitter that honours every
    Unicode line break, as str.splitlines does, would cut the payload's JSON in two. The
    bytes are split before decoding, which is safe since in UTF-8 no byte of a multi-byte
    character is a CR or LF."""

    __slots__ = ("_encoding", "_rest")

    def __init__(self, encoding: str = "utf-8") -> None:
        self._encoding = encoding
        self._rest = b""

    def feed(self, data: bytes) -> list[str]:
        data = self._rest + data if self._rest else data
        if b"\r" in data:
            # A CR at the very end may be the first half of a CRLF: wait for the next byte.
            keep = data.endswith(b"\r")
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if keep:
                data = data[:-1]
            lines = data.split(b"\n")
            self._rest = lines.pop() + (b"\r" if keep else b"")
        else:
            lines = data.split(b"\n")
            self._rest = lines.pop()
        encoding = self._encoding
        return [line.decode(encoding, "replace") for line in lines]

    def close(self) -> list[str]:
        """The last line, when the body did not end with a line break."""
        rest, self._rest = self._rest, b""
        rest = rest.removesuffix(b"\r")
        return [rest.decode(self._encoding, "replace")] if rest else []


class SSEFramer:
    """The data payloads of a server-sent-event stream, fed its body's bytes as they come:
    `data:` lines of one event joined by newlines, dispatched at the blank line that ends
    the event. `event:`, `id:` and comment lines are dropped: the payloads adapters read
    name their own type. Synchronous on purpose: each read from the socket is framed in
    one call, without an async generator per layer between the socket and the adapter."""

    __slots__ = ("_data", "_lines")

    def __init__(self, encoding: str = "utf-8") -> None:
        self._lines = SSELines(encoding)
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[str]:
        return self._events(self._lines.feed(data))

    def close(self) -> list[str]:
        """What the body's end completes: a last line, an event without its blank line."""
        payloads = self._events(self._lines.close())
        if self._data:
            payloads.append("\n".join(self._data))
            self._data = []
        return payloads

    def _events(self, lines: list[str]) -> list[str]:
        payloads: list[str] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    payloads.append("\n".join(data))
                    data.clear()
                continue
            if line.startswith("data:"):
                payload = line[5:]
                data.append(payload[1:] if payload.startswith(" ") else payload)
        return payloads


class NDJSONFramer:
    """The lines of a newline-delimited JSON stream (Ollama's), blank ones dropped."""

    __slots__ = ("_lines",)

    def __init__(self, encoding: str = "utf-8") -> None:
        self._lines = SSELines(encoding)

    def feed(self, data: bytes) -> list[str]:
        return [line for line in self._lines.feed(data) if line.strip()]

    def close(self) -> list[str]:
        return [line for line in self._lines.close() if line.strip()]
