"""The plain tool loop of the agents that stand beside the main one (children, residents).

They take no part in the stage pipeline: ask the model, run the tools it calls, repeat until
it answers or the round cap. The loop keeps its state in a `LoopFrame`, so a run cancelled by
a preemption can be started again on the same frame: the cancelled model call is made again,
and a tool call that was started is never started twice (a call cut off mid-run is awaited,
shielded, on the next run).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hologram.agent.media import MediaParts
from hologram.agent.ports import ChatModel
from hologram.kernel.tasks import TaskScope
from hologram.llm import ChatMessage, CompletionRequest, CompletionResponse
from hologram.sdk import EventType, ToolCall, ToolDef, ToolResult
from hologram.stages import ToolRunner

CAP_NOTE = "No tool rounds are left: answer now with the result you have."


def tool_call_fields(call: ToolCall, result: ToolResult) -> dict[str, Any]:
    """What a tool_call event says of one call, whichever agent made it."""
    return {
        "id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "result": result.content,
        "is_error": result.is_error,
    }


@dataclass(eq=False)
class LoopFrame:
    messages: list[ChatMessage]
    rounds: int = 0
    pending: CompletionResponse | None = None
    """The model's last answer while its tool calls are still being run."""
    calls: dict[int, asyncio.Future[ToolResult]] = field(default_factory=dict)
    """The pending answer's tool calls by position (models do repeat or omit call ids)."""


class ToolLoop:
    def __init__(
        self,
        label: str,
        model: ChatModel,
        runner: ToolRunner,
        tools: Callable[[], dict[str, ToolDef]],
        max_rounds: Callable[[], int],
        emit: Callable[..., Any],
        tasks: TaskScope,
    ) -> None:
        self.label = label
        self._tasks = tasks
        self._model = model
        self._runner = runner
        self._tools = tools
        self._max_rounds = max_rounds
        self._emit = emit

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
                frame.pending, frame.calls = response, {}
            await self._run_calls(frame, frame.pending)
            calls = frame.pending.tool_calls
            frame.messages.append(frame.pending.to_message())
            # A tool's media (ToolOutput) is shown with its result, read from the runner's store.
            parts = MediaParts(getattr(self._runner, "media", None))
            frame.messages += [
                parts.tool_message(frame.calls[i].result()) for i in range(len(calls))
            ]
            frame.pending, frame.calls = None, {}

    async def _run_calls(self, frame: LoopFrame, response: CompletionResponse) -> None:
        tools = self._tools()
        for index, call in enumerate(response.tool_calls):
            if index not in frame.calls:
                frame.calls[index] = self._tasks.spawn(
                    self._call(frame, call, tools), name=f"{self.label}-tool", awaited=True
                )
        # Shielded: a preemption cancels this run, not the tools it started.
        await asyncio.shield(asyncio.gather(*frame.calls.values()))

    async def _call(
        self, frame: LoopFrame, call: ToolCall, tools: dict[str, ToolDef]
    ) -> ToolResult:
        result = await self._runner.execute(call, tools)
        self._emit(
            EventType.TOOL_CALL,
            source=self.label,
            round=frame.rounds,
            **tool_call_fields(call, result),
        )
        return result

    async def _answer_at_cap(self, frame: LoopFrame) -> str:
        self._emit(EventType.SYSTEM, source=self.label, kind="max_tool_rounds")
        response = await self._model.chat(
            CompletionRequest([*frame.messages, ChatMessage.system(CAP_NOTE)], [])
        )
        self._chain(frame.rounds + 1, response)
        return response.content

    def _chain(self, round_no: int, response: CompletionResponse) -> None:
        self._emit(
            EventType.AGENT_LLM_CHAIN,
            source=self.label,
            round=round_no,
            text=response.content,
            tool_calls=[
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in response.tool_calls
            ],
            reasoning=response.reasoning_content,
        )
