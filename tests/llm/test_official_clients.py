"""The official SDKs, pointed at the scripted model server, parse every kind of answer it gives
in their format: text, tool calls, streamed tool calls, reasoning and errors. The server is
the stand-in for every LLM in the suite, so this is what keeps it honest."""

from __future__ import annotations

import json

import anthropic
import httpx
import ollama
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from hologram.llm import ScriptedModelServer, ScriptedReply
from hologram.sdk import ToolCall

WEATHER = ToolCall("call_w1", "get_weather", {"city": "巴黎"})
OPENAI_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def openai_client(server: ScriptedModelServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)


# ---- OpenAI Chat Completions -----------------------------------------------------------------


async def test_openai_sdk_reads_text_reasoning_usage_and_tool_calls(server) -> None:
    server.queue(
        ScriptedReply(text="Hello", reasoning="think", cached_tokens=3, reasoning_tokens=4),
        ScriptedReply(tool_calls=[WEATHER]),
    )
    async with openai_client(server) as client:
        text = await client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
        call = await client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}], tools=[OPENAI_TOOL]
        )
    message = text.choices[0].message
    assert message.content == "Hello" and message.model_extra["reasoning_content"] == "think"
    assert text.usage is not None and text.usage.prompt_tokens_details is not None
    assert text.usage.prompt_tokens_details.cached_tokens == 3
    assert text.usage.completion_tokens_details.reasoning_tokens == 4  # type: ignore[union-attr]
    [tool_call] = call.choices[0].message.tool_calls or []
    assert call.choices[0].finish_reason == "tool_calls"
    assert tool_call.function.name == "get_weather"  # type: ignore[union-attr]
    assert json.loads(tool_call.function.arguments) == {"city": "巴黎"}  # type: ignore[union-attr]


async def test_openai_sdk_streams_text_and_tool_call_fragments(server) -> None:
    server.queue(ScriptedReply(text="Let me look", tool_calls=[WEATHER]))
    async with openai_client(server) as client:
        stream = await client.chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "user", "content": "hi"}],
            tools=[OPENAI_TOOL],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    arguments = "".join(
        call.function.arguments or ""
        for c in chunks
        if c.choices
        for call in c.choices[0].delta.tool_calls or []
        if call.function is not None
    )
    assert text == "Let me look" and json.loads(arguments) == {"city": "巴黎"}
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0


@pytest.mark.parametrize(
    ("error", "sdk_error", "status", "code"),
    [
        ("quota", openai.RateLimitError, 429, "insufficient_quota"),
        ("rate_limited", openai.RateLimitError, 429, "rate_limit_exceeded"),
        ("context_length", openai.BadRequestError, 400, "context_length_exceeded"),
        ("auth", openai.AuthenticationError, 401, "invalid_api_key"),
        ("server", openai.InternalServerError, 500, None),
    ],
)
async def test_openai_sdk_reads_each_scripted_error(server, error, sdk_error, status, code) -> None:
    server.queue(ScriptedReply(error=error, retry_after=1))
    async with openai_client(server) as client:
        with pytest.raises(sdk_error) as caught:
            await client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
            )
    assert caught.value.status_code == status and caught.value.code == code
    assert caught.value.response.headers["retry-after"] == "1"


async def test_openai_sdk_reads_an_error_inside_a_stream(server) -> None:
    server.queue(ScriptedReply(text="one two three", stream_error="server", error_after=1))
    async with openai_client(server) as client:
        stream = await client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        with pytest.raises(openai.APIError):
            async for _ in stream:
                pass


# ---- OpenAI Responses ----------------------------------------------------------------------


