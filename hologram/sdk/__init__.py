"""The public contract of Hologram: what modules and plugins agree on.

Pure types. This package imports nothing else of hologram, so a plugin can depend on it alone.
"""

from hologram.sdk import event_payloads, jsontext
from hologram.sdk.capabilities import OutputCap
from hologram.sdk.clock import Clock
from hologram.sdk.embedding import (
    ENTRY_POINT_GROUP,
    Embedder,
    EmbedderError,
    EmbedderFactory,
    EmbedderNotFound,
    EmbedderUnavailable,
    Modality,
    ModalityUnsupported,
    Vectors,
)
from hologram.sdk.event_payloads import *  # noqa: F403  (the payload classes; their __all__)
from hologram.sdk.events import Emit, Event, EventType, discard
from hologram.sdk.facilities import Facility, parse_facility
from hologram.sdk.media import DIGEST, MediaData, MediaRef
from hologram.sdk.memory import (
    KnowledgeAPI,
    KnowledgeEntry,
    KnowledgeHit,
    MemoryAPI,
    Person,
    Recalled,
    SocialAPI,
)
from hologram.sdk.outcomes import (
    CONSOLIDATION_CHANNEL,
    EndedBy,
    FindingKind,
    PluginOrigin,
    ReviewRule,
    TraceKind,
    ended_by_wire,
)
from hologram.sdk.plugin import (
    SDK_CALLS,
    WITHHELD,
    Capability,
    CapabilityError,
    EventHandler,
    InjectOptions,
    Injects,
    LLMSources,
    MediaItems,
    OutputHandler,
    Plugin,
    PluginSDK,
    SdkCall,
    StageHandler,
    WakeHandler,
    needs,
)
from hologram.sdk.priority import Priority
from hologram.sdk.prompt import PromptSection
from hologram.sdk.schema import (
    JSON,
    NOT_BLANK,
    Param,
    SchemaError,
    Schemas,
    convert,
    schema_of,
    split_optional,
    to_json,
)
from hologram.sdk.settings import Settings
from hologram.sdk.stages import STAGE_WRITABLE, HandlerScope, MemItem, Stage, StageContext
from hologram.sdk.tools import (
    ToolCall,
    ToolDef,
    ToolError,
    ToolHandler,
    ToolOutput,
    ToolResult,
)

__all__ = [
    "CONSOLIDATION_CHANNEL",
    "DIGEST",
    "ENTRY_POINT_GROUP",
    "JSON",
    "NOT_BLANK",
    "SDK_CALLS",
    "STAGE_WRITABLE",
    "WITHHELD",
    "Capability",
    "CapabilityError",
    "Clock",
    "Embedder",
    "EmbedderError",
    "EmbedderFactory",
    "EmbedderNotFound",
    "EmbedderUnavailable",
    "Emit",
    "EndedBy",
    "Event",
    "EventHandler",
    "EventType",
    "Facility",
    "FindingKind",
    "HandlerScope",
    "InjectOptions",
    "Injects",
    "KnowledgeAPI",
    "KnowledgeEntry",
    "KnowledgeHit",
    "LLMSources",
    "MediaData",
    "MediaItems",
    "MediaRef",
    "MemItem",
    "MemoryAPI",
    "Modality",
    "ModalityUnsupported",
    "OutputCap",
    "OutputHandler",
    "Param",
    "Person",
    "Plugin",
    "PluginOrigin",
    "PluginSDK",
    "Priority",
    "PromptSection",
    "Recalled",
    "ReviewRule",
    "SchemaError",
    "Schemas",
    "SdkCall",
    "Settings",
    "SocialAPI",
    "Stage",
    "StageContext",
    "StageHandler",
    "ToolCall",
    "ToolDef",
    "ToolError",
    "ToolHandler",
    "ToolOutput",
    "ToolResult",
    "TraceKind",
    "Vectors",
    "WakeHandler",
    "convert",
    "discard",
    "ended_by_wire",
    "jsontext",
    "needs",
    "parse_facility",
    "schema_of",
    "split_optional",
    "to_json",
]
__all__ += event_payloads.__all__
