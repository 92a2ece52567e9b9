"""The media store: one copy per digest, types read from the bytes, limits, and damage
reported where it is found."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from hologram import Kernel
from hologram.media import (
    MediaCorrupt,
    MediaError,
    MediaLimits,
    MediaStore,
    MediaTooLarge,
    MediaTypeError,
    UnknownMedia,
    Upload,
    digest_of,
)
from hologram.sdk import MediaRef


def png(width: int = 32, height: int = 16, colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, "PNG")
    return out.getvalue()


def jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (0, 90, 200)).save(out, "JPEG")
    return out.getvalue()


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_the_same_bytes_are_stored_once_and_read_back(tmp_path: Path) -> None:
    store = MediaStore(tmp_path / "media")
    image = png()
    first = store.put(image, "image/png", name="a.png")
    second = store.put(image, "image/png", name="b.png")
    assert first.digest == second.digest == digest_of(image)
    assert (first.name, second.name) == ("a.png", "b.png")
    assert (first.mime, first.width, first.height, first.size) == ("image/png", 32, 16, len(image))
    assert store.get(first.digest) == image
    assert list(store.digests()) == [first.digest]
    assert len(files_under(tmp_path / "media")) == 2  # the bytes and their description
    assert store.ref(first.digest) == MediaRef(first.digest, "image/png", len(image), 32, 16)


def test_the_type_comes_from_the_bytes_not_the_sender(tmp_path: Path) -> None:
    store = MediaStore(tmp_path / "media")
    assert store.put(jpeg(), "").mime == "image/jpeg"
    assert store.put(jpeg(), "image/jpg").mime == "image/jpeg"  # an alias, not a lie
    assert store.put(b"%PDF-1.7\n...", "application/pdf").mime == "application/pdf"
    assert store.put("notes, 中文".encode(), "text/plain; charset=utf-8").mime == "text/plain"
    with pytest.raises(MediaTypeError, match="declared image/png, but the bytes are text/plain"):
        store.put(b"just some text", "image/png")
    with pytest.raises(MediaTypeError, match="declared image/png, but the bytes are image/jpeg"):
        store.put(jpeg(), "image/png")


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda data: data[:-20], "damaged PNG"),
        # Starts as a PNG and cannot be read: a damaged PNG, not an unknown type.
        (lambda data: data[:8] + b"\x00" * 40, "damaged PNG"),
        (lambda data: data[:40], "damaged PNG"),
        (lambda data: b"\xff\xd8\xff" + b"\x00" * 20, "damaged JPEG"),
        (lambda data: b"\x00\x01\x02\xff" * 10, "unsupported media"),
    ],
)
def test_a_damaged_or_unknown_file_is_refused(tmp_path: Path, damage, expected: str) -> None:
    store = MediaStore(tmp_path / "media")
    with pytest.raises(MediaTypeError, match=expected):
        store.put(damage(png()), "image/png")
    assert files_under(tmp_path / "media") == []


def test_text_that_starts_like_an_image_signature_is_text(tmp_path: Path) -> None:
    store = MediaStore(tmp_path / "media")
    assert store.put(b"BMW is a car").mime == "text/plain"
    assert store.put(b"GIF89a is a format").mime == "text/plain"


def test_one_refused_item_stores_none_of_its_neighbours(tmp_path: Path) -> None:
    store = MediaStore(tmp_path / "media")
    with pytest.raises(MediaTypeError, match="media item 1"):
        store.put_all([Upload(png()), Upload(b"text", "image/png"), Upload(jpeg())])
    assert files_under(tmp_path / "media") == []


def test_limits_are_read_at_each_check(tmp_path: Path) -> None:
    limits = MediaLimits(max_bytes=1000, max_items=2)
    store = MediaStore(tmp_path / "media", lambda: limits)
    with pytest.raises(MediaTooLarge, match=r"core\.media\.max_bytes"):
        store.put(b"x" * 1001, "text/plain")
    with pytest.raises(MediaTooLarge, match=r"3 media items at once; at most 2"):
        store.put_all([Upload(png()), Upload(png(colour=(0, 0, 0))), Upload(jpeg())])
    limits = MediaLimits(max_bytes=10_000, max_items=3)
    assert len(store.put_all([Upload(png()), Upload(png(colour=(0, 0, 0))), Upload(jpeg())])) == 3
    with pytest.raises(MediaError, match="empty"):
        store.put(b"")


def test_damage_on_disk_is_reported_and_a_lost_description_rebuilt(tmp_path: Path) -> None:
    store = MediaStore(tmp_path / "media")
    ref = store.put(png())
    with pytest.raises(UnknownMedia, match="no stored media"):
        store.get("0" * 64)
    with pytest.raises(UnknownMedia, match="not a media digest"):
        store.get("../../etc/passwd")
    description = store.blobs.path(ref.digest).with_suffix(".json")
    description.write_text("{garbled")
    assert store.ref(ref.digest) == MediaRef(ref.digest, "image/png", ref.size, 32, 16)
    assert json.loads(description.read_text())["mime"] == "image/png"
    store.blobs.path(ref.digest).write_bytes(png()[:-1] + b"!")
    with pytest.raises(MediaCorrupt, match="damaged"):
        store.get(ref.digest)


async def test_the_kernel_has_one_store_under_its_data_dir_with_live_limits(
    data_dir: Path,
) -> None:
    async with Kernel(data_dir) as kernel:
        store = kernel.state.media
        assert store is not None and store.root == data_dir / "media"
        assert store.limits.max_items == 8
        await kernel.config.set("core.media.max_items", 1)
        with pytest.raises(MediaTooLarge, match="at most 1"):
            store.put_all([Upload(png()), Upload(jpeg())])
        ref = (await store.aput_all([Upload(png())]))[0]
        assert await store.aget(ref.digest) == png()