async def test_openai_sdk_reads_responses_text_reasoning_and_function_calls(server) -> None:
    server.queue(
        ScriptedReply(text="Hi there", reasoning="brief thought", reasoning_tokens=2),
        ScriptedReply(tool_calls=[WEATHER]),
    )
    async with openai_client(server) as client:
        text = await client.responses.create(model="gpt-5", input="hi")
        call = await client.responses.create(
            model="gpt-5",
            input="weather?",
            tools=[{"type": "function", "name": "get_weather", "parameters": {}, "strict": False}],
        )
    assert text.output_text == "Hi there"
    assert text.output[0].type == "reasoning"
    assert text.usage is not None and text.usage.output_tokens_details.reasoning_tokens == 2
    [function_call] = [item for item in call.output if item.type == "function_call"]
    assert function_call.call_id == "call_w1"  # type: ignore[union-attr]
    assert json.loads(function_call.arguments) == {"city": "巴黎"}  # type: ignore[union-attr]


async def test_openai_sdk_streams_responses_events(server) -> None:
    server.queue(
        ScriptedReply(text="Streamed words", reasoning="a short plan", tool_calls=[WEATHER])
    )
    async with openai_client(server) as client:
        stream = await client.responses.create(model="gpt-5", input="hi", stream=True)
        events = [event async for event in stream]
    thought = [e.delta for e in events if e.type == "response.reasoning_summary_text.delta"]
    assert "".join(thought) == "a short plan"
    [reasoning] = [
        e.item
        for e in events
        if e.type == "response.output_item.done" and e.item.type == "reasoning"
    ]
    assert [part.text for part in reasoning.summary] == ["a short plan"]
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert "".join(deltas) == "Streamed words"
    arguments = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert json.loads("".join(arguments)) == {"city": "巴黎"}
    assert events[-1].type == "response.completed"


async def test_openai_sdk_reads_a_responses_error_event(server) -> None:
    server.queue(ScriptedReply(text="a b c", stream_error="server", error_after=1))
    async with openai_client(server) as client:
        stream = await client.responses.create(model="gpt-5", input="hi", stream=True)
        events = [event async for event in stream]
    assert events[-1].type == "error"


# ---- Anthropic Messages ------------------------------------------------------------------


def anthropic_client(server: ScriptedModelServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=server.url, api_key="sk-ant", max_retries=0)


async def test_anthropic_sdk_reads_thinking_text_and_tool_use(server) -> None:
    server.queue(ScriptedReply(text="Checking.", reasoning="The user asks.", tool_calls=[WEATHER]))
    async with anthropic_client(server) as client:
        message = await client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=1024,
            messages=[{"role": "user", "content": "weather?"}],
        )
    thinking, text, tool_use = message.content
    assert thinking.type == "thinking" and thinking.signature  # type: ignore[union-attr]
    assert text.type == "text" and text.text == "Checking."
    assert tool_use.type == "tool_use" and tool_use.input == {"city": "巴黎"}
    assert message.stop_reason == "tool_use"


async def test_anthropic_sdk_streams_thinking_text_and_tool_input(server) -> None:
    server.queue(ScriptedReply(text="Okay, checking.", reasoning="Plan.", tool_calls=[WEATHER]))
    async with (
        anthropic_client(server) as client,
        client.messages.stream(
            model="claude-sonnet-4-5",
            max_tokens=1024,
            messages=[{"role": "user", "content": "weather?"}],
        ) as stream,
    ):
        final = await stream.get_final_message()
    kinds = [block.type for block in final.content]
    assert kinds == ["thinking", "text", "tool_use"]
    assert final.content[1].text == "Okay, checking."  # type: ignore[union-attr]
    assert final.content[2].input == {"city": "巴黎"}  # type: ignore[union-attr]


