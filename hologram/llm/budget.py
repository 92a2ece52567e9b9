"""The context budget (spec 000, "Context Budget") and a token estimate to spend it with.

    max_ctx = the source's window (a declared context_window wins; else a table of known
              models; else a conservative guess, with a warning)
    target  = min(0.8 * max_ctx, max_target_tokens)      # working band, capped at 600K
    memory  = (target - fixed) / 3                       # recalled memory
    context = the rest                                   # context-window events

Budgets are ceilings, not fill targets.
"""

from __future__ import annotations

import logging
import math
import unicodedata
from dataclasses import dataclass

from hologram.config import SourceSettings, key_of

log = logging.getLogger(__name__)

MAX_TARGET_TOKENS = 600_000
TARGET_SHARE = 0.8
CONSERVATIVE_WINDOW = 16_384
"""Used for a model nobody declared and the table does not know: small enough to fit any
current chat model, so an unknown model never gets a prompt it cannot take."""

KNOWN_CONTEXT_WINDOWS: dict[str, int] = {
    # Longest matching prefix wins, so "gpt-4o-mini" may differ from "gpt-4o".
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4-turbo": 128_000,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
    "claude-3": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "claude-3-5": 200_000,
    "claude-3-7": 200_000,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "qwen2.5": 32_768,
    "offline-scripted": 128_000,
}


def context_window(model: str, declared: int = 0, *, warn: bool = True) -> tuple[int, str]:
    """The window of `model` and where the number came from: "declared", "known" or
    "fallback" (which logs a warning naming the setting to declare, unless `warn` is
    false: a caller asked often, such as the provider manager on every turn, warns once
    per model itself)."""
    if declared > 0:
        return declared, "declared"
    name = model.lower().rsplit("/", 1)[-1]
    matches = [p for p in KNOWN_CONTEXT_WINDOWS if name.startswith(p)]
    if matches:
        return KNOWN_CONTEXT_WINDOWS[max(matches, key=len)], "known"
    if warn:
        warn_fallback_window(model)
    return CONSERVATIVE_WINDOW, "fallback"


def warn_fallback_window(model: str) -> None:
    log.warning(
        "model %r has no known context window; assuming %d tokens. Declare it with %s",
        model,
        CONSERVATIVE_WINDOW,
        key_of(SourceSettings, "context_window", name="<name>"),
    )


@dataclass(frozen=True, slots=True)
class TokenBudget:
    max_ctx: int
    target: int
    fixed: int
    memory: int
    context: int

    @property
    def overfull(self) -> bool:
        """The fixed part alone (system prompt, tools) leaves nothing for memory or context."""
        return self.fixed >= self.target


def compute_budget(
    max_ctx: int, fixed: int = 0, max_target_tokens: int = MAX_TARGET_TOKENS
) -> TokenBudget:
    """Split the working band of a `max_ctx` window, after `fixed` tokens of system prompt
    and tool definitions, between recalled memory (a third) and context events (the rest)."""
    if max_ctx <= 0:
        raise ValueError(f"max_ctx must be positive, got {max_ctx}")
    if fixed < 0:
        raise ValueError(f"fixed must not be negative, got {fixed}")
    target = min(int(max_ctx * TARGET_SHARE), max_target_tokens)
    free = max(target - fixed, 0)
    if free == 0:
        log.warning("the fixed prompt (%d tokens) fills the working band (%d)", fixed, target)
    memory = free // 3
    return TokenBudget(max_ctx, target, fixed, memory, free - memory)


# ---- estimating tokens ------------------------------------------------------------------------

CHARS_PER_TOKEN = 4.0
"""Latin-script text averages about four characters per token in BPE vocabularies."""

MESSAGE_OVERHEAD = 4
"""Tokens a chat format spends per message on role and separators."""


def _is_wide(char: str) -> bool:
    # CJK ideographs, kana, hangul, fullwidth forms: BPE vocabularies spend about one token
    # on each (often more for rare ideographs).
    return unicodedata.east_asian_width(char) in ("W", "F")


def estimate_tokens(text: str) -> int:
    """An *estimate* of the tokens `text` costs, not a count: it uses no tokenizer, so it is
    off by 10–30 % for a given model. About one token per CJK character, one per four
    other characters. Use it to stay inside a budget with margin, never for billing."""
    if not text:
        return 0
    if text.isascii():  # no wide character: one C pass instead of one Python step a char
        return math.ceil(len(text) / CHARS_PER_TOKEN)
    wide = sum(1 for char in text if ord(char) > 0x2E7F and _is_wide(char))
    other = len(text) - wide
    return wide + math.ceil(other / CHARS_PER_TOKEN)


def estimate_message_tokens(texts: list[str]) -> int:
    """An estimate for a list of message texts, with the per-message overhead."""
    return sum(estimate_tokens(t) + MESSAGE_OVERHEAD for t in texts)
