"""Media through the plugin SDK (issue 18): a plugin injects an input or an interrupt
carrying media (InjectInputMedia, InjectInputMediaSync, InjectInterruptMedia) and reads
stored media back (MediaBytes); a plugin's tool returns media that the next model request
shows (SetToolBlocks). A real subprocess plugin over JSON-RPC, a Lua plugin in its sandbox
and a built-in through the kernel SDK, one kernel with its SQLite journal and media store,
and the scripted model on loopback speaking the OpenAI wire format."""

from __future__ import annotations

import base64
import io
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from hologram.media import MediaTypeError, UnknownMedia
from hologram.plugins import KernelSDK, PluginRegistry
from hologram.plugins.rpc import CAPABILITY_REFUSED, DEFAULT_MAX_FRAME, INVALID_PARAMS
from hologram.sdk import MediaData, Priority, ToolCall

from ..llm.sdk_types import check_request
from .conftest import wait_for


def png(color: str = "red", size: tuple[int, int] = (8, 6)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def noisy_png(side: int) -> bytes:
    """A PNG that does not compress: about 3 * side * side bytes."""
    out = io.BytesIO()
    Image.effect_noise((side, side), 64).convert("RGB").save(out, "PNG")
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# Each tool runs one SDK call the test names and answers with what the plugin got back:
# JSON of the result, or "refused <code>: <message>" for the JSON-RPC error it was given.
PLUGIN = """
    import base64, io, json
    from PIL import Image
    from hologram.plugins.rpc import RpcError
    from hologram.plugins.runtime import PluginApp, tool_media

    app = PluginApp()

    async def answer(call):
        try:
            return json.dumps(await call)
        except RpcError as exc:
            return f"refused {exc.code}: {exc.message}"
        except (TypeError, ValueError) as exc:
            return f"refused here: {exc}"

    @app.tool("Inject media through the runtime's helpers.", {"type": "object", "properties": {
        "how": {"type": "string"}, "text": {"type": "string"},
        "media": {"type": "array", "items": {"type": "object"}}, "level": {"type": "integer"}}})
    async def NAME_inject(args):
        # Each item is {"b64": ..., "type": ...}: the plugin hands the runtime raw bytes
        # with a claimed type, as a plugin that made or received an image would.
        media = [(base64.b64decode(m["b64"]), m.get("type", "")) for m in args["media"]]
        sdk, text = app.sdk, args.get("text", "look")
        if args["how"] == "input":
            return await answer(sdk.inject_input_media(text, "notebook", media))
        if args["how"] == "sync":
            return await answer(sdk.inject_input_media_sync(text, "notebook", media))
        return await answer(
            sdk.inject_interrupt_media(text, "notebook", media, args.get("level", 1))
        )

    @app.tool("Send a raw inject frame with media.", {"type": "object", "properties": {
        "media": {}}})
    async def NAME_raw(args):
        return await answer(app.sdk.call(
            "sdk.inject", text="raw", channel="notebook", media=args["media"]))

    @app.tool("Read stored media.", {"type": "object", "properties": {
        "digest": {"type": "string"}}})
    async def NAME_read(args):
        async def read():
            data, mime = await app.sdk.media_bytes(args["digest"])
            return {"b64": base64.b64encode(data).decode(), "type": mime}
        return await answer(read())

    @app.tool("Draw the chart.")
    def NAME_chart(args):
        out = io.BytesIO()
        Image.new("RGB", (16, 9), "teal").save(out, "PNG")
        return tool_media("the chart", (out.getvalue(), "image/png"))

    app.run()
"""


@pytest.fixture
def plugin(registry: PluginRegistry, write_plugin: Callable[..., Path]) -> Callable[..., Any]:
    """plugin(name, capabilities) -> a started subprocess plugin with the PLUGIN tools."""

    async def load(name: str, capabilities: list[str]) -> str:
        await registry.load_dir(
            write_plugin(name, PLUGIN.replace("NAME", name), capabilities=capabilities)
        )
        return name

    return load


async def run_tool(kernel: Kernel, name: str, **arguments: Any) -> str:
    result = await kernel.state.stagehost.execute(ToolCall("c", name, arguments))
    assert not result.is_error, result.content
    return result.content


def journal_rows(data_dir: Path) -> int:
    db = sqlite3.connect(data_dir / "inputs.db")
    try:
        return int(db.execute("SELECT count(*) FROM inputs").fetchone()[0])
    finally:
        db.close()


def journaled_media(data_dir: Path, input_id: int) -> str:
    db = sqlite3.connect(data_dir / "inputs.db")
    try:
        return str(db.execute("SELECT media FROM inputs WHERE id = ?", (input_id,)).fetchone()[0])
    finally:
        db.close()


def stored(kernel: Kernel) -> set[str]:
    assert kernel.state.media is not None
    return set(kernel.state.media.digests())


async def journaled(kernel: Kernel, input_id: int) -> dict[str, Any]:
    assert kernel.state.scheduler is not None
    row = await kernel.state.scheduler.journal.get(input_id)
    assert row is not None
    return dict(row)


# ---- a subprocess plugin injects media ------------------------------------------------------


async def test_a_subprocess_plugins_injected_png_reaches_the_model_request_as_an_image(
    kernel: Kernel, plugin: Callable[..., Any], model: ScriptedModelServer
) -> None:
    await plugin("shower", ["tools", "inject"])
    photo = png()
    model.queue_text("A red square.")

    answer = await run_tool(
        kernel, "shower_inject", how="sync", text="what is this?", media=[{"b64": b64(photo)}]
    )

    assert json.loads(answer) == "A red square."
    check_request("openai", model.last_request.json)
    images = model.last_request.images
    assert [(i.role, i.media_type, i.content) for i in images] == [("user", "image/png", photo)]
    user = [m for m in model.last_request.json["messages"] if m["role"] == "user"][-1]
    assert any(p.get("text", "").startswith("what is this?") for p in user["content"])


async def test_an_injected_input_and_interrupt_keep_their_media_in_the_journal(
    kernel: Kernel, plugin: Callable[..., Any], model: ScriptedModelServer
) -> None:
    await plugin("shower", ["tools", "inject"])
    first, second = png("blue"), png("green", (4, 4))
    model.queue_text("seen one").queue_text("seen two")

    queued = json.loads(
        await run_tool(
            kernel, "shower_inject", how="input", media=[{"b64": b64(first), "type": "image/png"}]
        )
    )
    interrupt = json.loads(
        await run_tool(
            kernel, "shower_inject", how="interrupt", level=2, media=[{"b64": b64(second)}]
        )
    )
    await wait_for(lambda: len(model.requests) >= 2, "both inputs reached the model")

    rows = [await journaled(kernel, queued), await journaled(kernel, interrupt)]
    assert [Priority(r["level"]) for r in rows] == [Priority.QUEUED, Priority.L2]
    assert [r["source"] for r in rows] == ["plugin:shower"] * 2
    shown = {i.content for r in model.requests for i in r.images}
    assert shown == {first, second}
    assert kernel.state.media is not None
    refs = [kernel.state.media.ref(d) for d in stored(kernel)]
    assert sorted((r.width, r.height) for r in refs) == [(4, 4), (8, 6)]


async def test_a_plugin_injects_media_already_stored_by_its_digest(
    kernel: Kernel, plugin: Callable[..., Any], model: ScriptedModelServer, data_dir: Path
) -> None:
    await plugin("again", ["tools", "inject"])
    photo = png("silver")
    (ref,) = await kernel.store_media([photo])
    model.queue_text("again")

    input_id = json.loads(
        await run_tool(kernel, "again_raw", media=[{"digest": ref.digest, "name": "old.png"}])
    )
    await wait_for(lambda: len(model.requests) >= 1, "the input reached the model")

    assert model.last_request.images[-1].content == photo
    assert '"name": "old.png"' in journaled_media(data_dir, input_id)
    assert stored(kernel) == {ref.digest}


async def test_an_undeclared_security_profile_is_refused_before_any_media_is_stored(
    kernel: Kernel, registry: PluginRegistry, data_dir: Path
) -> None:
    sdk = KernelSDK("builtin_probe", registry.parts)

    with pytest.raises(PermissionError, match="does not declare"):
        await sdk.inject_input_media("x", "notebook", [png()], security_profile="admin")

    assert stored(kernel) == set() and journal_rows(data_dir) == 0


# ---- a subprocess tool returns an image ----------------------------------------------------


async def test_a_subprocess_tools_image_reaches_the_next_model_request(
    kernel: Kernel, plugin: Callable[..., Any], model: ScriptedModelServer
) -> None:
    await plugin("drawer", ["tools"])
    model.queue_tool_call("drawer_chart", {}, call_id="c1").queue_text("Sales are up.")

    reply = await kernel.say("show me the chart")

    assert reply == "Sales are up."
    second = model.last_request
    check_request("openai", second.json)
    tool = next(m for m in second.json["messages"] if m["role"] == "tool")
    assert tool["content"].startswith("the chart")
    (image,) = second.images
    assert (image.role, image.call_id, image.media_type) == ("tool", "c1", "image/png")
    assert Image.open(io.BytesIO(image.content)).size == (16, 9)
    assert kernel.state.media is not None
    (digest,) = stored(kernel)
    assert kernel.state.media.get(digest) == image.content


# ---- media_bytes -----------------------------------------------------------------------------


async def test_media_bytes_gives_a_plugin_the_stored_bytes_and_their_sniffed_type(
    kernel: Kernel, plugin: Callable[..., Any]
) -> None:
    await plugin("reader", ["tools", "media_read"])
    photo = png("purple")
    (ref,) = await kernel.store_media([MediaData(photo, "image/png", "p.png")])

    answer = json.loads(await run_tool(kernel, "reader_read", digest=ref.digest))

    assert base64.b64decode(answer["b64"]) == photo and answer["type"] == "image/png"


async def test_media_bytes_without_the_capability_is_refused_naming_it(
    kernel: Kernel, plugin: Callable[..., Any]
) -> None:
    await plugin("blind", ["tools", "inject"])
    (ref,) = await kernel.store_media([png()])

    answer = await run_tool(kernel, "blind_read", digest=ref.digest)

    assert answer.startswith(f"refused {CAPABILITY_REFUSED}:") and "'media_read'" in answer


async def test_injecting_media_without_the_inject_capability_is_refused(
    kernel: Kernel, plugin: Callable[..., Any], data_dir: Path
) -> None:
    await plugin("mute", ["tools", "media_read"])
    before = journal_rows(data_dir)

    answer = await run_tool(kernel, "mute_inject", how="input", media=[{"b64": b64(png())}])

    assert answer.startswith(f"refused {CAPABILITY_REFUSED}:") and "'inject'" in answer
    assert stored(kernel) == set() and journal_rows(data_dir) == before


# ---- bad media from a plugin -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "reason"),
    [
        (
            "raw",
            {"media": [{"type": "image/png", "data": "%%%not base64%%%"}]},
            "media item 0: 'data' is not base64",
        ),
        ("raw", {"media": "not a list"}, "'media' must be a list"),
        ("raw", {"media": [{"digest": "0" * 64}]}, "no stored media has digest " + "0" * 64),
        ("raw", {"media": [{"digest": "cafe"}]}, "64 lower-case hex digits"),
        (
            "inject",
            {"how": "input", "media": [{"b64": b64(b"just text"), "type": "image/png"}]},
            "declared image/png, but the bytes are text/plain",
        ),
        ("inject", {"how": "input", "media": [{"b64": b64(png()[:40])}]}, "damaged PNG image"),
        (
            "inject",
            {"how": "input", "media": [{"b64": b64(noisy_png(64))}]},
            "(core.media.max_bytes)",
        ),
        ("read", {"digest": "f" * 64}, "no stored media has digest " + "f" * 64),
        ("read", {"digest": "../../etc/passwd"}, "not a media digest"),
    ],
)
async def test_bad_media_is_a_clear_error_nothing_is_stored_and_the_plugin_keeps_working(
    kernel: Kernel,
    plugin: Callable[..., Any],
    model: ScriptedModelServer,
    data_dir: Path,
    tool: str,
    arguments: dict[str, Any],
    reason: str,
) -> None:
    await kernel.config.set("core.media.max_bytes", 4096)
    await plugin("sender", ["tools", "inject", "media_read"])
    before = journal_rows(data_dir)

    answer = await run_tool(kernel, f"sender_{tool}", **arguments)

    assert answer.startswith(f"refused {INVALID_PARAMS}:"), answer
    assert reason in answer
    assert stored(kernel) == set() and journal_rows(data_dir) == before
    # The same plugin process, and the kernel, go on: a good image goes through.
    model.queue_text("fine")
    photo = png()
    ok = await run_tool(kernel, "sender_inject", how="sync", media=[{"b64": b64(photo)}])
    assert json.loads(ok) == "fine" and model.last_request.images[-1].content == photo