async def test_anthropic_sdk_reads_an_overloaded_stream_event_and_error_statuses(server) -> None:
    server.queue(
        ScriptedReply(text="Half an answer", stream_error="overloaded", error_after=1),
        ScriptedReply(error="overloaded"),
        ScriptedReply(error="rate_limited", retry_after=2),
    )
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
    }
    async with anthropic_client(server) as client:
        with pytest.raises(anthropic.APIStatusError) as mid_stream:
            async with client.messages.stream(**request) as stream:  # type: ignore[arg-type]
                await stream.get_final_message()
        with pytest.raises(anthropic.APIStatusError) as overloaded:
            await client.messages.create(**request)  # type: ignore[arg-type]
        with pytest.raises(anthropic.RateLimitError) as limited:
            await client.messages.create(**request)  # type: ignore[arg-type]
    assert "overloaded_error" in str(mid_stream.value.body)
    assert overloaded.value.status_code == 529
    assert limited.value.response.headers["retry-after"] == "2"


# ---- Gemini --------------------------------------------------------------------------------


def gemini_client(server: ScriptedModelServer) -> genai.Client:
    options = genai_types.HttpOptions(base_url=server.url, api_version="v1beta")
    return genai.Client(api_key="gm-key", http_options=options)


async def test_gemini_sdk_reads_thoughts_text_and_function_calls_with_signatures(server) -> None:
    server.queue(ScriptedReply(text="Sunny.", reasoning="Look it up.", reasoning_tokens=5))
    server.queue(ScriptedReply(tool_calls=[WEATHER]))
    client = gemini_client(server)
    text = await client.aio.models.generate_content(model="gemini-2.5-flash", contents="hi")
    call = await client.aio.models.generate_content(model="gemini-2.5-flash", contents="weather?")
    assert text.text == "Sunny."
    parts = text.candidates[0].content.parts  # type: ignore[index, union-attr]
    assert parts[0].thought and parts[0].text == "Look it up."  # type: ignore[index]
    assert text.usage_metadata.thoughts_token_count == 5  # type: ignore[union-attr]
    [function_call] = call.function_calls or []
    assert function_call.name == "get_weather" and function_call.args == {"city": "巴黎"}
    signed = call.candidates[0].content.parts[0]  # type: ignore[index, union-attr]
    assert signed.thought_signature  # bytes, decoded from the base64 on the wire


async def test_gemini_sdk_streams_and_reads_retry_info(server) -> None:
    server.queue(ScriptedReply(text="Paris is sunny today", tool_calls=[WEATHER]))
    server.queue(ScriptedReply(error="rate_limited", retry_after=3))
    client = gemini_client(server)
    chunks = [
        chunk
        async for chunk in await client.aio.models.generate_content_stream(
            model="gemini-2.5-flash", contents="hi"
        )
    ]
    assert "".join(c.text or "" for c in chunks) == "Paris is sunny today"
    assert chunks[-1].function_calls and chunks[-1].function_calls[0].name == "get_weather"
    with pytest.raises(genai_errors.ClientError) as caught:
        await client.aio.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert caught.value.code == 429 and caught.value.status == "RESOURCE_EXHAUSTED"
    [retry] = [d for d in caught.value.details["error"]["details"] if "RetryInfo" in d["@type"]]
    assert retry["retryDelay"] == "3s"


