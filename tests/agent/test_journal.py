"""The input journal: group commit, durability across reopen, a corrupt file refused."""

from __future__ import annotations

import asyncio
import sqlite3
import time
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


async def test_inputs_recorded_in_one_commit_each_get_the_id_of_their_own_row(
    tmp_path: Path,
) -> None:
    journal = await InputJournal.open(tmp_path / "inputs.db")
    records = await asyncio.gather(
        *(journal.record(f"message {n}", "http", n % 4, f"client {n}") for n in range(40))
    )
    assert journal.commits < 40
    for record in records:
        row = await journal.get(record.id)
        assert row is not None
        assert (row["text"], row["level"], row["source"]) == (
            record.text,
            record.level,
            record.source,
        )
    await journal.close()


async def test_a_record_the_table_refuses_fails_alone_in_a_shared_commit(tmp_path: Path) -> None:
    # A NULL channel passes the driver but not the table's NOT NULL: the statement that
    # carries the whole run of records fails, and the run goes in again row by row.
    journal = await InputJournal.open(tmp_path / "inputs.db")
    outcomes = await asyncio.gather(
        *(journal.record(f"good {n}", "http", 0, "client") for n in range(10)),
        journal.record("no channel", None, 0, "client"),  # type: ignore[arg-type]
        *(journal.record(f"good {n}", "http", 0, "client") for n in range(10, 20)),
        return_exceptions=True,
    )
    refused = outcomes.pop(10)
    assert isinstance(refused, sqlite3.IntegrityError)
    assert all(not isinstance(o, BaseException) for o in outcomes), outcomes
    assert journal.commits < 21
    await journal.close()

    reopened = await InputJournal.open(tmp_path / "inputs.db")
    stored = {r.id: r.text for r in await reopened.unfinished()}
    await reopened.close()
    assert stored == {o.id: o.text for o in outcomes}


async def test_a_write_goes_on_disk_while_the_event_loop_is_busy(tmp_path: Path) -> None:
    # The journal's thread commits on its own: an acknowledgement waits for its fsync and
    # one wake-up of the loop, not for the loop to come round and start the commit.
    path = tmp_path / "inputs.db"
    journal = await InputJournal.open(path)
    recording = asyncio.ensure_future(journal.record("while busy", "http", 0, "client"))
    await asyncio.sleep(0)  # the write is handed over; from here the loop is busy
    reader = sqlite3.connect(path)
    try:
        on_disk = False
        for _ in range(2000):  # the loop stays blocked all the while
            if reader.execute("SELECT count(*) FROM inputs").fetchone()[0]:
                on_disk = True
                break
            time.sleep(0.005)  # noqa: ASYNC251 -- blocking the loop is the point
    finally:
        reader.close()
    assert on_disk, "the commit waited for the event loop"
    assert not recording.done(), "the loop was busy: nobody was told yet"
    assert (await recording).text == "while busy"
    await journal.close()
