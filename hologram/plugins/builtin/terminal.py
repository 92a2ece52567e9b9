"""One PTY terminal session of agentcli: a program on a real pseudo-terminal, its output
buffered for the model and streamed to the views.

The program leads its own session with the PTY as its controlling terminal, so job control,
`isatty()` and line editing behave as at a console, and closing sends SIGHUP to its whole
process group, as hanging up a terminal does (SIGKILL follows if it lingers). Output is read
from the master side without blocking the loop (`add_reader`). What the model has not read
yet is kept up to `buffer_bytes` (the oldest is dropped and counted when a program floods);
what the views get is the same text, batched per `FLUSH_S` and at most `EVENT_BYTES` an event.

Escape sequences (colours, cursor moves, bracketed paste) are removed and line ends are made
plain before the text reaches the model or an event: both read lines, not a screen.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import os
import pty
import re
import signal
import struct
import termios
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hologram.plugins.confinement import confine

FLUSH_S = 0.05
EVENT_BYTES = 8192
HISTORY = 200
"""Lines written to a terminal that it remembers (`terminal_list` shows the last few)."""
HANGUP_GRACE_S = 0.5
WRITE_TIMEOUT_S = 2.0
RECENT = 4096
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, modes
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: window titles
    r"|\x1b[@-Z\\-_]"  # two-character escapes
    r"|[\x00-\x08\x0b-\x1f\x7f]"  # other control characters (tabs and newlines stay)
)


def plain(text: str) -> str:
    """Terminal output as lines: escape sequences and control characters removed."""
    return _ESCAPES.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


@dataclass(frozen=True, slots=True)
class Spawn:
    """How to start the program of one terminal."""

    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str]
    network: bool
    buffer_bytes: int
    rows: int = 24
    columns: int = 120


Sink = Callable[[str, dict[str, Any]], None]
"""sink(kind, fields): told of output ("output") and of the end ("exited")."""


class Terminal:
    def __init__(
        self,
        terminal_id: str,
        name: str,
        spawn: Spawn,
        sink: Sink,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.id = terminal_id
        self.name = name
        self.spawn = spawn
        self._sink = sink
        self.process: asyncio.subprocess.Process | None = None
        self._master = -1
        self._unread = bytearray()
        self.dropped = 0
        """Bytes of unread output lost to the buffer's bound since the last read."""
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._batch: list[str] = []
        self._batch_bytes = 0
        self._batch_dropped = 0
        self._flush: asyncio.TimerHandle | None = None
        self._arrived = asyncio.Event()
        self.eof = asyncio.Event()
        self.history: deque[str] = deque(maxlen=HISTORY)
        self._now = now
        self._recent = ""
        self.created = time.time()
        self.last_active = now()
        """When the model last created, wrote or read it (the idle timeout counts from here)."""
        self.exit_status: int | None = None

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def start(self) -> None:
        master, slave = pty.openpty()
        size = struct.pack("HHHH", self.spawn.rows, self.spawn.columns, 0, 0)
        fcntl.ioctl(slave, termios.TIOCSWINSZ, size)
        leave = confine(self.spawn.network)

        def become_terminal_session() -> None:
            leave()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.spawn.argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=self.spawn.cwd,
                env=dict(self.spawn.env),
                start_new_session=True,
                preexec_fn=become_terminal_session,
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        self._master = master
        asyncio.get_running_loop().add_reader(master, self._readable)

    # ---- output -----------------------------------------------------------------------------

    def _readable(self) -> None:
        try:
            data = os.read(self._master, 65536)
        except BlockingIOError:
            return
        except OSError:  # EIO: every holder of the PTY's other side has closed it
            data = b""
        if not data:
            self._stop_reading()
            return
        self._keep(data)
        self._stream(data)
        self._arrived.set()

    def _keep(self, data: bytes) -> None:
        self._unread += data
        over = len(self._unread) - self.spawn.buffer_bytes
        if over > 0:
            del self._unread[:over]
            self.dropped += over

    def _stream(self, data: bytes) -> None:
        text = plain(self._decoder.decode(data))
        self._recent = (self._recent + text)[-RECENT:]
        room = EVENT_BYTES - self._batch_bytes
        if len(text) > room:
            self._batch_dropped += len(text) - room
            text = text[:room]
        if text:
            self._batch.append(text)
            self._batch_bytes += len(text)
        if self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(FLUSH_S, self.flush)

    def flush(self) -> None:
        """Hand what output is batched to the sink now."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if self._batch or self._batch_dropped:
            text, dropped = "".join(self._batch), self._batch_dropped
            self._batch, self._batch_bytes, self._batch_dropped = [], 0, 0
            self._sink("output", {"data": text, "dropped": dropped})

    def _stop_reading(self) -> None:
        if self._master >= 0:
            asyncio.get_running_loop().remove_reader(self._master)
            self.eof.set()

    def take(self) -> tuple[str, int]:
        """The output not read yet, and how many bytes of it the bound dropped."""
        text = plain(bytes(self._unread).decode("utf-8", "replace"))
        dropped, self.dropped = self.dropped, 0
        self._unread.clear()
        self._arrived.clear()
        self.last_active = self._now()
        return text, dropped

    def peek(self) -> str:
        """The last few KiB of output, read or not (what a notification quotes)."""
        return self._recent

    async def settle(self, wait_s: float, quiet_s: float = 0.25) -> None:
        """Wait until output has come and then paused for `quiet_s`, or the program ended,
        at most `wait_s` in all."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while (left := deadline - loop.time()) > 0 and not self.eof.is_set():
            window = quiet_s if self._unread else left
            self._arrived.clear()
            try:
                async with asyncio.timeout(min(window, left)):
                    await self._arrived.wait()
            except TimeoutError:
                if self._unread:
                    return

    # ---- input and the end --------------------------------------------------------------------

    async def write(self, text: str) -> None:
        if not self.running or self._master < 0:
            raise RuntimeError(
                f"terminal {self.id} is not running (exit status {self.exit_status})"
            )
        self.history.extend(line for line in text.splitlines() if line.strip())
        data = text.encode("utf-8")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WRITE_TIMEOUT_S
        while data:  # a PTY's input queue holds a few KiB: a long paste goes in pieces
            try:
                data = data[os.write(self._master, data) :]
            except BlockingIOError:
                if loop.time() > deadline:
                    raise RuntimeError(
                        f"terminal {self.id} is not reading its input; "
                        f"{len(data)} bytes were not written"
                    ) from None
                await asyncio.sleep(0.005)
        self.last_active = self._now()

    async def wait_exit(self) -> int:
        """The program's exit status once it has ended and its last output is read."""
        assert self.process is not None
        status = await self.process.wait()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(HANGUP_GRACE_S):
                await self.eof.wait()
        self.exit_status = status
        self.flush()
        self._sink("exited", {"status": status})
        return status

    async def close(self) -> None:
        """Hang up: SIGHUP to every process of the terminal's session (job control puts
        background jobs in groups of their own), SIGKILL to what lingers."""
        process = self.process
        if process is not None:
            for sig in (signal.SIGHUP, signal.SIGKILL):
                members = session_members(process.pid)
                for pid in members:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, sig)
                if process.returncode is None:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(HANGUP_GRACE_S):
                            await process.wait()
                if process.returncode is not None and not session_members(process.pid):
                    break
        self._stop_reading()
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if self._master >= 0:
            os.close(self._master)
            self._master = -1


def session_members(session: int) -> list[int]:
    """The live processes of session `session` (Linux: from /proc; elsewhere its leader)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return [session]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # fields: state, ppid, pgrp, session, ...
        if fields[0] != "Z" and int(fields[3]) == session:
            members.append(int(entry.name))
    return members
