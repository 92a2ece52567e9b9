"""The system prompt, in layers (spec 000: "Prompt layering").

Each piece of text lives where its lifetime puts it: the persona in `personal/personal.md`
(or `core.agent.personal_prompt`); how to use one tool in that tool's description, never
here; procedures in skills, of which only the index is here; and the kernel's runtime blocks,
generated from what actually runs this turn (the live output channels, the fact that calls of
one round run concurrently). The only tool names this module writes are ones the turn offers:
the `output_send__*` tools of live channels and `skill_info` when a skill exists.
Memory, knowledge and context are added newest or most relevant first, within their budgets.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hologram.agent.skills import SKILL_INFO, Skill
from hologram.channels import OutputChannel
from hologram.llm import estimate_tokens
from hologram.sdk import MemItem, PromptSection

log = logging.getLogger(__name__)

DEFAULT_PERSONA = "You are a companion agent running in the Hologram kernel."


class Persona:
    """Identity and tone: `<data>/personal/personal.md` when present, else the setting.
    The file is re-read only when it changes, so editing it takes effect on the next turn."""

    def __init__(self, path: Path, fallback: Callable[[], str]) -> None:
        self.path = path
        self._fallback = fallback
        self._cached: tuple[float, str] | None = None

    def text(self) -> str:
        try:
            mtime = self.path.stat().st_mtime
        except FileNotFoundError:
            return self._fallback().strip() or DEFAULT_PERSONA
        if self._cached is None or self._cached[0] != mtime:
            self._cached = (mtime, self.path.read_text(encoding="utf-8").strip())
        return self._cached[1] or self._fallback().strip() or DEFAULT_PERSONA


@dataclass(frozen=True, slots=True)
class PromptBudget:
    """Token ceilings (not fill targets) for the sections that grow with use."""

    memory_tokens: int = 4000
    context_tokens: int = 8000


@dataclass(slots=True)
class PromptInputs:
    persona: str
    reply_channel: str
    channels: Sequence[OutputChannel] = ()
    offered_tools: frozenset[str] = frozenset()
    skills: Sequence[Skill] = ()
    memory: Sequence[MemItem] = ()
    knowledge: Sequence[str] = ()
    timeline: Sequence[str] = ()
    budget: PromptBudget = field(default_factory=PromptBudget)


def build_system_prompt(inputs: PromptInputs) -> str:
    sections = [
        inputs.persona,
        output_rules(inputs),
        parallelism_rule(inputs),
        skills_index(inputs),
        memory_section(inputs),
        knowledge_section(inputs),
        context_section(inputs),
    ]
    return "\n\n".join(s for s in sections if s)


def output_rules(inputs: PromptInputs) -> str:
    """How replies leave the kernel, listing only channels whose send tool is offered."""
    live = [c for c in inputs.channels if c.send_tool in inputs.offered_tools]
    lines = ["## Output"]
    if inputs.reply_channel:
        lines.append(
            f"Your final text reply is delivered on the {inputs.reply_channel!r} channel "
            "automatically; you do not need a tool for it."
        )
    if live:
        lines.append(
            "To send something else (an image, a file, several messages) or to another "
            "channel, call that channel's send tool; several sends in one round are fine, and "
            "long text is split into parts for you. Live channels:"
        )
        lines += [f"- {c.send_tool}: {c.description} (types: {', '.join(c.types)})" for c in live]
    return "\n".join(lines) if len(lines) > 1 else ""


def parallelism_rule(inputs: PromptInputs) -> str:
    """A statement about the kernel, not about any tool (spec's permitted exception)."""
    if not inputs.offered_tools:
        return ""
    return (
        "## Tool calls\n"
        "All tool calls you make in one round run concurrently, and you see all their "
        "results in the next round. Make independent calls together in one round; a call "
        "that needs another's result belongs in a later round."
    )


def skills_index(inputs: PromptInputs) -> str:
    if not inputs.skills or SKILL_INFO not in inputs.offered_tools:
        return ""
    lines = ["## Skills", f"Read a skill's full procedure with {SKILL_INFO} before using it."]
    lines += [f"- {s.name}: {s.description}" for s in inputs.skills]
    return "\n".join(lines)


def memory_section(inputs: PromptInputs) -> str:
    ranked = sorted(inputs.memory, key=lambda m: m.score, reverse=True)
    kept = _within([f"- {m.text}" for m in ranked], inputs.budget.memory_tokens, newest_last=False)
    return f"{PromptSection.MEMORY}\n" + "\n".join(kept) if kept else ""


def knowledge_section(inputs: PromptInputs) -> str:
    kept = _within(list(inputs.knowledge), inputs.budget.memory_tokens, newest_last=False)
    return f"{PromptSection.KNOWLEDGE}\n" + "\n\n".join(kept) if kept else ""


def context_section(inputs: PromptInputs) -> str:
    kept = _within(list(inputs.timeline), inputs.budget.context_tokens, newest_last=True)
    return f"{PromptSection.TIMELINE}\n" + "\n".join(kept) if kept else ""


def _within(lines: list[str], budget: int, *, newest_last: bool) -> list[str]:
    """The lines that fit in `budget` tokens: best-first lists keep their head; timelines
    (oldest first) keep their newest end, still printed in time order."""
    order = list(reversed(lines)) if newest_last else lines
    kept: list[str] = []
    used = 0
    for line in order:
        cost = estimate_tokens(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return list(reversed(kept)) if newest_last else kept
