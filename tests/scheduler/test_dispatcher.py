"""The dispatcher: real tasks, real cancellation, the clock injected."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from hologram.agent.dispatcher import Dispatcher, Observer, TaskStopped, Ticket
from hologram.agent.scheduler import Action, Decision, Task
from hologram.kernel import KernelTasks, ManualClock
from hologram.sdk import Clock, Priority

DEADLINE = 10  # seconds: a guard against hanging, never a measurement


class Step:
    """One scripted input (a dispatcher's work): it waits for the test to release it and
    keeps what it finished across preemptions, the way an agent turn keeps its completed
    tool rounds."""

    def __init__(self, script: Script, name: str) -> None:
        self.script, self.name = script, name
        self.steps: list[str] = []

    async def run(self, stopped: bool) -> str:
        script, name = self.script, self.name
        if name in script.failing:
            raise RuntimeError("runner bug")
        if stopped:
            script.log.append(f"short-circuit {name}")
            return f"{name} short-circuited"
        script.log.append(f"run {name}")
        script.began(name).set()
        try:
            if "step 1" not in self.steps:
                self.steps.append("step 1")  # done once, kept across preemption
            await script.gate(name).wait()
        except asyncio.CancelledError:
            script.log.append(f"cancelled {name}")
            for _ in range(3):  # unwinding takes a few turns of the loop, as closing a socket does
                await asyncio.sleep(0)
            raise
        return f"{name} done after {self.steps}"


class Script:
    """The gates and the log of every scripted input."""

    def __init__(self) -> None:
        self.gates: dict[str, asyncio.Event] = {}
        self.started: dict[str, asyncio.Event] = {}
        self.log: list[str] = []
        self.failing: set[str] = set()

    def gate(self, name: str) -> asyncio.Event:
        return self.gates.setdefault(name, asyncio.Event())

    def began(self, name: str) -> asyncio.Event:
        return self.started.setdefault(name, asyncio.Event())


class Scripted(Dispatcher[Step, str]):
    """A dispatcher of scripted inputs, numbered as the input journal numbers them."""

    def __init__(
        self,
        script: Script,
        clock: Clock,
        *,
        tasks: KernelTasks,
        cooldown: float = 2.0,
        observe: Observer | None = None,
    ) -> None:
        super().__init__(clock, cooldown=cooldown, observe=observe, tasks=tasks.scope("scheduler"))
        self.script = script
        self._journal = itertools.count(1)

    def give(
        self, name: str, level: Priority = Priority.QUEUED, **options: Any
    ) -> Ticket[Step, str]:
        return self.inject(next(self._journal), Step(self.script, name), level, **options)


def recording(decisions: list[Decision]) -> Observer:
    def observe(decision: Decision, task: Task[Any] | None) -> None:
        decisions.append(decision)

    return observe


async def wait_for(event: asyncio.Event) -> None:
    await asyncio.wait_for(event.wait(), DEADLINE)


@pytest.fixture
async def loop_and_script(tasks: KernelTasks):
    script = Script()
    decisions: list[Decision] = []
    loop = Scripted(script, ManualClock(), tasks=tasks, cooldown=2.0, observe=recording(decisions))
    loop.start()
    yield loop, script, decisions
    await loop.close()


async def test_inputs_run_one_at_a_time_in_arrival_order(loop_and_script) -> None:
    loop, script, _ = loop_and_script
    first, second = loop.give("a"), loop.give("b")
    await wait_for(script.began("a"))
    assert loop.pending_inputs() == 1
    script.gate("a").set()
    script.gate("b").set()
    assert await asyncio.wait_for(first.outcome, DEADLINE) == "a done after ['step 1']"
    assert await asyncio.wait_for(second.outcome, DEADLINE) == "b done after ['step 1']"
    assert script.log == ["run a", "run b"]


async def test_an_interrupt_cancels_the_running_input_which_resumes_from_where_it_was(
    loop_and_script,
) -> None:
    loop, script, decisions = loop_and_script
    work = loop.give("work")
    await wait_for(script.began("work"))
    urgent = loop.give("urgent", Priority.L3)
    await wait_for(script.began("urgent"))
    assert script.log == ["run work", "cancelled work", "run urgent"]
    script.gate("urgent").set()
    assert await asyncio.wait_for(urgent.outcome, DEADLINE) == "urgent done after ['step 1']"
    script.gate("work").set()
    # The work kept its progress through the preemption: step 1 was not done again.
    assert await asyncio.wait_for(work.outcome, DEADLINE) == "work done after ['step 1']"
    assert [d.action for d in decisions if d.task == work.id] == [
        Action.ENQUEUE,
        Action.START,
        Action.PREEMPT,
        Action.RESUME,
        Action.FINISH,
    ]


async def test_stop_short_circuits_exactly_the_inputs_waiting_at_that_moment_inbox_included(
    loop_and_script,
) -> None:
    loop, script, _ = loop_and_script
    running = loop.give("running")
    await wait_for(script.began("running"))
    queued = [loop.give("q1"), loop.give("q2")]
    await asyncio.sleep(0)  # the loop pumps these two into the scheduler's queue
    in_inbox = loop.give("still in the inbox")
    assert loop.pending_inputs() == 3
    covered = loop.stop()
    assert covered == [running.id, queued[0].id, queued[1].id, in_inbox.id]
    after = loop.give("after the stop")
    script.gate("after the stop").set()

    with pytest.raises(TaskStopped):
        await asyncio.wait_for(running.outcome, DEADLINE)
    for ticket in [*queued, in_inbox]:
        assert (await asyncio.wait_for(ticket.outcome, DEADLINE)).endswith("short-circuited")
    assert await asyncio.wait_for(after.outcome, DEADLINE) == "after the stop done after ['step 1']"


async def test_a_preempted_input_is_protected_for_the_cooldown_on_the_injected_clock(
    tasks: KernelTasks,
) -> None:
    script = Script()
    clock = ManualClock()
    loop = Scripted(script, clock, tasks=tasks, cooldown=2.0)
    loop.start()
    try:
        work = loop.give("work")
        await wait_for(script.began("work"))
        loop.give("ping", Priority.L1)
        await wait_for(script.began("ping"))
        script.gate("ping").set()
        script.started["work"].clear()
        await wait_for(script.began("work"))  # resumed
        loop.give("late", Priority.L3)
        for _ in range(5):
            await asyncio.sleep(0)
        assert "run late" not in script.log, "the cooldown protects the resumed input"
        await clock.advance(2.0)
        await wait_for(script.began("late"))
        assert script.log[-2:] == ["cancelled work", "run late"]
        script.gate("late").set()
        script.gate("work").set()
        await asyncio.wait_for(work.outcome, DEADLINE)
    finally:
        await loop.close()


async def test_a_failing_input_fails_its_ticket_and_the_loop_goes_on(loop_and_script) -> None:
    loop, script, _ = loop_and_script

    script.failing.add("bad")
    bad, good = loop.give("bad"), loop.give("good")
    script.gate("good").set()
    with pytest.raises(RuntimeError, match="runner bug"):
        await asyncio.wait_for(bad.outcome, DEADLINE)
    assert (await asyncio.wait_for(good.outcome, DEADLINE)).startswith("good done")


async def test_close_stops_what_has_not_finished(loop_and_script) -> None:
    loop, script, _ = loop_and_script
    running, waiting = loop.give("running"), loop.give("waiting")
    await wait_for(script.began("running"))
    await loop.close()
    for ticket in (running, waiting):
        with pytest.raises(TaskStopped):
            await ticket.outcome


async def test_a_plugin_asking_for_l4_gets_l3(loop_and_script) -> None:
    loop, script, decisions = loop_and_script
    ticket = loop.give("loud plugin", Priority.L4, from_plugin=True)
    await wait_for(script.began("loud plugin"))
    assert ticket.task is not None and ticket.task.level is Priority.L3
    assert any(d.action is Action.CLAMP and d.task == ticket.id for d in decisions)
    script.gate("loud plugin").set()


async def test_a_resumed_input_is_still_the_one_running_after_a_quick_interrupt(
    loop_and_script,
) -> None:
    # The interrupt finishes before the preempted run has even finished unwinding; the late
    # cancellation of that earlier run must not be taken for the end of the input.
    loop, script, _ = loop_and_script
    work = loop.give("work")
    await wait_for(script.began("work"))
    script.started["work"].clear()
    script.gate("instant").set()
    instant = loop.give("instant", Priority.L3)
    assert (await asyncio.wait_for(instant.outcome, DEADLINE)).startswith("instant done")
    await wait_for(script.began("work"))  # resumed
    for _ in range(5):
        await asyncio.sleep(0)
    assert not work.outcome.done()
    assert loop.scheduler.current is not None and loop.scheduler.current.id == work.id
    assert loop.stop() == [work.id]
    with pytest.raises(TaskStopped):
        await asyncio.wait_for(work.outcome, DEADLINE)


async def test_an_interrupt_is_decided_before_inject_returns(loop_and_script) -> None:
    loop, script, decisions = loop_and_script
    work = loop.give("work")
    await wait_for(script.began("work"))
    urgent = loop.give("urgent", Priority.L3)
    # No await in between: the preemption and the start were decided inside `inject`, and
    # the running input's task has its cancellation already.
    assert [(d.action, d.task) for d in decisions[-3:]] == [
        (Action.ENQUEUE, urgent.id),
        (Action.PREEMPT, work.id),
        (Action.START, urgent.id),
    ]
    assert loop.scheduler.current is not None and loop.scheduler.current.id == urgent.id
    await wait_for(script.began("urgent"))
    assert script.log == ["run work", "cancelled work", "run urgent"]
    script.gate("urgent").set()
    script.gate("work").set()
    assert await asyncio.wait_for(work.outcome, DEADLINE) == "work done after ['step 1']"


async def test_an_interrupt_injected_by_a_decision_observer_waits_for_the_decisions_in_hand(
    tasks: KernelTasks,
) -> None:
    # An observer told of one decision injects an interrupt: the decisions after that one
    # were taken before the interrupt came, so they are carried out first (the second
    # input is started), then it is decided as any other (the second input is preempted
    # before its first step). Never two inputs running at once.
    script = Script()
    injected: list[Any] = []
    running: list[int] = []

    def observe(decision: Decision, task: Task[Any] | None) -> None:
        if decision.action in (Action.START, Action.RESUME):
            running.append(decision.task)
        if decision.action is Action.FINISH and not injected:
            injected.append(loop.give("urgent", Priority.L3))

    loop = Scripted(script, ManualClock(), tasks=tasks, cooldown=0.0, observe=observe)
    loop.start()
    try:
        first, second = loop.give("first"), loop.give("second")
        await wait_for(script.began("first"))
        script.gate("first").set()
        await asyncio.wait_for(first.outcome, DEADLINE)
        [urgent] = injected
        await wait_for(script.began("urgent"))
        script.gate("urgent").set()
        script.gate("second").set()
        assert await asyncio.wait_for(urgent.outcome, DEADLINE) == "urgent done after ['step 1']"
        assert await asyncio.wait_for(second.outcome, DEADLINE) == "second done after ['step 1']"
        assert script.log == ["run first", "run urgent", "run second"]
        assert running == [first.id, second.id, urgent.id, second.id]
    finally:
        await loop.close()
