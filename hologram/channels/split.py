"""Long-message splitting: one message too long for a channel becomes several in order."""

from __future__ import annotations

# Where a cut hurts least, best first: between paragraphs, lines, sentences, words.
_BREAKS = ("\n\n", "\n", "。", "！", "？", ". ", "! ", "? ", "；", "; ", "，", ", ", " ")


def split_message(text: str, limit: int) -> list[str]:
    """Cut `text` into parts of at most `limit` characters, each ending at the best break
    in its second half (so no part is tiny), or hard at `limit` when there is none. Joining
    the parts gives `text` back."""
    if limit < 1:
        raise ValueError(f"a message part needs room for at least one character, not {limit}")
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = limit
        for mark in _BREAKS:
            at = window.rfind(mark)
            if at >= limit // 2:
                cut = at + len(mark)
                break
        parts.append(rest[:cut])
        rest = rest[cut:]
    if rest or not parts:
        parts.append(rest)
    return parts
