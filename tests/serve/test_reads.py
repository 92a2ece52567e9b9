"""The read endpoints over memory and knowledge, against the real service in its own process.

What they read is put there the way a user's kernel gets it: the scripted model calls the
agent's own tools (`memory_commit`, `coldcontext_commit`) in a turn, and the knowledge base is
files in the data dir, as a person would write them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.serve.harness import ScriptedModel, Service

TRIPLES = [
    {"source": "Alice", "relation": "lives_in", "target": "Paris", "source_type": "person"},
    {"source": "Alice", "relation": "likes", "target": "green tea"},
    {"source": "Paris", "relation": "located_in", "target": "France"},
]
NOTE = "the spare key is under the blue flowerpot"


def write_knowledge(data_dir: Path, name: str, content: str) -> None:
    folder = data_dir / "knowledge" / name
    folder.mkdir(parents=True)
    (folder / "content.md").write_text(content, encoding="utf-8")


@pytest.fixture(scope="module")
def remembered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One service whose kernel remembered TRIPLES and NOTE through the model's tool calls,
    with three knowledge entries on disk. Reads change nothing, so the tests share it."""
    data_dir = tmp_path_factory.mktemp("reads") / "data"
    data_dir.mkdir()
    write_knowledge(data_dir, "cooking/bread/sourdough", "Feed the starter flour and water.")
    write_knowledge(data_dir, "cooking/tea", "Green tea steeps at 80 degrees for two minutes.")
    write_knowledge(data_dir, "travel/paris", "The metro runs until about one in the morning.")
    model = ScriptedModel().start()
    service = Service(data_dir, env=model.env)
    try:
        model.queue(
            {
                "tool_calls": [
                    {"id": "c1", "name": "memory_commit", "arguments": {"triples": TRIPLES}},
                    {"id": "c2", "name": "coldcontext_commit", "arguments": {"content": NOTE}},
                ]
            },
            {"text": "noted"},
        )
        service.start()
        with service.client() as http:
            result = http.post("/input/sync", json={"text": "Alice moved to Paris"}).json()
        assert result["reply"] == "noted", result
        yield service
    finally:
        service.ensure_stopped()
        model.stop()


@pytest.fixture
def http(remembered: Service) -> Iterator[httpx.Client]:
    with remembered.client() as client:
        yield client


def test_the_context_window_shows_the_turn_and_its_tool_results(http: httpx.Client) -> None:
    events = http.get("/context").json()["events"]
    replies = [e for e in events if e["response"] == "noted"]
    assert len(replies) == 1
    tools = dict(replies[0]["tools"])
    assert set(tools) == {"memory_commit", "coldcontext_commit"}
    assert "Stored 3 new fact(s)" in tools["memory_commit"]


def test_a_cold_context_query_ranks_the_committed_note_first(http: httpx.Client) -> None:
    answer = http.get("/coldcontext/query", params={"q": "where is the spare key", "top": 3})
    hits = answer.json()["hits"]
    assert hits[0]["input"] == NOTE
    assert hits[0]["access_count"] >= 1, "a query is an access, as documented"
    listing = http.get("/coldcontext", params={"contains": "flowerpot"}).json()
    assert [d["input"] for d in listing["documents"]] == [NOTE]


def test_a_cold_context_query_needs_text(http: httpx.Client) -> None:
    answer = http.get("/coldcontext/query", params={"q": "  "})
    assert answer.status_code == 400
    assert "'q' is required" in answer.json()["error"]


def test_graph_stats_and_entities_count_what_was_committed(http: httpx.Client) -> None:
    graph = http.get("/graph").json()
    assert graph["stats"]["current_facts"] == 3
    assert "heartbeat" in graph
    entities = {e["name"]: e for e in http.get("/graph/entities").json()["entities"]}
    assert set(entities) == {"Alice", "Paris", "green tea", "France"}
    assert entities["Alice"]["type"] == "person"


