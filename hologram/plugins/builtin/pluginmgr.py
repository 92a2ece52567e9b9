"""`pluginmgr`: lets the model list the plugins and their states. Built in because it
reads the supervisor's ledger (capability `supervisor`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from hologram.sdk import PluginSDK, ToolDef

if TYPE_CHECKING:
    from hologram.plugins.registry import PluginRegistry


class PluginManager:
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
