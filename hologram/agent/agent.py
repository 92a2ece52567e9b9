"""The agent (spec: Agent): what a turn runs against, and the door inputs come through."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hologram.agent.child import ChildAgents
from hologram.agent.media import seemedia_tool
from hologram.agent.ports import ChatModel, ToolSource, TurnKnowledge, TurnMemory
from hologram.agent.prompt import Persona, PromptBudget
from hologram.agent.skills import SkillIndex
from hologram.agent.turn import Turn, TurnInput, TurnResult
from hologram.channels import OutputChannels
from hologram.events import EventBus
from hologram.kernel.tasks import KernelTasks, TaskScope
from hologram.media import MediaStore
from hologram.sdk import EventType, ToolDef
from hologram.stages import StageHost

log = logging.getLogger(__name__)


class Agent:
    def __init__(
        self,
        *,
        stagehost: StageHost,
        channels: OutputChannels,
        model: ChatModel,
        events: EventBus,
        data_dir: Path,
        max_tool_rounds: Callable[[], int] = lambda: 10,
        child_max_tool_rounds: Callable[[], int] = lambda: 5,
        personal_prompt: Callable[[], str] = lambda: "",
        prompt_budget: Callable[[], PromptBudget] = PromptBudget,
        memory: TurnMemory | None = None,
        knowledge: TurnKnowledge | None = None,
        knowledge_hits: Callable[[], int] = lambda: 3,
        tasks: TaskScope | None = None,
        media: MediaStore | None = None,
    ) -> None:
        self.stagehost = stagehost
        self.media = media
        """The kernel's media store: the turn reads the bytes of the media it shows from it."""
        self._seemedia = seemedia_tool(media) if media is not None else None
        self.tasks = tasks or KernelTasks().scope("agent")
        """Where a turn's tool calls and its ending run (the kernel's group)."""
        self.channels = channels
        self.model = model
        self.events = events
        self.memory = memory
        self.knowledge = knowledge
        self.without_model: Callable[[str, Exception], Awaitable[str]] | None = None
        """Who answers when every model source failed (the recoverydiag built-in)."""
        self.knowledge_hits = knowledge_hits
        self.max_tool_rounds = max_tool_rounds
        self.prompt_budget = prompt_budget
        self.runner = stagehost.runner
        self.persona = Persona(data_dir / "personal" / "personal.md", personal_prompt)
        self.skills = SkillIndex()
        self.skills.load_dir(data_dir / "skill")
        self.children = ChildAgents(
            model, self.runner, channels.tools, child_max_tool_rounds, events.emit, self.tasks
        )
        self._spawn_tool = self.children.tool()
        # The scheduler (a later module) decides which input runs when; until then turns of
        # one agent simply take turns, so two inputs never share a context window.
        self._turn_lock = asyncio.Lock()

    # ---- tools (spec: buildToolDefs, re-aggregated every round) ------------------------------

    def tool_sources(self, media_pending: bool = False) -> list[ToolSource]:
        """Plugin and SDK tools, memory tools when memory is mounted, the built-ins, the
        media tools while media is pending, then the output channels' tools."""
        sources: list[ToolSource] = [self.stagehost.tools.tools]
        if self.memory is not None:
            sources.append(self.memory.tools)
        sources.append(self._builtin_tools)
        if media_pending and self._seemedia is not None:
            seemedia = self._seemedia
            sources.append(lambda: [seemedia])
        sources.append(self.channels.tools)
        return sources

    def _builtin_tools(self) -> list[ToolDef]:
        skill_info = self.skills.tool()
        return [self._spawn_tool] + ([skill_info] if skill_info is not None else [])

    def build_tool_defs(self, media_pending: bool = False) -> dict[str, ToolDef]:
        """Every tool offered this round; `seemedia` only while media is pending (the
        spec's buildToolDefs rule), so a turn without media is not offered it."""
        tools: dict[str, ToolDef] = {}
        for source in self.tool_sources(media_pending):
            for tool in source():
                if tool.name in tools:
                    # Sources are consulted in a fixed order, so the first one keeps the name.
                    log.warning("tool %s offered twice; keeping the first", tool.name)
                    continue
                tools[tool.name] = tool
        return tools

    # ---- inputs ----------------------------------------------------------------------------

    async def handle(
        self, text: str, channel: str = "notebook", user_id: str = "", group_id: str = ""
    ) -> TurnResult:
        """Run one turn for `text` arriving on `channel`; returns when the reply is out."""
        async with self._turn_lock:
            return await Turn(self, TurnInput(text, channel, user_id, group_id)).run()

    async def say(self, text: str, channel: str = "notebook") -> str:
        return (await self.handle(text, channel)).reply

    async def deliver(self, channel: str, text: str, source: str = "agent") -> bool:
        """Send `text` on output channel `channel` (spec: emitResponse). A reply that cannot
        go out (no such channel, a channel that fails) is logged and published as
        `undelivered`; returns whether it went out."""
        if channel not in self.channels:
            log.warning("no output channel %r: the reply was not delivered", channel)
            reason = "no such output channel"
        else:
            try:
                await self.channels.send(channel, text)
            except Exception as exc:
                log.error("output channel %s failed", channel, exc_info=exc)
                reason = f"{type(exc).__name__}: {exc}"
            else:
                return True
        self.events.emit(
            EventType.SYSTEM, source=source, kind="undelivered", channel=channel, reason=reason
        )
        return False

    async def spawn_child(self, task: str) -> str:
        return await self.children.spawn(task)

    def describe(self) -> dict[str, Any]:
        return {
            "tools": sorted(self.build_tool_defs()),
            "skills": [s.name for s in self.skills.skills()],
            "channels": [c.name for c in self.channels.channels()],
            "memory": self.memory is not None,
        }
