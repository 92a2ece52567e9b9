"""ollama.lua against Ollama's /api/chat (images inline, arguments as objects, NDJSON)."""

from __future__ import annotations

import pytest

from hologram.llm import (
    ChatMessage,
    CompletionRequest,
    FailureKind,
    ProviderError,
    ScriptedReply,
)
from hologram.sdk import ToolCall, ToolResult

from .golden import IMAGE, WEATHER, body, collect, conversation, stream
from .sdk_types import check_request


async def test_ollama_request_matches_the_api_chat_format(server, make_provider) -> None:
    provider = make_provider("ollama", server.url, api_key="")
    server.queue(body("ollama_text.json"))
    await provider.chat(conversation())

    sent = server.last_request
    assert sent.path == "/api/chat"
    assert "authorization" not in sent.headers  # a local Ollama has no key
    wire = sent.json
    assert wire["model"] == "test-model"
    assert wire["stream"] is False  # Ollama streams unless told not to
    # test-model has no known window: the conservative one the kernel plans for is asked for.
    assert wire["options"] == {"temperature": 0.3, "num_predict": 512, "num_ctx": 16384}
    assert "think" not in wire
    system, user, assistant, tool, follow_up = wire["messages"]
    assert system == {"role": "system", "content": "You are Holo."}
    assert user == {
        "role": "user",
        "content": "What is in this picture, and the weather in Paris?",
        "images": [IMAGE],
    }
    assert assistant == {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
    }
    assert tool == {"role": "tool", "content": "sunny, 21°C", "tool_name": "get_weather"}
    assert follow_up == {"role": "user", "content": "谢谢！明天呢？"}
    assert wire["tools"] == [
        {
            "type": "function",
            "function": {
                "name": WEATHER.name,
                "description": WEATHER.description,
                "parameters": WEATHER.parameters,
            },
        }
    ]


async def test_ollama_responses_become_unified(server, make_provider) -> None:
    provider = make_provider("ollama", server.url)
    server.queue(body("ollama_text.json"), body("ollama_tool_call.json"))
    text = await provider.chat(conversation())
    assert text.content == "Hello! How are you today?" and text.finish_reason == "stop"
    assert (text.token_usage.prompt_tokens, text.token_usage.completion_tokens) == (26, 298)
    call = await provider.chat(conversation(thinking=True))
    assert server.last_request.json["think"] is True
    assert call.reasoning_content == "The user wants the weather; call the tool."
    assert call.finish_reason == "tool_calls"
    [tool_call] = call.tool_calls
    assert tool_call.name == "get_weather"
    assert tool_call.arguments == {"city": "Paris", "format": "celsius"}
    assert tool_call.id  # Ollama sends no id; one is made up so results can refer to it


async def test_ollama_ndjson_stream_is_read_line_by_line(server, make_provider) -> None:
    provider = make_provider("ollama", server.url)
    server.queue(stream("ollama_stream.ndjson"))
    chunks = await collect(provider.chat_stream(conversation()))
    assert server.last_request.json["stream"] is True
    assert [c.content for c in chunks if c.content] == ["The", " sky is"]
    final = chunks[-1].response
    assert final is not None
    assert final.content == "The sky is"
    assert [(c.name, c.arguments) for c in final.tool_calls] == [("get_weather", {"city": "Paris"})]
    # The last line says "stop"; a call came whole before it, so the turn ends in tool calls.
    assert final.finish_reason == "tool_calls"
    assert (final.token_usage.prompt_tokens, final.token_usage.completion_tokens) == (26, 282)


async def test_ollama_is_asked_for_the_window_the_kernel_plans_the_prompt_for(
    server, make_provider
) -> None:
    """Ollama's default num_ctx (2048 to 4096) would cut a longer prompt from the front."""
    declared = make_provider("ollama", server.url, api_key="", context_window=65536)
    known = make_provider("ollama", server.url, api_key="", model="llama3.2")
    server.queue(body("ollama_text.json"), body("ollama_text.json"))
    hello = CompletionRequest([ChatMessage.user("hi")])
    await declared.chat(hello)
    assert server.last_request.json["options"] == {"num_ctx": 65536}
    await known.chat(hello)
    assert server.last_request.json["options"] == {"num_ctx": known.max_context_tokens}
    assert known.max_context_tokens == 131072


async def test_ollama_gets_the_thinking_back_and_a_stream_error_is_the_servers(
    server, make_provider
) -> None:
    provider = make_provider("ollama", server.url, api_key="", model="qwen3")
    server.queue(ScriptedReply(reasoning="hmm, Paris", tool_calls=[ToolCall("c1", "get_weather", {"city": "Paris"})]))  # fmt: skip
    server.queue(ScriptedReply(text="sunny"))
    ask = CompletionRequest([ChatMessage.user("weather?")], thinking=True)
    first = await provider.chat(ask)
    result = ChatMessage.tool(ToolResult(first.tool_calls[0].id, "get_weather", "sunny"))
    await provider.chat(CompletionRequest([*ask.messages, first.to_message(), result]))
    wire = server.last_request.json
    check_request("ollama", wire)
    assert wire["messages"][1]["thinking"] == "hmm, Paris"
    server.queue(ScriptedReply(text="one two three", stream_error="server", error_after=1))
    with pytest.raises(ProviderError) as caught:
        await collect(provider.chat_stream(ask))
    assert caught.value.kind is FailureKind.SERVER
