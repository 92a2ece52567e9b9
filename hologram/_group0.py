"""Group 0: what must take hold before the first module runs (spec 000, "Group 0").

These are orderings of side effects ("the lock before anything writes", "the config database
before anything reads a setting"), which a graph of who-produces-what cannot express, so they
run one after another ahead of layer 0.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from hologram._version import __version__
from hologram.config import CORE_DEFAULTS, ConfigRegistry, UpdateSettings
from hologram.sdk import Facility
from hologram.state import KernelState
from hologram.update import STORES, current_manifest, prepare, prune_backups, write_manifest

log = logging.getLogger(__name__)

GIVEN = (Facility.CONFIG,)
"""Facilities that exist before layer 0."""


class LockDataDir:
    name = "data-dir lock"
    provides = ()

    async def run(self, state: KernelState) -> None:
        state.lock.acquire()

    async def close(self, state: KernelState) -> None:
        state.lock.release()


class OpenLog:
    name = "logging"
    provides = ()

    async def run(self, state: KernelState) -> None:
        state.log.open()

    async def close(self, state: KernelState) -> None:
        state.log.close()


class CheckDataDir:
    """The update module's start-up half: versions, damage, backup, migrate, roll back
    (spec 000 puts `update` ahead of every store; the config database is one, so this
    runs before it opens). At shutdown, with every store closed, the manifest records
    what the data dir now holds."""

    name = "data-dir check"
    provides = ()

    async def run(self, state: KernelState) -> None:
        state.update_report = await asyncio.to_thread(prepare, state.data_dir)
        for name, old, new in state.update_report.migrated:
            log.info("data dir: %s migrated from version %d to %d", name, old, new)

    async def close(self, state: KernelState) -> None:
        manifest = await asyncio.to_thread(current_manifest, state.data_dir, STORES, __version__)
        await asyncio.to_thread(write_manifest, state.data_dir, manifest)


class PruneBackups:
    name = "backup pruning"
    provides = ()

    async def run(self, state: KernelState) -> None:
        assert state.config is not None
        keep = max(1, state.config.read(UpdateSettings).keep_backups)
        for path in await asyncio.to_thread(prune_backups, state.data_dir, keep):
            log.info("data dir: removed the old backup %s (keeping %d)", path.name, keep)

    async def close(self, state: KernelState) -> None:
        return None


class OpenConfig:
    name = "config db"
    provides = (Facility.CONFIG,)

    def __init__(self, environ: Mapping[str, str] | None) -> None:
        self.environ = environ

    async def run(self, state: KernelState) -> None:
        registry = await ConfigRegistry.open(state.data_dir / "config.db", self.environ)
        registry.register(CORE_DEFAULTS)
        state.config = registry

    async def close(self, state: KernelState) -> None:
        if state.config is not None:
            await state.config.close()


class SnapshotConfig:
    name = "config snapshot"
    provides = ()

    async def run(self, state: KernelState) -> None:
        assert state.config is not None
        state.config_snapshot = state.config.snapshot()

    async def close(self, state: KernelState) -> None:
        return None


def group0(environ: Mapping[str, str] | None = None) -> list:
    return [
        LockDataDir(),
        OpenLog(),
        CheckDataDir(),
        OpenConfig(environ),
        PruneBackups(),
        SnapshotConfig(),
    ]
