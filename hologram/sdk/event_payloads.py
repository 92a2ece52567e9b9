"""What each kernel event says: one frozen payload class per `EventType`.

An emitter builds the payload (`bus.emit(TurnStarted(channel="chat"))`) and a reader takes
its attributes (`event.payload.channel`), so a misspelt field is an error where it is written,
not a silent `None` where it is read. The wire form (the service's event stream, a plugin's
RPC frames, a widget's JSON) stays the flat mapping it always was: `to_wire` writes it,
`from_wire` reads it back and names any field the payload class does not have.

Wire rules, which keep the old JSON byte for byte: a field with a default is left off the
wire while it holds that default (an emitter that never said `restart` still sends no
`restart`), and a payload whose kind carries free detail (a scheduler decision's extras, a
heartbeat tick's counts) keeps it in a `detail` mapping that is spread into the wire form.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from hologram.sdk.event_types import EventType

_FLAT = "detail"
"""The one field name whose mapping is spread into the wire form rather than nested."""


def _detail() -> Any:
    return field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Payload:
    """The base of every payload: knows its event type and its wire form. `input_id` names
    the input an event belongs to (a turn's events carry it, so the stream can file an event
    under its input even after the next one started); None for events of no input."""

    type: ClassVar[EventType]
    input_id: int | None = None

    @property
    def event_type(self) -> str:
        return self.type

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready mapping readers outside Python see (the stream, the widgets)."""
        wire: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == _FLAT:
                wire.update(value)
            elif not _at_default(f, value) and f.name != "input_id":
                wire[_wire_name(f)] = value
        if self.input_id is not None:  # last, where the turn has always added it
            wire["input_id"] = self.input_id
        return wire


def _wire_name(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata.get("wire", f.name))


def _at_default(f: dataclasses.Field[Any], value: Any) -> bool:
    if f.default is not dataclasses.MISSING:
        return bool(value == f.default)
    return False


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginPayload(Payload):
    """A plugin's own event (`plugin.<name>.<kind>`), or a kind this kernel does not know
    (a newer kernel's, read from the wire): its type travels with it, its data is free."""

    type: ClassVar[EventType] = EventType.SYSTEM  # unused: `kind` is the type
    kind: str
    data: Mapping[str, Any] = _detail()

    @property
    def event_type(self) -> str:
        return self.kind

    def to_wire(self) -> dict[str, Any]:
        return dict(self.data)


# ---- the kernel and the turn ---------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RawInput(Payload):
    type: ClassVar[EventType] = EventType.RAW_INPUT
    text: str
    channel: str
    user_id: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentOutput(Payload):
    """A reply: a turn's (with its channel, delivery and ending) or a child agent's."""

    type: ClassVar[EventType] = EventType.AGENT_OUTPUT
    text: str
    channel: str | None = None
    delivered: bool | None = None
    rounds: int | None = None
    ended_by: str | None = None
    child: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentOutputDelta(Payload):
    type: ClassVar[EventType] = EventType.AGENT_OUTPUT_DELTA
    round: int
    text: str
    restart: bool = False
    reasoning: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCalled(Payload):
    """One tool call and its result: a turn's, a child agent's, or a `seq` plan step's."""

    type: ClassVar[EventType] = EventType.TOOL_CALL
    name: str
    arguments: Any
    result: Any
    is_error: bool
    id: str | None = None
    round: int | None = None
    denied: bool | None = None
    ms: float | None = None
    via: str | None = None
    step: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Reasoning(Payload):
    type: ClassVar[EventType] = EventType.REASONING
    round: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemNote(Payload):
    """A note of the kernel's (`kind` says which; stopped, compacted, budget reached…), with
    what that kind tells in `detail`."""

    type: ClassVar[EventType] = EventType.SYSTEM
    kind: str
    detail: Mapping[str, Any] = _detail()


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentLLMChain(Payload):
    type: ClassVar[EventType] = EventType.AGENT_LLM_CHAIN
    round: int
    text: str
    tool_calls: list[Any]
    reasoning: str | None
    finish_reason: str | None = None
    model: str | None = None
    provider: str | None = None
    usage: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelReady(Payload):
    type: ClassVar[EventType] = EventType.KERNEL_READY
    layers: list[Any]
    seconds: float
    data_dir: str


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelStopping(Payload):
    type: ClassVar[EventType] = EventType.KERNEL_STOPPING


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigChanged(Payload):
    type: ClassVar[EventType] = EventType.CONFIG_CHANGED
    key: str
    value: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriberError(Payload):
    """A subscriber raised on an event: which subscriber, on which event type (the field
    `event_type_`, `event_type` on the wire: every payload's `event_type` is its own)."""

    type: ClassVar[EventType] = EventType.SUBSCRIBER_ERROR
    subscriber: str
    event_type_: str = field(metadata={"wire": "event_type"})
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class EventsDropped(Payload):
    type: ClassVar[EventType] = EventType.EVENTS_DROPPED
    subscriber: str
    dropped: int
    dropped_total: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SchedulerDecision(Payload):
    """One decision of the input scheduler (what the preemption widget draws); an `enqueue`
    names its input's level, text and channel, other actions their own extras in `detail`."""

    type: ClassVar[EventType] = EventType.SCHEDULER
    action: str
    task: int
    at: float
    level: int | None = None
    text: str | None = None
    channel: str | None = None
    detail: Mapping[str, Any] = _detail()


