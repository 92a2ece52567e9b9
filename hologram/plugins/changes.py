"""Changes to the set of running plugins, as every door makes them: the agent's pluginmgr
tools and the service's /plugins endpoints (the page's plugin panel) both call this, so a
change refused at one door is refused at the other with the same words.

One change at a time, whichever door it comes through: an install from the page and a
reload by the agent of the same plugin must not interleave (both stop and start it). A
plugin of the failback chain (`core.agent.failback_plugins`) is never stopped or removed,
so a kernel whose models all fail can still be looked after; the owner who wants one gone
takes it out of that setting first.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from hologram.config import AgentSettings, ConfigRegistry, PluginSettings, key_of
from hologram.plugins.entry import Entry, State
from hologram.plugins.package import PackageError, read_package
from hologram.plugins.process import PluginLoadError
from hologram.sdk import PluginOrigin

FAILBACK_KEY = key_of(AgentSettings, "failback_plugins")


class Why(StrEnum):
    """Why a change was refused: each door maps it to its own form (a status code, a tool
    error)."""

    UNKNOWN = "unknown"
    """No plugin of that name."""
    PROTECTED = "protected"
    """The plugin may not be changed so (failback chain, not installed, the caller itself)."""
    PACKAGE = "package"
    """The package was refused (archive, manifest, name)."""
    START = "start"
    """The plugin did not start; its last error says why."""


class ChangeRefused(Exception):
    def __init__(self, why: Why, message: str) -> None:
        super().__init__(message)
        self.why = why
        self.message = message


class PluginAction(StrEnum):
    ENABLE = "enable"
    DISABLE = "disable"
    RELOAD = "reload"
    UNINSTALL = "uninstall"


@dataclass(frozen=True, slots=True)
class Installed:
    entry: Entry
    started: bool
    error: str
    """Why it did not start, when it was meant to and did not."""


class Operations(Protocol):
    """The plugin host's unguarded operations, which the changes put one at a time behind
    their guards (the registry has them)."""

    @property
    def config(self) -> ConfigRegistry: ...

    @property
    def settings(self) -> PluginSettings: ...

    def get(self, name: str) -> Entry: ...

    async def install_package(
        self, source: bytes | str | os.PathLike[str], *, replace: bool = False
    ) -> Entry: ...

    async def enable(self, name: str) -> Entry: ...

    async def disable(self, name: str) -> Entry: ...

    async def reload(self, name: str) -> Entry: ...

    async def uninstall(self, name: str) -> None: ...


class PluginChanges:
    """Install, enable, disable, reload and uninstall, one at a time, with the guards."""

    def __init__(self, registry: Operations) -> None:
        self._registry = registry
        self._lock = asyncio.Lock()

    async def install(self, source: bytes | os.PathLike[str], *, replace: bool) -> Installed:
        async with self._lock:
            try:
                entry = await self._registry.install_package(source, replace=replace)
            except PackageError as exc:
                raise ChangeRefused(Why.PACKAGE, f"package refused: {exc}") from None
            except PluginLoadError as exc:
                # Installed, but its start failed: the folder stays, so the caller can fix
                # the setting or facility it lacks and enable it later.
                entry = await self._installed(source, exc)
                return Installed(entry, False, str(exc))
        return Installed(entry, entry.state is State.RUNNING, "")

    async def _installed(self, source: bytes | os.PathLike[str], exc: PluginLoadError) -> Entry:
        limit = self._registry.settings.max_package_bytes
        name = (await asyncio.to_thread(read_package, source, max_bytes=limit)).manifest.name
        try:
            return self._registry.get(name)
        except KeyError:
            # The failure came before the package was taken (its folder was refused).
            raise ChangeRefused(Why.START, str(exc)) from None

    async def apply(
        self, action: PluginAction, name: str, *, by: str | None = None
    ) -> Entry | None:
        """Do `action` to plugin `name`; the entry after it (None once uninstalled). `by`:
        the plugin asking, which may not change itself (its own call would end with it)."""
        self.check(action, name, by=by)
        async with self._lock:
            try:
                if action is PluginAction.ENABLE:
                    return await self._registry.enable(name)
                if action is PluginAction.DISABLE:
                    return await self._registry.disable(name)
                if action is PluginAction.RELOAD:
                    return await self._registry.reload(name)
                await self._registry.uninstall(name)
                return None
            except KeyError as exc:
                raise ChangeRefused(Why.UNKNOWN, _key_message(exc)) from None
            except PermissionError as exc:
                raise ChangeRefused(Why.PROTECTED, str(exc)) from None
            except PackageError as exc:
                raise ChangeRefused(Why.PACKAGE, str(exc)) from None
            except PluginLoadError as exc:
                raise ChangeRefused(Why.START, str(exc)) from None

    def check(self, action: PluginAction, name: str, *, by: str | None = None) -> None:
        try:
            entry = self._registry.get(name)
        except KeyError as exc:
            raise ChangeRefused(Why.UNKNOWN, _key_message(exc)) from None
        if action is PluginAction.UNINSTALL and entry.origin is not PluginOrigin.USER:
            return  # the registry refuses it, saying which plugins can be uninstalled
        if by is not None and name == by:
            raise ChangeRefused(
                Why.PROTECTED, f"{by} cannot change itself: its own call would end with it"
            )
        failback = self._registry.config.read(AgentSettings).failback_plugins
        if action in (PluginAction.DISABLE, PluginAction.UNINSTALL) and name in failback:
            raise ChangeRefused(
                Why.PROTECTED,
                f"{name} is in the failback chain ({FAILBACK_KEY}: {', '.join(failback)}): it "
                "stays up so a kernel whose models fail can still be looked after",
            )


def _key_message(exc: KeyError) -> str:
    return str(exc.args[0]) if exc.args else str(exc)
