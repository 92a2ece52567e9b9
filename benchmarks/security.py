"""Security benchmark: what the firewall adds to a tool call and to a model request.

    python benchmarks/security.py [--calls 2000] [--runs 5]

A real kernel (the full module set) with four secrets configured runs, in one process:

* a tool call through the stage host's runner, guarded (policy, path sandbox on a `path`
  argument, an `@{alias}` filled in, the result scrubbed and reviewed) and unguarded (the
  same runner the firewall wraps), p50 of each and the added cost;
* the request guard alone on a realistic request (40 messages, ~24k characters, 12 tools)
  and its response: masking on the way out and back;
* a whole model request over loopback HTTP to the scripted model server, with and without
  the guard, p50 of each and the ratio.

Model requests alternate guarded and unguarded call by call, so drift hits both; figures
are medians over runs.

Target (../shared/TARGETS.md): firewall cost per tool call ≤ 100 µs.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hologram import Kernel
from hologram.llm import ChatMessage, CompletionRequest, CompletionResponse, ScriptedModelServer
from hologram.sdk import ToolCall, ToolDef

TARGET_US = 100.0
PARAMETERS = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "token": {"type": "string"}},
    "required": ["path"],
}
SECRETS = {
    "core.security.credential.github.secret": "ghp_benchmarkTokenValue0001",
    "core.security.credential.mail.password": "a long mail password for the bench",
    "plugin.qq.token": "qq-bench-token-000111222",
}


async def read_file(args: dict[str, Any]) -> str:
    return f"contents of {args['path']}: " + "lorem ipsum dolor sit amet " * 20


async def p50_us(calls: int, one: Callable[[], Awaitable[Any]]) -> float:
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await one()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def request_of(size: int = 40) -> CompletionRequest:
    line = "The user talked about the weather, a trip to Hangzhou and 西湖的风景. "
    messages = [ChatMessage.system("You are a companion. " + line * 20)]
    for i in range(size):
        messages.append(ChatMessage.user(f"message {i}: " + line * 8))
    tools = [ToolDef(f"tool_{i}", "a tool " + line, PARAMETERS) for i in range(12)]
    return CompletionRequest(messages=messages, tools=tools)


async def one_run(kernel: Kernel, model: ScriptedModelServer, calls: int) -> dict[str, float]:
    stagehost = kernel.state.stagehost
    guarded = stagehost.runner
    raw = guarded.inner
    tools = {t.name: t for t in stagehost.tools.tools()}
    call = ToolCall("c1", "bench_read", {"path": "notes/today.md", "token": "@{github}"})
    figures = {
        "tool_guarded": await p50_us(calls, lambda: guarded.execute(call, tools)),
        "tool_raw": await p50_us(calls, lambda: raw.execute(call, tools)),
    }
    guard = kernel.state.llm.guard
    request = request_of()
    response = CompletionResponse(content="Sure, here it is. " * 20)

    async def guard_only() -> None:
        guard.inbound(response)
        guard.outbound(request)

    figures["guard_only"] = await p50_us(calls, guard_only)
    manager = kernel.state.llm
    chats = max(50, calls // 20)

    async def chat() -> None:
        model.queue_text("hello")
        await manager.chat(request)

    # One call with the guard and one without, in turn, so drift in the server and the loop
    # hits both sides alike.
    with_guard: list[float] = []
    without: list[float] = []
    pair = ((with_guard, guard), (without, None))
    for index in range(chats):
        # Which side goes first swaps every time: the first of two calls pays differently.
        for samples, mounted in pair if index % 2 else pair[::-1]:
            manager.guard = mounted
            started = time.perf_counter()
            await chat()
            samples.append(time.perf_counter() - started)
    manager.guard = guard
    figures["chat_guarded"] = statistics.median(with_guard) * 1e6
    figures["chat_raw"] = statistics.median(without) * 1e6
    return figures


async def run(calls: int, runs: int) -> dict[str, float]:
    async with ScriptedModelServer() as model:
        with tempfile.TemporaryDirectory() as tmp:
            environ = {
                "HOLOGRAM_LLM_BASE_URL": model.base_url,
                "HOLOGRAM_LLM_MODEL": "scripted-model",
                "HOLOGRAM_LLM_API_KEY": "sk-bench-provider-key-01",
            }
            async with Kernel(Path(tmp) / "data", environ=environ) as kernel:
                for key, value in SECRETS.items():
                    await kernel.config.set(key, value)
                kernel.state.stagehost.register_tool(
                    ToolDef("bench_read", "read a file", PARAMETERS, read_file), owner="bench"
                )
                results = [await one_run(kernel, model, calls) for _ in range(runs)]
    return {key: statistics.median(r[key] for r in results) for key in results[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    m = asyncio.run(run(options.calls, options.runs))
    added = m["tool_guarded"] - m["tool_raw"]
    verdict = "meets" if added <= TARGET_US else "MISSES"
    print(f"security: {options.runs} runs x {options.calls} calls (medians over runs)")
    print(f"  tool call, unguarded runner          p50 {m['tool_raw']:7.1f} µs")
    print(f"  tool call, through the firewall      p50 {m['tool_guarded']:7.1f} µs")
    print(
        f"  firewall cost per tool call          p50 {added:7.1f} µs   "
        f"target ≤ {TARGET_US:.0f} µs ({verdict}); ratio {m['tool_guarded'] / m['tool_raw']:.2f}×"
    )
    print(f"  request guard alone (40 msgs, ~24k chars, out + back) p50 {m['guard_only']:7.1f} µs")
    print(f"  model request over loopback, unguarded p50 {m['chat_raw'] / 1000:6.2f} ms")
    print(f"  model request over loopback, guarded   p50 {m['chat_guarded'] / 1000:6.2f} ms")
    print(
        f"  firewall cost per model request      p50 {m['chat_guarded'] - m['chat_raw']:7.1f} µs; "
        f"ratio {m['chat_guarded'] / m['chat_raw']:.2f}×"
    )


if __name__ == "__main__":
    main()
