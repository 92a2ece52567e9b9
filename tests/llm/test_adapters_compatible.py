"""The adapters that reach the spec's ten: OpenAI's Responses API, Azure OpenAI, OpenRouter,
Qwen (DashScope's compatible mode) and Moonshot's Kimi. Each one's request is checked against
the official SDK's request type, and each reads the scripted server's answers: text with
reasoning and usage, tool calls whole and streamed, and the provider's errors."""

from __future__ import annotations

import hashlib
import json

import pytest

from hologram.llm import (
    ChatMessage,
    CompletionRequest,
    ContextTooLong,
    FailureKind,
    ProviderError,
    ScriptedReply,
)
from hologram.sdk import ToolCall, ToolResult

from .golden import PYDANTIC_STYLE, body, collect, conversation
from .sdk_types import check_request

WEATHER_CALL = ToolCall("call_w1", "get_weather", {"city": "巴黎"})

# adapter -> (base path, the path it posts to, request type, auth header, keys it adds)
COMPATIBLE = {
    "openai_responses": ("/v1", "/v1/responses", "responses", "authorization", ()),
    "azure_openai": (
        "",
        "/openai/deployments/test-model/chat/completions",
        "openai",
        "api-key",
        (),
    ),
    "openrouter": (
        "/api/v1",
        "/api/v1/chat/completions",
        "openai",
        "authorization",
        ("reasoning",),
    ),
    "qwen": (
        "/compatible-mode/v1",
        "/compatible-mode/v1/chat/completions",
        "openai",
        "authorization",
        ("enable_thinking",),
    ),
    "moonshot": ("/v1", "/v1/chat/completions", "openai", "authorization", ()),
}


def provider_for(make_provider, server, adapter: str):
    return make_provider(adapter, server.url + COMPATIBLE[adapter][0])


@pytest.mark.parametrize("adapter", sorted(COMPATIBLE))
@pytest.mark.parametrize("thinking", [False, True])
async def test_each_request_goes_to_the_services_path_in_its_sdks_type(
    server, make_provider, adapter: str, thinking: bool
) -> None:
    _, path, kind, auth, extensions = COMPATIBLE[adapter]
    provider = provider_for(make_provider, server, adapter)
    server.queue(ScriptedReply(text="ok"), ScriptedReply(text="ok"))
    request = conversation(thinking=thinking)
    request.tools.append(PYDANTIC_STYLE)
    await provider.chat(request)
    sent = server.last_request
    assert sent.path == path
    assert sent.headers[auth] in ("sk-test", "Bearer sk-test")
    check_request(kind, sent.json, *extensions)
    await collect(provider.chat_stream(request))
    check_request(kind, server.last_request.json, *extensions)
    assert server.last_request.json["stream"] is True


@pytest.mark.parametrize("adapter", sorted(COMPATIBLE))
async def test_each_reads_text_reasoning_usage_and_tool_calls_whole_and_streamed(
    server, make_provider, adapter: str
) -> None:
    provider = provider_for(make_provider, server, adapter)
    server.queue(
        ScriptedReply(text="Sunny.", reasoning="Look it up.", cached_tokens=2, reasoning_tokens=3),
        ScriptedReply(text="Let me look.", tool_calls=[WEATHER_CALL]),
        ScriptedReply(text="Let me look.", tool_calls=[WEATHER_CALL]),
    )
    ask = CompletionRequest([ChatMessage.user("weather?")])
    text = await provider.chat(ask)
    assert text.content == "Sunny." and text.finish_reason == "stop"
    assert text.reasoning_content == "Look it up."
    usage = text.token_usage
    assert usage.cached_tokens == 2 and usage.reasoning_tokens == 3 and usage.prompt_tokens > 0
    call = await provider.chat(ask)
    assert [(c.id, c.name, c.arguments) for c in call.tool_calls] == [
        ("call_w1", "get_weather", {"city": "巴黎"})
    ]
    assert call.finish_reason == "tool_calls"
    chunks = await collect(provider.chat_stream(ask))
    final = chunks[-1].response
    assert final is not None and final.content == "Let me look."
    assert len([c for c in chunks if c.content]) >= 2  # piece by piece
    assert [(c.name, c.arguments) for c in final.tool_calls] == [("get_weather", {"city": "巴黎"})]
    assert final.finish_reason == "tool_calls"
    # and the loop goes on: the call and its result go back in the format
    server.queue(ScriptedReply(text="It is sunny."))
    answer = await provider.chat(
        CompletionRequest(
            [
                *ask.messages,
                final.to_message(),
                ChatMessage.tool(ToolResult("call_w1", "get_weather", "sunny")),
            ]
        )
    )
    assert answer.content == "It is sunny."
    kind, extensions = COMPATIBLE[adapter][2], COMPATIBLE[adapter][4]
    check_request(kind, server.last_request.json, *extensions)


