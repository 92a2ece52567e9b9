"""The data directory and the lock that gives one kernel sole use of it."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from hologram.kernel.errors import AssemblyError

LOCK_NAME = "hologram.lock"


class DataDirLockedError(AssemblyError):
    def __init__(self, path: Path, pid: int | None) -> None:
        self.path, self.pid = path, pid
        holder = f"PID {pid}" if pid is not None else "a process whose PID could not be read"
        super().__init__(
            f"the data dir {path} is in use by another Hologram kernel ({holder}); "
            "stop that kernel or choose another data dir with --data"
        )


def resolve_data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """`--data DIR`, else `$HOLOGRAM_DATA`, else `~/.hologram`."""
    chosen = explicit or os.environ.get("HOLOGRAM_DATA") or Path.home() / ".hologram"
    return Path(chosen).expanduser().resolve()


class DataDirLock:
    """An exclusive `flock` on `<data>/hologram.lock`, holding the owner's PID.

    `flock` belongs to the open file, so two kernels in one process exclude each other too,
    and the operating system drops the lock when its holder dies: a crash never leaves a
    stale lock that needs deleting by hand.
    """

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DataDirLockedError(self.path.parent, holder_pid(self.path)) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        os.ftruncate(self._fd, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None


def holder_pid(lock_path: Path) -> int | None:
    try:
        return int(lock_path.read_text().strip())
    except (OSError, ValueError):
        return None
