"""The memory heartbeats (spec: distillLoop, archiveLoop, mergeLoop, reviewLoop, plus the
rule pipeline's ten-minute tick): independent loops, each on its own interval, all on the
kernel's clock, so a test moves hours with `await clock.advance(...)`.

The merge and review loops hand their tasks to `submit_consolidation(text) -> reply`, which
the kernel wires to the `_consolidation_` self-input channel: a full turn whose output only
writes memory. They send only the entities or facts in question, never the conversation,
and never call it when there is nothing to decide: an idle tick costs no model calls.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from hologram.kernel import TaskScope
from hologram.media import MediaError, MediaStore
from hologram.memory.cold.store import ColdContext, ColdDoc
from hologram.memory.graph.indexer import Estimate, rough_tokens
from hologram.memory.graph.store import GraphStore
from hologram.memory.graph.types import GraphError
from hologram.memory.heartbeat.consolidation import (
    asked_keys,
    merge_candidates,
    merge_task,
    remember_asked,
    review_task,
    supported,
)
from hologram.memory.heartbeat.distill import DistillPipeline, extract
from hologram.memory.turns import Place
from hologram.memory.window.context import ContextWindow
from hologram.sdk import (
    CONSOLIDATION_CHANNEL,
    Clock,
    ConsolidationTask,
    Emit,
    HeartbeatTick,
    MemoryDegraded,
    SystemNote,
    discard,
)

log = logging.getLogger(__name__)

SubmitConsolidation = Callable[[str], Awaitable[Any]]
"""Sends a task through the `_consolidation_` channel: answers the reply text, or the turn's
result (with `reply` and the `usage` the provider counted), so the meter uses real counts."""
LOOPS = ("distill", "archive", "merge", "review", "rules")


@dataclass(slots=True)
class LoopStats:
    ticks: int = 0
    model_calls: int = 0
    tokens_sent: int = 0
    tokens_received: int = 0
    measured_calls: int = 0
    """Model calls whose tokens are the provider's counts, not estimates."""
    errors: int = 0
    last_tick_at: float | None = None
    last_result: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HeartbeatSettings:
    """Read afresh on every tick, so a changed interval applies from the next one."""

    interval_min: Callable[[str], float]
    jaccard_threshold: Callable[[], float] = lambda: 0.75
    archive_age_s: Callable[[], float] = lambda: 72 * 3600.0
    archive_max_access: Callable[[], int] = lambda: 2
    max_tasks_per_tick: Callable[[], int] = lambda: 3


