"""deepseek.lua: OpenAI-shaped, with the thinking switch (off by default) and reasoning."""

from __future__ import annotations

import pytest

from hologram.llm import (
    ChatMessage,
    CompletionRequest,
    ContextTooLong,
    FailureKind,
    ProviderError,
    ScriptedReply,
)
from hologram.sdk import ToolCall

from .golden import body, collect, conversation, stream


async def test_deepseek_turns_thinking_off_unless_the_request_asks(server, make_provider) -> None:
    provider = make_provider("deepseek", server.base_url)
    server.queue(body("deepseek_reasoning.json"), body("deepseek_reasoning.json"))
    await provider.chat(conversation())
    off = server.requests[-1].json
    await provider.chat(conversation(thinking=True))
    on = server.requests[-1].json
    assert off["thinking"] == {"type": "disabled"}
    assert on["thinking"] == {"type": "enabled"}
    assert server.last_request.path == "/v1/chat/completions"
    assert server.last_request.headers["authorization"] == "Bearer sk-test"
    assert off["messages"][-1] == {"role": "user", "content": "谢谢！明天呢？"}
    assert off["max_tokens"] == 512 and off["temperature"] == 0.3


async def test_deepseek_passes_reasoning_back_on_assistant_turns(server, make_provider) -> None:
    """In thinking mode with tools the API requires the earlier reasoning_content back."""
    provider = make_provider("deepseek", server.base_url)
    server.queue(body("deepseek_reasoning.json"))
    request = CompletionRequest(
        [
            ChatMessage.user("weather?"),
            ChatMessage.assistant(
                "",
                [ToolCall("c1", "get_weather", {"city": "Paris"})],
                reasoning_content="I should call the tool.",
            ),
        ],
        thinking=True,
    )
    await provider.chat(request)
    assistant = server.last_request.json["messages"][1]
    assert assistant["reasoning_content"] == "I should call the tool."
    assert assistant["content"] is None  # null beside tool calls, as the API documents


async def test_deepseek_reasoning_content_reaches_the_unified_response(
    server, make_provider
) -> None:
    provider = make_provider("deepseek", server.base_url)
    server.queue(body("deepseek_reasoning.json"))
    response = await provider.chat(conversation(thinking=True))
    assert response.content == "9.11 is smaller than 9.8."
    assert response.reasoning_content.startswith("Compare the tenths")
    assert response.token_usage.reasoning_tokens == 48
    assert response.token_usage.total_tokens == 77


async def test_deepseek_stream_separates_reasoning_from_content(server, make_provider) -> None:
    provider = make_provider("deepseek", server.base_url)
    server.queue(stream("deepseek_stream.sse"))
    chunks = await collect(provider.chat_stream(conversation(thinking=True)))
    assert [c.reasoning_content for c in chunks if c.reasoning_content] == ["Compare the tenths."]
    assert [c.content for c in chunks if c.content] == ["9.8 is larger."]
    final = chunks[-1].response
    assert final is not None and final.finish_reason == "stop"
    assert final.token_usage.reasoning_tokens == 5


async def test_deepseek_errors_are_classed_inside_a_stream_too(server, make_provider) -> None:
    provider = make_provider("deepseek", server.url)
    server.queue(
        ScriptedReply(text="one two three", stream_error="overloaded", error_after=1),
        ScriptedReply(error="context_length"),
    )
    hello = CompletionRequest([ChatMessage.user("hi")])
    with pytest.raises(ProviderError) as mid_stream:
        await collect(provider.chat_stream(hello))
    assert mid_stream.value.kind is FailureKind.OVERLOADED  # not a response misread
    with pytest.raises(ContextTooLong):
        await provider.chat(hello)
