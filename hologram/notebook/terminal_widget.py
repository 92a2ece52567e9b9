"""The terminals widget: agentcli's terminals as the notebook sees them.

It is built from `terminal_output` events alone (spec 000: terminal ownership; views
subscribe and build their own), so it shows what agentcli reported, and a widget opened
after a terminal started shows that terminal from then on. Each terminal keeps the last
`KEPT` characters of its output; notes the agent wrote on the `terminal` channel are listed
beneath.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape

import ipywidgets as widgets

from hologram.notebook.front import StaticFallback
from hologram.sdk import Event, EventType, TerminalOutput

KEPT = 8000
NOTES_KEPT = 20


@dataclass
class TerminalView:
    terminal: str
    name: str
    running: bool = True
    pid: int | None = None
    status: int | None = None
    ended: str = ""
    output: str = ""
    dropped: int = 0


@dataclass
class TerminalsModel:
    """Terminals by id, rebuilt from agentcli's events."""

    terminals: dict[str, TerminalView] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def apply(self, told: TerminalOutput) -> None:
        kind = told.event
        if kind == "note":
            self.notes = [*self.notes, told.data or ""][-NOTES_KEPT:]
            return
        key = told.terminal or ""
        view = self.terminals.get(key)
        if view is None:
            view = self.terminals[key] = TerminalView(key, told.name or key)
        view.running = view.running if told.running is None else told.running
        view.pid = view.pid if told.pid is None else told.pid
        if kind == "output":
            view.output = (view.output + (told.data or ""))[-KEPT:]
            view.dropped += told.dropped or 0
        elif kind in ("exited", "closed", "timeout"):
            view.ended = kind
            view.status = view.status if told.status is None else told.status


def render_html(model: TerminalsModel) -> str:
    if not model.terminals and not model.notes:
        return '<div class="hologram-terminals"><em>no terminals yet</em></div>'
    parts = ['<div class="hologram-terminals">']
    for view in model.terminals.values():
        if view.running:
            state = "running"
        else:
            state = {"timeout": "closed (idle)"}.get(view.ended, view.ended or "ended")
            if view.status is not None:
                state += f", status {view.status}"
        dropped = f" · {view.dropped} bytes dropped" if view.dropped else ""
        parts.append(
            f'<div class="terminal" data-terminal="{escape(view.terminal)}" '
            f'data-running="{str(view.running).lower()}">'
            f"<b>{escape(view.terminal)}</b> {escape(view.name)} · {state}{dropped}"
            '<pre style="background:#111;color:#ddd;padding:4px;max-height:16em;'
            f'overflow:auto;white-space:pre-wrap">{escape(view.output)}</pre></div>'
        )
    for note in model.notes:
        parts.append(f'<div class="note">hologram: {escape(note)}</div>')
    parts.append("</div>")
    return "".join(parts)


class TerminalWidget(StaticFallback, widgets.VBox):
    """Follows `terminal_output` events on a bus and redraws with each one."""

    def __init__(self, subscribe: Callable[..., Callable[[], None]] | None = None) -> None:
        self.model = TerminalsModel()
        self._html = widgets.HTML(render_html(self.model))
        super().__init__([self._html])
        self._unsubscribe = (
            None if subscribe is None else subscribe(EventType.TERMINAL_OUTPUT, self.on_event)
        )

    @property
    def html(self) -> str:
        return self._html.value

    def fallback_html(self) -> str:
        return self.html

    def on_event(self, event: Event) -> None:
        if not isinstance(event.payload, TerminalOutput):
            return
        self.model.apply(event.payload)
        self._html.value = render_html(self.model)

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        super().close()
