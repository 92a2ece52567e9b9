"""The kernel's door for input: journal, scheduler and turns, put together.

`submit` writes the input to the journal (durably) and hands it to the scheduler loop; the loop
runs each input as a `Turn` of the agent when the scheduler says so. A preempted turn keeps its
`Turn` object as the task's frame and continues from it on resume. Internal work (memory
consolidation) comes in through the self-input channel `_consolidation_`: a full turn whose
reply only writes memory and is sent nowhere.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from hologram.agent.agent import Agent
from hologram.agent.journal import InputJournal, InputRecord, InputState
from hologram.agent.scheduler import Action, Decision, Task
from hologram.agent.scheduler_loop import SchedulerLoop, TaskStopped, Ticket
from hologram.agent.turn import CONSOLIDATION, Turn, TurnInput, TurnResult
from hologram.events import EventBus
from hologram.sdk import Clock, EventType, Priority

log = logging.getLogger(__name__)

PREVIEW = 80


class Inputs:
    """Inputs in, turns out, in the order and with the preemptions the scheduler decides."""

    def __init__(
        self,
        agent: Agent,
        journal: InputJournal,
        clock: Clock,
        events: EventBus,
        cooldown: float = 2.0,
    ) -> None:
        self.agent = agent
        self.journal = journal
        self.events = events
        self.loop = SchedulerLoop(self._run, clock, cooldown=cooldown, on_decision=self._trace)
        self._previews: dict[int, str] = {}

    def start(self) -> None:
        self.loop.start()

    # ---- in ----------------------------------------------------------------------------------

    async def submit(
        self,
        text: str,
        channel: str = "notebook",
        *,
        level: Priority = Priority.QUEUED,
        source: str = "",
        from_plugin: bool = False,
        user_id: str = "",
    ) -> Ticket:
        """Record the input durably, then queue it. The ticket's id is the journal's id."""
        if not isinstance(text, str):
            raise TypeError(f"input text must be a string, not {type(text).__name__}")
        record = await self.journal.record(text, channel, int(level), source, user_id)
        return self._inject(record, Priority(level), from_plugin)

    def _inject(self, record: InputRecord, level: Priority, from_plugin: bool) -> Ticket:
        self._previews[record.id] = record.text[:PREVIEW]
        return self.loop.inject(
            record, level, source=record.source, from_plugin=from_plugin, task_id=record.id
        )

    async def say(self, text: str, channel: str = "notebook", **options: Any) -> TurnResult:
        """Submit and wait for the turn's result."""
        return await (await self.submit(text, channel, **options))

    async def consolidate(self, text: str) -> str:
        """Run an internal task through the self-input channel; returns the model's reply,
        which goes to memory only."""
        ticket = await self.submit(text, CONSOLIDATION, source="self")
        result: TurnResult = await ticket
        return result.reply

    async def recover(self) -> int:
        """Queue again every input acknowledged before a crash and not finished."""
        unfinished = await self.journal.unfinished()
        for record in unfinished:
            self._inject(record, Priority(record.level), from_plugin=False)
        if unfinished:
            log.warning("re-queued %d input(s) left unfinished by the last run", len(unfinished))
            self.events.emit(
                EventType.SYSTEM, kind="inputs_recovered", ids=[r.id for r in unfinished]
            )
        return len(unfinished)

    # ---- control ------------------------------------------------------------------------------

    def stop(self) -> list[int]:
        """Stop the running turn and short-circuit every input waiting now."""
        return self.loop.stop()

    def pending_inputs(self) -> int:
        return self.loop.pending_inputs()

    def status(self) -> dict[str, Any]:
        scheduler = self.loop.scheduler
        current = scheduler.current
        return {
            "running": None if current is None else current.id,
            "stack": [t.id for t in scheduler.stack],
            "queue": [t.id for t in scheduler.waiting()],
            "pending_inputs": self.pending_inputs(),
        }

    async def close(self) -> None:
        await self.loop.close()
        await self.journal.close()

    # ---- one input ---------------------------------------------------------------------------

    async def _run(self, task: Task) -> TurnResult:
        record: InputRecord = task.payload
        turn: Turn | None = task.frame
        if turn is None:
            turn = Turn(self.agent, TurnInput(record.text, record.channel, record.user_id))
            turn.intercept = self._intercept_for(task)
            task.frame = turn
            await self.journal.mark(record.id, InputState.RUNNING)
        turn.stopped = task.stopped
        try:
            result = await turn.run()
        except asyncio.CancelledError:
            if task.stopped:
                # Shielded: the journal must learn of the stop even though this task is
                # being cancelled.
                await asyncio.shield(self._stopped(turn, record))
            raise
        except Exception:
            await self.journal.mark(record.id, InputState.FAILED)
            raise
        state = InputState.STOPPED if result.ended_by == "stopped" else InputState.DONE
        await self.journal.mark(record.id, state, result.reply)
        return result

    def _intercept_for(self, task: Task) -> Callable[[], list[str]]:
        """The intercept channel of one turn: interrupts that wait behind it (they could not
        preempt it), each told to the model once so it can wrap up; each still gets its own
        turn afterwards."""
        told: set[int] = set()

        def drain() -> list[str]:
            texts = []
            for waiting in self.loop.scheduler.waiting():
                if waiting.is_interrupt and waiting.id not in told and waiting is not task:
                    told.add(waiting.id)
                    texts.append(waiting.payload.text)
            return texts

        return drain

    async def _stopped(self, turn: Turn, record: InputRecord) -> None:
        await turn.record_stop()
        await self.journal.mark(record.id, InputState.STOPPED)

    def _trace(self, decision: Decision) -> None:
        payload = decision.as_payload()
        if decision.action is Action.ENQUEUE:
            payload["text"] = self._previews.get(decision.task, "")
        elif decision.action is Action.FINISH:
            self._previews.pop(decision.task, None)
        self.events.emit(EventType.SCHEDULER, source="scheduler", **payload)


__all__ = ["Inputs", "TaskStopped", "Ticket"]
