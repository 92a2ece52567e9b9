"""The built-in embedders, their settings, and choosing one from the configuration."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from hologram.config import EmbedderSettings
from hologram.memory.embed.hashed import (
    HashedNgramEmbedder,
    TfidfBigramEmbedder,
    default_factory,
    tfidf_factory,
)
from hologram.memory.embed.http import HttpEmbedder, http_factory
from hologram.memory.embed.registry import EmbedderRegistry
from hologram.memory.embed.static import StaticEmbedder, static_factory
from hologram.sdk import (
    Embedder,
    EmbedderFactory,
    EmbedderUnavailable,
    Emit,
    MemoryDegraded,
    discard,
)

log = logging.getLogger(__name__)

OPTIONS_PREFIX = EmbedderSettings.options_prefix

BUILTIN_EMBEDDERS: Mapping[str, EmbedderFactory] = MappingProxyType(
    {
        "default": default_factory,
        "tfidf": tfidf_factory,
        "static": static_factory,
        "http": http_factory,
    }
)


def embedder_options(config: Any, name: str) -> dict[str, Any]:
    """The options of embedder `name`: config keys under core.memory.embedders.<name>."""
    prefix = f"{OPTIONS_PREFIX}{name}."
    return {key[len(prefix) :]: value for key, value in config.list(prefix).items()}


def choose_embedder(
    config: Any,
    registry: EmbedderRegistry,
    emit: Emit | None = None,
) -> Embedder:
    """The embedder the settings name. If it cannot load and a fallback is
    configured, the fallback, announced by a warning and a `memory_degraded` event; with no
    fallback configured the error propagates: nothing is substituted silently."""
    settings = config.read(EmbedderSettings)
    name = settings.embedder
    try:
        return registry.create(name, embedder_options(config, name))
    except EmbedderUnavailable as exc:
        fallback = settings.embedder_fallback
        if not fallback or fallback == name:
            raise
        embedder = registry.create(fallback, embedder_options(config, fallback))
        log.warning("embedder %r unavailable (%s); degraded to %r", name, exc, fallback)
        (emit or discard)(
            MemoryDegraded(
                layer="embedder",
                configured=name,
                using=fallback,
                fingerprint=embedder.fingerprint,
                reason=str(exc),
            ),
            source="memory",
        )
        return embedder


__all__ = [
    "BUILTIN_EMBEDDERS",
    "HashedNgramEmbedder",
    "HttpEmbedder",
    "StaticEmbedder",
    "TfidfBigramEmbedder",
    "choose_embedder",
    "embedder_options",
]
