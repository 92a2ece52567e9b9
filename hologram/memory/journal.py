"""A snapshot plus an append-only write-ahead log, both JSON lines.

`log` returns only after the line is fsync'd, so whatever a caller acknowledged after it
survives a SIGKILL. `compact` writes a new snapshot to a temporary file, fsyncs it, renames
it over the old one (atomic on POSIX) and only then empties the log; a crash in between
replays the log over the new snapshot, which is why every operation logged must be
idempotent. A corrupt line in either file is reported, skipped and kept aside in a
``.corrupt-<time>`` copy; the lines around it are kept. Blocking: call from a thread.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = 1


@dataclass
class Loaded:
    snapshot: list[Any] = field(default_factory=list)
    ops: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, lines: Iterable[str]) -> None:
    """Replace `path` with `lines` so that a reader (or a restart after a crash) sees the old
    file or the new one, never half of either."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line)
            handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


class Journal:
    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.snapshot_path = directory / f"{name}.snapshot.jsonl"
        self.log_path = directory / f"{name}.wal.jsonl"
        self.logged = 0
        self._fd: int | None = None

    def _read_lines(self, path: Path, loaded: Loaded) -> list[Any]:
        if not path.exists():
            return []
        values: list[Any] = []
        bad = 0
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, 1):
                if not raw.strip():
                    continue
                try:
                    values.append(json.loads(raw))
                except json.JSONDecodeError as exc:
                    bad += 1
                    loaded.problems.append(f"{path.name} line {number}: {exc.msg}; skipped")
                except UnicodeDecodeError as exc:
                    bad += 1
                    loaded.problems.append(f"{path.name} line {number}: {exc.reason}; skipped")
        if bad:
            keep = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
            shutil.copyfile(path, keep)
            loaded.problems.append(f"{path.name}: the file as found is kept as {keep.name}")
        return values

    def load(self) -> Loaded:
        self.directory.mkdir(parents=True, exist_ok=True)
        loaded = Loaded()
        lines = self._read_lines(self.snapshot_path, loaded)
        if lines and isinstance(lines[0], dict) and lines[0].get("format") == FORMAT:
            lines = lines[1:]
        elif lines:
            loaded.problems.append(f"{self.snapshot_path.name}: no format header; read as is")
        loaded.snapshot = lines
        for op in self._read_lines(self.log_path, loaded):
            if isinstance(op, dict) and isinstance(op.get("op"), str):
                loaded.ops.append(op)
            else:
                loaded.problems.append(f"{self.log_path.name}: an entry without 'op'; skipped")
        self.logged = len(loaded.ops)
        return loaded

    def log(self, op: dict[str, Any]) -> None:
        """Append one operation; durable when this returns."""
        data = (json.dumps(op, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        if self._fd is None:
            self._fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(self._fd, data)
        os.fsync(self._fd)
        self.logged += 1

    def compact(self, records: Iterable[Any]) -> None:
        header = json.dumps({"format": FORMAT})
        body = (json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
        write_atomic(self.snapshot_path, [header, *body])
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        with self.log_path.open("w") as handle:
            os.fsync(handle.fileno())
        self.logged = 0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
