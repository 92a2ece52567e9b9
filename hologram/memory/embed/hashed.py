"""The embedders that need no model file: hashed n-grams with jieba words (the default), and
the spec's character-bigram TF-IDF (the last fallback, which needs not even jieba)."""

from __future__ import annotations

import hashlib
import math
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from hologram.memory.embed.registry import (
    fingerprint_of,
    normalise,
)
from hologram.memory.text import STOPWORDS, Segmenter, clean_text
from hologram.sdk import Modality, ModalityUnsupported, Vectors

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_LATIN = re.compile(r"[a-z0-9]+")


def _hash_into(features: Mapping[str, float], dim: int, out: np.ndarray) -> None:
    """Signed feature hashing: crc32 is stable across processes (Python's `hash` is salted
    per process, which would change every vector on restart); the sign bit halves the bias
    that collisions add to cosine similarity."""
    for feature, weight in features.items():
        h = zlib.crc32(feature.encode("utf-8"))
        out[h % dim] += weight if h & 0x80000000 else -weight


class HashedNgramEmbedder:
    """Chinese and English without a download: jieba words, CJK character unigrams and
    bigrams, and character trigrams of Latin words, each sub-linearly weighted and hashed
    into `dim` signed buckets, then L2-normalised."""

    name = "default"
    modalities = frozenset({Modality.TEXT})
    VERSION = "v1"

    def __init__(self, dim: int = 384, segmenter: Segmenter | None = None) -> None:
        if dim < 16:
            raise ValueError(f"hashed embedder dimension {dim} is too small; use 64 or more")
        self.dim = dim
        self.segmenter = segmenter or Segmenter()
        self.fingerprint = fingerprint_of("hashed-ngram+jieba", dim, self.VERSION)

    def features(self, text: str) -> dict[str, float]:
        text = clean_text(text).lower()
        counts: defaultdict[str, float] = defaultdict(float)
        for word in self.segmenter.words(text):
            counts["w:" + word] += 0.2 if word in STOPWORDS else 1.0
        for run in _CJK.findall(text):
            for i, ch in enumerate(run):
                counts["c:" + ch] += 0.4
                if i + 1 < len(run):
                    counts["b:" + run[i : i + 2]] += 0.8
        for word in _LATIN.findall(text):
            if word in STOPWORDS:
                continue
            padded = f"<{word}>"
            for i in range(len(padded) - 2):
                counts["g:" + padded[i : i + 3]] += 0.25
        return counts

    def embed_texts(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            counts = self.features(text)
            # 1 + log(tf): a word said five times is more, but not five times more, the topic.
            weighted = Counter({f: 1.0 + math.log(w) if w > 1 else w for f, w in counts.items()})
            _hash_into(weighted, self.dim, out[row])
        return normalise(out)

    def embed_images(self, images: Sequence[bytes]) -> Vectors:
        raise ModalityUnsupported(f"embedder {self.name!r} embeds text only")


def bigrams(text: str) -> list[str]:
    """Character bigrams of CJK runs and whole Latin words: needs no segmenter at all."""
    text = clean_text(text).lower()
    grams: list[str] = []
    for run in _CJK.findall(text):
        if len(run) == 1:
            grams.append(run)
        grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    grams.extend(w for w in _LATIN.findall(text) if w not in STOPWORDS)
    return grams


class TfidfBigramEmbedder:
    """The spec's TF-IDF fallback over character bigrams, hashed to a fixed dimension.

    Without `fit` every term weighs the same (IDF 1); `fit(corpus)` freezes an IDF table,
    and the table's digest becomes part of the fingerprint, because vectors weighted by two
    different tables are not comparable."""

    name = "tfidf"
    modalities = frozenset({Modality.TEXT})
    VERSION = "v1"

    def __init__(self, dim: int = 2048, idf: Mapping[str, float] | None = None) -> None:
        self.dim = dim
        self.idf: dict[str, float] = dict(idf or {})
        self.default_idf = max(self.idf.values(), default=1.0)
        digest = "uniform"
        if self.idf:
            blob = "\n".join(f"{k}\t{v:.6f}" for k, v in sorted(self.idf.items()))
            digest = hashlib.sha256(blob.encode()).hexdigest()[:12]
        self.fingerprint = fingerprint_of("tfidf-bigram", dim, f"{self.VERSION}:{digest}")

    @classmethod
    def fit(cls, corpus: Iterable[str], dim: int = 2048) -> TfidfBigramEmbedder:
        docs = 0
        df: Counter[str] = Counter()
        for text in corpus:
            docs += 1
            df.update(set(bigrams(text)))
        idf = {term: math.log((1 + docs) / (1 + n)) + 1.0 for term, n in df.items()}
        return cls(dim, idf)

    def embed_texts(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            tf = Counter(bigrams(text))
            weighted = Counter(
                {t: (1.0 + math.log(n)) * self.idf.get(t, self.default_idf) for t, n in tf.items()}
            )
            _hash_into(weighted, self.dim, out[row])
        return normalise(out)

    def embed_images(self, images: Sequence[bytes]) -> Vectors:
        raise ModalityUnsupported(f"embedder {self.name!r} embeds text only")


def default_factory(options: Mapping[str, Any]) -> HashedNgramEmbedder:
    return HashedNgramEmbedder(dim=int(options.get("dim") or 384))


def tfidf_factory(options: Mapping[str, Any]) -> TfidfBigramEmbedder:
    return TfidfBigramEmbedder(dim=int(options.get("dim") or 2048))
