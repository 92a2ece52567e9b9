"""The agent (spec: Agent): builds what a turn runs against, and holds it for the kernel.

A turn is handed the agent's `TurnParts`, never the agent: the arrow runs agent → turn.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hologram.agent.child import ChildAgents
from hologram.agent.loop import LoopParts
from hologram.agent.media import seemedia_tool
from hologram.agent.parts import Responder, TurnParts
from hologram.agent.ports import ChatModel, ToolSource, TurnKnowledge, TurnMemory
from hologram.agent.prompt import Persona, PromptBudget
from hologram.agent.skills import SkillIndex
from hologram.agent.turn import Turn, TurnInput
from hologram.channels import OutputChannels
from hologram.config import AgentSettings
from hologram.events import EventBus
from hologram.kernel import TaskScope
from hologram.media import MediaStore
from hologram.sdk import ToolDef
from hologram.stages import StageHost, ToolRunner


class Agent:
    def __init__(
        self,
        *,
        stagehost: StageHost,
        channels: OutputChannels,
        model: ChatModel,
        events: EventBus,
        data_dir: Path,
        settings: Callable[[], AgentSettings] = AgentSettings,
        prompt_budget: Callable[[], PromptBudget] = PromptBudget,
        memory: TurnMemory | None = None,
        knowledge: TurnKnowledge | None = None,
        tasks: TaskScope,
        media: MediaStore | None = None,
    ) -> None:
        skills = SkillIndex()
        skills.load_dir(data_dir / "skill")
        self.children = ChildAgents(
            LoopParts(model, stagehost.runner, events.emit, tasks),
            channels.tools,
            lambda: settings().child_max_tool_rounds,
        )
        self._spawn_tool = self.children.tool()
        #: What every turn of this agent runs against.
        self.parts = TurnParts(
            stagehost=stagehost,
            model=model,
            events=events,
            channels=channels,
            tasks=tasks,
            persona=Persona(
                data_dir / "personal" / "personal.md", lambda: settings().personal_prompt
            ),
            skills=skills,
            settings=settings,
            prompt_budget=prompt_budget,
            builtin_tools=self._builtin_tools,
            memory=memory,
            knowledge=knowledge,
            media=media,
            seemedia=seemedia_tool(media) if media is not None else None,
        )

    # ---- the parts, for the kernel's other modules -------------------------------------------

    @property
    def stagehost(self) -> StageHost:
        return self.parts.stagehost

    @property
    def runner(self) -> ToolRunner:
        return self.parts.runner

    @property
    def model(self) -> ChatModel:
        return self.parts.model

    @property
    def events(self) -> EventBus:
        return self.parts.events

    @property
    def channels(self) -> OutputChannels:
        return self.parts.channels

    @property
    def tasks(self) -> TaskScope:
        return self.parts.tasks

    @property
    def memory(self) -> TurnMemory | None:
        return self.parts.memory

    @property
    def skills(self) -> SkillIndex:
        return self.parts.skills

    @property
    def without_model(self) -> Responder | None:
        """Who answers when every model source failed (the recoverydiag built-in)."""
        return self.parts.without_model

    def mount_without_model(self, responder: Responder) -> None:
        """Let `responder` answer when every model source failed, from the next turn on.
        One at a time: a second is refused while the first is mounted (two plugins would
        each believe theirs answers)."""
        if self.parts.without_model is not None and self.parts.without_model != responder:
            raise RuntimeError("another responder already answers without a model")
        self.parts.without_model = responder

    def unmount_without_model(self, responder: Responder) -> None:
        """Take `responder` away again (its plugin stopped); another one stays."""
        if self.parts.without_model == responder:
            self.parts.without_model = None

    # ---- tools (spec: buildToolDefs, re-aggregated every round) ------------------------------

    def _builtin_tools(self) -> list[ToolDef]:
        skill_info = self.parts.skills.tool()
        return [self._spawn_tool] + ([skill_info] if skill_info is not None else [])

    def tool_sources(self, media_pending: bool = False) -> list[ToolSource]:
        return self.parts.tool_sources(media_pending)

    def build_tool_defs(self, media_pending: bool = False) -> dict[str, ToolDef]:
        return self.parts.build_tool_defs(media_pending)

    # ---- turns -------------------------------------------------------------------------------

    def turn(self, given: TurnInput) -> Turn:
        """A turn of this agent for `given`, not yet run. Inputs come through the kernel's
        door (`Inputs.say` / `submit`: the journal, then the scheduler), which runs it; a
        turn run by hand skips both, so only tests of one turn do that."""
        return Turn(self.parts, given)

    async def deliver(self, channel: str, text: str, source: str = "agent") -> bool:
        """Send `text` on output channel `channel` (spec: emitResponse)."""
        return await self.parts.deliver(channel, text, source)

    async def spawn_child(self, task: str) -> str:
        return await self.children.spawn(task)

    def describe(self) -> dict[str, Any]:
        return {
            "tools": sorted(self.build_tool_defs()),
            "skills": [s.name for s in self.parts.skills.skills()],
            "channels": [c.name for c in self.parts.channels.channels()],
            "memory": self.parts.memory is not None,
        }
