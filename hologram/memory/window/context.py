"""The context window (spec: RelevanceContext): the timeline the model sees, pruned by
relevance to the current input, durable across a SIGKILL."""

from __future__ import annotations

import asyncio
import bisect
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from hologram.kernel.tasks import Once, TaskScope
from hologram.memory.embed.registry import StoredVector
from hologram.memory.journal import Journal
from hologram.memory.recall.episodic import stems
from hologram.memory.recall.hybrid import HybridIndex, Place
from hologram.memory.recall.index import VectorIndex
from hologram.memory.window.event import (
    NEVER_ARCHIVED,
    ContextEvent,
    ToolLookup,
    ToolOutput,
    text_for_vector,
)
from hologram.sdk import Clock, EventType, MediaRef
from hologram.sdk.embedding import (
    Embedder,
    EmbedderError,
)
from hologram.sdk.events import discard

log = logging.getLogger(__name__)

Emit = Callable[..., Any]


class ColdArchive(Protocol):
    async def archive(self, events: Sequence[ContextEvent]) -> None:
        """Store pruned events durably, keeping their original timestamps."""
        ...


class Fate(StrEnum):
    PROTECTED = "protected"
    KEPT = "kept"
    ARCHIVED = "archived"
    DROPPED = "dropped"
    """Pruned but not archived: an agentcli or terminal event."""


@dataclass(frozen=True, slots=True)
class Scored:
    event_id: str
    timestamp: float
    source: str
    text: str
    score: float | None
    """Cosine similarity to the query; None for protected events, which are not scored."""
    fate: Fate


@dataclass(slots=True)
class PruneReport:
    """One prune: every candidate with its score and fate, then the protected events.
    Kept as arrays; `entries` builds the per-event view on first use."""

    query: str
    top_k: int
    protected_recent: int
    before: int
    after: int
    candidates: list[ContextEvent] = field(default_factory=list)
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    kept: list[bool] = field(default_factory=list)
    archived: set[str] = field(default_factory=set)
    protected: list[ContextEvent] = field(default_factory=list)
    _entries: list[Scored] | None = None

    @property
    def pruned(self) -> bool:
        return self.after < self.before

    def _fate(self, index: int) -> Fate:
        if self.kept[index]:
            return Fate.KEPT
        return Fate.ARCHIVED if self.candidates[index].id in self.archived else Fate.DROPPED

    @property
    def entries(self) -> list[Scored]:
        if self._entries is None:
            scores = self.scores.tolist()
            self._entries = [
                Scored(e.id, e.timestamp, e.source, e.text, scores[i], self._fate(i))
                for i, e in enumerate(self.candidates)
            ] + [
                Scored(e.id, e.timestamp, e.source, e.text, None, Fate.PROTECTED)
                for e in self.protected
            ]
        return self._entries

    def ids(self, fate: Fate) -> list[str]:
        return [e.event_id for e in self.entries if e.fate is fate]

    def to_payload(self) -> dict[str, Any]:
        """Parallel lists rather than one dict per event: a prune of a large window must
        stay cheap to publish."""
        n = len(self.candidates)
        return {
            "query": self.query,
            "top_k": self.top_k,
            "protected_recent": self.protected_recent,
            "before": self.before,
            "after": self.after,
            "ids": [e.id for e in self.candidates] + [e.id for e in self.protected],
            "scores": self.scores.tolist() + [None] * len(self.protected),
            "fates": [str(self._fate(i)) for i in range(n)]
            + [str(Fate.PROTECTED)] * len(self.protected),
        }


def keep_order(scores: np.ndarray) -> np.ndarray:
    """The candidates' indices in the order a prune keeps them: highest score first; among
    equal scores the newer event (larger index) first."""
    return np.lexsort((-np.arange(len(scores)), -scores))


