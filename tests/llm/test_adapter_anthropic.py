"""anthropic.lua against the Messages API (system apart, tool_use / tool_result, SSE events)."""

from __future__ import annotations

import hashlib
import json

import anthropic
import pytest

from hologram.llm import (
    ChatMessage,
    CompletionRequest,
    CompletionResponse,
    ContextTooLong,
    FailureKind,
    ProviderError,
    ScriptedReply,
)
from hologram.sdk import ToolCall, ToolResult

from .golden import IMAGE, WEATHER, body, collect, conversation, stream
from .sdk_types import check_request

PARIS = ToolCall("call_p", "get_weather", {"city": "Paris"})


async def test_anthropic_request_matches_the_messages_api(server, make_provider) -> None:
    provider = make_provider("anthropic", server.url)
    server.queue(body("anthropic_text.json"))
    await provider.chat(conversation())

    sent = server.last_request
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    wire = sent.json
    assert wire["model"] == "test-model"
    assert wire["max_tokens"] == 512
    assert "temperature" not in wire  # the Messages API's request type has no sampling knobs
    assert wire["system"] == "You are Holo."
    assert "stream" not in wire and "thinking" not in wire
    assert wire["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture, and the weather in Paris?"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": IMAGE},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
            ],
        },
        {
            # The tool result and the user's next words make one user turn.
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "sunny, 21°C"},
                {"type": "text", "text": "谢谢！明天呢？"},
            ],
        },
    ]
    assert wire["tools"] == [
        {
            "name": WEATHER.name,
            "description": WEATHER.description,
            "input_schema": WEATHER.parameters,
        }
    ]


