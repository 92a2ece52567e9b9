"""Hybrid recall over stored turns: episodic BM25 (`EpisodicIndex`) and dense vectors, fused
by weighted reciprocal rank, over every place a turn can be stored.

The two recalls miss different things. Words find a rare name that a hashed or small
embedding space scatters among its neighbours; vectors find a paraphrase that shares no
word. Their raw scores (normalised BM25, cosine) are on scales that cannot be added, so
only ranks are fused, the vectors' rank weighted by `vector_weight`. Whatever the weight,
documents that only the vectors found follow the fused ones in their vector order, so a
question that shares no word with its answer still finds it. A document without a vector
of the current space (another fingerprint, not yet re-embedded) is found by its words
alone, never compared by vector.

With the built-in hashed n-gram embedder the vectors are a blurred copy of the words, and
a full vote reorders good word hits: on LoCoMo (categories 1-4, recall@10, cold context
and graph) weight 1 cost 10 to 18 points per conversation against weight 0. A small vote
still helps, most on the project's paraphrased probes: recall@10 of the kernel's whole
recall with weight 0 / 0.1 was 73.1 / 73.3 on LoCoMo (before speakers counted: see
`hologram.memory.recall.episodic`), 70.3 / 71.8 on companion_en and 69.9 / 70.3 on companion_zh.
Hence the default 0.1 (`core.memory.recall.vector_weight`); a semantic embedder (http,
static) likely deserves more: measure it with the eval harness.

One index serves the context window, the cold context and the graph's text blocks together
(each document tagged with its `Place`): a turn moves from one to the next as it ages, but
its session and its neighbours do not, and one ranking over all of them needs one set of
statistics. Each store still searches its own documents alone through the tag.

A ranking shows each thing said once. A companion hears and says the same words many times
("That makes sense.", "Good morning!"), and every copy is a turn of its own, with its own
time; a question about a day would otherwise fill its list with the copies said that day.
Among documents with the same words only the best ranked is kept (a text without words,
found by its vector alone, is never merged with another).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from hologram.memory.recall.episodic import EpisodicIndex, EpisodicWeights, member_of
from hologram.memory.recall.index import VectorIndex
from hologram.memory.turns import Place

RRF_K = 60
"""Reciprocal-rank-fusion constant (the usual one): the first rank is worth 1/60, the
tenth 1/70, so agreement between the recalls outweighs either one's order."""


@dataclass(frozen=True, slots=True)
class HybridHit:
    id: str
    place: Place
    score: float
    """The fused reciprocal-rank score (comparable only within one search)."""
    lexical: float | None
    """The episodic score (the best direct hit 1.0, plus session and neighbour lifts), if
    words found it."""
    cosine: float | None
    """The cosine to the query, if vectors found it."""


