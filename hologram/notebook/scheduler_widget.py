"""The preemption widget: a live timeline of the input scheduler.

One lane per level (queued, L1-L4); a bar for each stretch of time an input ran; marks where
it was preempted (▼), resumed (▲) or stopped (■); and the interrupt stack as it is now. It is
fed only by the scheduler's trace events on the bus, so it shows what the kernel decided, not
what a second bookkeeping thinks it decided.

The interactive view (`js/timeline.js`, which the service page uses too) folds the same
events: hovering a bar shows the input's text (as the journal keeps it: masked by the
firewall), channel and level and why each preempt, resume or stop happened; the wheel zooms
the time axis; a reply that streams (`agent_output_delta`) draws as a bar that grows. The
SVG drawn here is the static fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any

import anywidget
import traitlets

from hologram.notebook.front import StaticFallback, bundle, style
from hologram.sdk import AgentOutputDelta, Event, EventType, SchedulerDecision, to_wire

OUTPUT_DELTA = EventType.AGENT_OUTPUT_DELTA
MAX_EVENTS = 5000

LANES = ["queued", "L1", "L2", "L3", "L4"]
LANE_H, LEFT, TOP, WIDTH = 34, 64, 24, 760
PALETTE = ["#8da0b3", "#5b9bd5", "#70ad47", "#ed7d31", "#c00000"]


@dataclass
class _Run:
    task: int
    level: int
    start: float
    end: float | None = None
    ended_by: str = ""


@dataclass
class TimelineModel:
    """The scheduler's history, rebuilt from its trace events."""

    runs: list[_Run] = field(default_factory=list)
    marks: list[tuple[str, int, float, int]] = field(default_factory=list)
    stack: list[int] = field(default_factory=list)
    levels: dict[int, int] = field(default_factory=dict)
    labels: dict[int, str] = field(default_factory=dict)
    channels: dict[int, str] = field(default_factory=dict)
    running: int | None = None
    first: float | None = None
    last: float = 0.0

    def apply(self, decision: SchedulerDecision) -> None:
        action, task, at = decision.action, decision.task, decision.at
        self.first = at if self.first is None else self.first
        self.last = max(self.last, at)
        if decision.level is not None:
            self.levels[task] = decision.level
        if decision.text:
            self.labels[task] = decision.text
        if decision.channel:
            self.channels[task] = decision.channel
        level = self.levels.get(task, 0)
        if action in ("start", "resume"):
            self.runs.append(_Run(task, level, at))
            self.running = task
            if action == "resume":
                self.marks.append(("resume", task, at, level))
                if task in self.stack:
                    self.stack.remove(task)
        elif action in ("preempt", "finish", "stop"):
            self._close(task, at, action)
            if action == "preempt":
                self.stack.append(task)
            if action != "finish":
                self.marks.append((action, task, at, level))

    def _close(self, task: int, at: float, why: str) -> None:
        for run in reversed(self.runs):
            if run.task == task and run.end is None:
                run.end, run.ended_by = at, why
                break
        if self.running == task:
            self.running = None


