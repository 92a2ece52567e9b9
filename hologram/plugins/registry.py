"""The plugin registry (spec 000: Registry.Load, ReloadOne, the supervisor's ledger).

It knows where plugins come from (the built-in list, the plugins shipped in the package, the
user's `<data>/plugins/`, any folder handed to `load_dir`), loads each through the loader its
kind selects, enables, disables and reloads one at a time, and installs and uninstalls
packages. Its `supervisor` (`hologram.plugins.supervisor`) restarts subprocess plugins that
crash.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from hologram.config import ConfigRegistry, PluginSettings
from hologram.llm import LuaSandboxError
from hologram.plugins.changes import PluginChanges
from hologram.plugins.entry import Entry, HostedPlugin, State
from hologram.plugins.host import BuiltinFactory
from hologram.plugins.kernel_sdk import KernelParts, KernelSDK
from hologram.plugins.lua import LuaPlugin
from hologram.plugins.manifest import MANIFEST, Kind, ManifestError, read_manifest
from hologram.plugins.package import PackageError, read_package, unpack
from hologram.plugins.process import PluginLoadError, SubprocessPlugin
from hologram.plugins.skill import SKILL_FILE, SkillPlugin, skill_manifest
from hologram.plugins.supervisor import Supervisor
from hologram.sdk import (
    Facility,
    PluginOrigin,
    PluginRefused,
    PluginSkillFlagged,
    PluginStarted,
    PluginStopped,
)
from hologram.stages import infer_owner

log = logging.getLogger(__name__)


class BothCopiesError(PluginLoadError):
    """An external plugin with a built-in plugin's name (it would install and never run)."""


__all__ = ["BothCopiesError", "Entry", "PluginRegistry", "State"]


