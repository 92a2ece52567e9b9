"""`python -m hologram chat`: a terminal client of a running service.

Each line typed is an input. Replies come from the service's event stream, so what the
agent does is shown as it happens: the reply is typed out as the model streams it
(`agent_output_delta`), with each model round that calls tools between.
Commands: `/stop`, `/interrupt L1|L2|L3 TEXT`, `/status`, `/quit`. At the end of input
(Ctrl-D, or the end of a pipe) it waits for the replies still owed, then exits.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import httpx

from hologram.kernel.tasks import KernelTasks
from hologram.sdk import EndedBy

REPLY_WAIT_S = 120.0
STREAM_TYPES = ("agent_output_delta", "agent_llm_chain", "agent_output")


def _out(text: str) -> None:
    print(text, flush=True)


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


class Chat:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.owed: set[int] = set()
        self.answered: set[int] = set()
        self.settled = asyncio.Event()
        self.listening = asyncio.Event()
        self.typing: tuple[Any, Any] | None = None
        """(input, round) of the reply being typed on the current line."""
        self.typed = ""

    # ---- the event stream ------------------------------------------------------------------

    async def listen(self) -> None:
        last: str | None = None
        while True:
            headers = {"last-event-id": last} if last else {}
            try:
                async with self.http.stream(
                    "GET",
                    "/events",
                    params={"types": ",".join(STREAM_TYPES)},
                    headers=headers,
                    timeout=httpx.Timeout(10, read=None),
                ) as stream:
                    stream.raise_for_status()
                    self.listening.set()
                    fields: dict[str, str] = {}
                    async for line in stream.aiter_lines():
                        if line:
                            name, _, value = line.partition(": ")
                            fields[name] = value
                            continue
                        if "id" in fields:
                            last = fields["id"]
                        if "data" in fields and fields.get("event") in STREAM_TYPES:
                            self.show(fields["event"], json.loads(fields["data"]))
                        fields = {}
            except httpx.HTTPError as exc:
                _out(f"! event stream interrupted ({exc}); reconnecting")
            await asyncio.sleep(0.5)

    def show(self, kind: str, event: dict[str, Any]) -> None:
        payload, ident = event["payload"], event.get("input")
        if kind == "agent_output_delta":
            self.type_out(payload)
            return
        if kind == "agent_llm_chain":
            if payload.get("tool_calls"):
                self.end_line()
            for call in payload.get("tool_calls") or []:
                _out(f"  · round {payload.get('round')}: {call['name']}")
            return
        if ident in self.answered:
            self.end_line()
            return  # already settled by the answer to /stop
        typed, self.typed = self.typed, ""
        was_typing, self.typing = self.typing, None
        if payload.get("ended_by") == EndedBy.STOPPED:
            _write("\n" if was_typing else "")
            _out(f"[#{ident}] (stopped)")
        elif (
            was_typing
            and was_typing[0] == ident
            and typed.strip() == payload.get("text", "").strip()
        ):
            _write("\n")  # the reply is on the screen already, as it streamed
        else:
            _write("\n" if was_typing else "")
            _out(f"[#{ident}] hologram> {payload.get('text', '')}")
        if ident is not None:
            self.settle(ident)

    def type_out(self, payload: dict[str, Any]) -> None:
        """A piece of a reply, written as it comes."""
        if payload.get("reasoning"):
            return
        ident = payload.get("input_id")
        where = (ident, payload.get("round"))
        if payload.get("restart") or where != self.typing:
            self.end_line()
            _write(f"[#{ident}] hologram> ")
            self.typing, self.typed = where, ""
        self.typed += payload.get("text", "")
        _write(payload.get("text", ""))

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

    async def send(self, path: str, body: dict[str, Any]) -> None:
        answer = await self.http.post(path, json=body)
        if answer.status_code >= 400:
            _out(f"! {answer.json().get('error', answer.text)}")
            return
        ident = answer.json()["id"]
        if ident not in self.answered:
            self.owed.add(ident)
            self.settled.clear()
        _out(f"[#{ident}] sent")

    async def command(self, line: str) -> bool:
        """Run one line; False to quit."""
        if line in ("/quit", "/exit"):
            return False
        if line == "/stop":
            stopped = (await self.http.post("/stop")).json()["stopped"]
            _out(f"stopped: {stopped or 'nothing was running'}")
            # A turn cut off mid-way sends no reply event: the ids the stop covered are
            # settled here.
            for ident in stopped:
                if ident not in self.answered:
                    _out(f"[#{ident}] (stopped)")
                    self.settle(ident)
        elif line.startswith("/interrupt"):
            parts = line.split(maxsplit=2)
            if len(parts) < 3:
                _out("! usage: /interrupt L1|L2|L3 TEXT")
            else:
                await self.send("/interrupt", {"text": parts[2], "level": parts[1]})
        elif line == "/status":
            await self.status()
        elif line.startswith("/"):
            _out("! commands: /stop, /interrupt L1|L2|L3 TEXT, /status, /quit")
        else:
            await self.send("/input", {"text": line})
        return True

    async def status(self) -> None:
        status = (await self.http.get("/status")).json()
        scheduler, llm = status["scheduler"], status["llm"]
        model = "offline scripted model" if llm["offline"] else llm["sources"][0]["source"]
        _out(
            f"status: {status['kernel']['phase']}; running {scheduler['running']}, "
            f"stack {scheduler['stack']}, queue {scheduler['queue']}; model: {model}; "
            f"inputs {status['inputs']}; memory {status['memory']}"
        )


async def chat(url: str, token: str | None = None) -> int:
    token = token or os.environ.get("HOLOGRAM_TOKEN")
    headers = {"authorization": f"Bearer {token}"} if token else {}
    base = url.rstrip("/") + "/api/v1"
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as http:
        try:
            (await http.get("/status")).raise_for_status()
        except httpx.HTTPError as exc:
            print(f"hologram chat: cannot reach {base}: {exc}", file=sys.stderr)
            return 1
        session = Chat(http)
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
                    _out(f"! no reply yet for {sorted(session.owed)}")
                    return 1
        finally:
            listener.cancel()
            await tasks.close()
    return 0
