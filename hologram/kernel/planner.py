"""From modules to layers (spec 000: kernelboot.Build)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from hologram.kernel.errors import (
    DependencyCycleError,
    DuplicateProviderError,
    MissingFacilityError,
    PlanError,
)
from hologram.kernel.module import Module, optional_of


@dataclass(frozen=True, slots=True)
class Plan:
    """Modules grouped in layers: a layer needs only what earlier layers (or group 0) made.

    `given` are facilities that exist before layer 0 (group 0 produces them).
    """

    layers: tuple[tuple[Module[Any], ...], ...]
    given: frozenset[str] = frozenset()
    providers: dict[str, str] = field(default_factory=dict)

    @property
    def modules(self) -> list[Module[Any]]:
        return [m for layer in self.layers for m in layer]

    def layer_names(self) -> list[list[str]]:
        return [[m.name for m in layer] for layer in self.layers]

    def layer_of(self, module_name: str) -> int:
        for index, layer in enumerate(self.layers):
            if any(m.name == module_name for m in layer):
                return index
        raise KeyError(module_name)

    def topology(self) -> list[str]:
        """The layer plan as boot prints it: ``layer 0  config, events``."""
        return [f"layer {i}  {', '.join(names)}" for i, names in enumerate(self.layer_names())]

    def edges(self) -> list[tuple[str, str, str]]:
        """(provider, requirer, facility) for every tie between two modules."""
        return [
            (self.providers[f], m.name, f)
            for m in self.modules
            for f in (*m.requires, *optional_of(m))
            if f in self.providers
        ]


def _providers(modules: Sequence[Module[Any]], given: frozenset[str]) -> dict[str, str]:
    names: set[str] = set()
    providers: dict[str, str] = {}
    for module in modules:
        if module.name in names:
            raise PlanError(f"two modules are both named {module.name!r}; module names are unique")
        names.add(module.name)
        for facility in module.provides:
            if facility in given:
                raise DuplicateProviderError(facility, "group 0", module.name)
            if facility in providers:
                raise DuplicateProviderError(facility, providers[facility], module.name)
            providers[facility] = module.name
    return providers


def plan(modules: Iterable[Module[Any]], given: Iterable[str] = ()) -> Plan:
    """Resolve the dependency graph into layers, or fail naming what is wrong."""
    modules = list(modules)
    given_set = frozenset(given)
    providers = _providers(modules, given_set)
    declared = sorted(given_set | providers.keys())

    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(m.name for m in modules)
    for module in modules:
        for facility in module.requires:
            if facility in given_set:
                continue
            if facility not in providers:
                raise MissingFacilityError(module.name, facility, declared)
            graph.add_edge(providers[facility], module.name)
        for facility in optional_of(module):
            if facility in providers:
                graph.add_edge(providers[facility], module.name)

    try:
        generations = [sorted(g) for g in nx.topological_generations(graph)]
    except nx.NetworkXUnfeasible:
        cycle = [edge[0] for edge in nx.find_cycle(graph)]
        raise DependencyCycleError(cycle) from None

    by_name = {m.name: m for m in modules}
    layers = tuple(tuple(by_name[n] for n in names) for names in generations)
    return Plan(layers=layers, given=given_set, providers=providers)


def plan_from_layers(
    modules: Iterable[Module[Any]], layers: Sequence[Sequence[str]], given: Iterable[str] = ()
) -> Plan:
    """A plan whose order was decided earlier (the depgraph artifact) rather than now."""
    modules = list(modules)
    given_set = frozenset(given)
    by_name = {m.name: m for m in modules}
    listed = [name for layer in layers for name in layer]
    if sorted(listed) != sorted(by_name):
        raise PlanError(
            f"the layer plan lists modules {sorted(listed)} but the kernel has {sorted(by_name)}"
        )
    return Plan(
        layers=tuple(tuple(by_name[n] for n in layer) for layer in layers),
        given=given_set,
        providers=_providers(modules, given_set),
    )
