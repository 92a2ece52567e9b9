"""One signal that a passage is an instruction aimed at the assistant, with its weight.

A feature is a regular expression over folded text (see `review.fold`) and the anchors every
one of its matches contains: trigger words (English), strings (Chinese) or literal marks. A
feature runs only around its anchors (see `scan`), which keeps review nearly free on text
that has none. The features themselves are data (`rules/`, composed by `rules.RuleBook`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from hologram.sdk import ReviewRule

#: The reach of a feature that sets none (the catalog sets every shipped one's).
REACH = (48, 160)


@dataclass(frozen=True, slots=True)
class Feature:
    #: Signals of one name count once per passage, whichever pattern or language found them.
    name: str
    #: What a finding names when this opens its sentence's signals; None for context signals.
    rule: ReviewRule | None
    #: Added to the passage's score; negative for a sign that the text talks *about* a thing.
    weight: float
    pattern: re.Pattern[str]
    #: Whole words (English) or strings (Chinese), one of which every match contains.
    triggers: frozenset[str]
    #: Or literal strings, one of which every match contains (an address has no fixed word).
    marks: tuple[str, ...] = ()
    #: For a negative feature, the one feature it takes weight from; None: the whole passage.
    counters: str | None = None
    lang: Literal["en", "zh"] = "en"
    #: How far (characters before, after) a match may lie from an anchor it contains; the
    #: scan looks only there. None: anywhere in the text.
    reach: tuple[int, int] | None = REACH
