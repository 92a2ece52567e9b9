"""A one-line progress bar on stderr (no dependency): ``[#####.....] 5/10 units  42 s``."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    def __init__(self, total: int, label: str = "units", *, stream: TextIO | None = None) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self._stream = stream if stream is not None else sys.stderr
        self._started = time.perf_counter()

    def update(self, done: int, note: str = "") -> None:
        self.done = done
        width = 24
        filled = width * done // self.total if self.total else width
        elapsed = time.perf_counter() - self._started
        line = (
            f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} {self.label}"
            f"  {elapsed:5.0f} s  {note}"
        )
        self._stream.write(line[:120].ljust(80))
        self._stream.flush()

    def close(self) -> None:
        self._stream.write("\n")
        self._stream.flush()
