"""Media benchmarks: what one 1 MB image adds to a turn, and what 100 sends of it cost on disk.

    python benchmarks/media.py [--runs 15]

Added cost: in a real kernel, from the image's bytes to the request body the OpenAI adapter
serialises: the store's put (type sniffed, digest, written once), the input journal's record
carrying its reference, the context window's append of the input with it, the request's
messages built by the turn's `MediaParts` (the bytes read back and base64-encoded), and the
unified request serialised by the adapter's Lua `transform_request`. The same steps for the
same text without the image are timed in the same process and subtracted, so the figure is
what the image adds. Each run uses a new image (so each put really writes). Median of the
runs, beside the target of ../shared/TARGETS.md (<= 5 ms p50).

Disk: the same image sent 100 times (each put, journal record and window append as above);
the media store's bytes on disk must stay one copy.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import itertools
import os
import statistics
import tempfile
import time
from pathlib import Path

from PIL import Image

from hologram import Kernel
from hologram.agent.media import MediaParts
from hologram.llm import ChatMessage, CompletionRequest
from hologram.llm.adapter import AdapterLibrary, LuaAdapter
from hologram.media import Upload

MB = 1024 * 1024
TARGET_MS = 5.0


def image_of_1mb() -> bytes:
    """A PNG of about 1 MB: noise does not compress, so the file is as big as its pixels;
    each call gives a new image."""
    side = 600  # 600 x 600 RGB of noise: ~1.03 MB as PNG
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(
        out, "PNG", compress_level=1
    )
    return out.getvalue()


STEPS = ("store put", "journal", "window append", "messages", "adapter serialise")


async def one_send(
    kernel: Kernel, adapter: LuaAdapter, data: bytes | None, text: str = "look at this"
) -> list[float]:
    """Seconds of each of `STEPS` from the bytes to the serialised request body (without
    an image when `data` is None)."""
    state = kernel.state
    assert state.media is not None and state.scheduler is not None and state.memory is not None
    marks = [time.perf_counter()]
    refs = await state.media.aput_all([Upload(data, "image/png")]) if data is not None else []
    marks.append(time.perf_counter())
    extra = {"media": [r.to_dict() for r in refs]}
    await state.scheduler.journal.record(text, "notebook", 2, "bench", extra=extra)
    marks.append(time.perf_counter())
    await state.memory.context.append("notebook", input=text, channel="notebook", media=refs)
    marks.append(time.perf_counter())
    parts = MediaParts(state.media)
    messages = [ChatMessage.system("You are a companion."), parts.user_message(text, refs)]
    unified = CompletionRequest(messages).to_unified(model="bench")
    marks.append(time.perf_counter())
    body = await adapter.transform_request(unified)
    marks.append(time.perf_counter())
    assert (data is None) or (len(body) > len(data))
    return [b - a for a, b in itertools.pairwise(marks)]


async def added_cost_ms(kernel: Kernel, adapter: LuaAdapter, runs: int) -> list[list[float]]:
    """Per run, what the image added to each step (ms)."""
    images = [image_of_1mb() for _ in range(runs + 2)]
    for warm in images[:2]:  # first Pillow import, first Lua call
        await one_send(kernel, adapter, warm)
        await one_send(kernel, adapter, None)
    added = []
    for image in images[2:]:
        with_image = await one_send(kernel, adapter, image)
        without = await one_send(kernel, adapter, None)
        added.append([(w - o) * 1000 for w, o in zip(with_image, without, strict=True)])
    return added


async def disk_after_sends(kernel: Kernel, adapter: LuaAdapter, sends: int) -> tuple[int, int]:
    assert kernel.state.media is not None
    image = image_of_1mb()
    before = kernel.state.media.disk_bytes()
    for _ in range(sends):
        await one_send(kernel, adapter, image)
    return kernel.state.media.disk_bytes() - before, len(image)


async def main(runs: int) -> None:
    adapter = AdapterLibrary().load("openai")
    with tempfile.TemporaryDirectory() as tmp:
        async with Kernel(Path(tmp) / "added", environ={}) as kernel:
            added = await added_cost_ms(kernel, adapter, runs)
        async with Kernel(Path(tmp) / "disk", environ={}) as kernel:
            disk, size = await disk_after_sends(kernel, adapter, 100)
    totals = [sum(run) for run in added]
    p50 = statistics.median(totals)
    print(f"image size                          {size / MB:.2f} MB")
    print(
        f"added cost, inject -> request p50   {p50:.2f} ms   (target <= {TARGET_MS:g} ms; "
        f"min {min(totals):.2f}, max {max(totals):.2f}, {runs} runs)"
    )
    for index, step in enumerate(STEPS):
        print(f"  of which {step:<24} {statistics.median(r[index] for r in added):7.2f} ms p50")
    copies = disk / size
    print(
        f"media store after 100 sends         {disk} bytes = {copies:.3f} x the image "
        "(target: one copy)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    asyncio.run(main(parser.parse_args().runs))
