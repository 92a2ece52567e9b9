"""The graph widget's interactive picture (`js/graph.js`): what it is given to draw, and
where new entities first appear.

Entities keep the place they have (where the layout or a drag put them, `positions`, synced
both ways); an entity seen for the first time is placed on a ring around a neighbour
already placed, so opening a neighbour never scatters what the reader has arranged. Media
blocks of a fact travel as small data URLs, drawn as thumbnails on the fact.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable

import anywidget
import networkx as nx
import traitlets

from hologram.memory import Fact, GraphMemory
from hologram.notebook.front import bundle, style

WIDTH, HEIGHT, MARGIN, RING = 720, 460, 40, 110
THUMB_BYTES = 256 * 1024
"""A media block larger than this is named, not drawn (the notebook would carry it)."""


class GraphView(anywidget.AnyWidget):
    """`data` holds the entities and facts; `positions` each entity's [x, y]. A click on an
    entity comes back as the message {"expand": name}."""

    _esm = bundle("common", "graph")
    _css = style()
    data = traitlets.Dict().tag(sync=True)
    positions = traitlets.Dict().tag(sync=True)


def place(
    names: Iterable[str], facts: list[Fact], known: dict[str, list[float]]
) -> dict[str, list[float]]:
    """A position for every entity in `names`: the known ones keep theirs; with none known,
    a seeded spring layout (stable from run to run); else each new one on a ring around a
    placed neighbour."""
    names = list(names)
    if not names:
        return {}
    if not any(n in known for n in names):
        graph: nx.Graph[str] = nx.Graph()
        graph.add_nodes_from(names)
        graph.add_edges_from((f.source, f.target) for f in facts)
        layout = nx.spring_layout(graph, seed=1)
        xs, ys = [p[0] for p in layout.values()], [p[1] for p in layout.values()]
        span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
        return {
            n: [
                round(MARGIN + (layout[n][0] - min(xs)) / span_x * (WIDTH - 2 * MARGIN), 1),
                round(MARGIN + (layout[n][1] - min(ys)) / span_y * (HEIGHT - 2 * MARGIN), 1),
            ]
            for n in names
        }
    placed = {n: list(known[n]) for n in names if n in known}
    fresh = [n for n in names if n not in placed]
    neighbours: dict[str, list[str]] = {n: [] for n in fresh}
    for fact in facts:
        for a, b in ((fact.source, fact.target), (fact.target, fact.source)):
            if a in neighbours:
                neighbours[a].append(b)
    around: dict[str, list[str]] = {}
    for name in fresh:
        anchor = next((n for n in neighbours[name] if n in placed), None)
        around.setdefault(anchor or "", []).append(name)
    for anchor, group in around.items():
        cx, cy = placed[anchor] if anchor else (WIDTH / 2, HEIGHT / 2)
        # On the half of the ring that faces the middle of the picture, so an entity near
        # an edge opens inwards.
        facing = math.atan2(HEIGHT / 2 - cy, WIDTH / 2 - cx)
        for index, name in enumerate(group):
            angle = facing - math.pi / 2 + math.pi * (index + 0.5) / len(group)
            placed[name] = [
                round(cx + RING * math.cos(angle), 1),
                round(cy + RING * math.sin(angle), 1),
            ]
    return placed


async def media_of(graph: GraphMemory, facts: list[Fact]) -> dict[str, dict[str, str]]:
    """The media blocks the facts refer to: a data URL for each small image, a name for the
    rest."""
    found: dict[str, dict[str, str]] = {}
    blocks = graph.store.blocks
    for block_id in {b for f in facts for b in f.blocks}:
        info = await blocks.get(block_id)
        if info.kind != "media":
            continue
        entry = {"id": info.id, "mime": info.mime or "", "name": info.marker()}
        if (info.mime or "").startswith("image/") and (info.size or 0) <= THUMB_BYTES:
            data = base64.b64encode(await blocks.data(block_id)).decode("ascii")
            entry["src"] = f"data:{info.mime};base64,{data}"
        found[block_id] = entry
    return found


def fact_json(fact: Fact, media: dict[str, dict[str, str]]) -> dict[str, object]:
    return {
        "id": fact.id,
        "source": fact.source,
        "relation": fact.relation,
        "target": fact.target,
        "confidence": fact.confidence,
        "sentence": fact.sentence_text,
        "valid_at": fact.valid_at,
        "invalid_at": fact.invalid_at,
        "closed_reason": fact.closed_reason,
        "media": [media[b] for b in fact.blocks if b in media],
    }
