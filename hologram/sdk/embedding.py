"""The embedding SPI: what an embedder is (spec: Embedder).

The kernel hardcodes no model. Built-in embedders and those that packages register under the
entry-point group ``hologram.embedders`` are looked up by the name in ``core.memory.embedder``
(the registry is the kernel's, in ``hologram.memory.embed``); a name nobody registered, or a
model that cannot be loaded, is an error that says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    # Only for the annotations: the SDK stays importable without numpy loaded (a plugin
    # process imports it), while an embedder itself works in numpy arrays.
    import numpy as np
    import numpy.typing as npt

ENTRY_POINT_GROUP = "hologram.embedders"

Vectors: TypeAlias = "npt.NDArray[np.float32]"
"""One L2-normalised float32 row per input."""


class Modality(StrEnum):
    TEXT = "text"
    IMAGE = "image"


class EmbedderError(Exception):
    """An embedder that cannot be built or cannot embed right now."""


class EmbedderNotFound(EmbedderError):
    """`core.memory.embedder` names an embedder nobody registered."""


class EmbedderUnavailable(EmbedderError):
    """The embedder exists but its model cannot be loaded or reached."""


class ModalityUnsupported(EmbedderError):
    """Asked to embed a modality outside the embedder's space. Never answered with another
    model's vector: mixing coordinate systems yields directions that mean nothing."""


@runtime_checkable
class Embedder(Protocol):
    """Maps texts (and maybe images) into one vector space.

    `fingerprint` names the space (model, dimension, version): vectors of two fingerprints
    are never compared, and a stored vector whose fingerprint differs from the current one
    is recomputed. `embed_texts` is batched, returns one L2-normalised float32 row per text,
    and may block (call it off the event loop)."""

    name: str
    fingerprint: str
    dim: int
    modalities: frozenset[Modality]

    def embed_texts(self, texts: Sequence[str]) -> Vectors: ...

    def embed_images(self, images: Sequence[bytes]) -> Vectors: ...


EmbedderFactory = Callable[[Mapping[str, Any]], Embedder]
"""Builds an embedder from its options (the config keys under
``core.memory.embedders.<name>.``, prefix removed). Raises `EmbedderUnavailable`."""
