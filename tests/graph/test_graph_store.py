"""The graph store: temporal facts, recall, merge, edit, purge, delete, schema."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import GraphError, GraphStore, Triple, UnknownEntity
from hologram.memory.graph.base import CorruptGraph
from hologram.memory.graph.schema import SCHEMA_VERSION, SchemaTooNew
from tests.memory.helpers import AxisEmbedder


async def test_a_contradicted_fact_is_closed_not_deleted(graph: GraphStore, clock) -> None:
    first = await graph.commit(
        [Triple("Alice", "lives_in", "Paris", sentence_text="I live in Paris")]
    )
    await clock.advance(3600)
    second = await graph.commit([Triple("alice", "lives in", "Berlin")])
    assert second.closed == first.added
    current = await graph.facts(entity="Alice")
    assert [(f.relation, f.target) for f in current] == [("lives_in", "Berlin")]
    history = await graph.facts(entity="Alice", history=True)
    old = next(f for f in history if f.target == "Paris")
    assert old.invalid_at == clock.now() and old.closed_reason == "superseded"
    assert old.replaced_by == second.added[0] and old.sentence_text == "I live in Paris"
    rows = sqlite3.connect(graph.path).execute("SELECT COUNT(*) FROM relations").fetchone()
    assert rows == (2,)


async def test_recall_shows_current_facts_unless_asked_for_history(graph: GraphStore) -> None:
    await graph.commit([Triple("Alice", "lives_in", "Paris")])
    await graph.commit([Triple("Alice", "lives_in", "Berlin")])
    now = await graph.recall(["alice"])
    assert [f.target for f in now.facts] == ["Berlin"]
    then = await graph.recall(["alice"], history=True)
    assert {f.target for f in then.facts} == {"Berlin", "Paris"}
    assert then.facts[0].target == "Berlin", "a current fact outranks a closed one"
    assert "no longer true" in then.text()


async def test_a_multi_valued_relation_keeps_every_value(graph: GraphStore) -> None:
    await graph.commit([Triple("Alice", "likes", "coffee"), Triple("Alice", "likes", "tea")])
    assert {f.target for f in await graph.facts(entity="Alice")} == {"coffee", "tea"}


async def test_an_explicitly_exclusive_triple_closes_the_old_value(graph: GraphStore) -> None:
    await graph.commit([Triple("Alice", "drives", "a Fiat")])
    report = await graph.commit([Triple("Alice", "drives", "a Tesla", exclusive=True)])
    assert len(report.closed) == 1


async def test_committing_a_known_fact_confirms_it_without_a_duplicate(graph: GraphStore) -> None:
    first = await graph.commit([Triple("Alice", "likes", "tea", confidence=0.5)])
    again = await graph.commit([Triple("ALICE", "likes", "tea", confidence=0.9)])
    assert again.added == [] and again.confirmed == first.added
    (fact,) = await graph.facts(entity="alice")
    assert fact.confidence == 0.9
    assert (await graph.entity("alice")).mention_count == 2


async def test_recall_depth_bounds_the_walk(graph: GraphStore) -> None:
    await graph.commit(
        [Triple("A1", "knows", "B2"), Triple("B2", "knows", "C3"), Triple("C3", "knows", "D4")]
    )
    one = await graph.recall(["A1"], depth=1)
    assert [(f.source, f.target) for f in one.facts] == [("A1", "B2")]
    two = await graph.recall(["A1"], depth=2)
    assert {(f.source, f.target) for f in two.facts} == {("A1", "B2"), ("B2", "C3")}
    assert {e.name: e.depth for e in two.entities} == {"A1": 0, "B2": 1, "C3": 2}
    assert (await graph.recall(["A1"], depth=0)).facts == []


async def test_recall_ranks_near_and_confident_facts_first(graph: GraphStore) -> None:
    await graph.commit(
        [
            Triple("Alice", "knows", "Bob", confidence=0.8),
            Triple("Alice", "works_at", "Acme"),
            Triple("Acme", "located_in", "Lyon"),
        ]
    )
    result = await graph.recall(["Alice"])
    assert [f.target for f in result.facts] == ["Acme", "Bob", "Lyon"]
    assert result.entities[0].name == "Alice" and result.entities[0].matched == "exact"


async def test_recall_finds_by_alias_prefix_and_substring(graph: GraphStore) -> None:
    await graph.commit(
        [Triple("Alexandra Smith", "likes", "jazz"), Triple("北京市", "is_a", "城市")]
    )
    await graph.edit_entity("Alexandra Smith", new_name="Alex Smith")
    assert (await graph.recall(["alexandra smith"])).entities[0].matched == "alias"
    assert (await graph.recall(["alex"])).entities[0].matched == "prefix"
    assert (await graph.recall(["smith"])).entities[0].matched == "substring"
    assert (await graph.recall(["北京"])).entities[0].name == "北京市"


async def test_an_unknown_entity_is_a_clear_error_with_suggestions(graph: GraphStore) -> None:
    await graph.commit([Triple("Alice", "likes", "tea")])
    with pytest.raises(UnknownEntity, match=r"no entity named 'Alicia'.*did you mean: Alice"):
        await graph.entity("Alicia")
    with pytest.raises(GraphError, match="non-empty"):
        await graph.commit([Triple("  ", "likes", "tea")])


async def test_merge_redirects_relations_sums_mentions_and_keeps_an_alias(
    graph: GraphStore,
) -> None:
    await graph.commit(
        [
            Triple("张三", "likes", "咖啡"),
            Triple("张先生", "lives_in", "上海"),
            Triple("张先生", "likes", "咖啡"),
            Triple("李四", "knows", "张先生"),
        ]
    )
    report = await graph.merge("张三", "张先生")
    assert (report.kept, report.merged, report.redirected) == ("张三", "张先生", 3)
    assert report.closed == 1, "the duplicate 'likes 咖啡' is closed, not lost"
    entity = await graph.entity("张先生")
    assert entity.name == "张三" and entity.aliases == ["张先生"] and entity.mention_count == 4
    facts = {(f.source, f.relation, f.target) for f in await graph.facts(entity="张三")}
    assert facts == {
        ("张三", "likes", "咖啡"),
        ("张三", "lives_in", "上海"),
        ("李四", "knows", "张三"),
    }
    with pytest.raises(GraphError, match="already the same entity"):
        await graph.merge("张三", "张先生")


async def test_editing_a_fact_closes_it_and_points_to_the_new_one(graph: GraphStore) -> None:
    (fact_id,) = (await graph.commit([Triple("Bob", "works_at", "Acmee")])).added
    new_id = await graph.edit_relation(fact_id, target="Acme")
    old = await graph.fact(fact_id)
    assert old.closed_reason == "edited" and old.replaced_by == new_id
    assert [f.target for f in await graph.facts(entity="Bob")] == ["Acme"]
    with pytest.raises(GraphError, match="closed"):
        await graph.edit_relation(fact_id, target="Other")


async def test_purge_retires_an_entity_but_history_keeps_its_facts(graph: GraphStore) -> None:
    await graph.commit([Triple("Carol", "likes", "chess"), Triple("Carol", "knows", "Dave")])
    assert await graph.purge("Carol") == 2
    assert (await graph.recall(["carol"])).facts == []
    assert len(await graph.facts(entity="Carol", history=True)) == 2


async def test_delete_entity_erases_it_and_its_facts(graph: GraphStore) -> None:
    await graph.commit([Triple("Eve", "likes", "secrets"), Triple("Frank", "knows", "Eve")])
    assert await graph.delete_entity("Eve") == 2
    with pytest.raises(UnknownEntity):
        await graph.entity("Eve")
    assert await graph.facts(history=True) == []


async def test_a_failed_commit_writes_nothing(graph: GraphStore) -> None:
    with pytest.raises(GraphError, match="no memory block"):
        await graph.commit(
            [
                Triple(
                    "Gina", "took", "a photo", sentence_text="look", media_digests=("deadbeef0000",)
                )
            ]
        )
    assert (await graph.stats())["entities"] == 0


async def test_the_schema_is_migrated_and_versioned(tmp_path: Path, tasks: KernelTasks) -> None:
    store = await GraphStore.open_at(
        tmp_path / "g.db", AxisEmbedder(), ManualClock(), tasks=tasks.scope("graph")
    )
    assert (await store.stats())["schema_version"] == SCHEMA_VERSION
    await store.close()
    again = GraphStore(tmp_path / "g.db", AxisEmbedder(), ManualClock(), tasks=tasks.scope("graph"))
    assert await again.open() == [], "an up-to-date database is not migrated again"
    await again.close()
    sqlite3.connect(tmp_path / "g.db").execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SchemaTooNew, match="upgrade Hologram"):
        await GraphStore.open_at(
            tmp_path / "g.db", AxisEmbedder(), ManualClock(), tasks=tasks.scope("graph")
        )


async def test_a_corrupt_database_is_refused_and_left_untouched(
    tmp_path: Path, tasks: KernelTasks
) -> None:
    path = tmp_path / "graph.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(CorruptGraph, match="left as it is"):
        await GraphStore.open_at(path, AxisEmbedder(), ManualClock(), tasks=tasks.scope("graph"))
    assert path.read_bytes() == b"this is not sqlite" * 100
