"""Crash recovery of subprocess plugins (spec 000: "Crash self-healing", `SetAutoRestart`).

When a plugin's process exits on its own, everything it registered is detached at once, so
no tool or stage handler points into a dead process; then the plugin is started again after
an exponential backoff on the kernel's clock, unless its manifest says `auto_restart: false`.
A plugin that keeps crashing is left stopped after `core.plugins.max_restarts` attempts in a
row. Every step is logged and published: nothing pretends to work.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from hologram.config import PluginSettings
from hologram.plugins.entry import Entry, State
from hologram.plugins.kernel_sdk import KernelParts
from hologram.plugins.process import PluginLoadError, SubprocessPlugin
from hologram.sdk import (
    PluginCrashed,
    PluginRestarting,
    PluginRPCError,
)

log = logging.getLogger("hologram.plugins.registry")  # one logger name for the plugin host

STABLE_AFTER = 60.0
"""Seconds a restarted plugin must run before its backoff starts again from the bottom."""


class Supervisor:
    """Watches the registry's subprocess plugins; the registry starts them, this restarts."""

    def __init__(
        self,
        parts: KernelParts,
        *,
        lookup: Callable[[str], Entry | None],
        start: Callable[[Entry], Awaitable[None]],
        refuse: Callable[[str, str], None],
    ) -> None:
        self.parts = parts
        self._lookup = lookup
        self._start = start
        self._refuse = refuse

    def bad_frame(self, name: str, why: str) -> None:
        log.warning("plugin %s: %s", name, why)
        self.parts.events.emit(PluginRPCError(plugin=name, error=why), source="plugins")

    def exited(self, plugin: SubprocessPlugin, returncode: int) -> None:
        entry = self._lookup(plugin.name)
        if entry is None or entry.plugin is not plugin:
            return
        entry.recovery = self.parts.tasks.spawn(
            self._recover(entry, returncode), name=f"plugin-{entry.name}-recovery"
        )

    def cancel(self, entry: Entry) -> None:
        """Stop a pending recovery (the plugin is being enabled or disabled by hand)."""
        if entry.recovery is not None and entry.recovery is not asyncio.current_task():
            entry.recovery.cancel()
        entry.recovery = None

    async def _recover(self, entry: Entry, returncode: int) -> None:
        detached = entry.sdk.detach() if entry.sdk is not None else {}
        entry.state = State.CRASHED
        entry.error = f"exited with status {returncode}"
        log.warning("plugin %s crashed (status %s); detached %s", entry.name, returncode, detached)
        self.parts.events.emit(
            PluginCrashed(plugin=entry.name, returncode=returncode, detail=detached),
            source="plugins",
        )
        assert entry.manifest is not None
        if not entry.manifest.auto_restart:
            return
        config, clock = self.parts.config, self.parts.clock
        if clock.monotonic() - entry.started_at > STABLE_AFTER:
            entry.attempts = 0
        settings = config.read(PluginSettings)
        limit = settings.max_restarts
        while entry.attempts < limit:
            delay = min(
                settings.restart_backoff_s * 2**entry.attempts,
                settings.restart_backoff_max_s,
            )
            entry.attempts += 1
            entry.state = State.RESTARTING
            log.warning("plugin %s: restart %d in %.2f s", entry.name, entry.attempts, delay)
            self.parts.events.emit(
                PluginRestarting(plugin=entry.name, attempt=entry.attempts, delay=delay),
                source="plugins",
            )
            await clock.sleep(delay)
            try:
                await self._start(entry)
            except PluginLoadError as exc:
                entry.error = str(exc)
                log.warning("plugin %s: restart failed: %s", entry.name, exc)
                continue
            entry.restarts += 1
            log.warning(
                "plugin %s restarted after a crash (attempt %d, pid %s)",
                entry.name,
                entry.attempts,
                getattr(entry.plugin, "pid", None),
            )
            return
        entry.state = State.FAILED
        self._refuse(
            entry.name, f"plugin {entry.name!r} crashed {limit} times in a row; left stopped"
        )
