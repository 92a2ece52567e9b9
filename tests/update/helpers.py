"""Shared by the update tests: the digest of every file of a data dir."""

from __future__ import annotations

import hashlib
from pathlib import Path

NOT_DATA = {"backups", "logs", "hologram.lock"}


def hashes(root: Path, leave_out: set[str] = NOT_DATA) -> dict[str, str]:
    """Every file under `root` (but the top-level names in `leave_out`) and its sha256."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.relative_to(root).parts[0] not in leave_out
    }
