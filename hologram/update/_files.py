"""Small file operations the update module needs to be crash-safe: atomic replace, exact
copies, and the list of files a data dir holds."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

BACKUPS = "backups"
LOCK = "hologram.lock"
MARKER = "update-in-progress.json"
"""Names the backup of a migration under way; a start that finds it restores that backup."""
NOT_DATA = frozenset({BACKUPS, LOCK, MARKER, "logs"})
"""Entries of the data dir that are not data: never backed up, never restored over."""


def copy_exact(source: Path, target: Path) -> None:
    """Copy bytes and mode, durably, through a temporary name (a crash leaves the old
    target or the new one)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    with source.open("rb") as src, tmp.open("wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
        dst.flush()
        os.fsync(dst.fileno())
    shutil.copymode(source, tmp)
    os.replace(tmp, target)


def data_files(root: Path, skip: frozenset[str] = NOT_DATA) -> Iterator[Path]:
    """Every regular file under `root` (relative paths, sorted), but the top-level
    entries named in `skip`."""
    if not root.is_dir():
        return
    for entry in sorted(root.iterdir()):
        if entry.name in skip:
            continue
        if entry.is_dir() and not entry.is_symlink():
            for path in sorted(entry.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    yield path.relative_to(root)
        elif entry.is_file() and not entry.is_symlink():
            yield entry.relative_to(root)


def data_dirs(root: Path, skip: frozenset[str] = NOT_DATA) -> Iterator[Path]:
    """Every directory under `root` (relative paths), but the top-level entries in `skip`."""
    for entry in sorted(root.iterdir()) if root.is_dir() else ():
        if entry.name in skip or not entry.is_dir() or entry.is_symlink():
            continue
        yield entry.relative_to(root)
        for path in sorted(entry.rglob("*")):
            if path.is_dir() and not path.is_symlink():
                yield path.relative_to(root)
