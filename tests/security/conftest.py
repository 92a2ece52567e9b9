"""A kernel with the scripted model on loopback, plus tools to attack."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from hologram.sdk import Event, ToolDef
from tests.agent.conftest import add_test_channel

API_KEY = "sk-scripted-provider-key-0001"
GITHUB = "ghp_SecurityTestToken_777"


@pytest.fixture
async def model() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


@pytest.fixture
async def kernel(data_dir: Path, model: ScriptedModelServer) -> AsyncIterator[Kernel]:
    environ = {
        "HOLOGRAM_LLM_BASE_URL": model.base_url,
        "HOLOGRAM_LLM_MODEL": "scripted-model",
        "HOLOGRAM_LLM_API_KEY": API_KEY,
    }
    async with Kernel(data_dir, environ=environ) as running:
        add_test_channel(running)
        await running.config.set("core.security.credential.github.secret", GITHUB)
        yield running


class Calls:
    """A tool that records the arguments it was really called with."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def tool(self, name: str, reply: str = "done", **schema: Any) -> ToolDef:
        properties = {k: {"type": "string"} for k in schema.get("args", ["path"])}

        def handler(args: dict[str, Any]) -> str:
            self.seen.append(args)
            return reply.format(**args)

        return ToolDef(
            name, f"test tool {name}", {"type": "object", "properties": properties}, handler
        )


@pytest.fixture
def events(kernel: Kernel) -> list[Event]:
    seen: list[Event] = []
    kernel.events.subscribe(None, seen.append)
    return seen
