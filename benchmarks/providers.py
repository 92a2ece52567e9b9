"""Provider-layer costs, printed beside their targets (../shared/TARGETS.md).

    python benchmarks/providers.py [--rounds N] [--image-rounds N] [--ttft-runs N]

1. Per adapter: transform_request + transform_response of one realistic turn (a system
   prompt, a few messages, a tool definition; a response with text and a tool call), in µs,
   median of many calls. Target ≤ 150 µs.
2. A full round trip through the openai adapter to the local scripted model server, against
   a raw httpx POST of the same body to the same server, measured in one run, interleaved so
   both see the same machine state. Target ratio ≤ 1.3×.
4. Per adapter: serializing a request that carries one 1 MB image (CompletionRequest to
   the body's text: to_unified + transform_request), in a user message and in a tool result,
   against the same request without it, median µs. `image_serialization` is the function
   benchmarks/media.py reuses for the request end of its inject-to-request figure.
5. transform_request of a request with a kernel turn's 43 tools, the tool set's body fields
   kept from one request to the next (the adapter's transform_tools, called once per set)
   against the tools sent through transform_request with the rest of the request.
3. Time to first token through a whole kernel (an input injected, to the first
   agent_output_delta event), against the time to the first byte of a raw httpx stream of
   the same request body to the same server, interleaved, median of the runs. Target ≤ 1.2×.
   The kernel's figure from the injection includes the turn's steps before the model call
   (journal, memory, prompt), which the raw stream does not pay; so the figure the target
   is read on starts where the server receives the request: the server's receipt to the
   first delta, against the raw stream's receipt to its first byte ("streaming must be
   nearly free"). Each side is timed where its reader gets the data: the kernel's where a
   subscriber gets the delta, the raw side's where its reader gets the bytes.
   The raw stream is sent as the kernel's request is: the kernel's request reaches a server
   that idled through the turn before it, and a server that idled answers later (on this
   machine, ~0.1 ms later from receipt to its first token's frame). So the raw stream
   reaches the server as long after its reply was queued as the kernel's request did, for
   the server to be in the same state for both (the printed split shows each one's server
   part); and its client is kept busy until it sends, as the kernel's process is with the
   turn (see `busy_until`). The target's ratio is the median of the runs' own ratios: each
   run's kernel stream and raw stream are measured a few milliseconds apart, so a drift of
   the machine's speed (up to 2× here, for minutes at a time) falls on both. The same raw
   stream sent at once after the benchmark's control requests (the server busy just
   before) is printed beside it, with its first token's bytes (the first byte is the role
   frame's, which a kernel cannot show), and the stream split where the server sends the
   first token's frame: the server's part, and the client's, which is what the kernel adds
   to a raw reader.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import os
import re
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
from serve_load import start  # the sibling script (run as python benchmarks/providers.py)

from hologram import Kernel
from hologram.llm import (
    AdapterLibrary,
    ChatMessage,
    CompletionRequest,
    ImageBlock,
    LuaAdaptedProvider,
    ScriptedModelServer,
    ScriptedReply,
    SourceConfig,
    TextBlock,
)
from hologram.sdk import ToolCall, ToolDef, ToolResult

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "llm" / "fixtures"
RESPONSES = {
    "openai": "openai_tool_call.json",
    "deepseek": "deepseek_reasoning.json",
    "ollama": "ollama_tool_call.json",
    "anthropic": "anthropic_tool_use.json",
    "gemini": "gemini_function_call.json",
    "openai_responses": "openai_responses_function_call.json",
    "azure_openai": "openai_tool_call.json",
    "openrouter": "openai_tool_call.json",
    "qwen": "openai_tool_call.json",
    "moonshot": "openai_tool_call.json",
}
TRANSFORM_TARGET_US = 150.0
RATIO_TARGET = 1.3
TTFT_TARGET = 1.2
# A content delta with text in an OpenAI chunk, as the raw side finds its first token.
FIRST_TOKEN = re.compile(rb'"content":\s*"[^"]')


def turn() -> CompletionRequest:
    return CompletionRequest(
        messages=[
            ChatMessage.system("You are Holo, a companion who remembers. " * 8),
            ChatMessage.user("What's the weather in Paris? 巴黎今天天气怎么样？"),
            ChatMessage.assistant(
                "Let me check.", [ToolCall("c1", "get_weather", {"city": "Paris"})]
            ),
            ChatMessage.tool(ToolResult("c1", "get_weather", "sunny, 21°C, light wind")),
            ChatMessage.user("And tomorrow?"),
        ],
        tools=[
            ToolDef(
                "get_weather",
                "Current weather for a city",
                {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            )
        ],
        temperature=0.3,
        model="bench-model",
    )


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


async def transforms(rounds: int) -> None:
    library = AdapterLibrary()
    unified = turn().to_unified()
    print(f"adapter transform_request + transform_response, median of {rounds} calls")
    print(f"  {'adapter':<16} {'request µs':>11} {'response µs':>12} {'total µs':>9}  target")
    adapters = {
        name: (library.load(name), (FIXTURES / fixture).read_text())
        for name, fixture in RESPONSES.items()
    }
    for adapter, body in adapters.values():
        for _ in range(200):  # warm up
            await adapter.transform_request(unified)
            await adapter.transform_response(body)
    # Round robin: whatever drifts during the run (the process warming, a neighbour's load)
    # falls on every adapter alike; measured one after another, the first ones carried it.
    req: dict[str, list[float]] = {name: [] for name in adapters}
    resp: dict[str, list[float]] = {name: [] for name in adapters}
    for _ in range(rounds):
        for name, (adapter, body) in adapters.items():
            started = time.perf_counter()
            await adapter.transform_request(unified)
            middle = time.perf_counter()
            await adapter.transform_response(body)
            req[name].append(middle - started)
            resp[name].append(time.perf_counter() - middle)
    for name in adapters:
        total = median_us([a + b for a, b in zip(req[name], resp[name], strict=True)])
        verdict = "ok" if total <= TRANSFORM_TARGET_US else "OVER"
        print(
            f"  {name:<16} {median_us(req[name]):>11.1f} {median_us(resp[name]):>12.1f}"
            f" {total:>9.1f}  ≤ {TRANSFORM_TARGET_US:.0f}  {verdict}"
        )


def with_image(request: CompletionRequest, image: ImageBlock, in_tool: bool) -> CompletionRequest:
    """`request` with `image` on its first user message, or on its tool result."""
    messages = list(request.messages)
    if in_tool:
        at = next(i for i, m in enumerate(messages) if m.tool_call_id)
        old = messages[at]
        result = ToolResult(old.tool_call_id, old.name, old.text)
        messages[at] = ChatMessage.tool(result, [image])
    else:
        at = next(i for i, m in enumerate(messages) if m.role == "user")
        messages[at] = ChatMessage.user([TextBlock(messages[at].text), image])
    return CompletionRequest(messages, request.tools, request.model, request.temperature)


def megabyte_image() -> ImageBlock:
    raw = os.urandom(1024 * 1024)
    return ImageBlock(
        "image/png",
        data=base64.b64encode(raw).decode(),
        digest=hashlib.sha256(raw).hexdigest(),
    )


async def image_serialization(rounds: int) -> dict[str, dict[str, float]]:
    """Median µs per adapter to serialize the turn plain, with a 1 MB image in the user's
    message, and with it in the tool result: {adapter: {"plain", "user", "tool"}}."""
    library = AdapterLibrary()
    image = megabyte_image()
    requests = {
        "plain": turn(),
        "user": with_image(turn(), image, in_tool=False),
        "tool": with_image(turn(), image, in_tool=True),
    }
    adapters = {name: library.load(name) for name in RESPONSES}
    for adapter in adapters.values():
        for request in requests.values():
            for _ in range(5):  # warm up
                await adapter.transform_request(request.to_unified())
    samples: dict[str, dict[str, list[float]]] = {
        name: {kind: [] for kind in requests} for name in adapters
    }
    for _ in range(rounds):  # round robin, as in transforms()
        for name, adapter in adapters.items():
            for kind, request in requests.items():
                started = time.perf_counter()
                await adapter.transform_request(request.to_unified())
                samples[name][kind].append(time.perf_counter() - started)
    return {
        name: {kind: median_us(times) for kind, times in kinds.items()}
        for name, kinds in samples.items()
    }


async def images(rounds: int) -> None:
    found = await image_serialization(rounds)
    print(f"\nserializing a request with one 1 MB image, median of {rounds} per adapter")
    print(f"  {'adapter':<16} {'no image µs':>12} {'user image µs':>14} {'tool image µs':>14}")
    for name, row in found.items():
        print(f"  {name:<16} {row['plain']:>12.1f} {row['user']:>14.1f} {row['tool']:>14.1f}")


def many_tools(count: int = 43) -> CompletionRequest:
    """The turn with as many tools as a kernel's turn offers (43 schemas, ~20 KB)."""
    base = turn()
    tools = [
        ToolDef(
            f"tool_{i}",
            f"Tool number {i}: does one thing well, with a description of a sentence or two.",
            {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to look for"},
                    "top": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
                    "mode": {"type": "string", "enum": ["fast", "thorough"]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        )
        for i in range(count)
    ]
    return CompletionRequest(base.messages, tools, base.model, base.temperature)


async def tool_sets(rounds: int) -> None:
    """transform_request of a request with a kernel turn's tool set, its body fields kept
    from the request before (as turn after turn sends the set), against the tools sent
    through transform_request each time."""
    library = AdapterLibrary()
    unified = many_tools().to_unified("bench-model", stream=True)
    size = len(json.dumps(unified))
    print(f"\ntransform_request with 43 tools ({size} bytes), median of {rounds} calls")
    print(f"  {'adapter':<16} {'kept µs':>9} {'whole µs':>9} {'ratio':>7}")
    for name in ("openai", "anthropic", "gemini"):
        kept, whole = library.load(name), library.load(name, keep_tool_sets=0)
        samples: dict[str, list[float]] = {"kept": [], "whole": []}
        for i in range(rounds + 20):
            for kind, adapter in (("kept", kept), ("whole", whole)):
                started = time.perf_counter()
                await adapter.transform_request(unified)
                if i >= 20:  # warm up
                    samples[kind].append(time.perf_counter() - started)
        k, w = median_us(samples["kept"]), median_us(samples["whole"])
        print(f"  {name:<16} {k:>9.1f} {w:>9.1f} {k / w:>6.2f}×")


async def round_trip(rounds: int) -> None:
    request = turn()
    async with ScriptedModelServer() as server:
        provider = LuaAdaptedProvider(
            SourceConfig("bench", "openai", server.base_url, "sk-bench", "bench-model"),
            AdapterLibrary().load("openai"),
        )
        # The raw baseline posts exactly the body the adapter produces, with the same headers.
        body = await provider.adapter.transform_request(request.to_unified("bench-model"))
        headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
        reply = ScriptedReply(text="It will rain tomorrow.", tool_calls=[])
        async with httpx.AsyncClient(trust_env=False) as raw:
            adapted: list[float] = []
            direct: list[float] = []
            for i in range(rounds + 50):
                server.queue(reply, reply)
                started = time.perf_counter()
                await provider.chat(request)
                middle = time.perf_counter()
                response = await raw.post(
                    server.base_url + "/chat/completions", content=body.encode(), headers=headers
                )
                json.loads(response.text)
                ended = time.perf_counter()
                if i >= 50:  # the first calls open connections and warm caches
                    adapted.append(middle - started)
                    direct.append(ended - middle)
                server.requests.clear()
        await provider.aclose()
    a, d = median_us(adapted), median_us(direct)
    ratio = a / d
    verdict = "ok" if ratio <= RATIO_TARGET else "OVER"
    print(f"\nround trip to the local scripted model, median of {rounds}")
    print(f"  through the openai adapter  {a:8.1f} µs")
    print(f"  raw httpx POST, same body   {d:8.1f} µs")
    print(f"  ratio                       {ratio:8.2f} ×   target ≤ {RATIO_TARGET}  {verdict}")


def busy_until(deadline: float) -> None:
    """Spin until `deadline` (perf_counter). A process that slept runs the code that comes
    next slower for a while on this machine (a 15 µs adapter transform took 31-64 µs after a
    millisecond's sleep): the kernel's process is busy with the turn until its request
    goes, so the raw client that stands beside it is kept busy too."""
    while time.perf_counter() < deadline:
        pass


async def first_token(runs: int) -> None:
    """The model runs in its own process, as a remote model does: in the kernel's event
    loop it would wait behind the turn's own work and charge the kernel for it.

    Every time is read on one clock: perf_counter is the system's monotonic clock, the
    same in both processes, so the model's receipt of a request and its sending of each
    frame read on this one."""
    reply = {"text": "It will rain tomorrow in Paris, bring an umbrella."}
    model, base_url = start(["scripted-model", "--port", "0"], r"(http://127\.0\.0\.1:\d+/v1)")
    control = base_url.removesuffix("/v1") + "/_scripted"
    environ = {
        "HOLOGRAM_LLM_BASE_URL": base_url,
        "HOLOGRAM_LLM_MODEL": "bench-model",
        "HOLOGRAM_LLM_API_KEY": "sk-bench",
    }
    # Per figure, its seconds in each run. "Matched": the raw stream reaching the server as
    # long after its reply was queued as the kernel's request did; "at once": sent right
    # after queuing it.
    samples: dict[str, list[float]] = defaultdict(list)
    try:
        async with httpx.AsyncClient(trust_env=False, timeout=30) as raw:

            async def queue_reply() -> float:
                (await raw.post(control + "/replies", json=[reply])).raise_for_status()
                return time.perf_counter()

            async def last_request() -> dict[str, Any]:
                asked = (await raw.get(control + "/requests")).json()[-1]
                await raw.delete(control + "/requests")
                return asked

            async def raw_stream(body: dict[str, Any], key: str) -> float:
                """Send `body` (a request the server recorded) again, raw; keep when its
                reader got the stream's first bytes and the first token's, and the server's
                own times, under `key`. Returns how long the request took to arrive."""
                started = time.perf_counter()
                byte_at = token_at = 0.0
                async with raw.stream(
                    "POST",
                    base_url.removesuffix("/v1") + body["path"],
                    content=body["body"].encode(),
                    headers={
                        "content-type": "application/json",
                        "authorization": "Bearer sk-bench",
                    },
                ) as response:
                    async for piece in response.aiter_raw():
                        now = time.perf_counter()
                        byte_at = byte_at or now
                        if not token_at and FIRST_TOKEN.search(piece):
                            token_at = now
                assert token_at, "no frame of the raw stream held the first token"
                asked = await last_request()
                received, token_sent = asked["received_at"], asked["frames_sent_at"][1]
                samples[f"{key} start→byte"].append(byte_at - started)
                samples[f"{key} byte"].append(byte_at - received)
                samples[f"{key} token"].append(token_at - received)
                samples[f"{key} server"].append(token_sent - received)
                samples[f"{key} client"].append(token_at - token_sent)
                return received - started

            with tempfile.TemporaryDirectory(prefix="hologram-ttft-") as data:
                async with Kernel(Path(data), environ=environ) as kernel:
                    first = asyncio.Event()
                    seen: list[float] = []

                    def on_delta(event: Any) -> None:
                        # Timed here, where a subscriber gets the delta, as the raw side is
                        # timed where its reader gets the bytes: timed after `first.wait()`,
                        # the figure also held the rest of the turn's step and a pass of
                        # the event loop before this task woke (~50-100 µs here).
                        if not first.is_set():
                            seen.append(time.perf_counter())
                        first.set()

                    kernel.events.subscribe("agent_output_delta", on_delta)
                    sending = 0.0  # how long the last raw request took to reach the server
                    for i in range(runs + 5):
                        first.clear()
                        queued = await queue_reply()
                        ticket = await kernel.inject(f"will it rain? ({i})")
                        await first.wait()
                        delta_at = seen[-1]
                        await ticket
                        sent = await last_request()
                        asked = sent["received_at"]
                        # The first token is in the second frame, after the role's.
                        token_sent = sent["frames_sent_at"][1]
                        samples["through"].append(delta_at - queued)
                        samples["before model"].append(asked - queued)
                        samples["kernel stream"].append(delta_at - asked)
                        samples["kernel server"].append(token_sent - asked)
                        samples["kernel client"].append(delta_at - token_sent)
                        # The same body, raw: first reaching the server as long after its
                        # reply was queued as the kernel's request did (less the time the
                        # last raw request took to arrive), the client busy until it sends,
                        # as the kernel was with the turn; then at once.
                        idled = asked - queued
                        queued = await queue_reply()
                        busy_until(queued + idled - sending)
                        sending = await raw_stream(sent, "matched")
                        await queue_reply()
                        await raw_stream(sent, "at once")
                        if i < 5:  # the first turns warm the caches and open connections
                            for values in samples.values():
                                values.pop()
    finally:
        model.terminate()
        model.wait(timeout=30)
    m = {name: median_us(values) for name, values in samples.items()}

    def paired(over: str) -> float:
        """The median of the runs' own ratios: each run's kernel stream over the raw stream
        sent just after it, so a drift of the machine's speed falls on both."""
        return statistics.median(
            a / b for a, b in zip(samples["kernel stream"], samples[over], strict=True)
        )

    k, d = m["through"], m["matched start→byte"]
    print(f"\ntime to first token, median of {runs} streamed turns (the model in its own process)")
    print(f"  through the kernel (reply queued → first delta)   {k:9.1f} µs")
    print(f"    of which the turn before the request             {m['before model']:9.1f} µs")
    ratio = paired("matched byte")
    verdict = "ok" if ratio <= TTFT_TARGET else "OVER"
    print("  the stream, from the server's receipt of the request (ratios: the median of the")
    print("  runs' own, and the medians' in brackets):")
    print(f"    kernel: → first delta                            {m['kernel stream']:9.1f} µs")
    for key, what in (
        ("matched byte", "raw, matched: → first byte "),
        ("matched token", "raw, matched: → first token"),
        ("at once byte", "raw, at once: → first byte "),
        ("at once token", "raw, at once: → first token"),
    ):
        print(
            f"    {what}                      {m[key]:9.1f} µs  "
            f"{paired(key):5.2f} × ({m['kernel stream'] / m[key]:4.2f} ×)"
        )
    print(f"  ratio to the raw, matched stream's first byte      {ratio:9.2f} ×", end="")
    print(f"   target ≤ {TTFT_TARGET}  {verdict}")
    print("  split where the server sends the first token's frame (server: receipt → sent;")
    print("  client: sent → the first delta, or the token's bytes read raw):")
    print(f"    {'':14} {'server µs':>10} {'client µs':>10}")
    for name, key in (
        ("kernel", "kernel"),
        ("raw, matched", "matched"),
        ("raw, at once", "at once"),
    ):
        print(f"    {name:14} {m[key + ' server']:10.1f} {m[key + ' client']:10.1f}")
    print(f"  raw stream, matched: sent → first byte              {d:9.1f} µs")
    print(
        f"  ratio of the whole to it                            {k / d:9.2f} ×"
        "   (with the turn's steps before the model call)"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--ttft-runs", type=int, default=30)
    parser.add_argument("--image-rounds", type=int, default=40)
    args = parser.parse_args()
    await transforms(args.rounds)
    await images(args.image_rounds)
    await tool_sets(max(args.rounds // 10, 50))
    await round_trip(max(args.rounds // 4, 100))
    await first_token(args.ttft_runs)


if __name__ == "__main__":
    asyncio.run(main())
