"""The agent runtime: one turn through the stage pipeline, prompt layering, child agents."""

from hologram.agent.agent import Agent
from hologram.agent.child import SPAWN_CHILD, ChildAgents
from hologram.agent.inputs import InputScheduler
from hologram.agent.journal import InputJournal, InputState
from hologram.agent.module import AgentModule, SchedulerModule
from hologram.agent.ports import ChatModel, ToolSource, TurnMemory
from hologram.agent.prompt import Persona, PromptBudget, PromptInputs, build_system_prompt
from hologram.agent.scheduler import Action, Decision, Scheduler
from hologram.agent.scheduler_loop import SchedulerLoop, TaskStopped, Ticket
from hologram.agent.skills import SKILL_INFO, Skill, SkillIndex, parse_skill_file
from hologram.agent.turn import TraceStep, Turn, TurnInput, TurnResult

__all__ = [
    "SKILL_INFO",
    "SPAWN_CHILD",
    "Action",
    "Agent",
    "AgentModule",
    "ChatModel",
    "ChildAgents",
    "Decision",
    "InputJournal",
    "InputScheduler",
    "InputState",
    "Persona",
    "PromptBudget",
    "PromptInputs",
    "Scheduler",
    "SchedulerLoop",
    "SchedulerModule",
    "Skill",
    "SkillIndex",
    "TaskStopped",
    "Ticket",
    "ToolSource",
    "TraceStep",
    "Turn",
    "TurnInput",
    "TurnMemory",
    "TurnResult",
    "build_system_prompt",
    "parse_skill_file",
]
