"""A reference to stored media: what inputs, tool results, memory and the journal carry
instead of bytes. The bytes live once in the kernel's media store, named by `digest`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

DIGEST = re.compile(r"^[0-9a-f]{64}$")
"""A media digest: the sha256 of the bytes, lower-case hex."""


@dataclass(frozen=True, slots=True)
class MediaRef:
    """One stored media object. `mime` is what the store sniffed from the bytes, never
    what a sender claimed; `width`/`height` are 0 for media that is not an image."""

    digest: str
    mime: str
    size: int
    width: int = 0
    height: int = 0
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.digest, str) or not DIGEST.match(self.digest):
            raise ValueError(f"a media digest is 64 lower-case hex digits, not {self.digest!r}")

    @property
    def short(self) -> str:
        return self.digest[:12]

    @property
    def is_image(self) -> bool:
        return self.mime.startswith("image/")

    def label(self) -> str:
        """How a person or a model is told about this media in text."""
        shape = f" {self.width}x{self.height}" if self.width and self.height else ""
        named = f" {self.name!r}" if self.name else ""
        return f"[{self.mime}{shape} {_size(self.size)} sha256:{self.short}{named}]"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"digest": self.digest, "mime": self.mime, "size": self.size}
        if self.width or self.height:
            out["width"], out["height"] = self.width, self.height
        if self.name:
            out["name"] = self.name
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MediaRef:
        return cls(
            str(data["digest"]),
            str(data["mime"]),
            int(data["size"]),
            int(data.get("width", 0)),
            int(data.get("height", 0)),
            str(data.get("name", "")),
        )


@dataclass(frozen=True, slots=True)
class MediaData:
    """Media bytes a tool or plugin hands the kernel, with the type it claims (checked
    against the bytes, never trusted) and an optional file name."""

    data: bytes
    mime: str = ""
    name: str = ""


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / (1024 * 1024):.1f} MB"
