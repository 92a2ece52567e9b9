"""The embedder registry: how an embedder is chosen by name, and how vectors are stored.

What an embedder is (the `Embedder` protocol, `Modality`, the errors) is part of the SDK,
`hologram.sdk.embedding`, so a package that provides one depends on the SDK alone.

The kernel hardcodes no model. Built-in embedders and those that packages register under the
entry-point group ``hologram.embedders`` are looked up by the name in ``core.memory.embedder``;
a name nobody registered, or a model that cannot be loaded, is an error that says so. Falling
back to another embedder happens only when configured, and is announced.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

import numpy as np
import numpy.typing as npt

from hologram.sdk import (
    ENTRY_POINT_GROUP,
    Embedder,
    EmbedderFactory,
    EmbedderNotFound,
    EmbedderUnavailable,
    Vectors,
)


def normalise(matrix: npt.NDArray[Any]) -> Vectors:
    """Rows scaled to unit length; an all-zero row (a text with no features) stays zero, so
    its cosine with anything is 0 rather than NaN."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def fingerprint_of(model: str, dim: int, version: str) -> str:
    return f"{model}/{dim}/{version}"


@dataclass(frozen=True, slots=True)
class StoredVector:
    """A vector as it is written to disk: always beside the fingerprint of its space."""

    fingerprint: str
    vector: Vectors

    def to_json(self) -> dict[str, str]:
        data = np.ascontiguousarray(self.vector, dtype="<f4").tobytes()
        return {"fp": self.fingerprint, "vec": base64.b64encode(data).decode("ascii")}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> StoredVector | None:
        """The stored vector, or None when there is none or it is unreadable (it will then
        be recomputed, like one of another fingerprint)."""
        fp, raw = obj.get("fp"), obj.get("vec")
        if not isinstance(fp, str) or not isinstance(raw, str):
            return None
        try:
            vector = np.frombuffer(base64.b64decode(raw, validate=True), dtype="<f4")
        except (ValueError, TypeError):
            return None
        return cls(fp, vector.astype(np.float32))

    def matches(self, embedder: Embedder) -> bool:
        return self.fingerprint == embedder.fingerprint and self.vector.shape == (embedder.dim,)


class EmbedderRegistry:
    """Embedder factories by name: the built-ins given to it, then the entry points of the
    installed packages. One per kernel; nothing is registered process-wide."""

    def __init__(self, builtins: Mapping[str, EmbedderFactory], discover: bool = True) -> None:
        self._factories: dict[str, EmbedderFactory] = dict(builtins)
        self._entry_points: dict[str, Any] = {}
        if discover:
            for point in entry_points(group=ENTRY_POINT_GROUP):
                # A package cannot silently replace a built-in of the same name.
                if point.name not in self._factories:
                    self._entry_points[point.name] = point

    def register(self, name: str, factory: EmbedderFactory) -> None:
        if name in self._factories or name in self._entry_points:
            raise ValueError(f"an embedder named {name!r} is already registered")
        self._factories[name] = factory

    def names(self) -> list[str]:
        return sorted({*self._factories, *self._entry_points})

    def create(self, name: str, options: Mapping[str, Any] | None = None) -> Embedder:
        factory = self._factories.get(name)
        if factory is None and name in self._entry_points:
            try:
                factory = self._entry_points[name].load()
            except Exception as exc:
                raise EmbedderUnavailable(
                    f"embedder {name!r} is registered by an installed package but its entry "
                    f"point cannot be loaded: {exc}"
                ) from exc
        if factory is None:
            raise EmbedderNotFound(
                f"no embedder named {name!r}; registered: {', '.join(self.names())}. "
                "Set core.memory.embedder to one of them, or install the package that "
                f"provides {name!r} (entry-point group {ENTRY_POINT_GROUP!r})"
            )
        embedder = factory(dict(options or {}))
        if not isinstance(embedder, Embedder):
            raise EmbedderUnavailable(f"embedder {name!r}: its factory returned {embedder!r}")
        return embedder
