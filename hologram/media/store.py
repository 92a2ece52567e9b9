"""The content-addressed store: every byte string kept once, named by its sha256.

`BlobStore` is the plain store (the tracker keeps file contents in one); `MediaStore` adds
what media needs on top: the type sniffed from the bytes, an image's size, and the limits of
`core.media.*`. Layout under the root: `ab/<64 hex digits>` holds the bytes, and for media
`ab/<digest>.json` the `MediaRef` fields. Objects are written through a temporary name and
renamed, so a crash leaves an object whole or absent; reads check the digest, so bytes
damaged on disk are reported, never served.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from hologram.kernel import write_atomic
from hologram.media.errors import MediaCorrupt, MediaError, MediaTooLarge, UnknownMedia
from hologram.media.sniff import check_declared, sniff
from hologram.sdk import DIGEST, MediaRef


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    """Bytes by digest, one copy each."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, digest: str) -> Path:
        if not isinstance(digest, str) or not DIGEST.match(digest):
            raise UnknownMedia(f"not a media digest (64 lower-case hex digits): {digest!r}")
        return self.root / digest[:2] / digest

    def put(self, data: bytes, digest: str | None = None) -> str:
        """Store `data` unless it is stored already; returns its digest (`digest`, when the
        caller has just computed it, saves hashing the bytes twice)."""
        digest = digest or digest_of(data)
        target = self.path(digest)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data)
        return digest

    def has(self, digest: str) -> bool:
        return self.path(digest).is_file()

    def get(self, digest: str) -> bytes:
        try:
            data = self.path(digest).read_bytes()
        except FileNotFoundError:
            raise UnknownMedia(f"no stored media has digest {digest}") from None
        if digest_of(data) != digest:
            raise MediaCorrupt(f"the stored bytes of {digest} are damaged (digest mismatch)")
        return data

    def digests(self) -> Iterator[str]:
        if not self.root.is_dir():
            return
        for folder in sorted(self.root.iterdir()):
            if folder.is_dir() and len(folder.name) == 2:
                yield from sorted(p.name for p in folder.iterdir() if DIGEST.match(p.name))

    def disk_bytes(self) -> int:
        return sum(self.path(d).stat().st_size for d in self.digests())


RECENT_BYTES = 32 * 1024 * 1024
"""How many bytes of recently stored or read media a store keeps in memory."""


@dataclass(frozen=True, slots=True)
class MediaLimits:
    max_bytes: int = 20 * 1024 * 1024
    max_items: int = 8


@dataclass(frozen=True, slots=True)
class Upload:
    """Media as it arrives: bytes, the type its sender claims (checked, not trusted; empty
    when unknown) and an optional file name."""

    data: bytes
    declared: str = ""
    name: str = ""


