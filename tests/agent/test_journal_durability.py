"""The input journal's promises across a crash: an acknowledged input is on disk before its
acknowledgement, an input answered is marked done before its answer, and a running mark the
crash took away cannot make the re-run record the input twice."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.agent import InputJournal, InputState
from hologram.agent.journal import JournalError
from hologram.sdk import StageContext

TEXT = "remember: the spare key is under the blue pot"

# The kernel in a process of its own, killed with SIGKILL the moment `step` returns: nothing
# after the acknowledgement (no shutdown, no flush, no loop iteration) runs. Its disk is slow
# (each commit 50 ms longer), so a commit the kernel did not wait for is still in flight then.
CHILD = textwrap.dedent(
    """
    import asyncio, os, signal, sys, time
    from pathlib import Path
    from hologram import Kernel
    from hologram.agent.journal import InputJournal

    applying = InputJournal._apply

    def slow(self, *args, **kwargs):
        time.sleep(0.05)
        return applying(self, *args, **kwargs)

    InputJournal._apply = slow

    async def main(root, step, text):
        async with Kernel(Path(root), environ={}) as kernel:
            if step == "submit":
                ticket = await kernel.inputs.submit(text, "notebook")
                answer = ticket.id
            else:
                answer = (await kernel.inputs.say(text, "notebook")).reply
            print(answer, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    asyncio.run(main(*sys.argv[1:]))
    """
)


def _killed_after(root: Path, step: str) -> str:
    """Run the child through `step` ("submit": the acknowledgement; "say": the answer);
    returns what it printed then, before the kill."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), step, TEXT],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    return done.stdout.strip()


async def _until_done(kernel: Kernel, input_id: int) -> None:
    row = None
    for _ in range(400):
        row = await kernel.inputs.journal.get(input_id)
        if row is not None and row["state"] == InputState.DONE:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"input {input_id} did not finish: {row}")


async def test_an_input_acknowledged_just_before_a_sigkill_runs_at_the_next_start(
    data_dir: Path,
) -> None:
    input_id = int(_killed_after(data_dir, "submit"))

    journal = await InputJournal.open(data_dir / "inputs.db")
    unfinished = await journal.unfinished()
    await journal.close()
    assert [(r.id, r.text) for r in unfinished] == [(input_id, TEXT)]

    async with Kernel(data_dir, environ={}) as kernel:
        await _until_done(kernel, input_id)


async def test_an_input_answered_just_before_a_sigkill_does_not_run_again(
    data_dir: Path,
) -> None:
    _killed_after(data_dir, "say")

    journal = await InputJournal.open(data_dir / "inputs.db")
    rows = await journal.all()
    unfinished = await journal.unfinished()
    await journal.close()
    assert [(r["text"], r["state"]) for r in rows] == [(TEXT, InputState.DONE)]
    assert unfinished == []


async def test_a_rerun_whose_running_mark_never_reached_the_disk_is_in_memory_once(
    data_dir: Path,
) -> None:
    # What a crash leaves when it takes the running mark (written without waiting) but not
    # the input line the turn had stored: the row still queued, with no attempt counted.
    async with Kernel(data_dir, environ={}) as kernel:
        record = await kernel.inputs.journal.record(TEXT, "notebook", 3, "user")
        assert kernel.state.memory is not None
        await kernel.state.memory.append_input(
            StageContext(raw_message=TEXT, channel="notebook"), input_id=record.id, attempt=1
        )
    journal = await InputJournal.open(data_dir / "inputs.db")
    assert [(r.id, r.attempts) for r in await journal.unfinished()] == [(record.id, 0)]
    await journal.close()

    async with Kernel(data_dir, environ={}) as kernel:
        await _until_done(kernel, record.id)
        assert kernel.state.memory is not None and kernel.state.text_memory is not None
        window = [e for e in kernel.state.memory.context.events if e.input == TEXT]
        logged = [r for r in kernel.state.text_memory.read() if r["text"] == TEXT]

    assert [e.id for e in window] == [f"input-{record.id}"]
    assert len(logged) == 1


async def test_an_input_found_unfinished_at_a_start_runs_as_a_possible_rerun(
    tmp_path: Path,
) -> None:
    journal = await InputJournal.open(tmp_path / "inputs.db")
    fresh = await journal.record("just sent", "notebook", 3, "user")
    assert (fresh.recovered, fresh.attempt) == (False, 1)
    cut_off = await journal.record("cut off twice", "notebook", 3, "user")
    await journal.mark(cut_off.id, InputState.RUNNING)
    await journal.mark(cut_off.id, InputState.RUNNING)
    await journal.close()

    reopened = await InputJournal.open(tmp_path / "inputs.db")
    attempts = {r.id: (r.recovered, r.attempt) for r in await reopened.unfinished()}
    await reopened.close()
    # Never marked running, yet recovered: its run looks for what a cut-off run recorded.
    assert attempts == {fresh.id: (True, 2), cut_off.id: (True, 3)}


async def test_a_running_mark_not_awaited_is_committed_before_what_follows_it(
    tmp_path: Path,
) -> None:
    journal = await InputJournal.open(tmp_path / "inputs.db")
    record = await journal.record("started", "notebook", 3, "user")
    journal.started(record.id)
    # Read in turn behind it: the mark is in what the journal answers at once.
    row = await journal.get(record.id)
    assert row is not None and row["state"] == InputState.RUNNING
    await journal.mark(record.id, InputState.DONE, "ok")
    await journal.close()

    reopened = await InputJournal.open(tmp_path / "inputs.db")
    row = await reopened.get(record.id)
    counted = await reopened._read(
        lambda db: db.execute("SELECT attempts FROM inputs WHERE id = ?", (record.id,)).fetchone()
    )
    await reopened.close()
    assert row is not None and row["state"] == InputState.DONE and row["reply"] == "ok"
    assert counted == (1,)


async def test_the_acknowledgement_and_the_end_wait_for_the_disk_and_the_running_mark_not(
    tmp_path: Path,
) -> None:
    journal = await InputJournal.open(tmp_path / "inputs.db")
    record = await journal.record("synced", "notebook", 3, "user")
    assert (journal.commits, journal.synced_commits) == (1, 1)
    journal.started(record.id)
    await journal.get(record.id)  # behind the mark: it has been committed
    assert (journal.commits, journal.synced_commits) == (2, 1)
    await journal.mark(record.id, InputState.DONE, "ok")
    assert (journal.commits, journal.synced_commits) == (3, 2)
    # FULL again for whatever comes next (2 is FULL).
    assert await journal._read(lambda db: db.execute("PRAGMA synchronous").fetchone()) == (2,)
    await journal.close()


async def test_a_running_mark_on_a_closed_journal_is_refused(tmp_path: Path) -> None:
    journal = await InputJournal.open(tmp_path / "inputs.db")
    record = await journal.record("late", "notebook", 3, "user")
    await journal.close()
    with pytest.raises(JournalError, match="closed"):
        journal.started(record.id)
