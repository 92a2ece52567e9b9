"""The plugin contract (spec 000: Plugin interface, the PluginSDK's four channels, and the
restricted external plugin API)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from enum import StrEnum
from typing import Any, Protocol

from hologram.sdk.capabilities import OutputCap
from hologram.sdk.events import Event
from hologram.sdk.media import MediaData, MediaRef
from hologram.sdk.memory import KnowledgeAPI, MemoryAPI, SocialAPI
from hologram.sdk.priority import Priority
from hologram.sdk.settings import Settings
from hologram.sdk.stages import HandlerScope, Stage, StageContext
from hologram.sdk.tools import ToolDef

StageHandler = Callable[[StageContext], Awaitable[None] | None]
EventHandler = Callable[[Event], Awaitable[None] | None]
OutputHandler = Callable[[str, dict[str, Any], str], Awaitable[str] | str]
"""Takes payload, meta and type; returns a short receipt for the model."""
WakeHandler = Callable[[str], Awaitable[None] | None]


class Capability(StrEnum):
    """What a plugin may use of the SDK. An external plugin names the public ones it needs in
    its manifest's ``capabilities``; the withheld ones exist for built-in plugins only
    (spec 000: "Which plugins stay built-in")."""

    TOOLS = "tools"
    STAGES = "stages"
    EVENTS = "events"
    """Subscribe only: publishing is the withheld `publish`."""
    OUTPUT_CHANNELS = "output_channels"
    INJECT = "inject"
    SETTINGS = "settings"
    TIMERS = "timers"
    """Wake-ups on the kernel's clock (`wake_after`)."""
    MEMORY = "memory"
    KNOWLEDGE = "knowledge"
    SOCIAL = "social"
    """Read-only for external plugins."""
    LLM = "llm"
    """List, read and switch the model sources; asking the model (chat) is for built-ins."""
    MEDIA_READ = "media_read"
    """Read stored media's bytes by digest (`media_bytes`). Giving media to the kernel needs
    no capability of its own: it goes with an input (`inject`) or a tool result (`tools`)."""
    # withheld from external plugins:
    PUBLISH = "publish"
    TOOL_TABLE = "tool_table"
    TRACKER = "tracker"
    STATUS = "status"
    SUPERVISOR = "supervisor"
    ADAPTER = "adapter"
    SELFTEST = "selftest"


WITHHELD: frozenset[Capability] = frozenset(
    {
        Capability.PUBLISH,
        Capability.TOOL_TABLE,
        Capability.TRACKER,
        Capability.STATUS,
        Capability.SUPERVISOR,
        Capability.ADAPTER,
        Capability.SELFTEST,
    }
)
"""Never granted to an external plugin: a plugin that needs one stays built-in."""


class CapabilityError(PermissionError):
    """A plugin used an SDK surface it was not granted. The message names the capability."""

    def __init__(self, capability: Capability, message: str) -> None:
        super().__init__(message)
        self.capability = capability


class PluginSDK(Protocol):
    """What the kernel offers one plugin. External plugins get a narrowed version of it."""

    @property
    def name(self) -> str:
        """The plugin this SDK belongs to; everything it registers is owned by that name."""
        ...

    # ---- the four channels ------------------------------------------------------------------

    def register_tool(self, tool: ToolDef) -> None: ...

    def register_stage(
        self, stage: Stage, handler: StageHandler, scope: HandlerScope = HandlerScope.GLOBAL
    ) -> None: ...

    def subscribe(self, event_type: str | None, handler: EventHandler) -> Callable[[], None]: ...

    def publish(self, event: Event) -> None:
        """Built-in plugins only (capability `publish`)."""
        ...

    def register_output_channel(
        self, name: str, caps: OutputCap, description: str, handler: OutputHandler
    ) -> None: ...

    # ---- input ------------------------------------------------------------------------------

    async def inject_input(
        self, text: str, channel: str, *, user_id: str = "", security_profile: str = ""
    ) -> int:
        """Queue `text` as ordinary input; returns the input's id. `security_profile` names
        one of the profiles the plugin's manifest declares: the rights this input has."""
        ...

    async def inject_interrupt(
        self,
        text: str,
        channel: str,
        level: Priority = Priority.L1,
        *,
        user_id: str = "",
        security_profile: str = "",
    ) -> int:
        """Queue `text` as an interrupt; returns the input's id. An undeclared level is L1:
        preempting is a privilege asked for explicitly (a plugin's L4 becomes L3)."""
        ...

    async def inject_input_sync(
        self, text: str, channel: str, *, user_id: str = "", security_profile: str = ""
    ) -> str:
        """Queue `text` and wait for the reply of its turn."""
        ...

    async def inject_input_media(
        self,
        text: str,
        channel: str,
        media: Sequence[bytes | MediaData | MediaRef],
        *,
        user_id: str = "",
        security_profile: str = "",
    ) -> int:
        """Queue `text` with media that the model sees in this input's own turn (spec 000:
        InjectInputMedia). The kernel stores each item within `core.media.*` and reads its
        type from the bytes (a `MediaData`'s claimed type is checked, never trusted); a
        refused item raises and nothing of the call is stored or queued."""
        ...

    async def inject_input_media_sync(
        self,
        text: str,
        channel: str,
        media: Sequence[bytes | MediaData | MediaRef],
        *,
        user_id: str = "",
        security_profile: str = "",
    ) -> str:
        """`inject_input_media`, then wait for the reply of its turn."""
        ...

    async def inject_interrupt_media(
        self,
        text: str,
        channel: str,
        media: Sequence[bytes | MediaData | MediaRef],
        level: Priority = Priority.L1,
        *,
        user_id: str = "",
        security_profile: str = "",
    ) -> int:
        """An interrupt carrying media (L1 unless a level is given)."""
        ...

    async def media_bytes(self, digest: str) -> tuple[bytes, str]:
        """The bytes and type of stored media (capability `media_read` for external
        plugins); an unknown digest is an error naming it."""
        ...

    # ---- the rest ---------------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """Keys relative to `plugin.<name>.`: `settings.get("interval")`."""
        ...

    def wake_after(self, seconds: float, key: str, handler: WakeHandler) -> None:
        """Call `handler(key)` once `seconds` have passed on the kernel's clock."""
        ...

    @property
    def memory(self) -> MemoryAPI:
        """Capability `memory`."""
        ...

    @property
    def knowledge(self) -> KnowledgeAPI:
        """Capability `knowledge`."""
        ...

    @property
    def social(self) -> SocialAPI:
        """Capability `social`; external plugins read only."""
        ...


class Plugin(Protocol):
    @property
    def name(self) -> str: ...

    async def start(self, sdk: PluginSDK) -> None: ...

    async def stop(self) -> None: ...
