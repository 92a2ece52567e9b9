"""Child agents (spec 001: Child Agent): a lightweight agent for one task.

A child takes no part in the stage pipeline. Its system prompt is its task and nothing else
(no persona, no memory, no knowledge); it may call only the `output_send__*` tools; it gets at
most `core.agent.child_max_tool_rounds` rounds; and when it ends, its text is the result the
parent sees as the `spawn_child` tool result. Children spawned in one round run concurrently,
because the calls of one round do.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Annotated

from hologram.agent.loop import LoopFrame, LoopParts, ToolLoop
from hologram.channels import SEND_PREFIX
from hologram.llm import ChatMessage
from hologram.sdk import (
    NOT_BLANK,
    AgentOutput,
    Param,
    SystemNote,
    ToolDef,
)

SPAWN_CHILD = "spawn_child"

CHILD_BRIEF = (
    "You are a child agent working on one task for another agent. Your task:\n\n{task}\n\n"
    "When you are done, answer with the result as plain text; that answer is all the other "
    "agent receives."
)
START = "Carry out the task."


class ChildAgents:
    """Spawns children for one parent agent and numbers them."""

    def __init__(
        self,
        parts: LoopParts,
        tools: Callable[[], list[ToolDef]],
        max_rounds: Callable[[], int],
    ) -> None:
        self._parts = parts
        self._tools = tools
        self._max_rounds = max_rounds
        #: Numbers the children for their labels (`child-1`, …) in events.
        self._ids = itertools.count(1)
        self.running = 0

    def allowed_tools(self) -> dict[str, ToolDef]:
        return {t.name: t for t in self._tools() if t.name.startswith(SEND_PREFIX)}

    async def spawn(self, task: str) -> str:
        """Run one child to its end; returns its final text."""
        label = f"child-{next(self._ids)}"
        messages = [ChatMessage.system(CHILD_BRIEF.format(task=task)), ChatMessage.user(START)]
        emit = self._parts.emit
        self.running += 1
        try:
            emit(SystemNote(kind="child_started", detail={"task": task}), source=label)
            loop = ToolLoop(label, self._parts, self.allowed_tools, self._max_rounds)
            text = await loop.run(LoopFrame(messages))
        finally:
            self.running -= 1
        emit(AgentOutput(text=text, child=True), source=label)
        return text

    def tool(self) -> ToolDef:
        async def spawn_child(
            task: Annotated[str, Param("the whole task", pattern=NOT_BLANK)],
        ) -> str:
            """Hand a self-contained task to a child agent and get its result text back.
            The child sees only the task you write (no conversation, no memory), so state
            everything it needs; it can only send messages on output channels. Children
            started in the same round work at the same time."""
            return await self.spawn(task)

        return ToolDef.from_function(spawn_child, owner="kernel")
