"""`%hologram changes`: each tool call that changed files, its changes with their diffs, and
an undo button. An undo the tracker refuses (a file changed again since) shows its reason."""

from __future__ import annotations

import asyncio
from html import escape
from typing import Any

import ipywidgets

from hologram.notebook.front import StaticFallback
from hologram.tracker import Call, Tracker, UndoError


def call_html(call: Call) -> str:
    state = "undone" if call.undone_at is not None else "applied"
    rows = []
    for change in call.changes:
        moved = f" ← <code>{escape(change.old_path)}</code>" if change.old_path else ""
        diff = f"<pre class='diff'>{escape(change.diff)}</pre>" if change.diff else ""
        rows.append(
            f"<li data-kind='{change.kind}'><b>{change.kind}</b> "
            f"<code>{escape(change.path)}</code>{moved}{diff}</li>"
        )
    return (
        f"<div data-call='{escape(call.call_id)}' data-state='{state}'>"
        f"<b>{escape(call.tool)}</b> <code>{escape(call.call_id)}</code> ({state}, "
        f"found by {escape(call.mechanism)})<ul>{''.join(rows)}</ul></div>"
    )


class ChangesWidget(StaticFallback, ipywidgets.VBox):
    """One row per call, newest first; `undo(call_id)` is what the button does (a task in
    the kernel's task group; `await widget.pending` waits for it)."""

    def __init__(self, tracker: Tracker, tasks: Any, limit: int = 20) -> None:
        super().__init__()
        self._tracker = tracker
        self._tasks = tasks
        self._limit = limit
        self.status = ipywidgets.HTML("")
        self.buttons: dict[str, ipywidgets.Button] = {}
        self.rows: dict[str, ipywidgets.HTML] = {}
        self.pending: asyncio.Task[None] | None = None
        self.refresh()

    def refresh(self) -> None:
        children: list[ipywidgets.Widget] = [self.status]
        self.buttons, self.rows = {}, {}
        for call in self._tracker.log.calls(self._limit):
            row = ipywidgets.HTML(call_html(call))
            button = ipywidgets.Button(
                description="undo", disabled=call.undone_at is not None, tooltip=call.call_id
            )
            button.on_click(lambda _b, cid=call.call_id: self.undo(cid))
            self.rows[call.call_id], self.buttons[call.call_id] = row, button
            children.append(ipywidgets.HBox([button, row]))
        if len(children) == 1:
            self.status.value = "no tool call has changed files yet"
        self.children = tuple(children)

    def fallback_html(self) -> str:
        """The status and each call's changes, without the undo buttons (a static page
        cannot undo)."""
        rows = "".join(row.value for row in self.rows.values())
        return f"<div class='hologram-changes'>{self.status.value}{rows}</div>"

    def undo(self, call_id: str) -> asyncio.Task[None]:
        self.pending = self._tasks.spawn(self._undo(call_id), name="changes-widget-undo")
        return self.pending

    async def _undo(self, call_id: str) -> None:
        try:
            changes = await self._tracker.undo(call_id)
        except UndoError as exc:
            self.refresh()
            self.status.value = f"<span class='refused'>{escape(str(exc))}</span>"
            return
        self.refresh()
        self.status.value = f"undid {len(changes)} change(s) of <code>{escape(call_id)}</code>"
