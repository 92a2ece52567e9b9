"""Plugin media benchmark: what one 1 MB image costs through a subprocess plugin.

    python benchmarks/plugin_media.py [--runs 15]

A real kernel loads a subprocess plugin whose tools hand the kernel a 1 MB PNG (given to the
plugin before each timed call). Printed, as medians over runs (ms), each beside the same
work done by a built-in (no pipe, no base64):

* a tool returning the image with its result (`tool_media`): the plugin's base64 frame,
  decoded, sniffed and stored, against a built-in tool returning `ToolOutput` bytes;
* `inject_input_media` of the image, until the input is journaled (the turn it starts runs
  behind and is not counted), against `KernelSDK.inject_input_media` of the same bytes;
* `media_bytes` of the stored image read back by the plugin, against the built-in's call.

Each image is new (noise), so every call stores and sniffs it afresh. There is no target in
../shared/TARGETS.md for these; they show what the pipe adds to a photo.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import json
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PIL import Image

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from hologram.plugins import KernelSDK
from hologram.sdk import ToolCall, ToolDef, ToolOutput

PLUGIN = """
import base64
from hologram.plugins.runtime import PluginApp, tool_media

app = PluginApp()
held = {}

@app.tool("Hold an image for the next call.", {
    "type": "object", "properties": {"b64": {"type": "string"}}})
def pm_hold(args):
    held["image"] = base64.b64decode(args["b64"])
    return "held"

@app.tool("Return the held image.")
def pm_chart(args):
    return tool_media("the chart", (held["image"], "image/png"))

@app.tool("Inject the held image.")
async def pm_inject(args):
    return str(await app.sdk.inject_input_media("look", "notebook", [(held["image"], "image/png")]))

@app.tool("Read media back.", {"type": "object", "properties": {"digest": {"type": "string"}}})
async def pm_read(args):
    data, mime = await app.sdk.media_bytes(args["digest"])
    return str(len(data))

app.run()
"""


EMPTY = {"type": "object", "properties": {}}


def image_of_1mb() -> bytes:
    side = 600  # 600 x 600 RGB of noise: ~1.03 MB as PNG
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(
        out, "PNG", compress_level=1
    )
    return out.getvalue()


async def timed(one: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await one()
    return (time.perf_counter() - started) * 1000


async def settled(kernel: Kernel) -> None:
    """Wait for the turn an injection started: it runs in this process, and timing the next
    call beside it would count its work too."""
    assert kernel.state.scheduler is not None
    inputs = kernel.state.scheduler
    async with asyncio.timeout(60):
        while inputs.pending_inputs() or inputs.status()["running"] is not None:  # noqa: ASYNC110
            await asyncio.sleep(0.01)


async def one_run(kernel: Kernel, sdk: KernelSDK, held: dict[str, bytes]) -> dict[str, float]:
    """Each way once, each with a new image (so each is sniffed and stored afresh). The
    plugin is handed its image before the timed call."""
    host = kernel.state.stagehost
    media = kernel.state.media
    assert media is not None

    async def call(name: str, **arguments: Any) -> None:
        result = await host.execute(ToolCall("c", name, arguments))
        assert not result.is_error, result.content

    async def hold() -> None:
        await call("pm_hold", b64=base64.b64encode(image_of_1mb()).decode("ascii"))

    held["image"] = image_of_1mb()
    out: dict[str, float] = {}
    await hold()
    out["tool result, plugin"] = await timed(lambda: call("pm_chart"))
    out["tool result, built in"] = await timed(lambda: call("bench_chart"))
    await hold()
    out["inject_input_media, plugin"] = await timed(lambda: call("pm_inject"))
    await settled(kernel)
    other = image_of_1mb()
    out["inject_input_media, built in"] = await timed(
        lambda: sdk.inject_input_media("look", "notebook", [other])
    )
    await settled(kernel)
    digest = media.put(image_of_1mb()).digest
    out["media_bytes, plugin"] = await timed(lambda: call("pm_read", digest=digest))
    out["media_bytes, built in"] = await timed(lambda: sdk.media_bytes(digest))
    return out


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "pm"
        folder.mkdir()
        (folder / "plugin.json").write_text(
            json.dumps(
                {
                    "name": "pm",
                    "version": "1",
                    "entry": "main.py",
                    "capabilities": ["tools", "inject", "media_read"],
                }
            )
        )
        (folder / "main.py").write_text(PLUGIN)
        async with ScriptedModelServer() as model:
            for _ in range(4 * (runs + 2)):
                model.queue_text("seen")
            environ = {
                "HOLOGRAM_LLM_BASE_URL": model.base_url,
                "HOLOGRAM_LLM_MODEL": "scripted-model",
                "HOLOGRAM_LLM_API_KEY": "sk-bench",
            }
            async with Kernel(Path(tmp) / "data", environ=environ) as kernel:
                assert kernel.state.plugins is not None
                await kernel.state.plugins.load_dir(folder)
                sdk = KernelSDK("bench", kernel.state.plugins.parts)
                held: dict[str, bytes] = {}

                async def builtin_chart(args: dict[str, Any]) -> ToolOutput:
                    return ToolOutput("the chart", (held["image"],))

                kernel.state.stagehost.register_tool(
                    ToolDef("bench_chart", "Return the image.", EMPTY, handler=builtin_chart)
                )
                for _ in range(2):  # Pillow's import, the first frames
                    await one_run(kernel, sdk, held)
                results = [await one_run(kernel, sdk, held) for _ in range(runs)]
    print(f"plugin media: one ~1 MB PNG, medians over {runs} runs")
    for key in results[0]:
        print(f"  {key:<32} {statistics.median(r[key] for r in results):8.2f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    asyncio.run(main(parser.parse_args().runs))
