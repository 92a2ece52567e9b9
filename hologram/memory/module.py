"""The kernel modules of memory: `coldcontext` (the turn store, with the embedder it
shares), `memory` (the context window) and `text-memory` (the text log)."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import threadpoolctl

from hologram.config import ConfigRegistry, MemorySettings
from hologram.events import EventBus
from hologram.kernel import KernelTasks, required
from hologram.memory.cold.store import ColdContext
from hologram.memory.embed.builtin import BUILTIN_EMBEDDERS, choose_embedder
from hologram.memory.embed.registry import EmbedderRegistry
from hologram.memory.facility import Memory
from hologram.memory.text import Segmenter
from hologram.memory.textlog import TextLog
from hologram.memory.turns import TurnStore
from hologram.memory.window.context import ContextWindow
from hologram.sdk import Clock, Embedder, EventType, Facility, MemoryDegraded, ToolDef

log = logging.getLogger(__name__)


class _ToolTable(Protocol):
    def get(self, name: str) -> ToolDef | None: ...


class ToolsOfHost(Protocol):
    """The part of the stage host the memory module reads: its tool table."""

    @property
    def tools(self) -> _ToolTable: ...


class MemoryState(Protocol):
    """What memory's modules read of the kernel's state, and the fields they fill."""

    @property
    def config(self) -> ConfigRegistry | None: ...
    @property
    def events(self) -> EventBus | None: ...
    @property
    def stagehost(self) -> ToolsOfHost | None: ...
    @property
    def data_dir(self) -> Path: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def tasks(self) -> KernelTasks: ...

    coldcontext: ColdContext | None
    memory: Memory | None
    text_memory: TextLog | None


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

    async def init(self, state: MemoryState) -> None:
        config = required(state.config, Facility.CONFIG)
        events = required(state.events, Facility.EVENTS)
        loop, emit = asyncio.get_running_loop(), events.emit

        def on_failure(problem: str) -> None:
            # The store writes on its own thread: the event is emitted on the loop's.
            loop.call_soon_threadsafe(
                partial(emit, MemoryDegraded(layer="turns", problems=[problem]), source="memory")
            )

        self.turns = await asyncio.to_thread(
            TurnStore, state.data_dir / "memory" / "turns.db", on_failure
        )
        settings = config.read(MemorySettings)
        limit_blas(settings.blas_threads)
        embedder = choose_embedder(config, EmbedderRegistry(BUILTIN_EMBEDDERS), events.emit)
        # The embedder's own segmenter when it has one: a text is then cut once for its
        # vector and its words, and a query once for every index (`hologram.memory.text`).
        own = getattr(embedder, "segmenter", None)
        segmenter = own if isinstance(own, Segmenter) else Segmenter()

        # jieba's half-second load starts once the kernel is ready, off the event loop.
        def warm_up(_event: object) -> None:
            segmenter.warm_up()

        self._unsubscribe = events.subscribe(EventType.KERNEL_READY, warm_up)
        self.store = ColdContext(
            self.turns,
            embedder,
            segmenter.keywords,
            state.clock,
            emit=events.emit,
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

    async def init(self, state: MemoryState) -> None:
        live = required(state.config, Facility.CONFIG).live(MemorySettings)
        events = required(state.events, Facility.EVENTS)
        settings = live.current
        cold = required(state.coldcontext, Facility.COLD_CONTEXT)
        embedder: Embedder = cold.embedder
        self.window = ContextWindow(
            cold.turns,
            embedder,
            state.clock,
            top_k=settings.top_k,
            protected_recent=settings.protected_recent,
            cold=cold,
            emit=events.emit,
            recall_index=cold.recall_index,
            keywords=cold.keywords,
            tasks=state.tasks.scope(self.name),
        )
        await self.window.open()
        window = self.window
        self._unsubscribe = events.subscribe(
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
        stage_tools = required(state.stagehost, Facility.STAGE_HOST).tools
        # no_memory and cleaners of every tool: memory's own, then the stage host's table.
        self.window.connect_tools(lambda name: own.get(name) or stage_tools.get(name))
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

    async def init(self, state: MemoryState) -> None:
        settings = required(state.config, Facility.CONFIG).read(MemorySettings)
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
