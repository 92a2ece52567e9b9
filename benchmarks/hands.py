"""Hands benchmark: what an MCP tool call costs through the kernel, and a `cmd_run`.

    python benchmarks/hands.py [--calls 300] [--commands 100] [--runs 3]

One run writes a small MCP server with the official SDK's server API (one tool, `add`) and
measures, in one process:

* the same call made directly with the SDK's own client (`Client.call_tool` over stdio to a
  server process of its own), p50: the baseline;
* the call through the kernel: the stage host's executor (argument validation, the firewall),
  the JSON-RPC hop to the mcp plugin's process and the plugin's SDK client to its server, p50;
  the difference is the kernel's added cost;
* `cmd_run` of `true` through the kernel (the cmd plugin starts a shell for it), p50.

Printed as medians over runs, beside the target (../shared/TARGETS.md): added cost of an MCP
tool call through the kernel over the SDK client's direct call, p50 ≤ 1 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from hologram import Kernel
from hologram.sdk import ToolCall

TARGET_MS = 1.0
SERVER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


server.run()
'''


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


async def direct_p50(server: Path, calls: int) -> float:
    params = StdioServerParameters(command=sys.executable, args=[str(server)])
    async with Client(params, cache=None) as client:

        async def one() -> None:
            await client.call_tool("add", {"a": 1, "b": 2})

        await timed(50, one)
        return percentile(await timed(calls, one), 0.5)


async def one_run(calls: int, commands: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        server = Path(tmp) / "bench_server.py"
        server.write_text(SERVER)
        direct = await direct_p50(server, calls)
        async with Kernel(Path(tmp) / "data") as kernel:
            await kernel.config.set(
                "plugin.mcp.servers", {"bench": {"command": sys.executable, "args": [str(server)]}}
            )
            plugins, host = kernel.state.plugins, kernel.state.stagehost
            await plugins.enable("mcp")
            await plugins.enable("cmd")
            async with asyncio.timeout(60):
                while "mcp__bench__add" not in host.tools:  # noqa: ASYNC110  (a poll)
                    await asyncio.sleep(0.05)

            async def through_kernel() -> None:
                result = await host.execute(ToolCall("c", "mcp__bench__add", {"a": 1, "b": 2}))
                assert result.content == "3", result.content

            async def command() -> None:
                result = await host.execute(ToolCall("c", "cmd_run", {"command": "true"}))
                assert result.content == "[exit status 0]", result.content

            await timed(50, through_kernel)
            kernel_p50 = percentile(await timed(calls, through_kernel), 0.5)
            await timed(10, command)
            command_p50 = percentile(await timed(commands, command), 0.5)
    return {
        "direct_p50": direct,
        "kernel_p50": kernel_p50,
        "added_p50": kernel_p50 - direct,
        "cmd_p50": command_p50,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--commands", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    runs = [asyncio.run(one_run(options.calls, options.commands)) for _ in range(options.runs)]
    median = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    print(
        f"hands: {options.runs} runs x {options.calls} MCP calls, {options.commands} commands "
        "(medians over runs)"
    )
    print(f"  MCP call, SDK client direct          p50 {median['direct_p50']:7.3f} ms")
    print(f"  MCP call, through the kernel         p50 {median['kernel_p50']:7.3f} ms")
    verdict = "meets" if median["added_p50"] <= TARGET_MS else "MISSES"
    print(
        f"  added cost of the kernel             p50 {median['added_p50']:7.3f} ms   "
        f"target ≤ {TARGET_MS:.0f} ms ({verdict})"
    )
    print(f"  cmd_run of `true`, through the kernel p50 {median['cmd_p50']:7.3f} ms   (no target)")


if __name__ == "__main__":
    main()
