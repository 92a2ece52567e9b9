"""Memory blocks: content-derived media ids, dedup, bytes read only on demand, re-embedding."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest

from hologram.events import EventBus
from hologram.kernel import KernelTasks, ManualClock
from hologram.kernel.schema import migrate_sqlite
from hologram.memory import (
    GRAPH_MIGRATIONS,
    GraphStore,
    Triple,
)
from hologram.memory.graph import blocks as blocks_module
from hologram.memory.graph.blocks import BlockStore, media_block_id, text_block_id
from hologram.memory.graph.types import UnknownBlock
from hologram.memory.recall.episodic import stems
from hologram.memory.turns import Place, Turn, TurnStore
from hologram.sdk import Event, EventType
from tests.graph.conftest import ImageAxisEmbedder
from tests.memory.helpers import AxisEmbedder, damage_a_page

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
    tasks: KernelTasks,
) -> None:
    path = tmp_path / "graph.db"
    store = await GraphStore.open_at(
        path, ImageAxisEmbedder("v1"), ManualClock(), tasks=tasks.scope("graph")
    )
    media = await store.blocks.add_media(PNG, "image/png")
    text = await store.blocks.add_text("rain and tea")
    await store.commit([Triple("tea", "is_a", "drink")])
    await store.close()

    embedder = ImageAxisEmbedder("v2")
    store = await GraphStore.open_at(path, embedder, ManualClock(), tasks=tasks.scope("graph"))
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
    tasks: KernelTasks,
) -> None:
    bus = EventBus(tasks=tasks.scope("events"))
    seen: list[Event] = []
    bus.subscribe(EventType.MEMORY_DEGRADED, seen.append)
    path = tmp_path / "graph.db"
    store = await GraphStore.open_at(
        path, ImageAxisEmbedder("v1"), ManualClock(), tasks=tasks.scope("graph")
    )
    media = await store.blocks.add_media(PNG, "image/png")
    await store.close()
    store = await GraphStore.open_at(
        path, AxisEmbedder("v2"), ManualClock(), emit=bus.emit, tasks=tasks.scope("graph")
    )
    report = await store.blocks.reembed()
    assert report.unsupported == [media.id] and report.recomputed == []
    row = (
        sqlite3.connect(path)
        .execute("SELECT vector, fingerprint FROM memory_blocks WHERE id = ?", (media.id,))
        .fetchone()
    )
    assert row[1] == ImageAxisEmbedder("v1").fingerprint, "no other model's vector is written"
    assert seen and seen[-1].payload.blocks == [media.id]
    assert await store.blocks.data(media.id) == PNG, "the bytes are kept"
    await store.close()


async def test_text_blocks_of_an_older_graph_move_into_the_turn_store_once(
    tmp_path: Path, clock: ManualClock, tasks: KernelTasks
) -> None:
    """A graph at schema 5 kept its text blocks in `memory_blocks`: at the next load each
    becomes a turn of the graph's place with its id, time, words, vector and speaker; a
    block that only copied an archived turn is dropped and its id resolves to the turn; a
    row a relation links stays. Loading again changes nothing."""
    embedder = AxisEmbedder()
    turns = TurnStore(tmp_path / "turns.db")
    archived = Turn(
        id="a1b2c3d4e5f60718", place=Place.GRAPH, at=5.0, source="qq", speaker="qq",
        input="I moved to Lyon", text="I moved to Lyon", words=["moved", "lyon"],
    )  # fmt: skip
    turns.put([archived], "archived", 6.0)
    db = sqlite3.connect(tmp_path / "graph.db", isolation_level=None)
    migrate_sqlite(db, GRAPH_MIGRATIONS[:5], "graph")
    vector = np.asarray(embedder.embed_texts(["tea in Kyoto"])[0], "<f4").tobytes()
    rows = [
        (text_block_id("I moved to Lyon"), "I moved to Lyon", None, None, 5.0, "", "coldcontext:x"),
        ("blk_text_000000000001", "tea in Kyoto", vector, embedder.fingerprint, 2.0, "mei", "qq"),
        ("blk_text_000000000002", "linked words", None, None, 3.0, "", ""),
    ]
    db.executemany(
        "INSERT INTO memory_blocks (id, kind, text, vector, fingerprint, created_at, speaker, "
        "source, words) VALUES (?, 'text', ?, ?, ?, ?, ?, ?, '[\"tea\", \"kyoto\"]')",
        rows,
    )
    db.execute(
        "INSERT INTO entities (id, name, norm, created_at, updated_at) VALUES (1, 'a', 'a', 0, 0)"
    )
    db.execute(
        "INSERT INTO relations (id, source_id, target_id, relation_type, created_at, valid_at) "
        "VALUES (1, 1, 1, 'knows', 0, 0)"
    )
    db.execute("INSERT INTO relation_blocks VALUES (1, 'blk_text_000000000002')")
    db.close()

    for _ in range(2):
        graph = await GraphStore.open_at(
            tmp_path / "graph.db", embedder, clock, turns=turns, tasks=tasks.scope("graph")
        )
        await graph.blocks.wait_ready()
        listed = {b.id: b for b in await graph.blocks.list("text")}
        assert sorted(listed) == sorted(
            [archived.id, "blk_text_000000000001", "blk_text_000000000002"]
        )
        kyoto = turns.get("blk_text_000000000001")
        assert kyoto is not None and kyoto.place is Place.GRAPH
        assert (kyoto.at, kyoto.speaker, kyoto.text, kyoto.words) == (
            2.0, "mei", "tea in Kyoto", ["tea", "kyoto"],
        )  # fmt: skip
        assert kyoto.vector is not None and kyoto.vector.fingerprint == embedder.fingerprint
        assert await graph.blocks.resolve(text_block_id("I moved to Lyon")) == archived.id
        found = await graph.blocks.search("tea in Kyoto", 1)
        assert [b.id for b, _ in found] == ["blk_text_000000000001"]
        left = (
            sqlite3.connect(tmp_path / "graph.db")
            .execute("SELECT id FROM memory_blocks")
            .fetchall()
        )
        assert left == [("blk_text_000000000002",)], "the linked row stays for its relation"
        await graph.close()
    assert [m.why for m in turns.history("blk_text_000000000001")] == [
        "moved from the graph's text blocks"
    ]
    turns.close()


def archive(turns: TurnStore, said: list[tuple[str, str]]) -> None:
    """Turns already in the turn store's graph place, a day apart: (text, the one word the
    user said) each, with ids t0, t1, ..."""
    turns.put(
        [
            Turn(id=f"t{i}", place=Place.GRAPH, at=86400.0 * i, source="user", speaker="user",
                 text=text, input=word, words=[word])
            for i, (text, word) in enumerate(said)
        ],
        "archived",
        0.0,
    )  # fmt: skip


async def test_a_long_load_is_searchable_newest_first_and_says_so_when_a_wait_gives_up(
    tmp_path: Path,
    clock: ManualClock,
    bus: EventBus,
    published: list[Event],
    monkeypatch: pytest.MonkeyPatch,
    tasks: KernelTasks,
) -> None:
    """A restart with a year of archived turns indexes them a batch at a time, newest
    first: a wait that gives up leaves the newest searchable and is announced once, and
    the oldest are found when the load ends."""
    monkeypatch.setattr(blocks_module, "LOAD_BATCH", 2)
    turns = TurnStore(tmp_path / "turns.db")
    fruit = ["apple", "banana", "cherry", "damson", "elder", "fig"]
    archive(turns, [(word, word) for word in fruit])
    gate = threading.Event()
    batches: list[list[str]] = []
    index_batch = BlockStore._index_batch

    def held_after_the_first(self: BlockStore, batch: list[Turn]) -> None:
        if batches:
            gate.wait(10)
        batches.append([t.id for t in batch])
        index_batch(self, batch)

    monkeypatch.setattr(BlockStore, "_index_batch", held_after_the_first)
    graph = await GraphStore.open_at(
        tmp_path / "graph.db",
        AxisEmbedder(),
        clock,
        emit=bus.emit,
        turns=turns,
        tasks=tasks.scope("graph"),
    )
    blocks = graph.blocks

    def found(word: str) -> list[str]:
        return [h.id for h in blocks.recall_index.search(stems([word]), None, 3, (Place.GRAPH,))]

    try:
        assert await blocks.wait_ready(0.2) is False
        assert batches == [["t4", "t5"]]
        assert (blocks.indexed, blocks.stored) == (2, 6)
        assert found("fig") == ["t5"] and found("apple") == []
        said = [e for e in published if e.type is EventType.MEMORY_DEGRADED]
        assert len(said) == 1 and "2 newest of 6" in said[0].payload.reason
        assert await blocks.wait_ready(0.2) is False, "past its deadline a wait gives up at once"
        assert len([e for e in published if e.type is EventType.MEMORY_DEGRADED]) == 1
    finally:
        gate.set()
    assert await blocks.wait_ready() is True
    assert batches == [["t4", "t5"], ["t2", "t3"], ["t0", "t1"]]
    assert found("apple") == ["t0"] and found("fig") == ["t5"]
    await graph.close()
    turns.close()


async def test_an_archive_damaged_on_disk_leaves_what_was_read_searchable(
    tmp_path: Path,
    clock: ManualClock,
    bus: EventBus,
    published: list[Event],
    monkeypatch: pytest.MonkeyPatch,
    tasks: KernelTasks,
) -> None:
    """A page of the turn store overwritten (disk damage): the load stops where the file
    cannot be read, says so, and recall goes on over the turns read before it, instead of
    every recall failing on the load's error."""
    monkeypatch.setattr(blocks_module, "LOAD_BATCH", 5)
    path = tmp_path / "turns.db"
    turns = TurnStore(path)
    archive(turns, [(f"word{i} " * 300, f"word{i}") for i in range(40)])
    turns.close()
    damage_a_page(path)
    turns = TurnStore(path)
    graph = await GraphStore.open_at(
        tmp_path / "graph.db",
        AxisEmbedder(),
        clock,
        emit=bus.emit,
        turns=turns,
        tasks=tasks.scope("graph"),
    )
    blocks = graph.blocks
    assert await blocks.wait_ready() is True
    assert 0 < blocks.indexed < 40
    assert any("could not be read" in p and "malformed" in p for p in blocks.problems)
    said = [e for e in published if e.type is EventType.MEMORY_DEGRADED]
    assert any("could not be read" in p for e in said for p in e.payload.problems)
    newest = blocks.recall_index.search(["word39"], None, 3, (Place.GRAPH,))
    assert [h.id for h in newest][:1] == ["t39"]
    await graph.close()
    turns.close()
