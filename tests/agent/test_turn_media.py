"""Media in a turn: the input's images reach the model in the same request, earlier turns'
images come back while their turn is in the window, tools return media, and seemedia shows
a stored media by digest. Through a real kernel and the scripted model over HTTP."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

from PIL import Image

from hologram import Kernel
from hologram.agent import Agent
from hologram.agent.turn import Turn, TurnInput
from hologram.llm import RecordedRequest, ScriptedModelServer
from hologram.media import MediaStore
from hologram.sdk import MediaRef, ToolDef, ToolOutput

from ..llm.sdk_types import check_request


def png(color: str = "red", size: tuple[int, int] = (8, 6)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def store_of(kernel: Kernel) -> MediaStore:
    assert kernel.state.media is not None
    return kernel.state.media


async def run_turn(agent: Agent, text: str, media: tuple[MediaRef, ...] = ()) -> Any:
    return await Turn(agent.parts, TurnInput(text, "notebook", media=media)).run()


def image_urls(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]


def data_url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def offered(request: RecordedRequest) -> list[str]:
    return [t["function"]["name"] for t in request.json.get("tools") or []]


async def test_an_input_image_reaches_the_model_in_the_same_turn(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    photo = png()
    ref = store_of(kernel).put(photo, "image/png", "cat.png")
    model.queue_text("A red square.")

    result = await run_turn(agent, "what is this?", (ref,))

    assert result.reply == "A red square."
    body = model.last_request.json
    check_request("openai", body)
    user = body["messages"][-1]
    assert user["role"] == "user"
    assert user["content"][0] == {"type": "text", "text": "what is this?"}
    assert image_urls(user) == [data_url(photo)]
    assert "seemedia" in offered(model.last_request)


async def test_a_turn_without_media_is_not_offered_seemedia(
    agent: Agent, model: ScriptedModelServer
) -> None:
    model.queue_text("hi")
    await run_turn(agent, "hello")
    assert "seemedia" not in offered(model.last_request)
    assert model.last_request.json["messages"][-1]["content"] == "hello"


async def test_text_media_is_inlined_and_named(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    ref = store_of(kernel).put(b"milk, eggs, bread\n", "text/plain", "list.txt")
    model.queue_text("ok")
    await run_turn(agent, "my list", (ref,))
    user = model.last_request.json["messages"][-1]
    texts = [p["text"] for p in user["content"] if p["type"] == "text"]
    assert texts[1].startswith(ref.label()) and "milk, eggs, bread" in texts[1]


async def test_an_earlier_image_comes_back_from_the_store_while_in_the_window(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    photo = png("blue")
    ref = store_of(kernel).put(photo)
    model.queue_text("A blue square.").queue_text("It was blue.")
    await run_turn(agent, "look", (ref,))

    await run_turn(agent, "what colour was it?")

    messages = model.last_request.json["messages"]
    earlier = [m for m in messages if image_urls(m)]
    assert len(earlier) == 1 and image_urls(earlier[0]) == [data_url(photo)]
    assert messages[-1]["content"] == "what colour was it?"
    # The window itself keeps the reference, never the bytes.
    memory = kernel.state.memory
    assert memory is not None
    stored = [e.to_json() for e in memory.context.events if e.media]
    assert stored and stored[0]["media"] == [ref.to_dict()]
    assert base64.b64encode(photo).decode() not in json.dumps(stored)
    row = memory.context.turns.get(memory.context.events[0].id)
    assert row is not None and row.media == [ref]
    disk = b"".join(p.read_bytes() for p in (kernel.data_dir / "memory").glob("turns.db*"))
    assert ref.digest.encode() in disk
    assert base64.b64encode(photo) not in disk and photo not in disk


async def test_a_tool_returning_an_image_shows_it_in_the_next_round(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    chart = png("green", (20, 10))

    def draw_chart() -> ToolOutput:
        """Draw the chart."""
        return ToolOutput("the chart", (chart,))

    agent.stagehost.register_tool(ToolDef.from_function(draw_chart))
    model.queue_tool_call("draw_chart", {}, call_id="c1").queue_text("Here it is.")

    result = await run_turn(agent, "draw it")

    (tool_result,) = result.tool_results
    ref = tool_result.media[0]
    assert store_of(kernel).get(ref.digest) == chart and ref.mime == "image/png"
    assert ref.label() in tool_result.content
    second = model.requests[-1]
    check_request("openai", second.json)
    tool = next(m for m in second.json["messages"] if m["role"] == "tool")
    assert tool["content"].startswith("the chart")
    (image,) = second.images
    assert (image.role, image.call_id) == ("tool", "c1")
    assert base64.b64decode(image.data) == chart and image.media_type == "image/png"
    assert "seemedia" in offered(second)


async def test_tool_media_the_store_refuses_is_an_error_result(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    def bad_chart() -> ToolOutput:
        """Return a damaged chart."""
        return ToolOutput("chart", (png()[:40], png("blue")))

    agent.stagehost.register_tool(ToolDef.from_function(bad_chart))
    model.queue_tool_call("bad_chart", {}, call_id="c1").queue_text("It failed.")
    before = set(store_of(kernel).digests())

    result = await run_turn(agent, "draw it")

    (tool_result,) = result.tool_results
    assert tool_result.is_error and "refused" in tool_result.content
    assert "media item 0" in tool_result.content and result.reply == "It failed."
    assert set(store_of(kernel).digests()) == before  # the good neighbour was not kept


async def test_seemedia_shows_a_stored_image_by_its_short_digest(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    photo = png("yellow")
    ref = store_of(kernel).put(photo)
    other = store_of(kernel).put(png("black"))
    model.queue_text("noted")
    await run_turn(agent, "keep this", (ref, other))
    model.queue_tool_call("seemedia", {"digest": ref.short}, call_id="s1")
    model.queue_tool_call("seemedia", {"digest": "0" * 64}, call_id="s2")
    model.queue_text("It is yellow.")

    result = await run_turn(agent, "what did I show you?")

    seen, unknown = result.tool_results
    assert seen.media == (ref,) and not seen.is_error
    assert unknown.is_error and "0" * 64 in unknown.content


async def test_a_source_that_reads_no_images_gets_the_note_and_seemedia(
    kernel: Kernel, agent: Agent, model: ScriptedModelServer
) -> None:
    await kernel.config.set("core.llm.sources.default.accepts_images", False)
    ref = store_of(kernel).put(png("white"))
    model.queue_text("I cannot see it, but I know it is there.")

    result = await run_turn(agent, "look at this", (ref,))

    assert result.reply.startswith("I cannot see it")
    request = model.last_request
    assert request.images == [] and "seemedia" in offered(request)
    assert ref.short in json.dumps(request.json["messages"][-1])
