"""Calling a tool the way a turn does: its arguments checked against its schema first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hologram.sdk import ToolCall, ToolDef, ToolError
from hologram.stages.execute import ToolRunner


async def call_tool(tools: Mapping[str, ToolDef] | ToolDef, name: str = "", /, **args: Any) -> str:
    """The tool's answer; a refusal (bad arguments, a ToolError) raises ToolError with the
    text the model would read."""
    if isinstance(tools, ToolDef):
        tools, name = {tools.name: tools}, tools.name
    result = await ToolRunner(lambda: 10.0).execute(ToolCall("t1", name, args), tools)
    if result.is_error:
        raise ToolError(result.content)
    return result.content
