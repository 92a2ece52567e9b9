"""The plugin contract (spec 000: Plugin interface and the PluginSDK's four channels)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from hologram.sdk.capabilities import OutputCap
from hologram.sdk.events import Event
from hologram.sdk.settings import Settings
from hologram.sdk.stages import HandlerScope, Stage, StageContext
from hologram.sdk.tools import ToolDef

StageHandler = Callable[[StageContext], Awaitable[None] | None]
EventHandler = Callable[[Event], Awaitable[None] | None]
OutputHandler = Callable[[str, dict[str, Any], str], Awaitable[str] | str]
"""Takes payload, meta and type; returns a short receipt for the model."""


class PluginSDK(Protocol):
    """What the kernel offers a plugin. External plugins get a narrowed version of it."""

    def register_tool(self, tool: ToolDef) -> None: ...

    def register_stage(
        self, stage: Stage, handler: StageHandler, scope: HandlerScope = HandlerScope.GLOBAL
    ) -> None: ...

    def subscribe(self, event_type: str | None, handler: EventHandler) -> Callable[[], None]: ...

    def publish(self, event: Event) -> None: ...

    def register_output_channel(
        self, name: str, caps: OutputCap, description: str, handler: OutputHandler
    ) -> None: ...

    @property
    def settings(self) -> Settings: ...


class Plugin(Protocol):
    @property
    def name(self) -> str: ...

    async def start(self, sdk: PluginSDK) -> None: ...

    async def stop(self) -> None: ...
