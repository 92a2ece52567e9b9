"""The failback chain: with every LLM source down, recoverydiag answers the input with its
diagnosis instead of a model, the failback plugins stay up, and the agent cannot stop them."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.plugins import PluginAction, State
from tests.agent.conftest import Recorder


@pytest.fixture
async def stranded(data_dir: Path) -> AsyncIterator[Kernel]:
    """A kernel whose only model source listens nowhere."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environ = {"HOLOGRAM_LLM_BASE_URL": f"http://127.0.0.1:{port}/v1", "HOLOGRAM_LLM_MODEL": "m"}
    async with Kernel(data_dir, environ=environ) as running:
        yield running


async def test_with_every_source_down_recoverydiag_answers_with_the_diagnosis(
    stranded: Kernel,
) -> None:
    seen = Recorder()
    stranded.events.subscribe(None, seen.events.append)

    reply = await stranded.say("hello, are you there?")

    assert reply.startswith("[recoverydiag] No model could answer")
    assert "- default:" in reply and "Last failure:" in reply
    assert [e.payload.kind for e in seen.of("system")].count("answered_without_model") == 1
    registry = stranded.state.plugins
    assert registry is not None
    for name in stranded.config.get("core.agent.failback_plugins"):
        assert registry.get(name).state is State.RUNNING


async def test_the_agent_cannot_stop_a_failback_plugin(stranded: Kernel) -> None:
    registry = stranded.state.plugins
    assert registry is not None
    manager = registry.get("pluginmgr").plugin

    with pytest.raises(Exception, match="failback chain"):
        await manager.change(PluginAction.DISABLE, "recoverydiag")  # type: ignore[union-attr]

    assert registry.get("recoverydiag").state is State.RUNNING
