"""How each memory tier is asked a probe's question, as a ranking of the turns it found.

Documents are traced back to the turns they came from by their time (`ReplayLog.turn_at`):
an event keeps its time when pruning archives it into the cold context.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from hologram.eval.config import EvalConfig, Ranker, Tier
from hologram.eval.replay import ReplayLog
from hologram.memory import (
    RRF_K,
    ColdContext,
    EpisodicIndex,
    EpisodicWeights,
    GraphMemory,
    Memory,
    Place,
    Segmenter,
)


class EvalError(RuntimeError):
    """A configuration this kernel cannot run, with what to do about it."""


class Retriever(Protocol):
    async def search(self, question: str, top: int) -> list[tuple[str, str]]:
        """The turns found for `question`, best first, as (turn id, stored text)."""
        ...


class WindowRetriever:
    """The context window, ranked by cosine to the question: the score pruning keeps by."""

    def __init__(self, memory: Memory, log: ReplayLog) -> None:
        events = [e for e in memory.context.events if e.vector is not None]
        self._memory = memory
        self._turns = [(log.turn_at.get(e.timestamp, ""), e.text) for e in events]
        self._matrix = (
            np.stack([e.vector.vector for e in events if e.vector is not None])
            if events
            else np.zeros((0, memory.embedder.dim), np.float32)
        )

    async def search(self, question: str, top: int) -> list[tuple[str, str]]:
        if not self._turns:
            return []
        vector = self._memory.embedder.embed_texts([question])[0]
        scores = self._matrix @ vector
        order = np.argsort(-scores, kind="stable")[:top]
        return [self._turns[i] for i in order]


class ColdRetriever:
    """The cold context's own query (vectors and BM25, fused), exactly as the turn asks it."""

    def __init__(self, cold: ColdContext, log: ReplayLog) -> None:
        self._cold = cold
        self._log = log

    async def search(self, question: str, top: int) -> list[tuple[str, str]]:
        hits = await self._cold.query(question, top)
        return [(self._log.turn_at.get(h.doc.created_at, ""), h.doc.text) for h in hits]


class MemoryRetriever:
    """`Memory.search` with the window: every stored turn (window, cold context, graph text
    blocks) in the one hybrid ranking the turn's "[Related Memory Docs]" is drawn from (the
    turn leaves out the window's events, which its prompt carries whole)."""

    def __init__(self, memory: Memory, log: ReplayLog) -> None:
        self._memory = memory
        self._log = log

    async def search(self, question: str, top: int) -> list[tuple[str, str]]:
        found = []
        for item in await self._memory.search(question, top, with_window=True):
            turn_id = self._log.turn_at.get(item.at, "")
            if not turn_id and item.place is Place.GRAPH:
                turn_id = self._log.turn_of_text.get(item.text, "")
            found.append((turn_id, item.text))
        return found


class FusedRetriever:
    """Several tiers' rankings merged by reciprocal rank, as the cold context fuses its two."""

    def __init__(self, parts: Sequence[Retriever]) -> None:
        self._parts = list(parts)

    async def search(self, question: str, top: int) -> list[tuple[str, str]]:
        fused: dict[str, float] = {}
        texts: dict[str, str] = {}
        for part in self._parts:
            found = [(t, x) for t, x in await part.search(question, top) if t]
            for rank, (turn_id, text) in enumerate(found):
                fused[turn_id] = fused.get(turn_id, 0.0) + 1.0 / (RRF_K + rank)
                texts.setdefault(turn_id, text)
        best = sorted(fused, key=lambda t: -fused[t])[:top]
        return [(t, texts[t]) for t in best]


def _block_turn(block: object, log: ReplayLog) -> str:
    # An archived turn is a text block under its own (the cold document's) id.
    found = log.turn_of_doc.get(str(getattr(block, "id", "")))
    if found:
        return found
    source = str(getattr(block, "source", ""))
    if source.startswith("coldcontext:"):
        found = log.turn_of_doc.get(source.split(":", 1)[1])
        if found:
            return found
    return log.turn_of_text.get(str(getattr(block, "text", "") or ""), "")


class GraphRetriever:
    """The graph (Memory II): its text blocks (archived cold documents) by the hybrid
    recall, and the facts its indexer recalls (traced to turns by their sentence), fused
    by rank."""

    def __init__(self, graph: GraphMemory, log: ReplayLog) -> None:
        self._graph = graph
        self._log = log

    async def search(self, question: str, top: int) -> list[tuple[str, str]]:
        store = self._graph.store
        blocks = await store.blocks.search(question, top)
        by_block = [(_block_turn(b, self._log), b.text or "") for b, _ in blocks]
        recall = await self._graph.indexer.recall(question)
        by_fact = []
        for fact in recall.facts[:top]:
            turn_id = self._log.turn_of_text.get(fact.sentence_text, "")
            by_fact.append((turn_id, fact.line()))
        return await FusedRetriever([_Fixed(by_block), _Fixed(by_fact)]).search(question, top)


