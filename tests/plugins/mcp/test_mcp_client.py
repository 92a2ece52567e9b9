"""The MCP client plugin against real servers built with the official SDK: tools listed with
their schemas, a call round-trips, list_changed adds a tool, a killed server gives a tool
error and comes back, a hung one times out and is restarted, a malformed frame harms nothing,
HTTP with a secret header, resources, prompts, image content.

Each test starts the plugin and its servers (the SDK's import alone takes a second), so a
test holds several rules of one situation rather than one rule each."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from hologram.notebook.magics import _mcp_table
from hologram.sdk import EventType
from tests.agent.conftest import Recorder
from tests.plugins.conftest import wait_for

from .conftest import (
    HttpServer,
    call,
    ok,
    ready_again,
    server_state,
    start_mcp,
    status,
    stdio,
    tools,
)

TOKEN = "lab-token-8c1d77e2"


async def test_a_stdio_servers_tools_resources_and_prompts_reach_the_model(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    os.environ["HANDS_KERNEL_ONLY_TOKEN"] = "kernel-only-1234"
    try:
        await kernel.config.set("core.security.credential.lab_token.secret", TOKEN)
        await start_mcp(kernel, {"lab": stdio(env={"LAB_TOKEN": "@{lab_token}"})})
    finally:
        del os.environ["HANDS_KERNEL_ONLY_TOKEN"]
    offered = set(tools(kernel))
    assert {
        "mcp__lab__add",
        "mcp__lab__lookup",
        "mcp__lab__resources",
        "mcp__lab__prompts",
    } <= offered
    state = server_state(kernel, "lab")
    assert state["state"] == "ready" and state["transport"] == "stdio"

    # schemas, cleaned for a model's wire: no $ref/$defs/titles, nullable made optional
    lookup = kernel.state.stagehost.tools.get("mcp__lab__lookup")
    assert lookup is not None and lookup.owner == "mcp"
    text = json.dumps(lookup.parameters)
    assert "$ref" not in text and "$defs" not in text and '"title"' not in text
    assert lookup.parameters["properties"]["query"]["properties"]["word"]["type"] == "string"
    assert lookup.parameters["properties"]["note"] == {"type": "string"}
    assert lookup.optional == frozenset({"note"}), "a nullable parameter may be sent as null"
    assert lookup.description.endswith("(MCP server 'lab')")
    assert await ok(kernel, "mcp__lab__lookup", query={"word": "kite"}, note=None) == "kite:3:None"

    # a call from the model round-trips; a failing tool is the model's error
    model.queue_tool_call("mcp__lab__add", {"a": 2, "b": 40}).queue_text("it is 42")
    reply = await kernel.say("add them", "test")
    [message] = [m for m in model.requests[-1].json["messages"] if m["role"] == "tool"]
    assert message["content"] == "42" and reply.startswith("it is 42")
    [add] = [t for t in model.requests[0].json["tools"] if t["function"]["name"] == "mcp__lab__add"]
    assert add["function"]["parameters"]["required"] == ["a", "b"]
    failed = await call(kernel, "mcp__lab__fail")
    assert failed.is_error and "the shelf is empty" in failed.content

    # resources, prompts, and an image kept as text with a note
    [note] = json.loads(await ok(kernel, "mcp__lab__resources"))
    assert note["uri"] == "note://hello"
    assert await ok(kernel, "mcp__lab__resources", uri="note://hello") == "hello from the note"
    [greet] = json.loads(await ok(kernel, "mcp__lab__prompts"))
    assert greet["arguments"] == [{"name": "name", "required": True}]
    prompt = await ok(kernel, "mcp__lab__prompts", name="greet", arguments={"name": "Ann"})
    assert prompt == "user: Say hello to Ann, warmly."
    image = await ok(kernel, "mcp__lab__image")
    assert image.startswith("[image image/png") and "no media store yet" in image

    # the server's environment: its configured secret, filled in; none of the kernel's
    assert await ok(kernel, "mcp__lab__env", name="LAB_TOKEN") == "@{lab_token}"  # masked
    await kernel.config.set("core.security.enabled", False)
    assert await ok(kernel, "mcp__lab__env", name="LAB_TOKEN") == TOKEN
    assert await ok(kernel, "mcp__lab__env", name="HANDS_KERNEL_ONLY_TOKEN") == "unset"


async def test_list_changed_adds_the_new_tool(kernel: Kernel) -> None:
    await start_mcp(kernel, {"lab": stdio()})
    assert "mcp__lab__extra" not in tools(kernel)
    assert await ok(kernel, "mcp__lab__grow") == "grown"
    await wait_for(lambda: "mcp__lab__extra" in tools(kernel), "the new tool is offered")
    assert await ok(kernel, "mcp__lab__extra", text="abc") == "cba"


async def test_a_server_killed_mid_call_gives_a_tool_error_is_announced_and_comes_back(
    kernel: Kernel, events: Recorder, tmp_path: Path
) -> None:
    await start_mcp(kernel, {"lab": stdio(timeout_s=60)})
    pid = int(await ok(kernel, "mcp__lab__pid"))
    started = tmp_path / "started"
    pending = asyncio.ensure_future(
        call(kernel, "mcp__lab__slow", seconds=60, started=str(started))
    )
    await wait_for(started.exists, "the call is running in the server")
    os.kill(pid, signal.SIGKILL)
    result = await asyncio.wait_for(pending, 30)  # not its 60 s timeout: the death is seen
    assert result.is_error and "went away during tool slow" in result.content

    def warnings() -> list[str]:
        return [
            e.payload.message
            for e in events.of(EventType.PLUGIN_STATUS)
            if e.payload.plugin == "mcp" and e.payload.level == "warning"
        ]

    await wait_for(warnings, "the loss is announced")
    assert "its tools are withdrawn, reconnecting" in warnings()[0]
    await ready_again(kernel, "lab", restarts=1)
    assert int(await ok(kernel, "mcp__lab__pid")) != pid
    assert await ok(kernel, "mcp__lab__add", a=1, b=1) == "2"


async def test_a_server_that_never_answers_times_out_and_is_restarted(kernel: Kernel) -> None:
    # The down time between the withdrawal and the restart is what the middle of the test
    # looks at: it is made long enough that a loaded machine does not restart the server
    # before the test has seen it withdrawn.
    await start_mcp(kernel, {"lab": stdio(timeout_s=0.5)}, **{"plugin.mcp.restart_backoff_s": 3.0})
    result = await call(kernel, "mcp__lab__block")
    assert result.is_error and "did not answer tool block within 0.5 s" in result.content
    await wait_for(lambda: "mcp__lab__add" not in tools(kernel), "its tools are withdrawn")
    assert "hung" in server_state(kernel, "lab")["error"]
    unavailable = await call(kernel, "mcp__lab__add", a=1, b=2)
    assert unavailable.is_error and "is not available" in unavailable.content
    await ready_again(kernel, "lab", restarts=1)
    assert await ok(kernel, "mcp__lab__add", a=2, b=2) == "4"


async def test_a_malformed_frame_from_a_server_harms_nothing(kernel: Kernel) -> None:
    await start_mcp(kernel, {"lab": stdio()})
    assert await ok(kernel, "mcp__lab__garble") == "garbled"
    assert await ok(kernel, "mcp__lab__add", a=3, b=4) == "7"
    state = server_state(kernel, "lab")
    assert state["bad_frames"] == 2 and state["restarts"] == 0
    assert kernel.state.plugins is not None and kernel.state.plugins.get("mcp").state == "running"


async def test_a_streamable_http_server_gets_its_secret_header_and_comes_back_after_a_crash(
    kernel: Kernel, http_server: HttpServer
) -> None:
    await kernel.config.set("core.security.credential.lab_token.secret", TOKEN)
    server = {"url": http_server.url, "headers": {"Authorization": "Bearer @{lab_token}"}}
    await start_mcp(kernel, {"web": server})
    assert server_state(kernel, "web")["transport"] == "http"
    assert await ok(kernel, "mcp__web__add", a=20, b=22) == "42"
    # What the model reads is masked again by the firewall ...
    assert await ok(kernel, "mcp__web__header") == "Bearer @{lab_token}"
    assert TOKEN not in json.dumps(kernel.config.get("plugin.mcp.servers")), "stored as alias"
    # ... and with the firewall off, the value the server really got shows.
    await kernel.config.set("core.security.enabled", False)
    assert await ok(kernel, "mcp__web__header") == f"Bearer {TOKEN}"
    await kernel.config.set("core.security.enabled", True)
    http_server.kill()
    await wait_for(lambda: "mcp__web__add" not in tools(kernel), "withdrawn when it died")
    await http_server.start()
    await ready_again(kernel, "web", restarts=1)
    assert await ok(kernel, "mcp__web__add", a=1, b=2) == "3"


async def test_bad_or_missing_servers_are_refused_with_the_reason_and_others_start(
    kernel: Kernel,
) -> None:
    servers = {
        "no way": stdio(),
        "both": {"command": "x", "url": "http://127.0.0.1:1/mcp"},
        "typo": {"comand": "x"},
        "gone": {"command": "/nonexistent/mcp-server"},
        "lab": stdio(),
    }
    await start_mcp(kernel, servers)
    refused = status(kernel)["refused"]
    assert "becomes part of tool names" in refused["no way"]
    assert "either 'command'" in refused["both"]
    assert "unknown field(s) ['comand']" in refused["typo"]
    assert server_state(kernel, "lab")["state"] == "ready"
    # A server that cannot start offers nothing and keeps being retried, announced.
    assert not tools(kernel, "mcp__gone__")
    await wait_for(lambda: server_state(kernel, "gone").get("restarts", 0) >= 2, "retried")
    assert "could not start: there is no program" in server_state(kernel, "gone")["error"]
    # `%hologram mcp` shows the same report
    table = _mcp_table(status(kernel)).splitlines()
    assert table[0].split() == ["server", "transport", "state", "restarts", "tools"]
    assert any(line.split()[:3] == ["lab", "stdio", "ready"] for line in table)
    assert any(line.startswith("typo") and "refused: unknown field" in line for line in table)


async def test_a_server_added_to_the_settings_starts_and_one_removed_stops(kernel: Kernel) -> None:
    await start_mcp(kernel, {"lab": stdio()})
    await kernel.config.set("plugin.mcp.servers", {"other": stdio()})
    await wait_for(lambda: "mcp__other__add" in tools(kernel), "the new server's tools")
    await wait_for(lambda: not tools(kernel, "mcp__lab__"), "the removed server's tools go")
    assert list(status(kernel)["servers"]) == ["other"]
