"""Through a whole kernel, its model the scripted server over real HTTP: a source set to read
no images (`core.llm.sources.<name>.accepts_images = false`) is sent a note naming each image
and the seemedia call, never the image and never an error, and the kernel's bus says so; in
the same fallback order a source that reads images is sent the image itself."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.llm import (
    ChatMessage,
    CompletionRequest,
    ImageBlock,
    ProviderManager,
    ScriptedModelServer,
    ScriptedReply,
    TextBlock,
)
from hologram.sdk import Event, EventType, ToolCall, ToolResult

from .golden import collect
from .goldens import CHART

DEADLINE = 20.0
DIGEST = hashlib.sha256(base64.b64decode(CHART)).hexdigest()


@pytest.fixture
async def kernel(data_dir: Path, server: ScriptedModelServer) -> AsyncIterator[Kernel]:
    environ = {
        "HOLOGRAM_LLM_BASE_URL": server.base_url,
        "HOLOGRAM_LLM_MODEL": "scripted-model",
        "HOLOGRAM_LLM_API_KEY": "sk-test",
    }
    async with Kernel(data_dir, environ=environ) as running:
        yield running


def chart_round() -> CompletionRequest:
    """A tool loop whose tool returned a chart image, as the turn will build it."""
    call = ToolCall("call_c1", "plot_sales", {"month": "11"})
    chart = ImageBlock("image/png", data=CHART, digest=DIGEST, name="sales.png")
    return CompletionRequest(
        [
            ChatMessage.system("You are Holo."),
            ChatMessage.user([TextBlock("plot November")]),
            ChatMessage.assistant("", [call]),
            ChatMessage.tool(ToolResult(call.id, call.name, "the chart"), [chart]),
        ]
    )


def llm_of(kernel: Kernel) -> ProviderManager:
    manager = kernel.state.llm
    assert isinstance(manager, ProviderManager)
    return manager


async def test_a_source_set_to_read_no_images_gets_the_note_and_the_bus_is_told(
    kernel: Kernel, server: ScriptedModelServer
) -> None:
    seen: list[Event] = []
    told = asyncio.Event()

    def take(event: Event) -> None:
        seen.append(event)
        told.set()

    kernel.events.subscribe(EventType.PROVIDER_IMAGES_AS_TEXT, take)
    llm = llm_of(kernel)
    assert llm.accepts_images is True  # the openai adapter's declaration
    await kernel.config.set("core.llm.sources.default.accepts_images", False)
    server.queue(ScriptedReply(text="November rose by a tenth"))
    async with asyncio.timeout(DEADLINE):
        chunks = await collect(llm.chat_stream(chart_round()))
    assert chunks[-1].response is not None
    assert chunks[-1].response.content == "November rose by a tenth"
    assert llm.accepts_images is False
    sent = server.last_request
    assert sent.images == [] and CHART not in sent.body.decode()
    tool = next(m for m in sent.json["messages"] if m["role"] == "tool")
    assert tool["content"].startswith("the chart\n[image/png")
    assert f'seemedia tool takes digest "{DIGEST}"' in tool["content"]
    async with asyncio.timeout(DEADLINE):
        await told.wait()
    [event] = seen
    assert event.payload.llm_source == "default"
    assert event.payload.images[0]["digest"] == DIGEST


async def test_a_vision_source_first_in_order_gets_the_image_and_the_fallback_the_note(
    kernel: Kernel, server: ScriptedModelServer, second_server: ScriptedModelServer
) -> None:
    config = kernel.config
    await config.set("core.llm.sources.text.adapter", "deepseek")
    await config.set("core.llm.sources.text.base_url", second_server.url)
    await config.set("core.llm.sources.text.model", "deepseek-chat")
    await config.set("core.llm.source_order", ["default", "text"])
    server.queue(ScriptedReply(error="server"))
    second_server.queue(ScriptedReply(text="from the text model"))
    async with asyncio.timeout(DEADLINE):
        answer = await llm_of(kernel).chat(chart_round())
    assert answer.content == "from the text model" and answer.source == "text"
    assert [i.data for i in server.last_request.images] == [CHART]
    assert second_server.last_request.images == []
    assert DIGEST in second_server.last_request.body.decode()
