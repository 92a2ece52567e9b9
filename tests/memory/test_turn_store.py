"""The turn store: one row a turn, durable across a kill, read back without cutting again."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hologram.kernel import KernelTasks, ManualClock
from hologram.memory import ColdContext, ContextWindow, Segmenter
from hologram.memory.cold.tools import recall_into_context
from hologram.memory.turns import WRITE_DELAY_S, Place, Turn, TurnStore, TurnStoreError
from tests.memory.helpers import AxisEmbedder

REPO = Path(__file__).resolve().parents[2]

INGEST = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from hologram.kernel import KernelTasks, ManualClock
    from hologram.memory import ColdContext, ContextWindow, Segmenter
    from hologram.memory.turns import TurnStore
    from tests.memory.helpers import AxisEmbedder

    async def main(path, start):
        turns = TurnStore(Path(path))
        clock = ManualClock(start=1_700_000_000.0 + start)
        embedder = AxisEmbedder()
        tasks = KernelTasks()  # the child is killed mid-write: nothing is closed
        cold = ColdContext(
            turns, embedder, Segmenter().keywords, clock, tasks=tasks.scope("coldcontext")
        )
        await cold.wait_ready()
        window = ContextWindow(
            turns, embedder, clock, top_k=8, protected_recent=4, cold=cold,
            tasks=tasks.scope("memory"),
        )
        await window.open()
        n, unflushed = start, []
        while True:
            n += 1
            await clock.advance(1)
            event = await window.append("qq", input=f"coffee turn {n}")
            unflushed.append(event.id)
            if n % 5 == 0:
                await window.prune("coffee")
            if n % 3 == 0:
                # Acknowledged once flushed, as the journal marks an input done.
                await asyncio.to_thread(turns.flush)
                print("\\n".join(unflushed), flush=True)
                unflushed.clear()

    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    """
)


