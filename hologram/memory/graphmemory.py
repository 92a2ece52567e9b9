"""`state.graph`: the graph store with everything built on it (indexer, tools, social
memory, rule distillation, heartbeats), and the `graph` kernel module that assembles it.

The graph joins the turn through `Memory.add_layer`: its facts enter the prompt with the
cold-context documents, and its tools are offered beside `coldcontext_query`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from hologram.config import ConfigRegistry, GraphSettings
from hologram.events import EventBus
from hologram.kernel import KernelTasks, required
from hologram.media import MediaStore
from hologram.memory.cold.store import ColdContext
from hologram.memory.facility import Memory, Recollection
from hologram.memory.graph.blocks import turn_text
from hologram.memory.graph.indexer import Estimate, Indexer, rough_tokens
from hologram.memory.graph.social import Social, social_tools
from hologram.memory.graph.store import GraphStore
from hologram.memory.graph.tools import graph_tools
from hologram.memory.heartbeat.distill import DistillPipeline
from hologram.memory.heartbeat.loops import Heartbeat, HeartbeatSettings, SubmitConsolidation
from hologram.memory.recall.hybrid import HybridHit, Place
from hologram.memory.recall.query import Asked
from hologram.sdk import (
    CONSOLIDATION_CHANNEL,
    Clock,
    EventType,
    Facility,
    MemItem,
    RawInput,
    ToolDef,
)

log = logging.getLogger(__name__)


@dataclass
class GraphMemory:
    store: GraphStore
    indexer: Indexer
    social: Social
    pipeline: DistillPipeline
    heartbeat: Heartbeat
    estimate: Estimate = rough_tokens
    _tools: list[ToolDef] = field(default_factory=list)
    place: ClassVar[Place] = Place.GRAPH
    """Its text blocks share the cold context's recall index, under this place."""

    # ---- as a memory layer (Memory.add_layer) ------------------------------------------

    async def wait_ready(self, within: float | None = None) -> bool:
        return await self.store.blocks.wait_ready(within)

    async def recollect(self, hits: Sequence[HybridHit]) -> list[Recollection]:
        """The text blocks among `hits` (archived turns), in their order, each read as the
        cold context read it: its time, its channel, its media."""
        score = {h.id: h.score for h in hits}
        return [
            Recollection(
                t.id,
                Place.GRAPH,
                turn_text(t),
                t.at,
                t.channel or t.source,
                score[t.id],
                tuple(t.media),
            )
            for t in await self.store.blocks.texts([h.id for h in hits])
        ]

    def tools(self) -> list[ToolDef]:
        if not self._tools:
            self._tools = [
                *graph_tools(self.store, self.indexer, self.introspect, self.store._emit),
                *social_tools(self.social),
            ]
        return list(self._tools)

    async def recall(
        self, query: str, budget_tokens: int | None = None, *, asked: Asked | None = None
    ) -> list[MemItem]:
        """Facts for the turn's input (the spec's "[Memory Index]"), within budget."""
        self.indexer.begin_turn()
        budget = 10_000 if budget_tokens is None else budget_tokens
        return await self.indexer.items(query, budget, self.estimate, asked=asked)

    async def section(
        self, query: str, budget_tokens: int, estimate: Estimate, *, asked: Asked | None = None
    ) -> str:
        return await self.indexer.build_context(query, budget_tokens, estimate, asked=asked)

    # ---- what memory_introspect and %hologram status show --------------------------------

    async def introspect(self) -> str:
        stats = await self.store.stats()
        beat = self.heartbeat
        lines = [
            f"graph: {stats['entities']} entities ({stats['aliases']} aliases, "
            f"{stats['purged_entities']} retired), {stats['current_facts']} current facts, "
            f"{stats['closed_facts']} closed (history)",
            f"blocks: {stats['blocks'] or 'none'}, media {stats['media_bytes']} bytes",
            f"distillation: {await self.pipeline.pending()} record(s) pending",
            "heartbeat (model calls, tokens sent/received, estimated):",
        ]
        for name, loop in beat.stats.items():
            lines.append(
                f"  {name}: {loop.ticks} ticks, {loop.model_calls} calls, "
                f"{loop.tokens_sent}/{loop.tokens_received} tokens, last {loop.last_result}"
            )
        return "\n".join(lines)

    def status(self) -> dict[str, Any]:
        return {
            "heartbeat": {
                name: {
                    "ticks": s.ticks,
                    "model_calls": s.model_calls,
                    "tokens_sent": s.tokens_sent,
                    "tokens_received": s.tokens_received,
                    "measured_calls": s.measured_calls,
                }
                for name, s in self.heartbeat.stats.items()
            },
            "heartbeat_totals": self.heartbeat.totals(),
            "consolidation_connected": self.heartbeat.submit is not None,
        }

    def connect_consolidation(self, submit: SubmitConsolidation) -> None:
        """Wire the merge and review loops to the kernel's `_consolidation_` channel."""
        self.heartbeat.connect(submit)

    async def close(self) -> None:
        await self.heartbeat.close()
        await self.store.close()


