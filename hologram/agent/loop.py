"""One round of tool calls (`ToolRound`), and the plain tool loop of the agents that stand
beside the main one (children, residents).

A round is the same block wherever it runs: the main agent's turn and this loop both start
every call of a model answer at once, each a task of its own, and collect the results
shielded, so a preemption of whoever waits never cuts a tool off midway, and a resumed run
waits for the calls already started instead of starting them again.

The plain loop takes no part in the stage pipeline: ask the model, run the tools it calls,
repeat until it answers or the round cap. It keeps its state in a `LoopFrame`, so a run
cancelled by a preemption can be started again on the same frame: the cancelled model call is
made again, and a tool call that was started is never started twice.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from hologram.agent.media import MediaParts
from hologram.agent.ports import ChatModel
from hologram.kernel import TaskScope
from hologram.llm import ChatMessage, CompletionRequest, CompletionResponse
from hologram.sdk import (
    AgentLLMChain,
    Emit,
    SystemNote,
    ToolCall,
    ToolCalled,
    ToolDef,
    ToolResult,
)
from hologram.stages import ToolRunner

CAP_NOTE = "No tool rounds are left: answer now with the result you have."


def tool_called(
    call: ToolCall,
    result: ToolResult,
    *,
    round_: int,
    denied: bool | None = None,
    ms: float | None = None,
) -> ToolCalled:
    """What a tool_call event says of one call, whichever agent made it."""
    return ToolCalled(
        round=round_,
        denied=denied,
        ms=ms,
        id=call.id,
        name=call.name,
        arguments=call.arguments,
        result=result.content,
        is_error=result.is_error,
    )


@dataclass(eq=False)
class ToolRound:
    """The tool calls of one model answer, and the tasks that run them."""

    calls: list[ToolCall]
    #: Each call's task by position (models do repeat or omit call ids).
    jobs: dict[int, asyncio.Future[ToolResult]] = field(default_factory=dict)

    def start(
        self,
        run_one: Callable[[ToolCall], Awaitable[ToolResult]],
        tasks: TaskScope,
        name: str,
    ) -> None:
        """Start every call not started yet, each as a task of the kernel's group."""
        for index, call in enumerate(self.calls):
            if index not in self.jobs:
                self.jobs[index] = tasks.spawn(_run(run_one, call), name=name, awaited=True)

    async def results(self) -> list[ToolResult]:
        """Every call's result, in the calls' order. Shielded: a cancellation of the waiter
        leaves the tools running, to be awaited again on the next run."""
        await asyncio.shield(asyncio.gather(*self.jobs.values()))
        return [self.jobs[index].result() for index in range(len(self.calls))]


async def _run(run_one: Callable[[ToolCall], Awaitable[ToolResult]], call: ToolCall) -> ToolResult:
    return await run_one(call)


@dataclass(eq=False)
class LoopFrame:
    messages: list[ChatMessage]
    rounds: int = 0
    pending: CompletionResponse | None = None
    """The model's last answer while its tool calls are still being run."""
    round: ToolRound | None = None
    """The pending answer's tool calls."""


@dataclass(frozen=True, slots=True)
class LoopParts:
    """What a plain tool loop runs against: the model, the tool runner, where its events go
    and where its tool calls run (the kernel's group)."""

    model: ChatModel
    runner: ToolRunner
    emit: Emit
    tasks: TaskScope


class ToolLoop:
    def __init__(
        self,
        label: str,
        parts: LoopParts,
        tools: Callable[[], dict[str, ToolDef]],
        max_rounds: Callable[[], int],
    ) -> None:
        self.label = label
        self._tasks = parts.tasks
        self._model = parts.model
        self._runner = parts.runner
        self._emit = parts.emit
        self._tools = tools
        self._max_rounds = max_rounds

    async def run(self, frame: LoopFrame) -> str:
        """Run (or go on running) the loop on `frame`; returns the model's final text."""
        while True:
            if frame.pending is None:
                if frame.rounds >= self._max_rounds():
                    return await self._answer_at_cap(frame)
                tools = self._tools()
                response = await self._model.chat(
                    CompletionRequest(frame.messages, list(tools.values()))
                )
                frame.rounds += 1
                self._chain(frame.rounds, response)
                if not response.tool_calls:
                    return response.content
                frame.pending, frame.round = response, ToolRound(list(response.tool_calls))
            assert frame.round is not None
            tools = self._tools()
            frame.round.start(
                functools.partial(self._call, frame, tools=tools), self._tasks, f"{self.label}-tool"
            )
            results = await frame.round.results()
            frame.messages.append(frame.pending.to_message())
            # A tool's media (ToolOutput) is shown with its result, read from the runner's store.
            parts = MediaParts(getattr(self._runner, "media", None))
            frame.messages += [parts.tool_message(result) for result in results]
            frame.pending, frame.round = None, None

    async def _call(
        self, frame: LoopFrame, call: ToolCall, tools: dict[str, ToolDef]
    ) -> ToolResult:
        result = await self._runner.execute(call, tools)
        self._emit(tool_called(call, result, round_=frame.rounds), source=self.label)
        return result

    async def _answer_at_cap(self, frame: LoopFrame) -> str:
        self._emit(SystemNote(kind="max_tool_rounds"), source=self.label)
        response = await self._model.chat(
            CompletionRequest([*frame.messages, ChatMessage.system(CAP_NOTE)], [])
        )
        self._chain(frame.rounds + 1, response)
        return response.content

    def _chain(self, round_no: int, response: CompletionResponse) -> None:
        self._emit(
            AgentLLMChain(
                round=round_no,
                text=response.content,
                tool_calls=[
                    {"id": c.id, "name": c.name, "arguments": c.arguments}
                    for c in response.tool_calls
                ],
                reasoning=response.reasoning_content,
            ),
            source=self.label,
        )
