"""LLM providers: sandboxed Lua adapters over real HTTP, ordered fallback, streaming, the
context budget, and the scripted local model server (spec 000, "Provider & Lua Adapter
Layer"; spec 001, the adapter contract).

Names load with the submodule that defines them, on first use: the `scripted-model`
command's `--help` loads neither httpx nor Lua.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hologram.kernel import lazy_face

_LAZY = {
    "hologram.llm.sources": ("OFFLINE_SOURCE", "SourceProblem", "read_source", "source_names"),
    "hologram.llm.adapter": ("AdapterLibrary", "LuaAdapter", "shipped_adapters_dir"),
    "hologram.llm.budget": (
        "KNOWN_CONTEXT_WINDOWS",
        "TokenBudget",
        "compute_budget",
        "context_window",
        "estimate_message_tokens",
        "estimate_tokens",
    ),
    "hologram.llm.errors": (
        "AdapterError",
        "AdapterOutputError",
        "AllProvidersFailed",
        "ContextTooLong",
        "FailureKind",
        "ProviderError",
    ),
    "hologram.llm.lua_sandbox": ("LuaSandbox", "LuaSandboxError"),
    "hologram.llm.manager": ("ProviderManager",),
    "hologram.llm.messages": (
        "ChatMessage",
        "CompletionRequest",
        "CompletionResponse",
        "ContentBlock",
        "ImageBlock",
        "Role",
        "TextBlock",
        "TokenUsage",
    ),
    "hologram.llm.module": ("LLMModule",),
    "hologram.llm.offline_model": (
        "OFFLINE_RULES",
        "OfflineResponder",
        "OfflineRule",
        "NO_LLM_HINT",
    ),
    "hologram.llm.provider": ("LuaAdaptedProvider", "Provider", "SourceConfig"),
    "hologram.llm.scripted_server": (
        "OFFLINE_MODEL_NAME",
        "RecordedRequest",
        "ScriptedModelServer",
        "ScriptedReply",
        "InProcessServer",
    ),
    "hologram.llm.streaming": ("StreamChunk", "ToolCallDelta", "SSELines"),
    "hologram.llm.usage": ("UsageLedger", "usage_table"),
    "hologram.llm.vision": ("ImageNotes", "image_note", "images_as_notes"),
    "hologram.llm.wire": ("ReceivedImage",),
}

__all__ = [
    "KNOWN_CONTEXT_WINDOWS",
    "NO_LLM_HINT",
    "OFFLINE_MODEL_NAME",
    "OFFLINE_RULES",
    "OFFLINE_SOURCE",
    "AdapterError",
    "AdapterLibrary",
    "AdapterOutputError",
    "AllProvidersFailed",
    "ChatMessage",
    "CompletionRequest",
    "CompletionResponse",
    "ContentBlock",
    "ContextTooLong",
    "FailureKind",
    "ImageBlock",
    "ImageNotes",
    "InProcessServer",
    "LLMModule",
    "LuaAdaptedProvider",
    "LuaAdapter",
    "LuaSandbox",
    "LuaSandboxError",
    "OfflineResponder",
    "OfflineRule",
    "Provider",
    "ProviderError",
    "ProviderManager",
    "ReceivedImage",
    "RecordedRequest",
    "Role",
    "SSELines",
    "ScriptedModelServer",
    "ScriptedReply",
    "SourceConfig",
    "SourceProblem",
    "StreamChunk",
    "TextBlock",
    "TokenBudget",
    "TokenUsage",
    "ToolCallDelta",
    "UsageLedger",
    "compute_budget",
    "context_window",
    "estimate_message_tokens",
    "estimate_tokens",
    "image_note",
    "images_as_notes",
    "read_source",
    "shipped_adapters_dir",
    "source_names",
    "usage_table",
]
__getattr__ = lazy_face(__name__, _LAZY)

if TYPE_CHECKING:
    from hologram.llm.adapter import AdapterLibrary, LuaAdapter, shipped_adapters_dir
    from hologram.llm.budget import (
        KNOWN_CONTEXT_WINDOWS,
        TokenBudget,
        compute_budget,
        context_window,
        estimate_message_tokens,
        estimate_tokens,
    )
    from hologram.llm.errors import (
        AdapterError,
        AdapterOutputError,
        AllProvidersFailed,
        ContextTooLong,
        FailureKind,
        ProviderError,
    )
    from hologram.llm.lua_sandbox import LuaSandbox, LuaSandboxError
    from hologram.llm.manager import ProviderManager
    from hologram.llm.messages import (
        ChatMessage,
        CompletionRequest,
        CompletionResponse,
        ContentBlock,
        ImageBlock,
        Role,
        TextBlock,
        TokenUsage,
    )
    from hologram.llm.module import LLMModule
    from hologram.llm.offline_model import NO_LLM_HINT, OFFLINE_RULES, OfflineResponder, OfflineRule
    from hologram.llm.provider import LuaAdaptedProvider, Provider, SourceConfig
    from hologram.llm.scripted_server import (
        OFFLINE_MODEL_NAME,
        InProcessServer,
        RecordedRequest,
        ScriptedModelServer,
        ScriptedReply,
    )
    from hologram.llm.sources import OFFLINE_SOURCE, SourceProblem, read_source, source_names
    from hologram.llm.streaming import SSELines, StreamChunk, ToolCallDelta
    from hologram.llm.usage import UsageLedger, usage_table
    from hologram.llm.vision import ImageNotes, image_note, images_as_notes
    from hologram.llm.wire import ReceivedImage
