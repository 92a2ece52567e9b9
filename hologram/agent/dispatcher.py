"""The asyncio driver around the scheduler: an inbox, a loop that carries out decisions, and
the cancellations that make preemption and stop real.

Work lands in the inbox first (`inject` is a plain call, safe from any task); the loop pumps
it into the scheduler and does what it decides. Each task carries its own `Work`: the running
task is an asyncio task of `work.run(...)` (in the kernel: one input's turn). Preempting it
cancels that asyncio task, which aborts its in-flight LLM request at once; the work keeps what
it finished, and `run` is called again on resume. Stopping it cancels it for good.

Control runs one way: whoever owns a dispatcher hands it work and gets tickets back; the
dispatcher asks the scheduler, and runs the work it was handed. It never calls its owner.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, cast

from hologram.agent.scheduler import Action, Decision, Scheduler, Task
from hologram.kernel import TaskScope, first_completed
from hologram.sdk import Clock, Priority

log = logging.getLogger(__name__)

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Work(Protocol[R_co]):
    """What a task does while it has the agent. `run` is called again after a preemption and
    goes on from where it was cut off; `stopped` says a stop covered the task before it ran,
    so it should only be closed, not carried out."""

    async def run(self, stopped: bool) -> R_co: ...


W = TypeVar("W", bound=Work[Any])

Observer = Callable[[Decision, Task[Any] | None], None]
"""Told every decision as it is carried out, with its task while the dispatcher knows it."""


class TaskStopped(Exception):
    """The input was stopped (`/stop`) before or while it ran."""


@dataclass(eq=False)
class Ticket(Generic[W, R]):
    """What `inject` hands back: the task's id and the future of its outcome."""

    id: int
    level: Priority
    outcome: asyncio.Future[R]
    task: Task[W] | None = None

    def __await__(self) -> Generator[Any, None, R]:
        return self.outcome.__await__()


@dataclass(eq=False)
class _Running(Generic[W, R]):
    task: Task[W]
    ticket: Ticket[W, R]
    job: asyncio.Task[R] | None = None
    #: Why the job was cancelled: the decision that did it (PREEMPT or STOP).
    ending: Action | None = None
    finished: bool = False
    result: R | None = None


@dataclass(eq=False)
class _Inbound(Generic[W, R]):
    work: W
    level: Priority
    source: str
    from_plugin: bool
    #: When it arrived: an input waits from here, not from when the loop got to it.
    at: float
    ticket: Ticket[W, R] = field(repr=False)


