"""The `llm` kernel module: one ProviderManager per kernel."""

from __future__ import annotations

from typing import Any

from hologram.llm.adapter import AdapterLibrary
from hologram.llm.manager import ProviderManager
from hologram.sdk import Facility


class LLMModule:
    name = "llm"
    requires = (Facility.CONFIG, Facility.EVENTS)
    # Spec 000 puts `llm` after `security`, which decrypts the core.llm.* keys it reads and
    # guards every request. Optional, so a kernel without it (plain-text settings) still runs.
    optional = (Facility.SECURITY,)
    provides = (Facility.LLM,)

    def __init__(self) -> None:
        self.manager: ProviderManager | None = None

    async def init(self, state: Any) -> None:
        self.manager = ProviderManager(
            state.config,
            state.events,
            state.clock,
            AdapterLibrary(user_dir=state.data_dir / "adapters"),
        )
        if state.security is not None:
            self.manager.guard = state.security.model_guard
        # Reads the sources now, so a broken one is reported at boot and the offline model
        # (when nothing is configured) is up before the first turn.
        await self.manager.refresh()
        state.llm = self.manager

    async def close(self) -> None:
        if self.manager is not None:
            await self.manager.close()
