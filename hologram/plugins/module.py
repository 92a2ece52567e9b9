"""The `plugins` kernel module: the registry, its folders, and the plugins started at boot."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from hologram.kernel import field_name
from hologram.plugins.builtin import builtin_plugins
from hologram.plugins.kernel_sdk import KernelParts
from hologram.plugins.registry import PluginRegistry
from hologram.sdk import Facility

_REQUIRES = (
    Facility.CONFIG,
    Facility.EVENTS,
    Facility.STAGE_HOST,
    Facility.CHANNELS,
    Facility.AGENT,
    Facility.SCHEDULER,
)


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

    async def init(self, state: Any) -> None:
        parts = KernelParts(
            stagehost=state.stagehost,
            channels=state.channels,
            events=state.events,
            config=state.config,
            clock=state.clock,
            tasks=state.tasks.scope(self.name),
            scheduler=state.scheduler,
            skills=state.agent.skills,
            coldcontext=getattr(state, "coldcontext", None),
            graph=getattr(state, "graph", None),
            knowledge=getattr(state, "knowledge", None),
            security=getattr(state, "security", None),
            llm=getattr(state, "llm", None),
            agent=state.agent,
            offered_tools=state.agent.build_tool_defs,
            media=getattr(state, "media", None),
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
