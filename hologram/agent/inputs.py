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
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from hologram.agent.agent import Agent
from hologram.agent.journal import InputJournal, InputRecord, InputState
from hologram.agent.resident import Residents
from hologram.agent.scheduler import Action, Decision, Task
from hologram.agent.scheduler_loop import SchedulerLoop, TaskStopped, Ticket
from hologram.agent.triage import TriageAssistant, busy_note
from hologram.agent.turn import Turn, TurnInput, TurnResult
from hologram.events import EventBus
from hologram.kernel.tasks import KernelTasks, TaskScope
from hologram.sdk import (
    CONSOLIDATION_CHANNEL,
    Clock,
    EndedBy,
    EventType,
    MediaRef,
    Priority,
    StageContext,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

PREVIEW = 80
BACKLOG_CHECK_S = 30.0
"""How often, on the kernel's clock, waiting inputs are checked against the offload threshold.
The check is local: an idle kernel makes no model call."""


class InputScheduler:
    """Inputs in, turns out, in the order and with the preemptions the scheduler decides
    (spec: the input scheduler, with its journal and the turns it runs)."""

    def __init__(
        self,
        agent: Agent,
        journal: InputJournal,
        clock: Clock,
        events: EventBus,
        cooldown: float = 2.0,
        offload_after: Callable[[], float | None] = lambda: None,
        mask: Callable[[str], str] = str,
        tasks: TaskScope | None = None,
    ) -> None:
        self.agent = agent
        self.tasks = tasks or KernelTasks().scope("scheduler")
        self.journal = journal
        self.events = events
        self.clock = clock
        self.loop = SchedulerLoop(
            self._run, clock, cooldown=cooldown, on_decision=self._trace, tasks=self.tasks
        )
        self.triage = TriageAssistant(agent.model)
        self._offload_after = offload_after
        self._mask = mask
        self._previews: dict[int, tuple[str, str]] = {}
        """Each waiting input's text (as the journal keeps it: masked) and channel, for the
        `enqueue` trace event the timeline widgets show."""
        self._triaged: set[int] = set()
        self._watcher: asyncio.Task[None] | None = None
        #: Set when an input is queued: the backlog watcher waits on it while nothing waits.
        self._queued = asyncio.Event()
        self._stop_records: set[asyncio.Future[None]] = set()
        self.residents: Residents | None = None
        """The main agent's resident sub-agents (set by the scheduler module)."""

    def start(self) -> None:
        self.loop.start()
        self._watcher = self.tasks.spawn(self._watch_backlog(), name="backlog-triage")

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
        media: Sequence[MediaRef] = (),
    ) -> Ticket:
        """Record the input durably, then queue it. The ticket's id is the journal's id.
        `media` is already in the media store (the door that took it stored it first)."""
        if not isinstance(text, str):
            raise TypeError(f"input text must be a string, not {type(text).__name__}")
        # The journal keeps the level the input will have, so a restart cannot raise a
        # plugin's clamped L4 back (the scheduler still sees the ask, to report the clamp).
        kept = Priority.L3 if from_plugin and level is Priority.L4 else level
        # The journal is on disk: a secret the user typed is stored as its alias.
        record = await self.journal.record(
            self._mask(text), channel, int(kept), source, user_id, media=tuple(media)
        )
        return self._inject(record, Priority(level), from_plugin)

    def _inject(self, record: InputRecord, level: Priority, from_plugin: bool) -> Ticket:
        self._previews[record.id] = (record.text[:PREVIEW], record.channel)
        self._queued.set()
        ticket = self.loop.inject(
            record, level, source=record.source, from_plugin=from_plugin, task_id=record.id
        )
        ticket.outcome.add_done_callback(lambda outcome: self._settle(ticket, outcome))
        return ticket

    async def say(self, text: str, channel: str = "notebook", **options: Any) -> TurnResult:
        """Submit and wait for the turn's result."""
        return await (await self.submit(text, channel, **options))

    async def consolidate(self, text: str) -> str:
        """Run an internal task through the self-input channel; returns the model's reply,
        which goes to memory only."""
        return (await self.consolidate_turn(text)).reply

    async def consolidate_turn(self, text: str) -> TurnResult:
        """`consolidate`, answering the whole result (its tokens as the provider counted)."""
        ticket = await self.submit(text, CONSOLIDATION_CHANNEL, source="self")
        result: TurnResult = await ticket
        return result

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
            "residents": [] if self.residents is None else self.residents.status(),
        }

    async def close(self) -> None:
        if self.residents is not None:
            await self.residents.close()  # first: their reports still need this queue
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.gather(self._watcher, return_exceptions=True)
        await self.loop.close()
        # Stops being written down finish before the journal closes under them.
        await asyncio.gather(*self._stop_records, return_exceptions=True)
        await self.journal.close()

    # ---- backlog triage -----------------------------------------------------------------------

    async def _watch_backlog(self) -> None:
        while True:
            if not self.loop.scheduler.pending():
                # Nothing can be overdue: wait for an input rather than for the clock, which
                # a replay moves through weeks (tens of thousands of idle checks).
                self._queued.clear()
                await self.clock.idle_until(self._queued)
            await self.clock.sleep(BACKLOG_CHECK_S)
            try:
                await self.offload()
            except Exception:
                log.exception("backlog triage failed")

    async def offload(self) -> int:
        """Show every input that has waited past the offload threshold, while the agent is
        busy, to the triage assistant (once each). Returns how many it saw."""
        threshold = self._offload_after()
        scheduler = self.loop.scheduler
        if threshold is None or scheduler.current is None:
            return 0
        now = self.clock.monotonic()
        due = [
            task
            for task in scheduler.waiting()
            if task.id not in self._triaged
            and not task.stopped
            and task.payload.channel != CONSOLIDATION_CHANNEL
            and now - task.submitted_at >= threshold
        ]
        for task in due:
            self._triaged.add(task.id)
            await self._triage_one(task)
        return len(due)

    async def _triage_one(self, task: Task) -> None:
        record: InputRecord = task.payload
        try:
            answer = (await self.triage.triage(record.text)).answer
        except Exception as exc:
            log.warning("the triage assistant could not look at input %s: %s", record.id, exc)
            answer = None
        if not any(waiting is task for waiting in self.loop.scheduler.waiting()):
            return  # the main agent took it up meanwhile
        now = self.clock.monotonic()
        if answer is None:
            await self.agent.deliver(record.channel, busy_note(record.text), source="triage")
            self.loop.note(Decision(Action.OFFLOAD, task.id, now, {"answered": False}))
            return
        delivered = await self.agent.deliver(record.channel, answer, source="triage")
        await self._remember(record, answer)
        await self._mark_over(record.id, InputState.DONE, answer)
        result = TurnResult(answer, record.channel, 0, EndedBy.TRIAGE, delivered)
        self.loop.withdraw(task.id, result)

    async def _remember(self, record: InputRecord, answer: str) -> None:
        memory = self.agent.memory
        if memory is None:
            return
        ctx = StageContext(raw_message=record.text, channel=record.channel)
        await memory.append_input(ctx)
        ctx.final_text = answer
        await memory.append_reply(ctx)

    # ---- one input ---------------------------------------------------------------------------

    async def _run(self, task: Task) -> TurnResult:
        record: InputRecord = task.payload
        turn: Turn | None = task.frame
        if turn is None:
            given = TurnInput(
                record.text,
                record.channel,
                record.user_id,
                input_id=record.id,
                attempt=record.attempts + 1,
                media=record.media,
            )
            turn = Turn(self.agent, given)
            turn.intercept = self._intercept_for(task)
            task.frame = turn
            await self.journal.mark(record.id, InputState.RUNNING)
        turn.stopped = task.stopped
        try:
            result = await turn.run()
        except asyncio.CancelledError:
            if turn.ending is None:
                raise
            result = await self._outlast(turn.ending)
        except Exception:
            await self.journal.mark(record.id, InputState.FAILED)
            raise
        state = InputState.STOPPED if result.outcome is EndedBy.STOPPED else InputState.DONE
        await self._outlast(self._mark_over(record.id, state, result.reply))
        return result

    async def _mark_over(self, input_id: int, state: InputState, reply: str | None = None) -> None:
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

    async def _outlast(self, work: Awaitable[T]) -> T:
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

    def _settle(self, ticket: Ticket, outcome: asyncio.Future[TurnResult]) -> None:
        """Whenever a stop ends an input without a result (while it ran, while it sat on
        the stack, or before its run began), write the stop down: in memory if its turn
        began, and in the journal, so a restart does not run it again. A shutdown is not
        a stop: those inputs stay unfinished in the journal and run at the next start."""
        task = ticket.task
        # Read the outcome whoever else does: nobody awaits an input re-queued after a
        # restart, and an unread exception (a shutdown's TaskStopped) is logged once per
        # ticket when the future is collected.
        error = None if outcome.cancelled() else outcome.exception()
        if task is None or not task.stopped or not isinstance(error, TaskStopped):
            return
        recording = self.tasks.spawn(self._stopped(task), name=f"input-{task.id}-stopped")
        self._stop_records.add(recording)
        recording.add_done_callback(self._stop_records.discard)

    async def _stopped(self, task: Task) -> None:
        turn: Turn | None = task.frame
        if turn is not None and turn.ended_by is not EndedBy.STOPPED:
            await turn.record_stop()
            turn.publish_finished()
        await self._mark_over(task.payload.id, InputState.STOPPED)

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

    def _trace(self, decision: Decision) -> None:
        payload = decision.as_payload()
        if decision.action is Action.ENQUEUE:
            payload["text"], payload["channel"] = self._previews.get(decision.task, ("", ""))
        elif decision.action is Action.FINISH or decision.detail.get("answered"):
            # The input is over (an answered triage never starts): forget what was kept of it.
            self._previews.pop(decision.task, None)
            self._triaged.discard(decision.task)
        self.events.emit(EventType.SCHEDULER, source="scheduler", **payload)


async def _awaiting(work: Awaitable[T]) -> T:
    return await work


__all__ = ["InputScheduler", "TaskStopped", "Ticket"]
