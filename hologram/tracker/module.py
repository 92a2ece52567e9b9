"""The `tracker` kernel module: the change log at `<data>/tracker.db`, the shadow of the
sandbox roots in the content-addressed store, its watcher, and the `changes_undo` tool."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Protocol

from hologram.config import ConfigRegistry, SecuritySettings, key_of
from hologram.events import EventBus
from hologram.kernel import KernelTasks, required
from hologram.media import MediaStore
from hologram.sdk import Facility, Param, ToolDef, ToolError
from hologram.stages import StageHost
from hologram.tracker.log import ChangeLog
from hologram.tracker.tracker import Tracker
from hologram.tracker.undo import UndoError

OWNER = "changes"
ROOT_KEYS = (key_of(SecuritySettings, "write_roots"), key_of(SecuritySettings, "read_roots"))
"""Settings that move the sandbox roots (empty write roots follow the defaults)."""

log = logging.getLogger(__name__)


class _Sandbox(Protocol):
    @property
    def write_roots(self) -> Sequence[Path]: ...


class _Policy(Protocol):
    @property
    def sandbox(self) -> _Sandbox: ...


class SandboxPolicy(Protocol):
    """The part of the firewall (a floor above) the tracker reads: the roots it enforces."""

    def policy(self) -> _Policy: ...


class TrackerState(Protocol):
    """What the tracker module reads of the kernel's state, and the field it fills."""

    @property
    def config(self) -> ConfigRegistry | None: ...
    @property
    def events(self) -> EventBus | None: ...
    @property
    def stagehost(self) -> StageHost | None: ...
    @property
    def media(self) -> MediaStore | None: ...
    @property
    def security(self) -> SandboxPolicy | None: ...
    @property
    def data_dir(self) -> Path: ...
    @property
    def tasks(self) -> KernelTasks: ...

    tracker: Tracker | None


def sandbox_roots(state: TrackerState) -> list[Path]:
    """The write roots the firewall enforces (what a tool may change), else its defaults."""
    if state.security is not None:
        return list(state.security.policy().sandbox.write_roots)
    return [state.data_dir / "workspace", state.data_dir / "plugin-data"]


class TrackerModule:
    name = "tracker"
    requires = (Facility.CONFIG, Facility.EVENTS, Facility.STAGE_HOST, Facility.MEDIA)
    optional = (Facility.SECURITY,)
    provides = (Facility.TRACKER,)

    def __init__(self) -> None:
        self._tracker: Tracker | None = None
        self._host: StageHost | None = None
        self._unwatch: Callable[[], None] | None = None
        self._moving = asyncio.Lock()
        """One move of the roots at a time, and none under the close."""

    async def init(self, state: TrackerState) -> None:
        host = required(state.stagehost, Facility.STAGE_HOST)
        changelog = ChangeLog(state.data_dir / "tracker.db")
        tracker = Tracker(
            sandbox_roots(state),
            required(state.media, Facility.MEDIA).blobs,
            changelog,
            state.data_dir / "tracker",
            required(state.events, Facility.EVENTS).publish,
        )
        await asyncio.to_thread(tracker.start)
        self._tracker = tracker
        self._host = host
        host.track_files(tracker)
        host.register_tool(undo_tool(tracker), owner=OWNER)
        state.tracker = tracker
        self._follow_roots(state, tracker)

    def _follow_roots(self, state: TrackerState, tracker: Tracker) -> None:
        """A change of the firewall's roots moves the tracker to them (after the setting is
        stored; the move, a watcher restart and a scan, runs off the loop)."""
        tasks = state.tasks.scope(self.name)

        async def retarget(roots: list[Path]) -> None:
            async with self._moving:
                moved = self._tracker is not None and await asyncio.to_thread(
                    tracker.retarget, roots
                )
            if moved:
                log.info("tracker: now watching %s", ", ".join(map(str, tracker.roots)))

        def changed(key: str) -> None:
            if key.startswith(ROOT_KEYS):
                tasks.spawn(retarget(sandbox_roots(state)), name="tracker-retarget")

        self._unwatch = required(state.config, Facility.CONFIG).watch(changed)

    async def close(self) -> None:
        if self._unwatch is not None:
            self._unwatch()
        if self._host is not None:
            self._host.track_files(None)
        async with self._moving:
            tracker, self._tracker = self._tracker, None
        if tracker is not None:
            await asyncio.to_thread(tracker.stop)
            tracker.log.close()


def undo_tool(tracker: Tracker) -> ToolDef:
    async def changes_undo(
        call_id: Annotated[str, Param("the id of the tool call to undo", min_length=1)],
    ) -> str:
        """Undo the file changes one tool call made (restore bytes and modes, re-create
        deleted files, reverse renames). Refused when a file was changed again since."""
        try:
            changes = await tracker.undo(call_id)
        except UndoError as exc:
            raise ToolError(str(exc)) from None
        return json.dumps(
            {"undone": call_id, "changes": [{"path": c.path, "kind": c.kind} for c in changes]}
        )

    return ToolDef.from_function(changes_undo, owner=OWNER, no_memory=True)
