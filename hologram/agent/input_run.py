"""One input's run: its journal row, its turn, and the marks between them.

The dispatcher runs an `InputRun` when the scheduler gives the input the agent. The run
builds its turn the first time (the turn keeps its own progress, so a resumed run goes on
where a preemption left it), marks the journal row running, and marks it over once what
the turn recorded in memory is durable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from hologram.agent.agent import Agent
from hologram.agent.journal import InputJournal, InputRecord, InputState
from hologram.agent.scheduler import Scheduler
from hologram.agent.turn import Turn, TurnInput, TurnResult
from hologram.kernel import TaskScope
from hologram.sdk import EndedBy

T = TypeVar("T")


@dataclass(eq=False)
class InputLedger:
    """The journal's side of a run, shared by every run and by the door that answers an
    input without a turn (the triage assistant)."""

    journal: InputJournal
    agent: Agent
    tasks: TaskScope

    async def mark_over(self, input_id: int, state: InputState, reply: str | None = None) -> None:
        """Mark an input over once what its turn recorded in memory is durable: a crash
        before that runs it again, and the memory's re-run check finds what was stored. A
        record that could not be stored fails the input."""
        if self.agent.memory is not None:
            try:
                await self.agent.memory.flush()
            except Exception:
                await self.journal.mark(input_id, InputState.FAILED)
                raise
        await self.journal.mark(input_id, state, reply)

    async def outlast(self, work: Awaitable[T]) -> T:
        """Finish `work` through any number of cancellations. A stop or preemption that
        lands once a turn is ending is too late: its reply is going out, so the input is
        done and its ticket and journal row must say so."""
        future = (
            work
            if isinstance(work, asyncio.Future)
            else self.tasks.spawn(_awaiting(work), name="input-ending", awaited=True)
        )
        while True:
            try:
                return await asyncio.shield(future)
            except asyncio.CancelledError:
                if future.cancelled():
                    raise
                current = asyncio.current_task()
                if current is not None:
                    current.uncancel()


@dataclass(eq=False)
class InputRun:
    """The work of one input (a dispatcher's `Work`)."""

    record: InputRecord
    ledger: InputLedger
    #: Texts of interrupts waiting behind this input, each given to its turn once.
    intercept: Callable[[], list[str]]
    turn: Turn | None = None
    #: Whether the triage assistant has looked at it (it looks once).
    triaged: bool = False

    async def run(self, stopped: bool) -> TurnResult:
        record, ledger = self.record, self.ledger
        turn = self.turn
        if turn is None:
            given = TurnInput(
                record.text,
                record.channel,
                record.user_id,
                input_id=record.id,
                attempt=record.attempt,
                media=record.media,
            )
            turn = self.turn = ledger.agent.turn(given)
            turn.intercept = self.intercept
            # Not awaited: the turn's first steps overlap its commit (`InputJournal.started`).
            ledger.journal.started(record.id)
        turn.stopped = stopped
        try:
            result = await turn.run()
        except asyncio.CancelledError:
            if turn.ending is None:
                raise
            result = await ledger.outlast(turn.ending)
        except Exception:
            await ledger.journal.mark(record.id, InputState.FAILED)
            raise
        state = InputState.STOPPED if result.outcome is EndedBy.STOPPED else InputState.DONE
        await ledger.outlast(ledger.mark_over(record.id, state, result.reply))
        return result

    async def record_stop(self) -> None:
        """A stop ended this input without a result: written down in memory if its turn
        began, and in the journal, so a restart does not run it again."""
        turn = self.turn
        if turn is not None and turn.ended_by is not EndedBy.STOPPED:
            await turn.record_stop()
            turn.publish_finished()
        await self.ledger.mark_over(self.record.id, InputState.STOPPED)


def intercept_channel(scheduler: Scheduler[InputRun], input_id: int) -> Callable[[], list[str]]:
    """The intercept channel of one turn: interrupts that wait behind it (they could not
    preempt it), each told to the model once so it can wrap up; each still gets its own
    turn afterwards."""
    told: set[int] = set()

    def drain() -> list[str]:
        texts = []
        for waiting in scheduler.waiting():
            if waiting.is_interrupt and waiting.id not in told and waiting.id != input_id:
                told.add(waiting.id)
                texts.append(waiting.payload.record.text)
        return texts

    return drain


async def _awaiting(work: Awaitable[T]) -> T:
    return await work
