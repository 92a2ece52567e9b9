"""What a turn runs against, as one typed object (spec: the fields of Agent that
processTextInput reads).

The agent builds a `TurnParts` once and hands it to every `Turn`; the turn never sees the
agent. So the arrow runs one way: `agent` → `turn` → `parts`. The two things a turn asks of
the agent's parts beyond reading them, the round's tool table (spec: buildToolDefs) and
sending a reply (spec: emitResponse), live here beside the parts they use.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hologram.agent.ports import ChatModel, ToolSource, TurnKnowledge, TurnMemory
from hologram.agent.prompt import Persona, PromptBudget
from hologram.agent.skills import SkillIndex
from hologram.channels import OutputChannels
from hologram.config import AgentSettings
from hologram.events import EventBus
from hologram.kernel import TaskScope
from hologram.media import MediaStore
from hologram.sdk import (
    SystemNote,
    ToolDef,
)
from hologram.stages import StageHost, ToolRunner

log = logging.getLogger(__name__)

Responder = Callable[[str, Exception], Awaitable[str]]
"""Who answers an input when every model source failed: (input text, the failure) → reply."""


@dataclass(slots=True, eq=False)
class TurnParts:
    """A turn's collaborators. Settings are read through `settings()` at the moment a turn
    needs them, so a changed `core.agent.*` key takes effect on the next turn."""

    stagehost: StageHost
    model: ChatModel
    events: EventBus
    channels: OutputChannels
    #: Where a turn's tool calls and its ending run (the kernel's group).
    tasks: TaskScope
    persona: Persona
    skills: SkillIndex
    settings: Callable[[], AgentSettings]
    prompt_budget: Callable[[], PromptBudget]
    #: The kernel's own tools (spawn_child, skill_info), offered after the memory's.
    builtin_tools: ToolSource
    memory: TurnMemory | None = None
    knowledge: TurnKnowledge | None = None
    #: The kernel's media store: the turn reads the bytes of the media it shows from it.
    media: MediaStore | None = None
    seemedia: ToolDef | None = None
    #: Who answers when every model source failed (the recoverydiag built-in).
    without_model: Responder | None = None

    @property
    def runner(self) -> ToolRunner:
        return self.stagehost.runner

    # ---- tools (spec: buildToolDefs, re-aggregated every round) ------------------------------

    def tool_sources(self, media_pending: bool = False) -> list[ToolSource]:
        """Plugin and SDK tools, memory tools when memory is mounted, the built-ins, the
        media tools while media is pending, then the output channels' tools."""
        sources: list[ToolSource] = [self.stagehost.tools.tools]
        if self.memory is not None:
            sources.append(self.memory.tools)
        sources.append(self.builtin_tools)
        if media_pending and self.seemedia is not None:
            seemedia = self.seemedia
            sources.append(lambda: [seemedia])
        sources.append(self.channels.tools)
        return sources

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

    # ---- output (spec: emitResponse) ---------------------------------------------------------

    async def deliver(self, channel: str, text: str, source: str = "agent") -> bool:
        """Send `text` on output channel `channel`. A reply that cannot go out (no such
        channel, a channel that fails) is logged and published as `undelivered`; returns
        whether it went out."""
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
            SystemNote(kind="undelivered", detail={"channel": channel, "reason": reason}),
            source=source,
        )
        return False
