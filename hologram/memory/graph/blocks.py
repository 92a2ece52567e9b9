"""Memory blocks (spec: MemoryBlock): a union where a text block carries text and a media
block carries bytes. Media *is* a block: no separate byte store, no reference counts.

A media block's id derives from its content, `blk_media_<sha256(trim(mime) + "\\0" +
data)[:12]>`, so storing the same image twice stores it once (`ON CONFLICT`). Every block
carries its own vector and the fingerprint of the space it was computed in. Listing and
search select every column but `data`; `data(id)` reads one block's bytes on demand.

Search is hybrid (`hologram.memory.recall.hybrid`): a text block's keywords are stored beside it,
and the words and vectors of every block are loaded into the recall index in the background
at open. A block archived from the cold context keeps the time its turn was said, so it
stays beside its session and neighbours in that index.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hologram.kernel.tasks import Once, TaskScope
from hologram.memory.graph.base import blob_vector, fetch_in, vector_blob
from hologram.memory.graph.types import BlockInfo, GraphError, UnknownBlock
from hologram.memory.recall.episodic import stems
from hologram.memory.recall.hybrid import HybridIndex, Place
from hologram.memory.text import Segmenter
from hologram.sdk import EventType
from hologram.sdk.embedding import ModalityUnsupported

if TYPE_CHECKING:
    from hologram.memory.graph.base import GraphBase

log = logging.getLogger(__name__)

INFO_COLUMNS = "id, kind, text, mime, width, height, size, fingerprint, source, created_at"
"""Everything but `data`: reading a block's description never reads its bytes."""


def media_block_id(mime: str, data: bytes) -> str:
    digest = hashlib.sha256(mime.strip().encode("utf-8") + b"\0" + data).hexdigest()
    return f"blk_media_{digest[:12]}"


