"""The `agent` kernel module: one agent per kernel, on the stage host, channels and model."""

from __future__ import annotations

import logging
from typing import Any

from hologram.agent.agent import Agent
from hologram.agent.prompt import PromptBudget
from hologram.llm import ProviderManager
from hologram.sdk import Facility

log = logging.getLogger(__name__)


def budget_of(llm: ProviderManager) -> PromptBudget:
    """Memory and context ceilings from the active source's window (spec: ComputeTokenBudget).
    With no source able to answer there is no window to size against; the defaults stand in
    and the turn's model call reports the real problem."""
    try:
        budget = llm.budget()
    except Exception as exc:
        log.debug("no token budget (%s); using the defaults", exc)
        return PromptBudget()
    return PromptBudget(memory_tokens=budget.memory, context_tokens=budget.context)


class AgentModule:
    name = "agent"
    # Memory joins `requires` once the memory modules offer the TurnMemory steps (ports.py).
    requires = (
        Facility.CONFIG,
        Facility.EVENTS,
        Facility.STAGE_HOST,
        Facility.CHANNELS,
        Facility.LLM,
    )
    provides = (Facility.AGENT,)

    async def init(self, state: Any) -> None:
        config = state.config
        llm = state.llm
        state.agent = Agent(
            stagehost=state.stagehost,
            channels=state.channels,
            model=llm,
            events=state.events,
            data_dir=state.data_dir,
            max_tool_rounds=lambda: config.get_int("core.agent.max_tool_rounds"),
            child_max_tool_rounds=lambda: config.get_int("core.agent.child_max_tool_rounds"),
            personal_prompt=lambda: config.get_str("core.agent.personal_prompt"),
            prompt_budget=lambda: budget_of(llm),
        )
