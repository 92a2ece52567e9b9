"""The `knowledge` kernel module: the knowledge base at `<data>/knowledge`, its tools in
the stage host's tool table."""

from __future__ import annotations

from typing import Any

from hologram.knowledge.store import KnowledgeBase
from hologram.knowledge.tools import knowledge_tools
from hologram.sdk import Facility


class KnowledgeModule:
    name = "knowledge"
    requires = (Facility.EVENTS, Facility.STAGE_HOST)
    provides = (Facility.KNOWLEDGE,)

    def __init__(self) -> None:
        self.kb: KnowledgeBase | None = None

    async def init(self, state: Any) -> None:
        self.kb = KnowledgeBase(
            state.data_dir / "knowledge",
            emit=state.events.emit,
            tasks=state.tasks.scope(self.name),
        )
        self.kb.start()  # scanning the folders is not on the boot path
        for tool in knowledge_tools(self.kb):
            state.stagehost.register_tool(tool)
        state.knowledge = self.kb

    async def close(self) -> None:
        if self.kb is not None:
            await self.kb.close()
