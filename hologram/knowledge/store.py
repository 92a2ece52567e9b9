"""The knowledge base (spec: knowledge.Store): `<data>/knowledge/<name>/content.md`.

What the agent was given to know, as opposed to what it remembers of conversations. A name
is a path: its folders are the entry's categories ("cooking/bread/sourdough" is the entry
sourdough in cooking → bread). Media an entry carries is stored in the entry's own folder
(`media/` beside `content.md`, listed in `.media.json`), so removing the entry removes it.
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import json
import logging
import mimetypes
import re
import shutil
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hologram.kernel import Once, TaskScope, write_atomic
from hologram.knowledge.index import BigramTfidf
from hologram.sdk import (
    Emit,
    KnowledgeAdded,
    discard,
)

log = logging.getLogger(__name__)

CONTENT = "content.md"
MEDIA_LIST = ".media.json"
PASSAGE_CHARS = 1500
"""The most of one entry a turn's system prompt carries; the model reads the rest with
`knowledge_search`."""
PASSAGE_RELEVANCE = 0.5
"""A passage scores at least this share of the best hit's score, or it stays out."""
_SEGMENT = re.compile(r"^[^/\\\x00-\x1f<>:\"|?*]{1,80}$")


class KnowledgeError(Exception):
    """A request the knowledge base refuses; the message says what to do instead."""


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    content: str
    media: list[dict[str, Any]] = field(default_factory=list)

    @property
    def category(self) -> str:
        return self.name.rpartition("/")[0]

    @property
    def title(self) -> str:
        return self.name.rpartition("/")[2]


@dataclass(frozen=True, slots=True)
class Hit:
    name: str
    score: float
    snippet: str


def check_name(name: Any) -> str:
    """A valid entry or category name, or `KnowledgeError` saying why not."""
    if not isinstance(name, str) or not name.strip().strip("/"):
        raise KnowledgeError("a knowledge name is a non-empty path like 'cooking/bread'")
    parts = [p.strip() for p in name.strip().strip("/").split("/")]
    for part in parts:
        if part in ("", ".", "..") or part.startswith(".") or not _SEGMENT.match(part):
            raise KnowledgeError(
                f"{name!r}: each part of a knowledge name must be 1-80 characters, not start "
                "with '.', and contain none of \\ < > : \" | ? *"
            )
    return "/".join(parts)


