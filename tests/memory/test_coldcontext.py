"""The cold-context store (spec: DocStore): dual recall, consume-on-read at the original
time, access counts and ageing, rebuilding from files, fingerprints."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hologram.events import EventBus
from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import (
    COLD_STORAGE_SOURCE,
    ColdContext,
    ContextWindow,
    HashedNgramEmbedder,
    Segmenter,
    coldcontext_tools,
    related_docs_section,
)
from hologram.memory.cold.tools import recall_into_context
from hologram.memory.turns import Place, TurnStore
from hologram.sdk import Event, EventType, ToolError
from tests.calling import call_tool
from tests.memory.helpers import AxisEmbedder, damage_a_page

HOUR = 3600.0


def store(
    path: Path, embedder, clock, bus: EventBus | None = None, *, tasks: KernelTasks
) -> ColdContext:
    return ColdContext(
        TurnStore(path / "turns.db"),
        embedder,
        Segmenter().keywords,
        clock,
        emit=bus.emit if bus else None,
        tasks=tasks.scope("coldcontext"),
    )


async def test_recall_finds_by_keywords_what_the_vectors_cannot_see(cold: ColdContext) -> None:
    # "passport" is no axis of the test embedder: only the BM25 recall over words finds it.
    passport = await cold.commit("my passport number is E1234567")
    coffee = await cold.commit("coffee with oat milk")
    await cold.commit("rain all week")
    by_words = await cold.query("where is my passport", top=3)
    # The documents committed beside it (one session) follow it on its score's coattails.
    assert by_words[0].doc.id == passport.id
    assert by_words[0].bm25 and by_words[0].cosine is None
    assert all(h.bm25 is not None and h.bm25 < by_words[0].bm25 for h in by_words[1:])
    by_meaning = await cold.query("coffee", top=3)
    assert by_meaning[0].doc.id == coffee.id and by_meaning[0].cosine == pytest.approx(1.0)


async def test_nothing_is_recalled_when_nothing_is_related(cold: ColdContext) -> None:
    await cold.commit("coffee with oat milk")
    assert await cold.query("piano lessons", top=3) == []
    assert await cold.query("   ", top=3) == []


async def test_documents_recalled_with_coldcontext_query_reenter_at_their_original_time(
    window: ContextWindow, cold: ColdContext, clock: ManualClock
) -> None:
    await clock.advance(60)
    original = await window.append("qq", input="my dog is called biscuit", channel="qq")
    for i in range(14):
        await clock.advance(60)
        await window.append("qq", input=f"coffee {i}")
    await window.prune("coffee")
    assert original.id not in {e.id for e in window.events} and len(cold) == 1
    await clock.advance(3 * 24 * HOUR)

    recalled = await recall_into_context(window, cold, "what is my dog called", top=3)
    assert len(recalled) == 1 and len(cold) == 0
    event = recalled[0]
    assert event.source == COLD_STORAGE_SOURCE and event.timestamp == original.timestamp
    assert event.input == "my dog is called biscuit" and event.channel == "qq"
    assert window.events[0].id == event.id, "not re-inserted at its original place"
    # The same turn, moved back: one row, in the window now, with its speaker.
    assert event.id == original.id and event.speaker == "qq"
    stored = window.turns.get(event.id)
    assert stored is not None and stored.place is Place.CONTEXT and stored.speaker == "qq"
    assert [(m.from_place, m.to_place, m.why) for m in window.turns.history(event.id)] == [
        (None, Place.CONTEXT, "said"),
        (Place.CONTEXT, Place.COLD_CONTEXT, "pruned"),
        (Place.COLD_CONTEXT, Place.CONTEXT, "recalled"),
    ]


async def test_the_query_tool_consumes_and_the_commit_tool_stores(
    window: ContextWindow, cold: ColdContext, published: list[Event]
) -> None:
    query, commit = coldcontext_tools(window, cold)
    assert (query.name, commit.name) == ("coldcontext_query", "coldcontext_commit")
    stored = await call_tool(commit, content="the wifi password is on the fridge")
    assert "Stored" in stored and len(cold) == 1
    answer = await call_tool(query, query="wifi password", top=2)
    assert "Recalled 1" in answer and "fridge" in answer and len(cold) == 0
    assert [e.input for e in window.events] == ["the wifi password is on the fridge"]
    assert any(e.type == EventType.COLD_CONTEXT_CONSUMED for e in published)
    assert await call_tool(query, query="wifi password") == "No stored memory matches that."
    with pytest.raises(ToolError, match="top: 99 is greater than the maximum of 10"):
        await call_tool(query, query="x", top=99)
    with pytest.raises(ToolError, match='content: "  " is blank'):
        await call_tool(commit, content="  ")


async def test_find_cold_lists_documents_untouched_for_the_age_and_rarely_accessed(
    cold: ColdContext, clock: ManualClock
) -> None:
    rarely = await cold.commit("tea in the garden")
    often = await cold.commit("coffee at the office")
    for _ in range(3):
        await cold.query("coffee", top=1)
    assert often.access_count == 3 and often.last_access == clock.now()
    await clock.advance(71 * HOUR)
    assert cold.find_cold(72 * HOUR, max_access=2) == []
    await clock.advance(2 * HOUR)
    assert [d.id for d in cold.find_cold(72 * HOUR, max_access=2)] == [rarely.id]
    assert {d.id for d in cold.find_cold(72 * HOUR, max_access=3)} == {rarely.id, often.id}


async def test_the_index_is_rebuilt_from_the_files_at_start(
    tmp_path: Path, embedder, clock, tasks: KernelTasks
) -> None:
    first = store(tmp_path / "c", embedder, clock, tasks=tasks)
    doc = await first.commit("coffee beans from kenya")
    await first.query("coffee", top=1)
    await first.close()  # its read count written
    second = store(tmp_path / "c", embedder, clock, tasks=tasks)
    hits = await second.query("kenya coffee", top=3)
    assert [h.doc.id for h in hits] == [doc.id]
    assert hits[0].doc.access_count == 2, "access count was not kept on disk"


async def test_a_damaged_document_is_reported_skipped_and_kept_in_the_store(
    tmp_path: Path, embedder, clock, bus: EventBus, published: list[Event], tasks: KernelTasks
) -> None:
    first = store(tmp_path / "c", embedder, clock, tasks=tasks)
    good = await first.commit("coffee beans")
    bad = await first.commit("tea leaves")
    with sqlite3.connect(tmp_path / "c" / "turns.db") as db:
        db.execute("UPDATE turns SET media = '[{\"digest\": ' WHERE id = ?", (bad.id,))
    second = store(tmp_path / "c", embedder, clock, bus, tasks=tasks)
    await second.wait_ready()
    assert [d.id for d in second.documents()] == [good.id]
    assert len(second.problems) == 1 and bad.id in second.problems[0]
    assert "field 'media'" in second.problems[0]
    with sqlite3.connect(tmp_path / "c" / "turns.db") as db:
        assert db.execute("SELECT text FROM turns WHERE id = ?", (bad.id,)).fetchone() == (
            "tea leaves",
        ), "the damaged row was not kept for a repair"
    assert any(
        e.type == EventType.MEMORY_DEGRADED and e.payload.layer == "coldcontext" for e in published
    )


async def test_a_store_damaged_on_disk_is_reported_and_recall_goes_on(
    tmp_path: Path, embedder, clock, bus: EventBus, published: list[Event], tasks: KernelTasks
) -> None:
    """A page of the turn store overwritten (disk damage) under the cold context's rows:
    its load says so, and a search answers (without it) instead of raising the load's
    error at every recall."""
    first = store(tmp_path / "c", embedder, clock, tasks=tasks)
    for n in range(40):
        await first.commit(f"note {n}: " + "coffee beans and tea leaves " * 40)
    await first.close()
    first.turns.close()
    path = tmp_path / "c" / "turns.db"
    damage_a_page(path)
    second = store(tmp_path / "c", embedder, clock, bus, tasks=tasks)
    await second.wait_ready()
    assert any("could not be read" in p and "malformed" in p for p in second.problems)
    assert await second.query("coffee beans") == []
    assert any(
        e.type == EventType.MEMORY_DEGRADED and e.payload.layer == "coldcontext" for e in published
    )


async def test_documents_of_another_fingerprint_are_recomputed_and_written_back(
    tmp_path: Path, clock, bus: EventBus, published: list[Event], tasks: KernelTasks
) -> None:
    old = store(tmp_path / "c", AxisEmbedder("v1", ["coffee", "rain"]), clock, tasks=tasks)
    doc = await old.commit("rain again")
    new_embedder = AxisEmbedder("v2", ["rain", "coffee"])
    new = store(tmp_path / "c", new_embedder, clock, bus, tasks=tasks)
    await new.wait_ready()
    assert new_embedder.embedded == ["rain again"]
    stored = new.turns.get(doc.id)
    assert stored is not None and stored.vector is not None
    assert stored.vector.fingerprint == "axis/2/v2"
    hits = await new.query("rain", top=1)
    assert hits[0].cosine == pytest.approx(1.0)
    progress = [e.payload for e in published if e.type == EventType.MEMORY_REEMBED]
    assert progress[-1].done == progress[-1].total == 1


async def test_related_docs_section_fits_its_budget_and_is_empty_without_hits(
    cold: ColdContext,
) -> None:
    for text in ("coffee one", "coffee two two", "coffee three three three"):
        await cold.commit(text)
    hits = await cold.query("coffee", top=3)
    full = related_docs_section(hits, 10_000, estimate=len)
    assert full.startswith("[Related Memory Docs]\n- (") and full.count("\n- ") == 3
    one_line = len("[Related Memory Docs]") + len(full.splitlines()[1])
    assert related_docs_section(hits, one_line, estimate=len).count("\n- ") == 1
    assert related_docs_section(hits, 5, estimate=len) == ""
    assert related_docs_section([], 10_000, estimate=len) == ""


async def test_chinese_and_english_recall_with_the_default_embedder(
    tmp_path: Path, clock, tasks: KernelTasks
) -> None:
    cold = store(tmp_path / "c", HashedNgramEmbedder(), clock, tasks=tasks)
    zh = await cold.commit("我女儿在上海读大学，学的是建筑设计")
    en = await cold.commit("My brother fixes bicycles in Portland")
    await cold.commit("今天下雨了，没有出门")
    assert (await cold.query("女儿在哪里上大学？", top=1))[0].doc.id == zh.id
    assert (await cold.query("who repairs bikes? my brother", top=1))[0].doc.id == en.id
