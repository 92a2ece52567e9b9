"""The pruning-score widget: the last prune of the context window as a ranked bar chart
(score per candidate; protected, kept, archived and dropped coloured), with its query, and
the window itself as a pandas DataFrame. It redraws on every `context_pruned` event.

Drawn as SVG in Python, like the layers widget: no front-end code, no CDN.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import pandas as pd

from hologram.memory import ContextWindow, Fate, PruneReport, Scored
from hologram.sdk import EventType

if TYPE_CHECKING:
    from hologram.facade import Kernel

COLOURS = {
    Fate.PROTECTED: "#5b8cc0",
    Fate.KEPT: "#2e8b57",
    Fate.ARCHIVED: "#d39e00",
    Fate.DROPPED: "#c0392b",
}
ROW_H, LABEL_W, BAR_W, MARGIN, MAX_ROWS = 20, 300, 320, 12, 60


def ranked(report: PruneReport) -> list[Scored]:
    """Protected events first (they are not scored), then candidates by falling score."""
    protected = [e for e in report.entries if e.fate is Fate.PROTECTED]
    scored = sorted(
        (e for e in report.entries if e.fate is not Fate.PROTECTED),
        key=lambda e: -(e.score or 0.0),
    )
    return protected + scored


def render_svg(report: PruneReport | None) -> str:
    if report is None:
        return '<svg xmlns="http://www.w3.org/2000/svg" class="hologram-prune" data-empty="1" ' \
            'width="420" height="30"><text x="8" y="20" font-size="13" fill="#666">' \
            "no prune yet: the window has not exceeded top_k</text></svg>"  # fmt: skip
    rows = ranked(report)
    shown = rows[:MAX_ROWS]
    width = MARGIN * 2 + LABEL_W + BAR_W + 60
    height = MARGIN * 2 + 24 + ROW_H * (len(shown) + (1 if len(rows) > MAX_ROWS else 0))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="hologram-prune" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" '
        f'data-query="{escape(report.query)}" data-before="{report.before}" '
        f'data-after="{report.after}">',
        f'<text x="{MARGIN}" y="{MARGIN + 12}" font-size="13" font-weight="bold">'
        f"query: {escape(report.query[:80])}</text>",
    ]
    for i, entry in enumerate(shown):
        y = MARGIN + 24 + i * ROW_H
        score = entry.score
        length = BAR_W if score is None else max(0.0, min(1.0, score)) * BAR_W
        label = entry.text if len(entry.text) <= 40 else entry.text[:39] + "…"
        shown_score = "protected" if score is None else f"{score:.3f}"
        faded = ' fill-opacity="0.35"' if score is None else ""
        data_score = "" if score is None else f"{score:.6f}"
        parts.append(
            f'<g class="candidate" data-id="{escape(entry.event_id)}" data-fate="{entry.fate}" '
            f'data-score="{data_score}">'
            f"<title>{escape(entry.source)}: {escape(entry.text)}</title>"
            f'<text x="{MARGIN}" y="{y + 14}" font-size="11">{escape(label)}</text>'
            f'<rect x="{MARGIN + LABEL_W}" y="{y + 3}" width="{length:.1f}" height="{ROW_H - 6}" '
            f'fill="{COLOURS[entry.fate]}"'
            f"{faded}/>"
            f'<text x="{MARGIN + LABEL_W + length + 4:.1f}" y="{y + 14}" font-size="10" '
            f'fill="#444">{shown_score} · {entry.fate}</text></g>'
        )
    if len(rows) > MAX_ROWS:
        y = MARGIN + 24 + len(shown) * ROW_H + 14
        parts.append(
            f'<text x="{MARGIN}" y="{y}" font-size="11" fill="#666">'
            f"… {len(rows) - MAX_ROWS} more</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def window_frame(window: ContextWindow) -> pd.DataFrame:
    """The window, oldest first: one row per event."""
    rows = [
        {
            "time": datetime.fromtimestamp(e.timestamp, UTC),
            "source": e.source,
            "channel": e.channel,
            "input": e.input,
            "response": e.response,
            "fingerprint": e.vector.fingerprint if e.vector is not None else None,
            "id": e.id,
        }
        for e in window.events
    ]
    columns = ["time", "source", "channel", "input", "response", "fingerprint", "id"]
    return pd.DataFrame(rows, columns=columns)


class ContextWidget(widgets.VBox):
    """The last prune of one context window, and the window; live when given a bus."""

    def __init__(self, window: ContextWindow) -> None:
        self.window = window
        self._caption = widgets.HTML()
        self._chart = widgets.HTML()
        self._table = widgets.HTML()
        super().__init__([self._caption, self._chart, self._table])
        self._detach: Callable[[], None] | None = None
        self.refresh()

    @classmethod
    def for_kernel(cls, kernel: Kernel) -> ContextWidget:
        memory = kernel.state.memory
        if memory is None:
            raise RuntimeError("this kernel has no memory module: nothing to show")
        view = cls(memory.context)
        view._detach = kernel.events.subscribe(EventType.CONTEXT_PRUNED, view._on_prune)
        return view

    def _on_prune(self, _event: Any) -> None:
        self.refresh()

    @property
    def report(self) -> PruneReport | None:
        return self.window.last_prune

    @property
    def svg(self) -> str:
        return self._chart.value

    @property
    def frame(self) -> pd.DataFrame:
        return window_frame(self.window)

    def refresh(self) -> None:
        report = self.report
        self._chart.value = render_svg(report)
        self._table.value = self.frame.to_html(index=False, max_rows=50, escape=True)
        window = self.window
        head = f"<b>context window: {len(window)} events</b> (top_k {window.top_k}, "
        head += f"last {window.protected_recent} protected)"
        if report is not None:
            counts = {fate: 0 for fate in Fate}
            for entry in report.entries:
                counts[entry.fate] += 1
            legend = " ".join(
                f"<span style='color:{COLOURS[f]}'>■</span> {f} {counts[f]}" for f in Fate
            )
            head += f"<br>last prune: {report.before} → {report.after} · {legend}"
        self._caption.value = head

    def close(self) -> None:
        if self._detach is not None:
            self._detach()
            self._detach = None
        super().close()
