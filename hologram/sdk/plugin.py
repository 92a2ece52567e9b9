"""The plugin contract (spec 000: Plugin interface, the PluginSDK's four channels, and the
restricted external plugin API), and the call table derived from it.

`PluginSDK` is written once. Each method a plugin outside the kernel's process may call by
name carries `@needs(capability)`; a surface property (`memory`, `settings`…) carries it for
every method of its protocol. `SDK_CALLS` is read from those marks and signatures at import:
the kernel's one dispatcher (subprocess and Lua plugins) and the plugin side's one proxy both
work from it, so a new SDK method is its declaration here and its implementation in the
kernel, nothing more.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType, NoneType, UnionType
from typing import Any, Protocol, TypedDict, TypeVar, Unpack, get_args, get_origin, get_type_hints

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
MediaItems = Sequence[bytes | MediaData | MediaRef]
"""Media a plugin gives with an input: bytes, `MediaData` (a claimed type, checked against
the bytes) or the `MediaRef` of media already stored."""


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


_Fn = TypeVar("_Fn", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class _Needs:
    capability: Capability | None
    writes: frozenset[str]


def needs(capability: Capability | None, *, writes: Iterable[str] = ()) -> Callable[[_Fn], _Fn]:
    """Put the decorated protocol method into `SDK_CALLS`, callable by name once `capability`
    is granted (None: by every plugin). On a surface property it puts every method of the
    surface's protocol there; `writes` names those that change the surface, refused where
    the capability is read-only for external plugins."""
    marked = _Needs(capability, frozenset(writes))

    def mark(fn: _Fn) -> _Fn:
        fn.__sdk_needs__ = marked  # type: ignore[attr-defined]  # read back by _calls_of
        return fn

    return mark


@dataclass(frozen=True, slots=True)
class SdkCall:
    """One call of the plugin SDK by name: the RPC method `sdk.<name>`, the Lua `sdk.<name>`."""

    name: str
    """`inject`, `memory.recall`: the surface, a dot, the method."""
    surface: str
    """The property of `PluginSDK` it hangs off (`memory`), or "" for the SDK itself."""
    attr: str
    capability: Capability | None
    writes: bool
    """It changes a surface that is read-only for external plugins (`check_write`)."""
    signature: inspect.Signature
    """The protocol's signature, without `self`: what a call is bound against."""
    hints: Mapping[str, Any]
    """Each parameter's type (an optional one's `X | None` as `X`), and `return`."""
    doc: str

    @property
    def callbacks(self) -> tuple[str, ...]:
        """The parameters that carry the plugin's own code (handlers, a tool): they cross
        as keys the kernel calls back with, so a transport serves them itself."""
        return tuple(
            name
            for name, hint in self.hints.items()
            if name != "return" and (get_origin(hint) is Callable or hint is ToolDef)
        )


def _bare(hint: Any) -> Any:
    """`X | None` as `X`: an optional parameter converts like a given one."""
    if isinstance(hint, UnionType):
        rest = [arg for arg in get_args(hint) if arg is not NoneType]
        if len(rest) == 1:
            return rest[0]
    return hint


def _members(protocol: type) -> Iterator[tuple[str, Any]]:
    seen: set[str] = set()
    for cls in reversed(protocol.__mro__):
        if cls in (object, Protocol) or cls.__module__ == "typing":
            continue
        for name, member in vars(cls).items():
            if not name.startswith("_") and name not in seen:
                seen.add(name)
                yield name, member


def _calls_of(protocol: type, surface: str = "", marked: _Needs | None = None) -> Iterator[SdkCall]:
    for attr, member in _members(protocol):
        if isinstance(member, property):
            inner = getattr(member.fget, "__sdk_needs__", None)
            if inner is not None and not surface:
                yield from _calls_of(get_type_hints(member.fget)["return"], attr, inner)
            continue
        needed = marked if surface else getattr(member, "__sdk_needs__", None)
        if needed is None or not callable(member):
            continue
        signature = inspect.signature(member)
        yield SdkCall(
            name=f"{surface}.{attr}" if surface else attr,
            surface=surface,
            attr=attr,
            capability=needed.capability,
            writes=attr in needed.writes,
            signature=signature.replace(parameters=list(signature.parameters.values())[1:]),
            hints=MappingProxyType({k: _bare(v) for k, v in get_type_hints(member).items()}),
            doc=inspect.getdoc(member) or "",
        )


class InjectOptions(TypedDict, total=False):
    """Who an injected input comes from (spec 000: InjectOptions)."""

    user_id: str
    security_profile: str
    """One of the profiles the plugin's manifest declares: the rights this input has."""


