"""Episodic recall: find the turn of a conversation that answers a question.

A turn alone is a poor document: "I went with my mum last weekend" answers "Where did you
go camping?" only together with the turn before it, which asked about camping. So each
turn is indexed with the words of the turn before it (same session), scored with BM25 over
stemmed words, lifted by how well its whole session matches, and a turn next to a strong
hit inherits part of that hit's score. Measured on LoCoMo's development split (see
hologram/eval and the project's notes), this lifts turn-level evidence recall@10 from 58.6
(plain BM25) to about 73.

Sessions are runs of turns less than `session_gap_s` apart. The index is built once from
(id, time, text) triples and is read-only: rebuild it when the documents change.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from hologram.memory._index import Bm25Index

_SUFFIXES = (
    ("ies", "y"), ("sses", "ss"), ("ness", ""), ("ments", ""), ("ment", ""), ("ings", ""),
    ("ing", ""), ("edly", ""), ("ed", ""), ("ers", "er"), ("ly", ""), ("es", ""), ("s", ""),
)  # fmt: skip


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light English stemmer: one common suffix off, a doubled final consonant and a
    final e dropped ("painting", "painted", "paints" → "paint"; "hiking", "hikes" → "hik").
    Words that are not ASCII (Chinese) and short words come back unchanged."""
    if not word.isascii() or len(word) <= 3:
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


@dataclass(frozen=True, slots=True)
class EpisodicWeights:
    previous_turn: bool = True
    """Index each turn with the words of the turn before it in its session."""
    session: float = 0.3
    """Weight of the session's own BM25 score (both normalised to the best hit)."""
    neighbour: float = 0.8
    """A turn scores at least this share of its best direct neighbour's score."""


class EpisodicIndex:
    def __init__(
        self,
        documents: Iterable[tuple[str, float, str]],
        keywords: Callable[[str], list[str]],
        *,
        weights: EpisodicWeights | None = None,
        session_gap_s: float = 1800.0,
    ) -> None:
        self.weights = weights or EpisodicWeights()
        self._keywords = keywords
        ordered = sorted(documents, key=lambda d: d[1])
        self.ids = [doc_id for doc_id, _, _ in ordered]
        times = np.asarray([at for _, at, _ in ordered], dtype=np.float64)
        starts = np.r_[True, np.diff(times) >= session_gap_s] if len(times) else np.zeros(0, bool)
        self._session = np.cumsum(starts) - 1
        self._same_as_previous = np.r_[False, ~starts[1:]] if len(times) else starts
        words = [self.words(text) for _, _, text in ordered]
        self._turns = Bm25Index()
        self._sessions = Bm25Index()
        session_words: dict[int, list[str]] = {}
        for row, own in enumerate(words):
            document = list(own)
            if self.weights.previous_turn and self._same_as_previous[row]:
                document += words[row - 1]
            self._turns.add(row, document)
            session_words.setdefault(int(self._session[row]), []).extend(own)
        for session, session_text in session_words.items():
            self._sessions.add(session, session_text)

    def words(self, text: str) -> list[str]:
        return [stem(word) for word in self._keywords(text)]

    def __len__(self) -> int:
        return len(self.ids)

    def scores(self, query: str) -> np.ndarray:
        """Every turn's score for `query`, in time order (0 for no match)."""
        n = len(self.ids)
        terms = self.words(query)
        scores = np.zeros(n, dtype=np.float32)
        rows, values = self._turns.search(terms, n)
        scores[rows] = values
        if n == 0 or scores.max() <= 0:
            return scores
        scores /= scores.max()
        if self.weights.session:
            sessions = int(self._session.max()) + 1
            rows, values = self._sessions.search(terms, sessions)
            per_session = np.zeros(sessions, dtype=np.float32)
            per_session[rows] = values
            if per_session.max() > 0:
                scores += self.weights.session * per_session[self._session] / per_session.max()
        if self.weights.neighbour:
            linked = self._same_as_previous
            before = np.r_[0.0, scores[:-1]] * linked
            after = np.r_[scores[1:], 0.0] * np.r_[linked[1:], False]
            inherited = self.weights.neighbour * np.maximum(before, after)
            scores = np.maximum(scores, inherited.astype(np.float32))
        return scores

    def search(self, query: str, top: int) -> list[tuple[str, float]]:
        """The `top` turns best matching `query`, best first, as (id, score)."""
        scores = self.scores(query)
        hits = np.flatnonzero(scores > 0)
        order = hits[np.argsort(-scores[hits], kind="stable")][:top]
        return [(self.ids[row], float(scores[row])) for row in order]
