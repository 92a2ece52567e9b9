"""The content-addressed media store: one copy of each image or file, named by its sha256,
its type sniffed from the bytes, within the `core.media.*` limits."""

from hologram.media.errors import (
    MediaCorrupt,
    MediaError,
    MediaTooLarge,
    MediaTypeError,
    UnknownMedia,
)
from hologram.media.intake import MediaItem, store_media
from hologram.media.module import MediaModule
from hologram.media.sniff import ACCEPTED, sniff
from hologram.media.store import BlobStore, MediaLimits, MediaStore, Upload, digest_of

__all__ = [
    "ACCEPTED",
    "BlobStore",
    "MediaCorrupt",
    "MediaError",
    "MediaItem",
    "MediaLimits",
    "MediaModule",
    "MediaStore",
    "MediaTooLarge",
    "MediaTypeError",
    "UnknownMedia",
    "Upload",
    "digest_of",
    "sniff",
    "store_media",
]
