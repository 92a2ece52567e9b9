"""The knowledge base: files on disk, categories from folders, its own bigram TF-IDF index."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.kernel import KernelTasks
from hologram.knowledge import KnowledgeBase, KnowledgeError, knowledge_tools
from hologram.sdk import ToolError
from tests.calling import call_tool


@pytest.fixture
async def kb(tmp_path: Path, tasks: KernelTasks) -> AsyncIterator[KnowledgeBase]:
    base = KnowledgeBase(tmp_path / "knowledge", tasks=tasks.scope("knowledge"))
    await base.wait_ready()
    yield base
    await base.close()


async def test_an_entry_is_a_content_md_in_its_folder(kb: KnowledgeBase) -> None:
    entry = await kb.create("cooking/bread/sourdough", "# Sourdough\n酸面包需要天然酵母 starter.")
    path = kb.root / "cooking" / "bread" / "sourdough" / "content.md"
    assert path.read_text("utf-8").startswith("# Sourdough")
    assert (entry.category, entry.title) == ("cooking/bread", "sourdough")


async def test_search_ranks_by_bigram_tfidf_and_adds_are_incremental(kb: KnowledgeBase) -> None:
    await kb.create("tea/longjing", "龙井茶产于杭州西湖，是绿茶。")
    await kb.create("tea/puer", "普洱茶产于云南，是黑茶。")
    assert next(h.name for h in await kb.search("西湖龙井")) == "tea/longjing"
    await kb.create("coffee/espresso", "Espresso is coffee brewed under pressure.")
    assert [h.name for h in await kb.search("espresso pressure")] == ["coffee/espresso"]


async def test_category_views_subtree_counts_and_search_within(kb: KnowledgeBase) -> None:
    await kb.create("cooking/bread/sourdough", "starter flour water salt")
    await kb.create("cooking/bread/bagel", "boiled then baked bread")
    await kb.create("cooking/soup/miso", "miso soup with tofu")
    await kb.create("travel/kyoto", "temples and tofu")
    assert await kb.list("cooking/bread") == ["cooking/bread/bagel", "cooking/bread/sourdough"]
    assert await kb.categories() == {
        "cooking": 3,
        "cooking/bread": 2,
        "cooking/soup": 1,
        "travel": 1,
    }
    assert await kb.categories("cooking/soup") == {"cooking/soup": 1}
    assert [h.name for h in await kb.search("tofu", category="travel")] == ["travel/kyoto"]


async def test_the_index_is_rebuilt_from_the_folders_at_start(
    tmp_path: Path, tasks: KernelTasks
) -> None:
    first = KnowledgeBase(tmp_path / "k", tasks=tasks.scope("knowledge"))
    await first.create("notes/a", "the quick brown fox")
    second = KnowledgeBase(tmp_path / "k", tasks=tasks.scope("knowledge"))
    assert [h.name for h in await second.search("brown fox")] == ["notes/a"]


async def test_media_bytes_live_in_the_entry_folder(kb: KnowledgeBase) -> None:
    png = b"\x89PNG" + bytes(20)
    entry = await kb.create("birds/heron", "a grey heron", media=[("image/png", png)])
    (item,) = entry.media
    assert (kb.root / "birds" / "heron" / item["file"]).read_bytes() == png
    assert await kb.media_bytes("birds/heron", item["file"]) == png
    await kb.remove("birds/heron")
    assert not (kb.root / "birds" / "heron").exists()


async def test_bad_names_and_duplicates_are_refused(kb: KnowledgeBase) -> None:
    await kb.create("a/b", "text")
    for bad in ("", "../etc", "a/./b", ".hidden", "x/<y>"):
        with pytest.raises(KnowledgeError):
            await kb.create(bad, "text")
    with pytest.raises(KnowledgeError, match="already exists"):
        await kb.create("a/b", "other")
    with pytest.raises(KnowledgeError, match="is a category"):
        await kb.create("a", "other")
    await kb.create("a/b", "replaced", replace=True)
    assert (await kb.get("a/b")).content == "replaced"


async def test_knowledge_tools_and_their_errors(kb: KnowledgeBase) -> None:
    tools = {t.name: t for t in knowledge_tools(kb)}
    assert "Saved" in await call_tool(
        tools, "knowledge_create", name="pets/cat", content="猫喜欢鱼"
    )
    assert "pets/cat" in await call_tool(tools, "knowledge_search", query="猫")
    listing = await call_tool(tools, "knowledge_list")
    assert "pets: 1" in listing and "pets/cat" in listing
    with pytest.raises(ToolError, match="needs 'query'"):
        await call_tool(tools, "knowledge_search")
    with pytest.raises(ToolError, match="top: 0 is less than the minimum of 1"):
        await call_tool(tools, "knowledge_search", query="x", top=0)
    with pytest.raises(ToolError, match="knowledge name"):
        await call_tool(tools, "knowledge_create", name="", content="x")


async def test_the_knowledge_index_is_independent_of_memory(data_dir: Path) -> None:
    async with Kernel(data_dir) as kernel:
        state = kernel.state
        await state.knowledge.create("facts/vet", "Dr. Okafor is the cat's vet on Elm Street")
        assert "knowledge_search" in state.stagehost.tools
        assert len(state.coldcontext) == 0, "nothing of knowledge entered memory"
        assert (await state.graph.store.recall(["okafor"])).entities == []
        await state.coldcontext.commit("The dog's groomer is on Pine Road")
        assert [h.name for h in await state.knowledge.search("groomer Pine Road")] == []
        assert state.knowledge.index is not None and len(state.knowledge.index) == 1
