"""Hybrid recall (words and vectors fused) over one index shared by the cold context and the
graph's text blocks: rare names, Chinese, reopening, fingerprints, archival."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from hologram import Kernel
from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import (
    ColdContext,
    ContextEvent,
    ContextWindow,
    GraphStore,
    HashedNgramEmbedder,
    Memory,
    Segmenter,
)
from hologram.memory.recall.episodic import stems
from hologram.memory.recall.hybrid import HybridIndex, Place
from hologram.memory.turns import TurnStore
from tests.memory.helpers import AxisEmbedder

HOUR = 3600.0
FILLER = [
    f"we talked about the {thing} at the weekend market again"
    for thing in ("weather", "traffic", "prices", "music", "crowds", "parking", "bread", "fish")
]


def cold_store(path: Path, embedder, clock: ManualClock, *, tasks: KernelTasks) -> ColdContext:
    turns = TurnStore(path / "turns.db")
    return ColdContext(turns, embedder, Segmenter().keywords, clock, tasks=tasks.scope("cold"))


async def test_a_rare_name_the_hashed_vectors_rank_low_is_found_by_its_words(
    tmp_path: Path, clock: ManualClock, tasks: KernelTasks
) -> None:
    embedder = HashedNgramEmbedder()
    cold = cold_store(tmp_path / "cold", embedder, clock, tasks=tasks)
    await cold.wait_ready()
    for text in FILLER:
        await clock.advance(HOUR)
        await cold.commit(text)
    await clock.advance(HOUR)
    target = await cold.commit("Xochitl brought a kite")
    question = "what did we talk about with Xochitl at the weekend market"
    # The premise: by vector alone the filler, which shares the question's common words,
    # outranks the one document that holds the name.
    vectors = embedder.embed_texts([question, *FILLER, target.text])
    cosines = vectors[1:] @ vectors[0]
    assert int(np.argsort(-cosines).tolist().index(len(FILLER))) >= 3
    hits = await cold.query(question, top=3)
    assert target.id in [h.doc.id for h in hits]
    await cold.close()


async def test_chinese_is_found_through_jieba_words(
    tmp_path: Path, clock: ManualClock, tasks: KernelTasks
) -> None:
    cold = cold_store(tmp_path / "cold", HashedNgramEmbedder(), clock, tasks=tasks)
    await cold.wait_ready()
    for text in ("今天下雨了，我们在家看电影", "周末去公园散步", "我最喜欢的水果是榴莲"):
        await clock.advance(HOUR)
        await cold.commit(text)
    hits = await cold.query("我喜欢什么水果？", top=1)
    assert hits[0].doc.text == "我最喜欢的水果是榴莲" and hits[0].bm25 is not None
    await cold.close()


async def test_the_word_index_is_rebuilt_from_stored_words_at_reopen(
    tmp_path: Path, clock: ManualClock, tasks: KernelTasks
) -> None:
    cold = cold_store(tmp_path / "cold", AxisEmbedder(), clock, tasks=tasks)
    await cold.wait_ready()
    passport = await cold.commit("my passport number is E1234567")
    await cold.close()
    calls: list[str] = []
    segmenter = Segmenter()

    def keywords(text: str) -> list[str]:
        calls.append(text)
        return segmenter.keywords(text)

    again = ColdContext(
        TurnStore(tmp_path / "cold" / "turns.db"),
        AxisEmbedder(),
        keywords,
        clock,
        tasks=tasks.scope("coldcontext"),
    )
    await again.wait_ready()
    assert calls == []  # the stored words were read, no text segmented again
    hits = await again.query("passport", top=1)
    assert [h.doc.id for h in hits] == [passport.id]
    await again.close()


async def test_graph_blocks_keep_their_words_and_are_found_by_them_after_reopen(
    tmp_path: Path, clock: ManualClock, tasks: KernelTasks
) -> None:
    graph = await GraphStore.open_at(
        tmp_path / "graph.db", AxisEmbedder(), clock, tasks=tasks.scope("graph")
    )
    block = await graph.blocks.add_text("Xochitl fixed the bicycle")
    await graph.close()
    (words,) = (
        # A text block is a turn: a graph without the kernel's turn store keeps its own.
        sqlite3.connect(tmp_path / "graph.turns.db")
        .execute("SELECT words FROM turns WHERE id = ?", (block.id,))
        .fetchone()
    )
    assert "xochitl" in words
    graph = await GraphStore.open_at(
        tmp_path / "graph.db", AxisEmbedder(), clock, tasks=tasks.scope("graph")
    )
    found = await graph.blocks.search("who fixed the bicycle", 3)
    assert [b.id for b, _ in found] == [block.id]
    await graph.close()


async def test_vectors_of_another_fingerprint_are_never_compared(
    tmp_path: Path, clock: ManualClock, tasks: KernelTasks
) -> None:
    graph = await GraphStore.open_at(
        tmp_path / "graph.db", AxisEmbedder("v1"), clock, tasks=tasks.scope("graph")
    )
    await graph.blocks.add_text("coffee")
    await graph.blocks.add_text("coffee with a friend")
    await graph.close()
    # Same dimension, another space: until re-embedded, words alone may find a block.
    graph = await GraphStore.open_at(
        tmp_path / "graph.db", AxisEmbedder("v2"), clock, tasks=tasks.scope("graph")
    )
    await graph.blocks.wait_ready()
    index = graph.blocks.recall_index
    query = graph.embedder.embed_texts(["coffee"])[0]
    hits = index.search(stems(["coffee"]), query, 5, [Place.GRAPH])
    assert hits and all(h.cosine is None for h in hits)
    assert index.search([], query, 5, [Place.GRAPH]) == []
    report = await graph.blocks.reembed()
    assert len(report.recomputed) == 2
    hits = index.search([], query, 5, [Place.GRAPH])
    assert len(hits) == 2 and all(h.cosine is not None for h in hits)
    await graph.close()


async def test_a_turn_archived_into_the_graph_is_still_recalled_at_its_own_time(
    data_dir: Path,
) -> None:
    clock = ManualClock(start=1_700_000_000.0)
    async with Kernel(data_dir, clock=clock, environ={}) as kernel:
        state = kernel.state
        said_at = clock.now()
        event = ContextEvent(timestamp=said_at, source="qq", input="Xochitl loves kites")
        await state.coldcontext.archive([event])
        await clock.advance(80 * HOUR)
        await state.graph.heartbeat.tick_archive()  # the archive loop may have done it already
        assert len(state.coldcontext) == 0
        found = await state.memory.search("what does Xochitl love", 3)
        assert [(f.place, f.at, f.text) for f in found] == [
            (Place.GRAPH, said_at, "Xochitl loves kites")
        ]
        sections = await state.memory.recall_sections("Xochitl", 500, len)
        assert "Xochitl loves kites" in sections[0]
        items = await state.memory.recall("Xochitl", 1000)
        assert items[0].source == "graph.blocks"


async def test_who_said_a_turn_is_kept_from_the_cold_context_into_the_graph_and_a_restart(
    data_dir: Path,
) -> None:
    # The same words said by two people: a question naming one finds that one's turn
    # first wherever the turn is kept, and after the kernel starts again.
    clock = ManualClock(start=1_700_000_000.0)
    bob = ContextEvent(timestamp=clock.now(), source="Bob", input="We walked by the lake at dawn")
    ann = ContextEvent(
        timestamp=clock.now() + 10 * HOUR, source="Ann", input="We walked by the lake at dusk"
    )

    async def ranked(kernel: Kernel, question: str) -> list[tuple[Place, str]]:
        found = await kernel.state.memory.search(question, 2)
        return [(f.place, f.text) for f in found]

    async with Kernel(data_dir, clock=clock, environ={}) as kernel:
        await kernel.state.coldcontext.archive([bob, ann])
        cold = await ranked(kernel, "what did Ann say about the lake walk")
        assert cold == [(Place.COLD_CONTEXT, ann.input), (Place.COLD_CONTEXT, bob.input)]
        assert (await ranked(kernel, "the lake walk"))[0] == (Place.COLD_CONTEXT, bob.input)
        await clock.advance(100 * HOUR)
        await kernel.state.graph.heartbeat.tick_archive()
        assert len(kernel.state.coldcontext) == 0
        graph = await ranked(kernel, "what did Ann say about the lake walk")
        assert graph == [(Place.GRAPH, ann.input), (Place.GRAPH, bob.input)]
    async with Kernel(data_dir, clock=clock, environ={}) as kernel:
        reopened = await ranked(kernel, "what did Ann say about the lake walk")
        assert reopened == [(Place.GRAPH, ann.input), (Place.GRAPH, bob.input)]
        assert (await ranked(kernel, "what did Bob say about the lake walk"))[0] == (
            Place.GRAPH,
            bob.input,
        )


async def test_window_events_share_the_index_and_move_with_pruning(
    tmp_path: Path, clock: ManualClock, tasks: KernelTasks
) -> None:
    embedder = AxisEmbedder()
    cold = cold_store(tmp_path / "cold", embedder, clock, tasks=tasks)
    await cold.wait_ready()
    index = cold.recall_index
    window = ContextWindow(
        cold.turns, embedder, clock, top_k=2, protected_recent=1, cold=cold,
        recall_index=index, keywords=cold.keywords,tasks=tasks.scope("memory")
    )  # fmt: skip
    await window.open()
    memory = Memory(window, embedder, cold, lambda: 3)
    kite = await window.append("qq", input="Xochitl flies a red kite")
    await window.append("agentcli", input="restart the Xochitl plugin")
    for text in ("coffee", "tea", "rain"):
        await clock.advance(60)
        await window.append("qq", input=text)
    found = await memory.search("Xochitl kite", 5)
    assert found[0].id == kite.id and found[0].place is Place.CONTEXT
    # The turn's recall leaves the window out: its prompt has the window already.
    assert await memory.search("Xochitl kite", 5, with_window=False) == []
    await window.prune("rain")
    # The kite turn was archived (a cold document now), the agentcli one dropped for good.
    found = await memory.search("Xochitl kite", 5)
    assert (found[0].place, found[0].text) == (Place.COLD_CONTEXT, "Xochitl flies a red kite")
    assert "restart the Xochitl plugin" not in {f.text for f in found}
    await window.close()
    again = ContextWindow(
        cold.turns, embedder, clock, top_k=2, protected_recent=1, cold=cold,
        recall_index=index, keywords=cold.keywords,tasks=tasks.scope("memory")
    )  # fmt: skip
    await again.open()
    await again.index_in_background()  # what the kernel starts once it is ready
    found = await Memory(again, embedder, cold, lambda: 3).search("rain", 5, with_window=True)
    assert [(f.place, f.text) for f in found][:1] == [(Place.CONTEXT, "rain")]
    await again.close()
    await cold.close()


def test_a_paraphrase_no_word_matches_is_found_by_its_vector_after_the_word_hits() -> None:
    index = HybridIndex(2)
    coffee = np.asarray([1.0, 0.0], np.float32)
    index.add("passport", 0.0, ["passport"], None, Place.COLD_CONTEXT)
    index.add("espresso", 9000.0, ["espresso"], coffee, Place.GRAPH)
    index.add("rain", 20000.0, ["rain"], np.asarray([0.0, 1.0], np.float32), Place.GRAPH)
    hits = index.search(["passport"], coffee, 5)
    assert [(h.id, h.lexical is not None, h.cosine) for h in hits] == [
        ("passport", True, None),
        ("espresso", False, pytest.approx(1.0)),
    ]
    assert [h.id for h in index.search(["passport"], coffee, 5, [Place.GRAPH])] == ["espresso"]


async def test_a_restarted_kernel_indexes_its_window_again_once_ready(data_dir: Path) -> None:
    async with Kernel(data_dir, environ={}) as kernel:
        await kernel.state.memory.context.append("qq", input="Xochitl's kite is red")
    async with Kernel(data_dir, environ={}) as kernel:
        memory = kernel.state.memory
        await memory.context.index_in_background()  # started at kernel_ready; wait for it
        found = await memory.search("Xochitl kite", 3, with_window=True)
        assert [(f.place, f.text) for f in found] == [(Place.CONTEXT, "Xochitl's kite is red")]


def test_a_turn_moving_between_places_keeps_one_row() -> None:
    index = HybridIndex(2)
    vector = np.asarray([1.0, 0.0], np.float32)
    for n in range(100):
        index.add(f"t{n}", float(n), ["kite", f"w{n}"], vector, Place.CONTEXT, "qq")
    for n in range(100):
        index.add(f"t{n}", float(n), ["kite", f"w{n}"], vector, Place.COLD_CONTEXT, "qq")
    index.add("quiet", 100.0, [], vector, Place.CONTEXT, "qq")
    index.add("quiet", 100.0, [], vector, Place.COLD_CONTEXT, "qq")
    assert index.rows == 101
    # The same turn is retagged, not indexed again: its words are not counted twice.
    assert index.words.rows == 101
    assert index.count(Place.CONTEXT) == 0 and index.count(Place.COLD_CONTEXT) == 101
    assert index.search(["kite"], vector, 5, (Place.CONTEXT,)) == []
    found = index.search(["kite"], vector, 5, (Place.COLD_CONTEXT,))
    assert len(found) == 5 and {h.place for h in found} == {Place.COLD_CONTEXT}

    # A turn that comes back changed (its words, time or speaker) is indexed anew.
    index.add("t0", 0.0, ["kite", "string"], vector, Place.COLD_CONTEXT, "qq")
    index.add("t1", 5.0, ["kite", "w1"], vector, Place.COLD_CONTEXT, "qq")
    index.add("t2", 2.0, ["kite", "w2"], vector, Place.COLD_CONTEXT, "agent")
    assert index.words.rows == 104 and index.rows == 101
    assert index.search(["string"], None, 3)[0].id == "t0"


def test_a_ranking_shows_each_thing_said_once() -> None:
    index = HybridIndex(2)
    vector = np.asarray([1.0, 0.0], np.float32)
    for n in range(6):
        # The same acknowledgement, said on six days; one other turn about the kite.
        index.add(f"ack{n}", 86400.0 * n, ["sound", "fun"], vector, Place.COLD_CONTEXT, "agent")
    index.add("kite", 86400.0 * 6, ["kite", "fun"], vector, Place.COLD_CONTEXT, "qq")
    index.add("silent1", 1.0, [], vector, Place.COLD_CONTEXT, "qq")
    index.add("silent2", 2.0, [], vector, Place.COLD_CONTEXT, "qq")
    found = [h.id for h in index.search(["sound", "fun"], vector, 5)]
    assert len([i for i in found if i.startswith("ack")]) == 1
    assert "kite" in found
    # Texts without words are found by their vectors, each on its own.
    assert {"silent1", "silent2"} <= set(found)
    index.remove(found[0])
    assert any(h.id.startswith("ack") for h in index.search(["sound"], vector, 3))


def test_a_batch_indexes_as_the_same_documents_added_one_by_one() -> None:
    """`add_many` is `add` in a batch: ids given twice keep their last, an id already
    present is replaced, a turn that only moved is retagged; rankings and counts match."""
    embedder = HashedNgramEmbedder()
    segment = Segmenter().keywords
    said = [
        "I bought figs at the market yesterday",
        "my sister Lena teaches piano in Lyon and grows figs",
        "we went hiking last Saturday near the lake",
        "Lena moved to Lyon two years ago",
        "the figs were sweet, figs and more figs, I bought more",
        "我上周六去了公园",
    ]
    documents = [
        (f"d{i % 5}", 1_600_000_000.0 + HOUR * i, stems(segment(text)),
         embedder.embed_texts([text])[0], Place.GRAPH, "user" if i % 2 else "agent")
        for i, text in enumerate(said)
    ]  # fmt: skip
    last = documents[-1]  # d0 again: its second text
    moved = (last[0], last[1], last[2], last[3], Place.COLD_CONTEXT, last[5])
    one_by_one, batched = HybridIndex(embedder.dim), HybridIndex(embedder.dim)
    older = ("d1", 1_500_000_000.0, ["older", "note"], None, Place.GRAPH, "user")
    for index in (one_by_one, batched):
        index.add(*older)  # present before the batch: replaced in it
    for document in [*documents, moved]:
        one_by_one.add(*document)
    batched.add_many([*documents, moved])
    assert len(batched) == len(one_by_one) == 5
    assert batched.count(Place.COLD_CONTEXT) == one_by_one.count(Place.COLD_CONTEXT) == 1
    for question in ("figs market", "Lena Lyon piano", "hiking Saturday", "上周六 公园"):
        terms = stems(segment(question))
        vector = embedder.embed_texts([question])[0]
        assert [
            (h.id, h.place, h.score, h.lexical, h.cosine) for h in batched.search(terms, vector, 5)
        ] == [
            (h.id, h.place, h.score, h.lexical, h.cosine)
            for h in one_by_one.search(terms, vector, 5)
        ]
