"""The memory tools and social tools, with good and bad arguments; the indexer section."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import (
    MEMORY_INDEX_HEADER,
    GraphStore,
    Segmenter,
    Triple,
)
from hologram.memory.graph.indexer import Indexer
from hologram.memory.graph.social import Social, social_tools
from hologram.memory.graph.tools import graph_tools
from hologram.sdk import ToolDef, ToolError
from tests.calling import call_tool
from tests.memory.helpers import AxisEmbedder


@pytest.fixture
async def kit(graph: GraphStore) -> AsyncIterator[dict[str, ToolDef]]:
    indexer = Indexer(graph, Segmenter().keywords)

    async def introspect() -> str:
        stats = await graph.stats()
        return f"{stats['entities']} entities"

    tools = {t.name: t for t in graph_tools(graph, indexer, introspect)}
    tools.update({t.name: t for t in social_tools(Social(graph))})
    tools["_indexer"] = indexer  # type: ignore[assignment]
    yield tools


call = call_tool


async def test_memory_commit_and_recall_round_trip(kit, graph: GraphStore) -> None:
    reply = await call(
        kit,
        "memory_commit",
        triples=[
            {"source": "Alice", "relation": "lives_in", "target": "Paris"},
            {"source": "Alice", "relation": "likes", "target": "jazz", "confidence": 0.8},
        ],
        sentence_text="Alice said she lives in Paris and likes jazz",
    )
    assert reply == "Stored 2 new fact(s)."
    text = await call(kit, "memory_recall", query="Alice")
    assert "Alice —lives_in→ Paris" in text and "Alice —likes→ jazz (confidence 0.80)" in text
    assert (
        await call(kit, "memory_recall", keywords=["nobody"]) == "Nothing in memory matches that."
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "needs 'triples'"),
        ({"triples": []}, "triples: \\[\\] has less than 1 item"),
        ({"triples": [{"source": "A", "relation": "r"}]}, r"triples\[0\]: needs 'target'"),
        (
            {"triples": [{"source": "A", "relation": "r", "target": "B", "confidence": 3}]},
            r"triples\[0\].confidence: 3 is greater than the maximum of 1",
        ),
        (
            {"triples": [{"source": "A", "relation": "r", "target": "B"}], "media_digests": ["x"]},
            "hang off a sentence",
        ),
        (
            {
                "triples": [{"source": "A", "relation": "r", "target": "B"}],
                "sentence_text": "s",
                "media_digests": ["abcabcabcabc"],
            },
            "no memory block",
        ),
    ],
)
async def test_memory_commit_refuses_bad_arguments(kit, graph, args, message) -> None:
    with pytest.raises(ToolError, match=message):
        await call(kit, "memory_commit", **args)
    assert (await graph.stats())["entities"] == 0


async def test_memory_recall_refuses_bad_arguments(kit) -> None:
    with pytest.raises(ToolError, match="needs 'query'"):
        await call(kit, "memory_recall")
    with pytest.raises(ToolError, match="depth: 9 is greater than the maximum of 4"):
        await call(kit, "memory_recall", query="x", depth=9)
    with pytest.raises(ToolError, match='history: "yes" is not of type "boolean"'):
        await call(kit, "memory_recall", query="x", history="yes")


async def test_memory_recall_with_history_shows_closed_facts(kit, graph: GraphStore) -> None:
    await graph.commit([Triple("Bob", "lives_in", "Rome")])
    await graph.commit([Triple("Bob", "lives_in", "Oslo")])
    assert "Rome" not in await call(kit, "memory_recall", query="Bob")
    assert "Rome [no longer true: superseded]" in await call(
        kit, "memory_recall", query="Bob", history=True
    )


async def test_memory_merge_and_its_errors(kit, graph: GraphStore) -> None:
    await graph.commit([Triple("张三", "likes", "茶"), Triple("张先生", "lives_in", "上海")])
    reply = await call(kit, "memory_merge", keep="张三", merge="张先生")
    assert "1 relation(s) redirected" in reply and "kept as an alias" in reply
    with pytest.raises(ToolError, match="no entity named '王五'"):
        await call(kit, "memory_merge", keep="张三", merge="王五")
    with pytest.raises(ToolError, match="needs 'merge'"):
        await call(kit, "memory_merge", keep="张三")


async def test_memory_edit_fact_entity_and_close(kit, graph: GraphStore) -> None:
    (fact_id,) = (await graph.commit([Triple("Carol", "works_at", "Acmee")])).added
    assert "replaced by" in await call(kit, "memory_edit", fact_id=fact_id, target="Acme")
    (current,) = await graph.facts(entity="Carol")
    assert "closed" in await call(kit, "memory_edit", fact_id=current.id, close=True)
    assert await graph.facts(entity="Carol") == []
    assert "now 'Caroline'" in await call(kit, "memory_edit", entity="Carol", new_name="Caroline")
    with pytest.raises(ToolError, match='fact_id: "7" is not of type "integer"'):
        await call(kit, "memory_edit", fact_id="7")
    with pytest.raises(ToolError, match="no fact #999"):
        await call(kit, "memory_edit", fact_id=999, target="x")
    with pytest.raises(ToolError, match="needs 'fact_id'"):
        await call(kit, "memory_edit")
    with pytest.raises(ToolError, match="needs 'new_name' or 'type'"):
        await call(kit, "memory_edit", entity="Caroline")
    with pytest.raises(ToolError, match="no entity named 'Zed'"):
        await call(kit, "memory_edit", entity="Zed", type="person")


async def test_memory_purge_and_delete_entity(kit, graph: GraphStore) -> None:
    await graph.commit([Triple("Dan", "likes", "golf"), Triple("Eve", "likes", "chess")])
    assert "1 fact(s) closed" in await call(kit, "memory_purge", entity="Dan")
    assert "Erased 'Eve' and 1 fact(s)" in await call(kit, "memory_delete_entity", entity="Eve")
    with pytest.raises(ToolError, match="no entity named 'Eve'"):
        await call(kit, "memory_delete_entity", entity="Eve")
    with pytest.raises(ToolError, match='entity: "  " is blank'):
        await call(kit, "memory_purge", entity="  ")


async def test_memory_introspect_reports(kit) -> None:
    assert await call(kit, "memory_introspect") == "0 entities"


async def test_social_tools_over_the_same_store(kit, graph: GraphStore) -> None:
    assert "humour=dry" in await call(kit, "set_trait", name="Alice", trait="humour", value="dry")
    assert "Noted #" in await call(kit, "relate", person="Alice", relation="friend_of", other="Bob")
    text = await call(kit, "person_query", name="alice")
    assert "Alice (person" in text and "humour: dry" in text and "friend_of→ Bob" in text
    assert (await graph.entity("Bob")).type == "person"
    with pytest.raises(ToolError, match="no entity named 'Zoe'"):
        await call(kit, "person_query", name="Zoe")
    with pytest.raises(ToolError, match="needs 'value'"):
        await call(kit, "set_trait", name="Alice", trait="mood")
    with pytest.raises(ToolError, match=r'value: \{"x":1\} is not of type'):
        await call(kit, "set_trait", name="Alice", trait="mood", value={"x": 1})
    with pytest.raises(ToolError, match="needs 'other'"):
        await call(kit, "relate", person="Alice", relation="knows")
    await call(kit, "set_trait", name="Alice", trait="humour", value=None)
    assert (await graph.entity("Alice")).traits == {}


async def test_the_indexer_builds_the_memory_index_section_within_budget(kit, graph) -> None:
    indexer: Indexer = kit["_indexer"]  # type: ignore[assignment]
    await graph.commit(
        [
            Triple("小明", "lives_in", "杭州"),
            Triple("小明", "likes", "龙井茶"),
            Triple("杭州", "located_in", "浙江"),
        ]
    )
    section = await indexer.build_context("小明最近怎么样", 200)
    lines = section.splitlines()
    assert lines[0] == MEMORY_INDEX_HEADER and "小明 —lives_in→ 杭州" in section
    assert "杭州 —located_in→ 浙江" in section, "two hops from the seed"
    small = await indexer.build_context("小明最近怎么样", 25)
    assert 1 < len(small.splitlines()) < len(lines)
    assert await indexer.build_context("天气", 200) == ""


async def test_mark_recalled_keeps_tool_fetched_entities_out_of_the_next_injection(
    kit, graph
) -> None:
    indexer: Indexer = kit["_indexer"]  # type: ignore[assignment]
    await graph.commit([Triple("小明", "likes", "龙井茶"), Triple("小红", "likes", "咖啡")])
    indexer.begin_turn()
    await call(kit, "memory_recall", query="小明")
    assert "小明" not in await indexer.build_context("小明和小红", 200)
    assert "小红" in await indexer.build_context("小明和小红", 200)
    indexer.begin_turn()  # the next turn: the tool output is in the timeline now
    assert "小明" not in await indexer.build_context("小明和小红", 200)
    indexer.begin_turn()
    assert "小明" in await indexer.build_context("小明和小红", 200)


async def test_the_indexer_finds_seeds_by_entity_vector(tmp_path: Path, tasks: KernelTasks) -> None:
    store = await GraphStore.open_at(
        tmp_path / "g.db", AxisEmbedder(), ManualClock(), tasks=tasks.scope("graph")
    )
    await store.commit([Triple("coffee", "served_at", "Blue Door")])
    indexer = Indexer(store, lambda text: [], min_similarity=0.5)
    section = await indexer.build_context("I want some coffee", 200)
    assert "coffee —served_at→ Blue Door" in section
    assert indexer.last_recall and indexer.last_recall.entities[0].matched == "vector"
    await store.close()