@pytest.mark.parametrize(
    ("error", "sdk_error", "code", "status"),
    [
        ("quota", genai_errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
        ("context_length", genai_errors.ClientError, 400, "INVALID_ARGUMENT"),
        ("auth", genai_errors.ClientError, 400, "INVALID_ARGUMENT"),
        ("bad_request", genai_errors.ClientError, 400, "INVALID_ARGUMENT"),
        ("overloaded", genai_errors.ServerError, 503, "UNAVAILABLE"),
        ("server", genai_errors.ServerError, 500, "INTERNAL"),
    ],
)
async def test_gemini_sdk_reads_each_scripted_error(
    server, error: str, sdk_error: type[Exception], code: int, status: str
) -> None:
    server.queue(ScriptedReply(error=error))
    with pytest.raises(sdk_error) as caught:
        await gemini_client(server).aio.models.generate_content(
            model="gemini-2.5-flash", contents="hi"
        )
    assert (caught.value.code, caught.value.status) == (code, status)  # type: ignore[attr-defined]


# ---- Ollama --------------------------------------------------------------------------------


async def test_ollama_sdk_reads_thinking_tool_calls_and_streams(server) -> None:
    server.queue(ScriptedReply(text="Hi", reasoning="hmm", tool_calls=[WEATHER]))
    server.queue(ScriptedReply(text="The sky is blue", tool_calls=[WEATHER]))
    server.queue(ScriptedReply(error="server"))
    client = ollama.AsyncClient(host=server.url)
    whole = await client.chat(model="llama3.2", messages=[{"role": "user", "content": "hi"}])
    assert whole.message.content == "Hi" and whole.message.thinking == "hmm"
    [call] = whole.message.tool_calls or []
    assert call.function.name == "get_weather" and call.function.arguments == {"city": "巴黎"}
    assert whole.done and whole.prompt_eval_count and whole.eval_count
    parts = [
        part
        async for part in await client.chat(
            model="llama3.2", messages=[{"role": "user", "content": "hi"}], stream=True
        )
    ]
    assert "".join(p.message.content or "" for p in parts) == "The sky is blue"
    assert parts[-1].done and any(p.message.tool_calls for p in parts)
    with pytest.raises(ollama.ResponseError) as caught:
        await client.chat(model="llama3.2", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 500


@pytest.mark.parametrize(
    ("error", "status"),
    [("rate_limited", 429), ("context_length", 400), ("auth", 401), ("overloaded", 503)],
)
async def test_ollama_sdk_reads_each_scripted_error(server, error: str, status: int) -> None:
    server.queue(ScriptedReply(error=error, text="the scripted failure"))
    with pytest.raises(ollama.ResponseError) as caught:
        await ollama.AsyncClient(host=server.url).chat(
            model="llama3.2", messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.status_code == status and caught.value.error == "the scripted failure"


# ---- what else the server serves -----------------------------------------------------------


async def test_models_and_embeddings_are_served_and_unknown_paths_are_404(server) -> None:
    async with openai_client(server) as client:
        model = await client.models.retrieve("scripted-model")
        with pytest.raises(openai.NotFoundError):
            await client.models.retrieve("no-such-model")
        vectors = await client.embeddings.create(
            model="embed", input=["the cat sat", "the cat sat", "stock prices"]
        )
        with pytest.raises(openai.NotFoundError):
            await client.post("/no/such/path", body={}, cast_to=object)
    assert model.id == "scripted-model"
    same, again, other = (v.embedding for v in vectors.data)
    assert same == again and same != other and len(same) == server.embedding_dim


ASKS = {
    # path, body, the SDK's type of the answer
    "chat": ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
             openai.types.chat.ChatCompletion),
    "responses": ("/v1/responses", {"model": "m", "input": "hi"}, openai.types.responses.Response),
    "anthropic": ("/v1/messages", {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]},
                  anthropic.types.Message),
    "gemini": ("/v1beta/models/m:generateContent", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
               genai_types.GenerateContentResponse),
    "ollama": ("/api/chat", {"model": "m", "stream": False, "messages": [{"role": "user", "content": "hi"}]},
               ollama.ChatResponse),
}  # fmt: skip


@pytest.mark.parametrize("wire", sorted(ASKS))
async def test_every_scripted_answer_validates_as_the_sdks_response_type(server, wire) -> None:
    """The SDKs build their objects without validating them; validating shows a field the
    scripted server left out that a real service sends."""
    path, request, answer_type = ASKS[wire]
    server.queue(
        ScriptedReply(text="Hi", reasoning="brief", cached_tokens=1, reasoning_tokens=2),
        ScriptedReply(text="Looking.", tool_calls=[WEATHER]),
    )
    async with httpx.AsyncClient(base_url=server.url) as client:
        for _ in range(2):
            answer = await client.post(path, json=request)
            answer_type.model_validate(answer.json())
