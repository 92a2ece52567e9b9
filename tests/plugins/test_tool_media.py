"""A subprocess plugin's tool returns an image (base64 in its JSON-RPC result); the kernel
stores it and the next model request shows it. The model is reached through the Ollama
adapter, whose wire format carries images in tool messages (`images`)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.agent.loop import LoopFrame, LoopParts, ToolLoop
from hologram.llm import ChatMessage, ScriptedModelServer
from hologram.plugins import PluginRegistry
from hologram.sdk import ToolCall, ToolDef, ToolOutput

from ..llm.sdk_types import check_request

CHART = """
    import io
    from PIL import Image
    from hologram.plugins.runtime import PluginApp, tool_media

    app = PluginApp()

    def chart_png():
        out = io.BytesIO()
        Image.new("RGB", (24, 12), "purple").save(out, "PNG")
        return out.getvalue()

    @app.tool("Draw the sales chart.")
    def chart_draw(args):
        return tool_media("the sales chart", (chart_png(), "image/png"))

    @app.tool("Return text claiming to be an image.")
    def chart_lie(args):
        return tool_media("a lie", (b"just text", "image/png"))

    @app.tool("Return media that is not base64.")
    def chart_garbled(args):
        return {"text": "x", "media": [{"type": "image/png", "data": "%%%not base64%%%"}]}

    app.run()
"""


@pytest.fixture
async def ollama_kernel(data_dir: Path, model: ScriptedModelServer) -> AsyncIterator[Kernel]:
    environ = {
        "HOLOGRAM_LLM_BASE_URL": model.url,
        "HOLOGRAM_LLM_MODEL": "scripted-model",
        "HOLOGRAM_LLM_ADAPTER": "ollama",
        "HOLOGRAM_LLM_API_KEY": "",
    }
    async with Kernel(data_dir, environ=environ) as running:
        # Ollama serves vision and text-only models alike: the source says which it is.
        await running.config.set("core.llm.sources.default.accepts_images", True)
        yield running


@pytest.fixture
async def chart(ollama_kernel: Kernel, write_plugin: Callable[..., Path]) -> PluginRegistry:
    registry = ollama_kernel.state.plugins
    assert registry is not None
    await registry.load_dir(write_plugin("chart", CHART))
    return registry


async def test_a_plugin_tool_image_reaches_the_next_model_request(
    chart: PluginRegistry, ollama_kernel: Kernel, model: ScriptedModelServer
) -> None:
    model.queue_tool_call("chart_draw", {}, call_id="c1").queue_text("Sales are up.")
    agent = ollama_kernel.state.agent
    assert agent is not None

    result = await ollama_kernel.inputs.say("show me the sales chart")

    assert result.reply.startswith("Sales are up.")
    (tool_result,) = result.tool_results
    (ref,) = tool_result.media
    media = ollama_kernel.state.media
    assert media is not None and ref.mime == "image/png" and (ref.width, ref.height) == (24, 12)
    body = model.requests[-1].json
    check_request("ollama", body)
    tool = next(m for m in body["messages"] if m["role"] == "tool")
    assert tool["content"].startswith("the sales chart")
    assert tool["images"] == [base64.b64encode(media.get(ref.digest)).decode()]


@pytest.mark.parametrize(
    ("tool", "reason"),
    [
        ("chart_lie", "declared image/png, but the bytes are text/plain"),
        ("chart_garbled", "base64"),
    ],
)
async def test_bad_plugin_media_is_an_error_result_and_nothing_is_stored(
    chart: PluginRegistry, ollama_kernel: Kernel, tool: str, reason: str
) -> None:
    media = ollama_kernel.state.media
    assert media is not None
    before = set(media.digests())

    result = await ollama_kernel.state.stagehost.execute(ToolCall("c", tool, {}))

    assert result.is_error and reason in result.content and result.media == ()
    assert set(media.digests()) == before


def tiny_png() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (3, 2), "orange").save(out, "PNG")
    return out.getvalue()


LUA_CHART = """
sdk.register_tool("lua_chart", "Return a tiny chart.", nil, function(args)
  return {text = "a tiny chart", media = {{type = "image/png", data = "%s"}}}
end)
"""


async def test_a_lua_tool_returns_an_image_with_its_result(
    ollama_kernel: Kernel, write_plugin: Callable[..., Path]
) -> None:
    registry = ollama_kernel.state.plugins
    media = ollama_kernel.state.media
    assert registry is not None and media is not None
    encoded = base64.b64encode(tiny_png()).decode()
    await registry.load_dir(
        write_plugin("luachart", LUA_CHART % encoded, entry="main.lua", capabilities=["tools"])
    )

    result = await ollama_kernel.state.stagehost.execute(ToolCall("c", "lua_chart", {}))

    assert not result.is_error and result.content.startswith("a tiny chart")
    (ref,) = result.media
    assert media.get(ref.digest) == tiny_png() and (ref.width, ref.height) == (3, 2)


async def test_the_plain_tool_loop_of_residents_shows_tool_media_too(
    ollama_kernel: Kernel, model: ScriptedModelServer
) -> None:
    agent = ollama_kernel.state.agent
    assert agent is not None
    image = tiny_png()

    def snap() -> ToolOutput:
        """Take a snapshot."""
        return ToolOutput("snapshot", (image,))

    tool = ToolDef.from_function(snap)
    loop = ToolLoop(
        "resident-test",
        LoopParts(agent.model, agent.runner, agent.events.emit, agent.tasks),
        lambda: {tool.name: tool},
        lambda: 3,
    )
    model.queue_tool_call("snap", {}, call_id="t1").queue_text("seen")

    answer = await loop.run(LoopFrame([ChatMessage.user("take a snapshot")]))

    assert answer == "seen"
    tool_message = next(m for m in model.requests[-1].json["messages"] if m["role"] == "tool")
    assert tool_message["images"] == [base64.b64encode(image).decode()]
