"""Where a text hides words from its human reader but not from a model.

A page can carry text no one sees rendered: HTML comments, elements styled or marked hidden
(`display:none`, white on white, `font-size:0`, off-screen, `hidden`, `aria-hidden`,
screen-reader-only classes), attribute values (alt, title, meta content), SVG descriptions,
markdown image alt text, link titles and comments. Such regions are not suspicious in
themselves (a comment saying "TODO" is ordinary); an instruction to the assistant inside one
is, so review adds `HIDDEN_WEIGHT` to a passage whose signals lie in a hidden region.
Invisible characters (Unicode tag characters spelling ASCII, zero-width characters between
letters) are found while folding, see `review.fold`.
"""

from __future__ import annotations

import re

HIDDEN_WEIGHT = 0.5

_HIDING = (
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0*[01](?:\.\d+)?\s*(?:px|pt|em|"
    r"rem)?(?![\d.])|opacity\s*:\s*0(?:\.0+)?(?![\d.])|(?<![\w-])color\s*[:=]\s*[\"']?(?:#fff(?:fff)?"
    r"\b|white\b)|(?<![\w-])hidden\b|aria-hidden\s*=\s*[\"']?true|sr-only|visually-hidden|"
    r"screen-reader|(?:left|top|text-indent)\s*:\s*-\d{3,}|(?:height|width)\s*:\s*0(?![\d.])"
)
_REGIONS = re.compile(
    "|".join(
        (
            r"<!--(?P<comment>.*?)(?:-->|\Z)",
            r"<(?P<tag>[a-z][\w-]*)\b(?P<attrs>[^>]*?(?:" + _HIDING + r")[^>]*)>(?P<hidden>.*?)"
            r"</(?P=tag)\s*>",
            r"\b(?:alt|title|aria-label|content|placeholder)\s*=\s*(?:\"(?P<dq>[^\"]*)\"|"
            r"'(?P<sq>[^']*)')",
            r"<(?P<svg>desc|title)>(?P<svgtext>.*?)</(?P=svg)>",
            r"!\[(?P<alt>[^\]]*)\]\(",
            r"\]\(\s*\S+\s+(?:\"(?P<ltitle>[^\"]*)\"|'(?P<lsq>[^']*)')\s*\)",
            r"^[ \t]*\[//\]:\s*#\s*[(\"'](?P<mdcomment>.*?)[)\"']?[ \t]*$",
        )
    ),
    re.DOTALL | re.MULTILINE,
)
_GROUPS = ("comment", "hidden", "dq", "sq", "svgtext", "alt", "ltitle", "lsq", "mdcomment")


def might_hide(folded: str) -> bool:
    return "<" in folded or "](" in folded or "[//]" in folded


def hidden_regions(folded: str) -> list[tuple[int, int]]:
    """The spans of `folded` (start, end) a rendered page or document would not show."""
    regions = []
    for match in _REGIONS.finditer(folded):
        for group in _GROUPS:
            if match.start(group) >= 0:
                regions.append((match.start(group), match.end(group)))
                break
    return regions
