"""Bad input at the provider: broken adapters, bad bodies, HTTP errors, hangs, cancellation."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hologram.llm import (
    AdapterError,
    AdapterLibrary,
    AdapterOutputError,
    ChatMessage,
    CompletionRequest,
    FailureKind,
    LuaAdapter,
    ProviderError,
    ScriptedModelServer,
    ScriptedReply,
)

HELLO = CompletionRequest([ChatMessage.user("hello")])

GOOD_HEAD = """
local adapter = {name = "%s", version = "0.1", endpoint = "/chat/completions", headers = {}}
function adapter.transform_request(raw) return raw end
"""


def write_adapter(directory: Path, name: str, source: str) -> AdapterLibrary:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.lua").write_text(source, encoding="utf-8")
    return AdapterLibrary(user_dir=directory)


def test_an_adapter_with_a_syntax_error_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    library = write_adapter(tmp_path, "broken", "local adapter = {\nname = 'broken',,\n}\n")
    with pytest.raises(AdapterError) as caught:
        library.load("broken")
    message = str(caught.value)
    assert "broken.lua:2:" in message and str(tmp_path / "broken.lua") in message


def test_an_adapter_missing_transform_response_is_refused_naming_what_is_missing(
    tmp_path: Path,
) -> None:
    library = write_adapter(tmp_path, "half", GOOD_HEAD % "half" + "return adapter\n")
    with pytest.raises(AdapterError, match=r"missing transform_response \(a function\)"):
        library.load("half")


def test_every_contract_problem_is_listed_at_once(tmp_path: Path) -> None:
    library = write_adapter(
        tmp_path, "sloppy", "return {name = 'sloppy', endpoint = 'chat', headers = {x = 1}}"
    )
    with pytest.raises(AdapterError) as caught:
        library.load("sloppy")
    message = str(caught.value)
    for problem in (
        "missing version",
        "endpoint must start with '/'",
        "headers must be a table of string values",
        "missing transform_request",
        "missing transform_response",
    ):
        assert problem in message


def test_an_unknown_adapter_lists_the_available_ones() -> None:
    with pytest.raises(
        AdapterError, match="no such adapter; available: anthropic, azure_openai, deepseek"
    ):
        AdapterLibrary().find("openia")


def test_a_user_adapter_overrides_the_shipped_one(tmp_path: Path) -> None:
    shipped = (AdapterLibrary().find("openai")).read_text()
    library = write_adapter(
        tmp_path, "openai", shipped.replace("headers = {},", 'headers = {["x-mine"] = "1"},')
    )
    assert library.find("openai") == tmp_path / "openai.lua"
    assert library.load("openai").headers == {"x-mine": "1"}


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ('os.execute("touch /tmp/hologram-pwned")', "global 'os'"),
        ('io.open("/etc/passwd")', "global 'io'"),
        ('require("socket")', "global 'require'"),
    ],
)
async def test_an_adapter_reaching_for_the_system_is_refused_and_nothing_runs(
    tmp_path: Path, server: ScriptedModelServer, make_provider, call: str, expected: str
) -> None:
    source = (
        'local adapter = {name = "evil", version = "1", endpoint = "/chat/completions", '
        "headers = {}}\n"
        f"function adapter.transform_request(raw) {call} return raw end\n"
        "function adapter.transform_response(raw) return raw end\nreturn adapter\n"
    )
    adapter = LuaAdapter.from_source(source, "evil.lua")
    with pytest.raises(AdapterError, match=expected):
        await adapter.transform_request({"messages": []})
    assert not Path("/tmp/hologram-pwned").exists()  # noqa: ASYNC240 (one stat, in a test)
    assert server.requests == []  # no request left the building
    # And at load time the same calls fail the load, naming the file.
    with pytest.raises(AdapterError, match=r"evil_load\.lua:1:"):
        LuaAdapter.from_source(call + "\nreturn {}", "evil_load.lua")


async def test_transform_response_returning_non_json_names_adapter_and_field() -> None:
    adapter = LuaAdapter.from_source(
        GOOD_HEAD % "liar" + "function adapter.transform_response(raw) return 'oops' end\n"
        "return adapter\n",
        "liar.lua",
    )
    with pytest.raises(AdapterOutputError) as caught:
        await adapter.transform_response("{}")
    assert caught.value.adapter == "liar" and caught.value.function == "transform_response"
    assert "'(result)'" in str(caught.value) and "a table or JSON text" in str(caught.value)


@pytest.mark.parametrize(
    ("returned", "field"),
    [
        ("{content = 5}", "content"),
        ("{tool_calls = 'call it'}", "tool_calls"),
        ("{tool_calls = {{arguments = '{}'}}}", "tool_calls[0].name"),
        ("{token_usage = {prompt_tokens = -3}}", "token_usage.prompt_tokens"),
        ("json.array({1, 2})", "(result)"),
    ],
)
async def test_transform_response_of_the_wrong_shape_names_adapter_and_field(
    server: ScriptedModelServer, returned: str, field: str
) -> None:
    from hologram.llm import LuaAdaptedProvider, SourceConfig

    adapter = LuaAdapter.from_source(
        GOOD_HEAD % "shapeless"
        + f"function adapter.transform_response(raw) return {returned} end\nreturn adapter\n",
        "shapeless.lua",
    )
    provider = LuaAdaptedProvider(SourceConfig("s", "shapeless", server.base_url), adapter)
    server.queue(ScriptedReply(text="fine"))
    with pytest.raises(ProviderError) as caught:
        await provider.chat(HELLO)
    await provider.aclose()
    assert caught.value.kind is FailureKind.BAD_RESPONSE
    assert "adapter 'shapeless'" in str(caught.value)
    assert f"at {field!r}" in str(caught.value)


async def test_malformed_tool_arguments_are_the_models_mistake_not_the_sources(
    server: ScriptedModelServer, make_provider
) -> None:
    body = (
        '{"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": '
        '"c1", "type": "function", "function": {"name": "get_weather", "arguments": '
        '"{city: Paris"}}]}, "finish_reason": "tool_calls"}]}'
    )
    server.queue(ScriptedReply(body=body))
    response = await make_provider("openai", server.base_url).chat(HELLO)
    [call] = response.tool_calls
    assert call.arguments == {} and call.arguments_error is not None
    assert "not valid JSON" in call.arguments_error and "{city: Paris" in call.arguments_error


async def test_an_http_body_that_is_not_json_is_a_bad_response(server, make_provider) -> None:
    server.queue(ScriptedReply(body="<html>502 Bad Gateway</html>", content_type="text/html"))
    with pytest.raises(ProviderError) as caught:
        await make_provider("openai", server.base_url).chat(HELLO)
    assert caught.value.kind is FailureKind.BAD_RESPONSE
    assert "the HTTP body is not JSON" in str(caught.value)
    assert "<html>502 Bad Gateway</html>" in str(caught.value)


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, FailureKind.AUTH),
        (403, FailureKind.AUTH),
        (429, FailureKind.RATE_LIMITED),
        (500, FailureKind.SERVER),
        (503, FailureKind.SERVER),
        (400, FailureKind.REJECTED),
    ],
)
async def test_http_error_statuses_are_classified(
    server, make_provider, status: int, kind: FailureKind
) -> None:
    server.queue(ScriptedReply(status=status, text="scripted failure"))
    with pytest.raises(ProviderError) as caught:
        await make_provider("openai", server.base_url).chat(HELLO)
    assert caught.value.kind is kind and caught.value.status == status
    assert f"HTTP {status}" in str(caught.value) and "scripted failure" in str(caught.value)


async def test_a_refused_connection_is_a_connection_failure(make_provider) -> None:
    with pytest.raises(ProviderError) as caught:
        await make_provider("openai", "http://127.0.0.1:9/v1").chat(HELLO)
    assert caught.value.kind is FailureKind.CONNECTION


async def test_a_hanging_server_times_out(server: ScriptedModelServer, make_provider) -> None:
    server.queue(ScriptedReply(text="too late", delay=30))
    provider = make_provider("openai", server.base_url, timeout_s=0.3)
    with pytest.raises(ProviderError) as caught:
        await provider.chat(HELLO)
    assert caught.value.kind is FailureKind.TIMEOUT
    # Giving up closed the connection: the server saw the client leave.
    async with asyncio.timeout(5):
        await server.wait_for_disconnect()


async def test_cancelling_a_chat_closes_the_connection_at_once(
    server: ScriptedModelServer, make_provider
) -> None:
    """The server would answer after 10 s; it sees the connection close long before."""
    server.queue(ScriptedReply(text="never read", delay=10))
    provider = make_provider("openai", server.base_url)
    call = asyncio.create_task(provider.chat(HELLO))
    async with asyncio.timeout(5):
        await server.wait_for_requests(1)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    async with asyncio.timeout(5):  # a deadline for the test, not a measurement
        await server.wait_for_disconnect()
    assert server.disconnects == 1


async def test_cancelling_a_stream_closes_the_connection(
    server: ScriptedModelServer, make_provider
) -> None:
    server.queue(ScriptedReply(text="one two three four five six", chunk_delay=10))
    provider = make_provider("openai", server.base_url)
    stream = provider.chat_stream(CompletionRequest([ChatMessage.user("hi")]))
    first = await anext(stream)
    assert first.content == "one "  # the next piece would come 10 s later
    await stream.aclose()
    async with asyncio.timeout(5):
        await server.wait_for_disconnect()
