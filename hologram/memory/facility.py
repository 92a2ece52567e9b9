"""What memory puts into the system prompt, and the `Memory` facility the turn holds."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from hologram.media import MediaStore
from hologram.memory.cold.store import ColdContext, ColdHit
from hologram.memory.cold.tools import coldcontext_tools
from hologram.memory.recall.hybrid import HybridHit, Place
from hologram.memory.recall.query import Asked
from hologram.memory.textlog import TextLog
from hologram.memory.window.context import ContextWindow, PruneReport
from hologram.memory.window.event import AGENT_SOURCE, ContextEvent, ToolOutput, media_labels
from hologram.sdk import Embedder, MediaRef, MemItem, StageContext, ToolDef, ToolResult

log = logging.getLogger(__name__)

RELATED_DOCS_HEADER = "[Related Memory Docs]"
USER_SOURCE = "user"
"""The source of an input that came with no channel name."""

Estimate = Callable[[str], int]
"""Tokens of a text: the provider layer's estimator, passed in so there is only one."""

INLINE_SEARCH_DOCS = 20_000
"""Below this many indexed turns a search costs less than the hop to a worker thread and
back on a busy machine, so it runs inline on the loop; the eval's retrieval p50/p95
(`python -m hologram eval`) is where that is measured again."""

LAYER_WAIT_S = 1.0
"""How long after boot a search (and the service, before it takes input) still waits for a
layer's index to be built. A small store is indexed well within it; a year of archived
turns takes seconds, and past this the search answers from the newest turns indexed so far
(the layer announces it) rather than hold the first reply, and every input queued behind
it."""

_SOURCE_OF = {Place.COLD_CONTEXT: "coldcontext", Place.GRAPH: "graph.blocks"}
"""A recalled document's `MemItem.source`, by where it is kept."""


def _when(ts: float) -> str:
    # Every line of the timeline and of the recalled docs, each turn: gmtime is a third
    # of what a datetime costs for the same text.
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ts))


@dataclass(frozen=True, slots=True)
class Recollection:
    """A stored turn or document found for a query, wherever it is kept now."""

    id: str
    place: Place
    text: str
    at: float
    """When what it records happened."""
    where: str
    """The channel or source it came from."""
    score: float
    media: tuple[MediaRef, ...] = ()

    @classmethod
    def of_cold(cls, hit: ColdHit) -> Recollection:
        doc = hit.doc
        return cls(
            doc.id, Place.COLD_CONTEXT, doc.text, doc.created_at, doc.channel or doc.source,
            hit.score, tuple(doc.media),
        )  # fmt: skip


def doc_line(hit: ColdHit | Recollection) -> str:
    found = Recollection.of_cold(hit) if isinstance(hit, ColdHit) else hit
    return f"- ({_when(found.at)} UTC, {found.where}) {found.text}{media_labels(found.media)}"


def event_line(event: ContextEvent) -> str:
    """One timeline line: when, who, what (what the model reads as the conversation)."""
    if event.source == AGENT_SOURCE:
        what = event.response
    elif event.response:
        what = f"{event.input} → {event.response}"
    else:
        what = event.input
    return f"[{_when(event.timestamp)}] {event.source}: {what}{media_labels(event.media)}"


def related_docs_section(
    hits: Sequence[ColdHit | Recollection], budget_tokens: int, estimate: Estimate
) -> str:
    """The "[Related Memory Docs]" section: the best hits first, as many as fit in
    `budget_tokens` with the header; "" when none fits or none was found. A ceiling, not a
    fill target: a budget larger than the hits leaves the rest unused."""
    lines = [RELATED_DOCS_HEADER]
    used = estimate(RELATED_DOCS_HEADER)
    for hit in hits:
        line = doc_line(hit)
        cost = estimate(line)
        if used + cost > budget_tokens:
            break
        lines.append(line)
        used += cost
    return "\n".join(lines) if len(lines) > 1 else ""


