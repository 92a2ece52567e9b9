"""The heartbeat loops, each driven by the injected clock; consolidation through a real
agent turn against the scripted model over loopback HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.channels import CollectingChannel
from hologram.events import EventBus
from hologram.kernel import KernelTasks, ManualClock
from hologram.llm import ScriptedModelServer
from hologram.memory import (
    ColdContext,
    ContextWindow,
    GraphStore,
    Segmenter,
    Triple,
)
from hologram.memory.heartbeat.consolidation import merge_candidates
from hologram.memory.heartbeat.distill import DistillPipeline
from hologram.memory.heartbeat.loops import Heartbeat, HeartbeatSettings
from hologram.memory.turns import Place, TurnStore
from hologram.sdk import CONSOLIDATION_CHANNEL, Event, EventType
from tests.memory.helpers import AxisEmbedder

MIN = 60.0
INTERVALS = {"distill": 30, "archive": 60, "merge": 120, "review": 120, "rules": 10}


class Asked:
    """A consolidation channel that records tasks and answers from a script."""

    def __init__(self, replies: list[str] | None = None) -> None:
        self.tasks: list[str] = []
        self.replies = replies or []

    async def __call__(self, text: str) -> str:
        self.tasks.append(text)
        return self.replies.pop(0) if self.replies else "skip"


@pytest.fixture
async def parts(tmp_path: Path, tasks: KernelTasks) -> AsyncIterator[dict]:
    clock = ManualClock(start=1_700_000_000.0)
    bus = EventBus(tasks=tasks.scope("events"))
    embedder = AxisEmbedder()
    cold = ColdContext(
        TurnStore(tmp_path / "cold" / "turns.db"),
        embedder,
        Segmenter().keywords,
        clock,
        emit=bus.emit,
        tasks=tasks.scope("coldcontext"),
    )
    await cold.wait_ready()
    window = ContextWindow(
        cold.turns,
        embedder,
        clock,
        top_k=4,
        protected_recent=2,
        cold=cold,
        emit=bus.emit,
        tasks=tasks.scope("memory"),
    )
    await window.open()
    graph = await GraphStore.open_at(
        tmp_path / "graph.db",
        embedder,
        clock,
        emit=bus.emit,
        turns=cold.turns,
        tasks=tasks.scope("graph"),
    )
    asked = Asked()
    beat = Heartbeat(
        graph,
        clock,
        HeartbeatSettings(interval_min=INTERVALS.__getitem__),
        context=window,
        cold=cold,
        pipeline=DistillPipeline(graph, clock),
        submit=asked,
        emit=bus.emit,
        tasks=tasks.scope("heartbeat"),
    )
    ticks: list[Event] = []
    bus.subscribe(EventType.HEARTBEAT_TICK, ticks.append)
    beat.start()
    yield {
        "clock": clock,
        "cold": cold,
        "window": window,
        "graph": graph,
        "beat": beat,
        "asked": asked,
        "ticks": ticks,
    }
    await beat.close()
    await graph.close()
    await window.close()
    await cold.close()


async def advance(clock: ManualClock, minutes: float, sleepers: int = len(INTERVALS)) -> None:
    """Move the clock a minute at a time, letting every tick finish (its SQLite work runs
    in real time on a thread) before time moves on, as it would on a real clock."""
    for _ in range(int(minutes)):
        await clock.advance(MIN)
        async with asyncio.timeout(5):
            while clock.sleepers < sleepers:  # noqa: ASYNC110 (polling the clock, no event)
                await asyncio.sleep(0.001)


def loops(ticks: list[Event]) -> list[str]:
    return [t.payload.loop for t in ticks]


async def test_each_loop_ticks_on_its_own_interval_of_the_injected_clock(parts) -> None:
    clock, ticks = parts["clock"], parts["ticks"]
    await advance(clock, 29)
    assert sorted(loops(ticks)) == ["rules", "rules"]
    await advance(clock, 91)  # two hours in all
    counts = {name: loops(ticks).count(name) for name in INTERVALS}
    assert counts == {"distill": 4, "archive": 2, "merge": 1, "review": 1, "rules": 12}


async def test_an_idle_tick_costs_no_model_call(parts) -> None:
    await parts["graph"].commit([Triple("Alice", "likes", "tea", sentence_text="Alice likes tea")])
    await advance(parts["clock"], 24 * 60)
    assert parts["asked"].tasks == []
    assert parts["beat"].totals()["model_calls"] == 0


async def test_the_distill_loop_prunes_the_context_into_the_cold_context(parts) -> None:
    window, cold = parts["window"], parts["cold"]
    for word in ("coffee", "tea", "rain", "sun", "cat", "dog"):
        await window.append("notebook", input=f"talk about {word}")
    await advance(parts["clock"], 30)
    assert len(window) == 4 and len(cold) == 2


async def test_the_archive_loop_moves_cold_documents_into_the_graph(parts) -> None:
    cold, graph = parts["cold"], parts["graph"]
    await cold.commit("我住在杭州，我喜欢龙井茶")
    await advance(parts["clock"], 71 * 60)
    assert len(cold) == 1, "not cold yet before 72 hours"
    await advance(parts["clock"], 2 * 60)
    assert len(cold) == 0
    facts = {(f.relation, f.target) for f in await graph.facts(entity="user")}
    assert facts == {("lives_in", "杭州"), ("likes", "龙井茶")}
    (block,) = await graph.blocks.list("text")
    assert block.text == "我住在杭州，我喜欢龙井茶", "the document itself is kept as a text block"


async def test_a_turn_is_one_row_from_the_window_to_the_graph(parts) -> None:
    window, cold, graph, clock = parts["window"], parts["cold"], parts["graph"], parts["clock"]
    said = await window.append("qq", input="我住在杭州，我喜欢龙井茶")
    for n in range(4):
        await window.append("qq", input=f"天气 {n}")
    await window.prune("天气")
    assert cold.get(said.id) is not None, "pruned into the cold context under its own id"
    await advance(clock, 73 * 60)
    turn = window.turns.get(said.id)
    assert turn is not None and turn.place is Place.GRAPH
    assert (turn.at, turn.speaker, turn.input) == (said.timestamp, "qq", said.input)
    (block,) = [b for b in await graph.blocks.list("text") if b.text == said.input]
    assert block.id == said.id, "the graph's text block is the turn itself, not a copy"
    # The graph was assembled with an index of its own: the archive indexed the turn there.
    assert [b.id for b, _ in await graph.blocks.search("我住在杭州", 1)] == [said.id]
    assert [(m.from_place, m.to_place) for m in window.turns.history(said.id)] == [
        (None, Place.CONTEXT),
        (Place.CONTEXT, Place.COLD_CONTEXT),
        (Place.COLD_CONTEXT, Place.GRAPH),
    ]


async def test_the_rules_loop_distils_recorded_input_and_an_update_closes_the_old_fact(
    parts,
) -> None:
    graph, clock = parts["graph"], parts["clock"]
    pipeline = parts["beat"].pipeline
    await pipeline.record("I live in Paris and I love jazz", "alice")
    await advance(clock, 10)
    await pipeline.record("I now live in Berlin.", "alice")
    await advance(clock, 10)
    current = {(f.relation, f.target) for f in await graph.facts(entity="alice")}
    assert current == {("lives_in", "Berlin"), ("likes", "jazz")}
    history = await graph.facts(entity="alice", history=True)
    assert [f.closed_reason for f in history if f.target == "Paris"] == ["superseded"]


async def test_distilled_records_are_kept_seven_days(parts) -> None:
    graph, clock = parts["graph"], parts["clock"]
    await parts["beat"].pipeline.record("我叫小明", "u1")
    await advance(clock, 6 * 24 * 60)
    assert (await graph.fetchone("SELECT COUNT(*) FROM distill_records"))[0] == 1
    await advance(clock, 2 * 24 * 60)
    assert (await graph.fetchone("SELECT COUNT(*) FROM distill_records"))[0] == 0


async def test_a_rules_tick_with_nothing_recorded_touches_no_database(parts) -> None:
    graph, clock, pipeline = parts["graph"], parts["clock"], parts["beat"].pipeline
    await pipeline.record("I live in Paris", "alice")
    await advance(clock, 10)  # distilled, and processed records past retention looked for
    statements: list[str] = []
    for connection in (graph.rdb, graph.wdb):
        await connection.set_trace_callback(statements.append)
    await advance(clock, 50)  # five idle ticks of the rules loop
    assert [s for s in statements if "distill_records" in s] == []
    await pipeline.record("I now live in Berlin.", "alice")
    await advance(clock, 10)
    assert await pipeline.pending() == 0, "a record made since the last tick is distilled"
    assert any("distill_records" in s for s in statements)


async def test_merge_and_review_ticks_read_nothing_while_the_graph_is_unchanged(parts) -> None:
    graph, clock, asked = parts["graph"], parts["clock"], parts["asked"]
    await advance(clock, 120)  # each loop has looked once and found nothing
    statements: list[str] = []
    for connection in (graph.rdb, graph.wdb):
        await connection.set_trace_callback(statements.append)
    await advance(clock, 6 * 60)
    assert [s for s in statements if "FROM entities" in s or "FROM relations" in s] == []
    # A write is news: the next merge tick looks again and finds the pair.
    await graph.commit([Triple("New York", "is_a", "city"), Triple("new-york", "has", "subway")])
    await advance(clock, 120)
    assert any("FROM entities" in s for s in statements)
    assert len([t for t in asked.tasks if "merge" in t]) == 1


async def test_the_merge_loop_asks_once_per_candidate_pair(parts) -> None:
    graph, clock, asked = parts["graph"], parts["clock"], parts["asked"]
    await graph.commit([Triple("New York", "is_a", "city"), Triple("new-york", "has", "subway")])
    await advance(clock, 120)
    assert len(asked.tasks) == 1
    assert "New York" in asked.tasks[0] and "new-york" in asked.tasks[0]
    assert "memory_merge" in asked.tasks[0] and "exact name" in asked.tasks[0]
    await advance(clock, 240)
    assert len(asked.tasks) == 1, "a pair already decided is not asked again"
    stats = parts["beat"].stats["merge"]
    assert stats.model_calls == 1 and stats.tokens_sent > 0


async def test_merge_candidates_come_from_exact_names_aliases_and_bigram_jaccard(parts) -> None:
    graph = parts["graph"]
    await graph.commit(
        [
            Triple("Okafor Clinic", "in", "Elm Street"),
            Triple("Okafor Clinics", "in", "Elm Street"),
            Triple("Jo", "knows", "Al"),
            Triple("J.O.", "likes", "tea"),
            Triple("Bo", "knows", "Al"),
        ]
    )
    pairs = {(p.a, p.b): p.why for p in await merge_candidates(graph, 0.75)}
    assert pairs[("Okafor Clinic", "Okafor Clinics")] == "bigram jaccard"
    assert ("Jo", "J.O.") in pairs, "short exact names are found"
    assert not any("Bo" in pair for pair in pairs)
    await graph.edit_entity("Bo", new_name="Robert")
    assert (await graph.commit([Triple("bo", "likes", "jazz")])).entities == ["bo", "jazz"]
    assert (await graph.entity("bo")).name == "Robert", "an alias resolves on commit"
    await graph.commit([Triple("B.O.", "likes", "jazz")])
    pairs = {(p.a, p.b): p.why for p in await merge_candidates(graph, 0.75)}
    assert pairs[("Robert", "B.O.")] == "alias"


async def test_the_review_loop_asks_only_about_facts_their_sentence_does_not_support(
    parts,
) -> None:
    graph, clock, asked = parts["graph"], parts["clock"], parts["asked"]
    await graph.commit(
        [
            Triple("Alice", "works_at", "Acme", sentence_text="Alice works at Acme."),
            Triple(
                "Alice",
                "works_at",
                "Initech",
                sentence_text="Bob joined Initrode.",
                exclusive=False,
            ),
        ]
    )
    await advance(clock, 120)
    assert len(asked.tasks) == 1 and "Initech" in asked.tasks[0] and "memory_edit" in asked.tasks[0]
    await advance(clock, 120)
    assert len(asked.tasks) == 1, "reviewed facts are not reviewed again"


async def test_without_a_consolidation_channel_tasks_wait_and_say_so(
    tmp_path: Path, tasks: KernelTasks
) -> None:
    clock, bus = ManualClock(), EventBus(tasks=tasks.scope("events"))
    seen: list[Event] = []
    bus.subscribe(EventType.MEMORY_DEGRADED, seen.append)
    graph = await GraphStore.open_at(
        tmp_path / "g.db", AxisEmbedder(), clock, emit=bus.emit, tasks=tasks.scope("graph")
    )
    await graph.commit([Triple("New York", "is_a", "city"), Triple("New-York", "is_a", "city")])
    beat = Heartbeat(
        graph,
        clock,
        HeartbeatSettings(interval_min=INTERVALS.__getitem__),
        emit=bus.emit,
        tasks=tasks.scope("heartbeat"),
    )
    result = await beat.tick("merge")
    assert result == {"candidates": 1, "asked": 0, "waiting": "consolidation channel"}
    assert seen and "consolidation" in seen[0].payload.reason
    asked = Asked()
    beat.connect(asked)
    assert (await beat.tick("merge"))["asked"] == 1
    await graph.close()


async def test_a_merge_is_decided_by_the_model_in_a_consolidation_turn_and_never_sent_out(
    data_dir: Path,
) -> None:
    clock = ManualClock()
    async with ScriptedModelServer() as model:
        environ = {
            "HOLOGRAM_LLM_BASE_URL": model.base_url,
            "HOLOGRAM_LLM_MODEL": "scripted-model",
            "HOLOGRAM_LLM_API_KEY": "sk-test",
        }
        async with Kernel(data_dir, environ=environ, clock=clock) as kernel:
            state = kernel.state
            graph = state.graph
            notebook = state.channels.get("notebook").handler
            assert isinstance(notebook, CollectingChannel)
            # The kernel wires the merge loop to the scheduler's self-input channel.
            assert graph.status()["consolidation_connected"]
            enqueued: list[str] = []
            kernel.events.subscribe(
                EventType.SCHEDULER,
                lambda e: (
                    enqueued.append(e.payload.text) if e.payload.action == "enqueue" else None
                ),
            )
            await graph.store.commit(
                [Triple("Zhang San", "likes", "tea"), Triple("zhangsan", "lives_in", "Hangzhou")]
            )
            model.queue_tool_call("memory_merge", {"keep": "Zhang San", "merge": "zhangsan"})
            model.queue_text("Merged zhangsan into Zhang San.")
            done = asyncio.Event()
            kernel.events.subscribe(
                EventType.HEARTBEAT_TICK,
                lambda e: done.set() if e.payload.loop == "merge" else None,
            )
            async with asyncio.timeout(5):
                while not graph.heartbeat.started:  # noqa: ASYNC110
                    await asyncio.sleep(0.001)
            await clock.advance(120 * MIN)
            async with asyncio.timeout(10):
                await done.wait()
            entity = await graph.store.entity("zhangsan")
            assert entity.name == "Zhang San" and entity.aliases == ["zhangsan"]
            assert len(enqueued) == 1 and "consolidation: merge" in enqueued[0], (
                "queued like any input"
            )
            record = await state.scheduler.journal.get(1)
            assert record is not None and record["channel"] == CONSOLIDATION_CHANNEL
            assert record["source"] == "self" and record["state"] == "done"
            assert record["reply"] == "Merged zhangsan into Zhang San."
            first = model.requests[0].json
            task = first["messages"][-1]["content"]
            assert "Zhang San" in task and "zhangsan" in task
            assert notebook.deliveries == [], "consolidation output reaches no channel"
            status = graph.status()
            assert status["heartbeat"]["merge"]["model_calls"] == 1
            assert "merge: 1 ticks, 1 calls" in await graph.introspect()
            # The token meter counts what the provider counted for the consolidation turn.
            spent = state.llm.usage.summary()["by_channel"][CONSOLIDATION_CHANNEL]
            assert status["heartbeat"]["merge"]["measured_calls"] == 1
            assert status["heartbeat"]["merge"]["tokens_sent"] == spent["prompt_tokens"]
            assert status["heartbeat"]["merge"]["tokens_received"] == spent["completion_tokens"]
