"""The context window's rules (spec: RelevanceContext), with an embedder whose cosines can be
read off the texts: each topic word is one axis."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from hologram.events import EventBus
from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import (
    ContextWindow,
    Fate,
    ToolOutput,
)
from hologram.memory.turns import TurnStore
from hologram.memory.window import context as context_module
from hologram.memory.window.event import text_for_vector
from hologram.sdk import EmbedderUnavailable, Event, EventType, ToolDef
from tests.memory.helpers import AxisEmbedder, damage_a_page


async def fill(window: ContextWindow, clock: ManualClock, texts: list[str], source: str = "qq"):
    events = []
    for text in texts:
        await clock.advance(60)
        events.append(await window.append(source, input=text))
    return events


async def test_no_prune_while_the_window_holds_at_most_top_k(window, clock) -> None:
    await fill(window, clock, ["coffee"] * 14)
    report = await window.prune("tea")
    assert not report.pruned and len(window) == 14 and report.entries == []


async def test_last_ten_events_are_never_pruned(window, clock, cold) -> None:
    relevant = await fill(window, clock, [f"coffee {i}" for i in range(10)])
    recent = await fill(window, clock, [f"rain {i}" for i in range(10)])
    report = await window.prune("coffee")
    ids = [e.id for e in window.events]
    assert all(e.id in ids for e in recent), "a protected event was pruned"
    assert report.ids(Fate.PROTECTED) == [e.id for e in recent]
    # top_k 14 − 10 protected = 4 candidates kept, the other 6 archived.
    assert len(window) == 14 and len(report.ids(Fate.KEPT)) == 4
    assert len(report.ids(Fate.ARCHIVED)) == 6 and len(cold) == 6
    assert set(report.ids(Fate.KEPT)) <= {e.id for e in relevant}


async def test_the_most_similar_candidates_are_the_ones_kept(window, clock) -> None:
    mixed = await fill(window, clock, ["dog", "coffee", "cat", "coffee tea", "sun", "coffee"])
    await fill(window, clock, ["rain"] * 10)
    report = await window.prune("coffee")
    kept = set(report.ids(Fate.KEPT))
    # The three coffee events score highest; the fourth place goes to the newest of the
    # zero scores (ties keep the newer event).
    assert kept == {mixed[1].id, mixed[3].id, mixed[5].id, mixed[4].id}
    scores = {e.event_id: e.score for e in report.entries if e.fate is not Fate.PROTECTED}
    assert scores[mixed[1].id] == 1.0 and scores[mixed[0].id] == 0.0
    assert abs(scores[mixed[3].id] - 2**-0.5) < 1e-6


async def test_top_k_below_the_protected_count_keeps_only_the_protected(
    tmp_path: Path, embedder, clock, cold, tasks: KernelTasks
) -> None:
    window = ContextWindow(
        cold.turns,
        embedder,
        clock,
        top_k=4,
        protected_recent=10,
        cold=cold,
        tasks=tasks.scope("memory"),
    )
    await window.open()
    events = await fill(window, clock, ["coffee"] * 13)
    report = await window.prune("coffee")
    # top_k − 10 is negative: the floor is 0, so every candidate goes, however relevant.
    assert [e.id for e in window.events] == [e.id for e in events[3:]]
    assert report.ids(Fate.KEPT) == [] and len(report.ids(Fate.ARCHIVED)) == 3


async def test_kept_events_are_back_in_chronological_order(window, clock) -> None:
    await fill(window, clock, ["coffee", "dog", "coffee", "cat", "coffee", "dog", "coffee"])
    await fill(window, clock, ["rain"] * 10)
    await window.prune("coffee")
    stamps = [e.timestamp for e in window.events]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)


async def test_pruned_agentcli_and_terminal_events_are_never_archived(window, clock, cold) -> None:
    await fill(window, clock, ["dog"], source="agentcli")
    await fill(window, clock, ["cat"], source="terminal")
    await fill(window, clock, ["sun"], source="qq")
    await fill(window, clock, ["coffee"] * 4 + ["rain"] * 10)
    report = await window.prune("coffee")
    fates = {e.text: e.fate for e in report.entries if e.fate is not Fate.PROTECTED}
    assert fates["dog"] is Fate.DROPPED and fates["cat"] is Fate.DROPPED  # agentcli, terminal
    assert fates["sun"] is Fate.ARCHIVED  # qq
    assert [d.input for d in cold.documents()] == ["sun"]


async def test_archived_events_keep_their_original_timestamps(window, clock, cold) -> None:
    old = await fill(window, clock, ["dog"])
    await fill(window, clock, ["coffee"] * 4 + ["rain"] * 10)
    await clock.advance(86_400)
    await window.prune("coffee")
    (doc,) = cold.documents()
    assert doc.created_at == old[0].timestamp and doc.stored_at == clock.now()


async def test_every_prune_publishes_each_candidates_score_and_fate(
    window, clock, published: list[Event]
) -> None:
    await fill(window, clock, ["dog", "coffee", "cat"] + ["coffee"] * 2 + ["rain"] * 10)
    report = await window.prune("coffee")
    (event,) = [e for e in published if e.type == EventType.CONTEXT_PRUNED]
    assert event.payload.query == "coffee" and event.payload.before == 15
    pruned = event.payload
    assert len(pruned.ids) == len(pruned.scores) == len(pruned.fates) == 15
    assert set(pruned.fates) == {"kept", "archived", "protected"}
    assert pruned.scores[:3] == [0.0, 1.0, 0.0] and pruned.scores[-10:] == [None] * 10
    assert [e.score for e in report.entries[:3]] == [0.0, 1.0, 0.0]
    assert window.last_prune is report


def test_vector_text_takes_the_response_of_agent_events() -> None:
    assert text_for_vector("agent", "what user said", "what I said") == "what I said"


def test_vector_text_takes_the_input_of_user_events() -> None:
    assert text_for_vector("qq", "what user said", "what I said") == "what user said"


def test_vector_text_takes_both_sides_of_cold_storage_events() -> None:
    assert text_for_vector("cold_storage", "asked", "answered") == "asked answered"


def test_vector_text_normalises_whitespace() -> None:
    assert text_for_vector("qq", "  a \n\n b\t c  ") == "a b c"


def test_vector_text_skips_no_memory_tools_and_applies_cleaners() -> None:
    tools = {
        "secret_read": ToolDef("secret_read", "d", handler=lambda a: "", no_memory=True),
        "qq_send": ToolDef(
            "qq_send", "d", handler=lambda a: "", cleaner=lambda s: json.loads(s)["content"]
        ),
        "broken": ToolDef("broken", "d", handler=lambda a: "", cleaner=lambda s: 1 / 0),
    }
    outputs = [
        ToolOutput("secret_read", "password hunter2"),
        ToolOutput("qq_send", '{"template": "<qq:at>", "content": "hello there"}'),
        ToolOutput("broken", "raw noise"),
        ToolOutput("unknown_tool", "plain output"),
    ]
    text = text_for_vector("agent", "", "ok", outputs, tools.get)
    assert text == "ok hello there plain output"


async def test_tool_outputs_are_stored_unchanged_while_the_vector_uses_the_cleaner(
    window, clock
) -> None:
    cleaning = ToolDef("qq_send", "d", handler=lambda a: "", cleaner=str.upper)
    window.connect_tools({"qq_send": cleaning}.get)
    event = await window.append(
        "agent", response="done", tool_outputs=[ToolOutput("qq_send", "hi")]
    )
    assert event.tool_outputs[0].content == "hi" and event.vector_text == "done HI"


async def test_vectors_of_another_fingerprint_are_never_compared_and_are_recomputed(
    tmp_path: Path, clock, tasks: KernelTasks
) -> None:
    old = AxisEmbedder("v1", ["coffee", "rain"])
    window = ContextWindow(
        TurnStore(tmp_path / "w" / "turns.db"),
        old,
        clock,
        top_k=1,
        protected_recent=1,
        tasks=tasks.scope("memory"),
    )
    await window.open()
    await fill(window, clock, ["coffee", "rain", "rain"])
    await window.close()
    # Same dimension, axes swapped: old vectors compared in the new space would say the
    # opposite of the truth, so the rain event would be kept for a coffee query.
    new = AxisEmbedder("v2", ["rain", "coffee"])
    window = ContextWindow(
        TurnStore(tmp_path / "w" / "turns.db"),
        new,
        clock,
        top_k=2,
        protected_recent=1,
        tasks=tasks.scope("memory"),
    )
    await window.open()
    assert len(window.stale()) == 3
    report = await window.prune("coffee")
    assert sorted(new.embedded[:3]) == ["coffee", "rain", "rain"], "stale vectors not recomputed"
    kept = [e.text for e in window.events if e.id in report.ids(Fate.KEPT)]
    assert kept == ["coffee"]
    await window.close()
    window = ContextWindow(
        TurnStore(tmp_path / "w" / "turns.db"),
        new,
        clock,
        top_k=2,
        protected_recent=1,
        tasks=tasks.scope("memory"),
    )
    await window.open()
    assert window.stale() == [] and {e.vector.fingerprint for e in window.events} == {"axis/2/v2"}


async def test_damaged_rows_are_reported_skipped_and_kept(
    tmp_path: Path, embedder, clock, bus: EventBus, published: list[Event], tasks: KernelTasks
) -> None:
    window = ContextWindow(
        TurnStore(tmp_path / "w" / "turns.db"), embedder, clock, tasks=tasks.scope("memory")
    )
    await window.open()
    events = await fill(window, clock, ["coffee 1", "coffee 2", "coffee 3", "tea 4"])
    await window.close()  # its rows written
    with sqlite3.connect(tmp_path / "w" / "turns.db") as db:
        db.execute("UPDATE turns SET tools = '[[1' WHERE id = ?", (events[1].id,))
        db.execute("UPDATE turns SET at = 'soon' WHERE id = ?", (events[3].id,))

    window = ContextWindow(
        TurnStore(tmp_path / "w" / "turns.db"),
        embedder,
        clock,
        emit=bus.emit,
        tasks=tasks.scope("memory"),
    )
    problems = await window.open()
    assert [e.input for e in window.events] == ["coffee 1", "coffee 3"]
    assert len(problems) == 2 and any("field 'tools'" in p for p in problems)
    assert all(events[1].id in p or events[3].id in p for p in problems)
    assert [e.payload.layer for e in published if e.type == EventType.MEMORY_DEGRADED] == [
        "context"
    ]
    # Nothing is deleted: the rows wait for a repair, and say so again at the next start.
    again = ContextWindow(
        TurnStore(tmp_path / "w" / "turns.db"), embedder, clock, tasks=tasks.scope("memory")
    )
    assert await again.open() == problems
    with sqlite3.connect(tmp_path / "w" / "turns.db") as db:
        assert db.execute("SELECT COUNT(*) FROM turns").fetchone() == (4,)


async def test_a_store_damaged_on_disk_opens_an_empty_window_and_says_so(
    tmp_path: Path, embedder, clock, bus: EventBus, published: list[Event], tasks: KernelTasks
) -> None:
    """A page of the turn store overwritten (disk damage) under the window's rows: open
    reports it and the window starts empty, rather than the kernel failing to boot."""
    window = ContextWindow(
        TurnStore(tmp_path / "w" / "turns.db"), embedder, clock, tasks=tasks.scope("memory")
    )
    await window.open()
    await fill(window, clock, [f"coffee {n} " + "and tea " * 100 for n in range(40)])
    await window.close()
    window.turns.close()
    path = tmp_path / "w" / "turns.db"
    damage_a_page(path)
    window = ContextWindow(
        TurnStore(path), embedder, clock, emit=bus.emit, tasks=tasks.scope("memory")
    )
    problems = await window.open()
    assert window.events == []
    assert len(problems) == 1 and "could not be read" in problems[0] and "malformed" in problems[0]
    assert [e.payload.layer for e in published if e.type == EventType.MEMORY_DEGRADED] == [
        "context"
    ]


class _Down(AxisEmbedder):
    def embed_texts(self, texts):
        raise EmbedderUnavailable("embedding server unreachable")


async def test_an_input_is_kept_when_its_embedding_fails(
    tmp_path: Path, clock, published: list[Event], bus: EventBus, tasks: KernelTasks
) -> None:
    window = ContextWindow(
        TurnStore(tmp_path / "w" / "turns.db"),
        _Down(),
        clock,
        emit=bus.emit,
        tasks=tasks.scope("memory"),
    )
    await window.open()
    event = await window.append("qq", input="remember me")
    assert event.vector is None
    assert any(e.type == EventType.MEMORY_DEGRADED for e in published)
    await window.close()
    reopened = ContextWindow(
        TurnStore(tmp_path / "w" / "turns.db"), AxisEmbedder(), clock, tasks=tasks.scope("memory")
    )
    await reopened.open()
    assert [e.input for e in reopened.events] == ["remember me"]


async def test_timeline_takes_the_newest_events_that_fit_the_budget(window, clock) -> None:
    await fill(window, clock, ["aaaa", "bbbb", "cccc", "dddd"])
    taken = window.timeline(budget_tokens=9, estimate=len)
    assert [e.input for e in taken] == ["cccc", "dddd"]
    assert window.timeline(budget_tokens=3, estimate=len) == []


async def test_an_event_with_an_older_timestamp_is_inserted_at_its_place(window, clock) -> None:
    events = await fill(window, clock, ["a", "b", "c"])
    middle = await window.append("cold_storage", "x", "y", timestamp=events[1].timestamp + 1)
    assert [e.id for e in window.events] == [events[0].id, events[1].id, middle.id, events[2].id]


async def test_append_refuses_an_event_without_a_source(window) -> None:
    import pytest

    with pytest.raises(ValueError, match="non-empty source"):
        await window.append("", input="x")


async def test_a_prune_by_the_input_just_appended_reuses_its_vector(
    tmp_path: Path, clock, tasks: KernelTasks
) -> None:
    embedder = AxisEmbedder()
    window = ContextWindow(
        TurnStore(tmp_path / "w" / "turns.db"),
        embedder,
        clock,
        top_k=2,
        protected_recent=1,
        tasks=tasks.scope("memory"),
    )
    await window.open()
    await fill(window, clock, ["coffee", "rain", "coffee  again"])
    embedded = len(embedder.embedded)
    report = await window.prune("coffee again ")  # the input as the turn has it
    assert len(embedder.embedded) == embedded, "the input was embedded a second time"
    assert report.pruned
    await fill(window, clock, ["tea"])
    await window.prune("rain and tea")  # not an event's text: embedded
    assert embedder.embedded[embedded:] == ["tea", "rain and tea"]
    # A vector of another space is never reused.
    window.embedder = AxisEmbedder("v2", ["rain", "coffee"])
    assert window.known_vector("coffee again") is None


SLOW_EMBED_S = 0.15


class _Timed(AxisEmbedder):
    """Records the thread each embedding ran on; `slow` makes it take longer than a hop."""

    def __init__(self) -> None:
        super().__init__()
        self.slow = False
        self.threads: list[str] = []

    def embed_texts(self, texts):
        self.threads.append(threading.current_thread().name)
        if self.slow:
            time.sleep(SLOW_EMBED_S)
        return super().embed_texts(texts)


async def test_an_append_embeds_on_the_loop_only_while_that_is_cheaper_than_a_hop(
    tmp_path: Path, clock, monkeypatch: pytest.MonkeyPatch, tasks: KernelTasks
) -> None:
    # A wide line, so a busy machine's stall does not push a fast embedding over it.
    monkeypatch.setattr(context_module, "INLINE_EMBED_S", SLOW_EMBED_S / 3)
    embedder = _Timed()
    window = ContextWindow(
        TurnStore(tmp_path / "w" / "turns.db"), embedder, clock, tasks=tasks.scope("memory")
    )
    await window.open()
    loop = threading.current_thread().name
    await fill(window, clock, ["coffee", "tea", "rain"])
    # The first goes to a worker (its cost is not known yet), the fast ones after it not.
    assert embedder.threads[0] != loop and embedder.threads[1:] == [loop, loop]
    embedder.slow = True
    await fill(window, clock, ["coffee", "tea"])
    # Measured slow once on the loop, it goes to a worker from then on.
    assert embedder.threads[3] == loop and embedder.threads[4] != loop
    await window.close()
