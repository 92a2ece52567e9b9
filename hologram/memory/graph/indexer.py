"""The memory indexer (spec: Indexer.BuildContext): what the graph puts into the system
prompt for an input, as the "[Memory Index]" section.

Seeds come from two recalls that miss different things: entity vectors (a paraphrase finds
"coffee" from "espresso") and jieba keywords through the graph's name indexes (a short exact
name that embeds poorly). A breadth-first walk from the seeds gives the facts, ranked, and
as many as fit in the memory budget go in. Entities the model already fetched with a tool
are left out (`mark_recalled`): it has them in front of it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from hologram.memory.graph.base import blob_vector, placeholders
from hologram.memory.graph.store import GraphStore
from hologram.memory.graph.types import Recall
from hologram.memory.recall.index import VectorIndex
from hologram.memory.recall.query import Asked
from hologram.sdk import (
    Emit,
    GraphRecalled,
    MemItem,
    discard,
)

log = logging.getLogger(__name__)

MEMORY_INDEX_HEADER = "[Memory Index]"
Estimate = Callable[[str], int]


def rough_tokens(text: str) -> int:
    """A token estimate for when none is given: a CJK character is about one token, other
    text about four characters per token."""
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")
    return cjk + (len(text) - cjk + 3) // 4


def with_cjk_bigrams(words: list[str]) -> list[str]:
    """jieba often glues a short name to its neighbour ("和小红"); the character bigrams
    of longer Chinese words find such two-character names through the exact-name index."""
    extra = [
        w[i : i + 2]
        for w in words
        if len(w) >= 3 and all("\u3400" <= ch <= "\u9fff" for ch in w)
        for i in range(len(w) - 1)
    ]
    return list(dict.fromkeys([*words, *extra]))


class Indexer:
    def __init__(
        self,
        graph: GraphStore,
        keywords: Callable[[str], list[str]],
        *,
        depth: int = 2,
        vector_top: int = 5,
        min_similarity: float = 0.5,
        emit: Emit | None = None,
    ) -> None:
        self.graph = graph
        self.keywords = keywords
        self.depth = depth
        self.vector_top = vector_top
        self.min_similarity = min_similarity
        self._emit = emit or discard
        self._vectors: VectorIndex | None = None
        self._loading: asyncio.Lock = asyncio.Lock()
        self._turn = 0
        self._recalled: dict[int, int] = {}
        self.last_recall: Recall | None = None
        graph.on_entities_added(self._added)

    # ---- mark_recalled -------------------------------------------------------------------

    def begin_turn(self) -> None:
        """A new turn: marks older than the previous turn expire. A mark made in turn k
        holds through turn k+1, because what a tool returned travels with turn k's reply
        into the timeline the next prompt shows."""
        self._turn += 1
        self._recalled = {e: t for e, t in self._recalled.items() if t >= self._turn - 1}

    def mark_recalled(self, entity_ids: Iterable[int]) -> None:
        for entity_id in entity_ids:
            self._recalled[entity_id] = self._turn

    @property
    def recalled(self) -> set[int]:
        return set(self._recalled)

    # ---- the entity vectors ----------------------------------------------------------------

    async def _index(self) -> VectorIndex:
        async with self._loading:
            if self._vectors is None:
                index = VectorIndex(self.graph.embedder.dim)
                rows = await self.graph.fetchall(
                    "SELECT id, vector FROM entities WHERE fingerprint = ? AND vector IS NOT NULL",
                    (self.graph.embedder.fingerprint,),
                )
                for entity_id, blob in rows:
                    index.set(entity_id, blob_vector(blob))
                self._vectors = index
            return self._vectors

    def _added(self, ids: list[int], vectors: list[Any]) -> None:
        if self._vectors is not None:
            for entity_id, vector in zip(ids, vectors, strict=True):
                self._vectors.set(entity_id, np.asarray(vector, dtype=np.float32))

    async def vector_seeds(
        self, text: str, vector: npt.NDArray[np.float32] | None = None
    ) -> dict[int, tuple[float, str]]:
        """Entities whose vectors are near `text`'s (`vector`, when the caller has it)."""
        index = await self._index()
        if index.size == 0:
            return {}
        query = vector
        if query is None:
            query = (await asyncio.to_thread(self.graph.embedder.embed_texts, [text]))[0]
        rows, scores = index.search(query, self.vector_top, self.min_similarity)
        candidates = {int(r): float(s) for r, s in zip(rows, scores, strict=True)}
        if not candidates:
            return {}
        # The index may hold entities merged or purged since it was loaded.
        live = await self.graph.read_now(
            f"SELECT id FROM entities WHERE id IN ({placeholders(candidates)}) "
            "AND purged_at IS NULL",
            list(candidates),
        )
        return {i: (candidates[i], "vector") for (i,) in live}

    # ---- building the section --------------------------------------------------------------

    async def recall(self, text: str, *, asked: Asked | None = None) -> Recall:
        """`asked`: `text` already segmented and embedded (by memory's search), read
        instead of cutting and embedding it again."""
        if not text.strip():
            return Recall()
        if asked is not None and asked.text == text:
            words = with_cjk_bigrams(list(asked.keywords))
            seeds = await self.vector_seeds(text, asked.vector)
        else:
            words = with_cjk_bigrams(await asyncio.to_thread(self.keywords, text))
            seeds = await self.vector_seeds(text)
        result = await self.graph.recall(words, self.depth, seeds=seeds, exclude=self.recalled)
        self.last_recall = result
        self._emit(
            GraphRecalled(
                via="indexer",
                query=text,
                entities=[e.name for e in result.entities],
                facts=[f.id for f in result.facts],
            ),
            source="memory",
        )
        return result

    async def items(
        self,
        text: str,
        budget_tokens: int,
        estimate: Estimate = rough_tokens,
        *,
        asked: Asked | None = None,
    ) -> list[MemItem]:
        """The facts for `text`, best first, within `budget_tokens`."""
        result = await self.recall(text, asked=asked)
        items, used = [], estimate(MEMORY_INDEX_HEADER)
        for fact in result.facts:
            line = fact.line()
            cost = estimate(line) + 1
            if used + cost > budget_tokens:
                break
            items.append(MemItem(line, "graph", fact.score))
            used += cost
        return items

    async def build_context(
        self,
        text: str,
        budget_tokens: int,
        estimate: Estimate = rough_tokens,
        *,
        asked: Asked | None = None,
    ) -> str:
        """The "[Memory Index]" section for `text`; "" when the graph knows nothing of it
        or nothing fits."""
        items = await self.items(text, budget_tokens, estimate, asked=asked)
        if not items:
            return ""
        return "\n".join([MEMORY_INDEX_HEADER, *(f"- {item.text}" for item in items)])
