"""What a kernel module is: a node of the assembly graph (spec 000: kernelmod.Module)."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar, runtime_checkable

from hologram.kernel.errors import AssemblyError

#: The state a module's init reads: a Protocol its package declares (the fields it reads and
#: writes, with their types), so that the list which builds the kernel's modules is checked
#: against the state dataclass it boots them on. Contravariant: a module that reads less
#: runs on any state that has more.
StateT = TypeVar("StateT", contravariant=True)
T = TypeVar("T")


@runtime_checkable
class Module(Protocol[StateT]):
    """A piece of the kernel.

    `requires` names the facilities it needs *ready* before its `init` runs; `provides` names
    the facilities its `init` produces, each written to the state field of the same name
    (``-`` becomes ``_``). A module never says what runs before it: the order comes from the
    graph. An optional ``async close()`` is called at shutdown, in reverse order.

    A module may also name ``optional`` facilities: used when some module provides them
    (it then initialises after that module, and may read them), absent otherwise (the state
    field stays None). Use `optional_of(module)` to read it.

    `init` takes the state as a Protocol of what the module reads and writes (``Module[S]``),
    its facility fields typed ``X | None`` as the state declares them; `required(field,
    facility)` reads one the module requires. Anything it hands another module's object goes
    through a method of that object (``mount_*`` / ``connect_*``), never an attribute write.
    """

    name: str

    # Read-only, so a module may declare them as a class attribute of Facility constants
    # (a tuple of a str subtype): the planner only reads them.
    @property
    def requires(self) -> tuple[str, ...]: ...

    @property
    def provides(self) -> tuple[str, ...]: ...

    async def init(self, state: StateT) -> None: ...


def required(value: T | None, facility: str) -> T:
    """A facility the module requires, as its init reads it: boot made it before the init ran,
    so None here means the init was called on a state that boot did not fill."""
    if value is None:
        raise AssemblyError(
            f"state.{field_name(facility)} is None, but facility '{facility}' is required; "
            "boot the module through the planner, or set the field before calling its init"
        )
    return value


def optional_of(module: Module[Any]) -> tuple[str, ...]:
    """The facilities a module uses when present; none unless it declares `optional`."""
    return tuple(getattr(module, "optional", ()))


def field_name(facility: str) -> str:
    """The state attribute that holds a facility."""
    return facility.replace("-", "_")
