"""The `agent` kernel module: one agent per kernel, on the stage host, channels and model."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Protocol

from hologram.agent.agent import Agent
from hologram.agent.inputs import Inputs
from hologram.agent.journal import InputJournal
from hologram.agent.prompt import PromptBudget
from hologram.agent.resident import Residents
from hologram.agent.turn import current_input
from hologram.channels import OutputChannels
from hologram.config import AgentSettings, ConfigRegistry, SchedulerSettings
from hologram.events import EventBus
from hologram.kernel import KernelTasks, required
from hologram.knowledge import KnowledgeBase
from hologram.llm import ProviderManager, estimate_tokens
from hologram.media import MediaStore
from hologram.memory import GraphMemory, Memory
from hologram.sdk import Clock, Facility, Priority, ToolDef
from hologram.stages import StageHost

log = logging.getLogger(__name__)


class Masking(Protocol):
    """The part of the firewall the input door reads: what stores an input's text masked."""

    def mask(self, text: str) -> str: ...


class AgentState(Protocol):
    """What the agent's modules (`agent`, `scheduler`) read of the kernel's state, and the
    fields they fill."""

    @property
    def config(self) -> ConfigRegistry | None: ...
    @property
    def events(self) -> EventBus | None: ...
    @property
    def stagehost(self) -> StageHost | None: ...
    @property
    def channels(self) -> OutputChannels | None: ...
    @property
    def llm(self) -> ProviderManager | None: ...
    @property
    def media(self) -> MediaStore | None: ...
    @property
    def memory(self) -> Memory | None: ...
    @property
    def knowledge(self) -> KnowledgeBase | None: ...
    @property
    def graph(self) -> GraphMemory | None: ...
    @property
    def security(self) -> Masking | None: ...
    @property
    def data_dir(self) -> Path: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def tasks(self) -> KernelTasks: ...

    agent: Agent | None
    scheduler: Inputs | None


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
    requires = (
        Facility.CONFIG,
        Facility.EVENTS,
        Facility.STAGE_HOST,
        Facility.CHANNELS,
        Facility.LLM,
        Facility.MEDIA,
    )
    # A kernel without memory still turns: the turn's memory steps are then no-ops.
    optional = (Facility.MEMORY, Facility.KNOWLEDGE)
    provides = (Facility.AGENT,)

    async def init(self, state: AgentState) -> None:
        settings = required(state.config, Facility.CONFIG).live(AgentSettings)
        llm = required(state.llm, Facility.LLM)
        stagehost = required(state.stagehost, Facility.STAGE_HOST)
        media = required(state.media, Facility.MEDIA)
        memory = state.memory
        if memory is not None:
            memory.connect_turn_parts(estimate_tokens, media)
        state.agent = Agent(
            stagehost=stagehost,
            channels=required(state.channels, Facility.CHANNELS),
            model=llm,
            events=required(state.events, Facility.EVENTS),
            data_dir=state.data_dir,
            settings=lambda: settings.current,
            prompt_budget=lambda: budget_of(llm),
            memory=memory,
            knowledge=state.knowledge,
            tasks=state.tasks.scope(self.name),
            media=media,
        )
        # Tools may return media (ToolOutput); the runner stores it in the kernel's store.
        stagehost.runner.use_media(media)


def residents_of(agent: Agent, inputs: Inputs, clock: Clock, config: ConfigRegistry) -> Residents:
    """The main agent's residents: they use its model, tool runner, plugin tools and output
    channels (not its memory), and report into its scheduler."""

    def tools() -> dict[str, ToolDef]:
        offered = [*agent.stagehost.tools.tools(), *agent.channels.tools()]
        return {tool.name: tool for tool in offered}

    async def report(text: str, channel: str, source: str, level: Priority) -> None:
        await inputs.submit(text, channel, level=level, source=source)

    settings = config.live(AgentSettings)
    return Residents(
        model=agent.model,
        runner=agent.runner,
        tools=tools,
        clock=clock,
        emit=agent.events.emit,
        report=report,
        max_rounds=lambda: settings.current.resident_max_tool_rounds,
        max_residents=lambda: settings.current.max_residents,
        memory_messages=lambda: settings.current.resident_memory_messages,
        tasks=inputs.tasks,
        cooldown=config.read(SchedulerSettings).preempt_cooldown_s,
    )


def current_channel() -> str:
    given = current_input.get()
    return "notebook" if given is None else given.channel


class InputsModule:
    """The kernel's input door (`Inputs`: journal, dispatcher, scheduler) as the scheduler
    facility: every input of the kernel comes through here."""

    name = "scheduler"
    requires = (Facility.CONFIG, Facility.EVENTS, Facility.AGENT)
    provides = (Facility.SCHEDULER,)
    # The graph's merge and review heartbeats ask the model through this scheduler; the
    # firewall masks secrets before the journal stores an input.
    optional = (Facility.GRAPH, Facility.SECURITY)

    def __init__(self) -> None:
        self.inputs: Inputs | None = None

    async def init(self, state: AgentState) -> None:
        config = required(state.config, Facility.CONFIG)
        agent = required(state.agent, Facility.AGENT)
        journal = await InputJournal.open(state.data_dir / "inputs.db")
        settings = config.live(SchedulerSettings)
        self.inputs = Inputs(
            agent,
            journal,
            state.clock,
            required(state.events, Facility.EVENTS),
            cooldown=settings.current.preempt_cooldown_s,
            offload_after=lambda: settings.current.offload_after(),
            mask=str if state.security is None else state.security.mask,
            tasks=state.tasks.scope(self.name),
        )
        self.inputs.start()
        await self.inputs.recover()
        state.scheduler = self.inputs
        if state.graph is not None:
            state.graph.connect_consolidation(self.inputs.consolidate_turn)
        residents = residents_of(agent, self.inputs, state.clock, config)
        self.inputs.mount_residents(residents)
        agent.stagehost.register_tool(residents.tool(current_channel), owner="kernel")

    async def close(self) -> None:
        if self.inputs is not None:
            await self.inputs.close()
