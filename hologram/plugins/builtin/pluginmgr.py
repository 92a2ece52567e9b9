"""`pluginmgr`: the agent looks after its own plugins (spec 000: "Which Plugins Stay
Built-in"). Built in because it drives the registry and reads the supervisor's ledger.

The model lists the plugins with their health (state, restarts, last error), installs a
`.hmap` package from a path (the firewall checks the path against the sandbox, as for any
tool's `path` argument), enables, disables, reloads and uninstalls one. Every change goes
through the registry's `changes` (`hologram.plugins.changes`), the same code the service's
/plugins endpoints and the page's plugin panel run, so a change refused at one door is
refused here with the same reason. pluginmgr never changes itself (its tool call would end
with it) nor stops a plugin of the failback chain (`core.agent.failback_plugins`).
The tools are hard-private (`core.security.tools.hard_private`): only the owner's inputs
reach them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from hologram.plugins.changes import ChangeRefused, PluginAction
from hologram.sdk import Param, PluginSDK, ToolDef, ToolError

if TYPE_CHECKING:
    from hologram.plugins.host import PluginHost

DONE = {
    PluginAction.ENABLE: "enabled",
    PluginAction.DISABLE: "disabled",
    PluginAction.RELOAD: "reloaded",
}
PluginName = Annotated[str, Param("the plugin's name, as pluginmgr_list shows it", min_length=1)]


class PluginManager:
    name = "pluginmgr"

    def __init__(self, host: PluginHost) -> None:
        self._host = host

    async def start(self, sdk: PluginSDK) -> None:
        for tool in self._tools():
            sdk.register_tool(ToolDef.from_function(tool, owner=self.name, no_memory=True))

    async def stop(self) -> None:
        return None

    def _tools(self) -> list[Callable[..., Any]]:
        def pluginmgr_list() -> str:
            """List the plugins of this kernel: kind, state, tools, restarts, last error,
            and the packages or folders that were refused."""
            return self.listing()

        async def pluginmgr_install(
            path: Annotated[str, Param("the .hmap file, inside the sandbox", min_length=1)],
            replace: Annotated[bool, Param("replace an installed plugin of that name")] = False,
        ) -> str:
            """Install a .hmap plugin package; it starts if its manifest says auto_start."""
            return await self.install(path, replace)

        async def pluginmgr_enable(name: PluginName) -> str:
            """Start a stopped or failed plugin."""
            return await self.change(PluginAction.ENABLE, name)

        async def pluginmgr_disable(name: PluginName) -> str:
            """Stop a plugin; its tools go away until it is enabled again."""
            return await self.change(PluginAction.DISABLE, name)

        async def pluginmgr_reload(name: PluginName) -> str:
            """Stop a plugin, read its folder again (manifest and code), start it."""
            return await self.change(PluginAction.RELOAD, name)

        async def pluginmgr_uninstall(name: PluginName) -> str:
            """Stop an installed plugin and delete its folder (its settings stay)."""
            return await self.change(PluginAction.UNINSTALL, name)

        return [
            pluginmgr_list,
            pluginmgr_install,
            pluginmgr_enable,
            pluginmgr_disable,
            pluginmgr_reload,
            pluginmgr_uninstall,
        ]

    def listing(self) -> str:
        rows = [
            {k: row[k] for k in ("name", "kind", "state", "restarts", "error", "tools", "flags")}
            for row in self._host.status()
        ]
        return json.dumps(
            {"plugins": rows, "refused": dict(self._host.refused)}, ensure_ascii=False
        )

    async def install(self, path: str, replace: bool) -> str:
        package = Path(path)
        if not await asyncio.to_thread(package.is_file):
            raise ToolError(f"no file {path!r}: give the path of a .hmap package")
        try:
            done = await self._host.changes.install(package, replace=replace)
        except ChangeRefused as exc:
            raise ToolError(exc.message) from None
        if done.error:
            raise ToolError(f"installed, but it did not start: {done.error}")
        entry = done.entry
        return f"installed {entry.name} ({entry.state.value}); {self.row(entry.name)}"

    async def change(self, action: PluginAction, name: str) -> str:
        try:
            await self._host.changes.apply(action, name, by=self.name)
        except ChangeRefused as exc:
            raise ToolError(exc.message) from None
        if action is PluginAction.UNINSTALL:
            return f"{name} uninstalled"
        return f"{name} {DONE[action]}; {self.row(name)}"

    def row(self, name: str) -> str:
        row = next(r for r in self._host.status() if r["name"] == name)
        health = f"state {row['state']}, restarts {row['restarts']}"
        tools = ", ".join(row["tools"]) or "none"
        error = f", last error: {row['error']}" if row["error"] else ""
        return f"{health}, tools: {tools}{error}"
