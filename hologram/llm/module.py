"""The `llm` kernel module: one ProviderManager per kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from hologram.config import ConfigRegistry
from hologram.events import EventBus
from hologram.kernel import required
from hologram.llm.adapter import AdapterLibrary
from hologram.llm.manager import ProviderManager, RequestGuard
from hologram.sdk import Clock, Facility


class GuardSource(Protocol):
    """The part of the firewall (a floor above) the llm module reads: its request guard."""

    @property
    def model_guard(self) -> RequestGuard: ...


class LLMState(Protocol):
    """What the llm module reads of the kernel's state, and the field it fills."""

    @property
    def config(self) -> ConfigRegistry | None: ...
    @property
    def events(self) -> EventBus | None: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def data_dir(self) -> Path: ...
    @property
    def security(self) -> GuardSource | None: ...

    llm: ProviderManager | None


class LLMModule:
    name = "llm"
    requires = (Facility.CONFIG, Facility.EVENTS)
    # Spec 000 puts `llm` after `security`, which decrypts the core.llm.* keys it reads and
    # guards every request. Optional, so a kernel without it (plain-text settings) still runs.
    optional = (Facility.SECURITY,)
    provides = (Facility.LLM,)

    def __init__(self) -> None:
        self.manager: ProviderManager | None = None

    async def init(self, state: LLMState) -> None:
        self.manager = ProviderManager(
            required(state.config, Facility.CONFIG),
            required(state.events, Facility.EVENTS),
            state.clock,
            AdapterLibrary(user_dir=state.data_dir / "adapters"),
            guard=None if state.security is None else state.security.model_guard,
        )
        # Reads the sources now, so a broken one is reported at boot and the offline model
        # (when nothing is configured) is up before the first turn.
        await self.manager.refresh()
        state.llm = self.manager

    async def close(self) -> None:
        if self.manager is not None:
            await self.manager.close()
