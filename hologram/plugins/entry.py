"""One plugin as the registry and the supervisor see it: where it came from, what runs, and
its state."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from hologram.plugins.kernel_sdk import KernelSDK
from hologram.plugins.manifest import Kind, Manifest
from hologram.sdk import Plugin, PluginOrigin

if TYPE_CHECKING:
    # Only a type here: the built-ins (pluginmgr) use the plugin changes, which use entries.
    from hologram.plugins.builtin import BuiltinFactory


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
    factory: BuiltinFactory | None = None
    plugin: Plugin | None = None
    sdk: KernelSDK | None = None
    state: State = State.AVAILABLE
    error: str = ""
    flags: list[str] = field(default_factory=list)
    restarts: int = 0
    attempts: int = 0
    started_at: float = 0.0
    recovery: asyncio.Task[None] | None = None
