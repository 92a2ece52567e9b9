"""JSON-RPC frames are read under limits where they enter: a lone surrogate is refused with
the field named, nesting and huge numbers are reported, and the session goes on."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from hologram import Kernel
from hologram.kernel import KernelTasks
from hologram.plugins import PluginRegistry, State
from hologram.plugins.rpc import INVALID_PARAMS, Peer, RpcError
from hologram.sdk import EventType, ToolCall

from .conftest import Recorder, of, wait_for

RAW = """
    import asyncio
    from hologram.plugins.runtime import PluginApp

    app = PluginApp()

    @app.tool("Send a raw frame.", {
        "type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]})
    async def raw_send(args):
        text = {
            "surrogate": '{"text": "probe \\\\ud800 x", "channel": "test"}',
            "deep": '{"text": ' + "[" * 100000 + "]" * 100000 + "}",
            "huge": '{"text": ' + "9" * 5000 + "}",
        }[args["kind"]]
        answer = asyncio.get_running_loop().create_future()
        app.peer._pending[4242] = answer
        frame = '{"jsonrpc":"2.0","id":4242,"method":"sdk.inject","params":' + text + "}"
        app.peer._writer.write(frame.encode() + b"\\n")
        if args["kind"] != "surrogate":
            return "sent"
        try:
            return f"accepted: {await answer}"
        except Exception as exc:
            return f"refused: {exc}"

    @app.tool("Inject good text.")
    async def raw_good(args):
        return str(await app.sdk.call("sdk.inject", text="a good input", channel="test"))

    app.run()
"""


@pytest.fixture
async def raw(
    registry: PluginRegistry, kernel: Kernel, write_plugin: Callable[..., Path]
) -> PluginRegistry:
    await registry.load_dir(write_plugin("raw", RAW, capabilities=["tools", "inject"]))
    return registry


async def call(kernel: Kernel, name: str, **arguments: object) -> str:
    result = await kernel.state.stagehost.execute(ToolCall("c", name, arguments))
    return result.content


async def test_a_call_holding_a_lone_surrogate_is_refused_naming_the_field(
    raw: PluginRegistry, kernel: Kernel, events: Recorder
) -> None:
    answer = await call(kernel, "raw_send", kind="surrogate")
    assert answer.startswith("refused: frame refused: params.text holds a lone surrogate")
    good = int(await call(kernel, "raw_good"))
    assert await kernel.inputs.journal.counts() in ({"queued": 1}, {"running": 1}, {"done": 1})
    record = await kernel.inputs.journal.get(good)
    assert record is not None and record["text"] == "a good input"
    assert "lone surrogate" in of(events, EventType.PLUGIN_RPC_ERROR, "raw")[0].payload.error


async def test_deep_nesting_and_huge_numbers_in_a_frame_are_reported_and_it_keeps_serving(
    raw: PluginRegistry, kernel: Kernel, events: Recorder
) -> None:
    assert await call(kernel, "raw_send", kind="deep") == "sent"
    assert await call(kernel, "raw_send", kind="huge") == "sent"
    await wait_for(lambda: len(of(events, EventType.PLUGIN_RPC_ERROR, "raw")) >= 2, "reported")
    errors = [e.payload.error for e in of(events, EventType.PLUGIN_RPC_ERROR, "raw")]
    assert any("deeper than 128 levels" in e for e in errors), errors
    assert any("a number of 5000 characters" in e for e in errors), errors
    assert raw.get("raw").state is State.RUNNING
    assert int(await call(kernel, "raw_good")) >= 1
    assert set(await kernel.inputs.journal.counts()) <= {"queued", "running", "done"}


@pytest.fixture
async def kernel_end(
    tasks: KernelTasks,
) -> AsyncIterator[tuple[Peer, asyncio.StreamReader, asyncio.StreamWriter]]:
    """A kernel-side Peer on one end of a socket pair; the test writes and reads the other."""
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    peer_reader, peer_writer = await asyncio.open_connection(sock=theirs)

    async def dispatch(method: str, params: dict[str, Any]) -> Any:
        return params.get("text", "")

    peer = Peer(
        peer_reader,
        peer_writer,
        dispatch,
        name="kernel",
        on_bad_frame=lambda why: None,
        tasks=tasks.scope("kernel"),
    )
    async with asyncio.TaskGroup() as group:
        serving = group.create_task(peer.serve())
        yield peer, reader, writer
        serving.cancel()
        writer.close()
        peer_writer.close()


async def test_an_answer_holding_a_lone_surrogate_fails_the_call_it_answers(
    kernel_end: tuple[Peer, asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    peer, reader, writer = kernel_end

    async def answer_it() -> None:
        request = json.loads(await reader.readline())
        writer.write(b'{"jsonrpc":"2.0","id":%d,"result":["ok","\\udfff"]}\n' % request["id"])
        await writer.drain()

    async with asyncio.TaskGroup() as group:
        group.create_task(answer_it())
        with pytest.raises(RpcError) as refused:
            await peer.call("tool.call", {"name": "x"})
    assert refused.value.code == INVALID_PARAMS
    assert "result[1] holds a lone surrogate (\\udfff" in refused.value.message


async def test_a_lone_surrogate_going_out_is_sent_as_the_replacement_character(
    kernel_end: tuple[Peer, asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    peer, reader, _ = kernel_end
    peer.notify("event", {"text": "a\ud800b"})
    line = await reader.readline()
    assert json.loads(line.decode("utf-8"))["params"]["text"] == "a\ufffdb"
