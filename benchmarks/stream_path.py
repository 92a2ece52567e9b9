"""The kernel's own part of a reply's first token: from a streamed answer's first bytes to
the subscriber's `agent_output_delta`, against a raw httpx reader of the same bytes.

    python benchmarks/stream_path.py [--runs 150]

providers.py times the same thing through a model server in its own process, where the
server's own time and the machine's other work make up most of the figure and move it by
hundreds of microseconds from run to run. Here the model's side is an in-process transport
whose stream gives each frame the moment it is released, so the only code timed is the
kernel's (framing, the adapter's transform_stream_chunk, the chunk's way up to the turn, the
event) and httpx's, which the raw reader pays too.

A kernel waiting for a model sleeps, and the machine's other processes take its caches in
the meantime: the first frame is read cold. So before the frames are released the caches
are thrashed (16 MB written, as a neighbour on this two-core machine would), for both
sides alike; the figure is also given warm (nothing thrashed). Printed: medians and first
quartiles in µs, and the kernel's part over the raw reader's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from hologram import Kernel
from hologram.llm import provider as provider_module

ROLE = (
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,'
    b'"model":"bench-model","choices":[{"index":0,"delta":{"role":"assistant",'
    b'"content":""},"finish_reason":null}]}\n\n'
)
END = [
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,'
    b'"model":"bench-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
    b"data: [DONE]\n\n",
]


def token(text: str) -> bytes:
    return (
        b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,'
        b'"model":"bench-model","choices":[{"index":0,"delta":{"content":"'
        + text.encode()
        + b'"},"finish_reason":null}]}\n\n'
    )


# The first token is in the second frame, after the role's, as OpenAI sends it.
FRAMES = [ROLE, token("It "), token("will rain."), *END]


class Released(httpx.AsyncByteStream):
    """A response body whose frames come as the benchmark releases them."""

    def __init__(self, queue: asyncio.Queue[bytes | None]) -> None:
        self.queue = queue

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while (item := await self.queue.get()) is not None:
            yield item


class Model:
    """The far end: each request gets a streamed answer whose frames wait for `release`."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self._queue = asyncio.Queue()
        self.asked.set()
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=headers, stream=Released(self._queue))

    def release(self) -> None:
        for frame in FRAMES:
            self._queue.put_nowait(frame)
        self._queue.put_nowait(None)


def thrash(junk: bytearray) -> None:
    """Take the caches, as the machine's other processes do while the kernel waits."""
    for i in range(0, len(junk), 64):
        junk[i] = (junk[i] + 1) & 255
    json.loads(json.dumps({"a": list(range(300))}))


async def measure(runs: int, cold: bool) -> tuple[list[float], list[float]]:
    model = Model()
    transport = httpx.MockTransport(model.handle)
    build = provider_module.LuaAdaptedProvider.__init__

    def with_transport(self: Any, source: Any, adapter: Any, **options: Any) -> None:
        build(self, source, adapter, **options, transport=transport)

    provider_module.LuaAdaptedProvider.__init__ = with_transport  # type: ignore[method-assign]
    junk = bytearray(16 * 1024 * 1024)
    environ = {
        "HOLOGRAM_LLM_BASE_URL": "http://127.0.0.1:9/v1",  # never dialled: the transport answers
        "HOLOGRAM_LLM_MODEL": "bench-model",
        "HOLOGRAM_LLM_API_KEY": "sk-bench",
    }
    kernel_s: list[float] = []
    raw_s: list[float] = []
    try:
        async with httpx.AsyncClient(transport=transport) as raw:
            with tempfile.TemporaryDirectory(prefix="hologram-stream-path-") as data:
                async with Kernel(Path(data), environ=environ) as kernel:
                    first = asyncio.Event()
                    seen: list[float] = []

                    def on_delta(event: Any) -> None:
                        if not first.is_set():
                            seen.append(time.perf_counter())
                        first.set()

                    kernel.events.subscribe("agent_output_delta", on_delta)
                    for i in range(runs + 5):
                        model.asked.clear()
                        first.clear()
                        ticket = await kernel.inject(f"will it rain? ({i})")
                        await model.asked.wait()
                        await asyncio.sleep(0.002)  # the turn reaches its read of the body
                        if cold:
                            thrash(junk)
                        released = time.perf_counter()
                        model.release()
                        await first.wait()
                        await ticket
                        kernel_part = seen[-1] - released
                        async with raw.stream("POST", "http://127.0.0.1:9/v1/x") as response:
                            await asyncio.sleep(0.002)
                            if cold:
                                thrash(junk)
                            raw_released = time.perf_counter()
                            model.release()
                            got = 0.0
                            async for _ in response.aiter_raw():
                                got = got or time.perf_counter()
                        if i >= 5:  # the first turns warm what is loaded lazily
                            kernel_s.append(kernel_part)
                            raw_s.append(got - raw_released)
    finally:
        provider_module.LuaAdaptedProvider.__init__ = build  # type: ignore[method-assign]
    return kernel_s, raw_s


def quartile(samples: list[float]) -> float:
    return sorted(samples)[len(samples) // 4] * 1e6


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=150)
    args = parser.parse_args()
    print(f"a streamed answer's first bytes → first delta, {args.runs} turns")
    print(f"  {'':6} {'kernel p50':>11} {'p25':>7} {'raw p50':>8} {'p25':>7} {'kernel adds':>12}")
    for cold in (True, False):
        kernel_s, raw_s = await measure(args.runs, cold)
        k, r = statistics.median(kernel_s) * 1e6, statistics.median(raw_s) * 1e6
        print(
            f"  {'cold' if cold else 'warm':6} {k:9.1f} µs {quartile(kernel_s):7.1f}"
            f" {r:8.1f} {quartile(raw_s):7.1f} {k - r:9.1f} µs"
        )


if __name__ == "__main__":
    asyncio.run(main())
