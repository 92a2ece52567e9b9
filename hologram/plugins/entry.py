"""One plugin as the registry and the supervisor see it: where it came from, what runs, and
its state."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from hologram.plugins.kernel_sdk import KernelSDK
from hologram.plugins.manifest import Kind, Manifest
from hologram.sdk import PluginOrigin


class HostedPlugin(Protocol):
    """A plugin as the registry runs it: started with the kernel's full SDK. The built-ins
    use it whole; the loaders of subprocess, Lua and SKILL.md plugins narrow it to what the
    plugin's manifest grants (the public `Plugin` protocol is what such a plugin sees)."""

    @property
    def name(self) -> str: ...

    async def start(self, sdk: KernelSDK) -> None: ...

    async def stop(self) -> None: ...


class State(StrEnum):
    AVAILABLE = "available"
    RUNNING = "running"
    STOPPED = "stopped"
    CRASHED = "crashed"
    RESTARTING = "restarting"
    FAILED = "failed"


@dataclass(eq=False)
class Entry:
    """One plugin the registry knows, loaded or not."""

    name: str
    kind: Kind
    origin: PluginOrigin
    folder: Path | None = None
    manifest: Manifest | None = None
    #: Makes a built-in plugin, already bound to the host it runs in.
    factory: Callable[[], HostedPlugin] | None = None
    plugin: HostedPlugin | None = None
    sdk: KernelSDK | None = None
    state: State = State.AVAILABLE
    error: str = ""
    flags: list[str] = field(default_factory=list)
    restarts: int = 0
    attempts: int = 0
    started_at: float = 0.0
    recovery: asyncio.Task[None] | None = None
