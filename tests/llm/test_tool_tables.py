"""The tool sets an adapter keeps converted between requests (hologram/llm/tool_tables.py):
the body is the one the plain conversion writes, a set seen again is not converted again, a
changed one is, and nothing a script does to the tables it was given reaches another
request."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from hologram.llm import AdapterLibrary, ChatMessage, CompletionRequest, LuaAdapter
from hologram.sdk import ToolCall, ToolDef, ToolResult

from .goldens import CHART, _image

LIBRARY = AdapterLibrary()

# Long enough for the set to be kept (tool_tables.KEEP_FROM_BYTES), as a kernel's are.
WEATHER = ToolDef(
    "get_weather",
    "Current weather for a city; 天气 in Chinese. " + "Say which city, and for how long. " * 60,
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "the city", "default": None},
            "days": {"type": "integer", "minimum": 1, "maximum": 7.5, "default": 1},
            "units": {"enum": ["metric", "imperial", None]},
            "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "flags": {"type": "array", "items": {"type": "boolean"}, "default": [True, False]},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
)
NOTHING = ToolDef("ping", "Answers pong", {"type": "object", "properties": {}, "required": []})
NESTED = ToolDef(
    "plan",
    "Plan steps",
    {
        "type": "object",
        "$defs": {"step": {"type": "object", "properties": {"do": {"const": "go"}}}},
        "properties": {"steps": {"type": "array", "items": {"$ref": "#/$defs/step"}}},
    },
)
TOOLS = [WEATHER, NOTHING, NESTED]


def request(tools: list[ToolDef], question: str = "And tomorrow?") -> dict[str, Any]:
    return CompletionRequest(
        messages=[
            ChatMessage.system("You are Holo."),
            ChatMessage.user("What's the weather in Paris? 巴黎今天天气怎么样？"),
            ChatMessage.assistant(
                "Let me check.", [ToolCall("c1", "get_weather", {"city": "Paris"})]
            ),
            ChatMessage.tool(
                ToolResult("c1", "get_weather", "sunny, 21°C"), [_image(CHART, "chart.png")]
            ),
            ChatMessage.user(question),
        ],
        tools=tools,
        temperature=0.3,
        model="m",
    ).to_unified("m", stream=True)


async def test_a_small_tool_set_is_converted_each_time() -> None:
    adapter = LIBRARY.load("openai")
    for question in ("a", "b"):
        body = json.loads(await adapter.transform_request(request([NOTHING], question)))
        assert body["tools"][0]["function"]["name"] == "ping"
    assert adapter.tool_sets_converted == 0


@pytest.mark.parametrize("name", LIBRARY.names())
async def test_every_adapter_writes_the_same_body_with_its_tool_sets_kept(name: str) -> None:
    kept, plain = LIBRARY.load(name), LIBRARY.load(name, keep_tool_sets=0)
    changed = [WEATHER, ToolDef("ping", "Answers pong, loudly", NOTHING.parameters), NESTED]
    for tools, question in ((TOOLS, "a"), (TOOLS, "b"), (changed, "c"), (TOOLS, "d")):
        unified = request(tools, question)
        body, expected = (
            await kept.transform_request(unified),
            await plain.transform_request(unified),
        )
        assert json.loads(body) == json.loads(expected)
    assert kept.tool_sets_converted == 2
    assert plain.tool_sets_converted == 0


async def test_a_tool_set_seen_again_is_not_converted_again_and_a_changed_one_is() -> None:
    adapter = LIBRARY.load("openai")
    first = json.loads(await adapter.transform_request(request(TOOLS, "a")))
    again = json.loads(await adapter.transform_request(request(TOOLS, "b")))
    assert adapter.tool_sets_converted == 1
    assert again["tools"] == first["tools"]
    assert again["messages"][-1]["content"] == "b"

    renamed = ToolDef("get_forecast", WEATHER.description, WEATHER.parameters)
    changed = json.loads(await adapter.transform_request(request([renamed, NOTHING], "c")))
    assert adapter.tool_sets_converted == 2
    assert [t["function"]["name"] for t in changed["tools"]] == ["get_forecast", "ping"]
    assert changed["tools"][0]["function"]["parameters"]["required"] == ["city"]


MUTATES = """
return {
  name = "mutates", version = "1", endpoint = "/x", headers = {},
  transform_request = function(raw)
    local req = json.decode(raw)
    local city = req.tools[1].parameters.properties.city
    city.description = city.description .. "!"
    req.tools[2].parameters.properties.extra = { type = "string" }
    return { tools = req.tools }
  end,
  transform_response = function(raw) return { content = raw } end,
}
"""


async def test_a_script_that_changes_the_tables_it_was_given_changes_no_other_request() -> None:
    adapter = LuaAdapter.from_source(MUTATES, "mutates.lua")
    for _ in range(3):
        body = json.loads(await adapter.transform_request(request(TOOLS)))
        # Its own change is in its body (the kept text is not used for a changed table)...
        assert body["tools"][0]["parameters"]["properties"]["city"]["description"] == "the city!"
        assert body["tools"][1]["parameters"]["properties"] == {"extra": {"type": "string"}}
        # ...and the next request starts from the tools as they were.
    assert adapter.tool_sets_converted == 1


KEEPS = """
local kept_request, kept_body
return {
  name = "keeps", version = "1", endpoint = "/x", headers = {},
  transform_request = function(raw)
    kept_request = json.decode(raw)
    kept_body = { tools = kept_request.tools, first = kept_request.tools[1].parameters }
    return kept_body
  end,
  transform_response = function(raw)
    -- Later, outside transform_request: change what was kept, and show what the body
    -- returned earlier holds now.
    local shown = json.encode({ first = kept_body.first, n = #kept_body.tools })
    kept_request.tools[1].parameters.type = "changed later"
    kept_request.tools[1].name = "renamed later"
    return { content = shown }
  end,
}
"""


async def test_tables_a_script_keeps_and_changes_later_reach_no_later_request() -> None:
    adapter = LuaAdapter.from_source(KEEPS, "keeps.lua")
    for _ in range(3):
        body = json.loads(await adapter.transform_request(request(TOOLS)))
        assert body["tools"][0]["name"] == "get_weather"
        assert body["first"] == body["tools"][0]["parameters"]
        assert body["first"]["type"] == "object"
        answer = await adapter.transform_response("{}")
        # The body it kept is whole again once encoded: tables, not stand-ins.
        shown = json.loads(answer["content"])
        assert shown["n"] == len(TOOLS)
        assert shown["first"]["required"] == ["city"]
    assert adapter.tool_sets_converted == 1


WAITS = """
return {
  name = "waits", version = "1", endpoint = "/x", headers = {},
  transform_request = function(raw)
    http_get("http://example.invalid/" .. #raw)
    local req = json.decode(raw)
    return { question = req.messages[#req.messages].content, tools = req.tools }
  end,
  transform_response = function(raw) return { content = raw } end,
}
"""


async def test_two_requests_that_overlap_each_get_their_own_body() -> None:
    adapter = LuaAdapter.from_source(WAITS, "waits.lua")
    plain = LuaAdapter.from_source(WAITS, "waits.lua", keep_tool_sets=0)

    async def http(method: str, url: str, body: str | None) -> tuple[str | None, int | str]:
        await asyncio.sleep(0.01)
        return "", 200

    changed = [ToolDef("other", "Another tool", WEATHER.parameters)]
    unified = [request(TOOLS, "one"), request(changed, "two"), request(TOOLS, "three")]
    bodies = await asyncio.gather(*(adapter.transform_request(u, http) for u in unified))
    for body, u in zip(bodies, unified, strict=True):
        assert json.loads(body) == json.loads(await plain.transform_request(u, http))
    assert [json.loads(b)["question"] for b in bodies] == ["one", "two", "three"]
