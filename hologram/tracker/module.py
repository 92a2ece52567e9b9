"""The `tracker` kernel module: the change log at `<data>/tracker.db`, the shadow of the
sandbox roots in the content-addressed store, its watcher, and the `changes_undo` tool."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

from hologram.sdk import Facility, Param, ToolDef, ToolError
from hologram.tracker.log import ChangeLog
from hologram.tracker.tracker import Tracker
from hologram.tracker.undo import UndoError

OWNER = "changes"


def sandbox_roots(state: Any) -> list[Path]:
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
        self._host: Any = None

    async def init(self, state: Any) -> None:
        changelog = ChangeLog(state.data_dir / "tracker.db")
        tracker = Tracker(
            sandbox_roots(state),
            state.media.blobs,
            changelog,
            state.data_dir / "tracker",
            state.events.publish,
        )
        await asyncio.to_thread(tracker.start)
        self._tracker = tracker
        self._host = state.stagehost
        state.stagehost.track_files(tracker)
        state.stagehost.register_tool(undo_tool(tracker), owner=OWNER)
        state.tracker = tracker

    async def close(self) -> None:
        if self._host is not None:
            self._host.track_files(None)
        if self._tracker is not None:
            await asyncio.to_thread(self._tracker.stop)
            self._tracker.log.close()


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
