"""Content review: sensitive words, and passages that read as instructions to the assistant.

Injection review is a measured classifier (hologram/security/injection): features in Chinese
and English (who is addressed, orders to the assistant, claimed authority, requests to send
secrets somewhere, changes to whom it obeys, fake turn markers, hidden markup) add up per
passage, and a passage at or over `THRESHOLD` is flagged; with the shipped learned score, a
second look at each run's sentences confirms or withdraws every run short of the classifier's
`CERTAIN` (see injection/classifier.py). It is a warning, not a guarantee:
the figures on the project's corpus (tests/security/corpus) are printed by
benchmarks/security.py. A finding names its kind, the rule, its score and where it is
(character offsets into the reviewed text), never the matched text: findings go to the event
stream and the log, and a finding that quoted a leaked password would be the leak.

Matching runs on a folded copy of the text (NFKC, case-folded, invisible format characters
dropped) so that `ＩＧＮＯＲＥ` or `ig\u200bnore` are caught too; Unicode tag characters,
which spell ASCII invisibly, are decoded rather than dropped. Positions map back to the
original text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from hologram.sdk import FindingKind, ReviewRule
from hologram.security.injection import (
    THRESHOLD,
    InjectionClassifier,
    Invisible,
    LearnedScorer,
    RuleBook,
)

__all__ = ["THRESHOLD", "ContentReview", "Finding", "Folded", "fold"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing review flagged: what kind, which rule, where. Never the text itself."""

    kind: FindingKind
    rule: ReviewRule
    start: int
    end: int
    #: The flagged passage's score against `THRESHOLD` (injections only).
    score: float | None = None
    #: The learned probability that confirmed the passage, when a second look decided it.
    learned: float | None = None

    def as_payload(self) -> dict[str, object]:
        payload: dict[str, object] = {
            "kind": self.kind,
            "rule": self.rule,
            "start": self.start,
            "end": self.end,
        }
        if self.score is not None:
            payload["score"] = self.score
        if self.learned is not None:
            payload["learned"] = round(self.learned, 3)
        return payload


_FORMAT = re.compile(
    r"[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\U000e0000-\U000e007f]"
)
# Fullwidth ASCII and the ideographic space: NFKC maps them one to one, so str.translate
# keeps offsets and lets most Chinese text skip the character-by-character path.
_FULLWIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")
_TAG_LOW, _TAG_HIGH = 0xE0020, 0xE007E
_TAG_RUN = 8  # a flag emoji spells at most 6 tag characters ("gbsct" and a cancel tag)
_ZERO_WIDTH_WORDS = 3  # zero-width characters inside words before a text counts as laced


class Folded(NamedTuple):
    text: str
    #: For each character of `text`, the offset it came from; None when that is the same.
    origin: list[int] | None
    #: Text spelled in invisible characters (offsets into `text`).
    invisible: list[Invisible]


def fold(text: str) -> Folded:
    """The folded text, where each of its characters came from, and what was invisible."""
    if text.isascii():
        return Folded(text.lower(), None, [])
    narrowed = text.translate(_FULLWIDTH)
    if unicodedata.is_normalized("NFKC", narrowed) and not _FORMAT.search(narrowed):
        folded = narrowed.casefold()
        if len(folded) == len(text):
            return Folded(folded, None, [])
    out: list[str] = []
    origin: list[int] = []
    invisible: list[Invisible] = []
    laced: list[int] = []
    index = 0
    while index < len(text):
        char = text[index]
        if _TAG_LOW <= ord(char) <= _TAG_HIGH:
            end = index
            while end < len(text) and _TAG_LOW <= ord(text[end]) <= _TAG_HIGH:
                end += 1
            if end - index >= _TAG_RUN:
                # Decoded on a line of its own, so it reads as the separate message it is.
                decoded = "\n" + "".join(chr(ord(c) - 0xE0000) for c in text[index:end]) + "\n"
                invisible.append(Invisible(len(out) + 1, len(out) + len(decoded) - 1, 1.0))
                out.extend(decoded)
                origin.extend([index, *range(index, end), end - 1])
            index = end
            continue
        if unicodedata.category(char) == "Cf":
            if (
                char in _ZERO_WIDTH
                and out
                and out[-1].isalnum()
                and text[index + 1 : index + 2].isalnum()
            ):
                laced.append(len(out))
            index += 1
            continue
        folded = unicodedata.normalize("NFKC", char).casefold()
        out.extend(folded)
        origin.extend([index] * len(folded))
        index += 1
    if len(laced) >= _ZERO_WIDTH_WORDS:
        invisible.append(Invisible(laced[0] - 1, laced[-1] + 1, 0.6))
    return Folded("".join(out), origin, invisible)


class ContentReview:
    """Flags sensitive words and injection phrasing; masks the sensitive words."""

    def __init__(
        self,
        sensitive_words: Iterable[str] = (),
        injection: bool = True,
        learned: LearnedScorer | None = None,
        rules: RuleBook | None = None,
    ) -> None:
        """`learned`: the learned score that gives every run under the classifier's `CERTAIN`
        a second look, confirming or withdrawing it (the firewall loads the shipped one);
        None, the rules alone. `rules`: the rule book to read (the firewall keeps one for
        every review it builds); None, a book of its own."""
        words = sorted({fold(w).text for w in sensitive_words if w and w.strip()}, key=len)
        self._words = re.compile("|".join(re.escape(w) for w in reversed(words))) if words else None
        self._injection = InjectionClassifier(rules=rules, learned=learned) if injection else None

    def review(self, text: str) -> list[Finding]:
        if not text:
            return []
        folded = fold(text)
        findings: list[Finding] = []
        if self._words is not None:
            for match in self._words.finditer(folded.text):
                start, end = _original(folded.origin, match.start(), match.end())
                findings.append(
                    Finding(FindingKind.SENSITIVE_WORD, ReviewRule.WORD_LIST, start, end)
                )
        if self._injection is not None:
            for passage in self._injection.passages(folded.text, folded.invisible):
                if passage.score >= THRESHOLD or passage.learned is not None:
                    start, end = _original(folded.origin, passage.start, passage.end)
                    findings.append(
                        Finding(
                            FindingKind.INJECTION,
                            passage.rule,
                            start,
                            end,
                            passage.score,
                            passage.learned,
                        )
                    )
        findings.sort(key=lambda f: (f.start, f.kind))
        return findings

    def mask_words(self, text: str, findings: list[Finding]) -> str:
        """`text` with every flagged sensitive word replaced by asterisks of its length."""
        spans = [(f.start, f.end) for f in findings if f.kind is FindingKind.SENSITIVE_WORD]
        if not spans:
            return text
        chars = list(text)
        for start, end in spans:
            for index in range(start, end):
                chars[index] = "*"
        return "".join(chars)


def _original(origin: list[int] | None, start: int, end: int) -> tuple[int, int]:
    if origin is None:
        return start, end
    return origin[start], origin[end - 1] + 1