@pytest.mark.parametrize("adapter", sorted(COMPATIBLE))
async def test_each_classes_the_providers_errors(server, make_provider, adapter: str) -> None:
    provider = provider_for(make_provider, server, adapter)
    server.queue(
        ScriptedReply(error="rate_limited", retry_after=2),
        ScriptedReply(error="quota"),
        ScriptedReply(error="auth"),
        ScriptedReply(text="one two three", stream_error="server", error_after=1),
        ScriptedReply(error="context_length"),
    )
    hello = CompletionRequest([ChatMessage.user("hi")])
    found = []
    for _ in range(3):
        with pytest.raises(ProviderError) as caught:
            await provider.chat(hello)
        found.append((caught.value.kind, caught.value.retry_after))
    assert found == [
        (FailureKind.RATE_LIMITED, 2.0),
        (FailureKind.QUOTA, None),
        (FailureKind.AUTH, None),
    ]
    with pytest.raises(ProviderError) as mid_stream:
        await collect(provider.chat_stream(hello))
    assert mid_stream.value.kind is FailureKind.SERVER  # the provider's, not a misread body
    with pytest.raises(ContextTooLong):
        await provider.chat(hello)


@pytest.mark.parametrize(
    ("adapter", "error", "kind"),
    [
        ("openrouter", {"code": 402, "message": "Insufficient credits"}, FailureKind.QUOTA),
        ("openrouter", {"code": 502, "message": "upstream down"}, FailureKind.OVERLOADED),
        (
            "qwen",
            {"code": "Arrearage", "message": "Access denied, account is in arrears"},
            FailureKind.QUOTA,
        ),
        (
            "qwen",
            {
                "code": "invalid_parameter_error",
                "message": "Range of input length should be [1, 129024]",
            },
            FailureKind.CONTEXT_LENGTH,
        ),
        (
            "moonshot",
            {"type": "exceeded_current_quota_error", "message": "quota"},
            FailureKind.QUOTA,
        ),
        (
            "moonshot",
            {"type": "engine_overloaded_error", "message": "busy"},
            FailureKind.OVERLOADED,
        ),
        (
            "moonshot",
            {
                "type": "invalid_request_error",
                "message": "Invalid request: Your request exceeded model token limit: 8192",
            },
            FailureKind.CONTEXT_LENGTH,
        ),
        ("azure_openai", {"code": "content_filter", "message": "filtered"}, FailureKind.REJECTED),
    ],
)
async def test_each_services_own_error_words_are_read(
    server, make_provider, adapter: str, error: dict, kind: FailureKind
) -> None:
    provider = provider_for(make_provider, server, adapter)
    server.queue(ScriptedReply(status=400, body=json.dumps({"error": error})))
    with pytest.raises(ProviderError) as caught:
        await provider.chat(CompletionRequest([ChatMessage.user("hi")]))
    assert caught.value.kind is kind


async def test_the_library_ships_the_ten_adapters(library) -> None:
    assert set(library.names()) >= {
        "openai",
        "deepseek",
        "anthropic",
        "gemini",
        "ollama",
        "openai_responses",
        "azure_openai",
        "openrouter",
        "qwen",
        "moonshot",
    }


