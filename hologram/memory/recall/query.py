"""A query analysed once for every index that reads it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hologram.memory.recall.episodic import stems
from hologram.sdk import Embedder


@dataclass(frozen=True, slots=True)
class Asked:
    """What one recall asks: the text, its keywords (the words without stopwords, as the
    stores keep them) and its vector in the memory's space. The hybrid index and the
    graph's indexer both read it, so a recall segments and embeds its query once."""

    text: str
    keywords: tuple[str, ...]
    vector: npt.NDArray[np.float32]

    @classmethod
    def of(
        cls,
        text: str,
        keywords: Callable[[str], list[str]],
        embedder: Embedder,
        vector: npt.NDArray[np.float32] | None = None,
    ) -> Asked:
        """`vector`: the text's, when the caller has it already (else it is embedded). May
        load jieba on first use: the first call belongs off the event loop."""
        if vector is None:
            vector = embedder.embed_texts([text])[0]
        return cls(text, tuple(keywords(text)), vector)

    @property
    def terms(self) -> list[str]:
        """The stemmed keywords: what the episodic index searches."""
        return stems(self.keywords)
