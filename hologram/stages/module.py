"""The `stagehost` kernel module: one stage host, with its tool table, per kernel."""

from __future__ import annotations

from typing import Protocol

from hologram.config import ConfigRegistry, StageSettings
from hologram.events import EventBus
from hologram.kernel import required
from hologram.sdk import Facility
from hologram.stages.host import StageHost


class StageHostMount(Protocol):
    """The part of the firewall (a floor above) the stagehost module reads."""

    def mount_stagehost(self, host: StageHost) -> None: ...


class StagesState(Protocol):
    """What the stagehost module reads of the kernel's state, and the field it fills."""

    @property
    def config(self) -> ConfigRegistry | None: ...
    @property
    def events(self) -> EventBus | None: ...
    @property
    def security(self) -> StageHostMount | None: ...

    stagehost: StageHost | None


class StageHostModule:
    name = "stagehost"
    requires = (Facility.CONFIG, Facility.EVENTS)
    # When mounted, the firewall's runner executes every tool call (spec: the explicit proxy).
    optional = (Facility.SECURITY,)
    provides = (Facility.STAGE_HOST,)

    async def init(self, state: StagesState) -> None:
        settings = required(state.config, Facility.CONFIG).live(StageSettings)
        host = StageHost(
            required(state.events, Facility.EVENTS).publish,
            handler_timeout=lambda: settings.current.handler_timeout_s,
            tool_timeout=lambda: settings.current.tool_timeout_s,
        )
        if state.security is not None:
            state.security.mount_stagehost(host)
        state.stagehost = host
