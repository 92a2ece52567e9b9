"""What one recall costs on its way: the query segmented and embedded once for every index,
and nothing it waits for that persistence holds (issue 22, off the hot path)."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiosqlite
import jieba
import pytest

from hologram import Kernel
from hologram.memory import Triple, facility
from hologram.memory.graph import blocks as blocks_module
from hologram.memory.graph.blocks import BlockStore
from hologram.memory.turns import Place, Turn, TurnStore
from hologram.serve.context import ServiceInfo
from hologram.serve.service import freeze_when_indexed

DEADLOCK_GUARD_S = 30.0
"""Only a hang ends here: a recall that waits for the held lock never returns at all."""


async def test_a_recall_segments_and_embeds_its_query_once(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cut: list[str] = []
    real_cut = jieba.lcut

    def counting_cut(text: str, *args: Any, **kwargs: Any) -> list[str]:
        cut.append(text)
        return real_cut(text, *args, **kwargs)

    # Before the kernel starts: its segmenter takes jieba's function when it loads.
    monkeypatch.setattr(jieba, "lcut", counting_cut)
    async with Kernel(data_dir) as kernel:
        state = kernel.state
        memory = state.memory
        await state.graph.store.commit([Triple("年糕", "看", "兽医", sentence_text="年糕去看兽医")])
        await state.coldcontext.commit("年糕的兽医在榆树街")
        await memory.recall("年糕的兽医", 1000)  # the first one loads jieba and the indexes
        embedder = memory.embedder
        embedded: list[str] = []
        real_embed = embedder.embed_texts

        def counting_embed(texts: Sequence[str]) -> Any:
            embedded.extend(texts)
            return real_embed(texts)

        monkeypatch.setattr(embedder, "embed_texts", counting_embed)
        cut.clear()
        items = await memory.recall("年糕的兽医在哪里", 1000)
        assert {item.source for item in items} == {"coldcontext", "graph"}
        assert "榆树街" in items[0].text
        # The cold context, the window, the graph's indexer and the embedder share one cut.
        assert cut == ["年糕的兽医在哪里"]
        assert embedded == ["年糕的兽医在哪里"], "the graph embedded the query a second time"


async def test_a_recall_does_not_wait_for_the_cold_store_to_persist(data_dir: Path) -> None:
    async with Kernel(data_dir) as kernel:
        memory, cold = kernel.state.memory, kernel.state.coldcontext
        doc = await cold.commit("the spare key is under the blue flowerpot")
        await memory.recall("where is the spare key", 1000)
        # An archive holds the store's lock while it embeds and fsyncs its documents.
        async with cold._lock:
            items = await asyncio.wait_for(
                memory.recall("spare key flowerpot", 1000), DEADLOCK_GUARD_S
            )
            assert items and "flowerpot" in items[0].text
            assert cold.get(doc.id).access_count == 2, "the read is counted at once"
        await cold.flush()
        stored = cold.turns.get(doc.id)
        assert stored is not None and stored.access_count == 2
        await memory.recall("the blue flowerpot", 1000)
    async with Kernel(data_dir) as kernel:
        await kernel.state.coldcontext.wait_ready()
        kept = kernel.state.coldcontext.get(doc.id)
        assert kept is not None and kept.access_count == 3, "a count touched last was lost"


async def test_a_recall_on_a_small_store_makes_no_thread_hop(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Kernel(data_dir) as kernel:
        state = kernel.state
        memory = state.memory
        await state.graph.store.commit(
            [Triple("Biscuit", "is_a", "dog", sentence_text="Biscuit is my dog")]
        )
        await state.coldcontext.commit("Biscuit's vet is on Elm Street")
        await memory.recall("who is Biscuit", 1000)  # loads jieba and the entity vectors
        await state.coldcontext.flush()
        hops: list[str] = []
        real_to_thread = asyncio.to_thread
        real_fetchall = aiosqlite.Connection.execute_fetchall
        real_execute = aiosqlite.Connection.execute

        async def to_thread(func: Any, /, *args: Any, **kwargs: Any) -> Any:
            hops.append(f"to_thread {getattr(func, '__qualname__', func)}")
            return await real_to_thread(func, *args, **kwargs)

        async def execute_fetchall(self: aiosqlite.Connection, sql: str, *a: Any) -> Any:
            hops.append(f"sqlite {sql[:40]}")
            return await real_fetchall(self, sql, *a)

        def execute(self: aiosqlite.Connection, sql: str, *a: Any) -> Any:
            hops.append(f"sqlite {sql[:40]}")
            return real_execute(self, sql, *a)

        monkeypatch.setattr(asyncio, "to_thread", to_thread)
        monkeypatch.setattr(aiosqlite.Connection, "execute_fetchall", execute_fetchall)
        monkeypatch.setattr(aiosqlite.Connection, "execute", execute)
        items = await memory.recall("where is Biscuit's vet", 1000)
        assert {item.source for item in items} == {"coldcontext", "graph"}
        # Each hop is a wait for another thread's turn: about 0.1 ms idle, several ms at
        # p95 on a busy machine; the graph's small reads and the search run inline.
        assert hops == []


FRUIT = ["apples", "bananas", "cherries", "damsons", "elderberries", "figs"]


def archive_held_after_its_first_batch(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> threading.Event:
    """A data dir whose archive holds a turn a day about each of `FRUIT`, loaded two at a
    time, newest first, the load held after the first two until the returned event is set."""
    store = TurnStore(data_dir / "memory" / "turns.db")
    store.put(
        [
            Turn(id=f"t{i}", place=Place.GRAPH, at=1_600_000_000.0 + 86400.0 * i, source="user",
                 speaker="user", text=f"I bought {word}", input=f"I bought {word}")
            for i, word in enumerate(FRUIT)
        ],
        "archived",
        0.0,
    )  # fmt: skip
    store.close()
    monkeypatch.setattr(blocks_module, "LOAD_BATCH", 2)
    monkeypatch.setattr(facility, "LAYER_WAIT_S", 0.3)
    gate = threading.Event()
    index_batch = BlockStore._index_batch
    batches: list[int] = []

    def held_after_the_first(self: BlockStore, batch: list[Turn]) -> None:
        if batches:
            gate.wait(DEADLOCK_GUARD_S)
        batches.append(len(batch))
        index_batch(self, batch)

    monkeypatch.setattr(BlockStore, "_index_batch", held_after_the_first)
    return gate


async def test_a_recall_at_boot_waits_for_the_archive_index_only_so_long(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restart with a year of archived turns takes seconds to index them. The service's
    settle and the first recall wait `LAYER_WAIT_S` at most, then answer from the newest
    turns indexed so far; the rest are found once the load ends."""
    gate = archive_held_after_its_first_batch(data_dir, monkeypatch)
    async with Kernel(data_dir) as kernel:
        memory, blocks = kernel.state.memory, kernel.state.graph.store.blocks
        try:
            await asyncio.wait_for(memory.settle(), DEADLOCK_GUARD_S)
            assert blocks.indexed == 2, "settle waited for the whole archive"
            assert await memory.indexed() is False
            figs = await asyncio.wait_for(memory.recall("figs", 1000), DEADLOCK_GUARD_S)
            assert any("figs" in item.text for item in figs)
            apples = await memory.recall("apples", 1000)
            assert not any("apples" in item.text for item in apples)
        finally:
            gate.set()
        assert await blocks.wait_ready() is True
        assert await memory.indexed() is True
        apples = await memory.recall("apples", 1000)
        assert any("apples" in item.text for item in apples)


async def test_the_service_freezes_an_archive_indexed_after_it_started(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service keeps boot's heap out of the garbage collector's full passes; an
    archive still being indexed when it starts joins that heap once it is whole, not
    before (a year of turns is a list of words each)."""
    gate = archive_held_after_its_first_batch(data_dir, monkeypatch)
    async with Kernel(data_dir) as kernel:
        memory = kernel.state.memory
        service = ServiceInfo(url="", host="", port=0, auth="loopback", boot_heap_frozen=0)
        try:
            await memory.settle()
            assert await memory.indexed() is False
            freezing = asyncio.create_task(freeze_when_indexed(memory, service))
            await asyncio.sleep(0.1)
            assert not freezing.done() and service["boot_heap_frozen"] == 0
        finally:
            gate.set()
        try:
            await asyncio.wait_for(freezing, DEADLOCK_GUARD_S)
            assert service["boot_heap_frozen"] > 0
            # The oldest turn was indexed after the gate opened: its words are frozen now,
            # out of the generations a full pass walks.
            index = memory.cold.recall_index.words
            words_of_oldest = index._words[index._row_of["t0"]]
            assert not any(o is words_of_oldest for o in gc.get_objects())
        finally:
            gc.unfreeze()