def test_a_kill_at_any_point_of_ingestion_loses_no_acknowledged_turn(tmp_path: Path) -> None:
    path = tmp_path / "turns.db"
    chooser = random.Random(7)
    acknowledged: list[str] = []
    for _ in range(3):
        process = subprocess.Popen(
            [sys.executable, "-c", INGEST, str(path), str(len(acknowledged) * 10)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        wanted = chooser.randint(15, 60)
        for _ in range(wanted):
            line = process.stdout.readline()
            assert line, "the ingesting process ended early"
            acknowledged.append(line.strip())
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        assert process.returncode == -signal.SIGKILL
    store = TurnStore(path)
    try:
        found = store.get_many(acknowledged)
        assert [t.id for t in found] == acknowledged
        counts = store.counts()
        assert counts.get(Place.COLD_CONTEXT, 0) > 0, "no prune ran: the moves went untested"
        for turn in found:
            assert [m.to_place for m in store.history(turn.id)][-1] is turn.place
    finally:
        store.close()


class CountingSegmenter(Segmenter):
    def __init__(self) -> None:
        super().__init__()
        self.cut_texts: list[str] = []

    def keywords(self, text: str) -> list[str]:
        self.cut_texts.append(text)
        return super().keywords(text)


async def test_stored_words_are_read_back_not_cut_again(tmp_path: Path, tasks: KernelTasks) -> None:
    clock = ManualClock(start=1_700_000_000.0)
    embedder = AxisEmbedder()
    turns = TurnStore(tmp_path / "turns.db")
    first = ColdContext(
        turns, embedder, Segmenter().keywords, clock, tasks=tasks.scope("coldcontext")
    )
    doc = await first.commit("the blue kite over the harbour")
    await first.close()
    counting = CountingSegmenter()
    again = ColdContext(turns, embedder, counting.keywords, clock, tasks=tasks.scope("coldcontext"))
    await again.wait_ready()
    assert again.get(doc.id) is not None and again.get(doc.id).tokens == doc.tokens
    assert counting.cut_texts == []
    # A row from before words were kept is cut once, and the words are stored.
    turns.put(
        [Turn("old", Place.COLD_CONTEXT, 1.0, "qq", text="an old kite", stored_at=1.0)],
        "test",
        clock.now(),
    )
    third = ColdContext(turns, embedder, counting.keywords, clock, tasks=tasks.scope("coldcontext"))
    await third.wait_ready()
    assert counting.cut_texts == ["an old kite"]
    stored = turns.get("old")
    assert stored is not None and stored.words == counting.keywords("an old kite")
    turns.close()


async def test_a_recalled_turn_keeps_its_speaker_when_pruned_again(
    tmp_path: Path, tasks: KernelTasks
) -> None:
    clock = ManualClock(start=1_700_000_000.0)
    embedder = AxisEmbedder()
    turns = TurnStore(tmp_path / "turns.db")
    cold = ColdContext(
        turns, embedder, Segmenter().keywords, clock, tasks=tasks.scope("coldcontext")
    )
    await cold.wait_ready()
    window = ContextWindow(
        turns, embedder, clock, top_k=1, protected_recent=1, cold=cold, tasks=tasks.scope("memory")
    )
    said = await window.append("qq", input="my kite is blue")
    await clock.advance(1)
    await window.append("qq", input="rain")
    await window.prune("rain")
    (back,) = await recall_into_context(window, cold, "kite", top=1)
    assert (back.id, back.source, back.speaker) == (said.id, "cold_storage", "qq")
    await clock.advance(1)
    await window.append("qq", input="more rain")
    await window.prune("rain")
    doc = cold.get(said.id)
    assert doc is not None and (doc.source, doc.speaker) == ("cold_storage", "qq")
    hit = cold.recall_index.search(["kite"], None, 1)[0]
    assert hit.id == said.id
    turns.close()


async def test_a_turn_recalled_into_the_window_stays_in_the_shared_recall_index(
    tmp_path: Path,
    tasks: KernelTasks,
) -> None:
    """The window indexes a recalled turn as it takes it back; the cold context letting the
    turn go must not take that entry out of the index they share (it once did: a recalled
    turn vanished from `Memory.search` while it was in the window)."""
    clock = ManualClock(start=1_700_000_000.0)
    embedder = AxisEmbedder()
    keywords = Segmenter().keywords
    turns = TurnStore(tmp_path / "turns.db")
    cold = ColdContext(turns, embedder, keywords, clock, tasks=tasks.scope("coldcontext"))
    await cold.wait_ready()
    index = cold.recall_index
    window = ContextWindow(
        turns, embedder, clock, top_k=1, protected_recent=1, cold=cold,
        recall_index=index, keywords=keywords,tasks=tasks.scope("memory")
    )  # fmt: skip
    said = await window.append("qq", input="my kite is blue")
    await clock.advance(1)
    await window.append("qq", input="rain")
    await window.prune("rain")

    def place_of_kite() -> Place | None:
        return {h.id: h.place for h in index.search(["kite"], None, 3)}.get(said.id)

    assert place_of_kite() is Place.COLD_CONTEXT
    await recall_into_context(window, cold, "kite", top=1)
    assert place_of_kite() is Place.CONTEXT
    turns.close()


def _stored_ids(path: Path) -> list[str]:
    """The turn ids on disk, read through a connection of its own (what a restart sees)."""
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT id FROM turns ORDER BY at")]


def test_queued_changes_are_written_in_order_and_read_back_by_the_next_call(
    tmp_path: Path,
) -> None:
    turns = TurnStore(tmp_path / "turns.db")
    try:
        turns.put([Turn("a", Place.CONTEXT, 1.0, "qq", text="a")], "said", 1.0, wait=False)
        turns.put([Turn("b", Place.CONTEXT, 2.0, "qq", text="b")], "said", 1.0, wait=False)
        turns.move(["a"], Place.COLD_CONTEXT, "pruned", 2.0, wait=False)
        turns.drop(["b"], "pruned", 3.0, wait=False)
        # A read waits for what was queued before it, whatever the writer's delay.
        assert turns.get("a") is not None and turns.get("a").place is Place.COLD_CONTEXT
        assert turns.get("b") is None
        assert [m.to_place for m in turns.history("b")] == [Place.CONTEXT, None]
        assert turns.settled
    finally:
        turns.close()


def test_flush_and_close_make_queued_changes_durable(tmp_path: Path) -> None:
    path = tmp_path / "turns.db"
    turns = TurnStore(path)
    turns.put([Turn("a", Place.CONTEXT, 1.0, "qq", text="a")], "said", 1.0, wait=False)
    turns.flush()
    assert _stored_ids(path) == ["a"]
    turns.put([Turn("b", Place.CONTEXT, 2.0, "qq", text="b")], "said", 1.0, wait=False)
    turns.close()
    assert _stored_ids(path) == ["a", "b"]
    with pytest.raises(TurnStoreError, match="closed"):
        turns.put([Turn("c", Place.CONTEXT, 3.0, "qq")], "said", 1.0, wait=False)


def test_a_queued_change_is_written_on_its_own_when_nobody_waits_for_it(tmp_path: Path) -> None:
    """Writes made outside a turn (an import, a notebook's appends) are flushed by no
    journal: the writer takes them after its short delay all the same."""
    path = tmp_path / "turns.db"
    turns = TurnStore(path)
    try:
        turns.put([Turn("a", Place.CONTEXT, 1.0, "qq", text="a")], "said", 1.0, wait=False)
        deadline = time.monotonic() + 30  # generous: only a writer that never writes fails
        while _stored_ids(path) != ["a"]:
            assert time.monotonic() < deadline, "a queued change was never written"
            time.sleep(WRITE_DELAY_S / 5)
    finally:
        turns.close()


def test_a_queued_change_that_fails_costs_no_other_its_place_and_flush_names_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "turns.db"
    told: list[str] = []
    turns = TurnStore(path, on_failure=told.append)
    with sqlite3.connect(path) as db:  # a real write failure, from SQLite itself
        db.execute(
            "CREATE TRIGGER poison BEFORE INSERT ON turns WHEN NEW.input = 'poison' "
            "BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
        )
    try:
        for n, text in enumerate(["good 1", "poison", "good 2"]):
            turn = Turn(f"t{n}", Place.CONTEXT, float(n), "qq", input=text, text=text)
            turns.put([turn], "said", 1.0, wait=False)
        with pytest.raises(TurnStoreError, match="poisoned row"):
            turns.flush()
        assert _stored_ids(path) == ["t0", "t2"]
        assert len(told) == 1 and "put" in told[0] and "poisoned row" in told[0]
        turns.flush()  # told once: the next flush has nothing to report
    finally:
        turns.close()


async def test_an_archived_turn_is_cut_once_even_when_it_has_no_words(
    tmp_path: Path, tasks: KernelTasks
) -> None:
    """ "How are you?" is all stopwords: cut into no words, which is an answer, not a
    reason to cut it again (and rewrite its row) when it is archived."""
    clock = ManualClock(start=1_700_000_000.0)
    embedder = AxisEmbedder()
    counting = CountingSegmenter()
    turns = TurnStore(tmp_path / "turns.db")
    cold = ColdContext(turns, embedder, counting.keywords, clock, tasks=tasks.scope("coldcontext"))
    await cold.wait_ready()
    window = ContextWindow(
        turns, embedder, clock, top_k=1, protected_recent=1, cold=cold,
        recall_index=cold.recall_index, keywords=counting.keywords,tasks=tasks.scope("memory")
    )  # fmt: skip
    greeting = await window.append("qq", input="How are you?")
    await clock.advance(1)
    await window.append("qq", input="rain")
    await window.prune("rain")
    assert cold.get(greeting.id) is not None
    assert counting.cut_texts.count("How are you?") == 1
    stored = turns.get(greeting.id)
    assert stored is not None and stored.place is Place.COLD_CONTEXT and stored.words == []
    turns.close()