class MediaStore:
    """The kernel's media: inputs, tool results, memory and the knowledge base all refer to
    the same stored object by its digest."""

    def __init__(
        self,
        root: Path,
        limits: Callable[[], MediaLimits] = MediaLimits,
        recent_bytes: int = RECENT_BYTES,
    ) -> None:
        self.blobs = BlobStore(root)
        self._limits = limits
        # Media just stored or read is asked for again at once (the turn's request, the
        # next round's, the window's next turn): kept, already checked, up to a byte budget,
        # with its file's (size, mtime): a file changed on disk since is read and checked anew.
        self._recent: OrderedDict[str, tuple[bytes, tuple[int, int]]] = OrderedDict()
        self._recent_budget = recent_bytes
        self._recent_size = 0

    @property
    def limits(self) -> MediaLimits:
        """The limits now (read on every check, so a changed setting applies at once)."""
        return self._limits()

    @property
    def root(self) -> Path:
        return self.blobs.root

    def check(self, uploads: Sequence[Upload]) -> list[MediaRef]:
        """Validate every upload (limits, type, integrity) without storing any, so a refused
        item leaves nothing of its neighbours half-stored."""
        limits = self.limits
        if len(uploads) > limits.max_items:
            raise MediaTooLarge(
                f"{len(uploads)} media items at once; at most {limits.max_items} "
                "(core.media.max_items)"
            )
        refs = []
        for index, upload in enumerate(uploads):
            if not isinstance(upload.data, bytes | bytearray) or not upload.data:
                raise MediaError(f"media item {index} is empty")
            if len(upload.data) > limits.max_bytes:
                raise MediaTooLarge(
                    f"media item {index} has {len(upload.data)} bytes; at most "
                    f"{limits.max_bytes} (core.media.max_bytes)"
                )
            try:
                found = sniff(bytes(upload.data))
                check_declared(upload.declared, found)
            except MediaError as exc:
                raise type(exc)(f"media item {index}: {exc}") from None
            digest = digest_of(bytes(upload.data))
            refs.append(
                MediaRef(
                    digest, found.mime, len(upload.data), found.width, found.height, upload.name
                )
            )
        return refs

    def put_all(self, uploads: Sequence[Upload]) -> list[MediaRef]:
        """Check all, then store each (once per digest); returns their references."""
        refs = self.check(uploads)
        for upload, ref in zip(uploads, refs, strict=True):
            data = bytes(upload.data)
            self.blobs.put(data, ref.digest)
            self._keep(ref.digest, data)
            info = self._info_path(ref.digest)
            if not info.exists():
                unnamed = MediaRef(ref.digest, ref.mime, ref.size, ref.width, ref.height)
                write_atomic(info, json.dumps(unnamed.to_dict()).encode())
        return refs

    def put(self, data: bytes, declared: str = "", name: str = "") -> MediaRef:
        return self.put_all([Upload(data, declared, name)])[0]

    def ref(self, digest: str) -> MediaRef:
        """The stored reference of `digest` (type and size as sniffed when it was stored)."""
        try:
            raw = self._info_path(digest).read_bytes()
        except FileNotFoundError:
            raise UnknownMedia(f"no stored media has digest {digest}") from None
        try:
            return MediaRef.from_dict(json.loads(raw))
        except (ValueError, KeyError, TypeError):
            # The description is derived data: sniff the bytes again rather than fail.
            data = self.blobs.get(digest)
            found = sniff(data)
            ref = MediaRef(digest, found.mime, len(data), found.width, found.height)
            write_atomic(self._info_path(digest), json.dumps(ref.to_dict()).encode())
            return ref

    def get(self, digest: str) -> bytes:
        kept = self._recent.get(digest)
        if kept is not None and kept[1] == self._signature(digest):
            self._recent.move_to_end(digest)
            return kept[0]
        data = self.blobs.get(digest)
        self._keep(digest, data)
        return data

    def _signature(self, digest: str) -> tuple[int, int]:
        try:
            stat = self.blobs.path(digest).stat()
        except FileNotFoundError:
            return (-1, -1)
        return (stat.st_size, stat.st_mtime_ns)

    def _keep(self, digest: str, data: bytes) -> None:
        if len(data) > self._recent_budget:
            return
        old = self._recent.pop(digest, None)
        if old is not None:
            self._recent_size -= len(old[0])
        self._recent[digest] = (data, self._signature(digest))
        self._recent_size += len(data)
        while self._recent_size > self._recent_budget:
            _, (dropped, _signature) = self._recent.popitem(last=False)
            self._recent_size -= len(dropped)

    def has(self, digest: str) -> bool:
        return self.blobs.has(digest)

    def digests(self) -> Iterator[str]:
        """The media stored (objects kept as plain blobs, such as the tracker's file
        contents, share the store but are not media)."""
        return (d for d in self.blobs.digests() if self._info_path(d).exists())

    def disk_bytes(self) -> int:
        """Bytes on disk, descriptions included."""
        total = 0
        for digest in self.digests():
            total += self.blobs.path(digest).stat().st_size
            info = self._info_path(digest)
            total += info.stat().st_size if info.exists() else 0
        return total

    async def aput_all(self, uploads: Sequence[Upload]) -> list[MediaRef]:
        return await asyncio.to_thread(self.put_all, uploads)

    async def aget(self, digest: str) -> bytes:
        return await asyncio.to_thread(self.get, digest)

    def _info_path(self, digest: str) -> Path:
        path = self.blobs.path(digest)
        return path.with_name(path.name + ".json")
