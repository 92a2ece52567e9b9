"""The shipped MCP plugin against real MCP servers written with the official SDK: one as a
stdio subprocess of the plugin, one serving streamable HTTP on 127.0.0.1 in a process of its
own (so a test can kill it and start it again on the same port)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hologram import Kernel
from hologram.plugins import PluginRegistry
from hologram.sdk import ToolCall, ToolResult
from tests.plugins.conftest import wait_for

SERVER = str(Path(__file__).with_name("server.py"))

FAST = {
    "plugin.mcp.health_interval_s": 0.2,
    "plugin.mcp.restart_backoff_s": 0.1,
    "plugin.mcp.restart_backoff_max_s": 0.4,
    "plugin.mcp.connect_timeout_s": 10.0,
}
"""Short enough that a restart is seen within a test, never a wall-clock assertion."""

ROOMY = {"core.plugins.start_timeout_s": 60.0}
"""The plugin imports the MCP SDK and waits for its servers' first connections before it
answers `plugin.start`: a few seconds alone, beyond the default 10 s on an overloaded
machine (four of these tests at once on two cores). Its start time is not under test."""


def stdio(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SERVER], **extra}


async def start_mcp(kernel: Kernel, servers: dict[str, Any], **settings: Any) -> PluginRegistry:
    for key, value in {**FAST, **ROOMY, **settings}.items():
        await kernel.config.set(key, value)
    await kernel.config.set("plugin.mcp.servers", servers)
    registry = kernel.state.plugins
    assert registry is not None
    await registry.enable("mcp")
    # Starting waits a few seconds for the servers' first connections; on a loaded machine
    # one may take longer, and a test wants its servers up (or failed) before it goes on.
    await wait_for(
        lambda: all(s["state"] != "connecting" for s in status(kernel)["servers"].values()),
        "every server connected or failed once",
    )
    return registry


def status(kernel: Kernel) -> dict[str, Any]:
    assert kernel.state.plugins is not None
    sdk = kernel.state.plugins.get("mcp").sdk
    assert sdk is not None
    return sdk.status


def server_state(kernel: Kernel, name: str) -> dict[str, Any]:
    return status(kernel).get("servers", {}).get(name, {})


async def call(kernel: Kernel, name: str, /, **arguments: Any) -> ToolResult:
    return await kernel.state.stagehost.execute(ToolCall("c", name, arguments))


async def ok(kernel: Kernel, name: str, /, **arguments: Any) -> str:
    result = await call(kernel, name, **arguments)
    assert not result.is_error, result.content
    return result.content


def tools(kernel: Kernel, prefix: str = "mcp__") -> list[str]:
    return sorted(t.name for t in kernel.state.stagehost.tools.tools() if t.name.startswith(prefix))


async def ready_again(kernel: Kernel, name: str, restarts: int) -> None:
    await wait_for(
        lambda: (
            server_state(kernel, name).get("state") == "ready"
            and server_state(kernel, name).get("restarts", 0) >= restarts
        ),
        f"server {name} is back",
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class HttpServer:
    """The test server over streamable HTTP, as its own process."""

    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def start(self) -> HttpServer:
        self.process = subprocess.Popen(
            [sys.executable, SERVER, "--http", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        async with asyncio.timeout(30):
            while True:
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                except OSError:
                    assert self.process.poll() is None, "the HTTP MCP server died at start"
                    await asyncio.sleep(0.05)
                    continue
                writer.close()
                return self

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
async def http_server() -> AsyncIterator[HttpServer]:
    server = await HttpServer().start()
    try:
        yield server
    finally:
        server.kill()
