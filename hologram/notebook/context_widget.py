"""The pruning-score widget: every event of the context window scored against the current
input (the newest input in the window), ranked as a prune would keep them, the newest
`protected_recent` marked as protected, and the top-k cut drawn as a line; a `top_k` slider
moves the cut to preview what a prune would keep; what the last prune archived is shown
leaving for the cold store. Times read as "4 min ago"; a long text opens on a click.

The scores come from `ContextWindow.preview` (the prune's own scoring, changing nothing),
recomputed when the window changes. Each event carries the smallest `top_k` that keeps it,
so the front end (`js/context.js`) moves the cut without asking the kernel. The last prune
as an SVG bar chart (`render_svg`) is the static fallback.
"""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import Callable
from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Any

import anywidget
import ipywidgets as widgets
import pandas as pd
import traitlets

from hologram.kernel import TaskScope
from hologram.media import MediaError, MediaStore
from hologram.memory import ContextEvent, ContextWindow, Fate, PruneReport, Scored, keep_order
from hologram.notebook.front import StaticFallback, bundle, style
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
            "media": " ".join(m.label() for m in e.media),
            "fingerprint": e.vector.fingerprint if e.vector is not None else None,
            "id": e.id,
        }
        for e in window.events
    ]
    columns = ["time", "source", "channel", "input", "response", "media", "fingerprint", "id"]
    return pd.DataFrame(rows, columns=columns)


THUMB_PX = 96


def thumbnail(data: bytes) -> str:
    """A small PNG of an image, as a data: URL (the full bytes never go to the page)."""
    from PIL import Image

    image = Image.open(io.BytesIO(data))
    image.thumbnail((THUMB_PX, THUMB_PX))
    out = io.BytesIO()
    image.convert("RGB").save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def thumbnails_html(window: ContextWindow, media: MediaStore | None, cache: dict[str, str]) -> str:
    """The images of the turns in the window, newest first, each under its turn's source;
    other media by its label. `cache` keeps each digest's thumbnail between redraws."""
    figures = []
    for event in reversed(window.events):
        for ref in event.media:
            caption = escape(f"{event.source}: {ref.label()}")
            if ref.is_image and media is not None:
                try:
                    if ref.digest not in cache:
                        cache[ref.digest] = thumbnail(media.get(ref.digest))
                except MediaError as exc:
                    figures.append(f"<figure>{caption} ({escape(str(exc))})</figure>")
                    continue
                figures.append(
                    f"<figure style='display:inline-block;margin:4px'>"
                    f"<img src='{cache[ref.digest]}' alt='{escape(ref.label())}' "
                    f"data-digest='{ref.digest}'><figcaption style='font-size:11px'>{caption}"
                    "</figcaption></figure>"
                )
            else:
                figures.append(f"<figure style='display:inline-block'>{caption}</figure>")
    if not figures:
        return ""
    return (
        "<div class='hologram-context-media'><b>media in the window</b><br>"
        + "".join(figures)
        + "</div>"
    )


def current_input(window: ContextWindow) -> str:
    """The input the window is judged against: the newest event's input that has one."""
    for event in reversed(window.events):
        if event.input.strip():
            return event.input
    return ""


def _row(event: ContextEvent, now: float, score: float | None, keep_from: int) -> dict[str, Any]:
    return {
        "id": event.id,
        "source": event.source,
        "channel": event.channel,
        "text": event.text,
        "timestamp": event.timestamp,
        "age": max(0.0, now - event.timestamp),
        "score": score,
        "protected": score is None,
        "keep_from": keep_from,
    }


def preview_rows(report: PruneReport, now: float) -> list[dict[str, Any]]:
    """Every event of a preview, in the order a prune keeps them (the protected first, then
    the candidates best first), each with the smallest `top_k` that keeps it: a prune
    keeps everything while the window holds no more than `top_k` events, else the
    protected and the best `top_k - protected` candidates."""
    size, protected = report.before, len(report.protected)
    scores = report.scores.tolist()
    rows = [_row(e, now, None, 0) for e in reversed(report.protected)]
    for rank, index in enumerate(keep_order(report.scores).tolist()):
        keep_from = min(size, rank + protected + 1)
        rows.append(_row(report.candidates[index], now, scores[index], keep_from))
    return rows


