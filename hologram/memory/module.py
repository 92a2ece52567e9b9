"""The kernel modules of memory: `coldcontext` (the turn store, with the embedder it
shares), `memory` (the context window) and `text-memory` (the text log)."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import Any

import threadpoolctl

from hologram.config import MemorySettings
from hologram.memory.cold.store import ColdContext
from hologram.memory.embed.builtin import BUILTIN_EMBEDDERS, choose_embedder
from hologram.memory.embed.registry import EmbedderRegistry
from hologram.memory.facility import Memory
from hologram.memory.text import Segmenter
from hologram.memory.textlog import TextLog
from hologram.memory.turns import TurnStore
from hologram.memory.window.context import ContextWindow
from hologram.sdk import Embedder, EventType, Facility

log = logging.getLogger(__name__)


def limit_blas(threads: int) -> None:
    """Cap numpy's BLAS pool for the whole process (`core.memory.blas_threads`; 0 leaves it).
    Recall multiplies a query by a few thousand rows; with the pool's threads spinning on
    every core, a 10k-row product took 2.3 ms on a busy 2-core machine, 0.35 ms on one."""
    if threads <= 0:
        return
    found = threadpoolctl.threadpool_info()
    if any(pool["user_api"] == "blas" and pool["num_threads"] > threads for pool in found):
        threadpoolctl.threadpool_limits(limits=threads, user_api="blas")
        log.info("BLAS limited to %d thread(s) in this process (core.memory.blas_threads)", threads)


class ColdContextModule:
    """Opens the turn store (the cold context's and the context window's rows), chooses the
    embedder (both share its space, as the spec injects one StaticEmbedder into both) and
    opens the cold context. Loading the documents and jieba both happen in the background:
    neither is on the boot path."""

    name = "coldcontext"
    requires = (Facility.CONFIG, Facility.EVENTS)
    provides = (Facility.COLD_CONTEXT,)

    def __init__(self) -> None:
        self.store: ColdContext | None = None
        self.turns: TurnStore | None = None
        self._unsubscribe: Any = None

    async def init(self, state: Any) -> None:
        config = state.config
        self.turns = await asyncio.to_thread(TurnStore, state.data_dir / "memory" / "turns.db")
        loop, emit = asyncio.get_running_loop(), state.events.emit
        self.turns.on_failure = lambda problem: loop.call_soon_threadsafe(
            partial(
                emit, EventType.MEMORY_DEGRADED, source="memory", layer="turns", problems=[problem]
            )
        )
        settings = config.read(MemorySettings)
        limit_blas(settings.blas_threads)
        embedder = choose_embedder(config, EmbedderRegistry(BUILTIN_EMBEDDERS), state.events.emit)
        # The embedder's own segmenter when it has one: a text is then cut once for its
        # vector and its words, and a query once for every index (`hologram.memory.text`).
        own = getattr(embedder, "segmenter", None)
        segmenter = own if isinstance(own, Segmenter) else Segmenter()
        # jieba's half-second load starts once the kernel is ready, off the event loop.
        self._unsubscribe = state.events.subscribe(
            EventType.KERNEL_READY, lambda _event: segmenter.warm_up()
        )
        self.store = ColdContext(
            self.turns,
            embedder,
            segmenter.keywords,
            state.clock,
            emit=state.events.emit,
            min_similarity=settings.min_similarity,
            vector_weight=settings.vector_weight,
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
        if self.turns is not None:
            await asyncio.to_thread(self.turns.close)


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
        live = state.config.live(MemorySettings)
        settings = live.current
        cold: ColdContext = state.coldcontext
        embedder: Embedder = cold.embedder
        self.window = ContextWindow(
            cold.turns,
            embedder,
            state.clock,
            top_k=settings.top_k,
            protected_recent=settings.protected_recent,
            cold=cold,
            emit=state.events.emit,
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
            lambda: live.current.query_top,
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

    def __init__(self) -> None:
        self._log: TextLog | None = None

    async def init(self, state: Any) -> None:
        settings = state.config.read(MemorySettings)
        state.text_memory = TextLog(
            state.data_dir / "memory" / "text",
            state.clock,
            max_bytes=settings.text_max_bytes,
            retention_days=settings.text_retention_days,
        )
        self._log = state.text_memory

    async def close(self) -> None:
        if self._log is not None:
            self._log.close()
