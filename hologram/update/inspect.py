"""Reading a store as found on disk without changing a byte of it, and the self-check that
refuses damage instead of letting a store open over it and start empty.

SQLite databases are opened read-only. Even so, SQLite makes its shared-memory index
(`-shm`, and an empty `-wal`) when it reads a database in WAL mode; those hold no data,
and what this module made is removed again, so that a refused data dir is left byte for
byte as found. One that existed (a kernel has the database open, or was killed) is
SQLite's to keep up.
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from hologram.kernel import user_version
from hologram.update.errors import UpdateError
from hologram.update.manifest import Manifest
from hologram.update.stores import Kind, Store

SQLITE_MAGIC = b"SQLite format 3\x00"
WAL_MAGICS = (0x377F0682, 0x377F0683)


class DataDirDamaged(UpdateError):
    def __init__(self, path: Path, reason: str, data_dir: Path) -> None:
        self.path, self.reason = path, reason
        super().__init__(
            f"{path}: {reason}. Nothing was changed. Restore the data dir from a backup "
            f"(`python -m hologram data restore {data_dir / 'backups'}/<backup>`), or, to "
            "start that store empty, move the file aside"
        )


@dataclass
class Found:
    """One store as found: its version (None when it does not exist yet) and what it holds."""

    store: Store
    version: int | None
    rows: dict[str, int] = field(default_factory=dict)
    files: int = 0


@contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    made_here = [
        side
        for side in (path.with_name(path.name + s) for s in ("-shm", "-wal"))
        if not side.exists()
    ]
    db = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    try:
        yield db
    finally:
        db.close()
        for side in made_here:
            if side.name.endswith("-shm") or (side.exists() and side.stat().st_size == 0):
                side.unlink(missing_ok=True)


def table_rows(db: sqlite3.Connection) -> dict[str, int]:
    names = [
        row[0]
        for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
            " AND name NOT LIKE 'sqlite_%'"
        )
    ]
    return {name: db.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in names}


def wal_problem(path: Path) -> str | None:
    """What is wrong with the write-ahead log beside `path`, or None.

    SQLite ignores a log whose header does not check out, and stops at the first frame
    that does not: the transactions in it are then lost without a word. A torn last frame
    is normal after a kill (it belongs to a transaction never acknowledged); a broken frame
    followed by more frames of the same log is damage."""
    wal = path.with_name(path.name + "-wal")
    try:
        data = wal.read_bytes()
    except FileNotFoundError:
        return None
    if not data:
        return None
    name = wal.name
    if len(data) < 32:
        return f"its write-ahead log {name} is {len(data)} bytes, shorter than a log header"
    magic, _version, page_size, _seq, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    big = magic & 1
    if magic not in WAL_MAGICS or page_size < 512 or page_size & (page_size - 1):
        return f"the header of its write-ahead log {name} is damaged ({len(data)} bytes unread)"
    s1, s2 = _checksum(data[:24], 0, 0, big)
    if (s1, s2) != (c1, c2):
        return f"the header of its write-ahead log {name} is damaged ({len(data)} bytes unread)"
    frame = 24 + page_size
    offset, number = 32, 0
    while offset + frame <= len(data):
        head = data[offset : offset + 24]
        _page, _size, f_salt1, f_salt2, f1, f2 = struct.unpack(">6I", head)
        if (f_salt1, f_salt2) != (salt1, salt2):
            return None  # frames of an earlier generation of the log: normal
        s1, s2 = _checksum(head[:8], s1, s2, big)
        s1, s2 = _checksum(data[offset + 24 : offset + frame], s1, s2, big)
        if (s1, s2) != (f1, f2):
            later = _later_frames(data, offset + frame, frame, salt1, salt2)
            if later:
                return (
                    f"frame {number + 1} of its write-ahead log {name} is damaged, and "
                    f"{later} frame(s) after it would be lost"
                )
            return None
        offset += frame
        number += 1
    return None


def _later_frames(data: bytes, offset: int, frame: int, salt1: int, salt2: int) -> int:
    count = 0
    while offset + frame <= len(data):
        if struct.unpack(">2I", data[offset + 8 : offset + 16]) == (salt1, salt2):
            count += 1
        offset += frame
    return count


def _checksum(data: bytes, s1: int, s2: int, big: int) -> tuple[int, int]:
    """SQLite's WAL checksum (section 4.4 of its file format), over 8-byte words."""
    words = struct.unpack((">" if big else "<") + f"{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s1 = (s1 + words[i] + s2) & 0xFFFFFFFF
        s2 = (s2 + words[i + 1] + s1) & 0xFFFFFFFF
    return s1, s2


def find(data_dir: Path, store: Store, manifest: Manifest | None) -> Found:
    """The store as found, checked for damage; raises `DataDirDamaged` naming the file."""
    path = data_dir / store.path
    _check_vital(data_dir, store, manifest)
    if store.kind is Kind.FILES:
        if not path.is_dir():
            return Found(store, None)
        files = sum(1 for p in path.rglob("*") if p.is_file())
        version = manifest.stores.get(store.name, 0) if manifest is not None else 0
        return Found(store, version, files=files)
    return _find_database(data_dir, store, manifest, path)


def _check_vital(data_dir: Path, store: Store, manifest: Manifest | None) -> None:
    for name in store.vital:
        path = data_dir / name
        if manifest is None or name not in manifest.present:
            continue
        if not path.exists():
            raise DataDirDamaged(path, "the file is missing, but it held data", data_dir)
        if path.stat().st_size == 0:
            raise DataDirDamaged(path, "the file is empty (0 bytes), but it held data", data_dir)


def _find_database(data_dir: Path, store: Store, manifest: Manifest | None, path: Path) -> Found:
    known = manifest is not None and store.path in manifest.present
    if not path.exists():
        if known:
            raise DataDirDamaged(path, "the database is missing, but it held data", data_dir)
        return Found(store, None)
    if path.stat().st_size == 0:
        if known or manifest is None:
            raise DataDirDamaged(path, "the database is empty (0 bytes)", data_dir)
        return Found(store, None)
    with path.open("rb") as handle:
        if handle.read(16) != SQLITE_MAGIC:
            raise DataDirDamaged(path, "the file is not a SQLite database (bad header)", data_dir)
    problem = wal_problem(path)
    if problem is not None:
        raise DataDirDamaged(path, problem, data_dir)
    try:
        with read_only(path) as db:
            check = db.execute("PRAGMA quick_check").fetchall()
            if check != [("ok",)]:
                first = "; ".join(str(row[0]) for row in check[:3])
                raise DataDirDamaged(path, f"the database is damaged ({first})", data_dir)
            version = user_version(db)
            rows = table_rows(db)
    except sqlite3.DatabaseError as exc:
        raise DataDirDamaged(path, f"the database cannot be read ({exc})", data_dir) from exc
    missing = [t for t in store.tables if t not in rows]
    if version >= 1 and missing:
        raise DataDirDamaged(path, f"tables {', '.join(missing)} are missing", data_dir)
    seen = manifest.rows.get(store.path, {}) if manifest is not None else {}
    for table in store.growing:
        if rows.get(table, 0) < seen.get(table, 0):
            reason = (
                f"table {table} holds {rows.get(table, 0)} rows, but {seen[table]} were "
                "acknowledged before: rows were lost"
            )
            raise DataDirDamaged(path, reason, data_dir)
    return Found(store, version, rows=rows)
