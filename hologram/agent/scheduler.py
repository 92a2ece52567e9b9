"""The input scheduler (spec 000: "Input Scheduler & Interrupt Mechanism") as a pure state
machine.

It decides; it never waits. Every method takes the current time from the caller and returns
the decisions it made, so the rules can be checked exhaustively on an injected clock and the
asyncio driver around it (`dispatcher.py`) stays a thin executor. It numbers nothing either:
a task's id is the caller's (in the kernel, the input journal's), and within a level tasks
start in the order of their ids.

The rules, in the spec's words where it has them:

- Two task classes: queued work (level 0) and interrupts (L1-L4). A plugin's L4 becomes L3.
- A task preempts the running one only with a strictly greater *effective* level:
  level + min(times preempted, 2), capped at L4 (the starvation guard).
- A task that was just preempted cannot be preempted again for `cooldown` seconds.
- A preempted task goes onto the interrupt stack (LIFO, never re-sorted) and resumes later.
  Because every task started over the stack outranks the stack's top, effective levels
  strictly increase up the stack, which bounds its depth by the number of levels.
- Stop cancels the running task and short-circuits every task already waiting at that moment
  (the cancel budget); later arrivals are unaffected.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

from hologram.sdk import (
    Priority,
    SchedulerDecision,
)

MAX_BOOST = 2

D = TypeVar("D")
"""What a task carries for whoever runs it (in the kernel: one input's run)."""


class Action(StrEnum):
    ENQUEUE = "enqueue"
    START = "start"
    PREEMPT = "preempt"
    RESUME = "resume"
    FINISH = "finish"
    STOP = "stop"
    SHORT_CIRCUIT = "short_circuit"
    CLAMP = "clamp"
    OFFLOAD = "offload"


@dataclass(eq=False)
class Task(Generic[D]):
    """One input waiting for, or getting, the agent's attention. What it needs to resume
    where a preemption left it is its payload's business."""

    id: int
    level: Priority
    payload: D
    source: str
    submitted_at: float
    preempt_count: int = 0
    last_preempted_at: float | None = None
    stopped: bool = False

    @property
    def is_interrupt(self) -> bool:
        return self.level is not Priority.QUEUED

    @property
    def effective_level(self) -> int:
        return min(int(Priority.L4), int(self.level) + min(self.preempt_count, MAX_BOOST))


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    task: int
    at: float
    detail: dict[str, Any] = field(default_factory=dict)

    def as_payload(self, text: str | None = None, channel: str | None = None) -> SchedulerDecision:
        """The decision as a trace event's payload (what the preemption widget reads); an
        enqueue's input `text` and `channel` are the caller's to add."""
        detail = dict(self.detail)
        level = detail.pop("level", None)
        return SchedulerDecision(
            action=self.action.value,
            task=self.task,
            at=self.at,
            level=level,
            text=text,
            channel=channel,
            detail=detail,
        )


class Scheduler(Generic[D]):
    def __init__(self, cooldown: float = 2.0) -> None:
        self.cooldown = cooldown
        self.current: Task[D] | None = None
        self.stack: list[Task[D]] = []
        self._waiting: list[tuple[int, int, Task[D]]] = []
        self._ids: set[int] = set()
        """The ids of every task not finished (waiting, running or on the stack)."""

    # ---- what is there ----------------------------------------------------------------------

    def waiting(self) -> list[Task[D]]:
        """Tasks not yet started, in the order they would start."""
        return [task for *_, task in sorted(self._waiting)]

    def pending(self) -> int:
        return len(self._waiting)

    def _best_waiting(self) -> Task[D] | None:
        return self._waiting[0][2] if self._waiting else None

    def in_cooldown(self, task: Task[D], now: float) -> bool:
        return task.last_preempted_at is not None and now - task.last_preempted_at < self.cooldown

    def can_preempt(self, challenger: Task[D], running: Task[D], now: float) -> bool:
        return challenger.effective_level > running.effective_level and not self.in_cooldown(
            running, now
        )

    # ---- events -----------------------------------------------------------------------------

    def submit(
        self,
        task_id: int,
        payload: D,
        level: Priority = Priority.QUEUED,
        *,
        now: float,
        source: str = "",
        from_plugin: bool = False,
    ) -> tuple[Task[D], list[Decision]]:
        """A new input arrives, numbered by the caller. It starts at once, preempts, or
        waits."""
        if task_id in self._ids:
            raise ValueError(f"task {task_id} is here already: each task needs an id of its own")
        self._ids.add(task_id)
        decisions: list[Decision] = []
        level = Priority(level)
        task = Task(task_id, level, payload, source, now)
        if from_plugin and level is Priority.L4:
            task.level = Priority.L3
            decisions.append(Decision(Action.CLAMP, task.id, now, {"asked": 4, "given": 3}))
        heapq.heappush(self._waiting, (-int(task.level), task.id, task))
        decisions.append(
            Decision(Action.ENQUEUE, task.id, now, {"level": int(task.level), "origin": source})
        )
        decisions += self._dispatch(now)
        return task, decisions

    def finish(self, task_id: int, now: float) -> list[Decision]:
        """The running task is done (or was stopped); something else gets the agent."""
        if self.current is None or self.current.id != task_id:
            running = None if self.current is None else self.current.id
            raise ValueError(f"task {task_id} is not running (running: {running})")
        self.current = None
        self._ids.discard(task_id)
        return [Decision(Action.FINISH, task_id, now), *self._dispatch(now)]

    def poll(self, now: float) -> list[Decision]:
        """Look again: a cooldown may have run out since the last decision."""
        return self._dispatch(now)

    def stop(self, now: float) -> list[Decision]:
        """Cancel the running task and short-circuit everything waiting at this moment,
        on the stack and in the queue. What arrives afterwards runs normally."""
        budget = [task for *_, task in self._waiting] + self.stack
        for task in budget:
            task.stopped = True
        decisions = []
        if self.current is not None:
            self.current.stopped = True
            decisions.append(
                Decision(Action.STOP, self.current.id, now, {"budget": [t.id for t in budget]})
            )
        return decisions

    def withdraw(self, task_id: int, now: float) -> list[Decision]:
        """Take a waiting task out of the queue: someone else (the triage assistant) has
        answered it."""
        for index, (_, _, task) in enumerate(self._waiting):
            if task.id == task_id:
                self._waiting.pop(index)
                heapq.heapify(self._waiting)
                self._ids.discard(task_id)
                return [Decision(Action.OFFLOAD, task_id, now, {"answered": True})]
        raise ValueError(f"task {task_id} is not waiting")

    def next_deadline(self) -> float | None:
        """When `poll` could next decide something: the running task's cooldown end, if a
        waiting task would preempt it then."""
        best, running = self._best_waiting(), self.current
        if best is None or running is None or running.last_preempted_at is None:
            return None
        if best.effective_level <= running.effective_level:
            return None
        return running.last_preempted_at + self.cooldown

    # ---- the one place that chooses -----------------------------------------------------------

    def _dispatch(self, now: float) -> list[Decision]:
        best = self._best_waiting()
        if self.current is not None:
            if best is not None and self.can_preempt(best, self.current, now):
                victim = self.current
                victim.preempt_count += 1
                victim.last_preempted_at = now
                self.stack.append(victim)
                self.current = None
                preempt = Decision(
                    Action.PREEMPT,
                    victim.id,
                    now,
                    {"by": best.id, "depth": len(self.stack)},
                )
                return [preempt, self._start(now)]
            return []
        if self.stack:
            top = self.stack[-1]
            if best is not None and self.can_preempt(best, top, now):
                return [self._start(now)]
            self.current = self.stack.pop()
            return [self._decided(Action.RESUME, self.current, now)]
        if best is not None:
            return [self._start(now)]
        return []

    def _start(self, now: float) -> Decision:
        _, _, task = heapq.heappop(self._waiting)
        self.current = task
        return self._decided(Action.START, task, now)

    def _decided(self, action: Action, task: Task[D], now: float) -> Decision:
        detail: dict[str, Any] = {"level": int(task.level), "effective": task.effective_level}
        if task.stopped:
            detail["short_circuit"] = True
        return Decision(action, task.id, now, detail)