class PluginRegistry:
    def __init__(
        self,
        parts: KernelParts,
        *,
        builtins: dict[str, BuiltinFactory],
        shipped_dir: Path | None,
        user_dir: Path,
        has_facility: Callable[[Facility], bool] = lambda f: True,
    ) -> None:
        self.parts = parts
        self.builtins = builtins
        self.shipped_dir = shipped_dir
        self.user_dir = user_dir
        self._has_facility = has_facility
        self._entries: dict[str, Entry] = {
            name: Entry(name, Kind.BUILTIN, PluginOrigin.BUILTIN, factory=partial(factory, self))
            for name, factory in builtins.items()
        }
        for name in builtins:
            parts.config.declare_plugin(name, ())
        self.refused: dict[str, str] = {}
        """Folder (or package) -> why it was not taken."""
        self.supervisor = Supervisor(
            parts, lookup=self._entries.get, start=self._start, refuse=self._refuse
        )
        self.changes = PluginChanges(self)
        """The guarded, one-at-a-time changes every door (pluginmgr, /plugins) goes through."""

    @property
    def config(self) -> ConfigRegistry:
        return self.parts.config

    @property
    def data_dir(self) -> Path:
        """The kernel's data dir: the user's plugins are its `plugins/`."""
        return self.user_dir.parent

    @property
    def settings(self) -> PluginSettings:
        return self.parts.config.read(PluginSettings)

    # ---- finding plugins --------------------------------------------------------------------

    def discover(self) -> list[str]:
        """Scan the shipped and user folders; returns the names found. A folder that cannot
        be taken is announced and recorded in `refused`, the others still load."""
        found = []
        for origin, root in (
            (PluginOrigin.SHIPPED, self.shipped_dir),
            (PluginOrigin.USER, self.user_dir),
        ):
            if root is None or not root.is_dir():
                continue
            for folder in sorted(p for p in root.iterdir() if p.is_dir()):
                if not ((folder / MANIFEST).is_file() or (folder / SKILL_FILE).is_file()):
                    continue
                try:
                    found.append(self._add(folder, origin).name)
                except (ManifestError, PluginLoadError, ValueError, OSError) as exc:
                    self._refuse(str(folder), str(exc))
        return found

    def _add(self, folder: Path, origin: PluginOrigin) -> Entry:
        if (folder / MANIFEST).is_file():
            manifest = read_manifest(folder)
        else:
            manifest = skill_manifest(folder)
        if manifest.name in self.builtins:
            raise BothCopiesError(
                f"plugin {manifest.name!r} in {folder} is also built in: the built-in copy would "
                "always win and this one never run. Remove the folder, or remove "
                f"{manifest.name!r} from hologram.plugins.builtin in the same change"
            )
        current = self._entries.get(manifest.name)
        if current is not None and current.folder != folder.resolve():
            raise PluginLoadError(
                f"plugin {manifest.name!r} in {folder} is already known from {current.folder}; "
                "two plugins cannot share a name"
            )
        if not manifest.runs_here():
            raise PluginLoadError(
                f"plugin {manifest.name!r} runs on {list(manifest.platforms)}, not on this platform"
            )
        entry = current or Entry(manifest.name, manifest.kind, origin)
        entry.folder, entry.manifest, entry.kind = folder.resolve(), manifest, manifest.kind
        self.config.declare_plugin(manifest.name, manifest.settings)
        self._entries[manifest.name] = entry
        return entry

    def _refuse(self, where: str, why: str) -> None:
        self.refused[where] = why
        log.error("plugin refused: %s", why)
        self.parts.events.emit(PluginRefused(where=where, error=why), source="plugins")

    # ---- looking ----------------------------------------------------------------------------

    def get(self, name: str) -> Entry:
        entry = self._entries.get(name)
        if entry is None:
            known = ", ".join(sorted(self._entries)) or "none"
            raise KeyError(f"no plugin {name!r}; plugins: {known}")
        return entry

    def names(self) -> list[str]:
        return sorted(self._entries)

    def tools_of(self, name: str) -> list[str]:
        return sorted(
            t.name
            for t in self.parts.stagehost.tools.tools()
            if (t.owner or infer_owner(t.name)) == name
        )

    def status(self) -> list[dict[str, Any]]:
        rows = []
        for name in self.names():
            entry = self._entries[name]
            plugin = entry.plugin
            rows.append(
                {
                    "name": name,
                    "kind": entry.kind.value,
                    "origin": entry.origin,
                    "state": entry.state.value,
                    "version": entry.manifest.version if entry.manifest else "",
                    "tools": self.tools_of(name),
                    "pid": getattr(plugin, "pid", None),
                    "restarts": entry.restarts,
                    "error": entry.error,
                    "flags": list(entry.flags),
                    "status": entry.sdk.status if entry.sdk is not None else {},
                }
            )
        return rows

    # ---- starting and stopping --------------------------------------------------------------

    async def start_at_boot(self) -> None:
        """Built-ins, user plugins with auto_start, and the shipped plugins named in
        core.plugins.autostart. One that fails is announced; boot goes on."""
        autostart = set(self.settings.autostart)
        for entry in list(self._entries.values()):
            wanted = (
                entry.kind is Kind.BUILTIN
                or (
                    entry.origin is PluginOrigin.USER
                    and entry.manifest is not None
                    and entry.manifest.auto_start
                )
                or entry.name in autostart
            )
            if wanted:
                try:
                    await self.enable(entry.name)
                except PluginLoadError:
                    continue  # announced by enable

    async def load_dir(self, folder: str | os.PathLike[str], *, start: bool = True) -> Entry:
        """Take the plugin in `folder` (anywhere on disk) and, by default, start it."""
        try:
            entry = self._add(Path(folder), PluginOrigin.PATH)
        except (ManifestError, PluginLoadError, ValueError, OSError) as exc:
            self._refuse(str(folder), str(exc))
            if isinstance(exc, PluginLoadError):
                raise
            raise PluginLoadError(str(exc)) from exc
        if start:
            await self.enable(entry.name)
        return entry

    async def enable(self, name: str) -> Entry:
        entry = self.get(name)
        if entry.state is State.RUNNING:
            return entry
        self.supervisor.cancel(entry)
        entry.attempts = 0
        try:
            await self._start(entry)
        except PluginLoadError as exc:
            entry.state, entry.error = State.FAILED, str(exc)
            self._refuse(name, str(exc))
            raise
        return entry

    def _make(self, entry: Entry) -> HostedPlugin:
        if entry.factory is not None:
            return entry.factory()
        manifest, folder = entry.manifest, entry.folder
        assert manifest is not None and folder is not None
        missing = [f.value for f in manifest.requires_facilities if not self._has_facility(f)]
        if missing:
            raise PluginLoadError(
                f"plugin {entry.name!r} requires facilities {missing}, which this kernel "
                "does not provide"
            )
        if manifest.kind is Kind.SUBPROCESS:
            return SubprocessPlugin(
                manifest,
                folder,
                on_exit=self.supervisor.exited,
                on_bad_frame=self.supervisor.bad_frame,
                data_dir=self.user_dir.parent / "plugin-data" / entry.name,
                max_frame=self.settings.max_frame_bytes,
                start_timeout=self.settings.start_timeout_s,
                tasks=self.parts.tasks,
            )
        try:
            if manifest.kind is Kind.LUA:
                return LuaPlugin(manifest, folder)
            skill = SkillPlugin(manifest, folder)
        except (LuaSandboxError, ValueError, OSError) as exc:
            raise PluginLoadError(f"plugin {entry.name!r} failed to load: {exc}") from None
        entry.flags = skill.findings
        for finding in skill.findings:
            log.warning("skill %s flagged: %s", entry.name, finding)
            self.parts.events.emit(
                PluginSkillFlagged(plugin=entry.name, finding=finding), source="plugins"
            )
        return skill

    async def _start(self, entry: Entry) -> None:
        if entry.plugin is None or entry.kind is not Kind.SUBPROCESS:
            entry.plugin = self._make(entry)
        if entry.sdk is None:
            # A built-in declares its profiles on its class, as a manifest does for others.
            profiles = (
                entry.manifest.security_profiles
                if entry.manifest is not None
                else tuple(getattr(entry.plugin, "security_profiles", ()))
            )
            entry.sdk = KernelSDK(entry.name, self.parts, profiles)
        entry.sdk.detach()
        try:
            await entry.plugin.start(entry.sdk)
        except PluginLoadError:
            entry.sdk.detach()
            raise
        except Exception as exc:
            entry.sdk.detach()
            raise PluginLoadError(f"plugin {entry.name!r} failed to start: {exc}") from exc
        entry.state, entry.error = State.RUNNING, ""
        entry.started_at = self.parts.clock.monotonic()
        log.info("plugin %s started (%s)", entry.name, entry.kind.value)
        self.parts.events.emit(
            PluginStarted(
                plugin=entry.name,
                kind=entry.kind.value,
                tools=self.tools_of(entry.name),
                pid=getattr(entry.plugin, "pid", None),
            ),
            source="plugins",
        )

    async def disable(self, name: str) -> Entry:
        entry = self.get(name)
        self.supervisor.cancel(entry)
        if entry.plugin is not None and entry.state in (
            State.RUNNING,
            State.CRASHED,
            State.RESTARTING,
        ):
            try:
                await entry.plugin.stop()
            except Exception:
                log.exception("plugin %s failed while stopping", name)
        detached = entry.sdk.detach() if entry.sdk is not None else {}
        entry.state = State.STOPPED
        self.parts.events.emit(PluginStopped(plugin=name, detail=detached), source="plugins")
        return entry

    async def reload(self, name: str) -> Entry:
        """Stop, read the plugin's folder again (manifest and code), start."""
        entry = self.get(name)
        await self.disable(name)
        if entry.folder is not None:
            self._add(entry.folder, entry.origin)
            entry.plugin = None
        return await self.enable(name)

    async def close(self) -> None:
        """Stop every plugin: subprocesses first, so no child outlives the kernel."""
        entries = sorted(self._entries.values(), key=lambda e: e.kind is not Kind.SUBPROCESS)
        for entry in entries:
            if entry.state in (State.RUNNING, State.CRASHED, State.RESTARTING):
                await self.disable(entry.name)

    # ---- packages ---------------------------------------------------------------------------

    async def install_package(
        self, source: bytes | str | os.PathLike[str], *, replace: bool = False
    ) -> Entry:
        """Install a `.hmap` into `<data>/plugins/` and start it if it says auto_start.
        A refused package raises `PackageError` and leaves the plugins folder untouched."""
        try:
            package = await asyncio.to_thread(
                read_package, source, max_bytes=self.settings.max_package_bytes
            )
            name = package.manifest.name
            if name in self.builtins:
                raise PackageError(
                    f"plugin {name!r} is built in; an external copy would install and never run"
                )
            current = self._entries.get(name)
            if current is not None and current.origin is not PluginOrigin.USER:
                raise PackageError(f"plugin {name!r} already comes from {current.folder}")
            if current is not None and not replace:
                raise PackageError(f"plugin {name!r} is already installed; pass replace=True")
        except PackageError as exc:
            self._refuse("package", str(exc))
            raise
        if current is not None:
            await self.disable(name)
        folder = await asyncio.to_thread(unpack, package, self.user_dir, replace=replace)
        entry = self._add(folder, PluginOrigin.USER)
        entry.plugin = None
        if package.manifest.auto_start:
            await self.enable(name)
        return entry

    async def uninstall(self, name: str) -> None:
        """Stop an installed plugin and delete its folder (its settings stay)."""
        entry = self.get(name)
        if entry.origin is not PluginOrigin.USER or entry.folder is None:
            raise PermissionError(
                f"plugin {name!r} is {entry.origin}, not installed: only plugins in "
                f"{self.user_dir} can be uninstalled"
            )
        await self.disable(name)
        await asyncio.to_thread(shutil.rmtree, entry.folder)
        del self._entries[name]
