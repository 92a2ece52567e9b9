"""The `stagehost` kernel module: one stage host, with its tool table, per kernel."""

from __future__ import annotations

from typing import Any

from hologram.config import StageSettings
from hologram.sdk import Facility
from hologram.stages.host import StageHost


class StageHostModule:
    name = "stagehost"
    requires = (Facility.CONFIG, Facility.EVENTS)
    # When mounted, the firewall's runner executes every tool call (spec: the explicit proxy).
    optional = (Facility.SECURITY,)
    provides = (Facility.STAGE_HOST,)

    async def init(self, state: Any) -> None:
        settings = state.config.live(StageSettings)
        host = StageHost(
            state.events.publish,
            handler_timeout=lambda: settings.current.handler_timeout_s,
            tool_timeout=lambda: settings.current.tool_timeout_s,
        )
        if state.security is not None:
            state.security.mount_stagehost(host)
        state.stagehost = host
