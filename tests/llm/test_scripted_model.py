"""The scripted local model server: its script, its records, and the offline responder."""

from __future__ import annotations

import asyncio
import json
import re
import sys

import httpx
import pytest

from hologram.llm import (
    OFFLINE_RULES,
    ChatMessage,
    CompletionRequest,
    OfflineResponder,
    OfflineRule,
    ScriptedModelServer,
    ScriptedReply,
)
from hologram.sdk import ToolCall, ToolDef, ToolResult

from .golden import collect

RECALL = ToolDef(
    "memory_recall",
    "Recall from the graph",
    {"type": "object", "properties": {"query": {"type": "string"}}},
)
COMMIT = ToolDef(
    "memory_commit",
    "Write to the graph",
    {
        "type": "object",
        "properties": {"sentence_text": {"type": "string"}, "triples": {"type": "array"}},
    },
)


async def test_replies_are_served_in_order_and_every_request_is_recorded_exactly(
    server: ScriptedModelServer, make_provider
) -> None:
    server.queue_text("first").queue_tool_call("get_weather", {"city": "Paris"}, call_id="c9")
    provider = make_provider("openai", server.base_url)
    one = await provider.chat(CompletionRequest([ChatMessage.user("一")]))
    two = await provider.chat(CompletionRequest([ChatMessage.user("two")], temperature=0.5))
    assert one.content == "first"
    assert [(c.id, c.name, c.arguments) for c in two.tool_calls] == [
        ("c9", "get_weather", {"city": "Paris"})
    ]
    assert server.pending == 0 and len(server.requests) == 2
    first, second = server.requests
    assert json.loads(first.body)["messages"] == [{"role": "user", "content": "一"}]
    assert second.json["temperature"] == 0.5
    assert second.headers["authorization"] == "Bearer sk-test"


async def test_an_empty_script_answers_with_an_error_that_says_so(
    server: ScriptedModelServer,
) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.post(server.base_url + "/chat/completions", json={"messages": []})
    assert response.status_code == 500
    assert "no reply queued for request #1" in response.json()["error"]["message"]


async def test_a_streamed_reply_carries_reasoning_text_and_tool_calls(
    server: ScriptedModelServer, make_provider
) -> None:
    server.queue(
        ScriptedReply(
            text="Looking it up",
            reasoning="think first",
            tool_calls=[ToolCall("c1", "lookup", {"q": "猫"})],
        )
    )
    chunks = await collect(
        make_provider("openai", server.base_url).chat_stream(
            CompletionRequest([ChatMessage.user("hi")])
        )
    )
    final = chunks[-1].response
    assert final is not None
    assert final.reasoning_content == "think first" and final.content == "Looking it up"
    assert [(c.name, c.arguments) for c in final.tool_calls] == [("lookup", {"q": "猫"})]
    assert len([c for c in chunks if c.content]) == 3  # streamed a word at a time


async def test_a_streamed_answer_records_when_each_frame_was_sent(
    server: ScriptedModelServer,
) -> None:
    # For benchmarks that split a stream's latency into the server's part and the client's.
    server.queue(ScriptedReply(text="It will rain."))
    async with httpx.AsyncClient() as client:
        async with client.stream(
            "POST",
            server.base_url + "/chat/completions",
            json={"messages": [{"role": "user", "content": "x"}], "stream": True},
        ) as response:
            body = (await response.aread()).decode()
        recorded = (await client.get(server.url + "/_scripted/requests")).json()
    frames = [line for line in body.split("\n\n") if line.strip()]
    sent = recorded[0]["frames_sent_at"]
    assert len(sent) == len(frames) > 2
    assert recorded[0]["received_at"] <= sent[0] and sent == sorted(sent)


async def test_the_script_can_be_given_over_http(server: ScriptedModelServer) -> None:
    async with httpx.AsyncClient() as client:
        queued = await client.post(
            server.url + "/_scripted/replies",
            json=[
                {"text": "over http"},
                {"tool_calls": [{"id": "t1", "name": "ping", "arguments": {}}]},
            ],
        )
        assert queued.json() == {"queued": 2, "pending": 2}
        answer = await client.post(
            server.base_url + "/chat/completions",
            json={"messages": [{"role": "user", "content": "x"}]},
        )
        recorded = (await client.get(server.url + "/_scripted/requests")).json()
    assert answer.json()["choices"][0]["message"]["content"] == "over http"
    assert json.loads(recorded[0]["body"])["messages"][0]["content"] == "x"


# ---- the offline responder ---------------------------------------------------------------------


