"""Memory: the embedding SPI, the context window, the cold context and the text log.

What the turn calls (``state.memory`` is a `Memory`, ``state.coldcontext`` a `ColdContext`,
``state.text_memory`` a `TextLog`)::

    memory = state.memory
    memory.context.tools = stagehost.tools.get          # once: no_memory / cleaner lookup
    await memory.context.append(channel_source, input=text, channel=channel)   # durable
    report = await memory.context.prune(text)           # -> PruneReport (also an event)
    sections = await memory.recall_sections(text, memory_budget, estimate_tokens)
    timeline = memory.context.timeline(context_budget, estimate_tokens)  # newest first, fitted
    ...
    await memory.context.append("agent", response=reply, tool_outputs=[ToolOutput(n, c), …])
    await state.text_memory.write("user", text, channel=channel)

The graph (``state.graph`` is a `GraphMemory`) joins through ``memory.add_layer``: its
"[Memory Index]" facts come with ``memory.recall``, its tools with ``memory.tools()``.
Its merge and review heartbeats need ``state.graph.connect_consolidation(submit)``, where
``submit(text) -> reply`` runs a turn on the ``_consolidation_`` self-input channel.

`estimate_tokens` is the provider layer's token estimator (str -> int); the budgets come
from its context budget. The model's tools: `coldcontext_tools(memory.context,
state.coldcontext)` returns the ToolDefs `coldcontext_query` and `coldcontext_commit` for
the stage host's tool table (``stagehost.register_tool`` each).

Sources: ``"agent"`` for the agent's own replies, ``"cold_storage"`` for recalled
documents, any other string (the channel's name: ``"qq"``, ``"notebook"``, ``"agentcli"`` …)
for inputs. Pruned ``agentcli`` and ``terminal`` events are dropped, never archived.
"""

from hologram.memory._text import Segmenter, clean_text
from hologram.memory.coldcontext import ColdContext, ColdDoc, ColdHit
from hologram.memory.context import ColdArchive, ContextWindow, Fate, PruneReport, Scored
from hologram.memory.context_event import (
    AGENT_SOURCE,
    COLD_STORAGE_SOURCE,
    NEVER_ARCHIVED,
    ContextEvent,
    ToolOutput,
    text_for_vector,
)
from hologram.memory.embedders import (
    BUILTIN_EMBEDDERS,
    HashedNgramEmbedder,
    HttpEmbedder,
    StaticEmbedder,
    TfidfBigramEmbedder,
    choose_embedder,
)
from hologram.memory.embedding import (
    ENTRY_POINT_GROUP,
    Embedder,
    EmbedderError,
    EmbedderNotFound,
    EmbedderRegistry,
    EmbedderUnavailable,
    Modality,
    ModalityUnsupported,
    StoredVector,
)
from hologram.memory.graph import CommitReport, GraphStore
from hologram.memory.graph_blocks import BlockStore, media_block_id, text_block_id
from hologram.memory.graph_edit import MergeReport
from hologram.memory.graph_memory import GraphMemory, GraphModule
from hologram.memory.graph_types import (
    BlockInfo,
    Entity,
    EntityHit,
    Fact,
    GraphError,
    Recall,
    Triple,
    UnknownBlock,
    UnknownEntity,
    normalise_name,
)
from hologram.memory.heartbeat import Heartbeat, SubmitConsolidation
from hologram.memory.indexer import MEMORY_INDEX_HEADER, Indexer
from hologram.memory.module import ColdContextModule, MemoryModule, TextMemoryModule
from hologram.memory.recall import RELATED_DOCS_HEADER, Memory, MemoryLayer, related_docs_section
from hologram.memory.social import Social
from hologram.memory.textlog import TextLog
from hologram.memory.tools import coldcontext_tools, recall_into_context

__all__ = [
    "AGENT_SOURCE",
    "BUILTIN_EMBEDDERS",
    "COLD_STORAGE_SOURCE",
    "ENTRY_POINT_GROUP",
    "MEMORY_INDEX_HEADER",
    "NEVER_ARCHIVED",
    "RELATED_DOCS_HEADER",
    "BlockInfo",
    "BlockStore",
    "ColdArchive",
    "ColdContext",
    "ColdContextModule",
    "ColdDoc",
    "ColdHit",
    "CommitReport",
    "ContextEvent",
    "ContextWindow",
    "Embedder",
    "EmbedderError",
    "EmbedderNotFound",
    "EmbedderRegistry",
    "EmbedderUnavailable",
    "Entity",
    "EntityHit",
    "Fact",
    "Fate",
    "GraphError",
    "GraphMemory",
    "GraphModule",
    "GraphStore",
    "HashedNgramEmbedder",
    "Heartbeat",
    "HttpEmbedder",
    "Indexer",
    "Memory",
    "MemoryLayer",
    "MemoryModule",
    "MergeReport",
    "Modality",
    "ModalityUnsupported",
    "PruneReport",
    "Recall",
    "Scored",
    "Segmenter",
    "Social",
    "StaticEmbedder",
    "StoredVector",
    "SubmitConsolidation",
    "TextLog",
    "TextMemoryModule",
    "TfidfBigramEmbedder",
    "ToolOutput",
    "Triple",
    "UnknownBlock",
    "UnknownEntity",
    "choose_embedder",
    "clean_text",
    "coldcontext_tools",
    "media_block_id",
    "normalise_name",
    "recall_into_context",
    "related_docs_section",
    "text_block_id",
    "text_for_vector",
]
