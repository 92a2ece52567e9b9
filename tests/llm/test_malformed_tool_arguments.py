"""A model's tool arguments that are not a JSON object are the model's mistake: the call is
answered with a tool error naming what was wrong, and the turn goes on (the model may try
again). Through the real openai adapter and real HTTP to the scripted model server, which
sends the broken arguments on the wire exactly as a model would."""

from __future__ import annotations

import json

from hologram import Kernel
from hologram.agent import Agent
from hologram.llm import ChatMessage, CompletionRequest, LuaAdaptedProvider, ScriptedModelServer
from hologram.llm.scripted_server import ScriptedReply
from tests.agent.conftest import agent, kernel, model  # noqa: F401

BROKEN = "{city: Paris"  # unquoted key, no closing brace


def completion_with_arguments(arguments: str, call_id: str = "call_1") -> str:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "coldcontext_commit", "arguments": arguments},
            }
        ],
    }
    return json.dumps(
        {
            "id": "chatcmpl-broken",
            "object": "chat.completion",
            "model": "scripted-model",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        }
    )


async def test_non_json_tool_arguments_are_answered_with_a_tool_error_and_the_turn_goes_on(
    kernel: Kernel,  # noqa: F811
    agent: Agent,  # noqa: F811
    model: ScriptedModelServer,  # noqa: F811
) -> None:
    model.queue(
        ScriptedReply(body=completion_with_arguments(BROKEN), content_type="application/json")
    )
    model.queue_tool_call("coldcontext_commit", {"content": "lives in Paris"}, call_id="call_2")
    model.queue_text("Noted: you live in Paris.")

    result = await kernel.inputs.say("remember that I live in Paris")

    assert result.reply.startswith("Noted: you live in Paris.")
    assert len(model.requests) == 3  # the loop went on after the broken call
    second = model.requests[1].json["messages"]
    [answer] = [m for m in second if m["role"] == "tool" and m["tool_call_id"] == "call_1"]
    assert "not valid JSON" in answer["content"] and BROKEN in answer["content"]
    third = model.requests[2].json["messages"]
    [stored] = [m for m in third if m["role"] == "tool" and m["tool_call_id"] == "call_2"]
    assert stored["content"].startswith("Stored as memory document")


async def test_arguments_that_are_json_but_not_an_object_are_answered_the_same_way(
    kernel: Kernel,  # noqa: F811
    agent: Agent,  # noqa: F811
    model: ScriptedModelServer,  # noqa: F811
) -> None:
    model.queue(
        ScriptedReply(body=completion_with_arguments('["Paris"]'), content_type="application/json")
    )
    model.queue_text("Sorry, let me try again later.")

    result = await kernel.inputs.say("remember Paris")

    assert result.reply.startswith("Sorry")
    [answer] = [m for m in model.requests[1].json["messages"] if m["role"] == "tool"]
    assert "must be a JSON object" in answer["content"]


async def test_a_streamed_call_with_broken_arguments_arrives_with_its_error_set(
    make_provider, server: ScriptedModelServer
) -> None:
    provider: LuaAdaptedProvider = make_provider("openai", server.base_url)
    first = {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": {"name": "f", "arguments": "{a:"},
    }
    rest = {"index": 0, "function": {"arguments": " 1"}}
    lines = [
        "data: " + json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [first]}}]}),
        "",
        "data: " + json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [rest]}}]}),
        "",
        "data: "
        + json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        "",
        "data: [DONE]",
        "",
    ]
    server.queue(ScriptedReply(lines=lines, content_type="text/event-stream"))

    last = None
    async for chunk in provider.chat_stream(CompletionRequest([ChatMessage.user("go")])):
        last = chunk

    assert last is not None and last.done and last.response is not None
    [call] = last.response.tool_calls
    assert (call.id, call.name, call.arguments) == ("c1", "f", {})
    assert call.arguments_error is not None and "{a: 1" in call.arguments_error
