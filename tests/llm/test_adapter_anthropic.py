"""anthropic.lua against the Messages API (system apart, tool_use / tool_result, SSE events)."""

from __future__ import annotations

from .golden import IMAGE, WEATHER, body, collect, conversation, stream


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
    assert wire["max_tokens"] == 512 and wire["temperature"] == 0.3
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
