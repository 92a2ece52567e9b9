"""Media as a caller hands it to an input: bytes, `Upload`s, the SDK's `MediaData`, file
paths or references to media already stored, turned into stored `MediaRef`s (all checked
before any is stored)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from hologram.media.errors import MediaError, MediaTooLarge
from hologram.media.store import MediaStore, Upload
from hologram.sdk import MediaData, MediaRef

MediaItem = bytes | bytearray | Upload | MediaData | MediaRef | str | os.PathLike[str]
"""One item of an input's media: raw bytes, an `Upload` or `MediaData` (bytes with the type
their sender claims, checked against them), a path to read, or stored media."""


def _upload(index: int, item: MediaItem) -> Upload:
    if isinstance(item, Upload):
        return item
    if isinstance(item, MediaData):
        return Upload(item.data, item.mime, item.name)
    if isinstance(item, bytes | bytearray):
        return Upload(bytes(item))
    if isinstance(item, str | os.PathLike):
        path = Path(item)
        try:
            return Upload(path.read_bytes(), name=path.name)
        except OSError as exc:
            raise MediaError(f"media item {index}: cannot read {path}: {exc.strerror}") from None
    raise MediaError(
        f"media item {index} is a {type(item).__name__}; give bytes, an Upload, MediaData, "
        "a path or a stored MediaRef"
    )


def store_media(store: MediaStore, items: Sequence[MediaItem]) -> list[MediaRef]:
    """Store every item that is not stored yet and return all their references, in order.
    Raises a `MediaError` (with its HTTP status) for the first refused item; then nothing
    of this call is stored."""
    items = list(items)
    limit = store.limits.max_items
    if len(items) > limit:
        raise MediaTooLarge(
            f"{len(items)} media items at once; at most {limit} (core.media.max_items)"
        )
    refs: list[MediaRef | None] = []
    uploads: list[Upload] = []
    for index, item in enumerate(items):
        if isinstance(item, MediaRef):
            # The stored description is the truth: a caller's ref may carry a stale type.
            stored = store.ref(item.digest)
            refs.append(stored if not item.name else _named(stored, item.name))
        else:
            refs.append(None)
            uploads.append(_upload(index, item))
    stored_uploads = iter(store.put_all(uploads) if uploads else [])
    return [ref if ref is not None else next(stored_uploads) for ref in refs]


def _named(ref: MediaRef, name: str) -> MediaRef:
    return MediaRef(ref.digest, ref.mime, ref.size, ref.width, ref.height, name)


__all__ = ["MediaItem", "store_media"]
