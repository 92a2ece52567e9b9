"""`seq`: a plan of steps in one tool call (spec 000: seq, "in-group parallel steps invoke
tools by name"). Built in because it calls tools by name through the tool table, which the
public SDK withholds.

The model submits steps; the calls of one step run in parallel, the steps in order. A later
step may use an earlier result: a string argument holding `{{N.M}}` gets the text of step
N's call M (both from 1; `{{N}}` for a step of one call). The whole plan is checked before
anything runs (every tool known, no reference forward, no plan inside a plan). A step with a
failing call ends the plan: the answer is an error carrying every result so far, so the
model sees what was done before it decides what to do next.

Each call goes through the same guarded runner a turn's calls go through, with the rights of
the input that submitted the plan, and is published as a `tool_call` event (`via: seq`).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from hologram.plugins.tool_api import ToolAPI
from hologram.sdk import Event, EventType, Param, ToolCalled, ToolDef, ToolError, ToolResult

if TYPE_CHECKING:
    from hologram.kernel import TaskScope
    from hologram.plugins.host import PluginHost
    from hologram.plugins.kernel_sdk import KernelSDK

MAX_STEPS = 16
MAX_CALLS_PER_STEP = 8
REFERENCE = re.compile(r"\{\{(\d+)(?:\.(\d+))?\}\}")


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """One tool call of a step."""

    tool: Annotated[str, Param("the tool's name", min_length=1)]
    arguments: Annotated[
        dict[str, Any], Param("its arguments; strings may hold {{N.M}}: an earlier result")
    ] = field(default_factory=dict)


@dataclass(slots=True)
class _Done:
    step: int
    call: PlannedCall
    result: ToolResult

    def as_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "tool": self.call.tool,
            "ok": not self.result.is_error,
            "result": self.result.content,
        }


class Sequencer:
    name = "seq"

    def __init__(self, host: PluginHost) -> None:
        self._tasks: TaskScope = host.parts.tasks
        self._sdk: KernelSDK | None = None

    async def start(self, sdk: KernelSDK) -> None:
        self._sdk = sdk

        async def seq_run(
            steps: Annotated[
                list[list[PlannedCall]],
                Param(
                    f"the plan: up to {MAX_STEPS} steps, each a list of up to "
                    f"{MAX_CALLS_PER_STEP} calls run in parallel",
                    min_length=1,
                    max_length=MAX_STEPS,
                ),
            ],
        ) -> str:
            """Run a plan of tool calls in one go: the steps in order, the calls of one step
            in parallel. A string argument may use an earlier result: {{N.M}} is the text
            of step N's call M, {{N}} of step N's only call. A failing call stops the plan;
            the answer then lists every result so far."""
            return await self.run(steps)

        sdk.register_tool(ToolDef.from_function(seq_run, owner=self.name))

    async def stop(self) -> None:
        self._sdk = None

    # ---- running a plan ---------------------------------------------------------------------

    async def run(self, steps: list[list[PlannedCall]]) -> str:
        assert self._sdk is not None, "seq is not started"
        tools = self._sdk.tools
        offered = tools.offered()
        _check(steps, offered)
        done: list[list[_Done]] = []
        for number, step in enumerate(steps, start=1):
            calls = [_filled(c, done, number) for c in step]
            jobs = [
                self._tasks.spawn(
                    self._call(tools, offered, number, c), name="seq-call", awaited=True
                )
                for c in calls
            ]
            results = await asyncio.gather(*jobs)
            done.append([_Done(number, c, r) for c, r in zip(calls, results, strict=True)])
            failed = [d for d in done[-1] if d.result.is_error]
            if failed:
                first = failed[0]
                raise ToolError(
                    _report(done, f"step {number} failed ({first.call.tool}): the plan stopped")
                )
        return _report(done, f"all {len(steps)} steps done")

    async def _call(
        self, tools: ToolAPI, offered: dict[str, ToolDef], step: int, call: PlannedCall
    ) -> ToolResult:
        result = await tools.call(call.tool, call.arguments, offered)
        if self._sdk is not None:
            self._sdk.publish(
                Event(
                    EventType.TOOL_CALL,
                    ToolCalled(
                        via="seq",
                        step=step,
                        name=call.tool,
                        arguments=call.arguments,
                        result=result.content,
                        is_error=result.is_error,
                    ),
                    source=self.name,
                )
            )
        return result


def _check(steps: list[list[PlannedCall]], offered: dict[str, ToolDef]) -> None:
    """Refuse a plan before any of it runs."""
    for number, step in enumerate(steps, start=1):
        if not step:
            raise ToolError(f"step {number} has no calls; give each step one or more")
        if len(step) > MAX_CALLS_PER_STEP:
            raise ToolError(
                f"step {number} has {len(step)} calls; at most {MAX_CALLS_PER_STEP} run at once"
            )
        for call in step:
            if call.tool == "seq_run":
                raise ToolError("a plan cannot hold another plan: put its steps in this one")
            if call.tool not in offered:
                known = ", ".join(sorted(offered))
                raise ToolError(f"step {number}: no tool {call.tool!r}; tools: {known}")
            for ref_step, ref_call in _references(call.arguments):
                if not 1 <= ref_step < number:
                    raise ToolError(
                        f"step {number} uses {{{{{ref_step}.{ref_call}}}}}, which has not run "
                        "by then: a step can use the results of earlier steps only"
                    )
                if not 1 <= ref_call <= len(steps[ref_step - 1]):
                    raise ToolError(
                        f"step {number} uses {{{{{ref_step}.{ref_call}}}}}, but step {ref_step} "
                        f"has {len(steps[ref_step - 1])} call(s)"
                    )


def _references(value: Any) -> list[tuple[int, int]]:
    if isinstance(value, str):
        return [(int(m.group(1)), int(m.group(2) or 1)) for m in REFERENCE.finditer(value)]
    if isinstance(value, dict):
        return [r for v in value.values() for r in _references(v)]
    if isinstance(value, list):
        return [r for v in value for r in _references(v)]
    return []


def _filled(call: PlannedCall, done: list[list[_Done]], step: int) -> PlannedCall:
    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return REFERENCE.sub(
                lambda m: done[int(m.group(1)) - 1][int(m.group(2) or 1) - 1].result.content,
                value,
            )
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill(v) for v in value]
        return value

    return PlannedCall(call.tool, fill(call.arguments))


def _report(done: list[list[_Done]], outcome: str) -> str:
    return json.dumps(
        {"outcome": outcome, "results": [[d.as_json() for d in step] for step in done]},
        ensure_ascii=False,
    )
