"""LLM source switching through a turn with the scripted model: the agent lists its sources
and switches to another, and the next model call goes there."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from tests.agent.conftest import Recorder
from tests.agent.test_turn_pipeline import tool_messages


@pytest.fixture
async def backup() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


async def test_the_agent_lists_its_sources_and_switches_to_another(
    kernel: Kernel, model: ScriptedModelServer, backup: ScriptedModelServer, events: Recorder
) -> None:
    await kernel.config.set("core.llm.sources.backup.base_url", backup.base_url)
    await kernel.config.set("core.llm.sources.backup.model", "backup-model")
    model.queue_tool_call("llm_sources", {}).queue_text("listed")
    await kernel.say("which models do you have?")
    listing = json.loads(tool_messages(model.last_request)[-1]["content"])
    assert listing["current"] == "default"
    assert {s["source"] for s in listing["sources"]} == {"default", "backup"}

    model.queue_tool_call("llm_switch", {"source": "backup"})
    backup.queue_text("switched, answering from the backup")
    reply = await kernel.say("use the backup model")

    assert reply == "switched, answering from the backup"
    assert "model source is now backup" in tool_messages(backup.last_request)[-1]["content"]
    assert events.of("provider_switched")[-1].payload.llm_source == "backup"


async def test_switching_to_an_unknown_source_names_the_known_ones(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    model.queue_tool_call("llm_switch", {"source": "nowhere"}).queue_text("ok")

    await kernel.say("switch")

    assert (
        "no LLM source 'nowhere'; sources: default"
        in tool_messages(model.last_request)[-1]["content"]
    )
