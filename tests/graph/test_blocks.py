"""Memory blocks: content-derived media ids, dedup, bytes read only on demand, re-embedding."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from hologram.events import EventBus
from hologram.kernel import ManualClock
from hologram.memory import (
    GraphStore,
    Triple,
)
from hologram.memory.graph.blocks import media_block_id
from hologram.memory.graph.types import UnknownBlock
from hologram.sdk import Event, EventType
from tests.graph.conftest import ImageAxisEmbedder
from tests.memory.helpers import AxisEmbedder

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def test_a_media_block_id_is_derived_from_trimmed_mime_and_bytes() -> None:
    expected = hashlib.sha256(b"image/png\0" + PNG).hexdigest()[:12]
    assert media_block_id(" image/png ", PNG) == f"blk_media_{expected}"
    assert media_block_id("image/jpeg", PNG) != media_block_id("image/png", PNG)


async def test_the_same_media_is_stored_once(graph: GraphStore) -> None:
    first = await graph.blocks.add_media(PNG, "image/png", width=4, height=4)
    again = await graph.blocks.add_media(PNG, " image/png")
    assert again.id == first.id and (again.width, again.size) == (4, len(PNG))
    rows = sqlite3.connect(graph.path).execute("SELECT COUNT(*) FROM memory_blocks").fetchone()
    assert rows == (1,)


async def test_listing_and_search_never_read_the_bytes(graph: GraphStore) -> None:
    block = await graph.blocks.add_media(PNG, "image/png")
    await graph.blocks.add_text("a cat on the piano")
    reads: list[tuple[str, str]] = []

    def authorizer(action: int, table: str | None, column: str | None, *_: object) -> int:
        if action == sqlite3.SQLITE_READ:
            reads.append((table or "", column or ""))
        return sqlite3.SQLITE_OK

    await graph.rdb.set_authorizer(authorizer)
    listed = await graph.blocks.list()
    await graph.blocks.search("cat piano")
    assert {b.id for b in listed} >= {block.id}
    assert ("memory_blocks", "data") not in reads
    assert await graph.blocks.data(block.digest) == PNG
    assert ("memory_blocks", "data") in reads


async def test_a_commit_links_media_by_digest_and_the_store_builds_the_marker(
    graph: GraphStore,
) -> None:
    block = await graph.blocks.add_media(PNG, "image/png")
    await graph.commit(
        [
            Triple(
                "Alice",
                "photographed",
                "the lake",
                sentence_text="Alice sent a photo",
                media_digests=(block.digest,),
            )
        ]
    )
    (fact,) = await graph.facts(entity="Alice")
    assert fact.blocks == [block.id] and fact.sentence_text == "Alice sent a photo"
    assert fact.line().endswith(f"[image/png {block.digest}]")
    with pytest.raises(UnknownBlock, match="no memory block 'ffffffffffff'"):
        await graph.blocks.data("ffffffffffff")


async def test_blocks_of_another_fingerprint_are_re_embedded_and_written_back(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graph.db"
    store = await GraphStore.open_at(path, ImageAxisEmbedder("v1"), ManualClock())
    media = await store.blocks.add_media(PNG, "image/png")
    text = await store.blocks.add_text("rain and tea")
    await store.commit([Triple("tea", "is_a", "drink")])
    await store.close()

    embedder = ImageAxisEmbedder("v2")
    store = await GraphStore.open_at(path, embedder, ManualClock())
    assert {b.id for b in await store.blocks.stale()} == {media.id, text.id}
    progress: list[tuple[int, int]] = []
    report = await store.blocks.reembed(lambda done, total: progress.append((done, total)))
    assert sorted(report.recomputed) == sorted([media.id, text.id]) and progress[-1] == (2, 2)
    assert embedder.images == [PNG], "the bytes were read to embed the image"
    assert await store.blocks.stale() == []
    assert {b.fingerprint for b in await store.blocks.list()} == {embedder.fingerprint}
    assert await store.reembed_entities() == 2
    await store.close()


async def test_a_space_without_images_leaves_media_without_a_vector_and_says_so(
    tmp_path: Path,
) -> None:
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(EventType.MEMORY_DEGRADED, seen.append)
    path = tmp_path / "graph.db"
    store = await GraphStore.open_at(path, ImageAxisEmbedder("v1"), ManualClock())
    media = await store.blocks.add_media(PNG, "image/png")
    await store.close()
    store = await GraphStore.open_at(path, AxisEmbedder("v2"), ManualClock(), emit=bus.emit)
    report = await store.blocks.reembed()
    assert report.unsupported == [media.id] and report.recomputed == []
    row = (
        sqlite3.connect(path)
        .execute("SELECT vector, fingerprint FROM memory_blocks WHERE id = ?", (media.id,))
        .fetchone()
    )
    assert row[1] == ImageAxisEmbedder("v1").fingerprint, "no other model's vector is written"
    assert seen and seen[-1].payload["blocks"] == [media.id]
    assert await store.blocks.data(media.id) == PNG, "the bytes are kept"
    await store.close()