class ContextWindow:
    """Time-ordered events. `append` is durable before it returns; `prune` keeps the newest
    `protected_recent` unconditionally and the `top_k - protected_recent` (floor 0) others
    most similar to the query, and archives the rest to the cold context."""

    def __init__(
        self,
        directory: Path,
        embedder: Embedder,
        clock: Clock,
        *,
        top_k: int = 40,
        protected_recent: int = 10,
        cold: ColdArchive | None = None,
        emit: Emit | None = None,
        tools: ToolLookup | None = None,
        compact_every: int = 500,
        recall_index: HybridIndex | None = None,
        keywords: Callable[[str], list[str]] | None = None,
        tasks: TaskScope | None = None,
    ) -> None:
        if top_k < 0 or protected_recent < 0:
            raise ValueError("top_k and protected_recent must not be negative")
        self.embedder = embedder
        self.clock = clock
        self.top_k = top_k
        self.protected_recent = protected_recent
        self.cold = cold
        self.tools = tools
        self.compact_every = compact_every
        self.last_prune: PruneReport | None = None
        self.problems: list[str] = []
        self._emit = emit or discard
        self._journal = Journal(directory, "context")
        self._events: list[ContextEvent] = []
        # Each event's vector lives in a row ("slot") of one matrix, so a prune scores the
        # whole window with one matrix-vector product; `_slots` runs parallel to `_events`.
        self._slots: list[int] = []
        self._free: list[int] = []
        self._matrix = VectorIndex(embedder.dim)
        self._stale: set[str] = set()
        self._ids: set[str] = set()
        self._lock = asyncio.Lock()
        if recall_index is not None and keywords is None:
            raise ValueError("a window in the recall index needs the keywords function")
        # The window's events sit in the memory's recall index too (Place.CONTEXT): the
        # turn's recall leaves them out, but archived turns keep them as neighbours and
        # session mates, and an experiment can rank every stored turn at once.
        self.recall_index = recall_index
        self._keywords = keywords
        self._indexing = Once(tasks, self._index_loaded, "context-index")

    # ---- reading ----------------------------------------------------------------------------

    @property
    def events(self) -> list[ContextEvent]:
        """The timeline, oldest first (a copy)."""
        return list(self._events)

    def __len__(self) -> int:
        return len(self._events)

    def find(self, event_id: str) -> ContextEvent | None:
        """The event of that id still in the window (a scan: for the rare re-run)."""
        return next((e for e in self._events if e.id == event_id), None)

    def timeline(self, budget_tokens: int, estimate: Callable[[str], int]) -> list[ContextEvent]:
        """The newest events whose texts fit in `budget_tokens` together, oldest first.
        A ceiling, not a fill target: it stops at the first event that would not fit."""
        taken: list[ContextEvent] = []
        used = 0
        for event in reversed(self._events):
            cost = estimate(event.text)
            if used + cost > budget_tokens:
                break
            used += cost
            taken.append(event)
        taken.reverse()
        return taken

    # ---- life cycle -------------------------------------------------------------------------

    async def open(self) -> list[str]:
        """Rebuild the window from snapshot + log. Returns the problems found (corrupt lines,
        unreadable events), which are also logged and announced; nothing is raised."""
        async with self._lock:
            loaded = await asyncio.to_thread(self._journal.load)
            problems = list(loaded.problems)
            for number, record in enumerate(loaded.snapshot, 1):
                try:
                    self._insert(ContextEvent.from_json(record))
                except ValueError as exc:
                    problems.append(f"snapshot event {number}: {exc}; skipped")
            for op in loaded.ops:
                try:
                    self._replay(op)
                except (ValueError, KeyError, TypeError) as exc:
                    problems.append(f"log entry {op.get('op')!r}: {exc}; skipped")
            if problems:
                self._announce_problems(problems)
                # Rewrite the files now so the bad lines (kept aside) are not met again.
                await asyncio.to_thread(self._journal.compact, self._records())
        return problems

    def index_in_background(self) -> asyncio.Task[None]:
        """Put the events loaded by `open` into the recall index, off the event loop; the
        kernel calls it once it is ready, because segmenting may wait for jieba's first
        load and must stay off the boot path. Events appended since are indexed already."""
        return self._indexing.start()

    async def _index_loaded(self) -> None:
        if self.recall_index is None:
            return
        events = [e for e in self.events if e.id not in self.recall_index]
        words = await asyncio.to_thread(lambda: [self._words(e) for e in events])
        async with self._lock:
            for event, its_words in zip(events, words, strict=True):
                if event.id in self._ids:
                    self._index_event(event, its_words)

    def _words(self, event: ContextEvent) -> list[str]:
        assert self._keywords is not None
        return stems(self._keywords(event.vector_text or event.text))

    def _index_event(self, event: ContextEvent, words: list[str]) -> None:
        if self.recall_index is not None:
            vector = event.vector.vector if self._usable(event) else None  # type: ignore[union-attr]
            self.recall_index.add(
                event.id, event.timestamp, words, vector, Place.CONTEXT, speaker=event.source
            )

    def _announce_problems(self, problems: list[str]) -> None:
        self.problems.extend(problems)
        for problem in problems:
            log.warning("context window: %s", problem)
        self._emit(EventType.MEMORY_DEGRADED, source="memory", layer="context", problems=problems)

    def _replay(self, op: dict[str, Any]) -> None:
        if op["op"] == "append":
            event = ContextEvent.from_json(op["event"])
            if event.id not in self._ids:
                self._insert(event)
        elif op["op"] == "remove":
            self._remove(set(op["ids"]))
        else:
            raise ValueError(f"unknown operation {op['op']!r}")

    async def close(self) -> None:
        await self._indexing.cancel()
        async with self._lock:
            await asyncio.to_thread(self._journal.compact, self._records())
            self._journal.close()

    def _records(self) -> list[dict[str, Any]]:
        return [event.to_json() for event in self._events]

    # ---- changing ---------------------------------------------------------------------------

    def _usable(self, event: ContextEvent) -> bool:
        return event.vector is not None and event.vector.matches(self.embedder)

    def _insert(self, event: ContextEvent) -> None:
        index = bisect.bisect_right(self._events, event.timestamp, key=lambda e: e.timestamp)
        slot = self._free.pop() if self._free else self._matrix.size
        self._events.insert(index, event)
        self._slots.insert(index, slot)
        self._ids.add(event.id)
        self._set_vector(event, slot)

    def _set_vector(self, event: ContextEvent, slot: int) -> None:
        if self._usable(event):
            self._matrix.set(slot, event.vector.vector)  # type: ignore[union-attr]
            self._stale.discard(event.id)
        else:
            self._matrix.set(slot, None)
            self._stale.add(event.id)
        if self.recall_index is not None and self._usable(event):
            self.recall_index.set_vector(event.id, event.vector.vector)  # type: ignore[union-attr]

    def _keep_only(self, keep: list[bool]) -> None:
        """Drop every event whose flag in `keep` (parallel to the window) is False."""
        events, slots = [], []
        for event, slot, kept in zip(self._events, self._slots, keep, strict=True):
            if kept:
                events.append(event)
                slots.append(slot)
            else:
                self._ids.discard(event.id)
                self._stale.discard(event.id)
                self._matrix.remove(slot)
                self._free.append(slot)
                if self.recall_index is not None:
                    self.recall_index.remove(event.id)
        self._events, self._slots = events, slots

    def _remove(self, ids: set[str]) -> None:
        self._keep_only([e.id not in ids for e in self._events])

    async def append(
        self,
        source: str,
        input: str = "",
        response: str = "",
        *,
        channel: str = "",
        tool_outputs: Iterable[ToolOutput] = (),
        timestamp: float | None = None,
        event_id: str | None = None,
        media: Iterable[MediaRef] = (),
    ) -> ContextEvent:
        """Add one event (timestamp: now, unless given, e.g. a recalled document's original
        time; its id made up unless given) and return it once it is on disk. Embedding
        failures do not lose the event: it is stored without a vector, announced, and
        embedded again at the next prune."""
        if not isinstance(source, str) or not source:
            raise ValueError("an event needs a non-empty source (a channel name, 'agent', …)")
        if not isinstance(input, str) or not isinstance(response, str):
            raise TypeError("input and response are strings")
        outputs = list(tool_outputs)
        event = ContextEvent(
            timestamp=self.clock.now() if timestamp is None else float(timestamp),
            source=source,
            input=input,
            response=response,
            channel=channel,
            tool_outputs=outputs,
            vector_text=text_for_vector(source, input, response, outputs, self.tools),
            media=list(media),
        )
        if event_id is not None:
            event.id = event_id
        async with self._lock:
            error, words = await asyncio.to_thread(self._embed_and_log, event)
            self._insert(event)
            if words is not None:
                self._index_event(event, words)
            if error is not None:
                self._announce_problems([f"event {event.id} stored without a vector: {error}"])
            await self._maybe_compact()
        self._emit(
            EventType.CONTEXT_APPENDED,
            source="memory",
            id=event.id,
            event_source=event.source,
            size=len(self._events),
        )
        return event

    def _embed_and_log(self, event: ContextEvent) -> tuple[str | None, list[str] | None]:
        error = None
        try:
            vector = self.embedder.embed_texts([event.vector_text])[0]
            event.vector = StoredVector(self.embedder.fingerprint, vector)
        except EmbedderError as exc:
            error = str(exc)
        self._journal.log({"op": "append", "event": event.to_json()})
        return error, None if self.recall_index is None else self._words(event)

    async def _maybe_compact(self) -> None:
        if self._journal.logged >= max(self.compact_every, len(self._events)):
            await asyncio.to_thread(self._journal.compact, self._records())

    # ---- vectors ----------------------------------------------------------------------------

    def stale(self) -> list[ContextEvent]:
        """Events whose vector is missing or of another fingerprint: never compared."""
        return [e for e in self._events if e.id in self._stale]

    async def reembed(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Recompute the vectors of every stale event in the current space and write them
        back. Returns how many were recomputed."""
        async with self._lock:
            return await self._reembed_locked(progress)

    async def _reembed_locked(self, progress: Callable[[int, int], None] | None = None) -> int:
        if not self._stale:
            return 0
        stale = self.stale()
        batch = 64
        for start in range(0, len(stale), batch):
            chunk = stale[start : start + batch]
            texts = [e.vector_text for e in chunk]
            vectors = await asyncio.to_thread(self.embedder.embed_texts, texts)
            slot_of = dict(zip((e.id for e in self._events), self._slots, strict=True))
            for event, vector in zip(chunk, vectors, strict=True):
                event.vector = StoredVector(self.embedder.fingerprint, vector)
                if event.id in slot_of:
                    self._set_vector(event, slot_of[event.id])
            done = start + len(chunk)
            if progress is not None:
                progress(done, len(stale))
            self._emit(
                EventType.MEMORY_REEMBED,
                source="memory",
                layer="context",
                done=done,
                total=len(stale),
                fingerprint=self.embedder.fingerprint,
            )
        await asyncio.to_thread(self._journal.compact, self._records())
        return len(stale)

    # ---- pruning ----------------------------------------------------------------------------

    async def prune(self, query: str) -> PruneReport:
        """Prune if the window holds more than `top_k` events (spec: Prune). The report (also
        published as a `context_pruned` event) gives every candidate's score and fate."""
        async with self._lock:
            report = await self._prune_locked(query)
        if report.pruned:
            self.last_prune = report
            self._emit(EventType.CONTEXT_PRUNED, source="memory", **report.to_payload())
        return report

    async def _prune_locked(self, query: str) -> PruneReport:
        events = self._events
        before = len(events)
        report = PruneReport(query, self.top_k, self.protected_recent, before, before)
        if before <= self.top_k:
            return report
        await self._reembed_locked()
        protected_n = min(self.protected_recent, before)
        cut = before - protected_n
        candidates = events[:cut]
        keep_n = max(self.top_k - protected_n, 0)
        query_vector = (await asyncio.to_thread(self.embedder.embed_texts, [query]))[0]
        scores = self._matrix.scores(query_vector)[np.asarray(self._slots[:cut], dtype=np.int64)]
        keep_mask = np.zeros(cut, dtype=bool)
        keep_mask[keep_order(scores)[:keep_n]] = True
        kept = keep_mask.tolist()
        gone = [e for e, k in zip(candidates, kept, strict=True) if not k]
        to_archive = [e for e in gone if e.source not in NEVER_ARCHIVED]
        if to_archive and self.cold is not None:
            # Archived first, then forgotten: a crash in between leaves a duplicate, never a loss.
            await self.cold.archive(to_archive)
        await asyncio.to_thread(self._journal.log, {"op": "remove", "ids": [e.id for e in gone]})
        self._keep_only(kept + [True] * protected_n)
        report.candidates = candidates
        report.scores = scores
        report.kept = kept
        report.archived = {e.id for e in to_archive} if self.cold is not None else set()
        report.protected = events[cut:]
        report.after = len(self._events)
        await self._maybe_compact()
        return report

    async def preview(self, query: str) -> PruneReport:
        """What a prune for `query` would do now, changing nothing: the candidates scored
        against it, the newest `protected_recent` protected, fates for the window's `top_k`.
        A stale vector is computed for the preview only, not stored."""
        async with self._lock:
            events = list(self._events)
            protected_n = min(self.protected_recent, len(events))
            cut = len(events) - protected_n
            stale = [(i, e) for i, e in enumerate(events[:cut]) if e.id in self._stale]
            texts = [query, *(e.vector_text for _, e in stale)]
            vectors = await asyncio.to_thread(self.embedder.embed_texts, texts)
            rows = np.asarray(self._slots[:cut], dtype=np.int64)
            scores = self._matrix.scores(vectors[0])[rows]
            for (index, _), vector in zip(stale, vectors[1:], strict=True):
                scores[index] = float(vector @ vectors[0])
        report = PruneReport(query, self.top_k, self.protected_recent, len(events), len(events))
        keep_n = cut if len(events) <= self.top_k else max(self.top_k - protected_n, 0)
        keep_mask = np.zeros(cut, dtype=bool)
        keep_mask[keep_order(scores)[:keep_n]] = True
        report.candidates, report.scores, report.kept = events[:cut], scores, keep_mask.tolist()
        if self.cold is not None:
            gone = (e for e, k in zip(report.candidates, report.kept, strict=True) if not k)
            report.archived = {e.id for e in gone if e.source not in NEVER_ARCHIVED}
        report.protected = events[cut:]
        report.after = protected_n + keep_n
        return report
