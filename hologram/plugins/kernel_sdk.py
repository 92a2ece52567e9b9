"""The SDK one plugin holds (spec 000: PluginSDK), implemented in the kernel's process.

Every kind of plugin ends here: a built-in calls it directly, a subprocess plugin through the
RPC bridge, a Lua plugin through its sandbox's `sdk` table, the last two behind the
capability check of `narrow`. Everything a plugin registers is recorded under its name, so
`detach()` takes all of it back at once: on stop, on disable, and when a subprocess crashes.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hologram.agent import Agent, Inputs, Skill, SkillIndex, current_input
from hologram.channels import OutputChannels
from hologram.config import ConfigRegistry, is_core_key
from hologram.events import EventBus
from hologram.health import ScratchTurn
from hologram.kernel import TaskScope
from hologram.knowledge import KnowledgeBase
from hologram.llm import ProviderManager
from hologram.media import MediaItem, MediaStore, store_media
from hologram.memory import ColdContext, GraphMemory
from hologram.plugins.llm_surface import LLMAPI
from hologram.plugins.surfaces import KnowledgeSurface, MemorySurface, SocialSurface
from hologram.plugins.tool_api import ToolAPI
from hologram.sdk import (
    Clock,
    Event,
    EventHandler,
    HandlerScope,
    Injects,
    MediaRef,
    OutputCap,
    OutputHandler,
    PluginStatus,
    Priority,
    Stage,
    StageHandler,
    ToolDef,
    WakeHandler,
)
from hologram.security import ALIAS, INTERNAL, Firewall, Profile, acting_for
from hologram.stages import StageHost, invoke

log = logging.getLogger(__name__)

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}


class ScopedSettings:
    """`plugin.<name>.*`, with keys written relative to it: `get("interval")`."""

    def __init__(
        self, config: ConfigRegistry, plugin: str, security: Firewall | None = None
    ) -> None:
        self._config = config
        self._prefix = f"plugin.{plugin}."
        self._security = security

    def key(self, key: str) -> str:
        if not isinstance(key, str) or not key:
            raise ValueError("a settings key is a non-empty string")
        if key.startswith(self._prefix):
            return key
        if key.startswith("plugin.") or is_core_key(key):
            raise PermissionError(
                f"settings key {key!r} is outside this plugin's namespace {self._prefix}*"
            )
        return self._prefix + key

    def get(self, key: str, default: Any = None) -> Any:
        return self._config.get(self.key(key), default)

    async def set(self, key: str, value: Any) -> None:
        # `resolved` fills @{alias} references in with secrets; if a plugin could write
        # one into its own settings, it could read any secret the owner has. Only the owner
        # (the settings API, the command line) writes them.
        if _has_alias(value):
            raise PermissionError(
                "a plugin cannot write @{alias} secret references into its settings; "
                "the owner sets those"
            )
        await self._config.set(self.key(key), value)

    def list(self, prefix: str = "") -> dict[str, Any]:
        found = self._config.list(self._prefix + prefix)
        return {k[len(self._prefix) :]: v for k, v in found.items()}

    def resolved(self, key: str, default: Any = None) -> Any:
        """The value with every `@{alias}` in it filled in by the credential gate: for a
        secret the owner wrote into this plugin's own settings (an MCP server's token),
        which the plugin must hand on. Only this namespace resolves, so a plugin cannot
        read a secret the owner did not give it."""
        value = self.get(key, default)
        if self._security is None:
            return value
        self._security.gate.sync()
        return self._security.gate.unmask_deep(value)


def _has_alias(value: Any) -> bool:
    if isinstance(value, str):
        return ALIAS.search(value) is not None
    if isinstance(value, dict):
        return any(_has_alias(k) or _has_alias(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_alias(v) for v in value)
    return False


@dataclass(slots=True)
class KernelParts:
    """The kernel surfaces one plugin SDK works on (taken from KernelState)."""

    stagehost: StageHost
    channels: OutputChannels
    events: EventBus
    config: ConfigRegistry
    clock: Clock
    tasks: TaskScope
    scheduler: Inputs | None = None
    skills: SkillIndex | None = None
    coldcontext: ColdContext | None = None
    graph: GraphMemory | None = None
    knowledge: KnowledgeBase | None = None
    security: Firewall | None = None
    llm: ProviderManager | None = None
    agent: Agent | None = None
    """The main agent, for the failback responder (recoverydiag)."""
    """The model sources, for the built-ins that list and switch them."""
    offered_tools: Callable[[], dict[str, ToolDef]] | None = None
    """Every tool a turn offers the model (the agent's tool sources), for the tool table."""
    media: MediaStore | None = None
    """The media store: what a plugin injects with an input goes there, `media_bytes`
    reads from it."""
    scratch_turn: ScratchTurn | None = None
    """One turn on a virtual kernel, for the health self-test (the facade's)."""


MAX_STATUS_BYTES = 64 * 1024
"""A plugin's reported status is shown on pages and in events: a summary, not a dump."""


class KernelSDK(Injects):
    """The full SDK of plugin `name`: what a built-in plugin gets (spec 000: PluginSDK; the
    protocol `hologram.sdk.PluginSDK`, whose `inject` aliases it inherits)."""

    def __init__(self, name: str, parts: KernelParts, profiles: tuple[Profile, ...] = ()) -> None:
        self._name = name
        self._parts = parts
        self._profiles = profiles
        self._settings = ScopedSettings(parts.config, name, parts.security)
        self._undo: list[Callable[[], object]] = []
        self._skills: list[str] = []
        self._wakes: set[asyncio.Task[None]] = set()
        self.status: dict[str, Any] = {}
        """What the plugin last reported of itself (`report_status`); empty once stopped."""

    @property
    def name(self) -> str:
        return self._name

    @property
    def settings(self) -> ScopedSettings:
        return self._settings

    @property
    def memory(self) -> MemorySurface:
        return MemorySurface(self._parts.coldcontext, self._parts.graph, self._name)

    @property
    def llm(self) -> LLMAPI:
        return LLMAPI(self._parts.llm)

    @property
    def knowledge(self) -> KnowledgeSurface:
        return KnowledgeSurface(self._parts.knowledge)

    @property
    def social(self) -> SocialSurface:
        """Read and write; the bridges of external plugins expose the reading half."""
        return SocialSurface(self._parts.graph)

    @property
    def tools(self) -> ToolAPI:
        """The tool table (capability `tool_table`): built-in plugins only."""
        offered = self._parts.offered_tools
        if offered is None:
            raise RuntimeError("this kernel has no agent, so no tool set to call into")
        return ToolAPI(self._name, self._parts.stagehost, offered)

    # ---- the four channels ------------------------------------------------------------------

    def register_tool(self, tool: ToolDef) -> None:
        self._parts.stagehost.register_tool(tool, owner=self._name)

    def unregister_tools(self, names: list[str]) -> list[str]:
        """Withdraw tools this plugin registered (a server that went away); returns those
        removed. Another plugin's tool of the same name is refused, not removed."""
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError("'names' must be a list of tool names")
        table = self._parts.stagehost.tools
        foreign = [n for n in names if n in table and table.owner_of(n) != self._name]
        if foreign:
            raise PermissionError(f"tools {foreign} are not plugin {self._name!r}'s to withdraw")
        return [n for n in names if table.unregister(n)]

    def register_stage(
        self,
        stage: Stage | str,
        handler: StageHandler,
        scope: HandlerScope | str = HandlerScope.GLOBAL,
        label: str | None = None,
    ) -> None:
        self._undo.append(
            self._parts.stagehost.register_stage(
                Stage(stage), handler, HandlerScope(scope), owner=self._name, name=label
            )
        )

    def subscribe(self, event_type: str | None, handler: EventHandler) -> Callable[[], None]:
        unsubscribe = self._parts.events.subscribe(event_type, handler)
        self._undo.append(unsubscribe)
        return unsubscribe

    def publish(self, event: Event) -> None:
        if event.source == "kernel":
            event.source = self._name
        self._parts.events.publish(event)

    def register_output_channel(
        self,
        name: str,
        caps: OutputCap | int,
        description: str,
        handler: OutputHandler,
        *,
        meta_doc: str = "",
    ) -> None:
        self._parts.channels.register_output_channel(
            name, OutputCap(caps), description, handler, owner=self._name, meta_doc=meta_doc
        )

    def register_skill(self, skill: Skill) -> None:
        """Join the agent's skills index (SKILL.md plugins)."""
        if self._parts.skills is None:
            raise RuntimeError("this kernel has no agent, so no skills index to join")
        self._parts.skills.add(skill)
        self._skills.append(skill.name)

    def report_status(self, status: dict[str, Any], message: str = "", level: str = "info") -> None:
        """Say what state the plugin is in. The kernel keeps the last report (the registry's
        status, pages, `%hologram`), logs `message` and publishes `plugin_status`: how an
        external plugin announces a fallback without the withheld `publish`."""
        if not isinstance(status, dict):
            raise ValueError("a status is a JSON object")
        if not isinstance(message, str):
            raise ValueError("'message' must be a string")
        size = len(json.dumps(status, default=str))
        if size > MAX_STATUS_BYTES:
            raise ValueError(f"a status of {size} bytes is over the {MAX_STATUS_BYTES} allowed")
        if level not in _LEVELS:
            raise ValueError(f"level {level!r}: use one of {sorted(_LEVELS)}")
        self.status = status
        if message:
            log.log(_LEVELS[level], "plugin %s: %s", self._name, message)
        self._parts.events.emit(
            PluginStatus(plugin=self._name, status=status, message=message, level=level),
            source="plugins",
        )

    def log(self, message: str, level: str = "info") -> None:
        """A line in the kernel's log under this plugin's name."""
        known = logging.getLevelNamesMapping()
        number = known.get((level or "info").upper()) if isinstance(level, str) else None
        if number is None:
            raise ValueError(f"level {level!r}: use one of debug, info, warning, error")
        log.log(number, "[%s] %s", self._name, message)

    def call_context(self) -> dict[str, Any]:
        """What the tool call running now must honour itself (the firewall's network switch
        and sandbox roots for its principal); sent with every call to a subprocess plugin."""
        principal = acting_for.get() or INTERNAL
        if self._parts.security is None:
            return {"principal": principal.name, "internal": principal.internal}
        return self._parts.security.call_context(principal)

    # ---- input ------------------------------------------------------------------------------

    def _inputs(self) -> Inputs:
        if self._parts.scheduler is None:
            raise RuntimeError("this kernel has no input scheduler; nothing can be injected")
        return self._parts.scheduler

    async def _submit(
        self,
        text: str,
        channel: str,
        level: Priority,
        user_id: str,
        security_profile: str,
        media: Sequence[MediaItem] = (),
    ) -> Any:
        # A plugin's L4 is L3 (spec 000: the input scheduler). Clamped here as well as in the
        # scheduler, so the journal records the level the input really has.
        level = min(Priority(level), Priority.L3)
        inputs = self._inputs()
        if not isinstance(text, str):
            raise TypeError(f"input text must be a string, not {type(text).__name__}")
        # The profile is checked before the media is stored and the media before the
        # profile's expectation is recorded: a refusal of either leaves nothing behind.
        profile = self._profile(security_profile) if security_profile else None
        refs = await self._store_media(media) if media else []
        self._expect(text, channel, user_id, profile)
        ticket = await inputs.submit(
            text,
            channel,
            level=level,
            source=f"plugin:{self._name}",
            from_plugin=True,
            user_id=user_id,
            media=refs,
        )
        ticket.outcome.add_done_callback(_consume)
        return ticket

    def _profile(self, name: str) -> Profile | None:
        """The profile `name` of the plugin's manifest, or an error (never some other
        profile's rights); None in a kernel without a firewall."""
        security = self._parts.security
        if security is None:
            if name not in {p.name for p in self._profiles}:
                raise ValueError(f"plugin {self._name!r} declares no security profile {name!r}")
            return None  # no firewall in this kernel: nothing to narrow
        return security.select_profile(self._name, self._profiles, name)

    def _expect(self, text: str, channel: str, user_id: str, profile: Profile | None) -> None:
        if self._parts.security is not None and profile is not None:
            self._parts.security.expect_input(text, channel, user_id, profile)

    async def _store_media(self, media: Sequence[MediaItem]) -> list[MediaRef]:
        """Put an input's media into the store through the door every input uses (limits,
        type sniffed from the bytes): all checked before any is stored."""
        if isinstance(media, str | bytes | bytearray) or not isinstance(media, Sequence):
            raise ValueError("media is a list of items (bytes, MediaData, MediaRef…)")
        store = self._media()
        return await asyncio.to_thread(store_media, store, list(media))

    def _media(self) -> MediaStore:
        if self._parts.media is None:
            raise RuntimeError("this kernel has no media store")
        return self._parts.media

    async def inject(
        self,
        text: str,
        channel: str,
        *,
        level: Priority | int | None = None,
        media: Sequence[MediaItem] = (),
        wait: bool = False,
        user_id: str = "",
        security_profile: str = "",
    ) -> int | str:
        """Queue `text` (an interrupt when `level` is given); returns the input's id, or
        with `wait` the reply of its turn. Media may be bytes, `MediaData` (the claimed type
        is checked against the bytes, never trusted), paths or stored `MediaRef`s; a refused
        item raises before anything is stored or queued."""
        if wait:
            self._not_inside_a_turn()
        priority = Priority.QUEUED if level is None else Priority(level)
        ticket = await self._submit(text, channel, priority, user_id, security_profile, media)
        if not wait:
            return int(ticket.id)
        result = await ticket
        return str(result.reply)

    def _not_inside_a_turn(self) -> None:
        if current_input.get() is not None:
            # Called from a tool or stage handler of a turn: the new input would queue
            # behind the very turn that waits for its reply.
            raise RuntimeError(
                "an inject that waits for its reply was called from inside a turn, which "
                "would wait for itself; inject without waiting there"
            )

    async def media_bytes(self, digest: str) -> tuple[bytes, str]:
        """The bytes of stored media and their type (as sniffed when stored). An unknown
        or malformed digest raises `UnknownMedia`, naming it."""
        store = self._media()
        ref = store.ref(digest)
        return await store.aget(digest), ref.mime

    # ---- the kernel's clock -----------------------------------------------------------------

    def wake_after(self, seconds: float, key: str, handler: WakeHandler) -> None:
        if not isinstance(seconds, int | float) or seconds < 0:
            raise ValueError(f"wake_after needs a number of seconds >= 0, not {seconds!r}")

        async def wake() -> None:
            await self._parts.clock.sleep(float(seconds))
            try:
                await invoke(handler, key)
            except Exception:
                log.exception("plugin %s: wake-up %r failed", self._name, key)

        task = self._parts.tasks.spawn(wake(), name=f"wake-{self._name}-{key}")
        self._wakes.add(task)
        task.add_done_callback(self._wakes.discard)

    # ---- taking it all back -----------------------------------------------------------------

    def detach(self) -> dict[str, list[str]]:
        """Remove everything this plugin registered; returns what was removed."""
        tools = self._parts.stagehost.unregister_plugin_tools(self._name)
        self._parts.stagehost.unregister_plugin(self._name)
        channels = self._parts.channels.unregister_plugin_channels(self._name)
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()
        for task in list(self._wakes):
            task.cancel()
        skills = list(self._skills)
        if self._parts.skills is not None:
            for name in skills:
                self._parts.skills.remove(name)
        self._skills.clear()
        self.status = {}
        return {"tools": tools, "channels": channels, "skills": skills}


def _consume(future: asyncio.Future[Any]) -> None:
    # A fire-and-forget injection nobody awaits: its failure is the turn's to report, not
    # an "exception never retrieved" warning at garbage collection.
    if not future.cancelled():
        future.exception()
