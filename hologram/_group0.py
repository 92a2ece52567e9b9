"""Group 0: what must take hold before the first module runs (spec 000, "Group 0").

These are orderings of side effects ("the lock before anything writes", "the config database
before anything reads a setting"), which a graph of who-produces-what cannot express, so they
run one after another ahead of layer 0.
"""

from __future__ import annotations

from collections.abc import Mapping

from hologram.config import CORE_DEFAULTS, ConfigRegistry
from hologram.sdk import Facility
from hologram.state import KernelState

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
    return [LockDataDir(), OpenLog(), OpenConfig(environ), SnapshotConfig()]
