"""What the tracker knows of the sandbox between calls: every file's digest and mode, its
bytes in the content-addressed store. A call's BEFORE state is read here, because by the
time the tracker hears of a change the old bytes are gone from disk."""

from __future__ import annotations

import difflib
import json
import logging
import os
import stat
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hologram.media import BlobStore, MediaError, digest_of
from hologram.tracker.log import Change, Kind

MAX_KEPT = 16 * 1024 * 1024
"""Bytes of one file kept for undo; a larger file is recorded by digest, its undo refused."""
MAX_DIFF = 256 * 1024
"""A text diff is made of files up to this size on both sides."""
SNAPSHOT_VERSION = 1

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Entry:
    digest: str
    mode: int
    size: int
    mtime_ns: int


def keep(blobs: BlobStore, digest: str, data: bytes) -> None:
    """`data` into the store under `digest`, written whole under a temporary name and renamed,
    but not fsynced: the store's own `put` syncs twice per object (5 ms on this disk), which
    is the whole budget of a tool call. What a crash can cost is a blob lost or damaged, and
    then an undo that is refused (the store checks every digest it reads), never a wrong
    file written back; the change log commits without a sync for the same reason."""
    target = blobs.path(digest)
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{digest}.{threading.get_ident()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, target)


def inside(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


class Shadow:
    """Path → `Entry` for every regular file under the roots (symbolic links are not
    followed: a link leading out of the roots is not the sandbox's to record)."""

    def __init__(self, roots: list[Path], blobs: BlobStore) -> None:
        self.roots = roots
        self.blobs = blobs
        self._entries: dict[str, Entry] = {}
        self._dirs: set[str] = set()
        """Folders that hold (or held) a shadowed file: only they are searched for files
        under a path the watcher names, so a dirty file costs no pass over 10,000 entries."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, path: str) -> Entry | None:
        with self._lock:
            return self._entries.get(path)

    def files(self) -> Iterator[str]:
        for root in self.roots:
            for folder, dirs, names in os.walk(root):
                dirs.sort()
                for name in names:
                    yield os.path.join(folder, name)

    def scan(self) -> int:
        """Bring the whole shadow up to date with the disk (at start): a file whose size and
        mtime match its entry (one loaded from the snapshot) is not read again, every other
        file is hashed and kept, and an entry whose file is gone is dropped."""
        seen = set()
        for path in self.files():
            seen.add(path)
            self.refresh(path)
        with self._lock:
            for gone in self._entries.keys() - seen:
                del self._entries[gone]
        return len(self._entries)

    # ---- the snapshot: what the shadow knew when the tracker last stopped ------------------

    def save(self, path: Path) -> None:
        """Written whole and renamed. It is a cache, never a store: every entry is checked
        against the disk when it is loaded, and without it the scan hashes every file."""
        with self._lock:
            rows = [[p, e.digest, e.mode, e.size, e.mtime_ns] for p, e in self._entries.items()]
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_text(json.dumps({"version": SNAPSHOT_VERSION, "entries": rows}))
        os.replace(temporary, path)

    def load(self, path: Path) -> int:
        """Entries from the snapshot at `path` (the scan then reads only what changed since);
        an entry outside the roots, or whose bytes the store has lost, is left out. Returns
        how many were taken; raises ValueError when the file is not a snapshot."""
        try:
            data = json.loads(path.read_bytes())
        except FileNotFoundError:
            return 0
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path} is not readable: {exc}") from None
        if not isinstance(data, dict) or data.get("version") != SNAPSHOT_VERSION:
            raise ValueError(f"{path} is not a version {SNAPSHOT_VERSION} shadow snapshot")
        taken: dict[str, Entry] = {}
        try:
            for name, digest, mode, size, mtime_ns in data["entries"]:
                if not (isinstance(name, str) and isinstance(digest, str)):
                    raise TypeError("a path and a digest are text")
                if inside(Path(name), self.roots) and self.blobs.path(digest).exists():
                    taken[name] = Entry(digest, int(mode), int(size), int(mtime_ns))
        except (KeyError, TypeError, ValueError, MediaError) as exc:
            raise ValueError(f"{path} holds a malformed entry: {exc}") from None
        with self._lock:
            self._entries.update(taken)
            for name in taken:
                self._note_folders(name)
        return len(taken)

    def under(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        with self._lock:
            if path.rstrip("/") not in self._dirs:
                return []
            return [p for p in self._entries if p.startswith(prefix)]

    def read(self, path: str) -> tuple[Entry, bytes | None] | None:
        """The file at `path` now (its bytes when kept), or None when no regular file is
        there; an unchanged stat is taken from the shadow without reading the file."""
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        known = self.get(path)
        if known and known.size == st.st_size and known.mtime_ns == st.st_mtime_ns:
            return Entry(known.digest, stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime_ns), None
        try:
            data = Path(path).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None
        entry = Entry(digest_of(data), stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime_ns)
        return entry, data

    def refresh(self, path: str) -> tuple[Entry | None, Entry | None]:
        """Bring `path` up to date; returns (before, after)."""
        now = self.read(path)
        with self._lock:
            before = self._entries.get(path)
            if now is None:
                self._entries.pop(path, None)
                return before, None
            entry, data = now
            if data is not None and len(data) <= MAX_KEPT:
                keep(self.blobs, entry.digest, data)
            if before is None:
                self._note_folders(path)
            self._entries[path] = entry
            return before, entry

    def _note_folders(self, path: str) -> None:
        folder = os.path.dirname(path)
        while folder not in self._dirs and len(folder) > 1:
            self._dirs.add(folder)
            folder = os.path.dirname(folder)

    def forget(self, path: str) -> None:
        with self._lock:
            self._entries.pop(path, None)

    def changes(self, paths: Iterable[str]) -> list[Change]:
        """What changed at `paths` (and under them, for folders) since the shadow last saw
        them; the shadow is brought up to date. A delete and a create of the same bytes are
        one rename."""
        candidates: set[str] = set()
        for path in paths:
            if not inside(Path(path), self.roots):
                continue
            candidates.add(path)
            candidates.update(self.under(path))
            if os.path.isdir(path) and not os.path.islink(path):
                for folder, _dirs, names in os.walk(path):
                    candidates.update(os.path.join(folder, n) for n in names)
        found: list[Change] = []
        for path in sorted(candidates):
            if os.path.isdir(path) and not os.path.islink(path) and self.get(path) is None:
                continue
            before, after = self.refresh(path)
            if before == after or (before and after and _same(before, after)):
                continue
            found.append(self._change(path, before, after))
        return _pair_renames(found)

    def _change(self, path: str, before: Entry | None, after: Entry | None) -> Change:
        kind = Kind.CREATE if before is None else Kind.DELETE if after is None else Kind.MODIFY
        return Change(
            path,
            kind,
            before_digest=before.digest if before else None,
            after_digest=after.digest if after else None,
            before_mode=before.mode if before else None,
            after_mode=after.mode if after else None,
            diff=self.diff(path, before, after),
        )

    def diff(self, path: str, before: Entry | None, after: Entry | None) -> str:
        old = self._text(before)
        new = self._text(after)
        if old is None or new is None:
            return ""
        lines = difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a{path}" if before else "/dev/null",
            f"b{path}" if after else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def _text(self, entry: Entry | None) -> str | None:
        if entry is None:
            return ""
        if entry.size > MAX_DIFF or not self.blobs.has(entry.digest):
            return None
        try:
            return self.blobs.get(entry.digest).decode("utf-8")
        except UnicodeDecodeError:
            return None


def _same(a: Entry, b: Entry) -> bool:
    return a.digest == b.digest and a.mode == b.mode


def _pair_renames(changes: list[Change]) -> list[Change]:
    deletes = {c.before_digest: c for c in changes if c.kind is Kind.DELETE}
    out: list[Change] = []
    paired: set[str] = set()
    for change in changes:
        gone = deletes.get(change.after_digest) if change.kind is Kind.CREATE else None
        if gone is not None and gone.path not in paired:
            paired.add(gone.path)
            out.append(
                Change(
                    change.path,
                    Kind.RENAME,
                    before_digest=gone.before_digest,
                    after_digest=change.after_digest,
                    before_mode=gone.before_mode,
                    after_mode=change.after_mode,
                    old_path=gone.path,
                )
            )
        else:
            out.append(change)
    return [c for c in out if not (c.kind is Kind.DELETE and c.path in paired)]
