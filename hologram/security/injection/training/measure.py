"""The corpus measures: what review flags on a set of labelled texts, and its recall and
false-positive rate on them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from hologram.security.injection import InjectionClassifier
from hologram.security.review import fold


class Labelled(Protocol):
    """A corpus text as the measures read it (tests/security/corpus's `CorpusText`)."""

    @property
    def id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def injection(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Rates:
    """Recall and false-positive rate (percent), and how many injections and near-misses."""

    recall: float
    false_positives: float
    injections: int
    benign: int


def flagged_by(classifier: InjectionClassifier, texts: Iterable[Labelled]) -> dict[str, bool]:
    """For each text (by id), whether the classifier finds a passage in it."""
    flags = {}
    for text in texts:
        folded = fold(text.text)
        flags[text.id] = bool(classifier.passages(folded.text, folded.invisible))
    return flags


def rates(texts: Sequence[Labelled], flags: dict[str, bool]) -> Rates:
    injections = [t for t in texts if t.injection]
    benign = [t for t in texts if not t.injection]
    recall = 100 * sum(flags[t.id] for t in injections) / max(1, len(injections))
    false_positives = 100 * sum(flags[t.id] for t in benign) / max(1, len(benign))
    return Rates(recall, false_positives, len(injections), len(benign))
