"""A whole kernel whose model is the scripted server on loopback, reached over real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hologram import Kernel
from hologram.agent import Agent
from hologram.channels import CollectingChannel
from hologram.llm import ScriptedModelServer
from hologram.sdk import Event, OutputCap, ToolDef

DEADLINE = 10.0
"""Generous: only a deadlock (serial execution where concurrency is required) reaches it."""


@pytest.fixture
async def model() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


@pytest.fixture
async def kernel(data_dir: Path, model: ScriptedModelServer) -> AsyncIterator[Kernel]:
    environ = {
        "HOLOGRAM_LLM_BASE_URL": model.base_url,
        "HOLOGRAM_LLM_MODEL": "scripted-model",
        "HOLOGRAM_LLM_API_KEY": "sk-test",
    }
    async with Kernel(data_dir, environ=environ) as running:
        add_test_channel(running)
        yield running


def add_test_channel(kernel: Kernel) -> CollectingChannel:
    """A channel that only records what it is sent (production kernels have none, so the
    model is never offered `output_send__test` there)."""
    sink = CollectingChannel("test")
    kernel.state.channels.register_output_channel(
        "test", OutputCap.TEXT, "a channel that only records what it is sent", sink, owner="kernel"
    )
    return sink


@pytest.fixture
def agent(kernel: Kernel) -> Agent:
    assert kernel.state.agent is not None
    return kernel.state.agent


@pytest.fixture
def notebook(kernel: Kernel) -> CollectingChannel:
    channel = kernel.state.channels.get("notebook")
    assert channel is not None and isinstance(channel.handler, CollectingChannel)
    return channel.handler


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.type == kind]


@pytest.fixture
def events(kernel: Kernel) -> Recorder:
    recorder = Recorder()
    kernel.events.subscribe(None, recorder.events.append)
    return recorder


class SlowNote:
    """A `notes_add` tool that records each run and holds it until released: a tool call
    in flight for a preemption to land on."""

    def __init__(self, kernel: Kernel) -> None:
        self.runs: list[str] = []
        self.running, self.release = asyncio.Event(), asyncio.Event()
        kernel.state.stagehost.register_tool(
            ToolDef(
                "notes_add",
                "Add a note.",
                {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
                self._run,
            )
        )

    async def _run(self, args: dict[str, Any]) -> str:
        self.runs.append(args["text"])
        self.running.set()
        await self.release.wait()
        return "noted"


async def within_deadline(awaitable):  # type: ignore[no-untyped-def]
    async with asyncio.timeout(DEADLINE):
        return await awaitable
