"""The store keeps media just stored or read in memory, and still reports a file changed
on disk since."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from PIL import Image

from hologram.media import MediaCorrupt, MediaStore, UnknownMedia


def png(color: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), color).save(out, "PNG")
    return out.getvalue()


def test_media_just_stored_is_served_from_memory_until_its_file_changes(tmp_path: Path) -> None:
    store = MediaStore(tmp_path / "media")
    data = png("red")
    ref = store.put(data)
    first = store.get(ref.digest)
    assert first == data and store.get(ref.digest) is first  # no second read
    path = store.blobs.path(ref.digest)
    path.write_bytes(data[:-1] + b"!")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    with pytest.raises(MediaCorrupt, match="damaged"):
        store.get(ref.digest)
    path.unlink()
    with pytest.raises(UnknownMedia):
        store.get(ref.digest)


def test_the_memory_kept_stays_within_its_budget(tmp_path: Path) -> None:
    images = [png(c) for c in ("red", "green", "blue")]
    store = MediaStore(tmp_path / "media", recent_bytes=len(images[0]) + len(images[1]))
    refs = [store.put(i) for i in images]
    assert store._recent_size <= len(images[0]) + len(images[1])
    assert [store.get(r.digest) for r in refs] == images  # the dropped one is read back
