"""The body fields an adapter's `transform_tools` makes of a tool set, kept between requests
(hologram/llm/adapter.py): the body is the one the script writes with the tools in the
request, a set seen again is not transformed again, a changed one is, a field the request's
body sets itself is left as it is, and nothing a script keeps reaches a later body."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from hologram.llm import AdapterLibrary, ChatMessage, CompletionRequest, LuaAdapter
from hologram.llm.adapter import KEPT_TOOL_SETS
from hologram.llm.errors import AdapterOutputError
from hologram.sdk import ToolCall, ToolDef, ToolResult

from .goldens import CHART, _image

LIBRARY = AdapterLibrary()

WEATHER = ToolDef(
    "get_weather",
    "Current weather for a city; 天气 in Chinese. Say which city, and for how long.",
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


@pytest.mark.parametrize("name", LIBRARY.names())
async def test_every_adapter_writes_the_same_body_with_its_tool_fields_kept(name: str) -> None:
    kept, whole = LIBRARY.load(name), LIBRARY.load(name, keep_tool_sets=0)
    changed = [WEATHER, ToolDef("ping", "Answers pong, loudly", NOTHING.parameters), NESTED]
    for tools, question in ((TOOLS, "a"), (TOOLS, "b"), (changed, "c"), (TOOLS, "d"), ([], "e")):
        unified = request(tools, question)
        body, expected = (
            await kept.transform_request(unified),
            await whole.transform_request(unified),
        )
        assert json.loads(body) == json.loads(expected)
    # Every shipped adapter makes its tools' fields once per set: a turn's request is
    # mostly its tools.
    assert kept.tool_sets_transformed == 2
    assert whole.tool_sets_transformed == 0


async def test_a_tool_set_seen_again_is_not_transformed_again_and_a_changed_one_is() -> None:
    adapter = LIBRARY.load("openai")
    first = json.loads(await adapter.transform_request(request(TOOLS, "a")))
    again = json.loads(await adapter.transform_request(request(TOOLS, "b")))
    assert adapter.tool_sets_transformed == 1
    assert again["tools"] == first["tools"]
    assert again["messages"][-1]["content"] == "b"

    renamed = ToolDef("get_forecast", WEATHER.description, WEATHER.parameters)
    changed = json.loads(await adapter.transform_request(request([renamed, NOTHING], "c")))
    assert adapter.tool_sets_transformed == 2
    assert [t["function"]["name"] for t in changed["tools"]] == ["get_forecast", "ping"]
    assert changed["tools"][0]["function"]["parameters"]["required"] == ["city"]

    # A schema changed in place is another set, not the one kept.
    nested_copy = ToolDef("plan", "Plan steps", json.loads(json.dumps(NESTED.parameters)))
    await adapter.transform_request(request([nested_copy]))
    nested_copy.parameters["properties"]["steps"]["maxItems"] = 3
    body = json.loads(await adapter.transform_request(request([nested_copy])))
    assert body["tools"][0]["function"]["parameters"]["properties"]["steps"]["maxItems"] == 3
    assert adapter.tool_sets_transformed == 4


async def test_the_fields_of_the_least_recently_used_set_are_let_go() -> None:
    adapter = LIBRARY.load("openai")
    sets = [[ToolDef(f"tool_{i}", "A tool", NOTHING.parameters)] for i in range(KEPT_TOOL_SETS)]
    for tools in sets:
        await adapter.transform_request(request(tools))
    await adapter.transform_request(request(sets[0]))  # used again: kept
    assert adapter.tool_sets_transformed == KEPT_TOOL_SETS
    await adapter.transform_request(request([WEATHER]))  # one set too many: sets[1] goes
    await adapter.transform_request(request(sets[0]))
    assert adapter.tool_sets_transformed == KEPT_TOOL_SETS + 1
    await adapter.transform_request(request(sets[1]))
    assert adapter.tool_sets_transformed == KEPT_TOOL_SETS + 2


SPLIT = """
return {
  name = "split", version = "1", endpoint = "/x", headers = {},
  transform_tools = function(raw)
    local tools = json.decode(raw)
    return { tools = tools, tool_choice = "auto", n_tools = #tools }
  end,
  transform_request = function(raw)
    local req = json.decode(raw)
    local body = { saw_tools = req.tools ~= nil, question = req.messages[#req.messages].content }
    if req.question == "choose" then body.tool_choice = "none" end
    if req.question == "empty" then return {} end
    if req.question == "text" then return '{"as": "text"}' end
    return body
  end,
  transform_response = function(raw) return { content = raw } end,
}
"""


async def test_transform_request_gets_no_tools_and_its_body_gets_the_fields() -> None:
    adapter = LuaAdapter.from_source(SPLIT, "split.lua")
    body = json.loads(await adapter.transform_request(request(TOOLS, "a")))
    assert body["saw_tools"] is False
    assert [t["name"] for t in body["tools"]] == ["get_weather", "ping", "plan"]
    assert body["tool_choice"] == "auto" and body["n_tools"] == 3
    assert body["question"] == "a"
    # Without kept sets, the script gets the tools with the request, as a host that knows
    # nothing of transform_tools would give them.
    whole = LuaAdapter.from_source(SPLIT, "split.lua", keep_tool_sets=0)
    assert json.loads(await whole.transform_request(request(TOOLS)))["saw_tools"] is True


async def test_a_field_the_body_sets_itself_is_left_as_it_is() -> None:
    adapter = LuaAdapter.from_source(SPLIT, "split.lua")
    body = json.loads(await adapter.transform_request({**request(TOOLS), "question": "choose"}))
    assert body["tool_choice"] == "none"
    assert len(body["tools"]) == 3
    empty = json.loads(await adapter.transform_request({**request(TOOLS), "question": "empty"}))
    assert set(empty) == {"tools", "tool_choice", "n_tools"}
    text = json.loads(await adapter.transform_request({**request(TOOLS), "question": "text"}))
    assert text["as"] == "text" and text["n_tools"] == 3


@pytest.mark.parametrize(
    ("tools_fn", "request_fn", "where"),
    [
        ("function(raw) return json.array({1, 2}) end", "function(raw) return {} end", "tools"),
        ("function(raw) return 'not json' end", "function(raw) return {} end", "tools"),
        ("function(raw) return {} end", "function(raw) return json.array({1}) end", "request"),
    ],
)
async def test_a_transform_that_does_not_give_an_object_is_named(
    tools_fn: str, request_fn: str, where: str
) -> None:
    script = f"""
    return {{ name = "bad", version = "1", endpoint = "/x", headers = {{}},
      transform_tools = {tools_fn}, transform_request = {request_fn},
      transform_response = function(raw) return {{}} end }}
    """
    adapter = LuaAdapter.from_source(script, "bad.lua")
    with pytest.raises(AdapterOutputError, match=f"transform_{where}"):
        await adapter.transform_request(request(TOOLS))


KEEPS = """
local kept
return {
  name = "keeps", version = "1", endpoint = "/x", headers = {},
  transform_tools = function(raw)
    kept = json.decode(raw)
    return { tools = kept }
  end,
  transform_request = function(raw) return { n = 1 } end,
  transform_response = function(raw)
    -- Later, outside the transforms: change the tables it gave the host.
    kept[1].parameters.type = "changed later"
    kept[1].name = "renamed later"
    return {}
  end,
}
"""


async def test_tables_a_script_keeps_and_changes_later_reach_no_later_body() -> None:
    adapter = LuaAdapter.from_source(KEEPS, "keeps.lua")
    for _ in range(3):
        body = json.loads(await adapter.transform_request(request(TOOLS)))
        assert body["tools"][0]["name"] == "get_weather"
        assert body["tools"][0]["parameters"]["type"] == "object"
        await adapter.transform_response("{}")
    assert adapter.tool_sets_transformed == 1


WAITS = """
return {
  name = "waits", version = "1", endpoint = "/x", headers = {},
  transform_tools = function(raw)
    http_get("http://example.invalid/tools")
    return { tools = json.decode(raw) }
  end,
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
    whole = LuaAdapter.from_source(WAITS, "waits.lua", keep_tool_sets=0)

    async def http(method: str, url: str, body: str | None) -> tuple[str | None, int | str]:
        await asyncio.sleep(0.01)
        return "", 200

    changed = [ToolDef("other", "Another tool", WEATHER.parameters)]
    unified = [request(TOOLS, "one"), request(changed, "two"), request(TOOLS, "three")]
    bodies = await asyncio.gather(*(adapter.transform_request(u, http) for u in unified))
    for body, u in zip(bodies, unified, strict=True):
        assert json.loads(body) == json.loads(await whole.transform_request(u, http))
    assert [json.loads(b)["question"] for b in bodies] == ["one", "two", "three"]
