"""The kernel's door for input: journal, dispatcher and turns, put together.

Control runs one way. `submit` writes the input to the journal (durably), its journal id
becoming its only id, and hands the dispatcher an `InputRun` under that id; the dispatcher
asks the scheduler and runs each input's run when it says so. A preempted run keeps its
`Turn`, which goes on from where it was cut off. Internal work (memory consolidation) comes
in through the self-input channel `_consolidation_`: a full turn whose reply only writes
memory and is sent nowhere.

`say` (submit, then wait for the turn's result) is the kernel's one way to run a turn and
wait for it: the facade's, the plugins' and the tests' say all come through here.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypedDict, Unpack

from hologram.agent.agent import Agent
from hologram.agent.dispatcher import Dispatcher, TaskStopped, Ticket
from hologram.agent.input_run import InputLedger, InputRun, intercept_channel
from hologram.agent.journal import InputJournal, InputRecord, InputState
from hologram.agent.resident import Residents
from hologram.agent.scheduler import Action, Decision, Task
from hologram.agent.triage import TriageAssistant, busy_note
from hologram.agent.turn import TurnResult
from hologram.events import EventBus
from hologram.kernel import TaskScope
from hologram.sdk import (
    CONSOLIDATION_CHANNEL,
    Clock,
    EndedBy,
    MediaRef,
    Priority,
    StageContext,
    SystemNote,
)

log = logging.getLogger(__name__)

InputTicket = Ticket[InputRun, TurnResult]
"""What `submit` hands back: await it for the turn's result; its id is the journal's."""


class InputOptions(TypedDict, total=False):
    """What `say` passes on to `submit`, as `submit` takes it."""

    level: Priority
    source: str
    from_plugin: bool
    user_id: str
    media: Sequence[MediaRef]


PREVIEW = 80
BACKLOG_CHECK_S = 30.0
"""How often, on the kernel's clock, waiting inputs are checked against the offload threshold.
The check is local: an idle kernel makes no model call."""


class Inputs:
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
        *,
        tasks: TaskScope,
    ) -> None:
        self.agent = agent
        self.tasks = tasks
        self.journal = journal
        self.events = events
        self.clock = clock
        self.dispatcher: Dispatcher[InputRun, TurnResult] = Dispatcher(
            clock, cooldown=cooldown, observe=functools.partial(_publish, events), tasks=self.tasks
        )
        self.ledger = InputLedger(journal, agent, self.tasks)
        self.triage = TriageAssistant(agent.model)
        self._offload_after = offload_after
        self._mask = mask
        self._watcher: asyncio.Task[None] | None = None
        #: Set when an input is queued: the backlog watcher waits on it while nothing waits.
        self._queued = asyncio.Event()
        self._stop_records: set[asyncio.Future[None]] = set()
        #: The main agent's resident sub-agents (`mount_residents`, by the scheduler module).
        self.residents: Residents | None = None

    def mount_residents(self, residents: Residents) -> None:
        """Give the door its residents, once, after it is built (they report into it, so
        they are made from it). A second mount would orphan the first set's tasks."""
        if self.residents is not None:
            raise RuntimeError("the residents are already mounted (once, at boot)")
        self.residents = residents

    def start(self) -> None:
        self.dispatcher.start()
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
    ) -> InputTicket:
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

    def _inject(self, record: InputRecord, level: Priority, from_plugin: bool) -> InputTicket:
        self._queued.set()
        intercept = intercept_channel(self.dispatcher.scheduler, record.id)
        run = InputRun(record, self.ledger, intercept)
        ticket = self.dispatcher.inject(
            record.id, run, level, source=record.source, from_plugin=from_plugin
        )
        ticket.outcome.add_done_callback(lambda outcome: self._settle(ticket, outcome))
        return ticket

    async def say(
        self, text: str, channel: str = "notebook", **options: Unpack[InputOptions]
    ) -> TurnResult:
        """Submit and wait for the turn's result: the kernel's one say. `Kernel.say`, the
        `%hologram say` magic and the service's synchronous input are this, through
        `submit`; nothing runs a turn for an input without the journal and the scheduler."""
        ticket = await self.submit(text, channel, **options)
        return await ticket

    async def consolidate(self, text: str) -> str:
        """Run an internal task through the self-input channel; returns the model's reply,
        which goes to memory only."""
        return (await self.consolidate_turn(text)).reply

    async def consolidate_turn(self, text: str) -> TurnResult:
        """`consolidate`, answering the whole result (its tokens as the provider counted)."""
        return await self.say(text, CONSOLIDATION_CHANNEL, source="self")

    async def recover(self) -> int:
        """Queue again every input acknowledged before a crash and not finished."""
        unfinished = await self.journal.unfinished()
        for record in unfinished:
            self._inject(record, Priority(record.level), from_plugin=False)
        if unfinished:
            log.warning("re-queued %d input(s) left unfinished by the last run", len(unfinished))
            self.events.emit(
                SystemNote(kind="inputs_recovered", detail={"ids": [r.id for r in unfinished]})
            )
        return len(unfinished)

    # ---- control ------------------------------------------------------------------------------

    def stop(self) -> list[int]:
        """Stop the running turn and short-circuit every input waiting now."""
        return self.dispatcher.stop()

    def pending_inputs(self) -> int:
        return self.dispatcher.pending_inputs()

    def status(self) -> dict[str, Any]:
        scheduler = self.dispatcher.scheduler
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
        await self.dispatcher.close()
        # Stops being written down finish before the journal closes under them.
        await asyncio.gather(*self._stop_records, return_exceptions=True)
        await self.journal.close()

    # ---- backlog triage -----------------------------------------------------------------------

    async def _watch_backlog(self) -> None:
        while True:
            if not self.dispatcher.scheduler.pending():
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
        scheduler = self.dispatcher.scheduler
        if threshold is None or scheduler.current is None:
            return 0
        now = self.clock.monotonic()
        due = [
            task
            for task in scheduler.waiting()
            if not task.payload.triaged
            and not task.stopped
            and task.payload.record.channel != CONSOLIDATION_CHANNEL
            and now - task.submitted_at >= threshold
        ]
        for task in due:
            task.payload.triaged = True
            await self._triage_one(task)
        return len(due)

    async def _triage_one(self, task: Task[InputRun]) -> None:
        record = task.payload.record
        try:
            answer = (await self.triage.triage(record.text)).answer
        except Exception as exc:
            log.warning("the triage assistant could not look at input %s: %s", record.id, exc)
            answer = None
        if not any(waiting is task for waiting in self.dispatcher.scheduler.waiting()):
            return  # the main agent took it up meanwhile
        now = self.clock.monotonic()
        if answer is None:
            await self.agent.deliver(record.channel, busy_note(record.text), source="triage")
            self.dispatcher.note(Decision(Action.OFFLOAD, task.id, now, {"answered": False}))
            return
        delivered = await self.agent.deliver(record.channel, answer, source="triage")
        await self._remember(record, answer)
        await self.ledger.mark_over(record.id, InputState.DONE, answer)
        result = TurnResult(answer, record.channel, 0, EndedBy.TRIAGE, delivered)
        self.dispatcher.withdraw(task.id, result)

    async def _remember(self, record: InputRecord, answer: str) -> None:
        memory = self.agent.memory
        if memory is None:
            return
        ctx = StageContext(raw_message=record.text, channel=record.channel)
        await memory.append_input(ctx)
        ctx.final_text = answer
        await memory.append_reply(ctx)

    # ---- stops -----------------------------------------------------------------------------

    def _settle(self, ticket: InputTicket, outcome: asyncio.Future[TurnResult]) -> None:
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
        recording = self.tasks.spawn(task.payload.record_stop(), name=f"input-{task.id}-stopped")
        self._stop_records.add(recording)
        recording.add_done_callback(self._stop_records.discard)


def _publish(events: EventBus, decision: Decision, task: Task[InputRun] | None) -> None:
    """Publish a decision; an `enqueue` names its input's text (as the journal keeps it:
    masked) and channel, for the timeline widgets."""
    payload = decision.as_payload()
    if decision.action is Action.ENQUEUE:
        record = None if task is None else task.payload.record
        payload = decision.as_payload(
            text="" if record is None else record.text[:PREVIEW],
            channel="" if record is None else record.channel,
        )
    events.emit(payload, source="scheduler")


__all__ = ["InputTicket", "Inputs", "TaskStopped", "Ticket"]
