"""Backups of a data dir: taken, checked, restored byte for byte, pruned.

Two ways to copy a database. While this process holds the data dir's lock no store is open
and nothing writes, so the files are copied as they are (`exact`: the database and its
write-ahead log, byte for byte, which is what lets a failed migration put the data dir back
exactly). A kernel running on the data dir holds the lock; then each database goes through
SQLite's online backup API, which copies a consistent snapshot while it keeps writing.

A backup is written under a `.partial` name and renamed when complete, with a list of its
files and their digests (`backup.json`); a restore checks every digest before it touches
the data dir, so a damaged backup is refused rather than restored half.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from hologram.kernel import fsync_dir
from hologram.update._files import (
    BACKUPS,
    NOT_DATA,
    copy_exact,
    data_dirs,
    data_files,
)
from hologram.update.errors import UpdateError
from hologram.update.inspect import SQLITE_MAGIC

log = logging.getLogger(__name__)

INDEX = "backup.json"
PARTIAL = ".partial"
SIDE_FILES = ("-wal", "-shm", "-journal")


class BackupError(UpdateError):
    pass


@dataclass(frozen=True)
class Backup:
    path: Path
    files: dict[str, dict[str, object]]
    made_from: str
    made_by: str
    method: str
    created: float
    dirs: tuple[str, ...] = ()


def digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


def is_database(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def backups_dir(data_dir: Path) -> Path:
    return data_dir / BACKUPS


def new_backup_path(data_dir: Path, made_from: str, made_by: str, now: float | None = None) -> Path:
    """`<data>/backups/<timestamp>-<from>-<to>`, with a counter if that name is taken."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    name = f"{stamp}-{made_from or 'unversioned'}-{made_by}"
    path, number = backups_dir(data_dir) / name, 1
    while path.exists():
        number += 1
        path = backups_dir(data_dir) / f"{name}.{number}"
    return path


def take_backup(
    data_dir: Path, target: Path, *, exact: bool, made_from: str = "", made_by: str = ""
) -> Backup:
    """Copy every data file of `data_dir` into `target` (which must not exist)."""
    if target.exists():
        raise BackupError(f"{target} exists already; name a new directory for the backup")
    partial = target.with_name(target.name + PARTIAL)
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    files: dict[str, dict[str, object]] = {}
    skip = NOT_DATA | {target.name if target.parent == data_dir else ""}
    for relative in data_files(data_dir, skip):
        source = data_dir / relative
        if not exact and (source.name.endswith(".tmp") or _is_side_file(source)):
            continue
        copy = partial / "files" / relative
        if not exact and is_database(source):
            _online_copy(source, copy)
        else:
            copy_exact(source, copy)
        files[str(relative)] = {"sha256": digest(copy), "size": copy.stat().st_size}
    index = {
        "made_from": made_from,
        "made_by": made_by,
        "method": "exact" if exact else "online",
        "created": time.time(),
        "files": files,
        "dirs": [str(d) for d in data_dirs(data_dir, skip)],
    }
    (partial / INDEX).write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    os.replace(partial, target)
    fsync_dir(target.parent)
    return read_backup(target)


def _is_side_file(path: Path) -> bool:
    return any(
        path.name.endswith(s) and is_database(path.with_name(path.name[: -len(s)]))
        for s in SIDE_FILES
    )


def _online_copy(source: Path, copy: Path) -> None:
    copy.parent.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(f"file:{quote(str(source))}?mode=ro", uri=True)
    dst = sqlite3.connect(copy)
    try:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no log beside it
    finally:
        dst.close()
        src.close()


def read_backup(path: Path) -> Backup:
    try:
        index = json.loads((path / INDEX).read_text(encoding="utf-8"))
        return Backup(
            path,
            dict(index["files"]),
            str(index["made_from"]),
            str(index["made_by"]),
            str(index["method"]),
            float(index["created"]),
            tuple(index.get("dirs", ())),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BackupError(f"{path} is not a readable backup ({exc})") from exc


def verify_backup(backup: Backup) -> None:
    for relative, meta in backup.files.items():
        copy = backup.path / "files" / relative
        if not copy.is_file() or digest(copy) != meta["sha256"]:
            raise BackupError(
                f"the backup {backup.path} is damaged: {relative} does not match its digest; "
                "nothing was restored"
            )


def restore_backup(backup: Backup, data_dir: Path) -> None:
    """Make the data files of `data_dir` exactly those of `backup`: files the backup does
    not hold are removed, the others copied back. Safe to run again after a crash."""
    verify_backup(backup)
    keep = set(backup.files)
    for relative in list(data_files(data_dir)):
        if str(relative) not in keep:
            (data_dir / relative).unlink()
    for stored in backup.files:
        copy_exact(backup.path / "files" / stored, data_dir / stored)
    wanted = set(backup.dirs)
    for folder in sorted(data_dirs(data_dir), key=lambda p: len(p.parts), reverse=True):
        if str(folder) not in wanted and not any((data_dir / folder).iterdir()):
            (data_dir / folder).rmdir()
    for wanted_dir in wanted:
        (data_dir / wanted_dir).mkdir(parents=True, exist_ok=True)
    fsync_dir(data_dir)


def list_backups(data_dir: Path) -> list[Backup]:
    """The complete backups under `<data>/backups`, oldest first."""
    root = backups_dir(data_dir)
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.iterdir()):
        if path.is_dir() and not path.name.endswith(PARTIAL) and (path / INDEX).exists():
            try:
                found.append(read_backup(path))
            except BackupError as exc:
                log.warning("skipping %s", exc)
    return sorted(found, key=lambda b: (b.created, b.path.name))


def prune_backups(data_dir: Path, keep: int) -> list[Path]:
    """Remove all but the `keep` newest backups (and any left half-written); returns what
    was removed."""
    removed = []
    root = backups_dir(data_dir)
    if root.is_dir():
        for path in root.iterdir():
            if path.name.endswith(PARTIAL):
                shutil.rmtree(path)
                removed.append(path)
    backups = list_backups(data_dir)
    for backup in backups[: max(0, len(backups) - max(keep, 0))]:
        shutil.rmtree(backup.path)
        removed.append(backup.path)
    return removed
