"""The one list of built-in plugins (spec 000: `internal/plugins/all.go`).

A plugin is built in only if it needs a surface external plugins never get. Adding one is one
line here; externalising one means removing its line in the same change, because an external
copy of a built-in name is refused (the spec's "both copies" trap).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from hologram.sdk import Plugin, PluginSDK, ToolDef

if TYPE_CHECKING:
    from hologram.plugins.registry import PluginRegistry

BuiltinFactory = Callable[["PluginRegistry"], Plugin]


class PluginManager:
    """`pluginmgr`: lets the model list the plugins and their states. Built in because it
    reads the supervisor's ledger (capability `supervisor`)."""

    name = "pluginmgr"

    def __init__(self, registry: PluginRegistry) -> None:
        self._registry = registry

    async def start(self, sdk: PluginSDK) -> None:
        def pluginmgr_list() -> str:
            """List the plugins of this kernel: kind, state, tools, restarts."""
            return json.dumps(self._registry.status(), ensure_ascii=False)

        sdk.register_tool(ToolDef.from_function(pluginmgr_list, no_memory=True))

    async def stop(self) -> None:
        return None


def builtin_plugins() -> dict[str, BuiltinFactory]:
    return {"pluginmgr": PluginManager}
