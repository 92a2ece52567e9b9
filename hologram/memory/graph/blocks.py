"""Memory blocks (spec: MemoryBlock): a union where a text block carries text and a media
block carries bytes. Media *is* a block: no separate byte store, no reference counts.

A text block is a turn: the turns the turn store (`hologram.memory.turns`) keeps in the
graph's place, each archived there from the cold context with its own id, time, speaker,
words and vector. Nothing is copied when a turn is archived; it changes place. A text
stored here directly (an import) becomes such a turn too, under `blk_text_<sha256(text)[:12]>`,
so the same text imported twice is stored once. Graph databases written before this kept
their text blocks in their own table; those rows move into the turn store when the blocks
next load (a block that only copied an archived turn is dropped, its id kept in
`moved_text_blocks` so it still resolves to that turn).

A media block's id derives from its content, `blk_media_<sha256(trim(mime) + "\\0" +
data)[:12]>`, so storing the same image twice stores it once (`ON CONFLICT`). Every block
carries its own vector and the fingerprint of the space it was computed in. Listing and
search select every column but `data`; `data(id)` reads one block's bytes on demand.

Search is hybrid (`hologram.memory.recall.hybrid`): the words and vectors of every block
are loaded into the recall index in the background at open, and a turn archived from the
cold context keeps its row in that index, beside its session and neighbours.
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from hologram.kernel import Once, TaskScope
from hologram.memory.embed.registry import StoredVector
from hologram.memory.graph.base import blob_vector, fetch_in, vector_blob
from hologram.memory.graph.types import BlockInfo, GraphError, UnknownBlock
from hologram.memory.recall.episodic import stems
from hologram.memory.recall.hybrid import HybridIndex, Place
from hologram.memory.text import Segmenter
from hologram.memory.turns import Turn, TurnStore
from hologram.sdk import (
    MemoryDegraded,
    MemoryReembed,
    ModalityUnsupported,
)

if TYPE_CHECKING:
    from hologram.memory.graph.base import GraphBase

log = logging.getLogger(__name__)

LOAD_BATCH = 5000
"""Turns read at a time at load, newest first; a search between batches finds them."""
INDEX_SLICE = 500
"""Turns put into the recall index under one hold of its lock: about 16 ms on this
project's 2-core machine, which is what a turn's append or search may wait for while a
year of archived turns is loaded (a batch whole held it for a fifth of a second)."""

INFO_COLUMNS = "id, kind, text, mime, width, height, size, fingerprint, source, created_at"
"""Everything but `data`: reading a block's description never reads its bytes."""


def media_block_id(mime: str, data: bytes) -> str:
    digest = hashlib.sha256(mime.strip().encode("utf-8") + b"\0" + data).hexdigest()
    return f"blk_media_{digest[:12]}"


def text_block_id(text: str) -> str:
    return f"blk_text_{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}"


def turn_text(turn: Turn) -> str:
    """What a turn reads as, as a text block (the cold context's document text)."""
    return turn.text or " ".join(p for p in (turn.input, turn.response) if p)


def info_of_turn(turn: Turn) -> BlockInfo:
    text = turn_text(turn)
    fingerprint = None if turn.vector is None else turn.vector.fingerprint
    return BlockInfo(
        turn.id, "text", text, None, None, None, len(text.encode("utf-8")), fingerprint,
        turn.source, turn.at,
    )  # fmt: skip


@dataclass(slots=True)
class ReembedReport:
    recomputed: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    """Blocks whose modality the current space cannot embed: left without a vector (found
    by no vector search) rather than given another model's vector."""


