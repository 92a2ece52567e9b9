"""The service's door for input: open until shutdown begins, then closed with a 503.

Tickets whose outcome nobody awaits (POST /input) still have their outcome read, so a
stopped input is not reported as an unretrieved exception.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from hologram.agent import Ticket
from hologram.facade import Kernel
from hologram.media import MediaError, Upload
from hologram.sdk import OutputCap
from hologram.serve.bodies import (
    HTTP_CHANNEL,
    MCP_CHANNEL,
    OPENAI_CHANNEL,
    ApiError,
    InputBody,
)

SERVICE_CHANNELS = {
    HTTP_CHANNEL: "a client of the HTTP API (the web page or the terminal chat); plain text "
    "or JSON",
    OPENAI_CHANNEL: "a client of the OpenAI-compatible endpoint (a chat UI or an OpenAI SDK); "
    "plain text, shown as a chat message",
    MCP_CHANNEL: "another agent or an editor, through the MCP server; plain text",
}
"""The output channels of the service's doors: the model is told which kind of client it
answers (an API client, a chat UI, another agent), not a notebook."""


async def _delivered(payload: str, meta: dict[str, object], type: str) -> str:
    # The reply of an input that came through a door reaches its sender through its ticket
    # (POST /input/sync, a chat completion, an MCP call) or the event stream (agent_output);
    # the channel only acknowledges.
    return "delivered to the client"


def register_service_channels(kernel: Kernel) -> None:
    """The output channels of the service's doors (`SERVICE_CHANNELS`): replies to inputs
    that came through one go to its channel."""
    channels = kernel.state.channels
    if channels is None:
        return
    for name, description in SERVICE_CHANNELS.items():
        if name not in channels:
            channels.register_output_channel(
                name, OutputCap.TEXT | OutputCap.STRUCTURED, description, _delivered, owner="serve"
            )


class Intake:
    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.accepting = True
        self.acknowledged = 0

    def channels(self) -> list[str]:
        channels = self.kernel.state.channels
        return [] if channels is None else [c.name for c in channels.channels()]

    async def submit(self, body: InputBody, media: Sequence[Upload] = ()) -> Ticket:
        """Journal and queue `body` with `media` (decoded already: base64 items, form file
        parts or data: URLs); a refused item is the media store's 4xx, nothing kept."""
        if not self.accepting:
            raise ApiError(503, "the service is shutting down and takes no more input")
        try:
            ticket = await self.kernel.inject(
                body.text, body.channel, level=body.priority, source=body.source, media=list(media)
            )
        except MediaError as exc:
            raise ApiError(exc.status if exc.status < 500 else 400, str(exc)) from None
        self.acknowledged += 1
        ticket.outcome.add_done_callback(_read_outcome)
        return ticket

    def close(self) -> None:
        self.accepting = False

    async def drain(self, seconds: float) -> bool:
        """Wait until no input runs or waits, at most `seconds`; True if it got there."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            status = self.kernel.inputs.status()
            if status["running"] is None and not status["stack"] and not status["pending_inputs"]:
                return True
            await asyncio.sleep(0.05)
        return False


def _read_outcome(outcome: asyncio.Future[object]) -> None:
    if not outcome.cancelled():
        outcome.exception()
