"""The `Kernel`: one object to boot, use and shut down a whole Hologram kernel.

    async with Kernel(data_dir="…") as kernel:
        kernel.layers, kernel.events, kernel.config

The notebook magics, the service and the experiment harness all go through it.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any, Self, TypeVar

from hologram._group0 import GIVEN, group0
from hologram.agent import Inputs, Ticket, TurnResult
from hologram.config import ConfigRegistry
from hologram.events import EventBus
from hologram.health import HealthReport, Subject, check_subject
from hologram.kernel import (
    Assembly,
    DataDirLock,
    KernelLog,
    KernelTasks,
    Module,
    Observer,
    Plan,
    Progress,
    SystemClock,
    current_kernel,
    load_plan,
    plan,
    resolve_data_dir,
)
from hologram.media import MediaItem, store_media
from hologram.modules import kernel_modules
from hologram.sdk import (
    Clock,
    KernelReady,
    KernelStopping,
    MediaRef,
    Priority,
)
from hologram.state import KernelState

log = logging.getLogger(__name__)

T = TypeVar("T")

KERNEL_OWNER = "kernel"
"""The owner of the tasks the facade starts for its callers (boot, shutdown, a magic's)."""


def shipped_depgraph() -> Path:
    """The layer plan of the real module set, as shipped inside the package."""
    return Path(str(resources.files("hologram") / "depgraph.json"))


class Phase(StrEnum):
    NEW = "new"
    BOOTING = "booting"
    READY = "ready"
    STOPPING = "stopping"
    STOPPED = "stopped"
    FAILED = "failed"


class Kernel:
    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        modules: Sequence[Module[KernelState]] | None = None,
        depgraph: Path | None = None,
        clock: Clock | None = None,
        environ: Mapping[str, str] | None = None,
        log_level: int = logging.INFO,
        init_timeout: float | None = 60.0,
    ) -> None:
        """`modules` defaults to the real module set, whose order comes from the shipped
        layer plan (`depgraph`, default: the one in the package). Any other module list is
        planned at boot, unless a `depgraph` file is given for it."""
        self.id = uuid.uuid4().hex[:8]
        self.data_dir = resolve_data_dir(data_dir)
        self._real_modules = modules is None
        self.modules = list(kernel_modules() if modules is None else modules)
        self._depgraph = depgraph or (shipped_depgraph() if self._real_modules else None)
        self._environ = environ
        self._init_timeout = init_timeout
        self._context = contextvars.copy_context()
        self._context.run(current_kernel.set, self.id)
        self.state = KernelState(
            data_dir=self.data_dir,
            clock=clock or SystemClock(),
            lock=DataDirLock(self.data_dir),
            log=KernelLog(self.data_dir, self.id, log_level),
            tasks=KernelTasks(),
            scratch_turn=scratch_turn,
        )
        self.phase = Phase.NEW
        self.plan: Plan | None = None
        self.boot_seconds: float | None = None
        self.error: BaseException | None = None
        self._assembly: Assembly | None = None
        self._observers: list[Observer] = []
        self._ready = asyncio.Event()

    # ---- observing boot -------------------------------------------------------------------

    def add_observer(self, observer: Observer) -> Callable[[], None]:
        """Be told of every step of boot and shutdown (the layers widget listens here)."""
        self._observers.append(observer)
        return lambda: self._observers.remove(observer) if observer in self._observers else None

    def _notify(self, progress: Progress) -> None:
        for observer in list(self._observers):
            observer(progress)

    # ---- life cycle ------------------------------------------------------------------------

    def spawn(
        self, coro: Coroutine[Any, Any, T], name: str | None = None, *, awaited: bool = True
    ) -> asyncio.Task[T]:
        """Run `coro` as a task of this kernel's group (its log lines go to this kernel's
        log). The caller awaits it, unless `awaited` is False: then a failure is logged and
        published as a background task's. It runs in a copy of the kernel's own context,
        whoever calls: a notebook cell's task carries no kernel."""
        return self.state.tasks.spawn(
            coro, owner=KERNEL_OWNER, name=name, awaited=awaited, context=self._context.copy()
        )

    def make_plan(self) -> Plan:
        if self._depgraph is not None:
            return load_plan(self._depgraph, self.modules, GIVEN)
        return plan(self.modules, GIVEN)

    async def start(self) -> Self:
        if self.phase is not Phase.NEW:
            raise RuntimeError(f"this kernel is {self.phase}; a kernel boots once")
        await self.spawn(self._boot(), name=f"hologram-boot-{self.id}")
        return self

    async def _boot(self) -> None:
        self.phase = Phase.BOOTING
        started = time.perf_counter()
        try:
            self.plan = self.make_plan()
            self._assembly = Assembly(
                self.plan,
                self.state,
                group0=group0(self._environ),
                observer=self._notify,
                init_timeout=self._init_timeout,
                tasks=self.state.tasks,
            )
            await self._assembly.boot()
        except BaseException as exc:
            self.phase = Phase.FAILED
            self.error = exc
            await self._leave_group()
            raise
        self.boot_seconds = time.perf_counter() - started
        self.phase = Phase.READY
        self._ready.set()
        log.info("kernel %s ready in %.3f s on %s", self.id, self.boot_seconds, self.data_dir)
        self.events.emit(
            KernelReady(layers=self.layers, seconds=self.boot_seconds, data_dir=str(self.data_dir))
        )

    async def wait_ready(self) -> Self:
        await self._ready.wait()
        return self

    async def shutdown(self) -> list[str]:
        """Close every module in reverse layer order, then group 0 (flushing the config
        database and releasing the data dir). Returns what was closed, in order."""
        if self._assembly is None or self.phase in (Phase.STOPPING, Phase.STOPPED):
            return []
        self.phase = Phase.STOPPING
        if self.state.events is not None:
            self.state.events.emit(KernelStopping())
        try:
            closed = await self.spawn(self._assembly.shutdown(), name=f"hologram-stop-{self.id}")
            await self._leave_group()
        finally:
            self.phase = Phase.STOPPED
            self._ready.clear()
        log.debug("kernel %s closed %s", self.id, closed)
        return closed

    async def _leave_group(self) -> None:
        """The last of shutdown: every task of the group that no module's close took with
        it. The facade's own (a notebook's handle awaiting this very shutdown) are spared:
        they end as their work does."""
        left = await self.state.tasks.close(sparing={KERNEL_OWNER})
        if left:
            log.debug("kernel %s: %d leftover task(s) cancelled", self.id, left)

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()

    # ---- what a user looks at --------------------------------------------------------------

    @property
    def config(self) -> ConfigRegistry:
        if self.state.config is None:
            raise RuntimeError("the kernel has not opened its config yet; await start() first")
        return self.state.config

    @property
    def events(self) -> EventBus:
        if self.state.events is None:
            raise RuntimeError("the kernel has no event bus yet; await start() first")
        return self.state.events

    @property
    def inputs(self) -> Inputs:
        if self.state.scheduler is None:
            raise RuntimeError("this kernel takes no input yet; await start() first")
        return self.state.scheduler

    async def inject(
        self,
        text: str,
        channel: str = "notebook",
        *,
        level: Priority = Priority.QUEUED,
        source: str = "",
        media: Sequence[MediaItem] = (),
    ) -> Ticket:
        """Queue `text` as input (or, with a level, as an interrupt); returns once it is
        durably recorded, with a ticket to await for the turn's result. `media` (bytes,
        `Upload`s, paths or stored `MediaRef`s) is stored first: a refused item raises its
        `MediaError` here and no input is recorded."""
        refs = await self.store_media(media) if media else []
        return await self.inputs.submit(text, channel, level=level, source=source, media=refs)

    async def store_media(self, media: Sequence[MediaItem]) -> list[MediaRef]:
        """Put media into the kernel's store (all checked before any is stored)."""
        if self.state.media is None:
            raise RuntimeError("this kernel has no media store yet; await start() first")
        return await asyncio.to_thread(store_media, self.state.media, list(media))

    async def say(
        self,
        text: str,
        channel: str = "notebook",
        level: Priority = Priority.QUEUED,
        *,
        media: Sequence[MediaItem] = (),
    ) -> str:
        """Give the agent `text` as input arriving on `channel`; returns the reply once it
        has been delivered (one whole turn: stages, tool loop, output)."""
        ticket = await self.inject(text, channel, level=level, media=media)
        result: TurnResult = await ticket
        return result.reply

    def stop_turn(self) -> list[int]:
        """Stop the running turn and short-circuit every input waiting now (spec: /stop)."""
        return self.inputs.stop()

    @property
    def layers(self) -> list[list[str]]:
        return [] if self.plan is None else self.plan.layer_names()

    @property
    def timings(self) -> dict[str, float]:
        return {} if self._assembly is None else dict(self._assembly.timings)

    def topology(self) -> list[str]:
        """The lines boot prints: group 0, then one line per layer."""
        steps = ", ".join(step.name for step in group0())
        return [f"group 0  {steps}", *([] if self.plan is None else self.plan.topology())]

    def status(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "phase": str(self.phase),
            "pid": os.getpid(),
            "data_dir": str(self.data_dir),
            "boot_seconds": self.boot_seconds,
            "layers": self.layers,
            "timings_ms": {k: round(v * 1000, 3) for k, v in self.timings.items()},
            "events": None if self.state.events is None else self.state.events.stats(),
            "config_problems": [] if self.state.config is None else self.state.config.problems,
            "error": None if self.error is None else str(self.error),
        }

    async def health(self, *, with_selftest: bool = True) -> HealthReport:
        """Every health check of this running kernel, the self-test turn first when asked."""
        state = self.state
        subject = Subject(
            self.config, self.data_dir, state.llm, state.plugins, str(self.phase), scratch_turn
        )
        return await check_subject(subject, with_selftest=with_selftest)


async def scratch_turn(text: str) -> str:
    """One turn of `text` on a virtual kernel: a temporary data dir, no environment (so the
    offline model), gone afterwards. The health self-test runs on it."""
    with tempfile.TemporaryDirectory(prefix="hologram-selftest-") as scratch:
        async with Kernel(scratch, environ={}) as virtual:
            return await virtual.say(text)
