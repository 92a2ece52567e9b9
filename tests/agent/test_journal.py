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