class GraphState(Protocol):
    """What the graph module reads of the kernel's state, and the field it fills."""

    @property
    def config(self) -> ConfigRegistry | None: ...
    @property
    def events(self) -> EventBus | None: ...
    @property
    def memory(self) -> Memory | None: ...
    @property
    def coldcontext(self) -> ColdContext | None: ...
    @property
    def media(self) -> MediaStore | None: ...
    @property
    def data_dir(self) -> Path: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def tasks(self) -> KernelTasks: ...

    graph: GraphMemory | None


class GraphModule:
    """Opens `<data>/graph.db` in the memory's embedding space, adds the graph to memory
    as a layer (its facts in the prompt, its tools for the model), and starts the heartbeat
    loops on the kernel's clock. Merge and review wait for `connect_consolidation`."""

    name = "graph"
    requires = (
        Facility.CONFIG,
        Facility.EVENTS,
        Facility.MEMORY,
        Facility.COLD_CONTEXT,
        Facility.MEDIA,
    )
    provides = (Facility.GRAPH,)

    def __init__(self, submit: SubmitConsolidation | None = None) -> None:
        self.graph: GraphMemory | None = None
        self._submit = submit
        self._unsubscribe: list[Callable[[], None]] = []

    async def init(self, state: GraphState) -> None:
        live = required(state.config, Facility.CONFIG).live(GraphSettings)
        settings = live.current
        memory = required(state.memory, Facility.MEMORY)
        events = required(state.events, Facility.EVENTS)
        cold = required(state.coldcontext, Facility.COLD_CONTEXT)
        emit = events.emit

        def estimate(text: str) -> int:
            # The provider layer's estimator once the agent module has connected it to memory.
            return (memory.estimate or rough_tokens)(text)

        single = [r for r in settings.single_valued.split(",") if r]
        # The cold context's segmenter (shared with the embedder): a query and an archived
        # turn are cut once for every index.
        keywords = cold.keywords
        store = GraphStore(
            state.data_dir / "graph.db",
            memory.embedder,
            state.clock,
            emit=emit,
            single_valued=single,
            # One index over the cold context and the text blocks: a turn keeps its session
            # and neighbours when archival moves it from one to the other.
            recall_index=cold.recall_index,
            keywords=keywords,
            tasks=state.tasks.scope(self.name),
            turns=cold.turns,
        )
        await store.open()
        indexer = Indexer(
            store,
            keywords,
            depth=settings.indexer_depth,
            min_similarity=settings.indexer_min_similarity,
            emit=emit,
        )
        pipeline = DistillPipeline(
            store,
            state.clock,
            retention_s=lambda: live.current.distill_retention_days * 86400.0,
        )
        heartbeat = Heartbeat(
            store,
            state.clock,
            HeartbeatSettings(
                interval_min=lambda loop: live.current.interval_min(loop),
                jaccard_threshold=lambda: live.current.jaccard_threshold,
                archive_age_s=lambda: live.current.archive_age_h * 3600,
                archive_max_access=lambda: live.current.archive_max_access,
                max_tasks_per_tick=lambda: live.current.max_tasks_per_tick,
            ),
            context=memory.context,
            cold=cold,
            pipeline=pipeline,
            submit=self._submit,
            estimate=estimate,
            emit=emit,
            tasks=state.tasks.scope(self.name),
            media=state.media,
        )
        self.graph = GraphMemory(store, indexer, Social(store), pipeline, heartbeat, estimate)
        memory.add_layer(self.graph)
        self._unsubscribe.append(events.subscribe(EventType.RAW_INPUT, self._on_input))
        # Re-embedding blocks of another space and the loops start with the kernel, not
        # on the boot path.
        self._unsubscribe.append(events.subscribe(EventType.KERNEL_READY, self._on_ready))
        state.graph = self.graph

    async def _on_input(self, event: Any) -> None:
        said = event.payload
        if not isinstance(said, RawInput):
            return
        if self.graph is None or said.channel == CONSOLIDATION_CHANNEL:
            return
        await self.graph.pipeline.record(said.text, said.user_id or "user")

    async def _on_ready(self, _event: Any) -> None:
        if self.graph is None:
            return
        self.graph.heartbeat.start()
        await self.graph.store.blocks.reembed()
        await self.graph.store.reembed_entities()

    async def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        if self.graph is not None:
            await self.graph.close()
