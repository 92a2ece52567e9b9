"""The `knowledge` kernel module: the knowledge base at `<data>/knowledge`, its tools in
the stage host's tool table."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from hologram.events import EventBus
from hologram.kernel import KernelTasks, required
from hologram.knowledge.store import KnowledgeBase
from hologram.knowledge.tools import knowledge_tools
from hologram.sdk import Facility, ToolDef


class ToolTable(Protocol):
    """The part of the stage host (a floor above) the knowledge module reads."""

    def register_tool(self, tool: ToolDef, owner: str | None = None) -> ToolDef: ...


class KnowledgeState(Protocol):
    """What the knowledge module reads of the kernel's state, and the field it fills."""

    @property
    def events(self) -> EventBus | None: ...
    @property
    def stagehost(self) -> ToolTable | None: ...
    @property
    def data_dir(self) -> Path: ...
    @property
    def tasks(self) -> KernelTasks: ...

    knowledge: KnowledgeBase | None


class KnowledgeModule:
    name = "knowledge"
    requires = (Facility.EVENTS, Facility.STAGE_HOST)
    provides = (Facility.KNOWLEDGE,)

    def __init__(self) -> None:
        self.kb: KnowledgeBase | None = None

    async def init(self, state: KnowledgeState) -> None:
        stagehost = required(state.stagehost, Facility.STAGE_HOST)
        self.kb = KnowledgeBase(
            state.data_dir / "knowledge",
            emit=required(state.events, Facility.EVENTS).emit,
            tasks=state.tasks.scope(self.name),
        )
        self.kb.start()  # scanning the folders is not on the boot path
        for tool in knowledge_tools(self.kb):
            stagehost.register_tool(tool)
        state.knowledge = self.kb

    async def close(self) -> None:
        if self.kb is not None:
            await self.kb.close()
