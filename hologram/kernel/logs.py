"""Each kernel's log file, `<data>/logs/hologram.log`.

Several kernels may share one process (a notebook comparing two settings), and Python's
logging is process-wide. A record goes to a kernel's file when it was logged from that
kernel's own tasks: the kernel runs its tasks in a context where `current_kernel` names it.
"""

from __future__ import annotations

import contextvars
import logging
import logging.handlers
from collections.abc import Callable
from pathlib import Path

current_kernel: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "hologram_current_kernel", default=None
)

FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


class _KernelFilter(logging.Filter):
    def __init__(self, kernel_id: str) -> None:
        super().__init__()
        self.kernel_id = kernel_id

    def filter(self, record: logging.LogRecord) -> bool:
        return current_kernel.get() == self.kernel_id


class KernelLog:
    """Attaches a rotating file handler for one kernel to the `hologram` logger."""

    def __init__(self, data_dir: Path, kernel_id: str, level: int = logging.INFO) -> None:
        self.path = data_dir / "logs" / "hologram.log"
        self.kernel_id = kernel_id
        self.level = level
        self._handler: logging.Handler | None = None

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            self.path, maxBytes=5_000_000, backupCount=3, encoding="utf-8"
        )
        handler.setFormatter(logging.Formatter(FORMAT))
        handler.setLevel(self.level)
        handler.addFilter(_KernelFilter(self.kernel_id))
        root = logging.getLogger("hologram")
        if root.level == logging.NOTSET or root.level > self.level:
            root.setLevel(self.level)
        root.addHandler(handler)
        self._handler = handler

    def add_filter(self, log_filter: logging.Filter) -> Callable[[], None]:
        """Filter (and possibly rewrite) every record this kernel writes to its file; a
        record rewritten here reaches the handlers above it (the console) rewritten too."""
        if self._handler is None:
            raise RuntimeError("the kernel log is not open yet")
        handler = self._handler
        handler.addFilter(log_filter)
        return lambda: handler.removeFilter(log_filter)

    def close(self) -> None:
        if self._handler is not None:
            logging.getLogger("hologram").removeHandler(self._handler)
            self._handler.close()
            self._handler = None