class BlockStore:
    def __init__(
        self,
        graph: GraphBase,
        turns: TurnStore | None = None,
        *,
        recall_index: HybridIndex | None = None,
        keywords: Callable[[str], list[str]] | None = None,
        tasks: TaskScope,
    ) -> None:
        self.graph = graph
        self._turns = turns
        self.recall_index = (
            recall_index if recall_index is not None else HybridIndex(graph.embedder.dim)
        )
        """Shared with the cold context when the kernel assembles memory."""
        self.keywords = keywords or Segmenter().keywords
        self.problems: list[str] = []
        """Turns of the graph's place that could not be read (left for a repair)."""
        self._loading = Once(tasks, self._load, "graph-blocks-load")
        self.stored = 0
        """Turns of the graph's place when the load began."""
        self.indexed = 0
        """Of those, how many the load has indexed so far."""
        self._partial_said = False
        self._began = 0.0

    @property
    def turns(self) -> TurnStore:
        """The turn store holding the text blocks (set by the graph's `open`)."""
        if self._turns is None:
            raise GraphError("the graph's blocks have no turn store: open the graph first")
        return self._turns

    @turns.setter
    def turns(self, store: TurnStore) -> None:
        self._turns = store

    @property
    def opened(self) -> bool:
        return self._turns is not None

    # ---- the recall index --------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        """Begin loading every block into the recall index in the background."""
        if not self._loading.started:
            self._began = time.monotonic()
        return self._loading.start()

    async def wait_ready(self, within: float | None = None) -> bool:
        """Wait until every block is indexed, or at most until `within` seconds after the
        load began: whether they are. A search before then finds the newest blocks
        indexed so far (the first wait that gives up says so, in the log and as a
        `memory_degraded` event); each later one gives up at once."""
        self.start()
        left = None if within is None else max(within - (time.monotonic() - self._began), 0.0)
        if await self._loading.wait(left):
            return True
        if not self._partial_said:
            self._partial_said = True
            reason = (
                f"recall searches the {self.indexed:,} newest of {self.stored:,} archived "
                "turns while the rest are indexed"
                if self.stored
                else "recall searches no archived turn yet: the archive is still being read"
            )
            log.warning("graph blocks: %s", reason)
            self.graph.emit(MemoryDegraded(layer="graph.blocks", reason=reason))
        return False

    async def close(self) -> None:
        await self._loading.cancel()

    async def _load(self) -> None:
        """Media blocks, then the turns of the graph's place from the newest back, a batch
        at a time, so a search between batches (a restart with a year of turns takes
        seconds to index) finds the most recent ones."""
        started = time.perf_counter()
        await self._move_text_rows()
        media = await self.graph.fetchall(
            "SELECT id, created_at, vector, fingerprint FROM memory_blocks WHERE kind = 'media'"
        )
        fingerprint = self.graph.embedder.fingerprint
        self.recall_index.add_many(
            [
                (
                    block_id,
                    created_at,
                    [],
                    blob_vector(vector) if vector is not None and fp == fingerprint else None,
                    Place.GRAPH,
                    "",
                )
                for block_id, created_at, vector, fp in media
            ]
        )
        counts = await asyncio.to_thread(self.turns.counts)
        self.stored = counts.get(Place.GRAPH, 0)
        self.recall_index.reserve(self.stored)
        cursor: tuple[float, int] | None = None
        while True:
            turns, problems, cursor = await asyncio.to_thread(
                self.turns.load_newest, Place.GRAPH, LOAD_BATCH, cursor
            )
            if problems:
                self.problems.extend(problems)
                for problem in problems:
                    log.warning("graph blocks: %s", problem)
                self.graph.emit(MemoryDegraded(layer="graph.blocks", problems=problems))
            if turns:
                await asyncio.to_thread(self._index_batch, turns)
                self.indexed += len(turns)
            if cursor is None:
                break
        if self._partial_said:
            log.info(
                "graph blocks: all %d archived turns indexed (%.1f s after the load began)",
                self.indexed,
                time.perf_counter() - started,
            )

    def _index_batch(self, turns: list[Turn]) -> None:
        uncut = [t for t in turns if t.words is None]
        if uncut:
            # Stored without keywords (moved from an old graph): cut once, then kept.
            for turn in uncut:
                turn.words = self.keywords(turn_text(turn))
            self.turns.put(uncut, "words cut", self.graph.clock.now())
        documents = [self._document(turn) for turn in turns]
        for start in range(0, len(documents), INDEX_SLICE):
            self.recall_index.add_many(documents[start : start + INDEX_SLICE])
        self.recall_index.prepare()

    def _index_turn(self, turn: Turn) -> None:
        self.recall_index.add_many([self._document(turn)])

    def _document(
        self, turn: Turn
    ) -> tuple[str, float, list[str], npt.NDArray[np.float32] | None, Place, str]:
        """`turn` as the recall index takes it."""
        stored = turn.vector
        current = stored is not None and stored.fingerprint == self.graph.embedder.fingerprint
        return (
            turn.id,
            turn.at,
            stems(turn.words or []),
            stored.vector if current and stored is not None else None,
            Place.GRAPH,
            turn.speaker or turn.source,  # as the turn store reads a turn of nobody named
        )

    async def _move_text_rows(self) -> None:
        """Text blocks of a graph written before they were turns: into the turn store first,
        then out of `memory_blocks`, so a crash in between repeats the move (a turn put
        again is rewritten where it is) and loses nothing. A row a relation links stays
        too, so the link still reads its block."""
        rows = await self.graph.fetchall(
            "SELECT id, text, words, created_at, vector, fingerprint, speaker, source "
            "FROM memory_blocks WHERE kind = 'text'"
        )
        if not rows:
            return
        archived, _ = await asyncio.to_thread(self.turns.load, Place.GRAPH)
        # The archive stored a turn's text as a block before it moved the turn: such a
        # block is a copy of that turn.
        copied = {text_block_id(turn_text(t)): t.id for t in reversed(archived)}
        copied.update({text_block_id(t.input): t.id for t in reversed(archived) if t.input})
        now = self.graph.clock.now()
        fresh, named = [], []
        for block_id, text, words, at, vector, fp, speaker, source in rows:
            turn_id = copied.get(block_id)
            if turn_id is not None:
                named.append((block_id, turn_id))
                continue
            fresh.append(
                Turn(
                    id=block_id,
                    place=Place.GRAPH,
                    at=at,
                    source=source or "graph",
                    speaker=speaker or "",
                    text=text or "",
                    input=text or "",
                    words=_stored_words(words),
                    vector=(
                        StoredVector(fp, blob_vector(vector)) if vector is not None and fp else None
                    ),
                    stored_at=at,
                    entered_at=now,
                )
            )
        await asyncio.to_thread(self.turns.put, fresh, "moved from the graph's text blocks", now)
        async with self.graph.transaction() as db:
            await db.executemany(
                "INSERT OR IGNORE INTO moved_text_blocks (id, turn) VALUES (?, ?)", named
            )
            await db.executemany(
                "DELETE FROM memory_blocks WHERE id = ? AND NOT EXISTS "
                "(SELECT 1 FROM relation_blocks WHERE block_id = memory_blocks.id)",
                [(row[0],) for row in rows],
            )
        log.info(
            "graph %s: %d text blocks moved into the turn store, %d were copies of archived turns",
            self.graph.path,
            len(fresh),
            len(named),
        )

    # ---- writing ---------------------------------------------------------------------

    async def add_media(
        self,
        data: bytes,
        mime: str,
        *,
        width: int | None = None,
        height: int | None = None,
        source: str = "",
    ) -> BlockInfo:
        """Store a media block (once per distinct content) and return it. Its vector comes
        from the current space when that space embeds images; when it does not, the block
        is stored without one and a `memory_degraded` event says so."""
        if not isinstance(data, bytes | bytearray) or not data:
            raise GraphError("a media block needs non-empty bytes")
        if not isinstance(mime, str) or "/" not in mime.strip():
            raise GraphError(f"a media block needs a MIME type like image/png, not {mime!r}")
        mime = mime.strip()
        block_id = media_block_id(mime, bytes(data))
        known = await self._known(block_id)
        if known is not None:
            return known  # same content, same id: nothing to store or embed again
        vector, fingerprint = await self._vector(block_id, media=bytes(data))
        async with self.graph.transaction() as db:
            await db.execute(
                "INSERT INTO memory_blocks (id, kind, data, mime, width, height, size, vector, "
                "fingerprint, source, created_at) VALUES (?, 'media', ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO NOTHING",
                (
                    block_id,
                    bytes(data),
                    mime,
                    width,
                    height,
                    len(data),
                    None if vector is None else vector_blob(vector),
                    fingerprint,
                    source,
                    self.graph.clock.now(),
                ),
            )
        info = await self.get(block_id)
        if self._loading.started:
            self.recall_index.add(info.id, info.created_at, [], vector, Place.GRAPH)
        return info

    async def add_text(
        self,
        text: str,
        *,
        source: str = "",
        at: float | None = None,
        words: Sequence[str] | None = None,
        speaker: str = "",
    ) -> BlockInfo:
        """Store a text block (once per distinct text): a turn in the graph's place. `at`
        is when what it records happened (now when None); `words` its keywords, when the
        caller has them already; `speaker` who said it, when somebody did."""
        if not isinstance(text, str) or not text.strip():
            raise GraphError("a text block needs non-empty text")
        block_id = text_block_id(text)
        known = await self._known(block_id)
        if known is not None:
            return known
        vector, fingerprint = await self._vector(block_id, text=text)
        if words is None:
            words = await asyncio.to_thread(self.keywords, text)
        now = self.graph.clock.now()
        turn = Turn(
            id=block_id,
            place=Place.GRAPH,
            at=now if at is None else at,
            source=source or "graph",
            speaker=speaker,
            text=text,
            input=text,
            words=list(words),
            vector=None if vector is None else StoredVector(str(fingerprint), vector),
        )
        await asyncio.to_thread(self.turns.put, [turn], "stored as a text block", now)
        if self._loading.started:
            self._index_turn(turn)
        return info_of_turn(turn)

    async def adopt(self, ids: Sequence[str]) -> None:
        """Turns just moved into the graph's place. In the kernel they kept their row of
        the index the cold context shares with the blocks; an index of the blocks' own
        (a graph assembled apart from the cold context) indexes them now."""
        missing = [i for i in ids if i not in self.recall_index]
        if missing and self._loading.started:
            for turn in await self.texts(missing):
                self._index_turn(turn)

    async def _known(self, block_id: str) -> BlockInfo | None:
        try:
            return await self.get(block_id)
        except UnknownBlock:
            return None

    async def _vector(
        self, block_id: str, *, text: str | None = None, media: bytes | None = None
    ) -> tuple[Any, str | None]:
        embedder = self.graph.embedder
        try:
            if media is not None:
                rows = await asyncio.to_thread(embedder.embed_images, [media])
            else:
                rows = await asyncio.to_thread(embedder.embed_texts, [text or ""])
        except ModalityUnsupported as exc:
            log.warning("block %s stored without a vector: %s", block_id, exc)
            self.graph.emit(
                MemoryDegraded(
                    layer="graph.blocks",
                    block=block_id,
                    reason=f"{exc}; the block is kept and found by id, not by vector",
                )
            )
            return None, None
        return rows[0], embedder.fingerprint

    async def delete(self, block_id: str) -> None:
        block_id = await self.resolve(block_id)
        if block_id.startswith("blk_media_"):
            async with self.graph.transaction() as db:
                await db.execute("DELETE FROM memory_blocks WHERE id = ?", (block_id,))
        else:
            await asyncio.to_thread(self.turns.drop, [block_id], "deleted", self.graph.clock.now())
        self.recall_index.remove(block_id)

    # ---- reading ---------------------------------------------------------------------

    async def list(self, kind: str | None = None) -> list[BlockInfo]:
        """Every block without its bytes, oldest first."""
        found = []
        if kind in (None, "media"):
            rows = await self.graph.fetchall(
                f"SELECT {INFO_COLUMNS} FROM memory_blocks WHERE kind = 'media'"
            )
            found += [BlockInfo(*row) for row in rows]
        if kind in (None, "text"):
            turns, _ = await asyncio.to_thread(self.turns.load, Place.GRAPH)
            found += [info_of_turn(t) for t in turns]
        return sorted(found, key=lambda b: (b.created_at, b.id))

    async def get(self, block_id: str) -> BlockInfo:
        infos = await self.infos([block_id])
        if block_id not in infos:
            raise UnknownBlock(block_id)
        return infos[block_id]

    async def data(self, block_id: str) -> bytes:
        """The bytes of one media block (spec: BlockData), read only now; a text block's
        text."""
        block_id = await self.resolve(block_id)
        row = await self.graph.fetchone(
            "SELECT data FROM memory_blocks WHERE id = ? AND kind = 'media'", (block_id,)
        )
        if row is not None:
            return bytes(row[0])
        return str((await self.get(block_id)).text).encode("utf-8")

    async def resolve(self, ref: str) -> str:
        """A block id from an id or its 12-character digest (a text block's id is its
        turn's); `UnknownBlock` otherwise."""
        if not isinstance(ref, str) or not ref.strip():
            raise UnknownBlock(str(ref))
        ref = ref.strip()
        candidates = [ref]
        if not ref.startswith("blk_"):
            candidates += [f"blk_media_{ref}", f"blk_text_{ref}"]
        renamed = await fetch_in(
            self.graph.read_now,
            "SELECT id, turn FROM moved_text_blocks WHERE id IN ({marks})",
            candidates,
        )
        turn_of = dict(renamed)
        found = await self.infos([turn_of.get(c, c) for c in candidates])
        if len(found) != 1:
            raise UnknownBlock(ref)
        return next(iter(found))

    async def infos(self, ids: Sequence[str]) -> dict[str, BlockInfo]:
        """The blocks of `ids` that exist, by id (bytes unread)."""
        found: dict[str, BlockInfo] = {}
        media = [i for i in ids if i.startswith("blk_media_")]
        for row in await fetch_in(
            # By primary key: a small read, answered without a thread hop.
            self.graph.read_now,
            f"SELECT {INFO_COLUMNS} FROM memory_blocks WHERE id IN ({{marks}})",
            media,
        ):
            found[row[0]] = BlockInfo(*row)
        for turn in await self.texts([i for i in ids if not i.startswith("blk_media_")]):
            found[turn.id] = info_of_turn(turn)
        return found

    async def texts(self, ids: Sequence[str]) -> builtins.list[Turn]:
        """The text blocks of `ids` as the turns they are, in that order (ids of no text
        block are left out)."""
        if not ids:
            return []
        turns = await asyncio.to_thread(self.turns.get_many, list(ids))
        return [t for t in turns if t.place is Place.GRAPH]

    async def search(self, text: str, top: int = 5) -> builtins.list[tuple[BlockInfo, float]]:
        """Blocks best matching `text`, by words and by vectors of the current space fused
        (bytes unread), with their fused score. Blocks of another fingerprint are found by
        their words only until re-embedded."""
        await self.wait_ready()
        embedder = self.graph.embedder

        def find() -> list[tuple[str, float]]:
            query = embedder.embed_texts([text])[0]
            terms = stems(self.keywords(text))
            hits = self.recall_index.search(terms, query, top, (Place.GRAPH,))
            return [(h.id, h.score) for h in hits]

        hits = await asyncio.to_thread(find)
        infos = await self.infos([block_id for block_id, _ in hits])
        return [(infos[i], score) for i, score in hits if i in infos]

    # ---- changing space --------------------------------------------------------------

    async def stale(self) -> builtins.list[BlockInfo]:
        fingerprint = self.graph.embedder.fingerprint
        rows = await self.graph.fetchall(
            f"SELECT {INFO_COLUMNS} FROM memory_blocks WHERE kind = 'media' AND "
            "(vector IS NULL OR fingerprint IS NULL OR fingerprint != ?)",
            (fingerprint,),
        )
        turns = await asyncio.to_thread(self.turns.stale, Place.GRAPH, fingerprint)
        return [*(BlockInfo(*r) for r in rows), *map(info_of_turn, turns)]

    async def reembed(self, progress: Callable[[int, int], None] | None = None) -> ReembedReport:
        """Recompute and write back every block whose vector is missing or of another
        fingerprint (spec: reembedStaleMedia), reading each one's bytes only then."""
        report = ReembedReport()
        stale = await self.stale()
        embedder = self.graph.embedder
        for done, block in enumerate(stale, 1):
            try:
                if block.kind == "media":
                    data = await self.data(block.id)
                    rows = await asyncio.to_thread(embedder.embed_images, [data])
                else:
                    rows = await asyncio.to_thread(embedder.embed_texts, [block.text or ""])
            except ModalityUnsupported:
                report.unsupported.append(block.id)
            else:
                if block.kind == "media":
                    async with self.graph.transaction() as db:
                        await db.execute(
                            "UPDATE memory_blocks SET vector = ?, fingerprint = ? WHERE id = ?",
                            (vector_blob(rows[0]), embedder.fingerprint, block.id),
                        )
                else:
                    stored = StoredVector(embedder.fingerprint, rows[0])
                    await asyncio.to_thread(self.turns.set_vectors, [(block.id, stored)])
                self.recall_index.set_vector(block.id, rows[0])
                report.recomputed.append(block.id)
            if progress is not None:
                progress(done, len(stale))
            self.graph.emit(
                MemoryReembed(
                    layer="graph.blocks",
                    done=done,
                    total=len(stale),
                    fingerprint=embedder.fingerprint,
                )
            )
        if report.unsupported:
            log.warning(
                "%d blocks stay without a vector: embedder %s cannot embed their modality",
                len(report.unsupported),
                embedder.name,
            )
            self.graph.emit(
                MemoryDegraded(
                    layer="graph.blocks",
                    blocks=report.unsupported,
                    reason=f"embedder {embedder.name} cannot embed their modality",
                )
            )
        return report


def _stored_words(stored: str | None) -> list[str] | None:
    """A block's stored keywords; None (cut again at load) when absent or damaged."""
    try:
        return [str(w) for w in json.loads(stored)] if stored else None
    except (ValueError, TypeError):
        return None
