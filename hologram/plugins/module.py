"""The `plugins` kernel module: the registry, its folders, and the plugins started at boot."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Protocol

from hologram.agent import Agent, Inputs
from hologram.channels import OutputChannels
from hologram.config import ConfigRegistry
from hologram.events import EventBus
from hologram.health import ScratchTurn
from hologram.kernel import KernelTasks, field_name, required
from hologram.knowledge import KnowledgeBase
from hologram.llm import ProviderManager
from hologram.media import MediaStore
from hologram.memory import ColdContext, GraphMemory
from hologram.plugins.builtin import builtin_plugins
from hologram.plugins.kernel_sdk import KernelParts
from hologram.plugins.registry import PluginRegistry
from hologram.sdk import Clock, Facility
from hologram.security import Firewall
from hologram.stages import StageHost

_REQUIRES = (
    Facility.CONFIG,
    Facility.EVENTS,
    Facility.STAGE_HOST,
    Facility.CHANNELS,
    Facility.AGENT,
    Facility.SCHEDULER,
)


class PluginsState(Protocol):
    """What the plugins module reads of the kernel's state (every facility a plugin may
    require), and the field it fills."""

    @property
    def config(self) -> ConfigRegistry | None: ...
    @property
    def events(self) -> EventBus | None: ...
    @property
    def stagehost(self) -> StageHost | None: ...
    @property
    def channels(self) -> OutputChannels | None: ...
    @property
    def agent(self) -> Agent | None: ...
    @property
    def scheduler(self) -> Inputs | None: ...
    @property
    def coldcontext(self) -> ColdContext | None: ...
    @property
    def graph(self) -> GraphMemory | None: ...
    @property
    def knowledge(self) -> KnowledgeBase | None: ...
    @property
    def security(self) -> Firewall | None: ...
    @property
    def llm(self) -> ProviderManager | None: ...
    @property
    def media(self) -> MediaStore | None: ...
    @property
    def scratch_turn(self) -> ScratchTurn | None: ...
    @property
    def data_dir(self) -> Path: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def tasks(self) -> KernelTasks: ...

    plugins: PluginRegistry | None


def shipped_plugins() -> Path:
    """The plugins that ship inside the package (the repository's `plugins/`)."""
    return Path(str(resources.files("hologram") / "_shipped" / "plugins"))


class PluginsModule:
    name = "plugins"
    requires = _REQUIRES
    # A plugin's manifest may require any facility: read them all when present, so that
    # `requires_facilities` is checked against what this kernel really has.
    optional = tuple(f for f in Facility if f not in _REQUIRES and f is not Facility.PLUGINS)
    provides = (Facility.PLUGINS,)

    def __init__(self) -> None:
        self.registry: PluginRegistry | None = None

    async def init(self, state: PluginsState) -> None:
        agent = required(state.agent, Facility.AGENT)
        parts = KernelParts(
            stagehost=required(state.stagehost, Facility.STAGE_HOST),
            channels=required(state.channels, Facility.CHANNELS),
            events=required(state.events, Facility.EVENTS),
            config=required(state.config, Facility.CONFIG),
            clock=state.clock,
            tasks=state.tasks.scope(self.name),
            scheduler=state.scheduler,
            skills=agent.skills,
            coldcontext=state.coldcontext,
            graph=state.graph,
            knowledge=state.knowledge,
            security=state.security,
            llm=state.llm,
            agent=agent,
            offered_tools=agent.build_tool_defs,
            media=state.media,
            scratch_turn=state.scratch_turn,
        )

        def has_facility(facility: Facility) -> bool:
            try:
                return getattr(state, field_name(facility), None) is not None
            except AttributeError:
                return False

        registry = PluginRegistry(
            parts,
            builtins=builtin_plugins(),
            shipped_dir=shipped_plugins(),
            user_dir=state.data_dir / "plugins",
            has_facility=has_facility,
        )
        self.registry = registry
        registry.discover()
        await registry.start_at_boot()
        state.plugins = registry

    async def close(self) -> None:
        if self.registry is not None:
            await self.registry.close()
