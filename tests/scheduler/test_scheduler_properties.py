"""Property tests: random streams of inputs, interrupts, finishes and stops on an injected
clock. Whatever happens, no input is lost, none runs twice, and the level rules hold."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from hologram.agent.scheduler import Action
from hologram.sdk import Priority

from .numbered import Numbered

COOLDOWN = 2.0

step = st.one_of(
    st.tuples(st.just("submit"), st.sampled_from(list(Priority)), st.booleans()),
    st.tuples(st.just("finish")),
    st.tuples(st.just("wait"), st.floats(min_value=0.0, max_value=5.0)),
    st.tuples(st.just("poll")),
    st.tuples(st.just("stop")),
)


class Checked:
    """Runs a scheduler and checks every decision it makes against the rules."""

    def __init__(self) -> None:
        self.s = Numbered(cooldown=COOLDOWN)
        self.now = 0.0
        self.submitted: list[int] = []
        self.counts: Counter[tuple[str, int]] = Counter()
        self.max_depth = 0

    def snapshot(self) -> tuple[int, float | None, int] | None:
        """The running task as it is now: its level and cooldown change once preempted."""
        running = self.s.current
        if running is None:
            return None
        return (running.effective_level, running.last_preempted_at, running.id)

    def apply(self, operation: tuple) -> None:
        running = self.s.current
        before = self.snapshot()
        if operation[0] == "submit":
            task, decisions = self.s.submit_next(
                "x", operation[1], now=self.now, from_plugin=operation[2]
            )
            self.submitted.append(task.id)
            if operation[2]:
                assert task.level <= Priority.L3, "a plugin never holds L4"
        elif operation[0] == "finish":
            if running is None:
                return
            decisions = self.s.finish(running.id, now=self.now)
        elif operation[0] == "wait":
            self.now += operation[1]
            decisions = []
        elif operation[0] == "poll":
            decisions = self.s.poll(now=self.now)
        else:
            decisions = self.s.stop(now=self.now)
            if running is not None:
                decisions += self.s.finish(running.id, now=self.now)
        for decision in decisions:
            self.check(decision, before)
        self.max_depth = max(self.max_depth, len(self.s.stack))

    def check(self, decision, before) -> None:
        self.counts[(decision.action.value, decision.task)] += 1
        if decision.action is Action.PREEMPT:
            victim_level, last_preempted, victim_id = before
            assert decision.task == victim_id, "only the running task is ever preempted"
            challenger = next(t for t in [self.s.current] if t is not None)
            assert challenger.effective_level > victim_level, (
                "preemption needs a strictly greater level"
            )
            assert last_preempted is None or self.now - last_preempted >= COOLDOWN, "cooldown"

    def drain(self) -> None:
        """Let time pass and finish whatever runs until nothing is left."""
        for _ in range(10_000):
            if self.s.current is None and not self.s.stack and not self.s.pending():
                return
            self.now += COOLDOWN
            snapshot = self.snapshot()
            for decision in self.s.poll(now=self.now):
                self.check(decision, snapshot)
            if self.s.current is not None:
                snapshot = self.snapshot()
                for decision in self.s.finish(self.s.current.id, now=self.now):
                    self.check(decision, snapshot)
            self.max_depth = max(self.max_depth, len(self.s.stack))
        raise AssertionError("the scheduler never went idle")


@settings(max_examples=300, deadline=None)
@given(st.lists(step, max_size=80))
def test_random_streams_keep_every_rule(operations: list[tuple]) -> None:
    run = Checked()
    for operation in operations:
        run.apply(operation)
    run.drain()

    for task_id in run.submitted:
        assert run.counts[("start", task_id)] == 1, "every input starts exactly once"
        assert run.counts[("finish", task_id)] == 1, "every input finishes exactly once"
        assert run.counts[("resume", task_id)] == run.counts[("preempt", task_id)], (
            "every preempted task resumes, once per preemption"
        )
    assert run.max_depth <= 4, "the stack is bounded by the number of levels"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list(Priority)), min_size=1, max_size=40))
def test_a_burst_without_finishes_never_stacks_deeper_than_the_levels(
    levels: list[Priority],
) -> None:
    s = Numbered(cooldown=0)
    for n, level in enumerate(levels):
        s.submit_next("x", level, now=float(n))
        assert len(s.stack) <= 4
