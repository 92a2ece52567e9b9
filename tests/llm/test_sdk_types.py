"""Every adapter's request, for the golden conversation, plain, streamed and thinking, is a
body the official SDK's request type accepts key by key; every fixture answer is one the
SDK's response type reads. A wire mismatch fails here instead of in a user's turn."""

from __future__ import annotations

import json

import anthropic.types
import ollama
import openai.types.chat
import openai.types.responses
import pytest
from google.genai import types as genai_types

from hologram.llm import ChatMessage, CompletionRequest

from .golden import FIXTURES, PYDANTIC_STYLE, body, collect, conversation
from .sdk_types import check_request, problems, request_problems

# adapter -> (request type, base path, keys the API adds to the format it borrows)
ADAPTERS = {
    "openai": ("openai", "/v1", ()),
    "deepseek": ("openai", "", ("thinking",)),
    "anthropic": ("anthropic", "", ()),
    "gemini": ("gemini", "/v1beta", ()),
    "ollama": ("ollama", "", ()),
}
FIXTURE_OF = {
    "openai": "openai_text.json",
    "deepseek": "deepseek_reasoning.json",
    "anthropic": "anthropic_text.json",
    "gemini": "gemini_text.json",
    "ollama": "ollama_text.json",
}


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
@pytest.mark.parametrize("variant", ["plain", "thinking", "stream"])
async def test_each_adapters_request_is_a_body_the_sdks_request_type_accepts(
    server, make_provider, adapter: str, variant: str
) -> None:
    kind, base, extensions = ADAPTERS[adapter]
    provider = make_provider(adapter, server.url + base, model="gemini-2.5-flash")
    request = conversation(thinking=variant == "thinking")
    request.tools.append(PYDANTIC_STYLE)
    if variant == "stream":
        server.queue(body(FIXTURE_OF[adapter]))  # a whole body answers a stream too
        await collect(provider.chat_stream(request))
    else:
        server.queue(body(FIXTURE_OF[adapter]))
        await provider.chat(request)
    check_request(kind, server.last_request.json, *extensions)


def test_the_check_finds_a_key_the_format_does_not_have() -> None:
    """The check itself: a key of another format, deep inside, is named with its path."""
    wrong = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "images": []}]}],
    }
    assert request_problems("anthropic", wrong) == [
        "$.messages[0].content[0].images: not a field of TextBlockParam"
    ]
    assert request_problems("gemini", {"contents": [], "model": "x"}) == [
        "$.model: not a generateContent field"
    ]
    missing = {"messages": [{"role": "user", "content": "hi"}]}
    assert any("needs 'model'" in p for p in request_problems("openai", missing))
    assert problems(
        {"role": "user", "content": 3}, openai.types.chat.ChatCompletionUserMessageParam
    )


RESPONSE_TYPES = {
    "openai_text.json": openai.types.chat.ChatCompletion,
    "openai_tool_call.json": openai.types.chat.ChatCompletion,
    "deepseek_reasoning.json": openai.types.chat.ChatCompletion,
    "anthropic_text.json": anthropic.types.Message,
    "anthropic_tool_use.json": anthropic.types.Message,
    "gemini_text.json": genai_types.GenerateContentResponse,
    "gemini_function_call.json": genai_types.GenerateContentResponse,
    "ollama_text.json": ollama.ChatResponse,
    "ollama_tool_call.json": ollama.ChatResponse,
    "openai_responses_function_call.json": openai.types.responses.Response,
}
STREAM_TYPES = {
    "openai_stream.sse": openai.types.chat.ChatCompletionChunk,
    "deepseek_stream.sse": openai.types.chat.ChatCompletionChunk,
    "anthropic_stream.sse": anthropic.types.RawMessageStreamEvent,
    "gemini_stream.sse": genai_types.GenerateContentResponse,
    "ollama_stream.ndjson": ollama.ChatResponse,
}


def test_every_fixture_is_covered() -> None:
    on_disk = {p.name for p in FIXTURES.iterdir() if p.is_file()}
    assert on_disk == set(RESPONSE_TYPES) | set(STREAM_TYPES)


@pytest.mark.parametrize("name", sorted(RESPONSE_TYPES))
def test_every_fixture_answer_is_read_by_the_sdks_response_type(name: str) -> None:
    import pydantic

    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    pydantic.TypeAdapter(RESPONSE_TYPES[name]).validate_python(data)


@pytest.mark.parametrize("name", sorted(STREAM_TYPES))
def test_every_fixture_stream_event_is_read_by_the_sdks_event_type(name: str) -> None:
    import pydantic

    reader = pydantic.TypeAdapter(STREAM_TYPES[name])
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    payloads = [
        line.removeprefix("data:").strip()
        for line in lines
        if (line.startswith("data:") or name.endswith(".ndjson")) and line.strip()
    ]
    # ping is a keep-alive the SDK skips before reading events
    events = [json.loads(p) for p in payloads if p != "[DONE]" and '"ping"' not in p]
    assert events
    for event in events:
        reader.validate_python(event)


async def test_an_assistant_turn_with_only_tool_calls_is_valid_in_every_format(
    server, make_provider
) -> None:
    from hologram.sdk import ToolCall, ToolResult

    call = ToolCall("call_9", "get_weather", {"city": "Oslo"})
    request = CompletionRequest(
        [
            ChatMessage.user("weather?"),
            ChatMessage.assistant("", [call]),
            ChatMessage.tool(ToolResult("call_9", "get_weather", "rain", is_error=True)),
        ]
    )
    for adapter, (kind, base, extensions) in sorted(ADAPTERS.items()):
        provider = make_provider(adapter, server.url + base, model="gemini-2.5-flash")
        server.queue(body(FIXTURE_OF[adapter]))
        await provider.chat(request)
        check_request(kind, server.last_request.json, *extensions)
