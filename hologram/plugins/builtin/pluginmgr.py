"""`pluginmgr`: the agent looks after its own plugins (spec 000: "Which Plugins Stay
Built-in"). Built in because it drives the registry and reads the supervisor's ledger.

The model lists the plugins with their health (state, restarts, last error), installs a
`.hmap` package from a path (the firewall checks the path against the sandbox, as for any
tool's `path` argument), enables, disables, reloads and uninstalls one. The install is the
registry's, the same code `POST /plugins` runs, so a package refused over HTTP is refused
here with the same reason. pluginmgr never stops itself (its tool call would end with it)
nor a plugin of the failback chain (`core.agent.failback_plugins`).
The tools are hard-private (`core.security.tools.hard_private`): only the owner's inputs
reach them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from hologram.config import AgentSettings
from hologram.plugins.package import PackageError
from hologram.plugins.process import PluginLoadError
from hologram.sdk import Param, PluginSDK, ToolDef, ToolError

if TYPE_CHECKING:
    from hologram.plugins.entry import Entry
    from hologram.plugins.registry import PluginRegistry

PluginName = Annotated[str, Param("the plugin's name, as pluginmgr_list shows it", min_length=1)]


class PluginManager:
    name = "pluginmgr"

    def __init__(self, registry: PluginRegistry) -> None:
        self._registry = registry
        self._changes = asyncio.Lock()
        """One change at a time: an install and a reload of the same plugin must not mix."""

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
            return await self.change(name, "enabled", self._registry.enable)

        async def pluginmgr_disable(name: PluginName) -> str:
            """Stop a plugin; its tools go away until it is enabled again."""
            return await self.change(name, "disabled", self._registry.disable)

        async def pluginmgr_reload(name: PluginName) -> str:
            """Stop a plugin, read its folder again (manifest and code), start it."""
            return await self.change(name, "reloaded", self._registry.reload)

        async def pluginmgr_uninstall(name: PluginName) -> str:
            """Stop an installed plugin and delete its folder (its settings stay)."""

            async def uninstall(plugin: str) -> None:
                await self._registry.uninstall(plugin)

            return await self.change(name, "uninstalled", uninstall)

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
            for row in self._registry.status()
        ]
        return json.dumps(
            {"plugins": rows, "refused": dict(self._registry.refused)}, ensure_ascii=False
        )

    async def install(self, path: str, replace: bool) -> str:
        package = Path(path)
        if not await asyncio.to_thread(package.is_file):
            raise ToolError(f"no file {path!r}: give the path of a .hmap package")
        async with self._changes:
            try:
                entry = await self._registry.install_package(package, replace=replace)
            except PackageError as exc:
                raise ToolError(f"package refused: {exc}") from None
            except PluginLoadError as exc:
                raise ToolError(f"installed, but it did not start: {exc}") from None
        return f"installed {entry.name} ({entry.state.value}); {self.row(entry.name)}"

    async def change(
        self, name: str, done: str, action: Callable[[str], Awaitable[Entry | None]]
    ) -> str:
        if name == self.name:
            raise ToolError("pluginmgr cannot change itself: its own call would end with it")
        failback = self._registry.config.read(AgentSettings).failback_plugins
        if done in ("disabled", "uninstalled") and name in failback:
            raise ToolError(
                f"{name} is in the failback chain ({', '.join(failback)}): it stays up so a "
                "kernel whose models fail can still be looked after"
            )
        async with self._changes:
            try:
                await action(name)
            except KeyError as exc:
                raise ToolError(str(exc.args[0]) if exc.args else str(exc)) from None
            except (PermissionError, PluginLoadError, PackageError) as exc:
                raise ToolError(str(exc)) from None
        if done == "uninstalled":
            return f"{name} uninstalled"
        return f"{name} {done}; {self.row(name)}"

    def row(self, name: str) -> str:
        row = next(r for r in self._registry.status() if r["name"] == name)
        health = f"state {row['state']}, restarts {row['restarts']}"
        tools = ", ".join(row["tools"]) or "none"
        error = f", last error: {row['error']}" if row["error"] else ""
        return f"{health}, tools: {tools}{error}"
