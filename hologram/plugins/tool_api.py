"""The tool table as a built-in plugin reaches it (spec 000: ToolAPI, withheld from external
plugins): what a turn offers, and calls by name through the same guarded runner a turn uses.

A call made here inherits the rights of the tool call it runs inside (the firewall's
`acting_for`), so a plan of steps can do no more than the input that submitted it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from hologram.sdk import ToolCall, ToolDef, ToolResult
from hologram.stages import StageHost


class ToolAPI:
    def __init__(
        self, plugin: str, host: StageHost, offered: Callable[[], dict[str, ToolDef]]
    ) -> None:
        self._plugin = plugin
        self._host = host
        self._offered = offered

    def offered(self) -> dict[str, ToolDef]:
        """Every tool a turn would offer the model now, by name."""
        return self._offered()

    async def call(
        self, name: str, arguments: dict[str, Any], tools: dict[str, ToolDef] | None = None
    ) -> ToolResult:
        """Run one call against `tools` (default: what a turn offers) and answer as the
        model would be answered: an unknown tool or bad arguments are error results."""
        # A fresh id: the firewall keys a turn's principals by call id, and a model may
        # choose any id for its own calls.
        call = ToolCall(f"{self._plugin}-{uuid.uuid4().hex[:16]}", name, arguments)
        return await self._host.runner.execute(call, self.offered() if tools is None else tools)
