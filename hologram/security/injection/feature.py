"""One signal that a passage is an instruction aimed at the assistant, with its weight.

A feature is a regular expression over folded text (see `review.fold`) and the anchors every
one of its matches contains: trigger words (English), strings (Chinese) or literal marks. A
feature runs only around its anchors (see `scan`), which keeps review nearly free on text
that has none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from hologram.sdk import ReviewRule

#: The reach of a feature built outside the catalog, which sets each one's (`catalog.REACH`).
REACH = (48, 160)
#: Literal marks: space-separated, or a tuple when a mark holds a space.
Marks = str | tuple[str, ...]


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


def english(
    name: str,
    rule: ReviewRule | None,
    weight: float,
    pattern: str,
    words: str,
    marks: Marks = "",
    counters: str | None = None,
) -> Feature:
    """A feature over English; `words` lists (space-separated) the whole words, and `marks`
    the literal strings, one of which every match contains."""
    return Feature(
        name,
        rule,
        weight,
        re.compile(pattern, re.MULTILINE),
        frozenset(words.split()),
        tuple(marks.split()) if isinstance(marks, str) else marks,
        counters,
        "en",
    )


def chinese(
    name: str,
    rule: ReviewRule | None,
    weight: float,
    pattern: str,
    triggers: str,
    counters: str | None = None,
) -> Feature:
    """A feature over Chinese; `triggers` lists (space-separated) strings one of which every
    match contains."""
    return Feature(
        name,
        rule,
        weight,
        re.compile(pattern, re.MULTILINE),
        frozenset(triggers.split()),
        (),
        counters,
        "zh",
    )


def english_forms(
    name: str,
    rule: ReviewRule | None,
    weight: float,
    *forms: tuple[str, str] | tuple[str, str, Marks],
) -> tuple[Feature, ...]:
    """One English feature written as several (pattern, words[, marks]) forms: signals of one
    name count once, so splitting changes no score, while each form runs only on text holding
    its own, rarer, words."""
    return tuple(
        english(name, rule, weight, form[0], form[1], form[2] if len(form) > 2 else "")
        for form in forms
    )


def chinese_forms(
    name: str, rule: ReviewRule | None, weight: float, *forms: tuple[str, str]
) -> tuple[Feature, ...]:
    """The Chinese counterpart of `english_forms`."""
    return tuple(chinese(name, rule, weight, pattern, triggers) for pattern, triggers in forms)


def alternation(*options: str) -> str:
    return "(?:" + "|".join(options) + ")"
