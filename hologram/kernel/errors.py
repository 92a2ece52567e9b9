"""Errors of kernel assembly. Each message says what is wrong and how to fix it."""

from __future__ import annotations


class AssemblyError(Exception):
    """The module graph or its execution is broken."""


class PlanError(AssemblyError):
    """The graph cannot be put in layers."""


class MissingFacilityError(PlanError):
    def __init__(self, module: str, facility: str, declared: list[str]) -> None:
        self.module, self.facility, self.declared = module, facility, declared
        super().__init__(
            f"facility {facility!r} is required by module {module!r} but nobody provides it; "
            f"declared facilities: {', '.join(declared) or '(none)'}"
        )


class DuplicateProviderError(PlanError):
    def __init__(self, facility: str, first: str, second: str) -> None:
        self.facility, self.providers = facility, (first, second)
        super().__init__(
            f"facility {facility!r} is provided by both {first!r} and {second!r}; "
            "exactly one module may provide a facility"
        )


class DependencyCycleError(PlanError):
    def __init__(self, cycle: list[str]) -> None:
        self.cycle = cycle
        path = " -> ".join([*cycle, cycle[0]])
        super().__init__(
            f"modules depend on each other in a cycle: {path}; "
            "break it by moving the shared part into a module of its own"
        )


class BootError(AssemblyError):
    """A step of boot failed; everything opened before it has been closed again."""

    def __init__(self, message: str, module: str | None = None) -> None:
        self.module = module
        super().__init__(message)


class FacilityAccessError(AssemblyError, AttributeError):
    """A module touched a facility it did not declare."""


class DepgraphError(AssemblyError):
    """The shipped layer plan is missing, corrupt or stale."""
