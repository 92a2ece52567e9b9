"""Backlog triage (spec 000: "Resident sub-agents and timely feedback", the triage assistant).

When the main agent has been busy so long that an input has waited past the offload threshold,
that input is shown to a temporary triage assistant. It takes no input of its own and answers on
the input's own channel: a simple message it answers at once; one that needs the main agent gets
an immediate "busy, please wait", and stays in the queue for the main agent.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Annotated

from hologram.agent.ports import ChatModel
from hologram.llm import ChatMessage, CompletionRequest
from hologram.sdk import Param, ToolDef

log = logging.getLogger(__name__)

DEFER_TOOL = "triage_defer"

TRIAGE_PROMPT = (
    "You are the triage assistant of a companion agent that is busy with a long task. "
    "A message has been waiting for it. If the message is simple (a greeting, a short "
    "question you can answer from the message alone), answer it briefly yourself. If it needs "
    "the agent's memory, tools or real work, call triage_defer instead of answering."
)

BUSY = {
    "en": "I'm in the middle of something that is taking a while. I've seen your message and "
    "will get to it as soon as I can.",
    "zh": "我正在处理一件比较耗时的事，已经看到你的消息，忙完马上回复你。",
}

_CJK = re.compile(r"[\u3400-\u9fff]")


def busy_note(text: str) -> str:
    """The "busy, please wait" reply, in the language of the message it answers."""
    return BUSY["zh"] if _CJK.search(text) else BUSY["en"]


@dataclass(frozen=True, slots=True)
class Verdict:
    answer: str | None
    """The triage assistant's own answer, or None when the input needs the main agent."""


def triage_defer(reason: Annotated[str, Param("why, in a few words")] = "") -> str:
    """Leave this message for the main agent: it needs memory, tools or real work."""
    # Offered to the model only: the call itself is the verdict, and is never run.
    return reason


class TriageAssistant:
    def __init__(self, model: ChatModel) -> None:
        self.model = model

    async def triage(self, text: str) -> Verdict:
        request = CompletionRequest(
            messages=[ChatMessage.system(TRIAGE_PROMPT), ChatMessage.user(text)],
            tools=[ToolDef.from_function(triage_defer)],
        )
        response = await self.model.chat(request)
        if any(call.name == DEFER_TOOL for call in response.tool_calls) or not response.content:
            return Verdict(None)
        return Verdict(response.content)