class KnowledgeBase:
    def __init__(
        self,
        root: Path,
        *,
        emit: Emit | None = None,
        tasks: TaskScope,
    ) -> None:
        self.root = root
        self._emit = emit or discard
        self.index = BigramTfidf()
        self._entries: dict[str, Entry] = {}
        self._lock = asyncio.Lock()
        self._loading = Once(tasks, self._load, "knowledge-load")
        self.problems: list[str] = []

    # ---- life cycle -----------------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        """Scan the directory and build the index, in the background."""
        return self._loading.start()

    async def wait_ready(self) -> None:
        await self._loading.wait()

    async def close(self) -> None:
        await self._loading.cancel()

    async def _load(self) -> None:
        async with self._lock:
            entries = await asyncio.to_thread(self._scan)
            for entry in entries:
                self._entries[entry.name] = entry
                self.index.add(entry.name, f"{entry.title}\n{entry.content}")

    def _scan(self) -> list[Entry]:
        self.root.mkdir(parents=True, exist_ok=True)
        entries = []
        for path in sorted(self.root.rglob(CONTENT)):
            name = path.parent.relative_to(self.root).as_posix()
            try:
                entries.append(self._read(name))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                self.problems.append(f"{name}: {exc}; skipped")
                log.warning("knowledge entry %s skipped: %s", name, exc)
        return entries

    def _read(self, name: str) -> Entry:
        folder = self.root / name
        content = (folder / CONTENT).read_text(encoding="utf-8")
        media_path = folder / MEDIA_LIST
        media = json.loads(media_path.read_text("utf-8")) if media_path.exists() else []
        return Entry(name, content, media)

    # ---- writing --------------------------------------------------------------------------

    async def create(
        self,
        name: str,
        content: str,
        *,
        media: Sequence[tuple[str, bytes]] = (),
        replace: bool = False,
    ) -> Entry:
        """Write entry `name` (refused if it exists, unless `replace`), with any media
        bytes in its folder; the index learns it at once."""
        name = check_name(name)
        if not isinstance(content, str) or not content.strip():
            raise KnowledgeError("a knowledge entry needs non-empty content (markdown)")
        await self.wait_ready()
        async with self._lock:
            if name in self._entries and not replace:
                raise KnowledgeError(f"{name!r} already exists; pass replace to overwrite it")
            if any(other.startswith(name + "/") for other in self._entries):
                raise KnowledgeError(f"{name!r} is a category; choose a name inside it")
            entry = await asyncio.to_thread(self._write, name, content, list(media))
            self._entries[name] = entry
            self.index.add(name, f"{entry.title}\n{entry.content}")
        self._emit(KnowledgeAdded(name=name, media=len(entry.media)), source="knowledge")
        return entry

    def _write(self, name: str, content: str, media: list[tuple[str, bytes]]) -> Entry:
        folder = self.root / name
        folder.mkdir(parents=True, exist_ok=True)
        listed = []
        for mime, data in media:
            if not isinstance(data, bytes | bytearray) or not data or "/" not in str(mime):
                raise KnowledgeError("media is a list of (MIME type, non-empty bytes)")
            digest = hashlib.sha256(bytes(data)).hexdigest()
            ext = mimetypes.guess_extension(mime) or ".bin"
            file = f"media/{digest[:12]}{ext}"
            _write_atomic(folder / file, bytes(data))
            listed.append({"file": file, "mime": mime, "size": len(data), "sha256": digest})
        if listed:
            _write_atomic(folder / MEDIA_LIST, json.dumps(listed, indent=1).encode())
        _write_atomic(folder / CONTENT, content.encode("utf-8"))
        return Entry(name, content, listed)

    async def remove(self, name: str) -> None:
        name = check_name(name)
        await self.wait_ready()
        async with self._lock:
            if name not in self._entries:
                raise KnowledgeError(f"no knowledge entry {name!r}")
            await asyncio.to_thread(shutil.rmtree, self.root / name)
            del self._entries[name]
            self.index.remove(name)

    # ---- reading --------------------------------------------------------------------------

    async def get(self, name: str) -> Entry:
        name = check_name(name)
        await self.wait_ready()
        if name not in self._entries:
            raise KnowledgeError(f"no knowledge entry {name!r}; knowledge_list shows them")
        return self._entries[name]

    async def media_bytes(self, name: str, file: str) -> bytes:
        entry = await self.get(name)
        if file not in {m["file"] for m in entry.media}:
            raise KnowledgeError(f"{name!r} carries no media {file!r}")
        return await asyncio.to_thread((self.root / name / file).read_bytes)

    async def list(self, category: str = "") -> list[str]:
        """Entry names, all or within `category` (its whole subtree)."""
        await self.wait_ready()
        prefix = check_name(category) + "/" if category else ""
        return sorted(n for n in self._entries if n.startswith(prefix))

    async def categories(self, category: str = "") -> dict[str, int]:
        """Every category under `category` (itself included) with its entry count,
        counting the entries of its whole subtree."""
        counts: Counter[str] = Counter()
        for name in await self.list(category):
            parts = name.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                counts["/".join(parts[:depth])] += 1
        base = check_name(category) if category else ""
        return {
            c: n
            for c, n in sorted(counts.items())
            if not base or c == base or c.startswith(base + "/")
        }

    async def search(self, query: str, top: int = 5, category: str = "") -> builtins.list[Hit]:
        """Entries best matching `query`, optionally only within `category`."""
        await self.wait_ready()
        keys = set(await self.list(category)) if category else None
        hits = []
        for name, score in self.index.search(query, top, keys):
            content = self._entries[name].content
            hits.append(Hit(name, score, " ".join(content.split())[:160]))
        return hits

    async def passages(
        self, query: str, top: int, max_chars: int = PASSAGE_CHARS
    ) -> builtins.list[str]:
        """The entries best matching `query` as prompt text, each cut at `max_chars`, best
        first (the turn's knowledge section; the budget then keeps what fits)."""
        hits = await self.search(query, top)
        passages = []
        for hit in hits:
            # The index has no stop words: an entry sharing only "the" with the input still
            # scores. Far behind the best hit it is noise the prompt pays for.
            if hit.score < hits[0].score * PASSAGE_RELEVANCE:
                break
            content = self._entries[hit.name].content.strip()
            if len(content) > max_chars:
                content = content[:max_chars].rstrip() + " …"
            passages.append(f"### {hit.name}\n{content}")
        return passages

    def __len__(self) -> int:
        return len(self._entries)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)