class Dispatcher(Generic[W, R]):
    """Runs work in the order, and with the preemptions, its `Scheduler` decides."""

    def __init__(
        self,
        clock: Clock,
        *,
        cooldown: float = 2.0,
        observe: Observer | None = None,
        tasks: TaskScope,
    ) -> None:
        self.scheduler: Scheduler[W] = Scheduler(cooldown=cooldown)
        self._tasks = tasks
        self._clock = clock
        self._observe = observe
        self._inbox: deque[_Inbound[W, R]] = deque()
        self._records: dict[int, _Running[W, R]] = {}
        self._wake = asyncio.Event()
        self._main: asyncio.Task[None] | None = None
        self._closing = False
        #: How deep in `_carry_out` we are (an observer of a decision may inject).
        self._carrying = 0

    # ---- the outside --------------------------------------------------------------------------

    def inject(
        self,
        task_id: int,
        work: W,
        level: Priority = Priority.QUEUED,
        *,
        source: str = "",
        from_plugin: bool = False,
    ) -> Ticket[W, R]:
        """Hand work to the scheduler under the caller's id (in the kernel, the input
        journal's); returns at once with its ticket."""
        ticket: Ticket[W, R] = Ticket(
            task_id, Priority(level), asyncio.get_running_loop().create_future()
        )
        arrived = self._clock.monotonic()
        self._inbox.append(_Inbound(work, Priority(level), source, from_plugin, arrived, ticket))
        if (
            ticket.level is not Priority.QUEUED
            and self._main is not None
            and not self._closing
            and not self._carrying
        ):
            # An interrupt is decided here and now (as a stop is): the running turn's model
            # call is cancelled before `inject` returns, not once the loop's task comes
            # round, which behind a busy event loop is the longest part of the wait. Not
            # from inside a decision being carried out (an observer that injects): the
            # decisions after it were taken before this input came, so it waits its turn.
            self._pump()
        self._wake.set()
        return ticket

    def pending_inputs(self) -> int:
        """Tasks not yet started: those in the scheduler's queue and those still in the
        inbox (during a long turn the loop may not have pumped them yet)."""
        return len(self._inbox) + self.scheduler.pending()

    def stop(self) -> list[int]:
        """Cancel the running task and short-circuit every task waiting now, inbox
        included. Returns the ids of the tasks the stop covers."""
        self._pump()
        now = self._clock.monotonic()
        waiting = [t.id for t in self.scheduler.waiting()] + [t.id for t in self.scheduler.stack]
        decisions = self.scheduler.stop(now)
        self._carry_out(decisions)
        running = [d.task for d in decisions if d.action is Action.STOP]
        return running + waiting

    def unfinished(self) -> list[W]:
        """The work of every task not finished: the running one, the suspended ones (top of
        the stack first), then those waiting, in the order they would start."""
        self._pump()
        scheduler = self.scheduler
        tasks = [scheduler.current] if scheduler.current is not None else []
        tasks += reversed(scheduler.stack)
        tasks += scheduler.waiting()
        return [task.payload for task in tasks]

    def withdraw(self, task_id: int, result: R) -> None:
        """Answer a waiting task from outside the scheduler: it leaves the queue and its
        ticket gets `result`."""
        self._pump()
        self._carry_out(self.scheduler.withdraw(task_id, self._clock.monotonic()))
        record = self._records.pop(task_id)
        if not record.ticket.outcome.done():
            record.ticket.outcome.set_result(result)

    def note(self, decision: Decision) -> None:
        """Publish a decision taken outside the scheduler (a triage that kept the input)."""
        self._carry_out([decision])

    def start(self) -> asyncio.Task[None]:
        # A background task of the group: should it ever die, the group logs and publishes
        # it (no input would run after that).
        if self._main is None:
            self._main = self._tasks.spawn(self._run(), name="scheduler-loop")
        return self._main

    async def close(self) -> None:
        """Stop the loop; tasks not finished are stopped, and their tickets say so."""
        self._closing = True
        if self._main is not None:
            self._main.cancel()
            await asyncio.gather(self._main, return_exceptions=True)
        jobs = [r.job for r in self._records.values() if r.job is not None and not r.job.done()]
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        for record in self._records.values():
            if not record.ticket.outcome.done():
                record.ticket.outcome.set_exception(TaskStopped("the kernel shut down"))
        for inbound in self._inbox:
            inbound.ticket.outcome.set_exception(TaskStopped("the kernel shut down"))
        self._inbox.clear()

    # ---- the loop -------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            self._pump()
            self._carry_out(self.scheduler.poll(self._clock.monotonic()))
            if self._wake.is_set():
                continue
            deadline = self.scheduler.next_deadline()
            if deadline is None:
                await self._wake.wait()
            else:
                await self._sleep_or_wake(deadline - self._clock.monotonic())

    async def _sleep_or_wake(self, seconds: float) -> None:
        await first_completed(self._clock.sleep(max(0.0, seconds)), self._wake.wait())

    def _pump(self) -> None:
        while self._inbox:
            inbound = self._inbox.popleft()
            task, decisions = self.scheduler.submit(
                inbound.ticket.id,
                inbound.work,
                inbound.level,
                now=self._clock.monotonic(),
                source=inbound.source,
                from_plugin=inbound.from_plugin,
            )
            task.submitted_at = inbound.at
            inbound.ticket.task = task
            self._records[task.id] = _Running(task, inbound.ticket)
            self._carry_out(decisions)

    def _carry_out(self, decisions: list[Decision]) -> None:
        self._carrying += 1
        try:
            for decision in decisions:
                self._carry_out_one(decision)
        finally:
            self._carrying -= 1

    def _carry_out_one(self, decision: Decision) -> None:
        record = self._records.get(decision.task)
        if self._observe is not None:
            try:
                self._observe(decision, None if record is None else record.task)
            except Exception:
                log.exception("scheduler decision observer failed")
        if record is None:
            return
        if decision.action in (Action.START, Action.RESUME):
            self._launch(record)
        elif decision.action in (Action.PREEMPT, Action.STOP):
            self._cancel(record, decision.action)

    def _launch(self, record: _Running[W, R]) -> None:
        if record.finished:
            # It completed in the instant between the preempt decision and its cancellation:
            # nothing is left to resume.
            self._complete(record)
            return
        record.ending = None
        previous = record.job
        # Awaited: `_job_done` takes its outcome to the input's ticket.
        record.job = self._tasks.spawn(
            self._run_after(previous, record.task), name=f"input-{record.task.id}", awaited=True
        )
        record.job.add_done_callback(functools.partial(self._job_done, record))

    async def _run_after(self, previous: asyncio.Task[R] | None, task: Task[W]) -> R:
        """Run the task, but only once its preempted previous run has finished unwinding,
        so two runs never touch one piece of work at the same time."""
        if previous is not None and not previous.done():
            await asyncio.wait([previous])
        result: R = await task.payload.run(task.stopped)
        return result

    def _cancel(self, record: _Running[W, R], why: Action) -> None:
        record.ending = why
        if record.job is not None and not record.job.done():
            record.job.cancel()

    def _job_done(self, record: _Running[W, R], job: asyncio.Task[R]) -> None:
        if job is not record.job:
            return  # an earlier, preempted run finishing late: the current run decides
        outcome = record.ticket.outcome
        if job.cancelled():
            if record.ending is Action.PREEMPT:
                return  # suspended on the stack; it will be launched again
            if not outcome.done():
                why = "the kernel shut down" if self._closing else "was stopped"
                outcome.set_exception(TaskStopped(f"input {record.task.id}: {why}"))
        elif (error := job.exception()) is not None:
            log.error("input %s failed", record.task.id, exc_info=error)
            if not outcome.done():
                outcome.set_exception(error)
        else:
            record.finished, record.result = True, job.result()
            if record.ending is Action.PREEMPT:
                return  # finished just as it was preempted: completed on its next launch
        self._complete(record)

    def _complete(self, record: _Running[W, R]) -> None:
        """The task is over: its ticket learns how, and the scheduler hears of it now, not
        on the loop's next pass. Deferred, a preemption decided in between (by a stop or
        an input pumped meanwhile) would push the finished task onto the stack, and it
        would never be finished."""
        if record.finished and not record.ticket.outcome.done():
            record.ticket.outcome.set_result(cast(R, record.result))
        self._records.pop(record.task.id, None)
        if not self._closing:  # nothing new starts while the loop shuts down
            self._carry_out(self.scheduler.finish(record.task.id, self._clock.monotonic()))
