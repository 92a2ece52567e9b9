"""The knowledge base's own index: character-bigram TF-IDF, independent of memory.

Its vocabulary and statistics belong to the knowledge base alone (spec 001: the two
indexes are separate instances so neither pollutes the other). Adding or replacing an
entry updates it in place; IDF is read at query time, so it never goes stale.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter, defaultdict
from operator import itemgetter

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_LATIN = re.compile(r"[a-z0-9]+")


def terms(text: str) -> list[str]:
    """CJK character bigrams and single characters (so a one-character query like 猫 still
    matches), and lower-case Latin words: no segmenter, no dictionary."""
    text = text.lower()
    out: list[str] = []
    for run in _CJK.findall(text):
        out.extend(run)
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    out.extend(w for w in _LATIN.findall(text) if len(w) > 1)
    return out


class BigramTfidf:
    def __init__(self) -> None:
        self._postings: dict[str, dict[str, int]] = {}
        self._length: dict[str, float] = {}
        self._terms: dict[str, Counter[str]] = {}

    def __len__(self) -> int:
        return len(self._terms)

    def __contains__(self, key: object) -> bool:
        return key in self._terms

    def add(self, key: str, text: str) -> None:
        """Index (or re-index) `key` with `text`."""
        self.remove(key)
        counts = Counter(terms(text))
        self._terms[key] = counts
        self._length[key] = math.sqrt(max(sum(counts.values()), 1))
        for term, n in counts.items():
            self._postings.setdefault(term, {})[key] = n

    def remove(self, key: str) -> None:
        counts = self._terms.pop(key, None)
        self._length.pop(key, None)
        for term in counts or ():
            docs = self._postings.get(term)
            if docs is not None:
                docs.pop(key, None)
                if not docs:
                    del self._postings[term]

    def search(
        self, text: str, top: int = 5, keys: set[str] | None = None
    ) -> list[tuple[str, float]]:
        """The `top` keys best matching `text` (only among `keys` when given)."""
        query = Counter(terms(text))
        n = len(self._terms)
        scores: defaultdict[str, float] = defaultdict(float)
        for term, q in query.items():
            docs = self._postings.get(term)
            if not docs:
                continue
            idf = math.log((1 + n) / (1 + len(docs))) + 1.0
            weight = (1.0 + math.log(q)) * idf * idf
            for key, tf in docs.items():
                if keys is None or key in keys:
                    scores[key] += weight * (1.0 + math.log(tf)) / self._length[key]
        # Counter.most_common's own ranking (ties keep insertion order), on float sums.
        best = heapq.nlargest(top, scores.items(), key=itemgetter(1))
        return [(k, s) for k, s in best if s > 0]