class HybridIndex:
    """Thread-safe: stores change it on the event loop while a search runs in a thread."""

    def __init__(
        self,
        dim: int,
        *,
        vector_weight: float = 0.1,
        min_similarity: float = 0.12,
        weights: EpisodicWeights | None = None,
        session_gap_s: float = 1800.0,
    ) -> None:
        self.dim = dim
        self.vector_weight = vector_weight
        self.min_similarity = min_similarity
        self.words = EpisodicIndex(weights=weights, session_gap_s=session_gap_s)
        self._vectors = VectorIndex(dim)
        self._row_of: dict[str, int] = {}
        self._id_at: list[str | None] = []
        # doc id -> its words, as a key that tells repeated texts apart from the rest
        self._said: dict[str, int] = {}
        self._place = np.full(1024, -1, np.int8)  # -1: no document
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._row_of

    @property
    def rows(self) -> int:
        """Rows a vector search scans: every document indexed, and those removed since."""
        with self._lock:
            return len(self._id_at)

    def count(self, place: Place) -> int:
        """Documents indexed in `place`."""
        with self._lock:
            return int(np.count_nonzero(self._place[: len(self._id_at)] == place))

    def add(
        self,
        doc_id: str,
        at: float,
        words: Sequence[str],
        vector: npt.NDArray[np.float32] | None,
        place: Place,
        speaker: str = "",
    ) -> None:
        """Index `doc_id` (said at `at` by `speaker`, kept in `place`) by its stemmed
        `words` and, when it has one in the current space, its `vector`; an id already
        present is replaced in its row (a turn moving from the window to the cold context
        keeps one row, so the rows a vector search scans stay as many as the turns)."""
        self.add_many([(doc_id, at, words, vector, place, speaker)])

    def add_many(
        self,
        documents: Sequence[
            tuple[str, float, Sequence[str], npt.NDArray[np.float32] | None, Place, str]
        ],
    ) -> None:
        """`add` each of `documents` (id, time, words, vector, place, speaker), in one
        batch for the word index and the vectors (a boot indexes every stored turn)."""
        worded: list[tuple[str, float, Sequence[str], int, str]] = []
        rows: list[int] = []
        vectors: list[npt.NDArray[np.float32] | None] = []
        with self._lock:
            for doc_id, at, words, vector, place, speaker in documents:
                said = hash(tuple(words)) if words else None
                row = self._row_of.get(doc_id)
                if (
                    row is not None
                    and self._said.get(doc_id) == said
                    and self.words.said_as(doc_id, at, speaker)
                ):
                    # The same turn moving (from the window to the cold context): retagged,
                    # not indexed again, so its words are not counted and its time words
                    # not read a second time.
                    self._place[row] = place
                    self._vectors.set(row, vector)
                    self.words.retag(doc_id, place)
                    continue
                if row is None:
                    row = len(self._id_at)
                    if row >= len(self._place):
                        more = np.full(len(self._place), -1, np.int8)
                        self._place = np.concatenate([self._place, more])
                    self._id_at.append(doc_id)
                    self._row_of[doc_id] = row
                self._place[row] = place
                rows.append(row)
                vectors.append(vector)
                worded.append((doc_id, at, words, place, speaker))
                if said is not None:
                    self._said[doc_id] = said
                else:
                    self._said.pop(doc_id, None)
            self._vectors.set_many(rows, vectors)
            self.words.add_many(worded)

    def reserve(self, documents: int) -> None:
        """Make room for `documents` more (see `VectorIndex.reserve`)."""
        with self._lock:
            self._vectors.reserve(len(self._id_at) + documents)

    def prepare(self) -> None:
        """Bring what a search reads up to date after changes (the time order and the
        vectors' column copy), as the next search would: a load calls it after each
        batch, in its own thread, so no search pays for a year of rows at once."""
        with self._lock:
            self.words.prepare()
            self._vectors.seal()

    def set_vector(self, doc_id: str, vector: npt.NDArray[np.float32] | None) -> None:
        with self._lock:
            row = self._row_of.get(doc_id)
            if row is not None:
                self._vectors.set(row, vector)

    def move(self, doc_id: str, place: Place) -> None:
        """`doc_id` is kept in `place` now (a recalled turn back in the window, an archived
        one in the graph): one change of tag, so no search in between misses it and its row,
        words and session stay as they were."""
        with self._lock:
            row = self._row_of.get(doc_id)
            if row is not None:
                self._place[row] = place
                self.words.retag(doc_id, place)

    def remove(self, doc_id: str) -> None:
        with self._lock:
            self._remove_locked(doc_id)

    def _remove_locked(self, doc_id: str) -> None:
        row = self._row_of.pop(doc_id, None)
        if row is not None:
            self._id_at[row] = None
            self._place[row] = -1
            self._vectors.remove(row)
            self.words.remove(doc_id)
            self._said.pop(doc_id, None)

    def search(
        self,
        terms: Sequence[str],
        query_vector: npt.NDArray[np.float32] | None,
        top: int,
        places: Collection[Place] | None = None,
        *,
        text: str | None = None,
    ) -> list[HybridHit]:
        """The `top` documents for the stemmed query `terms` and `query_vector` (None: words
        only), best first, from `places` alone or from everywhere (None). `text`, the query
        as asked, lets its time words count ("When…", stopwords the terms lack)."""
        if top <= 0:
            return []
        wide = max(top * 5, 50)
        with self._lock:
            # doc id -> [fused score, word score, cosine, vector rank]
            fused: dict[str, list[Any]] = {}
            lexical = self.words.search_terms(terms, wide, places, text=text)
            for rank, (doc_id, score) in enumerate(lexical):
                fused[doc_id] = [1.0 / (RRF_K + rank), score, None, wide]
            if query_vector is not None:
                size = len(self._id_at)
                allowed = None
                if places is not None:
                    allowed = member_of(self._place[:size], np.fromiter(places, np.int8))
                rows, cosines = self._vectors.search(
                    query_vector, wide, self.min_similarity, allowed
                )
                for rank, (row, cos) in enumerate(
                    zip(rows.tolist(), cosines.tolist(), strict=True)
                ):
                    doc_id = self._id_at[row]
                    if doc_id is None:
                        continue
                    entry = fused.setdefault(doc_id, [0.0, None, None, wide])
                    entry[0] += self.vector_weight / (RRF_K + rank)
                    entry[2] = cos
                    entry[3] = rank
            ranked = sorted(fused.items(), key=lambda item: (-item[1][0], item[1][3]))
            hits: list[HybridHit] = []
            shown: set[int] = set()
            for doc_id, (score, lexical, cosine, _rank) in ranked:
                said = self._said.get(doc_id)
                if said is not None:
                    if said in shown:
                        continue
                    shown.add(said)
                where = Place(int(self._place[self._row_of[doc_id]]))
                hits.append(HybridHit(doc_id, where, float(score), lexical, cosine))
                if len(hits) == top:
                    break
            return hits
