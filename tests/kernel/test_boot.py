"""Running a plan (spec 000: kernelboot.Run): group 0, then layers, then shutdown."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hologram.kernel import (
    Assembly,
    BootError,
    FacilityAccessError,
    Progress,
    Status,
    plan,
    plan_from_layers,
)
from tests.kernel.helpers import Mod, state_for


async def test_modules_of_one_layer_initialise_concurrently() -> None:
    # Each waits for the other to have started: run one after the other, this deadlocks
    # and the init timeout turns the deadlock into a BootError.
    left_started, right_started = asyncio.Event(), asyncio.Event()

    async def left(state: Any) -> None:
        left_started.set()
        await right_started.wait()
        state.left = "ok"

    async def right(state: Any) -> None:
        right_started.set()
        await left_started.wait()
        state.right = "ok"

    modules = [
        Mod("left", provides=("left",), init=left),
        Mod("right", provides=("right",), init=right),
    ]
    state = state_for("left", "right")
    await Assembly(plan(modules), state, init_timeout=10).boot()
    assert (state.left, state.right) == ("ok", "ok")


async def test_later_layers_start_only_after_earlier_layers_finished() -> None:
    journal: list[str] = []
    modules = [
        Mod("top", requires=("mid",), provides=("top",), journal=journal),
        Mod("mid", requires=("base",), provides=("mid",), journal=journal),
        Mod("base", provides=("base",), journal=journal),
    ]
    await Assembly(plan(modules), state_for("base", "mid", "top")).boot()
    assert journal == ["init base", "init mid", "init top"]


async def test_module_that_declares_but_does_not_produce_is_caught_by_name() -> None:
    async def forgetful(state: Any) -> None:
        return None

    journal: list[str] = []
    modules = [
        Mod("memory", provides=("memory",), init=forgetful),
        Mod("agent", requires=("memory",), provides=("agent",), journal=journal),
    ]
    with pytest.raises(BootError) as caught:
        await Assembly(plan(modules), state_for("memory", "agent")).boot()
    assert caught.value.module == "memory"
    assert "'memory' declares it provides 'memory'" in str(caught.value)
    assert journal == []


async def test_recheck_before_a_layer_catches_a_plan_executed_out_of_order() -> None:
    modules = [
        Mod("base", provides=("base",)),
        Mod("top", requires=("base",), provides=("top",)),
    ]
    wrong_order = plan_from_layers(modules, [["top"], ["base"]])
    with pytest.raises(BootError) as caught:
        await Assembly(wrong_order, state_for("base", "top")).boot()
    assert caught.value.module == "top"
    assert "requires 'base', which is not ready" in str(caught.value)
    assert "python -m hologram depgraph --write" in str(caught.value)


async def test_failed_init_closes_already_opened_modules_in_reverse_order() -> None:
    journal: list[str] = []

    async def explode(state: Any) -> None:
        raise RuntimeError("disk on fire")

    modules = [
        Mod("a", provides=("a",), journal=journal),
        Mod("b", requires=("a",), provides=("b",), journal=journal),
        Mod("c", requires=("b",), provides=("c",), journal=journal),
        Mod("d", requires=("c",), provides=("d",), init=explode, journal=journal),
    ]
    with pytest.raises(BootError) as caught:
        await Assembly(plan(modules), state_for("a", "b", "c", "d")).boot()
    assert caught.value.module == "d"
    assert "module 'd' failed to initialise: disk on fire" in str(caught.value)
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert journal == ["init a", "init b", "init c", "close c", "close b", "close a"]


async def test_group0_runs_first_in_order_and_closes_last() -> None:
    journal: list[str] = []

    class Step:
        provides = ()

        def __init__(self, name: str) -> None:
            self.name = name

        async def run(self, state: Any) -> None:
            journal.append(f"run {self.name}")

        async def close(self, state: Any) -> None:
            journal.append(f"close {self.name}")

    modules = [Mod("m", provides=("m",), journal=journal)]
    assembly = Assembly(plan(modules), state_for("m"), group0=[Step("lock"), Step("config")])
    await assembly.boot()
    closed = await assembly.shutdown()
    assert journal == ["run lock", "run config", "init m", "close m", "close config", "close lock"]
    assert closed == ["m", "config", "lock"]


async def test_a_module_writes_only_what_it_provides() -> None:
    async def meddle(state: Any) -> None:
        state.mine = "ok"
        state.theirs = "overwritten"

    modules = [Mod("owner", provides=("theirs",)), Mod("meddler", provides=("mine",), init=meddle)]
    state = state_for("mine", "theirs")
    with pytest.raises(BootError) as caught:
        await Assembly(plan(modules), state).boot()
    assert isinstance(caught.value.__cause__, FacilityAccessError)
    assert "module 'meddler' writes state.theirs" in str(caught.value)


async def test_a_module_reads_only_what_it_requires() -> None:
    seen: list[Any] = []

    async def peek(state: Any) -> None:
        seen.append(state.base)
        state.sneaky = "x"

    modules = [Mod("base", provides=("base",)), Mod("sneaky", provides=("sneaky",), init=peek)]
    with pytest.raises(BootError) as caught:
        await Assembly(
            plan_from_layers(modules, [["base"], ["sneaky"]]), state_for("base", "sneaky")
        ).boot()
    assert "module 'sneaky' reads state.base but does not require it" in str(caught.value)
    assert seen == []


async def test_a_provided_facility_needs_a_field_on_the_state() -> None:
    with pytest.raises(Exception, match="facility 'ghost' has no field"):
        Assembly(plan([Mod("g", provides=("ghost",))]), state_for("other"))


async def test_an_init_that_hangs_is_named_after_the_timeout() -> None:
    async def hang(state: Any) -> None:
        await asyncio.Event().wait()

    with pytest.raises(BootError) as caught:
        await Assembly(
            plan([Mod("sloth", provides=("s",), init=hang)]), state_for("s"), init_timeout=0.05
        ).boot()
    assert caught.value.module == "sloth" and "longer than 0.05 s" in str(caught.value)


async def test_cancelling_boot_closes_what_was_opened() -> None:
    journal: list[str] = []
    gate = asyncio.Event()

    async def wait_forever(state: Any) -> None:
        gate.set()
        await asyncio.Event().wait()

    modules = [
        Mod("a", provides=("a",), journal=journal),
        Mod("b", requires=("a",), provides=("b",), init=wait_forever, journal=journal),
    ]
    task = asyncio.create_task(
        Assembly(plan(modules), state_for("a", "b"), init_timeout=None).boot()
    )
    await asyncio.wait_for(gate.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert journal == ["init a", "close a"]


async def test_observer_sees_each_module_run_and_finish() -> None:
    seen: list[Progress] = []
    modules = [Mod("a", provides=("a",)), Mod("b", requires=("a",), provides=("b",))]
    await Assembly(plan(modules), state_for("a", "b"), observer=seen.append).boot()
    assert [(p.name, p.layer, p.status) for p in seen] == [
        ("a", 0, Status.RUNNING),
        ("a", 0, Status.DONE),
        ("b", 1, Status.RUNNING),
        ("b", 1, Status.DONE),
    ]


async def test_a_module_may_read_an_optional_facility_present_or_absent() -> None:
    seen: list[Any] = []

    async def look(state: Any) -> None:
        seen.append(state.memory)
        state.agent = "ok"

    agent = Mod("agent", provides=("agent",), init=look)
    agent.optional = ("memory",)
    await Assembly(
        plan([agent, Mod("memory", provides=("memory",))]), state_for("memory", "agent")
    ).boot()
    await Assembly(plan([agent]), state_for("memory", "agent")).boot()
    assert seen == ["made by memory", None]
