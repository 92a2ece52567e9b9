"""The scheduler's rules, one by one, on an injected clock (spec 000: Input Scheduler)."""

from __future__ import annotations

import pytest

from hologram.agent.scheduler import Action
from hologram.sdk import Priority

from .numbered import Numbered

L1, L2, L3, L4, QUEUED = Priority.L1, Priority.L2, Priority.L3, Priority.L4, Priority.QUEUED


def actions(decisions: list) -> list[tuple[str, int]]:
    return [(d.action.value, d.task) for d in decisions]


def test_an_idle_scheduler_starts_the_first_input_at_once() -> None:
    s = Numbered()
    task, decisions = s.submit_next("hi", now=0)
    assert actions(decisions) == [("enqueue", task.id), ("start", task.id)]
    assert s.current is task


def test_same_level_never_preempts_same_level() -> None:
    s = Numbered()
    first, _ = s.submit_next("a", L2, now=0)
    second, decisions = s.submit_next("b", L2, now=1)
    assert actions(decisions) == [("enqueue", second.id)]
    assert s.current is first and s.stack == []


def test_any_interrupt_preempts_queued_work() -> None:
    s = Numbered()
    work, _ = s.submit_next("long job", QUEUED, now=0)
    ping, decisions = s.submit_next("timer", L1, now=1)
    assert actions(decisions) == [("enqueue", ping.id), ("preempt", work.id), ("start", ping.id)]
    assert s.stack == [work] and s.current is ping


def test_queued_work_never_preempts() -> None:
    s = Numbered()
    s.submit_next("first", QUEUED, now=0)
    _, decisions = s.submit_next("second", QUEUED, now=1)
    assert [d.action for d in decisions] == [Action.ENQUEUE]


def test_a_preempted_task_resumes_after_the_interrupt_finishes() -> None:
    s = Numbered()
    work, _ = s.submit_next("job", QUEUED, now=0)
    ping, _ = s.submit_next("ping", L3, now=1)
    decisions = s.finish(ping.id, now=2)
    assert actions(decisions) == [("finish", ping.id), ("resume", work.id)]
    assert s.current is work and work.preempt_count == 1


def test_the_stack_is_lifo_and_never_resorted() -> None:
    s = Numbered(cooldown=0)
    q, _ = s.submit_next("q", QUEUED, now=0)
    a, _ = s.submit_next("a", L1, now=1)
    b, _ = s.submit_next("b", L2, now=2)
    c, _ = s.submit_next("c", L3, now=3)
    assert s.stack == [q, a, b]
    assert actions(s.finish(c.id, now=4))[-1] == ("resume", b.id)
    assert actions(s.finish(b.id, now=5))[-1] == ("resume", a.id)
    assert actions(s.finish(a.id, now=6))[-1] == ("resume", q.id)


def test_effective_level_rises_with_each_preemption_up_to_two() -> None:
    s = Numbered(cooldown=0)
    victim, _ = s.submit_next("victim", L1, now=0)
    assert victim.effective_level == 1
    for n, now in enumerate([1, 3, 5], start=1):
        challenger, _ = s.submit_next("x", L4, now=now)
        s.finish(challenger.id, now=now + 1)
        assert victim.preempt_count == n
    assert victim.effective_level == 3  # L1 + min(3, 2)


def test_starvation_guard_stops_an_equal_level_stream_after_boosts() -> None:
    s = Numbered(cooldown=0)
    victim, _ = s.submit_next("victim", L1, now=0)
    first, _ = s.submit_next("x", L2, now=1)  # preempts: victim boosted to effective 2
    s.finish(first.id, now=2)
    second, decisions = s.submit_next("y", L2, now=3)  # L2 is no longer strictly greater
    assert actions(decisions) == [("enqueue", second.id)]
    assert s.current is victim


def test_effective_level_is_capped_at_l4() -> None:
    s = Numbered(cooldown=0)
    victim, _ = s.submit_next("victim", L3, now=0)
    for now in (1, 3, 5):
        challenger, _ = s.submit_next("x", L4, now=now)
        if s.current is challenger:
            s.finish(challenger.id, now=now + 1)
    assert victim.effective_level == 4


def test_a_just_preempted_task_is_protected_for_the_cooldown() -> None:
    s = Numbered(cooldown=2.0)
    work, _ = s.submit_next("job", QUEUED, now=0)
    ping, _ = s.submit_next("ping", L1, now=10)
    s.finish(ping.id, now=10.5)  # work resumes, preempted 0.5 s ago
    late, decisions = s.submit_next("late", L3, now=11)
    assert actions(decisions) == [("enqueue", late.id)]
    assert s.next_deadline() == 12.0
    assert s.poll(now=11.9) == []
    assert actions(s.poll(now=12.0)) == [("preempt", work.id), ("start", late.id)]


def test_a_plugins_l4_is_clamped_to_l3_but_the_kernels_is_not() -> None:
    s = Numbered()
    plugin, decisions = s.submit_next("urgent!", L4, now=0, from_plugin=True)
    assert plugin.level is L3
    assert decisions[0].action is Action.CLAMP and decisions[0].detail == {"asked": 4, "given": 3}
    kernel, _ = s.submit_next("panic", L4, now=1)
    assert kernel.level is L4 and s.current is kernel


def test_interrupts_wait_in_level_order_then_arrival_order() -> None:
    s = Numbered()
    s.submit_next("running", L4, now=0)
    a, _ = s.submit_next("a", QUEUED, now=1)
    b, _ = s.submit_next("b", L1, now=2)
    c, _ = s.submit_next("c", L3, now=3)
    d, _ = s.submit_next("d", L1, now=4)
    assert [t.id for t in s.waiting()] == [c.id, b.id, d.id, a.id]


def test_stop_short_circuits_exactly_what_was_waiting_at_that_moment() -> None:
    s = Numbered()
    running, _ = s.submit_next("running", QUEUED, now=0)
    before = [s.submit_next(f"queued {n}", QUEUED, now=1)[0] for n in range(3)]
    decisions = s.stop(now=2)
    assert actions(decisions) == [("stop", running.id)]
    assert decisions[0].detail["budget"] == [t.id for t in before]
    after, _ = s.submit_next("after the stop", QUEUED, now=3)
    assert all(t.stopped for t in before) and not after.stopped
    started = s.finish(running.id, now=4)
    assert started[-1].detail.get("short_circuit") is True


def test_stop_also_covers_suspended_tasks() -> None:
    s = Numbered()
    work, _ = s.submit_next("job", QUEUED, now=0)
    s.submit_next("ping", L2, now=1)
    s.stop(now=2)
    assert work.stopped


def test_finish_of_a_task_that_is_not_running_is_refused() -> None:
    s = Numbered()
    s.submit_next("a", now=0)
    with pytest.raises(ValueError, match="task 99 is not running"):
        s.finish(99, now=1)


def test_a_task_id_is_the_callers_and_may_not_be_given_twice() -> None:
    s = Numbered()
    task, _ = s.submit(41, "from the journal", now=0)
    assert task.id == 41
    with pytest.raises(ValueError, match="task 41 is here already"):
        s.submit(41, "the same id again", now=1)
    s.finish(41, now=2)
    again, _ = s.submit(41, "free once finished", now=3)
    assert s.current is again