def text_block_id(text: str) -> str:
    return f"blk_text_{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}"


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
        *,
        recall_index: HybridIndex | None = None,
        keywords: Callable[[str], list[str]] | None = None,
        tasks: TaskScope | None = None,
    ) -> None:
        self.graph = graph
        self.recall_index = (
            recall_index if recall_index is not None else HybridIndex(graph.embedder.dim)
        )
        """Shared with the cold context when the kernel assembles memory."""
        self.keywords = keywords or Segmenter().keywords
        self._loading = Once(tasks, self._load, "graph-blocks-load")

    # ---- the recall index --------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        """Begin loading every block into the recall index in the background."""
        return self._loading.start()

    async def wait_ready(self) -> None:
        await self._loading.wait()

    async def close(self) -> None:
        await self._loading.cancel()

    async def _load(self) -> None:
        rows = await self.graph.fetchall(
            "SELECT id, kind, text, words, created_at, vector, fingerprint, speaker "
            "FROM memory_blocks"
        )
        missing = [(r[0], r[2]) for r in rows if r[1] == "text" and r[3] is None]
        if missing:
            # Blocks written before keywords were stored: segmented once, then kept.
            computed = await asyncio.to_thread(
                lambda: [json.dumps(self.keywords(t or ""), ensure_ascii=False) for _, t in missing]
            )
            async with self.graph.transaction() as db:
                await db.executemany(
                    "UPDATE memory_blocks SET words = ? WHERE id = ?",
                    [(w, i) for w, (i, _) in zip(computed, missing, strict=True)],
                )
            fresh = {i: w for w, (i, _) in zip(computed, missing, strict=True)}
            rows = [(*r[:3], fresh.get(r[0], r[3]), *r[4:]) for r in rows]
        fingerprint = self.graph.embedder.fingerprint

        def words_of(text: str | None, stored: str | None) -> list[str]:
            try:
                return [str(w) for w in json.loads(stored)] if stored else []
            except (ValueError, TypeError):
                # A damaged list costs one segmentation, never the whole index.
                return self.keywords(text or "")

        def index_all() -> None:
            for block_id, _kind, text, words, created_at, vector, fp, speaker in rows:
                usable = vector is not None and fp == fingerprint
                self.recall_index.add(
                    block_id,
                    created_at,
                    stems(words_of(text, words)),
                    blob_vector(vector) if usable else None,
                    Place.GRAPH,
                    speaker,
                )

        await asyncio.to_thread(index_all)

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
                    vector,
                    fingerprint,
                    source,
                    self.graph.clock.now(),
                ),
            )
        info = await self.get(block_id)
        if self._loading.started:
            self._index(info, [], vector)
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
        """Store a text block (once per distinct text). `at` is when what it records
        happened (an archived turn's own time; now when None); `words` its keywords, when
        the caller has them already; `speaker` who said it, when somebody did."""
        if not isinstance(text, str) or not text.strip():
            raise GraphError("a text block needs non-empty text")
        block_id = text_block_id(text)
        known = await self._known(block_id)
        if known is not None:
            return known
        vector, fingerprint = await self._vector(block_id, text=text)
        if words is None:
            words = await asyncio.to_thread(self.keywords, text)
        async with self.graph.transaction() as db:
            await db.execute(
                "INSERT INTO memory_blocks (id, kind, text, size, vector, fingerprint, source, "
                "created_at, words, speaker) VALUES (?, 'text', ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO NOTHING",
                (
                    block_id,
                    text,
                    len(text.encode()),
                    vector,
                    fingerprint,
                    source,
                    self.graph.clock.now() if at is None else at,
                    json.dumps(list(words), ensure_ascii=False),
                    speaker,
                ),
            )
        info = await self.get(block_id)
        if self._loading.started:
            self._index(info, words, vector, speaker)
        return info

    def _index(
        self, info: BlockInfo, words: Sequence[str], vector: bytes | None, speaker: str = ""
    ) -> None:
        """A block written after loading began joins the index now (one the loader also
        reads is only replaced by the same entry)."""
        self.recall_index.add(
            info.id,
            info.created_at,
            stems(words),
            None if vector is None else blob_vector(vector),
            Place.GRAPH,
            speaker,
        )

    async def _known(self, block_id: str) -> BlockInfo | None:
        try:
            return await self.get(block_id)
        except UnknownBlock:
            return None

    async def _vector(
        self, block_id: str, *, text: str | None = None, media: bytes | None = None
    ) -> tuple[bytes | None, str | None]:
        embedder = self.graph.embedder
        try:
            if media is not None:
                rows = await asyncio.to_thread(embedder.embed_images, [media])
            else:
                rows = await asyncio.to_thread(embedder.embed_texts, [text or ""])
        except ModalityUnsupported as exc:
            log.warning("block %s stored without a vector: %s", block_id, exc)
            self.graph.emit(
                EventType.MEMORY_DEGRADED,
                layer="graph.blocks",
                block=block_id,
                reason=f"{exc}; the block is kept and found by id, not by vector",
            )
            return None, None
        return vector_blob(rows[0]), embedder.fingerprint

    async def delete(self, block_id: str) -> None:
        block_id = await self.resolve(block_id)
        async with self.graph.transaction() as db:
            await db.execute("DELETE FROM memory_blocks WHERE id = ?", (block_id,))
        self.recall_index.remove(block_id)

    # ---- reading ---------------------------------------------------------------------

    async def list(self, kind: str | None = None) -> list[BlockInfo]:
        """Every block without its bytes, oldest first."""
        where, params = ("WHERE kind = ?", (kind,)) if kind else ("", ())
        rows = await self.graph.fetchall(
            f"SELECT {INFO_COLUMNS} FROM memory_blocks {where} ORDER BY created_at, id", params
        )
        return [BlockInfo(*row) for row in rows]

    async def get(self, block_id: str) -> BlockInfo:
        row = await self.graph.fetchone(
            f"SELECT {INFO_COLUMNS} FROM memory_blocks WHERE id = ?", (block_id,)
        )
        if row is None:
            raise UnknownBlock(block_id)
        return BlockInfo(*row)

    async def data(self, block_id: str) -> bytes:
        """The bytes of one media block (spec: BlockData), read only now."""
        block_id = await self.resolve(block_id)
        row = await self.graph.fetchone(
            "SELECT kind, data, text FROM memory_blocks WHERE id = ?", (block_id,)
        )
        kind, data, text = row
        return bytes(data) if kind == "media" else str(text).encode("utf-8")

    async def resolve(self, ref: str) -> str:
        """A block id from an id or its 12-character digest; `UnknownBlock` otherwise."""
        if not isinstance(ref, str) or not ref.strip():
            raise UnknownBlock(str(ref))
        ref = ref.strip()
        if ref.startswith("blk_"):
            rows = await self.graph.fetchall("SELECT id FROM memory_blocks WHERE id = ?", (ref,))
        else:
            rows = await self.graph.fetchall(
                "SELECT id FROM memory_blocks WHERE id IN (?, ?)",
                (f"blk_media_{ref}", f"blk_text_{ref}"),
            )
        if len(rows) != 1:
            raise UnknownBlock(ref)
        return str(rows[0][0])

    async def infos(self, ids: Sequence[str]) -> dict[str, BlockInfo]:
        """The blocks of `ids` that exist, by id (bytes unread)."""
        found: dict[str, BlockInfo] = {}
        for row in await fetch_in(
            # By primary key: a small read, answered without a thread hop.
            self.graph.read_now,
            f"SELECT {INFO_COLUMNS} FROM memory_blocks WHERE id IN ({{marks}})",
            ids,
        ):
            found[row[0]] = BlockInfo(*row)
        return found

    async def search(self, text: str, top: int = 5) -> list[tuple[BlockInfo, float]]:
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

    async def stale(self) -> list[BlockInfo]:
        rows = await self.graph.fetchall(
            f"SELECT {INFO_COLUMNS} FROM memory_blocks WHERE vector IS NULL OR "
            "fingerprint IS NULL OR fingerprint != ?",
            (self.graph.embedder.fingerprint,),
        )
        return [BlockInfo(*r) for r in rows]

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
                async with self.graph.transaction() as db:
                    await db.execute(
                        "UPDATE memory_blocks SET vector = ?, fingerprint = ? WHERE id = ?",
                        (vector_blob(rows[0]), embedder.fingerprint, block.id),
                    )
                self.recall_index.set_vector(block.id, rows[0])
                report.recomputed.append(block.id)
            if progress is not None:
                progress(done, len(stale))
            self.graph.emit(
                EventType.MEMORY_REEMBED,
                layer="graph.blocks",
                done=done,
                total=len(stale),
                fingerprint=embedder.fingerprint,
            )
        if report.unsupported:
            log.warning(
                "%d blocks stay without a vector: embedder %s cannot embed their modality",
                len(report.unsupported),
                embedder.name,
            )
            self.graph.emit(
                EventType.MEMORY_DEGRADED,
                layer="graph.blocks",
                blocks=report.unsupported,
                reason=f"embedder {embedder.name} cannot embed their modality",
            )
        return report
