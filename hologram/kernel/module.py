"""What a kernel module is: a node of the assembly graph (spec 000: kernelmod.Module)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Module(Protocol):
    """A piece of the kernel.

    `requires` names the facilities it needs *ready* before its `init` runs; `provides` names
    the facilities its `init` produces, each written to the state field of the same name
    (``-`` becomes ``_``). A module never says what runs before it: the order comes from the
    graph. An optional ``async close()`` is called at shutdown, in reverse order.

    A module may also name ``optional`` facilities: used when some module provides them
    (it then initialises after that module, and may read them), absent otherwise (the state
    field stays None). Use `optional_of(module)` to read it.
    """

    name: str

    # Read-only, so a module may declare them as a class attribute of Facility constants
    # (a tuple of a str subtype): the planner only reads them.
    @property
    def requires(self) -> tuple[str, ...]: ...

    @property
    def provides(self) -> tuple[str, ...]: ...

    async def init(self, state: Any) -> None: ...


def optional_of(module: Module) -> tuple[str, ...]:
    """The facilities a module uses when present; none unless it declares `optional`."""
    return tuple(getattr(module, "optional", ()))


def field_name(facility: str) -> str:
    """The state attribute that holds a facility."""
    return facility.replace("-", "_")
