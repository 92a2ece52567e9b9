"""What the turn needs from parts that arrive later, as small protocols.

The model is whatever answers a `CompletionRequest` (the provider manager, with its ordered
fallback). Memory is optional: until the memory modules exist the turn's memory steps are
no-ops, as the spec's built-in tools are present only when their module is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Protocol

from hologram.llm import CompletionRequest, CompletionResponse, StreamChunk
from hologram.sdk import MediaRef, MemItem, StageContext, ToolDef, ToolResult

ToolSource = Callable[[], Iterable[ToolDef]]
"""One place tools come from; asked again every round (spec: buildToolDefs re-aggregates)."""


class ChatModel(Protocol):
    async def chat(self, request: CompletionRequest) -> CompletionResponse: ...

    def chat_stream(self, request: CompletionRequest) -> AsyncIterator[StreamChunk]: ...


class TurnMemory(Protocol):
    """The memory steps of a turn (spec: Context.Append, Prune, buildMemoryContext)."""

    async def append_input(
        self,
        ctx: StageContext,
        *,
        input_id: int | None = None,
        attempt: int = 1,
        media: Sequence[MediaRef] = (),
    ) -> object:
        """Record the input with its media (references); a re-run (`attempt` > 1) records
        nothing the earlier run did. What it returns (the recorded event) the turn ignores."""
        ...

    async def prune(self, query: str) -> object: ...

    async def flush(self) -> None:
        """Wait until what the turn recorded is durable (the journal then marks it done);
        raises if some of it could not be stored."""
        ...

    async def recall(self, query: str, budget_tokens: int) -> list[MemItem]: ...

    def timeline(self) -> list[str]: ...

    def window_media(self) -> list[MediaRef]:
        """Media of the turns still in the context window (shown again on each request)."""
        ...

    async def append_tool_results(self, results: list[ToolResult]) -> None: ...

    async def append_reply(self, ctx: StageContext) -> object: ...

    def tools(self) -> list[ToolDef]: ...


class TurnKnowledge(Protocol):
    """The knowledge step of a turn (spec: persona + memory + knowledge + context)."""

    async def passages(self, query: str, top: int) -> list[str]: ...
