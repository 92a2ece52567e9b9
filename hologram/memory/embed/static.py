"""`static`: pretrained word vectors from a local file (spec: StaticEmbedder).

Reads the word2vec / fastText text format (an optional "count dim" header line, then
"word v1 v2 …" per line). Chinese is split into words with jieba; a word missing from the
vocabulary falls back to the longest known pieces of it, down to characters. A text is the
mean of its word vectors, L2-normalised. Nothing is downloaded: a missing file is an error
naming the key.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hologram.config import EmbedderSettings, key_of
from hologram.memory.embed.registry import (
    fingerprint_of,
    normalise,
)
from hologram.memory.text import STOPWORDS, Segmenter
from hologram.sdk import EmbedderUnavailable, Modality, ModalityUnsupported, Vectors

PATH_KEY = key_of(EmbedderSettings, "static_path")


def _header(path: Path) -> tuple[int, bool]:
    """(dimension, whether the first line is a header)."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        first = handle.readline().split()
    if len(first) == 2 and all(part.isdigit() for part in first):
        return int(first[1]), True
    if len(first) < 2:
        raise EmbedderUnavailable(f"{path}: not a word-vector text file (first line {first!r})")
    return len(first) - 1, False


class StaticEmbedder:
    name = "static"
    modalities = frozenset({Modality.TEXT})
    VERSION = "v1"

    def __init__(self, path: Path, segmenter: Segmenter | None = None) -> None:
        if not path.is_file():
            raise EmbedderUnavailable(
                f"static embedder: word-vector file {path} does not exist; set {PATH_KEY} "
                "to a word2vec/fastText .vec/.txt file (nothing is downloaded)"
            )
        self.path = path
        self.dim, self._has_header = _header(path)
        stat = path.stat()
        # Identity of the file without reading it all at boot: name, size and first bytes.
        with path.open("rb") as handle:
            head = handle.read(65536)
        digest = hashlib.sha256(f"{path.name}:{stat.st_size}".encode() + head).hexdigest()[:12]
        self.fingerprint = fingerprint_of(f"static:{digest}", self.dim, self.VERSION)
        self.segmenter = segmenter or Segmenter()
        self._lock = threading.Lock()
        self._index: dict[str, int] | None = None
        self._matrix: np.ndarray | None = None

    def _load(self) -> tuple[dict[str, int], np.ndarray]:
        with self._lock:
            if self._index is None:
                index: dict[str, int] = {}
                rows: list[np.ndarray] = []
                with self.path.open(encoding="utf-8", errors="replace") as handle:
                    if self._has_header:
                        handle.readline()
                    for line in handle:
                        parts = line.rstrip().split(" ")
                        if len(parts) != self.dim + 1 or parts[0] in index:
                            continue  # a malformed line or a duplicate word: skip it
                        try:
                            rows.append(np.asarray(parts[1:], dtype=np.float32))
                        except ValueError:
                            continue
                        index[parts[0]] = len(rows) - 1
                self._matrix = np.vstack(rows) if rows else np.zeros((0, self.dim), np.float32)
                self._index = index
            assert self._matrix is not None
            return self._index, self._matrix

    def _rows_for(self, word: str, index: Mapping[str, int]) -> list[int]:
        row = index.get(word)
        if row is not None:
            return [row]
        # An unknown Chinese word ("喝咖啡") is often known in pieces: forward maximum
        # matching against the vocabulary, down to single characters.
        rows, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = index.get(word[start:end])
                if piece is not None and (end - start < len(word)):
                    rows.append(piece)
                    start = end
                    break
            else:
                start += 1
        return rows

    def embed_texts(self, texts: Sequence[str]) -> Vectors:
        index, matrix = self._load()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            rows: list[int] = []
            for word in self.segmenter.words(text):
                if word not in STOPWORDS:
                    rows.extend(self._rows_for(word, index))
            if rows:
                out[i] = matrix[rows].mean(axis=0)
        return normalise(out)

    def embed_images(self, images: Sequence[bytes]) -> Vectors:
        raise ModalityUnsupported("embedder 'static' embeds text only")


def static_factory(options: Mapping[str, Any]) -> StaticEmbedder:
    path = str(options.get("path") or "")
    if not path:
        raise EmbedderUnavailable(
            f"static embedder: no word-vector file configured; set {PATH_KEY}"
        )
    return StaticEmbedder(Path(path).expanduser())
