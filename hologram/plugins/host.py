"""What a built-in plugin is given: the kernel's parts and the plugin host's ledger and
changes, as a protocol the registry fulfils. A built-in names this, never the registry, so
the arrows run one way: the registry makes the built-ins, the built-ins read the host."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from hologram.plugins.changes import PluginChanges
from hologram.plugins.entry import HostedPlugin
from hologram.plugins.kernel_sdk import KernelParts


class PluginHost(Protocol):
    @property
    def parts(self) -> KernelParts: ...

    @property
    def data_dir(self) -> Path: ...

    @property
    def refused(self) -> Mapping[str, str]:
        """Folder (or package) -> why it was not taken."""
        ...

    @property
    def changes(self) -> PluginChanges: ...

    def status(self) -> list[dict[str, Any]]:
        """One row per plugin: name, state, restarts, last error, …"""
        ...


BuiltinFactory = Callable[[PluginHost], HostedPlugin]
