"""openai.lua against the Chat Completions wire format, over real HTTP."""

from __future__ import annotations

import json

from hologram.llm import ScriptedModelServer

from .golden import IMAGE, body, collect, conversation, stream


async def test_openai_request_matches_the_chat_completions_format(
    server: ScriptedModelServer, make_provider
) -> None:
    provider = make_provider("openai", server.base_url)
    server.queue(body("openai_text.json"))
    await provider.chat(conversation())

    sent = server.last_request
    assert sent.method == "POST" and sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.headers["content-type"] == "application/json"
    wire = sent.json
    assert wire["model"] == "test-model"
    assert wire["temperature"] == 0.3 and wire["max_completion_tokens"] == 512
    assert wire["stream"] is False and "stream_options" not in wire
    system, user, assistant, tool, follow_up = wire["messages"]
    assert system == {"role": "system", "content": "You are Holo."}
    assert user == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture, and the weather in Paris?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{IMAGE}"}},
        ],
    }
    assert assistant["role"] == "assistant" and assistant["content"] == "Let me check."
    [call] = assistant["tool_calls"]
    assert call["id"] == "call_1" and call["type"] == "function"
    assert call["function"]["name"] == "get_weather"
    assert isinstance(call["function"]["arguments"], str)  # the API takes JSON text
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert tool == {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21°C"}
    assert follow_up == {"role": "user", "content": "谢谢！明天呢？"}
    assert wire["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "city name"}},
                    "required": ["city"],
                    "additionalProperties": False,
                },
            },
        }
    ]


async def test_openai_text_response_becomes_the_unified_response(server, make_provider) -> None:
    provider = make_provider("openai", server.base_url)
    server.queue(body("openai_text.json"))
    response = await provider.chat(conversation())
    assert response.content == "Hello there, how may I assist you today? 你好！"
    assert response.finish_reason == "stop" and response.tool_calls == []
    assert (
        response.token_usage.prompt_tokens,
        response.token_usage.completion_tokens,
        response.token_usage.total_tokens,
    ) == (9, 12, 21)
    assert response.model == "gpt-4o-mini" and response.source == "openai-source"


async def test_openai_tool_call_response_decodes_the_arguments(server, make_provider) -> None:
    provider = make_provider("openai", server.base_url)
    server.queue(body("openai_tool_call.json"))
    response = await provider.chat(conversation())
    assert response.content == ""
    assert response.finish_reason == "tool_calls"
    [call] = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_abc123", "get_weather", {"city": "Paris"})
    assert response.token_usage.total_tokens == 99


async def test_openai_stream_yields_text_and_assembles_tool_call_fragments(
    server, make_provider
) -> None:
    provider = make_provider("openai", server.base_url)
    server.queue(stream("openai_stream.sse"))
    chunks = await collect(provider.chat_stream(conversation()))

    wire = server.last_request.json
    assert wire["stream"] is True and wire["stream_options"] == {"include_usage": True}
    assert [c.content for c in chunks if c.content] == ["Let me", " check."]
    final = chunks[-1]
    assert final.done and final.response is not None
    assert final.response.content == "Let me check."
    assert [(c.id, c.name, c.arguments) for c in final.response.tool_calls] == [
        ("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", {"city": "巴黎"}),
        ("call_2", "get_time", {}),
    ]
    assert final.response.finish_reason == "tool_calls"
    assert final.response.token_usage.total_tokens == 51
