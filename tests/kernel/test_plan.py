"""Resolving the module graph into layers (spec 000: kernelboot.Build)."""

from __future__ import annotations

import pytest

from hologram.kernel import (
    DependencyCycleError,
    DuplicateProviderError,
    MissingFacilityError,
    PlanError,
    plan,
)
from tests.kernel.helpers import Mod


def test_modules_are_layered_by_what_they_need_not_by_list_order() -> None:
    modules = [
        Mod("agent", requires=("llm", "memory"), provides=("agent",)),
        Mod("llm", requires=("config",), provides=("llm",)),
        Mod("memory", requires=("config",), provides=("memory",)),
        Mod("events", requires=("config",), provides=("events",)),
    ]
    resolved = plan(modules, given=("config",))
    assert resolved.layer_names() == [["events", "llm", "memory"], ["agent"]]
    assert resolved.topology() == ["layer 0  events, llm, memory", "layer 1  agent"]
    assert ("llm", "agent", "llm") in resolved.edges()


def test_misspelled_facility_names_the_module_and_lists_every_declared_facility() -> None:
    modules = [
        Mod("memory", provides=("memory",)),
        Mod("agent", requires=("memroy",), provides=("agent",)),
    ]
    with pytest.raises(MissingFacilityError) as caught:
        plan(modules, given=("config",))
    message = str(caught.value)
    assert "'memroy'" in message and "'agent'" in message
    assert "declared facilities: agent, config, memory" in message


def test_duplicate_provider_names_both_modules() -> None:
    modules = [Mod("vector-a", provides=("memory",)), Mod("vector-b", provides=("memory",))]
    with pytest.raises(DuplicateProviderError) as caught:
        plan(modules)
    assert "'vector-a'" in str(caught.value) and "'vector-b'" in str(caught.value)
    assert caught.value.providers == ("vector-a", "vector-b")


def test_a_module_may_not_provide_what_group_0_provides() -> None:
    with pytest.raises(DuplicateProviderError, match="group 0"):
        plan([Mod("config2", provides=("config",))], given=("config",))


def test_cycle_names_the_modules_on_it() -> None:
    modules = [
        Mod("a", requires=("c",), provides=("a",)),
        Mod("b", requires=("a",), provides=("b",)),
        Mod("c", requires=("b",), provides=("c",)),
        Mod("bystander", provides=("x",)),
    ]
    with pytest.raises(DependencyCycleError) as caught:
        plan(modules)
    assert sorted(caught.value.cycle) == ["a", "b", "c"]
    assert "bystander" not in str(caught.value)


def test_a_module_requiring_its_own_facility_is_a_cycle() -> None:
    with pytest.raises(DependencyCycleError) as caught:
        plan([Mod("selfish", requires=("s",), provides=("s",))])
    assert caught.value.cycle == ["selfish"]


def test_module_names_are_unique() -> None:
    with pytest.raises(PlanError, match="both named 'twin'"):
        plan([Mod("twin", provides=("a",)), Mod("twin", provides=("b",))])


def test_an_optional_facility_orders_after_its_provider_when_there_is_one() -> None:
    agent = Mod("agent", requires=("llm",), provides=("agent",))
    agent.optional = ("memory",)
    with_memory = plan([agent, Mod("llm", provides=("llm",)), Mod("memory", provides=("memory",))])
    assert with_memory.layer_names() == [["llm", "memory"], ["agent"]]
    assert ("memory", "agent", "memory") in with_memory.edges()
    without_memory = plan([agent, Mod("llm", provides=("llm",))])
    assert without_memory.layer_names() == [["llm"], ["agent"]]
