"""Running a plan (spec 000: kernelboot.Run): group 0 serially, then each layer concurrently.

Boot keeps a list of everything it opened. Whatever goes wrong, and however boot is left
(an error, a timeout, the boot task cancelled), that list is closed in reverse before the
error goes up, so a failed boot leaves no half-open kernel behind.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from hologram.kernel.errors import AssemblyError, BootError, FacilityAccessError
from hologram.kernel.module import Module, field_name, optional_of
from hologram.kernel.planner import Plan
from hologram.kernel.tasks import KernelTasks

log = logging.getLogger(__name__)


class BootStep(Protocol):
    """A group-0 step: a side effect that must take hold before any module runs
    (the data-dir lock, logging, opening the config database, the config snapshot)."""

    name: str
    provides: tuple[str, ...]

    async def run(self, state: Any) -> None: ...

    async def close(self, state: Any) -> None: ...


class Status(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class Progress:
    """One change of one step or module during boot or shutdown. `layer` is -1 for group 0."""

    name: str
    layer: int
    status: Status
    seconds: float = 0.0
    error: str = ""


Observer = Callable[[Progress], None]


class _ModuleView:
    """The state as one module sees it: it reads only what it declared and writes only what
    it provides. Python has no compile step to catch an undeclared dependency, so this is
    where it is caught, by name."""

    __slots__ = ("_facility_fields", "_module", "_readable", "_state", "_writable")

    def __init__(self, state: Any, module: Module[Any], facility_fields: frozenset[str]) -> None:
        object.__setattr__(self, "_state", state)
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_facility_fields", facility_fields)
        object.__setattr__(self, "_writable", {field_name(f) for f in module.provides})
        declared = (*module.requires, *optional_of(module), *module.provides)
        readable = {field_name(f) for f in declared}
        object.__setattr__(self, "_readable", readable)

    def __getattr__(self, name: str) -> Any:
        if name in self._facility_fields and name not in self._readable:
            raise FacilityAccessError(
                f"module {self._module.name!r} reads state.{name} but does not require it; "
                f"add {name.replace('_', '-')!r} to its requires"
            )
        return getattr(self._state, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._writable:
            raise FacilityAccessError(
                f"module {self._module.name!r} writes state.{name}, which it does not provide; "
                f"a module writes only its own facilities: {sorted(self._module.provides)}"
            )
        setattr(self._state, name, value)


def _produced(state: Any, facility: str) -> bool:
    return getattr(state, field_name(facility), None) is not None


class Assembly:
    """One boot of one plan on one state, and the shutdown that undoes it."""

    def __init__(
        self,
        plan: Plan,
        state: Any,
        group0: Sequence[BootStep] = (),
        observer: Observer | None = None,
        init_timeout: float | None = 60.0,
        tasks: KernelTasks | None = None,
    ) -> None:
        self.plan = plan
        self.tasks = tasks
        self.state = state
        self.group0 = list(group0)
        self.init_timeout = init_timeout
        self.timings: dict[str, float] = {}
        self._observer = observer
        self._opened: list[tuple[str, Callable[[], Awaitable[None]] | None]] = []
        self._facility_fields = self._check_fields()

    def _check_fields(self) -> frozenset[str]:
        known = {f.name for f in dataclasses.fields(self.state)}
        facilities = set(self.plan.given) | {f for m in self.plan.modules for f in m.provides}
        for facility in sorted(facilities):
            if field_name(facility) not in known:
                raise AssemblyError(
                    f"facility {facility!r} has no field on {type(self.state).__name__}; "
                    f"add a typed field {field_name(facility)!r} for it"
                )
        return frozenset(field_name(f) for f in facilities)

    def _notify(self, progress: Progress) -> None:
        if self._observer is not None:
            try:
                self._observer(progress)
            except Exception:
                log.exception("boot observer failed on %s", progress)

    async def boot(self) -> None:
        try:
            for step in self.group0:
                await self._run_step(step)
            for index, layer in enumerate(self.plan.layers):
                self._check_ready(index, layer)
                await self._run_layer(index, layer)
        except BaseException:
            await self.shutdown()
            raise

    async def _run_step(self, step: BootStep) -> None:
        self._notify(Progress(step.name, -1, Status.RUNNING))
        started = time.perf_counter()
        try:
            await step.run(self.state)
        except Exception as exc:
            self._notify(Progress(step.name, -1, Status.FAILED, error=str(exc)))
            raise BootError(f"boot step {step.name!r} failed: {exc}", step.name) from exc
        seconds = time.perf_counter() - started
        self.timings[step.name] = seconds
        self._opened.append((step.name, lambda: step.close(self.state)))
        self._notify(Progress(step.name, -1, Status.DONE, seconds))

    def _check_ready(self, index: int, layer: Sequence[Module[Any]]) -> None:
        for module in layer:
            for facility in module.requires:
                if _produced(self.state, facility):
                    continue
                provider = self.plan.providers.get(facility, "group 0")
                raise BootError(
                    f"layer {index}: module {module.name!r} requires {facility!r}, which is not "
                    f"ready; its provider {provider!r} has not produced it. The layer plan is "
                    "out of order: regenerate it with `python -m hologram depgraph --write`",
                    module.name,
                )

    async def _run_layer(self, index: int, layer: Sequence[Module[Any]]) -> None:
        results = await asyncio.gather(
            *(self._init_module(index, m) for m in layer), return_exceptions=True
        )
        failures = [(m, r) for m, r in zip(layer, results, strict=True) if r is not None]
        for _, result in failures:
            if not isinstance(result, Exception):
                raise result  # cancellation or exit: not the module's failure, pass it on
        if failures:
            module, error = failures[0]
            names = ", ".join(repr(m.name) for m, _ in failures)
            raise BootError(
                f"module {module.name!r} failed to initialise: {error}"
                + (f" (failed in this layer: {names})" if len(failures) > 1 else ""),
                module.name,
            ) from error
        for module in layer:
            missing = [f for f in module.provides if not _produced(self.state, f)]
            if missing:
                raise BootError(
                    f"module {module.name!r} declares it provides {', '.join(map(repr, missing))} "
                    f"but its init did not set state.{field_name(missing[0])}",
                    module.name,
                )

    async def _init_module(self, index: int, module: Module[Any]) -> BaseException | None:
        self._notify(Progress(module.name, index, Status.RUNNING))
        started = time.perf_counter()
        view = _ModuleView(self.state, module, self._facility_fields)
        try:
            async with asyncio.timeout(self.init_timeout):
                await module.init(view)
        except TimeoutError:
            error: BaseException = TimeoutError(f"init took longer than {self.init_timeout} s")
        except BaseException as exc:
            error = exc
        else:
            seconds = time.perf_counter() - started
            self.timings[module.name] = seconds
            self._opened.append((module.name, getattr(module, "close", None)))
            self._notify(Progress(module.name, index, Status.DONE, seconds))
            return None
        self._notify(Progress(module.name, index, Status.FAILED, error=str(error)))
        if isinstance(error, Exception):
            log.error("module %s failed to initialise", module.name, exc_info=error)
        return error

    async def shutdown(self) -> list[str]:
        """Close everything opened, newest first; return the names in the order closed.

        A close that fails is logged and the rest still close: one broken module must not
        keep the stores after it from flushing. Right after a module's close, the tasks it
        left running in the kernel's group are cancelled."""
        closed: list[str] = []
        while self._opened:
            name, close = self._opened.pop()
            if close is not None:
                try:
                    await close()
                except Exception:
                    log.exception("closing %s failed", name)
            if self.tasks is not None:
                left = await self.tasks.close(name)
                if left:
                    log.debug("%d task(s) of %s cancelled at shutdown", left, name)
            closed.append(name)
            self._notify(Progress(name, -1, Status.CLOSED))
        return closed