class _Fixed:
    def __init__(self, found: list[tuple[str, str]]) -> None:
        self._found = found

    async def search(self, question: str, top: int) -> list[tuple[str, str]]:
        return self._found[:top]


class EpisodicRetriever:
    """`EpisodicIndex` over the chosen tiers' documents, built once after the replay."""

    def __init__(
        self,
        documents: list[tuple[str, float, str, str]],
        segmenter: Segmenter,
        weights: EpisodicWeights | None = None,
    ) -> None:
        self._texts = {turn_id: text for turn_id, _, text, _ in documents}
        self._index = EpisodicIndex(documents, segmenter.keywords, weights=weights)

    async def search(self, question: str, top: int) -> list[tuple[str, str]]:
        hits = await asyncio.to_thread(self._index.search, question, top)
        return [(turn_id, self._texts[turn_id]) for turn_id, _ in hits]


class BM25Retriever:
    """`bm25s` over `(turn id, text)` documents, scored exhaustively (a conversation has a
    few hundred turns), ties kept in the order the turns were said."""

    def __init__(self, documents: Sequence[tuple[str, str]], segmenter: Segmenter) -> None:
        import bm25s  # imported here: only the baseline needs it

        self._documents = list(documents)
        self._words = segmenter.keywords
        self._index = bm25s.BM25()
        if self._documents:
            corpus = [self._words(text) for _, text in self._documents]
            self._index.index(corpus, show_progress=False)

    async def search(self, question: str, top: int) -> list[tuple[str, str]]:
        if not self._documents:
            return []
        scores = self._index.get_scores(self._words(question))
        order = np.argsort(-scores, kind="stable")[:top]
        return [self._documents[i] for i in order if scores[i] > 0]


def _graph_missing() -> EvalError:
    return EvalError(
        "the graph tier needs Memory II's graph module on the kernel (state.graph is "
        "None): boot the real module set, or run tier = 'context', 'cold' or 'fused'"
    )


async def make_retriever(
    memory: Memory,
    cold: ColdContext,
    graph: GraphMemory | None,
    config: EvalConfig,
    log: ReplayLog,
    segmenter: Segmenter,
) -> Retriever:
    """The retriever `config` asks for, over the replayed kernel's memory: its window and
    cold context, and its graph when the kernel has one."""
    if config.tier is Tier.GRAPH and graph is None:
        raise _graph_missing()
    await cold.wait_ready()
    tiers = {config.tier} if config.tier is not Tier.FUSED else set(Tier)
    if config.ranker is Ranker.EPISODIC:
        documents: dict[str, tuple[str, float, str, str]] = {}

        def keep(turn_id: str, at: float, text: str) -> None:
            documents[turn_id] = (turn_id, at, text, log.source_of.get(turn_id, ""))

        if Tier.CONTEXT in tiers:
            for e in memory.context.events:
                if e.timestamp in log.turn_at:
                    keep(log.turn_at[e.timestamp], e.timestamp, e.text)
        if Tier.COLD in tiers:
            for d in cold.documents():
                if d.created_at in log.turn_at:
                    keep(log.turn_at[d.created_at], d.created_at, d.text)
        if Tier.GRAPH in tiers and graph is not None:
            at_of = {turn_id: at for at, turn_id in log.turn_at.items()}
            for block in await graph.store.blocks.list("text"):
                turn_id = _block_turn(block, log)
                if turn_id and turn_id not in documents:
                    keep(turn_id, at_of[turn_id], block.text or "")
        return await asyncio.to_thread(
            EpisodicRetriever, list(documents.values()), segmenter, config.recall_weights()
        )
    if config.tier is Tier.FUSED:
        # What the turn's "[Related Memory Docs]" is drawn from, ranked as the turn ranks it.
        # The window's own ranking is left out: the window is in the prompt whole, and
        # fusing its cosine order in lowered LoCoMo recall@10 when it was measured.
        return MemoryRetriever(memory, log)
    parts: list[Retriever] = []
    if Tier.CONTEXT in tiers:
        parts.append(WindowRetriever(memory, log))
    if Tier.COLD in tiers:
        parts.append(ColdRetriever(cold, log))
    if Tier.GRAPH in tiers and graph is not None:
        parts.append(GraphRetriever(graph, log))
    return parts[0] if len(parts) == 1 else FusedRetriever(parts)
