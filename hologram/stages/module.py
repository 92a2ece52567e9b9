"""The `stagehost` kernel module: one stage host, with its tool table, per kernel."""

from __future__ import annotations

from typing import Any

from hologram.sdk import Facility
from hologram.stages.host import StageHost

HANDLER_TIMEOUT_KEY = "core.stages.handler_timeout_s"


class StageHostModule:
    name = "stagehost"
    requires = (Facility.CONFIG, Facility.EVENTS)
    # When mounted, the firewall's runner executes every tool call (spec: the explicit proxy).
    optional = (Facility.SECURITY,)
    provides = (Facility.STAGE_HOST,)

    async def init(self, state: Any) -> None:
        config = state.config
        config.register_default(
            HANDLER_TIMEOUT_KEY, 30.0, "seconds one stage handler may take before it is cut off"
        )
        host = StageHost(
            state.events.publish,
            handler_timeout=lambda: config.get_float(HANDLER_TIMEOUT_KEY),
            tool_timeout=lambda: config.get_float("core.agent.tool_timeout_s"),
        )
        if state.security is not None:
            state.security.mount_stagehost(host)
        state.stagehost = host