@pytest.mark.parametrize("streamed", [False, True])
async def test_responses_reasoning_items_go_back_before_the_calls_they_led_to(
    server, make_provider, streamed: bool
) -> None:
    """Nothing is stored at OpenAI (store false): the reasoning item, with its encrypted
    content, is how a reasoning model keeps its thread through a tool loop."""
    provider = provider_for(make_provider, server, "openai_responses")
    server.queue(ScriptedReply(reasoning="Need the weather.", tool_calls=[WEATHER_CALL]))
    server.queue(ScriptedReply(text="Sunny."))
    ask = CompletionRequest([ChatMessage.user("weather?")], thinking=True)
    if streamed:
        first = (await collect(provider.chat_stream(ask)))[-1].response
        assert first is not None
    else:
        first = await provider.chat(ask)
    assert server.requests[0].json["include"] == ["reasoning.encrypted_content"]
    result = ChatMessage.tool(ToolResult("call_w1", "get_weather", "sunny"))
    await provider.chat(CompletionRequest([*ask.messages, first.to_message(), result]))
    items = server.last_request.json["input"]
    check_request("responses", server.last_request.json)
    assert [item.get("type", item.get("role")) for item in items] == [
        "user",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert items[1]["summary"] == [{"type": "summary_text", "text": "Need the weather."}]
    sealed = "gAAAA" + hashlib.sha256(b"Need the weather.").hexdigest()
    assert items[1]["encrypted_content"] == sealed  # as the server sealed it


async def test_a_responses_answer_from_openais_docs_is_read_whole(server, make_provider) -> None:
    provider = provider_for(make_provider, server, "openai_responses")
    server.queue(body("openai_responses_function_call.json"))
    answer = await provider.chat(CompletionRequest([ChatMessage.user("weather?")]))
    assert answer.content == "Let me check."
    assert answer.reasoning_content == "The user asks about Paris weather."
    [call] = answer.tool_calls
    assert (call.id, call.name, call.arguments) == (
        "call_unLAR8MvFNptuiZK6K6HCy5k",
        "get_weather",
        {"city": "Paris"},
    )
    assert answer.finish_reason == "tool_calls"
    usage = answer.token_usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens) == (291, 23, 128)
    assert usage.reasoning_tokens == 6
    [reasoning] = answer.provider_data["reasoning"]
    assert reasoning["id"] == "rs_67ccd2bf17f0819081ff3bb2cf6508e6"


DETAIL = {"type": "reasoning.encrypted", "data": "gAAAAsealed", "id": "r1", "format": "anthropic-claude-v1", "index": 0}  # fmt: skip


def openrouter_answer(**message: object) -> str:
    choice = {
        "index": 0,
        "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": None, **message},
    }
    return json.dumps({"id": "gen-1", "object": "chat.completion", "created": 1, "model": "x", "choices": [choice]})  # fmt: skip


@pytest.mark.parametrize("streamed", [False, True])
async def test_openrouter_reasoning_details_go_back_as_they_came(
    server, make_provider, streamed: bool
) -> None:
    provider = provider_for(make_provider, server, "openrouter")
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}  # fmt: skip
    if streamed:
        pieces = [
            {"reasoning_details": [{**DETAIL, "data": "gAAAA"}]},
            {"reasoning_details": [{"index": 0, "data": "sealed"}]},
            {"tool_calls": [{"index": 0, **call}]},
        ]
        chunks = [
            {"id": "gen-1", "object": "chat.completion.chunk", "created": 1, "model": "x",
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            for delta in pieces
        ]  # fmt: skip
        lines = [line for c in chunks for line in (f"data: {json.dumps(c)}", "")] + ["data: [DONE]"]
        server.queue(ScriptedReply(lines=lines, content_type="text/event-stream"))
    else:
        answer = openrouter_answer(tool_calls=[call], reasoning_details=[DETAIL])
        server.queue(ScriptedReply(body=answer, content_type="application/json"))
    server.queue(ScriptedReply(text="done"))
    ask = CompletionRequest([ChatMessage.user("weather?")], thinking=True)
    if streamed:
        first = (await collect(provider.chat_stream(ask)))[-1].response
    else:
        first = await provider.chat(ask)
    assert first is not None
    result = ChatMessage.tool(ToolResult("call_1", "get_weather", "sunny"))
    await provider.chat(CompletionRequest([*ask.messages, first.to_message(), result]))
    assistant = server.last_request.json["messages"][1]
    assert assistant["reasoning_details"] == [DETAIL]


async def test_qwen_thinks_only_on_a_streamed_call(server, make_provider) -> None:
    """DashScope refuses enable_thinking on a call that does not stream."""
    provider = provider_for(make_provider, server, "qwen")
    server.queue(ScriptedReply(text="ok"), ScriptedReply(text="ok"))
    ask = CompletionRequest([ChatMessage.user("hi")], thinking=True)
    await provider.chat(ask)
    assert server.last_request.json["enable_thinking"] is False
    await collect(provider.chat_stream(ask))
    assert server.last_request.json["enable_thinking"] is True
