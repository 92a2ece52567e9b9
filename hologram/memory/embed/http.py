"""`http`: an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (Ollama, vLLM,
llama.cpp and hosted services serve one)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import numpy as np

from hologram.config import EmbedderSettings, key_of
from hologram.memory.embed.registry import (
    fingerprint_of,
    normalise,
)
from hologram.sdk import EmbedderError, EmbedderUnavailable, Modality, ModalityUnsupported, Vectors


class HttpEmbedder:
    name = "http"
    modalities = frozenset({Modality.TEXT})
    VERSION = "v1"

    def __init__(
        self,
        base_url: str,
        model: str,
        dim: int,
        api_key: str = "",
        timeout: float = 30.0,
        batch_size: int = 64,
    ) -> None:
        if not base_url or not model or dim <= 0:
            raise EmbedderUnavailable(
                "http embedder needs a base URL, a model and its dimension: set "
                + ", ".join(key_of(EmbedderSettings, f) for f in ("http_base_url", "http_model"))
                + " and "
                + key_of(EmbedderSettings, "http_dim")
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.dim = dim
        self.batch_size = batch_size
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout)
        # The server's address is not part of the space; the model and dimension are.
        self.fingerprint = fingerprint_of(f"http:{model}", dim, self.VERSION)

    def _post(self, batch: Sequence[str]) -> list[list[float]]:
        url = f"{self.base_url}/embeddings"
        try:
            response = self._client.post(url, json={"model": self.model, "input": list(batch)})
        except httpx.HTTPError as exc:
            raise EmbedderUnavailable(f"http embedder: {url} unreachable: {exc}") from exc
        if response.status_code != 200:
            raise EmbedderError(
                f"http embedder: {url} answered {response.status_code}: {response.text[:200]}"
            )
        try:
            items = sorted(response.json()["data"], key=lambda item: item["index"])
            vectors = [item["embedding"] for item in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbedderError(
                f"http embedder: {url} did not answer in the /embeddings format "
                f"(data[].embedding, data[].index): {exc!r}"
            ) from exc
        if len(vectors) != len(batch):
            raise EmbedderError(f"http embedder: sent {len(batch)} texts, got {len(vectors)}")
        return vectors

    def embed_texts(self, texts: Sequence[str]) -> Vectors:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            rows.extend(self._post(texts[start : start + self.batch_size]))
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)
        if len(rows) and matrix.shape[1] != self.dim:
            raise EmbedderError(
                f"http embedder: model {self.model!r} returned {matrix.shape[1]} dimensions, "
                f"{key_of(EmbedderSettings, 'http_dim')} says {self.dim}; correct the setting"
            )
        return normalise(matrix.reshape(len(rows), self.dim))

    def embed_images(self, images: Sequence[bytes]) -> Vectors:
        raise ModalityUnsupported("embedder 'http' embeds text only")

    def close(self) -> None:
        self._client.close()


def http_factory(options: Mapping[str, Any]) -> HttpEmbedder:
    return HttpEmbedder(
        base_url=str(options.get("base_url") or ""),
        model=str(options.get("model") or ""),
        dim=int(options.get("dim") or 0),
        api_key=str(options.get("api_key") or ""),
        timeout=float(options.get("timeout_s") or 30.0),
    )
