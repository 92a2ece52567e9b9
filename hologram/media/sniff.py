"""What a piece of media is, read from its bytes: a sender's claimed type is only checked
against it, never trusted."""

from __future__ import annotations

import io
from dataclasses import dataclass

from hologram.media.errors import MediaTypeError

IMAGE_FORMATS = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
    "BMP": "image/bmp",
}
"""The image formats a model may be shown (what every wire format with vision takes)."""

ACCEPTED = (*IMAGE_FORMATS.values(), "application/pdf", "text/plain")

SIGNATURES = {
    b"\x89PNG\r\n\x1a\n": "PNG",
    b"\xff\xd8\xff": "JPEG",
    b"GIF87a": "GIF",
    b"GIF89a": "GIF",
    b"BM": "BMP",
}
"""How each image format's file starts: bytes that start so, are not text and cannot be
read are a damaged image of that format, not some unknown type."""

ALIASES = {"image/jpg": "image/jpeg", "image/x-png": "image/png", "image/x-ms-bmp": "image/bmp"}


@dataclass(frozen=True, slots=True)
class Sniffed:
    mime: str
    width: int = 0
    height: int = 0


def sniff(data: bytes) -> Sniffed:
    """The type of `data`, with an image's size; refuses a damaged image and a type outside
    `ACCEPTED`, naming what was found."""
    image = _image(data)
    if image is not None:
        return image
    if data.startswith(b"%PDF-"):
        return Sniffed("application/pdf")
    if _is_text(data):
        return Sniffed("text/plain")
    raise MediaTypeError(
        f"unsupported media ({len(data)} bytes starting {data[:8].hex()}): "
        f"accepted types are {', '.join(ACCEPTED)}"
    )


def check_declared(declared: str, found: Sniffed) -> None:
    """Refuse bytes whose claimed type is not what they are (text sent as image/png)."""
    claimed = normalise(declared)
    if not claimed or claimed == "application/octet-stream":
        return
    if claimed != found.mime:
        raise MediaTypeError(f"declared {claimed}, but the bytes are {found.mime}")


def normalise(mime: str) -> str:
    base = mime.split(";", 1)[0].strip().lower()
    return ALIASES.get(base, base)


def _image(data: bytes) -> Sniffed | None:
    # Imported here: Pillow's import costs ~30 ms and a kernel that never sees media should
    # not pay it at boot.
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(data))
    except UnidentifiedImageError:
        kind = _signature(data)
        if kind is not None and not _is_text(data):
            raise MediaTypeError(
                f"damaged {kind} image ({len(data)} bytes): it starts as one and cannot be read"
            ) from None
        return None
    kind = image.format or "?"
    mime = IMAGE_FORMATS.get(kind)
    if mime is None:
        raise MediaTypeError(f"{kind} images are not accepted: {', '.join(IMAGE_FORMATS)}")
    width, height = image.size
    try:
        # verify() walks the file's structure (PNG chunk CRCs, truncation) without decoding
        # the pixels, so checking a 1 MB photo costs far less than showing it.
        image.verify()
    except Exception as exc:  # Pillow raises many types for damaged files
        raise MediaTypeError(f"damaged {kind} image: {exc}") from exc
    return Sniffed(mime, width, height)


def _signature(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return next((kind for magic, kind in SIGNATURES.items() if data.startswith(magic)), None)


def _is_text(data: bytes) -> bool:
    if b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
