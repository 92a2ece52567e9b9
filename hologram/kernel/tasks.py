"""The kernel's one task group: every task the kernel runs is started here.

A module (or anything a module owns) gets a `TaskScope` named after it and starts its work
through that: `spawn` for a task that runs beside the caller, `start` for a background
service that says when it is ready. The group knows each task's owner, so shutdown cancels
a module's leftover tasks right after that module's `close`, in reverse layer order, and
whatever is left last of all.

A background task that fails is never lost: it is logged with its traceback and handed to
the failure hook the events module installs, which publishes it. A task whose result its
caller awaits (`awaited=True`) is the caller's to report; the group only cancels it at
shutdown if it is still running.

This is the only module of hologram that calls `create_task`; a test holds that.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable, Collection, Coroutine
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

FailureHook = Callable[[str, str, BaseException], None]
"""hook(task name, owner, exception): told of every background task that failed."""


class Ready(Generic[T]):
    """What a service started with `TaskScope.start` calls once it is serving; `start`
    returns the value given."""

    __slots__ = ("_future",)

    def __init__(self, future: asyncio.Future[T]) -> None:
        self._future = future

    # A service that gives no value is a `Ready[None]` called bare: the default is valid only
    # when `T` is None, which a signature generic in `T` cannot say.
    def __call__(self, value: T = None) -> None:  # type: ignore[assignment]
        if not self._future.done():
            self._future.set_result(value)


class ServiceFailed(RuntimeError):
    """A service ended before it said it was ready."""


@dataclass(eq=False, slots=True)
class _Owned:
    task: asyncio.Task[Any]
    owner: str
    awaited: bool


class KernelTasks:
    """Every task of one kernel, by owner."""

    def __init__(self) -> None:
        self._tasks: dict[asyncio.Task[Any], _Owned] = {}
        self._hooks: list[FailureHook] = []
        self.failures = 0
        """Background tasks that failed so far (status pages show it)."""

    def scope(self, owner: str) -> TaskScope:
        return TaskScope(self, owner)

    def on_failure(self, hook: FailureHook) -> Callable[[], None]:
        """Be told of every failed background task. Returns the function that stops it."""
        self._hooks.append(hook)
        return lambda: self._hooks.remove(hook) if hook in self._hooks else None

    def spawn(
        self,
        coro: Coroutine[Any, Any, T],
        *,
        owner: str,
        name: str | None = None,
        awaited: bool = False,
        context: contextvars.Context | None = None,
    ) -> asyncio.Task[T]:
        """`context` defaults to a copy of the caller's, as for any asyncio task (a turn's
        tool calls see the turn's input)."""
        loop = asyncio.get_running_loop()
        task = loop.create_task(coro, name=name, context=context)
        self._tasks[task] = _Owned(task, owner, awaited)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        owned = self._tasks.pop(task, None)
        if owned is None or owned.awaited or task.cancelled():
            return
        error = task.exception()
        if error is None:
            return
        self.failures += 1
        log.error("background task %s of %s failed", task.get_name(), owned.owner, exc_info=error)
        for hook in list(self._hooks):
            try:
                hook(task.get_name(), owned.owner, error)
            except Exception:
                log.exception("a task failure hook failed")

    def supervise(self, task: asyncio.Task[Any]) -> None:
        """Report a failure of `task` from now on, as for any background task."""
        owned = self._tasks.get(task)
        if owned is not None:
            owned.awaited = False

    def running(self, owner: str | None = None) -> list[asyncio.Task[Any]]:
        return [t for t, o in self._tasks.items() if owner is None or o.owner == owner]

    async def close(self, owner: str | None = None, *, sparing: Collection[str] = ()) -> int:
        """Cancel the tasks of `owner` (with None: of every owner not in `sparing`) and
        wait until they are gone; returns how many were still running. The task that
        calls it is never cancelled by it."""
        current = asyncio.current_task()
        tasks = [
            task
            for task, owned in self._tasks.items()
            if (owner is None or owned.owner == owner)
            and owned.owner not in sparing
            and task is not current
        ]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        return len(tasks)


class TaskScope:
    """The tasks one owner (a module, a plugin) starts in the kernel's group."""

    __slots__ = ("group", "owner")

    def __init__(self, group: KernelTasks, owner: str) -> None:
        self.group = group
        self.owner = owner

    def spawn(
        self, coro: Coroutine[Any, Any, T], *, name: str | None = None, awaited: bool = False
    ) -> asyncio.Task[T]:
        """Run `coro` beside the caller. With `awaited`, the caller takes its result (and
        its exception); otherwise a failure is logged and published."""
        return self.group.spawn(coro, owner=self.owner, name=name, awaited=awaited)

    async def start(
        self, service: Callable[[Ready[T]], Awaitable[None]], *, name: str
    ) -> tuple[asyncio.Task[None], T]:
        """Start a background service and wait until it calls `ready(value)`; returns its
        task and that value. A service that fails before it is ready raises here, where it
        was started, instead of in the background."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        # Awaited until it is ready: a failure before then is raised to the starter, not
        # also reported as a background failure.
        task = self.spawn(_serve(service, Ready(future)), name=name, awaited=True)
        try:
            waiting: set[asyncio.Future[None] | asyncio.Future[T]] = {task, future}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if not future.done():
            future.cancel()
            error = None if task.cancelled() else task.exception()
            raise ServiceFailed(f"{name} ended before it was ready") from error
        self.group.supervise(task)
        return task, future.result()

    async def close(self) -> int:
        """Cancel what this owner still runs and wait for it."""
        return await self.group.close(self.owner)


class Once:
    """Work that runs at most once, in the background, and that others may wait for: a
    store's load, an index built after boot. A failure is reported like any background
    task's, and raised to whoever waits."""

    __slots__ = ("_name", "_scope", "_task", "_work")

    def __init__(
        self, scope: TaskScope, work: Callable[[], Coroutine[Any, Any, None]], name: str
    ) -> None:
        self._scope = scope
        self._work = work
        self._name = name
        self._task: asyncio.Task[None] | None = None

    def start(self) -> asyncio.Task[None]:
        if self._task is None:
            self._task = self._scope.spawn(self._work(), name=self._name)
        return self._task

    async def wait(self, within: float | None = None) -> bool:
        """Wait for the work to end, or `within` seconds at most: whether it ended (its
        failure raised). A wait that times out leaves the work running."""
        task = self.start()
        if within is not None and not task.done():
            await asyncio.wait({task}, timeout=within)
            if not task.done():
                return False
        await task
        return True

    @property
    def started(self) -> bool:
        return self._task is not None

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    async def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


async def _serve(service: Callable[[Ready[T]], Awaitable[None]], ready: Ready[T]) -> None:
    await service(ready)


async def first_completed(*aws: Coroutine[Any, Any, Any]) -> int:
    """Run the coroutines until the first of them ends; cancel the others (and wait for
    them to be gone). Returns the index of the one that ended; its exception, if any, is
    raised. The structured way to wait for "whichever comes first"."""
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(aw) for aw in aws]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    first = next(i for i, t in enumerate(tasks) if t in done)
    error = None if tasks[first].cancelled() else tasks[first].exception()
    if error is not None:
        raise error
    return first