def render_svg(model: TimelineModel, now: float | None = None) -> str:
    origin = model.first or 0.0
    end = max(model.last, now or 0.0, origin + 1e-3)
    span = end - origin
    scale = (WIDTH - LEFT - 16) / span

    def x(t: float) -> float:
        return LEFT + (t - origin) * scale

    height = TOP + LANE_H * len(LANES) + 24
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="hologram-scheduler" width="{WIDTH}" '
        f'height="{height}" font-family="sans-serif" font-size="11">'
    ]
    for lane, name in enumerate(LANES):
        y = TOP + (len(LANES) - 1 - lane) * LANE_H
        lane_w = WIDTH - LEFT - 16
        parts.append(
            f'<g class="lane" data-lane="{name}">'
            f'<rect x="{LEFT}" y="{y}" width="{lane_w}" height="{LANE_H - 4}" fill="#f7f7f7"/>'
            f'<text x="6" y="{y + LANE_H / 2 + 2}">{name}</text></g>'
        )
    for run in model.runs:
        y = TOP + (len(LANES) - 1 - run.level) * LANE_H + 4
        stop = run.end if run.end is not None else end
        width = max(2.0, x(stop) - x(run.start))
        label = escape(model.labels.get(run.task, f"#{run.task}"))
        channel = model.channels.get(run.task, "")
        label += f" ({escape(channel)})" if channel else ""
        parts.append(
            f'<g class="run" data-task="{run.task}" data-level="{run.level}" '
            f'data-ended="{run.ended_by or "running"}"><title>#{run.task} {label}</title>'
            f'<rect x="{x(run.start):.1f}" y="{y}" width="{width:.1f}" '
            f'height="{LANE_H - 12}" rx="3" fill="{PALETTE[run.level]}"/>'
            f'<text x="{x(run.start) + 3:.1f}" y="{y + 15}" fill="white">#{run.task}</text></g>'
        )
    glyphs = {"preempt": "▼", "resume": "▲", "stop": "■"}
    for action, task, at, level in model.marks:
        y = TOP + (len(LANES) - 1 - level) * LANE_H
        parts.append(
            f'<text class="mark" data-mark="{action}" data-task="{task}" x="{x(at) - 4:.1f}" '
            f'y="{y + 2}" fill="#333">{glyphs[action]}</text>'
        )
    stack = " ← ".join(f"#{t}" for t in model.stack) or "empty"
    running = "idle" if model.running is None else f"#{model.running}"
    parts.append(
        f'<text class="stack" x="{LEFT}" y="{height - 6}">running: {running} · '
        f"interrupt stack (bottom → top): {escape(stack)} · {span:.2f} s shown</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


class SchedulerWidget(StaticFallback, anywidget.AnyWidget):
    """Follows the scheduler's trace events (and the reply's stream) on a bus and redraws
    with each one. `events` is what the front end folds: {type, timestamp, payload} each,
    consecutive stream pieces of one input merged into one."""

    _esm = bundle("common", "timeline", "scheduler")
    _css = style()
    events: traitlets.List[dict[str, Any]] = traitlets.List([]).tag(sync=True)

    def __init__(self, subscribe: Callable[..., Callable[[], None]] | None = None) -> None:
        super().__init__()
        self.model = TimelineModel()
        self._svg = render_svg(self.model)
        self._unsubscribe: list[Callable[[], None]] = []
        if subscribe is not None:
            self._unsubscribe = [
                subscribe(EventType.SCHEDULER, self.on_event),
                subscribe(OUTPUT_DELTA, self.on_delta),
            ]

    @property
    def svg(self) -> str:
        return self._svg

    def fallback_html(self) -> str:
        return self._svg

    def on_event(self, event: Event) -> None:
        if not isinstance(event.payload, SchedulerDecision):
            return
        self.model.apply(event.payload)
        self._svg = render_svg(self.model)
        wire = to_wire(event.payload)  # the front end reads the payload's JSON keys
        entry = {"type": str(event.type), "timestamp": event.timestamp, "payload": wire}
        self.events = [*self.events[-MAX_EVENTS:], entry]

    def on_delta(self, event: Event) -> None:
        """A piece of a streamed reply: merged into the previous entry when that is a piece
        of the same input, so a long reply stays one entry that grows."""
        delta = event.payload
        if not isinstance(delta, AgentOutputDelta) or delta.reasoning or delta.input_id is None:
            return
        chars = len(delta.text)
        last = self.events[-1] if self.events else None
        if (
            last is not None
            and last["type"] == OUTPUT_DELTA
            and last["payload"]["input_id"] == delta.input_id
            and not delta.restart
        ):
            merged = {**last["payload"], "chars": last["payload"]["chars"] + chars}
            entry = {**last, "timestamp": event.timestamp, "payload": merged}
            self.events = [*self.events[:-1], entry]
            return
        piece = {"input_id": delta.input_id, "chars": chars, "since": event.timestamp}
        if delta.restart:
            piece["restart"] = True
        entry = {"type": OUTPUT_DELTA, "timestamp": event.timestamp, "payload": piece}
        self.events = [*self.events[-MAX_EVENTS:], entry]

    def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        super().close()