class Injects(Protocol):
    """`inject`, and the spec's six names for it (InjectInput, InjectInterrupt,
    InjectInputSync, InjectInputMedia, InjectInputMediaSync, InjectInterruptMedia), written
    here once: a class with `inject` inherits them."""

    @needs(Capability.INJECT)
    async def inject(
        self,
        text: str,
        channel: str,
        *,
        level: Priority | None = None,
        media: MediaItems = (),
        wait: bool = False,
        user_id: str = "",
        security_profile: str = "",
    ) -> int | str:
        """Queue `text` as an input on `channel`; returns the input's id, or with `wait` the
        reply of its turn. A `level` makes it an interrupt: preempting is a privilege asked
        for explicitly (a plugin's L4 becomes L3). `media` reaches the model in this input's
        own turn (spec 000: InjectInputMedia): each item is stored within `core.media.*`,
        its type read from the bytes, and a refused item raises before anything of the call
        is stored or queued. `security_profile` names one of the profiles the plugin's
        manifest declares: the rights this input has."""
        ...

    async def inject_input(self, text: str, channel: str, **options: Unpack[InjectOptions]) -> int:
        return int(await self.inject(text, channel, **options))

    async def inject_interrupt(
        self, text: str, channel: str, level: Priority = Priority.L1, **o: Unpack[InjectOptions]
    ) -> int:
        """An undeclared level is L1."""
        return int(await self.inject(text, channel, level=_interrupt(level), **o))

    async def inject_input_sync(self, text: str, channel: str, **o: Unpack[InjectOptions]) -> str:
        return str(await self.inject(text, channel, wait=True, **o))

    async def inject_input_media(
        self, text: str, channel: str, media: MediaItems, **o: Unpack[InjectOptions]
    ) -> int:
        return int(await self.inject(text, channel, media=media, **o))

    async def inject_input_media_sync(
        self, text: str, channel: str, media: MediaItems, **o: Unpack[InjectOptions]
    ) -> str:
        return str(await self.inject(text, channel, media=media, wait=True, **o))

    async def inject_interrupt_media(
        self,
        text: str,
        channel: str,
        media: MediaItems,
        level: Priority = Priority.L1,
        **o: Unpack[InjectOptions],
    ) -> int:
        return int(await self.inject(text, channel, level=_interrupt(level), media=media, **o))


def _interrupt(level: Priority | int) -> Priority:
    if Priority(level) is Priority.QUEUED:
        raise ValueError("an interrupt has a level L1-L4; leave the level out for queued input")
    return Priority(level)


class LLMSources(Protocol):
    """The model sources (spec 000: ListSources / CurrentSource / SetSource). Asking the
    model itself (Chat) is for built-in plugins only."""

    async def list_sources(self) -> list[dict[str, Any]]:
        """Every source in the order a call tries them, with its state."""
        ...

    async def current_source(self) -> str:
        """The source tried first."""
        ...

    async def set_source(self, name: str) -> str:
        """Make `name` the source tried first; an unknown name is an error listing them."""
        ...


class PluginSDK(Injects, Protocol):
    """What the kernel offers one plugin. External plugins get a narrowed version of it."""

    @property
    def name(self) -> str:
        """The plugin this SDK belongs to; everything it registers is owned by that name."""
        ...

    # ---- the four channels ------------------------------------------------------------------

    @needs(Capability.TOOLS)
    def register_tool(self, tool: ToolDef) -> None: ...

    @needs(Capability.TOOLS)
    def unregister_tools(self, names: list[str]) -> list[str]:
        """Withdraw tools this plugin registered; returns those removed."""
        ...

    @needs(Capability.STAGES)
    def register_stage(
        self, stage: Stage, handler: StageHandler, scope: HandlerScope = HandlerScope.GLOBAL
    ) -> None: ...

    @needs(Capability.EVENTS)
    def subscribe(self, event_type: str | None, handler: EventHandler) -> Callable[[], None]: ...

    @needs(Capability.PUBLISH)
    def publish(self, event: Event) -> None:
        """Built-in plugins only (capability `publish`)."""
        ...

    @needs(Capability.OUTPUT_CHANNELS)
    def register_output_channel(
        self,
        name: str,
        caps: OutputCap,
        description: str,
        handler: OutputHandler,
        *,
        meta_doc: str = "",
    ) -> None: ...

    # ---- input: `inject` and its spec names (Injects) ---------------------------------------

    @needs(Capability.MEDIA_READ)
    async def media_bytes(self, digest: str) -> tuple[bytes, str]:
        """The bytes and type of stored media; an unknown digest is an error naming it."""
        ...

    # ---- the rest ---------------------------------------------------------------------------

    @needs(None)
    def report_status(self, status: dict[str, Any], message: str = "", level: str = "info") -> None:
        """Say what state the plugin is in: kept for its pages, `message` logged at `level`,
        a `plugin_status` event published (how an external plugin announces a fallback)."""
        ...

    @needs(None)
    def log(self, message: str, level: str = "info") -> None:
        """A line in the kernel's log under the plugin's name."""
        ...

    @property
    @needs(Capability.SETTINGS)
    def settings(self) -> Settings:
        """Keys relative to `plugin.<name>.`: `settings.get("interval")`."""
        ...

    @needs(Capability.TIMERS)
    def wake_after(self, seconds: float, key: str, handler: WakeHandler) -> None:
        """Call `handler(key)` once `seconds` have passed on the kernel's clock."""
        ...

    @property
    @needs(Capability.MEMORY)
    def memory(self) -> MemoryAPI: ...

    @property
    @needs(Capability.KNOWLEDGE)
    def knowledge(self) -> KnowledgeAPI: ...

    @property
    @needs(Capability.SOCIAL, writes=("set_trait", "relate"))
    def social(self) -> SocialAPI:
        """External plugins read only."""
        ...

    @property
    @needs(Capability.LLM)
    def llm(self) -> LLMSources: ...


class Plugin(Protocol):
    @property
    def name(self) -> str: ...

    async def start(self, sdk: PluginSDK) -> None: ...

    async def stop(self) -> None: ...


SDK_CALLS: Mapping[str, SdkCall] = MappingProxyType({c.name: c for c in _calls_of(PluginSDK)})
"""Every call of the SDK a plugin may make by name, with the capability it needs."""
