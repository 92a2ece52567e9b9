"""Work restarted after a crash is idempotent for memory, and a shutdown with a re-queued
backlog reads every ticket's outcome (issue 15, item 4)."""

from __future__ import annotations

import asyncio
import gc
import logging
from pathlib import Path

import pytest

from hologram import Kernel
from hologram.agent import InputState
from hologram.memory.turns import Place, TurnStore
from hologram.sdk import StageContext

TEXT = "remember: the spare key is under the blue pot"


async def _cut_off_mid_turn(root: Path) -> int:
    """What a SIGKILL during a turn leaves: the input journaled and marked running, its
    line already in the context window and the text log, no reply."""
    async with Kernel(root, environ={}) as kernel:
        journal = kernel.inputs.journal
        record = await journal.record(TEXT, "notebook", 3, "user")
        await journal.mark(record.id, InputState.RUNNING)
        assert kernel.state.memory is not None
        await kernel.state.memory.append_input(
            StageContext(raw_message=TEXT, channel="notebook"), input_id=record.id, attempt=1
        )
    return record.id


async def _until_done(kernel: Kernel, input_id: int) -> None:
    row = None
    for _ in range(400):
        row = await kernel.inputs.journal.get(input_id)
        if row is not None and row["state"] == InputState.DONE:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"input {input_id} did not finish: {row}")


async def test_an_input_run_again_after_a_crash_is_in_memory_once(data_dir: Path) -> None:
    input_id = await _cut_off_mid_turn(data_dir)

    async with Kernel(data_dir, environ={}) as kernel:
        await _until_done(kernel, input_id)  # at least once: it ran
        assert kernel.state.memory is not None and kernel.state.text_memory is not None
        window = [e for e in kernel.state.memory.context.events if e.input == TEXT]
        logged = [r for r in kernel.state.text_memory.read() if r["text"] == TEXT]

    assert [e.id for e in window] == [f"input-{input_id}"]
    assert len(logged) == 1


async def test_an_input_whose_turn_moved_on_before_the_rerun_stays_where_it_went(
    data_dir: Path,
) -> None:
    input_id = await _cut_off_mid_turn(data_dir)
    turns = TurnStore(data_dir / "memory" / "turns.db")
    turns.move([f"input-{input_id}"], Place.COLD_CONTEXT, "pruned", 1.0)
    turns.close()

    async with Kernel(data_dir, environ={}) as kernel:
        await _until_done(kernel, input_id)
        memory, cold = kernel.state.memory, kernel.state.coldcontext
        assert memory is not None and cold is not None
        await cold.wait_ready()
        assert [e for e in memory.context.events if e.input == TEXT] == []
        assert [d.id for d in cold.documents() if d.input == TEXT] == [f"input-{input_id}"]
        stored = memory.context.turns.get(f"input-{input_id}")
        assert stored is not None and stored.place is Place.COLD_CONTEXT


async def test_a_shutdown_with_a_requeued_backlog_leaves_no_unread_outcome(
    data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with Kernel(data_dir, environ={}) as kernel:
        for n in range(300):
            await kernel.inputs.journal.record(f"backlog {n}", "notebook", 3, "user")
    caplog.set_level(logging.ERROR, logger="asyncio")

    async with Kernel(data_dir, environ={}) as kernel:
        assert kernel.inputs.pending_inputs() > 0  # re-queued, then cut off by the shutdown
    gc.collect()

    unread = [r for r in caplog.records if "never retrieved" in r.getMessage()]
    assert unread == []
