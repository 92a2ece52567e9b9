"""The cold context (spec: DocStore): the turn store's rows in place COLD_CONTEXT
(`hologram.memory.turns`), indexes rebuilt at start, dual recall fused by reciprocal rank:
vectors, and episodic BM25 over the stemmed jieba words each turn keeps
(`hologram.memory.recall.hybrid`), so reopening a store re-reads its words and never
segments text again.

Documents arrive from context pruning (the same turns, moved: id, time, speaker, words and
vector stay), from the model's `coldcontext_commit`, and leave by `consume`, which moves
them on: back into the window (the model's `coldcontext_query`) or into the graph
(archival, `find_cold`). Loading runs in the background from `start()`, so a large store
never delays boot; every call waits for it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hologram.kernel import Once, TaskScope
from hologram.memory.embed.registry import StoredVector
from hologram.memory.recall.episodic import stems
from hologram.memory.recall.hybrid import RRF_K, HybridIndex
from hologram.memory.turns import Place, Turn, TurnStore
from hologram.memory.window.event import ContextEvent, turn_of_event
from hologram.sdk import (
    Clock,
    ColdContextArchived,
    ColdContextConsumed,
    Embedder,
    Emit,
    MediaRef,
    MemoryDegraded,
    MemoryReembed,
    Modality,
    SystemNote,
    Vectors,
    discard,
)

log = logging.getLogger(__name__)

__all__ = ["RRF_K", "ColdContext", "ColdDoc", "ColdHit"]


@dataclass(slots=True)
class ColdDoc:
    id: str
    created_at: float
    """When what it records happened: an archived event keeps its original time."""
    stored_at: float
    source: str
    input: str
    response: str = ""
    channel: str = ""
    text: str = ""
    tokens: list[str] = field(default_factory=list)
    vector: StoredVector | None = None
    access_count: int = 0
    last_access: float | None = None
    media: list[MediaRef] = field(default_factory=list)
    """Media stored with the document, by reference (the bytes stay in the media store);
    `text`, what it is found by, is its sentence alone."""
    speaker: str = ""
    """Who said it, when that is not `source` (a turn recalled once and pruned again)."""

    def to_json(self) -> dict[str, Any]:
        obj = {
            "id": self.id,
            "created_at": self.created_at,
            "stored_at": self.stored_at,
            "source": self.source,
            "channel": self.channel,
            "input": self.input,
            "response": self.response,
            "text": self.text,
            "tokens": self.tokens,
            "access_count": self.access_count,
            "last_access": self.last_access,
        }
        if self.speaker:
            obj["speaker"] = self.speaker
        if self.media:
            obj["media"] = [m.to_dict() for m in self.media]
        if self.vector is not None:
            obj.update(self.vector.to_json())
        return obj

    @classmethod
    def from_json(cls, obj: Any) -> ColdDoc:
        if not isinstance(obj, dict):
            raise ValueError("a document is a JSON object")
        try:
            doc = cls(
                id=str(obj["id"]),
                created_at=float(obj["created_at"]),
                stored_at=float(obj["stored_at"]),
                source=str(obj["source"]),
                input=str(obj.get("input", "")),
                response=str(obj.get("response", "")),
                channel=str(obj.get("channel", "")),
                text=str(obj.get("text", "")),
                tokens=[str(t) for t in obj.get("tokens") or []],
                vector=StoredVector.from_json(obj),
                access_count=int(obj.get("access_count") or 0),
                last_access=None if obj.get("last_access") is None else float(obj["last_access"]),
                media=[MediaRef.from_dict(m) for m in obj.get("media") or []],
                speaker=str(obj.get("speaker") or ""),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"document field missing or of the wrong type: {exc}") from None
        return doc


@dataclass(frozen=True, slots=True)
class ColdHit:
    doc: ColdDoc
    score: float
    cosine: float | None
    bm25: float | None
    """The episodic word score (the best direct hit 1.0, plus its session's lift), if
    words found it."""


class ColdContext:
    def __init__(
        self,
        turns: TurnStore,
        embedder: Embedder,
        keywords: Callable[[str], list[str]],
        clock: Clock,
        *,
        emit: Emit | None = None,
        min_similarity: float = 0.12,
        vector_weight: float = 0.1,
        recall_index: HybridIndex | None = None,
        tasks: TaskScope,
    ) -> None:
        self.turns = turns
        self.embedder = embedder
        self.keywords = keywords
        self.clock = clock
        self.min_similarity = min_similarity
        self.problems: list[str] = []
        self._emit = emit or discard
        self._told_text_only = False
        self._docs: dict[str, ColdDoc] = {}
        if recall_index is None:
            recall_index = HybridIndex(
                embedder.dim, vector_weight=vector_weight, min_similarity=min_similarity
            )
        self.recall_index = recall_index
        """Shared with the graph's text blocks when the kernel assembles memory."""
        self._lock = asyncio.Lock()
        self._tasks = tasks
        self._loading = Once(self._tasks, self._load, "coldcontext-load")

    # ---- life cycle -------------------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        """Begin loading the documents in the background; returns the loading task."""
        return self._loading.start()

    async def wait_ready(self) -> None:
        await self._loading.wait()

    async def _load(self) -> None:
        async with self._lock:
            docs, problems = await asyncio.to_thread(self._read_all)
            for doc in docs:
                self._index(doc)
            if problems:
                self.problems.extend(problems)
                for problem in problems:
                    log.warning("cold context: %s", problem)
                self._emit(MemoryDegraded(layer="coldcontext", problems=problems), source="memory")
            await self._reembed_locked()

    def _read_all(self) -> tuple[list[ColdDoc], list[str]]:
        turns, problems = self.turns.load(Place.COLD_CONTEXT)
        docs = [doc_of_turn(t) for t in turns]
        uncut = [d for d, t in zip(docs, turns, strict=True) if t.words is None and d.text]
        for doc in uncut:
            doc.tokens = self.keywords(doc.text)
        if uncut:
            # Cut once, kept: the next start reads them back.
            self.turns.put([turn_of_doc(d) for d in uncut], "words cut", self.clock.now())
        return docs, problems

    def stale(self) -> list[ColdDoc]:
        return [d for d in self._docs.values() if not self._current(d)]

    async def reembed(self, progress: Callable[[int, int], None] | None = None) -> int:
        await self.wait_ready()
        async with self._lock:
            return await self._reembed_locked(progress)

    async def _reembed_locked(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Recompute vectors of another fingerprint (or none) and write them back. Until
        then such a document is found only by keywords, never compared by vector."""
        stale = self.stale()
        for start in range(0, len(stale), 256):
            chunk = stale[start : start + 256]
            vectors = await asyncio.to_thread(self.embedder.embed_texts, [d.text for d in chunk])
            for doc, vector in zip(chunk, vectors, strict=True):
                doc.vector = StoredVector(self.embedder.fingerprint, vector)
                self.recall_index.set_vector(doc.id, vector)
            written = [(d.id, d.vector) for d in chunk if d.vector is not None]
            await asyncio.to_thread(self.turns.set_vectors, written)
            done = start + len(chunk)
            if progress is not None:
                progress(done, len(stale))
            self._emit(
                MemoryReembed(
                    layer="coldcontext",
                    done=done,
                    total=len(stale),
                    fingerprint=self.embedder.fingerprint,
                ),
                source="memory",
            )
        return len(stale)

    async def close(self) -> None:
        await self.flush()
        await self._loading.cancel()

    # ---- storage ----------------------------------------------------------------------------

    def _index(self, doc: ColdDoc) -> None:
        self._docs[doc.id] = doc
        # Only a vector of the current space is compared; another's waits for re-embedding.
        vector = self._current_vector(doc)
        self.recall_index.add(
            doc.id,
            doc.created_at,
            stems(doc.tokens),
            vector,
            Place.COLD_CONTEXT,
            doc.speaker or doc.source,
        )

    def _count_read(self, docs: Sequence[ColdDoc]) -> None:
        """Count a read of each document now; the new counts are queued for the turn store
        (after any change queued before: a document consumed later is rewritten later)."""
        now = self.clock.now()
        for doc in docs:
            doc.access_count += 1
            doc.last_access = now
        rows = [(d.id, d.access_count, d.last_access) for d in docs]
        self.turns.set_access(rows, wait=False)

    def __len__(self) -> int:
        return len(self._docs)

    def get(self, doc_id: str) -> ColdDoc | None:
        return self._docs.get(doc_id)

    def documents(self) -> list[ColdDoc]:
        return sorted(self._docs.values(), key=lambda d: d.created_at)

    def _make(
        self,
        *,
        created_at: float,
        source: str,
        input: str,
        response: str = "",
        channel: str = "",
        text: str | None = None,
        media: Sequence[MediaRef] = (),
    ) -> ColdDoc:
        body = text if text is not None else " ".join(p for p in (input, response) if p)
        if media:
            self.announce_text_only()
        return ColdDoc(
            id=uuid.uuid4().hex[:16],
            created_at=created_at,
            stored_at=self.clock.now(),
            source=source,
            input=input,
            response=response,
            channel=channel,
            text=body,
            media=list(media),
        )

    def announce_text_only(self) -> None:
        """Once per store: an embedder without an image space finds media by the sentence
        stored with it, never by what the image shows. Said in the log and on the bus."""
        if self._told_text_only or Modality.IMAGE in self.embedder.modalities:
            return
        self._told_text_only = True
        log.info(
            "embedder %s has no image space: media in memory is matched by its sentence only",
            self.embedder.name,
        )
        self._emit(
            SystemNote(kind="media_matched_by_text", detail={"embedder": self.embedder.name}),
            source="memory",
        )

    def _prepare(self, docs: Sequence[ColdDoc]) -> None:
        """Embed and cut each document anew. Blocking."""
        found = self.embedder.embed_texts([d.text for d in docs])
        for doc, vector in zip(docs, found, strict=True):
            doc.vector = StoredVector(self.embedder.fingerprint, vector)
            doc.tokens = self.keywords(doc.text)

    def _current(self, doc: ColdDoc) -> bool:
        """Whether the document's vector is of the current space (only those are compared)."""
        return self._current_vector(doc) is not None

    def _current_vector(self, doc: ColdDoc) -> Vectors | None:
        """The document's vector when it is of the current space, else None."""
        stored = doc.vector
        return stored.vector if stored is not None and stored.matches(self.embedder) else None

    async def _store(self, docs: list[ColdDoc], why: str) -> None:
        """New documents: embedded, cut, stored in the cold place and indexed."""

        def prepare() -> None:
            self._prepare(docs)
            self.turns.put([turn_of_doc(d) for d in docs], why, self.clock.now())

        await self.wait_ready()
        async with self._lock:
            await asyncio.to_thread(prepare)
            for doc in docs:
                self._index(doc)

    async def archive(self, events: Sequence[ContextEvent]) -> None:
        """Take pruned context events (spec: ContextToColdContext): each turn moves in the
        turn store, keeping its id, original time, speaker, words and vector. The move is
        queued for the store's writer, after the window's own writes (its `flush` waits
        for it); the documents are the events as the window has them, since a window row
        holds nothing the event does not (the window keeps no read counts)."""
        if not events:
            return
        now = self.clock.now()
        docs = [doc_of_turn(turn_of_event(e, Place.COLD_CONTEXT)) for e in events]
        for doc in docs:
            doc.stored_at = now
        # What the window holds without words (never cut: None; a text of stopwords alone
        # was cut into none) or without a vector of this space gets them now.
        pairs = zip(docs, events, strict=True)
        lacking = [(d, e) for d, e in pairs if e.words is None or not self._current(d)]
        await self.wait_ready()
        async with self._lock:
            self.turns.move([e.id for e in events], Place.COLD_CONTEXT, "pruned", now, wait=False)
            if lacking:
                await asyncio.to_thread(self._prepare, [d for d, _ in lacking])
                rows = [turn_of_event(e, Place.COLD_CONTEXT) for _, e in lacking]
                for row, (doc, _) in zip(rows, lacking, strict=True):
                    row.words, row.vector = doc.tokens, doc.vector
                # Whole rows: one the window never managed to store is stored now.
                self.turns.put(rows, "pruned", now, wait=False)
            for doc in docs:
                if doc.media:
                    self.announce_text_only()
                self._index(doc)
        self._emit(
            ColdContextArchived(ids=[d.id for d in docs], events=[e.id for e in events]),
            source="memory",
        )

    async def restore(self, docs: Sequence[ColdDoc]) -> None:
        """Store documents as they were kept elsewhere (an import): id, times and read
        count stay; vectors and words are made anew."""
        await self._store(list(docs), "imported")

    async def commit(
        self,
        content: str,
        *,
        source: str = "coldcontext_commit",
        media: Sequence[MediaRef] = (),
    ) -> ColdDoc:
        """Write one document (the model's `coldcontext_commit`), with media by reference
        (spec: InsertWithMedia; the caller has checked the references are stored)."""
        if not isinstance(content, str) or not content.strip():
            raise ValueError("a cold-context document needs non-empty text content")
        doc = self._make(
            created_at=self.clock.now(), source=source, input=content.strip(), media=media
        )
        await self._store([doc], "committed")
        return doc

    # ---- recall -----------------------------------------------------------------------------

    def _search(self, text: str, top: int) -> list[ColdHit]:
        query_vector = self.embedder.embed_texts([text])[0]
        terms = stems(self.keywords(text))
        found = self.recall_index.search(terms, query_vector, top, (Place.COLD_CONTEXT,))
        return [ColdHit(self._docs[h.id], h.score, h.cosine, h.lexical) for h in found]

    async def query(self, text: str, top: int = 3) -> list[ColdHit]:
        """The documents most related to `text`, at most `top`, none if nothing is related.
        Read-only apart from each hit's access count and last-access time."""
        if top <= 0 or not text.strip():
            return []
        await self.wait_ready()
        async with self._lock:
            hits = await asyncio.to_thread(self._search, text, top)
            self._count_read([h.doc for h in hits])
        return hits

    async def touch(self, ids: Sequence[str]) -> None:
        """Count a read of each document (one recalled through the shared index), without
        waiting for the store's lock, which an archive holds while it embeds, or for the
        write itself."""
        await self.wait_ready()
        self._count_read([doc for doc in map(self._docs.get, ids) if doc is not None])

    async def flush(self) -> None:
        """Wait until every change queued for the turn store is written (close calls it)."""
        await self.turns.flushed()

    async def consume(self, ids: Sequence[str], into: Place, why: str) -> list[ColdDoc]:
        """Move documents out of the cold context, `into` the window (recalled) or the graph
        (archived: its text blocks are the turns of its place), and return them. Each keeps
        its row of the shared recall index, tagged with its new place. A turn the window
        has taken back already is in its place; moving it again changes nothing."""
        await self.wait_ready()
        async with self._lock:
            docs = [doc for i in ids if (doc := self._docs.pop(i, None)) is not None]
            for doc in docs:
                self.recall_index.move(doc.id, into)
            now = self.clock.now()
            await asyncio.to_thread(self.turns.move, [d.id for d in docs], into, why, now)
        if docs:
            self._emit(ColdContextConsumed(ids=[d.id for d in docs]), source="memory")
        return docs

    def find_cold(self, age_s: float, max_access: int) -> list[ColdDoc]:
        """Documents untouched for `age_s` seconds and accessed at most `max_access` times:
        candidates for distillation into the graph (spec: FindColdContexts)."""
        now = self.clock.now()
        return [
            doc
            for doc in self.documents()
            if now - max(doc.stored_at, doc.last_access or 0.0) >= age_s
            and doc.access_count <= max_access
        ]


def doc_of_turn(turn: Turn) -> ColdDoc:
    return ColdDoc(
        id=turn.id,
        created_at=turn.at,
        stored_at=turn.entered_at,
        source=turn.source,
        input=turn.input,
        response=turn.response,
        channel=turn.channel,
        text=turn.text or " ".join(p for p in (turn.input, turn.response) if p),
        tokens=list(turn.words or []),
        vector=turn.vector,
        access_count=turn.access_count,
        last_access=turn.last_access,
        media=list(turn.media),
        speaker=turn.speaker if turn.speaker != turn.source else "",
    )


def turn_of_doc(doc: ColdDoc) -> Turn:
    return Turn(
        id=doc.id,
        place=Place.COLD_CONTEXT,
        at=doc.created_at,
        source=doc.source,
        speaker=doc.speaker,
        channel=doc.channel,
        input=doc.input,
        response=doc.response,
        text=doc.text,
        words=list(doc.tokens),
        vector=doc.vector,
        media=list(doc.media),
        stored_at=doc.stored_at,
        entered_at=doc.stored_at,
        access_count=doc.access_count,
        last_access=doc.last_access,
    )
