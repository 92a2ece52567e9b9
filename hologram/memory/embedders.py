"""The built-in embedders, their settings, and choosing one from the configuration."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from hologram.config.keys import Setting
from hologram.memory._hashed import (
    HashedNgramEmbedder,
    TfidfBigramEmbedder,
    default_factory,
    tfidf_factory,
)
from hologram.memory._http import HttpEmbedder, http_factory
from hologram.memory._static import StaticEmbedder, static_factory
from hologram.memory.embedding import (
    Embedder,
    EmbedderFactory,
    EmbedderRegistry,
    EmbedderUnavailable,
)
from hologram.sdk import EventType

log = logging.getLogger(__name__)

EMBEDDER_KEY = "core.memory.embedder"
FALLBACK_KEY = "core.memory.embedder_fallback"
OPTIONS_PREFIX = "core.memory.embedders."

BUILTIN_EMBEDDERS: Mapping[str, EmbedderFactory] = MappingProxyType(
    {
        "default": default_factory,
        "tfidf": tfidf_factory,
        "static": static_factory,
        "http": http_factory,
    }
)

EMBEDDER_SETTINGS: tuple[Setting, ...] = (
    Setting(
        FALLBACK_KEY,
        "",
        "embedder used, loudly, when the configured one cannot load; "
        "empty: refuse to start instead",
    ),
    Setting("core.memory.embedders.default.dim", 384, "dimension of the hashed n-gram space"),
    Setting("core.memory.embedders.tfidf.dim", 2048, "dimension of the hashed TF-IDF space"),
    Setting("core.memory.embedders.static.path", "", "word2vec/fastText text file"),
    Setting(
        "core.memory.embedders.http.base_url",
        "",
        "OpenAI-compatible API root, e.g. http://127.0.0.1:11434/v1",
    ),
    Setting("core.memory.embedders.http.model", "", "embedding model name"),
    Setting("core.memory.embedders.http.dim", 0, "dimension the model returns"),
    Setting("core.memory.embedders.http.api_key", "", "bearer token, if the server wants one"),
    Setting("core.memory.embedders.http.timeout_s", 30.0, "seconds per request"),
)


def embedder_options(config: Any, name: str) -> dict[str, Any]:
    """The options of embedder `name`: config keys under core.memory.embedders.<name>."""
    prefix = f"{OPTIONS_PREFIX}{name}."
    return {key[len(prefix) :]: value for key, value in config.list(prefix).items()}


def choose_embedder(
    config: Any,
    registry: EmbedderRegistry,
    emit: Callable[..., Any] | None = None,
) -> Embedder:
    """The embedder `core.memory.embedder` names. If it cannot load and a fallback is
    configured, the fallback, announced by a warning and a `memory_degraded` event; with no
    fallback configured the error propagates: nothing is substituted silently."""
    name = config.get_str(EMBEDDER_KEY)
    try:
        return registry.create(name, embedder_options(config, name))
    except EmbedderUnavailable as exc:
        fallback = config.get_str(FALLBACK_KEY)
        if not fallback or fallback == name:
            raise
        embedder = registry.create(fallback, embedder_options(config, fallback))
        log.warning("embedder %r unavailable (%s); degraded to %r", name, exc, fallback)
        if emit is not None:
            emit(
                EventType.MEMORY_DEGRADED,
                source="memory",
                layer="embedder",
                configured=name,
                using=fallback,
                fingerprint=embedder.fingerprint,
                reason=str(exc),
            )
        return embedder


__all__ = [
    "BUILTIN_EMBEDDERS",
    "EMBEDDER_SETTINGS",
    "HashedNgramEmbedder",
    "HttpEmbedder",
    "StaticEmbedder",
    "TfidfBigramEmbedder",
    "choose_embedder",
    "embedder_options",
]
