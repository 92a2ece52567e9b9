"""The context window (spec: RelevanceContext): the timeline the model sees, pruned by
relevance to the current input. Its events are the turn store's rows in place CONTEXT
(`hologram.memory.turns`); a prune moves them to the cold context. A turn's own writes are
queued for the store's writer, so they do not hold the turn up: they are durable, across a
SIGKILL too, once the store is flushed, as the journal does before it marks an input done."""

from __future__ import annotations

import asyncio
import bisect
import logging
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

import numpy as np
import numpy.typing as npt

from hologram.kernel import Once, TaskScope
from hologram.memory.embed.registry import StoredVector
from hologram.memory.recall.episodic import stems
from hologram.memory.recall.hybrid import HybridIndex
from hologram.memory.recall.index import VectorIndex
from hologram.memory.text import clean_text
from hologram.memory.turns import Place, TurnStore
from hologram.memory.window.event import (
    NEVER_ARCHIVED,
    ContextEvent,
    ToolLookup,
    ToolOutput,
    event_of_turn,
    text_for_vector,
    turn_of_event,
)
from hologram.sdk import (
    Clock,
    ContextAppended,
    ContextPruned,
    Embedder,
    EmbedderError,
    Emit,
    MediaRef,
    MemoryDegraded,
    MemoryReembed,
    discard,
)

log = logging.getLogger(__name__)


KNOWN_VECTOR_EVENTS = 4
"""The newest events `known_vector` looks through: the turn's input is among them."""

INLINE_EMBED_S = 0.0003
"""An append embeds and cuts its event on the event loop when that took less than this
last time (the built-in embedder: ~70 µs), and in a worker thread otherwise (a model, a
remote embedder, the segmenter's first load): a hop to a thread and back costs ~100 µs."""


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

    def to_payload(self) -> ContextPruned:
        """Parallel lists rather than one dict per event: a prune of a large window must
        stay cheap to publish."""
        n = len(self.candidates)
        return ContextPruned(
            query=self.query,
            top_k=self.top_k,
            protected_recent=self.protected_recent,
            before=self.before,
            after=self.after,
            ids=[e.id for e in self.candidates] + [e.id for e in self.protected],
            scores=self.scores.tolist() + [None] * len(self.protected),
            fates=[str(self._fate(i)) for i in range(n)]
            + [str(Fate.PROTECTED)] * len(self.protected),
        )


def keep_order(scores: np.ndarray) -> np.ndarray:
    """The candidates' indices in the order a prune keeps them: highest score first; among
    equal scores the newer event (larger index) first."""
    return np.lexsort((-np.arange(len(scores)), -scores))


