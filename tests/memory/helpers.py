"""A small, exact embedder for tests whose expected scores must be obvious by reading them.

It is a real implementation of the Embedder SPI: each topic word owns one axis, so the
cosine of two texts is plain to compute by hand. Calls are counted, so a test can see what
was (re)computed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hologram.memory.embed.registry import normalise
from hologram.sdk import (
    Modality,
    ModalityUnsupported,
)
from hologram.sdk.embedding import Vectors

TOPICS = ("coffee", "tea", "cat", "dog", "rain", "sun", "piano", "guitar")


class AxisEmbedder:
    name = "axis"
    modalities = frozenset({Modality.TEXT})

    def __init__(self, version: str = "v1", topics: Sequence[str] = TOPICS) -> None:
        self.topics = list(topics)
        self.dim = len(self.topics)
        self.fingerprint = f"axis/{self.dim}/{version}"
        self.embedded: list[str] = []

    def embed_texts(self, texts: Sequence[str]) -> Vectors:
        self.embedded.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = text.lower().split()
            for axis, topic in enumerate(self.topics):
                out[row, axis] = words.count(topic)
        return normalise(out)

    def embed_images(self, images: Sequence[bytes]) -> Vectors:
        raise ModalityUnsupported("text only")


def damage_a_page(path: Path, page: int = 4096) -> None:
    """Overwrite the page a third of the way into the SQLite file at `path` with 0xff, as
    disk damage would: the file still opens, and reading its rows fails past that page."""
    data = bytearray(path.read_bytes())
    damaged = len(data) // page // 3
    data[damaged * page : (damaged + 1) * page] = b"\xff" * page
    path.write_bytes(bytes(data))
