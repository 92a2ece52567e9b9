"""One model round's answer as it streams: each piece of the reply goes out at once as an
`agent_output_delta` event carrying the input it answers, so the page, `python -m hologram
chat` and the notebook show the reply as it is written.

The text received so far is kept on the object, so a turn stopped mid-stream can record the
partial reply. Cancelling the task that reads the stream (a preemption, a stop) cuts it at
once: the cancellation lands in the await on the next chunk, which closes the HTTP response.
An answer that begins again (the model asked again after a retry, or after a preemption cut
it off) is announced by a delta with `restart` set: what was shown of it is void.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from hologram.llm import CompletionResponse, StreamChunk
from hologram.sdk import AgentOutputDelta

Publish = Callable[[AgentOutputDelta], None]


class ReplyStream:
    def __init__(self, publish: Publish, input_id: int | None, round_: int, quiet: bool) -> None:
        self._publish = publish
        self._input_id = input_id
        self.round = round_
        self._quiet = quiet
        """Publish no deltas (an internal turn whose reply goes nowhere)."""
        self.pieces: list[str] = []
        self.shown = False
        """Whether any piece of this answer (its text or its reasoning) went out."""
        self.complete = False
        """Whether the stream was read to its end (one cut off by a preemption was not)."""

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def restart(self) -> None:
        """The answer begins again: whoever typed its pieces clears them."""
        self.pieces.clear()
        self._delta(text="", restart=True)

    def _delta(self, text: str, *, restart: bool = False, reasoning: bool = False) -> None:
        if not self._quiet:
            self._publish(
                AgentOutputDelta(
                    input_id=self._input_id,
                    round=self.round,
                    text=text,
                    restart=restart,
                    reasoning=reasoning,
                )
            )

    async def read(self, chunks: AsyncIterator[StreamChunk]) -> CompletionResponse:
        """Read the stream to its end; its last chunk carries the whole answer."""
        response: CompletionResponse | None = None
        async for chunk in chunks:
            if chunk.restart:
                self.restart()  # the source is asked again after a retry
            typed = False
            if chunk.reasoning_content:
                self._delta(text=chunk.reasoning_content, reasoning=True)
                typed = True
            if chunk.content:
                self.pieces.append(chunk.content)
                self._delta(text=chunk.content)
                typed = True
            if typed and not self._quiet:
                self.shown = True
                # The rest of the stream is often in the socket's buffer already, and reading
                # it never suspends: without a pass of the loop, whoever waits on the delta
                # (an SSE client's queue, the notebook's cell) would see it only after the
                # whole reply, and the turn's end, had been processed.
                await asyncio.sleep(0)
            if chunk.done:
                response = chunk.response
        if response is None:
            raise RuntimeError("the model's stream ended without its final chunk")
        self.complete = True
        return response