async def test_more_items_than_the_limit_allows_are_refused_naming_the_setting(
    kernel: Kernel, plugin: Callable[..., Any], data_dir: Path
) -> None:
    await kernel.config.set("core.media.max_items", 2)
    await plugin("many", ["tools", "inject"])
    media = [{"b64": b64(png(colour))} for colour in ("red", "green", "blue")]

    answer = await run_tool(kernel, "many_inject", how="interrupt", media=media)

    assert answer.startswith(f"refused {INVALID_PARAMS}:") and "core.media.max_items" in answer
    assert stored(kernel) == set() and journal_rows(data_dir) == 0


async def test_media_bytes_longer_than_a_plugins_frame_is_refused_and_the_plugin_goes_on(
    kernel: Kernel, plugin: Callable[..., Any]
) -> None:
    await plugin("greedy", ["tools", "media_read"])
    (big,) = await kernel.store_media([b"a" * (DEFAULT_MAX_FRAME * 3 // 4 + 1)])
    (small,) = await kernel.store_media([png()])

    answer = await run_tool(kernel, "greedy_read", digest=big.digest)

    assert answer.startswith(f"refused {INVALID_PARAMS}:") and "more than one frame" in answer
    assert json.loads(await run_tool(kernel, "greedy_read", digest=small.digest))["type"] == (
        "image/png"
    )


async def test_media_past_the_frame_limit_is_refused_in_the_plugin_before_it_is_sent(
    kernel: Kernel, plugin: Callable[..., Any], data_dir: Path
) -> None:
    await kernel.config.set("core.plugins.max_frame_bytes", 64 * 1024)
    await plugin("bulky", ["tools", "inject"])
    big = noisy_png(200)
    assert len(big) > 64 * 1024

    answer = await run_tool(kernel, "bulky_inject", how="input", media=[{"b64": b64(big)}])

    assert answer.startswith("refused here:") and "core.plugins.max_frame_bytes" in answer
    assert journal_rows(data_dir) == 0
    # The session survived: the plugin still answers.
    assert (await run_tool(kernel, "bulky_chart")).startswith("the chart")


# ---- Lua ----------------------------------------------------------------------------------


def lua_string(data: bytes) -> str:
    """`data` as a Lua string literal of decimal escapes: any byte, none of it UTF-8."""
    return '"' + "".join(f"\\{b}" for b in data) + '"'


LUA = """
local photo = PHOTO

sdk.register_tool("NAME_show", "Show the photo.", nil, function(args)
  return sdk.inject_input_media_sync("what is this?", "notebook",
    {{bytes = photo, type = "image/png"}})
end)

sdk.register_tool("NAME_lie", "Send text claiming to be an image.", nil, function(args)
  local ok, err = pcall(sdk.inject_input_media, "x", "notebook",
    {{bytes = "just text", type = "image/png"}})
  return tostring(ok) .. " " .. tostring(err)
end)

sdk.register_tool("NAME_echo", "Read stored media and return it as a tool's image.", {
  type = "object", properties = {digest = {type = "string"}}}, function(args)
  local m = sdk.media_bytes(args.digest)
  return {text = "size " .. m.size .. " " .. m.type, media = {{bytes = m.bytes}}}
end)

sdk.register_tool("NAME_chart", "Return the photo as a chart.", nil, function(args)
  return {text = "the chart", media = {{bytes = photo, type = "image/png"}}}
end)
"""


@pytest.fixture
def lua_plugin(registry: PluginRegistry, write_plugin: Callable[..., Path]) -> Callable[..., Any]:
    async def load(name: str, photo: bytes, capabilities: list[str]) -> str:
        source = LUA.replace("NAME", name).replace("PHOTO", lua_string(photo))
        await registry.load_dir(
            write_plugin(name, source, entry="main.lua", capabilities=capabilities)
        )
        return name

    return load


async def test_a_lua_plugin_injects_raw_bytes_that_reach_the_model_as_an_image(
    kernel: Kernel, lua_plugin: Callable[..., Any], model: ScriptedModelServer
) -> None:
    photo = png("yellow")
    await lua_plugin("luashow", photo, ["tools", "inject"])
    model.queue_text("A yellow square.")

    answer = await run_tool(kernel, "luashow_show")

    assert answer == "A yellow square."
    check_request("openai", model.last_request.json)
    images = model.last_request.images
    assert [(i.role, i.media_type, i.content) for i in images] == [("user", "image/png", photo)]


async def test_a_lua_tools_raw_image_reaches_the_next_model_request(
    kernel: Kernel, lua_plugin: Callable[..., Any], model: ScriptedModelServer
) -> None:
    photo = png("navy", (5, 7))
    await lua_plugin("luachart", photo, ["tools"])
    model.queue_tool_call("luachart_chart", {}, call_id="l1").queue_text("Nice chart.")

    assert await kernel.say("chart please") == "Nice chart."

    (image,) = model.last_request.images
    assert (image.role, image.call_id, image.content) == ("tool", "l1", photo)


async def test_a_lua_plugin_reads_media_bytes_exactly_and_a_lie_is_refused(
    kernel: Kernel, lua_plugin: Callable[..., Any], data_dir: Path
) -> None:
    photo = png("olive")
    await lua_plugin("luaread", photo, ["tools", "inject", "media_read"])
    (ref,) = await kernel.store_media([photo])

    echoed = await kernel.state.stagehost.execute(
        ToolCall("c", "luaread_echo", {"digest": ref.digest})
    )
    lie = await run_tool(kernel, "luaread_lie")

    assert not echoed.is_error, echoed.content
    assert echoed.content.startswith(f"size {len(photo)} image/png")
    assert [m.digest for m in echoed.media] == [ref.digest]
    assert lie.startswith("false ") and "declared image/png, but the bytes are text/plain" in lie
    assert stored(kernel) == {ref.digest} and journal_rows(data_dir) == 0


async def test_a_lua_plugin_without_media_read_is_refused_naming_it(
    kernel: Kernel, lua_plugin: Callable[..., Any]
) -> None:
    await lua_plugin("luablind", png(), ["tools"])
    (ref,) = await kernel.store_media([png("white")])

    result = await kernel.state.stagehost.execute(
        ToolCall("c", "luablind_echo", {"digest": ref.digest})
    )

    assert result.is_error and "'media_read'" in result.content


# ---- a built-in plugin ------------------------------------------------------------------------


async def test_a_built_in_plugin_injects_media_and_reads_it_back(
    kernel: Kernel, registry: PluginRegistry, model: ScriptedModelServer, data_dir: Path
) -> None:
    sdk = KernelSDK("builtin_probe", registry.parts)
    photo = png("maroon")
    model.queue_text("maroon")

    reply = await sdk.inject_input_media_sync("and this?", "notebook", [photo])

    assert reply == "maroon" and model.last_request.images[-1].content == photo
    (digest,) = stored(kernel)
    assert await sdk.media_bytes(digest) == (photo, "image/png")
    with pytest.raises(UnknownMedia, match="no stored media"):
        await sdk.media_bytes("e" * 64)
    rows = journal_rows(data_dir)
    with pytest.raises(MediaTypeError, match="declared image/png"):
        await sdk.inject_interrupt_media("x", "notebook", [MediaData(b"text", "image/png")])
    assert journal_rows(data_dir) == rows and stored(kernel) == {digest}
