"""gemini.lua against generateContent (contents/parts, functionCall/functionResponse)."""

from __future__ import annotations

import hashlib
import json

import pytest
from google.genai import types as genai_types

from hologram.llm import (
    ChatMessage,
    CompletionRequest,
    ContextTooLong,
    FailureKind,
    ProviderError,
    ScriptedReply,
)
from hologram.sdk import ToolCall, ToolDef, ToolResult

from .golden import IMAGE, PYDANTIC_STYLE, body, collect, conversation, stream


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


async def test_gemini_tool_schemas_are_rewritten_into_the_apis_schema_subset(
    server, make_provider
) -> None:
    provider = make_provider("gemini", server.url + "/v1beta", model="gemini-2.5-flash")
    server.queue(body("gemini_text.json"))
    await provider.chat(CompletionRequest([ChatMessage.user("plan")], tools=[PYDANTIC_STYLE]))
    [declaration] = server.last_request.json["tools"][0]["functionDeclarations"]
    sent = declaration["parameters"]
    # The SDK's Schema forbids every key it does not know: $ref, $defs, const, oneOf...
    genai_types.Schema.model_validate(sent)
    place = {
        "type": "object",
        "title": "Place",
        "properties": {"city": {"type": "string"}, "kind": {"type": "string", "enum": ["city"]}},
        "required": ["city"],
    }
    properties = sent["properties"]
    assert properties["stops"] == {"type": "array", "items": place}
    assert properties["start"] == {**place, "description": "where it begins"}
    assert properties["note"] == {"type": "string", "nullable": True}
    assert properties["days"] == {"type": "integer", "nullable": True, "minimum": 1}
    assert properties["mode"]["anyOf"] == [
        {"type": "string", "enum": ["train"]},
        {"type": "string", "enum": ["car"]},
    ]
    # Gemini's enums are strings: integer choices stay integers, told in the description.
    assert properties["level"] == {"type": "integer", "description": "one of 1, 2, 3"}
    assert sent["required"] == ["stops"] and "$defs" not in sent


async def test_a_recursive_reference_is_cut_instead_of_looping(server, make_provider) -> None:
    tree = ToolDef(
        "walk",
        "Walk a tree",
        {
            "type": "object",
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                }
            },
            "properties": {"root": {"$ref": "#/$defs/Node"}},
        },
    )
    provider = make_provider("gemini", server.url + "/v1beta", model="gemini-2.5-flash")
    server.queue(body("gemini_text.json"))
    await provider.chat(CompletionRequest([ChatMessage.user("walk")], tools=[tree]))
    sent = server.last_request.json["tools"][0]["functionDeclarations"][0]["parameters"]
    genai_types.Schema.model_validate(sent)
    assert sent["properties"]["root"]["properties"]["kids"]["type"] == "array"


async def test_thought_signatures_and_gemini_ids_go_back_with_the_calls_they_came_with(
    server, make_provider
) -> None:
    """Gemini 3 refuses a tool loop whose function-call parts lost their thoughtSignature."""
    provider = make_provider("gemini", server.url + "/v1beta", model="gemini-3-pro")
    server.queue(ScriptedReply(tool_calls=[ToolCall("g-7", "get_weather", {"city": "Paris"})]))
    server.queue(ScriptedReply(tool_calls=[ToolCall("g-7", "get_weather", {"city": "Oslo"})]))
    server.queue(ScriptedReply(text="done"))
    ask = [ChatMessage.user("weather in Paris, then Oslo?")]
    first = await provider.chat(CompletionRequest(ask))
    [paris] = first.tool_calls
    conversation_so_far = [
        *ask,
        first.to_message(),
        ChatMessage.tool(ToolResult(paris.id, "get_weather", "sunny")),
    ]
    second = await provider.chat(CompletionRequest(conversation_so_far))
    [oslo] = second.tool_calls
    assert paris.id != oslo.id  # unique ids although Gemini gave both calls the same one
    await provider.chat(
        CompletionRequest(
            [
                *conversation_so_far,
                second.to_message(),
                ChatMessage.tool(ToolResult(oslo.id, "get_weather", "rain")),
            ]
        )
    )
    contents = server.last_request.json["contents"]
    calls = [p for c in contents for p in c["parts"] if "functionCall" in p]
    answers = [
        p["functionResponse"] for c in contents for p in c["parts"] if "functionResponse" in p
    ]
    assert [p["functionCall"]["id"] for p in calls] == ["g-7", "g-7"]
    assert [p["functionCall"]["args"] for p in calls] == [{"city": "Paris"}, {"city": "Oslo"}]
    # The scripted server signs each call (sha256 of its id); it comes back on the same part.
    signed = hashlib.sha256(b"g-7").hexdigest()[:24]
    assert [p["thoughtSignature"] for p in calls] == [signed, signed]
    assert [a["id"] for a in answers] == ["g-7", "g-7"]
    for content in contents:
        genai_types.Content.model_validate(content)


