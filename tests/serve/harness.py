"""The real service and the scripted model, each in its own process, driven over loopback."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx

START_DEADLINE_S = 60.0


class Output:
    """A process's stdout, read line by line by a thread (so a wait never blocks on a pipe)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        self.process = process
        self.lines: list[str] = []
        self._arrived: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(process.stdout,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))
            self._arrived.put(line)
        self._arrived.put(None)

    def until(self, pattern: str, deadline_s: float) -> list[str]:
        """Lines so far, once one matches `pattern` (which it must within the deadline)."""
        end = time.monotonic() + deadline_s
        seen = 0
        while time.monotonic() < end:
            if any(re.search(pattern, line) for line in self.lines[seen:]):
                return list(self.lines)
            seen = len(self.lines)
            try:
                if self._arrived.get(timeout=0.2) is None:
                    break
            except queue.Empty:
                continue
        if any(re.search(pattern, line) for line in self.lines):
            return list(self.lines)
        stderr = ""
        with contextlib.suppress(subprocess.TimeoutExpired):
            # stdout may close a moment before the exit is visible: wait for it, so the
            # failure shows the process's own last words.
            self.process.wait(timeout=5)
        if self.process.poll() is not None and self.process.stderr is not None:
            stderr = f"(exit {self.process.returncode}) {self.process.stderr.read()}"
        raise AssertionError(f"no line matching {pattern!r} in {self.lines}; stderr: {stderr}")

    def text(self) -> str:
        self._thread.join(timeout=30)
        return "\n".join(self.lines)


@dataclass
class Service:
    """`python -m hologram serve` as a subprocess, on a free port."""

    data_dir: Path
    host: str = "127.0.0.1"
    env: dict[str, str] = field(default_factory=dict)
    drain_timeout: float = 10.0
    process: subprocess.Popen[str] | None = None
    output: Output | None = None
    lines: list[str] = field(default_factory=list)
    url: str = ""

    def start(self) -> Service:
        environ = {**os.environ, **self.env}
        environ.pop("HOLOGRAM_DATA", None)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hologram",
                "serve",
                "--data",
                str(self.data_dir),
                "--host",
                self.host,
                "--port",
                "0",
                "--drain-timeout",
                str(self.drain_timeout),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environ,
        )
        self.output = Output(self.process)
        self.lines = self.output.until(r"^hologram ready", START_DEADLINE_S)
        port = re.search(r"serving http://[^:]+:(\d+)/", self.lines[-1])
        assert port is not None, self.lines[-1]
        # Whatever the bind address, the tests connect over loopback.
        self.url = f"http://127.0.0.1:{port.group(1)}"
        return self

    @property
    def api(self) -> str:
        return self.url + "/api/v1"

    def client(self, token: str | None = None, timeout: float = 30.0) -> httpx.Client:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.api, headers=headers, timeout=timeout)

    def terminate(self, deadline_s: float = 60.0) -> tuple[int, str, str]:
        """SIGTERM; (exit code, stdout, stderr) once it has exited."""
        assert self.process is not None and self.output is not None
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=deadline_s)
        assert self.process.stderr is not None
        return code, self.output.text(), self.process.stderr.read()

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=30)

    def ensure_stopped(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


@dataclass
class ScriptedModel:
    """`python -m hologram scripted-model` in its own process: it outlives a killed service,
    and its record of requests shows what the service asked, and how often."""

    process: subprocess.Popen[str] | None = None
    base_url: str = ""

    def start(self) -> ScriptedModel:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hologram", "scripted-model", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = Output(self.process).until(r"http://127\.0\.0\.1:\d+/v1", START_DEADLINE_S)[-1]
        found = re.search(r"http://127\.0\.0\.1:\d+/v1", line)
        assert found is not None
        self.base_url = found.group(0)
        return self

    @property
    def env(self) -> dict[str, str]:
        return {"HOLOGRAM_LLM_BASE_URL": self.base_url, "HOLOGRAM_LLM_API_KEY": "sk-scripted"}

    @property
    def control(self) -> str:
        return self.base_url.removesuffix("/v1") + "/_scripted"

    def queue(self, *replies: dict[str, Any]) -> None:
        httpx.post(self.control + "/replies", json=list(replies), timeout=10).raise_for_status()

    def asked(self) -> list[str]:
        """The last user message of every chat request received, in order."""
        requests = httpx.get(self.control + "/requests", timeout=10).json()
        texts = []
        for request in requests:
            body = json.loads(request["body"] or "{}")
            users = [m for m in body.get("messages", []) if m.get("role") == "user"]
            if users:
                texts.append(users[-1]["content"])
        return texts

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


def events(response: httpx.Response, count: int) -> Iterator[dict[str, Any]]:
    """Parse server-sent events from a streaming response: dicts with id, event, data."""
    current: dict[str, Any] = {}
    seen = 0
    for line in response.iter_lines():
        if not line:
            if "event" in current:
                if "data" in current:
                    current["data"] = json.loads(current["data"])
                yield current
                seen += 1
                if seen >= count:
                    return
            current = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(": ")
        current[name] = value