def ask(text: str, tools: list[ToolDef] | None = None) -> dict:
    return {
        "messages": [{"role": "user", "content": text}],
        "tools": [
            {"type": "function", "function": {"name": t.name, "parameters": t.parameters}}
            for t in tools or []
        ],
    }


def test_the_offline_model_says_what_it_is_in_the_users_language() -> None:
    responder = OfflineResponder()
    english = responder.answer(ask("hello there"))
    chinese = responder.answer(ask("你好，今天怎么样？"))
    assert english.text.startswith("(offline scripted model) I am the offline scripted model")
    assert "hello there" in english.text and "HOLOGRAM_LLM_BASE_URL" in english.text
    assert chinese.text.startswith("（离线脚本模型）我是离线脚本模型")
    assert "你好，今天怎么样？" in chinese.text


@pytest.mark.parametrize(
    ("text", "tool", "arguments"),
    [
        (
            "remember that my cat is called Mochi",
            "memory_commit",
            {"sentence_text": "my cat is called Mochi"},
        ),
        ("记住 我的猫叫麻薯", "memory_commit", {"sentence_text": "我的猫叫麻薯"}),
        ("What do you remember about Mochi?", "memory_recall", {"query": "Mochi"}),
        ("你还记得麻薯吗？", "memory_recall", {"query": "麻薯"}),
    ],
)
def test_memory_patterns_call_the_memory_tools_when_they_are_offered(
    text: str, tool: str, arguments: dict
) -> None:
    answer = OfflineResponder().answer(ask(text, [RECALL, COMMIT]))
    assert answer.text == ""
    [call] = answer.tool_calls
    assert (call["name"], call["arguments"]) == (tool, arguments)


def test_no_tool_is_called_that_the_request_does_not_offer() -> None:
    answer = OfflineResponder().answer(ask("remember that I like tea", [RECALL]))
    assert answer.tool_calls == []
    assert "no memory_commit tool" in answer.text
    zh = OfflineResponder().answer(ask("记住 我喜欢茶"))
    assert zh.tool_calls == [] and "memory_commit" in zh.text and zh.text.startswith("（离线")


def test_after_the_tool_answers_the_offline_model_reports_back() -> None:
    request = {
        "messages": [
            {"role": "user", "content": "你还记得麻薯吗？"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "memory_recall", "arguments": '{"query": "麻薯"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "麻薯是一只猫"},
        ],
        "tools": [{"type": "function", "function": {"name": "memory_recall"}}],
    }
    answer = OfflineResponder().answer(request)
    assert answer.text == "（离线脚本模型）关于麻薯，我的记忆里有：麻薯是一只猫"


def test_the_rule_table_is_extended_by_adding_a_rule() -> None:
    weather = OfflineRule(
        name="weather",
        tool="get_weather",
        patterns=(re.compile(r"weather in (?P<text>\w+)", re.I),),
        arguments=("city",),
        done={"en": "Weather in {text}: {result}", "zh": "{text}天气：{result}"},
        missing={"en": "no {tool}", "zh": "没有 {tool}"},
    )
    responder = OfflineResponder([*OFFLINE_RULES, weather])
    tool = ToolDef(
        "get_weather", "w", {"type": "object", "properties": {"city": {"type": "string"}}}
    )
    [call] = responder.answer(ask("what's the weather in Paris", [tool])).tool_calls
    assert call["arguments"] == {"city": "Paris"}


async def test_the_offline_server_runs_a_whole_tool_round_over_http(make_provider) -> None:
    async with ScriptedModelServer(offline=True) as offline:
        provider = make_provider("openai", offline.base_url)
        request = CompletionRequest(
            [ChatMessage.user("remember that tea is best hot")], tools=[COMMIT]
        )
        first = await provider.chat(request)
        [call] = first.tool_calls
        assert call.name == "memory_commit" and first.finish_reason == "tool_calls"
        request.messages += [
            first.to_message(),
            ChatMessage.tool(ToolResult(call.id, call.name, "saved")),
        ]
        second = await provider.chat(request)
    assert second.content == "(offline scripted model) Noted. I saved that: tea is best hot"


async def test_the_scripted_model_runs_as_its_own_process() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "hologram",
        "scripted-model",
        "--port",
        "0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(30):
            line = (await process.stdout.readline()).decode()
        base_url = re.search(r"http://127\.0\.0\.1:\d+/v1", line)
        assert base_url is not None, line
        async with httpx.AsyncClient() as client:
            reply = await client.post(
                base_url.group(0) + "/chat/completions",
                json={"messages": [{"role": "user", "content": "hi"}]},
            )
        assert "offline scripted model" in reply.json()["choices"][0]["message"]["content"]
    finally:
        process.terminate()
        async with asyncio.timeout(30):
            assert await process.wait() == 0