class MemoryLayer(Protocol):
    """A further memory layer joining the turn (the graph): its items beside the cold
    context's in recall, its section in the prompt, its tools beside coldcontext_*, and
    the documents it keeps in the shared recall index (`place`), which `recollect` reads."""

    # Read-only, so a layer may declare it as a class constant.
    @property
    def place(self) -> Place | None: ...

    async def recall(
        self, query: str, budget_tokens: int | None = None, *, asked: Asked | None = None
    ) -> list[MemItem]:
        """`asked`, when given, is `query` already segmented and embedded (by the search
        before it): read it instead of analysing the query again."""
        ...

    async def section(
        self, query: str, budget_tokens: int, estimate: Estimate, *, asked: Asked | None = None
    ) -> str: ...

    def tools(self) -> list[ToolDef]: ...

    async def wait_ready(self, within: float | None = None) -> bool:
        """Wait until the layer's documents are all indexed, or at most until `within`
        seconds after its load began: whether they are (a search before then finds those
        indexed so far)."""
        ...

    async def recollect(self, hits: Sequence[HybridHit]) -> list[Recollection]:
        """The layer's documents among `hits`, in their order (gone ones left out)."""
        ...


@dataclass
class Memory:
    """`state.memory`: the context window, the embedder it shares with the cold context,
    and the memory steps of a turn (it satisfies the agent's `TurnMemory` port).

    `estimate`, when set (the provider layer's token estimator), makes `recall` stop at its
    budget; without it the prompt builder, which budgets anyway, does the trimming."""

    context: ContextWindow
    embedder: Embedder
    cold: ColdContext
    query_top: Callable[[], int]
    text_log: TextLog | None = None
    estimate: Estimate | None = None
    media: MediaStore | None = None
    """The kernel's media store, which `coldcontext_commit` checks digests against (given by
    the agent module with `estimate`, through `connect_turn_parts`)."""
    _pending_tools: list[ToolOutput] = field(default_factory=list)
    _pending_media: list[MediaRef] = field(default_factory=list)
    _tools: list[ToolDef] = field(default_factory=list)
    _layers: list[MemoryLayer] = field(default_factory=list)
    _lines: dict[str, tuple[ContextEvent, str]] = field(default_factory=dict)
    """Each window event's timeline line, by id (with the event it was made of)."""
    _segmented: bool = False

    def add_layer(self, layer: MemoryLayer) -> None:
        self._layers.append(layer)

    def connect_turn_parts(self, estimate: Estimate, media: MediaStore | None) -> None:
        """The provider layer's token estimator and the kernel's media store, given once by
        the agent module before the first turn (memory boots before the model and the agent).
        A second call is refused: it would change the budget of recalls already sized."""
        if self.estimate is not None or self.media is not None:
            raise RuntimeError("memory's turn parts are already connected (once, at boot)")
        self.estimate, self.media = estimate, media

    async def settle(self) -> float:
        """Wait for what a first recall would wait for (the stores' loading, each layer's
        index, the word segmenter's dictionary); returns the seconds it took. jieba's first
        load holds the GIL for most of a second, so a service that takes input before it
        has stalled every acknowledgement of its first clients."""
        started = time.perf_counter()
        await self.cold.wait_ready()
        for layer in self._layers:
            await layer.wait_ready(LAYER_WAIT_S)
        await asyncio.to_thread(self.cold.keywords, "settle 预热")
        return time.perf_counter() - started

    async def indexed(self, within: float | None = 0.0) -> bool:
        """Whether every layer's documents are in the recall index (at boot, a large
        archive goes on being indexed after `settle`, newest first): now, or by `within`
        seconds after its load began (None: once they are)."""
        whole = True
        for layer in self._layers:
            whole = await layer.wait_ready(within) and whole
        return whole

    # ---- the turn's steps ----------------------------------------------------------------

    async def append_input(
        self,
        ctx: StageContext,
        *,
        input_id: int | None = None,
        attempt: int = 1,
        media: Sequence[MediaRef] = (),
    ) -> ContextEvent:
        """The input, in the context (its row queued for the turn store: `flush`) and the
        text log before the turn goes on.

        An input from the journal is keyed by its id, so a re-run after a crash (`attempt`
        above 1) finds what the cut-off run recorded and records it no second time."""
        key = None if input_id is None else f"input-{input_id}"
        if key is not None and attempt > 1:
            # Still in the window, or moved on since (the turn store has every place).
            earlier = self.context.find(key) or await self.context.stored(key)
            if earlier is not None:
                log.info(
                    "input %s, attempt %d: already in memory from its first run", input_id, attempt
                )
                return earlier
        source = ctx.channel or USER_SOURCE
        event = await self.context.append(
            source, input=ctx.raw_message, channel=ctx.channel, event_id=key, media=media
        )
        if self.text_log is not None:
            await self.text_log.write("user", ctx.raw_message, channel=ctx.channel, id=event.id)
        return event

    async def prune(self, query: str) -> PruneReport:
        return await self.context.prune(query)

    async def flush(self) -> None:
        """Wait until every turn memory has queued is in the turn store (durable across a
        SIGKILL); raises TurnStoreError naming the writes that failed."""
        await self.context.turns.flushed()

    async def search(self, query: str, top: int, *, with_window: bool = True) -> list[Recollection]:
        """The `top` turns and documents most related to `query`, in one ranking over every
        tier: the context window, the cold context and every layer that keeps documents in
        the shared recall index (the graph's text blocks); none when nothing is related.
        What was just said is in the window, so a search finds it. The turn's own recall
        passes `with_window=False`: its prompt carries the window whole, as the timeline.
        A cold document found counts as read, as the spec's auto-inject query counts it."""
        _asked, found = await self._search(query, top, with_window=with_window)
        return found

    async def _search(
        self, query: str, top: int, *, with_window: bool
    ) -> tuple[Asked | None, list[Recollection]]:
        """`search`, with the query as analysed (None when blank or nothing is asked for),
        for the layers to read it again."""
        if top <= 0 or not query.strip():
            return None, []
        await self.cold.wait_ready()
        keeping = {layer.place: layer for layer in self._layers if layer.place is not None}
        for layer in keeping.values():
            await layer.wait_ready(LAYER_WAIT_S)
        places = {Place.COLD_CONTEXT, *keeping}
        if with_window:
            places.add(Place.CONTEXT)
        index = self.cold.recall_index
        known = self.context.known_vector(query)

        def find() -> tuple[Asked, list[HybridHit]]:
            asked = Asked.of(query, self.cold.keywords, self.embedder, known)
            return asked, index.search(asked.terms, asked.vector, top, places, text=query)

        if self._segmented and len(index) < INLINE_SEARCH_DOCS:
            asked, hits = find()
        else:
            # The first search may wait for jieba's first load; a large index costs
            # milliseconds: both go to a worker thread.
            asked, hits = await asyncio.to_thread(find)
            self._segmented = True
        found: dict[str, Recollection] = {}
        window = {e.id: e for e in self.context.events} if with_window else {}
        for hit in hits:
            if hit.place is Place.CONTEXT and (event := window.get(hit.id)) is not None:
                where = event.channel or event.source
                found[hit.id] = Recollection(
                    hit.id, hit.place, event.text, event.timestamp, where, hit.score,
                    tuple(event.media),
                )  # fmt: skip
            elif hit.place is Place.COLD_CONTEXT and (doc := self.cold.get(hit.id)) is not None:
                cold_hit = ColdHit(doc, hit.score, hit.cosine, hit.lexical)
                found[hit.id] = Recollection.of_cold(cold_hit)
        for place, layer in keeping.items():
            for item in await layer.recollect([h for h in hits if h.place is place]):
                found[item.id] = item
        cold = [h.id for h in hits if h.place is Place.COLD_CONTEXT]
        if cold:
            await self.cold.touch(cold)
        return asked, [found[h.id] for h in hits if h.id in found]

    async def recall(self, query: str, budget_tokens: int | None = None) -> list[MemItem]:
        """Stored documents related to `query` (`search`), best first, as `MemItem`s, then
        each layer's own items (the graph's facts); none when nothing is related. Within
        `budget_tokens` when an estimator is set. The query is segmented and embedded once,
        for the shared index and every layer alike."""
        asked, found = await self._search(query, self.query_top(), with_window=False)
        items, used = [], 0
        for item in found:
            text = doc_line(item)[2:]
            if budget_tokens is not None and self.estimate is not None:
                used += self.estimate(text)
                if used > budget_tokens:
                    break
            items.append(MemItem(text, _SOURCE_OF[item.place], item.score, item.media))
        for layer in self._layers:
            left = None if budget_tokens is None else max(budget_tokens - used, 0)
            items += await layer.recall(query, left, asked=asked)
        return items

    async def recall_sections(
        self, query: str, budget_tokens: int, estimate: Estimate
    ) -> list[str]:
        """The spec's "[Related Memory Docs]" section for `query`, within `budget_tokens`."""
        asked, found = await self._search(query, self.query_top(), with_window=False)
        section = related_docs_section(found, budget_tokens, estimate)
        sections = [section] if section else []
        left = budget_tokens - (estimate(section) if section else 0)
        for layer in self._layers:
            extra = await layer.section(query, left, estimate, asked=asked)
            if extra:
                sections.append(extra)
                left -= estimate(extra)
        return sections

    def window_media(self) -> list[MediaRef]:
        """The media of the events in the window, oldest first, each digest once: a request
        shows them again while their turn is in the window."""
        seen: dict[str, MediaRef] = {}
        for event in self.context.events:
            for ref in event.media:
                seen.setdefault(ref.digest, ref)
        return list(seen.values())

    def timeline(self) -> list[str]:
        """The window as prompt lines, oldest first (the prompt keeps the newest that fit).
        Each request shows the window again, where only the newest events are new: a line
        is made once per event and kept while the event is in the window."""
        events, kept = self.context.events, self._lines
        lines = []
        for event in events:
            made = kept.get(event.id)
            if made is None or made[0] is not event:
                made = kept[event.id] = (event, event_line(event))
            lines.append(made[1])
        if len(kept) > 2 * len(events) + 16:
            window = {e.id for e in events}
            self._lines = {i: made for i, made in kept.items() if i in window}
        return lines

    async def append_tool_results(self, results: Sequence[ToolResult]) -> None:
        """Tool outputs of this turn: they travel with the reply event (spec: an agent
        event carries its tool outputs, each through its tool's no_memory and cleaner)."""
        self._pending_tools.extend(ToolOutput(r.name, r.content) for r in results)
        self._pending_media.extend(m for r in results for m in r.media)

    async def append_reply(self, ctx: StageContext) -> ContextEvent:
        reply = ctx.final_text or ctx.llm_text or (ctx.response or "")
        outputs, self._pending_tools = self._pending_tools, []
        media, self._pending_media = self._pending_media, []
        event = await self.context.append(
            AGENT_SOURCE, response=reply, channel=ctx.channel, tool_outputs=outputs, media=media
        )
        if self.text_log is not None:
            await self.text_log.write("agent", reply, channel=ctx.channel, id=event.id)
        return event

    def tools(self) -> list[ToolDef]:
        """`coldcontext_query` and `coldcontext_commit`, bound to this kernel's stores."""
        if not self._tools:
            self._tools = coldcontext_tools(self.context, self.cold, lambda: self.media)
        return list(self._tools) + [t for layer in self._layers for t in layer.tools()]
