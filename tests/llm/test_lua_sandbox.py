"""The Lua VM: what a script can and cannot reach, and the built-ins it gets."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from hologram.llm import (
    AdapterLibrary,
    LuaAdaptedProvider,
    LuaSandbox,
    LuaSandboxError,
    SourceConfig,
)
from hologram.llm.scripted_server import InProcessServer


def script(body: str) -> str:
    return "local M = {}\n" + body + "\nreturn M\n"


@pytest.fixture
def lua() -> LuaSandbox:
    return LuaSandbox("probe")


@pytest.mark.parametrize(
    ("code", "names"),
    [
        ('return os.execute("touch /tmp/hologram-pwned")', "os"),
        ('return io.open("/etc/passwd")', "io"),
        ('return require("os")', "require"),
        ('return package.loadlib("libc.so.6", "system")', "package"),
        ('return load("return 1")()', "load"),
        ('return dofile("/etc/passwd")', "dofile"),
        ('return loadfile("/etc/passwd")', "loadfile"),
        ("return debug.getinfo(1)", "debug"),
        ('return python.eval("1")', "python"),
        ("return string.dump(function() end)", "dump"),
        ("return rawset({}, 1, 2)", "rawset"),
        ("return collectgarbage()", "collectgarbage"),
    ],
)
def test_the_sandbox_refuses_escape_routes(lua: LuaSandbox, code: str, names: str) -> None:
    module = lua.load(script(f"function M.f() {code} end"), "escape.lua")
    with pytest.raises(LuaSandboxError) as caught:
        lua.call_sync(module.f)
    assert "escape.lua:2" in str(caught.value) and names in str(caught.value)
    # The runtime is unharmed: it still runs ordinary code afterwards.
    ok = lua.load("return function() return 1 + 1 end", "after.lua")
    assert lua.call_sync(ok) == 2


def test_python_objects_reachable_from_lua_expose_no_attributes(lua: LuaSandbox) -> None:
    module = lua.load(script("function M.f() return json.null.__class__ end"), "attr.lua")
    with pytest.raises(LuaSandboxError, match="may not access attributes"):
        lua.call_sync(module.f)


def test_precompiled_bytecode_is_refused(lua: LuaSandbox) -> None:
    with pytest.raises(LuaSandboxError, match="binary chunk"):
        lua.load("\x1bLua\x54\x00", "bytecode.lua")


def test_a_syntax_error_names_file_and_line(lua: LuaSandbox) -> None:
    with pytest.raises(LuaSandboxError, match=r"broken\.lua:3:"):
        lua.load("local a = 1\nlocal b = 2\nlocal c = = 3\n", "broken.lua")


def test_a_runaway_loop_is_stopped_by_the_instruction_limit() -> None:
    lua = LuaSandbox("spin", instruction_limit=1_000_000)
    module = lua.load(script("function M.f() while true do end end"), "spin.lua")
    with pytest.raises(LuaSandboxError, match="instruction limit exceeded"):
        lua.call_sync(module.f)


def test_memory_is_capped() -> None:
    lua = LuaSandbox("hog", max_memory=8 * 1024 * 1024)
    module = lua.load(
        script("function M.f() local t = {} for i = 1, 1e8 do t[i] = i end return #t end"),
        "hog.lua",
    )
    with pytest.raises(LuaSandboxError, match="not enough memory"):
        lua.call_sync(module.f)


def test_json_round_trips_unicode_nesting_and_empty_containers_exactly(lua: LuaSandbox) -> None:
    document = {
        "zh": "你好，世界 🌏",
        "escaped": 'quote " backslash \\ newline \n tab \t',
        "nested": {"list": [1, 2.5, [3, [4, {"deep": True}]]], "object": {"k": "v"}},
        "empty_array": [],
        "empty_object": {},
        "array_of_empties": [[], {}],
        "nulls_in_array": [1, None, 3],
        "false": False,
        "int": 9007199254740991,
    }
    module = lua.load(
        script("function M.f(raw) return json.encode(json.decode(raw)) end"), "round.lua"
    )
    assert json.loads(lua.call_sync(module.f, json.dumps(document))) == document


@pytest.mark.parametrize(
    "raw",
    [
        # No empty array and no null in one: converted whole, the arrays marked in Lua.
        '{"choices": [{"index": 0, "delta": {"content": "It "}, "finish_reason": null}]}',
        '[[1, 2], [3, [4, 5]], {"k": [6]}]',
        # The careful way: an empty array, a null in one, text that only looks like either.
        '{"tool_calls": [], "list": [[1], []], "done": false}',
        '{"list": [1, null, 3], "nested": [{"a": [2]}]}',
        '{"text": "[] and , null are only text here", "list": ["x"]}',
    ],
)
def test_every_decoded_array_is_marked_however_the_json_is_converted(
    lua: LuaSandbox, raw: str
) -> None:
    # Emptied by the script, a decoded array must still encode as [], not {}: only the
    # mark tells an empty array from an empty object.
    module = lua.load(
        script(
            "local function empty(t)\n"
            "  for _, v in pairs(t) do if type(v) == 'table' then empty(v) end end\n"
            "  if json.is_array(t) then for i = #t, 1, -1 do t[i] = nil end end\n"
            "  return t\n"
            "end\n"
            "function M.f(raw) return json.encode(empty(json.decode(raw))) end"
        ),
        "marks.lua",
    )

    def emptied(value: object) -> object:
        if isinstance(value, list):
            return []
        if isinstance(value, dict):
            return {k: emptied(v) for k, v in value.items() if v is not None}
        return value

    assert json.loads(lua.call_sync(module.f, raw)) == emptied(json.loads(raw))


def test_json_null_in_an_object_drops_the_key_and_in_an_array_keeps_its_place(
    lua: LuaSandbox,
) -> None:
    module = lua.load(
        script(
            "function M.f(raw) local t = json.decode(raw)\n"
            "  return tostring(t.gone == nil) .. tostring(t.list[2] == json.null) .. #t.list end"
        ),
        "null.lua",
    )
    assert lua.call_sync(module.f, '{"gone": null, "list": [1, null, 3]}') == "truetrue3"


def test_an_unmarked_empty_table_is_an_object_and_json_array_makes_an_empty_array(
    lua: LuaSandbox,
) -> None:
    module = lua.load(
        script("function M.f() return json.encode({o = {}, a = json.array(), l = {1, 2}}) end"),
        "empty.lua",
    )
    assert json.loads(lua.call_sync(module.f)) == {"o": {}, "a": [], "l": [1, 2]}


def test_json_errors_name_the_script_line(lua: LuaSandbox) -> None:
    module = lua.load(
        script("function M.f()\n  local t = json.decode('{nope')\n  return t\nend"), "bad.lua"
    )
    with pytest.raises(LuaSandboxError, match=r"bad\.lua:3: json\.decode: Expecting"):
        lua.call_sync(module.f)
    mixed = lua.load(script("function M.f() return json.encode({1, 2, x = 3}) end"), "mix.lua")
    with pytest.raises(LuaSandboxError, match="mixes array and object keys"):
        lua.call_sync(mixed.f)


def test_log_writes_into_the_kernel_log(lua: LuaSandbox, caplog: pytest.LogCaptureFixture) -> None:
    module = lua.load(
        script('function M.f() log("warn", "careful", 42) print("hi") end'), "talk.lua"
    )
    with caplog.at_level(logging.DEBUG, logger="hologram.lua"):
        lua.call_sync(module.f)
    messages = [
        (r.levelno, r.getMessage()) for r in caplog.records if r.name == "hologram.lua.probe"
    ]
    assert (logging.WARNING, "probe: careful 42") in messages
    assert (logging.DEBUG, "probe: hi") in messages


async def test_http_get_from_lua_does_not_block_the_event_loop(lua: LuaSandbox) -> None:
    """While a script waits on http_get, other tasks on the loop keep running: the server
    holds its answer until a task on the same loop releases it, which could never happen
    if the Lua call blocked the loop."""
    release = asyncio.Event()
    arrived = asyncio.Event()

    async def slow(request: Request) -> PlainTextResponse:
        arrived.set()
        await release.wait()
        return PlainTextResponse("released", status_code=201)

    async def echo(request: Request) -> PlainTextResponse:
        return PlainTextResponse((await request.body()).decode())

    app = Starlette(routes=[Route("/slow", slow), Route("/echo", echo, methods=["POST"])])
    async with InProcessServer(app) as http_server:
        provider = LuaAdaptedProvider(
            SourceConfig("s", "openai", http_server.url), AdapterLibrary().load("openai")
        )
        module = lua.load(
            script(
                "function M.f(base)\n"
                "  local body, status = http_get(base .. '/slow')\n"
                "  local echoed = http_post(base .. '/echo', {x = 1})\n"
                "  return body .. ' ' .. status .. ' ' .. echoed\n"
                "end"
            ),
            "fetch.lua",
        )
        call = asyncio.create_task(lua.call(module.f, http_server.url, http=provider._lua_http))
        async with asyncio.timeout(10):
            await arrived.wait()
        release.set()
        async with asyncio.timeout(10):
            assert await call == 'released 201 {"x": 1}'
        await provider.aclose()


async def test_http_get_failure_returns_nil_and_a_message(lua: LuaSandbox) -> None:
    provider = LuaAdaptedProvider(
        SourceConfig("s", "openai", "http://127.0.0.1:9"), AdapterLibrary().load("openai")
    )
    module = lua.load(
        script(
            "function M.f() local body, err = http_get('http://127.0.0.1:9/x')\n"
            "return tostring(body) .. '|' .. err end"
        ),
        "fail.lua",
    )
    result = await lua.call(module.f, http=provider._lua_http)
    assert result.startswith("nil|ConnectError")
    await provider.aclose()


def test_http_is_refused_while_a_script_loads(lua: LuaSandbox) -> None:
    with pytest.raises(LuaSandboxError, match="called http_get/http_post while loading"):
        lua.load("http_get('http://127.0.0.1:9/')\nreturn {}", "eager.lua")


async def test_a_host_function_runs_on_the_loop_and_its_answer_returns_to_the_script(
    lua: LuaSandbox,
) -> None:
    seen: list[tuple[str, list[object]]] = []

    async def host(name: str, args: list[object]) -> object:
        seen.append((name, args))
        if name == "boom":
            raise ValueError("refused on purpose")
        await asyncio.sleep(0)  # really asynchronous: the coroutine waits across a loop turn
        return {"echo": args}

    lua.set_global("host", {"echo": lua.host_function("echo"), "boom": lua.host_function("boom")})
    fn = lua.load(
        script(
            """
            function M.run(x)
              local answer = host.echo(x, nil, {k = 1})
              local ok, err = pcall(host.boom)
              return {answer = answer, ok = ok, err = err}
            end
            """
        ),
        "host.lua",
    ).run

    result = lua.to_python(await lua.call(fn, "hi", host=host))

    assert result == {
        "answer": {"echo": ["hi", None, {"k": 1}]},
        "ok": False,
        "err": "boom: refused on purpose",
    }
    assert [name for name, _ in seen] == ["echo", "boom"]


async def test_a_host_function_is_refused_while_loading_and_where_no_host_is_given(
    lua: LuaSandbox,
) -> None:
    lua.set_global("recall", lua.host_function("recall"))
    with pytest.raises(LuaSandboxError, match="called a host function while loading"):
        lua.load("recall('x')", "early.lua")

    fn = lua.load(script("function M.run() return recall('x') end"), "late.lua").run
    with pytest.raises(LuaSandboxError, match="recall is not available here"):
        await lua.call(fn)


# ---- calls run in workers kept from one call to the next ----------------------------------

WORKERS = script(
    """
    function M.same_as_before()
      local now = coroutine.running()
      local same = now == M.last
      M.last = now
      return same
    end
    function M.spin_for(n) local i = 0 while i < n do i = i + 1 end return i end
    function M.yield_out() coroutine.yield("mine") end
    """
)


def test_consecutive_calls_run_in_the_same_worker(lua: LuaSandbox) -> None:
    module = lua.load(WORKERS, "workers.lua")
    lua.call_sync(module.same_as_before)
    assert lua.call_sync(module.same_as_before) is True
    assert lua.call_sync(module.same_as_before) is True


def test_a_reused_worker_gives_every_call_its_whole_budget() -> None:
    """The budget is counted per call: a call that ran out leaves the next one nothing
    spent, and calls that each stay under the limit never add up to it."""
    lua = LuaSandbox("budget", instruction_limit=2_000_000)
    module = lua.load(WORKERS, "workers.lua")
    with pytest.raises(LuaSandboxError, match="instruction limit exceeded"):
        lua.call_sync(module.spin_for, 10_000_000)
    # Each of these takes well over half the limit: shared, the second would fail.
    for _ in range(3):
        assert lua.call_sync(module.spin_for, 300_000) == 300_000


async def test_a_call_that_yields_out_of_turn_is_refused_and_its_worker_never_reused(
    lua: LuaSandbox,
) -> None:
    module = lua.load(WORKERS, "workers.lua")
    lua.call_sync(module.same_as_before)
    with pytest.raises(LuaSandboxError, match="yielded outside http_get/http_post"):
        await lua.call(module.yield_out)
    # The worker left suspended inside yield_out is dropped: the next call gets another.
    assert lua.call_sync(module.same_as_before) is False
    assert lua.call_sync(module.same_as_before) is True


async def test_calls_waiting_on_http_at_once_each_have_a_worker_of_their_own(
    lua: LuaSandbox,
) -> None:
    release = asyncio.Event()

    async def http(method: str, url: str, body: str | None) -> tuple[str | None, int | str]:
        await release.wait()
        return url, 200

    module = lua.load(
        script(
            """
            function M.fetch(n)
              local me = coroutine.running()
              local body = http_get("http://x/" .. n)
              return body .. " " .. tostring(me == coroutine.running()) .. " " .. tostring(me)
            end
            """
        ),
        "overlap.lua",
    )
    first = asyncio.ensure_future(lua.call(module.fetch, "1", http=http))
    second = asyncio.ensure_future(lua.call(module.fetch, "2", http=http))
    await asyncio.sleep(0)
    release.set()
    one, two = await first, await second
    assert one.startswith("http://x/1 true") and two.startswith("http://x/2 true")
    assert one.split()[-1] != two.split()[-1]  # two workers, not one shared
