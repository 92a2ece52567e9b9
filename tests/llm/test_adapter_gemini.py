"""gemini.lua against generateContent (contents/parts, functionCall/functionResponse)."""

from __future__ import annotations

from .golden import IMAGE, body, collect, conversation, stream


async def test_gemini_request_matches_generate_content(server, make_provider) -> None:
    provider = make_provider("gemini", server.url + "/v1beta", model="gemini-2.0-flash")
    server.queue(body("gemini_text.json"))
    await provider.chat(conversation())

    sent = server.last_request
    assert sent.path == "/v1beta/models/gemini-2.0-flash:generateContent"
    assert sent.headers["x-goog-api-key"] == "sk-test"
    assert "authorization" not in sent.headers
    wire = sent.json
    assert "model" not in wire  # the model is in the URL
    assert wire["systemInstruction"] == {"parts": [{"text": "You are Holo."}]}
    assert wire["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "What is in this picture, and the weather in Paris?"},
                {"inlineData": {"mimeType": "image/png", "data": IMAGE}},
            ],
        },
        {
            "role": "model",
            "parts": [
                {"text": "Let me check."},
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"result": "sunny, 21°C"},
                    }
                },
                {"text": "谢谢！明天呢？"},
            ],
        },
    ]
    # Gemini's Schema is an OpenAPI subset: additionalProperties is left out.
    assert wire["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Current weather for a city",
                    "parameters": {
                        "type": "object",
                        "properties": {"city": {"type": "string", "description": "city name"}},
                        "required": ["city"],
                    },
                }
            ]
        }
    ]
    assert wire["generationConfig"] == {"temperature": 0.3, "maxOutputTokens": 512}


async def test_gemini_function_call_and_thoughts_become_unified(server, make_provider) -> None:
    provider = make_provider("gemini", server.url + "/v1beta", model="gemini-2.5-flash")
    server.queue(body("gemini_function_call.json"), body("gemini_text.json"))
    call = await provider.chat(conversation())
    assert call.finish_reason == "tool_calls"
    [tool_call] = call.tool_calls
    assert (tool_call.name, tool_call.arguments) == ("get_weather", {"city": "Paris"})
    assert call.token_usage.total_tokens == 59
    text = await provider.chat(conversation(thinking=True))
    assert server.last_request.json["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True
    }
    assert text.content == "你好！今天巴黎天气晴朗。"
    assert text.reasoning_content == "The user greets me in Chinese."
    assert text.token_usage.reasoning_tokens == 25 and text.finish_reason == "stop"


async def test_gemini_streams_over_sse_with_whole_function_calls(server, make_provider) -> None:
    provider = make_provider("gemini", server.url + "/v1beta", model="gemini-2.0-flash")
    server.queue(stream("gemini_stream.sse"))
    chunks = await collect(provider.chat_stream(conversation()))
    sent = server.last_request
    assert sent.path == "/v1beta/models/gemini-2.0-flash:streamGenerateContent"
    assert sent.query == "alt=sse"
    assert [c.content for c in chunks if c.content] == ["Paris is", " sunny."]
    final = chunks[-1].response
    assert final is not None and final.content == "Paris is sunny."
    assert [(c.name, c.arguments) for c in final.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert final.finish_reason == "tool_calls"
    assert final.token_usage.total_tokens == 23
