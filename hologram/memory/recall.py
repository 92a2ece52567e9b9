"""What memory puts into the system prompt, and the `Memory` facility the turn holds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from hologram.memory.coldcontext import ColdContext, ColdHit
from hologram.memory.context import ContextWindow
from hologram.memory.embedding import Embedder
from hologram.sdk import MemItem

RELATED_DOCS_HEADER = "[Related Memory Docs]"

Estimate = Callable[[str], int]
"""Tokens of a text: the provider layer's estimator, passed in so there is only one."""


def doc_line(hit: ColdHit) -> str:
    when = datetime.fromtimestamp(hit.doc.created_at, UTC).strftime("%Y-%m-%d %H:%M")
    where = hit.doc.channel or hit.doc.source
    return f"- ({when} UTC, {where}) {hit.doc.text}"


def related_docs_section(hits: Sequence[ColdHit], budget_tokens: int, estimate: Estimate) -> str:
    """The "[Related Memory Docs]" section: the best hits first, as many as fit in
    `budget_tokens` with the header; "" when none fits or none was found. A ceiling, not a
    fill target: a budget larger than the hits leaves the rest unused."""
    lines = [RELATED_DOCS_HEADER]
    used = estimate(RELATED_DOCS_HEADER)
    for hit in hits:
        line = doc_line(hit)
        cost = estimate(line)
        if used + cost > budget_tokens:
            break
        lines.append(line)
        used += cost
    return "\n".join(lines) if len(lines) > 1 else ""


@dataclass
class Memory:
    """`state.memory`: the context window, the embedder it shares with the cold context,
    and the prompt sections memory contributes."""

    context: ContextWindow
    embedder: Embedder
    cold: ColdContext
    query_top: Callable[[], int]

    async def recall_sections(
        self, query: str, budget_tokens: int, estimate: Estimate
    ) -> list[str]:
        """Prompt sections for `query` within `budget_tokens` (the memory-recall budget),
        in order. Empty when nothing relevant is stored."""
        hits = await self.cold.query(query, self.query_top())
        section = related_docs_section(hits, budget_tokens, estimate)
        return [section] if section else []

    async def recall(self, query: str) -> list[MemItem]:
        """The cold-context documents related to `query`, best first, as `MemItem`s (for a
        prompt builder that does its own budgeting). Nothing when nothing is related."""
        hits = await self.cold.query(query, self.query_top())
        return [MemItem(doc_line(hit)[2:], "coldcontext", hit.score) for hit in hits]
