"""The input journal: group commit, durability across reopen, a corrupt file refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hologram.agent import InputJournal, InputState
from hologram.agent.journal import JournalError


async def test_inputs_recorded_at_once_share_commits_and_each_is_on_disk(tmp_path: Path) -> None:
    journal = await InputJournal.open(tmp_path / "inputs.db")
    records = await asyncio.gather(
        *(journal.record(f"message {n}", "http", 0, "client") for n in range(50))
    )
    assert sorted(r.id for r in records) == list(range(1, 51))
    assert journal.writes == 50 and journal.commits < 50, "they were grouped"
    await journal.mark(records[0].id, InputState.DONE, "answered")
    await journal.close()

    reopened = await InputJournal.open(tmp_path / "inputs.db")
    assert len(await reopened.unfinished()) == 49
    first = await reopened.get(records[0].id)
    assert first is not None and (first["state"], first["reply"]) == ("done", "answered")
    await reopened.close()


async def test_a_failing_statement_fails_alone_and_a_closed_journal_says_so(
    tmp_path: Path,
) -> None:
    journal = await InputJournal.open(tmp_path / "inputs.db")
    good, bad = await asyncio.gather(
        journal.record("fine", "http", 0, "client"),
        journal._write("INSERT INTO nowhere VALUES (1)", ()),
        return_exceptions=True,
    )
    assert not isinstance(good, BaseException) and good.text == "fine"
    assert isinstance(bad, Exception) and "no such table" in str(bad)
    assert await journal.counts() == {"queued": 1}
    await journal.close()
    with pytest.raises(JournalError, match="is closed"):
        await journal.record("too late", "http", 0, "client")


async def test_a_file_that_is_not_a_journal_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "inputs.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(JournalError, match=r"cannot be read.*left untouched"):
        await InputJournal.open(path)
    assert path.read_bytes() == b"this is not sqlite" * 100


async def test_a_record_that_cannot_be_stored_fails_alone_and_its_neighbours_are_on_disk(
    tmp_path: Path,
) -> None:
    # A lone surrogate has no UTF-8 form: the driver refuses it before SQLite sees it.
    journal = await InputJournal.open(tmp_path / "inputs.db")
    texts = [f"good {n}" for n in range(30)]
    outcomes = await asyncio.gather(
        *(journal.record(t, "http", 0, "client") for t in texts[:15]),
        journal.record("probe \ud800 x", "http", 0, "client"),
        *(journal.record(t, "http", 0, "client") for t in texts[15:]),
        return_exceptions=True,
    )
    poisoned = outcomes.pop(15)
    assert isinstance(poisoned, UnicodeEncodeError)
    assert all(not isinstance(o, BaseException) for o in outcomes), outcomes
    assert journal.commits < 31, "the poisoned record shared a commit with its neighbours"
    # A later commit must not carry anything of the poisoned batch that was not acknowledged.
    await journal.record("after", "http", 0, "client")
    await journal.close()

    reopened = await InputJournal.open(tmp_path / "inputs.db")
    stored = [r.text for r in await reopened.unfinished()]
    await reopened.close()
    assert stored == [*(o.text for o in outcomes), "after"]
    assert sorted(stored[:-1]) == sorted(texts)


async def test_the_journal_counts_each_time_an_input_starts_running(tmp_path: Path) -> None:
    journal = await InputJournal.open(tmp_path / "inputs.db")
    first = await journal.record("cut off twice", "notebook", 3, "user")
    fresh = await journal.record("never started", "notebook", 3, "user")
    await journal.mark(first.id, InputState.RUNNING)
    await journal.mark(first.id, InputState.RUNNING)  # the run after a first crash
    await journal.close()

    reopened = await InputJournal.open(tmp_path / "inputs.db")
    attempts = {r.id: r.attempts for r in await reopened.unfinished()}
    assert attempts == {first.id: 2, fresh.id: 0}
    await reopened.close()
