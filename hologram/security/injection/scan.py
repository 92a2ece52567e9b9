"""Finding the signals in a text at a cost that follows its anchors, not its length.

Every feature names the words (English), strings (Chinese) or marks one of which each of its
matches contains. One pass over the text's words and an Aho-Corasick pass each for the
Chinese strings and for the marks say which anchors occur and where; each feature then runs
only in a window around its anchors (`Feature.reach` characters before and after), so a long
page with one "password" in it costs one small window, and text with no anchor costs nothing.
A window sees what lies before it (lookbehinds and word boundaries look back past `pos`) and
ends at the end of a word, so a form whose match or lookahead can stretch far past its anchor
has a longer reach.
"""

from __future__ import annotations

import re
import string
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import ahocorasick

from hologram.security.injection.feature import Feature

_SPACES = str.maketrans({c: " " for c in string.punctuation.replace("_", "") + "0123456789"})
_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")
_JOIN = 8


@dataclass(frozen=True, slots=True)
class Signal:
    feature: Feature
    start: int
    end: int


class Scanner:
    """The anchors of a set of features, indexed once (by position in `features`: hashing a
    feature would hash its pattern)."""

    def __init__(self, features: Iterable[Feature]) -> None:
        self.features = list(features)
        self._by_word: defaultdict[str, list[int]] = defaultdict(list)
        self._by_mark: defaultdict[str, list[int]] = defaultdict(list)
        self._by_string: defaultdict[str, list[int]] = defaultdict(list)
        for number, feature in enumerate(self.features):
            index = self._by_word if feature.lang == "en" else self._by_string
            for trigger in feature.triggers:
                index[trigger].append(number)
            for mark in feature.marks:
                self._by_mark[mark].append(number)
        self._words = frozenset(self._by_word)
        # Chinese strings by Aho-Corasick: every occurrence, overlapping ones included, in one
        # pass (a regular expression alternation of hundreds of strings tries them one by one).
        self._strings = ahocorasick.Automaton()
        for string_, numbers in self._by_string.items():
            self._strings.add_word(string_, (len(string_), numbers))
        if self._by_string:
            self._strings.make_automaton()
        # The marks too: one pass finds all of them (a `find` per mark walked the text 30 times).
        self._marks = ahocorasick.Automaton()
        for mark, numbers in self._by_mark.items():
            self._marks.add_word(mark, (len(mark), numbers))
        if self._by_mark:
            self._marks.make_automaton()

    def signals(self, folded: str, *, gated: bool = True) -> list[Signal]:
        """Every match of every feature (`gated=False`: found by scanning the whole text with
        every feature, which must find the same; it is for checking the anchors)."""
        if not gated:
            chinese = not folded.isascii()
            return [
                s
                for f in self.features
                if f.lang == "en" or chinese
                for s in _matches(f, folded, 0, len(folded))
            ]
        found: list[Signal] = []
        for number, positions in self._anchors(folded).items():
            feature = self.features[number]
            for start, end in _windows(positions, feature.reach, len(folded)):
                # A window ends at a word's end: cut inside "uploaded", `\b` would see "upload".
                while end < len(folded) and folded[end].isalnum():
                    end += 1
                found += _matches(feature, folded, start, end)
        return found

    def _anchors(self, folded: str) -> dict[int, list[int]]:
        anchors: defaultdict[int, list[int]] = defaultdict(list)
        # English glued to Chinese ("令牌token") is a word of its own too.
        spaced = folded if folded.isascii() else _NOT_ASCII.sub(" ", folded)
        words = set(spaced.translate(_SPACES).split())
        # A feature may match the start of a snake_case name ("password" in "password_hash",
        # what its pattern allows): its pieces are anchors too.
        words.update([piece for word in words if "_" in word for piece in word.split("_")])
        for word in self._words.intersection(words):
            positions = _occurrences(folded, word)
            for number in self._by_word[word]:
                anchors[number] += positions
        if self._by_mark:
            for end, (length, numbers) in self._marks.iter(folded):
                for number in numbers:
                    anchors[number].append(end - length + 1)
        if self._by_string and not folded.isascii():
            for end, (length, numbers) in self._strings.iter(folded):
                for number in numbers:
                    anchors[number].append(end - length + 1)
        return anchors


def _occurrences(text: str, needle: str) -> list[int]:
    positions = []
    index = text.find(needle)
    while index >= 0:
        positions.append(index)
        index = text.find(needle, index + 1)
    return positions


def _windows(
    positions: list[int], reach: tuple[int, int] | None, length: int
) -> list[tuple[int, int]]:
    if reach is None:
        return [(0, length)]
    back, ahead = reach
    merged: list[tuple[int, int]] = []
    for position in sorted(positions):
        start, end = max(0, position - back), min(length, position + ahead)
        # Windows a few characters apart cost less as one: a scan call has its own price.
        if merged and start <= merged[-1][1] + _JOIN:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _matches(feature: Feature, folded: str, start: int, end: int) -> list[Signal]:
    found = []
    marked = "m" in feature.pattern.groupindex
    for match in feature.pattern.finditer(folded, start, end):
        span = match.span("m") if marked and match.start("m") >= 0 else match.span()
        if span[1] > span[0]:
            found.append(Signal(feature, *span))
    return found