async def test_anthropic_requires_max_tokens_and_budgets_thinking(server, make_provider) -> None:
    provider = make_provider("anthropic", server.url)
    server.queue(body("anthropic_text.json"))
    request = conversation(thinking=True)
    request.max_tokens = None
    await provider.chat(request)
    wire = server.last_request.json
    assert wire["max_tokens"] == 4096
    assert wire["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in wire  # the API refuses a temperature beside thinking


async def test_anthropic_content_blocks_become_text_reasoning_and_calls(
    server, make_provider
) -> None:
    provider = make_provider("anthropic", server.url)
    server.queue(body("anthropic_tool_use.json"), body("anthropic_text.json"))
    response = await provider.chat(conversation())
    assert response.content == "I'll check the weather in Paris."
    assert response.reasoning_content == "The user asks about Paris weather."
    assert response.finish_reason == "tool_calls"
    [call] = response.tool_calls
    assert (call.id, call.name, call.arguments) == (
        "toolu_01A09q90qw90lq917835lq9",
        "get_weather",
        {"city": "Paris"},
    )
    assert (
        response.token_usage.prompt_tokens,
        response.token_usage.completion_tokens,
        response.token_usage.total_tokens,
    ) == (472, 91, 563)
    text = await provider.chat(conversation())
    assert text.content == "Hi! My name is Claude." and text.finish_reason == "stop"


async def test_anthropic_sse_events_assemble_text_and_tool_input(server, make_provider) -> None:
    provider = make_provider("anthropic", server.url)
    server.queue(stream("anthropic_stream.sse"))
    chunks = await collect(provider.chat_stream(conversation()))
    assert server.last_request.json["stream"] is True
    assert [c.content for c in chunks if c.content] == ["Okay, let", "'s check."]
    final = chunks[-1].response
    assert final is not None
    assert final.content == "Okay, let's check."
    [call] = final.tool_calls
    assert (call.id, call.name, call.arguments) == (
        "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        "get_weather",
        {"city": "San Francisco, CA"},
    )
    assert final.finish_reason == "tool_calls"
    # Input tokens come with message_start, output tokens with message_delta.
    assert (final.token_usage.prompt_tokens, final.token_usage.completion_tokens) == (472, 89)


THINKING = ScriptedReply(text="Checking.", reasoning="Paris, so Celsius.", tool_calls=[PARIS])


def answered(first: CompletionResponse) -> CompletionRequest:
    [call] = first.tool_calls
    return CompletionRequest(
        [
            ChatMessage.user("weather?"),
            first.to_message(),
            ChatMessage.tool(ToolResult(call.id, call.name, "sunny")),
        ],
        thinking=True,
    )


@pytest.mark.parametrize("streamed", [False, True])
async def test_thinking_blocks_go_back_first_with_their_signatures(
    server, make_provider, streamed: bool
) -> None:
    """With thinking on, the API refuses a tool loop whose assistant turn lost its thinking."""
    provider = make_provider("anthropic", server.url)
    server.queue(THINKING, ScriptedReply(text="Sunny."))
    ask = CompletionRequest([ChatMessage.user("weather?")], thinking=True)
    if streamed:
        chunks = await collect(provider.chat_stream(ask))
        first = chunks[-1].response
        assert first is not None
    else:
        first = await provider.chat(ask)
    await provider.chat(answered(first))
    wire = server.last_request.json
    check_request("anthropic", wire)
    thinking, text, tool_use = wire["messages"][1]["content"]
    signature = hashlib.sha256(b"Paris, so Celsius.").hexdigest()[:32]
    assert thinking == {
        "type": "thinking",
        "thinking": "Paris, so Celsius.",
        "signature": signature,
    }
    assert text == {"type": "text", "text": "Checking."} and tool_use["id"] == "call_p"
    assert "temperature" not in wire  # thinking takes none


async def test_redacted_thinking_goes_back_as_it_came(server, make_provider) -> None:
    provider = make_provider("anthropic", server.url)
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    anthropic.types.Message.model_validate(message)
    server.queue(ScriptedReply(body=json.dumps(message)), ScriptedReply(text="Sunny."))
    first = await provider.chat(CompletionRequest([ChatMessage.user("weather?")], thinking=True))
    await provider.chat(answered(first))
    redacted, tool_use = server.last_request.json["messages"][1]["content"]
    assert redacted == {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
    assert tool_use["type"] == "tool_use"


async def test_an_empty_turn_is_left_out_rather_than_sent_as_no_content(
    server, make_provider
) -> None:
    provider = make_provider("anthropic", server.url)
    server.queue(ScriptedReply(text="ok"))
    await provider.chat(
        CompletionRequest(
            [ChatMessage.user("one"), ChatMessage.assistant(""), ChatMessage.user("two")]
        )
    )
    wire = server.last_request.json
    check_request("anthropic", wire)
    assert wire["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        }
    ]


async def test_a_paused_turn_and_cached_tokens_are_read(server, make_provider) -> None:
    provider = make_provider("anthropic", server.url)
    server.queue(ScriptedReply(text="So far.", finish_reason="pause_turn", cached_tokens=1))
    answer = await provider.chat(CompletionRequest([ChatMessage.user("search")]))
    assert answer.finish_reason == "length"  # cut short: not a raw "pause_turn"
    usage = answer.token_usage
    # input_tokens leaves the cache out; the prompt is both
    assert usage.cached_tokens == 1 and usage.prompt_tokens > 1


async def test_anthropic_errors_are_classed_by_type_and_words(server, make_provider) -> None:
    provider = make_provider("anthropic", server.url)
    server.queue(
        ScriptedReply(error="rate_limited", retry_after=3),
        ScriptedReply(error="quota"),
        ScriptedReply(error="overloaded"),
        ScriptedReply(error="auth"),
        ScriptedReply(text="half of it", stream_error="overloaded", error_after=1),
    )
    hello = CompletionRequest([ChatMessage.user("hi")])
    found = []
    for _ in range(4):
        with pytest.raises(ProviderError) as caught:
            await provider.chat(hello)
        found.append((caught.value.kind, caught.value.retry_after))
    with pytest.raises(ProviderError) as mid_stream:
        await collect(provider.chat_stream(hello))
    assert found == [
        (FailureKind.RATE_LIMITED, 3.0),
        (FailureKind.QUOTA, None),  # a 400 whose words say the credit is spent
        (FailureKind.OVERLOADED, None),
        (FailureKind.AUTH, None),
    ]
    assert mid_stream.value.kind is FailureKind.OVERLOADED  # not a response misread
    server.queue(ScriptedReply(error="context_length"))
    with pytest.raises(ContextTooLong):
        await provider.chat(hello)
