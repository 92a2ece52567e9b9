"""The stage host (spec: StageHost): stage handlers, the tool table, and running a stage.

All handlers of a stage run concurrently on one shared context, each through a view that
enforces the stage's write rights (spec 001, the seven-stage table). One handler failing —
raising, timing out, or writing what it may not — is isolated: logged with its traceback,
published as an event, and the others finish. Any handler setting `response` short-circuits
the turn; the host reports it and the turn acts on it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from hologram.sdk import (
    STAGE_WRITABLE,
    Event,
    EventType,
    HandlerScope,
    Stage,
    StageContext,
    StageHandler,
    StageHandlerError,
    StageRan,
    StageWriteRefused,
    ToolCall,
    ToolDef,
    ToolResult,
)
from hologram.stages._view import StageView, StageWriteError
from hologram.stages.execute import FileTracker, ToolRunner
from hologram.stages.tools import ToolTable

log = logging.getLogger(__name__)

Publish = Callable[[Event], object]

TOOL_STAGES = frozenset({Stage.BEFORE_TOOLCALL, Stage.AFTER_TOOLCALL})
"""The stages that concern one tool call: the only ones an own-tools handler can see."""


@dataclass(eq=False, slots=True)
class _Registration:
    stage: Stage
    handler: StageHandler
    scope: HandlerScope
    owner: str | None
    name: str


@dataclass(frozen=True, slots=True)
class StageRun:
    """What one run of one stage did."""

    stage: Stage
    handlers: int
    seconds: float
    short_circuit: bool
    failed: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


@dataclass(slots=True)
class _Outcome:
    failed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


class StageHost:
    def __init__(
        self,
        publish: Publish,
        handler_timeout: Callable[[], float] = lambda: 30.0,
        tool_timeout: Callable[[], float] = lambda: 60.0,
    ) -> None:
        self._publish = publish
        self._handler_timeout = handler_timeout
        self.tools = ToolTable()
        self.runner = ToolRunner(tool_timeout)
        self._plain_runner = self.runner
        """The runner itself, even once the firewall wraps it (`runner` is then the guard)."""
        self._handlers: dict[Stage, list[_Registration]] = {stage: [] for stage in Stage}

    # ---- registration ----------------------------------------------------------------------

    def register_stage(
        self,
        stage: Stage | str,
        handler: StageHandler,
        scope: HandlerScope = HandlerScope.GLOBAL,
        owner: str | None = None,
        name: str | None = None,
    ) -> Callable[[], None]:
        """Run `handler` at every `stage`. With scope `own_tools` it runs only in the two tool
        stages and only for calls to tools `owner` owns. Returns the unregister function."""
        stage = Stage(stage)
        scope = HandlerScope(scope)
        if scope is HandlerScope.OWN_TOOLS:
            if owner is None:
                raise ValueError("a stage handler with scope own_tools needs its owner plugin")
            if stage not in TOOL_STAGES:
                raise ValueError(
                    f"scope own_tools only applies to before_toolcall and after_toolcall, "
                    f"not {stage.value}: register it with scope global"
                )
        label = name if name else getattr(handler, "__qualname__", repr(handler))
        registration = _Registration(
            stage, handler, scope, owner, f"{owner}:{label}" if owner else label
        )
        self._handlers[stage].append(registration)

        def unregister() -> None:
            if registration in self._handlers[stage]:
                self._handlers[stage].remove(registration)

        return unregister

    def register_tool(self, tool: ToolDef, owner: str | None = None) -> ToolDef:
        return self.tools.register(tool, owner)

    def unregister_plugin_tools(self, plugin: str) -> list[str]:
        return self.tools.unregister_plugin_tools(plugin)

    def unregister_plugin(self, plugin: str) -> None:
        """Remove everything `plugin` registered: its tools and its stage handlers."""
        self.tools.unregister_plugin_tools(plugin)
        for stage in Stage:
            self._handlers[stage] = [r for r in self._handlers[stage] if r.owner != plugin]

    def mount_runner(self, runner: ToolRunner) -> None:
        """Put `runner` in front of the plain one (the firewall's guard), once, at boot,
        before any tool runs. A second mount is refused: it would stand in front of the
        first and run every check twice, or silently drop it."""
        if self.runner is not self._plain_runner:
            raise RuntimeError("a runner is already mounted in front of the stage host's")
        self.runner = runner

    def track_files(self, tracker: FileTracker | None) -> None:
        """Every call of a tool that declares `touches_files` runs inside `tracker`."""
        self._plain_runner.file_tracker = tracker

    def handlers(self, stage: Stage) -> list[str]:
        return [r.name for r in self._handlers[stage]]

    async def execute(self, call: ToolCall) -> ToolResult:
        """Run `call` against the registered tools alone (the turn offers more: see agent)."""
        return await self.runner.execute(call, {t.name: t for t in self.tools.tools()})

    # ---- running a stage -------------------------------------------------------------------

    def _applies(self, registration: _Registration, ctx: StageContext) -> bool:
        if registration.scope is HandlerScope.GLOBAL:
            return True
        call = ctx.tool_call
        return call is not None and self.tools.owner_of(call.name) == registration.owner

    async def run_stage(self, stage: Stage, ctx: StageContext) -> StageRun:
        """Run every handler of `stage` on `ctx`, concurrently, and wait for all of them."""
        started = time.perf_counter()
        ctx.phase = stage
        chosen = [r for r in self._handlers[stage] if self._applies(r, ctx)]
        outcome = _Outcome()
        if chosen:
            lock = asyncio.Lock()
            writable = STAGE_WRITABLE[stage]
            runs = [
                self._run_handler(r, StageView(ctx, stage, writable, r.name, lock), outcome)
                for r in chosen
            ]
            # One handler (the firewall's alone, as in most turns) needs no task of its own.
            await (runs[0] if len(runs) == 1 else asyncio.gather(*runs))
        run = StageRun(
            stage,
            len(chosen),
            time.perf_counter() - started,
            ctx.response is not None,
            tuple(outcome.failed),
            tuple(outcome.refused),
        )
        self._publish(
            Event(
                EventType.STAGE,
                StageRan(
                    stage=stage.value,
                    handlers=run.handlers,
                    ms=round(run.seconds * 1000, 3),
                    short_circuit=run.short_circuit,
                    failed=list(run.failed),
                ),
                source="stagehost",
            )
        )
        return run

    async def _run_handler(
        self, registration: _Registration, view: StageView, outcome: _Outcome
    ) -> None:
        try:
            async with asyncio.timeout(self._handler_timeout()):
                # Handlers are typed against `StageContext`; each is handed the `StageView` that
                # stands in for it (the same fields, rights-checked in __getattr__/__setattr__),
                # a proxy mypy cannot see as the dataclass.
                result = registration.handler(view)  # type: ignore[arg-type]
                if inspect.isawaitable(result):
                    await result
        except StageWriteError as exc:
            self._refused(registration, view, str(exc), outcome)
        except Exception as exc:
            self._failed(registration, exc, outcome)
        for name in view.changed_copies():
            if name not in view.refused:
                self._refused(registration, view, view.explain(name), outcome)

    def _refused(
        self, registration: _Registration, view: StageView, message: str, outcome: _Outcome
    ) -> None:
        log.warning("%s; the change was not applied", message)
        outcome.refused.append(registration.name)
        self._publish(
            Event(
                EventType.STAGE_WRITE_REFUSED,
                StageWriteRefused(
                    stage=registration.stage.value, handler=registration.name, error=message
                ),
                source="stagehost",
            )
        )

    def _failed(self, registration: _Registration, exc: Exception, outcome: _Outcome) -> None:
        stage = registration.stage.value
        if isinstance(exc, TimeoutError):
            message = f"timed out after {self._handler_timeout():g} s"
        else:
            message = f"{type(exc).__name__}: {exc}"
        log.error(
            "stage handler %s failed in %s: %s", registration.name, stage, message, exc_info=exc
        )
        outcome.failed.append(registration.name)
        self._publish(
            Event(
                EventType.STAGE_HANDLER_ERROR,
                StageHandlerError(
                    stage=stage,
                    handler=registration.name,
                    error=message,
                    traceback="".join(traceback.format_exception(exc)),
                ),
                source="stagehost",
            )
        )
