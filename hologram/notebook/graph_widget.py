"""The graph widget: `%hologram graph [ENTITY] [--depth 2] [--history]`.

Entities and facts around ENTITY (or the best-known part of the graph): nodes sized by
mentions, closed facts dashed and grey (loaded only with --history), the entities the last
recall touched highlighted. The picture (`graph_view`, `js/graph.js`) pans, zooms and lets
entities be dragged; a click on an entity opens its neighbours; hovering a fact shows its
sentence, confidence and validity; an "as of" slider shows the graph at an earlier time
(facts closed by then grey, facts not yet true faded); media blocks show as thumbnails.
The controls (entity, depth, history) redraw it; `relations` and `entities` are the same as
pandas DataFrames. The SVG drawn here is the static fallback.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING

import ipywidgets as widgets
import networkx as nx
import pandas as pd

from hologram.kernel import TaskScope
from hologram.memory import Fact, GraphMemory
from hologram.notebook.front import StaticFallback
from hologram.notebook.graph_view import GraphView, fact_json, media_of, place
from hologram.sdk import EventType

if TYPE_CHECKING:
    from hologram.facade import Kernel

WIDTH, HEIGHT, MARGIN = 640, 420, 40
OVERVIEW_FACTS = 60
NODE, HIGHLIGHT, EDGE, CLOSED = "#8fb3d9", "#f0a030", "#666", "#b55"


def render_svg(
    facts: list[Fact], mentions: dict[str, int], highlighted: set[str], focus: str = ""
) -> str:
    """The facts as an SVG picture (positions from a seeded spring layout: stable runs)."""
    graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
    for name in mentions:
        graph.add_node(name)
    for fact in facts:
        graph.add_edge(fact.source, fact.target, key=fact.id)
    if graph.number_of_nodes() == 0:
        return (
            '<svg xmlns="http://www.w3.org/2000/svg" class="hologram-graph" data-empty="1" '
            'width="420" height="30"><text x="8" y="20" font-size="13" fill="#666">'
            "nothing in graph memory matches</text></svg>"
        )
    layout = nx.spring_layout(nx.Graph(graph), seed=1)
    xs = [p[0] for p in layout.values()] or [0.0]
    ys = [p[1] for p in layout.values()] or [0.0]
    span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0

    def at(name: str) -> tuple[float, float]:
        x, y = layout[name]
        return (
            MARGIN + (x - min(xs)) / span_x * (WIDTH - 2 * MARGIN),
            MARGIN + (y - min(ys)) / span_y * (HEIGHT - 2 * MARGIN),
        )

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="hologram-graph" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" '
        f'data-focus="{escape(focus)}" data-nodes="{graph.number_of_nodes()}" '
        f'data-facts="{len(facts)}">'
    ]
    for fact in facts:
        (x1, y1), (x2, y2) = at(fact.source), at(fact.target)
        closed = fact.invalid_at is not None
        dash = ' stroke-dasharray="5,4"' if closed else ""
        colour = CLOSED if closed else EDGE
        parts.append(
            f'<g class="fact" data-fact="{fact.id}" data-current="{0 if closed else 1}">'
            f"<title>{escape(fact.line())}</title>"
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" '
            f'stroke-width="1.4"{dash}/>'
            f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 3:.1f}" font-size="9" '
            f'fill="{colour}" text-anchor="middle">{escape(fact.relation)}</text></g>'
        )
    for name in graph.nodes:
        x, y = at(name)
        count = mentions.get(name, 1)
        radius = 6 + 4 * math.log1p(count)
        lit = name in highlighted
        parts.append(
            f'<g class="entity" data-entity="{escape(name)}" data-mentions="{count}" '
            f'data-highlighted="{1 if lit else 0}"><title>{escape(name)}: {count} mentions'
            f'</title><circle cx="{x:.1f}" cy="{y:.1f}" r="{radius:.1f}" '
            f'fill="{HIGHLIGHT if lit else NODE}" stroke="#345"/>'
            f'<text x="{x:.1f}" y="{y + radius + 11:.1f}" font-size="11" '
            f'text-anchor="middle">{escape(name)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def facts_frame(facts: list[Fact]) -> pd.DataFrame:
    columns = [
        "id",
        "source",
        "relation",
        "target",
        "confidence",
        "current",
        "closed_reason",
        "sentence_text",
        "valid_at",
        "invalid_at",
    ]
    rows = [
        {
            "id": f.id,
            "source": f.source,
            "relation": f.relation,
            "target": f.target,
            "confidence": f.confidence,
            "current": f.invalid_at is None,
            "closed_reason": f.closed_reason,
            "sentence_text": f.sentence_text,
            "valid_at": pd.to_datetime(f.valid_at, unit="s", utc=True),
            "invalid_at": None
            if f.invalid_at is None
            else pd.to_datetime(f.invalid_at, unit="s", utc=True),
        }
        for f in facts
    ]
    return pd.DataFrame(rows, columns=columns)


class GraphWidget(StaticFallback, widgets.VBox):
    """One kernel's graph memory around an entity. `await widget.refresh()` (or the
    `loading` task a magic starts) fills it; the controls redraw it; a click on an entity
    opens its neighbours (`await widget.expanding`)."""

    def __init__(
        self,
        graph: GraphMemory,
        entity: str = "",
        depth: int = 2,
        history: bool = False,
        *,
        tasks: TaskScope,
    ) -> None:
        self.graph = graph
        self._tasks = tasks
        self.entity_box = widgets.Text(value=entity, placeholder="entity (empty: overview)")
        self.depth_box = widgets.IntSlider(value=depth, min=0, max=4, description="depth")
        self.history_box = widgets.Checkbox(value=history, description="history")
        self._caption = widgets.HTML()
        self.view = GraphView()
        controls = widgets.HBox([self.entity_box, self.depth_box, self.history_box])
        super().__init__([controls, self._caption, self.view])
        self.facts: list[Fact] = []
        self.mentions: dict[str, int] = {}
        self.expanded: list[str] = []
        self.error = ""
        self._svg = ""
        self.loading: asyncio.Task[None] | None = None
        self.expanding: asyncio.Task[None] | None = None
        self._refreshing: set[asyncio.Task[None]] = set()
        self._generation = 0
        self._detach: Callable[[], None] | None = None
        for box in (self.entity_box, self.depth_box, self.history_box):
            box.observe(lambda _change: self.schedule(), names="value")
        self.view.on_msg(self._on_message)

    @classmethod
    def for_kernel(
        cls, kernel: Kernel, entity: str = "", depth: int = 2, history: bool = False
    ) -> GraphWidget:
        graph = kernel.state.graph
        if graph is None:
            raise RuntimeError("this kernel has no graph memory: nothing to show")
        view = cls(graph, entity, depth, history, tasks=kernel.state.tasks.scope("notebook"))
        view._detach = kernel.events.subscribe(
            EventType.GRAPH_COMMITTED, lambda _e: view.schedule()
        )
        view.schedule()
        return view

    def _track(self, task: asyncio.Task[None]) -> asyncio.Task[None]:
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)
        return task

    def schedule(self) -> asyncio.Task[None]:
        self.loading = self._track(self._tasks.spawn(self.refresh(), name="graph-widget-refresh"))
        return self.loading

    def _on_message(self, _view: object, content: dict[str, object], _buffers: object) -> None:
        name = content.get("expand")
        if isinstance(name, str) and name:
            self.expanding = self._track(
                self._tasks.spawn(self.expand(name), name="graph-widget-expand")
            )

    @property
    def svg(self) -> str:
        return self._svg

    def fallback_html(self) -> str:
        return (self._caption.value + self._svg) or "<em>the graph is loading</em>"

    @property
    def highlighted(self) -> set[str]:
        last = self.graph.indexer.last_recall
        return set(last.names()) if last is not None else set()

    async def refresh(self) -> None:
        self._generation += 1
        generation = self._generation
        store = self.graph.store
        entity = self.entity_box.value.strip()
        history = self.history_box.value
        error, facts = "", []
        try:
            if entity:
                result = await store.recall(
                    [entity], self.depth_box.value, history=history, limit=200
                )
                facts = result.facts
            else:
                facts = await store.facts(history=history, limit=OVERVIEW_FACTS)
        except Exception as exc:  # an unknown entity is shown, not raised into the UI
            error = str(exc)
        names = {n for f in facts for n in (f.source, f.target)}
        if entity and not facts:
            names |= {e.name for e in (await store.recall([entity], 0)).entities}
        mentions = await store.mention_counts(names)
        newest = self.loading
        if (
            generation != self._generation
            and newest is not None
            and newest is not asyncio.current_task()
        ):
            # Settings or the graph changed meanwhile: the newer refresh draws, and whoever
            # awaits this one gets the widget as that one leaves it.
            await asyncio.shield(newest)
            return
        self.error, self.facts, self.mentions, self.expanded = error, facts, mentions, []
        await self._draw()

    async def expand(self, name: str) -> None:
        """Open an entity's neighbours: its facts join the picture (closed ones too when
        history is on), and the entities they reach appear around it."""
        found = await self.graph.store.facts(entity=name, history=self.history_box.value)
        known = {f.id for f in self.facts}
        self.facts = self.facts + [f for f in found if f.id not in known]
        names = {n for f in self.facts for n in (f.source, f.target)} | set(self.mentions)
        self.mentions = await self.graph.store.mention_counts(names)
        if name not in self.expanded:
            self.expanded.append(name)
        await self._draw()

    async def _draw(self) -> None:
        entity = self.entity_box.value.strip()
        highlighted = self.highlighted
        self._svg = render_svg(self.facts, self.mentions, highlighted, entity)
        media = await media_of(self.graph, self.facts)
        positions = place(self.mentions, self.facts, dict(self.view.positions))
        now = self.graph.store.clock.now()
        nodes = [
            {"name": n, "mentions": c, "highlighted": n in highlighted}
            for n, c in self.mentions.items()
        ]
        self.view.positions = positions
        self.view.data = {
            "focus": entity,
            "nodes": nodes,
            "facts": [fact_json(f, media) for f in self.facts],
            "expanded": list(self.expanded),
            "now": now,
        }
        current = sum(1 for f in self.facts if f.invalid_at is None)
        self._caption.value = (
            f"<b>graph memory{' around ' + escape(entity) if entity else ''}</b>: "
            f"{len(self.mentions)} entities, {current} current facts, "
            f"{len(self.facts) - current} closed"
            + (f" · {escape(self.error)}" if self.error else "")
            + " <span style='color:#666'>(drag to move, click an entity to open its "
            "neighbours, wheel to zoom, hover a fact for its sentence)</span>"
        )

    @property
    def relations(self) -> pd.DataFrame:
        return facts_frame(self.facts)

    @property
    def entities(self) -> pd.DataFrame:
        highlighted = self.highlighted
        rows = [
            {"name": n, "mentions": c, "highlighted": n in highlighted}
            for n, c in sorted(self.mentions.items(), key=lambda kv: -kv[1])
        ]
        return pd.DataFrame(rows, columns=["name", "mentions", "highlighted"])

    def close(self) -> None:
        if self._detach is not None:
            self._detach()
            self._detach = None
        # A refresh still reading would outlive the kernel it reads from.
        for refresh in list(self._refreshing):
            refresh.cancel()
        self.view.close()
        super().close()
