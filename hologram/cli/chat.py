"""The chat terminal (`python -m hologram chat`): a running service's user, on `hologram.client`.

Each line typed is an input. Replies come from the service's event stream, so what the
agent does is shown as it happens: each model round that calls tools, then the reply.
Commands: `/stop`, `/interrupt L1|L2|L3 TEXT`, `/status`, `/quit`. At the end of input
(Ctrl-D, or the end of a pipe) it waits for the replies still owed, then exits. A refusal
or a failed request is reported in one line and the chat goes on; the client sends a
request once more when the server had just closed its keep-alive connection.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import httpx

from hologram.client import AsyncClient, HologramError, StreamEvent
from hologram.kernel import KernelTasks
from hologram.sdk import AgentLLMChain, AgentOutput, AgentOutputDelta, EndedBy, EventType
from hologram.serve import Ack

REPLY_WAIT_S = 120.0
STREAM_TYPES = (EventType.AGENT_OUTPUT_DELTA, EventType.AGENT_LLM_CHAIN, EventType.AGENT_OUTPUT)


def _out(text: str) -> None:
    print(text, flush=True)


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _one_line(exc: Exception) -> str:
    if isinstance(exc, HologramError):
        return exc.message
    return f"{type(exc).__name__}: {exc}".replace("\n", " ")


class Chat:
    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self.owed: set[int] = set()
        self.answered: set[int] = set()
        self.settled = asyncio.Event()
        self.listening = asyncio.Event()
        self.typing: tuple[Any, Any] | None = None
        """(input, round) of the reply being typed on the current line."""
        self.typed = ""

    def say(self, text: str) -> None:
        """One whole line. A reply being typed is ended first: a line written into the middle
        of it would split it, and its rest is then typed on a fresh line of its own."""
        self.end_line()
        _out(text)

    # ---- the event stream ------------------------------------------------------------------

    async def listen(self) -> None:
        last: int | None = None
        while True:
            try:
                stream = self.client.events(
                    STREAM_TYPES, last_event_id=last, opened=self.listening.set
                )
                async for event in stream:
                    last = event.seq if event.seq is not None else last
                    self.show(event)
                return
            except (httpx.HTTPError, HologramError) as exc:
                self.say(f"! event stream interrupted ({_one_line(exc)}); reconnecting")
            await asyncio.sleep(0.5)

    def show(self, event: StreamEvent) -> None:
        payload, ident = event.typed_payload(), event.input
        if isinstance(payload, AgentOutputDelta):
            self.type_out(payload)
            return
        if isinstance(payload, AgentLLMChain):
            if payload.tool_calls:
                self.end_line()
            for call in payload.tool_calls:
                self.say(f"  · round {payload.round}: {call['name']}")
            return
        if not isinstance(payload, AgentOutput):
            return
        if ident in self.answered:
            self.end_line()
            return  # already settled by the answer to /stop
        self.show_reply(ident, payload)
        if ident is not None:
            self.settle(ident)

    def show_reply(self, ident: int | None, payload: AgentOutput) -> None:
        typed, self.typed = self.typed, ""
        was_typing, self.typing = self.typing, None
        if payload.ended_by == EndedBy.STOPPED:
            _write("\n" if was_typing else "")
            self.say(f"[#{ident}] (stopped)")
        elif was_typing and was_typing[0] == ident and typed.strip() == payload.text.strip():
            _write("\n")  # the reply is on the screen already, as it streamed
        else:
            _write("\n" if was_typing else "")
            self.say(f"[#{ident}] hologram> {payload.text}")

    def type_out(self, payload: AgentOutputDelta) -> None:
        """A piece of a reply, written as it comes."""
        if payload.reasoning:
            return
        ident = payload.input_id
        where = (ident, payload.round)
        if payload.restart or where != self.typing:
            self.end_line()
            _write(f"[#{ident}] hologram> ")
            self.typing, self.typed = where, ""
        self.typed += payload.text
        _write(payload.text)

    def end_line(self) -> None:
        if self.typing is not None:
            _write("\n")
            self.typing, self.typed = None, ""

    def settle(self, ident: int) -> None:
        self.answered.add(ident)
        self.owed.discard(ident)
        if not self.owed:
            self.settled.set()

    # ---- commands ----------------------------------------------------------------------------

    def sent(self, ack: Ack) -> None:
        if ack.id not in self.answered:
            self.owed.add(ack.id)
            self.settled.clear()
        self.say(f"[#{ack.id}] sent")

    async def command(self, line: str) -> bool:
        """Run one line; False to quit. A failure is one line of output, never a traceback."""
        if line in ("/quit", "/exit"):
            return False
        try:
            await self.run(line)
        except (httpx.HTTPError, HologramError) as exc:
            self.say(f"! {_one_line(exc)}")
        return True

    async def run(self, line: str) -> None:
        if line == "/stop":
            stopped = (await self.client.stop()).stopped
            self.say(f"stopped: {stopped or 'nothing was running'}")
            # A turn cut off mid-way sends no reply event: the ids the stop covered are
            # settled here.
            for ident in stopped:
                if ident not in self.answered:
                    self.say(f"[#{ident}] (stopped)")
                    self.settle(ident)
        elif line.startswith("/interrupt"):
            parts = line.split(maxsplit=2)
            if len(parts) < 3:
                self.say("! usage: /interrupt L1|L2|L3 TEXT")
            else:
                self.sent(await self.client.interrupt(parts[2], level=parts[1]))
        elif line == "/status":
            await self.status()
        elif line.startswith("/"):
            self.say("! commands: /stop, /interrupt L1|L2|L3 TEXT, /status, /quit")
        else:
            self.sent(await self.client.send(line))

    async def status(self) -> None:
        status = await self.client.status()
        scheduler, llm = status.scheduler, status.llm
        model = f"offline scripted model ({llm.hint})" if llm.offline else llm.sources[0]["source"]
        self.say(
            f"status: {status.kernel['phase']}; running {scheduler['running']}, "
            f"stack {scheduler['stack']}, queue {scheduler['queue']}; model: {model}; "
            f"inputs {status.inputs}; memory {status.memory}"
        )


async def chat(url: str, token: str | None = None) -> int:
    token = token or os.environ.get("HOLOGRAM_TOKEN")
    async with AsyncClient(url, token=token) as client:
        try:
            await client.status()
        except (httpx.HTTPError, HologramError) as exc:
            print(
                f"hologram chat: cannot reach {client.url}/api/v1: {_one_line(exc)}",
                file=sys.stderr,
            )
            return 1
        session = Chat(client)
        tasks = KernelTasks().scope("chat")
        listener = tasks.spawn(session.listen(), name="chat-events")
        await session.listening.wait()
        _out(f"connected to {url}; /stop, /interrupt L3 TEXT, /status, /quit")
        try:
            while True:
                line = await asyncio.to_thread(sys.stdin.readline)
                if not line:
                    break
                if line.strip() and not await session.command(line.strip()):
                    break
            if session.owed:
                try:
                    async with asyncio.timeout(REPLY_WAIT_S):
                        await session.settled.wait()
                except TimeoutError:
                    session.say(f"! no reply yet for {sorted(session.owed)}")
                    return 1
        finally:
            listener.cancel()
            await tasks.close()
    return 0