class ContextWindow:
    """Time-ordered events. `append` queues the event's row for the turn store; `prune`
    keeps the newest `protected_recent` unconditionally and the `top_k - protected_recent`
    (floor 0) others most similar to the query, and archives the rest to the cold context."""

    def __init__(
        self,
        turns: TurnStore,
        embedder: Embedder,
        clock: Clock,
        *,
        top_k: int = 40,
        protected_recent: int = 10,
        cold: ColdArchive | None = None,
        emit: Emit | None = None,
        tools: ToolLookup | None = None,
        recall_index: HybridIndex | None = None,
        keywords: Callable[[str], list[str]] | None = None,
        tasks: TaskScope,
    ) -> None:
        if top_k < 0 or protected_recent < 0:
            raise ValueError("top_k and protected_recent must not be negative")
        self.embedder = embedder
        self.clock = clock
        self.top_k = top_k
        self.protected_recent = protected_recent
        self.cold = cold
        #: Looks a tool up by name (its no_memory flag and cleaner); `connect_tools` when the
        #: table is made after the window.
        self.tools = tools
        self.last_prune: PruneReport | None = None
        self.problems: list[str] = []
        self._emit = emit or discard
        self.turns = turns
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
        self._embed_seconds = float("inf")
        """How long the last append took to embed and cut its event (none yet: too long)."""
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

    def known_vector(self, text: str) -> npt.NDArray[np.float32] | None:
        """The vector, in the current space, of a recent event whose text for its vector is
        `text` (whitespace aside): a turn prunes and recalls with the input it has just
        appended, whose vector is made already. None when no such event is at hand."""
        wanted = clean_text(text)
        for event in reversed(self._events[-KNOWN_VECTOR_EVENTS:]):
            if event.vector_text == wanted:
                vector = self._usable_vector(event)
                if vector is not None:
                    return vector
        return None

    async def stored(self, event_id: str) -> ContextEvent | None:
        """The turn of that id wherever the turn store keeps it now (window, cold context or
        graph), as an event; None if it was never stored or was dropped."""
        turn = await asyncio.to_thread(self.turns.get, event_id)
        return None if turn is None else event_of_turn(turn)

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

    def connect_tools(self, tools: ToolLookup) -> None:
        """The tool lookup, given once at boot when the table is built after the window
        (memory's own tools come from the memory that wraps it). Refused when one is set:
        events already stored were cleaned by it."""
        if self.tools is not None:
            raise RuntimeError("the context window's tool lookup is already connected")
        self.tools = tools

    async def open(self) -> list[str]:
        """Load the window's events from the turn store. Returns the problems found (rows
        that cannot be read, left in the store untouched), which are also logged and
        announced; nothing is raised."""
        async with self._lock:
            turns, problems = await asyncio.to_thread(self.turns.load, Place.CONTEXT)
            for turn in turns:
                self._insert(event_of_turn(turn))
            if problems:
                self._announce_problems(problems)
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
        # Words cut when the event was stored are read back, not cut again.
        uncut = [e for e in events if e.words is None]
        words = await asyncio.to_thread(lambda: [self._keywords_of(e) for e in uncut])
        async with self._lock:
            for event, its_words in zip(uncut, words, strict=True):
                event.words = its_words
            for event in events:
                if event.id in self._ids:
                    self._index_event(event, stems(event.words or []))

    def _keywords_of(self, event: ContextEvent) -> list[str]:
        assert self._keywords is not None
        return self._keywords(event.vector_text or event.text)

    def _index_event(self, event: ContextEvent, words: list[str]) -> None:
        if self.recall_index is not None:
            vector = self._usable_vector(event)
            self.recall_index.add(
                event.id,
                event.timestamp,
                words,
                vector,
                Place.CONTEXT,
                speaker=event.speaker or event.source,
            )

    def _announce_problems(self, problems: list[str]) -> None:
        self.problems.extend(problems)
        for problem in problems:
            log.warning("context window: %s", problem)
        self._emit(MemoryDegraded(layer="context", problems=problems), source="memory")

    async def close(self) -> None:
        """Stop indexing and wait for the rows queued for the turn store (its owner closes
        it); raises TurnStoreError naming those that failed."""
        await self._indexing.cancel()
        await self.turns.flushed()

    # ---- changing ---------------------------------------------------------------------------

    def _usable_vector(self, event: ContextEvent) -> npt.NDArray[np.float32] | None:
        """The event's vector when it is of the current space, else None."""
        stored = event.vector
        return stored.vector if stored is not None and stored.matches(self.embedder) else None

    def _insert(self, event: ContextEvent) -> None:
        index = bisect.bisect_right(self._events, event.timestamp, key=lambda e: e.timestamp)
        slot = self._free.pop() if self._free else self._matrix.size
        self._events.insert(index, event)
        self._slots.insert(index, slot)
        self._ids.add(event.id)
        self._set_vector(event, slot)

    def _set_vector(self, event: ContextEvent, slot: int) -> None:
        vector = self._usable_vector(event)
        if vector is not None:
            self._matrix.set(slot, vector)
            self._stale.discard(event.id)
        else:
            self._matrix.set(slot, None)
            self._stale.add(event.id)
        if self.recall_index is not None and vector is not None:
            self.recall_index.set_vector(event.id, vector)

    def _keep_only(self, keep: list[bool], handed_over: Collection[str] = ()) -> None:
        """Drop every event whose flag in `keep` (parallel to the window) is False; those
        `handed_over` are the cold context's now, in the recall index too."""
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
                if self.recall_index is not None and event.id not in handed_over:
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
        speaker: str = "",
        why: str = "said",
    ) -> ContextEvent:
        """Add one event (timestamp: now, unless given, e.g. a recalled document's original
        time; its id made up unless given: a stored turn of that id moves into the window,
        `why` in its history) and return it, its row queued for the turn store (the
        store's `flush` waits for it). Embedding failures do not
        lose the event: it is stored without a vector, announced, and embedded again at the
        next prune."""
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
            speaker=speaker,
        )
        if event_id is not None:
            event.id = event_id
        async with self._lock:
            if self._embed_seconds < INLINE_EMBED_S:
                error = self._embed_and_cut(event)
            else:
                error = await asyncio.to_thread(self._embed_and_cut, event)
            # Not awaited: the input journal runs the turn again if a crash cuts it off.
            self.turns.put([turn_of_event(event, Place.CONTEXT)], why, self.clock.now(), wait=False)
            self._insert(event)
            if event.words is not None and self.recall_index is not None:
                self._index_event(event, stems(event.words))
            if error is not None:
                self._announce_problems([f"event {event.id} stored without a vector: {error}"])
        self._emit(
            ContextAppended(id=event.id, event_source=event.source, size=len(self._events)),
            source="memory",
        )
        return event

    def _embed_and_cut(self, event: ContextEvent) -> str | None:
        """Set the event's vector and words; returns the error when it could not be
        embedded. Timed: the next append runs it inline if it took less than a hop."""
        started = time.perf_counter()
        error = None
        try:
            vector = self.embedder.embed_texts([event.vector_text])[0]
            event.vector = StoredVector(self.embedder.fingerprint, vector)
        except EmbedderError as exc:
            error = str(exc)
        if self._keywords is not None:
            event.words = self._keywords_of(event)
        self._embed_seconds = time.perf_counter() - started
        return error

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
            written = [(e.id, e.vector) for e in chunk if e.vector is not None]
            await asyncio.to_thread(self.turns.set_vectors, written)
            done = start + len(chunk)
            if progress is not None:
                progress(done, len(stale))
            self._emit(
                MemoryReembed(
                    layer="context",
                    done=done,
                    total=len(stale),
                    fingerprint=self.embedder.fingerprint,
                ),
                source="memory",
            )
        return len(stale)

    # ---- pruning ----------------------------------------------------------------------------

    async def prune(self, query: str) -> PruneReport:
        """Prune if the window holds more than `top_k` events (spec: Prune). The report (also
        published as a `context_pruned` event) gives every candidate's score and fate."""
        async with self._lock:
            report = await self._prune_locked(query)
        if report.pruned:
            self.last_prune = report
            self._emit(report.to_payload(), source="memory")
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
        query_vector = self.known_vector(query)
        if query_vector is None:
            query_vector = (await asyncio.to_thread(self.embedder.embed_texts, [query]))[0]
        scores = self._matrix.scores_at(query_vector, np.asarray(self._slots[:cut], np.int64))
        keep_mask = np.zeros(cut, dtype=bool)
        keep_mask[keep_order(scores)[:keep_n]] = True
        kept = keep_mask.tolist()
        gone = [e for e, k in zip(candidates, kept, strict=True) if not k]
        to_archive = [e for e in gone if e.source not in NEVER_ARCHIVED]
        if self.cold is None:
            to_archive = []
        elif to_archive:
            # The cold context takes the turns' rows in the store: one move, so a crash
            # leaves each turn in the window or in the cold context, never both.
            await self.cold.archive(to_archive)
        archived = {e.id for e in to_archive}
        dropped = [e.id for e in gone if e.id not in archived]
        if dropped:
            self.turns.drop(dropped, "pruned", self.clock.now(), wait=False)
        self._keep_only(kept + [True] * protected_n, archived)
        report.candidates = candidates
        report.scores = scores
        report.kept = kept
        report.archived = archived
        report.protected = events[cut:]
        report.after = len(self._events)
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
            scores = self._matrix.scores_at(vectors[0], np.asarray(self._slots[:cut], np.int64))
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
