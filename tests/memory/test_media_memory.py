"""Media in memory: a note committed with media digests keeps the references (never the
bytes), recall returns them with the sentence, seemedia shows the recalled image, and an
archived document's media becomes a graph media block."""

from __future__ import annotations

import base64
import io
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PIL import Image

from hologram import Kernel
from hologram.agent.turn import Turn, TurnInput
from hologram.kernel import ManualClock
from hologram.llm import ScriptedModelServer
from hologram.memory import ContextEvent
from hologram.notebook.context_widget import ContextWidget
from hologram.sdk import Event, EventType, ToolCall, ToolResult

HOUR = 3600.0


def png(color: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (10, 10), color).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
async def model() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


async def call(kernel: Kernel, name: str, arguments: dict[str, object]) -> ToolResult:
    """One call of a tool the turn offers (memory tools are not in the stage host's table)."""
    agent = kernel.state.agent
    assert agent is not None
    return await agent.runner.execute(ToolCall("c1", name, arguments), agent.build_tool_defs())


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=1_700_000_000.0)


@pytest.fixture
async def kernel(
    data_dir: Path, model: ScriptedModelServer, clock: ManualClock
) -> AsyncIterator[Kernel]:
    environ = {"HOLOGRAM_LLM_BASE_URL": model.base_url, "HOLOGRAM_LLM_MODEL": "scripted-model"}
    async with Kernel(data_dir, environ=environ, clock=clock) as running:
        yield running


async def test_a_committed_photo_is_recalled_with_its_sentence_and_seen_again(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    agent, media = kernel.state.agent, kernel.state.media
    assert agent is not None and media is not None
    photo = png("orange")
    ref = media.ref(media.put(photo, "image/png", "miso.png").digest)  # as stored: no name
    seen: list[Event] = []
    kernel.events.subscribe(EventType.SYSTEM, seen.append)

    commit = await call(
        kernel,
        "coldcontext_commit",
        {"content": "Miso the cat asleep on the windowsill", "media_digests": [ref.short]},
    )
    assert not commit.is_error and ref.label() in commit.content
    doc = next(d for d in kernel.state.coldcontext.documents() if d.media)
    assert doc.media == [ref] and doc.text.startswith("Miso the cat")
    stored = json.dumps(doc.to_json())
    assert ref.digest in stored and base64.b64encode(photo).decode() not in stored
    assert any(e.payload.kind == "media_matched_by_text" for e in seen)

    model.queue_tool_call("seemedia", {"digest": ref.short}, call_id="s1")
    model.queue_text("That is Miso, asleep.")
    result = await Turn(agent.parts, TurnInput("do you remember Miso the cat?")).run()

    first = model.requests[-2].json
    assert "seemedia" in [t["function"]["name"] for t in first["tools"]]
    assert ref.label() in first["messages"][0]["content"]  # the recalled sentence names it
    (shown,) = result.tool_results
    assert shown.media == (ref,)
    assert result.reply == "That is Miso, asleep."


async def test_an_unknown_digest_is_refused_and_nothing_is_committed(kernel: Kernel) -> None:
    before = len(kernel.state.coldcontext)
    result = await call(
        kernel, "coldcontext_commit", {"content": "a note", "media_digests": ["ab" * 6]}
    )
    assert result.is_error and "ab" * 6 in result.content
    assert len(kernel.state.coldcontext) == before


async def test_archived_media_becomes_a_graph_media_block(
    kernel: Kernel, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    media, graph = kernel.state.media, kernel.state.graph
    assert media is not None and graph is not None
    photo = png("teal")
    ref = media.put(photo)
    event = ContextEvent(timestamp=clock.now(), source="notebook", input="my new bike", media=[ref])
    with caplog.at_level(logging.INFO):
        await kernel.state.coldcontext.archive([event])
    assert "matched by its sentence only" in caplog.text
    await clock.advance(100 * HOUR)

    await graph.heartbeat.tick_archive()

    (block,) = await graph.store.blocks.list("media")
    assert block.mime == "image/png" and await graph.store.blocks.data(block.id) == photo


async def test_the_context_widget_shows_thumbnails_of_the_turns_with_images(
    kernel: Kernel,
) -> None:
    media, memory = kernel.state.media, kernel.state.memory
    assert media is not None and memory is not None
    out = io.BytesIO()
    Image.new("RGB", (300, 200), "navy").save(out, "PNG")
    ref = media.put(out.getvalue())
    widget = ContextWidget.for_kernel(kernel)
    assert widget.thumbnails.value == ""

    await memory.context.append("notebook", input="my desk", media=[ref])

    html = widget.thumbnails.value
    assert f"data-digest='{ref.digest}'" in html and "notebook: " in html
    src = html.split("src='data:image/png;base64,", 1)[1].split("'", 1)[0]
    thumb = Image.open(io.BytesIO(base64.b64decode(src)))
    assert max(thumb.size) <= 96 and thumb.size[0] > thumb.size[1]
    assert widget.frame["media"].iloc[-1] == ref.label()
    assert html in widget.fallback_html()
    widget.close()
