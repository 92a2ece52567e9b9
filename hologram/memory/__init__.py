"""Memory: the context window, the cold context, the graph, the text log, and the recall over
them. This module is memory's face: the names the other layers use. Inside, lowest first:

    text            words (jieba)
    turns           the turn store: every turn once (SQLite), its place and its moves
    legacy          the files the window and cold context were, moved into the turn store
    embed/          the embedder registry and the built-in embedders (the protocol: sdk)
    recall/         vector and BM25 indexes, episodic words, time expressions, hybrid index
    window/         the context window (the turns in place CONTEXT) and its events
    cold/           the cold context (the turns in place COLD_CONTEXT), the model's tools
    graph/          the graph store (SQLite), its indexer, tools and social memory
    heartbeat/      the distill, archive, merge, review and rules loops
    textlog         the raw conversation, one file a day
    facility        `Memory`, what the turn holds: window + cold context + layers (the graph)
    graphmemory     `GraphMemory`, the graph with everything built on it, and its module
    module          the kernel modules coldcontext, memory and text_memory

What the turn calls (``state.memory`` is a `Memory`, ``state.coldcontext`` a `ColdContext`,
``state.text_memory`` a `TextLog`)::

    memory = state.memory
    memory.context.connect_tools(stagehost.tools.get)   # once: no_memory / cleaner lookup
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

from hologram.memory.cold.store import ColdContext, ColdDoc, ColdHit
from hologram.memory.cold.tools import coldcontext_tools
from hologram.memory.embed.builtin import (
    BUILTIN_EMBEDDERS,
    HashedNgramEmbedder,
    HttpEmbedder,
    StaticEmbedder,
    TfidfBigramEmbedder,
    choose_embedder,
)
from hologram.memory.embed.registry import EmbedderRegistry, StoredVector
from hologram.memory.facility import (
    RELATED_DOCS_HEADER,
    Memory,
    MemoryLayer,
    Recollection,
    related_docs_section,
)
from hologram.memory.graph.indexer import MEMORY_INDEX_HEADER, with_cjk_bigrams
from hologram.memory.graph.schema import GRAPH_MIGRATIONS
from hologram.memory.graph.store import GraphStore
from hologram.memory.graph.types import (
    Entity,
    EntityHit,
    Fact,
    GraphError,
    Triple,
    UnknownEntity,
    normalise_name,
)
from hologram.memory.graphmemory import GraphMemory, GraphModule
from hologram.memory.heartbeat.loops import SubmitConsolidation
from hologram.memory.legacy import cold_into_turns, window_into_turns
from hologram.memory.module import ColdContextModule, MemoryModule, TextMemoryModule
from hologram.memory.recall.episodic import EpisodicIndex, EpisodicWeights
from hologram.memory.recall.hybrid import RRF_K
from hologram.memory.text import Segmenter
from hologram.memory.textlog import TextLog
from hologram.memory.turns import (
    TURN_STORE_MIGRATIONS,
    TURN_STORE_TABLES,
    Move,
    Place,
    Turn,
    TurnStore,
    TurnStoreError,
)
from hologram.memory.window.context import ContextWindow, Fate, PruneReport, Scored, keep_order
from hologram.memory.window.event import (
    AGENT_SOURCE,
    COLD_STORAGE_SOURCE,
    ContextEvent,
    ToolOutput,
)

__all__ = [
    "AGENT_SOURCE",
    "BUILTIN_EMBEDDERS",
    "COLD_STORAGE_SOURCE",
    "GRAPH_MIGRATIONS",
    "MEMORY_INDEX_HEADER",
    "RELATED_DOCS_HEADER",
    "RRF_K",
    "TURN_STORE_MIGRATIONS",
    "TURN_STORE_TABLES",
    "ColdContext",
    "ColdContextModule",
    "ColdDoc",
    "ColdHit",
    "ContextEvent",
    "ContextWindow",
    "EmbedderRegistry",
    "Entity",
    "EntityHit",
    "EpisodicIndex",
    "EpisodicWeights",
    "Fact",
    "Fate",
    "GraphError",
    "GraphMemory",
    "GraphModule",
    "GraphStore",
    "HashedNgramEmbedder",
    "HttpEmbedder",
    "Memory",
    "MemoryLayer",
    "MemoryModule",
    "Move",
    "Place",
    "PruneReport",
    "Recollection",
    "Scored",
    "Segmenter",
    "StaticEmbedder",
    "StoredVector",
    "SubmitConsolidation",
    "TextLog",
    "TextMemoryModule",
    "TfidfBigramEmbedder",
    "ToolOutput",
    "Triple",
    "Turn",
    "TurnStore",
    "TurnStoreError",
    "UnknownEntity",
    "choose_embedder",
    "cold_into_turns",
    "coldcontext_tools",
    "keep_order",
    "normalise_name",
    "related_docs_section",
    "window_into_turns",
    "with_cjk_bigrams",
]