def test_an_entity_is_read_with_its_facts(http: httpx.Client) -> None:
    answer = http.get("/graph/entities/alice").json()
    assert answer["entity"]["name"] == "Alice"
    lines = sorted((f["source"], f["relation"], f["target"]) for f in answer["facts"])
    assert lines == [("Alice", "likes", "green tea"), ("Alice", "lives_in", "Paris")]
    assert all(f["current"] for f in answer["facts"])
    missing = http.get("/graph/entities/Bob")
    assert missing.status_code == 404
    assert "no entity named 'Bob'" in missing.json()["error"]


def test_facts_of_the_whole_graph_or_one_entity(http: httpx.Client) -> None:
    every = http.get("/graph/facts").json()["facts"]
    assert len(every) == 3
    france = http.get("/graph/facts", params={"entity": "France"}).json()["facts"]
    assert [(f["source"], f["target"]) for f in france] == [("Paris", "France")]
    assert france[0]["line"].startswith(f"#{france[0]['id']} Paris")
    bad = http.get("/graph/facts", params={"history": "maybe"})
    assert bad.status_code == 400


def test_graph_recall_walks_from_the_names_in_a_text(http: httpx.Client) -> None:
    recall = http.get("/graph/recall", params={"q": "what about Alice", "depth": 2}).json()
    facts = {(f["source"], f["relation"], f["target"]) for f in recall["facts"]}
    # Two hops: Alice → Paris → France.
    assert ("Paris", "located_in", "France") in facts
    assert ("Alice", "lives_in", "Paris") in facts
    assert recall["entities"][0]["name"] == "Alice"
    near = http.get("/graph/recall", params={"keywords": "Alice", "depth": 1}).json()
    assert ("Paris", "located_in", "France") not in {
        (f["source"], f["relation"], f["target"]) for f in near["facts"]
    }
    nothing = http.get("/graph/recall")
    assert nothing.status_code == 400


def test_knowledge_lists_entries_and_categories(http: httpx.Client) -> None:
    every = http.get("/knowledge").json()
    assert every["entries"] == ["cooking/bread/sourdough", "cooking/tea", "travel/paris"]
    assert every["categories"] == {"cooking": 2, "cooking/bread": 1, "travel": 1}
    cooking = http.get("/knowledge", params={"category": "cooking"}).json()
    assert cooking["entries"] == ["cooking/bread/sourdough", "cooking/tea"]
    bad = http.get("/knowledge", params={"category": "../etc"})
    assert bad.status_code == 400


def test_knowledge_search_and_one_entry(http: httpx.Client) -> None:
    hits = http.get("/knowledge/search", params={"q": "green tea steeping"}).json()["hits"]
    assert hits[0]["name"] == "cooking/tea"
    assert "80 degrees" in hits[0]["snippet"]
    inside = http.get("/knowledge/search", params={"q": "tea", "category": "travel"}).json()
    assert all(h["name"].startswith("travel/") for h in inside["hits"])
    entry = http.get("/knowledge/entries/cooking/bread/sourdough").json()
    assert entry["title"] == "sourdough"
    assert entry["category"] == "cooking/bread"
    assert entry["content"].startswith("Feed the starter")
    missing = http.get("/knowledge/entries/cooking/cake")
    assert missing.status_code == 404
    assert "no knowledge entry 'cooking/cake'" in missing.json()["error"]


def test_reading_leaves_the_journal_and_the_graph_as_they_were(http: httpx.Client) -> None:
    before = http.get("/status").json()["inputs"]
    for path in ("/graph/entities", "/graph/facts", "/knowledge", "/context"):
        http.get(path).raise_for_status()
    http.get("/graph/recall", params={"q": "Alice"}).raise_for_status()
    assert http.get("/status").json()["inputs"] == before
    assert http.get("/graph").json()["stats"]["current_facts"] == 3


def test_every_read_endpoint_is_in_the_openapi_document(http: httpx.Client) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    for path in (
        "/coldcontext/query",
        "/graph",
        "/graph/entities",
        "/graph/entities/{name}",
        "/graph/facts",
        "/graph/recall",
        "/knowledge",
        "/knowledge/search",
        "/knowledge/entries/{name}",
    ):
        assert set(paths[path]) == {"get"}, path
        assert paths[path]["get"]["responses"]["200"], path