def leaving_rows(report: PruneReport | None, now: float) -> list[dict[str, Any]]:
    """What the last prune took out of the window: archived (to the cold store) or
    dropped (a terminal's events), best score first."""
    if report is None:
        return []
    gone = [e for e in ranked(report) if e.fate in (Fate.ARCHIVED, Fate.DROPPED)]
    return [
        {
            "id": e.event_id,
            "source": e.source,
            "text": e.text,
            "age": max(0.0, now - e.timestamp),
            "timestamp": e.timestamp,
            "score": e.score,
            "fate": str(e.fate),
        }
        for e in gone
    ]


class ContextView(anywidget.AnyWidget):
    """The interactive chart. `preview_top_k` is the slider's value (it changes nothing in
    the kernel: it only moves the cut)."""

    _esm = bundle("common", "context")
    _css = style()
    data = traitlets.Dict().tag(sync=True)
    preview_top_k = traitlets.Int(0).tag(sync=True)


class ContextWidget(StaticFallback, widgets.VBox):
    """One context window scored against its current input, and its last prune; live when
    given a bus. `await widget.scoring` waits for the scores of the latest change."""

    def __init__(
        self,
        window: ContextWindow,
        tasks: TaskScope,
        media: MediaStore | None = None,
    ) -> None:
        self.window = window
        self.media = media
        self._tasks = tasks
        self._caption = widgets.HTML()
        self.thumbnails = widgets.HTML()
        """Thumbnails of the images of the turns in the window."""
        self._thumbs: dict[str, str] = {}
        self.view = ContextView(preview_top_k=window.top_k)
        self._svg = ""
        super().__init__([self._caption, self.thumbnails, self.view])
        self._detach: list[Callable[[], None]] = []
        self.scoring: asyncio.Task[None] | None = None
        self._scorings: set[asyncio.Task[None]] = set()
        self._generation = 0
        self.refresh()

    @classmethod
    def for_kernel(cls, kernel: Kernel) -> ContextWidget:
        memory = kernel.state.memory
        if memory is None:
            raise RuntimeError("this kernel has no memory module: nothing to show")
        view = cls(memory.context, kernel.state.tasks.scope("notebook"), kernel.state.media)
        view._detach = [
            kernel.events.subscribe(EventType.CONTEXT_PRUNED, view._on_change),
            kernel.events.subscribe(EventType.CONTEXT_APPENDED, view._on_change),
        ]
        return view

    def _on_change(self, _event: Any) -> None:
        self.refresh()

    @property
    def report(self) -> PruneReport | None:
        return self.window.last_prune

    @property
    def svg(self) -> str:
        return self._svg

    @property
    def frame(self) -> pd.DataFrame:
        return window_frame(self.window)

    def fallback_html(self) -> str:
        return self._caption.value + self.thumbnails.value + self._svg

    def refresh(self) -> asyncio.Task[None]:
        """Redraw the last prune now; score the window again in the background."""
        report = self.report
        self._svg = render_svg(report)
        self._caption.value = self._caption_text(report)
        self.thumbnails.value = thumbnails_html(self.window, self.media, self._thumbs)
        self._generation += 1
        self.scoring = self._tasks.spawn(self._score(self._generation), name="context-scores")
        self._scorings.add(self.scoring)
        self.scoring.add_done_callback(self._scorings.discard)
        return self.scoring

    async def _score(self, generation: int) -> None:
        window = self.window
        query = current_input(window)
        preview = await window.preview(query) if query else None
        if generation != self._generation:
            return  # the window changed meanwhile: the newer scoring draws
        now = window.clock.now()
        rows = [] if preview is None else preview_rows(preview, now)
        if preview is None:
            rows = [_row(e, now, None, 0) for e in reversed(window.events)]
        last = self.report
        self.view.data = {
            "query": query,
            "rows": rows,
            "size": len(window),
            "top_k": window.top_k,
            "protected_recent": min(window.protected_recent, len(window)),
            "leaving": leaving_rows(last, now),
            "last_prune": None
            if last is None
            else {"query": last.query, "before": last.before, "after": last.after},
        }

    def _caption_text(self, report: PruneReport | None) -> str:
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
        return head

    def close(self) -> None:
        for detach in self._detach:
            detach()
        self._detach = []
        # A scoring still reading would outlive the window it reads.
        for scoring in list(self._scorings):
            scoring.cancel()
        self.view.close()
        super().close()
