"""The agent runtime: one turn through the stage pipeline, prompt layering, child agents."""

from hologram.agent.prompt import Persona, PromptBudget, PromptInputs, build_system_prompt
from hologram.agent.skills import SKILL_INFO, Skill, SkillIndex, parse_skill_file

__all__ = [
    "SKILL_INFO",
    "Persona",
    "PromptBudget",
    "PromptInputs",
    "Skill",
    "SkillIndex",
    "build_system_prompt",
    "parse_skill_file",
]
