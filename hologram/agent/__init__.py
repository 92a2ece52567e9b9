"""The agent runtime: one turn through the stage pipeline, prompt layering, child agents,
and the input path.

One name per idea on the input path: `Inputs` is the kernel's door (journal, then dispatcher;
`say` submits and waits), `Dispatcher` carries out what the `Scheduler` decides (the pure
rules), and `InputsModule` mounts the door as the scheduler facility. An input's journal id is
its only id, from the ticket to the scheduler's task.
"""

from hologram.agent.agent import Agent
from hologram.agent.child import SPAWN_CHILD, ChildAgents
from hologram.agent.dispatcher import Dispatcher, TaskStopped, Ticket, Work
from hologram.agent.input_run import InputRun
from hologram.agent.inputs import Inputs, InputTicket
from hologram.agent.journal import JOURNAL_MIGRATIONS, InputJournal, InputState, RecordRow
from hologram.agent.module import AgentModule, InputsModule
from hologram.agent.parts import TurnParts
from hologram.agent.ports import ChatModel, ToolSource, TurnMemory
from hologram.agent.prompt import Persona, PromptBudget, PromptInputs, build_system_prompt
from hologram.agent.scheduler import Action, Decision, Scheduler, Task
from hologram.agent.skills import SKILL_INFO, Skill, SkillIndex, parse_skill_file
from hologram.agent.turn import TraceStep, Turn, TurnInput, TurnProgress, TurnResult, current_input

__all__ = [
    "JOURNAL_MIGRATIONS",
    "SKILL_INFO",
    "SPAWN_CHILD",
    "Action",
    "Agent",
    "AgentModule",
    "ChatModel",
    "ChildAgents",
    "Decision",
    "Dispatcher",
    "InputJournal",
    "InputRun",
    "InputState",
    "InputTicket",
    "Inputs",
    "InputsModule",
    "Persona",
    "PromptBudget",
    "PromptInputs",
    "RecordRow",
    "Scheduler",
    "Skill",
    "SkillIndex",
    "Task",
    "TaskStopped",
    "Ticket",
    "ToolSource",
    "TraceStep",
    "Turn",
    "TurnInput",
    "TurnMemory",
    "TurnParts",
    "TurnProgress",
    "TurnResult",
    "Work",
    "build_system_prompt",
    "current_input",
    "parse_skill_file",
]