async def test_gemini_errors_are_read_from_the_google_rpc_details(server, make_provider) -> None:
    provider = make_provider("gemini", server.url + "/v1beta", model="gemini-2.5-flash")
    server.queue(
        ScriptedReply(error="rate_limited", retry_after=7),
        ScriptedReply(error="quota"),
        ScriptedReply(error="auth"),
        ScriptedReply(error="overloaded"),
    )
    hello = CompletionRequest([ChatMessage.user("hi")])
    found = []
    for _ in range(4):
        with pytest.raises(ProviderError) as caught:
            await provider.chat(hello)
        found.append((caught.value.kind, caught.value.retry_after))
    assert found == [
        (FailureKind.RATE_LIMITED, 7.0),  # RetryInfo's retryDelay "7s", not in a header
        (FailureKind.QUOTA, None),  # QuotaFailure names a daily quota
        (FailureKind.AUTH, None),  # a 400 whose ErrorInfo says API_KEY_INVALID
        (FailureKind.OVERLOADED, None),
    ]
    server.queue(ScriptedReply(error="context_length"))
    with pytest.raises(ContextTooLong):
        await provider.chat(hello)


async def test_an_error_inside_a_gemini_stream_is_classed_as_the_provider_said(
    server, make_provider
) -> None:
    provider = make_provider("gemini", server.url + "/v1beta", model="gemini-2.5-flash")
    server.queue(ScriptedReply(text="one two three", stream_error="overloaded", error_after=1))
    with pytest.raises(ProviderError) as caught:
        await collect(provider.chat_stream(CompletionRequest([ChatMessage.user("hi")])))
    assert caught.value.kind is FailureKind.OVERLOADED


async def test_a_signed_text_answer_signs_its_text_when_it_goes_back(server, make_provider) -> None:
    provider = make_provider("gemini", server.url + "/v1beta", model="gemini-3-pro")
    # Streamed as Gemini 3 does: the signature on an empty text part of the last chunk.
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello"}]}}]},
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"text": "", "thoughtSignature": "c2ln"}],
                    },
                    "finishReason": "STOP",
                }
            ]
        },
    ]
    for chunk in chunks:
        genai_types.GenerateContentResponse.model_validate(chunk)
    lines = [line for chunk in chunks for line in (f"data: {json.dumps(chunk)}", "")]
    server.queue(ScriptedReply(lines=lines, content_type="text/event-stream"))
    server.queue(body("gemini_text.json"))
    ask = [ChatMessage.user("hi")]
    answer = (await collect(provider.chat_stream(CompletionRequest(ask))))[-1].response
    assert answer is not None and answer.content == "Hello"
    await provider.chat(CompletionRequest([*ask, answer.to_message(), ChatMessage.user("and?")]))
    model_turn = server.last_request.json["contents"][1]
    assert model_turn == {"role": "model", "parts": [{"text": "Hello", "thoughtSignature": "c2ln"}]}
