"""The kernel modules of memory: `coldcontext` (with the embedder it shares), `memory`
(the context window) and `text-memory` (the text log)."""

from __future__ import annotations

import logging
from typing import Any

from hologram.config.keys import Setting
from hologram.memory._text import Segmenter
from hologram.memory.coldcontext import ColdContext
from hologram.memory.context import ContextWindow
from hologram.memory.embedders import BUILTIN_EMBEDDERS, EMBEDDER_SETTINGS, choose_embedder
from hologram.memory.embedding import Embedder, EmbedderRegistry
from hologram.memory.recall import Memory
from hologram.memory.textlog import TextLog
from hologram.sdk import EventType, Facility

log = logging.getLogger(__name__)

MEMORY_SETTINGS: tuple[Setting, ...] = (
    *EMBEDDER_SETTINGS,
    Setting("core.memory.context.compact_every", 500, "log entries before a new snapshot"),
    Setting("core.memory.coldcontext.min_similarity", 0.12, "cosine below which vector recall "
            "ignores a document"),
)  # fmt: skip

TEXT_SETTINGS: tuple[Setting, ...] = (
    Setting("core.memory.text.max_bytes", 10_000_000, "size of one text-log file"),
    Setting("core.memory.text.retention_days", 30, "days text-log files are kept"),
)


class ColdContextModule:
    """Chooses the embedder (the cold context and the context window share its space, as
    the spec injects one StaticEmbedder into both) and opens the document store. Loading
    the documents and jieba both happen in the background: neither is on the boot path."""

    name = "coldcontext"
    requires = (Facility.CONFIG, Facility.EVENTS)
    provides = (Facility.COLD_CONTEXT,)

    def __init__(self) -> None:
        self.store: ColdContext | None = None
        self._unsubscribe: Any = None

    async def init(self, state: Any) -> None:
        config = state.config
        config.register(MEMORY_SETTINGS)
        embedder = choose_embedder(config, EmbedderRegistry(BUILTIN_EMBEDDERS), state.events.emit)
        segmenter = Segmenter()
        # jieba's half-second load starts once the kernel is ready, off the event loop.
        self._unsubscribe = state.events.subscribe(
            EventType.KERNEL_READY, lambda _event: segmenter.warm_up()
        )
        self.store = ColdContext(
            state.data_dir / "memory" / "coldcontext",
            embedder,
            segmenter.keywords,
            state.clock,
            emit=state.events.emit,
            min_similarity=config.get_float("core.memory.coldcontext.min_similarity"),
            vector_weight=config.get_float("core.memory.recall.vector_weight"),
            tasks=state.tasks.scope(self.name),
        )
        self.store.start()
        log.info("memory embedder %s (%s)", embedder.name, embedder.fingerprint)
        state.coldcontext = self.store

    async def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self.store is not None:
            await self.store.close()
            closer = getattr(self.store.embedder, "close", None)
            if callable(closer):
                closer()


class MemoryModule:
    name = "memory"
    requires = (
        Facility.CONFIG,
        Facility.EVENTS,
        Facility.COLD_CONTEXT,
        Facility.TEXT_MEMORY,
        Facility.STAGE_HOST,
    )
    provides = (Facility.MEMORY,)

    def __init__(self) -> None:
        self.window: ContextWindow | None = None
        self._unsubscribe: Any = None

    async def init(self, state: Any) -> None:
        config = state.config
        cold: ColdContext = state.coldcontext
        embedder: Embedder = cold.embedder
        self.window = ContextWindow(
            state.data_dir / "memory" / "context",
            embedder,
            state.clock,
            top_k=config.get_int("core.memory.context.top_k"),
            protected_recent=config.get_int("core.memory.context.protected_recent"),
            cold=cold,
            emit=state.events.emit,
            compact_every=config.get_int("core.memory.context.compact_every"),
            recall_index=cold.recall_index,
            keywords=cold.keywords,
            tasks=state.tasks.scope(self.name),
        )
        await self.window.open()
        window = self.window
        self._unsubscribe = state.events.subscribe(
            EventType.KERNEL_READY, lambda _event: window.index_in_background()
        )
        memory = Memory(
            self.window,
            embedder,
            cold,
            lambda: config.get_int("core.memory.coldcontext.query_top"),
            text_log=state.text_memory,
        )
        own = {tool.name: tool for tool in memory.tools()}
        stage_tools = state.stagehost.tools
        # no_memory and cleaners of every tool: memory's own, then the stage host's table.
        self.window.tools = lambda name: own.get(name) or stage_tools.get(name)
        state.memory = memory

    async def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self.window is not None:
            await self.window.close()


class TextMemoryModule:
    name = "text-memory"
    requires = (Facility.CONFIG,)
    provides = (Facility.TEXT_MEMORY,)

    async def init(self, state: Any) -> None:
        config = state.config
        config.register(TEXT_SETTINGS)
        state.text_memory = TextLog(
            state.data_dir / "memory" / "text",
            state.clock,
            max_bytes=config.get_int("core.memory.text.max_bytes"),
            retention_days=config.get_int("core.memory.text.retention_days"),
        )