class Heartbeat:
    def __init__(
        self,
        graph: GraphStore,
        clock: Clock,
        settings: HeartbeatSettings,
        *,
        context: ContextWindow | None = None,
        cold: ColdContext | None = None,
        pipeline: DistillPipeline | None = None,
        submit: SubmitConsolidation | None = None,
        estimate: Estimate = rough_tokens,
        emit: Emit | None = None,
        tasks: TaskScope,
        media: MediaStore | None = None,
    ) -> None:
        self.graph = graph
        self.media = media
        self._scope = tasks
        self.clock = clock
        self.settings = settings
        self.context = context
        self.cold = cold
        self.pipeline = pipeline
        self.submit = submit
        self.estimate = estimate
        self._emit = emit or discard
        self.stats = {name: LoopStats() for name in LOOPS}
        self._tasks: list[asyncio.Task[None]] = []
        self._warned_unconnected = False
        #: Per loop, the graph's write count (and the settings that decide the loop's
        #: findings) when it last found nothing: while they stay the same the tick reads
        #: nothing, so an idle companion's merge and review ticks are free.
        self._found_nothing: dict[str, tuple[Any, ...]] = {}
        self._archiving = asyncio.Lock()
        """One archive at a time: the loop's own tick and one called by hand (a notebook, a
        test) would otherwise both move the same documents, and the second would return
        while the first's move is still being written."""
        self._ticks = {
            "distill": self.tick_distill,
            "archive": self.tick_archive,
            "merge": self.tick_merge,
            "review": self.tick_review,
            "rules": self.tick_rules,
        }

    def connect(self, submit: SubmitConsolidation) -> None:
        """Give the loops the `_consolidation_` channel (the kernel's self-input)."""
        self.submit = submit

    # ---- life cycle ------------------------------------------------------------------------

    def start(self) -> list[asyncio.Task[None]]:
        if not self._tasks:
            self._tasks = [
                self._scope.spawn(self._run(name), name=f"memory-heartbeat-{name}")
                for name in LOOPS
            ]
        return self._tasks

    @property
    def started(self) -> bool:
        return bool(self._tasks)

    async def close(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, name: str) -> None:
        while True:
            await self.clock.sleep(max(self.settings.interval_min(name), 0.01) * 60.0)
            await self.tick(name)

    async def tick(self, name: str) -> dict[str, Any]:
        """Run one tick of loop `name` now (the loops call this; so may a notebook)."""
        stats = self.stats[name]
        stats.ticks += 1
        stats.last_tick_at = self.clock.now()
        try:
            result = await self._ticks[name]()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # One bad tick must not end the loop: it is logged, announced, and the next
            # tick tries again.
            stats.errors += 1
            log.exception("memory heartbeat %s failed", name)
            result = {"error": f"{type(exc).__name__}: {exc}"}
        stats.last_result = result
        self._emit(
            HeartbeatTick(loop=name, model_calls=stats.model_calls, detail=result), source="memory"
        )
        return result

    # ---- the ticks -------------------------------------------------------------------------

    async def tick_distill(self) -> dict[str, Any]:
        """Context prune into the cold context (spec: distillContext)."""
        if self.context is None or not self.context.events:
            return {"pruned": 0}
        # Relevance to what is being talked about now: the newest event.
        report = await self.context.prune(self.context.events[-1].text)
        return {"pruned": report.before - report.after}

    async def tick_archive(self) -> dict[str, Any]:
        """Cold documents untouched for long enough go into the graph (spec:
        archiveColdDocs): each turn moves to the graph's place, where it is one of the
        graph's text blocks, still at the time it was said (so recall reads it beside its
        session), and the triples the rules find in it are committed. The triples go
        first: a crash before the move finds the documents cold again at the next tick,
        and committing the same triples again only confirms them."""
        if self.cold is None:
            return {"archived": 0}
        async with self._archiving:
            return await self._archive_cold(self.cold)

    async def _archive_cold(self, cold: ColdContext) -> dict[str, Any]:
        docs = cold.find_cold(self.settings.archive_age_s(), self.settings.archive_max_access())
        triples = 0
        for doc in docs:
            blocks = await self.archive_media(doc)
            if doc.source != "agent" and doc.input:
                found = [
                    replace(t, origin="archive", media_digests=(*t.media_digests, *blocks))
                    for t in extract(doc.input, "user")
                ]
                if found:
                    await self.graph.commit(found, origin="archive")
                    triples += len(found)
        if docs:
            moved = await cold.consume([d.id for d in docs], Place.GRAPH, "archived")
            await self.graph.blocks.adopt([d.id for d in moved])
        return {"archived": len(docs), "triples": triples}

    async def archive_media(self, doc: ColdDoc) -> tuple[str, ...]:
        """The document's media as graph media blocks, so facts drawn from it link them.
        The graph keeps its own copy of the bytes (its blocks table predates the media
        store); media gone from the store is left out, logged and announced."""
        if not doc.media or self.media is None:
            return ()
        ids = []
        for ref in doc.media:
            try:
                data = await self.media.aget(ref.digest)
            except MediaError as exc:
                log.warning("document %s: media %s not archived: %s", doc.id, ref.short, exc)
                self._emit(
                    SystemNote(
                        kind="media_not_archived",
                        detail={"doc": doc.id, "digest": ref.digest, "reason": str(exc)},
                    ),
                    source="memory",
                )
                continue
            block = await self.graph.blocks.add_media(
                data, ref.mime, width=ref.width or None, height=ref.height or None,
                source=f"coldcontext:{doc.id}",
            )  # fmt: skip
            ids.append(block.id)
        return tuple(ids)

    async def tick_rules(self) -> dict[str, Any]:
        if self.pipeline is None:
            return {"records": 0}
        return await self.pipeline.distill_once()

    async def tick_merge(self) -> dict[str, Any]:
        """Entity merge candidates, each put to the model (spec: detectEntityMerge)."""
        threshold = self.settings.jaccard_threshold()
        looked = (self.graph.writes, threshold)
        if self._found_nothing.get("merge") == looked:
            return {"candidates": 0, "asked": 0}
        asked = await asked_keys(self.graph, "merge")
        pairs = await merge_candidates(self.graph, threshold, asked)
        if not pairs:
            self._found_nothing["merge"] = looked
            return {"candidates": 0, "asked": 0}
        if not self._connected("merge", len(pairs)):
            return {"candidates": len(pairs), "asked": 0, "waiting": "consolidation channel"}
        asked_now = 0
        for pair in pairs[: self.settings.max_tasks_per_tick()]:
            try:
                text = await merge_task(self.graph, pair)
            except GraphError:
                continue  # an earlier task this tick merged one of the two already
            reply = await self._ask("merge", text, pair=[pair.a, pair.b], why=pair.why)
            await remember_asked(self.graph, "merge", pair.key, reply)
            asked_now += 1
        return {"candidates": len(pairs), "asked": asked_now}

    async def tick_review(self) -> dict[str, Any]:
        """Facts checked against their sentences; the doubtful ones go to the model
        (spec: reviewRelations)."""
        looked = (self.graph.writes,)
        if self._found_nothing.get("review") == looked:
            return {"checked": 0, "asked": 0}
        rows = await self.graph.fetchall(
            "SELECT r.id, r.origin FROM relations r WHERE r.invalid_at IS NULL "
            "AND r.reviewed_at IS NULL AND r.sentence_text != '' ORDER BY r.id LIMIT 500"
        )
        if not rows:
            self._found_nothing["review"] = looked
            return {"checked": 0, "asked": 0}
        names = await self._names()
        doubtful = []
        for fact_id, origin in rows:
            fact = await self.graph.fact(fact_id)
            if not supported(fact, names, origin):
                doubtful.append(fact)
        budget = self.settings.max_tasks_per_tick()
        to_ask = doubtful[:budget] if self._connected("review", len(doubtful)) else []
        asked = {f.id for f in to_ask}
        # Checked facts that passed, and the ones put to the model, are not checked again;
        # doubtful ones beyond this tick's budget wait for the next tick.
        done = [fid for fid, _ in rows if fid in asked or fid not in {f.id for f in doubtful}]
        for fact in to_ask:
            await self._ask("review", review_task(fact), fact=fact.id)
        async with self.graph.transaction() as db:
            await db.executemany(
                "UPDATE relations SET reviewed_at = ? WHERE id = ?",
                [(self.clock.now(), fid) for fid in done],
            )
        return {"checked": len(rows), "doubtful": len(doubtful), "asked": len(to_ask)}

    # ---- talking to the model --------------------------------------------------------------

    def _connected(self, loop: str, waiting: int) -> bool:
        if self.submit is not None:
            return True
        if waiting and not self._warned_unconnected:
            self._warned_unconnected = True
            log.warning(
                "memory %s: %d task(s) wait: no consolidation channel is connected", loop, waiting
            )
            self._emit(
                MemoryDegraded(
                    layer="heartbeat",
                    reason="no _consolidation_ channel connected; merge and review tasks wait",
                ),
                source="memory",
            )
        return False

    async def _ask(self, loop: str, text: str, **detail: Any) -> str:
        assert self.submit is not None
        stats = self.stats[loop]
        stats.model_calls += 1
        self._emit(
            ConsolidationTask(loop=loop, channel=CONSOLIDATION_CHANNEL, text=text, detail=detail),
            source="memory",
        )
        answer = await self.submit(text)
        reply = answer if isinstance(answer, str) or answer is None else answer.reply
        usage = getattr(answer, "usage", None)
        if usage:  # the provider's own counts, when the answer carries them
            stats.tokens_sent += usage.prompt_tokens
            stats.tokens_received += usage.completion_tokens
            stats.measured_calls += 1
        else:
            stats.tokens_sent += self.estimate(text)
            stats.tokens_received += self.estimate(reply or "")
        return reply or ""

    async def _names(self) -> dict[str, list[str]]:
        """Each entity's display name -> its normalised name and aliases."""
        names: dict[str, list[str]] = {}
        for name, norm in await self.graph.fetchall("SELECT name, norm FROM entities"):
            names[name] = [norm]
        for alias_norm, name in await self.graph.fetchall(
            "SELECT a.alias_norm, e.name FROM aliases a JOIN entities e ON e.id = a.entity_id"
        ):
            names.setdefault(name, []).append(alias_norm)
        return names

    def totals(self) -> dict[str, int]:
        return {
            "model_calls": sum(s.model_calls for s in self.stats.values()),
            "tokens_sent": sum(s.tokens_sent for s in self.stats.values()),
            "tokens_received": sum(s.tokens_received for s in self.stats.values()),
            "measured_calls": sum(s.measured_calls for s in self.stats.values()),
        }
