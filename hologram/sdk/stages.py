"""The seven stages of a turn and the context their handlers share (spec 001: StageContext)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from hologram.sdk.media import MediaRef
from hologram.sdk.tools import ToolCall, ToolResult


class Stage(StrEnum):
    """Hook points around the LLM tool loop, in the order a turn reaches them."""

    ON_INPUT = "on_input"
    PRE_ACTION = "pre_action"
    POST_ACTION = "post_action"
    BEFORE_TOOLCALL = "before_toolcall"
    AFTER_TOOLCALL = "after_toolcall"
    BEFORE_OUTPUT = "before_output"
    AFTER_OUTPUT = "after_output"


class HandlerScope(StrEnum):
    """Which turns a stage handler sees: all of them, or only tool calls to its own tools."""

    GLOBAL = "global"
    OWN_TOOLS = "own_tools"


@dataclass(slots=True)
class MemItem:
    """One recalled piece of memory, as the turn shows it to stage handlers."""

    text: str
    source: str
    score: float = 0.0
    media: tuple[MediaRef, ...] = ()
    """Media stored with this memory (its text names each by label); the model can look
    at one with seemedia."""


@dataclass(slots=True)
class StageContext:
    """The state one turn shares with every stage handler.

    Which fields a handler may change depends on the stage: see `STAGE_WRITABLE`.
    Setting `response` (where writable) short-circuits the turn to `after_output`.
    """

    raw_message: str
    channel: str = ""
    user_id: str = ""
    group_id: str = ""
    context_messages: list[dict[str, Any]] = field(default_factory=list)
    llm_text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call: ToolCall | None = None
    deny: bool = False
    tool_results: list[ToolResult] = field(default_factory=list)
    tool_result: ToolResult | None = None
    final_text: str = ""
    skip_output: bool = False
    response: str | None = None
    phase: Stage = Stage.ON_INPUT
    memory: list[MemItem] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def _rights(*fields: str) -> frozenset[str]:
    return frozenset(fields)


STAGE_WRITABLE: dict[Stage, frozenset[str]] = {
    Stage.ON_INPUT: _rights("raw_message", "response", "extra"),
    Stage.PRE_ACTION: _rights("context_messages", "response", "extra"),
    Stage.POST_ACTION: _rights("llm_text", "tool_calls", "context_messages", "response", "extra"),
    Stage.BEFORE_TOOLCALL: _rights("tool_call", "tool_calls", "deny", "response", "extra"),
    Stage.AFTER_TOOLCALL: _rights("tool_result", "tool_results", "response", "extra"),
    Stage.BEFORE_OUTPUT: _rights("final_text", "skip_output", "response", "extra"),
    Stage.AFTER_OUTPUT: _rights(),
}
"""The fields a handler may write in each stage (spec 001, the seven-stage table).

`after_output` is read-only: the output has already gone out.
"""
