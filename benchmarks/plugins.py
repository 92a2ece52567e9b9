"""Plugin benchmark: what a tool call costs through a subprocess plugin.

    python benchmarks/plugins.py [--calls 2000] [--runs 5]

A real kernel loads a subprocess plugin (NDJSON JSON-RPC over the child's stdin/stdout) with
one tool, `echo_text`; the same tool is also registered built in (an async handler in the
kernel's process). Printed, as medians over runs:

* the raw RPC round trip (`tool.call` on the plugin's connection), p50 and p99;
* a tool call through the stage host's executor (argument validation included), built in and
  through the plugin, p50, and the added cost of the plugin;
* throughput: sequential calls per second, and with 32 calls in flight.

Target (../shared/TARGETS.md): added cost of a tool call through a subprocess plugin over the
same tool built in, p50 ≤ 1 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from hologram import Kernel
from hologram.sdk import ToolCall, ToolDef

TARGET_MS = 1.0
PARAMETERS = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
PLUGIN = f"""
from hologram.plugins.runtime import PluginApp

app = PluginApp()

@app.tool("Echo the text.", {PARAMETERS!r})
def echo_text(args):
    return args["text"]

app.run()
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def timed(calls: int, one: Any) -> list[float]:
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await one()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def one_run(calls: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "echo"
        folder.mkdir()
        (folder / "plugin.json").write_text(
            json.dumps(
                {"name": "echo", "version": "1", "entry": "main.py", "capabilities": ["tools"]}
            )
        )
        (folder / "main.py").write_text(PLUGIN)
        async with Kernel(Path(tmp) / "data") as kernel:
            entry = await kernel.state.plugins.load_dir(folder)
            host = kernel.state.stagehost

            async def builtin(args: dict[str, Any]) -> str:
                return args["text"]

            host.register_tool(ToolDef("builtin_echo", "Echo.", PARAMETERS, handler=builtin))
            peer = entry.plugin.peer
            args = {"text": "hello plugin"}

            async def rpc() -> None:
                await peer.call("tool.call", {"name": "echo_text", "arguments": args})

            async def via_plugin() -> None:
                await host.execute(ToolCall("c", "echo_text", args))

            async def via_builtin() -> None:
                await host.execute(ToolCall("c", "builtin_echo", args))

            for warm in (rpc, via_plugin, via_builtin):
                await timed(200, warm)
            rpc_ms = await timed(calls, rpc)
            plugin_ms = await timed(calls, via_plugin)
            builtin_ms = await timed(calls, via_builtin)
            started = time.perf_counter()
            for _ in range(calls // 32):
                await asyncio.gather(*(via_plugin() for _ in range(32)))
            concurrent = (calls // 32 * 32) / (time.perf_counter() - started)
    return {
        "rpc_p50": percentile(rpc_ms, 0.5),
        "rpc_p99": percentile(rpc_ms, 0.99),
        "builtin_p50": percentile(builtin_ms, 0.5),
        "plugin_p50": percentile(plugin_ms, 0.5),
        "added_p50": percentile(plugin_ms, 0.5) - percentile(builtin_ms, 0.5),
        "plugin_per_s": 1000 / statistics.mean(plugin_ms),
        "builtin_per_s": 1000 / statistics.mean(builtin_ms),
        "plugin_concurrent_per_s": concurrent,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    runs = [asyncio.run(one_run(options.calls)) for _ in range(options.runs)]
    median = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    print(f"plugins: {options.runs} runs x {options.calls} calls (medians over runs)")
    print(
        f"  RPC round trip (tool.call)           p50 {median['rpc_p50'] * 1000:7.1f} µs   p99 {median['rpc_p99'] * 1000:7.1f} µs"
    )
    print(f"  tool call, built in                  p50 {median['builtin_p50'] * 1000:7.1f} µs")
    print(f"  tool call, subprocess plugin         p50 {median['plugin_p50'] * 1000:7.1f} µs")
    verdict = "meets" if median["added_p50"] <= TARGET_MS else "MISSES"
    print(
        f"  added cost of the plugin             p50 {median['added_p50'] * 1000:7.1f} µs   target ≤ {TARGET_MS * 1000:.0f} µs ({verdict})"
    )
    print(
        f"  throughput, sequential               built in {median['builtin_per_s']:8.0f}/s   plugin {median['plugin_per_s']:8.0f}/s"
    )
    print(f"  throughput, plugin, 32 in flight     {median['plugin_concurrent_per_s']:8.0f}/s")


if __name__ == "__main__":
    main()
