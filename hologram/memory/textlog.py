"""The text log (spec: text memory): the raw conversation as JSON lines, one file per UTC
day, a new part when a file passes `max_bytes`, and files older than `retention_days`
deleted as days pass."""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

from hologram.sdk import Clock

log = logging.getLogger(__name__)

_NAME = re.compile(r"^text-(\d{4}-\d{2}-\d{2})\.(\d+)\.jsonl$")


class TextLog:
    def __init__(
        self,
        directory: Path,
        clock: Clock,
        *,
        max_bytes: int = 10_000_000,
        retention_days: int = 30,
    ) -> None:
        if max_bytes <= 0 or retention_days <= 0:
            raise ValueError("max_bytes and retention_days must be positive")
        self.directory = directory
        self.clock = clock
        self.max_bytes = max_bytes
        self.retention_days = retention_days
        self._day: str | None = None
        # The part being written, open, and its size: a line costs one write call, not a
        # listing of the directory and an open.
        self._part: BinaryIO | None = None
        self._part_size = 0

    def _today(self) -> str:
        return datetime.fromtimestamp(self.clock.now(), UTC).strftime("%Y-%m-%d")

    def files(self, day: str | None = None) -> list[Path]:
        """Log files, oldest first (of one day when given)."""
        found = []
        for path in self.directory.glob("text-*.jsonl"):
            match = _NAME.match(path.name)
            if match and (day is None or match.group(1) == day):
                found.append((match.group(1), int(match.group(2)), path))
        return [path for _, _, path in sorted(found)]

    def _current(self, size: int, day: str) -> Path:
        parts = self.files(day)
        if parts and parts[-1].stat().st_size + size <= self.max_bytes:
            return parts[-1]
        if parts and parts[-1].stat().st_size == 0:
            return parts[-1]
        return self.directory / f"text-{day}.{len(parts)}.jsonl"

    def _expire(self) -> list[Path]:
        cutoff = datetime.fromtimestamp(self.clock.now(), UTC) - timedelta(days=self.retention_days)
        oldest_kept = cutoff.strftime("%Y-%m-%d")
        removed = []
        for path in self.files():
            match = _NAME.match(path.name)
            if match and match.group(1) < oldest_kept:
                path.unlink(missing_ok=True)
                removed.append(path)
        return removed

    def _write(self, line: bytes, day: str) -> None:
        if day != self._day:
            self._expire()
            self._day = day
            self.close()
        if self._part is None or self._part_size + len(line) > self.max_bytes:
            self.close()
            self.directory.mkdir(parents=True, exist_ok=True)
            self._part = self._current(len(line), day).open("ab", buffering=0)
            self._part_size = self._part.tell()
        # Unbuffered: the line is in the file (the page cache) when this returns, so a
        # killed process loses none; the turn store, not this log, is memory's record.
        self._part.write(line)
        self._part_size += len(line)

    def close(self) -> None:
        """Close the part being written (the next line opens it again)."""
        if self._part is not None:
            self._part.close()
            self._part = None

    async def write(self, role: str, text: str, **fields: Any) -> None:
        """Append one utterance. `role` says who (user, agent, tool, system)."""
        if not isinstance(role, str) or not role or not isinstance(text, str):
            raise ValueError("a text-log entry needs a role and a text")
        record = {"ts": self.clock.now(), "role": role, "text": text, **fields}
        line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode()
        # A line is one write call to an open file: cheaper inline than a hop to a thread.
        self._write(line, self._today())

    def read(self, day: str | None = None) -> list[dict[str, Any]]:
        """Entries of one UTC day (YYYY-MM-DD; default today), in order. Unreadable lines
        are reported and skipped."""
        records = []
        for path in self.files(day or self._today()):
            for number, raw in enumerate(path.read_bytes().splitlines(), 1):
                try:
                    records.append(json.loads(raw))
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    log.warning("text log %s line %d unreadable (%s); skipped", path, number, exc)
        return records