@dataclass(frozen=True, slots=True, kw_only=True)
class StageRan(Payload):
    type: ClassVar[EventType] = EventType.STAGE
    stage: str
    handlers: int
    ms: float
    short_circuit: bool
    failed: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class StageHandlerError(Payload):
    type: ClassVar[EventType] = EventType.STAGE_HANDLER_ERROR
    stage: str
    handler: str
    error: str
    traceback: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StageWriteRefused(Payload):
    type: ClassVar[EventType] = EventType.STAGE_WRITE_REFUSED
    stage: str
    handler: str
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted(Payload):
    type: ClassVar[EventType] = EventType.TURN_STARTED
    channel: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFinished(Payload):
    type: ClassVar[EventType] = EventType.TURN_FINISHED
    channel: str
    ended_by: str
    rounds: int
    kernel_ms: float
    model_ms: float
    tool_ms: float
    usage: Any
    cost: Any
    detail: Mapping[str, Any] = _detail()


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskFailed(Payload):
    type: ClassVar[EventType] = EventType.TASK_FAILED
    task: str
    error: str


# ---- memory --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryDegraded(Payload):
    """A memory layer on less than configured; which of the fields are set says how."""

    type: ClassVar[EventType] = EventType.MEMORY_DEGRADED
    layer: str
    reason: str | None = None
    problems: list[Any] | None = None
    configured: str | None = None
    using: str | None = None
    fingerprint: str | None = None
    blocks: Any = None
    block: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryReembed(Payload):
    type: ClassVar[EventType] = EventType.MEMORY_REEMBED
    layer: str
    done: int
    total: int
    fingerprint: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextAppended(Payload):
    type: ClassVar[EventType] = EventType.CONTEXT_APPENDED
    id: str
    event_source: str
    size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextPruned(Payload):
    """One prune: parallel lists (ids, scores, fates) rather than one mapping per event, so a
    prune of a large window stays cheap to publish."""

    type: ClassVar[EventType] = EventType.CONTEXT_PRUNED
    query: str
    top_k: int
    protected_recent: int
    before: int
    after: int
    ids: list[str]
    scores: list[float | None]
    fates: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class ColdContextArchived(Payload):
    type: ClassVar[EventType] = EventType.COLD_CONTEXT_ARCHIVED
    ids: list[str]
    events: list[Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ColdContextConsumed(Payload):
    type: ClassVar[EventType] = EventType.COLD_CONTEXT_CONSUMED
    ids: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphCommitted(Payload):
    type: ClassVar[EventType] = EventType.GRAPH_COMMITTED
    added: Any
    closed: Any
    confirmed: Any
    entities: Any
    origin: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphFactClosed(Payload):
    """Facts closed: by id (contradicted, edited, with what replaced them) or all of one
    entity's (`entity`, `count`)."""

    type: ClassVar[EventType] = EventType.GRAPH_FACT_CLOSED
    reason: str
    ids: list[Any] | None = None
    replaced_by: Any = None
    entity: Any = None
    count: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphMerged(Payload):
    type: ClassVar[EventType] = EventType.GRAPH_MERGED
    kept: Any
    merged: Any
    redirected: Any
    closed: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphEntityDeleted(Payload):
    type: ClassVar[EventType] = EventType.GRAPH_ENTITY_DELETED
    entity: Any
    facts: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphRecalled(Payload):
    type: ClassVar[EventType] = EventType.GRAPH_RECALLED
    via: str
    entities: list[Any]
    facts: list[Any]
    query: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartbeatTick(Payload):
    """One tick of a heartbeat loop; what the tick did (its own counts) is in `detail`."""

    type: ClassVar[EventType] = EventType.HEARTBEAT_TICK
    loop: str
    model_calls: int
    detail: Mapping[str, Any] = _detail()


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsolidationTask(Payload):
    type: ClassVar[EventType] = EventType.CONSOLIDATION_TASK
    loop: str
    channel: str
    text: str
    detail: Mapping[str, Any] = _detail()


@dataclass(frozen=True, slots=True, kw_only=True)
class KnowledgeAdded(Payload):
    type: ClassVar[EventType] = EventType.KNOWLEDGE_ADDED
    name: str
    media: Any


# ---- the model sources ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderUnavailable(Payload):
    type: ClassVar[EventType] = EventType.PROVIDER_UNAVAILABLE
    llm_source: str
    kind: str
    reason: str
    until_config_changes: bool
    retry_in: float | None
    status: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSkipped(Payload):
    type: ClassVar[EventType] = EventType.PROVIDER_SKIPPED
    llm_source: str | None
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderFallback(Payload):
    type: ClassVar[EventType] = EventType.PROVIDER_FALLBACK
    llm_source: str
    first_choice: str
    failed: list[Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderRecovered(Payload):
    type: ClassVar[EventType] = EventType.PROVIDER_RECOVERED
    llm_source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSwitched(Payload):
    type: ClassVar[EventType] = EventType.PROVIDER_SWITCHED
    llm_source: str
    previous: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderOffline(Payload):
    type: ClassVar[EventType] = EventType.PROVIDER_OFFLINE
    llm_source: str
    base_url: str
    model: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvidersExhausted(Payload):
    type: ClassVar[EventType] = EventType.PROVIDERS_EXHAUSTED
    failures: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderRetry(Payload):
    """A model call made again: by the manager within a source (`status`, `wait`,
    `provider_delay`) or by a turn with a shorter prompt (`squeeze`)."""

    type: ClassVar[EventType] = EventType.PROVIDER_RETRY
    llm_source: str
    kind: str
    reason: str
    attempt: int
    status: int | None = None
    wait: float | None = None
    provider_delay: float | None = None
    squeeze: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderImagesAsText(Payload):
    type: ClassVar[EventType] = EventType.PROVIDER_IMAGES_AS_TEXT
    llm_source: str
    adapter: str
    images: list[Any]


# ---- plugins -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginStarted(Payload):
    type: ClassVar[EventType] = EventType.PLUGIN_STARTED
    plugin: str
    kind: str
    tools: list[str]
    pid: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginStopped(Payload):
    """A plugin stopped; `detail` lists what was detached (its tools, handlers…)."""

    type: ClassVar[EventType] = EventType.PLUGIN_STOPPED
    plugin: str
    detail: Mapping[str, Any] = _detail()


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginRefused(Payload):
    type: ClassVar[EventType] = EventType.PLUGIN_REFUSED
    where: str
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginCrashed(Payload):
    type: ClassVar[EventType] = EventType.PLUGIN_CRASHED
    plugin: str
    returncode: int | None
    detail: Mapping[str, Any] = _detail()


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginRestarting(Payload):
    type: ClassVar[EventType] = EventType.PLUGIN_RESTARTING
    plugin: str
    attempt: int
    delay: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginRPCError(Payload):
    type: ClassVar[EventType] = EventType.PLUGIN_RPC_ERROR
    plugin: str
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginSkillFlagged(Payload):
    type: ClassVar[EventType] = EventType.PLUGIN_SKILL_FLAGGED
    plugin: str
    finding: str
    skill: str | None = None
    written: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginStatus(Payload):
    type: ClassVar[EventType] = EventType.PLUGIN_STATUS
    plugin: str
    status: Any
    message: str
    level: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminalOutput(Payload):
    """agentcli's terminals: output (`data`), created / closed / timed out (`event`), or a
    note beside them; what else a kind tells is in `detail`."""

    type: ClassVar[EventType] = EventType.TERMINAL_OUTPUT
    event: str
    terminal: str | None = None
    name: str | None = None
    running: bool | None = None
    pid: int | None = None
    data: str | None = None
    dropped: int | None = None
    status: Any = None
    detail: Mapping[str, Any] = _detail()


# ---- the tracker and the firewall ----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TrackerFailed(Payload):
    type: ClassVar[EventType] = EventType.TRACKER_FAILED
    message: str
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TrackerFallback(Payload):
    type: ClassVar[EventType] = EventType.TRACKER_FALLBACK
    message: str
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SecurityRefusal(Payload):
    type: ClassVar[EventType] = EventType.SECURITY_REFUSED
    tool: str
    principal: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SecurityFinding(Payload):
    type: ClassVar[EventType] = EventType.SECURITY_FINDING
    where: str
    findings: list[Any]
    detail: Mapping[str, Any] = _detail()


@dataclass(frozen=True, slots=True, kw_only=True)
class SecurityDegraded(Payload):
    type: ClassVar[EventType] = EventType.SECURITY_DEGRADED
    part: str
    file: str
    reason: str


# ---- the wire ------------------------------------------------------------------------------


PAYLOADS: Mapping[str, type[Payload]] = MappingProxyType(
    {
        cls.type.value: cls
        for cls in (
            RawInput,
            AgentOutput,
            AgentOutputDelta,
            ToolCalled,
            Reasoning,
            SystemNote,
            AgentLLMChain,
            KernelReady,
            KernelStopping,
            ConfigChanged,
            SubscriberError,
            EventsDropped,
            SchedulerDecision,
            StageRan,
            StageHandlerError,
            StageWriteRefused,
            TurnStarted,
            TurnFinished,
            TaskFailed,
            MemoryDegraded,
            MemoryReembed,
            ContextAppended,
            ContextPruned,
            ColdContextArchived,
            ColdContextConsumed,
            GraphCommitted,
            GraphFactClosed,
            GraphMerged,
            GraphEntityDeleted,
            GraphRecalled,
            HeartbeatTick,
            ConsolidationTask,
            KnowledgeAdded,
            ProviderUnavailable,
            ProviderSkipped,
            ProviderFallback,
            ProviderRecovered,
            ProviderSwitched,
            ProviderOffline,
            ProvidersExhausted,
            ProviderRetry,
            ProviderImagesAsText,
            PluginStarted,
            PluginStopped,
            PluginRefused,
            PluginCrashed,
            PluginRestarting,
            PluginRPCError,
            PluginSkillFlagged,
            PluginStatus,
            TerminalOutput,
            TrackerFailed,
            TrackerFallback,
            SecurityRefusal,
            SecurityFinding,
            SecurityDegraded,
        )
    }
)
"""The payload class of each kernel event type (a test holds that every type has one)."""


class PayloadError(ValueError):
    """A wire payload that does not fit its event type's class."""


def to_wire(payload: Payload) -> dict[str, Any]:
    """`payload` as the JSON-ready mapping the stream, the RPC frames and the widgets carry."""
    return payload.to_wire()


def from_wire(event_type: str, data: Mapping[str, Any]) -> Payload:
    """Rebuild the payload of an event read from the wire. A kernel type's payload refuses a
    field its class does not have (naming it); a type this kernel does not know (a plugin's,
    or a newer kernel's) is kept whole as a `PluginPayload`."""
    cls = PAYLOADS.get(str(event_type))
    if cls is None:
        return PluginPayload(kind=str(event_type), data=dict(data))
    names = {_wire_name(f): f.name for f in dataclasses.fields(cls)}
    flat = _FLAT in names
    known: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in data.items():
        if key in names and key != _FLAT:
            known[names[key]] = value
        elif flat:
            extra[key] = value
        else:
            fields = ", ".join(sorted(names))
            raise PayloadError(
                f"event {event_type!r} has no field {key!r}; its payload {cls.__name__} "
                f"has: {fields or '(none)'}"
            )
    if flat:
        known[_FLAT] = extra
    try:
        return cls(**known)
    except TypeError as exc:
        raise PayloadError(f"event {event_type!r}: {exc}") from None


__all__ = [
    "PAYLOADS",
    "AgentLLMChain",
    "AgentOutput",
    "AgentOutputDelta",
    "ColdContextArchived",
    "ColdContextConsumed",
    "ConfigChanged",
    "ConsolidationTask",
    "ContextAppended",
    "ContextPruned",
    "EventsDropped",
    "GraphCommitted",
    "GraphEntityDeleted",
    "GraphFactClosed",
    "GraphMerged",
    "GraphRecalled",
    "HeartbeatTick",
    "KernelReady",
    "KernelStopping",
    "KnowledgeAdded",
    "MemoryDegraded",
    "MemoryReembed",
    "Payload",
    "PayloadError",
    "PluginCrashed",
    "PluginPayload",
    "PluginRPCError",
    "PluginRefused",
    "PluginRestarting",
    "PluginSkillFlagged",
    "PluginStarted",
    "PluginStatus",
    "PluginStopped",
    "ProviderFallback",
    "ProviderImagesAsText",
    "ProviderOffline",
    "ProviderRecovered",
    "ProviderRetry",
    "ProviderSkipped",
    "ProviderSwitched",
    "ProviderUnavailable",
    "ProvidersExhausted",
    "RawInput",
    "Reasoning",
    "SchedulerDecision",
    "SecurityDegraded",
    "SecurityFinding",
    "SecurityRefusal",
    "StageHandlerError",
    "StageRan",
    "StageWriteRefused",
    "SubscriberError",
    "SystemNote",
    "TaskFailed",
    "TerminalOutput",
    "ToolCalled",
    "TrackerFailed",
    "TrackerFallback",
    "TurnFinished",
    "TurnStarted",
    "from_wire",
    "to_wire",
]
