"""The tool table and tool execution: ownership, schema checks, timeouts, failures."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from hologram.sdk import ToolCall, ToolDef, ToolError
from hologram.stages import DuplicateToolError, StageHost, ToolTable

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city"],
    "additionalProperties": False,
}


def weather(args: dict) -> str:
    return f"sunny in {args['city']}"


def test_duplicate_tool_registration_is_refused_naming_the_owner() -> None:
    table = ToolTable()
    table.register(ToolDef("weather_today", "x", CITY, handler=weather), owner="weather")
    with pytest.raises(DuplicateToolError, match="already registered by 'weather'"):
        table.register(ToolDef("weather_today", "y", handler=weather), owner="other")


def test_owner_is_given_or_inferred_from_the_name_prefix() -> None:
    table = ToolTable()
    table.register(ToolDef("qq_send", "x", handler=weather))
    table.register(ToolDef("lookup", "x", handler=weather), owner="dictionary")
    table.register(ToolDef("calc_add", "x", handler=weather, owner="math"))
    assert table.owner_of("qq_send") == "qq"
    assert table.owner_of("lookup") == "dictionary"
    assert table.owner_of("calc_add") == "math"


def test_unregister_plugin_tools_removes_only_that_plugins_tools() -> None:
    table = ToolTable()
    table.register(ToolDef("qq_send", "x", handler=weather))
    table.register(ToolDef("qq_recall", "x", handler=weather))
    table.register(ToolDef("news_top", "x", handler=weather))
    assert sorted(table.unregister_plugin_tools("qq")) == ["qq_recall", "qq_send"]
    assert [t.name for t in table.tools()] == ["news_top"]


def test_an_invalid_parameters_schema_is_refused_at_registration() -> None:
    bad = {"type": "object", "properties": {"n": {"type": "nonsense"}}}
    with pytest.raises(ValueError, match="not a valid JSON schema"):
        ToolTable().register(ToolDef("bad_tool", "x", bad, handler=weather))


@pytest.fixture
def host() -> StageHost:
    return StageHost(lambda event: None, tool_timeout=lambda: 10.0)


async def test_invalid_arguments_become_a_correctable_tool_error(host: StageHost) -> None:
    called: list[dict] = []
    host.register_tool(ToolDef("weather_today", "x", CITY, handler=called.append))
    result = await host.execute(ToolCall("1", "weather_today", {"city": 3, "days": 0}))
    assert result.is_error and called == []
    assert 'city: 3 is not of type "string"' in result.content
    assert "days: 0 is less than the minimum of 1" in result.content
    assert json.dumps(CITY) in result.content  # the model sees the schema it must meet


async def test_the_missing_properties_of_one_place_are_named_on_one_line(host: StageHost) -> None:
    pair = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["a", "b"],
    }
    host.register_tool(ToolDef("pair", "x", pair, handler=weather))
    result = await host.execute(ToolCall("1", "pair", {}))
    assert result.is_error
    assert result.content.count("needs") == 1
    assert "- (the arguments object): needs 'a', 'b'\n" in result.content


async def test_arguments_that_were_not_json_are_answered_not_run(host: StageHost) -> None:
    host.register_tool(ToolDef("weather_today", "x", CITY, handler=weather))
    call = ToolCall("1", "weather_today", arguments_error="Expecting value at char 0")
    result = await host.execute(call)
    assert result.is_error and "not a JSON object" in result.content


async def test_an_unknown_tool_is_answered_with_the_tools_on_offer(host: StageHost) -> None:
    host.register_tool(ToolDef("weather_today", "x", CITY, handler=weather))
    result = await host.execute(ToolCall("1", "cmd_run", {}))
    assert result.is_error and "weather_today" in result.content


async def test_a_crashing_tool_gives_a_short_error_and_a_logged_traceback(
    host: StageHost, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(args: dict) -> str:
        raise KeyError("missing")

    host.register_tool(ToolDef("broken_tool", "x", handler=broken))
    with caplog.at_level(logging.ERROR):
        result = await host.execute(ToolCall("1", "broken_tool", {}))
    assert result.is_error and result.content == "tool broken_tool failed: KeyError: 'missing'"
    [record] = [r for r in caplog.records if r.exc_info]
    assert "broken" in "".join(__import__("traceback").format_tb(record.exc_info[2]))


async def test_a_tool_error_reaches_the_model_verbatim(host: StageHost) -> None:
    def refuse(args: dict) -> str:
        raise ToolError("no such file: a.txt")

    host.register_tool(ToolDef("files_read", "x", handler=refuse))
    result = await host.execute(ToolCall("1", "files_read", {}))
    assert result.is_error and result.content == "no such file: a.txt"


async def test_a_tool_past_its_own_timeout_is_abandoned(host: StageHost) -> None:
    async def slow(args: dict) -> str:
        await asyncio.Event().wait()
        return "never"

    host.register_tool(ToolDef("slow_tool", "x", handler=slow, timeout=0.01))
    result = await host.execute(ToolCall("1", "slow_tool", {}))
    assert result.is_error and "timed out after 0.01 s" in result.content


async def test_a_blocking_sync_tool_runs_off_the_event_loop(host: StageHost) -> None:
    # The handler blocks its thread until the loop, still free, sets the flag.
    import threading

    released = threading.Event()

    def blocking(args: dict) -> str:
        assert released.wait(10.0)
        return "done"

    host.register_tool(ToolDef("block_tool", "x", handler=blocking))
    task = asyncio.create_task(host.execute(ToolCall("1", "block_tool", {})))
    await asyncio.sleep(0)
    released.set()
    assert (await task).content == "done"


async def test_no_memory_and_cleaner_shape_only_what_memory_reads(host: StageHost) -> None:
    host.register_tool(ToolDef("secret_get", "x", handler=lambda a: "token=abc", no_memory=True))
    host.register_tool(
        ToolDef(
            "page_get",
            "x",
            handler=lambda a: {"content": "body", "html": "<b>body</b>"},
            cleaner=lambda text: json.loads(text)["content"],
        )
    )
    secret = await host.execute(ToolCall("1", "secret_get", {}))
    page = await host.execute(ToolCall("2", "page_get", {}))
    assert secret.content == "token=abc" and secret.memory_text is None
    assert json.loads(page.content)["html"] == "<b>body</b>" and page.memory_text == "body"
