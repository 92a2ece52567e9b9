"""The wire formats of the scripted model server (see `_base` for the paths), and the
OpenAI-compatible `/embeddings` answer it also serves."""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from hologram.llm.wire._base import (
    MESSAGES,
    NDJSON,
    SSE,
    ReceivedImage,
    Turn,
    WireFormat,
    pieces,
)
from hologram.llm.wire._reply import ScriptedReply
from hologram.llm.wire.anthropic import AnthropicMessages
from hologram.llm.wire.gemini import Gemini
from hologram.llm.wire.ollama import Ollama
from hologram.llm.wire.openai_chat import OpenAIChat
from hologram.llm.wire.openai_responses import OpenAIResponses

FORMATS: tuple[WireFormat, ...] = (
    OpenAIChat(),
    OpenAIResponses(),
    AnthropicMessages(),
    Gemini(),
    Ollama(),
)


def format_for(path: str) -> WireFormat | None:
    """The format a POST to `path` speaks, as the real service decides it: by path."""
    return next((f for f in FORMATS if f.matches(path)), None)


_WORD = re.compile(r"\w+", re.UNICODE)


def embedding(text: str, dim: int) -> list[float]:
    """A deterministic unit vector for `text`: its words hashed into `dim` buckets, so texts
    that share words point the same way (enough for recall to be tested over HTTP)."""
    vector = [0.0] * dim
    for word in _WORD.findall(text.lower()) or [text]:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dim
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def embeddings_answer(payload: dict[str, Any], model: str, dim: int) -> dict[str, Any]:
    texts = payload.get("input")
    texts = [texts] if isinstance(texts, str) else list(texts or [])
    data = [
        {"object": "embedding", "index": i, "embedding": embedding(str(t), dim)}
        for i, t in enumerate(texts)
    ]
    tokens = sum(len(_WORD.findall(str(t))) for t in texts)
    return {
        "object": "list",
        "data": data,
        "model": str(payload.get("model") or model),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


__all__ = [
    "FORMATS",
    "MESSAGES",
    "NDJSON",
    "SSE",
    "ReceivedImage",
    "ScriptedReply",
    "Turn",
    "WireFormat",
    "embeddings_answer",
    "format_for",
    "pieces",
]
