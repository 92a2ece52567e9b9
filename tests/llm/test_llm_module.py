"""The `llm` kernel module: sources from config at boot, the offline model, user adapters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from hologram import Kernel
from hologram.events import EventsModule
from hologram.llm import (
    AdapterLibrary,
    AllProvidersFailed,
    ChatMessage,
    CompletionRequest,
    LLMModule,
    ProviderManager,
    ScriptedModelServer,
)
from hologram.sdk import Event, EventType

HELLO = CompletionRequest([ChatMessage.user("hello")])


class RecordingEvents(EventsModule):
    """The events module, with a recorder subscribed before any other module runs."""

    def __init__(self, seen: list[Event]) -> None:
        super().__init__()
        self.seen = seen

    async def init(self, state: Any) -> None:
        await super().init(state)
        state.events.subscribe(None, self.seen.append)


def kernel(data_dir: Path, seen: list[Event], **environ: str) -> Kernel:
    return Kernel(data_dir, modules=[RecordingEvents(seen), LLMModule()], environ=environ)


async def test_with_no_llm_configured_the_kernel_uses_the_offline_model_and_says_so(
    data_dir: Path,
) -> None:
    seen: list[Event] = []
    async with kernel(data_dir, seen) as k:
        manager = k.state.llm
        assert isinstance(manager, ProviderManager)
        [offline] = [e for e in seen if e.type == EventType.PROVIDER_OFFLINE]
        assert offline.payload.model == "offline-scripted"
        base_url = offline.payload.base_url
        assert base_url.startswith("http://127.0.0.1:")
        response = await manager.chat(HELLO)
        assert response.content.startswith("(offline scripted model)")
        assert response.source == "default"
        log = (data_dir / "logs" / "hologram.log").read_text()
        assert "the offline scripted model answers" in log
    # Shutting the kernel down stopped the offline model's server.
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(base_url + "/models")


async def test_a_configured_source_is_used_through_the_real_adapter(
    data_dir: Path, server: ScriptedModelServer
) -> None:
    seen: list[Event] = []
    server.queue_text("a real reply")
    environ = {
        "HOLOGRAM_LLM_BASE_URL": server.base_url,
        "HOLOGRAM_LLM_API_KEY": "sk-env",
        "HOLOGRAM_LLM_MODEL": "gpt-4o",
    }
    async with kernel(data_dir, seen, **environ) as k:
        assert k.state.llm is not None
        response = await k.state.llm.chat(HELLO)
        assert k.state.llm.max_context_tokens == 128_000
    assert (response.content, response.source) == ("a real reply", "default")
    assert server.last_request.headers["authorization"] == "Bearer sk-env"
    assert server.last_request.json["model"] == "gpt-4o"
    assert not [e for e in seen if e.type == EventType.PROVIDER_OFFLINE]


async def test_a_broken_source_is_reported_at_boot_and_the_kernel_keeps_running(
    data_dir: Path,
) -> None:
    seen: list[Event] = []
    environ = {"HOLOGRAM_LLM_BASE_URL": "http://127.0.0.1:9", "HOLOGRAM_LLM_ADAPTER": "openia"}
    async with kernel(data_dir, seen, **environ) as k:
        [unavailable] = [e for e in seen if e.type == EventType.PROVIDER_UNAVAILABLE]
        assert "no such adapter; available: anthropic" in unavailable.payload.reason
        assert k.state.llm is not None
        with pytest.raises(AllProvidersFailed, match="openia"):
            await k.state.llm.chat(HELLO)


async def test_an_adapter_in_the_data_dir_overrides_the_shipped_one(
    data_dir: Path, server: ScriptedModelServer
) -> None:
    shipped = AdapterLibrary().find("openai").read_text()
    (data_dir / "adapters").mkdir()
    (data_dir / "adapters" / "openai.lua").write_text(
        shipped.replace("headers = {},", 'headers = {["x-from-data-dir"] = "yes"},')
    )
    server.queue_text("ok")
    async with kernel(data_dir, [], HOLOGRAM_LLM_BASE_URL=server.base_url) as k:
        assert k.state.llm is not None
        await k.state.llm.chat(HELLO)
    assert server.last_request.headers["x-from-data-dir"] == "yes"
